package llm

import "unicode/utf8"

// plainTextChunk reads the commonest chunk of an OpenAI chat completion
// stream, one choice whose delta is a piece of text, without reflection:
//
//	{"id":"…","object":"chat.completion.chunk","created":1,"model":"…",
//	 "choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}]}
//
// ok is set only when data is such a chunk and decodes, by
// encoding/json into langchaingo's types as into openaiChunk, to a chunk
// that carries nothing but text (openaiChunk.textOnly), with no error and
// no type: then text is that text. Anything else, or anything it is not
// sure of (an escape in the text, a member of another case, a duplicate,
// a number with an exponent), is left to the decoder: ok is false.
func plainTextChunk(data []byte) (text string, ok bool) {
	p := chunkParser{b: data}
	p.ws()
	if !p.object(p.topMember) {
		return "", false
	}
	p.ws()
	if p.i != len(p.b) || p.choices != 1 {
		return "", false
	}
	return p.text, true
}

// chunkParser walks a chunk. Its member functions read the value of one
// member and report whether the chunk can still be a plain text chunk.
type chunkParser struct {
	b []byte
	i int
	// choices counts the choices read; seen the known members read, per
	// object, so that a duplicate is left to the decoder.
	choices int
	seen    uint32
	text    string
	// depth is the nesting of the values skip is in.
	depth int
}

// Members of the chunk's objects that encoding/json would decode into
// openaiChunk: a key equal to one of them but for case is left to the
// decoder (it matches keys without regard to case).
var (
	topMembers    = []string{"id", "object", "created", "model", "system_fingerprint", "choices", "usage", "type", "error"}
	choiceMembers = []string{"index", "delta", "finish_reason"}
	deltaMembers  = []string{"role", "content", "function_call", "tool_calls", "reasoning_content"}
)

// known returns the bit of key among names (0 for an unknown key), and
// false when the key differs from one of them only in case.
func known(key []byte, names []string) (uint32, bool) {
	for i, n := range names {
		if string(key) == n {
			return 1 << i, true
		}
		if equalFoldASCII(key, n) {
			return 0, false
		}
	}
	return 0, true
}

// equalFoldASCII reports whether the ASCII key and name are equal but for
// the case of their letters.
func equalFoldASCII(key []byte, name string) bool {
	if len(key) != len(name) {
		return false
	}
	for i, c := range key {
		if lower(c) != lower(name[i]) {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func (p *chunkParser) topMember(key []byte) bool {
	if !p.firstOf(key, topMembers) {
		return false
	}
	switch string(key) {
	case "id", "object", "model", "system_fingerprint":
		return p.stringOrNull()
	case "created":
		return p.plainNumber()
	case "usage", "error":
		return p.null()
	case "choices":
		return p.array(func() bool {
			p.choices++
			if p.choices > 1 {
				return false
			}
			return p.nested(p.choiceMember)
		})
	case "type":
		return false
	}
	return p.skip()
}

func (p *chunkParser) choiceMember(key []byte) bool {
	if !p.firstOf(key, choiceMembers) {
		return false
	}
	switch string(key) {
	case "index":
		return p.plainNumber()
	case "finish_reason":
		return p.null()
	case "delta":
		return p.nested(p.deltaMember)
	}
	return p.skip()
}

func (p *chunkParser) deltaMember(key []byte) bool {
	if !p.firstOf(key, deltaMembers) {
		return false
	}
	switch string(key) {
	case "role":
		return p.stringOrNull()
	case "content":
		if p.peek() == 'n' {
			return p.null()
		}
		s, ok := p.plainString()
		p.text = s
		return ok
	case "function_call", "tool_calls":
		return p.null()
	case "reasoning_content":
		if p.peek() == 'n' {
			return p.null()
		}
		s, ok := p.plainString()
		return ok && s == ""
	}
	return p.skip()
}

// nested reads an object inside the one being read, with its own record
// of the members read.
func (p *chunkParser) nested(member func(key []byte) bool) bool {
	saved := p.seen
	p.seen = 0
	ok := p.object(member)
	p.seen = saved
	return ok
}

// firstOf reports whether key, a member of an object whose known members
// are names, is neither a known member read before (marking it read) nor
// one of them but for case.
func (p *chunkParser) firstOf(key []byte, names []string) bool {
	bit, ok := known(key, names)
	if !ok || p.seen&bit != 0 {
		return false
	}
	p.seen |= bit
	return true
}

func (p *chunkParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *chunkParser) peek() byte {
	p.ws()
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

// object reads an object, calling member with each key, the reader at its
// value.
func (p *chunkParser) object(member func(key []byte) bool) bool {
	if p.peek() != '{' {
		return false
	}
	p.i++
	if p.peek() == '}' {
		p.i++
		return true
	}
	for {
		if p.peek() != '"' {
			return false
		}
		key, ok := p.rawString()
		if !ok || !plainKey(key) || p.peek() != ':' {
			return false
		}
		p.i++
		p.ws()
		if !member(key) {
			return false
		}
		switch p.peek() {
		case ',':
			p.i++
		case '}':
			p.i++
			return true
		default:
			return false
		}
	}
}

// array reads an array, calling elem at each element.
func (p *chunkParser) array(elem func() bool) bool {
	if p.peek() != '[' {
		return false
	}
	p.i++
	if p.peek() == ']' {
		p.i++
		return true
	}
	for {
		p.ws()
		if !elem() {
			return false
		}
		switch p.peek() {
		case ',':
			p.i++
		case ']':
			p.i++
			return true
		default:
			return false
		}
	}
}

// plainKey reports whether a key is printable ASCII without escapes.
func plainKey(key []byte) bool {
	for _, c := range key {
		if c < 0x20 || c >= 0x80 || c == '\\' {
			return false
		}
	}
	return true
}

// rawString reads a string and returns its bytes between the quotes, as
// they are (escapes not undone); false for a string that is not JSON.
func (p *chunkParser) rawString() ([]byte, bool) {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return nil, false
	}
	start := p.i + 1
	for i := start; i < len(p.b); i++ {
		switch c := p.b[i]; {
		case c == '"':
			p.i = i + 1
			return p.b[start:i], true
		case c < 0x20:
			return nil, false
		case c == '\\':
			if i+1 >= len(p.b) {
				return nil, false
			}
			i++
			switch p.b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(p.b) {
					return nil, false
				}
				for _, h := range p.b[i+1 : i+5] {
					if !isHex(h) {
						return nil, false
					}
				}
				i += 4
			default:
				return nil, false
			}
		}
	}
	return nil, false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// plainString reads a string that decodes to its own bytes: no escapes,
// valid UTF-8 (encoding/json would replace invalid bytes).
func (p *chunkParser) plainString() (string, bool) {
	raw, ok := p.rawString()
	if !ok {
		return "", false
	}
	for _, c := range raw {
		if c == '\\' {
			return "", false
		}
	}
	if !utf8.Valid(raw) {
		return "", false
	}
	return string(raw), true
}

func (p *chunkParser) stringOrNull() bool {
	if p.peek() == 'n' {
		return p.null()
	}
	_, ok := p.rawString()
	return ok
}

func (p *chunkParser) null() bool {
	if len(p.b)-p.i >= 4 && string(p.b[p.i:p.i+4]) == "null" {
		p.i += 4
		return true
	}
	return false
}

// plainNumber reads a number that a float64 holds whatever it is: at most
// 15 digits, no exponent.
func (p *chunkParser) plainNumber() bool {
	start := p.i
	if !p.number() {
		return false
	}
	digits := 0
	for _, c := range p.b[start:p.i] {
		switch {
		case c == 'e' || c == 'E':
			return false
		case '0' <= c && c <= '9':
			digits++
		}
	}
	return digits <= 15
}

// maxSkipDepth bounds the nesting of the values skip reads (the decoder
// has its own bound, far higher; deeper values are left to it).
const maxSkipDepth = 32

// skip reads any JSON value (of a member the decoder ignores).
func (p *chunkParser) skip() bool {
	switch c := p.peek(); {
	case c == '{' || c == '[':
		if p.depth++; p.depth > maxSkipDepth {
			return false
		}
		defer func() { p.depth-- }()
		if c == '[' {
			return p.array(p.skip)
		}
		return p.object(func([]byte) bool { return p.skip() })
	case c == '"':
		_, ok := p.rawString()
		return ok
	case c == 'n':
		return p.null()
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == '-' || '0' <= c && c <= '9':
		return p.number()
	}
	return false
}

func (p *chunkParser) literal(s string) bool {
	if len(p.b)-p.i >= len(s) && string(p.b[p.i:p.i+len(s)]) == s {
		p.i += len(s)
		return true
	}
	return false
}

// number reads any JSON number.
func (p *chunkParser) number() bool {
	i := p.i
	if i < len(p.b) && p.b[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(p.b) && '0' <= p.b[i] && p.b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	start := i
	n := digits()
	if n == 0 || p.b[start] == '0' && n > 1 {
		return false
	}
	if i < len(p.b) && p.b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(p.b) && (p.b[i] == 'e' || p.b[i] == 'E') {
		i++
		if i < len(p.b) && (p.b[i] == '+' || p.b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	p.i = i
	return true
}
