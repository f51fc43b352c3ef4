package cognitive_test

import (
	"context"
	"encoding/base64"
	"strings"
	"sync"
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/builtin-nodes/llm/llmtest"
	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/storage/badger"

	_ "github.com/graphctl/graphctl/builtin-nodes/flow"
)

type sink struct {
	mu     sync.Mutex
	events []event.Event
}

func (s *sink) add(e event.Event) {
	s.mu.Lock()
	s.events = append(s.events, e)
	s.mu.Unlock()
}

func (s *sink) of(typ string) []event.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ofType(s.events, typ)
}

func compileCUE(t *testing.T, src string) *compile.Graph {
	t.Helper()
	g, diags := runtime.LoadSource("cognitive.cue", []byte(src))
	if diags.HasErrors() || g == nil {
		t.Fatalf("graph does not compile:\n%v", diags)
	}
	return g
}

const chatGraph = `dsl_version: "graphctl/v1"
name: "cognitive_chat"
state: {
	messages:           {type: "messages"}
	user_id:            {type: "string"}
	emotional_context:  {type: "object"}
	retrieved_memories: {type: "list<object>"}
	memory_update:      {type: "any"}
}
start: "emotion"
nodes: {
	emotion: {type: "emotion", next: "recall"}
	recall: {type: "memory_retrieve", config: namespace: ["memories", "${user_id}"], next: "remember"}
	remember: {type: "memory_store", config: {namespace: ["memories", "${user_id}"], from: "memory_update"}, next: "answer"}
	answer: {
		type: "reply"
		config: text: "mood=${emotional_context.current_emotion} memories=${len(retrieved_memories)}"
		next: "END"
	}
}
`

// TestChatGraph runs emotion → memory_retrieve → memory_store → reply over
// two turns of one thread on Badger: the second turn finds what the first
// stored.
func TestChatGraph(t *testing.T) {
	db, err := badger.Open("", badger.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	eng := engine.New(compileCUE(t, chatGraph), db.Checkpointer(), engine.Options{Store: db.Store()})
	defer eng.Close()
	if err := eng.Preflight(context.Background()); err != nil {
		t.Fatalf("Preflight: %v", err)
	}
	turns := []struct {
		text   string
		update any
		mood   string
		reply  string
		stored int
	}{
		{"I'm so happy, my dog Max learned to roll over!", []any{map[string]any{"key": "pet", "value": "Dog named Max, learned to roll over", "category": "fact"}},
			"joy", "mood=joy memories=0", 1},
		{"I'm worried, Max the dog seems sick", nil, "anxiety", "mood=anxiety memories=1", 0},
	}
	for i, turn := range turns {
		s := &sink{}
		res, err := eng.Run(context.Background(), engine.Request{ThreadID: "chat-1", Input: map[string]any{
			"user_id": "u1", "memory_update": turn.update,
			"messages": []any{map[string]any{"role": "user", "content": turn.text}},
		}}, s.add)
		if err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		em := s.of("emotion")
		if len(em) != 1 || em[0].Payload["primary"] != turn.mood {
			t.Errorf("turn %d: emotion events = %v", i, em)
		}
		texts := s.of("text")
		if len(texts) != 1 || texts[0].Payload["content"] != turn.reply {
			t.Errorf("turn %d: text events = %v, want %q", i, texts, turn.reply)
		}
		if got := len(s.of("memory_stored")); got != turn.stored {
			t.Errorf("turn %d: %d memory_stored events, want %d", i, got, turn.stored)
		}
		if res.State["emotional_context"].(map[string]any)["current_emotion"] != turn.mood {
			t.Errorf("turn %d: state emotional_context = %v", i, res.State["emotional_context"])
		}
	}
}

const imageGraph = `dsl_version: "graphctl/v1"
name: "image_memory"
defaults: llm: "openai:gpt-4o-mini"
state: {
	user_id:        {type: "string"}
	image:          {type: "string"}
	action:         {type: "string", enum: ["analyze_only", "analyze_for_memory"]}
	semantic_input: {type: "object", reducer: "merge"}
	hitl_form:      {type: "object"}
	hitl_response:  {type: "any"}
}
start: "vision"
nodes: {
	vision: {
		type: "vision"
		config: {image_field: "image", action_field: "action", text_field: "semantic_input.text", form_field: "hitl_form"}
		routes: [{when: "action == 'analyze_for_memory' && hitl_response != nil", to: "save"}]
		default: "END"
	}
	save: {type: "memory_store", config: {namespace: ["memories", "${user_id}"], from: "hitl_response"}, next: "END"}
}
`

// TestImageGraph suspends on the confirmation form of a plan read from an
// image and, on resume, stores what the user confirmed.
func TestImageGraph(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.WithReplies(
		llmtest.Text("周五下午3点 项目评审会 3号会议室"),
		llmtest.JSON(map[string]any{"key": "project_review", "value": "周五下午3点项目评审会", "category": "plan", "confidence": 0.9,
			"target_time": "周五 15:00", "location": "3号会议室", "participants": []any{}}),
	))
	db, err := badger.Open("", badger.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	getenv := func(k string) string {
		if k == "OPENAI_BASE_URL" {
			return srv.URL()
		}
		return ""
	}
	eng := engine.New(compileCUE(t, imageGraph), db.Checkpointer(), engine.Options{
		Store: db.Store(), Extra: llm.ServiceKey.Bind(node.Extra{}, llm.NewModels(getenv)),
	})
	defer eng.Close()
	if err := eng.Preflight(context.Background()); err != nil {
		t.Fatalf("Preflight: %v", err)
	}
	s := &sink{}
	res, err := eng.Run(context.Background(), engine.Request{ThreadID: "img-1", Input: map[string]any{
		"user_id": "u1", "action": "analyze_for_memory",
		"image": "data:image/png;base64," + base64.StdEncoding.EncodeToString(png),
	}}, s.add)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "interrupted" || len(res.Interrupts) != 1 {
		t.Fatalf("status %s, interrupts %v; want one pending form", res.Status, res.Interrupts)
	}
	hitl := s.of("hitl")
	if len(hitl) != 1 || hitl[0].Payload["title"] != "保存计划到日程" {
		t.Fatalf("hitl events = %v", hitl)
	}
	if got := res.State["semantic_input"].(map[string]any)["text"]; !strings.Contains(got.(string), "项目评审会") {
		t.Errorf("semantic_input.text = %v", got)
	}
	if res.State["hitl_form"].(map[string]any)["title"] != "保存计划到日程" {
		t.Errorf("hitl_form = %v", res.State["hitl_form"])
	}
	confirmed := map[string]any{"key": "project_review", "value": "周五 15:00 项目评审会，3号会议室", "category": "plan"}
	s = &sink{}
	res, err = eng.Run(context.Background(), engine.Request{ThreadID: "img-1", Resume: &engine.Resume{Value: confirmed}}, s.add)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != engine.StatusCompleted {
		t.Errorf("resume status = %s", res.Status)
	}
	if stored := s.of("memory_stored"); len(stored) != 1 {
		t.Fatalf("memory_stored events = %v", stored)
	}
	item, err := db.Store().Get(context.Background(), []string{"memories", "u1"}, "project_review")
	if err != nil || item.Value["value"] != confirmed["value"] {
		t.Errorf("stored memory = %v, %v", item, err)
	}
	if len(srv.Requests()) != 2 {
		t.Errorf("the model was called %d times; the vision node must not run again on resume", len(srv.Requests()))
	}
}
