// Package tgtest is a local Telegram Bot API server for tests: it listens on
// 127.0.0.1, answers the methods graphctl uses in the Bot API's wire format
// ({"ok": true, "result": …} or {"ok": false, "error_code", "description"}),
// records what the bot sent, edited and displayed, queues updates for
// getUpdates and serves files for getFile and downloads.
package tgtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/graphctl/graphctl/builtin-nodes/telegram"
)

// Sent is a message the bot sent.
type Sent struct {
	ChatID    int64
	MessageID int64
	Text      string
	ReplyTo   int64
	// Buttons is the inline keyboard sent with the message, row by row.
	Buttons [][]telegram.InlineButton
	// ForceReply is set when the message asked for a reply (force_reply).
	ForceReply bool
}

// CallbackAnswer is an answerCallbackQuery call.
type CallbackAnswer struct {
	ID   string
	Text string
}

// Edit is an editMessageText call.
type Edit struct {
	ChatID    int64
	MessageID int64
	Text      string
}

// Action is a sendChatAction call.
type Action struct {
	ChatID int64
	Action string
}

type file struct {
	data []byte
	mime string
}

// Server is a local Bot API server.
type Server struct {
	// Token is the only bot token the server accepts.
	Token string

	srv *httptest.Server

	mu      sync.Mutex
	nextID  int64
	sent    []Sent
	edits   []Edit
	actions []Action
	texts   map[[2]int64]string
	markup  map[[2]int64][][]telegram.InlineButton
	answers []CallbackAnswer
	files   map[string]file
	updates []telegram.Update
	wake    chan struct{}
	// flood holds, per chat, until when sends and edits answer 429.
	flood map[int64]time.Time
	// limited counts the 429 answers.
	limited int
}

// NewServer starts a server closed when the test ends.
func NewServer(t testing.TB, token string) *Server {
	t.Helper()
	s := &Server{Token: token, nextID: 1000, texts: map[[2]int64]string{}, markup: map[[2]int64][][]telegram.InlineButton{},
		files: map[string]file{}, wake: make(chan struct{}, 1), flood: map[int64]time.Time{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the server's base URL (for TELEGRAM_API_URL / Client.BaseURL).
func (s *Server) URL() string { return s.srv.URL }

// Client returns a client of this server.
func (s *Server) Client() *telegram.Client {
	return &telegram.Client{BaseURL: s.srv.URL, Token: s.Token}
}

// AddFile serves data under fileID.
func (s *Server) AddFile(fileID string, data []byte, mime string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[fileID] = file{data: data, mime: mime}
}

// Push queues an update for getUpdates.
func (s *Server) Push(u telegram.Update) {
	s.mu.Lock()
	s.updates = append(s.updates, u)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Pending returns the ids of the queued updates getUpdates has not been
// told are handled (called with a higher offset).
func (s *Server) Pending() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]int64, len(s.updates))
	for i, u := range s.updates {
		ids[i] = u.UpdateID
	}
	return ids
}

// FloodControl makes sendMessage and editMessageText to chatID answer 429
// Too Many Requests, with the seconds left in parameters.retry_after, for d
// from now, as Telegram's flood control does.
func (s *Server) FloodControl(chatID int64, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flood[chatID] = time.Now().Add(d)
}

// Limited returns how many calls were answered 429.
func (s *Server) Limited() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.limited
}

// Sent returns the messages sent so far.
func (s *Server) Sent() []Sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Sent(nil), s.sent...)
}

// Edits returns the edits so far.
func (s *Server) Edits() []Edit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Edit(nil), s.edits...)
}

// Actions returns the chat actions so far.
func (s *Server) Actions() []Action {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Action(nil), s.actions...)
}

// Text returns a sent message's current text (after edits).
func (s *Server) Text(chatID, messageID int64) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.texts[[2]int64{chatID, messageID}]
}

// Buttons returns the inline keyboard a message currently shows (an edit
// without one removes it, as in Telegram).
func (s *Server) Buttons(chatID, messageID int64) [][]telegram.InlineButton {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.markup[[2]int64{chatID, messageID}]
}

// CallbackAnswers returns the answerCallbackQuery calls so far.
func (s *Server) CallbackAnswers() []CallbackAnswer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]CallbackAnswer(nil), s.answers...)
}

// Transcript returns the current text of every message sent to chatID, in order.
func (s *Server) Transcript(chatID int64) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, m := range s.sent {
		if m.ChatID == chatID {
			out = append(out, s.texts[[2]int64{chatID, m.MessageID}])
		}
	}
	return out
}

func reply(w http.ResponseWriter, result any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": result})
}

func fail(w http.ResponseWriter, code int, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"ok": false, "error_code": code, "description": desc})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if rest, ok := strings.CutPrefix(r.URL.Path, "/file/bot"+s.Token+"/"); ok {
		s.mu.Lock()
		f, found := s.files[strings.TrimPrefix(rest, "photos/")]
		s.mu.Unlock()
		if !found {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", f.mime)
		w.Write(f.data)
		return
	}
	method, ok := strings.CutPrefix(r.URL.Path, "/bot"+s.Token+"/")
	if !ok {
		fail(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	var p struct {
		ChatID          int64  `json:"chat_id"`
		MessageID       int64  `json:"message_id"`
		Text            string `json:"text"`
		Action          string `json:"action"`
		FileID          string `json:"file_id"`
		Offset          int64  `json:"offset"`
		Timeout         int    `json:"timeout"`
		CallbackQueryID string `json:"callback_query_id"`
		ReplyParameters *struct {
			MessageID int64 `json:"message_id"`
		} `json:"reply_parameters"`
		ReplyMarkup *struct {
			InlineKeyboard [][]telegram.InlineButton `json:"inline_keyboard"`
			ForceReply     bool                      `json:"force_reply"`
		} `json:"reply_markup"`
	}
	if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
		fail(w, http.StatusBadRequest, "Bad Request: "+err.Error())
		return
	}
	if method == "sendMessage" || method == "editMessageText" {
		s.mu.Lock()
		left := time.Until(s.flood[p.ChatID])
		if left > 0 {
			s.limited++
		}
		s.mu.Unlock()
		if left > 0 {
			secs := int((left + time.Second - 1) / time.Second)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			json.NewEncoder(w).Encode(map[string]any{"ok": false, "error_code": 429,
				"description": fmt.Sprintf("Too Many Requests: retry after %d", secs), "parameters": map[string]any{"retry_after": secs}})
			return
		}
	}
	switch method {
	case "sendMessage":
		if p.Text == "" {
			fail(w, http.StatusBadRequest, "Bad Request: message text is empty")
			return
		}
		if n := len(utf16.Encode([]rune(p.Text))); n > telegram.MaxMessageLen {
			fail(w, http.StatusBadRequest, "Bad Request: message is too long")
			return
		}
		if p.ReplyMarkup != nil {
			for _, row := range p.ReplyMarkup.InlineKeyboard {
				for _, b := range row {
					if b.Text == "" || len(b.CallbackData) < 1 || len(b.CallbackData) > 64 {
						fail(w, http.StatusBadRequest, "Bad Request: BUTTON_DATA_INVALID")
						return
					}
				}
			}
		}
		s.mu.Lock()
		s.nextID++
		m := Sent{ChatID: p.ChatID, MessageID: s.nextID, Text: p.Text}
		if p.ReplyParameters != nil {
			m.ReplyTo = p.ReplyParameters.MessageID
		}
		if p.ReplyMarkup != nil {
			m.Buttons, m.ForceReply = p.ReplyMarkup.InlineKeyboard, p.ReplyMarkup.ForceReply
			s.markup[[2]int64{p.ChatID, m.MessageID}] = m.Buttons
		}
		s.sent = append(s.sent, m)
		s.texts[[2]int64{p.ChatID, m.MessageID}] = p.Text
		s.mu.Unlock()
		reply(w, telegram.Message{MessageID: m.MessageID, Chat: telegram.Chat{ID: p.ChatID}, Date: time.Now().Unix(), Text: p.Text})
	case "editMessageText":
		s.mu.Lock()
		key := [2]int64{p.ChatID, p.MessageID}
		old, found := s.texts[key]
		if found && old != p.Text && p.Text != "" {
			s.texts[key] = p.Text
			s.edits = append(s.edits, Edit{ChatID: p.ChatID, MessageID: p.MessageID, Text: p.Text})
			if p.ReplyMarkup != nil {
				s.markup[key] = p.ReplyMarkup.InlineKeyboard
			} else {
				delete(s.markup, key)
			}
		}
		s.mu.Unlock()
		switch {
		case !found:
			fail(w, http.StatusBadRequest, "Bad Request: message to edit not found")
		case old == p.Text:
			fail(w, http.StatusBadRequest, "Bad Request: message is not modified")
		case p.Text == "":
			fail(w, http.StatusBadRequest, "Bad Request: message text is empty")
		default:
			reply(w, telegram.Message{MessageID: p.MessageID, Chat: telegram.Chat{ID: p.ChatID}, Text: p.Text})
		}
	case "sendChatAction":
		s.mu.Lock()
		s.actions = append(s.actions, Action{ChatID: p.ChatID, Action: p.Action})
		s.mu.Unlock()
		reply(w, true)
	case "getFile":
		s.mu.Lock()
		f, found := s.files[p.FileID]
		s.mu.Unlock()
		if !found {
			fail(w, http.StatusBadRequest, "Bad Request: invalid file_id")
			return
		}
		reply(w, telegram.File{FileID: p.FileID, FileSize: len(f.data), FilePath: "photos/" + p.FileID})
	case "answerCallbackQuery":
		if p.CallbackQueryID == "" {
			fail(w, http.StatusBadRequest, "Bad Request: query is too old and response timeout expired or query ID is invalid")
			return
		}
		s.mu.Lock()
		s.answers = append(s.answers, CallbackAnswer{ID: p.CallbackQueryID, Text: p.Text})
		s.mu.Unlock()
		reply(w, true)
	case "getUpdates":
		reply(w, s.takeUpdates(r, p.Offset, time.Duration(p.Timeout)*time.Second))
	default:
		fail(w, http.StatusNotFound, "Not Found: method "+method)
	}
}

// takeUpdates returns queued updates with id ≥ offset, dropping older ones,
// waiting up to timeout for one to arrive.
func (s *Server) takeUpdates(r *http.Request, offset int64, timeout time.Duration) []telegram.Update {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		var keep []telegram.Update
		for _, u := range s.updates {
			if u.UpdateID >= offset {
				keep = append(keep, u)
			}
		}
		s.updates = keep
		out := append([]telegram.Update{}, keep...)
		s.mu.Unlock()
		if len(out) > 0 || timeout <= 0 {
			return out
		}
		select {
		case <-s.wake:
		case <-deadline.C:
			return []telegram.Update{}
		case <-r.Context().Done():
			return []telegram.Update{}
		}
	}
}
