package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/graphctl/graphctl/server/runs"
)

// This file holds the run endpoints that act on several runs or on a run's
// record: delete, batch creation, cancelling many, and the check that only
// an unfinished run can be cancelled.

// cancellable checks a cancel request: an unknown run is a 404, an unknown
// action a 400. ended reports a run that has already ended, which, as on
// LangGraph's Agent Server, a cancel leaves as it is.
func (s *Server) cancellable(ctx context.Context, thread, run, action string) (ended bool, err error) {
	if action != runs.Interrupt && action != runs.Rollback {
		return false, invalid("cancel action %q is not one of interrupt, rollback", action)
	}
	if a, ok := s.runs.Get(run); ok && a.Record().ThreadID == thread {
		return a.Ended(), nil
	}
	if _, err := s.runs.Load(ctx, thread, run); err != nil {
		return false, s.runErr(err)
	}
	return true, nil
}

func (s *Server) deleteRun(c *gin.Context) {
	thread, run := s.runParams(c)
	err := s.runs.Delete(c, thread, run)
	switch {
	case errors.Is(err, runs.ErrActive):
		s.fail(c, conflict("%v", err))
	case err != nil:
		s.fail(c, s.runErr(err))
	default:
		c.Status(http.StatusNoContent)
	}
}

type cancelManyBody struct {
	ThreadID string   `json:"thread_id"`
	RunIDs   []string `json:"run_ids"`
	Status   string   `json:"status"`
}

// cancelRuns cancels the runs named by thread_id and run_ids, or every run
// with a status (pending, running or all).
func (s *Server) cancelRuns(c *gin.Context) {
	var body cancelManyBody
	if err := bindJSON(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	action := c.DefaultQuery("action", runs.Interrupt)
	if action != runs.Interrupt && action != runs.Rollback {
		s.fail(c, invalid("action %q is not one of interrupt, rollback", action))
		return
	}
	type target struct{ thread, run string }
	var targets []target
	switch {
	case body.Status != "":
		if len(body.RunIDs) > 0 {
			s.fail(c, invalid("give either status or run_ids, not both"))
			return
		}
		switch body.Status {
		case "pending", "running", "all":
		default:
			s.fail(c, invalid("status %q is not one of pending, running, all", body.Status))
			return
		}
		for _, rec := range s.runs.Unfinished() {
			if body.ThreadID != "" && rec.ThreadID != body.ThreadID {
				continue
			}
			if body.Status == "all" || rec.Status == body.Status {
				targets = append(targets, target{rec.ThreadID, rec.RunID})
			}
		}
	case len(body.RunIDs) > 0:
		for _, id := range body.RunIDs {
			thread := body.ThreadID
			if thread == "" {
				a, ok := s.runs.Get(id)
				if !ok {
					s.fail(c, notFound("run %s not found among the server's unfinished runs; name its thread_id", id))
					return
				}
				thread = a.Record().ThreadID
			}
			if _, err := s.runs.Load(c, thread, id); err != nil {
				s.fail(c, s.runErr(err))
				return
			}
			targets = append(targets, target{thread, id})
		}
	default:
		s.fail(c, invalid("give run_ids (with thread_id) or a status (pending, running, all)"))
		return
	}
	for _, t := range targets {
		if a, ok := s.runs.Get(t.run); ok && a.Ended() {
			continue
		}
		if _, err := s.runs.Cancel(c, t.thread, t.run, action); err != nil && !errors.Is(err, runs.ErrNotFound) {
			s.fail(c, s.runErr(err))
			return
		}
	}
	c.Status(http.StatusNoContent)
}

// createBatch creates stateless background runs, one per payload, as POST
// /runs does; it stops at the first payload that is refused.
func (s *Server) createBatch(c *gin.Context) {
	var body []json.RawMessage
	if err := bindJSON(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	out := make([]json.RawMessage, 0, len(body))
	for i, p := range body {
		status, resp := s.internalRequest(c, http.MethodPost, "/runs", p)
		if status != http.StatusOK {
			var e struct {
				Detail string `json:"detail"`
			}
			json.Unmarshal(resp, &e)
			s.fail(c, errorf(status, "batch_item", "run %d of the batch (%d created before it): %s", i, len(out), e.Detail))
			return
		}
		out = append(out, resp)
	}
	c.JSON(http.StatusOK, out)
}

// internalRequest serves a request to the server itself, past
// authentication and rate limits, and returns the status and body.
func (s *Server) internalRequest(ctx context.Context, method, path string, body []byte) (int, []byte) {
	req, err := http.NewRequestWithContext(withInternal(context.WithoutCancel(ctx)), method, path, bytes.NewReader(body))
	if err != nil {
		return http.StatusInternalServerError, []byte(fmt.Sprintf(`{"detail": %q}`, err.Error()))
	}
	req.Header.Set("Content-Type", "application/json")
	req.RemoteAddr = "127.0.0.1:0"
	w := &recorder{header: http.Header{}, status: http.StatusOK}
	s.engine.ServeHTTP(w, req)
	return w.status, w.body.Bytes()
}

// recorder is the response writer of an internal request.
type recorder struct {
	header http.Header
	status int
	wrote  bool
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.body.Write(b)
}

func (r *recorder) Flush() {}
