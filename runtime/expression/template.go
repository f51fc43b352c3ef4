package expression

import (
	"fmt"
	"strings"
)

// Template is text with ${expr} interpolations. "$${" writes a literal "${".
type Template struct {
	src   string
	parts []templatePart
}

type templatePart struct {
	text string
	prog *Program
	// offset is the rune offset of the expression of prog in the template.
	offset int
}

// TemplateExpression is one ${…} of a template.
type TemplateExpression struct {
	// Source is the expression's text, without ${ and }.
	Source string
	// Offset is the rune offset of Source in the template's text.
	Offset int
}

// Expressions lists the template's ${…} expressions in order.
func (t *Template) Expressions() []TemplateExpression {
	var out []TemplateExpression
	for _, p := range t.parts {
		if p.prog != nil {
			out = append(out, TemplateExpression{Source: p.prog.Source(), Offset: p.offset})
		}
	}
	return out
}

// Source returns the template's text.
func (t *Template) Source() string { return t.src }

// CompileTemplate compiles every ${...} of src in the environment. A compile
// error's Offset is relative to the start of src.
func (e *Env) CompileTemplate(src string) (*Template, error) {
	t := &Template{src: src}
	var text strings.Builder
	for i := 0; i < len(src); {
		switch {
		case strings.HasPrefix(src[i:], "$${"):
			text.WriteString("${")
			i += 3
		case strings.HasPrefix(src[i:], "${"):
			end := closingBrace(src, i+2)
			if end < 0 {
				return nil, &Error{Offset: runeOffset(src, i), Message: "unclosed ${ in template"}
			}
			inner := src[i+2 : end]
			if strings.TrimSpace(inner) == "" {
				return nil, &Error{Offset: runeOffset(src, i), Message: "empty ${} in template"}
			}
			prog, err := e.Compile(inner, "")
			if err != nil {
				if ce, ok := err.(*Error); ok {
					ce.Offset += runeOffset(src, i+2)
					return nil, ce
				}
				return nil, err
			}
			if text.Len() > 0 {
				t.parts = append(t.parts, templatePart{text: text.String()})
				text.Reset()
			}
			t.parts = append(t.parts, templatePart{prog: prog, offset: runeOffset(src, i+2)})
			i = end + 1
		default:
			text.WriteByte(src[i])
			i++
		}
	}
	if text.Len() > 0 {
		t.parts = append(t.parts, templatePart{text: text.String()})
	}
	return t, nil
}

// Render evaluates the template in scope.
func (t *Template) Render(scope map[string]any) (string, error) {
	if len(t.parts) == 1 && t.parts[0].prog == nil {
		return t.parts[0].text, nil
	}
	var b strings.Builder
	for _, p := range t.parts {
		if p.prog == nil {
			b.WriteString(p.text)
			continue
		}
		v, err := p.prog.Eval(scope)
		if err != nil {
			return "", fmt.Errorf("template: %w", err)
		}
		if b.WriteString(Format(v)); b.Len() > MaxResultSize {
			return "", fmt.Errorf("template: %w", errTooLarge)
		}
	}
	if b.Len() > MaxResultSize {
		return "", fmt.Errorf("template: %w", errTooLarge)
	}
	return b.String(), nil
}

// closingBrace finds the "}" that closes an interpolation starting at from,
// skipping braces nested inside the expression and string literals.
func closingBrace(s string, from int) int {
	depth := 0
	var quote byte
	for i := from; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'' || c == '`':
			quote = c
		case c == '{':
			depth++
		case c == '}':
			if depth == 0 {
				return i
			}
			depth--
		}
	}
	return -1
}

func runeOffset(s string, byteIndex int) int {
	return len([]rune(s[:byteIndex]))
}
