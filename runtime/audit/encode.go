package audit

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/graphctl/graphctl/runtime/store/jsonenc"
)

// A run's record is written as JSON as it is observed: each node's
// observation when the node ends, the messages when the run ends, each
// exactly as encoding/json encodes the Node and Message structs Log reads
// them back into, without building those structs, their maps of summaries
// or the strings of the summaries first.

// appendNode appends a node's observation as encoding/json encodes its
// Node, and returns where its started_at text is in b.
func appendNode(b []byte, n *nodeRec, end nodeEnd) (_ []byte, atFrom, atTo int) {
	b = append(b, `{"node":`...)
	b = jsonenc.AppendString(b, n.node)
	b = append(b, `,"type":`...)
	b = jsonenc.AppendString(b, n.typ)
	b = append(b, `,"step":`...)
	b = strconv.AppendInt(b, int64(n.step), 10)
	b = append(b, `,"started_at":`...)
	atFrom = len(b) + 1
	b = appendTime(b, n.start)
	atTo = len(b) - 1
	b = append(b, `,"duration_ms":`...)
	b = appendMillis(b, end.durationMS)
	b = append(b, `,"status":`...)
	b = jsonenc.AppendString(b, end.Status)
	if end.Attempts > 1 {
		b = append(b, `,"attempts":`...)
		b = strconv.AppendInt(b, int64(end.Attempts), 10)
	}
	if end.Err != nil {
		b = append(b, `,"error":`...)
		b = appendSummary(b, end.Err.Error())
	}
	if end.CaughtBy != "" {
		b = append(b, `,"caught_by":`...)
		b = jsonenc.AppendString(b, end.CaughtBy)
	}
	if len(n.input) > 0 {
		b = append(append(b, `,"input":`...), n.input...)
	}
	if len(end.Update) > 0 {
		b = appendSummaries(append(b, `,"output":`...), end.Update, nil)
	}
	if end.counted {
		b = append(b, `,"retrieval_count":`...)
		b = strconv.AppendInt(b, int64(end.retrieved), 10)
	}
	if end.usage {
		// The keys of tokenKeys, sorted.
		b = append(b, `,"tokens":{"completion_tokens":`...)
		b = strconv.AppendInt(b, int64(end.tokens[1]), 10)
		b = append(b, `,"prompt_tokens":`...)
		b = strconv.AppendInt(b, int64(end.tokens[0]), 10)
		b = append(b, `,"total_tokens":`...)
		b = strconv.AppendInt(b, int64(end.tokens[2]), 10)
		b = append(b, '}')
	}
	return append(b, '}'), atFrom, atTo
}

// appendTime appends t in UTC as a JSON string in RFC 3339 with
// nanoseconds, the form of the records' times.
func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// millis is a duration in milliseconds with microsecond precision, the
// records' durations.
func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// appendMillis appends a duration in milliseconds as encoding/json encodes
// it: the shortest decimal, never in exponent form for the values millis
// returns (zero, or at least 0.001 in absolute value, far below 1e21).
func appendMillis(b []byte, ms float64) []byte {
	return strconv.AppendFloat(b, ms, 'f', -1, 64)
}

// appendSummaries appends an object of the summaries of m's values (of
// item's for the key "item" when item is not nil), its keys sorted:
// encoding/json's encoding of a map of the summaries.
func appendSummaries[V any](b []byte, m map[string]V, item any) []byte {
	var keys [16]string
	ks := keys[:0]
	for k := range m {
		ks = append(ks, k)
	}
	return appendSummariesOf(b, ks, func(k string) any {
		if k == "item" && item != nil {
			return item
		}
		return m[k]
	})
}

// appendSummariesOf appends an object of the summaries of value(k) for the
// keys ks, which it sorts.
func appendSummariesOf(b []byte, ks []string, value func(string) any) []byte {
	slices.Sort(ks)
	b = append(b, '{')
	for i, k := range ks {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(jsonenc.AppendString(b, k), ':')
		b = appendSummary(b, value(k))
	}
	return append(b, '}')
}

// metaEntry is a member of a message's meta: a value (summarized when
// summarize is set).
type metaEntry struct {
	key       string
	value     any
	summarize bool
}

// setMeta sets key in meta, replacing the entry it has.
func setMeta(meta []metaEntry, e metaEntry) []metaEntry {
	for i := range meta {
		if meta[i].key == e.key {
			meta[i] = e
			return meta
		}
	}
	return append(meta, e)
}

// appendMessage appends a message as encoding/json encodes its Message:
// content is encoded by appendContent, meta (sorted here) omitted when
// empty.
func appendMessage(b []byte, role string, appendContent func([]byte) []byte, meta []metaEntry, createdAt time.Time) ([]byte, error) {
	b = append(b, `{"role":`...)
	b = jsonenc.AppendString(b, role)
	b = append(b, `,"content":`...)
	b = appendContent(b)
	if len(meta) > 0 {
		slices.SortFunc(meta, func(x, y metaEntry) int { return strings.Compare(x.key, y.key) })
		b = append(b, `,"meta":{`...)
		for i, e := range meta {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(jsonenc.AppendString(b, e.key), ':')
			if e.summarize {
				b = appendSummary(b, e.value)
				continue
			}
			var err error
			if b, err = jsonenc.Append(b, e.value); err != nil {
				return nil, fmt.Errorf("meta %q: %w", e.key, err)
			}
		}
		b = append(b, '}')
	}
	b = append(b, `,"created_at":`...)
	b = appendTime(b, createdAt)
	return append(b, '}'), nil
}

// appendContentText appends a message's text (see contentText) as a JSON
// string.
func appendContentText(b []byte, v any) []byte {
	switch c := v.(type) {
	case string:
		return jsonenc.AppendString(b, c)
	case []any:
		return jsonenc.AppendString(b, contentText(c))
	}
	return appendSummary(b, v)
}

// appendSummary appends Summary(v) as a JSON string, without making the
// summary's string.
func appendSummary(b []byte, v any) []byte {
	if s, ok := v.(string); ok {
		if typ, size, ok := dataURL(s); ok {
			// The media type ends before a ',' or ';': the suffix joins
			// its escaped form as it joins the string.
			b = jsonenc.AppendString(b, typ)
			b = append(b[:len(b)-1], " ("...)
			b = strconv.AppendInt(b, int64(size), 10)
			return append(b, ` bytes)"`...)
		}
		return appendCut(b, s)
	}
	if v == nil {
		return append(b, `""`...)
	}
	bp := summaryBufs.Get().(*[]byte)
	enc, err := jsonPrefix((*bp)[:0], v, summaryRunes)
	if err != nil {
		b = appendCut(b, fmt.Sprint(v))
	} else {
		// enc is not changed before appendCut returns, nor kept.
		b = appendCut(b, unsafe.String(unsafe.SliceData(enc), len(enc)))
	}
	putSummaryBuf(bp, enc)
	return b
}

// appendCut appends cut(s, summaryRunes) as a JSON string.
func appendCut(b []byte, s string) []byte {
	i, cutHere := cutIndex(s, summaryRunes)
	if !cutHere {
		return jsonenc.AppendString(b, s)
	}
	if !utf8.ValidString(s[:i]) {
		return jsonenc.AppendString(b, cut(s, summaryRunes))
	}
	// The cut is at a rune of valid UTF-8: the escaped prefix and the
	// ellipsis join as the prefix and the ellipsis do.
	b = jsonenc.AppendString(b, s[:i])
	return append(b[:len(b)-1], `…"`...)
}

// summaryBufs are the buffers summaries are encoded in: a few hundred
// bytes each, reused rather than allocated for every summary of every node.
var summaryBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// putSummaryBuf returns a summary buffer, and b (what it became), to
// summaryBufs.
func putSummaryBuf(bp *[]byte, b []byte) {
	if cap(b) <= maxSummaryBuf {
		*bp = b[:0]
	}
	summaryBufs.Put(bp)
}

// maxSummaryBuf is the largest buffer kept for the next summary (one
// element of a list may be long).
const maxSummaryBuf = 64 << 10

// jsonPrefix appends to buf v's compact JSON, or a prefix of it of more
// than max runes: lists and objects are encoded element by element, nested
// ones too, until max is passed, so that summarising a long conversation
// does not encode all of it. A list or an object that is nil is encoded as
// an empty one at the top and as null inside, as summaries always were.
func jsonPrefix(buf []byte, v any, max int) ([]byte, error) {
	buf, _, err := appendPrefix(buf, v, max, true)
	return buf, err
}

// appendPrefix appends v's JSON as jsonenc.Append does until buf has more
// than max runes; done is false when it stopped there.
func appendPrefix(buf []byte, v any, max int, top bool) (_ []byte, done bool, err error) {
	switch x := v.(type) {
	case []any:
		if x == nil && !top {
			return append(buf, "null"...), true, nil
		}
		buf = append(buf, '[')
		for i, e := range x {
			if past(buf, max) {
				return buf, false, nil
			}
			if i > 0 {
				buf = append(buf, ',')
			}
			if buf, done, err = appendPrefix(buf, e, max, false); err != nil || !done {
				return buf, done, err
			}
		}
		return append(buf, ']'), true, nil
	case map[string]any:
		if x == nil && !top {
			return append(buf, "null"...), true, nil
		}
		var keys [16]string
		ks := keys[:0]
		for k := range x {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		buf = append(buf, '{')
		for i, k := range ks {
			if past(buf, max) {
				return buf, false, nil
			}
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(jsonenc.AppendString(buf, k), ':')
			if buf, done, err = appendPrefix(buf, x[k], max, false); err != nil || !done {
				return buf, done, err
			}
		}
		return append(buf, '}'), true, nil
	}
	buf, err = jsonenc.Append(buf, v)
	return buf, true, err
}

// past reports whether buf has more than max runes.
func past(buf []byte, max int) bool {
	// A rune takes at least one byte: only a longer buf can have more
	// than max runes.
	return len(buf) > max && utf8.RuneCount(buf) > max
}

// joinNodes returns the nodes' observations in their order (step, then
// start) as a JSON list: buf itself when they were written in that order.
func joinNodes(buf []byte, nodes []nodeEntry) []byte {
	if len(nodes) == 0 {
		return []byte("null")
	}
	inOrder := slices.IsSortedFunc(nodes, func(x, y nodeEntry) int { return x.compare(y, buf) })
	if inOrder {
		return append(buf, ']')
	}
	slices.SortStableFunc(nodes, func(x, y nodeEntry) int { return x.compare(y, buf) })
	out := make([]byte, 0, len(buf)+1)
	for i, n := range nodes {
		if i == 0 {
			out = append(out, '[')
		} else {
			out = append(out, ',')
		}
		out = append(out, buf[n.from:n.to]...)
	}
	return append(out, ']')
}

// compare orders nodes by step, then by their started_at strings.
func (n nodeEntry) compare(o nodeEntry, buf []byte) int {
	if n.step != o.step {
		return cmp.Compare(n.step, o.step)
	}
	return bytes.Compare(buf[n.atFrom:n.atTo], buf[o.atFrom:o.atTo])
}
