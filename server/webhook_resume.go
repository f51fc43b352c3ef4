package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
)

// ResumeOn answers a pending interrupt of a thread of a graph (by assistant
// id) and runs the thread on, delivering the run's events to sink; what
// webhooks use when a person answers a question the graph asked (a tapped
// button, a reply). Like RunOn, a thread has at most one active run.
func (s *Server) ResumeOn(ctx context.Context, assistant, thread string, resume *engine.Resume, sink event.Sink) (*engine.Result, error) {
	if err := validID("thread", thread); err != nil {
		return nil, err
	}
	if resume == nil {
		return nil, errors.New("resume: no value given")
	}
	ver, _, err := s.versionFor(ctx, thread, assistant)
	if err != nil {
		return nil, err
	}
	if ver.Name != assistant {
		return nil, fmt.Errorf("thread %q belongs to graph %q, not %q", thread, ver.Name, assistant)
	}
	s.pinned.Store(thread, ver)
	res, err := ver.Engine.Run(ctx, engine.Request{ThreadID: thread, Resume: resume}, sink)
	if res != nil {
		s.metrics.RunEnded(res.Status)
	}
	return res, err
}

// PendingInterrupts returns the interrupts a thread waits on; none for a
// thread that does not exist yet.
func (s *Server) PendingInterrupts(ctx context.Context, thread string) ([]checkpoint.Interrupt, error) {
	snap, err := s.cp.Latest(ctx, thread)
	if errors.Is(err, checkpoint.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("thread %q: %w", thread, err)
	}
	return snap.Interrupts, nil
}
