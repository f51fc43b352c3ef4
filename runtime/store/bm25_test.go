package store

import "testing"

func TestBM25Properties(t *testing.T) {
	tok := func(docs ...string) [][]string {
		out := make([][]string, len(docs))
		for i, d := range docs {
			out[i] = Tokenize(d)
		}
		return out
	}
	tests := []struct {
		name  string
		query string
		docs  [][]string
		// better must score strictly higher than worse.
		better, worse int
	}{
		{
			name:   "more occurrences rank higher",
			query:  "badger",
			docs:   tok("badger badger storage engine", "badger storage engine disk", "unrelated words here now"),
			better: 0, worse: 1,
		},
		{
			name:   "shorter document ranks higher at equal frequency",
			query:  "badger",
			docs:   tok("badger store", "badger store with many more words in it", "other"),
			better: 0, worse: 1,
		},
		{
			name:   "rare term outweighs common term",
			query:  "raft store",
			docs:   tok("raft consensus", "store engine", "store layer", "store index"),
			better: 0, worse: 1,
		},
		{
			name:   "matching document beats non-matching",
			query:  "天気",
			docs:   tok("今日の天気は晴れ", "明日は雨が降る"),
			better: 0, worse: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scores := DefaultBM25.Score(Tokenize(tt.query), tt.docs)
			if len(scores) != len(tt.docs) {
				t.Fatalf("got %d scores for %d docs", len(scores), len(tt.docs))
			}
			if scores[tt.better] <= scores[tt.worse] {
				t.Errorf("score[%d]=%v not above score[%d]=%v (all %v)", tt.better, scores[tt.better], tt.worse, scores[tt.worse], scores)
			}
		})
	}
}

func TestBM25ZeroAndDuplicates(t *testing.T) {
	docs := [][]string{Tokenize("alpha beta"), Tokenize("gamma delta"), Tokenize("alpha alpha")}
	scores := DefaultBM25.Score([]string{"alpha"}, docs)
	if scores[1] != 0 {
		t.Errorf("document without query terms scored %v, want 0", scores[1])
	}
	if scores[0] <= 0 || scores[2] <= 0 {
		t.Errorf("matching documents scored %v, want > 0", scores)
	}
	dup := DefaultBM25.Score([]string{"alpha", "alpha"}, docs)
	for i := range scores {
		if scores[i] != dup[i] {
			t.Errorf("repeated query term changed score of doc %d: %v vs %v", i, scores[i], dup[i])
		}
	}
	if got := DefaultBM25.Score(nil, docs); got[0] != 0 || len(got) != len(docs) {
		t.Errorf("empty query scores = %v, want zeros", got)
	}
	if got := DefaultBM25.Score([]string{"x"}, nil); len(got) != 0 {
		t.Errorf("no documents: got %v", got)
	}
	// k1 = 0 ignores term frequency beyond presence.
	flat := BM25{K1: 0, B: 0.75}.Score([]string{"alpha"}, docs)
	if flat[0] != flat[2] {
		t.Errorf("k1=0 should ignore frequency: %v", flat)
	}
}
