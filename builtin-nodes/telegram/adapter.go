package telegram

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/event"
)

// RunFunc runs the graph on a thread with input, sending its events to sink;
// an engine's Run wrapped so that a failed run is an error.
type RunFunc func(ctx context.Context, threadID string, input map[string]any, sink event.Sink) error

// ThreadID returns the thread of a Telegram user: "tg:{user_id}".
func ThreadID(userID int64) string { return "tg:" + strconv.FormatInt(userID, 10) }

// Adapter turns Telegram updates into graph runs. The input it writes to the
// graph's state (the graph must declare these fields):
//
//	messages  [{role: "user", content: text or caption}]
//	user_id   "<telegram user id>"
//	telegram  {chat_id, user_id, message_id, last_message_id (an album's last), username, language_code}
//	input     {text, image: {file_id, sha256, mime, size} | nil, reply_context: {message_id, text, has_photo} | nil,
//	           album: [{file_id, sha256, mime, size, data_url}] (an album only)}
//	image     the photo as a data URL, "" without one
//
// The photo is the message's own (its largest size, or an image sent as a
// file) or, for a reply without one, the photo of the message replied to.
// An album (photos sent together, which Telegram delivers as one update
// each) is one turn: the adapter waits AlbumWindow after the album's latest
// photo for the next, then runs the graph once with every photo in
// input.album, the first as image and input.image, and the captions as the
// text; the reply answers the album's first message. A
// message with neither text nor a photo (a sticker, a voice message) starts
// no run: the bot asks for text or a photo. While the run goes on the chat
// shows "typing" and the streamed text (text events with delta: true) of the
// nodes in StreamNodes grows in one message, edited at most once per
// StreamInterval.
//
// When a run stops at an interrupt (a question for the user), the adapter
// sends the interrupt's message with its options as inline keyboard buttons,
// or as a reply prompt when it offers none. A tap on a button, or the next
// text message, answers it: the adapter resumes the same thread with the
// value (Resume), and the run goes on as if it had never stopped. Without
// Resume and Pending, interrupts are shown but never answered.
type Adapter struct {
	Client *Client
	Run    RunFunc
	// Resume and Pending let button taps and replies answer interrupts.
	Resume  ResumeFunc
	Pending PendingFunc
	// StreamNodes limits streaming to these nodes' text; empty streams every node's.
	StreamNodes []string
	// StreamInterval bounds the edit rate (default one second).
	StreamInterval time.Duration
	// Value reads a field of a thread's current state (nil when the thread
	// or the field does not exist). With it, a message the thread has
	// handled already (its telegram.message_id is as recent) is not run
	// again: Telegram delivers an update again when its webhook call failed
	// or timed out, and getUpdates after a restart repeats the updates of
	// the batch in progress.
	Value ValueFunc
	// FailureText is what the bot answers a message whose run failed
	// (DefaultFailureText when empty); the failure goes to OnError.
	FailureText string
	// UnsupportedText answers a message with neither text nor an image
	// (DefaultUnsupportedText when empty); no run is started for it.
	UnsupportedText string
	// OnError receives the failures of the webhook's updates (Poll takes
	// its own).
	OnError func(error)
	// MaxChats bounds how many chats' updates are handled at once, by Poll
	// and the webhook alike (DefaultMaxChats when 0). The updates of one
	// chat are handled one after another, in the order they arrived: a
	// chat's next message starts once its previous turn has ended.
	MaxChats int
	// ShutdownGrace is how long Poll, once its context is done, waits for
	// the turns in progress to end (DefaultShutdownGrace when 0); turns
	// still going then are cancelled. Updates not handled to the end are
	// not confirmed to Telegram, which delivers them again at the next
	// start. A message whose run had begun is in its thread's state then,
	// and Value takes it for handled: its run is the runtime's to resume
	// (graphctl serve resumes the runs its shutdown cut), so the grace is
	// best longer than the runtime's own.
	ShutdownGrace time.Duration
	// AlbumWindow is how long an album's turn waits after its latest photo
	// arrived for the next one (DefaultAlbumWindow when 0).
	AlbumWindow time.Duration

	albums    albums
	inflight  sync.Map // chat:message ids of the messages being handled
	lanesOnce sync.Once
	lanes     *lanes
}

// DefaultShutdownGrace is how long Poll waits for the turns in progress
// once its context is done, when ShutdownGrace is not set.
const DefaultShutdownGrace = 30 * time.Second

// lane returns the adapter's chat lanes, made on first use.
func (a *Adapter) lane() *lanes {
	a.lanesOnce.Do(func() { a.lanes = newLanes(a.MaxChats) })
	return a.lanes
}

// ValueFunc returns the value of field in a thread's current state, nil when
// the thread or the field does not exist.
type ValueFunc func(ctx context.Context, threadID, field string) (any, error)

// DefaultFailureText tells a user that the bot could not answer.
const DefaultFailureText = "申し訳ありません。エラーのため回答できませんでした。もう一度送ってください。\nSorry, something went wrong and I could not answer. Please send your message again."

// ReportedError is a failed update that the user was told about: the update
// is handled, and delivering it again would only repeat the failure.
type ReportedError struct{ Err error }

// Error implements error.
func (e *ReportedError) Error() string { return e.Err.Error() }

// Unwrap returns the failure.
func (e *ReportedError) Unwrap() error { return e.Err }

// Input builds a run's input from a message, downloading its photo.
func (a *Adapter) Input(ctx context.Context, m *Message) (map[string]any, error) {
	if m.From == nil {
		return nil, fmt.Errorf("telegram message %d has no sender", m.MessageID)
	}
	text := strings.TrimSpace(m.Text)
	if text == "" {
		text = strings.TrimSpace(m.Caption)
	}
	in := map[string]any{"text": text, "image": nil, "reply_context": nil}
	if r := m.ReplyToMessage; r != nil {
		rtext := r.Text
		if rtext == "" {
			rtext = r.Caption
		}
		in["reply_context"] = map[string]any{"message_id": r.MessageID, "text": rtext, "has_photo": largest(r) != nil}
	}
	dataURL := ""
	var album []any
	pics := photos(m)
	for i, photo := range pics {
		data, mime, err := a.Client.Download(ctx, photo.FileID)
		if err != nil {
			return nil, fmt.Errorf("telegram message %d: photo %s: %w", m.MessageID, photo.FileID, err)
		}
		sum := sha256.Sum256(data)
		meta := map[string]any{"file_id": photo.FileID, "sha256": hex.EncodeToString(sum[:]), "mime": mime, "size": len(data)}
		url := "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data)
		if i == 0 {
			in["image"], dataURL = meta, url
		}
		if len(pics) > 1 {
			withURL := maps.Clone(meta)
			withURL["data_url"] = url
			album = append(album, withURL)
		}
	}
	if album != nil {
		in["album"] = album
	}
	content := text
	switch {
	case content != "":
	case len(pics) > 1:
		content = fmt.Sprintf("[%d photos]", len(pics))
	case len(pics) == 1:
		content = "[photo]"
	}
	uid := strconv.FormatInt(m.From.ID, 10)
	return map[string]any{
		"messages": []any{map[string]any{"role": "user", "content": content}},
		"user_id":  uid,
		"telegram": map[string]any{
			"chat_id": m.Chat.ID, "user_id": m.From.ID, "message_id": m.MessageID, "last_message_id": lastMessageID(m),
			"username": m.From.Username, "language_code": m.From.LanguageCode,
		},
		"input": in,
		"image": dataURL,
	}, nil
}

// largest is the largest size of m's photo, or m's image document as a
// photo; nil when m has neither.
func largest(m *Message) *PhotoSize {
	var best *PhotoSize
	for i := range m.Photo {
		if best == nil || m.Photo[i].Width*m.Photo[i].Height > best.Width*best.Height {
			best = &m.Photo[i]
		}
	}
	if d := m.Document; best == nil && d != nil && strings.HasPrefix(d.MimeType, "image/") {
		best = &PhotoSize{FileID: d.FileID, FileUniqueID: d.FileUniqueID, FileSize: d.FileSize}
	}
	return best
}

// DefaultUnsupportedText answers a message with neither text nor a photo
// (a sticker, a voice message, a file that is not an image).
const DefaultUnsupportedText = "テキストか画像で送ってください。\nPlease send text or a photo."

// Handle runs the graph for one update: a message starts a run on the
// sender's thread, or answers the interrupt the thread waits on (a message
// with a photo is new input and starts a run instead); a tap on an
// interrupt's button resumes it. Other updates (edits, channel posts, bots)
// are ignored.
//
// Handle itself does not wait for the chat's other updates: Poll and the
// webhook (Handler) call it in each chat's order.
func (a *Adapter) Handle(ctx context.Context, u Update) error {
	release, fresh := a.claim(u)
	if !fresh {
		return nil // delivered again while it is being handled
	}
	defer release()
	return a.handle(ctx, u)
}

// claim marks a message as in hand; false when it is already (Telegram
// delivered it again meanwhile). Other updates are always fresh.
func (a *Adapter) claim(u Update) (release func(), fresh bool) {
	m := u.Message
	if m == nil {
		return func() {}, true
	}
	key := strconv.FormatInt(m.Chat.ID, 10) + ":" + strconv.FormatInt(m.MessageID, 10)
	if _, busy := a.inflight.LoadOrStore(key, true); busy {
		return nil, false
	}
	return func() { a.inflight.Delete(key) }, true
}

// handle is Handle once the update is claimed.
func (a *Adapter) handle(ctx context.Context, u Update) error {
	if a.Client == nil || a.Run == nil {
		return errors.New("telegram adapter: Client and Run are required")
	}
	if u.CallbackQuery != nil {
		return a.handleCallback(ctx, u)
	}
	m := u.Message
	if m == nil || m.From == nil || m.From.IsBot {
		return nil
	}
	thread := ThreadID(m.From.ID)
	done, err := a.handled(ctx, thread, m)
	if err != nil {
		return fmt.Errorf("update %d: %w", u.UpdateID, err)
	}
	if done {
		return nil
	}
	in, err := a.waiting(ctx, thread)
	if err != nil {
		return fmt.Errorf("update %d: %w", u.UpdateID, err)
	}
	// A message with a photo (its own or the one it replies to) is new
	// input, not an answer: it starts a new run, which drops the question.
	photo := largest(m) != nil || (m.ReplyToMessage != nil && largest(m.ReplyToMessage) != nil)
	if in != nil && !photo {
		text := strings.TrimSpace(m.Text)
		if text == "" {
			text = strings.TrimSpace(m.Caption)
		}
		if text == "" {
			// A sticker is no answer: ask again.
			if err := a.prompt(ctx, m.Chat.ID, m.MessageID, *in); err != nil {
				return fmt.Errorf("update %d: %w", u.UpdateID, err)
			}
			return nil
		}
		err := a.resume(ctx, u.UpdateID, m.Chat.ID, m.MessageID, thread, *in, answerFor(*in, text))
		return a.report(ctx, m.Chat.ID, m.MessageID, err)
	}
	if strings.TrimSpace(m.Text+m.Caption) == "" && !photo {
		// Nothing the graph can read: no run.
		text := a.UnsupportedText
		if text == "" {
			text = DefaultUnsupportedText
		}
		if _, err := a.Client.SendMessage(ctx, m.Chat.ID, text, m.MessageID); err != nil {
			return fmt.Errorf("update %d: %w", u.UpdateID, err)
		}
		return nil
	}
	// A failed "typing" is cosmetic: the run goes on.
	_ = a.Client.SendChatAction(ctx, m.Chat.ID, "typing")
	input, err := a.Input(ctx, m)
	if err != nil {
		return a.report(ctx, m.Chat.ID, m.MessageID, fmt.Errorf("update %d: %w", u.UpdateID, err))
	}
	err = a.runStreamed(ctx, m.Chat.ID, m.MessageID, func(ctx context.Context, sink event.Sink) error {
		return a.Run(ctx, thread, input, sink)
	})
	if err != nil {
		return a.report(ctx, m.Chat.ID, m.MessageID, fmt.Errorf("update %d (thread %s): %w", u.UpdateID, thread, err))
	}
	return nil
}

// handled reports whether thread has handled m already: its state's
// telegram field (written by Input) names m's chat and m or a later message
// (last_message_id: an album handled in one turn covers all its messages).
func (a *Adapter) handled(ctx context.Context, thread string, m *Message) (bool, error) {
	if a.Value == nil {
		return false, nil
	}
	v, err := a.Value(ctx, thread, "telegram")
	if err != nil {
		return false, fmt.Errorf("thread %s: read the last message: %w", thread, err)
	}
	last, _ := v.(map[string]any)
	chat, err1 := ChatID(last["chat_id"])
	msg, err2 := ChatID(last["message_id"])
	if through, err := ChatID(last["last_message_id"]); err == nil {
		msg = max(msg, through)
	}
	return err1 == nil && err2 == nil && chat == m.Chat.ID && msg >= m.MessageID, nil
}

// report tells the user that their message could not be answered, unless
// err is nil or the run was stopped (a shutdown: the run is resumed or the
// update delivered again). A run that fails once Poll is shutting down
// counts as stopped: the server's shutdown cuts runs with errors that need
// not say so. The error is a ReportedError once the user knows.
func (a *Adapter) report(ctx context.Context, chat, replyTo int64, err error) error {
	if err == nil || ctx.Err() != nil || errors.Is(err, context.Canceled) || stopping(ctx) {
		return err
	}
	text := a.FailureText
	if text == "" {
		text = DefaultFailureText
	}
	if _, serr := a.Client.SendMessage(ctx, chat, text, replyTo); serr != nil {
		return fmt.Errorf("%w (and telling the user failed: %v)", err, serr)
	}
	return &ReportedError{Err: err}
}

// runStreamed runs fn with a sink that streams the text of StreamNodes into
// the chat, then asks the questions of the interrupts the run stopped at.
func (a *Adapter) runStreamed(ctx context.Context, chat, replyTo int64, fn func(ctx context.Context, sink event.Sink) error) error {
	interval := a.StreamInterval
	if interval <= 0 {
		interval = time.Second
	}
	s := &Stream{Client: a.Client, ChatID: chat, ReplyTo: replyTo, Interval: interval}
	// Telegram shows "typing" for five seconds: it is repeated until the
	// run ends, through the steps that stream no text (vision, routing,
	// retrieval, web search).
	typing := time.NewTicker(TypingInterval)
	ran := make(chan struct{})
	defer func() { typing.Stop(); close(ran) }()
	go func() {
		for {
			select {
			case <-ran:
				return
			case <-typing.C:
				select {
				case <-ran:
					return
				default:
					_ = a.Client.SendChatAction(ctx, chat, "typing")
				}
			}
		}
	}()
	var mu sync.Mutex
	var asked []checkpoint.Interrupt
	sink := func(e event.Event) {
		switch e.Type {
		case event.Interrupt:
			if in := interruptOf(e); answerable(in) {
				mu.Lock()
				asked = append(asked, in)
				mu.Unlock()
			}
		case event.Text:
			if !a.streams(e.Node) {
				return
			}
			if delta, _ := e.Payload["delta"].(bool); !delta {
				return
			}
			if tok, _ := e.Payload["content"].(string); tok != "" {
				s.Append(ctx, tok)
			}
		}
	}
	if err := fn(WithStream(ctx, s), sink); err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	for _, in := range asked {
		if err := a.prompt(ctx, chat, replyTo, in); err != nil {
			return err
		}
	}
	return nil
}

func (a *Adapter) streams(nodeName string) bool {
	if len(a.StreamNodes) == 0 {
		return true
	}
	for _, n := range a.StreamNodes {
		if n == nodeName {
			return true
		}
	}
	return false
}

// TypingInterval is how often the chat's "typing" is repeated while a run
// goes on (Telegram shows it for five seconds).
const TypingInterval = 4 * time.Second

// SecretHeader is the header Telegram sends the webhook's secret_token in.
const SecretHeader = "X-Telegram-Bot-Api-Secret-Token"

// Handler returns the webhook endpoint: it decodes an Update from the POST
// body and runs the graph for it before answering 200. When secret is not
// empty, requests without it in SecretHeader are refused with 401. A failure
// goes to OnError; when the user was told (a ReportedError) the update is
// answered 200, else 500 so that Telegram delivers it again.
//
// Calls of different chats are handled at once (MaxChats at most); a
// chat's calls one after another, in the order they arrived, each answered
// when its update is handled. A call that ends before its update's turn
// came is answered 503 (the update was not handled). An update delivered
// again while it is in hand is answered 200 at once.
func (a *Adapter) Handler(secret string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			webhookError(w, http.StatusMethodNotAllowed, "method_not_allowed", "telegram webhook: POST an Update")
			return
		}
		if secret != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get(SecretHeader)), []byte(secret)) != 1 {
			webhookError(w, http.StatusUnauthorized, "unauthorized", "telegram webhook: wrong or missing "+SecretHeader)
			return
		}
		var u Update
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&u); err != nil {
			webhookError(w, http.StatusBadRequest, "invalid_update", "telegram webhook: body is not an Update: "+err.Error())
			return
		}
		release, fresh := a.claim(u)
		if !fresh {
			w.WriteHeader(http.StatusOK) // delivered again while it is being handled
			return
		}
		defer release()
		ran, err := a.queue(u)(r.Context(), r.Context().Done())
		if !ran {
			// The call ended before the update's turn came: Telegram
			// delivers it again.
			webhookError(w, http.StatusServiceUnavailable, "update_not_handled", "telegram webhook: the call ended before the update was handled")
			return
		}
		if err != nil {
			if a.OnError != nil {
				a.OnError(err)
			}
			var reported *ReportedError
			if !errors.As(err, &reported) {
				webhookError(w, http.StatusInternalServerError, "update_failed", err.Error())
				return
			}
		}
		w.WriteHeader(http.StatusOK)
	})
}

// webhookError answers an error as the server's API does: {"detail":
// message, "error": {"code", "message"}}.
func webhookError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"detail": message, "error": map[string]any{"code": code, "message": message}})
}

// queue takes u's place in its chat's lane (after the chat's earlier
// updates) and returns the function that waits for the update's turn and a
// slot of MaxChats, then handles it with ctx. That function's ran is false
// when stop was closed before the turn came: the update was not handled.
// Each chat's updates are handled in the order queue was called.
//
// The updates of an album share one turn: the first to arrive takes the
// album's place in the lane and handles all its messages at once; the
// others' functions end with that turn and share its outcome.
func (a *Adapter) queue(u Update) func(ctx context.Context, stop <-chan struct{}) (ran bool, err error) {
	g, leads := a.albums.gather(u)
	if g != nil && !leads {
		return g.wait
	}
	chat, ordered := laneOf(u)
	if !ordered {
		return func(ctx context.Context, _ <-chan struct{}) (bool, error) { return true, a.handle(ctx, u) }
	}
	l := a.lane()
	turn := l.enter(chat)
	return func(ctx context.Context, stop <-chan struct{}) (ran bool, err error) {
		ran = l.run(chat, turn, stop, func() {
			if g != nil {
				u.Message = a.albums.collect(ctx, g, a.albumWindow())
			}
			err = a.handle(ctx, u)
		})
		if g != nil {
			a.albums.finish(g, ran, err)
		}
		return ran, err
	}
}

func (a *Adapter) albumWindow() time.Duration {
	if a.AlbumWindow > 0 {
		return a.AlbumWindow
	}
	return DefaultAlbumWindow
}

// busyPollInterval spaces Poll's getUpdates calls while updates are being
// handled: Telegram answers at once as long as an update is not confirmed.
const busyPollInterval = time.Second

// Poll long-polls getUpdates until ctx is done, handling the updates of
// different chats at once (MaxChats at most) and each chat's in order. A
// failed update is reported to onError (when set) and polling goes on; a
// failed getUpdates is retried after a pause (a 429's retry_after).
//
// Telegram forgets an update once getUpdates is called with a higher
// offset, so Poll confirms only the updates before the oldest one not yet
// handled: after a crash or a restart Telegram delivers that one and the
// ones after it again, and those already handled are recognised (Value) and
// skipped. When ctx is done Poll takes no new update, starts none of those
// waiting for their chat's turn, waits up to ShutdownGrace for the turns in
// progress, confirms what was handled and returns ctx's error.
func (a *Adapter) Poll(ctx context.Context, timeout time.Duration, onError func(error)) error {
	if a.Client == nil || a.Run == nil {
		return errors.New("telegram adapter: Client and Run are required")
	}
	report := func(err error) {
		if err != nil && onError != nil {
			onError(err)
		}
	}
	// Turns run on past ctx's end, up to the grace.
	turns, cancelTurns := context.WithCancel(context.WithValue(context.WithoutCancel(ctx), stopKey{}, ctx.Done()))
	defer cancelTurns()
	book := newOffsets()
	var wg sync.WaitGroup
	for ctx.Err() == nil {
		offset := book.offset()
		updates, err := a.Client.GetUpdates(ctx, offset, timeout)
		if ctx.Err() != nil {
			break
		}
		if err != nil {
			report(err)
			pause := 2 * time.Second
			var apiErr *APIError
			if errors.As(err, &apiErr) && apiErr.RetryAfter > 0 {
				pause = apiErr.RetryAfter
			}
			sleep(ctx, pause, nil)
			continue
		}
		book.confirmed(offset)
		fresh := false
		for _, u := range updates {
			if !book.receive(u.UpdateID) {
				continue // received before and not confirmed yet
			}
			fresh = true
			turn := a.queue(u)
			wg.Add(1)
			go func() {
				defer wg.Done()
				ran, err := turn(turns, ctx.Done())
				// A turn that failed once the shutdown began, without
				// telling the user, was most likely cut by it: it is not
				// handled, and the next start gets the update again.
				var told *ReportedError
				cut := ctx.Err() != nil && err != nil && !errors.As(err, &told)
				switch {
				case cut:
					report(fmt.Errorf("stopped by the shutdown; Telegram delivers it again: %w", err))
				case ran:
					report(err)
				}
				book.end(u.UpdateID, ran && !cut)
			}()
		}
		if !fresh && book.busy() {
			// Only updates in hand came back: wait for one to end
			// rather than asking again at once.
			sleep(ctx, busyPollInterval, book.ended)
		}
	}
	a.drain(ctx, &wg, cancelTurns)
	if offset := book.offset(); offset > book.confirmedOffset() {
		// Confirm the updates handled since the last call, so that the
		// next start does not get them again (a short poll: the updates it
		// returns stay unconfirmed).
		confirm, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		_, err := a.Client.GetUpdates(confirm, offset, 0)
		cancel()
		if err != nil {
			report(fmt.Errorf("confirm the handled updates: %w", err))
		}
	}
	return ctx.Err()
}

// drain waits for Poll's turns up to ShutdownGrace, then cancels those
// still going and waits for them to return.
func (a *Adapter) drain(ctx context.Context, wg *sync.WaitGroup, cancelTurns context.CancelFunc) {
	grace := a.ShutdownGrace
	if grace <= 0 {
		grace = DefaultShutdownGrace
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		cancelTurns()
		<-done
	}
}

// stopKey is the context key of the channel closed when Poll begins to
// shut down.
type stopKey struct{}

// stopping reports whether ctx is a turn of a Poll that is shutting down.
func stopping(ctx context.Context) bool {
	stop, _ := ctx.Value(stopKey{}).(<-chan struct{})
	if stop == nil {
		return false
	}
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// sleep waits for d, ctx's end or a value on wake (when not nil).
func sleep(ctx context.Context, d time.Duration, wake <-chan struct{}) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-timer.C:
	case <-wake:
	}
}

// offsets books the updates Poll received: those in hand (received and not
// handled yet) and the next update id expected. The getUpdates offset is
// the oldest update in hand, so that none is confirmed before it is handled.
type offsets struct {
	mu     sync.Mutex
	inHand map[int64]bool
	next   int64
	sent   int64
	// ended gets a value when a turn ends.
	ended chan struct{}
}

func newOffsets() *offsets {
	return &offsets{inHand: map[int64]bool{}, ended: make(chan struct{}, 1)}
}

// offset is the getUpdates offset: the oldest update in hand, else the next.
func (o *offsets) offset() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	off := o.next
	for id := range o.inHand {
		if id < off {
			off = id
		}
	}
	return off
}

// confirmed records an offset Telegram was called with.
func (o *offsets) confirmed(off int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.sent = max(o.sent, off)
}

// confirmedOffset is the highest offset Telegram was called with.
func (o *offsets) confirmedOffset() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.sent
}

// receive takes an update in hand; false for one received already.
func (o *offsets) receive(id int64) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if id < o.next {
		return false
	}
	o.next = id + 1
	o.inHand[id] = true
	return true
}

// end records the end of an update's turn. An update not handled stays in
// hand, unconfirmed, until Poll returns.
func (o *offsets) end(id int64, handled bool) {
	o.mu.Lock()
	if handled {
		delete(o.inHand, id)
	}
	o.mu.Unlock()
	select {
	case o.ended <- struct{}{}:
	default:
	}
}

// busy reports whether updates are in hand.
func (o *offsets) busy() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.inHand) > 0
}
