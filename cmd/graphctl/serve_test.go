package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/graphctl/graphctl/builtin-nodes/telegram"
	"github.com/graphctl/graphctl/builtin-nodes/telegram/tgtest"
)

// telegramEcho answers a Telegram user with what they wrote.
const telegramEcho = `dsl_version: "graphctl/v1"
name: "tg_echo"
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
	answer: {type: "reply", config: text: "You said: ${input.text} (user ${user_id})", next: "send"}
	send: {
		type: "telegram_reply"
		config: {text: "${messages[len(messages)-1].content}", field: "sent"}
		next: "END"
	}
}
`

// TestServeAnswersTelegramByPolling runs `graphctl serve --telegram poll`
// against a local Bot API server: an update sent to the bot is answered by
// the graph on the user's thread.
func TestServeAnswersTelegramByPolling(t *testing.T) {
	bot := tgtest.NewServer(t, "7:token")
	t.Setenv(telegram.TokenEnv, "7:token")
	t.Setenv("TELEGRAM_API_URL", bot.URL())
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tg_echo.cue"), []byte(telegramEcho), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	root := newRootCommand()
	root.SetArgs([]string{"serve", "--graphs", dir, "--addr", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "data"),
		"--telegram-graph", "tg_echo", "--telegram", "poll", "--log-level", "error"})
	root.SetOut(&out)
	root.SetErr(&out)
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()

	bot.Push(telegram.Update{UpdateID: 1, Message: &telegram.Message{
		MessageID: 10, From: &telegram.User{ID: 555}, Chat: telegram.Chat{ID: 555, Type: "private"}, Text: "hello bot"}})
	deadline := time.Now().Add(20 * time.Second)
	var transcript []string
	for time.Now().Before(deadline) {
		if transcript = bot.Transcript(555); len(transcript) > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v\n%s", err, out.String())
	}
	if len(transcript) != 1 || transcript[0] != "You said: hello bot (user 555)" {
		t.Fatalf("bot sent %q; serve output:\n%s", transcript, out.String())
	}
	if !strings.Contains(out.String(), "graphctl serving tg_echo") {
		t.Fatalf("serve output: %s", out.String())
	}
}

func TestServeRefusesTelegramWithoutItsGraph(t *testing.T) {
	t.Setenv(telegram.TokenEnv, "7:token")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tg_echo.cue"), []byte(telegramEcho), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := run(t, "serve", "--graphs", dir, "--addr", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "data"), "--telegram-graph", "missing")
	if code != 2 || !strings.Contains(errOut, `--telegram-graph "missing" is not among the served graphs`) {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

// TestServeTelegramMaxChatsFlag: --telegram-max-chats below 1 is a usage
// error naming the flag.
func TestServeTelegramMaxChatsFlag(t *testing.T) {
	tests := []struct {
		chats   int
		wantErr string
	}{
		{1, ""},
		{16, ""},
		{0, "--telegram-max-chats must be at least 1, got 0"},
		{-3, "--telegram-max-chats must be at least 1, got -3"},
	}
	for _, tt := range tests {
		f := serveFlags{onRestart: "resume", logLevel: "info", telegramMode: "poll", telegramChats: tt.chats}
		_, err := f.check()
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr) {
			t.Errorf("--telegram-max-chats %d: err %v, want %q", tt.chats, err, tt.wantErr)
		}
	}
}
