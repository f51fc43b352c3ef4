// Package jsonread reads JSON in one pass into the values encoding/json
// decodes it into (map[string]any, []any, string, bool, nil, and numbers as
// float64 or json.Number), giving up where its result would differ from
// encoding/json's, so that its callers decode those documents with
// encoding/json and always get encoding/json's value or error.
package jsonread

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// Reader reads JSON into the values encoding/json decodes it into
// (map[string]any, []any, string, bool, nil, and numbers as json.Number
// when exact, else float64), giving up (ok false) on anything whose
// decoding it does not repeat exactly: invalid JSON, escaped strings it
// cannot copy as they are, numbers out of float64's range, nesting deeper
// than encoding/json allows. Its caller then decodes with encoding/json.
type Reader struct {
	// Data is the JSON read; Pos is where reading goes on.
	Data []byte
	Pos  int
	// Exact reads numbers as json.Number, not float64.
	Exact bool
	depth int
}

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// Document reads one JSON value and nothing after it but white space.
func (r *Reader) Document() (any, bool) {
	v, ok := r.Value()
	if !ok {
		return nil, false
	}
	r.Space()
	return v, r.Pos == len(r.Data)
}

func (r *Reader) Space() {
	for r.Pos < len(r.Data) {
		switch r.Data[r.Pos] {
		case ' ', '\t', '\n', '\r':
			r.Pos++
		default:
			return
		}
	}
}

// Value reads a JSON value after optional white space.
func (r *Reader) Value() (any, bool) {
	r.Space()
	if r.Pos >= len(r.Data) {
		return nil, false
	}
	switch c := r.Data[r.Pos]; {
	case c == '{':
		return r.object()
	case c == '[':
		return r.array()
	case c == '"':
		s, ok := r.Str()
		return s, ok
	case c == 't':
		return true, r.Literal("true")
	case c == 'f':
		return false, r.Literal("false")
	case c == 'n':
		return nil, r.Literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return r.number()
	}
	return nil, false
}

func (r *Reader) Literal(lit string) bool {
	if len(r.Data)-r.Pos < len(lit) || string(r.Data[r.Pos:r.Pos+len(lit)]) != lit {
		return false
	}
	r.Pos += len(lit)
	return true
}

func (r *Reader) object() (any, bool) {
	r.Pos++ // {
	if r.depth++; r.depth > maxDepth {
		return nil, false
	}
	defer func() { r.depth-- }()
	m := map[string]any{}
	r.Space()
	if r.Pos < len(r.Data) && r.Data[r.Pos] == '}' {
		r.Pos++
		return m, true
	}
	for {
		r.Space()
		if r.Pos >= len(r.Data) || r.Data[r.Pos] != '"' {
			return nil, false
		}
		k, ok := r.Str()
		if !ok {
			return nil, false
		}
		r.Space()
		if r.Pos >= len(r.Data) || r.Data[r.Pos] != ':' {
			return nil, false
		}
		r.Pos++
		v, ok := r.Value()
		if !ok {
			return nil, false
		}
		m[k] = v
		switch end, ok := r.After('}'); {
		case !ok:
			return nil, false
		case end:
			return m, true
		}
	}
}

func (r *Reader) array() (any, bool) {
	r.Pos++ // [
	if r.depth++; r.depth > maxDepth {
		return nil, false
	}
	defer func() { r.depth-- }()
	list := []any{}
	r.Space()
	if r.Pos < len(r.Data) && r.Data[r.Pos] == ']' {
		r.Pos++
		return list, true
	}
	for {
		v, ok := r.Value()
		if !ok {
			return nil, false
		}
		list = append(list, v)
		switch end, ok := r.After(']'); {
		case !ok:
			return nil, false
		case end:
			return list, true
		}
	}
}

// After reads what follows a member of an object or an item of a list: a
// comma (end false) or the closing byte (end true); ok is false for
// anything else.
func (r *Reader) After(closing byte) (end, ok bool) {
	r.Space()
	if r.Pos >= len(r.Data) {
		return false, false
	}
	switch r.Data[r.Pos] {
	case ',':
		r.Pos++
		return false, true
	case closing:
		r.Pos++
		return true, true
	}
	return false, false
}

// Str reads a string. One without escapes that is valid UTF-8 is copied as
// it is; one with escapes is unquoted by encoding/json.
func (r *Reader) Str() (string, bool) {
	start := r.Pos
	raw, plain, ok := r.StrToken()
	if !ok {
		return "", false
	}
	if plain {
		return string(raw), true
	}
	var s string
	if err := json.Unmarshal(r.Data[start:r.Pos], &s); err != nil {
		return "", false
	}
	return s, true
}

// StrToken reads a string token and returns what is between its quotes,
// and whether that is its value as it is (no escapes, valid UTF-8:
// encoding/json puts U+FFFD for each invalid byte).
func (r *Reader) StrToken() (raw []byte, plain, ok bool) {
	start := r.Pos
	r.Pos++ // "
	escaped := false
	for r.Pos < len(r.Data) {
		c := r.Data[r.Pos]
		switch {
		case c == '"':
			r.Pos++
			raw = r.Data[start+1 : r.Pos-1]
			return raw, !escaped && utf8.Valid(raw), true
		case c == '\\':
			escaped = true
			r.Pos += 2
		case c < 0x20:
			return nil, false, false
		default:
			r.Pos++
		}
	}
	return nil, false, false
}

// number reads a number as JSON's grammar has it.
func (r *Reader) number() (any, bool) {
	start := r.Pos
	d := r.Data
	if d[r.Pos] == '-' {
		r.Pos++
	}
	switch {
	case r.Pos < len(d) && d[r.Pos] == '0':
		r.Pos++
	case r.Pos < len(d) && d[r.Pos] >= '1' && d[r.Pos] <= '9':
		r.digits()
	default:
		return nil, false
	}
	if r.Pos < len(d) && d[r.Pos] == '.' {
		r.Pos++
		if !r.digits() {
			return nil, false
		}
	}
	if r.Pos < len(d) && (d[r.Pos] == 'e' || d[r.Pos] == 'E') {
		r.Pos++
		if r.Pos < len(d) && (d[r.Pos] == '+' || d[r.Pos] == '-') {
			r.Pos++
		}
		if !r.digits() {
			return nil, false
		}
	}
	s := string(d[start:r.Pos])
	if r.Exact {
		return json.Number(s), true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, false
	}
	return f, true
}

// digits reads one or more decimal digits.
func (r *Reader) digits() bool {
	start := r.Pos
	for r.Pos < len(r.Data) && r.Data[r.Pos] >= '0' && r.Data[r.Pos] <= '9' {
		r.Pos++
	}
	return r.Pos > start
}
