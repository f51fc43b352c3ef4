package graphs_test

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/llm/llmtest"
	"github.com/graphctl/graphctl/builtin-nodes/telegram"
	"github.com/graphctl/graphctl/builtin-nodes/telegram/tgtest"
	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/storage/badger"
)

// TestTelegramRAGIntegration runs the Telegram RAG graph end to end: updates
// go through the telegram adapter to an engine over Badger, the model is the
// langchaingo OpenAI client against the local OpenAI-compatible server, and
// replies go to the local Bot API server. It covers a cited answer from the
// local docs, a photo question, two users' separate threads, a restart, and a
// reply to the same photo served from the vision cache after the restart.
func TestTelegramRAGIntegration(t *testing.T) {
	const (
		alice = int64(111)
		bob   = int64(222)
	)
	png, err := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
	if err != nil {
		t.Fatal(err)
	}
	decision := func(intent, plan, reason string) llmtest.Reply {
		return llmtest.JSON(map[string]any{"decision": map[string]any{"intent": intent, "plan": plan, "reason": reason}})
	}
	grade := func(relevant bool) llmtest.Reply {
		return llmtest.JSON(map[string]any{"grade": map[string]any{"relevant": relevant, "reason": "the Drift docs cover it"}})
	}
	llmSrv := llmtest.NewServer(t, llmtest.WithReplies(
		decision("about_this_bot", "rag", "a question about the bot's fees"),
		llmtest.JSON(map[string]any{"answer": "このボットの利用料金は無料です。", "citations": []any{"7ae6998210bc7948"}}),
		llmtest.JSON(map[string]any{"summary": "Drift の SOL-PERP 取引画面", "entities": []any{"SOL-PERP"}, "tables": []any{}, "warnings": []any{}}),
		decision("domain_solana_defi_trade", "rag", "a Drift trading screen"),
		grade(true),
		llmtest.JSON(map[string]any{"answer": "SOL-PERP の画面です。ファンディングは1時間ごとに精算されます。", "citations": []any{"4dc750c86a794e06"}}),
		decision("smalltalk_or_short", "direct", "a greeting"),
		llmtest.JSON(map[string]any{"answer": "Hello Bob!"}),
		decision("domain_solana_defi_trade", "rag", "the same Drift screen"),
		grade(true),
		llmtest.JSON(map[string]any{"answer": "さきほどの SOL-PERP の画像ですね。"}),
	))
	t.Setenv("OPENAI_BASE_URL", llmSrv.URL())
	t.Setenv("OPENAI_API_KEY", "test-key")
	t.Setenv("GRAPHCTL_LLM", "")
	tg := tgtest.NewServer(t, "777:test")
	tg.AddFile("photo-1", png, "image/png")

	g, diags, err := runtime.Load("telegram_rag.cue")
	if err != nil || diags.HasErrors() {
		t.Fatalf("load telegram_rag.cue: %v %v", err, diags)
	}
	dir := t.TempDir()
	ctx := context.Background()
	var db *badger.DB
	var eng *engine.Engine
	states := map[string]map[string]any{}
	open := func() {
		var err error
		db, err = badger.Open(dir, badger.Options{})
		if err != nil {
			t.Fatalf("open Badger: %v", err)
		}
		eng = engine.New(g, db.Checkpointer(), engine.Options{Store: db.Store(), Extra: telegram.BotKey.Bind(node.Extra{}, tg.Client())})
		if err := eng.Preflight(ctx); err != nil {
			t.Fatalf("preflight: %v", err)
		}
	}
	closeAll := func() {
		eng.Close()
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	open()
	ad := &telegram.Adapter{Client: tg.Client(), StreamNodes: []string{"answer"}, Run: func(ctx context.Context, thread string, input map[string]any, sink event.Sink) error {
		res, err := eng.Run(ctx, engine.Request{ThreadID: thread, Input: input}, sink)
		if err != nil {
			return err
		}
		states[thread] = res.State
		if res.Status != engine.StatusCompleted {
			t.Fatalf("thread %s: status %s: %v (path %v)", thread, res.Status, res.Err, res.Path)
		}
		return nil
	}}
	send := func(id int64, m *telegram.Message) {
		t.Helper()
		if err := ad.Handle(ctx, telegram.Update{UpdateID: id, Message: m}); err != nil {
			t.Fatalf("update %d: %v", id, err)
		}
	}
	userA := &telegram.User{ID: alice, LanguageCode: "ja"}
	userB := &telegram.User{ID: bob, LanguageCode: "en"}

	// 1. A Japanese question: a cited answer from the local docs.
	send(1, &telegram.Message{MessageID: 1, From: userA, Chat: telegram.Chat{ID: alice}, Text: "このボットの料金はいくらですか？"})
	got := tg.Transcript(alice)
	if len(got) != 1 {
		t.Fatalf("alice got %d messages, want 1: %q", len(got), got)
	}
	for _, want := range []string{"このボットの利用料金は無料です。", "出典:", "testdata/docs/bot.md", "料金", "[7ae6998210bc7948]"} {
		if !strings.Contains(got[0], want) {
			t.Errorf("answer %q lacks %q", got[0], want)
		}
	}
	if acts := tg.Actions(); len(acts) != 1 || acts[0].Action != "typing" {
		t.Errorf("chat actions %v, want typing", acts)
	}
	if prompt := llmSrv.Requests()[1].Messages[0].Content; !strings.Contains(prompt, "[7ae6998210bc7948]") || !strings.Contains(prompt, "無料") {
		t.Errorf("the answer prompt does not show the retrieved chunk:\n%s", prompt)
	}

	// 2. A photo with a caption: vision summary, then the answer.
	send(2, &telegram.Message{MessageID: 2, From: userA, Chat: telegram.Chat{ID: alice}, Caption: "これは何？",
		Photo: []telegram.PhotoSize{{FileID: "photo-1", Width: 1, Height: 1}}})
	reqs := llmSrv.Requests()
	if len(reqs) != 6 || len(reqs[2].Messages) == 0 || len(reqs[2].Messages[len(reqs[2].Messages)-1].Images) != 1 ||
		!strings.HasPrefix(reqs[2].Messages[len(reqs[2].Messages)-1].Images[0], "data:image/png;base64,") {
		t.Fatalf("want a vision call with the PNG data URL, then a classification and an answer; got %d calls", len(reqs))
	}
	if v := states["tg:111"]["vision"].(map[string]any); v["summary"] != "Drift の SOL-PERP 取引画面" || v["cached"] != false {
		t.Errorf("vision state %v", v)
	}
	if got := tg.Transcript(alice); len(got) != 2 || !strings.Contains(got[1], "testdata/docs/drift.md") {
		t.Errorf("photo answer %q, want one citing drift.md", got)
	}

	// 3. Another user: own thread, no trace of alice's conversation.
	send(3, &telegram.Message{MessageID: 3, From: userB, Chat: telegram.Chat{ID: bob}, Text: "hi"})
	bobState := states["tg:222"]
	if msgs := bobState["messages"].([]any); len(msgs) != 2 {
		t.Errorf("bob's thread has %d messages, want his own 2", len(msgs))
	}
	if r := bobState["routing"].(map[string]any); r["plan"] != "direct" {
		t.Errorf("bob's greeting routed %v, want direct", r)
	}
	if got := tg.Transcript(bob); len(got) != 1 || got[0] != "Hello Bob!" {
		t.Errorf("bob got %q", got)
	}

	// 4. Restart, then alice replies to her photo: the thread continues and
	// the summary comes from the cache (no second vision call).
	closeAll()
	open()
	defer closeAll()
	photoMsg := &telegram.Message{MessageID: 2, From: userA, Chat: telegram.Chat{ID: alice}, Photo: []telegram.PhotoSize{{FileID: "photo-1", Width: 1, Height: 1}}}
	send(4, &telegram.Message{MessageID: 4, From: userA, Chat: telegram.Chat{ID: alice}, Text: "さっきの画像のこと、もう一度", ReplyToMessage: photoMsg})
	st := states["tg:111"]
	if v := st["vision"].(map[string]any); v["cached"] != true || v["summary"] != "Drift の SOL-PERP 取引画面" {
		t.Errorf("vision after restart %v, want the cached summary", v)
	}
	if n := len(llmSrv.Requests()); n != 11 {
		t.Errorf("%d model calls in all, want 11 (the repeated photo is not analyzed again)", n)
	}
	msgs := st["messages"].([]any)
	if len(msgs) != 6 || msgs[0].(map[string]any)["content"] != "このボットの料金はいくらですか？" {
		t.Errorf("alice's thread after restart has %d messages (first %v), want her whole conversation", len(msgs), msgs[0])
	}
	if in := st["input"].(map[string]any); in["image"].(map[string]any)["file_id"] != "photo-1" {
		t.Errorf("the reply's photo was not resolved: %v", in)
	}
}
