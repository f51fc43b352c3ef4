package load

import (
	"cuelang.org/go/cue/scanner"
	"cuelang.org/go/cue/token"
)

// maxBoundedSize bounds the files that Bounded accepts: even data without
// expressions takes memory in proportion to its size.
const maxBoundedSize = 4 << 20

// Bounded reports whether evaluating files takes time and memory bounded by
// their size, so that they need no supervised evaluation: they are at most
// a few megabytes, and each is YAML (data only: aliases expand to a bounded
// number of values) or CUE written with literals, labels, structs and lists
// alone — no references, comprehensions, operators, calls or constraints,
// which are what makes a small CUE file evaluate for minutes. A file that
// does not parse is bounded too: it is reported without being evaluated.
func Bounded(files []SourceFile) bool {
	size := 0
	for _, f := range files {
		size += len(f.Data)
	}
	if size > maxBoundedSize {
		return false
	}
	for _, f := range files {
		if !isYAML(f.Name) && !literalCUE(f.Name, f.Data) {
			return false
		}
	}
	return true
}

// literalCUE reports whether a CUE source has only the tokens of data: an
// identifier or keyword is a label (followed by a colon), true, false or
// null, or the name of the package clause.
func literalCUE(name string, src []byte) bool {
	var s scanner.Scanner
	s.Init(token.NewFile(name, -1, len(src)), src, nil, 0)
	prev, prevLit := token.ILLEGAL, ""
	for {
		_, tok, lit := s.Scan()
		if prev == token.IDENT || prev.IsKeyword() && prev != token.TRUE && prev != token.FALSE && prev != token.NULL {
			// The one identifier that may be followed by another: package.
			packageClause := prev == token.IDENT && prevLit == "package" && tok == token.IDENT
			if tok != token.COLON && !packageClause {
				return false
			}
			if packageClause {
				tok = token.COMMA
			}
		}
		switch tok {
		case token.EOF:
			return true
		case token.IDENT, token.STRING, token.INT, token.FLOAT, token.COLON, token.COMMA,
			token.LBRACE, token.RBRACE, token.LBRACK, token.RBRACK, token.SUB:
		default:
			if !tok.IsKeyword() {
				return false
			}
		}
		prev, prevLit = tok, lit
	}
}
