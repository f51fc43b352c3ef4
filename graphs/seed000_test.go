package graphs_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphctl/graphctl/builtin-nodes/llm/llmtest"
	"github.com/graphctl/graphctl/runtime/compile"
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

// history returns a thread's checkpoints, newest first, as the
// LangGraph API lists them.
func (s *shipped) history(thread string) []map[string]any {
	s.t.Helper()
	b, _ := json.Marshal(map[string]any{"limit": 100})
	resp, err := http.Post(s.url+"/threads/"+thread+"/history", "application/json", bytes.NewReader(b))
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		s.t.Fatalf("history of %s: %d %v", thread, resp.StatusCode, err)
	}
	return out
}

// contractStatuses lists, oldest first, the statuses a contract had in a
// thread's checkpoints, without repeats.
func (s *shipped) contractStatuses(thread, id string) []string {
	s.t.Helper()
	hist := s.history(thread)
	var out []string
	for i := len(hist) - 1; i >= 0; i-- {
		vals, _ := hist[i]["values"].(map[string]any)
		c := byID(vals["contracts"])[id]
		st, _ := c["status"].(string)
		if st != "" && (len(out) == 0 || out[len(out)-1] != st) {
			out = append(out, st)
		}
	}
	return out
}

// typesInOrder lists the distinct event types in their first order.
func (evs chatEvents) typesInOrder() []string {
	var out []string
	for _, e := range evs {
		if !slices.Contains(out, e.Type) {
			out = append(out, e.Type)
		}
	}
	return out
}

// TestSeed000_AC1_NormalChatFlow: a chat message runs emotion, memory and
// reasoning in that order; the stream carries the emotion and the response
// text, and ends with done.
func TestSeed000_AC1_NormalChatFlow(t *testing.T) {
	s, model := cognitiveServer(t, llmtest.JSON(map[string]any{"response": "Congratulations on the new job! When do you start?"}))
	evs := s.say("flow-1", "ana", "I got the job, I'm so happy today!")
	if got := evs.typesInOrder(); !slices.Equal(got, []string{"emotion", "memory_recalled", "text", "done"}) {
		t.Fatalf("event types %v, want emotion, memory recall, text, done", got)
	}
	if evs.text() != "Congratulations on the new job! When do you start?" || evs[len(evs)-1].Payload["status"] != "completed" {
		t.Errorf("text %q, done %v", evs.text(), evs[len(evs)-1].Payload)
	}
	if n := len(model.Requests()); n != 1 {
		t.Errorf("%d model requests, want 1 (no tool, no HITL)", n)
	}
	// The checkpoints record the order the nodes ran in: each names the
	// nodes whose writes it holds (the turn's input and begin, a set node,
	// share the first one).
	var order []string
	hist := s.history("flow-1")
	for i := len(hist) - 1; i >= 0; i-- {
		meta, _ := hist[i]["metadata"].(map[string]any)
		for _, n := range asStrings(meta["writers"]) {
			if n != "input" {
				order = append(order, n)
			}
		}
	}
	if !slices.Equal(order, []string{"begin", "emotion", "memory", "reasoning"}) {
		t.Errorf("nodes in checkpoint order %v, want begin, emotion, memory, reasoning", order)
	}
}

func asStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// calcReplies is a reasoning turn that calls the calculate tool, then answers.
func calcReplies(expr, answer string) []llmtest.Reply {
	return []llmtest.Reply{
		llmtest.JSON(map[string]any{"response": "", "tool_call": map[string]any{"name": "calculate", "arguments": map[string]any{"expression": expr}}}),
		llmtest.JSON(map[string]any{"response": answer}),
	}
}

// TestSeed000_AC2_ChatFlowWithMCPToolCall: a tool_call in the model's reply
// routes to the tool node, which runs the MCP tool; reasoning runs again
// with the observation and answers with the tool's result.
func TestSeed000_AC2_ChatFlowWithMCPToolCall(t *testing.T) {
	s, model := cognitiveServer(t, calcReplies("17 * 23", "17 × 23 = 391.")...)
	evs := s.say("tool-1", "", "What is 17 * 23?")
	if got := evs.typesInOrder(); !slices.Equal(got, []string{"emotion", "memory_recalled", "tool_result", "text", "done"}) {
		t.Fatalf("event types %v", got)
	}
	tr := evs.of("tool_result")[0].Payload
	if tr["tool"] != "local/calculate" || tr["status"] != "COMPLETED" || !strings.Contains(fmt.Sprint(tr["result"]), "391") {
		t.Errorf("tool_result %v", tr)
	}
	reqs := model.Requests()
	if len(reqs) != 2 || !slices.Contains(reqs[0].Tools, "local__calculate") {
		t.Fatalf("model requests %d, tools offered %v", len(reqs), reqs[0].Tools)
	}
	if p := reqs[1].Messages[0].Content; !strings.Contains(p, "[COMPLETED] tool_call calculate") || !strings.Contains(p, "391") {
		t.Errorf("the second reasoning prompt lacks the tool result:\n%s", p)
	}
	if evs.text() != "17 × 23 = 391." {
		t.Errorf("answer %q", evs.text())
	}
}

// TestSeed000_AC2_NativeToolCall: the model offered the MCP tools calls one
// natively with no text, as OpenAI models do; the tool runs first and
// reasoning then answers with its result: one answer, after the tool_result.
func TestSeed000_AC2_NativeToolCall(t *testing.T) {
	s, model := cognitiveServer(t, llmtest.Call("local__calculate", map[string]any{"expression": "17 * 23"}),
		llmtest.JSON(map[string]any{"response": "17 × 23 = 391."}))
	evs := s.say("native-1", "", "What is 17 * 23?")
	if got := evs.typesInOrder(); !slices.Equal(got, []string{"emotion", "memory_recalled", "tool_result", "text", "done"}) {
		t.Fatalf("event types %v, want the tool's result before the answer", got)
	}
	if tr := evs.of("tool_result")[0].Payload; tr["status"] != "COMPLETED" || !strings.Contains(fmt.Sprint(tr["result"]), "391") {
		t.Errorf("tool_result %v", tr)
	}
	if evs.text() != "17 × 23 = 391." {
		t.Errorf("answer %q, want the one answer given after the tool ran", evs.text())
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2 (the call, then the answer with its result)", len(reqs))
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Role != "tool" || last.Content != "391" {
		t.Errorf("the second reasoning request ends with %+v, want the tool's result", last)
	}
}

// TestSeed000_AC3_ChatFlowWithHITLRequest: a request for the user's
// confirmation routes to the HITL node, which suspends the thread with the
// form (a hitl event) and persists it until the user answers.
func TestSeed000_AC3_ChatFlowWithHITLRequest(t *testing.T) {
	s, _ := cognitiveServer(t, bookingRequest())
	evs := s.say("hitl-1", "", "Book a table for two at Sushi Dai tomorrow at 7pm")
	hitl := evs.of("hitl")
	if len(hitl) != 1 || hitl[0].Payload["title"] != "Book a table at Sushi Dai" || !hasFields(hitl[0].Payload, "time", "guests") {
		t.Fatalf("hitl events %v", hitl)
	}
	if done := evs[len(evs)-1].Payload; done["status"] != "interrupted" {
		t.Errorf("done %v, want status interrupted", done)
	}
	code, st := s.do("GET", "/threads/hitl-1/state", nil)
	if code != http.StatusOK || !equalJSON(st["next"], []any{"confirm"}) && !equalJSON(st["next"], []any{"confirmed"}) {
		t.Errorf("state next %v", st["next"])
	}
	if tasks, _ := st["tasks"].([]any); len(tasks) == 0 {
		t.Errorf("the suspended thread lists no pending task: %v", st)
	}
}

// TestSeed000_AC4_StreamingTokens: the response arrives as several text
// events, token by token, and the whole response is then in the dialogue
// history.
func TestSeed000_AC4_StreamingTokens(t *testing.T) {
	const answer = "Rainy days are perfect for a warm cup of tea and a good book."
	s, model := cognitiveServer(t, llmtest.JSON(map[string]any{"response": answer}))
	evs := s.say("stream-1", "", "It's raining again, any ideas for today?")
	if n := len(evs.of("text")); n < 5 {
		t.Errorf("%d text events, want the response token by token", n)
	}
	if evs.text() != answer || !model.Requests()[0].Stream {
		t.Errorf("streamed text %q (request streamed: %v)", evs.text(), model.Requests()[0].Stream)
	}
	msgs, _ := s.state("stream-1")["messages"].([]any)
	last, _ := msgs[len(msgs)-1].(map[string]any)
	if last["content"] != answer || last["type"] != "ai" {
		t.Errorf("last message %v, want the complete response", last)
	}
}

// TestSeed000_AC4_ARepairedReplyReplacesTheStreamedText: the response
// streams token by token; when the model's JSON then fails its schema and
// the model is asked again, the repaired response follows as one text event
// with replace: true, so the client shows what the conversation keeps.
func TestSeed000_AC4_ARepairedReplyReplacesTheStreamedText(t *testing.T) {
	s, _ := cognitiveServer(t,
		llmtest.JSON(map[string]any{"response": "First draft of the answer.", "memory_update": "not a list"}),
		llmtest.JSON(map[string]any{"response": "The repaired answer."}))
	evs := s.say("repair-1", "", "Hello there")
	var streamed strings.Builder
	var whole []map[string]any
	for _, e := range evs.of("text") {
		if e.Payload["delta"] == true {
			streamed.WriteString(e.Payload["content"].(string))
		} else {
			whole = append(whole, e.Payload)
		}
	}
	if streamed.String() != "First draft of the answer." {
		t.Errorf("streamed %q, want the first attempt's response token by token", streamed.String())
	}
	if len(whole) != 1 || whole[0]["content"] != "The repaired answer." || whole[0]["replace"] != true {
		t.Fatalf("whole text events %v, want the repaired answer once, replacing the streamed text", whole)
	}
	msgs, _ := s.state("repair-1")["messages"].([]any)
	if last := msgs[len(msgs)-1].(map[string]any); last["content"] != "The repaired answer." {
		t.Errorf("last message %v, want the repaired answer", last)
	}
}

// TestSeed000_AC5_NonStreamingFallback: a model server that refuses
// streaming (400 "stream is not supported") is asked again without it; the
// response arrives as one text event and the turn goes on normally.
func TestSeed000_AC5_NonStreamingFallback(t *testing.T) {
	s, model := cognitiveServer(t, llmtest.Broken(llmtest.JSON(map[string]any{"response": "One whole answer."}), llmtest.FaultRefuseStream))
	evs := s.say("nostream-1", "", "Hello there")
	if texts := evs.of("text"); len(texts) != 1 || texts[0].Payload["content"] != "One whole answer." {
		t.Fatalf("text events %v, want the response as one event", texts)
	}
	if done := evs[len(evs)-1].Payload; done["status"] != "completed" {
		t.Errorf("done %v, want completed", done)
	}
	if reqs := model.Requests(); len(reqs) != 2 || !reqs[0].Stream || reqs[1].Stream {
		t.Errorf("model requests %+v, want the refused stream, then one call without streaming", reqs)
	}
}

// TestSeed000_AC6_CheckpointOnHITLSuspension: the suspended state is
// persisted: after a server restart the thread is still waiting with its
// request, and can be answered.
func TestSeed000_AC6_CheckpointOnHITLSuspension(t *testing.T) {
	s, _ := cognitiveServer(t, bookingRequest(), llmtest.JSON(map[string]any{"response": "Booked for 19:00, 2 guests."}))
	evs := s.say("persist-1", "", "Book a table for two at Sushi Dai tomorrow at 7pm")
	id, _ := evs.of("hitl")[0].Payload["contract_id"].(string)
	s.restart()
	if c := s.contracts("persist-1")[id]; c["status"] != "WAITING" || c["title"] != "Book a table at Sushi Dai" {
		t.Fatalf("after a restart the contract is %v, want WAITING with its form", c)
	}
	if code, out := s.do("POST", "/hitl/respond", map[string]any{"session_id": "persist-1", "response": map[string]any{"time": "19:00", "guests": 2}}); code != http.StatusOK {
		t.Fatalf("respond after restart: %d %v", code, out)
	}
	evs = s.mustChat("/hitl/continue", map[string]any{"session_id": "persist-1"})
	if evs.text() != "Booked for 19:00, 2 guests." {
		t.Errorf("continue after restart: %v", evs)
	}
}

// TestSeed000_AC7_ResumingFromCheckpoint: /hitl/respond stores the answer,
// /hitl/continue loads the thread, injects the answer, resumes at reasoning,
// and leaves nothing pending (a second continue is refused).
func TestSeed000_AC7_ResumingFromCheckpoint(t *testing.T) {
	s, model := cognitiveServer(t, bookingRequest(), llmtest.JSON(map[string]any{"response": "Done: Sushi Dai at 19:00 for 2."}))
	s.say("resume-1", "", "Book a table for two at Sushi Dai tomorrow at 7pm")
	if code, _ := s.do("POST", "/hitl/continue", map[string]any{"session_id": "resume-1"}); code != http.StatusConflict {
		t.Errorf("continue before respond: %d, want 409", code)
	}
	answer := map[string]any{"time": "19:00", "guests": 2}
	if code, out := s.do("POST", "/hitl/respond", map[string]any{"session_id": "resume-1", "response": answer}); code != http.StatusOK {
		t.Fatalf("respond: %d %v", code, out)
	}
	evs := s.mustChat("/hitl/continue", map[string]any{"session_id": "resume-1"})
	if evs.text() != "Done: Sushi Dai at 19:00 for 2." || evs[len(evs)-1].Payload["status"] != "completed" {
		t.Fatalf("continue: %v", evs)
	}
	if !equalJSON(s.state("resume-1")["ecs_response"], answer) {
		t.Errorf("ecs_response %v, want the answer injected", s.state("resume-1")["ecs_response"])
	}
	if p := model.Requests()[1].Messages[0].Content; !strings.Contains(p, "[COMPLETED] ecs_request") || !strings.Contains(p, "19:00") {
		t.Errorf("the resumed reasoning prompt lacks the answered request:\n%s", p)
	}
	if code, _ := s.do("POST", "/hitl/continue", map[string]any{"session_id": "resume-1"}); code != http.StatusConflict {
		t.Errorf("second continue: %d, want 409", code)
	}
}

// TestSeed000_AC8_DetectingUserEmotion: an emotional message updates the
// emotional context, sets a modulation instruction that reaches the prompt,
// and emits an emotion event.
func TestSeed000_AC8_DetectingUserEmotion(t *testing.T) {
	s, model := cognitiveServer(t, llmtest.JSON(map[string]any{"response": "I'm sorry, that's really frustrating."}))
	evs := s.say("emo-1", "", "I'm furious, the delivery is late AGAIN and nobody answers!")
	em := evs.of("emotion")
	if len(em) != 1 || em[0].Payload["primary"] != "anger" || em[0].Payload["confidence"].(float64) <= 0.5 {
		t.Fatalf("emotion events %v, want anger with confidence", em)
	}
	ec, _ := s.state("emo-1")["emotional_context"].(map[string]any)
	instr, _ := ec["modulation_instruction"].(string)
	if ec["current_emotion"] != "anger" || instr == "" {
		t.Fatalf("emotional_context %v", ec)
	}
	if p := systemPrompt(t, model, 0); !strings.Contains(p, instr) {
		t.Errorf("the prompt lacks the modulation instruction %q:\n%s", instr, p)
	}
}

// TestSeed000_AC9_NeutralEmotionFallback: a message without emotional
// indicators is neutral, with a neutral instruction.
func TestSeed000_AC9_NeutralEmotionFallback(t *testing.T) {
	s, _ := cognitiveServer(t, llmtest.JSON(map[string]any{"response": "Tokyo uses JST, UTC+9."}))
	evs := s.say("emo-2", "", "Which time zone does Tokyo use?")
	if em := evs.of("emotion"); len(em) != 1 || em[0].Payload["primary"] != "neutral" {
		t.Fatalf("emotion events %v, want neutral", em)
	}
	ec, _ := s.state("emo-2")["emotional_context"].(map[string]any)
	if ec["current_emotion"] != "neutral" || ec["modulation_instruction"] == "" {
		t.Errorf("emotional_context %v, want neutral with an instruction", ec)
	}
}

// TestSeed000_AC12_PromptWithFullContext: the reasoning prompt carries the
// working-memory summary, the relevant long-term memory, the emotion
// modulation and the tool / human-request instructions, with the tools
// offered.
func TestSeed000_AC12_PromptWithFullContext(t *testing.T) {
	s, model := cognitiveServer(t,
		llmtest.JSON(map[string]any{"response": "Noted.", "memory_update": []any{map[string]any{"key": "allergy", "value": "The user is allergic to peanuts", "category": "fact"}}}),
		llmtest.JSON(map[string]any{"response": "Skip the satay sauce, it has peanuts."}),
	)
	s.say("ctx-1", "zoe", "Please remember I'm allergic to peanuts.")
	s.say("ctx-2", "zoe", "I'm a bit worried, can I eat the peanut cookies at the party tonight?")
	p := systemPrompt(t, model, 1)
	for _, want := range []string{"## Working memory", "Turn 1 of this conversation", "1 long-term memories are relevant",
		"## Relevant long-term memory", "- allergy: The user is allergic to peanuts", "Detected emotion: anxiety", "## Tone", "anxious",
		`"tool_call"`, `"ecs_request"`, `"memory_update"`, "Executions"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	if len(model.Requests()[1].Tools) == 0 {
		t.Error("no tools offered to the model")
	}
	if t.Failed() {
		t.Logf("prompt:\n%s", p)
	}
}

// TestSeed000_AC13_ParsingTheJSONResponse: the response goes to the dialogue
// history, a tool_call becomes a pending execution that runs, and
// memory_update entries are stored.
func TestSeed000_AC13_ParsingTheJSONResponse(t *testing.T) {
	s, _ := cognitiveServer(t,
		llmtest.JSON(map[string]any{"response": "", "tool_call": map[string]any{"name": "convert_units", "arguments": map[string]any{"value": 10, "from": "km", "to": "mi"}},
			"memory_update": []any{map[string]any{"key": "running_goal", "value": "The user is training for a 10 km run", "category": "plan", "confidence": 0.9}}}),
		llmtest.JSON(map[string]any{"response": "10 km is about 6.2 miles. Good luck with the training!"}),
	)
	evs := s.say("parse-1", "max", "I'm training for a 10 km run, how many miles is that?")
	st := s.state("parse-1")
	contracts, _ := st["contracts"].([]any)
	if len(contracts) != 1 || contracts[0].(map[string]any)["action_type"] != "tool_call" || contracts[0].(map[string]any)["tool_name"] != "convert_units" {
		t.Errorf("contracts %v, want the tool call", contracts)
	}
	msgs, _ := st["messages"].([]any)
	if last := msgs[len(msgs)-1].(map[string]any); last["content"] != "10 km is about 6.2 miles. Good luck with the training!" {
		t.Errorf("last message %v", last)
	}
	if len(evs.of("memory_stored")) != 1 || s.memories("max")["running_goal"]["category"] != "plan" {
		t.Errorf("memory not stored: events %v, memories %v", evs.of("memory_stored"), s.memories("max"))
	}
}

// TestSeed000_AC14_SuccessfulToolExecution: the tool result is captured in
// the observation, nothing is left pending, and a tool_result event is sent.
func TestSeed000_AC14_SuccessfulToolExecution(t *testing.T) {
	s, _ := cognitiveServer(t, calcReplies("(120 - 45) * 2", "That makes 150.")...)
	evs := s.say("ok-1", "", "What is (120 - 45) * 2?")
	st := s.state("ok-1")
	if obs, _ := st["observation"].(string); !strings.Contains(obs, "150") {
		t.Errorf("observation %q, want the result", obs)
	}
	for _, c := range byID(st["contracts"]) {
		if c["status"] == "PENDING" {
			t.Errorf("a contract is still pending: %v", c)
		}
	}
	if tr := evs.of("tool_result"); len(tr) != 1 || tr[0].Payload["status"] != "COMPLETED" {
		t.Errorf("tool_result %v", tr)
	}
}

// TestSeed000_AC15_ToolExecutionFailure: a failing tool puts the error in
// the observation, the run goes on, and reasoning sees the error.
func TestSeed000_AC15_ToolExecutionFailure(t *testing.T) {
	s, model := cognitiveServer(t, calcReplies("1 / 0", "That can't be computed: division by zero.")...)
	evs := s.say("fail-1", "", "What is 1 divided by 0?")
	tr := evs.of("tool_result")
	if len(tr) != 1 || tr[0].Payload["status"] != "FAILED" || !strings.Contains(fmt.Sprint(tr[0].Payload["error_message"]), "zero") {
		t.Fatalf("tool_result %v, want FAILED with the error", tr)
	}
	if obs, _ := s.state("fail-1")["observation"].(string); !strings.Contains(obs, "zero") {
		t.Errorf("observation %q, want the error", obs)
	}
	if evs[len(evs)-1].Payload["status"] != "completed" || evs.text() != "That can't be computed: division by zero." {
		t.Errorf("the run did not go on: %v", evs)
	}
	if p := model.Requests()[1].Messages[0].Content; !strings.Contains(p, "[FAILED] tool_call calculate") || !strings.Contains(p, "zero") {
		t.Errorf("reasoning prompt lacks the failure:\n%s", p)
	}
}

// TestSeed000_AC16_SSEEventFormat: every frame is {"type", "payload"}: text
// {content}, emotion {primary, confidence}, hitl with the full request,
// tool_result with the execution, done; a failure is an error event (then
// done with status error).
func TestSeed000_AC16_SSEEventFormat(t *testing.T) {
	s, model := cognitiveServer(t, append(calcReplies("2 + 2", "4."), bookingRequest())...)
	evs := append(s.say("fmt-1", "", "What is 2 + 2?"), s.say("fmt-2", "", "Book a table for two at Sushi Dai tomorrow at 7pm")...)
	for _, e := range evs {
		if e.Type == "" || e.Payload == nil {
			t.Errorf("frame without type or payload: %v", e)
		}
	}
	if c, ok := evs.of("text")[0].Payload["content"].(string); !ok || c == "" {
		t.Errorf("text payload %v", evs.of("text")[0].Payload)
	}
	em := evs.of("emotion")[0].Payload
	if _, ok := em["primary"].(string); !ok || em["confidence"] == nil {
		t.Errorf("emotion payload %v", em)
	}
	if tr := evs.of("tool_result")[0].Payload; tr["tool"] == nil || tr["status"] == nil || tr["result"] == nil || tr["contract_id"] == nil {
		t.Errorf("tool_result payload %v", tr)
	}
	if h := evs.of("hitl")[0].Payload; h["contract_id"] == nil || h["title"] == nil || h["form"] == nil || h["description"] == nil && h["field"] == nil {
		t.Errorf("hitl payload %v", h)
	}
	// A request's form has the shape of the image memory form too: type
	// "form" and its fields at the top (TestSeed000_AC18_…: and the other way).
	if h := evs.of("hitl")[0].Payload; h["type"] != "form" || h["fields"] == nil || !hasFields(h, "time", "guests") {
		t.Errorf("hitl payload %v, want type form and the fields at the top", h)
	}
	// The model fails: an error event, then done.
	model.Fail(3, http.StatusInternalServerError)
	evs = s.say("fmt-3", "", "Hello?")
	if got := evs.types(); !strings.HasSuffix(got, "error,done") || evs[len(evs)-1].Payload["status"] != "error" {
		t.Fatalf("failing model: events %v, want error then done", evs)
	}
	if msg, _ := evs.of("error")[0].Payload["message"].(string); msg == "" {
		t.Errorf("error payload %v", evs.of("error")[0].Payload)
	}
}

// stallFirstChat passes requests to next, except the first chat completion,
// which it holds without an answer until the client gives up: a model
// provider that accepted the call and hangs.
type stallFirstChat struct {
	next    http.Handler
	mu      sync.Mutex
	stalled bool
}

func (h *stallFirstChat) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	stall := !h.stalled && strings.HasSuffix(r.URL.Path, "/chat/completions")
	h.stalled = h.stalled || stall
	h.mu.Unlock()
	if !stall {
		h.next.ServeHTTP(w, r)
		return
	}
	// Read the request, as a server does, so that the client's hanging up
	// is seen.
	io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(time.Minute):
		http.Error(w, `{"error": {"message": "stalled"}}`, http.StatusGatewayTimeout)
	}
}

// TestSeed000_ModelStallEndsWithAnErrorAndResumes: a model provider that
// hangs does not hang the chat: reasoning has a timeout (shortened here to
// what a test can wait for), the stream ends with an error event and done,
// the thread is not left busy, and a run without input resumes the thread
// at its last checkpoint: reasoning runs again, emotion and memory do not.
func TestSeed000_ModelStallEndsWithAnErrorAndResumes(t *testing.T) {
	model := llmtest.NewServer(t, llmtest.WithReplies(llmtest.JSON(map[string]any{"response": "Sorry for the wait. Hello!"})))
	base, err := url.Parse(strings.TrimSuffix(model.URL(), "/v1"))
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(&conceptEmbeddings{next: &stallFirstChat{next: httputil.NewSingleHostReverseProxy(base)}})
	t.Cleanup(front.Close)
	t.Setenv("OPENAI_BASE_URL", front.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "test-key")
	t.Setenv("GRAPHCTL_LLM", "")
	// The model-calling nodes of the shipped graph have timeouts.
	shipped := map[string]time.Duration{}
	s := serveTuned(t, "cognitive", func(g *compile.Graph) {
		if g.Spec.Name != "cognitive" {
			return
		}
		for _, name := range []string{"reasoning", "vision"} {
			if n := g.Nodes[name]; n != nil && n.Spec.Timeout > 0 {
				shipped[name], n.Spec.Timeout = n.Spec.Timeout, 300*time.Millisecond
			}
		}
	})
	if shipped["reasoning"] == 0 || shipped["vision"] == 0 {
		t.Fatalf("timeouts of the shipped model nodes %v: a hanging model provider would hang the chat", shipped)
	}
	// Tool calls have theirs (TestToolNodeCallTimeout, builtin-nodes/mcp).
	if tools := s.reg; tools != nil {
		v, _ := tools.Get("cognitive")
		if d, _ := v.Graph.Nodes["tools"].Spec.Config["call_timeout"].(string); d == "" {
			t.Errorf("the shipped tools node has no call_timeout: a hanging MCP tool would hang the chat")
		}
	}

	code, evs := s.chatPost("/chat", map[string]any{"session_id": "stall-1", "message": "Hello?"})
	if code != http.StatusOK || evs.types() != "emotion,memory_recalled,error,done" {
		t.Fatalf("chat with a hanging model: %d %v, want emotion, memory, error, done", code, evs)
	}
	if msg, _ := evs.of("error")[0].Payload["message"].(string); !strings.Contains(msg, "timeout") {
		t.Errorf("error event %v, want it to name the timeout", evs.of("error")[0].Payload)
	}
	if done := evs[len(evs)-1].Payload; done["status"] != "error" {
		t.Errorf("done %v, want status error", done)
	}
	code, st := s.do("GET", "/threads/stall-1/state", nil)
	if code != http.StatusOK || !equalJSON(st["next"], []any{"reasoning"}) {
		t.Fatalf("state after the timeout: %d next %v, want reasoning pending", code, st["next"])
	}

	// Resume at the last checkpoint (LangGraph's run without input).
	code, out := s.do("POST", "/threads/stall-1/runs/wait", map[string]any{"assistant_id": "cognitive", "input": nil})
	if code != http.StatusOK {
		t.Fatalf("resume: %d %v", code, out)
	}
	msgs, _ := out["messages"].([]any)
	if len(msgs) != 2 || msgs[1].(map[string]any)["content"] != "Sorry for the wait. Hello!" {
		t.Fatalf("messages after the resume %v, want the question once and the answer", msgs)
	}
	var order []string
	for _, h := range s.history("stall-1") {
		meta, _ := h["metadata"].(map[string]any)
		order = append(asStrings(meta["writers"]), order...)
	}
	if !slices.Equal(order, []string{"input", "begin", "emotion", "memory", "reasoning"}) {
		t.Errorf("writers across the thread's checkpoints %v: the resume ran more than reasoning", order)
	}
}

// TestSeed000_ModelServerDownEndsWithAnError: with nothing listening at the
// model's address, the chat still detects the emotion and recalls memory
// (by BM25, saying the embeddings could not be used), then ends with an
// error event saying the model could not be reached, and done with status
// error — not a hang or a broken stream.
func TestSeed000_ModelServerDownEndsWithAnError(t *testing.T) {
	s := serveWithModelServerDown(t, "")
	code, evs := s.chatPost("/chat", map[string]any{"session_id": "down-1", "message": "Hello?"})
	if code != http.StatusOK || evs.types() != "emotion,memory_fallback,memory_recalled,error,done" {
		t.Fatalf("chat with the model server down: %d %v, want emotion, memory (BM25), error, done", code, evs)
	}
	if msg, _ := evs.of("error")[0].Payload["message"].(string); !strings.Contains(msg, `"reasoning"`) || !strings.Contains(msg, "cannot reach the model server at") {
		t.Errorf("error event %v, want it to name the step that failed", evs.of("error")[0].Payload)
	}
	if done := evs[len(evs)-1].Payload; done["status"] != "error" {
		t.Errorf("done %v, want status error", done)
	}
}
