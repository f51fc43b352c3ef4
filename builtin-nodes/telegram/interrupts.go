package telegram

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/event"
)

// ResumeFunc answers a thread's pending interrupt with value and runs the
// graph on, sending its events to sink; an engine's Run with a Resume,
// wrapped so that a failed run is an error.
type ResumeFunc func(ctx context.Context, threadID, interruptID string, value any, sink event.Sink) error

// PendingFunc returns the interrupts a thread is waiting on.
type PendingFunc func(ctx context.Context, threadID string) ([]checkpoint.Interrupt, error)

// callbackPrefix starts the callback_data of the buttons of an interrupt.
const callbackPrefix = "gi:"

// Option is one answer an interrupt offers.
type Option struct {
	Label string
	Value any
}

// Options reads the answers an interrupt payload offers: payload.options (a
// list of strings or of {label, value} objects), else the options of a form
// with a single field (payload.form.fields[0].options).
func Options(payload map[string]any) []Option {
	raw, _ := payload["options"].([]any)
	if raw == nil {
		if form, ok := payload["form"].(map[string]any); ok {
			if fields, ok := form["fields"].([]any); ok && len(fields) == 1 {
				if f, ok := fields[0].(map[string]any); ok {
					raw, _ = f["options"].([]any)
				}
			}
		}
	}
	var out []Option
	for _, o := range raw {
		switch v := o.(type) {
		case string:
			out = append(out, Option{Label: v, Value: v})
		case map[string]any:
			label, _ := v["label"].(string)
			val, has := v["value"]
			if !has {
				val = label
			}
			if label == "" {
				label = fmt.Sprint(val)
			}
			out = append(out, Option{Label: label, Value: val})
		default:
			out = append(out, Option{Label: fmt.Sprint(v), Value: v})
		}
	}
	return out
}

// PromptText is what the bot writes when a thread waits on in: the
// payload's message (or question), else a sentence naming what is asked.
func PromptText(in checkpoint.Interrupt) string {
	for _, k := range []string{"message", "question", "title"} {
		if s, ok := in.Payload[k].(string); ok && strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
	}
	return fmt.Sprintf("Waiting for your answer (%s).", in.Field)
}

// interruptKey is a short stable key of an interrupt id that fits the
// 64-byte callback_data with an option index.
func interruptKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:5])
}

func callbackData(interruptID string, option int) string {
	return callbackPrefix + interruptKey(interruptID) + ":" + strconv.Itoa(option)
}

func parseCallback(data string) (key string, option int, ok bool) {
	rest, found := strings.CutPrefix(data, callbackPrefix)
	if !found {
		return "", 0, false
	}
	key, idx, found := strings.Cut(rest, ":")
	n, err := strconv.Atoi(idx)
	if !found || err != nil || n < 0 || key == "" {
		return "", 0, false
	}
	return key, n, true
}

// answerable reports whether an interrupt asks a person for a value (an
// interrupt node), as opposed to a debugging stop.
func answerable(in checkpoint.Interrupt) bool {
	return in.Field != "" && (in.When == "" || in.When == "during")
}

// prompt sends the question of an interrupt to a chat: buttons for its
// options, else a reply prompt.
func (a *Adapter) prompt(ctx context.Context, chatID, replyTo int64, in checkpoint.Interrupt) error {
	var buttons []InlineButton
	for i, o := range Options(in.Payload) {
		buttons = append(buttons, InlineButton{Text: o.Label, CallbackData: callbackData(in.ID, i)})
	}
	if _, err := a.Client.SendPrompt(ctx, chatID, PromptText(in), buttons, replyTo); err != nil {
		return fmt.Errorf("ask for interrupt %s: %w", in.ID, err)
	}
	return nil
}

// interruptOf converts an interrupt event's payload.
func interruptOf(e event.Event) checkpoint.Interrupt {
	in := checkpoint.Interrupt{}
	in.ID, _ = e.Payload["id"].(string)
	in.Node, _ = e.Payload["node"].(string)
	in.Field, _ = e.Payload["field"].(string)
	in.When, _ = e.Payload["when"].(string)
	in.Payload, _ = e.Payload["payload"].(map[string]any)
	return in
}

// waiting returns the first interrupt the thread waits on for a person's
// answer, or nil; without Pending and Resume the adapter never resumes.
func (a *Adapter) waiting(ctx context.Context, thread string) (*checkpoint.Interrupt, error) {
	if a.Pending == nil || a.Resume == nil {
		return nil, nil
	}
	pending, err := a.Pending(ctx, thread)
	if err != nil {
		return nil, fmt.Errorf("thread %s: read pending interrupts: %w", thread, err)
	}
	for _, in := range pending {
		if answerable(in) {
			return &in, nil
		}
	}
	return nil, nil
}

// handleCallback resumes the thread of the user who tapped an interrupt's
// button with the option's value. A tap on a button of a question already
// answered (or not this user's) is acknowledged with a notice and ignored.
func (a *Adapter) handleCallback(ctx context.Context, u Update) error {
	q := u.CallbackQuery
	if q.From == nil || q.From.IsBot {
		return nil
	}
	key, idx, ok := parseCallback(q.Data)
	if !ok {
		return a.Client.AnswerCallbackQuery(ctx, q.ID, "")
	}
	thread := ThreadID(q.From.ID)
	in, err := a.waiting(ctx, thread)
	if err != nil {
		return fmt.Errorf("update %d: %w", u.UpdateID, err)
	}
	if in == nil || interruptKey(in.ID) != key {
		return a.Client.AnswerCallbackQuery(ctx, q.ID, "This question has already been answered.")
	}
	opts := Options(in.Payload)
	if idx >= len(opts) {
		return a.Client.AnswerCallbackQuery(ctx, q.ID, "This option is no longer offered.")
	}
	// A failed acknowledgement only leaves a spinner on the button.
	_ = a.Client.AnswerCallbackQuery(ctx, q.ID, "")
	chat, replyTo := q.From.ID, int64(0)
	if q.Message != nil {
		chat, replyTo = q.Message.Chat.ID, q.Message.MessageID
		// Show the choice in place of the keyboard (which an edit removes).
		_ = a.Client.EditMessageText(ctx, chat, q.Message.MessageID, PromptText(*in)+"\n\n→ "+opts[idx].Label)
	}
	return a.report(ctx, chat, replyTo, a.resume(ctx, u.UpdateID, chat, replyTo, thread, *in, opts[idx].Value))
}

// resume answers in on thread and runs the graph on like a new message.
func (a *Adapter) resume(ctx context.Context, updateID, chat, replyTo int64, thread string, in checkpoint.Interrupt, value any) error {
	_ = a.Client.SendChatAction(ctx, chat, "typing")
	err := a.runStreamed(ctx, chat, replyTo, func(ctx context.Context, sink event.Sink) error {
		return a.Resume(ctx, thread, in.ID, value, sink)
	})
	if err != nil {
		return fmt.Errorf("update %d (thread %s, interrupt %s): %w", updateID, thread, in.ID, err)
	}
	return nil
}

// answerFor turns a typed reply into an interrupt's value: the value of the
// option whose label it matches, else the text itself.
func answerFor(in checkpoint.Interrupt, text string) any {
	for _, o := range Options(in.Payload) {
		if strings.EqualFold(strings.TrimSpace(o.Label), text) {
			return o.Value
		}
	}
	return text
}
