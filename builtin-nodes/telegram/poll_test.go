package telegram_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graphctl/graphctl/builtin-nodes/telegram"
	"github.com/graphctl/graphctl/builtin-nodes/telegram/tgtest"
	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/storage/badger"
)

// gate holds the runs of one thread at its tg_gate node: each run reports
// its message's text on arrived and goes on when it takes a pass.
type gate struct {
	arrived chan string
	pass    chan struct{}
	// free, once closed, lets every run past (a test ends).
	free     chan struct{}
	freeOnce sync.Once
}

var (
	gates sync.Map // thread id -> *gate
	// held counts the runs waiting at a gate; maxHeld is its peak.
	held, maxHeld atomic.Int32
)

func gateOf(thread string) *gate {
	g, _ := gates.LoadOrStore(thread, &gate{arrived: make(chan string, 16), pass: make(chan struct{}, 16), free: make(chan struct{})})
	return g.(*gate)
}

// freeGates opens every gate for good, so that a failed test's held runs
// end and its servers can close.
func freeGates() {
	gates.Range(func(_, v any) bool {
		g := v.(*gate)
		g.freeOnce.Do(func() { close(g.free) })
		return true
	})
}

func init() {
	node.MustRegister(node.Type{Name: "tg_gate", Description: "waits for a pass for its thread (Telegram adapter tests)", Config: `{}`,
		New: func(node.Builder) (node.Node, error) {
			return node.Func(func(ctx context.Context, in *node.Input) (node.Update, error) {
				g := gateOf(in.ThreadID)
				text, _ := in.State["input"].(map[string]any)["text"].(string)
				n := held.Add(1)
				defer held.Add(-1)
				for {
					peak := maxHeld.Load()
					if n <= peak || maxHeld.CompareAndSwap(peak, n) {
						break
					}
				}
				g.arrived <- text
				select {
				case <-g.pass:
					return nil, nil
				case <-g.free:
					return nil, nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}), nil
		}})
}

// gatedGraph answers "re: <text>" once the run's gate lets it pass.
const gatedGraph = `dsl_version: "graphctl/v1"
name: "tg_gated"
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
	answer: {type: "reply", config: text: "re: ${input.text}", next: "hold"}
	hold: {type: "tg_gate", next: "send"}
	send: {type: "telegram_reply", config: {text: "${messages[len(messages)-1].content}", field: "sent"}, next: "END"}
}
`

// gatedBot is an adapter over a real engine (Badger in memory) running
// gatedGraph against a local Bot API server.
type gatedBot struct {
	t   *testing.T
	srv *tgtest.Server
	db  *badger.DB
	eng *engine.Engine

	cancel context.CancelFunc
	done   chan error
	mu     sync.Mutex
	errs   []error
}

func newGatedBot(t *testing.T) *gatedBot {
	t.Helper()
	g, db := loadOnBadger(t, "gated.cue", gatedGraph)
	srv := tgtest.NewServer(t, "42:secret")
	eng := engine.New(g, db.Checkpointer(), engine.Options{Store: db.Store(), Extra: telegram.BotKey.Bind(node.Extra{}, srv.Client())})
	t.Cleanup(func() { eng.Close() })
	t.Cleanup(freeGates)
	return &gatedBot{t: t, srv: srv, db: db, eng: eng}
}

// adapter returns a new adapter over the bot's engine, as a new process
// would make.
func (b *gatedBot) adapter(maxChats int, grace time.Duration) *telegram.Adapter {
	return &telegram.Adapter{
		Client: b.srv.Client(), MaxChats: maxChats, ShutdownGrace: grace,
		Run: func(ctx context.Context, thread string, input map[string]any, sink event.Sink) error {
			res, err := b.eng.Run(ctx, engine.Request{ThreadID: thread, Input: input}, sink)
			if err != nil {
				return err
			}
			if res.Status == engine.StatusError {
				return res.Err
			}
			return nil
		},
		Value: func(ctx context.Context, thread, field string) (any, error) {
			snap, err := b.db.Checkpointer().Latest(ctx, thread)
			if errors.Is(err, checkpoint.ErrNotFound) {
				return nil, nil
			}
			if err != nil {
				return nil, err
			}
			var v any
			if raw, ok := snap.Values[field]; ok {
				err = json.Unmarshal(raw, &v)
			}
			return v, err
		},
		OnError: func(err error) { b.report(err) },
	}
}

func (b *gatedBot) report(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.errs = append(b.errs, err)
}

// poll starts polling with a new adapter.
func (b *gatedBot) poll(maxChats int, grace time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	b.cancel, b.done = cancel, make(chan error, 1)
	ad := b.adapter(maxChats, grace)
	go func() { b.done <- ad.Poll(ctx, time.Second, b.report) }()
	b.t.Cleanup(cancel)
}

// stop cancels polling (a shutdown) and returns a channel that gets Poll's
// error when it returns.
func (b *gatedBot) stop() <-chan error {
	b.cancel()
	return b.done
}

// errors returns the failures reported so far.
func (b *gatedBot) failures() []error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]error(nil), b.errs...)
}

// waitTranscript waits until chat's messages are want; it fails with what
// the chat got when they are not within the bound.
func (b *gatedBot) waitTranscript(chat int64, want ...string) {
	b.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		got := b.srv.Transcript(chat)
		if strings.Join(got, "|") == strings.Join(want, "|") {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("chat %d got %q, want %q (failures %v)", chat, got, want, b.failures())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// arrived waits for the next run of user's thread to reach its gate and
// returns its message's text.
func arrived(t *testing.T, user int64) string {
	t.Helper()
	select {
	case text := <-gateOf(telegram.ThreadID(user)).arrived:
		return text
	case <-time.After(15 * time.Second):
		t.Fatalf("no run of user %d reached its gate", user)
		return ""
	}
}

// noArrival fails when a run of user's thread has reached its gate that
// should not have started (when is the moment the test is at).
func noArrival(t *testing.T, user int64, when string) {
	t.Helper()
	select {
	case text := <-gateOf(telegram.ThreadID(user)).arrived:
		t.Fatalf("%q started %s", text, when)
	default:
	}
}

// release lets the next run of user's thread past its gate.
func release(user int64) { gateOf(telegram.ThreadID(user)).pass <- struct{}{} }

func textUpdate(update, user int64, text string) telegram.Update {
	return telegram.Update{UpdateID: update, Message: &telegram.Message{MessageID: update, Text: text,
		From: &telegram.User{ID: user}, Chat: telegram.Chat{ID: user, Type: "private"}}}
}

// TestPollAnswersChatsConcurrently: while one chat's turn waits (its run
// held), another chat's message is answered.
func TestPollAnswersChatsConcurrently(t *testing.T) {
	b := newGatedBot(t)
	const slow, quick = 101, 102
	b.srv.Push(textUpdate(1, slow, "slow"))
	b.srv.Push(textUpdate(2, quick, "quick"))
	release(quick)
	b.poll(0, time.Minute)
	if got := arrived(t, slow); got != "slow" {
		t.Fatalf("held run of %q", got)
	}
	b.waitTranscript(quick, "re: quick")
	if got := b.srv.Transcript(slow); len(got) != 0 {
		t.Fatalf("the held chat was answered %q before its run went on", got)
	}
	release(slow)
	b.waitTranscript(slow, "re: slow")
	if err := <-b.stop(); !errors.Is(err, context.Canceled) {
		t.Errorf("Poll returned %v, want context.Canceled", err)
	}
	if f := b.failures(); len(f) > 0 {
		t.Errorf("failures: %v", f)
	}
}

// TestPollKeepsEachChatInOrder: a chat's second message starts after its
// first turn has ended, while other chats go on.
func TestPollKeepsEachChatInOrder(t *testing.T) {
	b := newGatedBot(t)
	const user, other = 111, 112
	b.srv.Push(textUpdate(1, user, "one"))
	b.srv.Push(textUpdate(2, user, "two"))
	b.srv.Push(textUpdate(3, other, "meanwhile"))
	release(other)
	b.poll(0, time.Minute)
	if got := arrived(t, user); got != "one" {
		t.Fatalf("first run at the gate is %q, want one", got)
	}
	// The other chat is answered while "one" is held; "two" has not
	// started by then.
	b.waitTranscript(other, "re: meanwhile")
	noArrival(t, user, "while the chat's first turn was going on")
	release(user)
	if got := arrived(t, user); got != "two" {
		t.Fatalf("second run at the gate is %q, want two", got)
	}
	release(user)
	b.waitTranscript(user, "re: one", "re: two")
	<-b.stop()
	if f := b.failures(); len(f) > 0 {
		t.Errorf("failures: %v", f)
	}
}

// TestPollBoundsChatsInFlight: with MaxChats 2, a third chat's run starts
// only once one of two held runs has ended.
func TestPollBoundsChatsInFlight(t *testing.T) {
	b := newGatedBot(t)
	users := []int64{121, 122, 123}
	for i, u := range users {
		b.srv.Push(textUpdate(int64(i+1), u, "hi"))
	}
	maxHeld.Store(0)
	b.poll(2, time.Minute)
	// Two runs reach their gates; release whichever arrives, one at a
	// time, until all three are answered.
	for range users {
		select {
		case <-gateOf(telegram.ThreadID(121)).arrived:
			release(121)
		case <-gateOf(telegram.ThreadID(122)).arrived:
			release(122)
		case <-gateOf(telegram.ThreadID(123)).arrived:
			release(123)
		case <-time.After(15 * time.Second):
			t.Fatal("a run did not reach its gate")
		}
	}
	for _, u := range users {
		b.waitTranscript(u, "re: hi")
	}
	<-b.stop()
	if n := maxHeld.Load(); n > 2 {
		t.Errorf("%d runs were going on at once, want at most MaxChats (2)", n)
	}
}

// TestPollShutdownMidTurn: a shutdown while a turn is going on lets it end
// (within the grace) and does not start the chat's next message; after a
// restart that message is answered, and the finished one is not answered
// again.
func TestPollShutdownMidTurn(t *testing.T) {
	b := newGatedBot(t)
	const user = 131
	b.srv.Push(textUpdate(1, user, "first"))
	b.srv.Push(textUpdate(2, user, "second"))
	b.poll(0, time.Minute)
	if got := arrived(t, user); got != "first" {
		t.Fatalf("run at the gate is %q, want first", got)
	}
	stopped := b.stop()
	select {
	case err := <-stopped:
		t.Fatalf("Poll returned (%v) with a turn going on", err)
	default:
	}
	release(user)
	if err := <-stopped; !errors.Is(err, context.Canceled) {
		t.Errorf("Poll returned %v, want context.Canceled", err)
	}
	b.waitTranscript(user, "re: first")
	noArrival(t, user, "after the shutdown began")

	// The next start: the second message is answered once, the first not
	// again.
	release(user)
	b.poll(0, time.Minute)
	b.waitTranscript(user, "re: first", "re: second")
	<-b.stop()
	if f := b.failures(); len(f) > 0 {
		t.Errorf("failures: %v", f)
	}
}

// TestWebhookChatsConcurrentAndOrdered: webhook calls of different chats
// are handled at once; a chat's second call waits for its first.
func TestWebhookChatsConcurrentAndOrdered(t *testing.T) {
	b := newGatedBot(t)
	h := httptest.NewServer(b.adapter(0, 0).Handler(""))
	t.Cleanup(h.Close)
	t.Cleanup(freeGates)
	post := func(u telegram.Update) <-chan int { return postUpdate(h.URL, u) }
	const user, other = 141, 142
	first := post(textUpdate(1, user, "one"))
	if got := arrived(t, user); got != "one" {
		t.Fatalf("run at the gate is %q", got)
	}
	second := post(textUpdate(2, user, "two"))
	release(other)
	if code := <-post(textUpdate(3, other, "meanwhile")); code != http.StatusOK {
		t.Fatalf("other chat's call answered %d", code)
	}
	b.waitTranscript(other, "re: meanwhile")
	noArrival(t, user, "while the chat's first turn was going on")
	release(user)
	release(user)
	if c1, c2 := <-first, <-second; c1 != http.StatusOK || c2 != http.StatusOK {
		t.Fatalf("calls answered %d and %d", c1, c2)
	}
	b.waitTranscript(user, "re: one", "re: two")
}
