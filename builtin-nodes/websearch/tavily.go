// Package websearch gives graphs web search through Tavily's HTTP API: the
// web_search node type and the web_search builtin tool (for models that call
// tools), both over one client.
//
// The API key is read from the environment only (TAVILY_API_KEY); without
// one, the node does not fail: it writes {available: false} with the reason,
// emits a web_search event saying "no web search available", and the graph
// routes on (typically to a direct answer that says so). TAVILY_BASE_URL
// points the client at another server speaking Tavily's wire format (a local
// one in tests, see websearch/tavilytest).
//
// Results are normalized to citations {citation_id, url, title, snippet,
// score, published_date}; citation ids are "web-1", "web-2", … in rank order
// so that a model can cite them like document chunks.
package websearch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Environment variables the package reads.
const (
	KeyEnv  = "TAVILY_API_KEY"
	URLEnv  = "TAVILY_BASE_URL"
	BaseURL = "https://api.tavily.com"
)

// ErrNoKey is returned by FromEnv when TAVILY_API_KEY is unset.
var ErrNoKey = errors.New(KeyEnv + " is not set: no web search available")

// Request is a Tavily /search request. Zero values are left out of the body,
// so Tavily's defaults apply.
type Request struct {
	Query          string   `json:"query"`
	SearchDepth    string   `json:"search_depth,omitempty"`
	Topic          string   `json:"topic,omitempty"`
	TimeRange      string   `json:"time_range,omitempty"`
	MaxResults     int      `json:"max_results,omitempty"`
	IncludeDomains []string `json:"include_domains,omitempty"`
	ExcludeDomains []string `json:"exclude_domains,omitempty"`
	IncludeAnswer  bool     `json:"include_answer,omitempty"`
}

// Result is one search result as Tavily returns it.
type Result struct {
	Title         string  `json:"title"`
	URL           string  `json:"url"`
	Content       string  `json:"content"`
	Score         float64 `json:"score"`
	PublishedDate string  `json:"published_date,omitempty"`
}

// Response is Tavily's /search answer.
type Response struct {
	Query        string   `json:"query"`
	Answer       string   `json:"answer,omitempty"`
	Results      []Result `json:"results"`
	ResponseTime float64  `json:"response_time"`
	RequestID    string   `json:"request_id,omitempty"`
}

// APIError is an unsuccessful answer of the API.
type APIError struct {
	Status int
	// Detail is Tavily's {"detail": {"error": ...}} message, or the body.
	Detail string
	// RetryAfter is what a 429 answer asks to wait, when it says.
	RetryAfter time.Duration
}

// Error implements error.
func (e *APIError) Error() string {
	what := map[int]string{
		400: "bad request", 401: "invalid API key (check " + KeyEnv + ")", 403: "forbidden",
		429: "rate limit or usage limit exceeded", 432: "plan limit exceeded", 433: "pay-as-you-go limit exceeded",
	}[e.Status]
	if what == "" {
		what = "HTTP " + strconv.Itoa(e.Status)
	}
	if e.Detail == "" {
		return "tavily search: " + what
	}
	return "tavily search: " + what + ": " + e.Detail
}

// Retryable reports whether trying again later may succeed (429 and 5xx).
func (e *APIError) Retryable() bool { return e.Status == 429 || e.Status >= 500 }

// Client calls Tavily's search API.
type Client struct {
	// BaseURL is the API server, BaseURL when empty.
	BaseURL string
	Key     string
	HTTP    *http.Client
}

// FromEnv builds a client from TAVILY_API_KEY and TAVILY_BASE_URL (read
// with getenv, os.Getenv when nil); it fails with ErrNoKey without a key.
func FromEnv(getenv func(string) string) (*Client, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	key := strings.TrimSpace(getenv(KeyEnv))
	if key == "" {
		return nil, ErrNoKey
	}
	return &Client{BaseURL: strings.TrimSpace(getenv(URLEnv)), Key: key}, nil
}

// maxResponseBytes bounds a search answer.
const maxResponseBytes = 8 << 20

// Search runs one search.
func (c *Client) Search(ctx context.Context, req Request) (*Response, error) {
	if strings.TrimSpace(req.Query) == "" {
		return nil, errors.New("tavily search: the query is empty")
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("tavily search: encode request: %w", err)
	}
	base := strings.TrimRight(c.BaseURL, "/")
	if base == "" {
		base = BaseURL
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/search", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("tavily search: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Authorization", "Bearer "+c.Key)
	client := c.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(hreq)
	if err != nil {
		return nil, fmt.Errorf("tavily search: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return nil, fmt.Errorf("tavily search: read answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		e := &APIError{Status: resp.StatusCode, Detail: detailOf(raw)}
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			e.RetryAfter = time.Duration(s) * time.Second
		}
		return nil, e
	}
	var out Response
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("tavily search: answer is not a search response: %w", err)
	}
	return &out, nil
}

// detailOf reads {"detail": {"error": msg}} (or {"detail": msg}), else an
// excerpt of the body.
func detailOf(raw []byte) string {
	var env struct {
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(raw, &env) == nil && len(env.Detail) > 0 {
		var d struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(env.Detail, &d) == nil && d.Error != "" {
			return d.Error
		}
		var s string
		if json.Unmarshal(env.Detail, &s) == nil {
			return s
		}
	}
	return excerpt(strings.TrimSpace(string(raw)), 200)
}

// excerpt cuts s to at most n bytes at a rune boundary.
func excerpt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// snippetChars is the length of a citation's snippet, in runes.
const snippetChars = 300

// Citations normalizes results to citations in rank order.
func Citations(results []Result) []any {
	out := make([]any, 0, len(results))
	for i, r := range results {
		c := map[string]any{
			"citation_id": "web-" + strconv.Itoa(i+1),
			"url":         r.URL,
			"source_url":  r.URL,
			"title":       r.Title,
			"snippet":     snippet(r.Content),
			"score":       r.Score,
			"source":      "web",
		}
		if r.PublishedDate != "" {
			c["published_date"] = r.PublishedDate
		}
		out = append(out, c)
	}
	return out
}

func snippet(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= snippetChars {
		return s
	}
	return string(r[:snippetChars]) + "…"
}
