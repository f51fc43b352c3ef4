package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/graphctl/graphctl/server/sse"
)

// Frames reach a run's streams as the run emits them, not when something
// else wakes the stream: the task the run waits in reaches the run's own
// stream before the task is let go, and the frames emitted after a stream
// of one mode joined reach it as they come. Keep-alive comments, which
// would let a stream that missed a frame see it, never come here.
func TestStreamFramesArriveWhileTheRunWaits(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.KeepAlive = time.Hour })
	f.do("POST", "/threads", map[string]any{"thread_id": "live"})
	body, _ := json.Marshal(map[string]any{"assistant_id": "slow", "input": map[string]any{}, "stream_mode": []string{"values", "debug"}})
	own := openStream(t, "POST", f.http.URL+"/threads/live/runs/stream", body)
	f.waitStarted("live")

	isTask := func(fr sse.Frame) bool {
		return fr.Event == "debug" && bytes.Contains(fr.Data, []byte(`"type":"task"`)) && bytes.Contains(fr.Data, []byte(`"name":"work"`))
	}
	ownFrames := own.until(t, isTask)
	run := strings.TrimPrefix(own.resp.Header.Get("Content-Location"), "/threads/live/runs/")
	joined := openStream(t, "GET", f.http.URL+"/threads/live/runs/"+run+"/stream?stream_mode=debug", nil)
	joinedFrames := joined.until(t, isTask)
	f.release("live")
	isEnd := func(fr sse.Frame) bool { return fr.Event == "end" }
	ownFrames = append(ownFrames, own.until(t, isEnd)...)
	joinedFrames = append(joinedFrames, joined.until(t, isEnd)...)

	if ownFrames[0].Event != "metadata" || ownFrames[len(ownFrames)-1].Event != "end" {
		t.Fatalf("own stream: %v, want metadata first and end last", eventNames(ownFrames))
	}
	var wantJoined []sse.Frame
	for i, fr := range ownFrames {
		if fr.ID != strconv.Itoa(i+1) {
			t.Fatalf("own stream: frame %d has id %q, want %d (%v)", i, fr.ID, i+1, eventNames(ownFrames))
		}
		if fr.Event != "values" {
			wantJoined = append(wantJoined, fr)
		}
	}
	if len(joinedFrames) != len(wantJoined) {
		t.Fatalf("joined stream of debug frames: %v, want %v", eventNames(joinedFrames), eventNames(wantJoined))
	}
	for i, fr := range joinedFrames {
		if fr.ID != wantJoined[i].ID || fr.Event != wantJoined[i].Event || !bytes.Equal(fr.Data, wantJoined[i].Data) {
			t.Fatalf("joined stream: frame %d is %s %s, want %s %s", i, fr.ID, fr.Event, wantJoined[i].ID, wantJoined[i].Event)
		}
	}
}

// liveStream reads an event stream's frames as they come.
type liveStream struct {
	resp   *http.Response
	frames chan sse.Frame
}

func openStream(t *testing.T, method, url string, body []byte) *liveStream {
	t.Helper()
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %s", method, url, resp.Status)
	}
	t.Cleanup(func() { resp.Body.Close() })
	s := &liveStream{resp: resp, frames: make(chan sse.Frame, 64)}
	go func() {
		defer close(s.frames)
		sse.Parse(bufio.NewReader(resp.Body), func(fr sse.Frame) error { s.frames <- fr; return nil })
	}()
	return s
}

// next returns the next frame; a stream that sends none for a long while
// has missed one.
func (s *liveStream) next(t *testing.T) sse.Frame {
	t.Helper()
	select {
	case fr, ok := <-s.frames:
		if !ok {
			t.Fatal("the stream ended early")
		}
		return fr
	case <-time.After(30 * time.Second):
		t.Fatal("no frame in 30s: the stream was not woken for a frame the run emitted")
	}
	return sse.Frame{}
}

// until returns the frames up to the first one that is last.
func (s *liveStream) until(t *testing.T, last func(sse.Frame) bool) []sse.Frame {
	t.Helper()
	var out []sse.Frame
	for {
		fr := s.next(t)
		out = append(out, fr)
		if last(fr) {
			return out
		}
	}
}
