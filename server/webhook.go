package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/server/runs"
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

// RunOn runs a graph (by assistant id) on a thread with input, on the version
// the thread is pinned to or else the graph's current one, delivering the
// run's events to sink and returning when the run has ended. It is what
// webhooks and chat bots use to start runs. The run goes through the run
// manager like an API run: it has a run record, and it waits behind the
// thread's active run (multitask strategy enqueue), so an API run and a chat
// message on one thread take turns. When ctx ends first, the run is
// cancelled (its thread stays resumable).
func (s *Server) RunOn(ctx context.Context, assistant, thread string, input map[string]any, sink event.Sink) (*engine.Result, error) {
	if input == nil {
		input = map[string]any{}
	}
	return s.runAttached(ctx, assistant, thread, map[string]any{"input": input}, sink)
}

// runAttached submits a run on thread with the given run parameters
// (input or command) and waits for its end, delivering its events to sink.
func (s *Server) runAttached(ctx context.Context, assistant, thread string, kwargs map[string]any, sink event.Sink) (*engine.Result, error) {
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
	if in, ok := kwargs["input"].(map[string]any); ok {
		if _, err := convertInput(ver.Graph, in); err != nil {
			return nil, err
		}
	}
	s.pinned.Store(thread, ver)
	if _, err := s.ensureThread(ctx, thread, map[string]any{"graph_id": assistant}); err != nil {
		return nil, err
	}
	kwargs["assistant_id"] = assistant
	kwargs["multitask_strategy"] = runs.Enqueue
	rec := runs.Record{RunID: newID(), ThreadID: thread, AssistantID: assistant, Metadata: map[string]any{"source": "webhook"},
		MultitaskStrategy: runs.Enqueue, Kwargs: kwargs}
	a, err := s.runs.SubmitAttached(ctx, rec, runs.Attach{Observer: sink, Values: ctx})
	if err != nil {
		return nil, err
	}
	select {
	case <-a.Done():
	case <-ctx.Done():
		s.runs.Cancel(context.WithoutCancel(ctx), thread, rec.RunID, runs.Interrupt)
		<-a.Done()
	}
	res, err := a.Result()
	if res == nil && err == nil {
		r := a.Record()
		err = fmt.Errorf("run %s on thread %q ended %s before it started: %s", r.RunID, thread, r.Status, r.Error)
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

// observed adds the observer attached to the run of ctx (runs.Observer), if
// any, to sink.
func observed(ctx context.Context, sink event.Sink) event.Sink {
	obs := runs.Observer(ctx)
	if obs == nil {
		return sink
	}
	return func(ev event.Event) {
		sink(ev)
		obs(ev)
	}
}
