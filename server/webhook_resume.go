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
// button, a reply). Like RunOn, the run goes through the run manager.
func (s *Server) ResumeOn(ctx context.Context, assistant, thread string, resume *engine.Resume, sink event.Sink) (*engine.Result, error) {
	if resume == nil {
		return nil, errors.New("resume: no value given")
	}
	if resume.Values != nil {
		return nil, errors.New("resume: answer one interrupt at a time (Value and InterruptID)")
	}
	cmd := map[string]any{"resume": resume.Value}
	if resume.InterruptID != "" {
		cmd["interrupt_id"] = resume.InterruptID
	}
	return s.runAttached(ctx, assistant, thread, map[string]any{"command": cmd}, sink)
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
	return taskInterrupts(snap), nil
}
