package cognitive_test

import (
	"encoding/base64"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/cognitive"
	"github.com/graphctl/graphctl/builtin-nodes/internal/nodetest"
	"github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/builtin-nodes/llm/llmtest"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
)

const testModel = "openai:gpt-4o-mini"

// modelServices points the model layer at a local OpenAI-compatible server.
func modelServices(srv *llmtest.Server) *node.Services {
	getenv := func(k string) string {
		if k == "OPENAI_BASE_URL" {
			return srv.URL()
		}
		return ""
	}
	return &node.Services{Extra: llm.ServiceKey.Bind(node.Extra{}, llm.NewModels(getenv))}
}

func ofType(events []event.Event, typ string) []event.Event {
	var out []event.Event
	for _, e := range events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func TestEmotionModelMode(t *testing.T) {
	g := emotionGraph(t)
	n := buildNode(t, g, "emotion", map[string]any{"mode": "llm", "model": testModel})
	tests := []struct {
		name  string
		reply llmtest.Reply
		text  string
		want  string
		conf  float64
	}{
		{"the model's answer", llmtest.JSON(map[string]any{"primary": "anxiety", "confidence": 0.83, "intensity": 0.6}),
			"The exam is tomorrow and I haven't slept", "anxiety", 0.83},
		{"JSON inside a code fence", llmtest.Text("```json\n{\"primary\": \"Joy\", \"confidence\": 0.9}\n```"),
			"Got the job!", "joy", 0.9},
		{"not JSON: the lexicon decides", llmtest.Text("The user feels sad."),
			"I feel so sad today", "sadness", -1},
		{"confidence out of range: the lexicon decides", llmtest.JSON(map[string]any{"primary": "joy", "confidence": 7}),
			"我很生气", "anger", -1},
		{"no primary: the lexicon decides", llmtest.JSON(map[string]any{"confidence": 0.5}),
			"What time is it?", "neutral", 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.WithReplies(tt.reply))
			services := modelServices(srv)
			if err := n.(node.Preparer).Prepare(t.Context(), services); err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			up, events, err := run(t, g, n, userMessage(tt.text), services)
			if err != nil {
				t.Fatal(err)
			}
			ctx := up["emotional_context"].(map[string]any)
			if ctx["current_emotion"] != tt.want || tt.conf >= 0 && ctx["confidence"] != tt.conf {
				t.Errorf("emotional_context = %#v, want %s (%v)", ctx, tt.want, tt.conf)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 || !strings.Contains(reqs[0].Messages[len(reqs[0].Messages)-1].Content, tt.text) {
				t.Fatalf("requests = %#v, want one asking about %q", reqs, tt.text)
			}
			em := ofType(events, "emotion")
			if len(em) != 1 || em[0].Payload["primary"] != tt.want || len(em[0].Payload) != 2 {
				t.Errorf("emotion events = %#v", em)
			}
			if len(events) != len(em)+len(ofType(events, node.UsageEvent)) {
				t.Errorf("unexpected events: %#v", events)
			}
		})
	}
	t.Run("a failed call is a retryable llm_error", func(t *testing.T) {
		srv := llmtest.NewServer(t, llmtest.WithFailures(5, 500))
		_, _, err := run(t, g, n, userMessage("hi"), modelServices(srv))
		var ne *node.Error
		if !errors.As(err, &ne) || ne.Code != "llm_error" || !ne.Retryable {
			t.Errorf("err = %v, want a retryable llm_error", err)
		}
	})
	t.Run("Prepare without any model says how to configure one", func(t *testing.T) {
		n := buildNode(t, g, "emotion", map[string]any{"mode": "llm"})
		err := n.(node.Preparer).Prepare(t.Context(), &node.Services{Extra: llm.ServiceKey.Bind(node.Extra{}, llm.NewModels(func(string) string { return "" }))})
		if err == nil || !errors.Is(err, llm.ErrNoModel) {
			t.Errorf("Prepare = %v, want ErrNoModel", err)
		}
	})
}

func TestMemorySemantic(t *testing.T) {
	srv := llmtest.NewServer(t)
	g := memoryGraph(t)
	services := modelServices(srv)
	services.Store = openStore(t)
	const embedder = "openai:text-embedding-3-small"
	storeMemories(t, g, services, map[string]any{"embedder": embedder}, memories())
	calls := srv.Embeddings()
	if len(calls) != 1 || len(calls[0]) != 4 || !strings.Contains(calls[0][1], "golden retriever") {
		t.Fatalf("embedding calls = %v, want one with the 4 memories", calls)
	}
	item, err := services.Store.Get(t.Context(), []string{"memories", "u1"}, "pet")
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := item.Value[cognitive.EmbeddingKey].([]any); !ok || len(v) == 0 {
		t.Fatalf("stored memory has no embedding: %#v", item.Value)
	}
	retrieve := buildNode(t, g, "memory_retrieve", map[string]any{
		"namespace": []any{"memories", "${user_id}"}, "embedder": embedder, "limit": 3,
	})
	if err := retrieve.(node.Preparer).Prepare(t.Context(), services); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		query string
		first string
		none  bool
	}{
		{"tell me about my dog", "pet", false},
		{"which color do I like", "favorite_color", false},
		{"quantum chromodynamics lecture notes", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			up, _, err := run(t, g, retrieve, map[string]any{"user_id": "u1", "messages": []any{map[string]any{"role": "user", "content": tt.query}}}, services)
			if err != nil {
				t.Fatal(err)
			}
			refs := up["retrieved_memories"].([]any)
			if tt.none {
				if len(refs) != 0 {
					t.Errorf("refs = %v, want none", refs)
				}
				return
			}
			if len(refs) == 0 || refs[0].(map[string]any)["key"] != tt.first {
				t.Fatalf("refs = %v, want %s first", refs, tt.first)
			}
			for i, r := range refs {
				ref := r.(map[string]any)
				s := ref["score"].(float64)
				if s <= 0 || s > 1 || i > 0 && s > refs[i-1].(map[string]any)["score"].(float64) {
					t.Errorf("scores not in (0, 1] and descending: %v", refs)
				}
				if _, isText := ref["value"].(string); !isText || len(ref) != 6 {
					t.Errorf("MemoryRef = %#v, want {key, value, category, score, access_count, last_accessed} with the text value", ref)
				}
			}
			last := srv.Embeddings()[len(srv.Embeddings())-1]
			if !reflect.DeepEqual(last, []string{tt.query}) {
				t.Errorf("last embedding call = %v, want the query", last)
			}
		})
	}
}

// png is a 1×1 PNG image.
var png = func() []byte {
	b, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
	return b
}()

func visionGraph(t *testing.T) *graph.Graph {
	t.Helper()
	g, err := nodetest.Graph(nil, "image: string", "image_mime: string", "action: string",
		"semantic_input: object", "hitl_form: object", "hitl_response: any", "ocr_text: string")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestVision(t *testing.T) {
	g := visionGraph(t)
	n := buildNode(t, g, "vision", map[string]any{
		"model": testModel, "image_field": "image", "mime_field": "image_mime", "action_field": "action",
		"text_field": "semantic_input.text", "form_field": "hitl_form",
	})
	dataURL := "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)
	const (
		ocrMemo = "我最喜欢的水果是芒果"
		ocrPlan = "周五下午3点 项目评审会\n地点：3号会议室\n参会：张伟、李娜"
	)
	tests := []struct {
		name      string
		image     string
		mime      string
		action    string
		replies   []llmtest.Reply
		wantImage string // the image URL the server must receive
		text      string // the text event's content
		title     string // the form title; "" for no form
		fields    []string
	}{
		{"OCR text only", dataURL, "", "analyze_only",
			[]llmtest.Reply{llmtest.Text("Hello World\nLine 2")}, dataURL,
			cognitive.OCRResultPrefix + "Hello World\nLine 2", "", nil},
		{"memory with a form (raw base64 and a mime field)", base64.StdEncoding.EncodeToString(png), "image/png", "analyze_for_memory",
			[]llmtest.Reply{llmtest.Text(ocrMemo), llmtest.JSON(map[string]any{"key": "favorite_fruit", "value": "最喜欢的水果是芒果", "category": "preference", "confidence": 0.8})},
			dataURL, cognitive.OCRResultPrefix + ocrMemo, cognitive.MemoryFormTitle, []string{"key", "value", "category"}},
		{"plan form with its extra fields", "https://example.com/notice.png", "", "analyze_for_memory",
			[]llmtest.Reply{llmtest.Text(ocrPlan), llmtest.JSON(map[string]any{"key": "project_review", "value": "项目评审会", "category": "plan",
				"confidence": 0.9, "target_time": "周五 15:00", "location": "3号会议室", "participants": []any{"张伟", "李娜"}})},
			"https://example.com/notice.png", cognitive.OCRResultPrefix + ocrPlan, cognitive.PlanFormTitle,
			[]string{"key", "value", "category", "target_time", "location", "participants"}},
		{"low confidence: no form", dataURL, "", "analyze_for_memory",
			[]llmtest.Reply{llmtest.Text("SALE 50%"), llmtest.JSON(map[string]any{"key": "sale", "value": "sale", "category": "other", "confidence": 0.1})},
			dataURL, cognitive.OCRResultPrefix + "SALE 50%", "", nil},
		{"bad extraction twice: no form", dataURL, "", "analyze_for_memory",
			[]llmtest.Reply{llmtest.Text("Meeting at noon"), llmtest.Text("sure!"), llmtest.JSON(map[string]any{"key": "m"})},
			dataURL, cognitive.OCRResultPrefix + "Meeting at noon", "", nil},
		{"no text", dataURL, "", "analyze_for_memory",
			[]llmtest.Reply{llmtest.Text("NO_TEXT")}, dataURL, cognitive.NoTextMessage, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.WithReplies(tt.replies...))
			state := map[string]any{"image": tt.image, "image_mime": tt.mime, "action": tt.action}
			up, events, err := run(t, g, n, state, modelServices(srv))
			reqs := srv.Requests()
			if len(reqs) == 0 || len(reqs[0].Messages) == 0 {
				t.Fatalf("the server received no request")
			}
			ocr := reqs[0].Messages[len(reqs[0].Messages)-1]
			if !reflect.DeepEqual(ocr.Images, []string{tt.wantImage}) || !strings.Contains(ocr.Content, cognitive.NoText) {
				t.Errorf("OCR request images = %v, text %q; want the image %q and the OCR instruction", ocr.Images, ocr.Content, clipTo(tt.wantImage))
			}
			if srv.Pending() != 0 {
				t.Errorf("%d scripted replies were not asked for", srv.Pending())
			}
			texts := ofType(events, "text")
			if len(texts) != 1 || texts[0].Payload["content"] != tt.text {
				t.Errorf("text events = %#v, want one with %q", texts, tt.text)
			}
			hitl := ofType(events, "hitl")
			if tt.title == "" {
				if err != nil || len(hitl) != 0 {
					t.Fatalf("err = %v, hitl = %v; want no form", err, hitl)
				}
				wantText := strings.TrimPrefix(tt.text, cognitive.OCRResultPrefix)
				if tt.text == cognitive.NoTextMessage {
					wantText = ""
				}
				if !reflect.DeepEqual(up, node.Update{"semantic_input": map[string]any{"text": wantText}}) {
					t.Errorf("update = %#v, want the OCR text %q in semantic_input.text", up, wantText)
				}
				return
			}
			var ir *node.InterruptRequest
			if !errors.As(err, &ir) {
				t.Fatalf("err = %v, want an interrupt", err)
			}
			if len(hitl) != 1 || !reflect.DeepEqual(hitl[0].Payload, ir.Payload) {
				t.Fatalf("hitl events = %#v, want one carrying the interrupt payload", hitl)
			}
			form := ir.Payload
			if form["title"] != tt.title || ir.Field != "hitl_response" {
				t.Errorf("form title = %v, field %s", form["title"], ir.Field)
			}
			var names []string
			for _, f := range form["fields"].([]any) {
				names = append(names, f.(map[string]any)["name"].(string))
			}
			if !reflect.DeepEqual(names, tt.fields) {
				t.Errorf("form fields = %v, want %v", names, tt.fields)
			}
			if ir.Update["hitl_form"] == nil || ir.Update["semantic_input"].(map[string]any)["text"] != strings.TrimPrefix(tt.text, cognitive.OCRResultPrefix) {
				t.Errorf("interrupt update = %#v, want the form and the OCR text", ir.Update)
			}
			if len(reqs) != 2 || !strings.Contains(reqs[1].Messages[0].Content, strings.TrimPrefix(tt.text, cognitive.OCRResultPrefix)) {
				t.Errorf("the extraction request does not carry the OCR text: %#v", reqs)
			}
			if tt.title == cognitive.PlanFormTitle {
				for _, f := range form["fields"].([]any) {
					if fm := f.(map[string]any); fm["name"] == "participants" && fm["default"] != "张伟, 李娜" {
						t.Errorf("participants default = %v", fm["default"])
					}
				}
			}
		})
	}
}

func TestVisionInputErrors(t *testing.T) {
	g := visionGraph(t)
	n := buildNode(t, g, "vision", map[string]any{"model": testModel, "image_field": "image", "action_field": "action"})
	tests := []struct {
		name  string
		state map[string]any
		code  string
	}{
		{"no image", map[string]any{}, "invalid_image"},
		{"not base64", map[string]any{"image": "%%%not-an-image"}, "invalid_image"},
		{"base64 of text, not an image", map[string]any{"image": base64.StdEncoding.EncodeToString([]byte("just some words"))}, "invalid_image"},
		{"unknown action", map[string]any{"image": "https://example.com/a.png", "action": "translate"}, "invalid_action"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			_, _, err := run(t, g, n, tt.state, modelServices(srv))
			if node.CodeOf(err) != tt.code {
				t.Errorf("err = %v, want code %s", err, tt.code)
			}
			if len(srv.Requests()) != 0 {
				t.Errorf("a bad input reached the model")
			}
		})
	}
}

func TestVisionConfigErrors(t *testing.T) {
	g := visionGraph(t)
	tests := []struct {
		name string
		cfg  map[string]any
		path string
		code string
	}{
		{"undeclared image field", map[string]any{"image_field": "img"}, "image_field", "unknown-field"},
		{"both action and action_field", map[string]any{"image_field": "image", "action": "analyze_only", "action_field": "action"}, "action", "invalid-config"},
		{"text field of the wrong type", map[string]any{"image_field": "image", "text_field": "hitl_form"}, "text_field", "invalid-config"},
		{"undeclared answer field for memory", map[string]any{"image_field": "image", "action": "analyze_for_memory", "answer_field": "reply"}, "answer_field", "unknown-field"},
		{"unknown action", map[string]any{"image_field": "image", "action": "translate"}, "", nodetest.CodeSchema},
		{"missing image field", map[string]any{}, "", nodetest.CodeSchema},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, b, err := nodetest.Build(g, "vision", "vision", tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if n != nil || !b.Has(tt.path, tt.code) {
				t.Errorf("problems = %v, want %s at %q", b.Problems(), tt.code, tt.path)
			}
		})
	}
}

func clipTo(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// TestMemoryReembedsForANewEmbedder: memories embedded by another model (or
// none) are embedded again by the retrieving node's embedder, found by
// meaning, and stored with the new vector and model.
func TestMemoryReembedsForANewEmbedder(t *testing.T) {
	srv := llmtest.NewServer(t)
	g := memoryGraph(t)
	services := modelServices(srv)
	services.Store = openStore(t)
	storeMemories(t, g, services, map[string]any{"embedder": "hash:16"}, memories()[:2])
	storeMemories(t, g, services, nil, memories()[2:])
	const embedder = "openai:text-embedding-3-small"
	retrieve := buildNode(t, g, "memory_retrieve", map[string]any{"namespace": []any{"memories", "${user_id}"}, "embedder": embedder})
	up, events, err := run(t, g, retrieve, map[string]any{"user_id": "u1", "messages": []any{map[string]any{"role": "user", "content": "tell me about my dog"}}}, services)
	if err != nil {
		t.Fatal(err)
	}
	if keys := refKeys(t, up["retrieved_memories"]); len(keys) == 0 || keys[0] != "pet" {
		t.Errorf("retrieved %v, want pet first", keys)
	}
	calls := srv.Embeddings()
	if len(calls) != 2 || len(calls[1]) != 4 {
		t.Fatalf("embedding calls %v, want the query, then the 4 memories", calls)
	}
	for _, key := range []string{"favorite_color", "pet", "job", "trip"} {
		item, err := services.Store.Get(t.Context(), []string{"memories", "u1"}, key)
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := item.Value[cognitive.EmbeddingKey].([]any); len(v) != 64 || item.Value[cognitive.EmbeddingModelKey] != embedder {
			t.Errorf("memory %s: vector of %d by %v, want 64 by %s", key, len(v), item.Value[cognitive.EmbeddingModelKey], embedder)
		}
	}
	rec := ofType(events, cognitive.MemoryRecalledEvent)
	if len(rec) != 1 || rec[0].Payload["mode"] != "hybrid" {
		t.Errorf("recall events %v", rec)
	}
	// The next retrieval embeds only the query.
	if _, _, err := run(t, g, retrieve, map[string]any{"user_id": "u1", "messages": []any{map[string]any{"role": "user", "content": "my dog"}}}, services); err != nil {
		t.Fatal(err)
	}
	if calls := srv.Embeddings(); len(calls) != 3 || len(calls[2]) != 1 {
		t.Errorf("embedding calls %v, want only the query embedded the second time", calls)
	}
}

// TestMemoryDefaultEmbedderFallsBack: the graph's defaults.embedder that
// cannot be used (no key here) does not stop the graph: retrieval is BM25
// and storage keeps no vector, each saying so in a memory_fallback event.
// A node's own embedder setting stays strict.
func TestMemoryDefaultEmbedderFallsBack(t *testing.T) {
	g := memoryGraph(t)
	g.Defaults.Raw = map[string]any{"embedder": "openai:text-embedding-3-small"}
	noKeys := &node.Services{Store: openStore(t), Extra: llm.ServiceKey.Bind(node.Extra{}, llm.NewModels(func(string) string { return "" }))}
	store := buildNode(t, g, "memory_store", map[string]any{"namespace": []any{"memories", "${user_id}"}, "from": "memory_update"})
	retrieve := buildNode(t, g, "memory_retrieve", map[string]any{"namespace": []any{"memories", "${user_id}"}})
	for _, n := range []node.Node{store, retrieve} {
		if err := n.(node.Preparer).Prepare(t.Context(), noKeys); err != nil {
			t.Errorf("Prepare with an unusable default embedder: %v", err)
		}
	}
	_, events, err := run(t, g, store, map[string]any{"user_id": "u1", "memory_update": memories()}, noKeys)
	if err != nil {
		t.Fatal(err)
	}
	if fb := ofType(events, cognitive.MemoryFallbackEvent); len(fb) != 1 || fb[0].Payload["to"] != "no_vector" || !strings.Contains(fb[0].Payload["error"].(string), "OPENAI_API_KEY") {
		t.Errorf("store events %v, want a memory_fallback naming the missing key", events)
	}
	up, events, err := run(t, g, retrieve, map[string]any{"user_id": "u1", "messages": []any{map[string]any{"role": "user", "content": "what is my dog called"}}}, noKeys)
	if err != nil {
		t.Fatal(err)
	}
	if keys := refKeys(t, up["retrieved_memories"]); len(keys) != 1 || keys[0] != "pet" {
		t.Errorf("retrieved %v, want pet by BM25", keys)
	}
	if fb := ofType(events, cognitive.MemoryFallbackEvent); len(fb) != 1 || fb[0].Payload["to"] != "bm25" {
		t.Errorf("retrieve events %v, want a memory_fallback to bm25", events)
	}
	if rec := ofType(events, cognitive.MemoryRecalledEvent); len(rec) != 1 || rec[0].Payload["mode"] != "bm25" {
		t.Errorf("recall events %v", rec)
	}
	// "none" turns the default off; a node's own setting is strict.
	if n := buildNode(t, g, "memory_retrieve", map[string]any{"namespace": []any{"m"}, "embedder": "none"}); n.(node.Preparer).Prepare(t.Context(), noKeys) != nil {
		t.Error("embedder none should need no embedder")
	}
	own := buildNode(t, g, "memory_retrieve", map[string]any{"namespace": []any{"m"}, "embedder": "openai:text-embedding-3-small"})
	if err := own.(node.Preparer).Prepare(t.Context(), noKeys); err == nil {
		t.Error("a node's own embedder without a key should fail Prepare")
	}
}
