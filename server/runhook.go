package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/server/runs"
)

// Run webhooks: a run request (or a cron) may name a webhook, a URL that the
// server POSTs the finished run to, as the Agent Server does: the run object
// with its final status, run_started_at, run_ended_at, webhook_sent_at, the
// thread's final values and, for a failed run, its error. A webhook that is
// a path ("/...") is a request to this server itself. A webhook is called
// by the replica that ran the run, once it has ended; a call that fails
// (no connection, or a 5xx answer) is tried again twice.

// runHookTimeout bounds one webhook call.
const runHookTimeout = 10 * time.Second

// runHookTries is how many times a failing webhook call is made.
const runHookTries = 3

// checkWebhook checks a run request's webhook: an http(s) URL with a host,
// or a path on this server.
func checkWebhook(v any) error {
	if v == nil {
		return nil
	}
	s, ok := v.(string)
	if !ok {
		return invalid("webhook must be a URL string, not %v", v)
	}
	if strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "//") {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return invalid("webhook %q must be an http or https URL, or a path on this server (/...)", s)
	}
	return nil
}

// runHooks calls the webhooks of finished runs.
type runHooks struct {
	client *http.Client
	// started holds when each run with a webhook started executing.
	started sync.Map // run id → time.Time
	wg      sync.WaitGroup
}

// webhookOf returns the webhook a run's request named, if any.
func webhookOf(rec *runs.Record) string {
	s, _ := rec.Kwargs["webhook"].(string)
	return s
}

// runStarted notes when a run with a webhook starts executing.
func (h *runHooks) runStarted(rec *runs.Record, now time.Time) {
	if webhookOf(rec) != "" {
		h.started.Store(rec.RunID, now)
	}
}

// runEnded calls the webhook of a finished run, if it names one, in the
// background.
func (s *Server) runEnded(rec runs.Record, res *engine.Result) {
	hook := webhookOf(&rec)
	if hook == "" {
		return
	}
	started := rec.CreatedAt
	if t, ok := s.hooks.started.LoadAndDelete(rec.RunID); ok {
		started = t.(time.Time)
	}
	s.hooks.wg.Add(1)
	go func() {
		defer s.hooks.wg.Done()
		s.callRunHook(hook, rec, res, started)
	}()
}

// callRunHook posts the finished run to hook.
func (s *Server) callRunHook(hook string, rec runs.Record, res *engine.Result, started time.Time) {
	payload := runObject(rec)
	payload["run_started_at"] = started.UTC().Format(time.RFC3339Nano)
	payload["run_ended_at"] = rec.UpdatedAt.UTC().Format(time.RFC3339Nano)
	payload["webhook_sent_at"] = time.Now().UTC().Format(time.RFC3339Nano)
	var err error
	if res != nil && res.State != nil {
		payload["values"], err = s.encodedValues(rec, res.State)
	}
	var body []byte
	if err == nil {
		body, err = json.Marshal(payload)
	}
	if err != nil {
		s.log.Error("run webhook: encode the run", "run_id", rec.RunID, "webhook", hook, "error", err)
		return
	}
	for try := 1; ; try++ {
		status, err := s.postRunHook(hook, body)
		if err == nil && status < 500 {
			if status >= 400 {
				s.log.Warn("run webhook refused the run", "run_id", rec.RunID, "webhook", hook, "status", status)
			}
			return
		}
		if err == nil {
			err = fmt.Errorf("status %d", status)
		}
		if try == runHookTries {
			s.log.Error("run webhook failed", "run_id", rec.RunID, "webhook", hook, "tries", try, "error", err)
			return
		}
		time.Sleep(time.Duration(try) * time.Second)
	}
}

// encodedValues encodes a run's final values as the thread's values are
// encoded for its graph.
func (s *Server) encodedValues(rec runs.Record, vals map[string]any) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), runHookTimeout)
	defer cancel()
	var enc []byte
	var err error
	if ver, _, verr := s.versionFor(ctx, rec.ThreadID, rec.AssistantID); verr == nil && ver != nil {
		enc, err = appendValues(nil, ver.Graph, vals)
	} else {
		enc, err = json.Marshal(vals)
	}
	if err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	return enc, nil
}

// postRunHook makes one webhook call and returns its status.
func (s *Server) postRunHook(hook string, body []byte) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), runHookTimeout)
	defer cancel()
	if strings.HasPrefix(hook, "/") {
		status, _ := s.internalRequest(ctx, http.MethodPost, hook, body)
		return status, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hook, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.hooks.client.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// wait waits for the webhook calls under way, until ctx ends; it reports
// whether they all ended.
func (h *runHooks) wait(ctx context.Context) bool {
	done := make(chan struct{})
	go func() {
		h.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}
