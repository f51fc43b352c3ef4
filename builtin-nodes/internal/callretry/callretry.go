// Package callretry retries the model and tool calls nodes make when they
// fail for a transient reason: HTTP 429 and 5xx answers, a connection reset
// or refused, a timeout. Waits grow exponentially with jitter; a server's
// Retry-After (or OpenAI's retry-after-ms) is honoured up to a bound. Each
// retry is a "retry" event of the calling node, {node, call, attempt, error,
// status?, wait_ms, retry_after_ms?}.
//
// The policy comes from the node's call context (node.CallFrom): the node's
// call_retry, else the graph's defaults.call_retry, else Default. Transport
// retries at the HTTP level, before any of a response is read, so a
// streamed reply is never retried half-way; Do retries any other call.
package callretry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
)

// EventType is the type of the event emitted before each retry.
const EventType = "retry"

// Policy is a call retry policy with every setting filled in.
type Policy struct {
	MaxAttempts   int
	Initial       time.Duration
	Backoff       float64
	MaxInterval   time.Duration
	Jitter        bool
	MaxRetryAfter time.Duration
}

// Default is the policy of a call whose node and graph set none: 3
// attempts, 500ms then 1s apart (jittered), Retry-After honoured up to 60s.
var Default = Policy{MaxAttempts: 3, Initial: 500 * time.Millisecond, Backoff: 2, MaxInterval: 8 * time.Second, Jitter: true, MaxRetryAfter: time.Minute}

// FromGraph fills a declared policy's unset settings from Default. A
// declared policy without jitter has none (jitter: false in the file and
// an absent key read the same); nil is Default.
func FromGraph(p *graph.RetryPolicy) Policy {
	if p == nil {
		return Default
	}
	out := Policy{MaxAttempts: p.MaxAttempts, Initial: p.InitialInterval, Backoff: p.Backoff,
		MaxInterval: p.MaxInterval, Jitter: p.Jitter, MaxRetryAfter: p.MaxRetryAfter}
	if out.MaxAttempts <= 0 {
		out.MaxAttempts = Default.MaxAttempts
	}
	if out.Initial <= 0 {
		out.Initial = Default.Initial
	}
	if out.Backoff < 1 {
		out.Backoff = Default.Backoff
	}
	if out.MaxInterval <= 0 {
		out.MaxInterval = max(Default.MaxInterval, out.Initial)
	}
	if out.MaxRetryAfter <= 0 {
		out.MaxRetryAfter = Default.MaxRetryAfter
	}
	return out
}

// For returns the policy and the call context of the node a call is made for.
func For(ctx context.Context) (Policy, node.CallContext) {
	cc, _ := node.CallFrom(ctx)
	if cc.Emit == nil {
		cc.Emit = event.Discard
	}
	return FromGraph(cc.Retry), cc
}

// Delay is the wait before retry number attempt (1 after the first failure):
// the server's Retry-After when it gave one, bounded by MaxRetryAfter, else
// the exponential backoff, bounded by MaxInterval, jittered by ±50%.
func (p Policy) Delay(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, p.MaxRetryAfter)
	}
	wait := float64(p.Initial)
	for i := 1; i < attempt; i++ {
		wait *= p.Backoff
	}
	wait = min(wait, float64(p.MaxInterval))
	if p.Jitter {
		wait *= 0.5 + rand.Float64()
	}
	return time.Duration(wait)
}

// Failure is why a call attempt failed, as a retry decision needs it.
type Failure struct {
	// Transient says whether trying again may succeed.
	Transient bool
	// Status is the HTTP status, 0 for a transport error.
	Status int
	// RetryAfter is how long the server asked the client to wait, or 0.
	RetryAfter time.Duration
	// Reason describes the failure for the retry event.
	Reason string
}

// Do calls fn until it succeeds, fails for a reason classify does not call
// transient, or the policy's attempts are used up; it waits between tries
// and emits a retry event before each. call names what is called ("model",
// "tool").
func Do(ctx context.Context, call string, fn func() error, classify func(error) Failure) error {
	p, cc := For(ctx)
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil {
			return nil
		}
		f := classify(err)
		if !f.Transient || attempt >= p.MaxAttempts || ctx.Err() != nil {
			return err
		}
		if werr := wait(ctx, p, cc, call, attempt, f); werr != nil {
			return fmt.Errorf("%w; retry canceled after attempt %d: %w", err, attempt, werr)
		}
	}
}

// wait emits the retry event and sleeps before the next attempt.
func wait(ctx context.Context, p Policy, cc node.CallContext, call string, attempt int, f Failure) error {
	d := p.Delay(attempt, f.RetryAfter)
	payload := map[string]any{"node": cc.Node, "call": call, "attempt": attempt, "error": f.Reason, "wait_ms": d.Milliseconds()}
	if f.Status != 0 {
		payload["status"] = f.Status
	}
	if f.RetryAfter > 0 {
		payload["retry_after_ms"] = f.RetryAfter.Milliseconds()
	}
	cc.Emit(event.Event{Type: EventType, Payload: payload})
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TransientError classifies a transport error: a timeout, a connection
// reset or aborted, or a connection closed before the answer. Cancellation
// is never transient, nor is a refused connection (nothing listens there: a
// wrong address fails at once rather than after every retry).
func TransientError(err error) Failure {
	if err == nil || errors.Is(err, context.Canceled) {
		return Failure{Reason: fmt.Sprint(err)}
	}
	f := Failure{Reason: err.Error()}
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		// The call's own deadline (a node timeout) is spent: no retry.
	case errors.As(err, &ne) && ne.Timeout(),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		f.Transient = true
	}
	return f
}

// TransientStatus says whether an HTTP status is worth retrying: 408, 429
// and 5xx other than 501 and 505.
func TransientStatus(code int) bool {
	switch {
	case code == http.StatusRequestTimeout, code == http.StatusTooManyRequests:
		return true
	case code == http.StatusNotImplemented, code == http.StatusHTTPVersionNotSupported:
		return false
	}
	return code >= 500 && code <= 599
}

// RetryAfter reads how long a response asks the client to wait: OpenAI's
// retry-after-ms, else Retry-After in seconds or as an HTTP date.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if ms := h.Get("Retry-After-Ms"); ms != "" {
		if v, err := strconv.ParseFloat(ms, 64); err == nil && v > 0 {
			return time.Duration(v * float64(time.Millisecond))
		}
	}
	ra := h.Get("Retry-After")
	if ra == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(ra, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(secs * float64(time.Second))
	}
	if at, err := http.ParseTime(ra); err == nil && at.After(now) {
		return at.Sub(now)
	}
	return 0
}

// Transport is an http.RoundTripper that retries a request on a transient
// failure (per TransientStatus and TransientError) with the policy of the
// node the request's context belongs to. A request whose body cannot be
// replayed is tried once.
type Transport struct {
	// Base makes the requests; nil is http.DefaultTransport.
	Base http.RoundTripper
	// Call names what is called in retry events ("model", "tool").
	Call string
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	ctx := req.Context()
	p, cc := For(ctx)
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	for attempt := 1; ; attempt++ {
		r := req
		if attempt > 1 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, fmt.Errorf("retry %s: replay the request body: %w", req.URL.Redacted(), err)
			}
			r = req.Clone(ctx)
			r.Body = body
		}
		resp, err := base.RoundTrip(r)
		f := classifyResponse(resp, err)
		if !f.Transient || !replayable || attempt >= p.MaxAttempts || ctx.Err() != nil {
			return resp, err
		}
		if resp != nil {
			// Read a little of the error body so the connection can be reused.
			_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
			resp.Body.Close()
		}
		if werr := wait(ctx, p, cc, t.Call, attempt, f); werr != nil {
			return nil, fmt.Errorf("%s (attempt %d); retry canceled: %w", f.Reason, attempt, werr)
		}
	}
}

func classifyResponse(resp *http.Response, err error) Failure {
	if err != nil {
		return TransientError(err)
	}
	if !TransientStatus(resp.StatusCode) {
		return Failure{Status: resp.StatusCode}
	}
	return Failure{Transient: true, Status: resp.StatusCode, RetryAfter: RetryAfter(resp.Header, time.Now()),
		Reason: fmt.Sprintf("HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))}
}

// Client returns an HTTP client whose requests are retried by a Transport
// over base (nil: http.DefaultTransport).
func Client(call string, base http.RoundTripper) *http.Client {
	return &http.Client{Transport: &Transport{Base: base, Call: call}}
}
