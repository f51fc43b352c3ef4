package load

// This file explains the YAML mistakes the YAML reader reports poorly (a
// second document, an alias with no anchor, a %YAML version, a value holding
// ": " or starting with !), each at its place with what to write.

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/graphctl/graphctl/runtime/diag"
)

// secondDocument returns the 1-based line where a second YAML document
// starts, or 0 when the file holds one: a --- marker after content (even
// with nothing after it, the YAML reader counts an empty document), or a
// ... end marker with content after it. A --- before the first content is
// the usual start of a single document.
func secondDocument(src []byte) int {
	contentBefore, ended := false, 0
	for i, line := range bytes.Split(src, []byte("\n")) {
		switch {
		case isDocumentMarker(line, "---"):
			if contentBefore {
				return i + 1
			}
		case isDocumentMarker(line, "..."):
			if contentBefore && ended == 0 {
				ended = i + 1
			}
		case isYAMLContent(line):
			if ended > 0 {
				return ended
			}
			contentBefore = true
		}
	}
	return 0
}

// isDocumentMarker reports whether a line is the YAML document marker
// marker (--- or ...): at column 1, then a blank or nothing.
func isDocumentMarker(line []byte, marker string) bool {
	line = bytes.TrimRight(line, "\r")
	if !bytes.HasPrefix(line, []byte(marker)) {
		return false
	}
	return len(line) == 3 || line[3] == ' ' || line[3] == '\t'
}

// isYAMLContent reports whether a line holds more than blanks, a comment or
// a directive (%YAML).
func isYAMLContent(line []byte) bool {
	t := bytes.TrimSpace(line)
	return len(t) > 0 && t[0] != '#' && t[0] != '%'
}

// multipleDocuments is the diagnostic of a YAML file holding a second
// document at line, which the YAML reader would turn into a list of graphs.
func multipleDocuments(name string, line int) diag.Diagnostic {
	var l diag.List
	l.Errorf(diag.Pos{File: name, Line: line, Col: 1}, "syntax", "",
		"a second YAML document starts here, and a graph file is one document: remove this line, or move what follows it to a file of its own")
	return l[0]
}

// unknownAnchorRE matches the YAML reader's error for an alias with no anchor.
var unknownAnchorRE = regexp.MustCompile(`unknown anchor '([^']*)' referenced`)

// aliasProblem rewrites the YAML reader's error for an alias whose anchor
// is not defined, which it places at the file's first line, at the alias;
// ok is false for any other message.
func aliasProblem(name string, src []byte, msg string) (pos diag.Pos, text string, ok bool) {
	m := unknownAnchorRE.FindStringSubmatch(msg)
	if m == nil {
		return diag.Pos{}, "", false
	}
	anchor := m[1]
	pos = diag.Pos{File: name, Line: 1, Col: 1}
	alias := regexp.MustCompile(`\*` + regexp.QuoteMeta(anchor) + `([^A-Za-z0-9_-]|$)`)
	for i, line := range bytes.Split(src, []byte("\n")) {
		if loc := alias.FindIndex(line); loc != nil {
			pos.Line, pos.Col = i+1, loc[0]+1
			break
		}
	}
	return pos, fmt.Sprintf("alias *%s names no anchor: an alias refers to an anchor &%s defined before it in the file", anchor, anchor), true
}

// versionProblem rewrites the YAML reader's error for a %YAML directive of
// a version it does not read (it reads YAML 1.1 and the 1.2 files without
// the directive), placed at the directive; ok is false for any other
// message.
func versionProblem(name string, src []byte, msg string) (pos diag.Pos, text string, ok bool) {
	if !strings.Contains(msg, "incompatible YAML document") {
		return diag.Pos{}, "", false
	}
	pos = diag.Pos{File: name, Line: 1, Col: 1}
	for i, line := range bytes.Split(src, []byte("\n")) {
		if bytes.HasPrefix(line, []byte("%YAML")) {
			pos.Line = i + 1
			break
		}
	}
	return pos, "this %YAML directive names a version the YAML reader does not read: remove the %YAML line", true
}

// colonValueRE finds a plain (unquoted) YAML value holding ": " after its
// key, which YAML reads as a second key: "text: Note: this".
var colonValueRE = regexp.MustCompile(`(?:^|[\s{,])([A-Za-z_][A-Za-z0-9_-]*):[ \t]+([^"'\s{\[#][^,{}\[\]#]*?: [^,{}\[\]#]*)`)

// colonInValue explains a YAML syntax error reported on line (1-based)
// when that line or the next (the reader may place an error at the start of
// the mapping the mistake is in, a line early) holds a plain value with ": "
// in it: the place of the value and the advice to quote it. ok is false
// when neither line holds one.
func colonInValue(src []byte, line int) (pos diag.Pos, msg string, ok bool) {
	for at := line; at <= line+1; at++ {
		text, found := lineOf(src, at)
		if !found {
			break
		}
		m := colonValueRE.FindStringSubmatchIndex(text)
		if m == nil {
			continue
		}
		key, value := text[m[2]:m[3]], strings.TrimSpace(text[m[4]:m[5]])
		if inner, rest, _ := strings.Cut(value, ": "); strings.TrimSpace(rest) == "" || strings.HasSuffix(value, ":") {
			// nodes: a: {…}: keys chained on one line, as CUE writes them.
			inner = strings.TrimSuffix(inner, ":")
			return diag.Pos{Line: at, Col: m[4] + 1}, fmt.Sprintf("YAML does not chain keys on one line (%s: %s: …, as CUE does): write %s: on a line of its own, indented under %s:", key, inner, inner, key), true
		}
		return diag.Pos{Line: at, Col: m[4] + 1}, fmt.Sprintf("the value %s holds \": \", which YAML reads as the start of a mapping: quote it, %s: %q", value, key, value), true
	}
	return diag.Pos{}, "", false
}

// tagValueRE finds a value that starts with "!", which YAML reads as a tag
// (when: !done).
var tagValueRE = regexp.MustCompile(`(?:^|[\s{,-])([A-Za-z_][A-Za-z0-9_-]*):[ \t]+(!\S[^,{}\[\]#]*)`)

// tagInValue explains the YAML reader's error for an unknown tag ("cannot
// unmarshal tag"), which it reports on line (1-based) or after it: the
// place of the value and the advice to quote it. ok is false for any other
// message, or when no value starting with ! is found.
func tagInValue(src []byte, line int, msg string) (pos diag.Pos, text string, ok bool) {
	if !strings.Contains(msg, "cannot unmarshal tag") {
		return diag.Pos{}, "", false
	}
	lines := bytes.Split(src, []byte("\n"))
	for i := min(line, len(lines)) - 1; i >= 0 && i >= line-3; i-- {
		m := tagValueRE.FindSubmatchIndex(lines[i])
		if m == nil {
			continue
		}
		key, value := string(lines[i][m[2]:m[3]]), strings.TrimSpace(string(lines[i][m[4]:m[5]]))
		return diag.Pos{Line: i + 1, Col: m[4] + 1}, fmt.Sprintf("%s starts with !, which YAML reads as a tag: quote it, %s: %q", value, key, value), true
	}
	return diag.Pos{}, "", false
}

// lineOf returns line (1-based) of src.
func lineOf(src []byte, line int) (string, bool) {
	lines := bytes.Split(src, []byte("\n"))
	if line < 1 || line > len(lines) {
		return "", false
	}
	return string(lines[line-1]), true
}
