package server

import (
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/graph"
)

// appendValues appends the JSON of a run's state values as LangGraph shows
// them — messages as LangChain-typed messages, exactly as annotateMessages
// and encoding/json together render them — without copying the messages or
// encoding through reflection: a thread's whole conversation is encoded in
// every /runs/wait answer.
func appendValues(b []byte, g *compile.Graph, vals map[string]any) ([]byte, error) {
	keys := sortedKeys(vals)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		var err error
		if f, ok := g.Fields[k]; ok && f.Spec.Type.Kind == graph.Messages {
			b, err = appendMessages(b, vals[k])
		} else {
			b, err = appendJSON(b, vals[k])
		}
		if err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// appendMessages appends a messages field's list with each message's
// LangChain type added (see annotateMessages); anything but a list is an
// empty list, as there.
func appendMessages(b []byte, v any) ([]byte, error) {
	list, _ := v.([]any)
	var keys []string // reused from message to message
	b = append(b, '[')
	for i, it := range list {
		if i > 0 {
			b = append(b, ',')
		}
		m, ok := it.(map[string]any)
		if !ok {
			var err error
			if b, err = appendJSON(b, it); err != nil {
				return nil, err
			}
			continue
		}
		role, _ := m["role"].(string)
		t, typed := typeOf[role]
		keys = keys[:0]
		for k := range m {
			if !typed || k != "type" {
				keys = append(keys, k)
			}
		}
		if typed {
			keys = append(keys, "type")
		}
		slices.Sort(keys)
		b = append(b, '{')
		for j, k := range keys {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			if typed && k == "type" {
				b = appendString(b, t)
				continue
			}
			var err error
			if b, err = appendJSON(b, m[k]); err != nil {
				return nil, err
			}
		}
		b = append(b, '}')
	}
	return append(b, ']'), nil
}

// appendJSON appends v as encoding/json encodes it: the plain values state
// holds directly, anything else through json.Marshal.
func appendJSON(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return appendString(b, x), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case map[string]any:
		if x == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '{')
		for i, k := range sortedKeys(x) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			var err error
			if b, err = appendJSON(b, x[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case []any:
		if x == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, it := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendJSON(b, it); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	}
	enc, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, enc...), nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// appendString appends s as a JSON string exactly as encoding/json writes
// it (with HTML escaping): quotes and backslashes escaped, \b \f \n \r \t
// as such, other control characters and < > & as \u00XX, invalid UTF-8 as
// \ufffd, and U+2028 and U+2029 as \u2028 and \u2029.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plainASCII[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// plainASCII marks the ASCII bytes a JSON string holds as they are.
var plainASCII = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()
