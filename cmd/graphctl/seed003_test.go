package main

// Seed 003 (the Japanese Telegram RAG bot), acceptance criterion by
// criterion, against the shipped graph graphs/telegram_rag.cue driven as a
// user drives it: `graphctl serve` in this process with the bot's webhook,
// Telegram updates POSTed to /webhooks/telegram, replies read from a local
// Bot API server (tgtest), the model and embeddings from a local
// OpenAI-compatible server (llmtest, through langchaingo's OpenAI client),
// web search from a local server speaking Tavily's API, and the data dir
// inspected with the graphctl CLI and the server's HTTP API.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/builtin-nodes/llm/llmtest"
	"github.com/graphctl/graphctl/builtin-nodes/rag"
	"github.com/graphctl/graphctl/builtin-nodes/telegram"
	"github.com/graphctl/graphctl/builtin-nodes/telegram/tgtest"
	"github.com/graphctl/graphctl/builtin-nodes/websearch"
	"github.com/graphctl/graphctl/builtin-nodes/websearch/tavilytest"
	"github.com/graphctl/graphctl/runtime/telemetry/otlptest"
)

const (
	seedBotToken = "777:seed003"
	seedSecret   = "hook-secret"
)

// Chunk ids of the shipped test documents (graphs/testdata/docs), which the
// scripted model cites; content-addressed, so they are fixed by the text.
var (
	chunkFees    = chunkID("bot.md", "料金")
	chunkFunding = chunkID("drift.md", "ファンディングレート")
	chunkMargin  = chunkID("drift.md", "証拠金")
	chunkUsage   = chunkID("bot.md", "使い方")
)

// chunkID returns the id of the chunk of testdata/docs/file whose section
// ends with section, as rag_ingest computes it.
func chunkID(file, section string) string {
	src := "testdata/docs/" + file
	b, err := os.ReadFile(filepath.Join("..", "..", "graphs", "testdata", "docs", file))
	if err != nil {
		panic(err)
	}
	d := rag.Document{ID: rag.DocID(src), SourceURL: src, Text: strings.TrimSpace(string(b))}
	for _, c := range rag.Split(d, 1200) {
		if strings.HasSuffix(c.Section, section) {
			return c.ID
		}
	}
	panic("no section " + section + " in " + file)
}

// tinyPNG is a 1×1 PNG, a photo users send.
func tinyPNG() []byte {
	b, err := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
	if err != nil {
		panic(err)
	}
	return b
}

// sendBarePhoto sends a photo without a caption and wants the bot to ask
// what to do with it.
func (b *seedBot) sendBarePhoto(user int64, fileID string) {
	b.t.Helper()
	got := b.send(user, &telegram.Message{Photo: []telegram.PhotoSize{{FileID: fileID, Width: 1, Height: 1}}})
	if len(got) != 1 || !strings.Contains(got[0], "この画像について何を知りたいですか") {
		b.t.Fatalf("replies %q, want the question about the photo", got)
	}
}

// seedBot is graphctl serve answering a Telegram bot with the shipped
// telegram_rag graph, with everything it talks to local.
type seedBot struct {
	t      *testing.T
	dir    string // the graphs directory: the shipped graph and its docs
	data   string
	tg     *tgtest.Server
	llm    *llmtest.Server
	tavily *tavilytest.Server

	// said holds the texts users sent.
	said map[string]bool
	// poll makes serve long-poll getUpdates (--telegram poll) instead of
	// serving the webhook.
	poll bool
	// args are more serve flags.
	args []string

	url    string
	cancel context.CancelFunc
	done   chan error
	out    *syncBuffer
}

// newSeedBot copies the shipped graph and its documents into a temporary
// graphs directory, starts the local servers and sets the environment as a
// deployment would. webKey "" leaves TAVILY_API_KEY unset.
func newSeedBot(t *testing.T, webKey string) *seedBot {
	t.Helper()
	b := &seedBot{t: t, dir: t.TempDir(), said: map[string]bool{}}
	b.data = filepath.Join(b.dir, ".data")
	graphs := filepath.Join(repoRoot(t), "graphs")
	src, err := os.ReadFile(filepath.Join(graphs, "telegram_rag.cue"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.dir, "telegram_rag.cue"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(b.dir, "testdata", "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"bot.md", "drift.md", "llm.text"} {
		data, err := os.ReadFile(filepath.Join(graphs, "testdata", "docs", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(b.dir, "testdata", "docs", f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b.tg = tgtest.NewServer(t, seedBotToken)
	b.llm = llmtest.NewServer(t)
	b.tavily = tavilytest.NewServer(t, "tvly-seed003")
	t.Setenv(telegram.TokenEnv, seedBotToken)
	t.Setenv(telegram.URLEnv, b.tg.URL())
	t.Setenv(telegramSecretEnv, seedSecret)
	t.Setenv("OPENAI_API_KEY", "sk-test")
	t.Setenv("OPENAI_BASE_URL", b.llm.URL())
	t.Setenv("GRAPHCTL_LLM", "")
	t.Setenv(llm.EmbedderEnv, "")
	t.Setenv(llm.EmbeddingsURLEnv, "")
	t.Setenv(websearch.KeyEnv, webKey)
	t.Setenv(websearch.URLEnv, b.tavily.URL())
	t.Setenv(apiKeysEnv, "")
	return b
}

var servingRE = regexp.MustCompile(`graphctl serving .* on (http://\S+)`)

// start runs graphctl serve and waits until it listens.
func (b *seedBot) start() {
	t := b.t
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b.cancel, b.done, b.out = cancel, make(chan error, 1), &syncBuffer{}
	root := newRootCommand()
	args := []string{"serve", "--graphs", b.dir, "--addr", "127.0.0.1:0", "--data-dir", b.data, "--log-level", "error"}
	if b.poll {
		args = append(args, "--telegram", "poll")
	}
	root.SetArgs(append(args, b.args...))
	root.SetOut(b.out)
	root.SetErr(b.out)
	go func() { b.done <- root.ExecuteContext(ctx) }()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if m := servingRE.FindStringSubmatch(b.out.String()); m != nil {
			b.url = m[1]
			return
		}
		select {
		case err := <-b.done:
			t.Fatalf("serve stopped: %v\n%s", err, b.out.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("serve did not start:\n%s", b.out.String())
}

// stop stops graphctl serve (as SIGTERM does) and waits for it to exit.
func (b *seedBot) stop() {
	b.t.Helper()
	if b.cancel == nil {
		return
	}
	b.cancel()
	if err := <-b.done; err != nil {
		b.t.Fatalf("serve: %v\n%s", err, b.out.String())
	}
	b.cancel = nil
}

// post sends a Telegram update to the webhook as Telegram does and wants
// 200 (Telegram delivers the update again otherwise).
func (b *seedBot) post(u telegram.Update) {
	b.t.Helper()
	body, _ := json.Marshal(u)
	req, _ := http.NewRequest(http.MethodPost, b.url+"/webhooks/telegram", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(telegram.SecretHeader, seedSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		b.t.Fatalf("webhook answered %d: %s\nserve log:\n%s", resp.StatusCode, msg, b.out.String())
	}
}

// message is a text message from user with the next update and message id.
func message(user int64, text string) telegram.Update {
	updateSeq++
	return telegram.Update{UpdateID: updateSeq, Message: &telegram.Message{MessageID: updateSeq, Text: text,
		From: &telegram.User{ID: user, LanguageCode: "ja"}, Chat: telegram.Chat{ID: user, Type: "private"}}}
}

var updateSeq int64

// say sends a text message from user and returns the bot's new messages.
func (b *seedBot) say(user int64, text string) []string {
	b.t.Helper()
	return b.send(user, &telegram.Message{Text: text})
}

// send sends a message (From, Chat and ids filled in) and waits for the
// bot's answer: the messages it sent to the chat since.
func (b *seedBot) send(user int64, m *telegram.Message) []string {
	b.t.Helper()
	before := len(b.tg.Transcript(user))
	b.said[m.Text] = true
	updateSeq++
	m.MessageID = updateSeq
	m.From = &telegram.User{ID: user, LanguageCode: "ja"}
	m.Chat = telegram.Chat{ID: user, Type: "private"}
	b.post(telegram.Update{UpdateID: updateSeq, Message: m})
	return b.waitReplies(user, before)
}

// waitIdle waits until no run is active or queued on a thread.
func (b *seedBot) waitIdle(thread string) {
	b.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var th struct {
			Status string `json:"status"`
		}
		b.getJSON("/threads/"+thread, &th)
		if th.Status == "idle" {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	b.t.Fatalf("thread %s still busy; serve log:\n%s", thread, b.out.String())
}

// waitReplies waits until the chat has a message it did not have before
// (the webhook may answer before the run ends) and returns the new ones.
func (b *seedBot) waitReplies(user int64, before int) []string {
	b.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if got := b.tg.Transcript(user); len(got) > before {
			return got[before:]
		}
		time.Sleep(10 * time.Millisecond)
	}
	b.t.Fatalf("no reply in chat %d; serve log:\n%s", user, b.out.String())
	return nil
}

// getJSON GETs a server path and decodes the JSON answer.
func (b *seedBot) getJSON(path string, out any) {
	b.t.Helper()
	resp, err := http.Get(b.url + path)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		b.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		b.t.Fatalf("GET %s: %v: %s", path, err, body)
	}
}

// state returns a thread's state values over the LangGraph API.
func (b *seedBot) state(thread string) map[string]any {
	b.t.Helper()
	var st struct {
		Values map[string]any `json:"values"`
	}
	b.getJSON("/threads/"+thread+"/state", &st)
	return st.Values
}

// cli runs a graphctl command on the bot's data dir (serve must be stopped:
// the data dir belongs to one process).
func (b *seedBot) cli(args ...string) (string, string, int) {
	b.t.Helper()
	return run(b.t, append(args, "--data-dir", b.data)...)
}

// decision is the classifier's scripted reply.
func decision(intent, plan, reason string) llmtest.Reply {
	return llmtest.JSON(map[string]any{"decision": map[string]any{"intent": intent, "plan": plan, "reason": reason}})
}

// graded is the grader's scripted reply.
func graded(relevant bool, reason string) llmtest.Reply {
	return llmtest.JSON(map[string]any{"grade": map[string]any{"relevant": relevant, "reason": reason}})
}

// answer is the answering model's scripted reply.
func answer(text string, citations ...string) llmtest.Reply {
	c := make([]any, len(citations))
	for i, id := range citations {
		c[i] = id
	}
	return llmtest.JSON(map[string]any{"answer": text, "citations": c})
}

// promptOf returns the system prompt of the n-th model call from the end
// (1: the last).
func (b *seedBot) promptOf(fromEnd int) string {
	reqs := b.llm.Requests()
	if len(reqs) < fromEnd {
		b.t.Fatalf("%d model calls, want at least %d", len(reqs), fromEnd)
	}
	r := reqs[len(reqs)-fromEnd]
	if len(r.Messages) == 0 {
		return ""
	}
	return r.Messages[0].Content
}

func mustContain(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}

const alice, bob = int64(111), int64(222)

// AC-1: a plain text question gets an answer citing the documents (source
// URL, section and chunk id).
func TestSeed003_AC1_CitedAnswerFromDocs(t *testing.T) {
	b := newSeedBot(t, "")
	b.start()
	defer b.stop()
	b.llm.Push(decision("domain_solana_defi_trade", "rag", "a Drift question: the registered Drift docs"),
		graded(true, "the funding section answers it"),
		answer("Drift のファンディングレートは1時間ごとに精算されます。", chunkFunding))
	got := b.say(alice, "Drift のファンディングレートはどのくらいの頻度で精算されますか？")
	if len(got) != 1 {
		t.Fatalf("replies %q", got)
	}
	mustContain(t, "answer", got[0], "1時間ごとに精算", "出典:", "testdata/docs/drift.md", "Drift Protocol 入門 > ファンディングレート", "["+chunkFunding+"]")
	// The model saw the chunk it cites, with its id.
	mustContain(t, "answer prompt", b.promptOf(1), "["+chunkFunding+"]", "1時間ごとに精算")
	// REQ-TG-4: "typing" while the run goes on, and the answer streamed into
	// one message that edits grow, ending as the final text with sources.
	if a := b.tg.Actions(); len(a) == 0 || a[0].Action != "typing" || a[0].ChatID != alice {
		t.Errorf("chat actions %v, want typing", a)
	}
	if len(b.tg.Sent()) != 1 || len(b.tg.Edits()) == 0 {
		t.Errorf("%d messages sent, %d edits: want one streamed message grown by edits", len(b.tg.Sent()), len(b.tg.Edits()))
	}
	st := b.state("tg:111")
	ans := st["answer"].(map[string]any)
	if c := ans["citations"].([]any); len(c) != 1 || c[0].(map[string]any)["chunk_id"] != chunkFunding || c[0].(map[string]any)["section"] == "" {
		t.Errorf("answer citations %v", c)
	}
}

// AC-2: a photo, or a reply to a photo, gets an answer based on the vision
// summary {summary, entities, tables, warnings}.
func TestSeed003_AC2_PhotoAnswerFromVisionSummary(t *testing.T) {
	b := newSeedBot(t, "")
	png := tinyPNG()
	b.tg.AddFile("photo-1", png, "image/png")
	b.start()
	defer b.stop()
	vision := llmtest.JSON(map[string]any{"summary": "Drift の SOL-PERP 取引画面。ファンディングレート 0.01%", "entities": []any{"SOL-PERP"}, "tables": []any{}, "warnings": []any{}})
	b.llm.Push(vision, decision("domain_solana_defi_trade", "rag", "the photo shows a Drift screen"),
		graded(true, "the funding section covers it"),
		answer("画像は Drift の SOL-PERP の画面で、ファンディングは1時間ごとです。", chunkFunding))
	photo := []telegram.PhotoSize{{FileID: "photo-1", Width: 1, Height: 1}}
	got := b.send(alice, &telegram.Message{Caption: "これは何？", Photo: photo})
	mustContain(t, "photo answer", got[0], "SOL-PERP", "testdata/docs/drift.md")
	reqs := b.llm.Requests()
	if imgs := reqs[0].Messages[len(reqs[0].Messages)-1].Images; len(imgs) != 1 || !strings.HasPrefix(imgs[0], "data:image/png;base64,") {
		t.Fatalf("the first model call is not the vision call with the photo: %+v", reqs[0].Messages)
	}
	mustContain(t, "answer prompt", b.promptOf(1), "Drift の SOL-PERP 取引画面")
	v := b.state("tg:111")["vision"].(map[string]any)
	for _, k := range []string{"summary", "entities", "tables", "warnings", "image_sha256"} {
		if _, ok := v[k]; !ok {
			t.Errorf("vision state lacks %s: %v", k, v)
		}
	}

	// A reply to that photo: the photo is resolved and its summary used.
	b.llm.Push(decision("domain_solana_defi_trade", "rag", "a question about the Drift screen"),
		graded(true, "covered"), answer("その画面のファンディングレートは 0.01% です。", chunkFunding))
	photoMsg := &telegram.Message{MessageID: 1, From: &telegram.User{ID: alice}, Chat: telegram.Chat{ID: alice}, Photo: photo}
	got = b.send(alice, &telegram.Message{Text: "この画像のレートは？", ReplyToMessage: photoMsg})
	mustContain(t, "reply answer", got[0], "0.01%")
	mustContain(t, "answer prompt", b.promptOf(1), "Drift の SOL-PERP 取引画面")
	st := b.state("tg:111")
	if in := st["input"].(map[string]any); in["image"].(map[string]any)["file_id"] != "photo-1" {
		t.Errorf("the replied-to photo was not resolved: %v", in)
	}
}

// REQ-TG-2: a screenshot sent as a file (an image document) is the turn's
// photo like a photo; a message with neither text nor an image (a sticker, a
// voice message) is answered with a request for text or a photo, without a
// run or a model call.
func TestSeed003_AC2_ImageSentAsAFile(t *testing.T) {
	b := newSeedBot(t, "")
	png := tinyPNG()
	b.tg.AddFile("doc-1", png, "application/octet-stream") // the Bot API's file server sends no image type
	b.start()
	defer b.stop()
	got := b.send(alice, &telegram.Message{})
	if len(got) != 1 || got[0] != telegram.DefaultUnsupportedText || len(b.llm.Requests()) != 0 {
		t.Fatalf("a message without text or image: replies %q after %d model calls", got, len(b.llm.Requests()))
	}
	b.llm.Push(llmtest.JSON(map[string]any{"summary": "Drift の SOL-PERP 注文画面のスクリーンショット", "entities": []any{"SOL-PERP"}, "tables": []any{}, "warnings": []any{}}),
		decision("domain_solana_defi_trade", "rag", "a Drift screenshot"), graded(true, "covered"),
		answer("SOL-PERP の注文画面です。", chunkFunding))
	got = b.send(alice, &telegram.Message{Caption: "この画面は？", Document: &telegram.Document{FileID: "doc-1", FileName: "screen.png", MimeType: "image/png", FileSize: len(png)}})
	mustContain(t, "answer", got[0], "SOL-PERP の注文画面です。", "testdata/docs/drift.md")
	reqs := b.llm.Requests()
	if imgs := reqs[0].Messages[len(reqs[0].Messages)-1].Images; len(imgs) != 1 || !strings.HasPrefix(imgs[0], "data:image/png;base64,") {
		t.Fatalf("the first model call is not the vision call with the image: %+v", reqs[0].Messages)
	}
	mustContain(t, "answer prompt", b.promptOf(1), "SOL-PERP 注文画面のスクリーンショット")
}

// REQ-TG-2: an album (photos sent together, which Telegram delivers as one
// update per photo sharing a media_group_id) is one turn: every photo is
// summarized, the answer reads all the summaries and is sent once; an album
// without a caption gets the question about the photos once.
func TestSeed003_AlbumIsOneTurn(t *testing.T) {
	b := newSeedBot(t, "")
	b.poll = true
	album := func(group, caption string) {
		for i := range 3 {
			updateSeq++
			id := fmt.Sprintf("album-photo-%d", i+1)
			b.tg.AddFile(id, append(tinyPNG(), byte(i)), "image/png")
			m := &telegram.Message{MessageID: updateSeq, From: &telegram.User{ID: alice, LanguageCode: "ja"}, Chat: telegram.Chat{ID: alice, Type: "private"},
				MediaGroupID: group, Photo: []telegram.PhotoSize{{FileID: id, Width: 1, Height: 1}}}
			if i == 0 {
				m.Caption = caption
			}
			b.tg.Push(telegram.Update{UpdateID: updateSeq, Message: m})
		}
	}
	summary := func(text string) llmtest.Reply {
		return llmtest.JSON(map[string]any{"summary": text, "entities": []any{}, "tables": []any{}, "warnings": []any{}})
	}
	b.llm.Push(summary("SOL-PERP の注文画面"), summary("BTC-PERP の注文画面"), summary("ETH-PERP の注文画面"),
		decision("general_question", "direct", "three order screens to compare"),
		answer("3枚とも Drift の注文画面で、SOL・BTC・ETH の無期限先物です。"))
	album("album-a", "この3枚の画面を比べて")
	b.start()
	defer b.stop()
	b.waitReplies(alice, 0)
	b.waitIdle("tg:111")
	if got := b.tg.Transcript(alice); len(got) != 1 || got[0] != "3枚とも Drift の注文画面で、SOL・BTC・ETH の無期限先物です。" {
		t.Fatalf("replies %q, want one answer for the album", got)
	}
	visionCalls := 0
	for _, r := range b.llm.Requests() {
		for _, m := range r.Messages {
			visionCalls += len(m.Images)
		}
	}
	if visionCalls != 3 {
		t.Errorf("%d images shown to the model, want the album's 3", visionCalls)
	}
	mustContain(t, "answer prompt", b.promptOf(1), "1. SOL-PERP の注文画面", "2. BTC-PERP の注文画面", "3. ETH-PERP の注文画面", "この3枚の画面を比べて")
	st := b.state("tg:111")
	if v := st["vision"].(map[string]any); len(v["images"].([]any)) != 3 {
		t.Errorf("vision %v, want the three photos' summaries", v)
	}
	var users []string
	for _, m := range st["messages"].([]any) {
		if m := m.(map[string]any); m["role"] == "user" || m["type"] == "human" {
			users = append(users, m["content"].(string))
		}
	}
	if len(users) != 1 || users[0] != "この3枚の画面を比べて" {
		t.Errorf("user messages %q, want the album's caption once", users)
	}

	// The same photos without a caption: one question, not three.
	album("album-b", "")
	b.waitReplies(alice, 1)
	b.stop() // polling ends once every turn in hand has ended
	if got := b.tg.Transcript(alice)[1:]; len(got) != 1 || !strings.Contains(got[0], "この画像について何を知りたいですか") {
		t.Fatalf("replies %q, want the question about the photos once", got)
	}

	// The answer to the question goes on with every photo of the album
	// (their summaries cached from the first album).
	calls := len(b.llm.Requests())
	b.llm.Push(decision("general_question", "direct", "summarize the three screens"), answer("3枚の注文画面の要約です。"))
	b.tg.Push(message(alice, "画像を要約して"))
	b.start()
	if got := b.waitReplies(alice, 2); len(got) != 1 || got[0] != "3枚の注文画面の要約です。" {
		t.Fatalf("replies %q, want the answer about the album", got)
	}
	if n := len(b.llm.Requests()) - calls; n != 2 {
		t.Errorf("%d model calls for the answer, want 2 (no photo analyzed again)", n)
	}
	mustContain(t, "answer prompt", b.promptOf(1), "1. SOL-PERP の注文画面", "3. ETH-PERP の注文画面", "画像を要約して")
}

// AC-3: users' conversations are separate threads; one user's state never
// shows in another's.
func TestSeed003_AC3_UsersSeparated(t *testing.T) {
	b := newSeedBot(t, "")
	b.start()
	defer b.stop()
	b.llm.Push(decision("about_this_bot", "rag", "a question about the bot"), answer("無料です。", chunkFees))
	b.say(alice, "このボットの料金は？ 私の名前はアリスです")
	b.llm.Push(decision("smalltalk_or_short", "direct", "a greeting"), answer("Hi Bob!"))
	got := b.say(bob, "hi")
	if got[0] != "Hi Bob!" {
		t.Errorf("bob got %q", got)
	}
	st := b.state("tg:222")
	msgs, _ := json.Marshal(st["messages"])
	if strings.Contains(string(msgs), "アリス") || strings.Contains(string(msgs), "料金") {
		t.Errorf("bob's thread holds alice's messages: %s", msgs)
	}
	if st["user_id"] != "222" || len(st["messages"].([]any)) != 2 {
		t.Errorf("bob's thread: user %v, %d messages", st["user_id"], len(st["messages"].([]any)))
	}
	// §6.1: user {telegram_user_id, locale} from the update.
	if !reflect.DeepEqual(st["user"], map[string]any{"telegram_user_id": float64(222), "locale": "ja", "username": ""}) {
		t.Errorf("bob's user %v", st["user"])
	}
	// The answer prompt of bob's turn shows none of alice's conversation.
	if p := b.promptOf(1); strings.Contains(p, "アリス") {
		t.Errorf("bob's prompt shows alice's words:\n%s", p)
	}
	if got := b.tg.Transcript(bob); len(got) != 1 {
		t.Errorf("bob's chat got %d messages, want his own answer", len(got))
	}
}

// AC-4: after the bot process restarts, the same user's conversation goes
// on, with the checkpoints in the data dir (Badger) or, as in production
// (REQ-MEM-2), in PostgreSQL (--postgres).
func TestSeed003_AC4_RestartContinues(t *testing.T) {
	tests := []struct {
		name string
		args func(t *testing.T) []string
	}{
		{"badger", func(*testing.T) []string { return nil }},
		{"postgres", func(t *testing.T) []string { return []string{"--postgres", postgresURL(t)} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newSeedBot(t, "")
			b.args = tt.args(t)
			b.start()
			b.llm.Push(decision("about_this_bot", "rag", "the bot's memory"), answer("会話はスレッドに保存されます。"))
			b.say(alice, "ボットの記憶について教えて")
			b.stop()

			b.start()
			defer b.stop()
			b.llm.Push(decision("general_question", "direct", "a follow-up"), answer("はい、続きからどうぞ。"))
			b.say(alice, "さっきの話の続き")
			msgs := b.state("tg:111")["messages"].([]any)
			if len(msgs) != 4 || msgs[0].(map[string]any)["content"] != "ボットの記憶について教えて" {
				t.Fatalf("after the restart the thread has %d messages: %v", len(msgs), msgs)
			}
			// The model of the second turn saw the first turn.
			reqs := b.llm.Requests()
			last := reqs[len(reqs)-1]
			var history []string
			for _, m := range last.Messages[1:] {
				history = append(history, m.Role+": "+m.Content)
			}
			mustContain(t, "history sent to the model", strings.Join(history, "\n"), "ボットの記憶について教えて", "会話はスレッドに保存されます")
		})
	}
}

// AC-4 with long polling (graphctl serve --telegram poll): the conversation
// goes on after a restart, and an update Telegram delivers again to the new
// process (one the old process handled but had not confirmed) is not
// answered twice.
func TestSeed003_AC4_PollingRestartContinues(t *testing.T) {
	b := newSeedBot(t, "")
	b.poll = true
	b.start()
	b.llm.Push(decision("about_this_bot", "rag", "the bot's memory"), answer("会話はスレッドに保存されます。"))
	first := message(alice, "ボットの記憶について教えて")
	b.tg.Push(first)
	if got := b.waitReplies(alice, 0); len(got) != 1 || !strings.HasPrefix(got[0], "会話はスレッドに保存されます。") {
		t.Fatalf("replies %q", got)
	}
	b.stop()

	b.tg.Push(first) // not confirmed before the restart: delivered again
	b.llm.Push(decision("general_question", "direct", "a follow-up"), answer("はい、続きからどうぞ。"))
	b.tg.Push(message(alice, "さっきの話の続き"))
	b.start()
	defer b.stop()
	if got := b.waitReplies(alice, 1); len(got) != 1 || got[0] != "はい、続きからどうぞ。" {
		t.Fatalf("replies after the restart %q, want only the follow-up's answer", got)
	}
	// The reply is sent from within the run; its state is whole once the
	// run has ended.
	b.waitIdle("tg:111")
	var contents []string
	for _, m := range b.state("tg:111")["messages"].([]any) {
		contents = append(contents, m.(map[string]any)["content"].(string))
	}
	if want := []string{"ボットの記憶について教えて", "会話はスレッドに保存されます。", "さっきの話の続き", "はい、続きからどうぞ。"}; strings.Join(contents, "|") != strings.Join(want, "|") {
		t.Errorf("thread messages %q, want %q", contents, want)
	}
	if n := len(b.llm.Requests()); n != 4 {
		t.Errorf("%d model calls, want 4 (two turns)", n)
	}
}

// A shutdown (SIGTERM) while a polled turn waits for the model: the server
// cuts the run at --shutdown-grace and the update stays unconfirmed. The
// next start resumes the run, which answers; the update Telegram delivers
// again is recognised and not answered twice, and the user is never told
// that the turn failed.
func TestSeed003_PollingShutdownMidTurnResumes(t *testing.T) {
	b := newSeedBot(t, "")
	b.poll = true
	b.args = []string{"--shutdown-grace", "300ms"}
	b.start()
	held := answer("お待たせしました。")
	held.Delay = time.Hour // until the run is cut
	b.llm.Push(decision("general_question", "direct", "a question"), held)
	b.tg.Push(message(alice, "質問があります"))
	deadline := time.Now().Add(30 * time.Second)
	for len(b.llm.Requests()) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the turn did not reach its answer; serve log:\n%s", b.out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	b.stop()
	if got := b.tg.Transcript(alice); len(got) != 0 {
		t.Fatalf("before the restart the chat shows %q, want nothing yet\n%s", got, b.out.String())
	}

	b.llm.Push(answer("お待たせしました。"))
	b.start()
	defer b.stop()
	if got := b.waitReplies(alice, 0); len(got) != 1 || got[0] != "お待たせしました。" {
		t.Fatalf("replies after the restart %q, want the held answer", got)
	}
	b.waitIdle("tg:111")
	if got := b.tg.Transcript(alice); len(got) != 1 {
		t.Errorf("the chat has %q, want one answer", got)
	}
	var contents []string
	for _, m := range b.state("tg:111")["messages"].([]any) {
		contents = append(contents, m.(map[string]any)["content"].(string))
	}
	if want := []string{"質問があります", "お待たせしました。"}; strings.Join(contents, "|") != strings.Join(want, "|") {
		t.Errorf("thread messages %q, want %q", contents, want)
	}
}

// AC-5: the same photo sent twice is analyzed once: the second time the
// summary comes from the SHA-256 cache.
func TestSeed003_AC5_SamePhotoNotAnalyzedTwice(t *testing.T) {
	b := newSeedBot(t, "")
	png := tinyPNG()
	b.tg.AddFile("p-a", png, "image/png")
	b.tg.AddFile("p-b", png, "image/png") // the same image under another file id
	b.start()
	defer b.stop()
	b.llm.Push(llmtest.JSON(map[string]any{"summary": "請求書", "entities": []any{}, "tables": []any{}, "warnings": []any{}}),
		decision("general_question", "direct", "a photo of an invoice"), answer("請求書の写真です。"))
	b.send(alice, &telegram.Message{Caption: "これは？", Photo: []telegram.PhotoSize{{FileID: "p-a", Width: 1, Height: 1}}})
	b.llm.Push(decision("general_question", "direct", "the same invoice"), answer("同じ請求書ですね。"))
	b.send(alice, &telegram.Message{Caption: "もう一度", Photo: []telegram.PhotoSize{{FileID: "p-b", Width: 1, Height: 1}}})
	visionCalls := 0
	for _, r := range b.llm.Requests() {
		for _, m := range r.Messages {
			if len(m.Images) > 0 {
				visionCalls++
			}
		}
	}
	if visionCalls != 1 {
		t.Errorf("%d vision calls, want 1", visionCalls)
	}
	if v := b.state("tg:111")["vision"].(map[string]any); v["cached"] != true || v["summary"] != "請求書" {
		t.Errorf("second photo's vision %v, want the cached summary", v)
	}
}

// AC-6: re-ingesting the documents does not re-embed unchanged pages or
// chunks: an edit re-embeds only the edited chunk, an inserted section only
// itself, an unchanged web page is not even downloaded again (304).
func TestSeed003_AC6_ReingestDoesNotReembedUnchanged(t *testing.T) {
	b := newSeedBot(t, "")
	site := &etagSite{pages: map[string]string{"/guide": "# Guide\n\n## Start\n\nStart here.\n\n## Fees\n\nTrading fees are 0.1%."}}
	web := httptest.NewServer(site)
	defer web.Close()
	graph := filepath.Join(b.dir, "telegram_rag.cue")
	// The embedded texts that are not a user's message (which memory recall
	// embeds as its query) are chunks.
	embedded := func() int {
		n := 0
		for _, call := range b.llm.Embeddings() {
			for _, in := range call {
				if !b.said[in] {
					n++
				}
			}
		}
		return n
	}
	// The first turn syncs the graph's documents: 9 chunks embedded by the
	// configured model (the local OpenAI-compatible server).
	b.start()
	b.llm.Push(decision("smalltalk_or_short", "direct", "a greeting"), answer("こんにちは"))
	b.say(alice, "こんにちは")
	b.stop()
	if n := embedded(); n != 9 {
		t.Fatalf("first sync embedded %d chunks, want 9", n)
	}
	out, errOut, code := b.cli("docs", "add", web.URL+"/guide", "--graph", graph)
	if code != 0 || !strings.Contains(out, "2 embedded") {
		t.Fatalf("docs add: %d %s %s", code, out, errOut)
	}
	base := embedded()

	// Nothing changed: nothing embedded, the page answered 304.
	out, _, code = b.cli("docs", "sync", "--graph", graph)
	if code != 0 || !strings.Contains(out, "0 embedded") || embedded() != base || site.notModified != 1 {
		t.Fatalf("unchanged sync: %s (embedded %d more, %d 304s)", out, embedded()-base, site.notModified)
	}
	// One section edited in a local document: one chunk embedded.
	drift := filepath.Join(b.dir, "testdata", "docs", "drift.md")
	text, _ := os.ReadFile(drift)
	edited := strings.Replace(string(text), "1時間ごとに精算されます", "8時間ごとに精算されます", 1)
	if err := os.WriteFile(drift, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, _ = b.cli("docs", "sync", "--graph", graph)
	if embedded() != base+1 {
		t.Fatalf("after one edit %d chunks embedded, want 1: %s", embedded()-base, out)
	}
	// A section inserted at the top of the web page: only it is embedded;
	// the chunks after it move (chunk_index) and keep their embedding.
	site.set("/guide", "# Guide\n\n## New\n\nA new section.\n\n## Start\n\nStart here.\n\n## Fees\n\nTrading fees are 0.1%.")
	out, _, _ = b.cli("docs", "sync", "--graph", graph)
	if embedded() != base+2 || !strings.Contains(out, "1 embedded") || !strings.Contains(out, "2 moved") {
		t.Fatalf("after an insertion %d chunks embedded in all, want 2: %s", embedded()-base, out)
	}
	// Every embedding records its model.
	out, _, _ = b.cli("docs", "list", "--graph", graph, "--json")
	var listed struct {
		Sources []rag.Source  `json:"sources"`
		State   rag.SyncState `json:"state"`
	}
	if err := json.Unmarshal([]byte(out), &listed); err != nil {
		t.Fatalf("docs list --json: %v\n%s", err, out)
	}
	if listed.State.EmbeddingModel != "openai:text-embedding-3-small" || len(listed.Sources) != 2 || listed.State.Chunks != 12 {
		t.Errorf("docs list: %+v", listed)
	}
	for _, s := range listed.Sources {
		if s.Status != rag.StatusOK || s.UpdatedAt == "" || s.SyncedAt == "" {
			t.Errorf("source %+v", s)
		}
	}
	// The next turn does not sync again (not due): nothing embedded.
	b.start()
	defer b.stop()
	before := embedded()
	b.llm.Push(decision("smalltalk_or_short", "direct", "thanks"), answer("どういたしまして"))
	b.say(alice, "ありがとう")
	if embedded() != before {
		t.Errorf("a turn re-embedded %d chunks", embedded()-before)
	}
	if ing := b.state("tg:111")["ingest"].(map[string]any); ing["synced"] != false {
		t.Errorf("the turn synced: %v", ing)
	}
}

// REQ-RAG-1: several sources, a sitemap and a list of page URLs, are
// registered with graphctl docs add; the bot then answers from a page the
// sitemap lists and cites its URL, section and chunk id.
func TestSeed003_RAG1_SitemapAndPageURLsRegistered(t *testing.T) {
	b := newSeedBot(t, "")
	site := &etagSite{pages: map[string]string{
		"/docs/fees":   "# Jupiter Perps\n\n## 手数料\n\nJupiter の先物の清算手数料はポジションの 0.2% です。",
		"/docs/orders": "# Jupiter Perps\n\n## 注文\n\n指値注文と成行注文が使えます。",
		"/blog/news":   "# Drift Blog\n\n## お知らせ\n\nDrift は新しい市場を追加しました。",
	}}
	web := httptest.NewServer(site)
	defer web.Close()
	site.set("/sitemap.xml", `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>`+web.URL+`/docs/fees</loc></url><url><loc>`+web.URL+`/docs/orders</loc></url></urlset>
`)
	graph := filepath.Join(b.dir, "telegram_rag.cue")
	out, errOut, code := b.cli("docs", "add", web.URL+"/sitemap.xml", web.URL+"/blog/news", "--graph", graph)
	if code != 0 {
		t.Fatalf("docs add: %d %s %s", code, out, errOut)
	}
	out, _, _ = b.cli("docs", "list", "--graph", graph, "--json")
	var listed struct {
		Sources []rag.Source `json:"sources"`
	}
	if err := json.Unmarshal([]byte(out), &listed); err != nil {
		t.Fatalf("docs list --json: %v\n%s", err, out)
	}
	kinds := map[string]string{}
	for _, s := range listed.Sources {
		kinds[s.Root] = s.Kind
	}
	if kinds[web.URL+"/sitemap.xml"] != rag.KindSitemap || kinds[web.URL+"/blog/news"] == "" {
		t.Fatalf("registered sources %+v", listed.Sources)
	}
	page := web.URL + "/docs/fees"
	var chunk string
	for _, c := range rag.Split(rag.Document{ID: rag.DocID(page), SourceURL: page, Text: site.pages["/docs/fees"]}, 1200) {
		if strings.HasSuffix(c.Section, "手数料") {
			chunk = c.ID
		}
	}
	b.start()
	defer b.stop()
	b.llm.Push(decision("domain_solana_defi_trade", "rag", "a perps question: the registered docs"), graded(true, "the fees page answers it"),
		answer("Jupiter の先物の清算手数料は 0.2% です。", chunk))
	got := b.say(alice, "Jupiter の先物の清算手数料は？")
	mustContain(t, "answer", got[0], "0.2%", "出典:", page, "手数料", "["+chunk+"]")
	mustContain(t, "answer prompt", b.promptOf(1), "["+chunk+"]", "清算手数料はポジションの 0.2%")
}

// etagSite serves markdown pages with an ETag, answering 304 when it matches.
type etagSite struct {
	mu          sync.Mutex
	pages       map[string]string
	notModified int
}

func (s *etagSite) set(path, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages[path] = text
}

func (s *etagSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	text, ok := s.pages[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	etag := fmt.Sprintf(`"%x"`, len(text)*31+int(text[len(text)-2]))
	w.Header().Set("ETag", etag)
	if r.Header.Get("If-None-Match") == etag {
		s.notModified++
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
	io.WriteString(w, text)
}

// AC-7: a short greeting ("hi", "yo") gets a short, natural answer without
// retrieval.
func TestSeed003_AC7_GreetingAnsweredDirectly(t *testing.T) {
	b := newSeedBot(t, "")
	b.start()
	defer b.stop()
	for i, greet := range []string{"hi", "yo"} {
		b.llm.Push(decision("smalltalk_or_short", "direct", "a greeting needs no sources"), answer("Hi! How can I help?"))
		got := b.say(alice, greet)
		if len(got) != 1 || got[0] != "Hi! How can I help?" {
			t.Errorf("%q answered %q, want the short answer with no sources", greet, got)
		}
		st := b.state("tg:111")
		if r := st["routing"].(map[string]any); r["plan"] != "direct" || r["intent"] != "smalltalk_or_short" {
			t.Errorf("%q routed %v", greet, r)
		}
		if rag, _ := st["rag"].(map[string]any); len(rag) != 0 {
			t.Errorf("%q retrieved: %v", greet, rag)
		}
		// Two model calls per greeting (classify, answer): no grading, and
		// the answer prompt holds no documents.
		if n := len(b.llm.Requests()); n != 2*(i+1) {
			t.Errorf("%d model calls after %d greetings", n, i+1)
		}
		if p := b.promptOf(1); strings.Contains(p, "## Documents") {
			t.Errorf("the greeting's prompt has documents:\n%s", p)
		}
	}
}

// A new photo sent while the bot waits for what to do with an earlier one
// is the new input: the answer is about the new photo, and the earlier
// question is dropped.
func TestSeed003_ANewPhotoReplacesThePendingOne(t *testing.T) {
	b := newSeedBot(t, "")
	first := tinyPNG()
	second := append(append([]byte{}, first...), 0) // another image
	b.tg.AddFile("p-first", first, "image/png")
	b.tg.AddFile("p-second", second, "image/png")
	b.start()
	defer b.stop()
	b.sendBarePhoto(alice, "p-first")
	b.llm.Push(llmtest.JSON(map[string]any{"summary": "二枚目の画像", "entities": []any{}, "tables": []any{}, "warnings": []any{}}),
		decision("general_question", "direct", "a photo question"), answer("二枚目の写真です。"))
	got := b.send(alice, &telegram.Message{Caption: "これは何？", Photo: []telegram.PhotoSize{{FileID: "p-second", Width: 1, Height: 1}}})
	b.waitIdle("tg:111")
	if !strings.Contains(strings.Join(got, "\n"), "二枚目の写真です。") {
		t.Fatalf("replies %q, want the answer about the second photo", got)
	}
	sum := sha256.Sum256(second)
	st := b.state("tg:111")
	if v, _ := st["vision"].(map[string]any); v["image_sha256"] != hex.EncodeToString(sum[:]) {
		t.Errorf("vision %v, want the second photo's", v)
	}
	if st["question"] != "これは何？" {
		t.Errorf("question %v", st["question"])
	}
	var th struct {
		Status string `json:"status"`
	}
	b.getJSON("/threads/tg:111", &th)
	if th.Status != "idle" {
		t.Errorf("thread %s, want idle: the first photo's question is dropped", th.Status)
	}
}

// Telegram's /start (and /help): the bot introduces itself from its own
// documentation, cited, decided by the rules without a model call.
func TestSeed003_StartCommandIntroducesTheBot(t *testing.T) {
	b := newSeedBot(t, "")
	b.start()
	defer b.stop()
	b.llm.Push(answer("rich-agent は登録済みドキュメントと画像から引用付きで答えます。", chunkUsage))
	got := b.say(alice, "/start")
	mustContain(t, "the /start reply", strings.Join(got, "\n"), "rich-agent は", "出典:", "["+chunkUsage+"]")
	if n := len(b.llm.Requests()); n != 1 {
		t.Errorf("%d model calls, want the answer's only", n)
	}
	st := b.state("tg:111")
	if r := st["routing"].(map[string]any); r["intent"] != "about_this_bot" || r["plan"] != "rag" || r["source"] != "rules" {
		t.Errorf("/start routed %v", r)
	}
	rag, _ := st["rag"].(map[string]any)
	if !strings.Contains(fmt.Sprint(rag["retrieved_chunks"]), "bot.md") {
		t.Errorf("/start retrieved %v, want the bot's own docs", rag["retrieved_chunks"])
	}
}

// An English-speaking user (Telegram language_code "en") gets the sources
// under "Sources:", a Japanese one under "出典:".
func TestSeed003_SourcesHeadingFollowsTheUsersLanguage(t *testing.T) {
	b := newSeedBot(t, "")
	b.start()
	defer b.stop()
	b.llm.Push(decision("domain_solana_defi_trade", "rag", "a Drift question"), graded(true, "the docs answer it"),
		answer("Funding is settled every hour.", chunkFunding))
	before := len(b.tg.Transcript(bob))
	updateSeq++
	b.post(telegram.Update{UpdateID: updateSeq, Message: &telegram.Message{MessageID: updateSeq, Text: "How often is Drift funding settled?",
		From: &telegram.User{ID: bob, LanguageCode: "en"}, Chat: telegram.Chat{ID: bob, Type: "private"}}})
	b.waitReplies(bob, before)
	b.waitIdle("tg:222")
	got := b.tg.Transcript(bob)[before:]
	mustContain(t, "the English answer", got[0], "Funding is settled every hour.", "\n\nSources:\n", "["+chunkFunding+"]")
	if strings.Contains(got[0], "出典") {
		t.Errorf("the English answer has the Japanese heading: %q", got[0])
	}
}

// A model server without embeddings (a chat-only OpenAI-compatible server):
// the documents fall back to the local hash vectors and long-term memory to
// BM25, each saying so, and the bot still answers and remembers.
func TestSeed003_ModelServerWithoutEmbeddings(t *testing.T) {
	b := newSeedBot(t, "")
	target, _ := url.Parse(strings.TrimSuffix(b.llm.URL(), "/v1"))
	proxy := httputil.NewSingleHostReverseProxy(target)
	chatOnly := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/embeddings") {
			http.Error(w, `{"error": {"message": "embeddings are not served here", "type": "invalid_request_error"}}`, http.StatusNotFound)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer chatOnly.Close()
	t.Setenv("OPENAI_BASE_URL", chatOnly.URL+"/v1")
	b.start()
	defer b.stop()
	b.llm.Push(decision("general_question", "direct", "a statement about the user"),
		llmtest.JSON(map[string]any{"answer": "覚えました。", "memory_update": []any{
			map[string]any{"key": "favorite_drink", "value": "コーヒーが好き", "category": "preference"}}}))
	if got := b.say(alice, "私はコーヒーが好きです"); !strings.HasPrefix(got[0], "覚えました。") {
		t.Fatalf("first turn answered %q", got)
	}
	b.waitIdle("tg:111")
	b.llm.Push(decision("general_question", "direct", "a question about the user's taste"), answer("コーヒーがお好きでしたね。"))
	if got := b.say(alice, "私の好きな飲み物はコーヒー？"); !strings.HasPrefix(got[0], "コーヒーがお好きでしたね。") {
		t.Fatalf("second turn answered %q", got)
	}
	mustContain(t, "the answer prompt", b.promptOf(1), "What you know about the user", "コーヒーが好き")
	// The documents are indexed with the hash vectors, not left out.
	if in := b.state("tg:111")["ingest"].(map[string]any); in["embedding_model"] != "hash" || in["corpus_chunks"] == float64(0) {
		t.Errorf("ingest %v, want the documents embedded by the hash fallback", in)
	}
	if n := len(b.llm.Embeddings()); n != 0 {
		t.Errorf("%d embeddings calls reached the model server", n)
	}
}

// AC-8: a Solana/Drift/DeFi/trading question is answered with evidence from
// the documents or Tavily web search, and the reason for the choice is
// recorded (decision log, decision_log_id).
func TestSeed003_AC8_WebSearchForDomainQuestion(t *testing.T) {
	b := newSeedBot(t, "tvly-seed003")
	b.tavily.AddPages(tavilytest.Page{URL: "https://station.jup.ag/docs/perps/fees", Title: "Jupiter Perps fees",
		Content: "Jupiter perps charge a liquidation fee of 0.2% of the position. Jupiter の先物の清算手数料は 0.2% です。"})
	b.start()
	defer b.stop()
	// The docs hold nothing about Jupiter: the grader says so and the web
	// is searched too.
	b.llm.Push(decision("domain_solana_defi_trade", "rag", "a perps question: the registered docs first"),
		graded(false, "the documents are about Drift, not Jupiter"),
		answer("Jupiter の先物の清算手数料はポジションの 0.2% です。", "web-1"))
	got := b.say(alice, "Jupiter の先物の清算手数料は？")
	mustContain(t, "answer", got[0], "0.2%", "出典:", "https://station.jup.ag/docs/perps/fees", "[web-1]")
	reqs := b.tavily.Requests()
	if len(reqs) != 1 || reqs[0].Auth != "tvly-seed003" || !strings.Contains(reqs[0].Body["query"].(string), "Jupiter") {
		t.Fatalf("tavily requests %+v", reqs)
	}
	mustContain(t, "answer prompt", b.promptOf(1), "[web-1] Jupiter Perps fees")
	st := b.state("tg:111")
	routing := st["routing"].(map[string]any)
	if routing["plan"] != "rag+web" || routing["source"] != "grader" {
		t.Fatalf("routing %v", routing)
	}
	// Both decisions are in the persisted decision log with their reasons.
	for _, id := range []string{routing["decision_log_id"].(string), routing["previous"].(string)} {
		var item struct {
			Value map[string]any `json:"value"`
		}
		b.getJSON("/store/items?namespace=decisions.111&key="+id, &item)
		if item.Value["reason"] == "" || item.Value["question"] != "Jupiter の先物の清算手数料は？" || item.Value["thread_id"] != "tg:111" {
			t.Errorf("decision %s: %v", id, item.Value)
		}
	}

	// A domain question about recent facts: the model plans rag+web at once.
	b.llm.Push(decision("domain_solana_defi_trade", "rag+web", "funding on Drift now: the docs and recent web pages"),
		answer("Drift のファンディングは1時間ごとです。", chunkFunding, "web-1"))
	b.tavily.AddPages(tavilytest.Page{URL: "https://www.drift.trade/blog/funding-update", Title: "Drift funding update",
		Content: "Drift funding rates ファンディングレート update."})
	got = b.say(alice, "Drift の最新のファンディングレート事情は？")
	mustContain(t, "rag+web answer", got[0], "testdata/docs/drift.md", "["+chunkFunding+"]", "[web-1]")
	if n := len(b.tavily.Requests()); n != 2 {
		t.Errorf("%d web searches, want 2", n)
	}
}

// NFR-REL-1 with the model server down (nothing listening at
// OPENAI_BASE_URL): the rules route the message (recorded as theirs), and
// the turn, which has no model to answer with, ends with the notice that
// the bot could not answer, in Japanese and English — not with silence.
func TestSeed003_ModelServerDown(t *testing.T) {
	b := newSeedBot(t, "")
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	t.Setenv("OPENAI_BASE_URL", down.URL+"/v1")
	b.start()
	defer b.stop()
	got := b.say(alice, "Drift の証拠金について教えて")
	if len(got) != 1 || got[0] != telegram.DefaultFailureText {
		t.Fatalf("replies %q, want the failure notice", got)
	}
	// The notice is sent once the run has ended: its state is whole.
	st := b.state("tg:111")
	if r := st["routing"].(map[string]any); r["source"] != "rules" || r["intent"] != "domain_solana_defi_trade" {
		t.Errorf("routing %v, want the rules' decision", r)
	}
	if rag := st["rag"].(map[string]any); len(rag["retrieved_chunks"].([]any)) == 0 {
		t.Errorf("rag %v, want the docs retrieved without the embeddings server; ingest %v", rag, st["ingest"])
	}
}

// REQ-TOOL-1 when the tool fails: Tavily answering 503 (an outage) is
// retried once, then the answer goes on without the web and the user reads
// that no web search was available, in Japanese too; the docs' evidence is
// still cited.
func TestSeed003_WebSearchOutageAnswersWithoutTheWeb(t *testing.T) {
	b := newSeedBot(t, "tvly-seed003")
	b.tavily.Fail(2, http.StatusServiceUnavailable)
	b.start()
	defer b.stop()
	b.llm.Push(decision("domain_solana_defi_trade", "rag+web", "the latest funding rate needs the web"),
		answer("ドキュメントによるとファンディングは1時間ごとです。最新の値は Web 検索が使えないため確認できません。", chunkFunding))
	got := b.say(alice, "Drift の最新のファンディングレートは？")
	mustContain(t, "answer", got[0], "1時間ごと", "no web search available（Web 検索は利用できません）", "出典:", "["+chunkFunding+"]")
	if n := len(b.tavily.Requests()); n != 2 {
		t.Errorf("%d Tavily requests, want the search and its retry", n)
	}
	mustContain(t, "answer prompt", b.promptOf(1), "No web search available", "the search failed", "["+chunkFunding+"]")
	st := b.state("tg:111")
	if web := st["web"].(map[string]any); web["available"] != false || web["searched"] != false {
		t.Errorf("web %v, want the failed search recorded", web)
	}
	if a := st["answer"].(map[string]any); a["web_unavailable"] != true {
		t.Errorf("answer %v, want web_unavailable", a)
	}
}

// AC-8, without a Tavily key: a clear event, and a direct answer that says
// no web search is available.
func TestSeed003_AC8_NoWebSearchAvailableWithoutKey(t *testing.T) {
	b := newSeedBot(t, "")
	b.start()
	defer b.stop()
	b.llm.Push(decision("general_question", "web", "today's price needs the web"),
		answer("ウェブ検索が使えないため、最新の価格はわかりません。"))
	got := b.say(alice, "今日の SOL の価格は？")
	mustContain(t, "answer", got[0], "最新の価格はわかりません", "no web search available")
	if strings.Contains(got[0], "出典") {
		t.Errorf("an answer without sources lists sources: %s", got[0])
	}
	mustContain(t, "answer prompt", b.promptOf(1), "No web search available", "TAVILY_API_KEY")
	st := b.state("tg:111")
	if web := st["web"].(map[string]any); web["available"] != false || !strings.Contains(web["reason"].(string), "no web search available") {
		t.Errorf("web %v", web)
	}
	if len(b.tavily.Requests()) != 0 {
		t.Error("searched without a key")
	}
}

// AC-9: a question about the bot itself is answered from its own
// documentation first, with citations.
func TestSeed003_AC9_AboutTheBotFromInternalDocs(t *testing.T) {
	b := newSeedBot(t, "tvly-seed003")
	b.start()
	defer b.stop()
	b.llm.Push(decision("about_this_bot", "rag", "a question about the bot's fees: its own documentation first"),
		answer("このボットの利用料金は無料です。", chunkFees))
	got := b.say(alice, "このボットの料金はいくらですか？")
	mustContain(t, "answer", got[0], "無料", "testdata/docs/bot.md", "rich-agent ボットについて > 料金", "["+chunkFees+"]")
	if len(b.tavily.Requests()) != 0 {
		t.Error("a question about the bot went to the web")
	}
	// The classifier was shown the registered documents to prefer.
	reqs := b.llm.Requests()
	mustContain(t, "classifier prompt", reqs[0].Messages[0].Content, "Registered documents", "rich-agent ボットについて", "about_this_bot")
}

// REQ-ROUTE-1..5: when the model cannot classify (here it fails), keyword
// rules decide, and the events and the decision say so.
func TestSeed003_Route_RulesWhenModelFails(t *testing.T) {
	b := newSeedBot(t, "")
	b.start()
	defer b.stop()
	b.llm.Fail(1, http.StatusBadRequest)
	b.llm.Push(graded(true, "the margin section answers it"), answer("health が 0% で清算されます。", chunkMargin))
	got := b.say(alice, "Drift の証拠金で清算されるのはいつ？")
	mustContain(t, "answer", got[0], "health", "["+chunkMargin+"]")
	r := b.state("tg:111")["routing"].(map[string]any)
	if r["source"] != "rules" || r["intent"] != "domain_solana_defi_trade" || r["plan"] != "rag" {
		t.Errorf("routing %v", r)
	}
}

// REQ-INT-1: a photo without a question interrupts the run; Telegram shows
// the question with inline buttons, and a tap resumes the same thread.
func TestSeed003_Interrupt_ButtonsResumeTheThread(t *testing.T) {
	b := newSeedBot(t, "")
	png := tinyPNG()
	b.tg.AddFile("p-q", png, "image/png")
	b.start()
	defer b.stop()
	b.sendBarePhoto(alice, "p-q")
	sent := b.tg.Sent()
	prompt := sent[len(sent)-1]
	if len(prompt.Buttons) != 3 || prompt.Buttons[0][0].Text != "画像を要約して" {
		t.Fatalf("buttons %+v", prompt.Buttons)
	}
	if len(b.llm.Requests()) != 0 {
		t.Error("the model was called before the user said what to do")
	}
	b.llm.Push(llmtest.JSON(map[string]any{"summary": "Drift のファンディングレート画面 (SOL-PERP)", "entities": []any{}, "tables": []any{}, "warnings": []any{}}),
		decision("domain_solana_defi_trade", "rag", "a Drift screen"), graded(true, "covered"),
		answer("Drift の SOL-PERP の画面の要約です。", chunkFunding))
	before := len(b.tg.Transcript(alice))
	updateSeq++
	b.post(telegram.Update{UpdateID: updateSeq, CallbackQuery: &telegram.CallbackQuery{
		ID: "cb-1", From: &telegram.User{ID: alice}, Data: prompt.Buttons[0][0].CallbackData,
		Message: &telegram.Message{MessageID: prompt.MessageID, Chat: telegram.Chat{ID: alice}}}})
	got := b.waitReplies(alice, before)
	mustContain(t, "answer after the tap", got[len(got)-1], "SOL-PERP", "testdata/docs/drift.md")
	if a := b.tg.CallbackAnswers(); len(a) != 1 || a[0].ID != "cb-1" {
		t.Errorf("callback answers %+v", a)
	}
	if txt := b.tg.Text(alice, prompt.MessageID); !strings.Contains(txt, "→ 画像を要約して") {
		t.Errorf("the question now reads %q", txt)
	}
	st := b.state("tg:111")
	if st["question"] != "画像を要約して" {
		t.Errorf("question %v", st["question"])
	}
	mustContain(t, "vision prompt", b.llm.Requests()[0].Messages[0].Content+b.llm.Requests()[0].Messages[len(b.llm.Requests()[0].Messages)-1].Content, "画像を要約して")
}

// REQ-MEM-3..5: what a user asks to remember is stored as JSON under the
// namespace ["users", user_id], readable by namespace and key, recalled in
// that user's later turns and never in another user's.
func TestSeed003_Memory_PerUserLongTermMemory(t *testing.T) {
	b := newSeedBot(t, "")
	b.start()
	defer b.stop()
	b.llm.Push(decision("general_question", "direct", "a statement about the user"),
		llmtest.JSON(map[string]any{"answer": "覚えました。", "memory_update": []any{
			map[string]any{"key": "favorite_drink", "value": "コーヒーが好き", "category": "preference"}}}))
	b.say(alice, "私はコーヒーが好きです")
	var item struct {
		Namespace []string       `json:"namespace"`
		Value     map[string]any `json:"value"`
	}
	b.getJSON("/store/items?namespace=users.111&key=favorite_drink", &item)
	if item.Value == nil || !strings.Contains(fmt.Sprint(item.Value), "コーヒー") {
		t.Fatalf("alice's memory item %+v", item)
	}
	// §6.1: memory {long_term_entries, updated}.
	if m, _ := b.state("tg:111")["memory"].(map[string]any); m["updated"] != true {
		t.Errorf("memory after storing a fact: %v", m)
	}
	b.llm.Push(decision("general_question", "direct", "a question about the user's taste"), answer("コーヒーがお好きでしたね。"))
	b.say(alice, "私の好きな飲み物を覚えてる？")
	mustContain(t, "alice's prompt", b.promptOf(1), "What you know about the user", "コーヒー")
	st := b.state("tg:111")
	if m, _ := st["memory"].(map[string]any); m["updated"] != false || !strings.Contains(fmt.Sprint(m["long_term_entries"]), "favorite_drink") {
		t.Errorf("memory after reading the fact: %v", m)
	}
	// N4: the effective query joins the question and the relevant memory.
	if q := st["search_query"]; q != "私の好きな飲み物を覚えてる？ コーヒーが好き" {
		t.Errorf("search_query %q", q)
	}
	b.llm.Push(decision("general_question", "direct", "a question about the user's taste"), answer("まだ存じません。"))
	b.say(bob, "私の好きな飲み物を覚えてる？")
	if p := b.promptOf(1); strings.Contains(p, "コーヒー") {
		t.Errorf("bob's prompt shows alice's memory:\n%s", p)
	}
	var none any
	b.getJSON("/store/items?namespace=users.222&key=favorite_drink", &none)
	if none != nil {
		t.Errorf("bob has alice's memory: %v", none)
	}
}

// REQ-MEM-4: a fact the user corrects in a later turn replaces the one
// under the same key (the overwrite rule); facts under other keys stay.
func TestSeed003_Memory_CorrectionOverwritesByKey(t *testing.T) {
	b := newSeedBot(t, "")
	b.start()
	defer b.stop()
	remember := func(text string, updates ...map[string]any) {
		list := make([]any, len(updates))
		for i, u := range updates {
			list[i] = u
		}
		b.llm.Push(decision("general_question", "direct", "a statement about the user"),
			llmtest.JSON(map[string]any{"answer": "覚えました。", "memory_update": list}))
		b.say(alice, text)
	}
	remember("私はコーヒーが好きで、東京に住んでいます",
		map[string]any{"key": "favorite_drink", "value": "コーヒー", "category": "preference"},
		map[string]any{"key": "home_city", "value": "東京", "category": "fact"})
	remember("最近はコーヒーより紅茶が好きです", map[string]any{"key": "favorite_drink", "value": "紅茶", "category": "preference"})
	var items struct {
		Items []struct {
			Key   string         `json:"key"`
			Value map[string]any `json:"value"`
		} `json:"items"`
	}
	body, _ := json.Marshal(map[string]any{"namespace_prefix": []string{"users", "111"}, "limit": 20})
	resp, err := http.Post(b.url+"/store/items/search", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&items); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, it := range items.Items {
		got[it.Key] = fmt.Sprint(it.Value["value"])
	}
	if len(got) != 2 || got["favorite_drink"] != "紅茶" || got["home_city"] != "東京" {
		t.Errorf("alice's memory %v, want favorite_drink 紅茶 (corrected) and home_city 東京", got)
	}
}

// §7.3 and NFR-OBS-1: the conversation and message log per user (role,
// content, meta, times) and per-node observations (input/output summaries,
// duration, retrieval count) are persisted, and read over HTTP (GET
// /threads/{id}/log) and with graphctl threads log.
func TestSeed003_Obs_AuditLogOfMessagesAndNodes(t *testing.T) {
	b := newSeedBot(t, "")
	b.start()
	b.llm.Push(decision("domain_solana_defi_trade", "rag", "a Drift question"), graded(true, "covered"),
		answer("Drift のファンディングレートは1時間ごとに精算されます。", chunkFunding))
	b.say(alice, "Drift のファンディングレートは？")
	var log struct {
		Conversation map[string]any `json:"conversation"`
		Runs         []struct {
			Status   string           `json:"status"`
			Messages []map[string]any `json:"messages"`
			Nodes    []map[string]any `json:"nodes"`
		} `json:"runs"`
	}
	b.getJSON("/threads/tg:111/log", &log)
	if log.Conversation["user_id"] != "111" || log.Conversation["created_at"] == "" || log.Conversation["runs"] != float64(1) {
		t.Errorf("conversation %v", log.Conversation)
	}
	if len(log.Runs) != 1 || log.Runs[0].Status != "completed" {
		t.Fatalf("runs %+v", log.Runs)
	}
	msgs := log.Runs[0].Messages
	if len(msgs) != 2 || msgs[0]["role"] != "user" || msgs[0]["content"] != "Drift のファンディングレートは？" ||
		msgs[1]["role"] != "assistant" || !strings.Contains(msgs[1]["content"].(string), "1時間ごと") {
		t.Fatalf("messages %v", msgs)
	}
	for _, m := range msgs {
		if m["created_at"] == "" {
			t.Errorf("message without a time: %v", m)
		}
	}
	meta := msgs[0]["meta"].(map[string]any)
	if !strings.Contains(fmt.Sprint(meta["telegram"]), `"chat_id":111`) {
		t.Errorf("the user's message meta lacks the chat: %v", meta)
	}
	if msgs[1]["meta"].(map[string]any)["node"] != "answer" {
		t.Errorf("assistant message meta %v", msgs[1]["meta"])
	}
	byNode := map[string]map[string]any{}
	for _, n := range log.Runs[0].Nodes {
		byNode[n["node"].(string)] = n
		if _, ok := n["duration_ms"].(float64); !ok || n["status"] != "ok" {
			t.Errorf("node %v", n)
		}
	}
	retrieve := byNode["retrieve"]
	if retrieve == nil || retrieve["retrieval_count"] != float64(4) {
		t.Fatalf("retrieve observation %v", retrieve)
	}
	if in, _ := retrieve["input"].(map[string]any); in == nil || !strings.Contains(fmt.Sprint(in["search_query"]), "ファンディングレート") {
		t.Errorf("retrieve input summary %v", in)
	}
	if out := byNode["decide"]["output"].(map[string]any); !strings.Contains(out["routing"].(string), "domain_solana_defi_trade") {
		t.Errorf("decide output summary %v", out)
	}
	if tok := byNode["answer"]["tokens"].(map[string]any); tok["total_tokens"].(float64) <= 0 {
		t.Errorf("answer tokens %v", tok)
	}
	b.stop()

	out, errOut, code := b.cli("threads", "log", "tg:111")
	if code != 0 {
		t.Fatalf("threads log: %d %s", code, errOut)
	}
	mustContain(t, "threads log", out, "thread tg:111 (telegram_rag, user 111)", "user: Drift のファンディングレートは？",
		"node retrieve (rag_retrieve)", "retrieved 4", "assistant: Drift のファンディングレートは1時間ごと", "in:  ", "out: ")
	out, _, code = b.cli("threads", "log", "--user", "111", "--json")
	if code != 0 || !strings.Contains(out, `"thread_id": "tg:111"`) {
		t.Errorf("threads log --user: %d %s", code, out)
	}
}

// NFR-OBS-1, OpenTelemetry: with the standard OTEL_* variables, graphctl
// serve exports a trace per run over OTLP: the run's span with a child per
// node, and under those the model, embedding and tool calls with the GenAI
// semantic-convention attributes.
func TestSeed003_Obs_OpenTelemetryTraceTree(t *testing.T) {
	rcv := otlptest.NewReceiver(t)
	b := newSeedBot(t, "tvly-seed003")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.Endpoint())
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_SERVICE_NAME", "rich-agent")
	t.Setenv("OTEL_TRACES_EXPORTER", "")
	t.Setenv("OTEL_SDK_DISABLED", "")
	b.tavily.AddPages(tavilytest.Page{URL: "https://station.jup.ag/docs/perps/fees", Title: "Jupiter Perps fees", Content: "Jupiter の先物の清算手数料は 0.2% です。"})
	b.start()
	b.llm.Push(decision("domain_solana_defi_trade", "rag", "perps: the docs first"), graded(false, "not about Jupiter"),
		answer("清算手数料は 0.2% です。", "web-1"))
	b.say(alice, "Jupiter の先物の清算手数料は？")
	b.stop() // flushes the spans

	spans := rcv.Spans()
	byID := map[string]otlptest.Span{}
	var root *otlptest.Span
	for i, s := range spans {
		byID[s.SpanID] = s
		if s.Name == "invoke_agent telegram_rag" {
			root = &spans[i]
		}
	}
	if root == nil {
		t.Fatalf("no run span among %d spans", len(spans))
	}
	if root.Service != "rich-agent" || root.Attrs["gen_ai.operation.name"] != "invoke_agent" || root.Attrs["gen_ai.conversation.id"] != "tg:111" ||
		root.Attrs["graphctl.run.status"] != "completed" || root.ParentID != "" {
		t.Errorf("run span %+v", *root)
	}
	// Every span of the run is in its trace and reaches the run span.
	names := map[string]otlptest.Span{}
	for _, s := range spans {
		if s.TraceID != root.TraceID {
			continue
		}
		names[s.Name] = s
		for p := s; p.ParentID != ""; {
			parent, ok := byID[p.ParentID]
			if !ok {
				t.Errorf("span %q has a parent that was not exported", s.Name)
				break
			}
			p = parent
		}
	}
	for _, n := range []string{"ingest_docs", "classify", "decide", "retrieve", "grade", "escalate", "web_search", "answer", "compose", "reply"} {
		s, ok := names[n]
		if !ok {
			t.Errorf("no span for node %s", n)
			continue
		}
		if s.ParentID != root.SpanID || s.Attrs["graphctl.node.name"] != n {
			t.Errorf("node span %s: parent %s attrs %v", n, s.ParentID, s.Attrs)
		}
	}
	// Model calls under their nodes, with GenAI attributes and token usage.
	var chats []otlptest.Span
	for _, s := range spans {
		if s.TraceID == root.TraceID && s.Attrs["gen_ai.operation.name"] == "chat" {
			chats = append(chats, s)
		}
	}
	if len(chats) != 3 {
		t.Fatalf("%d chat spans, want 3 (classify, grade, answer)", len(chats))
	}
	for _, c := range chats {
		parent := byID[c.ParentID].Name
		if c.Name != "chat gpt-4o-mini" || c.Kind != "SPAN_KIND_CLIENT" || c.Attrs["gen_ai.request.model"] != "gpt-4o-mini" ||
			c.Attrs["gen_ai.provider.name"] != "openai" || c.Attrs["gen_ai.usage.input_tokens"].(int64) <= 0 ||
			c.Attrs["gen_ai.usage.output_tokens"].(int64) <= 0 || (parent != "classify" && parent != "grade" && parent != "answer") {
			t.Errorf("chat span under %s: %+v", parent, c)
		}
	}
	// The web search is a tool call under web_search; retrieval counts on
	// the retrieval nodes; embeddings under the nodes that embed.
	tool, ok := names["execute_tool web_search"]
	if !ok || byID[tool.ParentID].Name != "web_search" || tool.Attrs["gen_ai.tool.name"] != "web_search" || tool.Attrs["graphctl.web.results"] != int64(1) {
		t.Errorf("tool span %+v", tool)
	}
	if r := names["retrieve"]; r.Attrs["graphctl.retrieval.count"].(int64) <= 0 || r.Attrs["openinference.span.kind"] != "RETRIEVER" {
		t.Errorf("retrieve span attrs %v", r.Attrs)
	}
	if e, ok := names["embeddings text-embedding-3-small"]; !ok || e.Attrs["gen_ai.operation.name"] != "embeddings" {
		t.Errorf("no embeddings span: %v", e)
	}
}

// NFR-REL-1, NFR-IDEMP-1: when a turn fails (here the model is down), the
// user is told so in the chat and the webhook answers 200; an update
// Telegram delivers again (after a webhook call that failed or timed out) is
// not run twice: no second answer, no second copy of the message in the
// thread, no model call.
func TestSeed003_Failure_UserToldAndUpdateHandledOnce(t *testing.T) {
	b := newSeedBot(t, "")
	b.start()
	defer b.stop()
	b.llm.Fail(1000, http.StatusInternalServerError)
	failing := message(alice, "Drift の証拠金について教えて")
	b.post(failing)
	got := b.waitReplies(alice, 0)
	if len(got) != 1 || got[0] != telegram.DefaultFailureText {
		t.Fatalf("after a failed turn the chat shows %q, want the failure notice", got)
	}
	if s := b.tg.Sent(); s[0].ReplyTo != failing.Message.MessageID {
		t.Errorf("the notice replies to %d, want the user's message %d", s[0].ReplyTo, failing.Message.MessageID)
	}
	b.llm.Fail(0, http.StatusInternalServerError)
	calls := len(b.llm.Requests())
	b.post(failing) // delivered again
	if n := len(b.llm.Requests()); n != calls {
		t.Errorf("the failed update delivered again made %d model calls", n-calls)
	}

	b.llm.Push(decision("smalltalk_or_short", "direct", "a greeting"), answer("こんにちは！"))
	hello := message(alice, "こんにちは")
	b.post(hello)
	if got := b.waitReplies(alice, 1); len(got) != 1 || got[0] != "こんにちは！" {
		t.Fatalf("replies %q", got)
	}
	calls = len(b.llm.Requests())
	b.post(hello) // delivered again
	if n := len(b.llm.Requests()); n != calls {
		t.Errorf("an answered update delivered again made %d model calls", n-calls)
	}
	if got := b.tg.Transcript(alice); len(got) != 2 {
		t.Errorf("the chat has %d messages, want the notice and one answer: %q", len(got), got)
	}
	var contents []string
	for _, m := range b.state("tg:111")["messages"].([]any) {
		contents = append(contents, m.(map[string]any)["content"].(string))
	}
	if want := []string{"Drift の証拠金について教えて", "こんにちは", "こんにちは！"}; strings.Join(contents, "|") != strings.Join(want, "|") {
		t.Errorf("thread messages %q, want %q", contents, want)
	}
}

// REQ-TG-4: "typing" lasts five seconds in Telegram; while steps that
// stream no text take longer (here the classifier's model takes 4.5 s), it
// is shown again.
func TestSeed003_TypingShownThroughSlowSteps(t *testing.T) {
	b := newSeedBot(t, "")
	b.start()
	defer b.stop()
	slow := decision("smalltalk_or_short", "direct", "a greeting")
	slow.Delay = 4500 * time.Millisecond
	b.llm.Push(slow, answer("こんにちは！"))
	if got := b.say(alice, "こんにちは"); len(got) != 1 || got[0] != "こんにちは！" {
		t.Fatalf("replies %q", got)
	}
	typing := 0
	for _, a := range b.tg.Actions() {
		if a.ChatID == alice && a.Action == "typing" {
			typing++
		}
	}
	if typing < 2 {
		t.Errorf("typing shown %d times in a 4.5 s turn, want it repeated before it lapses", typing)
	}
}

// Timeouts: the shipped graph bounds its model and web steps (timeout:
// here shortened to 300ms). A classifier that does not answer in time
// leaves the decision to the rules; a web search that hangs is given up and
// the answer goes on without it; an answering model that hangs fails the
// turn, and the user is told, instead of waiting forever.
func TestSeed003_Timeouts_SlowModelAndHungWebSearch(t *testing.T) {
	b := newSeedBot(t, "tvly-seed003")
	graph := filepath.Join(b.dir, "telegram_rag.cue")
	src, _ := os.ReadFile(graph)
	timeouts := regexp.MustCompile(`\btimeout: "[0-9]+s"`)
	if n := len(timeouts.FindAll(src, -1)); n != 5 {
		t.Fatalf("the shipped graph sets %d node timeouts, want 5 (vision, classify, grade, web_search, answer)", n)
	}
	if err := os.WriteFile(graph, timeouts.ReplaceAll(src, []byte(`timeout: "300ms"`)), 0o644); err != nil {
		t.Fatal(err)
	}
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // read, so that the server sees the client give up
		<-r.Context().Done()
	}))
	defer hung.Close()
	t.Setenv(websearch.URLEnv, hung.URL)
	b.start()
	defer b.stop()

	slow := decision("domain_solana_defi_trade", "rag", "too late")
	slow.Delay = 5 * time.Second
	b.llm.Push(slow, graded(true, "covered"), answer("Drift のファンディングは1時間ごとです。", chunkFunding))
	got := b.say(alice, "Drift の最新のファンディングレートは？")
	// The search given up, the user reads that the web was not searched.
	mustContain(t, "answer", got[0], "1時間ごと", "["+chunkFunding+"]", "no web search available（Web 検索は利用できません）")
	st := b.state("tg:111")
	if r := st["routing"].(map[string]any); r["source"] != "rules" || r["plan"] != "rag+web" {
		t.Errorf("routing %v, want the rules' rag+web", r)
	}

	hang := answer("too late")
	hang.Delay = 5 * time.Second
	b.llm.Push(decision("smalltalk_or_short", "direct", "a greeting"), hang)
	before := len(b.tg.Transcript(alice))
	start := time.Now()
	updateSeq++
	b.post(telegram.Update{UpdateID: updateSeq, Message: &telegram.Message{MessageID: updateSeq, Text: "こんにちは",
		From: &telegram.User{ID: alice}, Chat: telegram.Chat{ID: alice, Type: "private"}}})
	if got := b.waitReplies(alice, before); got[len(got)-1] != telegram.DefaultFailureText {
		t.Errorf("replies %q, want the failure notice", got)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("the failure notice came after %s, not after the answer's timeout", d)
	}
}

// REQ-TG-4 under Telegram's flood control: while the chat's sends answer
// 429 with retry_after, the streamed previews are skipped and the answer is
// sent once the wait is over, as one message.
func TestSeed003_FloodControl_AnswerSentAfterRetryAfter(t *testing.T) {
	b := newSeedBot(t, "")
	b.start()
	defer b.stop()
	b.llm.Push(decision("about_this_bot", "rag", "the bot's fees"), answer("このボットの利用料金は無料です。", chunkFees))
	b.tg.FloodControl(alice, time.Second)
	got := b.say(alice, "このボットの料金は？")
	if len(got) != 1 || !strings.HasPrefix(got[0], "このボットの利用料金は無料です。") || !strings.Contains(got[0], "["+chunkFees+"]") {
		t.Fatalf("replies %q, want the answer with its source", got)
	}
	if b.tg.Limited() == 0 {
		t.Error("no call met the flood control")
	}
}

// The webhook refuses a call without the secret Telegram was given
// ($TELEGRAM_WEBHOOK_SECRET) and a body that is not an Update with a 4xx and
// a JSON error, and starts no run.
func TestSeed003_WebhookRefusesBadCalls(t *testing.T) {
	b := newSeedBot(t, "")
	b.start()
	defer b.stop()
	tests := []struct {
		name, secret, body string
		status             int
		code               string
	}{
		{"no secret", "", `{"update_id": 1, "message": {"message_id": 1, "from": {"id": 111}, "chat": {"id": 111}, "text": "hi"}}`, http.StatusUnauthorized, "unauthorized"},
		{"wrong secret", "guess", `{"update_id": 1, "message": {"message_id": 1, "from": {"id": 111}, "chat": {"id": 111}, "text": "hi"}}`, http.StatusUnauthorized, "unauthorized"},
		{"not JSON", seedSecret, `{"update_id": 1, message`, http.StatusBadRequest, "invalid_update"},
		{"not an Update", seedSecret, `[1, 2]`, http.StatusBadRequest, "invalid_update"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, b.url+"/webhooks/telegram", strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			if tt.secret != "" {
				req.Header.Set(telegram.SecretHeader, tt.secret)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var out struct {
				Detail string `json:"detail"`
				Error  struct {
					Code string `json:"code"`
				} `json:"error"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != tt.status || out.Error.Code != tt.code || out.Detail == "" {
				t.Errorf("%d %+v (%v), want %d with a JSON error %s", resp.StatusCode, out, err, tt.status, tt.code)
			}
		})
	}
	if n := len(b.llm.Requests()); n != 0 || len(b.tg.Sent()) != 0 {
		t.Errorf("refused calls made %d model calls and %d messages", n, len(b.tg.Sent()))
	}
}

// graphctl docs says what is wrong: no graph, a graph without a corpus, an
// unknown source, a missing file.
func TestDocsCommandErrors(t *testing.T) {
	dir := t.TempDir()
	graph := filepath.Join(repoRoot(t), "graphs", "telegram_rag.cue")
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"docs", "list"}, 2, "--graph FILE"},
		{[]string{"docs", "list", "--graph", filepath.Join(repoRoot(t), "graphs", "slot_filling.cue")}, 2, "has no rag_ingest node"},
		{[]string{"docs", "remove", "nope", "--graph", graph}, 1, `no source "nope" is registered`},
		{[]string{"docs", "add", filepath.Join(dir, "missing.md"), "--graph", graph}, 1, "missing.md"},
		{[]string{"threads", "log", "tg:404"}, 1, "no audit log"},
		{[]string{"threads", "log"}, 2, "give either a THREAD or --user ID"},
	}
	for _, tt := range tests {
		_, errOut, code := run(t, append(tt.args, "--data-dir", filepath.Join(dir, "data"))...)
		if code != tt.code || !strings.Contains(errOut, tt.want) {
			t.Errorf("graphctl %s: exit %d %q, want %d with %q", strings.Join(tt.args, " "), code, errOut, tt.code, tt.want)
		}
	}
}
