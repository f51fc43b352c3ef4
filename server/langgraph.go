package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/server/graphs"
)

// This file translates between graphctl's threads and LangGraph's shapes:
// inputs with LangChain-style messages, thread states, interrupts.

// roleOf maps LangGraph/LangChain message roles and types to graphctl roles.
var roleOf = map[string]string{
	"user": "user", "human": "user",
	"assistant": "assistant", "ai": "assistant",
	"system": "system", "tool": "tool",
}

// typeOf maps graphctl roles to LangChain message types.
var typeOf = map[string]string{"user": "human", "assistant": "ai", "system": "system", "tool": "tool"}

// convertInput normalises a LangGraph input for graph g: messages given to a
// field of type messages (as objects with role or type, or as bare strings)
// become graphctl messages; other keys pass through to their fields.
func convertInput(g *compile.Graph, input map[string]any) (map[string]any, error) {
	if input == nil {
		return nil, nil
	}
	out := make(map[string]any, len(input))
	for k, v := range input {
		f, ok := g.Fields[k]
		if !ok {
			return nil, badRequest("input field %q is not in the state of graph %q (fields: %s)", k, g.Spec.Name, strings.Join(g.FieldOrder, ", "))
		}
		if f.Spec.Type.Kind != graph.Messages {
			out[k] = v
			continue
		}
		msgs, err := convertMessages(k, v)
		if err != nil {
			return nil, err
		}
		out[k] = msgs
	}
	if err := g.CheckValues(out); err != nil {
		return nil, badRequest("input: %v", err)
	}
	return out, nil
}

func convertMessages(field string, v any) ([]any, error) {
	var items []any
	switch x := v.(type) {
	case []any:
		items = x
	case map[string]any, string:
		items = []any{x}
	case nil:
		return []any{}, nil
	default:
		return nil, badRequest("input %q must be a list of messages", field)
	}
	out := make([]any, 0, len(items))
	for i, it := range items {
		switch m := it.(type) {
		case string:
			out = append(out, map[string]any{"role": "user", "content": m})
		case map[string]any:
			role, _ := m["role"].(string)
			if role == "" {
				role, _ = m["type"].(string)
			}
			mapped, ok := roleOf[strings.ToLower(role)]
			if !ok {
				return nil, badRequest("input %q message %d: role %q is not one of user, human, assistant, ai, system, tool", field, i, role)
			}
			msg := make(map[string]any, len(m))
			for k, val := range m {
				if k == "type" || k == "additional_kwargs" || k == "response_metadata" || k == "example" {
					continue
				}
				msg[k] = val
			}
			msg["role"] = mapped
			if parts, isList := m["content"].([]any); isList {
				msg["content"] = joinText(parts)
			}
			if _, has := msg["content"]; !has {
				msg["content"] = ""
			}
			if id, isStr := msg["id"].(string); isStr && id == "" {
				delete(msg, "id")
			} else if msg["id"] == nil {
				delete(msg, "id")
			}
			out = append(out, msg)
		default:
			return nil, badRequest("input %q message %d must be an object with role and content", field, i)
		}
	}
	return out, nil
}

// joinText flattens LangChain content parts to their text.
func joinText(parts []any) string {
	var b strings.Builder
	for _, p := range parts {
		switch x := p.(type) {
		case string:
			b.WriteString(x)
		case map[string]any:
			if t, ok := x["text"].(string); ok {
				b.WriteString(t)
			}
		}
	}
	return b.String()
}

// decodeValues turns a snapshot's field values into the state LangGraph
// clients see: messages carry a LangChain type next to their role.
func decodeValues(g *compile.Graph, raw map[string]json.RawMessage) (map[string]any, error) {
	out := make(map[string]any, len(raw))
	for k, r := range raw {
		v, err := checkpoint.DecodeValue(r)
		if err != nil {
			return nil, fmt.Errorf("decode field %q: %w", k, err)
		}
		out[k] = v
	}
	annotateMessages(g, out)
	return out, nil
}

// annotateMessages adds LangChain's "type" to every message of every
// messages field (in place).
func annotateMessages(g *compile.Graph, values map[string]any) {
	if g == nil {
		return
	}
	for k, v := range values {
		f, ok := g.Fields[k]
		if !ok || f.Spec.Type.Kind != graph.Messages {
			continue
		}
		list, _ := v.([]any)
		cp := make([]any, len(list))
		for i, it := range list {
			m, ok := it.(map[string]any)
			if !ok {
				cp[i] = it
				continue
			}
			mm := make(map[string]any, len(m)+1)
			for kk, vv := range m {
				mm[kk] = vv
			}
			role, _ := m["role"].(string)
			if t, ok := typeOf[role]; ok {
				mm["type"] = t
			}
			cp[i] = mm
		}
		values[k] = cp
	}
}

// lgInterrupts lists a checkpoint's interrupts as LangGraph shows them.
func lgInterrupts(ins []checkpoint.Interrupt) []map[string]any {
	out := make([]map[string]any, 0, len(ins))
	for _, in := range ins {
		var value any = in.Payload
		if in.Payload == nil {
			value = map[string]any{"node": in.Node, "when": in.When}
		}
		out = append(out, map[string]any{"value": value, "id": in.ID, "when": "during", "resumable": true, "ns": []string{in.Node}})
	}
	return out
}

func cpConfig(thread, id string) any {
	if id == "" {
		return nil
	}
	return map[string]any{"thread_id": thread, "checkpoint_ns": "", "checkpoint_id": id, "checkpoint_map": nil}
}

// threadState renders a snapshot as LangGraph's ThreadState.
func threadState(g *compile.Graph, snap *checkpoint.Snapshot) (map[string]any, error) {
	values, err := decodeValues(g, snap.Values)
	if err != nil {
		return nil, fmt.Errorf("thread %q checkpoint %s: %w", snap.ThreadID, snap.ID, err)
	}
	next := []string{}
	seen := map[string]bool{}
	tasks := []map[string]any{}
	for _, in := range snap.Interrupts {
		if !seen[in.Node] {
			seen[in.Node] = true
			next = append(next, in.Node)
		}
		tasks = append(tasks, map[string]any{"id": in.TaskID, "name": in.Node, "path": []any{}, "error": nil,
			"interrupts": lgInterrupts([]checkpoint.Interrupt{in}), "checkpoint": nil, "state": nil, "result": nil})
	}
	for _, t := range snap.Next {
		if !seen[t.Node] {
			seen[t.Node] = true
			next = append(next, t.Node)
		}
		tasks = append(tasks, map[string]any{"id": t.ID, "name": t.Node, "path": []any{}, "error": nil,
			"interrupts": []any{}, "checkpoint": nil, "state": nil, "result": nil})
	}
	meta := map[string]any{}
	for k, v := range snap.Metadata {
		if k == "tasks" {
			continue
		}
		meta[k] = v
	}
	meta["step"] = snap.Step
	meta["source"] = snap.Source
	meta["writes"] = nil
	meta["graph_id"] = snap.GraphName
	meta["graph_hash"] = snap.GraphHash
	meta["parents"] = map[string]any{}
	return map[string]any{
		"values": values, "next": next, "tasks": tasks, "metadata": meta,
		"created_at": snap.CreatedAt.UTC().Format(time.RFC3339Nano),
		"checkpoint": cpConfig(snap.ThreadID, snap.ID), "parent_checkpoint": cpConfig(snap.ThreadID, snap.ParentID),
		"checkpoint_id": snap.ID, "parent_checkpoint_id": nilIfEmpty(snap.ParentID),
		"interrupts": lgInterrupts(snap.Interrupts),
	}, nil
}

func emptyState() map[string]any {
	return map[string]any{"values": map[string]any{}, "next": []string{}, "tasks": []any{}, "metadata": map[string]any{},
		"created_at": nil, "checkpoint": nil, "parent_checkpoint": nil, "checkpoint_id": nil, "parent_checkpoint_id": nil, "interrupts": []any{}}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// versionFor returns the graph version a thread runs on: the one pinned in
// memory, else the one its latest checkpoint names, else the assistant's
// current version (assistant may be empty when the thread has checkpoints).
func (s *Server) versionFor(ctx context.Context, thread, assistant string) (*graphs.Version, *checkpoint.Snapshot, error) {
	assistant = s.graphOf(ctx, assistant)
	if v, ok := s.pinned.Load(thread); ok {
		ver := v.(*graphs.Version)
		if assistant == "" || assistant == ver.Name {
			return ver, nil, nil
		}
	}
	snap, err := s.cp.Latest(ctx, thread)
	if err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
		return nil, nil, fmt.Errorf("thread %q: %w", thread, err)
	}
	if snap != nil && (assistant == "" || assistant == snap.GraphName) {
		if v, ok := s.reg.ForThread(snap.GraphName, snap.GraphHash); ok {
			s.pinned.Store(thread, v)
			return v, snap, nil
		}
		return nil, snap, notFound("thread %q belongs to graph %q, which is not loaded", thread, snap.GraphName)
	}
	if assistant == "" {
		if meta, err := s.loadThread(ctx, thread); err == nil {
			if gid, _ := meta["metadata"].(map[string]any)["graph_id"].(string); gid != "" {
				assistant = gid
			}
		}
	}
	if assistant == "" {
		if list := s.reg.List(); len(list) == 1 {
			assistant = list[0].Name
		} else {
			return nil, snap, badRequest("thread %q has no state yet; name the assistant (graph) to use", thread)
		}
	}
	v, ok := s.reg.Get(assistant)
	if !ok {
		return nil, snap, notFound("assistant %q not found (each graph is an assistant named after it)", assistant)
	}
	if snap == nil {
		s.pinned.Store(thread, v)
	}
	return v, snap, nil
}
