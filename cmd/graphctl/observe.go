package main

import (
	"context"
	"fmt"
	"time"

	"github.com/graphctl/graphctl/runtime/audit"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/store"
	"github.com/graphctl/graphctl/runtime/telemetry"
)

// observers are what every engine of graphctl run and serve is observed by:
// the audit log (conversations, messages and node observations, in the
// data dir's store) and, when the OTEL_* environment asks for it,
// OpenTelemetry tracing.
type observers struct {
	list   []engine.Observer
	tracer *telemetry.Provider
}

// newObservers builds the observers; onError hears of audit records that
// could not be written.
func newObservers(ctx context.Context, st store.Store, onError func(error)) (*observers, error) {
	o := &observers{}
	if st != nil {
		o.list = append(o.list, &audit.Recorder{Store: st, OnError: onError})
	}
	tp, err := telemetry.FromEnv(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	if tp != nil {
		o.tracer = tp
		o.list = append(o.list, tp.Observer())
	}
	return o, nil
}

// close flushes the spans not exported yet.
func (o *observers) close() error {
	if o == nil || o.tracer == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := o.tracer.Shutdown(ctx); err != nil {
		return fmt.Errorf("flush traces: %w", err)
	}
	return nil
}
