package telegram_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/telegram"
	"github.com/graphctl/graphctl/builtin-nodes/telegram/tgtest"
	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/node"

	_ "github.com/graphctl/graphctl/builtin-nodes/interrupt"
)

// askGraph asks the user to pick a size (buttons), then asks for a free-text
// note (a reply prompt), then answers with both.
const askGraph = `dsl_version: "graphctl/v1"
name: "tg_ask"
state: {
	messages: {type: "messages"}
	user_id: {type: "string"}
	telegram: {type: "object"}
	input: {type: "object"}
	image: {type: "string"}
	size: {type: "string"}
	note: {type: "string"}
	sent: {type: "object"}
}
start: "ask_size"
nodes: {
	ask_size: {
		type: "interrupt"
		config: {field: "size", message: "Which size?", payload: options: ["small", {label: "Large", value: "L"}]}
		next: "ask_note"
	}
	ask_note: {type: "interrupt", config: {field: "note", message: "Any note?"}, next: "send"}
	send: {type: "telegram_reply", config: {text: "size ${size}, note ${note}", field: "sent"}, next: "END"}
}
`

func TestAdapterAsksInterruptsWithButtonsAndResumes(t *testing.T) {
	srv := tgtest.NewServer(t, "42:secret")
	g, db := loadOnBadger(t, "ask.cue", askGraph)
	eng := engine.New(g, db.Checkpointer(), engine.Options{Store: db.Store(), Extra: telegram.BotKey.Bind(node.Extra{}, srv.Client())})
	defer eng.Close()
	check := func(res *engine.Result, err error) error {
		if err != nil {
			return err
		}
		if res.Status == engine.StatusError {
			return res.Err
		}
		return nil
	}
	ad := &telegram.Adapter{
		Client: srv.Client(),
		Run: func(ctx context.Context, thread string, input map[string]any, sink event.Sink) error {
			return check(eng.Run(ctx, engine.Request{ThreadID: thread, Input: input}, sink))
		},
		Resume: func(ctx context.Context, thread, id string, value any, sink event.Sink) error {
			return check(eng.Run(ctx, engine.Request{ThreadID: thread, Resume: &engine.Resume{InterruptID: id, Value: value}}, sink))
		},
		Pending: func(ctx context.Context, thread string) ([]checkpoint.Interrupt, error) {
			snap, err := db.Checkpointer().Latest(ctx, thread)
			if errors.Is(err, checkpoint.ErrNotFound) {
				return nil, nil
			}
			if err != nil {
				return nil, err
			}
			return snap.Interrupts, nil
		},
	}
	ctx := context.Background()
	user := &telegram.User{ID: 555}
	chat := telegram.Chat{ID: 9001, Type: "private"}
	handle := func(u telegram.Update) {
		t.Helper()
		if err := ad.Handle(ctx, u); err != nil {
			t.Fatalf("update %d: %v", u.UpdateID, err)
		}
	}

	// 1. The run stops at ask_size: a message with one button per option.
	handle(telegram.Update{UpdateID: 1, Message: &telegram.Message{MessageID: 10, From: user, Chat: chat, Text: "order"}})
	sent := srv.Sent()
	if len(sent) != 1 || sent[0].Text != "Which size?" || sent[0].ReplyTo != 10 {
		t.Fatalf("sent %+v, want the question", sent)
	}
	buttons := sent[0].Buttons
	if len(buttons) != 2 || buttons[0][0].Text != "small" || buttons[1][0].Text != "Large" {
		t.Fatalf("buttons %+v", buttons)
	}
	prompt := sent[0]

	// 2. A tap on "Large": acknowledged, the keyboard replaced by the
	// choice, the thread resumed with the option's value, and the next
	// question (no options) asked as a reply prompt.
	tap := func(id int64, data string) {
		handle(telegram.Update{UpdateID: id, CallbackQuery: &telegram.CallbackQuery{
			ID: "cb-" + data, From: user, Data: data,
			Message: &telegram.Message{MessageID: prompt.MessageID, Chat: chat}}})
	}
	tap(2, buttons[1][0].CallbackData)
	if a := srv.CallbackAnswers(); len(a) != 1 || a[0].ID != "cb-"+buttons[1][0].CallbackData {
		t.Errorf("callback answers %+v", a)
	}
	if txt := srv.Text(chat.ID, prompt.MessageID); txt != "Which size?\n\n→ Large" || srv.Buttons(chat.ID, prompt.MessageID) != nil {
		t.Errorf("prompt after the tap: %q with buttons %v", txt, srv.Buttons(chat.ID, prompt.MessageID))
	}
	snap, err := db.Checkpointer().Latest(ctx, "tg:555")
	if err != nil || string(snap.Values["size"]) != `"L"` || len(snap.Interrupts) != 1 || snap.Interrupts[0].Node != "ask_note" {
		t.Fatalf("after the tap: size %s, interrupts %+v (%v)", snap.Values["size"], snap.Interrupts, err)
	}
	sent = srv.Sent()
	if len(sent) != 2 || sent[1].Text != "Any note?" || !sent[1].ForceReply || sent[1].Buttons != nil {
		t.Fatalf("second question %+v, want a reply prompt", sent[1:])
	}

	// 3. A second tap on the old button is acknowledged and changes nothing.
	tap(3, buttons[0][0].CallbackData)
	if a := srv.CallbackAnswers(); len(a) != 2 || !strings.Contains(a[1].Text, "already been answered") {
		t.Errorf("stale tap answered %+v", a)
	}
	// 4. A file that is not an image is no answer: the question is asked
	// again. (A photo is new input: it starts a new run, see Handle.)
	handle(telegram.Update{UpdateID: 4, Message: &telegram.Message{MessageID: 11, From: user, Chat: chat,
		Document: &telegram.Document{FileID: "x", FileName: "notes.pdf", MimeType: "application/pdf"}}})
	if sent = srv.Sent(); len(sent) != 3 || sent[2].Text != "Any note?" {
		t.Fatalf("after a PDF: %+v", sent)
	}
	// 5. A typed reply answers the reply prompt and the run completes.
	handle(telegram.Update{UpdateID: 5, Message: &telegram.Message{MessageID: 12, From: user, Chat: chat, Text: "gift wrap"}})
	got := srv.Transcript(chat.ID)
	if len(got) != 4 || got[3] != "size L, note gift wrap" {
		t.Fatalf("transcript %q", got)
	}
	if snap, _ = db.Checkpointer().Latest(ctx, "tg:555"); len(snap.Interrupts) != 0 {
		t.Errorf("interrupts left: %+v", snap.Interrupts)
	}
}
