package expression

import (
	"errors"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime/graph"
)

func testGraph(t *testing.T) *graph.Graph {
	t.Helper()
	field := func(name, typ string) *graph.Field {
		ty, err := graph.ParseType(typ)
		if err != nil {
			t.Fatal(err)
		}
		return &graph.Field{Name: name, Type: ty, TypeText: typ}
	}
	return &graph.Graph{
		State: []*graph.Field{
			field("goal", "string"), field("model", "string"), field("symptoms", "list<string>"),
			field("count", "int"), field("messages", "messages"), field("missing", "list<string>"),
		},
		Vars: map[string]any{
			"requirements": map[string]any{"diagnose_repair": []any{"model", "symptoms"}},
		},
	}
}

func TestCompileAndEval(t *testing.T) {
	env := NewEnv(testGraph(t))
	scope := map[string]any{
		"goal": "diagnose_repair", "model": "WDT780SAEM1", "symptoms": []any{}, "count": 2,
		"messages": []any{map[string]any{"role": "user", "content": "hi"}}, "missing": []any{},
		"requirements": map[string]any{"diagnose_repair": []any{"model", "symptoms"}},
	}
	scope["state"] = scope
	tests := []struct {
		name string
		src  string
		want Want
		out  any
	}{
		{"equality", "goal == 'diagnose_repair'", graph.Bool, true},
		{"len on list", "len(symptoms) > 0", graph.Bool, false},
		{"dynamic filter over vars", "filter(requirements[goal], {empty(state[#])})", graph.List, []any{"symptoms"}},
		{"message content", "messages[-1].content", graph.String, "hi"},
		{"arithmetic", "count + 1", graph.Int, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := env.Compile(tt.src, tt.want)
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			got, err := p.Eval(scope)
			if err != nil {
				t.Fatalf("eval: %v", err)
			}
			if Format(got) != Format(tt.out) {
				t.Fatalf("got %#v, want %#v", got, tt.out)
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	env := NewEnv(testGraph(t))
	tests := []struct {
		name   string
		src    string
		want   Want
		offset int
	}{
		{"unknown name", "gaol == ''", graph.Bool, 0},
		{"unknown name later", "goal == '' && modle != ''", graph.Bool, 14},
		{"type mismatch", "count + 'x' > 1", graph.Bool, 6},
		{"not a bool", "goal", graph.Bool, 0},
		{"not a list", "goal + model", graph.List, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := env.Compile(tt.src, tt.want)
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("want *Error, got %v", err)
			}
			if ce.Offset != tt.offset {
				t.Fatalf("offset %d, want %d (%s)", ce.Offset, tt.offset, ce.Message)
			}
		})
	}
}

func TestTemplate(t *testing.T) {
	env := NewEnv(testGraph(t))
	tests := []struct {
		name, src, out string
		errOffset      int
	}{
		{name: "plain", src: "hello", out: "hello"},
		{name: "interpolation", src: "Model ${model}, symptoms: ${symptoms}.", out: "Model WDT780SAEM1, symptoms: leaking, noisy."},
		{name: "escaped", src: "cost $${x}", out: "cost ${x}"},
		{name: "nested braces", src: "${ {'a': model}.a }", out: "WDT780SAEM1"},
		{name: "unknown field", src: "Hi ${modle}", errOffset: 5},
		{name: "unclosed", src: "Hi ${model", errOffset: 3},
	}
	scope := map[string]any{"model": "WDT780SAEM1", "symptoms": []any{"leaking", "noisy"}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpl, err := env.CompileTemplate(tt.src)
			if tt.out == "" {
				var ce *Error
				if !errors.As(err, &ce) {
					t.Fatalf("want *Error, got %v", err)
				}
				if ce.Offset != tt.errOffset {
					t.Fatalf("offset %d, want %d", ce.Offset, tt.errOffset)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := tpl.Render(scope)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.out {
				t.Fatalf("got %q, want %q", got, tt.out)
			}
		})
	}
}

// TestEvalReusesMachines checks that evaluating a condition allocates
// nothing: the virtual machine and its stack are reused between
// evaluations rather than allocated for each (a route is evaluated on every
// step of a run).
func TestEvalReusesMachines(t *testing.T) {
	p, err := NewEnv(testGraph(t)).Compile("count < 10 && goal == 'diagnose_repair'", graph.Bool)
	if err != nil {
		t.Fatal(err)
	}
	scope := map[string]any{"count": 2, "goal": "diagnose_repair"}
	allocs := testing.AllocsPerRun(100, func() {
		if v, err := p.Eval(scope); err != nil || v != true {
			t.Fatalf("eval: %v, %v", v, err)
		}
	})
	if allocs > 0 {
		t.Errorf("evaluating a condition allocated %.1f times, want 0", allocs)
	}
}

// TestEvalAfterFailure checks that a machine reused after a failed
// evaluation gives the right result.
func TestEvalAfterFailure(t *testing.T) {
	env := NewEnv(testGraph(t))
	bad, err := env.Compile("symptoms[5] == 'x'", graph.Bool)
	if err != nil {
		t.Fatal(err)
	}
	good, err := env.Compile("count + 1", graph.Int)
	if err != nil {
		t.Fatal(err)
	}
	scope := map[string]any{"symptoms": []any{"a"}, "count": 2}
	for range 3 {
		if _, err := bad.Eval(scope); err == nil {
			t.Fatal("an index out of range evaluated without error")
		}
		if v, err := good.Eval(scope); err != nil || v != 3 {
			t.Fatalf("count + 1 after a failure = %v, %v; want 3", v, err)
		}
	}
}

// TestResultsPastTheBoundsAreErrors evaluates expressions and templates over
// values that a loop could have grown step after step: a result past
// MaxResultSize (a long string, a list sharing one big string many times) or
// nested past maxResultDepth is an error naming the bound, where keeping it
// would let the next step double it again until memory runs out; a result
// just within the bound is kept.
func TestResultsPastTheBoundsAreErrors(t *testing.T) {
	env := NewEnv(testGraph(t))
	half := strings.Repeat("x", MaxResultSize/2)
	deep := any("leaf")
	for range maxResultDepth + 1 {
		deep = []any{deep}
	}
	tests := []struct {
		name, src string
		template  bool
		model     any
		want      error
	}{
		{name: "a string doubled past the bound", src: "model + model + 'x'", model: half, want: errTooLarge},
		{name: "a string doubled to the bound", src: "model + model", model: half},
		{name: "a list sharing one string", src: "[model, model, model]", model: half, want: errTooLarge},
		{name: "a nested list", src: "[model]", model: deep, want: errTooDeep},
		{name: "a template past the bound", src: "${model}${model}!", template: true, model: half, want: errTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scope := map[string]any{"model": tt.model}
			var err error
			if tt.template {
				tpl, cerr := env.CompileTemplate(tt.src)
				if cerr != nil {
					t.Fatal(cerr)
				}
				_, err = tpl.Render(scope)
			} else {
				p, cerr := env.Compile(tt.src, "")
				if cerr != nil {
					t.Fatal(cerr)
				}
				_, err = p.Eval(scope)
			}
			if !errors.Is(err, tt.want) || (tt.want != nil && !strings.Contains(err.Error(), "does a value grow at every step?")) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
		})
	}
}
