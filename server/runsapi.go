package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/server/graphs"
	"github.com/graphctl/graphctl/server/runs"
	"github.com/graphctl/graphctl/server/sse"
)

// runBody is a run request (and, stored as the run's kwargs, how it is
// executed).
type runBody struct {
	AssistantID string       `json:"assistant_id"`
	Input       stateValues  `json:"input"`
	Command     *commandBody `json:"command,omitempty"`
	// Checkpoint (a checkpoint config) or CheckpointID starts the run from
	// that checkpoint of the thread, forking it there when it is not the
	// newest.
	Checkpoint   map[string]any `json:"checkpoint,omitempty"`
	CheckpointID string         `json:"checkpoint_id,omitempty"`
	// StreamSubgraphs adds the events of subgraphs, each named
	// "<event>|<namespace>" as LangGraph's Agent Server does.
	StreamSubgraphs   bool           `json:"stream_subgraphs,omitempty"`
	StreamMode        any            `json:"stream_mode,omitempty"`
	InterruptBefore   any            `json:"interrupt_before,omitempty"`
	InterruptAfter    any            `json:"interrupt_after,omitempty"`
	MultitaskStrategy string         `json:"multitask_strategy,omitempty"`
	IfNotExists       string         `json:"if_not_exists,omitempty"`
	OnDisconnect      string         `json:"on_disconnect,omitempty"`
	Metadata          map[string]any `json:"metadata,omitempty"`
	Config            map[string]any `json:"config,omitempty"`
	// Context is the run's runtime context: kept with the run; graphctl
	// graphs declare no context schema, so no node reads it.
	Context any `json:"context,omitempty"`
	// OnCompletion "keep" keeps a stateless run's thread.
	OnCompletion string `json:"on_completion,omitempty"`
	// Durability is when the run's checkpoints are written (sync, async
	// or exit; checkpoint.Durability); CheckpointDuring false, its older
	// form, means exit. StreamResumable, FeedbackKeys and LangsmithTracer
	// are hints: checked, then left to the server (every stream can be
	// rejoined; no LangSmith).
	Durability       string `json:"durability,omitempty"`
	CheckpointDuring any    `json:"checkpoint_during,omitempty"`
	StreamResumable  any    `json:"stream_resumable,omitempty"`
	FeedbackKeys     any    `json:"feedback_keys,omitempty"`
	LangsmithTracer  any    `json:"langsmith_tracer,omitempty"`
	// Webhook is called with the run once it has ended (see runhook.go).
	// AfterSeconds delays the run's start: it is created at once, pending,
	// and starts no earlier than that many seconds later (its created_at
	// is then its start time, as on LangGraph's Agent Server).
	Webhook      any `json:"webhook,omitempty"`
	AfterSeconds any `json:"after_seconds,omitempty"`

	// input is Input converted for graph inputFor, when prepare has
	// converted it (it is not part of the run's kwargs).
	input    map[string]any
	inputFor *compile.Graph
}

// convertedInput returns the run's input converted for graph g, as
// prepare converted it when it checked the request for the same graph.
func (b *runBody) convertedInput(g *compile.Graph) (map[string]any, error) {
	if b.inputFor == g && g != nil {
		return b.input, nil
	}
	return convertInput(g, b.Input)
}

// commandBody is LangGraph's Command: resume answers interrupts (a value,
// or a map keyed by interrupt id), update writes to the state, goto names
// the nodes to run next (names, or {node, input} sends).
type commandBody struct {
	Resume      any    `json:"resume,omitempty"`
	InterruptID string `json:"interrupt_id,omitempty"`
	Update      any    `json:"update,omitempty"`
	Goto        any    `json:"goto,omitempty"`
}

// given reports whether the command asks for anything: an empty command,
// like none, leaves the run to its input.
func (c *commandBody) given() bool {
	return c != nil && (c.Resume != nil || c.Update != nil || c.Goto != nil)
}

// checkpointID returns the checkpoint a request names by checkpoint_id or
// by a checkpoint config ({checkpoint_id, checkpoint_ns, ...}, possibly
// under "configurable"); "" when it names none. A checkpoint_ns is refused:
// callers that take a subgraph's namespace (state, history, state updates)
// split it off first (splitNamespace). A run starts from a checkpoint of the
// thread itself, since that checkpoint decides what runs; a subgraph's
// checkpoint only says where one of its tasks stands.
func checkpointID(field string, id string, conf map[string]any) (string, error) {
	if c, ok := conf["configurable"].(map[string]any); ok {
		conf = c
	}
	if ns, _ := conf["checkpoint_ns"].(string); ns != "" {
		what := fmt.Sprintf("subgraph namespace %q", ns)
		if cp := checkpointIDOf(conf); cp != "" {
			what = fmt.Sprintf("checkpoint %q in %s", cp, what)
		}
		return "", invalid("%s config names %s: a run starts from a checkpoint of the thread itself (checkpoint_ns \"\"), which decides what runs. "+
			"To go on from a subgraph's checkpoint, update the subgraph there (POST /threads/{thread_id}/state with this checkpoint config; as_node \"__copy__\" to take it as it is), then run the thread",
			field, what)
	}
	if v, ok := conf["checkpoint_id"]; ok && v != nil {
		s, isStr := v.(string)
		if !isStr {
			return "", invalid("%s.checkpoint_id must be a string", field)
		}
		if id != "" && s != "" && s != id {
			return "", invalid("checkpoint_id %q and %s.checkpoint_id %q differ", id, field, s)
		}
		if s != "" {
			id = s
		}
	}
	return id, nil
}

// checkpointIDOf returns the checkpoint_id of a checkpoint config, or "".
func checkpointIDOf(conf map[string]any) string {
	id, _ := conf["checkpoint_id"].(string)
	return id
}

// commandUpdate reads command.update: an object, or a list of [key, value] pairs.
func commandUpdate(v any) (map[string]any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return x, nil
	case []any:
		out := map[string]any{}
		for i, it := range x {
			pair, ok := it.([]any)
			if !ok || len(pair) != 2 {
				return nil, invalid("command.update item %d must be a [key, value] pair", i)
			}
			k, ok := pair[0].(string)
			if !ok {
				return nil, invalid("command.update item %d: the key must be a string", i)
			}
			out[k] = pair[1]
		}
		return out, nil
	}
	return nil, invalid("command.update must be an object or a list of [key, value] pairs")
}

// commandGoto reads command.goto: a node name, a send {node, input}, or a
// list of either. "__end__" (LangGraph's END) sends the thread nowhere:
// toEnd reports that it was named, and it is left out of the list.
func commandGoto(g *compile.Graph, v any) (gotos []engine.Goto, toEnd bool, err error) {
	items, isList := v.([]any)
	if !isList {
		if v == nil {
			return nil, false, nil
		}
		items = []any{v}
	}
	out := make([]engine.Goto, 0, len(items))
	for i, it := range items {
		var gt engine.Goto
		switch x := it.(type) {
		case string:
			gt.Node = x
		case map[string]any:
			gt.Node, _ = x["node"].(string)
			gt.Input, gt.HasInput = x["input"]
		}
		if gt.Node == "" {
			return nil, false, invalid("command.goto item %d must be a node name or {node, input}", i)
		}
		if gt.Node == engine.AsEnd {
			toEnd = true
			continue
		}
		if _, ok := g.Nodes[gt.Node]; !ok {
			return nil, false, invalid("command.goto names node %q, which graph %q does not have (nodes: %s, or %s to end)", gt.Node, g.Spec.Name, strings.Join(g.NodeOrder, ", "), engine.AsEnd)
		}
		out = append(out, gt)
	}
	return out, toEnd, nil
}

// stringList reads "x", ["x", "y"] or null.
func stringList(field string, v any) ([]string, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		if x == "" {
			return nil, nil
		}
		return []string{x}, nil
	case []any:
		out := make([]string, 0, len(x))
		for _, it := range x {
			s, ok := it.(string)
			if !ok {
				return nil, invalid("%s must be a string or a list of strings", field)
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, invalid("%s must be a string or a list of strings", field)
}

// parseModes reads a run's stream_mode (values when it names none) as a
// set of modes. The set of a single mode is shared: nobody changes it.
func parseModes(v any) (map[string]bool, error) {
	switch x := v.(type) {
	case nil:
		return singleModes[modeValues], nil
	case string:
		if m, ok := singleModes[x]; ok {
			return m, nil
		}
	}
	list, err := stringList("stream_mode", v)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		list = []string{modeValues}
	}
	modes := map[string]bool{}
	for _, m := range list {
		if !knownModes[m] && m != modeChat && m != modeNone {
			return nil, invalid("stream_mode %q is not one of values, updates, messages, messages-tuple, custom, events, debug, tasks, checkpoints", m)
		}
		modes[m] = true
	}
	return modes, nil
}

// singleModes holds the set of each stream mode alone.
var singleModes = func() map[string]map[string]bool {
	out := map[string]map[string]bool{modeChat: {modeChat: true}, modeNone: {modeNone: true}}
	for m := range knownModes {
		out[m] = map[string]bool{m: true}
	}
	return out
}()

// recursionLimit reads config.recursion_limit (or
// config.configurable.recursion_limit); 0 when it is not a positive number.
func recursionLimit(cfg map[string]any) int {
	for _, m := range []map[string]any{cfg, asMap(cfg["configurable"])} {
		if n, ok := configNumber(m["recursion_limit"]); ok && n > 0 {
			return int(n)
		}
	}
	return 0
}

// configNumber reads a number of a config as its JSON decoding holds it
// (float64, json.Number) or as Go code sets it (int, int64).
func configNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return 0, false
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// prepared is a validated run request.
type prepared struct {
	rec   runs.Record
	modes map[string]bool
	ver   *graphs.Version
	// request is the run's request as its kwargs decode, handed to the
	// executor with the run so that it need not decode them (nil: the
	// executor decodes rec.Kwargs). Nothing changes it once it is
	// prepared: the executor reads it while the handler waits.
	request *runBody
	// waited is set when the client hears of the run only once it has
	// ended (runs.Attach.Waited).
	waited bool
}

// requestKey is the context key of the request a run was submitted with.
type requestKey struct{}

// prepare validates a run request for the thread in the path (or a new
// stateless thread) so that every client mistake is a 4xx before the run
// exists.
func (s *Server) prepare(c *gin.Context, body *runBody) (*prepared, error) {
	thread := c.Param("thread")
	stateless := thread == ""
	if stateless {
		thread = newID()
		if body.OnCompletion == "keep" {
			// The run's new thread outlives it, as a thread created for it.
			stateless, body.IfNotExists = false, "create"
		}
	}
	if err := validID("thread", thread); err != nil {
		return nil, err
	}
	c.Set(ctxThreadID, thread)
	if body.AssistantID == "" {
		if list := s.reg.List(); len(list) == 1 {
			body.AssistantID = list[0].Name
		} else {
			return nil, invalid("assistant_id is required (the name of a graph)")
		}
	}
	asst, err := s.runAssistant(c, body.AssistantID)
	if err != nil {
		return nil, err
	}
	modes, err := checkRunOptions(body)
	if err != nil {
		return nil, err
	}
	if stateless {
		// A new thread: it runs on the assistant's current version.
		if v, ok := s.reg.Get(asst.GraphID); ok {
			s.pinned.Store(thread, v)
		}
	}
	if body.IfNotExists == "create" || !stateless {
		if err := s.noteRunOnThread(c, thread, asst, body.Metadata, body.IfNotExists == "create"); err != nil {
			return nil, err
		}
	}
	body.Config = asst.runConfig(body.Config)
	ver, _, err := s.versionFor(c, thread, body.AssistantID)
	if err != nil {
		return nil, err
	}
	if body.input, err = convertInput(ver.Graph, body.Input); err != nil {
		return nil, err
	}
	body.inputFor = ver.Graph
	if err := checkRunNodes(ver.Graph, body); err != nil {
		return nil, err
	}
	if err := s.checkStartCheckpoint(c, thread, stateless, body); err != nil {
		return nil, err
	}
	if err := checkCommand(ver.Graph, body.Command); err != nil {
		return nil, err
	}
	kwargs, err := toKwargs(body)
	if err != nil {
		return nil, err
	}
	rec := runs.Record{RunID: newID(), ThreadID: thread, AssistantID: body.AssistantID, Metadata: body.Metadata,
		MultitaskStrategy: body.MultitaskStrategy, Kwargs: kwargs, Stateless: stateless}
	if delay, _ := afterSeconds(body); delay > 0 {
		rec.StartAt = time.Now().UTC().Add(delay)
		rec.CreatedAt = rec.StartAt
	}
	if rec.Metadata == nil {
		rec.Metadata = map[string]any{}
	}
	c.Set(ctxRunID, rec.RunID)
	return &prepared{rec: rec, modes: modes, ver: ver, request: body}, nil
}

// runAssistant finds the assistant of a run as resolveAssistant does, the
// assistant of a loaded graph built once per graph version rather than for
// every run. Nothing changes the assistant it returns.
func (s *Server) runAssistant(ctx context.Context, id string) (*assistantRec, error) {
	rec, err := s.storedAssistant(ctx, id)
	if err != nil || rec != nil {
		return rec, err
	}
	v, ok := s.reg.Get(id)
	if !ok {
		return s.resolveAssistant(ctx, id)
	}
	if e, ok := s.graphAssistants.Load(v.Name); ok && e.(*graphAssistant).ver == v {
		return e.(*graphAssistant).rec, nil
	}
	rec = systemAssistant(v)
	s.graphAssistants.Store(v.Name, &graphAssistant{ver: v, rec: rec})
	return rec, nil
}

// graphAssistant is the assistant of a graph version.
type graphAssistant struct {
	ver *graphs.Version
	rec *assistantRec
}

// checkRunOptions checks a run request's enumerated options and returns its
// stream modes.
func checkRunOptions(body *runBody) (map[string]bool, error) {
	if !runs.ValidStrategy(body.MultitaskStrategy) {
		return nil, invalid("multitask_strategy %q is not one of reject, enqueue, interrupt, rollback", body.MultitaskStrategy)
	}
	for _, e := range []struct {
		field, value string
		allowed      []string
	}{
		{"if_not_exists", body.IfNotExists, []string{"reject", "create"}},
		{"on_disconnect", body.OnDisconnect, []string{"continue", "cancel"}},
		{"on_completion", body.OnCompletion, []string{"delete", "keep"}},
		{"durability", body.Durability, []string{"sync", "async", "exit"}},
	} {
		if e.value != "" && !slices.Contains(e.allowed, e.value) {
			return nil, invalid("%s %q is not one of %s", e.field, e.value, strings.Join(e.allowed, ", "))
		}
	}
	if err := checkRunHints(body); err != nil {
		return nil, err
	}
	modes, err := parseModes(body.StreamMode)
	if err != nil {
		return nil, err
	}
	if _, err := stringList("interrupt_before", body.InterruptBefore); err != nil {
		return nil, err
	}
	if _, err := stringList("interrupt_after", body.InterruptAfter); err != nil {
		return nil, err
	}
	return modes, nil
}

// checkStartCheckpoint reads the checkpoint a run starts from (checkpoint or
// checkpoint_id) into body.CheckpointID and checks that the thread has it.
func (s *Server) checkStartCheckpoint(c *gin.Context, thread string, stateless bool, body *runBody) error {
	var err error
	if body.CheckpointID, err = checkpointID("checkpoint", body.CheckpointID, body.Checkpoint); err != nil {
		return err
	}
	body.Checkpoint = nil
	if body.CheckpointID == "" {
		return nil
	}
	if stateless {
		return invalid("a stateless run has no checkpoint to start from; create a thread")
	}
	if _, err := s.cp.Get(c, thread, body.CheckpointID); errors.Is(err, checkpoint.ErrNotFound) {
		return notFound("checkpoint %q of thread %q not found", body.CheckpointID, thread)
	} else if err != nil {
		return fmt.Errorf("thread %q: %w", thread, err)
	}
	return nil
}

// checkCommand checks a run's command: its update against the graph's state
// and its goto against the graph's nodes.
func checkCommand(g *compile.Graph, cmd *commandBody) error {
	if cmd == nil {
		return nil
	}
	upd, err := commandUpdate(cmd.Update)
	if err != nil {
		return err
	}
	if _, err := convertInput(g, upd); err != nil {
		return err
	}
	_, _, err = commandGoto(g, cmd.Goto)
	return err
}

// toKwargs returns a run request's kwargs: the members of its JSON encoding
// as decoding that encoding gives them, built from the request's fields
// without encoding and decoding it (see jsonMembers). They share the
// request's maps, which nothing changes once the request is checked.
func toKwargs(body *runBody) (map[string]any, error) {
	return runBodyMembers.of(reflect.ValueOf(body).Elem())
}

// holdThread claims an idle thread from the run manager for a state update,
// mapping its errors to 4xx (or 503 while shutting down). A thread with a
// run waiting to start (queued, or delayed by after_seconds) is not idle,
// as on the Agent Server: the update would land under that run.
func (s *Server) holdThread(ctx context.Context, thread string) (context.Context, func(), error) {
	held, release, err := s.hold(ctx, thread, "update its state")
	if err != nil {
		return nil, nil, err
	}
	if waiting, err := s.runs.Unended(context.Background(), thread); err != nil || waiting {
		release()
		if err != nil {
			return nil, nil, fmt.Errorf("thread %q: its runs: %w", thread, err)
		}
		return nil, nil, conflict("thread %q has a run waiting to start; update its state when it has ended, or cancel it", thread)
	}
	return held, release, nil
}

// hold takes an idle thread from the run manager (runs.Manager.Hold) for a
// change made outside a run, with held (see runs.Manager.Hold), mapping its
// errors to 4xx (409 when the thread is busy, telling to do what when the
// run has ended) or 503 while shutting down.
func (s *Server) hold(ctx context.Context, thread, what string) (held context.Context, release func(), err error) {
	held, release, err = s.runs.Hold(ctx, thread)
	switch {
	case errors.Is(err, runs.ErrBusy):
		return nil, nil, conflict("%v; %s when the run has ended", err, what)
	case errors.Is(err, runs.ErrClosed):
		return nil, nil, errorf(http.StatusServiceUnavailable, "shutting_down", "the server is shutting down; retry on another instance")
	case err != nil:
		return nil, nil, err
	}
	return held, release, nil
}

// submit starts (or queues) a prepared run, mapping manager errors to 4xx.
func (s *Server) submit(ctx context.Context, p *prepared) (*runs.Active, error) {
	at := runs.Attach{Waited: p.waited}
	if p.request != nil {
		at.Values = context.WithValue(context.Background(), requestKey{}, p.request)
	}
	a, err := s.runs.SubmitAttached(ctx, p.rec, at)
	switch {
	case errors.Is(err, runs.ErrBusy):
		return nil, conflict("%v; send multitask_strategy enqueue, interrupt or rollback to run anyway", err)
	case errors.Is(err, runs.ErrClosed):
		return nil, errorf(http.StatusServiceUnavailable, "shutting_down", "the server is shutting down; retry on another instance")
	case errors.Is(err, runs.ErrBadStrategy):
		return nil, badRequest("%v", err)
	case err != nil:
		return nil, err
	}
	s.watchers.notify(p.rec.ThreadID, a)
	if s.log.Enabled(ctx, slog.LevelInfo) { // the attributes are not built for nothing
		s.log.LogAttrs(ctx, slog.LevelInfo, "run submitted", slog.String("run_id", p.rec.RunID), slog.String("thread_id", p.rec.ThreadID),
			slog.String("assistant_id", p.rec.AssistantID))
	}
	return a, nil
}

// execute is the run manager's executor: it rebuilds the engine request from
// the run's kwargs and streams the engine's events as frames.
func (s *Server) execute(ctx context.Context, rec *runs.Record, recovering bool, emit runs.Emit) (*engine.Result, error) {
	if rec.Stateless && s.temp != nil {
		// The run manager deletes the thread when the run ends.
		s.temp.Temporary(rec.ThreadID)
	}
	s.hooks.runStarted(rec, time.Now())
	body, err := runRequest(ctx, rec)
	if err != nil {
		return nil, err
	}
	ver, _, err := s.versionFor(ctx, rec.ThreadID, rec.AssistantID)
	if err != nil {
		return nil, err
	}
	modes, err := parseModes(body.StreamMode)
	if err != nil {
		return nil, err
	}
	req := engine.Request{ThreadID: rec.ThreadID, RunID: rec.RunID, RecursionLimit: recursionLimit(body.Config), Durability: runDurability(body)}
	if len(rec.Metadata) > 0 {
		// As on the Agent Server, the run's metadata is in the metadata of
		// each checkpoint it writes (a history filters on it).
		req.Metadata = rec.Metadata
	}
	req.InterruptBefore, _ = stringList("interrupt_before", body.InterruptBefore)
	req.InterruptAfter, _ = stringList("interrupt_after", body.InterruptAfter)
	// A recovered run goes on from the thread's newest checkpoint: what the
	// request asked for is already in its checkpoints.
	if !recovering {
		req.CheckpointID = body.CheckpointID
		if cmd := body.Command; cmd != nil {
			if cmd.Resume != nil {
				req.Resume = &engine.Resume{Value: cmd.Resume, InterruptID: cmd.InterruptID}
			}
			upd, err := commandUpdate(cmd.Update)
			if err != nil {
				return nil, err
			}
			if req.Update, err = convertInput(ver.Graph, upd); err != nil {
				return nil, err
			}
			var toEnd bool
			if req.Goto, toEnd, err = commandGoto(ver.Graph, cmd.Goto); err != nil {
				return nil, err
			}
			if toEnd && len(req.Goto) == 0 && req.Resume == nil {
				if err := endThread(ctx, ver.Engine, &req); err != nil {
					return nil, err
				}
			}
		}
		// No input (null) continues the thread from its checkpoint. As on
		// the Agent Server, a command takes the input's place: useStream
		// sends input {} beside the command that answers an interrupt.
		if !body.Command.given() {
			in, err := body.convertedInput(ver.Graph)
			if err != nil {
				return nil, err
			}
			req.Input = in
		}
	}
	st := &streamer{ctx: ctx, cp: s.cp, g: ver.Graph, rec: rec, modes: modes, emit: emit, streamed: map[string]string{}, completed: map[string]bool{},
		subgraphs: body.StreamSubgraphs, flush: ver.Engine.Flush}
	st.observe = func(ev event.Event) {
		if ev.Type == event.NodeEnd {
			if ms, ok := ev.Payload["duration_ms"].(float64); ok {
				typ := ev.Node
				if n, ok := ver.Graph.Nodes[ev.Node]; ok {
					typ = n.Spec.Type
				}
				s.metrics.NodeLatency(typ, ms/1000)
			}
		}
	}
	if modes[modeUpdates] || modes[modeTasks] || modes[modeDebug] || modes[modeEvents] {
		if snap, err := s.cp.Latest(ctx, rec.ThreadID); err == nil {
			st.prev, st.cpID = snap.Values, snap.ID
		}
	}
	res, err := ver.Engine.Run(ctx, req, observed(ctx, st.sink))
	st.finish(res)
	return res, err
}

// endThread carries out a command that sends the thread to "__end__", as
// LangGraph's Command(goto=END) does (agent-chat-ui's "Mark as Resolved"):
// the command's update is written, then the thread's next tasks and
// pending interrupts are dropped, so the run has nothing left to do.
func endThread(ctx context.Context, eng *engine.Engine, req *engine.Request) error {
	var steps [][]engine.StateUpdate
	if len(req.Update) > 0 {
		steps = append(steps, []engine.StateUpdate{{Values: req.Update}})
	}
	steps = append(steps, []engine.StateUpdate{{AsNode: engine.AsEnd}})
	if _, err := eng.BulkUpdateState(ctx, req.ThreadID, req.CheckpointID, steps); err != nil {
		return fmt.Errorf("command goto %s: %w", engine.AsEnd, err)
	}
	req.Update, req.CheckpointID = nil, ""
	return nil
}

// runRequest returns the request of a run: the one it was submitted with in
// this process, else (a run resumed after a restart, or queued by another
// path) its stored kwargs decoded.
func runRequest(ctx context.Context, rec *runs.Record) (*runBody, error) {
	if body, ok := ctx.Value(requestKey{}).(*runBody); ok {
		return body, nil
	}
	var body runBody
	b, _ := json.Marshal(rec.Kwargs)
	if err := json.Unmarshal(b, &body); err != nil {
		return nil, fmt.Errorf("run %s: kwargs: %w", rec.RunID, err)
	}
	return &body, nil
}

func (s *Server) createRun(c *gin.Context) {
	var body runBody
	if err := bindRunBody(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	p, err := s.prepare(c, &body)
	if err != nil {
		s.fail(c, err)
		return
	}
	a, err := s.submit(c, p)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Header("Content-Location", runPath(p.rec))
	c.JSON(http.StatusOK, runObject(a.Record()))
}

func runPath(rec runs.Record) string {
	if rec.Stateless {
		return "/runs/" + rec.RunID
	}
	return "/threads/" + rec.ThreadID + "/runs/" + rec.RunID
}

func runObject(rec runs.Record) map[string]any {
	out := map[string]any{"run_id": rec.RunID, "thread_id": rec.ThreadID, "assistant_id": rec.AssistantID,
		"status": rec.Status, "created_at": rec.CreatedAt.Format(time.RFC3339Nano), "updated_at": rec.UpdatedAt.Format(time.RFC3339Nano),
		"metadata": rec.Metadata, "multitask_strategy": rec.MultitaskStrategy, "kwargs": rec.Kwargs}
	if rec.Error != "" {
		out["error"] = rec.Error
	}
	return out
}

func (s *Server) streamRun(c *gin.Context) {
	var body runBody
	if err := bindRunBody(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	p, err := s.prepare(c, &body)
	if err != nil {
		s.fail(c, err)
		return
	}
	a, err := s.submit(c, p)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Header("Content-Location", runPath(p.rec))
	c.Header("Location", runPath(p.rec)+"/stream")
	cancelOnGone := body.OnDisconnect == "cancel"
	s.pipe(c, a, p.modes, 0, cancelOnGone)
}

// pipe streams a run's buffered frames (those of modes, after sequence
// number after) to the client until the run ends or the client leaves.
//
// While it waits, the goroutine appending a frame of modes writes it
// itself when the connection takes it at once (sse.Writer.TryWrite): a
// token reaches the client without waking this goroutine. Frames the
// connection cannot take at once, and the stream's own frames (metadata,
// error, end), wake it to write them, so a slow client never holds up the
// run.
func (s *Server) pipe(c *gin.Context, a *runs.Active, modes map[string]bool, after int, cancelOnGone bool) {
	w := sse.PrepareRequest(c.Writer, c.Request)
	s.metrics.StreamOpened()
	defer s.metrics.StreamClosed()
	ctx := c.Request.Context()
	tick := time.NewTicker(s.cfg.KeepAlive)
	defer tick.Stop()
	direct := runs.NewDirect(func(e runs.Entry) bool {
		if e.Mode == "" {
			return false
		}
		if modes != nil && !modes[e.Mode] {
			return true
		}
		ok, err := w.TryWrite(e.Frame)
		return ok && err == nil
	})
	defer a.Buf.Leave(direct, after)
	for {
		entries, closed, wake := a.Buf.SinceDirect(after, direct)
		for _, e := range entries {
			after = e.Seq
			if e.Mode != "" && modes != nil && !modes[e.Mode] {
				continue
			}
			frame := e.Frame
			if frame.Event == "end" && a.Record().Status == runs.StatusRunning {
				// Cut by the server's shutdown (the run resumes when the
				// server starts again) or taken over by another replica: the
				// stream ends in an error.
				cut := map[string]any{"error": "ServerShutdown",
					"message": "the server shut down before the run ended; it resumes from its last checkpoint when the server starts again"}
				if a.LeaseLost() {
					cut = map[string]any{"error": "RunTakenOver",
						"message": "another replica took the run over while this one was paused past the run's lease; the run goes on there: join its stream again"}
				}
				frame = sse.Frame{ID: frame.ID, Event: "error", Data: mustJSONBytes(cut)}
			}
			if err := w.Write(frame); err != nil {
				s.gone(a, cancelOnGone)
				return
			}
		}
		if closed {
			return
		}
		if len(entries) > 0 {
			// Waits only once it has every frame.
			continue
		}
		select {
		case <-wake:
		case <-tick.C:
			// Frames are not offered while the comment is written.
			after = a.Buf.Leave(direct, after)
			if err := w.Comment("keep-alive"); err != nil {
				s.gone(a, cancelOnGone)
				return
			}
		case <-ctx.Done():
			s.gone(a, cancelOnGone)
			return
		}
	}
}

func (s *Server) gone(a *runs.Active, cancel bool) {
	if cancel {
		rec := a.Record()
		s.runs.Cancel(context.Background(), rec.ThreadID, rec.RunID, runs.Interrupt)
	}
}

func (s *Server) waitRun(c *gin.Context) {
	var body runBody
	if err := bindRunBody(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	// Nobody streams a waited-for run: its frames are not built (the modes
	// asked for are checked all the same, as on the other run routes).
	if _, err := parseModes(body.StreamMode); err != nil {
		s.fail(c, err)
		return
	}
	body.StreamMode = modeNone
	p, err := s.prepare(c, &body)
	if err != nil {
		s.fail(c, err)
		return
	}
	p.waited = true
	a, err := s.submit(c, p)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Header("Content-Location", runPath(p.rec))
	select {
	case <-a.Done():
	case <-c.Request.Context().Done():
		s.gone(a, body.OnDisconnect == "cancel")
		return
	}
	s.respondFinal(c, a, p.ver)
}

// respondFinal answers with a finished run's final values, as /runs/wait
// and join do.
func (s *Server) respondFinal(c *gin.Context, a *runs.Active, ver *graphs.Version) {
	rec := a.Record()
	res, err := a.Result()
	if rec.Status == runs.StatusError {
		msg := rec.Error
		if msg == "" && err != nil {
			msg = err.Error()
		}
		c.JSON(http.StatusOK, gin.H{"__error__": gin.H{"error": "RunError", "message": msg}})
		return
	}
	if res == nil {
		s.finalFromThread(c, rec.ThreadID)
		return
	}
	vals := res.State
	if len(res.Interrupts) > 0 {
		vals = maps.Clone(res.State)
		if vals == nil {
			vals = map[string]any{}
		}
		vals["__interrupt__"] = lgInterrupts(res.Interrupts)
	}
	if ver == nil {
		if vals == nil {
			vals = map[string]any{}
		}
		c.JSON(http.StatusOK, vals)
		return
	}
	buf, _ := s.answers.Get().(*[]byte)
	if buf == nil {
		buf = new([]byte)
	}
	b, err := appendValues((*buf)[:0], ver.Graph, vals)
	if err != nil {
		s.fail(c, fmt.Errorf("run %s: encode its values: %w", rec.RunID, err))
		return
	}
	c.Data(http.StatusOK, "application/json; charset=utf-8", b)
	if cap(b) <= maxPooledAnswer {
		*buf = b
		s.answers.Put(buf)
	}
}

// maxPooledAnswer is the largest answer buffer kept for the next answer.
const maxPooledAnswer = 4 << 20

func (s *Server) finalFromThread(c *gin.Context, thread string) {
	snap, err := s.cp.Latest(c, thread)
	if errors.Is(err, checkpoint.ErrNotFound) {
		c.JSON(http.StatusOK, map[string]any{})
		return
	}
	if err != nil {
		s.fail(c, fmt.Errorf("thread %q: %w", thread, err))
		return
	}
	st, err := s.stateOf(snap)
	if err != nil {
		s.fail(c, err)
		return
	}
	vals := st["values"].(map[string]any)
	if ins := taskInterrupts(snap); len(ins) > 0 {
		vals["__interrupt__"] = lgInterrupts(ins)
	}
	c.JSON(http.StatusOK, vals)
}

func (s *Server) listRuns(c *gin.Context) {
	thread := c.Param("thread")
	c.Set(ctxThreadID, thread)
	if _, err := s.loadThread(c, thread); err != nil {
		s.fail(c, err)
		return
	}
	page, err := queryPaging(c, 10)
	if err != nil {
		s.fail(c, err)
		return
	}
	status := c.Query("status")
	if status != "" && !slices.Contains(runStatuses, status) {
		s.fail(c, invalid("status %q is not one of %s", status, strings.Join(runStatuses, ", ")))
		return
	}
	sel := queryList(c, "select")
	if err := checkSelect(sel, runFields); err != nil {
		s.fail(c, err)
		return
	}
	recs, err := s.runs.List(c, thread, page.Limit, page.Offset, status)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]map[string]any, 0, len(recs))
	for _, r := range recs {
		out = append(out, pick(runObject(r), sel))
	}
	c.JSON(http.StatusOK, out)
}

// runStatuses are the statuses a run list may filter on (LangGraph's; a
// graphctl run never times out).
var runStatuses = []string{runs.StatusPending, runs.StatusRunning, runs.StatusError, runs.StatusSuccess, "timeout", runs.StatusInterrupted}

// queryList reads a list query parameter as clients send it: repeated
// (?select=a&select=b), comma-separated, or a JSON array (the JS SDK
// sends ?select=["a","b"]).
func queryList(c *gin.Context, name string) []string {
	var out []string
	for _, v := range c.QueryArray(name) {
		for _, part := range strings.Split(v, ",") {
			if part = strings.Trim(part, `[]" `); part != "" {
				out = append(out, part)
			}
		}
	}
	return out
}

func (s *Server) runParams(c *gin.Context) (string, string) {
	thread, run := c.Param("thread"), c.Param("run")
	c.Set(ctxThreadID, thread)
	c.Set(ctxRunID, run)
	return thread, run
}

func (s *Server) getRun(c *gin.Context) {
	thread, run := s.runParams(c)
	rec, err := s.runs.Load(c, thread, run)
	if err != nil {
		s.fail(c, s.runErr(err))
		return
	}
	c.JSON(http.StatusOK, runObject(rec))
}

func (s *Server) runErr(err error) error {
	if errors.Is(err, runs.ErrNotFound) {
		return notFound("%v", err)
	}
	if errors.Is(err, runs.ErrBadStrategy) {
		return badRequest("%v", err)
	}
	return err
}

func (s *Server) joinRun(c *gin.Context) {
	thread, run := s.runParams(c)
	a, ok := s.runs.Get(run)
	if !ok || a.Record().ThreadID != thread {
		if _, err := s.runs.Load(c, thread, run); err != nil {
			s.fail(c, s.runErr(err))
			return
		}
		s.finalFromThread(c, thread)
		return
	}
	select {
	case <-a.Done():
	case <-c.Request.Context().Done():
		return
	}
	ver, _, _ := s.versionFor(c, thread, a.Record().AssistantID)
	s.respondFinal(c, a, ver)
}

func (s *Server) joinStream(c *gin.Context) {
	thread, run := s.runParams(c)
	after := 0
	// "-1" (what useStream sends to rejoin) replays the stream from its start.
	if id := c.GetHeader("Last-Event-ID"); id != "" && id != "-1" {
		n, err := strconv.Atoi(id)
		if err != nil || n < 0 {
			s.fail(c, badRequest("Last-Event-ID %q is not an event id of this server", id))
			return
		}
		after = n
	}
	var modes map[string]bool
	if ms := queryList(c, "stream_mode"); len(ms) > 0 {
		modes = map[string]bool{}
		for _, m := range ms {
			modes[m] = true
		}
	}
	a, ok := s.runs.Get(run)
	if !ok || a.Record().ThreadID != thread {
		if _, err := s.runs.Load(c, thread, run); err != nil {
			s.fail(c, s.runErr(err))
			return
		}
		// Finished long ago: nothing left to replay.
		w := sse.Prepare(c.Writer)
		w.Write(sse.Frame{Event: "end", Data: []byte("null")})
		return
	}
	s.pipe(c, a, modes, after, queryBool(c, "cancel_on_disconnect"))
}

func mustJSONBytes(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// queryBool reads a boolean query parameter as the SDKs send it: "1" or
// "true" (the JS SDK sends 1/0, the Python SDK true/false).
func queryBool(c *gin.Context, name string) bool {
	v, err := strconv.ParseBool(c.Query(name))
	return err == nil && v
}

func (s *Server) cancelRun(c *gin.Context) {
	thread, run := s.runParams(c)
	action := c.DefaultQuery("action", runs.Interrupt)
	ended, err := s.cancellable(c, thread, run, action)
	if err != nil {
		s.fail(c, err)
		return
	}
	wait := queryBool(c, "wait")
	if !ended {
		a, err := s.runs.Cancel(c, thread, run, action)
		if err != nil {
			s.fail(c, s.runErr(err))
			return
		}
		if wait {
			select {
			case <-a.Done():
			case <-c.Request.Context().Done():
				return
			}
		}
	}
	// As on the Agent Server: 204 once the run has ended (wait), else 202.
	if wait {
		c.Status(http.StatusNoContent)
		return
	}
	c.Status(http.StatusAccepted)
}
