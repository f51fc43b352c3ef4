package badger

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// decodeObject decodes the JSON object of a stored item's value into a map
// as json.Unmarshal does into a map[string]any (objects as map[string]any,
// arrays as []any, numbers as float64), without its reflection: an item
// read decodes several allocations fewer and faster. What the fast path
// does not take (a surrogate pair escape, invalid UTF-8, a number out of
// range, anything that is not compact valid JSON) goes to json.Unmarshal,
// so the result and the errors are always json.Unmarshal's.
func decodeObject(data []byte) (map[string]any, error) {
	d := jsonDecoder{data: data}
	d.space()
	if d.i < len(d.data) && d.data[d.i] == '{' {
		if v, ok := d.value(); ok {
			d.space()
			if d.i == len(d.data) {
				return v.(map[string]any), nil
			}
		}
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// jsonDecoder is decodeObject's fast path: ok is false where it gives up.
type jsonDecoder struct {
	data []byte
	i    int
	// buf holds a string's unescaped bytes.
	buf []byte
}

func (d *jsonDecoder) space() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// value decodes the value at d.i.
func (d *jsonDecoder) value() (any, bool) {
	if d.i >= len(d.data) {
		return nil, false
	}
	switch c := d.data[d.i]; {
	case c == '{':
		return d.object()
	case c == '[':
		return d.array()
	case c == '"':
		return d.string()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	}
	return nil, false
}

func (d *jsonDecoder) literal(lit string) bool {
	if len(d.data)-d.i < len(lit) || string(d.data[d.i:d.i+len(lit)]) != lit {
		return false
	}
	d.i += len(lit)
	return true
}

func (d *jsonDecoder) object() (any, bool) {
	m := map[string]any{}
	ok := d.members('}', func() bool {
		if d.i >= len(d.data) || d.data[d.i] != '"' {
			return false
		}
		k, ok := d.text()
		if !ok {
			return false
		}
		d.space()
		if d.i >= len(d.data) || d.data[d.i] != ':' {
			return false
		}
		d.i++
		d.space()
		v, ok := d.value()
		m[k] = v
		return ok
	})
	return m, ok
}

func (d *jsonDecoder) array() (any, bool) {
	l := []any{}
	ok := d.members(']', func() bool {
		v, ok := d.value()
		l = append(l, v)
		return ok
	})
	return l, ok
}

// members reads the members of the object or array that opens at d.i and
// ends with end, each with member, called at its first byte.
func (d *jsonDecoder) members(end byte, member func() bool) bool {
	d.i++ // { or [
	d.space()
	if d.i < len(d.data) && d.data[d.i] == end {
		d.i++
		return true
	}
	for {
		d.space()
		if !member() {
			return false
		}
		d.space()
		if d.i >= len(d.data) {
			return false
		}
		switch d.data[d.i] {
		case ',':
			d.i++
		case end:
			d.i++
			return true
		default:
			return false
		}
	}
}

// string decodes the string at d.i.
func (d *jsonDecoder) string() (any, bool) {
	s, ok := d.text()
	return s, ok
}

// text decodes the string at d.i: one allocation, its text.
func (d *jsonDecoder) text() (string, bool) {
	d.i++ // "
	start := d.i
	for d.i < len(d.data) {
		c := d.data[d.i]
		switch {
		case c == '"':
			s := d.data[start:d.i]
			d.i++
			return string(s), true
		case c == '\\':
			return d.escaped(start)
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(d.data[d.i:])
			if r == utf8.RuneError && size == 1 {
				return "", false // json.Unmarshal replaces it
			}
			d.i += size
		default:
			d.i++
		}
	}
	return "", false
}

// escaped decodes the rest of a string that began at start and has an
// escape at d.i.
func (d *jsonDecoder) escaped(start int) (string, bool) {
	b := append(d.buf[:0], d.data[start:d.i]...)
	for d.i < len(d.data) {
		c := d.data[d.i]
		switch {
		case c == '"':
			d.i++
			d.buf = b
			return string(b), true
		case c == '\\':
			if d.i+1 >= len(d.data) {
				return "", false
			}
			e := d.data[d.i+1]
			d.i += 2
			switch e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				if d.i+4 > len(d.data) {
					return "", false
				}
				r, ok := hex4(d.data[d.i : d.i+4])
				if !ok || r >= 0xD800 && r < 0xE000 {
					return "", false // a surrogate: json.Unmarshal pairs them
				}
				b = utf8.AppendRune(b, r)
				d.i += 4
			default:
				return "", false
			}
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(d.data[d.i:])
			if r == utf8.RuneError && size == 1 {
				return "", false
			}
			b = append(b, d.data[d.i:d.i+size]...)
			d.i += size
		default:
			b = append(b, c)
			d.i++
		}
	}
	return "", false
}

// number decodes the number at d.i as json.Unmarshal does into an any.
func (d *jsonDecoder) number() (any, bool) {
	start := d.i
	if d.data[d.i] == '-' {
		d.i++
	}
	switch {
	case d.i < len(d.data) && d.data[d.i] == '0':
		d.i++
	case d.digits() == 0:
		return nil, false
	}
	if d.i < len(d.data) && d.data[d.i] == '.' {
		d.i++
		if d.digits() == 0 {
			return nil, false
		}
	}
	if d.i < len(d.data) && (d.data[d.i] == 'e' || d.data[d.i] == 'E') {
		d.i++
		if d.i < len(d.data) && (d.data[d.i] == '+' || d.data[d.i] == '-') {
			d.i++
		}
		if d.digits() == 0 {
			return nil, false
		}
	}
	f, err := strconv.ParseFloat(string(d.data[start:d.i]), 64)
	if err != nil {
		return nil, false // out of range: json.Unmarshal says so
	}
	return f, true
}

// digits skips the digits at d.i and returns how many there were.
func (d *jsonDecoder) digits() int {
	start := d.i
	for d.i < len(d.data) && d.data[d.i] >= '0' && d.data[d.i] <= '9' {
		d.i++
	}
	return d.i - start
}

// hex4 decodes the four hexadecimal digits of a \u escape.
func hex4(h []byte) (rune, bool) {
	var r rune
	for _, c := range h {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
