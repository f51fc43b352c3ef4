// Package jsonenc appends the JSON encoding of decoded JSON-like values
// (maps of strings, lists, strings, numbers, booleans, times) exactly as
// encoding/json encodes them, without reflection and without copying map
// keys and values: what the Store writes for every run and audit record, and
// what the server answers with.
package jsonenc

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// Append appends v as json.Marshal encodes it. The plain values (nil,
// string, bool, int, int64, float64, time.Time, map[string]any, []any,
// []string) are encoded directly, a Raw value is appended as it is;
// anything else, and anything inside it, through json.Marshal.
func Append(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return AppendString(b, x), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case float64:
		if !math.IsInf(x, 0) && !math.IsNaN(x) {
			return appendFloat(b, x), nil
		}
	case time.Time:
		if y := x.Year(); y >= 0 && y <= 9999 {
			b = append(b, '"')
			b = x.AppendFormat(b, time.RFC3339Nano)
			return append(b, '"'), nil
		}
	case Raw:
		if x == nil {
			return append(b, "null"...), nil
		}
		return append(b, x...), nil
	case map[string]any:
		return appendMap(b, x)
	case []any:
		return appendList(b, x)
	case []string:
		if x == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, s := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendString(b, s)
		}
		return append(b, ']'), nil
	}
	enc, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, enc...), nil
}

// Raw is a value already encoded as compact JSON, as json.Marshal would
// encode it: Append appends it as it is, and json.Marshal encodes it as
// that JSON (not as bytes).
type Raw []byte

// MarshalJSON implements json.Marshaler.
func (r Raw) MarshalJSON() ([]byte, error) {
	if r == nil {
		return []byte("null"), nil
	}
	return r, nil
}

func appendMap(b []byte, m map[string]any) ([]byte, error) {
	if m == nil {
		return append(b, "null"...), nil
	}
	b = append(b, '{')
	for i, k := range SortedKeys(m) {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, k)
		b = append(b, ':')
		var err error
		if b, err = Append(b, m[k]); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

func appendList(b []byte, l []any) ([]byte, error) {
	if l == nil {
		return append(b, "null"...), nil
	}
	b = append(b, '[')
	for i, it := range l {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = Append(b, it); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

// appendFloat appends a finite float64 as encoding/json does: the shortest
// decimal that reads back as f, in exponent form below 1e-6 and from 1e21
// on, with a two-digit exponent shortened to one digit (1e-07 as 1e-7).
func appendFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// SortedKeys returns the keys of m in the order encoding/json writes them.
func SortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// AppendString appends s as a JSON string exactly as encoding/json writes
// it (with HTML escaping): quotes and backslashes escaped, \b \f \n \r \t
// as such, other control characters and < > & as \u00XX, invalid UTF-8 as
// \ufffd, and U+2028 and U+2029 as \u2028 and \u2029.
func AppendString(b []byte, s string) []byte {
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
			b = appendEscaped(b, c)
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

// appendEscaped appends the escape of an ASCII byte that a JSON string does
// not hold as it is.
func appendEscaped(b []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(b, '\\', c)
	case '\b':
		return append(b, '\\', 'b')
	case '\f':
		return append(b, '\\', 'f')
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}

const hexDigits = "0123456789abcdef"

// plainASCII marks the ASCII bytes a JSON string holds as they are.
var plainASCII = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()
