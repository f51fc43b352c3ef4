package telegram_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/builtin-nodes/telegram"
	"github.com/graphctl/graphctl/builtin-nodes/telegram/tgtest"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/node"

	_ "github.com/graphctl/graphctl/builtin-nodes/flow"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		max   int
		parts []string
	}{
		{"fits", "hello", 10, []string{"hello"}},
		{"empty", "", 10, []string{""}},
		{"at a paragraph", "aaaa\n\nbbbbbb", 10, []string{"aaaa\n\n", "bbbbbb"}},
		{"at a space", "one two three", 9, []string{"one two ", "three"}},
		{"hard cut", "abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
		{"runes not bytes", strings.Repeat("あ", 6), 4, []string{"ああああ", "ああ"}},
		{"emoji count two UTF-16 units", strings.Repeat("😀", 3), 4, []string{"😀😀", "😀"}},
		{"mixed widths", "a😀b😀", 3, []string{"a😀", "b😀"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := telegram.Split(tt.text, tt.max)
			if strings.Join(got, "|") != strings.Join(tt.parts, "|") {
				t.Errorf("Split = %q, want %q", got, tt.parts)
			}
		})
	}
	long := telegram.Split(strings.Repeat("x", 10000), 0)
	if len(long) != 3 || len(long[0]) != telegram.MaxMessageLen {
		t.Errorf("default limit: %d parts, first %d", len(long), len(long[0]))
	}
	emoji := strings.Repeat("🙂", telegram.MaxMessageLen)
	parts := telegram.Split(emoji, 0)
	if strings.Join(parts, "") != emoji {
		t.Error("the parts of an emoji text do not join to it")
	}
	for i, p := range parts {
		if n := len(utf16.Encode([]rune(p))); n > telegram.MaxMessageLen {
			t.Errorf("part %d is %d UTF-16 units, over the Bot API limit %d", i, n, telegram.MaxMessageLen)
		}
	}
}

func TestChatID(t *testing.T) {
	tests := []struct {
		in   any
		want int64
		ok   bool
	}{
		{int64(-1001234), -1001234, true},
		{9001, 9001, true},
		{float64(42), 42, true},
		{" 77 ", 77, true},
		{"-100200", -100200, true},
		{float64(4.5), 0, false},
		{"12abc", 0, false},
		{"", 0, false},
		{true, 0, false},
		{nil, 0, false},
	}
	for _, tt := range tests {
		got, err := telegram.ChatID(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ChatID(%#v) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestClient(t *testing.T) {
	srv := tgtest.NewServer(t, "123:abc")
	ctx := context.Background()
	c := srv.Client()
	m, err := c.SendMessage(ctx, 7, "hi", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.EditMessageText(ctx, 7, m.MessageID, "hi there"); err != nil {
		t.Fatal(err)
	}
	if err := c.EditMessageText(ctx, 7, m.MessageID, "hi there"); err != nil {
		t.Errorf("an unchanged edit is not an error: %v", err)
	}
	if got := srv.Text(7, m.MessageID); got != "hi there" {
		t.Errorf("text %q", got)
	}
	srv.AddFile("f1", []byte("\x89PNG\r\n\x1a\nrest"), "image/png")
	data, mime, err := c.Download(ctx, "f1")
	if err != nil || mime != "image/png" || !strings.HasPrefix(string(data), "\x89PNG") {
		t.Errorf("download: %q %q %v", data, mime, err)
	}
	tests := []struct {
		name string
		call func(*telegram.Client) error
		code int
	}{
		{"wrong token", func(*telegram.Client) error {
			_, err := (&telegram.Client{BaseURL: srv.URL(), Token: "bad"}).SendMessage(ctx, 7, "x", 0)
			return err
		}, 401},
		{"empty text", func(c *telegram.Client) error { _, err := c.SendMessage(ctx, 7, "", 0); return err }, 400},
		{"unknown file", func(c *telegram.Client) error { _, _, err := c.Download(ctx, "nope"); return err }, 400},
		{"edit of a missing message", func(c *telegram.Client) error { return c.EditMessageText(ctx, 7, 1, "x") }, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call(c)
			var apiErr *telegram.APIError
			if !errors.As(err, &apiErr) || apiErr.Code != tt.code {
				t.Fatalf("err %v, want an APIError %d", err, tt.code)
			}
			if strings.Contains(err.Error(), "abc") {
				t.Errorf("error %q leaks the token", err)
			}
		})
	}
	if _, err := telegram.FromEnv(func(string) string { return "" }); !errors.Is(err, telegram.ErrNoToken) {
		t.Errorf("FromEnv without a token: %v", err)
	}
}

// TestFloodControl: a 429 is waited out for its retry_after and the call
// retried; a wait longer than MaxRetryAfter, and a streamed preview, do not
// wait.
func TestFloodControl(t *testing.T) {
	srv := tgtest.NewServer(t, "123:abc")
	ctx := context.Background()
	c := srv.Client()
	srv.FloodControl(7, 500*time.Millisecond)
	if _, err := c.SendMessage(ctx, 7, "after the wait", 0); err != nil {
		t.Fatalf("send under flood control: %v", err)
	}
	if srv.Limited() != 1 || len(srv.Sent()) != 1 {
		t.Errorf("%d answers 429, %d sent; want one of each", srv.Limited(), len(srv.Sent()))
	}
	srv.FloodControl(8, 40*time.Second)
	_, err := c.SendMessage(ctx, 8, "too long a wait", 0)
	var apiErr *telegram.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != 429 || apiErr.RetryAfter != 40*time.Second || srv.Limited() != 2 {
		t.Errorf("err %v after %d 429s, want the 429 with retry_after 40s at once", err, srv.Limited())
	}
	s := &telegram.Stream{Client: c, ChatID: 8, Interval: time.Millisecond}
	s.Append(ctx, "partial")
	s.Append(ctx, " text")
	if s.MessageID() != 0 || srv.Limited() != 3 {
		t.Errorf("preview message %d after %d 429s: want one skipped preview and no retry", s.MessageID(), srv.Limited())
	}
}

// graphSrc answers with a model and replies on Telegram; the answer node
// streams its text.
const graphSrc = `
dsl_version: "graphctl/v1"
name: "tg"
version: "1.0.0"
defaults: llm: "script:none"
state: {
	messages: {type: "messages"}
	user_id: {type: "string"}
	telegram: {type: "object"}
	input: {type: "object"}
	image: {type: "string"}
	sent: {type: "object"}
}
start: "answer"
nodes: {
	answer: {type: "llm", config: system: "Answer briefly.", next: "reply"}
	reply: {
		type: "telegram_reply"
		config: {text: "${messages[len(messages)-1].content}", field: "sent"}
		next: "END"
	}
}
`

// TestAdapterEngineReply drives updates through the adapter, a real engine
// with Badger and a scripted model, and the telegram_reply node, against the
// local Bot API server.
func TestAdapterEngineReply(t *testing.T) {
	srv := tgtest.NewServer(t, "42:secret")
	g, db := loadOnBadger(t, "tg.cue", graphSrc)
	long := strings.Repeat("長い回答です。", 700) // 4900 runes: two messages
	script := []any{"Hello Aki, how can I help?", "写真には請求書が写っています。", long}
	eng := engine.New(g, db.Checkpointer(), engine.Options{Store: db.Store(), Extra: llm.ScriptKey.Bind(telegram.BotKey.Bind(node.Extra{}, srv.Client()), script)})
	defer eng.Close()
	var threads []string
	var lastState map[string]any
	// finished counts the runs that returned; the polled run is awaited on
	// it, since the server records a message before the client reads the
	// answer.
	var finished atomic.Int32
	run := func(ctx context.Context, thread string, input map[string]any, sink event.Sink) error {
		defer finished.Add(1)
		threads = append(threads, thread)
		res, err := eng.Run(ctx, engine.Request{ThreadID: thread, Input: input}, sink)
		if err != nil {
			return err
		}
		lastState = res.State
		if res.Status != engine.StatusCompleted {
			return res.Err
		}
		return nil
	}
	ad := &telegram.Adapter{Client: srv.Client(), Run: run, StreamNodes: []string{"answer"}, StreamInterval: time.Nanosecond}
	h := httptest.NewServer(ad.Handler("hook-secret"))
	defer h.Close()
	post := func(u telegram.Update, secret string) int {
		b, _ := json.Marshal(u)
		req, _ := http.NewRequest(http.MethodPost, h.URL, strings.NewReader(string(b)))
		req.Header.Set(telegram.SecretHeader, secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	user := &telegram.User{ID: 555, FirstName: "Aki", LanguageCode: "ja"}
	chat := telegram.Chat{ID: 9001, Type: "private"}

	if code := post(telegram.Update{UpdateID: 1, Message: &telegram.Message{MessageID: 10, From: user, Chat: chat, Text: "hi"}}, "wrong"); code != http.StatusUnauthorized {
		t.Fatalf("wrong secret answered %d", code)
	}
	if len(threads) != 0 {
		t.Fatal("a refused update started a run")
	}

	// 1. Text: typing, then the streamed answer ends as the final text.
	if code := post(telegram.Update{UpdateID: 2, Message: &telegram.Message{MessageID: 11, From: user, Chat: chat, Text: "こんにちは"}}, "hook-secret"); code != http.StatusOK {
		t.Fatalf("text update answered %d", code)
	}
	if got := srv.Transcript(chat.ID); len(got) != 1 || got[0] != "Hello Aki, how can I help?" {
		t.Fatalf("transcript %q", got)
	}
	if len(srv.Edits()) == 0 {
		t.Error("the answer was not streamed by editing the message")
	}
	if a := srv.Actions(); len(a) != 1 || a[0].Action != "typing" || a[0].ChatID != chat.ID {
		t.Errorf("actions %v, want one typing", a)
	}
	if s := srv.Sent()[0]; s.ReplyTo != 11 {
		t.Errorf("streamed message replies to %d, want 11", s.ReplyTo)
	}

	// 2. A reply to a photo: the photo is resolved, downloaded and put in state.
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	srv.AddFile("photo-big", png, "image/png")
	photoMsg := &telegram.Message{MessageID: 12, From: user, Chat: chat, Photo: []telegram.PhotoSize{
		{FileID: "photo-small", Width: 90, Height: 90}, {FileID: "photo-big", Width: 800, Height: 600},
	}}
	if code := post(telegram.Update{UpdateID: 3, Message: &telegram.Message{MessageID: 13, From: user, Chat: chat, Text: "これは何？", ReplyToMessage: photoMsg}}, "hook-secret"); code != http.StatusOK {
		t.Fatalf("photo reply answered %d", code)
	}
	snap := lastState
	in := snap["input"].(map[string]any)
	img, _ := in["image"].(map[string]any)
	if img == nil || img["file_id"] != "photo-big" || len(img["sha256"].(string)) != 64 {
		t.Errorf("input.image %v, want the largest photo of the message replied to", in["image"])
	}
	if !strings.HasPrefix(snap["image"].(string), "data:image/png;base64,") {
		t.Errorf("image %.40q, want a PNG data URL", snap["image"])
	}
	if rc, _ := in["reply_context"].(map[string]any); rc == nil || rc["has_photo"] != true {
		t.Errorf("reply_context %v", in["reply_context"])
	}

	// 3. A long answer is split at 4096 characters; polling delivers it.
	srv.Push(telegram.Update{UpdateID: 4, Message: &telegram.Message{MessageID: 14, From: user, Chat: chat, Text: "詳しく"}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var runErrs []error
	go func() {
		done <- ad.Poll(ctx, time.Second, func(err error) { runErrs = append(runErrs, err) })
	}()
	for i := 0; i < 1000 && finished.Load() < 3; i++ {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	if len(runErrs) > 0 {
		t.Fatalf("poll: %v", runErrs)
	}
	got := srv.Transcript(chat.ID)
	if len(got) != 4 || got[2]+got[3] != long {
		t.Fatalf("long answer arrived as %d messages; joined equal = %v", len(got), len(got) == 4 && got[2]+got[3] == long)
	}
	for i, th := range threads {
		if th != "tg:555" {
			t.Errorf("run %d on thread %q, want tg:555", i, th)
		}
	}
	if n := len(snap["messages"].([]any)); n < 4 {
		t.Errorf("thread has %d messages after two turns, want the history kept", n)
	}
}
