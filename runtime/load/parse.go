package load

import (
	"bytes"
	stderrors "errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/scanner"
	"cuelang.org/go/cue/token"
	"cuelang.org/go/encoding/yaml"
	goyaml "github.com/goccy/go-yaml"
	yamlparser "github.com/goccy/go-yaml/parser"

	"github.com/graphctl/graphctl/runtime/diag"
)

// isYAML reports whether a file name has a YAML extension.
func isYAML(name string) bool {
	lower := strings.ToLower(name)
	return strings.HasSuffix(lower, ".yaml") || strings.HasSuffix(lower, ".yml")
}

// yamlBreaks rewrites every line break YAML knows (CR LF, CR, NEL, LS, PS) as
// LF. The YAML parser counts lines at each of them while the CUE positions it
// is mapped to count only LFs: without this, a file with old Mac line endings
// crashed the YAML decoder, and other breaks shifted every position.
var yamlBreaks = strings.NewReplacer("\r\n", "\n", "\r", "\n", "\u0085", "\n", "\u2028", "\n", "\u2029", "\n")

// normalizeSource returns a file's data as the parser is given it: YAML with
// its line breaks normalized, CUE as it is.
func normalizeSource(name string, src []byte) []byte {
	if !isYAML(name) || !bytes.ContainsAny(src, "\r\u0085\u2028\u2029") {
		return src
	}
	return []byte(yamlBreaks.Replace(string(src)))
}

// parseFile parses one CUE or YAML source into a CUE syntax tree. Syntax
// errors are returned as diagnostics with code "syntax". A YAML source must
// have been normalized by normalizeSource.
func parseFile(name string, src []byte) (*ast.File, diag.List) {
	if d, ok := checkUTF8(name, src); !ok {
		return nil, diag.List{d}
	}
	if d, ok := checkControl(name, src); !ok {
		return nil, diag.List{d}
	}
	var (
		f   *ast.File
		err error
	)
	if isYAML(name) {
		if line := secondDocument(src); line > 0 {
			return nil, diag.List{multipleDocuments(name, line)}
		}
		f, err = yaml.Extract(name, src)
	} else {
		if d, ok := checkCUENesting(name, src); !ok {
			return nil, diag.List{d}
		}
		f, err = parser.ParseFile(name, src, parser.ParseComments)
	}
	if err == nil {
		if d, ok := checkNesting(name, f); !ok {
			return nil, diag.List{d}
		}
		return f, nil
	}
	var l diag.List
	for _, e := range errors.Errors(err) {
		format, args := e.Msg()
		pos, msg := posOf(name, e.Position()), sanitizeSyntax(format, args)
		if !e.Position().IsValid() {
			// YAML errors carry only "file:line: message" in their text.
			if m := yamlErrRE.FindStringSubmatch(e.Error()); m != nil {
				line, _ := strconv.Atoi(m[1])
				pos, msg = diag.Pos{File: name, Line: line, Col: 1}, m[2]
			}
		}
		if msg == "" {
			msg = e.Error()
		}
		if at, text, ok := aliasProblem(name, src, msg); ok {
			pos, msg = at, text
		}
		if at, text, ok := versionProblem(name, src, msg); ok {
			pos, msg = at, text
		}
		// Some YAML errors start with the file name, which the position already gives.
		msg = strings.TrimPrefix(msg, name+": ")
		if !isYAML(name) {
			msg += quoteInStringHint(src, pos)
		}
		l.Errorf(pos, "syntax", "", "%s", msg)
	}
	if len(l) == 0 {
		l.Errorf(diag.Pos{File: name, Line: 1, Col: 1}, "syntax", "", "%v", err)
	}
	if isYAML(name) && len(l) == 1 {
		// The YAML decoder places a parser error at the start of the mapping
		// or sequence it was in, a line early; a second parser finds the token.
		if pos, msg, ok := yamlSyntaxError(name, src); ok {
			l[0].Line, l[0].Col, l[0].Message = pos.Line, pos.Col, msg
		}
		if pos, msg, ok := colonInValue(src, l[0].Line); ok {
			l[0].Line, l[0].Col, l[0].Message = pos.Line, pos.Col, msg
		}
		if pos, msg, ok := tagInValue(src, l[0].Line, l[0].Message); ok {
			l[0].Line, l[0].Col, l[0].Message = pos.Line, pos.Col, msg
		}
	}
	return nil, l
}

// MaxNesting bounds how deep the structs and lists of a graph file nest. A
// graph file nests a dozen levels; a label chain (a: b: c: …) a hundred
// thousand deep parses, but indexing and evaluating it take time and memory
// in the square of its depth.
const MaxNesting = 1000

// checkNesting reports a file whose structs and lists nest deeper than
// MaxNesting, at the first value past the limit.
func checkNesting(name string, f *ast.File) (diag.Diagnostic, bool) {
	depth := 0
	var deep ast.Node
	nests := func(n ast.Node) bool {
		switch n.(type) {
		case *ast.StructLit, *ast.ListLit:
			return true
		}
		return false
	}
	ast.Walk(f, func(n ast.Node) bool {
		if deep != nil {
			return false
		}
		if nests(n) {
			if depth++; depth > MaxNesting {
				deep = n
				return false
			}
		}
		return true
	}, func(n ast.Node) {
		if nests(n) {
			depth--
		}
	})
	if deep == nil {
		return diag.Diagnostic{}, true
	}
	var l diag.List
	l.Errorf(posOf(name, deep.Pos()), "syntax", "", "values nest deeper than %d levels here; a graph file needs a few", MaxNesting)
	return l[0], false
}

// checkCUENesting is checkNesting on CUE tokens, before parsing: the CUE
// parser takes seconds over a label chain a hundred thousand deep. A label
// followed by another (a: b: …) opens an implicit struct, a brace or a
// bracket an explicit one; the diagnostic is the one checkNesting gives.
func checkCUENesting(name string, src []byte) (diag.Diagnostic, bool) {
	var s scanner.Scanner
	s.Init(token.NewFile(name, -1, len(src)), src, nil, 0)
	// chain counts the colons of the current field's label chain; opened
	// holds, per open brace or bracket, the chain before it and the levels
	// it opened; depth sums those levels.
	type open struct{ chain, levels int }
	var opened []open
	chain, depth := 0, 0
	var label token.Pos
	deep := func(p token.Pos) (diag.Diagnostic, bool) {
		var l diag.List
		l.Errorf(posOf(name, p), "syntax", "", "values nest deeper than %d levels here; a graph file needs a few", MaxNesting)
		return l[0], false
	}
	for {
		pos, tok, _ := s.Scan()
		switch tok {
		case token.EOF:
			return diag.Diagnostic{}, true
		case token.IDENT, token.STRING:
			label = pos
		case token.COLON:
			if chain++; depth+chain-1 > MaxNesting {
				return deep(label)
			}
		case token.COMMA:
			chain = 0
		case token.LBRACE, token.LBRACK:
			levels := max(chain, 1)
			opened = append(opened, open{chain, levels})
			if depth += levels; depth > MaxNesting {
				return deep(pos)
			}
			chain = 0
		case token.RBRACE, token.RBRACK:
			if n := len(opened); n > 0 {
				chain, depth = opened[n-1].chain, depth-opened[n-1].levels
				opened = opened[:n-1]
			}
		}
	}
}

// maxYAMLProbeDepth bounds the flow nesting of a file yamlSyntaxError parses
// again: that parser recurses once per level.
const maxYAMLProbeDepth = 1000

// yamlSyntaxError parses a YAML source that failed to parse with a second
// parser, which reports the offending token's line:col. It reports false
// when that parser finds no syntax error or the file nests too deep for it.
func yamlSyntaxError(name string, src []byte) (pos diag.Pos, msg string, ok bool) {
	depth, deepest := 0, 0
	for _, c := range src {
		switch c {
		case '[', '{':
			depth++
			deepest = max(deepest, depth)
		case ']', '}':
			depth--
		}
	}
	if deepest > maxYAMLProbeDepth {
		return diag.Pos{}, "", false
	}
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	_, err := yamlparser.ParseBytes(src, 0)
	var se *goyaml.SyntaxError
	if !stderrors.As(err, &se) || se.Token == nil || se.Token.Position == nil || se.Token.Position.Line < 1 {
		return diag.Pos{}, "", false
	}
	p := se.Token.Position
	msg = se.Message
	if strings.Contains(msg, "'\t'") {
		msg = "a tab cannot start a token: YAML indents with spaces"
	}
	if strings.Contains(msg, "not allowed in this context") {
		msg = misindented(src, p.Line, msg)
	}
	return diag.Pos{File: name, Line: p.Line, Col: max(p.Column, 1)}, msg, true
}

// yamlErrRE matches the text of a YAML parser error: "file:line: message".
var yamlErrRE = regexp.MustCompile(`:(\d+): (.*)$`)

// sanitizeSyntax formats a parser message, dropping the file prefix that some
// YAML errors carry.
func sanitizeSyntax(format string, args []any) string {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	return strings.TrimSpace(msg)
}

// posOf converts a CUE token position, using name when the position has none.
func posOf(name string, p token.Pos) diag.Pos {
	if !p.IsValid() {
		return diag.Pos{File: name, Line: 1, Col: 1}
	}
	file := p.Filename()
	if file == "" {
		file = name
	}
	return diag.Pos{File: file, Line: p.Line(), Col: p.Column()}
}

// posIndex records the position of every value of one document.
type posIndex struct {
	pos map[string]diag.Pos
	// literals holds the source text of escaped single-line strings (graph.Graph.Literals).
	literals map[string]string
	// labels maps a field's path to the position of its label.
	labels map[string]diag.Pos
	srcs   map[string][]byte
	diags  diag.List
	// comprehensions holds the paths of the structs that hold a CUE
	// comprehension, whose generated fields the index cannot name.
	comprehensions map[string]bool
	// yaml is set while a YAML file is indexed.
	yaml bool
	// col remembers the last YAML column converted, so that the values of
	// one long line (a flow list of 100,000 items) are converted in one
	// pass over it rather than one pass each.
	col colMemo
}

// colMemo is a YAML position whose column counted chars characters and
// bytes bytes from the start of its line.
type colMemo struct {
	ok               bool
	file             string
	lineStart        int
	chars, byteCount int
}

// indexFile walks a file's top-level declarations.
func (x *posIndex) indexFile(f *ast.File) {
	x.yaml = isYAML(f.Filename)
	x.indexDecls("", f.Decls, true)
}

// indexDecls records the fields of one struct literal (or file) under prefix
// and reports labels of nodes and state declared twice in it.
func (x *posIndex) indexDecls(prefix string, decls []ast.Decl, top bool) {
	seen := map[string]bool{}
	dupCheck := prefix == "nodes" || prefix == "state"
	for _, d := range decls {
		switch d := d.(type) {
		case *ast.Field:
			name, ok := labelName(d.Label)
			if !ok {
				// A definition of the file's own (#A) is no part of the
				// graph, but a problem inside it is reported at its label.
				if ident, isIdent := d.Label.(*ast.Ident); isIdent && top && strings.HasPrefix(ident.Name, "#") {
					if _, done := x.labels[ident.Name]; !done {
						x.labels[ident.Name] = x.at(d.Label.Pos())
					}
				}
				continue
			}
			path := joinPath(prefix, name)
			if !dupCheck && x.yaml && seen[name] {
				// YAML keys are unique in a mapping; a repeated one would be
				// merged into the first without a word.
				x.diags.Errorf(x.at(d.Label.Pos()), "duplicate-key", path,
					"%s: key %q appears twice in this mapping; YAML keys must be unique", path, name)
			}
			if !dupCheck {
				seen[name] = true
			}
			if dupCheck {
				if seen[name] {
					what := "node"
					if prefix == "state" {
						what = "state field"
					}
					first := x.pos[path]
					x.diags.Errorf(x.at(d.Label.Pos()), "duplicate-name", path,
						"%s: %s %q is declared twice (first at line %d): declare it once, with all its keys", path, what, name, first.Line)
				}
				seen[name] = true
			}
			// A key a YAML merge (<<: *shape) brings has no place of its
			// own: its problems are placed at the mapping it is merged into.
			if _, done := x.pos[path]; !done && d.Label.Pos().IsValid() {
				x.pos[path] = x.at(d.Label.Pos())
				x.labels[path] = x.pos[path]
			}
			x.indexValue(path, d.Value)
		case *ast.EmbedDecl:
			if top {
				x.indexValue(prefix, d.Expr)
			}
		case *ast.Comprehension:
			if x.comprehensions == nil {
				x.comprehensions = map[string]bool{}
			}
			x.comprehensions[prefix] = true
		}
	}
}

// indexValue records the positions inside a value; path's own position is
// already recorded (label or list element).
func (x *posIndex) indexValue(path string, e ast.Expr) {
	switch v := e.(type) {
	case *ast.StructLit:
		x.indexDecls(path, v.Elts, false)
	case *ast.BinaryExpr:
		// #Shape & {config: …}: the fields written in either operand.
		if v.Op == token.AND {
			x.indexValue(path, v.X)
			x.indexValue(path, v.Y)
		}
	case *ast.ParenExpr:
		x.indexValue(path, v.X)
	case *ast.ListLit:
		for i, el := range v.Elts {
			p := joinPath(path, strconv.Itoa(i))
			if _, done := x.pos[p]; !done && el.Pos().IsValid() {
				x.pos[p] = x.valuePos(el)
			}
			x.indexValue(p, el)
		}
	case *ast.BasicLit, *ast.Interpolation:
		// A scalar's position is that of its content, not its label, so that
		// offsets inside an expression map to exact columns.
		if path != "" && v.Pos().IsValid() {
			x.pos[path] = x.valuePos(v)
			if raw, ok := x.escapedLiteral(v); ok {
				x.literals[path] = raw
			}
		}
	}
}

// valuePos is the position of a value: for strings, the first character of
// the content, one past the opening quote.
func (x *posIndex) valuePos(e ast.Expr) diag.Pos {
	p := e.Pos()
	pos, off := x.locate(p)
	isString := false
	switch v := e.(type) {
	case *ast.BasicLit:
		isString = v.Kind == token.STRING
	case *ast.Interpolation:
		isString = true
	}
	if !isString || !p.IsValid() {
		return pos
	}
	src := x.srcs[pos.File]
	if off < 0 || off >= len(src) {
		return pos
	}
	rest := src[off:]
	hashes := 0
	for hashes < len(rest) && rest[hashes] == '#' {
		hashes++
	}
	rest = rest[hashes:]
	switch {
	case bytes.HasPrefix(rest, []byte(`"""`)), bytes.HasPrefix(rest, []byte(`'''`)),
		len(rest) > 0 && (rest[0] == '|' || rest[0] == '>'):
		// Multi-line string or YAML block scalar: the content starts on the
		// next line, after its indentation.
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			return pos
		}
		line := rest[nl+1:]
		col := 1
		for col-1 < len(line) && (line[col-1] == ' ' || line[col-1] == '\t') {
			col++
		}
		return diag.Pos{File: pos.File, Line: pos.Line + 1, Col: col}
	case len(rest) > 0 && (rest[0] == '"' || rest[0] == '\''):
		return pos.Shift(hashes + 1)
	}
	return pos
}

// at converts a position of the user's files; columns count bytes.
func (x *posIndex) at(p token.Pos) diag.Pos {
	pos, _ := x.locate(p)
	return pos
}

// locate converts a position of the user's files and returns it with its byte
// offset in the file. The YAML decoder counts columns in characters and adds
// them to the line's byte offset, so after a multi-byte character a YAML
// position is corrected to the byte column CUE files have.
func (x *posIndex) locate(p token.Pos) (diag.Pos, int) {
	pos := posOf("", p)
	if !p.IsValid() {
		return pos, -1
	}
	off := p.Offset()
	if !isYAML(pos.File) || pos.Col < 1 {
		return pos, off
	}
	src := x.srcs[pos.File]
	lineStart := off - (pos.Col - 1)
	if lineStart < 0 || lineStart > len(src) {
		return pos, off
	}
	line := src[lineStart:]
	n, chars := 0, pos.Col-1
	if m := x.col; m.ok && m.file == pos.File && m.lineStart == lineStart && m.chars <= chars {
		n, chars = m.byteCount, chars-m.chars
	}
	for ; chars > 0 && n < len(line) && line[n] != '\n'; chars-- {
		_, size := utf8.DecodeRune(line[n:])
		n += size
	}
	x.col = colMemo{ok: true, file: pos.File, lineStart: lineStart, chars: pos.Col - 1 - chars, byteCount: n}
	pos.Col = n + 1
	return pos, lineStart + n
}

// labelName returns the name of a regular field label; definitions, hidden
// fields and pattern constraints are not part of the document.
func labelName(l ast.Label) (string, bool) {
	name, _, err := ast.LabelName(l)
	if err != nil || name == "" {
		return "", false
	}
	if ident, ok := l.(*ast.Ident); ok && (strings.HasPrefix(ident.Name, "#") || strings.HasPrefix(ident.Name, "_")) {
		return "", false
	}
	return name, true
}

func joinPath(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// escapedLiteral returns the source text between the quotes of a single-line
// double-quoted string that contains escape sequences.
func (x *posIndex) escapedLiteral(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING || !lit.Pos().IsValid() {
		return "", false
	}
	pos, off := x.locate(lit.Pos())
	src := x.srcs[pos.File]
	if off < 0 || off+1 >= len(src) || src[off] != '"' || bytes.HasPrefix(src[off:], []byte(`"""`)) {
		return "", false
	}
	escaped := false
	for i := off + 1; i < len(src); i++ {
		switch src[i] {
		case '\\':
			escaped = true
			i++
		case '"':
			return string(src[off+1 : i]), escaped
		case '\n':
			return "", false
		}
	}
	return "", false
}

// checkUTF8 reports the first byte of src that is not UTF-8, at its line and
// column; a file that starts with a UTF-16 byte order mark is named as such.
func checkUTF8(name string, src []byte) (diag.Diagnostic, bool) {
	if utf8.Valid(src) {
		return diag.Diagnostic{}, true
	}
	var l diag.List
	if bytes.HasPrefix(src, []byte{0xff, 0xfe}) || bytes.HasPrefix(src, []byte{0xfe, 0xff}) {
		l.Errorf(diag.Pos{File: name, Line: 1, Col: 1}, "encoding", "", "the file is UTF-16 text; save it as UTF-8")
		return l[0], false
	}
	line, col := 1, 1
	for i := 0; i < len(src); {
		r, size := utf8.DecodeRune(src[i:])
		if r == utf8.RuneError && size <= 1 {
			l.Errorf(diag.Pos{File: name, Line: line, Col: col}, "encoding", "",
				"byte 0x%02x is not UTF-8 text; a graph file must be UTF-8", src[i])
			return l[0], false
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col += size // columns count bytes, as the parsers' do
		}
		i += size
	}
	return diag.Diagnostic{}, true
}

// checkControl reports the first control character of a UTF-8 source other
// than a tab or a line break (NUL, BEL, ESC, DEL…), at its place: the
// parsers report NUL twice and YAML's others at the file's first line.
func checkControl(name string, src []byte) (diag.Diagnostic, bool) {
	line, col := 1, 1
	for _, r := range string(src) {
		switch {
		case r == '\n':
			line, col = line+1, 1
			continue
		case r < 0x20 && r != '\t' && r != '\r', r == 0x7f:
			var l diag.List
			l.Errorf(diag.Pos{File: name, Line: line, Col: col}, "encoding", "",
				"control character U+%04X is not text: remove it (inside a quoted string, write it as \\u%04X)", r, r)
			return l[0], false
		}
		col += utf8.RuneLen(r)
	}
	return diag.Diagnostic{}, true
}

// misindented explains a YAML key at line (1-based) that lines up with no
// mapping above it: where the lines before it are indented.
func misindented(src []byte, line int, msg string) string {
	lines := strings.Split(string(src), "\n")
	if line < 2 || line > len(lines) {
		return msg
	}
	indent := func(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }
	cur := indent(lines[line-1])
	key := strings.TrimSpace(lines[line-1])
	if i := strings.IndexByte(key, ':'); i > 0 {
		key = key[:i+1]
	}
	// The nearest line above indented less (the mapping the key may belong
	// to), then the line just above when it is indented more.
	var outer, inner string
	for i := line - 2; i >= 0; i-- {
		t := strings.TrimSpace(lines[i])
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		ind := indent(lines[i])
		if inner == "" && outer == "" && ind > cur {
			inner = fmt.Sprintf("%d, like line %d", ind, i+1)
		}
		if ind < cur {
			outer = fmt.Sprintf("%d, like line %d", ind, i+1)
			break
		}
	}
	hints := outer
	switch {
	case hints == "":
		hints = inner
	case inner != "":
		hints += ", or " + inner
	}
	if hints == "" {
		return msg
	}
	return fmt.Sprintf("%q is indented %d spaces, which lines up with no key above it: indent it %s (%s)", key, cur, hints, msg)
}

// quoteInStringHint explains a CUE syntax error right after a string that a
// double quote inside it ended early, as in when: "topic == "billing"".
func quoteInStringHint(src []byte, pos diag.Pos) string {
	lines := strings.Split(string(src), "\n")
	if pos.Line < 1 || pos.Line > len(lines) {
		return ""
	}
	text := lines[pos.Line-1]
	at := pos.Col - 1
	if at < 1 || at > len(text) || text[at-1] != '"' || at >= len(text) || !isWordByte(text[at]) {
		return ""
	}
	return ` (a " inside a string ends it: write strings inside an expression with single quotes, 'text', or escape the quote as \")`
}

func isWordByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}
