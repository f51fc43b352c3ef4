package telegram

import (
	"sync"
)

// DefaultMaxChats is how many chats' updates an Adapter handles at once
// when MaxChats is not set.
const DefaultMaxChats = 16

// lanes orders the updates of each chat and bounds how many are handled at
// once: an update waits for the chat's previous updates to end (its turn),
// then for one of the slots.
type lanes struct {
	slots chan struct{}

	mu sync.Mutex
	// waiting holds, for each chat with an update in hand, the turns
	// queued behind it, in their order of arrival.
	waiting map[int64][]chan struct{}
}

func newLanes(slots int) *lanes {
	if slots <= 0 {
		slots = DefaultMaxChats
	}
	return &lanes{slots: make(chan struct{}, slots), waiting: map[int64][]chan struct{}{}}
}

// enter queues a turn in chat's lane and returns a channel closed when the
// chat's earlier turns have ended. Every turn entered must be left (leave).
func (l *lanes) enter(chat int64) <-chan struct{} {
	turn := make(chan struct{})
	l.mu.Lock()
	defer l.mu.Unlock()
	if q, busy := l.waiting[chat]; busy {
		l.waiting[chat] = append(q, turn)
		return turn
	}
	l.waiting[chat] = nil
	close(turn)
	return turn
}

// leave ends chat's current turn, starting the next one.
func (l *lanes) leave(chat int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.waiting[chat]
	if len(q) == 0 {
		delete(l.waiting, chat)
		return
	}
	close(q[0])
	l.waiting[chat] = q[1:]
}

// run waits for turn (entered in chat's lane) and a free slot, then runs
// fn and leaves the lane. When stop is closed before fn could start, fn is
// not run and run reports false; the chat's later turns go on either way.
func (l *lanes) run(chat int64, turn <-chan struct{}, stop <-chan struct{}, fn func()) bool {
	defer l.leave(chat)
	// The turn is always awaited (not abandoned on stop), so that the
	// chat's turns are handed on in order.
	<-turn
	select {
	case <-stop:
		return false
	default:
	}
	select {
	case l.slots <- struct{}{}:
	case <-stop:
		return false
	}
	defer func() { <-l.slots }()
	fn()
	return true
}

// laneOf returns the chat whose lane an update is handled in, false for an
// update no chat's order depends on (it is ignored).
func laneOf(u Update) (int64, bool) {
	switch {
	case u.CallbackQuery != nil && u.CallbackQuery.Message != nil:
		return u.CallbackQuery.Message.Chat.ID, true
	case u.CallbackQuery != nil && u.CallbackQuery.From != nil:
		return u.CallbackQuery.From.ID, true
	case u.Message != nil:
		return u.Message.Chat.ID, true
	}
	return 0, false
}
