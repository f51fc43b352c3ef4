package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/graphctl/graphctl/server/sse"
)

// A thread stream names each frame of a run RUN_ID:SEQ, the run's own
// sequence numbers, and ends the run with a run_done frame numbered one
// after its last (its end frame, which the thread stream does not show).
func TestThreadStreamFrameIDs(t *testing.T) {
	f := newFixture(t, nil)
	f.do("POST", "/threads", map[string]any{"thread_id": "ids"})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", f.http.URL+"/threads/ids/stream", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	frames := make(chan sse.Frame, 64)
	go func() {
		defer close(frames)
		sse.Parse(resp.Body, func(fr sse.Frame) error {
			frames <- fr
			if fr.Event == "run_done" {
				return context.Canceled
			}
			return nil
		})
	}()
	if code, _ := f.do("POST", "/threads/ids/runs/wait", map[string]any{"assistant_id": "echo", "input": map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}}}); code != 200 {
		t.Fatalf("wait: %d", code)
	}
	_, runs := f.do("GET", "/threads/ids/runs", nil)
	list, _ := runs.([]any)
	if len(list) != 1 {
		t.Fatalf("runs of the thread: %v", runs)
	}
	runID, _ := list[0].(map[string]any)["run_id"].(string)
	var got []sse.Frame
	for fr := range frames {
		got = append(got, fr)
	}
	if len(got) != 2 || got[0].Event != "metadata" || got[len(got)-1].Event != "run_done" {
		t.Fatalf("frames %v: want metadata first and run_done last", got)
	}
	// The waited-for run streams no mode: metadata (1), end (2, not shown).
	for i, seq := range []int{1, 3} {
		if want := runID + ":" + strconv.Itoa(seq); got[i].ID != want {
			t.Errorf("frame %d (%s): id %q, want %q", i, got[i].Event, got[i].ID, want)
		}
	}
	var done map[string]any
	json.Unmarshal(got[len(got)-1].Data, &done)
	if done["run_id"] != runID || done["status"] != "success" {
		t.Errorf("run_done %s", got[len(got)-1].Data)
	}
}
