package load

import (
	"bytes"

	"cuelang.org/go/cue/scanner"
	"cuelang.org/go/cue/token"
)

// maxBoundedSize bounds the files that Bounded accepts: even data without
// expressions takes memory in proportion to its size.
const maxBoundedSize = MaxFileSize / 2

// maxBoundedValues bounds the fields and list items of the files that
// Bounded accepts, counted as CUE's colons and commas (a line break ends a
// value too) or YAML's line breaks and commas. The evaluator's time grows
// with the square of the items of one struct or list: 40,000 fields take it
// seconds, 100,000 list items tens of seconds, far beyond the guard's
// limit. 25,000 keeps it to a few seconds and admits graphs of some 2,500
// nodes.
const maxBoundedValues = 25000

// Bounded reports whether evaluating files takes time and memory bounded by
// their size, so that they need no supervised evaluation: they are at most
// a few megabytes, and each is YAML (data only: aliases expand to a bounded
// number of values) or CUE written with literals, labels, structs and lists
// alone — no references, comprehensions, operators, calls or constraints,
// which are what makes a small CUE file evaluate for minutes — and they
// hold at most maxBoundedValues fields and items, since the evaluator's
// time grows with the square of a struct's or list's length. A file that
// does not parse is bounded too: it is reported without being evaluated.
func Bounded(files []SourceFile) bool {
	size := 0
	for _, f := range files {
		if len(f.Data) > MaxFileSize {
			return true // reported as too large, never parsed
		}
		size += len(f.Data)
	}
	if size > maxBoundedSize {
		return false
	}
	values := 0
	for _, f := range files {
		if isYAML(f.Name) {
			values += bytes.Count(f.Data, []byte{'\n'}) + bytes.Count(f.Data, []byte{'\r'}) + bytes.Count(f.Data, []byte{','})
			continue
		}
		n, ok := literalCUE(f.Name, f.Data)
		if !ok {
			return false
		}
		values += n
	}
	return values <= maxBoundedValues
}

// literalCUE reports whether a CUE source has only the tokens of data: an
// identifier or keyword is a label (followed by a colon), true, false or
// null, or the name of the package clause. It counts the colons and commas
// (those a line break stands for included).
func literalCUE(name string, src []byte) (int, bool) {
	var s scanner.Scanner
	s.Init(token.NewFile(name, -1, len(src)), src, nil, 0)
	prev, prevLit := token.ILLEGAL, ""
	values := 0
	for {
		_, tok, lit := s.Scan()
		if prev == token.IDENT || prev.IsKeyword() && prev != token.TRUE && prev != token.FALSE && prev != token.NULL {
			// The one identifier that may be followed by another: package.
			packageClause := prev == token.IDENT && prevLit == "package" && tok == token.IDENT
			if tok != token.COLON && !packageClause {
				return values, false
			}
			if packageClause {
				tok = token.COMMA
			}
		}
		switch tok {
		case token.EOF:
			return values, true
		case token.COLON, token.COMMA:
			values++
		case token.IDENT, token.STRING, token.INT, token.FLOAT,
			token.LBRACE, token.RBRACE, token.LBRACK, token.RBRACK, token.SUB:
		default:
			if !tok.IsKeyword() {
				return values, false
			}
		}
		prev, prevLit = tok, lit
	}
}
