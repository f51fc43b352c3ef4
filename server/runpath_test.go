package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/server/graphs"
)

// TestWebhookRunAndAPIRunTakeTurns: a run started by a webhook (a Telegram
// update) goes through the run manager, so an API run with
// multitask_strategy enqueue on the same thread waits for it and then runs,
// and reject is refused as for any busy thread.
func TestWebhookRunAndAPIRunTakeTurns(t *testing.T) {
	f := newFixture(t, nil)
	const th = "tg:1"
	input := map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}}
	type outcome struct {
		res    *engine.Result
		err    error
		events []string
	}
	done := make(chan outcome, 1)
	go func() {
		var events []string
		res, err := f.srv.RunOn(context.Background(), "slow", th, input, func(ev event.Event) { events = append(events, ev.Type) })
		done <- outcome{res, err, events}
	}()
	f.waitStarted(th)

	code, body := f.do(http.MethodPost, "/threads/"+th+"/runs", map[string]any{"assistant_id": "slow", "input": input, "multitask_strategy": "enqueue"})
	if code != http.StatusOK || field(body, "status") != "pending" {
		t.Fatalf("enqueued API run on a thread a webhook run holds: %d %v; want 200, pending", code, body)
	}
	apiRun, _ := field(body, "run_id").(string)
	if code, body := f.do(http.MethodPost, "/threads/"+th+"/runs", map[string]any{"assistant_id": "slow", "input": input, "multitask_strategy": "reject"}); code != http.StatusConflict {
		t.Fatalf("rejecting API run on the busy thread: %d %v; want 409", code, body)
	}
	f.release(th)
	var out outcome
	select {
	case out = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the webhook run did not end")
	}
	if out.err != nil || out.res == nil || out.res.Status != engine.StatusCompleted {
		t.Fatalf("webhook run: %+v %v", out.res, out.err)
	}
	if !slices.Contains(out.events, event.NodeEnd) || out.events[len(out.events)-1] != event.Done {
		t.Errorf("the webhook's sink got %v; want the run's engine events ending with done", out.events)
	}
	if code, body := f.do(http.MethodGet, "/threads/"+th+"/runs/"+apiRun+"/join", nil); code != http.StatusOK {
		t.Fatalf("join the API run: %d %v", code, body)
	}
	code, list := f.do(http.MethodGet, "/threads/"+th+"/runs", nil)
	runs, _ := list.([]any)
	if code != http.StatusOK || len(runs) != 2 {
		t.Fatalf("runs of the thread: %d %v; want the webhook's and the API's", code, list)
	}
	for _, r := range runs {
		if field(r, "status") != "success" {
			t.Errorf("run %v ended %v, want success", field(r, "run_id"), field(r, "status"))
		}
	}
	_, state := f.do(http.MethodGet, "/threads/"+th+"/state", nil)
	if got := field(state, "values", "log"); len(got.([]any)) != 2 {
		t.Errorf("the thread's log is %v; want both runs' work, one after the other", got)
	}
}

// TestLargeIntegerSurvivesEveryPath sends 2^53+1 as input through the API
// and a webhook and reads it back from the run result, the thread state and
// its history: one decoder, numbers keep their digits.
func TestLargeIntegerSurvivesEveryPath(t *testing.T) {
	dir := t.TempDir()
	src := "dsl_version: \"graphctl/v1\"\nname: \"big\"\nstate: {\n\tmessages: {type: \"messages\"}\n\tn: {type: \"int\"}\n\tm: {type: \"int\"}\n}\nstart: \"copy\"\nnodes: copy: {type: \"set\", config: set: m: \"n\", next: \"END\"}\n"
	if err := os.WriteFile(filepath.Join(dir, "big.cue"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := openServed(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(gateEnv, t.TempDir())
	reg, diags, err := graphs.Open(dir, func(g *compile.Graph) (*engine.Engine, error) {
		return ws.Engine(g, engine.Options{}), nil
	}, nil)
	if err != nil || reg == nil {
		t.Fatalf("open graphs: %v %v", err, diags)
	}
	f := wrapFixture(t, ws, reg, nil)
	const big = "9007199254740993" // 2^53 + 1: a float64 makes it ...992
	raw := func(method, path, body string) string {
		req, _ := http.NewRequest(method, f.http.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
		return string(b)
	}
	raw(http.MethodPost, "/threads", `{"thread_id": "t-big"}`)
	waited := raw(http.MethodPost, "/threads/t-big/runs/wait", `{"assistant_id": "big", "input": {"n": `+big+`}}`)
	state := raw(http.MethodGet, "/threads/t-big/state", "")
	history := raw(http.MethodPost, "/threads/t-big/history", `{}`)
	res, err := f.srv.RunOn(context.Background(), "big", "hook-big", map[string]any{"n": json.Number(big)}, nil)
	if err != nil || res.Status != engine.StatusCompleted {
		t.Fatalf("webhook run: %+v %v", res, err)
	}
	hookState := raw(http.MethodGet, "/threads/hook-big/state", "")
	for name, body := range map[string]string{"run result": waited, "thread state": state, "history": history, "webhook run's state": hookState} {
		if n := strings.Count(body, big); n < 2 {
			t.Errorf("%s carries %d copies of %s (want n and m):\n%.400s", name, n, big, body)
		}
	}
	var exact bytes.Buffer
	json.Compact(&exact, []byte(waited))
	if strings.Contains(exact.String(), "9007199254740992") {
		t.Errorf("a path rounded %s through a float64: %s", big, exact.String())
	}
}

func TestRunRequestNamesOnlyWhatTheGraphHas(t *testing.T) {
	f := newFixture(t, nil)
	f.do(http.MethodPost, "/threads", map[string]any{"thread_id": "rq"})
	tests := []struct {
		name string
		body map[string]any
		want string
	}{
		{"unknown interrupt_before node", map[string]any{"interrupt_before": []string{"nope"}}, `interrupt_before names node "nope"`},
		{"unknown interrupt_after node", map[string]any{"interrupt_after": "nope"}, `interrupt_after names node "nope"`},
		{"negative recursion limit", map[string]any{"config": map[string]any{"recursion_limit": -1}}, "config.recursion_limit must be a positive integer"},
		{"fractional recursion limit", map[string]any{"config": map[string]any{"configurable": map[string]any{"recursion_limit": 2.5}}}, "config.configurable.recursion_limit must be a positive integer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := map[string]any{"assistant_id": "echo", "input": map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}}}
			for k, v := range tt.body {
				body[k] = v
			}
			code, out := f.do(http.MethodPost, "/threads/rq/runs", body)
			if code != http.StatusUnprocessableEntity || !strings.Contains(fmt.Sprint(out), tt.want) {
				t.Fatalf("%d %v; want 422 saying %q", code, out, tt.want)
			}
		})
	}
	if code, out := f.do(http.MethodPost, "/threads/rq/runs/wait", map[string]any{"assistant_id": "echo", "interrupt_before": "*",
		"input": map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}}}); code != http.StatusOK {
		t.Fatalf("interrupt_before \"*\": %d %v", code, out)
	}
}
