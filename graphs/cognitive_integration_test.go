package graphs_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	_ "github.com/graphctl/graphctl/builtin-nodes/all"
	"github.com/graphctl/graphctl/builtin-nodes/llm/llmtest"
	"github.com/graphctl/graphctl/builtin-nodes/mcp/mcptest"
	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/storage/badger"
)

// events collects a run's events; nodes of one step emit concurrently.
type events struct {
	mu  sync.Mutex
	all []event.Event
}

func (e *events) sink(ev event.Event) {
	e.mu.Lock()
	e.all = append(e.all, ev)
	e.mu.Unlock()
}

func (e *events) of(typ string) []event.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []event.Event
	for _, ev := range e.all {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

// cognitiveWithServer loads graphs/cognitive.cue with its "local" MCP server
// replaced by the streamable HTTP endpoint url.
func cognitiveWithServer(t *testing.T, url string) *compile.Graph {
	t.Helper()
	src, err := os.ReadFile("cognitive.cue")
	if err != nil {
		t.Fatal(err)
	}
	const builtin = "mcp_servers: local: builtin: true"
	if !strings.Contains(string(src), builtin) {
		t.Fatalf("cognitive.cue no longer declares %q; update this test", builtin)
	}
	patched := strings.Replace(string(src), builtin, "mcp_servers: local: url: \""+url+"\"", 1)
	g, diags := runtime.LoadSource("cognitive.cue", []byte(patched))
	if diags.HasErrors() || g == nil {
		t.Fatalf("cognitive.cue with an HTTP MCP server does not compile:\n%v", diags)
	}
	return g
}

// TestCognitiveIntegration runs the cognitive graph through the real
// langchaingo OpenAI client against the local OpenAI-compatible server, with
// a real MCP server over streamable HTTP: a tool call, a suspension for a
// human confirmation, a process restart (engine and Badger closed and
// reopened) and the resume that completes the request.
func TestCognitiveIntegration(t *testing.T) {
	weather := mcptest.ForecastFor("Kyoto")
	srv := llmtest.NewServer(t, llmtest.WithReplies(
		llmtest.JSON(map[string]any{"response": "", "tool_call": map[string]any{"name": "get_weather", "arguments": map[string]any{"city": "Kyoto"}}}),
		llmtest.JSON(map[string]any{
			"response": "Kyoto looks fine today. Shall I book the tea ceremony?",
			"ecs_request": map[string]any{"title": "Book a tea ceremony", "form": map[string]any{"fields": []any{
				map[string]any{"name": "time", "label": "Time", "required": true},
				map[string]any{"name": "guests", "label": "Guests", "required": true},
			}}},
			"memory_update": []any{map[string]any{"key": "kyoto_trip", "value": "The user is visiting Kyoto and likes tea ceremonies", "category": "plan"}},
		}),
		llmtest.JSON(map[string]any{"response": "Your tea ceremony is booked for 15:00 for 2 guests. Enjoy Kyoto!"}),
	))
	t.Setenv("OPENAI_BASE_URL", srv.URL())
	t.Setenv("OPENAI_API_KEY", "test-key")
	t.Setenv("GRAPHCTL_LLM", "")
	g := cognitiveWithServer(t, mcptest.StartHTTP(t))
	dir := t.TempDir()
	ctx := context.Background()
	const thread = "kyoto"

	open := func() (*badger.DB, *engine.Engine) {
		db, err := badger.Open(dir, badger.Options{})
		if err != nil {
			t.Fatalf("open Badger: %v", err)
		}
		eng := engine.New(g, db.Checkpointer(), engine.Options{Store: db.Store()})
		if err := eng.Preflight(ctx); err != nil {
			t.Fatalf("preflight: %v", err)
		}
		return db, eng
	}

	// Turn 1: emotion, memory, reasoning → MCP tool → reasoning → suspended.
	db, eng := open()
	input, err := engine.TextInput(g, "I'm excited to visit Kyoto! What's the weather there? Book me a tea ceremony if it's nice.")
	if err != nil {
		t.Fatal(err)
	}
	input["user_id"] = "traveller"
	ev := &events{}
	res, err := eng.Run(ctx, engine.Request{ThreadID: thread, Input: input}, ev.sink)
	if err != nil {
		t.Fatalf("turn 1: %v", err)
	}
	if res.Status != engine.StatusInterrupted || len(res.Interrupts) != 1 {
		t.Fatalf("turn 1: status %s, interrupts %v, err %v; want one pending confirmation", res.Status, res.Interrupts, res.Err)
	}
	wantPath := []string{"begin", "emotion", "memory", "reasoning", "tools", "reasoning", "confirm"}
	if strings.Join(res.Path, ",") != strings.Join(wantPath, ",") {
		t.Errorf("turn 1 path %v, want %v", res.Path, wantPath)
	}
	if em := ev.of("emotion"); len(em) != 1 || em[0].Payload["primary"] == "neutral" || em[0].Payload["confidence"] == nil {
		t.Errorf("emotion events %v, want one non-neutral detection with a confidence", em)
	}
	tr := ev.of("tool_result")
	if len(tr) != 1 || tr[0].Payload["status"] != "COMPLETED" || tr[0].Payload["tool"] != "local/get_weather" {
		t.Fatalf("tool_result events %v, want get_weather COMPLETED", tr)
	}
	result, _ := tr[0].Payload["result"].(map[string]any)
	structured, _ := result["structured"].(map[string]any)
	if structured["conditions"] != weather.Conditions || structured["city"] != "Kyoto" {
		t.Errorf("tool result %v, want the MCP server's forecast %+v", result, weather)
	}
	hitl := ev.of("hitl")
	if len(hitl) != 1 || hitl[0].Payload["title"] != "Book a tea ceremony" || hitl[0].Payload["contract_id"] == "" {
		t.Fatalf("hitl events %v, want the request with its form", hitl)
	}
	if texts := ev.of(event.Text); len(texts) == 0 || !strings.Contains(textOf(texts), "Shall I book the tea ceremony?") {
		t.Errorf("text events %v, want the reasoning's response", texts)
	}
	// The answer arrived through the client's SSE stream, token by token.
	deltas := 0
	for _, e := range ev.of(event.Text) {
		if e.Payload["delta"] == true {
			deltas++
		}
	}
	if deltas < 3 {
		t.Errorf("%d streamed text deltas, want the response streamed in several tokens", deltas)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests in turn 1, want 2", len(reqs))
	}
	if !contains(reqs[0].Tools, "local__get_weather") || !reqs[0].JSONMode {
		t.Errorf("first request: tools %v, JSON mode %v; want the MCP server's tools offered and JSON output", reqs[0].Tools, reqs[0].JSONMode)
	}
	system := reqs[1].Messages[0].Content
	for _, want := range []string{"[COMPLETED] tool_call get_weather", weather.Conditions, "## Tone", "## Working memory"} {
		if !strings.Contains(system, want) {
			t.Errorf("second prompt lacks %q:\n%s", want, system)
		}
	}

	// A new process: close everything and reopen from disk.
	if err := eng.Close(); err != nil {
		t.Fatalf("close engine: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("close Badger: %v", err)
	}
	db, eng = open()
	defer func() {
		if err := eng.Close(); err != nil {
			t.Errorf("close engine: %v", err)
		}
		if err := db.Close(); err != nil {
			t.Errorf("close Badger: %v", err)
		}
	}()

	// An incomplete answer is refused and the form asked again.
	ev = &events{}
	res, err = eng.Run(ctx, engine.Request{ThreadID: thread, Resume: &engine.Resume{Value: map[string]any{"time": "15:00"}}}, ev.sink)
	if err != nil || res.Status != engine.StatusInterrupted || len(ev.of("hitl")) != 1 {
		t.Fatalf("incomplete answer: status %s, err %v, hitl %v; want the form asked again", res.Status, err, ev.of("hitl"))
	}

	ev = &events{}
	answer := map[string]any{"time": "15:00", "guests": 2}
	res, err = eng.Run(ctx, engine.Request{ThreadID: thread, Resume: &engine.Resume{Value: answer}}, ev.sink)
	if err != nil || res.Status != engine.StatusCompleted {
		t.Fatalf("resume: status %s, err %v, run error %v", res.Status, err, res.Err)
	}
	if got := textOf(ev.of(event.Text)); !strings.Contains(got, "booked for 15:00 for 2 guests") {
		t.Errorf("resume text %q, want the final answer", got)
	}
	contracts, _ := res.State["contracts"].([]any)
	statuses := map[string]string{}
	for _, c := range contracts {
		m := c.(map[string]any)
		statuses[m["action_type"].(string)] = m["status"].(string)
		if m["action_type"] == "ecs_request" {
			r, _ := m["result"].(map[string]any)
			if r["time"] != "15:00" {
				t.Errorf("ecs_request result %v, want the answer", m["result"])
			}
		}
	}
	if statuses["tool_call"] != "COMPLETED" || statuses["ecs_request"] != "COMPLETED" {
		t.Errorf("contract statuses %v, want both COMPLETED", statuses)
	}
	if stored := ev.of("memory_stored"); len(stored) != 1 {
		t.Errorf("memory_stored events %v, want the memory of the turn stored once", stored)
	}
	reqs = srv.Requests()
	if len(reqs) != 3 || !strings.Contains(reqs[2].Messages[0].Content, "[COMPLETED] ecs_request") {
		t.Errorf("the model got %d requests; the last prompt should show the completed request", len(reqs))
	}
	if srv.Pending() != 0 {
		t.Errorf("%d scripted replies were not used", srv.Pending())
	}
}

func textOf(evs []event.Event) string {
	var b strings.Builder
	for _, e := range evs {
		s, _ := e.Payload["content"].(string)
		b.WriteString(s)
	}
	return b.String()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
