package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/graphctl/graphctl/builtin-nodes/telegram"
	"github.com/graphctl/graphctl/builtin-nodes/telegram/tgtest"
	"github.com/graphctl/graphctl/server/sse"
)

// The end-to-end test runs every shipped graph against a real model
// provider, through `graphctl serve` and `graphctl run` as a user runs them.
// It is opt-in, never part of CI, and needs the network and a key:
//
//	GRAPHCTL_E2E=1 OPENAI_API_KEY=sk-... go test ./cmd/graphctl -run TestE2E -v
//
// GRAPHCTL_E2E_LLM picks the model (default openai:gpt-4o-mini), e.g.
// anthropic:claude-3-5-haiku-latest with ANTHROPIC_API_KEY. The research
// graph searches the public PubMed, Europe PMC and ClinicalTrials.gov unless
// GRAPHCTL_PUBMED_URL and friends point elsewhere; Telegram is a local Bot
// API server (the bot token is not needed).

// e2eKeys lists, per provider, the environment variables of which one must
// be set.
var e2eKeys = map[string][]string{
	"openai":      {"OPENAI_API_KEY", "OPENAI_BASE_URL"},
	"anthropic":   {"ANTHROPIC_API_KEY"},
	"googleai":    {"GOOGLE_API_KEY"},
	"ollama":      nil,
	"huggingface": {"HF_TOKEN", "HF_BASE_URL"},
}

// e2e is a running `graphctl serve` over the shipped graphs.
type e2e struct {
	t   *testing.T
	url string
	tg  *tgtest.Server
}

func TestE2E(t *testing.T) {
	if os.Getenv("GRAPHCTL_E2E") != "1" {
		t.Skip("end-to-end test against a real model: set GRAPHCTL_E2E=1 and a provider key (see e2e_test.go)")
	}
	spec := os.Getenv("GRAPHCTL_E2E_LLM")
	if spec == "" {
		spec = "openai:gpt-4o-mini"
	}
	provider, _, _ := strings.Cut(spec, ":")
	keys, known := e2eKeys[provider]
	if !known {
		t.Fatalf("GRAPHCTL_E2E_LLM=%s: provider %q is not one of openai, anthropic, googleai, ollama, huggingface", spec, provider)
	}
	if len(keys) > 0 && !anySet(keys) {
		t.Fatalf("GRAPHCTL_E2E=1 with %s needs one of %v in the environment", spec, keys)
	}
	t.Setenv("GRAPHCTL_LLM", spec)
	t.Setenv(apiKeysEnv, "")

	const token = "42:e2e"
	tg := tgtest.NewServer(t, token)
	t.Setenv(telegram.TokenEnv, token)
	t.Setenv(telegram.URLEnv, tg.URL())
	t.Setenv(telegramSecretEnv, "")

	graphs := filepath.Join(repoRoot(t), "graphs")
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	root := newRootCommand()
	root.SetArgs([]string{"serve", "--graphs", graphs, "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--log-level", "warn"})
	root.SetOut(out)
	root.SetErr(out)
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v\n%s", err, out.String())
		}
	}()
	e := &e2e{t: t, tg: tg}
	served := regexp.MustCompile(`graphctl serving .* on (http://\S+)`)
	for deadline := time.Now().Add(60 * time.Second); e.url == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if m := served.FindStringSubmatch(out.String()); m != nil {
			e.url = m[1]
		}
	}
	if e.url == "" {
		t.Fatalf("graphctl serve did not start:\n%s", out.String())
	}

	t.Run("cognitive", func(t *testing.T) {
		evs := e.chat(t, "/chat", map[string]any{"session_id": "e2e-cog-1", "user_id": "e2e-user",
			"message": "Please remember that my cat is called Miso. Also, what is 1234 * 5678? Use your calculator tool."})
		e.mustComplete(t, evs)
		if tr := ofType(evs, "tool_result"); len(tr) == 0 || tr[0]["payload"].(map[string]any)["status"] != "COMPLETED" {
			t.Errorf("no completed tool call: %v", evs)
		}
		if got := strings.NewReplacer(",", "", " ", "", "\u202f", "").Replace(chatText(evs)); !strings.Contains(got, "7006652") {
			t.Errorf("answer %q lacks 7,006,652", chatText(evs))
		}
		// Another conversation of the same user recalls the memory.
		evs = e.chat(t, "/chat", map[string]any{"session_id": "e2e-cog-2", "user_id": "e2e-user", "message": "What is my cat's name?"})
		e.mustComplete(t, evs)
		if !strings.Contains(chatText(evs), "Miso") {
			t.Errorf("recall answer %q lacks Miso; events %v", chatText(evs), evs)
		}
	})

	t.Run("slot_filling", func(t *testing.T) {
		// Only a model understands this message: the rules find no symptom
		// and no goal in it (they would ask for the goal).
		st := e.wait(t, "e2e-slot", "slot_filling", map[string]any{"messages": []any{map[string]any{"role": "user",
			"content": "The thing that holds the plates in my Whirlpool WDT780SAEM1 fell off its track. Can you sort it out?"}}})
		if st["model"] != "WDT780SAEM1" || st["goal"] != "diagnose_repair" || !strings.Contains(fmt.Sprint(st["symptoms"]), "rack_problem") ||
			!strings.Contains(lastReply(st), "[TOOL USED: diagnose_repair]") {
			t.Errorf("state %v", st)
		}
		st = e.wait(t, "e2e-slot", "slot_filling", map[string]any{"messages": []any{map[string]any{"role": "user",
			"content": "Sorry, I misread the label: the model number is WDT750SAHZ0."}}})
		if st["model"] != "WDT750SAHZ0" {
			t.Errorf("after the correction the model is %v", st["model"])
		}
	})

	t.Run("research", func(t *testing.T) {
		st := e.wait(t, "e2e-research", "research", map[string]any{"query": "metformin cognitive decline", "max_iterations": 1})
		ev, _ := st["evidence"].([]any)
		hyps, _ := st["hypotheses"].([]any)
		report, _ := st["report"].(string)
		if len(ev) == 0 || len(hyps) == 0 || len(report) < 100 {
			t.Errorf("evidence %d, hypotheses %d, report %q", len(ev), len(hyps), report)
		}
		// A real model's citations are held to the evidence found.
		found := map[any]bool{}
		for _, e := range ev {
			found[e.(map[string]any)["id"]] = true
		}
		for _, h := range hyps {
			h := h.(map[string]any)
			for _, list := range []string{"supporting_evidence_ids", "contradicting_evidence_ids"} {
				ids, _ := h[list].([]any)
				for _, id := range ids {
					if !found[id] {
						t.Errorf("hypothesis %v cites %v, which is not among the evidence", h["id"], id)
					}
				}
			}
		}
	})

	t.Run("telegram_rag", func(t *testing.T) {
		body, _ := json.Marshal(telegram.Update{UpdateID: 1, Message: &telegram.Message{MessageID: 7,
			From: &telegram.User{ID: 9001}, Chat: telegram.Chat{ID: 9001, Type: "private"}, Text: "こんにちは！あなたは何ができますか？"}})
		resp, err := http.Post(e.url+"/webhooks/telegram", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("webhook: %d %s; serve output:\n%s", resp.StatusCode, raw, out.String())
		}
		var replies []string
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			if replies = tg.Transcript(9001); len(replies) > 0 {
				break
			}
		}
		if len(replies) == 0 || strings.TrimSpace(replies[0]) == "" {
			t.Errorf("the bot did not answer; serve output:\n%s", out.String())
		}
	})

	t.Run("graphctl run", func(t *testing.T) {
		stdout, stderr, code := run(t, "run", filepath.Join(graphs, "slot_filling.cue"), "--data-dir", t.TempDir(), "--json",
			"-i", "Is part PS3406971 compatible with my WDT780SAEM1 dishwasher?")
		if code != 0 || !strings.Contains(stdout, "[TOOL USED: check_compatibility]") {
			t.Errorf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
		}
	})
}

func anySet(names []string) bool {
	for _, n := range names {
		if os.Getenv(n) != "" {
			return true
		}
	}
	return false
}

// chat posts to a chat endpoint and returns the stream's events.
func (e *e2e) chat(t *testing.T, path string, body any) []map[string]any {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(e.url+path, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST %s: %d %s", path, resp.StatusCode, raw)
	}
	var evs []map[string]any
	if err := sse.Parse(resp.Body, func(f sse.Frame) error {
		var ev map[string]any
		if err := json.Unmarshal(f.Data, &ev); err != nil {
			return err
		}
		evs = append(evs, ev)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return evs
}

func (e *e2e) mustComplete(t *testing.T, evs []map[string]any) {
	t.Helper()
	if len(evs) == 0 {
		t.Fatal("empty stream")
	}
	last := evs[len(evs)-1]
	if last["type"] != "done" || last["payload"].(map[string]any)["status"] != "completed" || chatText(evs) == "" {
		t.Fatalf("the turn did not complete with an answer: %v", evs)
	}
}

// wait runs a graph on a thread with POST /threads/{id}/runs/wait.
func (e *e2e) wait(t *testing.T, thread, graph string, input map[string]any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"assistant_id": graph, "if_not_exists": "create", "input": input})
	resp, err := http.Post(e.url+"/threads/"+thread+"/runs/wait", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || resp.StatusCode != http.StatusOK || st["__error__"] != nil {
		t.Fatalf("run %s: %d %v %v", graph, resp.StatusCode, err, st)
	}
	return st
}

func ofType(evs []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, e := range evs {
		if e["type"] == typ {
			out = append(out, e)
		}
	}
	return out
}

func chatText(evs []map[string]any) string {
	var b strings.Builder
	for _, e := range ofType(evs, "text") {
		c, _ := e["payload"].(map[string]any)["content"].(string)
		b.WriteString(c)
	}
	return b.String()
}

func lastReply(st map[string]any) string {
	msgs, _ := st["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		if m, _ := msgs[i].(map[string]any); m["type"] == "ai" {
			s, _ := m["content"].(string)
			return s
		}
	}
	return ""
}
