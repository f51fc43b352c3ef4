package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/server/graphs"
	"github.com/graphctl/graphctl/server/mcpserver"
	"github.com/graphctl/graphctl/server/runs"
)

// mountMCP serves every graph as an MCP tool at /mcp (streamable HTTP),
// behind the same authentication as the rest of the API.
func (s *Server) mountMCP(r *gin.Engine) {
	if s.cfg.NoMCP {
		return
	}
	h := gin.WrapH(mcpserver.New(mcpserver.Options{Runner: mcpRunner{s}, Version: Version, Log: s.log}))
	for _, m := range []string{"GET", "POST", "DELETE"} {
		r.Handle(m, "/mcp", h)
	}
}

// mcpRunner runs MCP tool calls as runs of the server's run manager.
type mcpRunner struct{ s *Server }

// Graphs implements mcpserver.Runner.
func (m mcpRunner) Graphs() []mcpserver.Graph {
	var out []mcpserver.Graph
	for _, v := range m.s.reg.List() {
		g := mcpserver.Graph{Name: v.Name, Description: v.Graph.Spec.Description, Hash: v.ShortHash}
		for _, name := range v.Graph.FieldOrder {
			f := v.Graph.Fields[name]
			sch := jsonSchemaOf(f.Spec.Type)
			if len(f.Spec.Enum) > 0 {
				sch["enum"] = f.Spec.Enum
			}
			if f.Spec.Description != "" {
				sch["description"] = f.Spec.Description
			}
			g.Fields = append(g.Fields, mcpserver.Field{Name: name, Schema: sch, Messages: f.Spec.Type.Kind == graph.Messages})
		}
		out = append(out, g)
	}
	return out
}

// Run implements mcpserver.Runner: it opens the call's thread, submits a
// run of the input or resume, reports each finished node as progress, and
// answers with the run's outcome.
func (m mcpRunner) Run(ctx context.Context, call mcpserver.Call, progress func(mcpserver.Progress)) (*mcpserver.Outcome, error) {
	s := m.s
	thread, ver, snap, err := m.openThread(ctx, call)
	if err != nil {
		return nil, err
	}
	body, err := callBody(call, ver, snap, thread)
	if err != nil {
		return nil, err
	}
	before := map[string]bool{}
	if snap != nil {
		for _, id := range messageIDs(ver.Graph, snap) {
			before[id] = true
		}
	}
	kwargs, err := toKwargs(&body)
	if err != nil {
		return nil, err
	}
	rec := runs.Record{RunID: newID(), ThreadID: thread, AssistantID: call.Graph, Metadata: body.Metadata, Kwargs: kwargs}
	a, err := s.submit(ctx, &prepared{rec: rec})
	if err != nil {
		return nil, err
	}
	if err := m.follow(ctx, a, thread, rec.RunID, progress); err != nil {
		return nil, err
	}
	<-a.Done()
	return outcomeOf(ver.Graph, a, thread, rec.RunID, before), nil
}

// openThread validates (or makes up) the call's thread, creates it for new
// input, and returns it with the graph version and newest checkpoint (nil
// for a new thread) it continues from.
func (m mcpRunner) openThread(ctx context.Context, call mcpserver.Call) (string, *graphs.Version, *checkpoint.Snapshot, error) {
	s := m.s
	thread := call.ThreadID
	if thread == "" {
		thread = newID()
	}
	if err := validID("thread", thread); err != nil {
		return "", nil, nil, err
	}
	if call.HasResume {
		if _, err := s.loadThread(ctx, thread); err != nil {
			return "", nil, nil, err
		}
	} else if _, err := s.ensureThread(ctx, thread, map[string]any{"graph_id": call.Graph}); err != nil {
		return "", nil, nil, err
	}
	ver, _, err := s.versionFor(ctx, thread, call.Graph)
	if err != nil {
		return "", nil, nil, err
	}
	snap, err := s.cp.Latest(ctx, thread)
	if errors.Is(err, checkpoint.ErrNotFound) {
		snap, err = nil, nil
	}
	if err != nil {
		return "", nil, nil, fmt.Errorf("thread %q: %w", thread, err)
	}
	if snap != nil && snap.GraphName != call.Graph {
		return "", nil, nil, fmt.Errorf("thread %q belongs to graph %q; call the %s tool to continue it", thread, snap.GraphName, snap.GraphName)
	}
	return thread, ver, snap, nil
}

// callBody is the run a call asks for: its resume answer, or its checked
// input.
func callBody(call mcpserver.Call, ver *graphs.Version, snap *checkpoint.Snapshot, thread string) (runBody, error) {
	body := runBody{AssistantID: call.Graph, StreamMode: modeUpdates, Metadata: map[string]any{"source": "mcp"}}
	if call.HasResume {
		if snap == nil || len(snap.Interrupts) == 0 {
			return body, fmt.Errorf("thread %q is not waiting for an answer; send new input instead of resume", thread)
		}
		body.Command = &commandBody{Resume: call.Resume}
		return body, nil
	}
	if _, err := convertInput(ver.Graph, call.Input); err != nil {
		return body, err
	}
	body.Input = call.Input
	if body.Input == nil {
		body.Input = map[string]any{}
	}
	return body, nil
}

// follow reports each node the run finishes as progress until the run's
// stream closes; a canceled call stops the run.
func (m mcpRunner) follow(ctx context.Context, a *runs.Active, thread, runID string, progress func(mcpserver.Progress)) error {
	done, after := 0, 0
	for {
		entries, closed, wake := a.Buf.Since(after)
		for _, e := range entries {
			after = e.Seq
			if e.Mode != modeUpdates {
				continue
			}
			var upd map[string]any
			if json.Unmarshal(e.Frame.Data, &upd) != nil {
				continue
			}
			for node := range upd {
				if node == "__interrupt__" {
					continue
				}
				done++
				progress(mcpserver.Progress{Done: done, Message: "node " + node + " finished"})
			}
		}
		if closed {
			return nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			m.s.runs.Cancel(context.Background(), thread, runID, runs.Interrupt)
			<-a.Done()
			return fmt.Errorf("the call was canceled; the run on thread %q was stopped: %w", thread, ctx.Err())
		}
	}
}

// outcomeOf is the outcome of a finished run: its status, values, the
// replies added since before, its error or interrupts.
func outcomeOf(g *compile.Graph, a *runs.Active, thread, runID string, before map[string]bool) *mcpserver.Outcome {
	res, runErr := a.Result()
	final := a.Record()
	out := &mcpserver.Outcome{ThreadID: thread, RunID: runID, Values: map[string]any{}, Replies: []string{}}
	if res != nil {
		for k, v := range res.State {
			out.Values[k] = v
		}
		annotateMessages(g, out.Values)
		out.Replies = newReplies(g, out.Values, before)
	}
	switch {
	case final.Status == runs.StatusError || res == nil || res.Status == engine.StatusError:
		out.Status = "error"
		out.Error = final.Error
		if out.Error == "" && runErr != nil {
			out.Error = runErr.Error()
		}
		if out.Error == "" && res != nil && res.Err != nil {
			out.Error = res.Err.Error()
		}
	case res.Status == engine.StatusInterrupted:
		out.Status = "interrupted"
		for _, in := range res.Interrupts {
			msg, _ := in.Payload["message"].(string)
			out.Interrupts = append(out.Interrupts, mcpserver.Interrupt{ID: in.ID, Node: in.Node, Field: in.Field, Message: msg, Payload: in.Payload})
		}
	default:
		out.Status = "completed"
	}
	return out
}

// messageIDs lists the ids of the messages in a snapshot's messages fields.
func messageIDs(g *compile.Graph, snap *checkpoint.Snapshot) []string {
	var ids []string
	for _, f := range messagesFields(g) {
		var list []map[string]any
		if json.Unmarshal(snap.Values[f], &list) != nil {
			continue
		}
		for _, m := range list {
			if id, ok := m["id"].(string); ok {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// newReplies returns the text of the assistant messages not in before.
func newReplies(g *compile.Graph, values map[string]any, before map[string]bool) []string {
	out := []string{}
	for _, f := range messagesFields(g) {
		list, _ := values[f].([]any)
		for _, it := range list {
			m, ok := it.(map[string]any)
			if !ok || m["role"] != "assistant" {
				continue
			}
			if id, _ := m["id"].(string); id != "" && before[id] {
				continue
			}
			switch c := m["content"].(type) {
			case string:
				if strings.TrimSpace(c) != "" {
					out = append(out, c)
				}
			case []any:
				if t := joinText(c); t != "" {
					out = append(out, t)
				}
			}
		}
	}
	return out
}

// messagesFields lists a graph's fields of type messages.
func messagesFields(g *compile.Graph) []string {
	var out []string
	for _, name := range g.FieldOrder {
		if g.Fields[name].Spec.Type.Kind == graph.Messages {
			out = append(out, name)
		}
	}
	return out
}
