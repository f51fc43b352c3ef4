package llm

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"
)

// parseOutput decodes a JSON reply (tolerating a Markdown code fence or prose
// around one object) and validates it against the node's schema.
func (n *llmNode) parseOutput(content string) (any, string, error) {
	raw := extractJSON(content)
	if raw == "" {
		return nil, "", fmt.Errorf("the reply is not JSON: %q", truncate(content, 120))
	}
	var out any
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		return nil, raw, fmt.Errorf("the reply is not valid JSON: %v", err)
	}
	if n.schema != nil {
		if problems := Validate(n.schema, out); len(problems) > 0 {
			return nil, raw, fmt.Errorf("the JSON does not match the schema: %s", strings.Join(problems, "; "))
		}
	}
	return out, raw, nil
}

func extractJSON(s string) string {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, "```"); ok {
		rest = strings.TrimPrefix(rest, "json")
		if end := strings.LastIndex(rest, "```"); end >= 0 {
			rest = rest[:end]
		}
		s = strings.TrimSpace(rest)
	}
	if json.Valid([]byte(s)) {
		return s
	}
	start, end := strings.Index(s, "{"), strings.LastIndex(s, "}")
	if start >= 0 && end > start && json.Valid([]byte(s[start:end+1])) {
		return s[start : end+1]
	}
	if s == "" {
		return ""
	}
	return s
}

// truncate shortens s to at most n bytes, cut at a rune boundary so that a
// quoted excerpt of a non-ASCII reply shows no broken characters.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// schemaKeywords are the JSON Schema keywords Validate understands.
var schemaKeywords = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true, "items": true,
	"enum": true, "const": true, "minimum": true, "maximum": true, "minLength": true, "maxLength": true,
	"minItems": true, "maxItems": true, "description": true, "title": true, "default": true, "$schema": true,
}

var schemaTypes = map[string]bool{"object": true, "array": true, "string": true, "number": true, "integer": true, "boolean": true, "null": true}

// CheckSchema reports a schema that uses keywords or types Validate does not
// understand, so that a declared constraint is never silently ignored.
func CheckSchema(schema map[string]any) error {
	return checkSchemaAt(schema, "")
}

func checkSchemaAt(schema map[string]any, at string) error {
	for _, k := range sortedKeys(schema) {
		if !schemaKeywords[k] {
			return fmt.Errorf("%skeyword %q is not supported (supported: type, properties, required, additionalProperties, items, enum, const, minimum, maximum, minLength, maxLength, minItems, maxItems)", where(at), k)
		}
	}
	for _, t := range typesOf(schema["type"]) {
		if !schemaTypes[t] {
			return fmt.Errorf("%sunknown type %q", where(at), t)
		}
	}
	if props, ok := schema["properties"].(map[string]any); ok {
		for _, name := range sortedKeys(props) {
			p, ok := props[name].(map[string]any)
			if !ok {
				return fmt.Errorf("%sproperty %q must be a schema object", where(at), name)
			}
			if err := checkSchemaAt(p, at+"."+name); err != nil {
				return err
			}
		}
	} else if _, has := schema["properties"]; has {
		return fmt.Errorf("%sproperties must be an object", where(at))
	}
	if items, ok := schema["items"].(map[string]any); ok {
		if err := checkSchemaAt(items, at+"[]"); err != nil {
			return err
		}
	}
	return nil
}

func where(at string) string {
	if at == "" {
		return ""
	}
	return "at " + strings.TrimPrefix(at, ".") + ": "
}

func typesOf(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// Validate checks a decoded JSON value against a JSON Schema (the subset
// CheckSchema accepts) and returns every problem, each naming its JSON path.
func Validate(schema map[string]any, v any) []string {
	var problems []string
	validateAt(schema, v, "$", &problems)
	return problems
}

// schemaCheck validates one value at one JSON path, collecting problems.
type schemaCheck struct {
	path     string
	problems *[]string
}

func (c schemaCheck) add(format string, args ...any) {
	*c.problems = append(*c.problems, c.path+": "+fmt.Sprintf(format, args...))
}

// validateAt checks v against schema in named parts: type, enum and const,
// then the keywords of v's kind, recursing into properties and items.
func validateAt(schema map[string]any, v any, path string, problems *[]string) {
	c := schemaCheck{path: path, problems: problems}
	if !c.typeMatches(schema, v) {
		return
	}
	c.enumAndConst(schema, v)
	switch x := v.(type) {
	case map[string]any:
		c.object(schema, x)
	case []any:
		c.array(schema, x)
	case string:
		c.bounds(schema, "minLength", "maxLength", float64(len([]rune(x))), "characters")
	case float64:
		if n, ok := num(schema["minimum"]); ok && x < n {
			c.add("%v is less than the minimum %v", x, n)
		}
		if n, ok := num(schema["maximum"]); ok && x > n {
			c.add("%v is more than the maximum %v", x, n)
		}
	}
}

// typeMatches checks the type keyword; a mismatch ends the checks of v.
func (c schemaCheck) typeMatches(schema map[string]any, v any) bool {
	types := typesOf(schema["type"])
	if len(types) == 0 {
		return true
	}
	for _, t := range types {
		if hasType(t, v) {
			return true
		}
	}
	c.add("want %s, got %s", strings.Join(types, " or "), jsonType(v))
	return false
}

func (c schemaCheck) enumAndConst(schema map[string]any, v any) {
	if enum, ok := schema["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			if equalJSON(e, v) {
				found = true
				break
			}
		}
		if !found {
			c.add("%s is not one of %s", compactJSON(v), compactJSON(enum))
		}
	}
	if want, ok := schema["const"]; ok && !equalJSON(want, v) {
		c.add("want %s, got %s", compactJSON(want), compactJSON(v))
	}
}

// object checks required properties, each property against its schema and
// additional properties.
func (c schemaCheck) object(schema map[string]any, x map[string]any) {
	props, _ := schema["properties"].(map[string]any)
	for _, r := range typesOfList(schema["required"]) {
		if _, ok := x[r]; !ok {
			c.add("missing required property %q", r)
		}
	}
	for _, k := range sortedKeys(x) {
		if p, ok := props[k].(map[string]any); ok {
			validateAt(p, x[k], c.path+"."+k, c.problems)
		} else if extra, ok := schema["additionalProperties"].(bool); ok && !extra {
			c.add("property %q is not allowed", k)
		} else if p, ok := schema["additionalProperties"].(map[string]any); ok {
			validateAt(p, x[k], c.path+"."+k, c.problems)
		}
	}
}

func (c schemaCheck) array(schema map[string]any, x []any) {
	c.bounds(schema, "minItems", "maxItems", float64(len(x)), "items")
	if items, ok := schema["items"].(map[string]any); ok {
		for i, item := range x {
			validateAt(items, item, fmt.Sprintf("%s[%d]", c.path, i), c.problems)
		}
	}
}

// bounds checks a length against a minimum and maximum keyword.
func (c schemaCheck) bounds(schema map[string]any, minKey, maxKey string, length float64, unit string) {
	if n, ok := num(schema[minKey]); ok && length < n {
		c.add("want at least %v %s, got %d", n, unit, int(length))
	}
	if n, ok := num(schema[maxKey]); ok && length > n {
		c.add("want at most %v %s, got %d", n, unit, int(length))
	}
}

func typesOfList(v any) []string {
	out := typesOf(v)
	if ss, ok := v.([]string); ok {
		out = ss
	}
	sort.Strings(out)
	return out
}

func num(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return 0, false
}

func hasType(t string, v any) bool {
	switch t {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == math.Trunc(f)
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	}
	return false
}

func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64:
		if x == math.Trunc(x) {
			return "integer"
		}
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

func equalJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}
