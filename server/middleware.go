package server

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
)

// recoverPanics turns a handler panic into a logged 500 JSON error.
func (s *Server) recoverPanics() gin.HandlerFunc {
	return func(c *gin.Context) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.Error("handler panicked", "method", c.Request.Method, "path", c.Request.URL.Path, "panic", fmt.Sprint(p))
				if !c.Writer.Written() {
					c.AbortWithStatusJSON(http.StatusInternalServerError, errorBody("internal", "internal server error"))
				} else {
					c.Abort()
				}
			}
		}()
		c.Next()
	}
}

// logRequests logs each request with its outcome.
func (s *Server) logRequests() gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		s.metrics.Request()
		c.Next()
		level := slog.LevelDebug
		if c.Writer.Status() >= 500 {
			level = slog.LevelError
		}
		if !s.log.Enabled(c.Request.Context(), level) {
			return
		}
		attrs := []any{"method", c.Request.Method, "path", c.Request.URL.Path, "status", c.Writer.Status(),
			"duration_ms", float64(time.Since(start).Microseconds()) / 1000}
		if v, ok := c.Get(ctxRunID); ok {
			attrs = append(attrs, "run_id", v)
		}
		if v, ok := c.Get(ctxThreadID); ok {
			attrs = append(attrs, "thread_id", v)
		}
		s.log.Log(c.Request.Context(), level, "request", attrs...)
	}
}

// Context keys of values logged with a request.
const (
	ctxRunID    = "graphctl.run_id"
	ctxThreadID = "graphctl.thread_id"
	ctxClient   = "graphctl.client"
)

// authenticate checks the bearer API key (or x-api-key, which the LangGraph
// SDK sends) when keys are configured, and records the client key for rate
// limiting. The scheme is matched without regard to case (RFC 9110). An
// address that keeps failing is refused for a while (429) before its keys
// are even looked at, so keys cannot be guessed at speed.
func (s *Server) authenticate() gin.HandlerFunc {
	return func(c *gin.Context) {
		key := ""
		if scheme, token, ok := strings.Cut(strings.TrimSpace(c.GetHeader("Authorization")), " "); ok && strings.EqualFold(scheme, "Bearer") {
			key = strings.TrimSpace(token)
		} else if h := c.GetHeader("X-Api-Key"); h != "" {
			key = strings.TrimSpace(h)
		}
		if len(s.cfg.APIKeys) > 0 && c.Request.URL.Path != "/ok" && !s.isWebhook(c.Request) && !isInternal(c) && !s.isStudioPage(c.Request) {
			addr := c.ClientIP()
			if wait := s.authFails.blocked(addr); wait > 0 {
				c.Header("Retry-After", fmt.Sprint(int(math.Ceil(wait.Seconds()))))
				s.fail(c, errorf(http.StatusTooManyRequests, "rate_limited", "too many requests with a wrong API key from this address; retry in %s", wait.Round(time.Second)))
				return
			}
			if !s.validKey(key) {
				s.authFails.fail(addr)
				c.Header("WWW-Authenticate", `Bearer realm="graphctl"`)
				s.fail(c, errorf(http.StatusUnauthorized, "unauthorized", "a valid API key is required (Authorization: Bearer KEY)"))
				return
			}
			if s.limitsRate() {
				c.Set(ctxClient, "key:"+key)
			}
		} else if s.limitsRate() {
			c.Set(ctxClient, "ip:"+c.ClientIP())
		}
		c.Next()
	}
}

func (s *Server) validKey(key string) bool {
	if key == "" {
		return false
	}
	ok := false
	for _, k := range s.cfg.APIKeys {
		if subtle.ConstantTimeCompare([]byte(k), []byte(key)) == 1 {
			ok = true
		}
	}
	return ok
}

// authFailures counts failed authentications per client address: after
// max failures within window, the address is refused until window has
// passed since the first of them.
type authFailures struct {
	max    int
	window time.Duration
	now    func() time.Time

	mu    sync.Mutex
	addrs map[string]*failWindow
}

type failWindow struct {
	start time.Time
	count int
}

func newAuthFailures(max int, window time.Duration) *authFailures {
	return &authFailures{max: max, window: window, now: time.Now, addrs: map[string]*failWindow{}}
}

// blocked returns how long addr is still refused (0 when it is not).
func (a *authFailures) blocked(addr string) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	w := a.addrs[addr]
	if w == nil {
		return 0
	}
	left := a.window - a.now().Sub(w.start)
	if left <= 0 {
		delete(a.addrs, addr)
		return 0
	}
	if w.count < a.max {
		return 0
	}
	return left
}

// fail records a failed authentication from addr.
func (a *authFailures) fail(addr string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	w := a.addrs[addr]
	if w == nil || now.Sub(w.start) >= a.window {
		if len(a.addrs) > 100000 {
			for k, v := range a.addrs {
				if now.Sub(v.start) >= a.window {
					delete(a.addrs, k)
				}
			}
		}
		w = &failWindow{start: now}
		a.addrs[addr] = w
	}
	w.count++
}

// limitsRate reports whether requests are rate limited: only then is a
// request's client key worked out.
func (s *Server) limitsRate() bool { return s.cfg.RateLimit > 0 }

// limitRate applies the per-client token bucket.
func (s *Server) limitRate() gin.HandlerFunc {
	return func(c *gin.Context) {
		if !s.limitsRate() || isInternal(c) {
			c.Next()
			return
		}
		client := c.GetString(ctxClient)
		if ok, wait := s.limiter.Allow(client); !ok {
			c.Header("Retry-After", fmt.Sprint(int(math.Ceil(wait.Seconds()))))
			s.fail(c, errorf(http.StatusTooManyRequests, "rate_limited", "rate limit of %g requests per second exceeded; retry in %s", s.cfg.RateLimit, wait.Round(time.Millisecond)))
			return
		}
		c.Next()
	}
}

// limitBody caps request bodies at the configured size and bounds how long
// a body may take to arrive: it must keep a minimum rate after a short grace
// period, so a client trickling bytes (slowloris) is cut off with 408
// instead of holding a connection and a handler.
func (s *Server) limitBody() gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.ContentLength > s.cfg.MaxBody {
			s.fail(c, errorf(http.StatusRequestEntityTooLarge, "body_too_large", "request body of %d bytes exceeds the limit of %d bytes", c.Request.ContentLength, s.cfg.MaxBody))
			return
		}
		if c.Request.Body != nil && c.Request.Body != http.NoBody {
			body := http.MaxBytesReader(c.Writer, c.Request.Body, s.cfg.MaxBody)
			if s.cfg.BodyTimeout > 0 {
				start := time.Now()
				db := &deadlineBody{ReadCloser: body, rc: *http.NewResponseController(c.Writer), start: start, grace: s.cfg.BodyTimeout}
				if db.rc.SetReadDeadline(start.Add(s.cfg.BodyTimeout)) == nil {
					body = db
				}
			}
			c.Request.Body = body
		}
		c.Next()
	}
}

// minBodyRate is the slowest average rate (bytes per second) at which a
// request body may arrive once the body timeout's grace period is over.
const minBodyRate = 16 << 10

// deadlineBody moves the connection's read deadline forward as a body
// arrives: start + grace + bytes read / minBodyRate. At the end of the body
// it clears the deadline; when the deadline passes, reads fail with
// errBodyTimeout.
type deadlineBody struct {
	io.ReadCloser
	rc    http.ResponseController
	start time.Time
	grace time.Duration
	n     int64
	done  bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	if b.done {
		return n, err
	}
	if err != nil {
		b.done = true
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			// The deadline stays passed: the server gives up the rest of
			// the body and closes the connection after the response.
			return n, bodyTimeoutError{grace: b.grace}
		}
		if errors.Is(err, io.EOF) {
			// The whole body is in: reading the connection (to notice a
			// client that goes away during a stream) has no deadline.
			b.rc.SetReadDeadline(time.Time{})
		}
		return n, err
	}
	if n > 0 {
		b.rc.SetReadDeadline(b.start.Add(b.grace + time.Duration(b.n)*time.Second/minBodyRate))
	}
	return n, err
}

// errBodyTimeout is the error a body read gets when the body arrived too
// slowly: a bodyTimeoutError is it.
var errBodyTimeout = errors.New("request body arrived too slowly")

// bodyTimeoutError is errBodyTimeout with the grace period the body had.
type bodyTimeoutError struct{ grace time.Duration }

func (e bodyTimeoutError) Error() string        { return errBodyTimeout.Error() }
func (e bodyTimeoutError) Is(target error) bool { return target == errBodyTimeout }

// bindJSON decodes a JSON body into v; an empty body leaves v as it is. A
// syntax error is a 400; a value of the wrong type a 422 naming the field.
func bindJSON(c *gin.Context, v any) error {
	if noBody(c) {
		return nil
	}
	return decodeBody(c.Request.Body, v)
}

// noBody reports whether a request has no body to decode.
func noBody(c *gin.Context) bool {
	return c.Request.Body == nil || c.Request.ContentLength == 0 && c.Request.Header.Get("Transfer-Encoding") == ""
}

// decodeBody decodes the JSON body read from r into v, as bindJSON.
func decodeBody(r io.Reader, v any) error {
	dec := jsonDecoder(r)
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errorf(http.StatusRequestEntityTooLarge, "body_too_large", "request body exceeds the limit of %d bytes", mbe.Limit)
		}
		if errors.Is(err, errBodyTimeout) {
			return errorf(http.StatusRequestTimeout, "body_timeout", "the request body arrived too slowly (less than %d bytes per second after %s)", minBodyRate, timeoutOf(err))
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		var pe *time.ParseError
		if errors.As(err, &pe) {
			return invalid("time %q is not an RFC 3339 time (e.g. 2030-01-01T00:00:00Z)", pe.Value)
		}
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			where := strings.TrimPrefix(ute.Field, "paging.")
			if where == "" {
				where = "the body"
			}
			return invalid("%s must be %s, not a JSON %s", where, jsonKind(ute.Type), ute.Value)
		}
		return badRequest("request body is not valid JSON for this endpoint: %v", err)
	}
	// One JSON value and nothing after it.
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return badRequest("request body has more after its JSON value")
	}
	return nil
}

// timeoutOf names the grace period of a body that arrived too slowly.
func timeoutOf(err error) string {
	var te bodyTimeoutError
	if errors.As(err, &te) {
		return te.grace.String()
	}
	return "the grace period"
}

// jsonKind names a Go type as a JSON type for an error message.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "a value of another type"
}
