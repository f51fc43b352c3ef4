package server

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/server/graphs"
)

func msgInput(text string) map[string]any {
	return map[string]any{"messages": []any{map[string]any{"role": "user", "content": text}}}
}

func TestRunRecordsGraphAndAssistantInThreadMetadata(t *testing.T) {
	f := newFixture(t, nil)
	f.do("POST", "/threads", map[string]any{"thread_id": "m1", "metadata": map[string]any{"owner": "ann"}})
	if code, body := f.do("POST", "/threads/m1/runs/wait", map[string]any{"assistant_id": "echo", "input": msgInput("hi")}); code != 200 {
		t.Fatalf("run: %d %v", code, body)
	}
	_, th := f.do("GET", "/threads/m1", nil)
	if field(th, "metadata", "graph_id") != "echo" || field(th, "metadata", "assistant_id") != "echo" || field(th, "metadata", "owner") != "ann" {
		t.Fatalf("thread metadata %v", field(th, "metadata"))
	}
	// if_not_exists=create makes the thread with them (and the run's metadata).
	f.do("POST", "/threads/m2/runs/wait", map[string]any{"assistant_id": "echo", "input": msgInput("hi"), "if_not_exists": "create", "metadata": map[string]any{"src": "x"}})
	_, list := f.do("POST", "/threads/search", map[string]any{"metadata": map[string]any{"graph_id": "echo"}})
	got := []string{}
	for _, t := range list.([]any) {
		got = append(got, field(t, "thread_id").(string))
	}
	if strings.Join(got, ",") != "m2,m1" {
		t.Fatalf("threads of graph echo: %v", got)
	}
}

func TestThreadEndpoints(t *testing.T) {
	f := newFixture(t, nil)
	f.do("POST", "/threads", map[string]any{"thread_id": "t1", "metadata": map[string]any{"a": 1}})
	f.do("POST", "/threads/t1/runs/wait", map[string]any{"assistant_id": "echo", "input": msgInput("first")})
	f.do("POST", "/threads/t1/runs/wait", map[string]any{"assistant_id": "echo", "input": msgInput("second")})

	// PATCH merges metadata.
	code, th := f.do("PATCH", "/threads/t1", map[string]any{"metadata": map[string]any{"b": "two"}})
	if code != 200 || field(th, "metadata", "a") != float64(1) || field(th, "metadata", "b") != "two" {
		t.Fatalf("patch: %d %v", code, th)
	}
	if code, _ := f.do("PATCH", "/threads/nope", map[string]any{"metadata": map[string]any{}}); code != 404 {
		t.Fatalf("patch a missing thread: %d", code)
	}

	// Copy: a new thread with the same state and history.
	code, cp := f.do("POST", "/threads/t1/copy", nil)
	if code != 200 {
		t.Fatalf("copy: %d %v", code, cp)
	}
	cid := field(cp, "thread_id").(string)
	if cid == "t1" || field(cp, "metadata", "b") != "two" {
		t.Fatalf("copy %v", cp)
	}
	_, h1 := f.do("POST", "/threads/t1/history", map[string]any{"limit": 100})
	_, h2 := f.do("POST", "/threads/"+cid+"/history", map[string]any{"limit": 100})
	if len(h1.([]any)) != len(h2.([]any)) || len(h2.([]any)) < 2 {
		t.Fatalf("history lengths %d and %d", len(h1.([]any)), len(h2.([]any)))
	}
	if mustJSON(field(h1.([]any)[0], "values")) != mustJSON(field(h2.([]any)[0], "values")) {
		t.Fatal("the copy's state differs")
	}
	// The copy runs on its own.
	f.do("POST", "/threads/"+cid+"/runs/wait", map[string]any{"assistant_id": "echo", "input": msgInput("third")})
	_, s1 := f.do("GET", "/threads/t1/state", nil)
	if n := len(field(s1, "values", "messages").([]any)); n != 4 {
		t.Fatalf("the original changed with its copy: %d messages", n)
	}

	// Count and search by values and status.
	if _, n := f.do("POST", "/threads/count", map[string]any{}); n != float64(2) {
		t.Fatalf("count %v", n)
	}
	if _, n := f.do("POST", "/threads/count", map[string]any{"metadata": map[string]any{"b": "two"}}); n != float64(2) {
		t.Fatalf("count by metadata %v", n)
	}
	byValues := map[string]any{"values": map[string]any{"messages": []any{map[string]any{"content": "You said: third"}}}}
	_, found := f.do("POST", "/threads/search", byValues)
	if len(found.([]any)) != 1 || field(found.([]any)[0], "thread_id") != cid {
		t.Fatalf("search by values: %v", found)
	}
	if _, n := f.do("POST", "/threads/count", byValues); n != float64(1) {
		t.Fatalf("count by values %v", n)
	}
	if code, _ := f.do("POST", "/threads/search", map[string]any{"status": "sleeping"}); code != 422 {
		t.Fatalf("unknown status: %d", code)
	}

	// patchState merges metadata into the latest checkpoint.
	if code, body := f.do("PATCH", "/threads/t1/state", map[string]any{"metadata": map[string]any{"reviewed": true}}); code != 204 {
		t.Fatalf("patch state: %d %v", code, body)
	}
	_, st := f.do("GET", "/threads/t1/state", nil)
	if field(st, "metadata", "reviewed") != true || len(field(st, "values", "messages").([]any)) != 4 {
		t.Fatalf("state after patch: %v", st)
	}

	// Prune: keep_latest keeps the state, delete removes the thread.
	code, pr := f.do("POST", "/threads/prune", map[string]any{"thread_ids": []string{"t1", "missing"}, "strategy": "keep_latest"})
	if code != 200 || field(pr, "pruned_count") != float64(1) {
		t.Fatalf("prune keep_latest: %d %v", code, pr)
	}
	_, h := f.do("POST", "/threads/t1/history", map[string]any{"limit": 100})
	_, st = f.do("GET", "/threads/t1/state", nil)
	if len(h.([]any)) != 1 || len(field(st, "values", "messages").([]any)) != 4 {
		t.Fatalf("after keep_latest: %d checkpoints, state %v", len(h.([]any)), st)
	}
	if _, pr := f.do("POST", "/threads/prune", map[string]any{"thread_ids": []string{cid}}); field(pr, "pruned_count") != float64(1) {
		t.Fatalf("prune delete: %v", pr)
	}
	if code, _ := f.do("GET", "/threads/"+cid, nil); code != 404 {
		t.Fatalf("pruned thread: %d", code)
	}
	if code, _ := f.do("POST", "/threads/prune", map[string]any{"thread_ids": []string{"t1"}, "strategy": "shred"}); code != 422 {
		t.Fatalf("unknown strategy: %d", code)
	}
}

func TestThreadBusyWhileRunning(t *testing.T) {
	f := newFixture(t, nil)
	f.do("POST", "/threads", map[string]any{"thread_id": "b1"})
	f.do("POST", "/threads", map[string]any{"thread_id": "b2"})
	f.do("POST", "/threads/b1/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{}})
	f.waitStarted("b1")
	_, busy := f.do("POST", "/threads/search", map[string]any{"status": "busy"})
	if len(busy.([]any)) != 1 || field(busy.([]any)[0], "thread_id") != "b1" {
		t.Fatalf("busy threads %v", busy)
	}
	if _, n := f.do("POST", "/threads/count", map[string]any{"status": "idle"}); n != float64(1) {
		t.Fatalf("idle count %v", n)
	}
	f.release("b1")
}

func TestThreadCreateWithSupersteps(t *testing.T) {
	f := newFixture(t, nil)
	body := map[string]any{"thread_id": "s1", "metadata": map[string]any{"graph_id": "echo"}, "supersteps": []any{
		map[string]any{"updates": []any{map[string]any{"values": msgInput("hello"), "as_node": "__start__"}}},
		map[string]any{"updates": []any{map[string]any{"values": map[string]any{"note": "n1"}, "as_node": "answer"}}},
	}}
	code, th := f.do("POST", "/threads", body)
	if code != 200 || field(th, "values", "note") != "n1" || len(field(th, "values", "messages").([]any)) != 1 {
		t.Fatalf("create with supersteps: %d %v", code, th)
	}
	_, h := f.do("POST", "/threads/s1/history", map[string]any{})
	if len(h.([]any)) != 2 {
		t.Fatalf("%d checkpoints, want 2", len(h.([]any)))
	}
	for _, tt := range []struct {
		body map[string]any
		want string
	}{
		{map[string]any{"supersteps": []any{map[string]any{"updates": []any{map[string]any{"values": map[string]any{}, "as_node": "x"}}}}}, "graph_id"},
		{map[string]any{"metadata": map[string]any{"graph_id": "echo"}, "supersteps": []any{map[string]any{"updates": []any{map[string]any{"values": map[string]any{}, "as_node": "nonode"}}}}}, "nonode"},
		{map[string]any{"metadata": map[string]any{"graph_id": "echo"}, "supersteps": []any{map[string]any{"updates": []any{map[string]any{"values": map[string]any{"bogus": 1}, "as_node": "answer"}}}}}, "bogus"},
	} {
		code, body := f.do("POST", "/threads", tt.body)
		if code != 422 || !strings.Contains(mustJSON(body), tt.want) {
			t.Errorf("%v: %d %v, want 422 naming %s", tt.body, code, body, tt.want)
		}
	}
}

func TestAssistantsCRUD(t *testing.T) {
	f := newFixture(t, nil)
	code, a := f.do("POST", "/assistants", map[string]any{"graph_id": "echo", "name": "Polite echo",
		"config": map[string]any{"recursion_limit": 7, "configurable": map[string]any{"tone": "polite"}}, "metadata": map[string]any{"team": "x"}})
	if code != 200 || field(a, "version") != float64(1) || field(a, "graph_id") != "echo" || field(a, "name") != "Polite echo" {
		t.Fatalf("create: %d %v", code, a)
	}
	id := field(a, "assistant_id").(string)
	if code, _ := f.do("POST", "/assistants", map[string]any{"graph_id": "echo", "assistant_id": id}); code != 409 {
		t.Fatalf("create twice: %d", code)
	}
	if code, same := f.do("POST", "/assistants", map[string]any{"graph_id": "echo", "assistant_id": id, "if_exists": "do_nothing"}); code != 200 || field(same, "name") != "Polite echo" {
		t.Fatalf("do_nothing: %d %v", code, same)
	}
	if code, _ := f.do("POST", "/assistants", map[string]any{"graph_id": "nope"}); code != 404 {
		t.Fatalf("unknown graph: %d", code)
	}

	// A run of the assistant runs its graph and is recorded as its.
	code, out := f.do("POST", "/threads/x1/runs/wait", map[string]any{"assistant_id": id, "input": msgInput("yo"), "if_not_exists": "create"})
	if code != 200 || !strings.Contains(mustJSON(out), "You said: yo") {
		t.Fatalf("run the assistant: %d %v", code, out)
	}
	_, th := f.do("GET", "/threads/x1", nil)
	if field(th, "metadata", "assistant_id") != id || field(th, "metadata", "graph_id") != "echo" {
		t.Fatalf("thread metadata %v", field(th, "metadata"))
	}
	_, runsList := f.do("GET", "/threads/x1/runs", nil)
	if field(runsList.([]any)[0], "assistant_id") != id || field(runsList.([]any)[0], "kwargs", "config", "recursion_limit") != float64(7) {
		t.Fatalf("run record %v", runsList)
	}

	// Update makes version 2; metadata is merged.
	code, up := f.do("PATCH", "/assistants/"+id, map[string]any{"metadata": map[string]any{"stage": "beta"}, "name": "Echo v2"})
	if code != 200 || field(up, "version") != float64(2) || field(up, "metadata", "team") != "x" || field(up, "metadata", "stage") != "beta" {
		t.Fatalf("update: %d %v", code, up)
	}
	_, vs := f.do("POST", "/assistants/"+id+"/versions", map[string]any{})
	if len(vs.([]any)) != 2 || field(vs.([]any)[0], "version") != float64(2) || field(vs.([]any)[1], "name") != "Polite echo" {
		t.Fatalf("versions %v", vs)
	}
	code, back := f.do("POST", "/assistants/"+id+"/latest", map[string]any{"version": 1})
	if code != 200 || field(back, "version") != float64(1) || field(back, "name") != "Polite echo" {
		t.Fatalf("set latest: %d %v", code, back)
	}
	if code, _ := f.do("POST", "/assistants/"+id+"/latest", map[string]any{"version": 9}); code != 404 {
		t.Fatalf("set a missing version: %d", code)
	}

	// Search and count see stored and graph assistants.
	_, n := f.do("POST", "/assistants/count", map[string]any{"graph_id": "echo"})
	if n != float64(2) {
		t.Fatalf("count of echo assistants: %v", n)
	}
	_, found := f.do("POST", "/assistants/search", map[string]any{"metadata": map[string]any{"team": "x"}})
	if len(found.([]any)) != 1 || field(found.([]any)[0], "assistant_id") != id {
		t.Fatalf("search by metadata: %v", found)
	}
	_, sys := f.do("POST", "/assistants/search", map[string]any{"metadata": map[string]any{"created_by": "system"}, "limit": 1})
	if len(sys.([]any)) != 1 {
		t.Fatalf("limit 1: %v", sys)
	}
	if code, sg := f.do("GET", "/assistants/"+id+"/subgraphs", nil); code != 200 || mustJSON(sg) != "{}" {
		t.Fatalf("subgraphs: %d %v", code, sg)
	}
	if code, _ := f.do("GET", "/assistants/"+id+"/graph", nil); code != 200 {
		t.Fatalf("graph of a stored assistant: %d", code)
	}

	// Delete, with its threads.
	if code, _ := f.do("DELETE", "/assistants/"+id+"?delete_threads=true", nil); code != 204 {
		t.Fatalf("delete: %d", code)
	}
	if code, _ := f.do("GET", "/assistants/"+id, nil); code != 404 {
		t.Fatalf("get deleted: %d", code)
	}
	if code, _ := f.do("GET", "/threads/x1", nil); code != 404 {
		t.Fatalf("its thread survived: %d", code)
	}
	if code, _ := f.do("DELETE", "/assistants/echo", nil); code != 409 {
		t.Fatalf("delete a graph's own assistant: %d", code)
	}
}

func TestAssistantsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	f := newDirFixture(t, dir)
	_, a := f.do("POST", "/assistants", map[string]any{"graph_id": "echo", "assistant_id": "keep-me", "metadata": map[string]any{"k": "v"}})
	f.do("PATCH", "/assistants/keep-me", map[string]any{"name": "renamed"})
	f.close()
	g := newDirFixture(t, dir)
	code, got := g.do("GET", "/assistants/keep-me", nil)
	if code != 200 || field(got, "name") != "renamed" || field(got, "version") != float64(2) || field(got, "created_at") != field(a, "created_at") {
		t.Fatalf("after restart: %d %v", code, got)
	}
}

func TestRunDeleteBatchAndCancelMany(t *testing.T) {
	f := newFixture(t, nil)
	f.do("POST", "/threads", map[string]any{"thread_id": "r1"})
	_, run := f.do("POST", "/threads/r1/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{}})
	id := field(run, "run_id").(string)
	f.waitStarted("r1")
	if code, _ := f.do("DELETE", "/threads/r1/runs/"+id, nil); code != 409 {
		t.Fatalf("delete a running run: %d", code)
	}
	// Cancel many by status.
	if code, body := f.do("POST", "/runs/cancel", map[string]any{"status": "running"}); code != 204 {
		t.Fatalf("cancel running: %d %v", code, body)
	}
	f.do("GET", "/threads/r1/runs/"+id+"/join", nil)
	_, rec := f.do("GET", "/threads/r1/runs/"+id, nil)
	if field(rec, "status") != "interrupted" {
		t.Fatalf("cancelled run: %v", rec)
	}
	// Cancelling a finished run leaves it as it is (202; 204 with wait).
	if code, body := f.do("POST", "/threads/r1/runs/"+id+"/cancel", nil); code != 202 {
		t.Fatalf("cancel a finished run: %d %v", code, body)
	}
	if code, body := f.do("POST", "/threads/r1/runs/"+id+"/cancel?wait=1", nil); code != 204 {
		t.Fatalf("cancel a finished run and wait: %d %v", code, body)
	}
	if _, rec := f.do("GET", "/threads/r1/runs/"+id, nil); field(rec, "status") != "interrupted" {
		t.Fatalf("a finished run after a cancel: %v", rec)
	}
	if code, _ := f.do("DELETE", "/threads/r1/runs/"+id, nil); code != 204 {
		t.Fatalf("delete: %d", code)
	}
	if code, _ := f.do("GET", "/threads/r1/runs/"+id, nil); code != 404 {
		t.Fatalf("get deleted run: %d", code)
	}
	if code, _ := f.do("DELETE", "/threads/r1/runs/"+id, nil); code != 404 {
		t.Fatalf("delete twice: %d", code)
	}
	for _, bad := range []map[string]any{{}, {"status": "sleeping"}, {"status": "all", "run_ids": []string{"x"}}} {
		if code, _ := f.do("POST", "/runs/cancel", bad); code != 422 {
			t.Errorf("cancel %v: %d, want 422", bad, code)
		}
	}
	if code, _ := f.do("POST", "/runs/cancel", map[string]any{"thread_id": "r1", "run_ids": []string{"nope"}}); code != 404 {
		t.Fatalf("cancel an unknown run: %d", code)
	}

	// Batch: stateless background runs.
	code, batch := f.do("POST", "/runs/batch", []any{
		map[string]any{"assistant_id": "echo", "input": msgInput("a")},
		map[string]any{"assistant_id": "echo", "input": msgInput("b")},
	})
	if code != 200 || len(batch.([]any)) != 2 || field(batch.([]any)[0], "run_id") == field(batch.([]any)[1], "run_id") {
		t.Fatalf("batch: %d %v", code, batch)
	}
	code, bad := f.do("POST", "/runs/batch", []any{map[string]any{"assistant_id": "echo"}, map[string]any{"assistant_id": "nope"}})
	if code != 404 || !strings.Contains(fmt.Sprint(field(bad, "detail")), "run 1 of the batch") {
		t.Fatalf("batch with a bad item: %d %v", code, bad)
	}
}

// dirFixture is a fixture on a given data dir that can be closed and opened
// again (a restart).
type dirFixture struct {
	*fixture
	close func()
}

func newDirFixture(t *testing.T, dir string) *dirFixture {
	t.Helper()
	gate := t.TempDir()
	t.Setenv(gateEnv, gate)
	ws, err := openServed(dir)
	if err != nil {
		t.Fatal(err)
	}
	reg, diags, err := graphs.Open("testdata/graphs", func(g *compile.Graph) (*engine.Engine, error) {
		return ws.Engine(g, engine.Options{}), nil
	}, nil)
	if err != nil || reg == nil {
		t.Fatalf("open graphs: %v %v", err, diags)
	}
	srv, err := New(Config{Graphs: reg, Checkpointer: ws.Checkpointer(), Store: ws.Store(), ChatGraph: "chatbot"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	srv.Start(ctx)
	hs := httptest.NewServer(srv.Handler())
	var once sync.Once
	closeFn := func() {
		once.Do(func() {
			stop()
			hs.Close()
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			srv.runs.Shutdown(sctx)
			srv.Wait()
			reg.Close()
			ws.Close()
		})
	}
	t.Cleanup(closeFn)
	return &dirFixture{fixture: &fixture{t: t, srv: srv, http: hs, gate: gate}, close: closeFn}
}
