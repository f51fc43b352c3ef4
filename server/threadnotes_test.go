package server

import (
	"net/http"
	"testing"
)

// A thread the server remembers as noted is checked again once its record
// changes: deleted, it answers 404; its metadata changed, the next run
// names its graph again.
func TestNotedThreadsForgetChangedRecords(t *testing.T) {
	for _, tt := range []struct {
		name     string
		change   func(f *fixture, thread string)
		wantCode int
		wantMeta string // metadata.graph_id after the second run
	}{
		{"deleted", func(f *fixture, thread string) {
			if code, out := f.do("DELETE", "/threads/"+thread, nil); code != http.StatusNoContent && code != http.StatusOK {
				t.Fatalf("delete thread: %d %v", code, out)
			}
		}, http.StatusNotFound, ""},
		{"metadata patched", func(f *fixture, thread string) {
			if code, out := f.do("PATCH", "/threads/"+thread, map[string]any{"metadata": map[string]any{"graph_id": "other"}}); code != http.StatusOK {
				t.Fatalf("patch thread: %d %v", code, out)
			}
		}, http.StatusOK, "echo"},
		{"unchanged", func(*fixture, string) {}, http.StatusOK, "echo"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			thread := "noted-" + newID()
			if code, out := f.do("POST", "/threads", map[string]any{"thread_id": thread}); code != http.StatusOK {
				t.Fatalf("create thread: %d %v", code, out)
			}
			run := func() int {
				code, _ := f.do("POST", "/threads/"+thread+"/runs/wait", map[string]any{"assistant_id": "echo", "input": msgInput("hi")})
				return code
			}
			if code := run(); code != http.StatusOK {
				t.Fatalf("first run: %d", code)
			}
			tt.change(f, thread)
			if code := run(); code != tt.wantCode {
				t.Fatalf("run after the change: %d, want %d", code, tt.wantCode)
			}
			if tt.wantMeta == "" {
				return
			}
			_, out := f.do("GET", "/threads/"+thread, nil)
			meta, _ := out.(map[string]any)["metadata"].(map[string]any)
			if meta["graph_id"] != tt.wantMeta {
				t.Errorf("metadata.graph_id = %v, want %q", meta["graph_id"], tt.wantMeta)
			}
		})
	}
}
