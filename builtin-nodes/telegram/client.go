// Package telegram connects graphs to Telegram through the Bot API: a client
// (getUpdates long polling, sendMessage, sendChatAction, editMessageText,
// getFile and file download), the telegram_reply node type, and the inbound
// adapter that turns an Update into a graph run on thread tg:{user_id}, from a
// webhook (Handler) or a polling loop (Poll).
//
// The bot token is read from the environment (TELEGRAM_BOT_TOKEN), never from
// graph files; TELEGRAM_API_URL points the client at another Bot API server
// (a local one in tests, see telegram/tgtest).
package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
	"unicode/utf16"
)

// Environment variables the package reads.
const (
	TokenEnv = "TELEGRAM_BOT_TOKEN"
	URLEnv   = "TELEGRAM_API_URL"
	// DefaultURL is the public Bot API server.
	DefaultURL = "https://api.telegram.org"
)

// MaxMessageLen is the Bot API's limit on a message's text, in UTF-16 code
// units (a rune outside the Basic Multilingual Plane, such as most emoji,
// counts two).
const MaxMessageLen = 4096

// maxFileBytes bounds a downloaded file (the Bot API serves up to 20 MB).
const maxFileBytes = 20 << 20

// User is a Telegram user.
type User struct {
	ID           int64  `json:"id"`
	IsBot        bool   `json:"is_bot,omitempty"`
	FirstName    string `json:"first_name,omitempty"`
	Username     string `json:"username,omitempty"`
	LanguageCode string `json:"language_code,omitempty"`
}

// Chat is a Telegram chat.
type Chat struct {
	ID   int64  `json:"id"`
	Type string `json:"type,omitempty"`
}

// PhotoSize is one size of a photo.
type PhotoSize struct {
	FileID       string `json:"file_id"`
	FileUniqueID string `json:"file_unique_id,omitempty"`
	Width        int    `json:"width"`
	Height       int    `json:"height"`
	FileSize     int    `json:"file_size,omitempty"`
}

// Message is a Telegram message.
type Message struct {
	MessageID int64       `json:"message_id"`
	From      *User       `json:"from,omitempty"`
	Chat      Chat        `json:"chat"`
	Date      int64       `json:"date,omitempty"`
	Text      string      `json:"text,omitempty"`
	Caption   string      `json:"caption,omitempty"`
	Photo     []PhotoSize `json:"photo,omitempty"`
	// Document is a file sent as is (a screenshot sent "as a file" is an
	// image document).
	Document       *Document `json:"document,omitempty"`
	ReplyToMessage *Message  `json:"reply_to_message,omitempty"`
	// MediaGroupID is shared by the messages of an album (photos sent
	// together), each delivered as its own update.
	MediaGroupID string `json:"media_group_id,omitempty"`
	// Album holds, on the message the adapter makes of an album, the
	// album's messages in order (the message itself first).
	Album []*Message `json:"-"`
}

// Document is a general file.
type Document struct {
	FileID       string `json:"file_id"`
	FileUniqueID string `json:"file_unique_id,omitempty"`
	FileName     string `json:"file_name,omitempty"`
	MimeType     string `json:"mime_type,omitempty"`
	FileSize     int    `json:"file_size,omitempty"`
}

// Update is one incoming update.
type Update struct {
	UpdateID      int64          `json:"update_id"`
	Message       *Message       `json:"message,omitempty"`
	CallbackQuery *CallbackQuery `json:"callback_query,omitempty"`
}

// CallbackQuery is a tap on an inline keyboard button.
type CallbackQuery struct {
	ID   string `json:"id"`
	From *User  `json:"from"`
	// Message is the message with the keyboard.
	Message *Message `json:"message,omitempty"`
	// Data is the button's callback_data.
	Data string `json:"data,omitempty"`
}

// InlineButton is a button of an inline keyboard.
type InlineButton struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data"`
}

// File is a file ready to download.
type File struct {
	FileID   string `json:"file_id"`
	FileSize int    `json:"file_size,omitempty"`
	FilePath string `json:"file_path"`
}

// APIError is an unsuccessful Bot API answer.
type APIError struct {
	Method      string
	Code        int
	Description string
	// RetryAfter is the wait a 429 answer asks for.
	RetryAfter time.Duration
}

// Error implements error.
func (e *APIError) Error() string {
	return fmt.Sprintf("telegram %s: %d %s", e.Method, e.Code, e.Description)
}

// Client calls the Bot API.
type Client struct {
	// BaseURL is the API server, DefaultURL when empty.
	BaseURL string
	Token   string
	HTTP    *http.Client
}

// ErrNoToken is returned by FromEnv when TELEGRAM_BOT_TOKEN is unset.
var ErrNoToken = errors.New("telegram: " + TokenEnv + " is not set")

// FromEnv builds a client from TELEGRAM_BOT_TOKEN and TELEGRAM_API_URL
// (read with getenv, os.Getenv when nil).
func FromEnv(getenv func(string) string) (*Client, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	tok := strings.TrimSpace(getenv(TokenEnv))
	if tok == "" {
		return nil, fmt.Errorf("%w: set it to the token @BotFather gave the bot", ErrNoToken)
	}
	return &Client{BaseURL: strings.TrimSpace(getenv(URLEnv)), Token: tok}, nil
}

func (c *Client) base() string {
	if c.BaseURL == "" {
		return DefaultURL
	}
	return strings.TrimRight(c.BaseURL, "/")
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

// MaxRetryAfter is the longest flood-control wait (a 429 answer's
// retry_after) Call sits out before trying again; a longer one is returned
// as the error.
const MaxRetryAfter = 30 * time.Second

// Call invokes a Bot API method with params as JSON and decodes its result
// into out (when non-nil). A 429 answer (Telegram's flood control, which
// sent nothing) is retried after the retry_after it asks for, twice at most,
// when that is at most MaxRetryAfter; getUpdates is never retried here
// (Poll pauses on its own).
func (c *Client) Call(ctx context.Context, method string, params any, out any) error {
	for attempt := 0; ; attempt++ {
		err := c.callOnce(ctx, method, params, out)
		var apiErr *APIError
		if method == "getUpdates" || attempt == 2 || ctx.Value(noFloodWait{}) != nil || !errors.As(err, &apiErr) || apiErr.Code != http.StatusTooManyRequests ||
			apiErr.RetryAfter > MaxRetryAfter {
			return err
		}
		wait := time.NewTimer(max(apiErr.RetryAfter, 100*time.Millisecond))
		select {
		case <-ctx.Done():
			wait.Stop()
			return err
		case <-wait.C:
		}
	}
}

// noFloodWait marks a context whose calls return a 429 at once (a preview
// is not worth waiting for).
type noFloodWait struct{}

// callOnce is one call of Call.
func (c *Client) callOnce(ctx context.Context, method string, params any, out any) error {
	body, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("telegram %s: encode parameters: %w", method, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base()+"/bot"+c.Token+"/"+method, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("telegram %s: %w", method, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http().Do(req)
	if err != nil {
		// The URL holds the token: never let it into an error.
		var uerr interface{ Unwrap() error }
		if errors.As(err, &uerr) && uerr.Unwrap() != nil {
			err = uerr.Unwrap()
		}
		return fmt.Errorf("telegram %s: %w", method, err)
	}
	defer resp.Body.Close()
	var env struct {
		OK          bool            `json:"ok"`
		Result      json.RawMessage `json:"result"`
		ErrorCode   int             `json:"error_code"`
		Description string          `json:"description"`
		Parameters  struct {
			RetryAfter int `json:"retry_after"`
		} `json:"parameters"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxFileBytes)).Decode(&env); err != nil {
		return fmt.Errorf("telegram %s: HTTP %d with an undecodable body: %w", method, resp.StatusCode, err)
	}
	if !env.OK {
		code := env.ErrorCode
		if code == 0 {
			code = resp.StatusCode
		}
		return &APIError{Method: method, Code: code, Description: env.Description, RetryAfter: time.Duration(env.Parameters.RetryAfter) * time.Second}
	}
	if out != nil {
		if err := json.Unmarshal(env.Result, out); err != nil {
			return fmt.Errorf("telegram %s: decode result: %w", method, err)
		}
	}
	return nil
}

// GetUpdates long-polls for updates after offset, waiting up to timeout.
func (c *Client) GetUpdates(ctx context.Context, offset int64, timeout time.Duration) ([]Update, error) {
	var out []Update
	err := c.Call(ctx, "getUpdates", map[string]any{
		"offset": offset, "timeout": int(timeout / time.Second), "allowed_updates": []string{"message", "callback_query"},
	}, &out)
	return out, err
}

// SendMessage sends text to a chat, as a reply when replyTo is non-zero.
func (c *Client) SendMessage(ctx context.Context, chatID int64, text string, replyTo int64) (*Message, error) {
	p := map[string]any{"chat_id": chatID, "text": text}
	if replyTo != 0 {
		p["reply_parameters"] = map[string]any{"message_id": replyTo, "allow_sending_without_reply": true}
	}
	var m Message
	if err := c.Call(ctx, "sendMessage", p, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// SendPrompt sends text asking for an answer: with buttons, as an inline
// keyboard (one button a row); without, as a reply prompt (force_reply), so
// the user's client opens a reply to it.
func (c *Client) SendPrompt(ctx context.Context, chatID int64, text string, buttons []InlineButton, replyTo int64) (*Message, error) {
	p := map[string]any{"chat_id": chatID, "text": text}
	if len(buttons) > 0 {
		rows := make([][]InlineButton, len(buttons))
		for i, b := range buttons {
			rows[i] = []InlineButton{b}
		}
		p["reply_markup"] = map[string]any{"inline_keyboard": rows}
	} else {
		p["reply_markup"] = map[string]any{"force_reply": true}
	}
	if replyTo != 0 {
		p["reply_parameters"] = map[string]any{"message_id": replyTo, "allow_sending_without_reply": true}
	}
	var m Message
	if err := c.Call(ctx, "sendMessage", p, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// AnswerCallbackQuery acknowledges a button tap (the client stops its
// spinner), showing text as a notification when it is not empty.
func (c *Client) AnswerCallbackQuery(ctx context.Context, id, text string) error {
	p := map[string]any{"callback_query_id": id}
	if text != "" {
		p["text"] = text
	}
	return c.Call(ctx, "answerCallbackQuery", p, nil)
}

// EditMessageText replaces the text of a message the bot sent (and removes
// its inline keyboard, if it had one).
func (c *Client) EditMessageText(ctx context.Context, chatID, messageID int64, text string) error {
	err := c.Call(ctx, "editMessageText", map[string]any{"chat_id": chatID, "message_id": messageID, "text": text}, nil)
	var apiErr *APIError
	if errors.As(err, &apiErr) && strings.Contains(apiErr.Description, "message is not modified") {
		return nil
	}
	return err
}

// SendChatAction shows an action ("typing") in the chat for a few seconds.
func (c *Client) SendChatAction(ctx context.Context, chatID int64, action string) error {
	return c.Call(ctx, "sendChatAction", map[string]any{"chat_id": chatID, "action": action}, nil)
}

// GetFile returns the download path of a file.
func (c *Client) GetFile(ctx context.Context, fileID string) (*File, error) {
	var f File
	if err := c.Call(ctx, "getFile", map[string]any{"file_id": fileID}, &f); err != nil {
		return nil, err
	}
	if f.FilePath == "" {
		return nil, fmt.Errorf("telegram getFile %s: no file_path in the answer", fileID)
	}
	return &f, nil
}

// Download fetches a file by its id and returns its bytes and content type.
func (c *Client) Download(ctx context.Context, fileID string) ([]byte, string, error) {
	f, err := c.GetFile(ctx, fileID)
	if err != nil {
		return nil, "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base()+"/file/bot"+c.Token+"/"+f.FilePath, nil)
	if err != nil {
		return nil, "", fmt.Errorf("telegram download %s: %w", fileID, err)
	}
	resp, err := c.http().Do(req)
	if err != nil {
		var uerr interface{ Unwrap() error }
		if errors.As(err, &uerr) && uerr.Unwrap() != nil {
			err = uerr.Unwrap()
		}
		return nil, "", fmt.Errorf("telegram download %s: %w", fileID, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("telegram download %s: HTTP %d", fileID, resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxFileBytes+1))
	if err != nil {
		return nil, "", fmt.Errorf("telegram download %s: %w", fileID, err)
	}
	if len(b) > maxFileBytes {
		return nil, "", fmt.Errorf("telegram download %s: over %d bytes", fileID, maxFileBytes)
	}
	ctype := resp.Header.Get("Content-Type")
	if ctype == "" || strings.HasPrefix(ctype, "application/octet-stream") || strings.HasPrefix(ctype, "text/plain") {
		ctype = http.DetectContentType(b)
	}
	return b, ctype, nil
}

// Split cuts text into pieces of at most max UTF-16 code units (the unit of
// the Bot API's limit), at a paragraph break, line break or space in the
// second half of the window when there is one. A piece holds at least one
// rune, so a max below 2 can leave a piece of one two-unit rune.
func Split(text string, max int) []string {
	if max <= 0 {
		max = MaxMessageLen
	}
	r := []rune(text)
	var out []string
	for {
		window := fitUTF16(r, max)
		if window == len(r) {
			break
		}
		cut := window
		for _, sep := range []string{"\n\n", "\n", " "} {
			if i := lastIndex(r[:window], []rune(sep)); i >= window/2 {
				cut = i + len([]rune(sep))
				break
			}
		}
		out = append(out, string(r[:cut]))
		r = r[cut:]
	}
	if len(r) > 0 || len(out) == 0 {
		out = append(out, string(r))
	}
	return out
}

// fitUTF16 returns how many leading runes of r fit in max UTF-16 code units;
// at least one when r is not empty.
func fitUTF16(r []rune, max int) int {
	units := 0
	for i, c := range r {
		units += utf16.RuneLen(c)
		if units > max {
			if i == 0 {
				return 1
			}
			return i
		}
	}
	return len(r)
}

func lastIndex(r, sep []rune) int {
	for i := len(r) - len(sep); i >= 0; i-- {
		match := true
		for j := range sep {
			if r[i+j] != sep[j] {
				match = false
				break
			}
		}
		if match {
			return i
		}
	}
	return -1
}
