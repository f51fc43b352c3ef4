package llm

import (
	"encoding/json"
	"unicode/utf8"
)

// fieldStreamer follows a JSON object as it streams in and passes on, as it
// arrives, the decoded text of one top-level string field (the reply_from
// field of a JSON reply), so that a JSON-answering model still streams its
// answer token by token.
type fieldStreamer struct {
	key  string
	emit func(string)

	depth    int
	inString bool
	escape   bool
	// state at depth 1: expecting a key, a colon, a value, or a comma.
	state    int
	key1     []byte // the key being read at depth 1
	capture  bool   // reading a key at depth 1
	lastKey  string
	emitting bool   // inside the target field's string value
	esc      []byte // a pending escape sequence in the target value
	pending  []byte // bytes of an incomplete UTF-8 sequence
	done     bool
	streamed []byte // everything passed on, decoded
}

const (
	wantKey = iota
	wantColon
	wantValue
	wantComma
)

func newFieldStreamer(key string, emit func(string)) *fieldStreamer {
	return &fieldStreamer{key: key, emit: emit}
}

// Text returns what has been passed on so far.
func (s *fieldStreamer) Text() string { return string(s.streamed) }

// Write consumes the next chunk of the JSON text.
func (s *fieldStreamer) Write(chunk []byte) {
	var out []byte
	for _, c := range chunk {
		if s.done {
			break
		}
		switch {
		case s.emitting:
			out = s.valueByte(c, out)
		case s.inString:
			s.stringByte(c)
		default:
			s.structureByte(c)
		}
	}
	if len(out) > 0 {
		s.streamed = append(s.streamed, out...)
		s.emit(string(out))
	}
}

// stringByte handles one byte inside a string other than the target value:
// a key at depth 1 is recorded, other strings are skipped.
func (s *fieldStreamer) stringByte(c byte) {
	switch {
	case s.escape:
		s.escape = false
		if s.capture {
			s.key1 = append(s.key1, '\\', c)
		}
	case c == '\\':
		s.escape = true
	case c == '"':
		s.inString = false
		if s.capture {
			s.capture = false
			var k string
			if json.Unmarshal(append(append([]byte{'"'}, s.key1...), '"'), &k) == nil {
				s.lastKey = k
			}
			s.state = wantColon
		} else if s.depth == 1 {
			s.state = wantComma
		}
	default:
		if s.capture {
			s.key1 = append(s.key1, c)
		}
	}
}

// structureByte handles one byte outside strings: nesting, the start of a
// string (a key, the target value, another string), colons and commas.
func (s *fieldStreamer) structureByte(c byte) {
	switch c {
	case '{', '[':
		s.depth++
		if s.depth == 1 && c == '{' {
			s.state = wantKey
		}
	case '}', ']':
		s.depth--
		if s.depth == 1 {
			s.state = wantComma
		}
	case '"':
		switch {
		case s.depth == 1 && s.state == wantKey:
			s.inString, s.capture, s.key1 = true, true, s.key1[:0]
		case s.depth == 1 && s.state == wantValue && s.lastKey == s.key:
			s.emitting = true
		default:
			s.inString = true
		}
	case ':':
		if s.depth == 1 {
			s.state = wantValue
		}
	case ',':
		if s.depth == 1 {
			s.state = wantKey
		}
	default:
		if s.depth == 1 && s.state == wantValue && c > ' ' {
			s.state = wantComma // a number, true, false or null
		}
	}
}

// valueByte handles one byte of the target string value, appending decoded
// text that is complete (whole runes) to out.
func (s *fieldStreamer) valueByte(c byte, out []byte) []byte {
	if len(s.esc) > 0 {
		s.esc = append(s.esc, c)
		if s.esc[1] == 'u' && len(s.esc) < 6 {
			return out
		}
		var decoded string
		if json.Unmarshal(append(append([]byte{'"'}, s.esc...), '"'), &decoded) == nil {
			out = append(out, decoded...)
		}
		s.esc = s.esc[:0]
		return out
	}
	switch c {
	case '\\':
		s.esc = append(s.esc[:0], c)
		return out
	case '"':
		s.emitting, s.done = false, true
		return append(out, s.pending...)
	}
	s.pending = append(s.pending, c)
	n := 0
	for n < len(s.pending) && utf8.FullRune(s.pending[n:]) {
		_, size := utf8.DecodeRune(s.pending[n:])
		n += size
	}
	out = append(out, s.pending[:n]...)
	s.pending = s.pending[n:]
	return out
}
