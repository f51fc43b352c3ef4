package graphs_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/llm/llmtest"
)

// onePixelPNG is a valid 1×1 PNG.
var onePixelPNG, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")

// cognitiveServer serves the shipped graphs with cognitive behind the chat
// endpoints; its chat model is a local OpenAI-compatible server answering
// the replies, and its embedder (the graph's defaults.embedder, on the same
// OpenAI base URL) a local embeddings endpoint whose vectors carry meaning.
func cognitiveServer(t *testing.T, replies ...llmtest.Reply) (*shipped, *llmtest.Server) {
	t.Helper()
	s, model, _ := cognitiveServerEmb(t, replies...)
	return s, model
}

func cognitiveServerEmb(t *testing.T, replies ...llmtest.Reply) (*shipped, *llmtest.Server, *conceptEmbeddings) {
	t.Helper()
	model := llmtest.NewServer(t, llmtest.WithReplies(replies...))
	base, err := url.Parse(strings.TrimSuffix(model.URL(), "/v1"))
	if err != nil {
		t.Fatal(err)
	}
	emb := &conceptEmbeddings{next: httputil.NewSingleHostReverseProxy(base)}
	front := httptest.NewServer(emb)
	t.Cleanup(front.Close)
	t.Setenv("OPENAI_BASE_URL", front.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "test-key")
	t.Setenv("GRAPHCTL_LLM", "")
	return serveShipped(t, "cognitive"), model, emb
}

// memories lists the long-term memories of a user through the store API.
func (s *shipped) memories(user string) map[string]map[string]any {
	s.t.Helper()
	code, out := s.do("POST", "/store/items/search", map[string]any{"namespace_prefix": []any{"memories", user}, "limit": 100})
	if code != http.StatusOK {
		s.t.Fatalf("search memories of %s: %d %v", user, code, out)
	}
	items, _ := out["items"].([]any)
	got := map[string]map[string]any{}
	for _, it := range items {
		m, _ := it.(map[string]any)
		key, _ := m["key"].(string)
		v, _ := m["value"].(map[string]any)
		got[key] = v
	}
	return got
}

// TestSeed000_AC17_ImageOCRExtraction: the image is read by the vision model, the text is shown with the 📷 prefix and kept in semantic_input.text.
func TestSeed000_AC17_ImageOCRExtraction(t *testing.T) {
	s, model := cognitiveServer(t, llmtest.Text("Team lunch\nFriday 12:30, Blue Door Café"))
	code, evs := s.image(map[string]string{"session_id": "img-ocr", "action": "analyze_only"}, "menu.png", "image/png", onePixelPNG)
	if code != http.StatusOK {
		t.Fatalf("status %d: %v", code, evs)
	}
	if evs.types() != "text,done" {
		t.Fatalf("events %v, want text then done", evs)
	}
	got := evs.of("text")[0].Payload["content"]
	if got != "📷 图片文本识别结果\n\nTeam lunch\nFriday 12:30, Blue Door Café" {
		t.Errorf("OCR text event %q", got)
	}
	reqs := model.Requests()
	if len(reqs) != 1 || len(reqs[0].Messages) == 0 {
		t.Fatalf("the vision model got %d requests, want 1", len(reqs))
	}
	imgs := reqs[0].Messages[len(reqs[0].Messages)-1].Images
	if len(imgs) != 1 || imgs[0] != "data:image/png;base64,"+base64.StdEncoding.EncodeToString(onePixelPNG) {
		t.Errorf("the vision model received images %.80q, want the uploaded PNG as a data URL", imgs)
	}
	st := s.state("img-ocr")
	if si, _ := st["semantic_input"].(map[string]any); si["text"] != "Team lunch\nFriday 12:30, Blue Door Café" {
		t.Errorf("semantic_input %v, want the OCR text", st["semantic_input"])
	}
	if st["image"] != "" {
		t.Errorf("the image stays in state after the turn: %.40v", st["image"])
	}
}

// TestSeed000_AC18_ImageMemoryExtractionWithHITLConfirmation: analyze_for_memory extracts a memory from the OCR text and asks the user to confirm it with a form of key, value and category; only the confirmed memory is stored.
func TestSeed000_AC18_ImageMemoryExtractionWithHITLConfirmation(t *testing.T) {
	s, model := cognitiveServer(t,
		llmtest.Text("我最喜欢的茶是冻顶乌龙"),
		llmtest.JSON(map[string]any{"key": "favorite_tea", "value": "冻顶乌龙", "category": "preference", "confidence": 0.86}),
	)
	evs := mustImage(t, s, map[string]string{"session_id": "img-mem", "action": "analyze_for_memory", "user_id": "lin"})
	if evs.types() != "text,hitl,done" {
		t.Fatalf("events %v, want the OCR text, a hitl form, done", evs)
	}
	form := evs.of("hitl")[0].Payload
	if form["title"] != "保存记忆" || !hasFields(form, "key", "value", "category") || hasFields(form, "target_time") {
		t.Fatalf("hitl form %v, want 保存记忆 with key, value and category only", form)
	}
	if defaultOf(form, "value") != "冻顶乌龙" || defaultOf(form, "category") != "preference" {
		t.Errorf("form defaults %v, want the extracted memory", form["fields"])
	}
	// The fields also as a form object, the shape of the requests of the
	// hitl node (TestSeed000_AC16_SSEEventFormat).
	if inner, _ := form["form"].(map[string]any); !hasFields(inner, "key", "value", "category") {
		t.Errorf("hitl form %v, want its fields in form.fields too", form)
	}
	if len(model.Requests()) != 2 || !strings.Contains(model.Requests()[1].Messages[0].Content, "我最喜欢的茶是冻顶乌龙") {
		t.Fatalf("the extraction request did not carry the OCR text: %v", model.Requests())
	}
	if mem := s.memories("lin"); len(mem) != 0 {
		t.Fatalf("memory stored before the user confirmed: %v", mem)
	}
	// The user edits the value and confirms.
	if code, out := s.do("POST", "/hitl/respond", map[string]any{"session_id": "img-mem",
		"response": map[string]any{"key": "favorite_tea", "value": "冻顶乌龙 (no sugar)", "category": "preference"}}); code != 200 {
		t.Fatalf("respond: %d %v", code, out)
	}
	evs = s.mustChat("/hitl/continue", map[string]any{"session_id": "img-mem"})
	if len(evs.of("memory_stored")) != 1 {
		t.Errorf("continue events %v, want a memory_stored event", evs)
	}
	mem := s.memories("lin")
	if mem["favorite_tea"]["value"] != "冻顶乌龙 (no sugar)" || mem["favorite_tea"]["category"] != "preference" {
		t.Fatalf("stored memories %v, want the confirmed favorite_tea", mem)
	}
}

// TestSeed000_AC18_DecliningTheMemoryFormStoresNothing: an answer of
// {"confirmed": false}, false or {} declines the form.
func TestSeed000_AC18_DecliningTheMemoryFormStoresNothing(t *testing.T) {
	for i, decline := range []any{map[string]any{"confirmed": false}, false, map[string]any{}} {
		t.Run(fmt.Sprintf("declining the form with %v stores nothing", decline), func(t *testing.T) {
			s, _ := cognitiveServer(t,
				llmtest.Text("Dentist appointment Tuesday 9am"),
				llmtest.JSON(map[string]any{"key": "dentist", "value": "Dentist appointment", "category": "plan", "confidence": 0.8, "target_time": "Tuesday 9:00"}),
			)
			session := fmt.Sprintf("img-no-%d", i)
			mustImage(t, s, map[string]string{"session_id": session, "action": "analyze_for_memory", "user_id": "ann"})
			if code, out := s.do("POST", "/hitl/respond", map[string]any{"session_id": session, "response": decline}); code != 200 {
				t.Fatalf("respond: %d %v", code, out)
			}
			evs := s.mustChat("/hitl/continue", map[string]any{"session_id": session})
			if len(evs.of("error")) > 0 || len(evs.of("memory_stored")) > 0 || evs[len(evs)-1].Payload["status"] != "completed" {
				t.Fatalf("declined form: events %v", evs)
			}
			if mem := s.memories("ann"); len(mem) != 0 {
				t.Fatalf("a declined memory was stored: %v", mem)
			}
		})
	}
}

// TestSeed000_AC19_ImageWithPlanDetection: a plan gets the 保存计划到日程 form with target_time, location and participants, stored with the memory.
func TestSeed000_AC19_ImageWithPlanDetection(t *testing.T) {
	s, _ := cognitiveServer(t,
		llmtest.Text("周五下午3点 在星巴克 和小王、小李讨论项目"),
		llmtest.JSON(map[string]any{"key": "project_meeting", "value": "和小王、小李讨论项目", "category": "plan", "confidence": 0.9,
			"target_time": "周五 15:00", "location": "星巴克", "participants": []any{"小王", "小李"}}),
	)
	evs := mustImage(t, s, map[string]string{"session_id": "img-plan", "action": "analyze_for_memory", "user_id": "wang"})
	hitl := evs.of("hitl")
	if len(hitl) != 1 {
		t.Fatalf("events %v, want one hitl form", evs)
	}
	form := hitl[0].Payload
	if form["title"] != "保存计划到日程" || !hasFields(form, "key", "value", "category", "target_time", "location", "participants") {
		t.Fatalf("plan form %v, want 保存计划到日程 with target_time, location and participants", form)
	}
	if defaultOf(form, "participants") != "小王, 小李" || defaultOf(form, "location") != "星巴克" {
		t.Errorf("plan form defaults %v", form["fields"])
	}
	answer := map[string]any{"key": "project_meeting", "value": "和小王、小李讨论项目", "category": "plan",
		"target_time": "周五 15:00", "location": "星巴克", "participants": "小王, 小李"}
	if code, out := s.do("POST", "/hitl/respond", map[string]any{"session_id": "img-plan", "response": answer}); code != 200 {
		t.Fatalf("respond: %d %v", code, out)
	}
	s.mustChat("/hitl/continue", map[string]any{"session_id": "img-plan"})
	plan := s.memories("wang")["project_meeting"]
	if plan["category"] != "plan" || plan["target_time"] != "周五 15:00" || plan["location"] != "星巴克" || plan["participants"] != "小王, 小李" {
		t.Fatalf("stored plan %v, want its time, place and people kept", plan)
	}
}

// TestSeed000_AC20_ImageWithNoExtractableText: a text event says no text was found, the run is done, no form.
func TestSeed000_AC20_ImageWithNoExtractableText(t *testing.T) {
	s, model := cognitiveServer(t, llmtest.Text("NO_TEXT"))
	evs := mustImage(t, s, map[string]string{"session_id": "img-blank", "action": "analyze_for_memory"})
	if evs.types() != "text,done" || evs.of("text")[0].Payload["content"] != "📷 图片中未识别到文字" {
		t.Fatalf("events %v, want the no-text message and done", evs)
	}
	if n := len(model.Requests()); n != 1 {
		t.Errorf("the model got %d requests, want only the OCR request", n)
	}
}

// TestSeed000_AC21_ImageAnalyzeOnlyMode: only OCR runs: no extraction, no form, even for a text worth remembering.
func TestSeed000_AC21_ImageAnalyzeOnlyMode(t *testing.T) {
	s, model := cognitiveServer(t, llmtest.Text("Meeting with Sam on Monday at 10:00 in room 4"))
	evs := mustImage(t, s, map[string]string{"session_id": "img-only", "action": "analyze_only"})
	if evs.types() != "text,done" || !strings.HasPrefix(evs.text(), "📷 图片文本识别结果") {
		t.Fatalf("events %v, want the OCR text and done", evs)
	}
	if n := len(model.Requests()); n != 1 {
		t.Errorf("the model got %d requests, want only the OCR request", n)
	}
	if model.Pending() != 0 {
		t.Errorf("replies left over: %d", model.Pending())
	}
}

// TestSeed000_AC18_ImageMemoryBelowConfidenceThresholdShowsNoForm: an extraction with confidence below 0.3 shows no form.
func TestSeed000_AC18_ImageMemoryBelowConfidenceThresholdShowsNoForm(t *testing.T) {
	s, _ := cognitiveServer(t,
		llmtest.Text("Page 3 of 12"),
		llmtest.JSON(map[string]any{"key": "page", "value": "page number", "category": "other", "confidence": 0.1}),
	)
	evs := mustImage(t, s, map[string]string{"session_id": "img-low", "action": "analyze_for_memory"})
	if evs.types() != "text,done" {
		t.Fatalf("events %v, want no form", evs)
	}
}

// TestSeed000_ImageBadRequests: bad uploads are answered 4xx with a JSON error, never a run.
func TestSeed000_ImageBadRequests(t *testing.T) {
	s, _ := cognitiveServer(t)
	for _, tt := range []struct {
		name   string
		fields map[string]string
		data   []byte
		ctype  string
		want   int
	}{
		{"unknown action", map[string]string{"action": "paint"}, onePixelPNG, "image/png", 400},
		{"not an image", map[string]string{"action": "analyze_only"}, []byte("hello"), "text/plain", 415},
		{"no file", map[string]string{"action": "analyze_only"}, nil, "", 400},
		{"empty file", map[string]string{}, []byte{}, "image/png", 400},
	} {
		code, evs := s.image(tt.fields, "x.png", tt.ctype, tt.data)
		if code != tt.want || evs.types() != "http_error" || !strings.Contains(evs[0].Payload["body"].(string), `"error"`) {
			t.Errorf("%s: status %d %v, want %d with a JSON error", tt.name, code, evs, tt.want)
		}
	}
}

func mustImage(t *testing.T, s *shipped, fields map[string]string) chatEvents {
	t.Helper()
	code, evs := s.image(fields, "photo.png", "image/png", onePixelPNG)
	if code != http.StatusOK || len(evs) == 0 || evs[len(evs)-1].Type != "done" {
		t.Fatalf("POST /chat/image: status %d, events %v", code, evs)
	}
	return evs
}

// formFields returns a form payload's fields by name.
func formFields(form map[string]any) map[string]map[string]any {
	list, _ := form["fields"].([]any)
	if list == nil {
		if f, ok := form["form"].(map[string]any); ok {
			list, _ = f["fields"].([]any)
		}
	}
	out := map[string]map[string]any{}
	for _, x := range list {
		if m, ok := x.(map[string]any); ok {
			name, _ := m["name"].(string)
			out[name] = m
		}
	}
	return out
}

func hasFields(form map[string]any, names ...string) bool {
	fields := formFields(form)
	for _, n := range names {
		if fields[n] == nil {
			return false
		}
	}
	return true
}

func defaultOf(form map[string]any, name string) any {
	return formFields(form)[name]["default"]
}
