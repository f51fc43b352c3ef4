package server

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// stateValues is state written by a client (a run's input): decoded with
// the engine's decoder, so numbers keep every digit on their way to the
// state and back.
type stateValues map[string]any

// UnmarshalJSON decodes numbers as json.Number.
func (v *stateValues) UnmarshalJSON(data []byte) error {
	var m map[string]any
	if err := decodeExact(data, &m); err != nil {
		return err
	}
	*v = m
	return nil
}

// decodeExact decodes JSON with numbers as json.Number, as the engine and
// every state reader do. A JSON object or value decoded into a new map or
// an any is read by jsonReader in one pass; anything else, and any JSON
// that reader does not take as it is, by encoding/json, which gives the
// same value or the same error.
func decodeExact(data []byte, v any) error {
	switch x := v.(type) {
	case *map[string]any:
		if *x == nil {
			r := jsonReader{data: data, exact: true}
			if m, ok := r.document(); ok {
				switch m := m.(type) {
				case map[string]any:
					*x = m
					return nil
				case nil:
					return nil
				}
			}
		}
	case *any:
		if *x == nil {
			r := jsonReader{data: data, exact: true}
			if val, ok := r.document(); ok {
				*x = val
				return nil
			}
		}
	}
	return checkpoint.DecodeJSON(data, v)
}

// jsonReader reads JSON into the values encoding/json decodes it into
// (map[string]any, []any, string, bool, nil, and numbers as json.Number
// when exact, else float64), giving up (ok false) on anything whose
// decoding it does not repeat exactly: invalid JSON, escaped strings it
// cannot copy as they are, numbers out of float64's range, nesting deeper
// than encoding/json allows. Its caller then decodes with encoding/json.
type jsonReader struct {
	data  []byte
	pos   int
	depth int
	exact bool
}

// maxJSONDepth is encoding/json's nesting limit.
const maxJSONDepth = 10000

// document reads one JSON value and nothing after it but white space.
func (r *jsonReader) document() (any, bool) {
	v, ok := r.value()
	if !ok {
		return nil, false
	}
	r.space()
	return v, r.pos == len(r.data)
}

func (r *jsonReader) space() {
	for r.pos < len(r.data) {
		switch r.data[r.pos] {
		case ' ', '\t', '\n', '\r':
			r.pos++
		default:
			return
		}
	}
}

// value reads a JSON value after optional white space.
func (r *jsonReader) value() (any, bool) {
	r.space()
	if r.pos >= len(r.data) {
		return nil, false
	}
	switch c := r.data[r.pos]; {
	case c == '{':
		return r.object()
	case c == '[':
		return r.array()
	case c == '"':
		s, ok := r.str()
		return s, ok
	case c == 't':
		return true, r.literal("true")
	case c == 'f':
		return false, r.literal("false")
	case c == 'n':
		return nil, r.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return r.number()
	}
	return nil, false
}

func (r *jsonReader) literal(lit string) bool {
	if len(r.data)-r.pos < len(lit) || string(r.data[r.pos:r.pos+len(lit)]) != lit {
		return false
	}
	r.pos += len(lit)
	return true
}

func (r *jsonReader) object() (any, bool) {
	r.pos++ // {
	if r.depth++; r.depth > maxJSONDepth {
		return nil, false
	}
	defer func() { r.depth-- }()
	m := map[string]any{}
	r.space()
	if r.pos < len(r.data) && r.data[r.pos] == '}' {
		r.pos++
		return m, true
	}
	for {
		r.space()
		if r.pos >= len(r.data) || r.data[r.pos] != '"' {
			return nil, false
		}
		k, ok := r.str()
		if !ok {
			return nil, false
		}
		r.space()
		if r.pos >= len(r.data) || r.data[r.pos] != ':' {
			return nil, false
		}
		r.pos++
		v, ok := r.value()
		if !ok {
			return nil, false
		}
		m[k] = v
		switch end, ok := r.after('}'); {
		case !ok:
			return nil, false
		case end:
			return m, true
		}
	}
}

func (r *jsonReader) array() (any, bool) {
	r.pos++ // [
	if r.depth++; r.depth > maxJSONDepth {
		return nil, false
	}
	defer func() { r.depth-- }()
	list := []any{}
	r.space()
	if r.pos < len(r.data) && r.data[r.pos] == ']' {
		r.pos++
		return list, true
	}
	for {
		v, ok := r.value()
		if !ok {
			return nil, false
		}
		list = append(list, v)
		switch end, ok := r.after(']'); {
		case !ok:
			return nil, false
		case end:
			return list, true
		}
	}
}

// after reads what follows a member of an object or an item of a list: a
// comma (end false) or the closing byte (end true); ok is false for
// anything else.
func (r *jsonReader) after(closing byte) (end, ok bool) {
	r.space()
	if r.pos >= len(r.data) {
		return false, false
	}
	switch r.data[r.pos] {
	case ',':
		r.pos++
		return false, true
	case closing:
		r.pos++
		return true, true
	}
	return false, false
}

// str reads a string. One without escapes that is valid UTF-8 is copied as
// it is; one with escapes is unquoted by encoding/json.
func (r *jsonReader) str() (string, bool) {
	start := r.pos
	raw, plain, ok := r.strToken()
	if !ok {
		return "", false
	}
	if plain {
		return string(raw), true
	}
	var s string
	if err := json.Unmarshal(r.data[start:r.pos], &s); err != nil {
		return "", false
	}
	return s, true
}

// strToken reads a string token and returns what is between its quotes,
// and whether that is its value as it is (no escapes, valid UTF-8:
// encoding/json puts U+FFFD for each invalid byte).
func (r *jsonReader) strToken() (raw []byte, plain, ok bool) {
	start := r.pos
	r.pos++ // "
	escaped := false
	for r.pos < len(r.data) {
		c := r.data[r.pos]
		switch {
		case c == '"':
			r.pos++
			raw = r.data[start+1 : r.pos-1]
			return raw, !escaped && utf8.Valid(raw), true
		case c == '\\':
			escaped = true
			r.pos += 2
		case c < 0x20:
			return nil, false, false
		default:
			r.pos++
		}
	}
	return nil, false, false
}

// number reads a number as JSON's grammar has it.
func (r *jsonReader) number() (any, bool) {
	start := r.pos
	d := r.data
	if d[r.pos] == '-' {
		r.pos++
	}
	switch {
	case r.pos < len(d) && d[r.pos] == '0':
		r.pos++
	case r.pos < len(d) && d[r.pos] >= '1' && d[r.pos] <= '9':
		r.digits()
	default:
		return nil, false
	}
	if r.pos < len(d) && d[r.pos] == '.' {
		r.pos++
		if !r.digits() {
			return nil, false
		}
	}
	if r.pos < len(d) && (d[r.pos] == 'e' || d[r.pos] == 'E') {
		r.pos++
		if r.pos < len(d) && (d[r.pos] == '+' || d[r.pos] == '-') {
			r.pos++
		}
		if !r.digits() {
			return nil, false
		}
	}
	s := string(d[start:r.pos])
	if r.exact {
		return json.Number(s), true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, false
	}
	return f, true
}

// digits reads one or more decimal digits.
func (r *jsonReader) digits() bool {
	start := r.pos
	for r.pos < len(r.data) && r.data[r.pos] >= '0' && r.data[r.pos] <= '9' {
		r.pos++
	}
	return r.pos > start
}
