package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/store"
	"github.com/graphctl/graphctl/server/graphs"
)

// threadNS is the Store namespace of thread records (metadata, creation time).
var threadNS = []string{"graphctl", "threads"}

func newID() string {
	var b [16]byte
	rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func nowString() string { return time.Now().UTC().Format(time.RFC3339Nano) }

// validID rejects ids that cannot name a thread or run.
func validID(kind, id string) error {
	if id == "" || len(id) > 256 || strings.ContainsAny(id, "\x00/") {
		return badRequest("%s id %q is not valid (1-256 characters, no '/')", kind, id)
	}
	return nil
}

// loadThread returns a thread's record, or an apiError 404.
func (s *Server) loadThread(ctx context.Context, id string) (map[string]any, error) {
	it, err := s.st.Get(ctx, threadNS, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound("thread %q not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("load thread %q: %w", id, err)
	}
	return it.Value, nil
}

// ensureThread creates a thread record when none exists.
func (s *Server) ensureThread(ctx context.Context, id string, metadata map[string]any) (map[string]any, error) {
	if rec, err := s.loadThread(ctx, id); err == nil {
		return rec, nil
	}
	if metadata == nil {
		metadata = map[string]any{}
	}
	now := nowString()
	rec := map[string]any{"thread_id": id, "created_at": now, "updated_at": now, "metadata": metadata}
	if err := s.st.Put(ctx, threadNS, id, rec, store.PutOptions{Index: []string{}}); err != nil {
		return nil, fmt.Errorf("save thread %q: %w", id, err)
	}
	return rec, nil
}

type createThreadBody struct {
	ThreadID string         `json:"thread_id"`
	Metadata map[string]any `json:"metadata"`
	IfExists string         `json:"if_exists"`
}

func (s *Server) createThread(c *gin.Context) {
	var body createThreadBody
	if err := bindJSON(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	if body.ThreadID == "" {
		body.ThreadID = newID()
	}
	if err := validID("thread", body.ThreadID); err != nil {
		s.fail(c, err)
		return
	}
	if body.Metadata != nil {
		if gid, ok := body.Metadata["graph_id"]; ok && gid == nil {
			delete(body.Metadata, "graph_id")
		}
	}
	if _, err := s.loadThread(c, body.ThreadID); err == nil {
		if body.IfExists == "do_nothing" {
			s.respondThread(c, body.ThreadID)
			return
		}
		s.fail(c, conflict("thread %q already exists", body.ThreadID))
		return
	}
	if _, err := s.ensureThread(c, body.ThreadID, body.Metadata); err != nil {
		s.fail(c, err)
		return
	}
	s.respondThread(c, body.ThreadID)
}

func (s *Server) respondThread(c *gin.Context, id string) {
	t, err := s.threadObject(c, id, nil)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, t)
}

// threadObject renders LangGraph's Thread: the record, status, values and
// pending interrupts.
func (s *Server) threadObject(ctx context.Context, id string, rec map[string]any) (map[string]any, error) {
	if rec == nil {
		var err error
		if rec, err = s.loadThread(ctx, id); err != nil {
			return nil, err
		}
	}
	t := map[string]any{"thread_id": id, "created_at": rec["created_at"], "updated_at": rec["updated_at"],
		"metadata": rec["metadata"], "config": map[string]any{}, "status": "idle", "values": map[string]any{}, "interrupts": map[string]any{}}
	if t["metadata"] == nil {
		t["metadata"] = map[string]any{}
	}
	snap, err := s.cp.Latest(ctx, id)
	switch {
	case errors.Is(err, checkpoint.ErrNotFound):
	case err != nil:
		return nil, fmt.Errorf("thread %q: %w", id, err)
	default:
		var g *graphs.Version
		if v, ok := s.reg.ForThread(snap.GraphName, snap.GraphHash); ok {
			g = v
		}
		values := map[string]any{}
		if g != nil {
			values, err = decodeValues(g.Graph, snap.Values)
		} else {
			values, err = decodeValues(nil, snap.Values)
		}
		if err != nil {
			return nil, err
		}
		t["values"] = values
		t["updated_at"] = snap.CreatedAt.UTC().Format(time.RFC3339Nano)
		ins := map[string]any{}
		for _, in := range snap.Interrupts {
			ins[in.TaskID] = lgInterrupts([]checkpoint.Interrupt{in})
		}
		t["interrupts"] = ins
		switch {
		case len(snap.Interrupts) > 0:
			t["status"] = "interrupted"
		case len(snap.Next) > 0:
			t["status"] = "error"
		}
	}
	if _, busy := s.runs.Busy(id); busy {
		t["status"] = "busy"
	}
	return t, nil
}

func (s *Server) getThread(c *gin.Context) {
	id := c.Param("thread")
	c.Set(ctxThreadID, id)
	s.respondThread(c, id)
}

func (s *Server) deleteThread(c *gin.Context) {
	id := c.Param("thread")
	c.Set(ctxThreadID, id)
	if _, err := s.loadThread(c, id); err != nil {
		s.fail(c, err)
		return
	}
	if a, busy := s.runs.Busy(id); busy {
		s.runs.Cancel(c, id, a.Record().RunID, "interrupt")
		<-a.Done()
	}
	if err := s.cp.DeleteThread(c, id); err != nil {
		s.fail(c, fmt.Errorf("delete thread %q: %w", id, err))
		return
	}
	if err := s.runs.DeleteThread(c, id); err != nil {
		s.fail(c, err)
		return
	}
	if err := s.st.Delete(c, threadNS, id); err != nil && !errors.Is(err, store.ErrNotFound) {
		s.fail(c, fmt.Errorf("delete thread %q: %w", id, err))
		return
	}
	s.pinned.Delete(id)
	c.Status(http.StatusNoContent)
}

type searchThreadsBody struct {
	Metadata map[string]any `json:"metadata"`
	IDs      []string       `json:"ids"`
	Status   string         `json:"status"`
	paging
	SortBy    string `json:"sort_by"`
	SortOrder string `json:"sort_order"`
}

func (s *Server) searchThreads(c *gin.Context) {
	var body searchThreadsBody
	if err := bindJSON(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	if err := body.paging.check(10); err != nil {
		s.fail(c, err)
		return
	}
	items, err := s.st.Search(c, threadNS, store.SearchQuery{Limit: 100000})
	if err != nil {
		s.fail(c, fmt.Errorf("search threads: %w", err))
		return
	}
	ids := map[string]bool{}
	for _, id := range body.IDs {
		ids[id] = true
	}
	var recs []map[string]any
	for _, it := range items {
		if len(it.Namespace) != len(threadNS) {
			continue
		}
		if len(ids) > 0 && !ids[it.Key] {
			continue
		}
		meta, _ := it.Value["metadata"].(map[string]any)
		if !matches(meta, body.Metadata) {
			continue
		}
		recs = append(recs, it.Value)
	}
	sort.SliceStable(recs, func(i, j int) bool {
		a, _ := recs[i]["created_at"].(string)
		b, _ := recs[j]["created_at"].(string)
		if body.SortOrder == "asc" {
			return a < b
		}
		return a > b
	})
	out := []map[string]any{}
	skipped := 0
	for _, rec := range recs {
		id, _ := rec["thread_id"].(string)
		t, err := s.threadObject(c, id, rec)
		if err != nil {
			continue
		}
		if body.Status != "" && t["status"] != body.Status {
			continue
		}
		if skipped < body.Offset {
			skipped++
			continue
		}
		out = append(out, t)
		if len(out) >= body.Limit {
			break
		}
	}
	c.JSON(http.StatusOK, out)
}

// matches reports whether every key of want equals the same key of have.
func matches(have, want map[string]any) bool {
	for k, w := range want {
		h, ok := have[k]
		if !ok || fmt.Sprint(h) != fmt.Sprint(w) {
			return false
		}
	}
	return true
}

func (s *Server) getState(c *gin.Context) {
	id := c.Param("thread")
	c.Set(ctxThreadID, id)
	if _, err := s.loadThread(c, id); err != nil {
		s.fail(c, err)
		return
	}
	var snap *checkpoint.Snapshot
	var err error
	if cpID := c.Param("checkpoint"); cpID != "" {
		snap, err = s.cp.Get(c, id, cpID)
	} else {
		snap, err = s.cp.Latest(c, id)
	}
	if errors.Is(err, checkpoint.ErrNotFound) {
		if c.Param("checkpoint") != "" {
			s.fail(c, notFound("checkpoint %q of thread %q not found", c.Param("checkpoint"), id))
			return
		}
		c.JSON(http.StatusOK, emptyState())
		return
	}
	if err != nil {
		s.fail(c, fmt.Errorf("thread %q state: %w", id, err))
		return
	}
	st, err := s.stateOf(snap)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, st)
}

func (s *Server) stateOf(snap *checkpoint.Snapshot) (map[string]any, error) {
	var g *graphs.Version
	if v, ok := s.reg.ForThread(snap.GraphName, snap.GraphHash); ok {
		g = v
	}
	if g == nil {
		return threadState(nil, snap)
	}
	return threadState(g.Graph, snap)
}

type updateStateBody struct {
	Values       map[string]any `json:"values"`
	AsNode       string         `json:"as_node"`
	CheckpointID string         `json:"checkpoint_id"`
}

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
	if _, busy := s.runs.Busy(id); busy {
		s.fail(c, conflict("thread %q has an active run; update its state when the run has ended", id))
		return
	}
	ver, _, err := s.versionFor(c, id, "")
	if err != nil {
		s.fail(c, err)
		return
	}
	values, err := convertInput(ver.Graph, body.Values)
	if err != nil {
		s.fail(c, err)
		return
	}
	if values == nil {
		values = map[string]any{}
	}
	cp, err := ver.Engine.UpdateState(c, id, body.AsNode, values)
	if err != nil {
		s.fail(c, badRequest("update state of thread %q: %v", id, err))
		return
	}
	c.JSON(http.StatusOK, gin.H{"checkpoint": cpConfig(id, cp.ID), "checkpoint_id": cp.ID})
}

type historyBody struct {
	Limit  int `json:"limit"`
	Before any `json:"before"`
}

func (s *Server) history(c *gin.Context) {
	id := c.Param("thread")
	c.Set(ctxThreadID, id)
	var body historyBody
	if err := bindJSON(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	if _, err := s.loadThread(c, id); err != nil {
		s.fail(c, err)
		return
	}
	if body.Limit <= 0 {
		body.Limit = 10
	}
	if body.Limit > 1000 {
		body.Limit = 1000
	}
	before := ""
	switch b := body.Before.(type) {
	case string:
		before = b
	case map[string]any:
		conf, _ := b["configurable"].(map[string]any)
		if conf == nil {
			conf = b
		}
		before, _ = conf["checkpoint_id"].(string)
	}
	list, err := s.cp.History(c, id, checkpoint.ListOptions{Before: before, Limit: body.Limit})
	if err != nil {
		s.fail(c, fmt.Errorf("history of thread %q: %w", id, err))
		return
	}
	out := make([]map[string]any, 0, len(list))
	for _, h := range list {
		snap, err := s.cp.Get(c, id, h.ID)
		if err != nil {
			s.fail(c, fmt.Errorf("history of thread %q: checkpoint %s: %w", id, h.ID, err))
			return
		}
		st, err := s.stateOf(snap)
		if err != nil {
			s.fail(c, err)
			return
		}
		out = append(out, st)
	}
	c.JSON(http.StatusOK, out)
}
