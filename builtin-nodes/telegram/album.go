package telegram

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultAlbumWindow is how long the adapter waits, after the latest
// message of an album arrived, for the album's next one, when AlbumWindow is
// not set. Telegram delivers the photos of an album as separate updates
// within a fraction of a second.
const DefaultAlbumWindow = time.Second

// album gathers the messages of one media group (an album: several photos
// sent together) into one turn. The first update of the album to arrive
// leads: its turn waits until the album's messages stop arriving, then runs
// the graph once for all of them; the others wait for that turn and share
// its outcome.
type album struct {
	key string
	// joined gets a value when a message joins.
	joined chan struct{}
	// done is closed when the leader's turn ended with ran and err.
	done chan struct{}
	ran  bool
	err  error

	mu     sync.Mutex
	msgs   []*Message
	closed bool
}

// albums holds the albums being gathered, by chat and media group id.
type albums struct {
	mu   sync.Mutex
	open map[string]*album
}

// gather files u's message into its album: it returns the album and
// whether u leads it (the album's first update), or nil for a message that
// is not part of an album. A message arriving after its album's turn began
// starts a new album.
func (as *albums) gather(u Update) (*album, bool) {
	m := u.Message
	if m == nil || m.MediaGroupID == "" || m.From == nil || m.From.IsBot {
		return nil, false
	}
	key := strconv.FormatInt(m.Chat.ID, 10) + ":" + m.MediaGroupID
	as.mu.Lock()
	defer as.mu.Unlock()
	if as.open == nil {
		as.open = map[string]*album{}
	}
	if g := as.open[key]; g != nil {
		g.mu.Lock()
		closed := g.closed
		if !closed {
			g.msgs = append(g.msgs, m)
		}
		g.mu.Unlock()
		if !closed {
			select {
			case g.joined <- struct{}{}:
			default:
			}
			return g, false
		}
	}
	g := &album{key: key, joined: make(chan struct{}, 1), done: make(chan struct{}), msgs: []*Message{m}}
	as.open[key] = g
	return g, true
}

// close ends the gathering of g: later messages of its media group start
// a new album.
func (as *albums) close(g *album) {
	as.mu.Lock()
	defer as.mu.Unlock()
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	if as.open[g.key] == g {
		delete(as.open, g.key)
	}
}

// collect waits until no message has joined g for window (or ctx ends),
// closes it and returns its messages as one: the first message (the lowest
// id) carrying the others in Album and the captions of all.
func (as *albums) collect(ctx context.Context, g *album, window time.Duration) *Message {
	timer := time.NewTimer(window)
	defer timer.Stop()
wait:
	for {
		select {
		case <-g.joined:
			if !timer.Stop() {
				<-timer.C
			}
			timer.Reset(window)
		case <-timer.C:
			break wait
		case <-ctx.Done():
			break wait
		}
	}
	as.close(g)
	g.mu.Lock()
	msgs := slices.Clone(g.msgs)
	g.mu.Unlock()
	slices.SortFunc(msgs, func(a, b *Message) int { return int(a.MessageID - b.MessageID) })
	first := *msgs[0]
	var captions []string
	for _, m := range msgs {
		if c := strings.TrimSpace(m.Caption); c != "" && !slices.Contains(captions, c) {
			captions = append(captions, c)
		}
		if first.ReplyToMessage == nil {
			first.ReplyToMessage = m.ReplyToMessage
		}
	}
	first.Caption = strings.Join(captions, "\n")
	first.Album = msgs
	return &first
}

// finish records the outcome of g's turn for the album's other updates.
func (as *albums) finish(g *album, ran bool, err error) {
	as.close(g)
	g.ran, g.err = ran, err
	close(g.done)
}

// wait is the turn of an album's update that does not lead it: it ends
// with the leader's turn, sharing its outcome (a shutdown does not part
// them: the leader's turn either runs, and its album's updates are handled,
// or does not, and none is), or reports false when ctx ends first (a
// webhook call that ended: the update was not handled).
func (g *album) wait(ctx context.Context, _ <-chan struct{}) (bool, error) {
	select {
	case <-g.done:
		return g.ran, g.err
	case <-ctx.Done():
		return false, nil
	}
}

// lastMessageID is the highest message id of m's album (m's own without one).
func lastMessageID(m *Message) int64 {
	last := m.MessageID
	for _, x := range m.Album {
		last = max(last, x.MessageID)
	}
	return last
}

// photos returns the photos of m: those of its album, or its own, or the
// one of the message it replies to.
func photos(m *Message) []*PhotoSize {
	var out []*PhotoSize
	for _, x := range m.Album {
		if p := largest(x); p != nil {
			out = append(out, p)
		}
	}
	if len(out) > 0 {
		return out
	}
	if p := largest(m); p != nil {
		return []*PhotoSize{p}
	}
	if m.ReplyToMessage != nil {
		if p := largest(m.ReplyToMessage); p != nil {
			return []*PhotoSize{p}
		}
	}
	return nil
}
