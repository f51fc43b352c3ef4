package server

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/graphctl/graphctl/server/sse"
)

// TestShutdownCutStreamEndsWithError checks that a client streaming a run
// that the server's shutdown cuts sees an error event last, not a normal end.
func TestShutdownCutStreamEndsWithError(t *testing.T) {
	f := newFixture(t, nil)
	f.do("POST", "/threads", map[string]any{"thread_id": "cut"})
	type result struct {
		code   int
		frames []sse.Frame
	}
	done := make(chan result, 1)
	go func() {
		code, frames := f.stream("/threads/cut/runs/stream", map[string]any{"assistant_id": "slow", "input": map[string]any{}})
		done <- result{code, frames}
	}()
	f.waitStarted("cut")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := f.srv.Runs().Shutdown(ctx); err == nil {
		t.Fatal("shutdown reported no cut run")
	}
	res := <-done
	if res.code != 200 || len(res.frames) == 0 {
		t.Fatalf("stream: %d, %d frames", res.code, len(res.frames))
	}
	last := res.frames[len(res.frames)-1]
	var data map[string]any
	json.Unmarshal(last.Data, &data)
	if last.Event != "error" || data["error"] != "ServerShutdown" || data["message"] == "" {
		t.Fatalf("last frame %s %s, want an error event (ServerShutdown)", last.Event, last.Data)
	}
	for _, fr := range res.frames {
		if fr.Event == "end" {
			t.Fatalf("a cut stream ended normally: %v", res.frames)
		}
	}
}
