package graph

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Kind is the basic kind of a state field's type.
type Kind string

// The core kinds a state field can have. Messages is the list of chat
// messages; node packages declare further list types (RegisterListType).
const (
	String   Kind = "string"
	Int      Kind = "int"
	Float    Kind = "float"
	Bool     Kind = "bool"
	List     Kind = "list"
	Map      Kind = "map"
	Object   Kind = "object"
	Any      Kind = "any"
	Messages Kind = "messages"
)

func isCoreKind(k Kind) bool {
	switch k {
	case String, Int, Float, Bool, List, Map, Object, Any, Messages:
		return true
	}
	return false
}

// Type is a parsed state field type such as "list<string>".
type Type struct {
	Kind Kind
	// Elem is the element type of list and map kinds.
	Elem *Type
}

// ParseType parses a type expression: string, int, float, bool, object, any,
// messages, list<T>, map<T>, or a declared list type.
func ParseType(s string) (Type, error) {
	s = strings.TrimSpace(s)
	for _, k := range []Kind{List, Map} {
		prefix := string(k) + "<"
		if strings.HasPrefix(s, prefix) && strings.HasSuffix(s, ">") {
			elem, err := ParseType(s[len(prefix) : len(s)-1])
			if err != nil {
				return Type{}, err
			}
			return Type{Kind: k, Elem: &elem}, nil
		}
	}
	switch k := Kind(s); k {
	case String, Int, Float, Bool, Object, Any, Messages:
		return Type{Kind: k}, nil
	case List, Map:
		return Type{Kind: k, Elem: &Type{Kind: Any}}, nil
	default:
		if isListKind(k) {
			return Type{Kind: k}, nil
		}
	}
	want := []string{"string", "int", "float", "bool", "list<T>", "map<T>", "object", "any", string(Messages)}
	for _, t := range ListTypes() {
		want = append(want, string(t.Kind))
	}
	return Type{}, fmt.Errorf("unknown type %q (want %s or %s)", s, strings.Join(want[:len(want)-1], ", "), want[len(want)-1])
}

// String formats the type as it is written in a graph file.
func (t Type) String() string {
	if (t.Kind == List || t.Kind == Map) && t.Elem != nil {
		return fmt.Sprintf("%s<%s>", t.Kind, t.Elem)
	}
	return string(t.Kind)
}

// IsList reports whether values of the type are lists.
func (t Type) IsList() bool {
	return t.Kind == List || t.Kind == Messages || t.isDeclaredList()
}

// isDeclaredList reports whether t is a list type declared by a node package.
func (t Type) isDeclaredList() bool { return !isCoreKind(t.Kind) && isListKind(t.Kind) }

// Zero returns the zero value of the type as state holds it.
func (t Type) Zero() any {
	switch t.Kind {
	case String:
		return ""
	case Int:
		return 0
	case Float:
		return 0.0
	case Bool:
		return false
	case List, Messages:
		return []any{}
	case Map, Object:
		return map[string]any{}
	}
	if t.isDeclaredList() {
		return []any{}
	}
	return nil
}

// Normalize checks that v is a value of type t and returns it in the canonical
// form state holds: int for int, float64 for float, []any for lists,
// map[string]any for maps and objects. nil is accepted for every type.
func (t Type) Normalize(v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch t.Kind {
	case Any:
		return normalizeAny(v), nil
	case String:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case Bool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case Int:
		if i, ok := toInt(v); ok {
			return i, nil
		}
		if f, ok := toFloat(v); ok && f == math.Trunc(f) {
			return nil, fmt.Errorf("want int, got %s, which does not fit in an int (from %d to %d)", numberText(v), math.MinInt64, math.MaxInt64)
		}
	case Float:
		if s, ok := v.(string); ok {
			// YAML hands on a number past a float's range (1e999) as text.
			if _, err := strconv.ParseFloat(s, 64); errors.Is(err, strconv.ErrRange) {
				return nil, fmt.Errorf("want float, got %s, which is beyond the range of a float (about ±1.8e308)", s)
			}
		}
		if f, ok := toFloat(v); ok {
			return f, nil
		}
	case List, Messages:
		return t.normalizeList(v)
	case Map, Object:
		m, ok := toMap(v)
		if !ok {
			break
		}
		elem := Type{Kind: Any}
		if t.Kind == Map && t.Elem != nil {
			elem = *t.Elem
		}
		out := make(map[string]any, len(m))
		for k, item := range m {
			n, err := elem.Normalize(item)
			if err != nil {
				return nil, fmt.Errorf("key %q: %w", k, err)
			}
			out[k] = n
		}
		return out, nil
	default:
		if t.isDeclaredList() {
			return t.normalizeList(v)
		}
	}
	return nil, fmt.Errorf("want %s, got %s", t, DescribeValue(v))
}

// normalizeList normalizes a value of a list type: the items of list<T> as
// T, those of messages and of declared list types as objects.
func (t Type) normalizeList(v any) (any, error) {
	items, ok := toList(v)
	if !ok {
		return nil, fmt.Errorf("want %s, got %s", t, DescribeValue(v))
	}
	elem := Type{Kind: Object}
	if t.Kind == List {
		elem = Type{Kind: Any}
		if t.Elem != nil {
			elem = *t.Elem
		}
	}
	out := make([]any, len(items))
	for i, item := range items {
		n, err := elem.Normalize(item)
		if err != nil {
			return nil, fmt.Errorf("item %d: %w", i, err)
		}
		out[i] = n
	}
	return out, nil
}

// DescribeValue names the JSON kind of a Go value for error messages.
func DescribeValue(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "bool"
	case int, int64, int32, float64, float32, json.Number:
		return "number"
	case []any, []string, []map[string]any:
		return "list"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// numberText writes a number as the user wrote it, or in %g notation.
func numberText(v any) string {
	if n, ok := v.(json.Number); ok {
		return n.String()
	}
	if f, ok := toFloat(v); ok {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// toInt reads an integral number exactly: integers and json.Number digits
// are not rounded through a float64 (2^53+1 stays itself).
func toInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case int32:
		return int(n), true
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return int(i), true
		}
	}
	if f, ok := toFloat(v); ok && f == math.Trunc(f) && math.Abs(f) <= math.MaxInt64 {
		return int(f), true
	}
	return 0, false
}

func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

func toList(v any) ([]any, bool) {
	switch l := v.(type) {
	case []any:
		return l, true
	case []string:
		out := make([]any, len(l))
		for i, s := range l {
			out[i] = s
		}
		return out, true
	case []map[string]any:
		out := make([]any, len(l))
		for i, s := range l {
			out[i] = s
		}
		return out, true
	}
	return nil, false
}

func toMap(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case map[string]string:
		out := make(map[string]any, len(m))
		for k, s := range m {
			out[k] = s
		}
		return out, true
	}
	return nil, false
}

// normalizeAny converts integral numbers to int and typed slices and maps to
// their generic forms, so that values of "any" fields compare predictably.
func normalizeAny(v any) any {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int(x)
		}
		return x
	case int64:
		return int(x)
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return int(i)
		}
		f, _ := x.Float64()
		return f
	case []any, []string, []map[string]any:
		l, _ := toList(x)
		out := make([]any, len(l))
		for i, item := range l {
			out[i] = normalizeAny(item)
		}
		return out
	case map[string]any, map[string]string:
		m, _ := toMap(x)
		out := make(map[string]any, len(m))
		for k, item := range m {
			out[k] = normalizeAny(item)
		}
		return out
	}
	return v
}
