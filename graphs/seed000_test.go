package graphs_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/llm/llmtest"
)

// Seed 000 (and 001) — the cognitive graph — walked criterion by criterion
// against graphs/cognitive.cue, served as `graphctl serve` serves it, through
// the chat endpoints (/chat, /chat/image, /hitl/*, /ecs/*). docs/seeds.md maps
// each criterion to its test.

// say sends one chat message and returns the stream.
func (s *shipped) say(session, user, message string) chatEvents {
	s.t.Helper()
	body := map[string]any{"message": message, "session_id": session}
	if user != "" {
		body["user_id"] = user
	}
	return s.mustChat("/chat", body)
}

// storeItem reads one item of the store API.
func (s *shipped) storeItem(namespace, key string) map[string]any {
	s.t.Helper()
	code, out := s.do("GET", "/store/items?namespace="+namespace+"&key="+key, nil)
	if code != http.StatusOK {
		s.t.Fatalf("GET store item %s/%s: %d %v", namespace, key, code, out)
	}
	return out
}

// systemPrompt returns the system message of the n-th model request.
func systemPrompt(t *testing.T, model *llmtest.Server, n int) string {
	t.Helper()
	reqs := model.Requests()
	if len(reqs) <= n || len(reqs[n].Messages) == 0 {
		t.Fatalf("the model got %d requests, want more than %d", len(reqs), n)
	}
	return reqs[n].Messages[0].Content
}

// TestSeed000_AC10_RetrievingRelevantMemories: a message about a previously
// discussed topic retrieves the matching memories — by meaning (the graph's
// configured embedder) as well as by words (BM25) — updates their access
// statistics and puts them in the reasoning prompt.
func TestSeed000_AC10_RetrievingRelevantMemories(t *testing.T) {
	s, model, emb := cognitiveServerEmb(t,
		llmtest.JSON(map[string]any{"response": "Noted! Max sounds lovely, and oolong it is.", "memory_update": []any{
			map[string]any{"key": "pet", "value": "The user has a golden retriever named Max", "category": "fact", "confidence": 0.95},
			map[string]any{"key": "favorite_tea", "value": "The user loves oolong tea", "category": "preference", "confidence": 0.8},
		}}),
		llmtest.JSON(map[string]any{"response": "A cough that lasts all night is worth a call to your vet."}),
		llmtest.JSON(map[string]any{"response": "I'm sorry, I can't recall that right now."}),
		llmtest.JSON(map[string]any{"response": "Max is a golden retriever."}),
	)
	evs := s.say("mem-1", "mia", "Remember that I have a golden retriever named Max, and that I love oolong tea.")
	if stored := evs.of("memory_stored"); len(stored) != 1 || stored[0].Payload["count"] != float64(2) {
		t.Fatalf("turn 1 events %v, want two memories stored", evs)
	}
	models, inputs := emb.calls()
	if len(models) != 2 || models[1] != "text-embedding-3-small" || len(inputs[1]) != 2 || !strings.Contains(inputs[1][0], "golden retriever") {
		t.Fatalf("embedding calls %v %v, want the query, then both memories embedded with text-embedding-3-small", models, inputs)
	}

	// A new conversation, other words, same topic: no word in common with
	// the memory ("puppy" vs "golden retriever"), so only its meaning finds it.
	evs = s.say("mem-2", "mia", "My puppy has been coughing all night, what should I do?")
	rec := evs.of("memory_recalled")
	if len(rec) != 1 || rec[0].Payload["mode"] != "hybrid" || rec[0].Payload["embedder"] != "openai:text-embedding-3-small" ||
		!equalJSON(rec[0].Payload["keys"], []any{"pet"}) {
		t.Fatalf("recall events %v, want a hybrid recall of pet only", rec)
	}
	prompt := systemPrompt(t, model, 1)
	if !strings.Contains(prompt, "- pet: The user has a golden retriever named Max") || strings.Contains(prompt, "oolong") {
		t.Errorf("the reasoning prompt lacks the recalled memory (or has the unrelated one):\n%s", prompt)
	}
	if !strings.Contains(prompt, "1 long-term memories are relevant") {
		t.Errorf("the working-memory summary does not count the recalled memory:\n%s", prompt)
	}
	st := s.state("mem-2")
	if refs, _ := st["retrieved_memories"].([]any); len(refs) != 1 || refs[0].(map[string]any)["key"] != "pet" {
		t.Errorf("retrieved_memories %v, want pet", st["retrieved_memories"])
	}
	item := s.storeItem("memories.mia", "pet")
	if v, _ := item["value"].(map[string]any); v["access_count"] != float64(1) || v["last_accessed"] == nil {
		t.Errorf("access statistics of pet: %v, want access_count 1 and last_accessed", item["value"])
	}

	// With the embedder down, recall falls back to BM25, says so, and the
	// chat still answers; BM25 alone does not find the dog.
	emb.setFailed(true)
	evs = s.say("mem-3", "mia", "Is my puppy okay?")
	if fb := evs.of("memory_fallback"); len(fb) != 1 || fb[0].Payload["to"] != "bm25" || !strings.Contains(fb[0].Payload["error"].(string), "503") {
		t.Errorf("events %v, want a memory_fallback to bm25 naming the failure", evs)
	}
	if rec := evs.of("memory_recalled"); len(rec) != 1 || rec[0].Payload["mode"] != "bm25" || rec[0].Payload["count"] != float64(0) {
		t.Errorf("recall events %v, want a bm25 recall of nothing", rec)
	}
	if evs[len(evs)-1].Payload["status"] != "completed" {
		t.Errorf("the turn did not complete: %v", evs)
	}

	// Words alone also recall: the name.
	emb.setFailed(false)
	evs = s.say("mem-4", "mia", "What breed is Max?")
	if rec := evs.of("memory_recalled"); len(rec) != 1 || !equalJSON(rec[0].Payload["keys"], []any{"pet"}) {
		t.Errorf("recall events %v, want pet", rec)
	}
}

// TestSeed000_AC11_NoRelevantMemories: a new topic retrieves nothing and the
// reasoning prompt carries no memory.
func TestSeed000_AC11_NoRelevantMemories(t *testing.T) {
	s, model, _ := cognitiveServerEmb(t,
		llmtest.JSON(map[string]any{"response": "Noted.", "memory_update": []any{
			map[string]any{"key": "pet", "value": "The user has a golden retriever named Max", "category": "fact"},
		}}),
		llmtest.JSON(map[string]any{"response": "Paris."}),
	)
	s.say("new-1", "leo", "I have a golden retriever named Max.")
	evs := s.say("new-2", "leo", "What is the capital of France?")
	if rec := evs.of("memory_recalled"); len(rec) != 1 || rec[0].Payload["count"] != float64(0) {
		t.Fatalf("recall events %v, want nothing recalled", rec)
	}
	if refs, ok := s.state("new-2")["retrieved_memories"].([]any); !ok || len(refs) != 0 {
		t.Errorf("retrieved_memories %v, want an empty list", s.state("new-2")["retrieved_memories"])
	}
	prompt := systemPrompt(t, model, 1)
	if strings.Contains(prompt, "golden retriever") || !strings.Contains(prompt, "0 long-term memories are relevant") {
		t.Errorf("the prompt carries memory context for a new topic:\n%s", prompt)
	}
	if got := evs.text(); !strings.Contains(got, "Paris.") {
		t.Errorf("answer %q", got)
	}
}
