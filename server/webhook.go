package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
)

// WebhookPrefix is the path every webhook is mounted under.
const WebhookPrefix = "/webhooks/"

// Webhook is an inbound integration mounted on the server, such as a chat
// platform's webhook. It is served at POST Path (under WebhookPrefix, e.g.
// "/webhooks/telegram") outside API-key
// authentication: the handler authenticates its caller itself (for example
// with a shared secret header), but body limits and rate limits apply.
type Webhook struct {
	Path    string
	Handler http.Handler
}

// RunOn runs a graph (by assistant id) on a thread, on the version the thread
// is pinned to or else the graph's current one, delivering the run's events to
// sink. It is what webhooks use to start runs. A thread has at most one active
// run: a second call while one runs fails with engine.ErrThreadBusy.
func (s *Server) RunOn(ctx context.Context, assistant, thread string, input map[string]any, sink event.Sink) (*engine.Result, error) {
	if err := validID("thread", thread); err != nil {
		return nil, err
	}
	ver, _, err := s.versionFor(ctx, thread, assistant)
	if err != nil {
		return nil, err
	}
	if ver.Name != assistant {
		return nil, fmt.Errorf("thread %q belongs to graph %q, not %q", thread, ver.Name, assistant)
	}
	// The thread is listed and readable over the API like any other.
	if _, err := s.ensureThread(ctx, thread, map[string]any{"graph_id": assistant}); err != nil {
		return nil, err
	}
	s.pinned.Store(thread, ver)
	res, err := ver.Engine.Run(ctx, engine.Request{ThreadID: thread, Input: input}, sink)
	if res != nil {
		s.metrics.RunEnded(res.Status)
	}
	return res, err
}

// mountWebhooks adds the configured webhooks to the router.
func (s *Server) mountWebhooks(r *gin.Engine) {
	for _, w := range s.cfg.Webhooks {
		r.POST(w.Path, gin.WrapH(w.Handler))
	}
}

// isWebhook reports whether a request is for a mounted webhook, which
// authenticates its caller itself.
func (s *Server) isWebhook(r *http.Request) bool {
	if r.Method != http.MethodPost {
		return false
	}
	for _, w := range s.cfg.Webhooks {
		if r.URL.Path == w.Path {
			return true
		}
	}
	return false
}

// checkWebhooks requires each webhook to have a handler and a distinct path
// under WebhookPrefix, so that none can shadow an API route.
func checkWebhooks(hooks []Webhook) error {
	seen := map[string]bool{}
	for _, w := range hooks {
		name := strings.TrimPrefix(w.Path, WebhookPrefix)
		switch {
		case w.Handler == nil:
			return fmt.Errorf("server: webhook %q has no handler", w.Path)
		case !strings.HasPrefix(w.Path, WebhookPrefix) || name == "" || strings.ContainsAny(name, "/:*"):
			return fmt.Errorf("server: webhook path %q must be %s<name>, with a name of letters, digits, - or _", w.Path, WebhookPrefix)
		case seen[w.Path]:
			return fmt.Errorf("server: two webhooks at %q", w.Path)
		}
		seen[w.Path] = true
	}
	return nil
}
