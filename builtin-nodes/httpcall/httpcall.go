// Package httpcall provides the `http` node type: it calls an ordinary HTTP
// API with a method, a URL, query parameters, headers and a body built from
// state, and writes the JSON response (or a part of it, picked with a JSON
// pointer) to a state field. Secrets in headers come only from the
// environment. Transient failures (connection errors, timeouts, 408, 429 and
// 5xx answers) are retried with jittered exponential backoff that honours
// Retry-After; what still fails is a node error, so the thread stays
// resumable at its last checkpoint.
package httpcall

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/graphctl/graphctl/builtin-nodes/internal/check"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
)

// Event types the node emits.
const (
	// EventRetry is emitted before a retry, with the attempt, the reason and the wait.
	EventRetry = "http_retry"
	// EventResult is emitted after the call, with method, URL, status and duration.
	EventResult = "http_result"
)

// Error codes of the node's failures, for retry and catch policies.
const (
	CodeStatus      = "http_status"      // the server answered 4xx (except 408 and 429)
	CodeUnavailable = "http_unavailable" // transient failures outlasted the retries
	CodeResponse    = "http_response"    // the response is too large, not JSON, or lacks the picked part
	CodeRequest     = "http_request"     // the request could not be built (bad URL, body, unset secret)
)

// ErrClosed is what a node's run returns after the node was closed (its
// engine closed).
var ErrClosed = errors.New("the node is closed")

func init() {
	node.MustRegister(node.Type{
		Name:        "http",
		Description: "Calls an HTTP API (method, URL, query, headers, body from state) and writes the JSON response, or the part a JSON pointer picks, to a field.",
		Config: `{
	method?: *"GET" | "POST" | "PUT" | "PATCH" | "DELETE"
	url: string
	query?: {[string]: string}
	headers?: {[string]: string | {env: string}}
	bearer_token?: {env: string}
	body?: string
	json_body?: {[string]: string}
	output: string
	pick?: string
	status_output?: string
	timeout?: *"30s" | string
	max_response_bytes?: *1048576 | int & >0
	retry?: {
		max_attempts?: *3 | int & >=1
		initial_interval?: *"500ms" | string
		max_interval?: *"10s" | string
		max_retry_after?: *"60s" | string
	}
}`,
		New: newHTTPNode,
	})
}

// secretHeaders must not have a value written in the graph file.
var secretHeaders = map[string]bool{"authorization": true, "proxy-authorization": true, "x-api-key": true, "api-key": true, "cookie": true}

type header struct {
	name string
	tmpl node.Template
	env  string
}

type retryPolicy struct {
	attempts                 int
	initial, max, retryAfter time.Duration
}

type httpNode struct {
	name      string
	method    string
	url       node.Template
	query     []namedTemplate
	headers   []header
	bearerEnv string
	body      node.Template
	jsonBody  []namedExpr
	output    string
	pick      string
	status    string
	timeout   time.Duration
	maxBytes  int64
	retry     retryPolicy
	jitter    func() float64
	// transport is the node's own connection pool, released by Close;
	// client sends through it.
	transport *http.Transport
	client    *http.Client
	closed    atomic.Bool
}

type namedTemplate struct {
	name string
	tmpl node.Template
}

type namedExpr struct {
	name string
	expr node.Expr
}

type config struct {
	Method      string            `json:"method"`
	URL         string            `json:"url"`
	Query       map[string]string `json:"query"`
	Headers     map[string]any    `json:"headers"`
	BearerToken map[string]string `json:"bearer_token"`
	Body        *string           `json:"body"`
	JSONBody    map[string]string `json:"json_body"`
	Output      string            `json:"output"`
	Pick        string            `json:"pick"`
	Status      string            `json:"status_output"`
	Timeout     string            `json:"timeout"`
	MaxBytes    int64             `json:"max_response_bytes"`
	Retry       struct {
		MaxAttempts     int    `json:"max_attempts"`
		InitialInterval string `json:"initial_interval"`
		MaxInterval     string `json:"max_interval"`
		MaxRetryAfter   string `json:"max_retry_after"`
	} `json:"retry"`
}

func newHTTPNode(b node.Builder) (node.Node, error) {
	var cfg config
	if err := b.Decode(&cfg); err != nil {
		return nil, err
	}
	n := &httpNode{name: b.NodeName(), method: cfg.Method, output: cfg.Output, status: cfg.Status,
		maxBytes: cfg.MaxBytes, jitter: rand.Float64}
	if n.method == "" {
		n.method = http.MethodGet
	}
	if n.maxBytes == 0 {
		n.maxBytes = 1 << 20
	}
	n.url = b.Template("url", cfg.URL)
	for _, k := range sortedKeys(cfg.Query) {
		n.query = append(n.query, namedTemplate{k, b.Template("query."+k, cfg.Query[k])})
	}
	for _, k := range sortedKeys(cfg.Headers) {
		h := header{name: k}
		switch v := cfg.Headers[k].(type) {
		case string:
			if secretHeaders[strings.ToLower(k)] {
				b.Errorf("headers."+k, "inline-secret", "header %q carries a secret: take it from the environment with {env: \"NAME\"} (or use bearer_token), never write it in the graph file", k)
				continue
			}
			h.tmpl = b.Template("headers."+k, v)
		case map[string]any:
			h.env, _ = v["env"].(string)
		}
		n.headers = append(n.headers, h)
	}
	n.bearerEnv = cfg.BearerToken["env"]
	if cfg.Body != nil && len(cfg.JSONBody) > 0 {
		b.Errorf("json_body", "invalid-config", "node %q sets both body and json_body; choose one", n.name)
	}
	if cfg.Body != nil {
		n.body = b.Template("body", *cfg.Body)
	}
	for _, k := range sortedKeys(cfg.JSONBody) {
		n.jsonBody = append(n.jsonBody, namedExpr{k, b.Expr("json_body."+k, cfg.JSONBody[k], "")})
	}
	if len(n.jsonBody) > 0 || cfg.Body != nil {
		if n.method == http.MethodGet {
			b.Errorf("method", "invalid-config", "node %q sends a body with GET; use POST, PUT or PATCH", n.name)
		}
	}
	check.Field(b, "output", cfg.Output)
	if cfg.Status != "" {
		if f := check.Field(b, "status_output", cfg.Status); f != nil && f.Type.Kind != graph.Int && f.Type.Kind != graph.Any {
			b.Errorf("status_output", "invalid-config", "status_output %q must be an int field, not %s", cfg.Status, f.Type)
		}
	}
	if cfg.Pick != "" && !strings.HasPrefix(cfg.Pick, "/") {
		b.Errorf("pick", "invalid-config", "pick %q is not a JSON pointer: it starts with / (e.g. \"/data/0/name\")", cfg.Pick)
	}
	n.pick = cfg.Pick
	n.timeout = duration(b, "timeout", cfg.Timeout, 30*time.Second)
	n.retry = retryPolicy{
		attempts:   max(cfg.Retry.MaxAttempts, 1),
		initial:    duration(b, "retry.initial_interval", cfg.Retry.InitialInterval, 500*time.Millisecond),
		max:        duration(b, "retry.max_interval", cfg.Retry.MaxInterval, 10*time.Second),
		retryAfter: duration(b, "retry.max_retry_after", cfg.Retry.MaxRetryAfter, time.Minute),
	}
	if cfg.Retry.MaxAttempts == 0 {
		n.retry.attempts = 3
	}
	if b.Failed() {
		return nil, nil
	}
	n.transport = newTransport()
	n.client = &http.Client{Transport: n.transport}
	return n, nil
}

// newTransport returns a connection pool of the node's own, configured as
// net/http's default one (proxy from the environment, keep-alives, timeouts).
func newTransport() *http.Transport {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		return t.Clone()
	}
	return &http.Transport{Proxy: http.ProxyFromEnvironment}
}

// Close implements node.Closer: it closes the node's idle connections; a run
// after Close fails.
func (n *httpNode) Close(context.Context) error {
	n.closed.Store(true)
	n.transport.CloseIdleConnections()
	return nil
}

func duration(b node.Builder, path, s string, def time.Duration) time.Duration {
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		b.Errorf(path, "invalid-config", "%s %q is not a positive duration such as \"500ms\" or \"30s\"", path, s)
		return def
	}
	return d
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// request is a built request, sent once per attempt.
type request struct {
	method, url string
	header      http.Header
	body        []byte
}

func (n *httpNode) build(in *node.Input) (*request, error) {
	raw, err := n.url.Render(in.Scope)
	if err != nil {
		return nil, node.Errorf(CodeRequest, "url: %w", err)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, node.Errorf(CodeRequest, "url %q is not an absolute http(s) URL", raw)
	}
	q := u.Query()
	for _, p := range n.query {
		v, err := p.tmpl.Render(in.Scope)
		if err != nil {
			return nil, node.Errorf(CodeRequest, "query %s: %w", p.name, err)
		}
		q.Set(p.name, v)
	}
	u.RawQuery = q.Encode()
	r := &request{method: n.method, url: u.String(), header: http.Header{}}
	r.header.Set("Accept", "application/json")
	for _, h := range n.headers {
		var v string
		if h.env != "" {
			var ok bool
			if v, ok = os.LookupEnv(h.env); !ok || v == "" {
				return nil, node.Errorf(CodeRequest, "header %s: environment variable %s is not set", h.name, h.env)
			}
		} else if v, err = h.tmpl.Render(in.Scope); err != nil {
			return nil, node.Errorf(CodeRequest, "header %s: %w", h.name, err)
		}
		r.header.Set(h.name, v)
	}
	if n.bearerEnv != "" {
		tok := os.Getenv(n.bearerEnv)
		if tok == "" {
			return nil, node.Errorf(CodeRequest, "bearer_token: environment variable %s is not set", n.bearerEnv)
		}
		r.header.Set("Authorization", "Bearer "+tok)
	}
	switch {
	case n.body != nil:
		s, err := n.body.Render(in.Scope)
		if err != nil {
			return nil, node.Errorf(CodeRequest, "body: %w", err)
		}
		r.body = []byte(s)
		if r.header.Get("Content-Type") == "" {
			r.header.Set("Content-Type", "text/plain; charset=utf-8")
		}
	case len(n.jsonBody) > 0:
		obj := make(map[string]any, len(n.jsonBody))
		for _, f := range n.jsonBody {
			v, err := f.expr.Eval(in.Scope)
			if err != nil {
				return nil, node.Errorf(CodeRequest, "json_body.%s: %w", f.name, err)
			}
			obj[f.name] = v
		}
		if r.body, err = json.Marshal(obj); err != nil {
			return nil, node.Errorf(CodeRequest, "json_body: %w", err)
		}
		r.header.Set("Content-Type", "application/json")
	}
	return r, nil
}

// Run implements node.Node.
func (n *httpNode) Run(ctx context.Context, in *node.Input) (node.Update, error) {
	if n.closed.Load() {
		return nil, fmt.Errorf("http node %q: %w", n.name, ErrClosed)
	}
	req, err := n.build(in)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	var status int
	var body []byte
	for attempt := 1; ; attempt++ {
		var wait time.Duration
		var reason string
		status, body, wait, reason, err = n.try(ctx, req)
		if err == nil || reason == "" || attempt >= n.retry.attempts || ctx.Err() != nil {
			break
		}
		if wait == 0 {
			wait = n.backoff(attempt)
		}
		emit(in, EventRetry, map[string]any{"attempt": attempt + 1, "max_attempts": n.retry.attempts, "reason": reason, "wait_ms": wait.Milliseconds(), "url": req.url})
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	emit(in, EventResult, map[string]any{"method": req.method, "url": req.url, "status": status, "duration_ms": time.Since(start).Milliseconds()})
	if err != nil {
		return nil, err
	}
	value, err := n.decode(body)
	if err != nil {
		return nil, err
	}
	up := node.Update{n.output: value}
	if n.status != "" {
		up[n.status] = status
	}
	return up, nil
}

func emit(in *node.Input, typ string, payload map[string]any) {
	if in.Emit != nil {
		in.Emit(event.Event{Type: typ, Payload: payload})
	}
}

// try sends the request once. A transient failure comes back with a reason
// (and the server's Retry-After, bounded, as wait).
func (n *httpNode) try(ctx context.Context, r *request) (status int, body []byte, wait time.Duration, reason string, err error) {
	ctx, cancel := context.WithTimeout(ctx, n.timeout)
	defer cancel()
	var rd io.Reader
	if r.body != nil {
		rd = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, r.url, rd)
	if err != nil {
		return 0, nil, 0, "", node.Errorf(CodeRequest, "%s %s: %w", r.method, r.url, err)
	}
	req.Header = r.header.Clone()
	resp, err := n.client.Do(req)
	if err != nil {
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled) {
			return 0, nil, 0, "", err
		}
		return 0, nil, 0, "connection: " + err.Error(), node.Retryable(CodeUnavailable, fmt.Errorf("%s %s: %w", r.method, r.url, err))
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(io.LimitReader(resp.Body, n.maxBytes+1))
	if err != nil {
		return resp.StatusCode, nil, 0, "read: " + err.Error(), node.Retryable(CodeUnavailable, fmt.Errorf("%s %s: read response: %w", r.method, r.url, err))
	}
	switch s := resp.StatusCode; {
	case s == http.StatusTooManyRequests || s == http.StatusRequestTimeout || s >= 500:
		reason = fmt.Sprintf("status %d", s)
		return s, nil, n.retryAfter(resp.Header.Get("Retry-After")), reason,
			node.Retryable(CodeUnavailable, fmt.Errorf("%s %s: %s: %s", r.method, r.url, resp.Status, excerpt(body)))
	case s >= 400:
		return s, nil, 0, "", node.Errorf(CodeStatus, "%s %s: %s: %s", r.method, r.url, resp.Status, excerpt(body))
	}
	if int64(len(body)) > n.maxBytes {
		return resp.StatusCode, nil, 0, "", node.Errorf(CodeResponse, "%s %s: the response is larger than max_response_bytes (%d)", r.method, r.url, n.maxBytes)
	}
	return resp.StatusCode, body, 0, "", nil
}

// retryAfter reads a Retry-After header (seconds or an HTTP date), bounded by
// the policy's max_retry_after; 0 when absent or unreadable.
func (n *httpNode) retryAfter(h string) time.Duration {
	if h == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.Atoi(strings.TrimSpace(h)); err == nil {
		d = time.Duration(secs) * time.Second
	} else if t, err := http.ParseTime(h); err == nil {
		d = time.Until(t)
	}
	if d <= 0 {
		return 0
	}
	return min(d, n.retry.retryAfter)
}

// backoff is the wait before retry number attempt: exponential from the
// initial interval, capped, with full jitter in its upper half.
func (n *httpNode) backoff(attempt int) time.Duration {
	d := n.retry.initial << (attempt - 1)
	if d <= 0 || d > n.retry.max {
		d = n.retry.max
	}
	return d/2 + time.Duration(n.jitter()*float64(d/2))
}

// decode parses the response as JSON (an empty body is null) and picks the
// part the pointer names.
func (n *httpNode) decode(body []byte) (any, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		if n.pick != "" {
			return nil, node.Errorf(CodeResponse, "the response is empty; pick %q finds nothing", n.pick)
		}
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, node.Errorf(CodeResponse, "the response is not JSON (%v): %s", err, excerpt(body))
	}
	if n.pick == "" {
		return v, nil
	}
	got, err := pointer(v, n.pick)
	if err != nil {
		return nil, node.Errorf(CodeResponse, "pick %s: %w", n.pick, err)
	}
	return got, nil
}

// pointer resolves an RFC 6901 JSON pointer.
func pointer(v any, ptr string) (any, error) {
	for _, tok := range strings.Split(ptr, "/")[1:] {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			next, ok := x[tok]
			if !ok {
				return nil, fmt.Errorf("no key %q", tok)
			}
			v = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, fmt.Errorf("no index %q in a list of %d", tok, len(x))
			}
			v = x[i]
		default:
			return nil, fmt.Errorf("%q: cannot index into %T", tok, v)
		}
	}
	return v, nil
}

// excerpt is the start of a response body for an error message, cut at a
// rune boundary.
func excerpt(b []byte) string {
	const limit = 200
	s := strings.TrimSpace(string(b))
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
