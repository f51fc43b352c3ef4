package server

import (
	"encoding/json"
	"math"
	"strings"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/compile"
)

// checkRunNodes refuses (422, naming the field) what a run request names
// that the graph does not have — interrupt_before and interrupt_after nodes
// ("*" is every node) — and a recursion_limit that is not a positive
// integer, so that none of them is ignored silently.
func checkRunNodes(g *compile.Graph, body *runBody) error {
	for _, f := range []struct {
		name string
		v    any
	}{{"interrupt_before", body.InterruptBefore}, {"interrupt_after", body.InterruptAfter}} {
		names, err := stringList(f.name, f.v)
		if err != nil {
			return err
		}
		for _, n := range names {
			if _, ok := g.Nodes[n]; !ok && n != "*" {
				return invalid("%s names node %q, which graph %q does not have (nodes: %s; \"*\" is every node)", f.name, n, g.Spec.Name, strings.Join(g.NodeOrder, ", "))
			}
		}
	}
	for _, where := range []struct {
		path string
		m    map[string]any
	}{{"config.recursion_limit", body.Config}, {"config.configurable.recursion_limit", asMap(body.Config["configurable"])}} {
		v, ok := where.m["recursion_limit"]
		if !ok || v == nil {
			continue
		}
		var n float64
		switch x := v.(type) {
		case float64:
			n = x
		case json.Number:
			n, _ = x.Float64()
		default:
			return invalid("%s must be a positive integer, not %v", where.path, v)
		}
		if n < 1 || n != math.Trunc(n) || n > math.MaxInt32 {
			return invalid("%s must be a positive integer of at most %d, got %v", where.path, math.MaxInt32, v)
		}
	}
	return nil
}

// maxAfterSeconds is the longest delay after_seconds may ask for (about 31
// years), so that the start time stays a valid time.
const maxAfterSeconds = 1e9

// checkRunHints checks the types of a run request's hint options, its
// webhook and its after_seconds (a number of seconds, 0 to maxAfterSeconds).
func checkRunHints(body *runBody) error {
	if err := checkWebhook(body.Webhook); err != nil {
		return err
	}
	if _, err := afterSeconds(body); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    any
	}{{"checkpoint_during", body.CheckpointDuring}, {"stream_resumable", body.StreamResumable}} {
		if _, ok := f.v.(bool); f.v != nil && !ok {
			return invalid("%s must be a boolean, not %v", f.name, f.v)
		}
	}
	if _, err := stringList("feedback_keys", body.FeedbackKeys); err != nil {
		return err
	}
	if _, ok := body.Context.(map[string]any); body.Context != nil && !ok {
		return invalid("context must be an object, not %v", body.Context)
	}
	if _, ok := body.LangsmithTracer.(map[string]any); body.LangsmithTracer != nil && !ok {
		return invalid("langsmith_tracer must be an object, not %v", body.LangsmithTracer)
	}
	return nil
}

// afterSeconds returns how long after its creation a run may start: its
// after_seconds (0, or absent, starts it at once), refused with a 422 naming
// the field when it is not a number of seconds from 0 to maxAfterSeconds.
func afterSeconds(body *runBody) (time.Duration, error) {
	if body.AfterSeconds == nil {
		return 0, nil
	}
	n, ok := configNumber(body.AfterSeconds)
	if !ok || n < 0 || math.IsNaN(n) {
		return 0, invalid("after_seconds must be a non-negative number of seconds, not %v", body.AfterSeconds)
	}
	if n > maxAfterSeconds {
		return 0, invalid("after_seconds %v is too far ahead: at most %d seconds", body.AfterSeconds, int64(maxAfterSeconds))
	}
	return time.Duration(n * float64(time.Second)), nil
}

// runDurability is when a run's checkpoints are written: its durability,
// else exit when it asks for no checkpoints during the run
// (checkpoint_during false, as LangGraph reads it), else the engine's
// default (async).
func runDurability(body *runBody) checkpoint.Durability {
	if body.Durability != "" {
		return checkpoint.Durability(body.Durability)
	}
	if during, ok := body.CheckpointDuring.(bool); ok && !during {
		return checkpoint.DurabilityExit
	}
	return ""
}
