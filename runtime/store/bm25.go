package store

import "math"

// BM25 ranks documents against a query with Okapi BM25.
type BM25 struct {
	// K1 saturates term frequency; B scales document-length normalisation.
	K1, B float64
}

// DefaultBM25 uses the customary parameters k1 = 1.2, b = 0.75.
var DefaultBM25 = BM25{K1: 1.2, B: 0.75}

// Score returns one score per document for the query terms (as produced by
// Tokenize). Document frequencies and the average length are taken over docs,
// the candidate set. Repeated query terms count once. A document sharing no
// term with the query scores 0.
func (p BM25) Score(query []string, docs [][]string) []float64 {
	total := 0
	for _, doc := range docs {
		total += len(doc)
	}
	return p.ScoreIn(query, docs, Corpus{Docs: len(docs), Terms: total})
}

// Corpus is the size of the collection documents are ranked in: how many
// documents and their terms in all.
type Corpus struct {
	Docs, Terms int
}

// ScoreIn is Score for documents drawn from a larger corpus (for instance
// the documents sharing a term with the query, selected by an index): the
// average length and the inverse document frequencies are those of corpus,
// so the scores equal Score's over the whole corpus (a document sharing no
// term with the query scores 0 either way).
func (p BM25) ScoreIn(query []string, docs [][]string, corpus Corpus) []float64 {
	scores := make([]float64, len(docs))
	if len(docs) == 0 || len(query) == 0 || corpus.Docs == 0 {
		return scores
	}
	qi := make(map[string]int, len(query))
	for _, t := range query {
		if _, ok := qi[t]; !ok {
			qi[t] = len(qi)
		}
	}
	nq := len(qi)
	// tf holds the query-term frequencies of every document, row-major.
	tf := make([]int, len(docs)*nq)
	df := make([]int, nq)
	for d, doc := range docs {
		row := tf[d*nq : (d+1)*nq]
		for _, t := range doc {
			if i, ok := qi[t]; ok {
				if row[i] == 0 {
					df[i]++
				}
				row[i]++
			}
		}
	}
	n := float64(corpus.Docs)
	avgdl := float64(corpus.Terms) / n
	if avgdl == 0 {
		return scores
	}
	idf := make([]float64, nq)
	for i, f := range df {
		idf[i] = math.Log(1 + (n-float64(f)+0.5)/(float64(f)+0.5))
	}
	for d, doc := range docs {
		norm := p.K1 * (1 - p.B + p.B*float64(len(doc))/avgdl)
		var s float64
		for i, f := range tf[d*nq : (d+1)*nq] {
			if f == 0 {
				continue
			}
			ff := float64(f)
			s += idf[i] * ff * (p.K1 + 1) / (ff + norm)
		}
		scores[d] = s
	}
	return scores
}
