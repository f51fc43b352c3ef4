package graphtest_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	_ "github.com/graphctl/graphctl/builtin-nodes/all"
	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/graphtest"
	"github.com/graphctl/graphctl/runtime/node"
)

// scriptNodeType is a node type that writes the llm script it is handed, to
// show that a case's llm list reaches nodes.
const scriptNodeType = "graphtest_script"

// The keys of scriptRegistry's services: the scripted replies and a greeting.
var (
	scriptKey   = node.NewKey[any]("graphtest_test.script")
	greetingKey = node.NewKey[string]("graphtest_test.greeting")
)

// scriptRegistry returns a registry of its own holding the script node type
// and, with withKey, the key its scripted replies are handed under.
func scriptRegistry(t *testing.T, withKey bool) *node.Registry {
	t.Helper()
	reg := node.NewRegistry()
	reg.MustRegister(node.Type{
		Name:        scriptNodeType,
		Description: "Writes the scripted model replies and the extra service it is handed.",
		Config:      `{}`,
		New: func(node.Builder) (node.Node, error) {
			return node.Func(func(_ context.Context, in *node.Input) (node.Update, error) {
				raw, _ := scriptKey.Get(in.Services)
				script, _ := raw.([]any)
				if len(script) == 0 {
					return nil, node.Errorf("no_script", "no scripted model reply")
				}
				extra, _ := greetingKey.Get(in.Services)
				return node.Update{"answer": fmt.Sprint(script[0]) + extra}, nil
			}), nil
		},
	})
	if withKey {
		if err := reg.SetScriptKey(scriptKey); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

// base is a small chat graph: it extracts a model and symptoms, counts
// turns, asks for a missing model, and otherwise asks for confirmation
// through an interrupt.
const base = `dsl_version: "graphctl/v1"
name: "t"
state: {
	messages: {type: "messages"}
	model: {type: "string", reducer: "keep"}
	symptoms: {type: "list<string>", reducer: "union"}
	answer: {type: "string"}
	count: {type: "int", reducer: "add"}
}
start: "extract"
nodes: {
	extract: {
		type: "extract"
		config: fields: {
			model: pattern: "\\b[A-Z]{3}\\d{3}\\b"
			symptoms: lexicon: {leaking: ["leak", "leaking"], noisy: ["noise", "noisy"]}
		}
		next: "bump"
	}
	bump: {type: "set", config: set: count: "1", routes: [{when: "model == ''", to: "ask"}], default: "confirm"}
	ask: {type: "reply", config: text: "Which model?", catch: [{on: ["boom"], to: "sorry"}], next: "END"}
	sorry: {type: "reply", config: text: "Sorry, something went wrong.", next: "END"}
	confirm: {
		type: "interrupt"
		config: {field: "answer", message: "Proceed with ${model}?"}
		routes: [{when: "answer == 'yes'", to: "done"}]
		default: "END"
	}
	done: {type: "reply", config: text: "Done for ${model}", next: "END"}
}
`

// compileWith compiles base with the given tests block.
func compileWith(t *testing.T, tests string) *compile.Graph {
	t.Helper()
	g, diags := runtime.LoadSource("t.cue", []byte(base+"tests: ["+tests+"]\n"))
	if g == nil || diags.HasErrors() {
		t.Fatalf("graph does not compile:\n%v", diags)
	}
	return g
}

// lineOf returns the 1-based line of the first occurrence of marker in the
// compiled source, so tests can check positions without counting lines.
func lineOf(t *testing.T, tests, marker string) int {
	t.Helper()
	line, _ := posOf(t, tests, marker)
	return line
}

// posOf returns the 1-based line and column of the first occurrence of
// marker in the compiled source.
func posOf(t *testing.T, tests, marker string) (int, int) {
	t.Helper()
	src := base + "tests: [" + tests + "]\n"
	i := strings.Index(src, marker)
	if i < 0 {
		t.Fatalf("marker %q not in source", marker)
	}
	return strings.Count(src[:i], "\n") + 1, i - strings.LastIndex(src[:i], "\n")
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name  string
		cases string
		// want lists, per expected diagnostic, its code, a message substring
		// and a marker on the line it must be reported at.
		want []struct{ code, text, marker string }
	}{
		{
			name:  "valid case",
			cases: `{name: "ok", mocks: ask: update: answer: "x", turns: [{input: "hi", expect: {path: ["extract", "bump", "ask"], state: count: 1, expr: ["count == 1"]}}, {resume: "yes", interrupt: "confirm"}]}`,
		},
		{
			name: "unknown node in mocks",
			cases: `{name: "m",
	mocks: asq: update: answer: "x"
	turns: [{input: "hi"}]}`,
			want: []struct{ code, text, marker string }{{graphtest.CodeUnknownNode, `node "asq", which the graph does not declare; did you mean "ask"?`, "asq:"}},
		},
		{
			name: "unknown nodes in path, visits and not_visits",
			cases: `{name: "p", turns: [{input: "hi", expect: {
	path: ["extract", "bumpp"]
	visits: ["nope"]
	not_visits: ["END", "ghost"]}}]}`,
			want: []struct{ code, text, marker string }{
				{graphtest.CodeUnknownNode, `"bumpp"`, "bumpp"},
				{graphtest.CodeUnknownNode, `"nope"`, "nope"},
				{graphtest.CodeUnknownNode, `"ghost"`, "ghost"},
			},
		},
		{
			name: "expression that does not compile",
			cases: `{name: "e", turns: [{input: "hi", expect: expr: [
	"count == 1",
	"cuont > 0"]}]}`,
			want: []struct{ code, text, marker string }{{graphtest.CodeInvalidExpr, `"cuont > 0" does not compile`, "cuont"}},
		},
		{
			name: "unknown fields in state, contains, input and mock update",
			cases: `{name: "f", mocks: ask: update: {anser: "x"}, turns: [{
	input: {modle: "ABC123"}
	expect: {
		state: {modle: "ABC123"}
		contains: {symptom: "leaking"}}}]}`,
			want: []struct{ code, text, marker string }{
				{graphtest.CodeUnknownField, `mock update of node ask names state field "anser"`, "anser"},
				{graphtest.CodeUnknownField, `turn 1 input names state field "modle", which the graph does not declare; did you mean "model"?`, "input: {modle"},
				{graphtest.CodeUnknownField, `expect.state names state field "modle"`, "state: {modle"},
				{graphtest.CodeUnknownField, `expect.contains names state field "symptom"`, "symptom:"},
			},
		},
		{
			name: "turn with neither input nor resume, and one with both",
			cases: `{name: "t", turns: [{input: "hi"},
	{restart: true},
	{input: "x", resume: "y"}]}`,
			want: []struct{ code, text, marker string }{
				{graphtest.CodeInvalidTurn, "turn 2 has neither input nor resume", "{restart"},
				{graphtest.CodeInvalidTurn, "turn 3 has both input and resume", `{input: "x"`},
			},
		},
		{
			name: "unknown keys, bad status and wrong value types",
			cases: `{name: "k", turns: [{input: "hi", expect: {
	staus: "completed"
	status: "done"
	state: {count: "three"}
	contains: {count: 1}}}]}`,
			want: []struct{ code, text, marker string }{
				{graphtest.CodeUnknownKey, `no key "staus"`, "staus"},
				{graphtest.CodeInvalidValue, "status must be one of completed, interrupted, error", `status: "done"`},
				{graphtest.CodeInvalidValue, `state field "count" (int): want int, got string`, `count: "three"`},
				{graphtest.CodeInvalidValue, "contains applies to string and list fields", "count: 1}"},
			},
		},
		{
			name: "mock setting two outcomes, error without code, first turn resuming",
			cases: `{name: "x",
	mocks: {
		ask: {update: {answer: "a"}, error: {code: "boom"}}
		done: error: {message: "no code"}}
	turns: [{resume: "yes"}]}`,
			want: []struct{ code, text, marker string }{
				{graphtest.CodeInvalidMock, `mock of node "ask" must set exactly one of update, error and interrupt (it sets 2)`, "ask: {update"},
				{graphtest.CodeInvalidMock, "error needs a code", "done: error"},
				{graphtest.CodeInvalidTurn, "the first turn cannot resume", `{resume: "yes"}`},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := compileWith(t, tt.cases)
			diags := graphtest.Check(g)
			if len(diags) != len(tt.want) {
				t.Fatalf("got %d diagnostics, want %d:\n%v", len(diags), len(tt.want), diags)
			}
			for _, w := range tt.want {
				line := lineOf(t, tt.cases, w.marker)
				found := false
				for _, d := range diags {
					if d.Code == w.code && strings.Contains(d.Message, w.text) && d.Line == line && d.File == "t.cue" {
						found = true
					}
				}
				if !found {
					t.Errorf("no diagnostic [%s] %q at t.cue:%d; got:\n%v", w.code, w.text, line, diags)
				}
			}
		})
	}
}

func TestRun(t *testing.T) {
	tests := []struct {
		name  string
		cases string
		pass  bool
		// fails are substrings, each of which some failure must contain.
		fails []string
	}{
		{
			name: "chat turns with every kind of expectation",
			cases: `{name: "c", turns: [{
	input: "it is leaking"
	expect: {status: "completed", path: ["extract", "bump", "ask"], state: {count: 1, symptoms: ["leaking"], model: ""},
		contains: {symptoms: "leaking", messages: [{role: "assistant", content: "Which model?"}]},
		expr: ["count == 1 && len(symptoms) == 1"], reply: "Which model", not_visits: ["confirm"],
		events: [{type: "text", node: "ask", payload: content: "Which model?"}, {type: "node_end", payload: {node: "bump", status: "ok"}}]}
}, {
	input: "ABC123 makes a noise"
	expect: {status: "interrupted", visits: ["confirm"], state: {count: 2, symptoms: ["leaking", "noisy"], model: "ABC123"},
		events: [{type: "interrupt", payload: {node: "confirm", payload: message: "Proceed with ABC123?"}}]}
}, {
	resume: "yes"
	expect: {status: "completed", path: ["confirm", "done"], reply: "Done for ABC123", state: answer: "yes"}
}]}`,
			pass: true,
		},
		{
			name: "wrong path, state, reply, status and event each fail",
			cases: `{name: "f", turns: [{
	input: "it is leaking"
	expect: {status: "interrupted", path: ["extract", "ask"], state: {count: 5}, reply: "Hello",
		visits: ["done"], not_visits: ["ask"], contains: symptoms: ["noisy"], expr: ["count > 3"],
		events: [{type: "text", payload: content: "Goodbye"}, {type: "tool_result"}]}
}]}`,
			fails: []string{
				"turn 1: status: want interrupted, got completed",
				"turn 1: path: want [extract, ask], got [extract, bump, ask]",
				"turn 1: state.count: want 5, got 1",
				`turn 1: reply: want a reply containing "Hello", got "Which model?"`,
				`turn 1: visits: want node "done" to run`,
				`turn 1: not_visits: want node "ask" not to run`,
				`turn 1: contains.symptoms: want items "noisy" in ["leaking"]`,
				`turn 1: expr: want "count > 3" to hold, it is false`,
				`turn 1: events: want an event of type text with payload {"content":"Goodbye"}, but the turn emitted 1 such events: {"content":"Which model?",`,
				"turn 1: events: want an event of type tool_result, but the turn emitted none of that type",
			},
		},
		{
			name:  "failures name the expectation's position",
			cases: `{name: "pos", turns: [{input: "ABC123", expect: {state: {model: "XYZ999"}}}]}`,
			fails: []string{`t.cue:POS: turn 1: state.model: want "XYZ999", got "ABC123"`},
		},
		{
			name:  "mocked update replaces the node",
			cases: `{name: "m", mocks: extract: update: {model: "MOK000"}, turns: [{input: "no model here", expect: {status: "interrupted", path: ["extract", "bump", "confirm"], state: model: "MOK000"}}]}`,
			pass:  true,
		},
		{
			name:  "mocked error caught by the node's catch",
			cases: `{name: "m", mocks: ask: error: {code: "boom", message: "exploded"}, turns: [{input: "hi", expect: {path: ["extract", "bump", "ask", "sorry"], reply: "Sorry", events: [{type: "error", payload: {code: "boom", caught_by: "sorry"}}]}}]}`,
			pass:  true,
		},
		{
			name:  "mocked error not caught is the expected run error",
			cases: `{name: "m", mocks: ask: error: {code: "other", message: "exploded"}, turns: [{input: "hi", expect: error: "exploded"}]}`,
			pass:  true,
		},
		{
			name:  "an unexpected run error fails the turn",
			cases: `{name: "m", mocks: ask: error: {code: "other", message: "exploded"}, turns: [{input: "hi", expect: reply: "Which"}]}`,
			fails: []string{"turn 1: run: unexpected error:", "exploded", `turn 1: reply: want a reply containing "Which", but the turn added no assistant message`},
		},
		{
			name:  "an expected error that does not happen fails",
			cases: `{name: "m", turns: [{input: "hi", expect: error: "exploded"}]}`,
			fails: []string{"turn 1: status: want error, got completed", `turn 1: error: want an error containing "exploded", got no error`},
		},
		{
			name: "mocked interrupt resumed by node name",
			cases: `{name: "m", mocks: ask: interrupt: {field: "answer", payload: {question: "Really?"}}, turns: [{
	input: "hi"
	expect: {status: "interrupted", events: [{type: "interrupt", payload: {node: "ask", field: "answer", payload: question: "Really?"}}]}
}, {
	resume: "sure", interrupt: "ask"
	expect: {status: "completed", state: answer: "sure", path: ["ask"]}
}]}`,
			pass: true,
		},
		{
			name:  "resuming an interrupt that is not pending fails the turn",
			cases: `{name: "m", turns: [{input: "ABC123"}, {resume: "yes", interrupt: "ask"}]}`,
			fails: []string{`turn 2: resume: no pending interrupt has id or node "ask"; pending: confirm-`},
		},
		{
			name: "memory survives a restart",
			cases: `{name: "r", turns: [{input: "ABC123 is leaking", expect: status: "interrupted"}, {
	restart: true
	resume: "no"
	expect: {status: "completed", path: ["confirm"], state: {model: "ABC123", symptoms: ["leaking"], count: 1, answer: "no"}}
}, {
	restart: true
	input: "DEF456 is noisy"
	expect: {state: {model: "ABC123", symptoms: ["leaking", "noisy"], count: 2}}
}]}`,
			pass: true,
		},
		{
			name:  "an object input sets fields",
			cases: `{name: "o", turns: [{input: {model: "QRS321", symptoms: ["noisy"]}, expect: {status: "interrupted", state: {model: "QRS321", symptoms: ["noisy"], count: 1}}}]}`,
			pass:  true,
		},
		{
			name:  "an invalid case fails without running",
			cases: `{name: "bad", turns: [{input: "hi", expect: path: ["nowhere"]}]}`,
			fails: []string{`invalid test: t.cue:`, `[test-unknown-node] turn 1 expect.path names node "nowhere"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := compileWith(t, tt.cases)
			dir := t.TempDir()
			results := graphtest.Run(context.Background(), g, graphtest.Options{TempDir: dir})
			if len(results) != 1 {
				t.Fatalf("got %d results, want 1", len(results))
			}
			r := results[0]
			if r.Passed != tt.pass {
				t.Fatalf("passed = %v, want %v; failures:\n%s", r.Passed, tt.pass, strings.Join(r.Failures, "\n"))
			}
			if r.Passed != (len(r.Failures) == 0) {
				t.Errorf("passed = %v with %d failures", r.Passed, len(r.Failures))
			}
			all := strings.Join(r.Failures, "\n")
			for _, want := range tt.fails {
				if strings.Contains(want, "POS") {
					line, col := posOf(t, tt.cases, "XYZ999")
					want = strings.Replace(want, "POS", fmt.Sprintf("%d:%d", line, col), 1)
				}
				if !strings.Contains(all, want) {
					t.Errorf("no failure contains %q; failures:\n%s", want, all)
				}
			}
			left, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(left) != 0 {
				t.Errorf("the case's data directory was not removed: %v", left)
			}
		})
	}
}

func TestLLMScriptAndExtra(t *testing.T) {
	src := `dsl_version: "graphctl/v1"
name: "s"
state: answer: {type: "string"}
start: "script"
nodes: script: {type: "` + scriptNodeType + `", next: "END"}
tests: [
	{name: "scripted", llm: ["first reply", "second"], turns: [{input: {}, expect: state: answer: "first reply, world"}]},
	{name: "unscripted", turns: [{input: {}, expect: error: "no scripted model reply"}]},
]`
	g, diags := runtime.Loader{Registry: scriptRegistry(t, true)}.LoadSource("s.cue", []byte(src))
	if g == nil || diags.HasErrors() {
		t.Fatalf("graph does not compile:\n%v", diags)
	}
	results := graphtest.Run(context.Background(), g, graphtest.Options{TempDir: t.TempDir(), Extra: greetingKey.Bind(node.Extra{}, ", world")})
	for _, r := range results {
		if !r.Passed {
			t.Errorf("%s failed:\n%s", r.Name, strings.Join(r.Failures, "\n"))
		}
	}
	if len(results) != 2 {
		t.Errorf("got %d results, want 2", len(results))
	}
}

// TestLLMScriptWithoutScriptKey: a case that scripts model replies on a
// graph whose registry has no script key is an invalid test, reported at its
// llm list, instead of running without them.
func TestLLMScriptWithoutScriptKey(t *testing.T) {
	src := `dsl_version: "graphctl/v1"
name: "s"
state: answer: {type: "string"}
start: "script"
nodes: script: {type: "` + scriptNodeType + `", next: "END"}
tests: [{name: "scripted", llm: ["first reply"], turns: [{input: {}, expect: state: answer: "first reply"}]}]`
	g, diags := runtime.Loader{Registry: scriptRegistry(t, false)}.LoadSource("s.cue", []byte(src))
	if g == nil || diags.HasErrors() {
		t.Fatalf("graph does not compile:\n%v", diags)
	}
	want := `s.cue:6:28: [test-invalid-value] test "scripted" scripts model replies (llm), but no node type of the graph's registry reads scripted replies`
	if got := graphtest.Check(g); len(got) != 1 || got[0].String() != want {
		t.Errorf("Check = %v, want %s", got, want)
	}
	results := graphtest.Run(context.Background(), g, graphtest.Options{TempDir: t.TempDir()})
	if len(results) != 1 || results[0].Passed {
		t.Fatalf("results = %+v, want one failed case", results)
	}
	if got := strings.Join(results[0].Failures, "\n"); got != "invalid test: "+want {
		t.Errorf("failure = %q, want %q", got, "invalid test: "+want)
	}
}

func TestParallelInterruptsChosenByName(t *testing.T) {
	src := `dsl_version: "graphctl/v1"
name: "p"
state: {a1: {type: "string"}, a2: {type: "string"}}
start: "fan"
nodes: {
	fan: {type: "route", next: ["q1", "q2"]}
	q1: {type: "interrupt", config: field: "a1", next: "END"}
	q2: {type: "interrupt", config: field: "a2", next: "END"}
}
tests: [{
	name: "answer q2 then q1"
	turns: [
		{input: {}, expect: {status: "interrupted", path: ["fan", "q1", "q2"]}},
		{resume: "two", interrupt: "q2", expect: {status: "interrupted", state: {a1: "", a2: "two"}}},
		{resume: "one", expect: {status: "completed", state: {a1: "one", a2: "two"}}},
	]
}, {
	name: "an ambiguous resume is an error"
	turns: [{input: {}}, {resume: "x", expect: error: "2 pending interrupts"}]
}]`
	g, diags := runtime.LoadSource("p.cue", []byte(src))
	if g == nil || diags.HasErrors() {
		t.Fatalf("graph does not compile:\n%v", diags)
	}
	for _, r := range graphtest.Run(context.Background(), g, graphtest.Options{TempDir: t.TempDir()}) {
		if !r.Passed {
			t.Errorf("%s failed:\n%s", r.Name, strings.Join(r.Failures, "\n"))
		}
	}
}

func TestFilterAndReport(t *testing.T) {
	g := compileWith(t, `
	{name: "greets", turns: [{input: "hi", expect: reply: "Which model?"}]},
	{name: "fails on purpose", turns: [{input: "hi", expect: reply: "Goodbye"}]},
	{name: "greets again", turns: [{input: "hello", expect: path: ["extract", "bump", "ask"]}]},
`)
	tests := []struct {
		name      string
		filter    string
		verbose   bool
		wantNames []string
		wantOK    bool
		wantLines []*regexp.Regexp
		notLines  []string
	}{
		{
			name: "all cases, quiet", wantNames: []string{"greets", "fails on purpose", "greets again"},
			wantLines: []*regexp.Regexp{
				regexp.MustCompile(`(?m)^--- FAIL: fails on purpose \(\d+\.\d\ds\)$`),
				regexp.MustCompile(`(?m)^    t\.cue:\d+:\d+: turn 1: reply: want a reply containing "Goodbye", got "Which model\?"$`),
				regexp.MustCompile(`(?m)^FAIL\tg\.cue\t\d+\.\d\ds \(1 of 3 cases failed\)$`),
			},
			notLines: []string{"--- PASS", "=== RUN"},
		},
		{
			name: "filtered to passing cases, verbose", filter: "^greets", verbose: true,
			wantNames: []string{"greets", "greets again"}, wantOK: true,
			wantLines: []*regexp.Regexp{
				regexp.MustCompile(`(?m)^=== RUN   greets$`),
				regexp.MustCompile(`(?m)^    turn 1: input "hi" → completed via extract → bump → ask; reply "Which model\?"$`),
				regexp.MustCompile(`(?m)^--- PASS: greets again \(\d+\.\d\ds\)$`),
				regexp.MustCompile(`(?m)^ok  \tg\.cue\t\d+\.\d\ds \(2 cases\)$`),
			},
			notLines: []string{"fails on purpose", "FAIL"},
		},
		{
			name: "filter matching nothing", filter: "^nothing$", wantOK: true,
			wantLines: []*regexp.Regexp{regexp.MustCompile(`(?m)^ok  \tg\.cue\t0\.00s \[no test cases to run\]$`)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := graphtest.Options{TempDir: t.TempDir(), Verbose: tt.verbose}
			if tt.filter != "" {
				opts.Filter = regexp.MustCompile(tt.filter)
			}
			results := graphtest.Run(context.Background(), g, opts)
			var names []string
			for _, r := range results {
				names = append(names, r.Name)
			}
			if strings.Join(names, "|") != strings.Join(tt.wantNames, "|") {
				t.Errorf("ran %q, want %q", names, tt.wantNames)
			}
			var buf bytes.Buffer
			if ok := graphtest.Report(&buf, "g.cue", results, tt.verbose); ok != tt.wantOK {
				t.Errorf("Report = %v, want %v", ok, tt.wantOK)
			}
			out := buf.String()
			for _, re := range tt.wantLines {
				if !re.MatchString(out) {
					t.Errorf("output does not match %s:\n%s", re, out)
				}
			}
			for _, s := range tt.notLines {
				if strings.Contains(out, s) {
					t.Errorf("output contains %q:\n%s", s, out)
				}
			}
		})
	}
}
