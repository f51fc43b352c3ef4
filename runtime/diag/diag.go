// Package diag defines the single diagnostic type that every stage of graphctl
// (loading, schema validation, semantic checks) reports problems with.
//
// A diagnostic always names a place in a user's file, so it prints as
// "file:line:col: [code] message", the format editors and CI tools understand.
package diag

import (
	"fmt"
	"sort"
	"strings"
)

// Severity says whether a diagnostic makes a graph invalid.
type Severity string

const (
	// Error makes the graph invalid: it cannot be run.
	Error Severity = "error"
	// Warning is reported but does not make the graph invalid.
	Warning Severity = "warning"
)

// Pos is a position in a user's file. Line and Col are 1-based; zero means
// unknown. Col counts bytes, as CUE and the Go tools do.
type Pos struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
}

// IsValid reports whether the position names a line in a file.
func (p Pos) IsValid() bool { return p.File != "" && p.Line > 0 }

// Shift returns the position moved right by n columns on the same line.
func (p Pos) Shift(n int) Pos {
	if p.Line == 0 {
		return p
	}
	p.Col += n
	return p
}

// String formats the position as file:line:col.
func (p Pos) String() string {
	if p.Line == 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Diagnostic is one problem found in a graph file.
type Diagnostic struct {
	File     string   `json:"file"`
	Line     int      `json:"line"`
	Col      int      `json:"col"`
	Severity Severity `json:"severity"`
	// Code is a stable identifier of the kind of problem, e.g. "unknown-node-type".
	Code string `json:"code"`
	// Path is the location inside the graph document, e.g. "nodes.extract.config.fields".
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
}

// Pos returns the diagnostic's position.
func (d Diagnostic) Pos() Pos { return Pos{File: d.File, Line: d.Line, Col: d.Col} }

// String formats the diagnostic as "file:line:col: [code] message".
func (d Diagnostic) String() string {
	prefix := d.Pos().String()
	sev := ""
	if d.Severity == Warning {
		sev = "warning: "
	}
	return fmt.Sprintf("%s: %s[%s] %s", prefix, sev, d.Code, d.Message)
}

// New builds an error diagnostic at pos.
func New(pos Pos, code, path, format string, args ...any) Diagnostic {
	return Diagnostic{
		File: pos.File, Line: pos.Line, Col: pos.Col,
		Severity: Error, Code: code, Path: path,
		Message: fmt.Sprintf(format, args...),
	}
}

// NewWarning builds a warning diagnostic at pos.
func NewWarning(pos Pos, code, path, format string, args ...any) Diagnostic {
	d := New(pos, code, path, format, args...)
	d.Severity = Warning
	return d
}

// List is an ordered collection of diagnostics.
type List []Diagnostic

// Add appends a diagnostic.
func (l *List) Add(d Diagnostic) { *l = append(*l, d) }

// Errorf appends an error diagnostic.
func (l *List) Errorf(pos Pos, code, path, format string, args ...any) {
	l.Add(New(pos, code, path, format, args...))
}

// Warnf appends a warning diagnostic.
func (l *List) Warnf(pos Pos, code, path, format string, args ...any) {
	l.Add(NewWarning(pos, code, path, format, args...))
}

// HasErrors reports whether any diagnostic is an error.
func (l List) HasErrors() bool {
	for _, d := range l {
		if d.Severity != Warning {
			return true
		}
	}
	return false
}

// Sort orders diagnostics by file, line, column and code, and removes exact duplicates.
func (l *List) Sort() {
	s := *l
	sort.SliceStable(s, func(i, j int) bool {
		a, b := s[i], s[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Col != b.Col {
			return a.Col < b.Col
		}
		return a.Code < b.Code
	})
	out := s[:0]
	for i, d := range s {
		if i > 0 && d == s[i-1] {
			continue
		}
		out = append(out, d)
	}
	*l = out
}

// Error lets a List be returned as an error; it prints one diagnostic per line.
func (l List) Error() string {
	lines := make([]string, len(l))
	for i, d := range l {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// Err returns the list as an error when it holds at least one error, else nil.
func (l List) Err() error {
	if l.HasErrors() {
		return l
	}
	return nil
}
