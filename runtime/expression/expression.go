// Package expression compiles the expr-lang expressions and ${...} templates of
// a graph file against a type environment built from the graph's state schema.
//
// Every state field is a top-level name with its declared type; "state" is the
// whole state as a map (for dynamic access such as state[name]); the graph's
// vars are top-level names typed from their values; extra names (such as a map
// fan-out item, or a reducer's old and new) can be declared per compilation.
// A typo or a type error is reported with the 0-based offset of the offending
// token inside the source, so callers can place it at its file:line:col.
package expression

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/types"
	"github.com/expr-lang/expr/vm"

	"github.com/graphctl/graphctl/runtime/graph"
)

// MaxNodes bounds the size of one expression's syntax tree.
const MaxNodes = 2000

// Env is a typed environment for compiling expressions.
type Env struct {
	names types.Map
}

// NewEnv builds the environment of a graph: its state fields, "state", and its vars.
func NewEnv(g *graph.Graph) *Env {
	names := types.Map{}
	stateType := types.Map{}
	for _, f := range g.State {
		t := TypeOf(f.Type)
		names[f.Name] = t
		stateType[f.Name] = t
	}
	names["state"] = stateType
	for k, v := range g.Vars {
		if _, clash := names[k]; !clash {
			names[k] = typeOfValue(v)
		}
	}
	return &Env{names: names}
}

// With returns a copy of the environment with extra names declared.
func (e *Env) With(extra map[string]graph.Type) *Env {
	names := make(types.Map, len(e.names)+len(extra))
	for k, v := range e.names {
		names[k] = v
	}
	for k, t := range extra {
		names[k] = TypeOf(t)
	}
	return &Env{names: names}
}

// Has reports whether name is declared.
func (e *Env) Has(name string) bool {
	_, ok := e.names[name]
	return ok
}

// Names lists the declared names, sorted.
func (e *Env) Names() []string {
	out := make([]string, 0, len(e.names))
	for k := range e.names {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var (
	messageType = types.Map{
		"id": types.String, "role": types.String, "content": types.String,
		types.Extra: types.Any,
	}
	objectType = types.Map{types.Extra: types.Any}
)

// TypeOf maps a state field type to its expr-lang type.
func TypeOf(t graph.Type) types.Type {
	switch t.Kind {
	case graph.String:
		return types.String
	case graph.Int:
		return types.Int
	case graph.Float:
		return types.Float64
	case graph.Bool:
		return types.Bool
	case graph.List:
		if t.Elem != nil {
			return types.Array(TypeOf(*t.Elem))
		}
		return types.Array(types.Any)
	case graph.Map:
		if t.Elem != nil {
			return types.Map{types.Extra: TypeOf(*t.Elem)}
		}
		return objectType
	case graph.Object:
		return objectType
	case graph.Messages:
		return types.Array(messageType)
	}
	if lt, ok := graph.ListTypeOf(t.Kind); ok {
		item := types.Map{types.Extra: types.Any}
		for name, ft := range lt.Fields {
			item[name] = TypeOf(ft)
		}
		return types.Array(item)
	}
	return types.Any
}

// typeOfValue derives a type from a constant's decoded JSON value.
func typeOfValue(v any) types.Type {
	switch x := v.(type) {
	case string:
		return types.String
	case bool:
		return types.Bool
	case int, int64:
		return types.Int
	case float64:
		if x == math.Trunc(x) {
			return types.Int
		}
		return types.Float64
	case []any:
		return types.Array(types.Any)
	case map[string]any:
		// A constant's keys are all known: naming another is a mistake.
		m := types.Map{}
		for k, item := range x {
			m[k] = typeOfValue(item)
		}
		return m
	}
	return types.Any
}

// Error is a compile error with the place of the offending token.
type Error struct {
	// Offset is the 0-based rune offset of the token within the source.
	Offset int
	// Line and Column locate the token within the source: Line is 1-based and
	// Column 0-based, as expr-lang reports them.
	Line, Column int
	Message      string
}

func (e *Error) Error() string { return e.Message }

// Program is a compiled expression.
type Program struct {
	src  string
	prog *vm.Program
}

// Source returns the expression's text.
func (p *Program) Source() string { return p.src }

// machines holds expr-lang virtual machines between evaluations: a machine
// resets itself at the start of each run, and reusing one saves allocating
// it and its stack every time an expression is evaluated (every route and
// assignment of every step).
var machines = sync.Pool{New: func() any { return new(vm.VM) }}

// Eval runs the expression in scope.
func (p *Program) Eval(scope map[string]any) (any, error) {
	m := machines.Get().(*vm.VM)
	out, err := m.Run(p.prog, scope)
	// The values the run left on its stack and in its variables are
	// dropped; whatever else a pooled machine still refers to is released
	// with it when the garbage collector empties the pool.
	clear(m.Stack[:cap(m.Stack)])
	clear(m.Variables)
	machines.Put(m)
	if err != nil {
		return nil, fmt.Errorf("evaluate %q: %w", p.src, err)
	}
	if err := checkSize(out, MaxResultSize); err != nil {
		return nil, fmt.Errorf("evaluate %q: %w", p.src, err)
	}
	return out, nil
}

// MaxResultSize bounds the bytes an expression's or template's result may
// hold: its strings' bytes and eight per list item, map entry or other
// value, nested values counted each time they appear. expr-lang's memory
// budget bounds one evaluation's allocations, not what a value becomes over
// steps: a field set to "s + s" at every step of a loop doubles until the
// process runs out of memory. Such a result is an error of the node instead.
const MaxResultSize = 64 << 20

// maxResultDepth bounds how deep a result may nest.
const maxResultDepth = 10000

// Errors of a result past the bounds.
var (
	errTooLarge = fmt.Errorf("the result holds more than %d MiB, more than an expression may yield (does a value grow at every step?)", MaxResultSize>>20)
	errTooDeep  = fmt.Errorf("the result nests deeper than %d levels, more than an expression may yield (does a value grow at every step?)", maxResultDepth)
)

// checkSize returns an error when v holds more than limit bytes as
// MaxResultSize counts them or nests deeper than maxResultDepth. It stops as
// soon as either is passed, so its cost is bounded whatever v shares.
func checkSize(v any, limit int) error {
	left := limit
	var walk func(v any, depth int) error
	walk = func(v any, depth int) error {
		if depth > maxResultDepth {
			return errTooDeep
		}
		switch x := v.(type) {
		case string:
			left -= len(x)
		case []any:
			left -= 8 * len(x)
			for _, e := range x {
				if left < 0 {
					return errTooLarge
				}
				if err := walk(e, depth+1); err != nil {
					return err
				}
			}
		case map[string]any:
			left -= 8 * len(x)
			for k, e := range x {
				if left -= len(k); left < 0 {
					return errTooLarge
				}
				if err := walk(e, depth+1); err != nil {
					return err
				}
			}
		case []string:
			left -= 8 * len(x)
			for _, e := range x {
				if left -= len(e); left < 0 {
					return errTooLarge
				}
			}
		default:
			left -= 8
		}
		if left < 0 {
			return errTooLarge
		}
		return nil
	}
	return walk(v, 0)
}

// Want names what an expression's result must be.
type Want = graph.Kind

// Compile compiles src in the environment. want is the kind the result must have
// (graph.Bool for conditions, graph.List for fan-out sources, "" for anything).
func (e *Env) Compile(src string, want Want) (*Program, error) {
	opts := []expr.Option{
		expr.Env(e.names),
		expr.MaxNodes(MaxNodes),
		expr.Function("empty", emptyFunc, new(func(any) bool)),
		expr.Function("json", jsonFunc, new(func(any) string)),
	}
	if want == graph.Bool {
		opts = append(opts, expr.AsBool())
	}
	prog, err := expr.Compile(src, opts...)
	if err != nil {
		return nil, convertError(src, err)
	}
	if want != "" && want != graph.Bool && want != graph.Any {
		if err := checkResultKind(prog, want); err != nil {
			return nil, &Error{Message: err.Error()}
		}
	}
	return &Program{src: src, prog: prog}, nil
}

func checkResultKind(prog *vm.Program, want Want) error {
	node := prog.Node()
	if node == nil {
		return nil
	}
	t := node.Type()
	if t == nil || t.Kind() == reflect.Interface {
		return nil // dynamic: checked at run time
	}
	ok := true
	switch want {
	case graph.List, graph.Messages:
		ok = t.Kind() == reflect.Slice || t.Kind() == reflect.Array
	case graph.String:
		ok = t.Kind() == reflect.String
	case graph.Int:
		ok = t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64
	case graph.Float:
		ok = t.Kind() >= reflect.Int && t.Kind() <= reflect.Float64
	case graph.Map, graph.Object:
		ok = t.Kind() == reflect.Map
	default:
		if (graph.Type{Kind: want}).IsList() {
			ok = t.Kind() == reflect.Slice || t.Kind() == reflect.Array
		}
	}
	if !ok {
		return fmt.Errorf("expression must yield %s, but yields %s", want, t)
	}
	return nil
}

func convertError(src string, err error) error {
	var fe *file.Error
	if errors.As(err, &fe) {
		return &Error{Offset: fe.From, Line: fe.Line, Column: fe.Column, Message: fe.Message}
	}
	return &Error{Message: err.Error()}
}

// emptyFunc reports whether a value is nil, "", zero, false, or an empty list or map.
func emptyFunc(params ...any) (any, error) {
	return IsEmpty(params[0]), nil
}

// IsEmpty reports whether v is nil, "", 0, false, or an empty list or map.
func IsEmpty(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.String, reflect.Slice, reflect.Map, reflect.Array:
		return rv.Len() == 0
	case reflect.Bool:
		return !rv.Bool()
	case reflect.Int, reflect.Int64, reflect.Int32:
		return rv.Int() == 0
	case reflect.Float64, reflect.Float32:
		return rv.Float() == 0
	case reflect.Pointer, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

func jsonFunc(params ...any) (any, error) {
	b, err := json.Marshal(params[0])
	if err != nil {
		return nil, fmt.Errorf("json: %w", err)
	}
	return string(b), nil
}

// Format renders a value as template output: strings as they are, numbers in
// their shortest form, lists joined with ", ", maps and other values as JSON.
func Format(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case int:
		return strconv.Itoa(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case []any:
		parts := make([]string, len(x))
		for i, item := range x {
			parts[i] = Format(item)
		}
		return strings.Join(parts, ", ")
	case []string:
		return strings.Join(x, ", ")
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
