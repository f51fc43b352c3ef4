package telegram_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graphctl/graphctl/builtin-nodes/telegram"
	"github.com/graphctl/graphctl/builtin-nodes/telegram/tgtest"
	"github.com/graphctl/graphctl/runtime/event"
)

// albumUpdates are the updates of an album of photos p1, p2 and p3 (message
// ids first, first+1, first+2), delivered as Telegram does: one update per
// photo, the caption on one of them.
func albumUpdates(srv *tgtest.Server, user, first int64, group, caption string) []telegram.Update {
	var out []telegram.Update
	for i, id := range []string{"p1", "p2", "p3"} {
		srv.AddFile(id, []byte("\x89PNG\r\n\x1a\n"+id), "image/png")
		m := &telegram.Message{MessageID: first + int64(i), From: &telegram.User{ID: user}, Chat: telegram.Chat{ID: user, Type: "private"},
			MediaGroupID: group, Photo: []telegram.PhotoSize{{FileID: id, Width: 800, Height: 600}}}
		if i == 1 {
			m.Caption = caption
		}
		out = append(out, telegram.Update{UpdateID: first + int64(i), Message: m})
	}
	return out
}

// TestAlbumIsOneTurn: the photos of an album, each its own update, are one
// turn carrying all of them — whether polled in one batch or posted to the
// webhook at once — answered once, in reply to the album's first message;
// the album delivered again after a restart is not answered again.
func TestAlbumIsOneTurn(t *testing.T) {
	const user = 161
	bot := newGatedBot(t)
	g := gateOf(telegram.ThreadID(user))
	g.freeOnce.Do(func() { close(g.free) }) // the gate lets this chat's runs through
	srv := bot.srv
	var runs atomic.Int32
	adapter := func() *telegram.Adapter {
		a := bot.adapter(0, 0)
		run := a.Run
		a.Run = func(ctx context.Context, thread string, input map[string]any, sink event.Sink) error {
			runs.Add(1)
			return run(ctx, thread, input, sink)
		}
		return a
	}
	photoIDs := func() []string {
		var ids []string
		in, _ := bot.state(t, "tg:161")["input"].(map[string]any)
		album, _ := in["album"].([]any)
		for _, p := range album {
			id, _ := p.(map[string]any)["file_id"].(string)
			ids = append(ids, id)
		}
		return ids
	}
	wantReply := "re: 猫たち"

	t.Run("polled", func(t *testing.T) {
		for _, u := range albumUpdates(srv, user, 1, "album-1", "猫たち") {
			srv.Push(u)
		}
		bot.poll(0, 0)
		bot.waitTranscript(user, wantReply)
		if ids := photoIDs(); strings.Join(ids, ",") != "p1,p2,p3" {
			t.Errorf("the turn's photos %v, want the album's", ids)
		}
		if err := <-bot.stop(); err != context.Canceled {
			t.Fatalf("poll: %v", err)
		}

		// A restart: Telegram delivers the album again (say it was not
		// confirmed), then a new message.
		for _, u := range albumUpdates(srv, user, 1, "album-1", "猫たち") {
			srv.Push(u)
		}
		srv.Push(textUpdate(4, user, "ありがとう"))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		a := adapter()
		go func() { done <- a.Poll(ctx, time.Second, bot.report) }()
		bot.waitTranscript(user, wantReply, "re: ありがとう")
		cancel()
		<-done
		if f := bot.failures(); len(f) != 0 {
			t.Errorf("failures %v", f)
		}
	})

	t.Run("webhook", func(t *testing.T) {
		a := adapter()
		a.AlbumWindow = 2 * time.Second
		h := httptest.NewServer(a.Handler(""))
		t.Cleanup(h.Close)
		before := runs.Load()
		var codes []<-chan int
		for _, u := range albumUpdates(srv, user, 10, "album-2", "犬たち") {
			codes = append(codes, postUpdate(h.URL, u))
		}
		for i, c := range codes {
			if code := <-c; code != http.StatusOK {
				t.Errorf("update %d answered %d", i, code)
			}
		}
		if n := runs.Load() - before; n != 1 {
			t.Errorf("%d runs for the album, want 1", n)
		}
		got := srv.Transcript(user)
		if last := got[len(got)-1]; last != "re: 犬たち" {
			t.Errorf("the album's answer is %q", last)
		}
		if ids := photoIDs(); strings.Join(ids, ",") != "p1,p2,p3" {
			t.Errorf("the turn's photos %v, want the album's", ids)
		}
		st := bot.state(t, "tg:161")
		if tg := st["telegram"].(map[string]any); tg["message_id"] != float64(10) {
			t.Errorf("telegram %v, want the album's first message id", tg)
		}
		msgs := st["messages"].([]any)
		if c := msgs[len(msgs)-2].(map[string]any)["content"]; c != "犬たち" {
			t.Errorf("the turn's user message is %v", c)
		}
	})
}

// TestAlbumTurnCutByAShutdownIsHandledOnce: a shutdown while an album's
// turn runs lets the turn end (within the grace) and confirms all the
// album's updates with it; an album Telegram delivers again anyway (after a
// crash) is recognised as handled, none of its photos answered twice.
func TestAlbumTurnCutByAShutdownIsHandledOnce(t *testing.T) {
	const user = 162
	bot := newGatedBot(t)
	for _, u := range albumUpdates(bot.srv, user, 20, "album-3", "鳥たち") {
		bot.srv.Push(u)
	}
	bot.poll(0, 10*time.Second)
	if got := arrived(t, user); got != "鳥たち" {
		t.Fatalf("run at the gate is %q", got)
	}
	stopped := bot.stop() // the shutdown begins while the album's turn runs
	release(user)
	if err := <-stopped; err != context.Canceled {
		t.Fatalf("poll: %v", err)
	}
	bot.waitTranscript(user, "re: 鳥たち")
	if p := bot.srv.Pending(); len(p) != 0 {
		t.Errorf("updates %v left unconfirmed, want the whole album confirmed with its turn", p)
	}

	// After a crash between the album's confirmations, Telegram delivers
	// its last two photos again, then a new message.
	for _, u := range albumUpdates(bot.srv, user, 20, "album-3", "鳥たち")[1:] {
		bot.srv.Push(u)
	}
	bot.srv.Push(textUpdate(23, user, "次"))
	bot.poll(0, 0)
	if got := arrived(t, user); got != "次" {
		t.Fatalf("run at the gate is %q, want only the new message run", got)
	}
	release(user)
	bot.waitTranscript(user, "re: 鳥たち", "re: 次")
	if err := <-bot.stop(); err != context.Canceled {
		t.Fatalf("poll: %v", err)
	}
	if f := bot.failures(); len(f) != 0 {
		t.Errorf("failures %v", f)
	}
}

// state reads a thread's latest checkpointed values.
func (b *gatedBot) state(t *testing.T, thread string) map[string]any {
	t.Helper()
	out := map[string]any{}
	for _, f := range []string{"telegram", "messages", "input"} {
		v, err := b.adapter(0, 0).Value(context.Background(), thread, f)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = v
	}
	return out
}

func TestAlbumInputCarriesEveryPhoto(t *testing.T) {
	srv := tgtest.NewServer(t, "42:secret")
	ups := albumUpdates(srv, 171, 1, "g", "")
	album := *ups[0].Message
	for _, u := range ups {
		album.Album = append(album.Album, u.Message)
	}
	in, err := (&telegram.Adapter{Client: srv.Client()}).Input(context.Background(), &album)
	if err != nil {
		t.Fatal(err)
	}
	input := in["input"].(map[string]any)
	photos, _ := input["album"].([]any)
	if len(photos) != 3 {
		t.Fatalf("input.album %v, want the three photos", input["album"])
	}
	for i, p := range photos {
		m := p.(map[string]any)
		if m["file_id"] != ups[i].Message.Photo[0].FileID || !strings.HasPrefix(m["data_url"].(string), "data:image/png;base64,") || len(m["sha256"].(string)) != 64 {
			t.Errorf("photo %d: %v", i, m)
		}
	}
	if input["image"].(map[string]any)["file_id"] != "p1" || !strings.HasPrefix(in["image"].(string), "data:image/png;base64,") {
		t.Errorf("image %v, want the first photo", input["image"])
	}
	if msg := in["messages"].([]any)[0].(map[string]any)["content"]; msg != "[3 photos]" {
		t.Errorf("message content %v", msg)
	}
}
