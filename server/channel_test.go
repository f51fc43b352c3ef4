package server

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime/event"
)

// TestChannelWiring: the server binds a channel to its graph: the channel's
// webhook is mounted under /webhooks/NAME (outside API keys), its loop starts
// with Start, and its runs go through the run manager (each has a run record)
// and return once the run has ended; a channel naming a graph that is not
// served is refused, naming both.
func TestChannelWiring(t *testing.T) {
	started := make(chan ChannelRuns, 1)
	var hookRuns ChannelRuns
	ch := Channel{Name: "bot", Graph: "echo", Bind: func(r ChannelRuns) (http.Handler, func(context.Context) error) {
		hookRuns = r
		hook := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			var text strings.Builder
			err := r.Run(req.Context(), "bot:1", map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}}, func(ev event.Event) {
				if ev.Type == event.Done {
					text.WriteString("done")
				}
			})
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.Write([]byte(text.String()))
		})
		return hook, func(ctx context.Context) error {
			started <- r
			<-ctx.Done()
			return nil
		}
	}}
	f := newFixture(t, func(c *Config) { c.Channels = []Channel{ch} })
	select {
	case <-started:
	case <-t.Context().Done():
		t.Fatal("the channel's loop did not start")
	}
	if hookRuns == nil {
		t.Fatal("Bind was not called")
	}
	code, body := f.do("POST", "/webhooks/bot", map[string]any{})
	if code != http.StatusOK || body != "done" {
		t.Fatalf("webhook: %d %v, want 200 done", code, body)
	}
	_, list := f.do("GET", "/threads/bot:1/runs", nil)
	if runs, _ := list.([]any); len(runs) != 1 || field(runs[0], "status") != "success" {
		t.Fatalf("the channel's run is not on record: %v", list)
	}
	_, state := f.do("GET", "/threads/bot:1/state", nil)
	if msgs, _ := field(state, "values", "messages").([]any); len(msgs) != 2 {
		t.Fatalf("thread state after the channel's run: %v", state)
	}
	if pending, err := hookRuns.Pending(t.Context(), "bot:1"); err != nil || len(pending) != 0 {
		t.Fatalf("pending interrupts: %v %v", pending, err)
	}

	bad := ch
	bad.Graph = "nosuch"
	_, err := New(Config{Graphs: f.srv.reg, Checkpointer: f.srv.cp, Store: f.srv.st, Channels: []Channel{bad}})
	if err == nil || !strings.Contains(err.Error(), `"bot"`) || !strings.Contains(err.Error(), `"nosuch"`) {
		t.Fatalf("a channel on a graph not served: %v", err)
	}
}

// TestNoChatGraph: the application chooses the chat graph; a server given
// none answers the chat endpoints with a 404 that says so, and serves the
// rest of the API.
func TestNoChatGraph(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.ChatGraph = "" })
	code, body := f.do("POST", "/chat", map[string]any{"message": "hi", "thread_id": "c1"})
	if code != http.StatusNotFound || !strings.Contains(mustJSON(body), "no chat graph") {
		t.Fatalf("/chat without a chat graph: %d %v, want 404 saying there is no chat graph", code, body)
	}
	if code, _ := f.do("POST", "/threads", map[string]any{"thread_id": "t1"}); code != http.StatusOK {
		t.Fatalf("the API without a chat graph: %d", code)
	}
}
