package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
)

// A Channel is a chat integration (a bot) whose messages run one graph. The
// server wires it: Bind gets the channel's runs on its graph, each going
// through the run manager; the returned webhook, if any, is mounted at
// WebhookPrefix + Name; the returned loop, if any (long polling), starts with
// Start, once the runs a previous process left are back in line, and ends
// with Start's context.
type Channel struct {
	// Name names the channel in logs and in its webhook path.
	Name string
	// Graph is the assistant that answers the channel's messages.
	Graph string
	// Bind builds the channel over its runs.
	Bind func(ChannelRuns) (webhook http.Handler, loop func(ctx context.Context) error)
}

// ChannelRuns are a channel's runs on its graph; a run that ends in error is
// an error.
type ChannelRuns interface {
	// Run runs the graph on a thread with input, delivering its events to sink.
	Run(ctx context.Context, thread string, input map[string]any, sink event.Sink) error
	// Resume answers a pending interrupt of a thread and runs it on.
	Resume(ctx context.Context, thread, interruptID string, value any, sink event.Sink) error
	// Pending returns the interrupts a thread waits on.
	Pending(ctx context.Context, thread string) ([]checkpoint.Interrupt, error)
	// Value returns a field of a thread's latest state; nil when the thread
	// or the field does not exist.
	Value(ctx context.Context, thread, field string) (any, error)
}

// channelRuns are the ChannelRuns of one graph of a server.
type channelRuns struct {
	s     *Server
	graph string
}

func (c channelRuns) Run(ctx context.Context, thread string, input map[string]any, sink event.Sink) error {
	return runErr(c.s.RunOn(ctx, c.graph, thread, input, sink))
}

func (c channelRuns) Resume(ctx context.Context, thread, interruptID string, value any, sink event.Sink) error {
	return runErr(c.s.ResumeOn(ctx, c.graph, thread, &engine.Resume{InterruptID: interruptID, Value: value}, sink))
}

func (c channelRuns) Pending(ctx context.Context, thread string) ([]checkpoint.Interrupt, error) {
	return c.s.PendingInterrupts(ctx, thread)
}

func (c channelRuns) Value(ctx context.Context, thread, field string) (any, error) {
	snap, err := c.s.cp.Latest(ctx, thread)
	if errors.Is(err, checkpoint.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("thread %q: %w", thread, err)
	}
	raw, ok := snap.Values[field]
	if !ok {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("thread %q: field %s: %w", thread, field, err)
	}
	return v, nil
}

// runErr is a run's failure: the request's, or the run's own.
func runErr(res *engine.Result, err error) error {
	if err != nil {
		return err
	}
	if res.Status == engine.StatusError {
		return res.Err
	}
	return nil
}

// bindChannels binds the configured channels, adding their webhooks to the
// configured ones and keeping their loops for Start.
func (s *Server) bindChannels() error {
	for _, ch := range s.cfg.Channels {
		if ch.Bind == nil {
			return fmt.Errorf("server: channel %q has no Bind", ch.Name)
		}
		if _, ok := s.reg.Get(ch.Graph); !ok {
			return fmt.Errorf("server: channel %q answers with graph %q, which is not among the served graphs", ch.Name, ch.Graph)
		}
		hook, loop := ch.Bind(channelRuns{s: s, graph: ch.Graph})
		if hook != nil {
			s.cfg.Webhooks = append(s.cfg.Webhooks, Webhook{Path: WebhookPrefix + ch.Name, Handler: hook})
		}
		if loop != nil {
			s.loops = append(s.loops, namedLoop{name: ch.Name, run: loop})
		}
		s.log.Info("answering a chat channel", "channel", ch.Name, "graph", ch.Graph, "webhook", hook != nil, "polling", loop != nil)
	}
	return nil
}

type namedLoop struct {
	name string
	run  func(ctx context.Context) error
}

// startLoops starts the channels' loops; a loop that stops before ctx ends
// is logged.
func (s *Server) startLoops(ctx context.Context) {
	for _, l := range s.loops {
		s.cron.wg.Add(1)
		go func() {
			defer s.cron.wg.Done()
			if err := l.run(ctx); err != nil && ctx.Err() == nil {
				s.log.Error("chat channel stopped", "channel", l.name, "error", err.Error())
			}
		}()
	}
}
