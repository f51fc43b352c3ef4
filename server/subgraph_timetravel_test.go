package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// askerGraphs writes a graphs dir with "trip", whose subgraph node ask runs
// asker.cue: a child that asks two questions (a, then b), sharing topic, a
// and b with the parent.
func askerGraphs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"trip.cue": `dsl_version: "graphctl/v1"
name: "trip"
state: {
	topic:  {type: "string"}
	a:      {type: "string"}
	b:      {type: "string"}
	report: {type: "string"}
}
start: "pre"
nodes: {
	pre:  {type: "set", config: set: report: "'started'", next: "ask"}
	ask:  {type: "subgraph", config: graph: "parts/asker.cue", next: "done"}
	done: {type: "set", config: set: report: "topic + ':' + a + ',' + b", next: "END"}
}
`,
		"parts/asker.cue": `dsl_version: "graphctl/v1"
name: "asker"
state: {
	topic: {type: "string"}
	a:     {type: "string"}
	b:     {type: "string"}
}
start: "ask_a"
nodes: {
	ask_a: {type: "interrupt", config: {field: "a", message: "a?"}, next: "ask_b"}
	ask_b: {type: "interrupt", config: {field: "b", message: "b?"}, next: "END"}
}
`,
	}
	for name, body := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// subgraphTT drives one thread of the trip graph over HTTP.
type subgraphTT struct {
	t      *testing.T
	f      *fixture
	thread string
}

func (s subgraphTT) must(method, path string, body any) map[string]any {
	s.t.Helper()
	code, out := s.f.do(method, path, body)
	m, _ := out.(map[string]any)
	if code != 200 || m == nil {
		s.t.Fatalf("%s %s: %d %v", method, path, code, out)
	}
	return m
}

func (s subgraphTT) run(body map[string]any) map[string]any {
	s.t.Helper()
	body["assistant_id"] = "trip"
	return s.must("POST", "/threads/"+s.thread+"/runs/wait", body)
}

// waitsFor checks that the run's values wait for one interrupt of the
// child, for field, and returns its id and namespace.
func (s subgraphTT) waitsFor(values map[string]any, question string) (id, ns string) {
	s.t.Helper()
	list, _ := values["__interrupt__"].([]any)
	if len(list) != 1 {
		s.t.Fatalf("values %v, want one interrupt asking %s", values, question)
	}
	in := list[0].(map[string]any)
	if msg, _ := in["value"].(map[string]any)["message"].(string); msg != question {
		s.t.Fatalf("interrupt %v, want the question %q", in, question)
	}
	nss, _ := in["ns"].([]any)
	if len(nss) != 1 || !strings.HasPrefix(fmt.Sprint(nss[0]), "ask:") {
		s.t.Fatalf("interrupt %v, want it in the namespace ask:<id>", in)
	}
	return in["id"].(string), nss[0].(string)
}

func (s subgraphTT) history() []map[string]any {
	s.t.Helper()
	code, out := s.f.do("POST", "/threads/"+s.thread+"/history", map[string]any{"limit": 100})
	list, _ := out.([]any)
	if code != 200 {
		s.t.Fatalf("history: %d %v", code, out)
	}
	var states []map[string]any
	for _, st := range list {
		states = append(states, st.(map[string]any))
	}
	return states
}

// checkpointWhere returns the id of the oldest checkpoint of the history
// for which ok holds.
func checkpointWhere(t *testing.T, states []map[string]any, what string, ok func(st map[string]any) bool) string {
	t.Helper()
	id := ""
	for _, st := range states {
		if ok(st) {
			id = st["checkpoint"].(map[string]any)["checkpoint_id"].(string)
		}
	}
	if id == "" {
		t.Fatalf("no checkpoint %s in the history", what)
	}
	return id
}

func waitsAt(question string) func(map[string]any) bool {
	return func(st map[string]any) bool {
		list, _ := st["interrupts"].([]any)
		if len(list) != 1 {
			return false
		}
		v, _ := list[0].(map[string]any)["value"].(map[string]any)
		return v["message"] == question
	}
}

func beforeAsk(st map[string]any) bool {
	next, _ := st["next"].([]any)
	list, _ := st["interrupts"].([]any)
	return len(next) == 1 && next[0] == "ask" && len(list) == 0 && st["metadata"].(map[string]any)["source"] == "loop"
}

// newTrip runs a new thread of trip through both questions, answered x and y.
func newTrip(t *testing.T, f *fixture) subgraphTT {
	t.Helper()
	s := subgraphTT{t: t, f: f}
	s.thread = s.must("POST", "/threads", map[string]any{})["thread_id"].(string)
	s.waitsFor(s.run(map[string]any{"input": map[string]any{"topic": "bees"}}), "a?")
	s.waitsFor(s.run(map[string]any{"command": map[string]any{"resume": "x"}}), "b?")
	if got := s.run(map[string]any{"command": map[string]any{"resume": "y"}}); got["report"] != "bees:x,y" {
		t.Fatalf("first run: %v", got)
	}
	return s
}

// TestSubgraphTimeTravelOverHTTP replays and forks a thread whose subgraph
// asked two questions, through the HTTP API of a server on Badger.
func TestSubgraphTimeTravelOverHTTP(t *testing.T) {
	f := newGraphFixture(t, askerGraphs(t), nil)

	t.Run("replay from before the subgraph's step asks afresh", func(t *testing.T) {
		s := newTrip(t, f)
		states := s.history()
		var origNS string
		for _, st := range states {
			if waitsAt("a?")(st) {
				_, origNS = s.waitsFor(map[string]any{"__interrupt__": st["interrupts"]}, "a?")
			}
		}
		before := checkpointWhere(t, states, "before the subgraph", beforeAsk)
		_, ns := s.waitsFor(s.run(map[string]any{"input": nil, "checkpoint_id": before}), "a?")
		if ns == origNS {
			t.Errorf("the replay asks in the first run's namespace %s", ns)
		}
		s.waitsFor(s.run(map[string]any{"command": map[string]any{"resume": "p"}}), "b?")
		if got := s.run(map[string]any{"command": map[string]any{"resume": "q"}}); got["report"] != "bees:p,q" {
			t.Errorf("the replay's answers: %v", got)
		}
	})

	t.Run("replay while waiting in the subgraph goes on in its checkpoint", func(t *testing.T) {
		s := newTrip(t, f)
		waitB := checkpointWhere(t, s.history(), "waiting for b", waitsAt("b?"))
		s.waitsFor(s.run(map[string]any{"input": nil, "checkpoint": map[string]any{"checkpoint_id": waitB, "checkpoint_ns": ""}}), "b?")
		state := s.must("GET", "/threads/"+s.thread+"/state", nil)
		if state["metadata"].(map[string]any)["source"] != "fork" || state["parent_checkpoint"].(map[string]any)["checkpoint_id"] != waitB {
			t.Errorf("the thread's state after the replay: %v", state)
		}
		// One answer: the subgraph still had a = x.
		if got := s.run(map[string]any{"command": map[string]any{"resume": "z"}}); got["report"] != "bees:x,z" {
			t.Errorf("the answer to the replay: %v", got)
		}
	})

	t.Run("fork while waiting in the subgraph resumes it where it was", func(t *testing.T) {
		s := newTrip(t, f)
		waitA := checkpointWhere(t, s.history(), "waiting for a", waitsAt("a?"))
		s.must("POST", "/threads/"+s.thread+"/state", map[string]any{"values": map[string]any{"report": "forked"}, "checkpoint_id": waitA})
		s.waitsFor(s.run(map[string]any{"command": map[string]any{"resume": "m"}}), "b?")
		if got := s.run(map[string]any{"command": map[string]any{"resume": "n"}}); got["report"] != "bees:m,n" {
			t.Errorf("the fork: %v", got)
		}
	})
}

// TestUpdateSubgraphStateOverHTTP updates a waiting subgraph's state with
// the checkpoint config get_state with subgraphs shows for the parent's
// task, as LangGraph's update_state does.
func TestUpdateSubgraphStateOverHTTP(t *testing.T) {
	f := newGraphFixture(t, askerGraphs(t), nil)
	s := subgraphTT{t: t, f: f}
	s.thread = s.must("POST", "/threads", map[string]any{})["thread_id"].(string)
	s.waitsFor(s.run(map[string]any{"input": map[string]any{"topic": "bees"}}), "a?")
	state := s.must("GET", "/threads/"+s.thread+"/state?subgraphs=true", nil)
	child := state["tasks"].([]any)[0].(map[string]any)["state"].(map[string]any)
	conf := child["checkpoint"].(map[string]any)
	ns := conf["checkpoint_ns"].(string)
	childA := conf["checkpoint_id"].(string)

	// A node of the parent is not the subgraph's: refused, naming the
	// thread and the namespace readably.
	code, refused := f.do("POST", "/threads/"+s.thread+"/state", map[string]any{"values": map[string]any{}, "as_node": "done", "checkpoint": conf})
	want := `update state of subgraph namespace "` + ns + `" of thread "` + s.thread + `": graph "asker" has no node "done"`
	if msg := fmt.Sprint(refused); code != 400 || !strings.Contains(msg, want) || strings.Contains(msg, "\x1f") {
		t.Errorf("as_node of the parent: %d %s, want 400 with %q", code, msg, want)
	}

	code, refused = f.do("POST", "/threads/"+s.thread+"/state", map[string]any{"values": map[string]any{"a": "z"}, "checkpoint": map[string]any{"checkpoint_ns": ns, "checkpoint_id": "nope"}})
	want = `checkpoint "nope" in subgraph namespace "` + ns + `" of thread "` + s.thread + `" not found`
	if msg := fmt.Sprint(refused); code != 404 || !strings.Contains(msg, want) {
		t.Errorf("an unknown checkpoint of the subgraph: %d %s, want 404 with %q", code, msg, want)
	}

	// As the node that asks a: the subgraph counts a as answered, and the
	// parent no longer waits for it.
	out := s.must("POST", "/threads/"+s.thread+"/state", map[string]any{"values": map[string]any{"a": "preset"}, "as_node": "ask_a", "checkpoint": conf})
	got := out["checkpoint"].(map[string]any)
	if got["checkpoint_ns"] != ns || got["thread_id"] != s.thread || got["checkpoint_id"] == childA {
		t.Errorf("update answered checkpoint %v, want a new one in namespace %s", got, ns)
	}
	parent := s.must("GET", "/threads/"+s.thread+"/state", nil)
	if list, _ := parent["interrupts"].([]any); len(list) != 0 || fmt.Sprint(parent["next"]) != "[ask]" {
		t.Errorf("the parent after the update: next %v, interrupts %v", parent["next"], parent["interrupts"])
	}
	_, ns2 := s.waitsFor(s.run(map[string]any{"input": nil}), "b?")
	if ns2 != ns {
		t.Errorf("b asked in %s, want the namespace updated, %s", ns2, ns)
	}

	// Back to the subgraph's checkpoint that waited for a, taken as it is:
	// the parent waits for a again, and the answers go on from there.
	s.must("POST", "/threads/"+s.thread+"/state", map[string]any{"as_node": "__copy__", "checkpoint": map[string]any{"checkpoint_ns": ns, "checkpoint_id": childA}})
	s.waitsFor(s.run(map[string]any{"input": nil}), "a?")
	s.waitsFor(s.run(map[string]any{"command": map[string]any{"resume": "r"}}), "b?")
	if got := s.run(map[string]any{"command": map[string]any{"resume": "s"}}); got["report"] != "bees:r,s" {
		t.Errorf("after going back in the subgraph: %v", got)
	}

	for _, tc := range []struct {
		name   string
		method string
		path   string
		body   map[string]any
		code   int
		want   string
	}{
		{"a finished subgraph", "POST", "/state", map[string]any{"values": map[string]any{"a": "late"}, "checkpoint": map[string]any{"checkpoint_ns": ns}}, 409, "no task waits in the subgraph"},
		{"a namespace of no subgraph node", "POST", "/state", map[string]any{"values": map[string]any{}, "checkpoint": map[string]any{"checkpoint_ns": "done:1"}}, 404, `no subgraph at checkpoint namespace "done:1"`},
		{"a field of the parent only", "POST", "/state", map[string]any{"values": map[string]any{"report": "x"}, "checkpoint": map[string]any{"checkpoint_ns": ns}}, 400, `field "report" is not in the state of graph "asker"`},
		{"an unknown subgraph checkpoint", "POST", "/state/checkpoint", map[string]any{"checkpoint": map[string]any{"checkpoint_ns": ns, "checkpoint_id": "nope"}}, 404, `checkpoint "nope" in subgraph namespace "` + ns + `" of thread "` + s.thread + `" not found`},
		{"a run from a subgraph's checkpoint", "POST", "/runs/wait", map[string]any{"assistant_id": "trip", "input": nil, "checkpoint": map[string]any{"checkpoint_ns": ns, "checkpoint_id": childA}}, 422, `checkpoint "` + childA + `" in subgraph namespace "` + ns + `": a run starts from a checkpoint of the thread itself`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := f.do(tc.method, "/threads/"+s.thread+tc.path, tc.body)
			msg := fmt.Sprint(out)
			if code != tc.code || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\x1f") {
				t.Errorf("%d %s, want %d with %q", code, msg, tc.code, tc.want)
			}
		})
	}
}
