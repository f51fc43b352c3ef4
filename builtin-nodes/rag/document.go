// Package rag owns retrieval-augmented generation for graphs: document
// ingestion and chunk retrieval over the long-term Store, and image summaries
// cached by the image's SHA-256.
//
// Node types:
//
//   - rag_ingest: reads sources (local markdown/text files and directories,
//     http(s) pages, sitemaps), normalizes each to a Document, splits it into
//     Chunks (by markdown heading, then by size) with citation metadata
//     (source_url, title, section, chunk_id, content_hash) and stores them
//     under namespace+["chunks"], with an embedding when an embedder is set.
//     Ingestion is incremental: a document whose content_hash is unchanged is
//     skipped, and within a changed document only chunks whose content_hash
//     changed are re-embedded and re-indexed; chunks that disappeared are
//     deleted.
//   - rag_retrieve: decides whether to retrieve (config decide, an expression
//     over state, typically the plan of a routing step), then ranks chunks by
//     BM25 or by cosine similarity merged with BM25, and writes the top-K
//     chunks, their citations, the decision and its reason to a state field.
//   - image_summary: a structured summary {summary, entities, tables,
//     warnings} of an image from a vision model, cached in the Store by the
//     image's SHA-256 so the same image is never analyzed twice.
package rag

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Document is one ingested source page or file, normalized to text.
type Document struct {
	// ID is derived from SourceURL and stable across ingestions.
	ID string `json:"doc_id"`
	// SourceURL is the page URL, or the file path as configured.
	SourceURL string `json:"source_url"`
	Title     string `json:"title"`
	// ContentHash is the SHA-256 of the normalized text.
	ContentHash string `json:"content_hash"`
	// Text is the normalized text (markdown for local files and pages).
	Text string `json:"-"`
	// ETag and LastModified are the HTTP validators of a fetched page, sent
	// back on the next fetch (If-None-Match, If-Modified-Since).
	ETag         string `json:"-"`
	LastModified string `json:"-"`
	// NotModified is set when the server answered 304: the page is as
	// stored, and Text is empty.
	NotModified bool `json:"-"`
}

// Chunk is one retrievable, citable piece of a Document.
type Chunk struct {
	ID          string `json:"chunk_id"`
	DocID       string `json:"doc_id"`
	SourceURL   string `json:"source_url"`
	Title       string `json:"title"`
	Section     string `json:"section"`
	Index       int    `json:"chunk_index"`
	Content     string `json:"content"`
	TokenCount  int    `json:"token_count"`
	ContentHash string `json:"content_hash"`
}

// Hash returns the hex SHA-256 of s.
func Hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// DocID returns the stable identifier of the document at sourceURL.
func DocID(sourceURL string) string { return Hash(sourceURL)[:16] }

// ChunkID returns the content-addressed id of a chunk of document docID
// whose content_hash is contentHash; repeat counts the earlier chunks of the
// document with the same content_hash.
func ChunkID(docID, contentHash string, repeat int) string {
	key := docID + "\x00" + contentHash
	if repeat > 0 {
		key += "\x00" + strconv.Itoa(repeat)
	}
	return Hash(key)[:16]
}

var headingRE = regexp.MustCompile(`^(#{1,6})\s+(.+?)\s*#*\s*$`)

// section is the text under one heading path.
type section struct {
	path string
	body strings.Builder
}

// Split splits a document's markdown into chunks: one section per heading
// (its path "H1 > H2 > …" is the chunk's section), and sections longer than
// maxChars into pieces at paragraph, line or sentence boundaries. A chunk's
// ID depends on the source, the section path and its ordinal among the chunks
// of that path (sections repeating a heading path continue its count, so
// their chunks never share an ID); an edit in one section leaves the IDs and
// hashes of the others alone.
//
// A chunk's ID is content-addressed: it is derived from the document and the
// chunk's content_hash (section path and text), plus, for the rare chunk
// whose content repeats within a document, its ordinal among the repeats.
// Inserting a section therefore changes no other chunk's ID, only their
// chunk_index, and unchanged chunks are never re-embedded.
func Split(doc Document, maxChars int) []Chunk {
	if maxChars <= 0 {
		maxChars = 1200
	}
	var sections []*section
	var stack []string
	cur := &section{}
	inFence := false
	for _, line := range strings.Split(strings.ReplaceAll(doc.Text, "\r\n", "\n"), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
		}
		if m := headingRE.FindStringSubmatch(line); m != nil && !inFence {
			sections = append(sections, cur)
			level := len(m[1])
			if len(stack) >= level {
				stack = stack[:level-1]
			}
			for len(stack) < level-1 {
				stack = append(stack, "")
			}
			stack = append(stack, strings.TrimSpace(m[2]))
			cur = &section{path: joinPath(stack)}
			continue
		}
		cur.body.WriteString(line)
		cur.body.WriteByte('\n')
	}
	sections = append(sections, cur)

	var out []Chunk
	repeats := map[string]int{} // chunks so far per content hash
	for _, s := range sections {
		body := strings.TrimSpace(s.body.String())
		if body == "" {
			continue
		}
		for _, piece := range splitSize(body, maxChars) {
			hash := Hash(s.path + "\x00" + piece)
			n := repeats[hash]
			repeats[hash]++
			out = append(out, Chunk{
				ID:          ChunkID(doc.ID, hash, n),
				DocID:       doc.ID,
				SourceURL:   doc.SourceURL,
				Title:       doc.Title,
				Section:     s.path,
				Index:       len(out),
				Content:     piece,
				TokenCount:  countTokens(piece),
				ContentHash: hash,
			})
		}
	}
	return out
}

func joinPath(stack []string) string {
	var parts []string
	for _, s := range stack {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " > ")
}

// splitSize cuts text into pieces of at most maxChars characters, preferring
// paragraph breaks, then line breaks, then sentence ends (including 。！？).
func splitSize(text string, maxChars int) []string {
	if utf8.RuneCountInString(text) <= maxChars {
		return []string{text}
	}
	runes := []rune(text)
	var out []string
	for len(runes) > maxChars {
		cut := bestCut(runes[:maxChars])
		piece := strings.TrimSpace(string(runes[:cut]))
		if piece != "" {
			out = append(out, piece)
		}
		runes = runes[cut:]
	}
	if rest := strings.TrimSpace(string(runes)); rest != "" {
		out = append(out, rest)
	}
	return out
}

// bestCut returns where to end a piece within window: after the last
// paragraph break in its second half, else the last newline, else the last
// sentence end, else the whole window.
func bestCut(window []rune) int {
	half := len(window) / 2
	for _, sep := range []func(i int) bool{
		func(i int) bool { return i > 0 && window[i] == '\n' && window[i-1] == '\n' },
		func(i int) bool { return window[i] == '\n' },
		func(i int) bool { return strings.ContainsRune(".!?。！？", window[i]) },
	} {
		for i := len(window) - 1; i >= half; i-- {
			if sep(i) {
				return i + 1
			}
		}
	}
	return len(window)
}

// countTokens estimates tokens: words for spaced scripts, one per CJK rune.
func countTokens(s string) int {
	n := 0
	inWord := false
	for _, r := range s {
		switch {
		case r >= 0x3000:
			n++
			inWord = false
		case r == ' ' || r == '\n' || r == '\t':
			inWord = false
		default:
			if !inWord {
				n++
			}
			inWord = true
		}
	}
	return n
}

// titleOf returns the first level-1 heading of markdown, or fallback.
func titleOf(text, fallback string) string {
	for _, line := range strings.Split(text, "\n") {
		if m := headingRE.FindStringSubmatch(line); m != nil && len(m[1]) == 1 {
			return strings.TrimSpace(m[2])
		}
	}
	return fallback
}
