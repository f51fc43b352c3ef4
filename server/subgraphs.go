package server

import (
	"context"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
)

// This file serves subgraphs (nodes of type subgraph) the way LangGraph's
// Agent Server does: a subgraph's namespace is "node:<task id>" (see
// engine.TaskNamespace), nested ones joined by "|" (checkpoint_ns);
// stream_subgraphs names a subgraph's events "<event>|<namespace>"; a
// thread's state shows each pending subgraph task's state (with
// subgraphs=true) or its checkpoint config; and /assistants/{id}/subgraphs
// lists the subgraphs with their schemas.

// subgraphAt returns the graph at a namespace below g ("" is g itself), or
// nil when the namespace names no subgraph node.
func subgraphAt(g *compile.Graph, ns string) *compile.Graph {
	if ns == "" {
		return g
	}
	for _, part := range strings.Split(ns, "|") {
		nodeName, _, _ := strings.Cut(part, ":")
		n := g.Nodes[nodeName]
		if n == nil || n.Subgraph == nil || n.Subgraph.Graph == nil {
			return nil
		}
		g = n.Subgraph.Graph
	}
	return g
}

// threadID is the stored id of the checkpoints the streamer reads.
func (st *streamer) threadID() string {
	if st.thread != "" {
		return st.thread
	}
	return st.rec.ThreadID
}

// subgraphEvent renders an event of a subgraph: under its namespace when
// the run streams subgraphs; otherwise only the text it streams reaches the
// chat format.
func (st *streamer) subgraphEvent(ev event.Event) {
	if !st.subgraphs {
		if ev.Type == event.Text && st.want(modeChat) {
			st.chat(ev)
		}
		return
	}
	c := st.children[ev.Namespace]
	if c == nil {
		g := subgraphAt(st.g, ev.Namespace)
		if g == nil {
			return
		}
		ns := ev.Namespace
		modes := make(map[string]bool, len(st.modes))
		for m, on := range st.modes {
			modes[m] = on && m != modeChat
		}
		c = &streamer{ctx: st.ctx, cp: st.cp, flush: st.flush, g: g, rec: st.rec, modes: modes,
			emit: func(mode, name string, data any) {
				st.emit(mode, name+"|"+ns, data)
			},
			streamed: map[string]string{}, completed: map[string]bool{},
			thread: checkpoint.NamespacedThreadID(st.rec.ThreadID, ns), ns: ns}
		if st.children == nil {
			st.children = map[string]*streamer{}
		}
		st.children[ns] = c
	}
	if ev.Type == event.Text && st.want(modeChat) {
		st.chat(ev)
	}
	ev.Namespace = ""
	c.handle(ev)
}

// addSubgraphStates sets the "state" of each task of a thread state that
// runs a subgraph: the subgraph's own state (nested ones too) when
// withStates, else the config that names its checkpoints.
func (s *Server) addSubgraphStates(ctx context.Context, g *compile.Graph, snap *checkpoint.Snapshot, state map[string]any, withStates bool) {
	tasks, _ := state["tasks"].([]map[string]any)
	if g == nil || len(tasks) == 0 {
		return
	}
	root, prefix := checkpoint.SplitThreadID(snap.ThreadID)
	if prefix != "" {
		prefix += "|"
	}
	for _, t := range snap.Next {
		n := g.Nodes[t.Node]
		if n == nil || n.Subgraph == nil || n.Subgraph.Graph == nil {
			continue
		}
		ns := engine.TaskNamespace(t, snap.ID, n.Subgraph.Persist)
		var task map[string]any
		for _, tk := range tasks {
			if tk["id"] == taskUUID(snap.ID, t.ID) {
				task = tk
			}
		}
		if task == nil {
			continue
		}
		task["state"] = map[string]any{"configurable": map[string]any{"thread_id": root, "checkpoint_ns": prefix + ns}}
		if !withStates {
			continue
		}
		child, err := s.cp.Latest(ctx, checkpoint.ChildThreadID(snap.ThreadID, ns))
		if err != nil {
			continue // not started yet
		}
		cs, err := threadState(n.Subgraph.Graph, child)
		if err != nil {
			continue
		}
		s.addSubgraphStates(ctx, n.Subgraph.Graph, child, cs, true)
		task["state"] = cs
	}
}

// assistantSubgraphs answers GET /assistants/{id}/subgraphs[/{namespace}]:
// the subgraphs of the assistant's graph by namespace (the subgraph node's
// name; with recurse=true, nested ones too, joined by "|"), each with its
// graph's schemas. A namespace lists the subgraphs below it.
func (s *Server) assistantSubgraphs(c *gin.Context) {
	_, v, ok := s.assistant(c)
	if !ok {
		return
	}
	// As LangGraph's get_subgraphs: without a namespace, the subgraph
	// nodes (and with recurse those below them, as "node|child"); with
	// one, the subgraph at that namespace alone, none when there is none.
	var ns *string
	if p := c.Param("namespace"); p != "" {
		ns = &p
	}
	out := map[string]any{}
	listSubgraphs(v.Graph, ns, queryBool(c, "recurse"), "", out)
	c.JSON(http.StatusOK, out)
}

// listSubgraphs adds to out the schemas of g's subgraphs under prefix, as
// LangGraph's Pregel.get_subgraphs yields them; found reports that ns named
// one, which ends the search.
func listSubgraphs(g *compile.Graph, ns *string, recurse bool, prefix string, out map[string]any) (found bool) {
	for _, name := range g.NodeOrder {
		if ns != nil && !strings.HasPrefix(*ns, name) {
			continue
		}
		sub := g.Nodes[name].Subgraph
		if sub == nil || sub.Graph == nil {
			continue
		}
		if ns != nil && *ns == name {
			out[prefix+name] = graphSchemas(sub.Graph.Spec.Name, sub.Graph)
			return true
		}
		if ns == nil {
			out[prefix+name] = graphSchemas(sub.Graph.Spec.Name, sub.Graph)
		}
		if recurse {
			var rest *string
			if ns != nil {
				r := strings.TrimPrefix(strings.TrimPrefix(*ns, name), "|")
				rest = &r
			}
			if listSubgraphs(sub.Graph, rest, recurse, prefix+name+"|", out) {
				return true
			}
		}
	}
	return false
}

// subgraphStateOf is stateOf for the checkpoints of the thread root or of
// its subgraph at ns, with the state or config of its subgraph tasks.
func (s *Server) subgraphStateOf(ctx context.Context, root, ns string, snap *checkpoint.Snapshot, withSubgraphs bool) (map[string]any, error) {
	var g *compile.Graph
	if ver, _, err := s.versionFor(ctx, root, ""); err == nil && ver != nil {
		g = subgraphAt(ver.Graph, ns)
	}
	if g == nil || g.Spec.Name != snap.GraphName {
		return s.stateOf(snap)
	}
	st, err := threadState(g, snap)
	if err != nil {
		return nil, err
	}
	s.addSubgraphStates(ctx, g, snap, st, withSubgraphs)
	return st, nil
}

// splitNamespace reads the checkpoint_ns of a checkpoint config (possibly
// under "configurable"): the namespace of a subgraph's checkpoints, and the
// config without it.
func splitNamespace(conf map[string]any) (string, map[string]any) {
	if inner, ok := conf["configurable"].(map[string]any); ok {
		conf = inner
	}
	ns, _ := conf["checkpoint_ns"].(string)
	if ns == "" {
		return "", conf
	}
	rest := make(map[string]any, len(conf))
	for k, v := range conf {
		if k != "checkpoint_ns" {
			rest[k] = v
		}
	}
	return ns, rest
}
