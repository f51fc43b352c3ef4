package server

import (
	"strings"
	"testing"
)

// A run that has nothing left to do (the thread's graph has ended, as when a
// run is resumed after its replica died once every step was done) still
// streams the values it ends with.
func TestRunWithNothingToDoStreamsItsValues(t *testing.T) {
	f := newFixture(t, nil)
	if code, out := f.do("POST", "/threads", map[string]any{"thread_id": "th"}); code != 200 {
		t.Fatalf("create thread: %d %v", code, out)
	}
	if code, out := f.do("POST", "/threads/th/runs/wait", map[string]any{"assistant_id": "echo", "input": msgInput("hi")}); code != 200 {
		t.Fatalf("first run: %d %v", code, out)
	}
	code, frames := f.stream("/threads/th/runs/stream", map[string]any{"assistant_id": "echo", "input": nil, "stream_mode": []string{"values"}})
	if code != 200 {
		t.Fatalf("second run: %d", code)
	}
	var events []string
	for _, fr := range frames {
		events = append(events, fr.Event)
	}
	if got := strings.Join(events, " "); got != "metadata values end" {
		t.Fatalf("events %q, want metadata values end", got)
	}
	if v := lastOf(frames, "values"); !strings.Contains(v, "You said: hi") {
		t.Fatalf("values frame %s lacks the thread's state", v)
	}
}
