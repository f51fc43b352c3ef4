package load

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/runtime/graph"
)

// foreignTypes maps the type names of Python, TypeScript, JSON Schema and Go
// to the state types they mean.
var foreignTypes = map[string]string{
	"str": "string", "text": "string", "char": "string",
	"integer": "int", "long": "int", "int32": "int", "int64": "int", "uint": "int",
	"number": "float", "double": "float", "decimal": "float", "float32": "float", "float64": "float",
	"boolean": "bool",
	"dict":    "object", "struct": "object", "record": "object", "hash": "object", "mapping": "object", "json": "object",
	"array": "list", "sequence": "list", "tuple": "list", "set": "list", "slice": "list", "iterable": "list",
	"anymessage": "messages", "basemessage": "messages", "message": "messages",
	"null": "any", "none": "any", "unknown": "any", "interface{}": "any",
}

// genericTypeRE matches a generic type written as NAME[ARGS] (Python) or
// NAME<ARGS> (TypeScript, Java).
var genericTypeRE = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_.]*)\s*[\[<]\s*(.*?)\s*[\]>]$`)

// goMapRE matches Go's map[K]V.
var goMapRE = regexp.MustCompile(`^map\[[^\]]*\]\s*(.+)$`)

// TypeHint returns `; did you mean "T"?` for a type another language spells
// its own way ("str", "list[str]", "Dict[str, int]", "string[]") or a
// misspelt one ("strng"), or "" when no state type is near.
func TypeHint(text string) string {
	if t := foreignType(strings.TrimSpace(text), 0); t != "" && t != text {
		if _, err := graph.ParseType(t); err == nil {
			return fmt.Sprintf("; did you mean %q?", t)
		}
	}
	names := []string{"string", "int", "float", "bool", "object", "any", "list", "map", string(graph.Messages)}
	for _, t := range graph.ListTypes() {
		names = append(names, string(t.Kind))
	}
	return diag.DidYouMean(text, names)
}

// foreignType translates one type text to a state type's, or returns "".
// depth bounds the recursion over nested generics.
func foreignType(s string, depth int) string {
	if depth > 4 || s == "" {
		return ""
	}
	lower := strings.ToLower(s)
	if t, ok := foreignTypes[lower]; ok {
		return t
	}
	if _, err := graph.ParseType(lower); err == nil {
		return lower // "String", "List<string>"
	}
	if inner, ok := strings.CutSuffix(s, "[]"); ok { // string[]
		return listTypeOf(foreignType(inner, depth+1))
	}
	if inner, ok := strings.CutPrefix(s, "[]"); ok { // Go's []string
		return listTypeOf(foreignType(inner, depth+1))
	}
	if m := goMapRE.FindStringSubmatch(s); m != nil {
		return mapTypeOf(foreignType(m[1], depth+1))
	}
	m := genericTypeRE.FindStringSubmatch(s)
	if m == nil {
		return ""
	}
	name, args := strings.ToLower(m[1]), m[2]
	name = name[strings.LastIndexByte(name, '.')+1:] // typing.List
	switch name {
	case "optional", "annotated":
		// Optional[T] is T; LangGraph's Annotated[list, add_messages] is
		// the messages type, Annotated[T, reducer] is T.
		first, rest, _ := strings.Cut(args, ",")
		if strings.Contains(rest, "add_messages") {
			return "messages"
		}
		return foreignType(strings.TrimSpace(first), depth+1)
	case "dict", "map", "mapping", "record", "hash", "object":
		// Dict[str, V] and Record<string, V>: the values' type.
		_, value, ok := strings.Cut(args, ",")
		if !ok {
			value = args
		}
		return mapTypeOf(foreignType(strings.TrimSpace(value), depth+1))
	}
	if foreignTypes[name] == "list" || name == "list" {
		return listTypeOf(foreignType(args, depth+1))
	}
	return ""
}

// listTypeOf is the list type of items of type item, or "" for an unknown item
// type; a list of messages is the messages type.
func listTypeOf(item string) string {
	switch item {
	case "":
		return ""
	case "messages":
		return "messages"
	}
	return "list<" + item + ">"
}

// mapTypeOf is the map type of values of type value, or "" for an unknown one.
func mapTypeOf(value string) string {
	if value == "" {
		return ""
	}
	return "map<" + value + ">"
}
