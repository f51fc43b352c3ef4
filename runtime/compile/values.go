package compile

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/graphctl/graphctl/runtime/graph"
)

// CheckEnum reports whether v, a value already normalized to the field's type,
// is allowed by the field's enum: one of its values (each item, for a list
// field), or the field's initial value (its default, or the type's zero value
// when it has none, which stands for "not set"). A field without an enum
// accepts every value. The error names the field and its allowed values.
func (f *Field) CheckEnum(v any) error {
	if f == nil || len(f.Spec.Enum) == 0 || v == nil {
		return nil
	}
	typ := f.Spec.Type
	if typ.Kind == graph.List {
		if reflect.DeepEqual(v, f.Initial) {
			return nil
		}
		items, _ := v.([]any)
		item := graph.Type{Kind: graph.Any}
		if typ.Elem != nil {
			item = *typ.Elem
		}
		for i, x := range items {
			if !f.enumHas(item, x) {
				return fmt.Errorf("state field %q: item %d, %s, is not one of the allowed values %s", f.Spec.Name, i, showValue(x), f.AllowedValues())
			}
		}
		return nil
	}
	if f.enumHas(typ, v) || reflect.DeepEqual(v, f.Initial) {
		return nil
	}
	return fmt.Errorf("state field %q: %s is not one of the allowed values %s", f.Spec.Name, showValue(v), f.AllowedValues())
}

// enumHas reports whether x equals one of the field's enum values normalized to typ.
func (f *Field) enumHas(typ graph.Type, x any) bool {
	for _, e := range f.Spec.Enum {
		ne, err := typ.Normalize(e)
		if err == nil && reflect.DeepEqual(ne, x) {
			return true
		}
	}
	return false
}

// AllowedValues lists the field's enum values as JSON, comma-separated, e.g.
// `"yes", "no"`.
func (f *Field) AllowedValues() string {
	return enumList(f.Spec.Enum)
}

// enumList lists values as JSON, comma-separated: `"", "yes", "no"`.
func enumList(values []any) string {
	parts := make([]string, len(values))
	for i, e := range values {
		parts[i] = showValue(e)
	}
	return strings.Join(parts, ", ")
}

// showValue renders a value as JSON for a message, e.g. "maybe" or 7.
func showValue(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// CheckValues checks values written to the state from outside the graph (a
// run's input, an HTTP request) against the state schema: each must be a
// declared field, of its type (a single item stands for a one-item list), and
// allowed by its enum. The error names the field and what it accepts.
func (g *Graph) CheckValues(values map[string]any) error {
	for _, name := range sortedNames(values) {
		f, ok := g.Fields[name]
		if !ok {
			return fmt.Errorf("%q is not a state field of graph %q (fields: %s)", name, g.Spec.Name, strings.Join(g.FieldOrder, ", "))
		}
		v, err := f.Spec.Type.Normalize(values[name])
		if err != nil && f.Spec.Type.IsList() {
			if _, isList := values[name].([]any); !isList {
				v, err = f.Spec.Type.Normalize([]any{values[name]})
			}
		}
		if err != nil {
			return fmt.Errorf("state field %q (%s): %v", name, f.Spec.Type, err)
		}
		if err := f.CheckEnum(v); err != nil {
			return err
		}
	}
	return nil
}

func sortedNames(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
