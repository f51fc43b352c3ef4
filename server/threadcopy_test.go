package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/storage/postgres"
	"github.com/graphctl/graphctl/runtime/storage/postgres/pgtest"
	"github.com/graphctl/graphctl/server/graphs"
	"github.com/graphctl/graphctl/server/runs/pgqueue"
)

// These tests drive the thread endpoints that act on a thread as a whole
// (status, copy, delete, prune) through the HTTP API of a server on Badger
// and of one on PostgreSQL (its checkpointer, store and shared run queue,
// as graphctl serve --postgres wires them).

func init() { node.MustRegister(flakyType) }

// flakyType is a node that records each of its executions in the gate
// directory (THREAD.ran.LABEL) and, with fail set, fails while the file
// THREAD.fail exists there.
var flakyType = node.Type{
	Name:        "servertest_flaky",
	Description: "fails while a file says so (tests only)",
	Config:      `{label: string, fail?: bool}`,
	New: func(b node.Builder) (node.Node, error) {
		var cfg struct {
			Label string
			Fail  bool
		}
		if err := b.Decode(&cfg); err != nil {
			return nil, err
		}
		return node.Func(func(ctx context.Context, in *node.Input) (node.Update, error) {
			dir := os.Getenv(gateEnv)
			ran := filepath.Join(dir, in.ThreadID+".ran."+cfg.Label)
			f, err := os.OpenFile(ran, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return nil, err
			}
			f.WriteString("x")
			f.Close()
			if _, err := os.Stat(filepath.Join(dir, in.ThreadID+".fail")); err == nil && cfg.Fail {
				return nil, errors.New("told to fail")
			}
			return node.Update{"log": []any{cfg.Label}}, nil
		}), nil
	},
}

// flakyGraph runs fine and flaky in one step, after s.
const flakyGraph = `dsl_version: "graphctl/v1"
name: "pair"
state: log: {type: "list<string>", reducer: "append"}
start: "s"
nodes: {
	s:     {type: "servertest_flaky", config: label: "s", next: ["fine", "flaky"]}
	fine:  {type: "servertest_flaky", config: label: "fine", next: "END"}
	flaky: {type: "servertest_flaky", config: {label: "flaky", fail: true}, next: "END"}
}
`

// threadGraphs writes the trip graphs (askerGraphs), the slow graph and the
// pair graph into one graphs dir.
func threadGraphs(t *testing.T) string {
	t.Helper()
	dir := askerGraphs(t)
	slow, err := os.ReadFile("testdata/graphs/slow.cue")
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"slow.cue": string(slow), "pair.cue": flakyGraph} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// backendFixture serves dir on Badger, or on PostgreSQL with the shared run
// queue, as graphctl serve does with --postgres.
func backendFixture(t *testing.T, backend, dir string) *fixture {
	t.Helper()
	if backend == "badger" {
		gate := t.TempDir()
		t.Setenv(gateEnv, gate)
		return newGraphFixture(t, dir, nil)
	}
	db := pgtest.Open(t, postgres.Options{})
	gate := t.TempDir()
	t.Setenv(gateEnv, gate)
	return postgresFixture(t, db, dir, gate)
}

// postgresFixture serves dir on db with the shared run queue, as graphctl
// serve --postgres does; gate is the slow node's gate directory.
func postgresFixture(t testing.TB, db *postgres.DB, dir, gate string) *fixture {
	t.Helper()
	queue, err := pgqueue.New(db.Pool(), pgqueue.Options{Schema: db.Schema()})
	if err != nil {
		t.Fatal(err)
	}
	cp := db.Checkpointer()
	reg, diags, err := graphs.Open(dir, func(g *compile.Graph) (*engine.Engine, error) {
		return engine.New(g, cp, engine.Options{Store: db.Store()}), nil
	}, nil)
	if err != nil || reg == nil {
		t.Fatalf("open graphs: %v %v", err, diags)
	}
	cfg := Config{Graphs: reg, Checkpointer: cp, Store: db.Store(), RunQueue: queue, CronClaim: queue.FireCron}
	return serveFixture(t, cfg, gate, func() { queue.Close(); reg.Close() })
}

var backends = []string{"badger", "postgres"}

// storedTree lists the stored ids of a thread's checkpoints and of its
// subgraphs' (namespaces shown as "|"-joined), sorted.
func storedTree(t *testing.T, f *fixture, thread string) []string {
	t.Helper()
	infos, err := f.srv.cp.Threads(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, in := range infos {
		root, ns := checkpoint.SplitThreadID(in.ThreadID)
		if root == thread {
			out = append(out, "/"+ns)
		}
	}
	sort.Strings(out)
	return out
}

func threadStatusOf(t *testing.T, f *fixture, thread string) string {
	t.Helper()
	code, th := f.do("GET", "/threads/"+thread, nil)
	if code != 200 {
		t.Fatalf("get thread %s: %d %v", thread, code, th)
	}
	s, _ := field(th, "status").(string)
	return s
}

// searchedIDs returns the ids of the threads /threads/search finds with
// the given status, among ids.
func searchedIDs(t *testing.T, f *fixture, status string, ids ...string) []string {
	t.Helper()
	code, out := f.do("POST", "/threads/search", map[string]any{"status": status, "ids": ids, "limit": 100})
	list, ok := out.([]any)
	if code != 200 || !ok {
		t.Fatalf("search status %s: %d %v", status, code, out)
	}
	var found []string
	for _, th := range list {
		found = append(found, field(th, "thread_id").(string))
	}
	sort.Strings(found)
	return found
}

func countWith(t *testing.T, f *fixture, status string, ids ...string) float64 {
	t.Helper()
	code, out := f.do("POST", "/threads/count", map[string]any{"status": status, "ids": ids})
	n, ok := out.(float64)
	if code != 200 || !ok {
		t.Fatalf("count status %s: %d %v", status, code, out)
	}
	return n
}

// TestThreadBusyWhileARunWaits: as on LangGraph's Agent Server, a thread
// is busy from the moment a run is created on it until the run ends, while
// the run waits for its start time (after_seconds) or behind another run
// (enqueue); GET /threads/{id}, /threads/search and /threads/count agree.
func TestThreadBusyWhileARunWaits(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			f := backendFixture(t, backend, threadGraphs(t))
			newThread := func() string {
				_, th := f.do("POST", "/threads", map[string]any{})
				return field(th, "thread_id").(string)
			}
			checkStatus := func(thread, want string, others ...string) {
				t.Helper()
				if got := threadStatusOf(t, f, thread); got != want {
					t.Errorf("thread %s is %q, want %q", thread, got, want)
				}
				ids := append([]string{thread}, others...)
				for _, st := range []string{"idle", "busy"} {
					found := searchedIDs(t, f, st, ids...)
					has := strings.Contains(strings.Join(found, " "), thread)
					if has != (st == want) {
						t.Errorf("search with status %s found %v (thread %s is %s)", st, found, thread, want)
					}
					if n := countWith(t, f, st, thread); (n == 1) != (st == want) {
						t.Errorf("count with status %s: %v (thread %s is %s)", st, n, thread, want)
					}
				}
			}

			t.Run("scheduled run", func(t *testing.T) {
				thread, other := newThread(), newThread()
				checkStatus(thread, "idle", other)
				code, run := f.do("POST", "/threads/"+thread+"/runs", map[string]any{"assistant_id": "trip",
					"input": map[string]any{"topic": "later"}, "after_seconds": 3600})
				if code != 200 || field(run, "status") != "pending" {
					t.Fatalf("scheduled run: %d %v", code, run)
				}
				checkStatus(thread, "busy", other)
				checkStatus(other, "idle", thread)
				runID := field(run, "run_id").(string)
				if code, out := f.do("POST", "/threads/"+thread+"/runs/"+runID+"/cancel", nil); code/100 != 2 {
					t.Fatalf("cancel: %d %v", code, out)
				}
				checkStatus(thread, "idle", other)
			})

			t.Run("scheduled run on an interrupted thread", func(t *testing.T) {
				thread := newThread()
				if code, out := f.do("POST", "/threads/"+thread+"/runs/wait", map[string]any{"assistant_id": "trip",
					"input": map[string]any{"topic": "bees"}}); code != 200 {
					t.Fatalf("run: %d %v", code, out)
				}
				checkStatus(thread, "interrupted")
				_, run := f.do("POST", "/threads/"+thread+"/runs", map[string]any{"assistant_id": "trip",
					"command": map[string]any{"resume": "x"}, "after_seconds": 3600})
				checkStatus(thread, "busy")
				f.do("POST", "/threads/"+thread+"/runs/"+field(run, "run_id").(string)+"/cancel", nil)
				checkStatus(thread, "interrupted")
			})

			t.Run("run queued behind another", func(t *testing.T) {
				thread := newThread()
				body := map[string]any{"assistant_id": "slow", "input": map[string]any{}}
				if code, out := f.do("POST", "/threads/"+thread+"/runs", body); code != 200 {
					t.Fatalf("first run: %d %v", code, out)
				}
				f.waitStarted(thread)
				body["multitask_strategy"] = "enqueue"
				code, second := f.do("POST", "/threads/"+thread+"/runs", body)
				if code != 200 || field(second, "status") != "pending" {
					t.Fatalf("queued run: %d %v", code, second)
				}
				checkStatus(thread, "busy")
				f.release(thread)
				if code, out := f.do("GET", "/threads/"+thread+"/runs/"+field(second, "run_id").(string)+"/join", nil); code != 200 {
					t.Fatalf("join: %d %v", code, out)
				}
				checkStatus(thread, "idle")
			})
		})
	}
}

// trip drives one thread of the trip graph (askerGraphs) on f.
type trip struct{ subgraphTT }

func newTripThread(t *testing.T, f *fixture) trip {
	t.Helper()
	s := subgraphTT{t: t, f: f}
	s.thread = s.must("POST", "/threads", map[string]any{})["thread_id"].(string)
	return trip{s}
}

func (tr trip) on(thread string) trip {
	tr.thread = thread
	return tr
}

func (tr trip) copy() trip {
	tr.t.Helper()
	th := tr.must("POST", "/threads/"+tr.thread+"/copy", nil)
	return tr.on(th["thread_id"].(string))
}

// checkpointIDs lists the thread's history as checkpoint ids, newest first.
func (tr trip) checkpointIDs() []string {
	tr.t.Helper()
	var ids []string
	for _, st := range tr.history() {
		ids = append(ids, st["checkpoint"].(map[string]any)["checkpoint_id"].(string))
	}
	return ids
}

// TestCopyThreadWaitingInASubgraph copies a thread whose subgraph waits for
// an answer: the copy has the subgraph's checkpoints, its answers continue
// the subgraph where it waited, and the original is untouched by them.
func TestCopyThreadWaitingInASubgraph(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			f := backendFixture(t, backend, threadGraphs(t))
			orig := newTripThread(t, f)
			orig.waitsFor(orig.run(map[string]any{"input": map[string]any{"topic": "bees"}}), "a?")
			_, nsA := orig.waitsFor(orig.run(map[string]any{"command": map[string]any{"resume": "x"}}), "b?")
			before := orig.checkpointIDs()
			origTree := storedTree(t, f, orig.thread)
			if len(origTree) != 2 {
				t.Fatalf("stored checkpoints of the original: %q, want the thread's and one subgraph's", origTree)
			}

			cp := orig.copy()
			if got := storedTree(t, f, cp.thread); !reflect.DeepEqual(got, origTree) {
				t.Errorf("stored checkpoints of the copy: %q, want the original's namespaces %q", got, origTree)
			}
			if got := cp.checkpointIDs(); !reflect.DeepEqual(got, before) {
				t.Errorf("the copy's history %v, want the original's %v", got, before)
			}
			if st := threadStatusOf(t, f, cp.thread); st != "interrupted" {
				t.Errorf("the copy is %s, want interrupted", st)
			}
			state := cp.must("GET", "/threads/"+cp.thread+"/state?subgraphs=true", nil)
			child, _ := field(state["tasks"].([]any)[0], "state").(map[string]any)
			if field(child, "values", "a") != "x" || field(child, "checkpoint", "thread_id") != cp.thread || field(child, "checkpoint", "checkpoint_ns") != nsA {
				t.Errorf("the copy's subgraph state: %v", child)
			}

			// The copy resumes inside the subgraph, which remembers a.
			if got := cp.run(map[string]any{"command": map[string]any{"resume": "y"}}); got["report"] != "bees:x,y" {
				t.Errorf("the copy's answer: %v", got)
			}
			if st := threadStatusOf(t, f, cp.thread); st != "idle" {
				t.Errorf("the copy after its answers is %s", st)
			}

			// The original still waits for b, with its history as it was.
			if got := orig.checkpointIDs(); !reflect.DeepEqual(got, before) {
				t.Errorf("the original's history changed: %v, was %v", got, before)
			}
			if st := threadStatusOf(t, f, orig.thread); st != "interrupted" {
				t.Errorf("the original is %s, want interrupted", st)
			}
			if got := orig.run(map[string]any{"command": map[string]any{"resume": "z"}}); got["report"] != "bees:x,z" {
				t.Errorf("the original's answer: %v", got)
			}
		})
	}
}

// TestCopyThreadKeepsPendingWrites copies a thread whose last step failed
// after one of its two tasks had finished: the copy keeps the finished
// task's saved update and the failure, so it shows the error, and going on
// runs only the task that failed.
func TestCopyThreadKeepsPendingWrites(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			f := backendFixture(t, backend, threadGraphs(t))
			ran := func(thread, label string) int {
				b, _ := os.ReadFile(filepath.Join(f.gate, thread+".ran."+label))
				return len(b)
			}
			_, th := f.do("POST", "/threads", map[string]any{})
			orig := field(th, "thread_id").(string)
			os.WriteFile(filepath.Join(f.gate, orig+".fail"), nil, 0o644)
			if code, out := f.do("POST", "/threads/"+orig+"/runs/wait", map[string]any{"assistant_id": "pair", "input": map[string]any{}}); code/100 == 5 {
				t.Fatalf("run: %d %v", code, out)
			}
			if st := threadStatusOf(t, f, orig); st != "error" {
				t.Fatalf("the original after its failure is %s", st)
			}
			latest, err := f.srv.cp.Latest(context.Background(), orig)
			if err != nil || len(latest.Pending) != 2 {
				t.Fatalf("pending writes of the original: %+v (%v), want fine's update and flaky's error", latest, err)
			}

			_, copied := f.do("POST", "/threads/"+orig+"/copy", nil)
			cp := field(copied, "thread_id").(string)
			if st := field(copied, "status"); st != "error" {
				t.Errorf("the copy is %v, want error", st)
			}
			got, err := f.srv.cp.Latest(context.Background(), cp)
			if err != nil || got.ID != latest.ID || !reflect.DeepEqual(got.Pending, latest.Pending) {
				t.Fatalf("the copy's latest checkpoint %+v (%v), want %s with the original's pending writes %+v", got, err, latest.ID, latest.Pending)
			}
			_, origState := f.do("GET", "/threads/"+orig+"/state", nil)
			_, copyState := f.do("GET", "/threads/"+cp+"/state", nil)
			if fmt.Sprint(field(origState, "tasks")) != fmt.Sprint(field(copyState, "tasks")) {
				t.Errorf("the copy's tasks %v, want the original's %v", field(copyState, "tasks"), field(origState, "tasks"))
			}

			// Going on (no input): the copy does not fail, and its finished
			// task is not run again.
			code, out := f.do("POST", "/threads/"+cp+"/runs/wait", map[string]any{"assistant_id": "pair", "input": nil})
			if log := fmt.Sprint(field(out, "log")); code != 200 || log != "[s fine flaky]" {
				t.Errorf("the copy going on: %d %v", code, out)
			}
			if ran(cp, "fine") != 0 || ran(cp, "flaky") != 1 {
				t.Errorf("on the copy fine ran %d times (want 0), flaky %d (want 1)", ran(cp, "fine"), ran(cp, "flaky"))
			}
			if st := threadStatusOf(t, f, orig); st != "error" {
				t.Errorf("the original after the copy went on is %s", st)
			}
			if after, err := f.srv.cp.Latest(context.Background(), orig); err != nil || after.ID != latest.ID || len(after.Pending) != 2 {
				t.Errorf("the original changed: %+v (%v)", after, err)
			}
		})
	}
}

// keeperGraphs adds to threadGraphs "keeper", whose subgraph node keeps its
// child's state from one run to the next (persist): the child appends each
// run's topic to seen, and the parent reports them all.
func keeperGraphs(t *testing.T) string {
	t.Helper()
	dir := threadGraphs(t)
	for name, body := range map[string]string{
		"keeper.cue": `dsl_version: "graphctl/v1"
name: "keeper"
state: {
	topic:  {type: "string"}
	report: {type: "string"}
}
start: "sub"
nodes: sub: {type: "subgraph", config: {graph: "parts/tally.cue", persist: true, input: topic: "topic", output: report: "join(seen, ',')"}, next: "END"}
`,
		"parts/tally.cue": `dsl_version: "graphctl/v1"
name: "tally"
state: {
	topic: {type: "string"}
	seen:  {type: "list<string>", reducer: "append"}
}
start: "note"
nodes: note: {type: "set", config: set: seen: "[topic]", next: "END"}
`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestDeleteAndPruneThreadsWithSubgraphs: deleting a thread (DELETE, or
// prune with strategy delete) deletes its subgraphs' checkpoints too;
// prune with keep_latest keeps the newest checkpoint of the thread and of
// each subgraph namespace it can still go on in (one waiting for an
// answer, one that keeps its state across runs) and deletes the finished
// subgraphs of earlier steps. The checkpointer's stored threads show what
// is left.
func TestDeleteAndPruneThreadsWithSubgraphs(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			f := backendFixture(t, backend, keeperGraphs(t))
			// finished: one trip answered in full; waiting: a second trip
			// waits for b after a first one finished.
			finished := func() trip {
				tr := newTripThread(t, f)
				tr.waitsFor(tr.run(map[string]any{"input": map[string]any{"topic": "bees"}}), "a?")
				tr.waitsFor(tr.run(map[string]any{"command": map[string]any{"resume": "x"}}), "b?")
				if got := tr.run(map[string]any{"command": map[string]any{"resume": "y"}}); got["report"] != "bees:x,y" {
					t.Fatalf("trip: %v", got)
				}
				return tr
			}
			waiting := func() (trip, string) {
				tr := finished()
				tr.waitsFor(tr.run(map[string]any{"input": map[string]any{"topic": "ants"}}), "a?")
				_, ns := tr.waitsFor(tr.run(map[string]any{"command": map[string]any{"resume": "p"}}), "b?")
				if tree := storedTree(t, f, tr.thread); len(tree) != 3 {
					t.Fatalf("stored checkpoints of a thread with two trips: %q", tree)
				}
				return tr, ns
			}
			gone := func(thread string) {
				t.Helper()
				if tree := storedTree(t, f, thread); len(tree) != 0 {
					t.Errorf("left behind of thread %s: %q", thread, tree)
				}
				if code, _ := f.do("GET", "/threads/"+thread, nil); code != 404 {
					t.Errorf("thread %s after its deletion: %d", thread, code)
				}
			}

			t.Run("delete", func(t *testing.T) {
				tr, _ := waiting()
				if code, out := f.do("DELETE", "/threads/"+tr.thread, nil); code != 204 {
					t.Fatalf("delete: %d %v", code, out)
				}
				gone(tr.thread)
			})

			t.Run("prune delete", func(t *testing.T) {
				a, _ := waiting()
				b := finished()
				out := a.must("POST", "/threads/prune", map[string]any{"thread_ids": []string{a.thread, b.thread}, "strategy": "delete"})
				if out["pruned_count"] != float64(2) {
					t.Errorf("prune: %v", out)
				}
				gone(a.thread)
				gone(b.thread)
			})

			t.Run("prune keep_latest", func(t *testing.T) {
				w, ns := waiting()
				done := finished()
				keep := newTripThread(t, f)
				for i, topic := range []string{"a", "b"} {
					got := keep.must("POST", "/threads/"+keep.thread+"/runs/wait", map[string]any{"assistant_id": "keeper", "input": map[string]any{"topic": topic}})
					if want := []string{"a", "a,b"}[i]; got["report"] != want {
						t.Fatalf("keeper run %d: %v, want %s", i, got, want)
					}
				}
				out := w.must("POST", "/threads/prune", map[string]any{"thread_ids": []string{w.thread, done.thread, keep.thread}, "strategy": "keep_latest"})
				if out["pruned_count"] != float64(3) {
					t.Errorf("prune: %v", out)
				}
				for thread, want := range map[string][]string{
					w.thread:    {"/", "/" + ns},
					done.thread: {"/"},
					keep.thread: {"/", "/sub:sub"},
				} {
					if got := storedTree(t, f, thread); !reflect.DeepEqual(got, want) {
						t.Errorf("stored checkpoints of thread %s after keep_latest: %q, want %q", thread, got, want)
					}
					for _, ns := range want {
						id := checkpoint.NamespacedThreadID(thread, strings.TrimPrefix(ns, "/"))
						if list, err := f.srv.cp.History(context.Background(), id, checkpoint.ListOptions{}); err != nil || len(list) != 1 {
							t.Errorf("checkpoints of %q after keep_latest: %d (%v), want 1", ns, len(list), err)
						}
					}
				}
				// Each goes on where it was.
				if got := w.run(map[string]any{"command": map[string]any{"resume": "q"}}); got["report"] != "ants:p,q" {
					t.Errorf("the waiting thread after keep_latest: %v", got)
				}
				got := keep.must("POST", "/threads/"+keep.thread+"/runs/wait", map[string]any{"assistant_id": "keeper", "input": map[string]any{"topic": "c"}})
				if got["report"] != "a,b,c" {
					t.Errorf("the keeper after keep_latest: %v, want a,b,c", got)
				}
			})
		})
	}
}

// TestThreadsWithTheJSClient runs .ci/langgraph-sdk/threads.mjs: the busy
// status of a thread whose run waits for its start time, and the copy of a
// thread waiting inside a subgraph, through the official client.
func TestThreadsWithTheJSClient(t *testing.T) {
	sdk := requireJSClient(t)
	f := newGraphFixture(t, askerGraphs(t), nil)
	sdk.run(t, "threads.mjs", f.http.URL)
}

// nestedGraphs writes "nest" and "nestkeep": a subgraph (middle) whose own
// subgraph (leaf) asks for the answer; in nestkeep both subgraph nodes keep
// their child's state from one run to the next (persist).
func nestedGraphs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{"parts/leaf.cue": `dsl_version: "graphctl/v1"
name: "leaf"
state: answer: {type: "string"}
start: "ask"
nodes: ask: {type: "interrupt", config: {field: "answer", message: "answer?"}, next: "END"}
`}
	for name, persist := range map[string]string{"nest": "false", "nestkeep": "true"} {
		files[name+".cue"] = fmt.Sprintf(`dsl_version: "graphctl/v1"
name: %q
state: answer: {type: "string"}
start: "outer"
nodes: outer: {type: "subgraph", config: {graph: "parts/%s-middle.cue", persist: %s, output: answer: "'outer got ' + answer"}, next: "END"}
`, name, name, persist)
		files["parts/"+name+"-middle.cue"] = fmt.Sprintf(`dsl_version: "graphctl/v1"
name: "%s-middle"
state: answer: {type: "string"}
start: "inner"
nodes: inner: {type: "subgraph", config: {graph: "leaf.cue", persist: %s}, next: "END"}
`, name, persist)
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

// TestNestedSubgraphsCopyAndPrune: a thread whose second run waits in a
// subgraph of a subgraph is copied (the copy's answer goes on at the
// bottom, through both levels) and pruned with keep_latest (the
// namespaces of the first run go, unless the subgraphs keep their state
// across runs; the original's answer goes on as well).
func TestNestedSubgraphsCopyAndPrune(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			f := backendFixture(t, backend, nestedGraphs(t))
			for _, tc := range []struct {
				graph              string
				before, afterwards int // stored threads of the tree
			}{
				{graph: "nest", before: 5, afterwards: 3},
				{graph: "nestkeep", before: 3, afterwards: 3},
			} {
				t.Run(tc.graph, func(t *testing.T) {
					tr := newTripThread(t, f)
					run := func(thread string, body map[string]any) map[string]any {
						t.Helper()
						body["assistant_id"] = tc.graph
						return tr.must("POST", "/threads/"+thread+"/runs/wait", body)
					}
					waits := func(values map[string]any) {
						t.Helper()
						list, _ := values["__interrupt__"].([]any)
						if len(list) != 1 || field(list[0], "value", "message") != "answer?" {
							t.Fatalf("values %v, want the leaf's question", values)
						}
					}
					waits(run(tr.thread, map[string]any{"input": map[string]any{}}))
					if got := run(tr.thread, map[string]any{"command": map[string]any{"resume": "1"}}); got["answer"] != "outer got 1" {
						t.Fatalf("first run: %v", got)
					}
					waits(run(tr.thread, map[string]any{"input": map[string]any{}}))
					if tree := storedTree(t, f, tr.thread); len(tree) != tc.before {
						t.Fatalf("stored threads of the tree: %q, want %d", tree, tc.before)
					}

					cp := tr.copy()
					if got := run(cp.thread, map[string]any{"command": map[string]any{"resume": "2"}}); got["answer"] != "outer got 2" {
						t.Errorf("the copy's answer: %v", got)
					}
					tr.must("POST", "/threads/prune", map[string]any{"thread_ids": []string{tr.thread}, "strategy": "keep_latest"})
					tree := storedTree(t, f, tr.thread)
					if len(tree) != tc.afterwards {
						t.Errorf("stored threads after keep_latest: %q, want %d", tree, tc.afterwards)
					}
					for _, ns := range tree {
						id := checkpoint.NamespacedThreadID(tr.thread, strings.TrimPrefix(ns, "/"))
						if list, err := f.srv.cp.History(context.Background(), id, checkpoint.ListOptions{}); err != nil || len(list) != 1 {
							t.Errorf("checkpoints of %q after keep_latest: %d (%v), want 1", ns, len(list), err)
						}
					}
					if got := run(tr.thread, map[string]any{"command": map[string]any{"resume": "3"}}); got["answer"] != "outer got 3" {
						t.Errorf("the original's answer after keep_latest: %v", got)
					}
				})
			}
		})
	}
}
