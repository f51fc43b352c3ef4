package server

import (
	"context"
	"fmt"
	"net/http"
	"path"
	"strings"

	"github.com/gin-gonic/gin"
)

// DefaultLocalOrigins are the browser origins allowed when the server has no
// API keys and no configured origins: pages served from this machine (a
// Vite dev server, agent-chat-ui on :3000) on any port.
var DefaultLocalOrigins = []string{
	"http://localhost", "http://localhost:*",
	"http://127.0.0.1", "http://127.0.0.1:*",
	"http://[::1]", "http://[::1]:*",
}

// corsExposed are the response headers a browser page may read: the SDK
// reads the run's location and the pagination cursor.
const corsExposed = "Content-Location, Location, X-Pagination-Next, X-Pagination-Total, Retry-After"

const corsMethods = "GET, POST, PUT, PATCH, DELETE, OPTIONS"

// corsDefaultHeaders are allowed when a preflight names none.
const corsDefaultHeaders = "Authorization, Content-Type, X-Api-Key, Last-Event-ID, Accept"

// corsPolicy decides which browser origins may call the API.
type corsPolicy struct {
	anyOrigin bool
	patterns  []string
}

// newCORSPolicy parses origins: "*" (any origin), an exact origin
// ("https://app.example.com") or a pattern where * stands for any run of
// characters without '/' ("http://localhost:*", "https://*.example.com").
func newCORSPolicy(origins []string) (*corsPolicy, error) {
	p := &corsPolicy{}
	for _, o := range origins {
		o = strings.TrimRight(strings.TrimSpace(o), "/")
		switch {
		case o == "":
			continue
		case o == "*":
			p.anyOrigin = true
			continue
		case !strings.HasPrefix(o, "http://") && !strings.HasPrefix(o, "https://"):
			return nil, fmt.Errorf("CORS origin %q must be *, or start with http:// or https://", o)
		}
		pat := strings.NewReplacer("[", `\[`, "]", `\]`, "?", `\?`).Replace(strings.ToLower(o))
		if _, err := path.Match(pat, ""); err != nil {
			return nil, fmt.Errorf("CORS origin %q: %w", o, err)
		}
		p.patterns = append(p.patterns, pat)
	}
	return p, nil
}

func (p *corsPolicy) allows(origin string) bool {
	if p.anyOrigin {
		return true
	}
	origin = strings.ToLower(origin)
	for _, pat := range p.patterns {
		if ok, _ := path.Match(pat, origin); ok {
			return true
		}
	}
	return false
}

// cors answers preflight requests before authentication (a browser sends
// them without credentials) and adds the CORS headers to responses for
// allowed origins.
func (s *Server) cors() gin.HandlerFunc {
	return func(c *gin.Context) {
		origin := c.GetHeader("Origin")
		if origin == "" {
			c.Next()
			return
		}
		preflight := c.Request.Method == http.MethodOptions && c.GetHeader("Access-Control-Request-Method") != ""
		h := c.Writer.Header()
		h.Add("Vary", "Origin")
		if !s.corsPolicy.allows(origin) {
			if preflight {
				s.fail(c, errorf(http.StatusForbidden, "cors_forbidden", "origin %s is not allowed; add it with serve --cors-origin or $GRAPHCTL_CORS_ORIGINS", origin))
				return
			}
			c.Next()
			return
		}
		if s.corsPolicy.anyOrigin {
			h.Set("Access-Control-Allow-Origin", "*")
		} else {
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Credentials", "true")
		}
		if !preflight {
			h.Set("Access-Control-Expose-Headers", corsExposed)
			c.Next()
			return
		}
		h.Add("Vary", "Access-Control-Request-Method")
		h.Add("Vary", "Access-Control-Request-Headers")
		h.Set("Access-Control-Allow-Methods", corsMethods)
		if req := c.GetHeader("Access-Control-Request-Headers"); req != "" {
			h.Set("Access-Control-Allow-Headers", req)
		} else {
			h.Set("Access-Control-Allow-Headers", corsDefaultHeaders)
		}
		h.Set("Access-Control-Max-Age", "600")
		c.AbortWithStatus(http.StatusNoContent)
	}
}

// internalKey marks requests the server makes to itself (scheduled cron
// runs); they pass authentication and rate limits.
type internalKey struct{}

func withInternal(ctx context.Context) context.Context {
	return context.WithValue(ctx, internalKey{}, true)
}

func isInternal(c *gin.Context) bool {
	return c.Request.Context().Value(internalKey{}) != nil
}
