package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/engine"
)

// This file serves a thread's states over time, as LangGraph's time-travel
// clients use them: the state at any checkpoint, the history with its
// filters, and updates of the state at a checkpoint (which fork the thread
// when the checkpoint is not the newest).

// getState answers GET /threads/{id}/state and /state/{checkpoint_id}.
func (s *Server) getState(c *gin.Context) {
	s.respondState(c, c.Param("checkpoint"), "", c.Query("subgraphs") == "true")
}

type stateAtBody struct {
	Checkpoint map[string]any `json:"checkpoint"`
	Subgraphs  bool           `json:"subgraphs"`
}

// getStateAt answers POST /threads/{id}/state/checkpoint: the state at a
// checkpoint config (the SDK's getState with a checkpoint object).
func (s *Server) getStateAt(c *gin.Context) {
	var body stateAtBody
	if err := bindJSON(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	ns, conf := splitNamespace(body.Checkpoint)
	id, err := checkpointID("checkpoint", "", conf)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.respondState(c, id, ns, body.Subgraphs)
}

// respondState answers with the thread's state at checkpoint cpID, or at
// its newest checkpoint when cpID is empty.
// ns names a subgraph's checkpoints below the thread; withSubgraphs adds
// the state of each subgraph task still at work.
func (s *Server) respondState(c *gin.Context, cpID, ns string, withSubgraphs bool) {
	root := c.Param("thread")
	c.Set(ctxThreadID, root)
	if _, err := s.loadThread(c, root); err != nil {
		s.fail(c, err)
		return
	}
	id := checkpoint.NamespacedThreadID(root, ns)
	var snap *checkpoint.Snapshot
	var err error
	if cpID != "" {
		snap, err = s.cp.Get(c, id, cpID)
	} else {
		snap, err = s.cp.Latest(c, id)
	}
	if errors.Is(err, checkpoint.ErrNotFound) {
		if cpID != "" {
			s.fail(c, notFound("%s not found", checkpointName(cpID, root, ns)))
			return
		}
		c.JSON(http.StatusOK, emptyState())
		return
	}
	if err != nil {
		s.fail(c, fmt.Errorf("state of %s: %w", threadName(root, ns), err))
		return
	}
	st, err := s.subgraphStateOf(c, root, ns, snap, withSubgraphs)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.checkpointAssistants(root).add(c, st)
	c.JSON(http.StatusOK, st)
}

type updateStateBody struct {
	Values       map[string]any `json:"values"`
	AsNode       string         `json:"as_node"`
	CheckpointID string         `json:"checkpoint_id"`
	Checkpoint   map[string]any `json:"checkpoint"`
}

// updateState answers POST /threads/{id}/state: values written as if
// as_node had written them, at the newest checkpoint or at the one named by
// checkpoint_id or checkpoint (a fork when it is an older one). A checkpoint
// config with a checkpoint_ns (as get_state with subgraphs shows a pending
// task's) updates that subgraph's state, which the thread goes on from; it
// answers with the subgraph's new checkpoint, as LangGraph does.
func (s *Server) updateState(c *gin.Context) {
	id := c.Param("thread")
	c.Set(ctxThreadID, id)
	var body updateStateBody
	if err := bindJSON(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	if _, err := s.loadThread(c, id); err != nil {
		s.fail(c, err)
		return
	}
	ns, conf := splitNamespace(body.Checkpoint)
	cpID, err := checkpointID("checkpoint", body.CheckpointID, conf)
	if err != nil {
		s.fail(c, err)
		return
	}
	held, release, err := s.holdThread(c, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	defer release()
	ver, _, err := s.versionFor(c, id, "")
	if err != nil {
		s.fail(c, err)
		return
	}
	g := subgraphAt(ver.Graph, ns)
	if g == nil {
		s.fail(c, notFound("graph %q has no subgraph at checkpoint namespace %q", ver.Graph.Spec.Name, ns))
		return
	}
	values, err := convertInput(g, body.Values)
	if err != nil {
		s.fail(c, err)
		return
	}
	if values == nil && body.AsNode != engine.AsEnd {
		values = map[string]any{}
	}
	update := [][]engine.StateUpdate{{{Values: values, AsNode: body.AsNode}}}
	cp, err := ver.Engine.UpdateSubgraphState(held, id, ns, cpID, update)
	switch {
	case errors.Is(err, engine.ErrCheckpointNotFound):
		s.fail(c, notFound("%s not found", checkpointName(cpID, id, ns)))
		return
	case errors.Is(err, engine.ErrNotWaitingInSubgraph):
		s.fail(c, conflict("update state of thread %q: %v", id, err)) // it names the namespace
		return
	case err != nil && ns != "":
		s.fail(c, badRequest("%v", err)) // it names the thread and the namespace
		return
	case err != nil:
		s.fail(c, badRequest("update state of %s: %v", threadName(id, ns), err))
		return
	}
	s.publishStateUpdate(id, cp.ThreadID, cp.ID, body.AsNode, body.Values)
	c.JSON(http.StatusOK, gin.H{"checkpoint": cpConfig(cp.ThreadID, cp.ID), "checkpoint_id": cp.ID})
}

// threadName names the checkpoints of thread root, or of its subgraph at
// namespace ns, for a message.
func threadName(root, ns string) string {
	if ns == "" {
		return fmt.Sprintf("thread %q", root)
	}
	return fmt.Sprintf("subgraph namespace %q of thread %q", ns, root)
}

// checkpointName names checkpoint id of thread root, or of its subgraph at
// namespace ns, for a message.
func checkpointName(id, root, ns string) string {
	if ns == "" {
		return fmt.Sprintf("checkpoint %q of thread %q", id, root)
	}
	return fmt.Sprintf("checkpoint %q in subgraph namespace %q of thread %q", id, ns, root)
}

type historyBody struct {
	Limit      *int           `json:"limit"`
	Before     any            `json:"before"`
	Metadata   map[string]any `json:"metadata"`
	Checkpoint map[string]any `json:"checkpoint"`
}

// historyGet answers GET /threads/{id}/history (the Agent Server's query
// form: limit, before) as POST /threads/{id}/history does.
func (s *Server) historyGet(c *gin.Context) {
	body := map[string]any{}
	if raw, ok := c.GetQuery("limit"); ok {
		n, err := strconv.Atoi(raw)
		if err != nil {
			s.fail(c, invalid("limit must be an integer, got %q", raw))
			return
		}
		body["limit"] = n
	}
	if before := c.Query("before"); before != "" {
		body["before"] = before
	}
	b, _ := json.Marshal(body)
	c.Request.Body = io.NopCloser(bytes.NewReader(b))
	c.Request.ContentLength = int64(len(b))
	s.history(c)
}

// history answers POST /threads/{id}/history: states newest first, older
// than before, whose metadata has every key of the metadata filter, at the
// checkpoint named by checkpoint when it names one.
func (s *Server) history(c *gin.Context) {
	root := c.Param("thread")
	c.Set(ctxThreadID, root)
	var body historyBody
	if err := bindJSON(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	if _, err := s.loadThread(c, root); err != nil {
		s.fail(c, err)
		return
	}
	// checkpoint.checkpoint_ns lists a subgraph's checkpoints.
	ns, conf := splitNamespace(body.Checkpoint)
	body.Checkpoint = conf
	id := checkpoint.NamespacedThreadID(root, ns)
	limit := 10
	if body.Limit != nil {
		if *body.Limit < 1 || *body.Limit > maxLimit {
			s.fail(c, invalid("limit must be between 1 and %d, got %d", maxLimit, *body.Limit))
			return
		}
		limit = *body.Limit
	}
	before := ""
	switch b := body.Before.(type) {
	case nil:
	case string:
		before = b
	case map[string]any:
		bns, conf := splitNamespace(b)
		if bns != ns {
			s.fail(c, invalid("before names checkpoint %q in namespace %q, but the history lists %s", checkpointIDOf(conf), bns, threadName(root, ns)))
			return
		}
		var err error
		if before, err = checkpointID("before", "", conf); err != nil {
			s.fail(c, err)
			return
		}
	default:
		s.fail(c, invalid("before must be a checkpoint id or a checkpoint config"))
		return
	}
	only, err := checkpointID("checkpoint", "", body.Checkpoint)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := []map[string]any{}
	assistants := s.checkpointAssistants(root)
	add := func(snap *checkpoint.Snapshot) error {
		if before != "" && snap.ID >= before {
			return nil
		}
		st, err := s.stateOf(snap)
		if err != nil {
			return err
		}
		assistants.add(c, st)
		if matchesJSON(st["metadata"].(map[string]any), body.Metadata) {
			out = append(out, st)
		}
		return nil
	}
	if only != "" {
		snap, err := s.cp.Get(c, id, only)
		if err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
			s.fail(c, fmt.Errorf("history of %s: %w", threadName(root, ns), err))
			return
		}
		if err == nil {
			if err := add(snap); err != nil {
				s.fail(c, err)
				return
			}
		}
		c.JSON(http.StatusOK, out)
		return
	}
	// Page through the checkpoints until limit states match the filter.
	page := limit
	if len(body.Metadata) > 0 {
		page = max(limit, 50)
	}
	for len(out) < limit {
		list, err := s.cp.History(c, id, checkpoint.ListOptions{Before: before, Limit: page})
		if err != nil {
			s.fail(c, fmt.Errorf("history of %s: %w", threadName(root, ns), err))
			return
		}
		for _, h := range list {
			snap, err := s.cp.Get(c, id, h.ID)
			if errors.Is(err, checkpoint.ErrNotFound) {
				continue // removed since it was listed (a rollback, a prune)
			}
			if err != nil {
				s.fail(c, fmt.Errorf("history of %s: checkpoint %s: %w", threadName(root, ns), h.ID, err))
				return
			}
			if err := add(snap); err != nil {
				s.fail(c, err)
				return
			}
			if len(out) == limit {
				break
			}
		}
		if len(list) < page {
			break
		}
		before = list[len(list)-1].ID
	}
	c.JSON(http.StatusOK, out)
}

// matchesJSON reports whether every key of want has an equal value (as
// JSON) in have.
func matchesJSON(have, want map[string]any) bool {
	for k, w := range want {
		h, ok := have[k]
		if !ok {
			return false
		}
		hb, _ := json.Marshal(h)
		wb, _ := json.Marshal(w)
		if string(hb) != string(wb) {
			return false
		}
	}
	return true
}
