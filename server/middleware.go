package server

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
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
					c.AbortWithStatusJSON(http.StatusInternalServerError, gin.H{"error": gin.H{"code": "internal", "message": "internal server error"}})
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
		attrs := []any{"method", c.Request.Method, "path", c.Request.URL.Path, "status", c.Writer.Status(),
			"duration_ms", float64(time.Since(start).Microseconds()) / 1000}
		if v, ok := c.Get(ctxRunID); ok {
			attrs = append(attrs, "run_id", v)
		}
		if v, ok := c.Get(ctxThreadID); ok {
			attrs = append(attrs, "thread_id", v)
		}
		if c.Writer.Status() >= 500 {
			s.log.Error("request", attrs...)
		} else {
			s.log.Debug("request", attrs...)
		}
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
// limiting.
func (s *Server) authenticate() gin.HandlerFunc {
	return func(c *gin.Context) {
		key := ""
		if h := c.GetHeader("Authorization"); strings.HasPrefix(h, "Bearer ") {
			key = strings.TrimSpace(strings.TrimPrefix(h, "Bearer "))
		} else if h := c.GetHeader("X-Api-Key"); h != "" {
			key = strings.TrimSpace(h)
		}
		if len(s.cfg.APIKeys) > 0 && c.Request.URL.Path != "/ok" && !s.isWebhook(c.Request) {
			if !s.validKey(key) {
				c.Header("WWW-Authenticate", `Bearer realm="graphctl"`)
				s.fail(c, errorf(http.StatusUnauthorized, "unauthorized", "a valid API key is required (Authorization: Bearer KEY)"))
				return
			}
			c.Set(ctxClient, "key:"+key)
		} else {
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

// limitRate applies the per-client token bucket.
func (s *Server) limitRate() gin.HandlerFunc {
	return func(c *gin.Context) {
		client := c.GetString(ctxClient)
		if ok, wait := s.limiter.Allow(client); !ok {
			c.Header("Retry-After", fmt.Sprint(int(math.Ceil(wait.Seconds()))))
			s.fail(c, errorf(http.StatusTooManyRequests, "rate_limited", "rate limit of %g requests per second exceeded; retry in %s", s.cfg.RateLimit, wait.Round(time.Millisecond)))
			return
		}
		c.Next()
	}
}

// limitBody caps request bodies at the configured size.
func (s *Server) limitBody() gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.ContentLength > s.cfg.MaxBody {
			s.fail(c, errorf(http.StatusRequestEntityTooLarge, "body_too_large", "request body of %d bytes exceeds the limit of %d bytes", c.Request.ContentLength, s.cfg.MaxBody))
			return
		}
		if c.Request.Body != nil {
			c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, s.cfg.MaxBody)
		}
		c.Next()
	}
}

// bindJSON decodes a JSON body into v; an empty body leaves v as it is.
func bindJSON(c *gin.Context, v any) error {
	if c.Request.Body == nil || c.Request.ContentLength == 0 && c.Request.Header.Get("Transfer-Encoding") == "" {
		return nil
	}
	dec := jsonDecoder(c.Request.Body)
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errorf(http.StatusRequestEntityTooLarge, "body_too_large", "request body exceeds the limit of %d bytes", mbe.Limit)
		}
		if err.Error() == "EOF" {
			return nil
		}
		return badRequest("request body is not valid JSON for this endpoint: %v", err)
	}
	return nil
}
