package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/graphctl/graphctl/server/sse"
)

func TestMultitaskStrategies(t *testing.T) {
	tests := []struct {
		strategy     string
		secondStatus int
		firstStatus  string // the first run's final status; "" when its record is gone
		wantLogCount int    // "work" entries in the thread's log at the end
	}{
		{"reject", 409, "success", 1},
		{"enqueue", 200, "success", 2},
		{"interrupt", 200, "interrupted", 1},
		{"rollback", 200, "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.strategy, func(t *testing.T) {
			f := newFixture(t, nil)
			th := "mt-" + tt.strategy
			f.do("POST", "/threads", map[string]any{"thread_id": th})
			code, first := f.do("POST", "/threads/"+th+"/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{}})
			if code != 200 {
				t.Fatalf("first run: %d %v", code, first)
			}
			firstID := field(first, "run_id").(string)
			f.waitStarted(th)
			code, second := f.do("POST", "/threads/"+th+"/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{}, "multitask_strategy": tt.strategy})
			if code != tt.secondStatus {
				t.Fatalf("second run: %d, want %d (%v)", code, tt.secondStatus, second)
			}
			f.release(th)
			f.do("GET", "/threads/"+th+"/runs/"+firstID+"/join", nil)
			if code == 200 {
				f.do("GET", "/threads/"+th+"/runs/"+field(second, "run_id").(string)+"/join", nil)
			}
			code, rec := f.do("GET", "/threads/"+th+"/runs/"+firstID, nil)
			if tt.firstStatus == "" {
				if code != 404 {
					t.Fatalf("rolled-back run still listed: %d %v", code, rec)
				}
				f.srv.runs.Get(firstID) // the in-memory entry may remain for late joins
			} else if got := field(rec, "status"); got != tt.firstStatus {
				t.Fatalf("first run status %v, want %s", got, tt.firstStatus)
			}
			_, st := f.do("GET", "/threads/"+th+"/state", nil)
			log, _ := field(st, "values", "log").([]any)
			if len(log) != tt.wantLogCount {
				t.Fatalf("log %v, want %d entries", log, tt.wantLogCount)
			}
		})
	}
}

func TestCancelAndRejoinWithLastEventID(t *testing.T) {
	f := newFixture(t, nil)
	f.do("POST", "/threads", map[string]any{"thread_id": "j1"})
	_, run := f.do("POST", "/threads/j1/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{}, "stream_mode": []string{"values", "debug"}})
	id := field(run, "run_id").(string)
	f.waitStarted("j1")
	f.release("j1")
	f.do("GET", "/threads/j1/runs/"+id+"/join", nil)

	get := func(lastID string, modes string) []sse.Frame {
		req, _ := http.NewRequest("GET", f.http.URL+"/threads/j1/runs/"+id+"/stream"+modes, nil)
		if lastID != "" {
			req.Header.Set("Last-Event-ID", lastID)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var frames []sse.Frame
		sse.Parse(bufio.NewReader(resp.Body), func(fr sse.Frame) error { frames = append(frames, fr); return nil })
		return frames
	}
	all := get("", "")
	if len(all) < 4 || all[0].Event != "metadata" || all[len(all)-1].Event != "end" {
		t.Fatalf("full replay: %v", eventNames(all))
	}
	tail := get("2", "")
	if len(tail) != len(all)-2 || tail[0].ID != "3" {
		t.Fatalf("after id 2: %d frames starting at %q, want %d starting at 3", len(tail), tail[0].ID, len(all)-2)
	}
	only := get("", "?stream_mode=values")
	for _, fr := range only {
		if fr.Event == "debug" {
			t.Fatal("stream_mode=values replayed debug frames")
		}
	}

	// Cancel a running run: it ends interrupted and the thread keeps its checkpoint.
	f.do("POST", "/threads", map[string]any{"thread_id": "c1"})
	_, run = f.do("POST", "/threads/c1/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{}})
	id = field(run, "run_id").(string)
	f.waitStarted("c1")
	if code, _ := f.do("POST", "/threads/c1/runs/"+id+"/cancel?wait=1", nil); code != 204 {
		t.Fatalf("cancel: %d", code)
	}
	_, rec := f.do("GET", "/threads/c1/runs/"+id, nil)
	if field(rec, "status") != "interrupted" {
		t.Fatalf("cancelled run status %v", field(rec, "status"))
	}
	if _, busy := f.srv.runs.Busy("c1"); busy {
		t.Fatal("thread still busy after cancel")
	}
	if code, _ := f.do("POST", "/threads/c1/runs/"+id+"/cancel?action=explode", nil); code != 422 {
		t.Fatalf("bad cancel action: %d", code)
	}
}

func TestChatEndpoints(t *testing.T) {
	f := newFixture(t, nil)
	chat := func(path string, body any) []map[string]any {
		t.Helper()
		code, frames := f.stream(path, body)
		if code != 200 {
			t.Fatalf("%s: status %d", path, code)
		}
		var out []map[string]any
		for _, fr := range frames {
			if fr.Event != "" {
				t.Fatalf("chat frames carry no event name, got %q", fr.Event)
			}
			var ev map[string]any
			if err := jsonUnmarshal(fr.Data, &ev); err != nil {
				t.Fatalf("frame %s: %v", fr.Data, err)
			}
			out = append(out, ev)
		}
		return out
	}
	types := func(evs []map[string]any) string {
		var s []string
		for _, e := range evs {
			s = append(s, e["type"].(string))
		}
		return strings.Join(s, ",")
	}

	evs := chat("/chat", map[string]any{"message": "hi", "session_id": "s1", "user_id": "ann"})
	if types(evs) != "text,done" || field(evs[0], "payload", "content") != "Hello ann." || field(evs[1], "payload", "status") != "completed" {
		t.Fatalf("chat: %v", evs)
	}

	// HITL: the form interrupt becomes a hitl event; answer, then continue.
	if code, _ := f.do("POST", "/hitl/respond", map[string]any{"session_id": "s1", "response": map[string]any{"key": "k"}}); code != 409 {
		t.Fatalf("respond with nothing pending: %d", code)
	}
	evs = chat("/chat", map[string]any{"message": "form", "session_id": "s1"})
	if types(evs) != "hitl,done" || field(evs[0], "payload", "form", "title") != "Save memory" || field(evs[0], "payload", "interrupt_id") == nil {
		t.Fatalf("hitl chat: %v", evs)
	}
	if code, _ := f.do("POST", "/hitl/continue", map[string]any{"session_id": "s1"}); code != 409 {
		t.Fatalf("continue before respond: %d", code)
	}
	if code, out := f.do("POST", "/ecs/respond", map[string]any{"session_id": "s1", "response": "ok"}); code != 409 {
		t.Fatalf("ecs respond to a form interrupt: %d %v", code, out)
	}
	if code, out := f.do("POST", "/hitl/respond", map[string]any{"session_id": "s1", "response": map[string]any{"key": "k", "value": "v"}}); code != 200 {
		t.Fatalf("respond: %d %v", code, out)
	}
	evs = chat("/hitl/continue", map[string]any{"session_id": "s1"})
	if types(evs) != "text,done" || field(evs[0], "payload", "content") != "Thanks, noted." {
		t.Fatalf("continue: %v", evs)
	}
	_, st := f.do("GET", "/threads/s1/state", nil)
	if field(st, "values", "form", "value") != "v" {
		t.Fatalf("form answer not in state: %v", field(st, "values"))
	}

	// ECS: a contract interrupt.
	evs = chat("/chat", map[string]any{"message": "contract", "session_id": "s2"})
	if types(evs) != "hitl,done" || field(evs[0], "payload", "contract", "id") != "c-1" {
		t.Fatalf("ecs chat: %v", evs)
	}
	if code, _ := f.do("POST", "/ecs/respond", map[string]any{"session_id": "s2", "contract_id": "other", "response": "go"}); code != 409 {
		t.Fatalf("respond to the wrong contract: %d", code)
	}
	if code, _ := f.do("POST", "/ecs/respond", map[string]any{"session_id": "s2", "contract_id": "c-1", "response": map[string]any{"approved": true}}); code != 200 {
		t.Fatal("ecs respond failed")
	}
	evs = chat("/ecs/continue", map[string]any{"session_id": "s2"})
	if types(evs) != "text,done" {
		t.Fatalf("ecs continue: %v", evs)
	}
	if code, _ := f.do("POST", "/ecs/continue", map[string]any{"session_id": "s2"}); code != 409 {
		t.Fatalf("second continue: %d", code)
	}
}

func TestChatImage(t *testing.T) {
	f := newFixture(t, nil)
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")
	tests := []struct {
		name   string
		action string
		file   []byte
		want   int
		text   string
	}{
		{"analyze only", "analyze_only", png, 200, "Image received for analyze_only."},
		{"for memory", "analyze_for_memory", png, 200, "Image received for analyze_for_memory."},
		{"bad action", "paint", png, 400, ""},
		{"not an image", "analyze_only", []byte("just text"), 415, ""},
		{"no file", "analyze_only", nil, 400, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, ctype := multipartBody(t, map[string]string{"action": tt.action, "session_id": "img-" + strings.ReplaceAll(tt.name, " ", "-")}, tt.file)
			resp, err := http.Post(f.http.URL+"/chat/image", ctype, body)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.want)
			}
			if tt.text == "" {
				return
			}
			var all strings.Builder
			sse.Parse(resp.Body, func(fr sse.Frame) error { all.Write(fr.Data); return nil })
			if !strings.Contains(all.String(), tt.text) {
				t.Fatalf("stream %s lacks %q", all.String(), tt.text)
			}
		})
	}
}

func TestJoinStreamCancelOnDisconnect(t *testing.T) {
	tests := []struct {
		query      string
		wantStatus string
	}{
		{"?cancel_on_disconnect=1", "interrupted"},
		{"?cancel_on_disconnect=true", "interrupted"}, // as the Python SDK sends it
		{"?cancel_on_disconnect=false", "success"},
		{"", "success"},
	}
	for i, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			f := newFixture(t, nil)
			th := fmt.Sprintf("cod%d", i)
			f.do("POST", "/threads", map[string]any{"thread_id": th})
			_, run := f.do("POST", "/threads/"+th+"/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{}})
			id := field(run, "run_id").(string)
			f.waitStarted(th)

			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, "GET", f.http.URL+"/threads/"+th+"/runs/"+id+"/stream"+tt.query, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			// Read the first frame, so the server is streaming, then leave.
			first := make(chan struct{})
			go func() {
				sse.Parse(bufio.NewReader(resp.Body), func(sse.Frame) error { close(first); return errors.New("leave") })
			}()
			<-first
			cancel()
			resp.Body.Close()

			a, ok := f.srv.runs.Get(id)
			if !ok {
				t.Fatal("run unknown")
			}
			if tt.wantStatus == "success" {
				f.release(th)
			}
			select {
			case <-a.Done():
			case <-time.After(20 * time.Second):
				t.Fatalf("run still active after the client left (%s)", tt.query)
			}
			if got := a.Record().Status; got != tt.wantStatus {
				t.Errorf("status %q, want %q", got, tt.wantStatus)
			}
		})
	}
}

func TestWaitOnDisconnect(t *testing.T) {
	f := newFixture(t, nil)
	f.do("POST", "/threads", map[string]any{"thread_id": "od"})
	code, body := f.do("POST", "/threads/od/runs/wait", map[string]any{"assistant_id": "slow", "on_disconnect": "explode"})
	if code != 422 || !strings.Contains(fmt.Sprint(body), "on_disconnect") {
		t.Fatalf("unknown on_disconnect: %d %v, want 422 naming the field", code, body)
	}

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", f.http.URL+"/threads/od/runs/wait",
		strings.NewReader(`{"assistant_id": "slow", "input": {}, "on_disconnect": "cancel"}`))
	req.Header.Set("Content-Type", "application/json")
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	f.waitStarted("od")
	a, ok := f.srv.runs.Busy("od")
	if !ok {
		t.Fatal("no active run on the thread")
	}
	cancel()
	<-done
	select {
	case <-a.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("a waited-for run with on_disconnect cancel kept running after the client left")
	}
	if got := a.Record().Status; got != "interrupted" {
		t.Errorf("status %q, want interrupted", got)
	}
}
