package compile

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/load"
	"github.com/graphctl/graphctl/runtime/reducer"
)

// compileFields resolves each state field's type, reducer and initial value.
func (c *compiler) compileFields() {
	seen := map[string]bool{}
	for _, f := range c.g.State {
		base := "state." + f.Name
		if seen[f.Name] {
			c.errorf(c.pos(base, f.Pos), CodeDuplicateName, base, "state field %q is declared twice", f.Name)
			continue
		}
		seen[f.Name] = true
		if why := expressionName(f.Name); why != "" {
			c.errorf(c.pos(base, f.Pos), CodeReservedName, base, "state field %s", why)
		}
		typ, ok := c.fieldType(f)
		if !ok {
			continue
		}
		cf := &Field{Spec: f, Initial: typ.Zero()}
		c.out.Fields[f.Name] = cf
		c.out.FieldOrder = append(c.out.FieldOrder, f.Name)
		cf.Reducer = c.fieldReducer(f, typ)
		c.fieldEnum(f, typ)
		if init, ok := c.fieldDefault(f, typ); ok {
			cf.Initial = init
		}
	}
}

// fieldType returns the field's parsed type, parsing its text when the loader
// left the type empty, and reports an unparseable type.
func (c *compiler) fieldType(f *graph.Field) (graph.Type, bool) {
	if f.Type.Kind != "" {
		return f.Type, true
	}
	path := "state." + f.Name + ".type"
	t, err := graph.ParseType(f.TypeText)
	if err != nil {
		c.errorf(c.pos(path, f.Pos), CodeInvalidType, path, "state field %q: %v%s", f.Name, err, load.TypeHint(f.TypeText))
		return graph.Type{}, false
	}
	return t, true
}

// fieldReducer resolves the field's reducer: a custom expression, a builtin by
// name, or the type's default. It returns nil after reporting a problem.
func (c *compiler) fieldReducer(f *graph.Field, typ graph.Type) *reducer.Reducer {
	if f.ReducerExpr != "" {
		return c.customReducer(f, typ)
	}
	name := f.Reducer
	if name == "" {
		name = reducer.Default(typ)
	}
	path := "state." + f.Name + ".reducer"
	r, ok := reducer.Lookup(name)
	if !ok {
		hint := langGraphReducerHint(name, typ)
		if hint == "" {
			hint = diag.DidYouMean(name, reducer.Names())
		}
		c.errorf(c.pos(path, f.Pos), CodeUnknownReducer, path,
			"state field %q: unknown reducer %q%s (builtin reducers: %s)",
			f.Name, name, hint, quoteList(reducer.Names()))
		return nil
	}
	if !r.Accepts(typ) {
		c.errorf(c.pos(path, f.Pos), CodeInvalidReducer, path,
			"state field %q of type %s cannot use reducer %q; reducers that fit %s: %s",
			f.Name, typ, name, typ, quoteList(fittingReducers(typ)))
		return nil
	}
	return r
}

// fittingReducers lists the builtin reducers that accept type t.
func fittingReducers(t graph.Type) []string {
	var out []string
	for _, name := range reducer.Names() {
		if r, ok := reducer.Lookup(name); ok && r.Accepts(t) {
			out = append(out, name)
		}
	}
	return out
}

// customReducer compiles a reducer expression over old (typed as the field) and
// new (any), whose result is normalized to the field's type.
func (c *compiler) customReducer(f *graph.Field, typ graph.Type) *reducer.Reducer {
	path := "state." + f.Name + ".reducer.expr"
	env := c.env.With(map[string]graph.Type{"old": typ, "new": {Kind: graph.Any}})
	want := typ.Kind
	if want == graph.Any {
		want = ""
	}
	base := c.pos(path, f.Pos)
	prog, err := env.Compile(f.ReducerExpr, want)
	if err != nil {
		c.reportExprError(base, path, f.ReducerExpr, err, env, CodeExprError)
		return nil
	}
	c.checkEnumLiterals(base, path, f.ReducerExpr)
	vars := c.g.Vars
	return reducer.Custom(customReducerNamePrefix+f.Name, func(old, update any) (any, error) {
		scope := make(map[string]any, len(vars)+2)
		for k, v := range vars {
			scope[k] = v
		}
		scope["old"], scope["new"] = old, update
		v, err := prog.Eval(scope)
		if err != nil {
			return nil, fmt.Errorf("reducer of state field %q: %w", f.Name, err)
		}
		n, err := typ.Normalize(v)
		if err != nil {
			return nil, fmt.Errorf("reducer of state field %q: result: %w", f.Name, err)
		}
		if n == nil {
			n = typ.Zero()
		}
		return n, nil
	})
}

// fieldEnum records a field's string enum and reports enum values that are not
// of the field's type.
func (c *compiler) fieldEnum(f *graph.Field, typ graph.Type) {
	if len(f.Enum) == 0 {
		return
	}
	item := typ
	if typ.Kind == graph.List && typ.Elem != nil {
		item = *typ.Elem // an enum on a list constrains its items
	}
	var strs []string
	for i, v := range f.Enum {
		path := fmt.Sprintf("state.%s.enum.%d", f.Name, i)
		if _, err := item.Normalize(v); err != nil || v == nil {
			what := "null"
			if err != nil {
				what = err.Error()
			}
			c.errorf(c.pos(path, f.Pos), CodeInvalidEnum, path,
				"state field %q: enum value %d is not %s: %s", f.Name, i, article(item.String()), what)
			continue
		}
		if s, ok := v.(string); ok {
			strs = append(strs, s)
		}
	}
	if len(strs) > 0 {
		c.enums[f.Name] = strs
	}
}

// fieldDefault checks and normalizes the field's default value.
func (c *compiler) fieldDefault(f *graph.Field, typ graph.Type) (any, bool) {
	if !f.HasDefault || f.Default == nil {
		return nil, false
	}
	path := "state." + f.Name + ".default"
	if name, ok := envRef(f.Default); ok {
		if typ.Kind != graph.String && typ.Kind != graph.Any {
			c.errorf(c.pos(path, f.Pos), CodeInvalidDefault, path,
				"state field %q of type %s: an environment reference {env: %q} yields a string", f.Name, typ, name)
			return nil, false
		}
		v, _ := c.opts.LookupEnv(name)
		return v, true
	}
	v, err := typ.Normalize(f.Default)
	if err != nil {
		hint := ""
		if text, ok := f.Default.(string); ok {
			hint = load.UnquoteHint(text, string(typ.Kind))
		}
		c.errorf(c.pos(path, f.Pos), CodeInvalidDefault, path,
			"state field %q: default is not %s: %v%s", f.Name, article(typ.String()), err, hint)
		return nil, false
	}
	if len(f.Enum) > 0 && !c.inEnum(f, typ, v) {
		c.errorf(c.pos(path, f.Pos), CodeInvalidDefault, path,
			"state field %q: default %s is not one of its enum values %s", f.Name, showValue(v), enumList(f.Enum))
		return nil, false
	}
	return v, true
}

// inEnum reports whether v (or, for a list field, each of its items) is one of
// the field's enum values.
func (c *compiler) inEnum(f *graph.Field, typ graph.Type, v any) bool {
	item := typ
	values := []any{v}
	if typ.Kind == graph.List {
		if typ.Elem != nil {
			item = *typ.Elem
		}
		values, _ = v.([]any)
	}
	for _, x := range values {
		found := false
		for _, e := range f.Enum {
			ne, err := item.Normalize(e)
			if err == nil && reflect.DeepEqual(ne, x) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// article prefixes a type name with "a" or "an": "an int", "a string".
func article(name string) string {
	if name != "" && strings.ContainsRune("aeiou", rune(name[0])) {
		return "an " + name
	}
	return "a " + name
}
