package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/checkpoint/memory"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
)

// loadSubgraphs writes graph files (name → body after the header) to a new
// directory and loads the first one, named "parent.cue".
func loadSubgraphs(t *testing.T, files map[string]string) *compile.Graph {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		src := "dsl_version: \"graphctl/v1\"\nname: \"" + strings.TrimSuffix(filepath.Base(name), filepath.Ext(name)) + "\"\n" + body
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g, diags, err := runtime.Load(filepath.Join(dir, "parent.cue"))
	if err != nil || diags.HasErrors() || g == nil {
		t.Fatalf("load: %v\n%v", err, diags)
	}
	return g
}

func childState(t *testing.T, cp checkpoint.Checkpointer, thread, ns string) map[string]any {
	t.Helper()
	snap, err := cp.Latest(context.Background(), checkpoint.ChildThreadID(thread, ns))
	if err != nil {
		t.Fatalf("child checkpoints at %q: %v", ns, err)
	}
	out := map[string]any{}
	for k, raw := range snap.Values {
		v, err := checkpoint.DecodeValue(raw)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = v
	}
	return out
}

// childNamespaces lists the namespaces (relative to thread, nested ones
// joined by "|") under which subgraph checkpoints are stored that start
// with prefix.
func childNamespaces(t *testing.T, cp checkpoint.Checkpointer, thread, prefix string) []string {
	t.Helper()
	ids, err := checkpoint.ChildThreads(context.Background(), cp, thread)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, id := range ids {
		if _, ns := checkpoint.SplitThreadID(id); strings.HasPrefix(ns, prefix) {
			out = append(out, ns)
		}
	}
	sort.Strings(out)
	return out
}

// onlyNamespace returns the one namespace starting with prefix.
func onlyNamespace(t *testing.T, cp checkpoint.Checkpointer, thread, prefix string) string {
	t.Helper()
	got := childNamespaces(t, cp, thread, prefix)
	if len(got) != 1 {
		t.Fatalf("namespaces %q under %s: %q, want one", prefix, thread, got)
	}
	return got[0]
}

const researcherChild = `
state: {
	question: {type: "string"}
	answer:   {type: "string"}
	log:      {type: "list<string>", reducer: "append"}
}
start: "look"
nodes: {
	look:   {type: "enginetest", config: {counter: "COUNTER-look", exprs: {log: "['looked at ' + question]"}}, next: "answer"}
	answer: {type: "enginetest", config: {counter: "COUNTER-answer", exprs: {answer: "'A: ' + question"}}, next: "END"}
}
`

func TestSubgraphMappingsAndSharedKeys(t *testing.T) {
	g := loadSubgraphs(t, map[string]string{
		"parent.cue": `
state: {
	topic:    {type: "string"}
	question: {type: "string"}
	report:   {type: "string"}
	log:      {type: "list<string>", reducer: "append"}
}
start: "mapped"
nodes: {
	mapped: {type: "subgraph", config: {graph: "agents/researcher.cue", input: {question: "topic + '?'"}, output: {report: "answer + ' (' + string(len(log)) + ')'"}}, next: "shared"}
	shared: {type: "subgraph", config: {graph: "agents/researcher.cue"}, next: "END"}
}
`,
		"agents/researcher.cue": researcherChild,
	})
	cp := memory.New()
	eng := engine.New(g, cp, engine.Options{})
	res, rec := run(t, eng, engine.Request{ThreadID: "t", Input: map[string]any{"topic": "bees", "question": "why", "log": []any{"start"}}})
	if res.Status != engine.StatusCompleted {
		t.Fatalf("status %s: %v", res.Status, res.Err)
	}
	if got := res.State["report"]; got != "A: bees? (1)" {
		t.Errorf("report = %v, want the output mapping over the child's state", got)
	}
	// The shared node passed question and log in and wrote back only the
	// log item the child appended; the answer field is not the parent's.
	if got, want := res.State["log"], []any{"start", "looked at why"}; !reflect.DeepEqual(got, want) {
		t.Errorf("log = %v, want %v", got, want)
	}
	if got := childState(t, cp, "t", onlyNamespace(t, cp, "t", "shared:"))["answer"]; got != "A: why" {
		t.Errorf("the shared child's stored answer = %v", got)
	}
	mapped := onlyNamespace(t, cp, "t", "mapped:")
	if got := childState(t, cp, "t", mapped)["question"]; got != "bees?" {
		t.Errorf("the mapped child's stored question = %v", got)
	}
	var namespaced int
	for _, ev := range rec.events {
		if ev.Namespace == mapped && ev.Type == "node_end" {
			namespaced++
		}
		if ev.Namespace != "" && (ev.Type == "done" || ev.Type == "run_start") {
			t.Errorf("a child's %s event reached the parent's stream", ev.Type)
		}
	}
	if namespaced != 2 {
		t.Errorf("%d node_end events of the mapped child, want 2", namespaced)
	}
	threads, err := cp.Threads(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var roots []string
	for _, th := range threads {
		if !checkpoint.IsChildThread(th.ThreadID) {
			roots = append(roots, th.ThreadID)
		}
	}
	if !reflect.DeepEqual(roots, []string{"t"}) {
		t.Errorf("root threads %v", roots)
	}
}

func TestSubgraphInterruptResumesInsideChild(t *testing.T) {
	g := loadSubgraphs(t, map[string]string{
		"parent.cue": `
state: {
	topic:  {type: "string"}
	report: {type: "string"}
}
start: "research"
nodes: {
	research: {type: "subgraph", config: {graph: "child.cue", input: {question: "topic"}, output: {report: "approval + ':' + answer"}}, next: "END"}
}
`,
		"child.cue": `
state: {
	question: {type: "string"}
	approval: {type: "string", enum: ["yes", "no"]}
	answer:   {type: "string"}
}
start: "prepare"
nodes: {
	prepare: {type: "enginetest", config: {counter: "` + uniq(t) + `-prepare", exprs: {answer: "'A: ' + question"}}, next: "ask"}
	ask:     {type: "enginetest", config: {interrupt: "approval"}, next: "END"}
}
`,
	})
	cp := memory.New()
	eng := engine.New(g, cp, engine.Options{})
	res, rec := run(t, eng, engine.Request{ThreadID: "t", Input: map[string]any{"topic": "bees"}})
	if res.Status != engine.StatusInterrupted || len(res.Interrupts) != 1 {
		t.Fatalf("status %s, interrupts %v: %v", res.Status, res.Interrupts, res.Err)
	}
	in := res.Interrupts[0]
	if in.Namespace != onlyNamespace(t, cp, "t", "research:") || in.Node != "research" || in.Field != "approval" {
		t.Errorf("interrupt %+v, want one of the child in its namespace research:<id>", in)
	}
	var sawInterrupt bool
	for _, ev := range rec.events {
		sawInterrupt = sawInterrupt || (ev.Type == "interrupt" && ev.Namespace == in.Namespace)
	}
	if !sawInterrupt {
		t.Error("no namespaced interrupt event")
	}
	// The parent waits: a run without resume reports the same interrupt.
	again, _ := run(t, eng, engine.Request{ThreadID: "t"})
	if again.Status != engine.StatusInterrupted || again.Interrupts[0].ID != in.ID {
		t.Fatalf("a run without an answer: %s %v", again.Status, again.Interrupts)
	}
	// An answer the child refuses leaves the interrupt pending in both.
	res, _ = run(t, eng, engine.Request{ThreadID: "t", Resume: &engine.Resume{Value: "maybe"}})
	if res.Status != engine.StatusError || !strings.Contains(res.Err.Error(), "maybe") {
		t.Fatalf("a refused answer: %s %v", res.Status, res.Err)
	}
	again, _ = run(t, eng, engine.Request{ThreadID: "t"})
	if again.Status != engine.StatusInterrupted || again.Interrupts[0].ID != in.ID {
		t.Fatalf("after a refused answer: %s %v", again.Status, again.Interrupts)
	}
	res, _ = run(t, eng, engine.Request{ThreadID: "t", Resume: &engine.Resume{Value: "yes"}})
	if res.Status != engine.StatusCompleted {
		t.Fatalf("resume: %s %v", res.Status, res.Err)
	}
	if got := res.State["report"]; got != "yes:A: bees" {
		t.Errorf("report = %v", got)
	}
	if n := count(uniq(t) + "-prepare"); n != 1 {
		t.Errorf("the child's prepare node ran %d times, want once", n)
	}
	// Resuming went on in the namespace the child stopped in.
	if got := childState(t, cp, "t", in.Namespace)["approval"]; got != "yes" {
		t.Errorf("child approval = %v", got)
	}
	if got := childNamespaces(t, cp, "t", ""); len(got) != 1 {
		t.Errorf("child namespaces %q, want the one the run started", got)
	}
}

func TestSubgraphMapRunsOneChildPerItem(t *testing.T) {
	g := loadSubgraphs(t, map[string]string{
		"parent.cue": `
state: {
	topics:  {type: "list<string>"}
	answers: {type: "list<string>", reducer: "append"}
}
start: "plan"
nodes: {
	plan:     {type: "enginetest", map: {over: "topics", to: "research", as: "topic"}}
	research: {type: "subgraph", config: {graph: "agents/researcher.cue", input: {question: "topic"}, output: {answers: "[answer]"}}, next: "END"}
}
`,
		"agents/researcher.cue": researcherChild,
	})
	cp := memory.New()
	eng := engine.New(g, cp, engine.Options{})
	res, _ := run(t, eng, engine.Request{ThreadID: "t", Input: map[string]any{"topics": []any{"ants", "bees", "cats"}}})
	if res.Status != engine.StatusCompleted {
		t.Fatalf("status %s: %v", res.Status, res.Err)
	}
	got := []string{}
	for _, a := range res.State["answers"].([]any) {
		got = append(got, a.(string))
	}
	sort.Strings(got)
	if want := []string{"A: ants", "A: bees", "A: cats"}; !reflect.DeepEqual(got, want) {
		t.Errorf("answers %v, want %v", got, want)
	}
	var questions []string
	for _, ns := range childNamespaces(t, cp, "t", "research:") {
		questions = append(questions, childState(t, cp, "t", ns)["question"].(string))
	}
	sort.Strings(questions)
	if want := []string{"ants", "bees", "cats"}; !reflect.DeepEqual(questions, want) {
		t.Errorf("the children's questions %v, want one child per topic %v", questions, want)
	}
}

func TestSubgraphFailureResumesWithoutRerunningFinishedChildNodes(t *testing.T) {
	name := uniq(t)
	g := loadSubgraphs(t, map[string]string{
		"parent.cue": `
state: {
	question: {type: "string"}
	answer:   {type: "string"}
}
start: "research"
nodes: {
	research: {type: "subgraph", config: {graph: "child.cue"}, next: "END"}
}
`,
		"child.cue": `
state: {
	question: {type: "string"}
	answer:   {type: "string"}
	notes:    {type: "string"}
}
start: "first"
nodes: {
	first:  {type: "enginetest", config: {counter: "` + name + `-first", write: {notes: "n"}}, next: "second"}
	second: {type: "enginetest", config: {counter: "` + name + `-second", fail_times: 1, exprs: {answer: "question + '!'"}}, next: "END"}
}
`,
	})
	cp := memory.New()
	eng := engine.New(g, cp, engine.Options{})
	res, _ := run(t, eng, engine.Request{ThreadID: "t", Input: map[string]any{"question": "q"}})
	if res.Status != engine.StatusError {
		t.Fatalf("status %s, want the child's failure", res.Status)
	}
	res, _ = run(t, eng, engine.Request{ThreadID: "t"})
	if res.Status != engine.StatusCompleted || res.State["answer"] != "q!" {
		t.Fatalf("continued run: %s %v %v", res.Status, res.State, res.Err)
	}
	if a, b := count(name+"-first"), count(name+"-second"); a != 1 || b != 2 {
		t.Errorf("first ran %d times (want 1), second %d (want 2)", a, b)
	}
	// A new turn runs the child afresh, in a namespace of its own.
	res, _ = run(t, eng, engine.Request{ThreadID: "t", Input: map[string]any{"question": "r"}})
	if res.State["answer"] != "r!" || count(name+"-first") != 2 {
		t.Errorf("second turn: answer %v, first ran %d times", res.State["answer"], count(name+"-first"))
	}
}

// TestNestedSubgraphInterrupt runs a subgraph inside a subgraph whose
// innermost node interrupts: the root thread waits with the interrupt under
// the nested namespace, and one resume from the root goes on at the bottom
// and back up through both levels, with children started afresh and with
// persistent ones.
func TestNestedSubgraphInterrupt(t *testing.T) {
	for _, tc := range []struct {
		name, config string
		// outer and inner are the namespaces' prefixes, or the namespaces
		// themselves when persistent.
		outer, inner string
	}{
		{name: "afresh", outer: "outer:", inner: "inner:"},
		{name: "persist", config: ", persist: true", outer: "outer:outer", inner: "inner:inner"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := loadSubgraphs(t, map[string]string{
				"parent.cue": `
state: answer: {type: "string"}
start: "outer"
nodes: outer: {type: "subgraph", config: {graph: "middle.cue", output: {answer: "'outer got ' + answer"}` + tc.config + `}, next: "END"}
`,
				"middle.cue": `
state: answer: {type: "string"}
start: "inner"
nodes: inner: {type: "subgraph", config: {graph: "leaf.cue"` + tc.config + `}, next: "END"}
`,
				"leaf.cue": `
state: answer: {type: "string"}
start: "ask"
nodes: ask: {type: "enginetest", config: {interrupt: "answer"}, next: "END"}
`,
			})
			cp := memory.New()
			eng := engine.New(g, cp, engine.Options{})
			res, _ := run(t, eng, engine.Request{ThreadID: "t", Input: map[string]any{}})
			if res.Status != engine.StatusInterrupted || len(res.Interrupts) != 1 {
				t.Fatalf("status %s %v %v", res.Status, res.Interrupts, res.Err)
			}
			ns := res.Interrupts[0].Namespace
			if outer, inner, _ := strings.Cut(ns, "|"); !strings.HasPrefix(outer, tc.outer) || !strings.HasPrefix(inner, tc.inner) || strings.Contains(inner, "|") {
				t.Errorf("namespace %q, want %s…|%s…", ns, tc.outer, tc.inner)
			}
			if _, err := cp.Latest(context.Background(), checkpoint.NamespacedThreadID("t", ns)); err != nil {
				t.Errorf("the leaf's checkpoints: %v", err)
			}
			res, _ = run(t, engine.New(g, cp, engine.Options{}), engine.Request{ThreadID: "t", Resume: &engine.Resume{Value: "42"}})
			if res.Status != engine.StatusCompleted || res.State["answer"] != "outer got 42" {
				t.Fatalf("resume: %s %v %v", res.Status, res.State, res.Err)
			}
		})
	}
}

// TestSubgraphMapInterruptsAnsweredOneByOne fans out over an interrupting
// subgraph: each child waits with its own interrupt; answering one keeps
// the thread waiting for the other, and answering the second finishes both.
func TestSubgraphMapInterruptsAnsweredOneByOne(t *testing.T) {
	g := loadSubgraphs(t, map[string]string{
		"parent.cue": `
state: {
	topics:  {type: "list<string>"}
	answers: {type: "list<string>", reducer: "append"}
}
start: "plan"
nodes: {
	plan: {type: "enginetest", map: {over: "topics", to: "ask", as: "topic"}}
	ask:  {type: "subgraph", config: {graph: "child.cue", input: {question: "topic"}, output: {answers: "[question + '=' + answer]"}}, next: "END"}
}
`,
		"child.cue": `
state: {
	question: {type: "string"}
	answer:   {type: "string"}
}
start: "ask"
nodes: ask: {type: "enginetest", config: {interrupt: "answer"}, next: "END"}
`,
	})
	cp := memory.New()
	eng := engine.New(g, cp, engine.Options{})
	res, _ := run(t, eng, engine.Request{ThreadID: "t", Input: map[string]any{"topics": []any{"a", "b"}}})
	if res.Status != engine.StatusInterrupted || len(res.Interrupts) != 2 {
		t.Fatalf("status %s, interrupts %v: %v", res.Status, res.Interrupts, res.Err)
	}
	// Each child waits in its own namespace; its question tells its item.
	byQuestion := map[any]string{}
	for _, in := range res.Interrupts {
		byQuestion[childState(t, cp, "t", in.Namespace)["question"]] = in.ID
	}
	first, second := byQuestion["a"], byQuestion["b"]
	if first == "" || second == "" || len(childNamespaces(t, cp, "t", "ask:")) != 2 {
		t.Fatalf("interrupts by question %v, children %q", byQuestion, childNamespaces(t, cp, "t", ""))
	}
	res, _ = run(t, eng, engine.Request{ThreadID: "t", Resume: &engine.Resume{InterruptID: second, Value: "2"}})
	if res.Status != engine.StatusInterrupted || len(res.Interrupts) != 1 || res.Interrupts[0].ID != first {
		t.Fatalf("after one answer: %s %v %v", res.Status, res.Interrupts, res.Err)
	}
	res, _ = run(t, eng, engine.Request{ThreadID: "t", Resume: &engine.Resume{InterruptID: first, Value: "1"}})
	if res.Status != engine.StatusCompleted {
		t.Fatalf("after both answers: %s %v", res.Status, res.Err)
	}
	if got, want := res.State["answers"], []any{"a=1", "b=2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("answers %v, want %v", got, want)
	}
}

// TestSubgraphStateAcrossTurns calls a subgraph whose child appends its
// input to a list, then waits for an answer, on two turns of one thread:
// by default the second call starts the child afresh (it sees only the
// second topic) in a namespace of its own; with persist: true it goes on
// from the state the first call left, in one namespace. Either way each
// answer reaches the call that asked.
func TestSubgraphStateAcrossTurns(t *testing.T) {
	for _, tc := range []struct {
		persist    bool
		second     string
		namespaces int
	}{
		{persist: false, second: "b:z", namespaces: 2},
		{persist: true, second: "a,b:z", namespaces: 1},
	} {
		t.Run(fmt.Sprintf("persist=%v", tc.persist), func(t *testing.T) {
			g := loadSubgraphs(t, map[string]string{
				"parent.cue": fmt.Sprintf(`
state: {
	topic:  {type: "string"}
	report: {type: "string"}
}
start: "sub"
nodes: sub: {type: "subgraph", config: {graph: "child.cue", persist: %v, input: {topic: "topic"}, output: {report: "join(seen, ',') + ':' + ok"}}, next: "END"}
`, tc.persist),
				"child.cue": `
state: {
	topic: {type: "string"}
	seen:  {type: "list<string>", reducer: "append"}
	ok:    {type: "string"}
}
start: "note"
nodes: {
	note: {type: "enginetest", config: {exprs: {seen: "[topic]"}}, next: "ask"}
	ask:  {type: "enginetest", config: {interrupt: "ok"}, next: "END"}
}
`,
			})
			cp := memory.New()
			eng := engine.New(g, cp, engine.Options{})
			var reports []any
			for _, turn := range []struct{ topic, answer string }{{"a", "y"}, {"b", "z"}} {
				res, _ := run(t, eng, engine.Request{ThreadID: "t", Input: map[string]any{"topic": turn.topic}})
				if res.Status != engine.StatusInterrupted || len(res.Interrupts) != 1 || !strings.HasPrefix(res.Interrupts[0].Namespace, "sub:") {
					t.Fatalf("turn %s: %s %v %v", turn.topic, res.Status, res.Interrupts, res.Err)
				}
				// A fresh engine, as a resume from another process.
				res, _ = run(t, engine.New(g, cp, engine.Options{}), engine.Request{ThreadID: "t", Resume: &engine.Resume{Value: turn.answer}})
				if res.Status != engine.StatusCompleted {
					t.Fatalf("resume of turn %s: %s %v", turn.topic, res.Status, res.Err)
				}
				reports = append(reports, res.State["report"])
			}
			if want := []any{"a:y", tc.second}; !reflect.DeepEqual(reports, want) {
				t.Errorf("reports %v, want %v", reports, want)
			}
			got := childNamespaces(t, cp, "t", "")
			if len(got) != tc.namespaces || (tc.persist && got[0] != "sub:sub") {
				t.Errorf("child namespaces %q, want %d", got, tc.namespaces)
			}
		})
	}
}

// TestSubgraphResumesChildStoppedBeforeTasksKeptNamespaces resumes a thread
// whose subgraph task waits inside its child as earlier versions stored it:
// the task without its namespace, the child in the namespace "node:task".
// The answer reaches that child.
func TestSubgraphResumesChildStoppedBeforeTasksKeptNamespaces(t *testing.T) {
	files := func(persist bool) map[string]string {
		return map[string]string{
			"parent.cue": fmt.Sprintf(`
state: ok: {type: "string"}
start: "sub"
nodes: sub: {type: "subgraph", config: {graph: "child.cue", persist: %v}, next: "END"}
`, persist),
			"child.cue": `
state: ok: {type: "string"}
start: "ask"
nodes: ask: {type: "enginetest", config: {interrupt: "ok"}, next: "END"}
`,
		}
	}
	ctx := context.Background()
	cp := memory.New()
	// A persistent node's child waits where every child waited before.
	res, _ := run(t, engine.New(loadSubgraphs(t, files(true)), cp, engine.Options{}), engine.Request{ThreadID: "t", Input: map[string]any{}})
	if res.Status != engine.StatusInterrupted || res.Interrupts[0].Namespace != "sub:sub" {
		t.Fatalf("status %s %v %v", res.Status, res.Interrupts, res.Err)
	}
	snap, err := cp.Latest(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	old := snap.Checkpoint
	old.ID, old.ParentID = checkpoint.NewID(), snap.ID
	old.Next = []checkpoint.Task{{ID: "sub", Node: "sub"}}
	if err := cp.Put(ctx, old, nil); err != nil {
		t.Fatal(err)
	}
	res, _ = run(t, engine.New(loadSubgraphs(t, files(false)), cp, engine.Options{}), engine.Request{ThreadID: "t", Resume: &engine.Resume{Value: "yes"}})
	if res.Status != engine.StatusCompleted || res.State["ok"] != "yes" {
		t.Fatalf("resume: %s %v %v", res.Status, res.State, res.Err)
	}
}

// failingChildStore is a checkpointer that cannot load the checkpoints of
// subgraphs, and says so naming the stored thread id, as storage errors do.
type failingChildStore struct{ checkpoint.Checkpointer }

func (f failingChildStore) Latest(ctx context.Context, thread string) (*checkpoint.Snapshot, error) {
	if checkpoint.IsChildThread(thread) {
		return nil, fmt.Errorf("load thread %s: storage unavailable", thread)
	}
	return f.Checkpointer.Latest(ctx, thread)
}

// TestSubgraphErrorNamesNamespace fails a nested child graph, in a node and
// in its storage: the error names the root thread and the children's
// namespaces readably, and never the stored id of a child's checkpoints
// with its separator.
func TestSubgraphErrorNamesNamespace(t *testing.T) {
	name := uniq(t)
	files := map[string]string{
		"parent.cue": `
state: {question: {type: "string"}}
start: "research"
nodes: {
	research: {type: "subgraph", config: {graph: "child.cue"}, next: "END"}
}
`,
		"child.cue": `
state: {question: {type: "string"}}
start: "inner"
nodes: {
	inner: {type: "subgraph", config: {graph: "grandchild.cue"}, next: "END"}
}
`,
		"grandchild.cue": `
state: {question: {type: "string"}}
start: "boom"
nodes: {
	boom: {type: "enginetest", config: {counter: "` + name + `", fail_times: 1}, next: "END"}
}
`,
	}
	for _, tc := range []struct {
		name string
		cp   checkpoint.Checkpointer
		want []string
	}{
		{"node fails", memory.New(), []string{
			`child.cue (thread "t", namespace research:`,
			`grandchild.cue (thread "t", namespace research:`,
			"|inner:", "failure 1 of boom",
		}},
		{"storage fails", failingChildStore{memory.New()}, []string{
			`child.cue (thread "t", namespace research:`, "load thread t: storage unavailable",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eng := engine.New(loadSubgraphs(t, files), tc.cp, engine.Options{})
			res, _ := run(t, eng, engine.Request{ThreadID: "t", Input: map[string]any{"question": "q"}})
			if res.Status != engine.StatusError || res.Err == nil {
				t.Fatalf("status %s, err %v: want the child's failure", res.Status, res.Err)
			}
			msg := res.Err.Error()
			for _, want := range tc.want {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not contain %q", msg, want)
				}
			}
			for _, bad := range []string{checkpoint.NamespaceSep, `\x1f`} {
				if strings.Contains(msg, bad) {
					t.Errorf("error %q shows the stored id of a child's checkpoints (%q)", msg, bad)
				}
			}
		})
	}
}
