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
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/store"
	"github.com/graphctl/graphctl/server/graphs"
)

// threadNS is the Store namespace of thread records (metadata, creation time).
var threadNS = []string{"graphctl", "threads"}

// newID returns a thread or run id: a random (version 4) UUID, as LangGraph
// generates them.
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func nowString() string { return time.Now().UTC().Format(time.RFC3339Nano) }

// validID rejects ids that cannot name a thread or run.
func validID(kind, id string) error {
	if id == "" || len(id) > 256 || strings.ContainsAny(id, "\x00/"+checkpoint.NamespaceSep) {
		return invalid("%s id %q is not valid (1-256 characters, no '/', NUL or \\x1f)", kind, id)
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
	s.noted.forget(id)
	if err := s.st.Put(ctx, threadNS, id, rec, store.PutOptions{Index: []string{}}); err != nil {
		return nil, fmt.Errorf("save thread %q: %w", id, err)
	}
	return rec, nil
}

type createThreadBody struct {
	ThreadID   string         `json:"thread_id"`
	Metadata   map[string]any `json:"metadata"`
	IfExists   string         `json:"if_exists"`
	Supersteps []superstep    `json:"supersteps"`
	TTL        any            `json:"ttl"`
}

// superstep is one step of updates applied to a new thread, as if the nodes
// named by as_node had written them.
type superstep struct {
	Updates []struct {
		Values  map[string]any `json:"values"`
		Command *struct {
			Update map[string]any `json:"update"`
			Resume any            `json:"resume"`
			Goto   any            `json:"goto"`
		} `json:"command"`
		AsNode string `json:"as_node"`
	} `json:"updates"`
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
	ttl, err := parseThreadTTL(body.TTL)
	if err != nil {
		s.fail(c, err)
		return
	}
	switch body.IfExists {
	case "", "raise", "do_nothing":
	default:
		s.fail(c, invalid("if_exists %q is not one of raise, do_nothing", body.IfExists))
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
	if len(body.Supersteps) > 0 {
		if err := s.checkSupersteps(body.Metadata, body.Supersteps); err != nil {
			s.fail(c, err)
			return
		}
	}
	rec, err := s.ensureThread(c, body.ThreadID, body.Metadata)
	if err != nil {
		s.fail(c, err)
		return
	}
	if ttl != nil {
		if err := s.setThreadTTL(c, body.ThreadID, rec, ttl); err != nil {
			s.fail(c, err)
			return
		}
		s.noted.forget(body.ThreadID)
		if err := s.st.Put(c, threadNS, body.ThreadID, rec, store.PutOptions{Index: []string{}}); err != nil {
			s.fail(c, fmt.Errorf("save thread %q: %w", body.ThreadID, err))
			return
		}
	}
	if len(body.Supersteps) > 0 {
		if err := s.applySupersteps(c, body.ThreadID, body.Supersteps); err != nil {
			s.removeThread(context.WithoutCancel(c), body.ThreadID)
			s.fail(c, err)
			return
		}
	}
	s.respondThread(c, body.ThreadID)
}

// checkSupersteps validates a new thread's supersteps before it exists.
func (s *Server) checkSupersteps(meta map[string]any, steps []superstep) error {
	gid, _ := meta["graph_id"].(string)
	if gid == "" {
		return invalid("supersteps need the thread's graph: set metadata.graph_id (the SDK's graphId)")
	}
	v, ok := s.reg.Get(s.graphOf(context.Background(), gid))
	if !ok {
		return notFound("graph %q is not loaded", gid)
	}
	for i, st := range steps {
		for j, u := range st.Updates {
			where := fmt.Sprintf("supersteps[%d].updates[%d]", i, j)
			if u.Command != nil && (u.Command.Resume != nil || u.Command.Goto != nil) {
				return invalid("%s.command: only update is supported when creating a thread", where)
			}
			if u.AsNode != "" && u.AsNode != "__start__" && u.AsNode != "__input__" {
				if _, ok := v.Graph.Nodes[u.AsNode]; !ok {
					return invalid("%s.as_node %q is not a node of graph %q", where, u.AsNode, v.Name)
				}
			}
			vals := u.Values
			if u.Command != nil {
				vals = u.Command.Update
			}
			if _, err := convertInput(v.Graph, vals); err != nil {
				return invalid("%s.values: %v", where, err)
			}
		}
	}
	return nil
}

// applySupersteps writes a new thread's supersteps, one checkpoint per
// superstep, its updates applied together (LangGraph's bulk update).
func (s *Server) applySupersteps(ctx context.Context, thread string, steps []superstep) error {
	ver, _, err := s.versionFor(ctx, thread, "")
	if err != nil {
		return err
	}
	bulk := make([][]engine.StateUpdate, 0, len(steps))
	for _, st := range steps {
		var updates []engine.StateUpdate
		for _, u := range st.Updates {
			vals := u.Values
			if u.Command != nil {
				vals = u.Command.Update
			}
			in, err := convertInput(ver.Graph, vals)
			if err != nil {
				return err
			}
			if in == nil {
				in = map[string]any{}
			}
			asNode := u.AsNode
			if asNode == "__start__" {
				asNode = ""
			}
			updates = append(updates, engine.StateUpdate{Values: in, AsNode: asNode})
		}
		bulk = append(bulk, updates)
	}
	if len(bulk) == 0 {
		return nil
	}
	held, release, err := s.holdThread(ctx, thread)
	if err != nil {
		return err
	}
	defer release()
	if _, err := ver.Engine.BulkUpdateState(held, thread, "", bulk); err != nil {
		return invalid("supersteps: %v", err)
	}
	return nil
}

func (s *Server) respondThread(c *gin.Context, id string) {
	t, err := s.threadObject(c, id, nil, nil)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, t)
}

// threadObject renders LangGraph's Thread: the record, status, values and
// pending interrupts. As on LangGraph's Agent Server, a thread is busy from
// the moment a run is created on it (one waiting for its start time, or
// queued behind another, too) until its last such run ends. unended, when
// not nil, holds the threads that have such a run (UnendedThreads, read
// once for a listing); else the run manager is asked for this thread.
func (s *Server) threadObject(ctx context.Context, id string, rec map[string]any, unended map[string]bool) (map[string]any, error) {
	if rec == nil {
		var err error
		if rec, err = s.loadThread(ctx, id); err != nil {
			return nil, err
		}
	}
	t := map[string]any{"thread_id": id, "created_at": rec["created_at"], "updated_at": rec["updated_at"],
		"state_updated_at": rec["updated_at"],
		"metadata":         rec["metadata"], "config": map[string]any{}, "status": "idle", "values": map[string]any{}, "interrupts": map[string]any{}}
	if t["metadata"] == nil {
		t["metadata"] = map[string]any{}
	}
	if ttl, ok := rec["ttl"]; ok {
		t["ttl"] = ttl
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
		t["state_updated_at"] = t["updated_at"]
		ins := map[string]any{}
		for _, in := range taskInterrupts(snap) {
			ins[taskUUID(snap.ID, in.TaskID)] = lgInterrupts([]checkpoint.Interrupt{in})
		}
		t["interrupts"] = ins
		t["status"] = threadStatus(snap)
		if t["status"] == "error" {
			// The SDK's Thread.error: what the failed run left.
			t["error"] = firstTaskError(snap)
		}
	}
	busy := unended[id]
	if unended == nil {
		if busy, err = s.runs.Unended(ctx, id); err != nil {
			return nil, fmt.Errorf("thread %q: its runs: %w", id, err)
		}
	}
	if busy {
		t["status"] = "busy"
	}
	return t, nil
}

// firstTaskError is one message of a checkpoint's recorded failures (that
// of the first task id), or nil.
func firstTaskError(snap *checkpoint.Snapshot) any {
	errs := taskErrors(snap)
	if len(errs) == 0 {
		return nil
	}
	ids := make([]string, 0, len(errs))
	for id := range errs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return errs[ids[0]]
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
	if err := s.removeThread(c, id); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// removeThread cancels a thread's active run and deletes the thread with
// its checkpoints and run records.
func (s *Server) removeThread(ctx context.Context, id string) error {
	if a, busy := s.runs.Busy(id); busy {
		s.runs.Cancel(ctx, id, a.Record().RunID, "interrupt")
		<-a.Done()
	}
	if err := checkpoint.DeleteThreadTree(ctx, s.cp, id); err != nil {
		return fmt.Errorf("delete thread %q: %w", id, err)
	}
	if err := s.runs.DeleteThread(ctx, id); err != nil {
		return err
	}
	s.noted.forget(id)
	if err := s.st.Delete(ctx, threadNS, id); err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("delete thread %q: %w", id, err)
	}
	// Its open thread streams end.
	s.watchers.notify(id, nil)
	s.protocol.forget(id)
	if err := s.st.Delete(ctx, threadTTLNS, id); err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("delete the ttl of thread %q: %w", id, err)
	}
	s.pinned.Delete(id)
	s.removeThreadCrons(ctx, id)
	return nil
}

// threadRecords lists every thread record.
func (s *Server) threadRecords(ctx context.Context) ([]map[string]any, error) {
	items, err := s.st.Search(ctx, threadNS, store.SearchQuery{Limit: 10000000})
	if err != nil {
		return nil, fmt.Errorf("list threads: %w", err)
	}
	out := make([]map[string]any, 0, len(items))
	for _, it := range items {
		if len(it.Namespace) == len(threadNS) {
			out = append(out, it.Value)
		}
	}
	return out, nil
}

// threadFilter selects threads by metadata, values and status (LangGraph's
// jsonb containment for the first two).
type threadFilter struct {
	Metadata map[string]any `json:"metadata"`
	Values   map[string]any `json:"values"`
	Status   string         `json:"status"`
	IDs      []string       `json:"ids"`
}

func (f *threadFilter) check() error {
	switch f.Status {
	case "", "idle", "busy", "interrupted", "error":
		return nil
	}
	return invalid("status %q is not one of idle, busy, interrupted, error", f.Status)
}

// needsState says whether matching needs each thread's state.
func (f *threadFilter) needsState() bool { return f.Status != "" || len(f.Values) > 0 }

func (f *threadFilter) matchRecord(rec map[string]any, ids map[string]bool) bool {
	if len(ids) > 0 {
		id, _ := rec["thread_id"].(string)
		if !ids[id] {
			return false
		}
	}
	if len(f.Metadata) == 0 {
		return true
	}
	meta, _ := rec["metadata"].(map[string]any)
	return jsonContains(meta, f.Metadata)
}

func (f *threadFilter) matchObject(t map[string]any) bool {
	if f.Status != "" && t["status"] != f.Status {
		return false
	}
	return len(f.Values) == 0 || jsonContains(t["values"], f.Values)
}

type searchThreadsBody struct {
	threadFilter
	paging
	SortBy    string   `json:"sort_by"`
	SortOrder string   `json:"sort_order"`
	Select    []string `json:"select"`
	// Extract maps names to paths into each thread found (see
	// threads_extract.go).
	Extract any `json:"extract"`
}

// findThreads returns the records matching f (by metadata and ids), sorted
// by created_at (newest first unless asc).
func (s *Server) findThreads(ctx context.Context, f *threadFilter, asc bool) ([]map[string]any, error) {
	all, err := s.threadRecords(ctx)
	if err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	for _, id := range f.IDs {
		ids[id] = true
	}
	recs := all[:0]
	for _, rec := range all {
		if f.matchRecord(rec, ids) {
			recs = append(recs, rec)
		}
	}
	sort.SliceStable(recs, func(i, j int) bool {
		a, _ := recs[i]["created_at"].(string)
		b, _ := recs[j]["created_at"].(string)
		if asc {
			return a < b
		}
		return a > b
	})
	return recs, nil
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
	if err := body.threadFilter.check(); err != nil {
		s.fail(c, err)
		return
	}
	if err := checkSort(body.SortBy, body.SortOrder, "thread_id", "status", "created_at", "updated_at", "state_updated_at"); err != nil {
		s.fail(c, err)
		return
	}
	if err := checkSelect(body.Select, threadFields); err != nil {
		s.fail(c, err)
		return
	}
	extract, err := extractPaths(body.Extract)
	if err != nil {
		s.fail(c, err)
		return
	}
	asc := body.SortOrder == "asc"
	recs, err := s.findThreads(c, &body.threadFilter, asc)
	if err != nil {
		s.fail(c, err)
		return
	}
	by := body.SortBy
	if by == "" {
		by = "created_at"
	}
	unended, err := s.runs.UnendedThreads(c)
	if err != nil {
		s.fail(c, fmt.Errorf("search threads: their runs: %w", err))
		return
	}
	var out []map[string]any
	total := len(recs)
	if !body.needsState() && by == "created_at" {
		// Only the page's threads need their state.
		for _, rec := range pageOf(recs, body.paging) {
			id, _ := rec["thread_id"].(string)
			if t, err := s.threadObject(c, id, rec, unended); err == nil {
				out = append(out, t)
			}
		}
	} else {
		var found []map[string]any
		for _, rec := range recs {
			id, _ := rec["thread_id"].(string)
			t, err := s.threadObject(c, id, rec, unended)
			if err != nil || !body.matchObject(t) {
				continue
			}
			found = append(found, t)
		}
		if by != "created_at" {
			sortObjects(found, by, "thread_id", asc)
		}
		total = len(found)
		out = pageOf(found, body.paging)
	}
	res := make([]map[string]any, len(out))
	for i, t := range out {
		res[i] = pick(t, body.Select)
		if extract != nil {
			res[i]["extracted"] = extractFrom(t, extract)
		}
	}
	setPagination(c, body.paging, len(res), total)
	c.JSON(http.StatusOK, res)
}

func (s *Server) countThreads(c *gin.Context) {
	var body threadFilter
	if err := bindJSON(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	if err := body.check(); err != nil {
		s.fail(c, err)
		return
	}
	recs, err := s.findThreads(c, &body, false)
	if err != nil {
		s.fail(c, err)
		return
	}
	if !body.needsState() {
		c.JSON(http.StatusOK, len(recs))
		return
	}
	unended, err := s.runs.UnendedThreads(c)
	if err != nil {
		s.fail(c, fmt.Errorf("count threads: their runs: %w", err))
		return
	}
	n := 0
	for _, rec := range recs {
		id, _ := rec["thread_id"].(string)
		if t, err := s.threadObject(c, id, rec, unended); err == nil && body.matchObject(t) {
			n++
		}
	}
	c.JSON(http.StatusOK, n)
}

type patchThreadBody struct {
	Metadata map[string]any `json:"metadata"`
	TTL      any            `json:"ttl"`
}

// patchThread merges metadata into a thread's.
func (s *Server) patchThread(c *gin.Context) {
	id := c.Param("thread")
	c.Set(ctxThreadID, id)
	var body patchThreadBody
	if err := bindJSON(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	ttl, err := parseThreadTTL(body.TTL)
	if err != nil {
		s.fail(c, err)
		return
	}
	rec, err := s.loadThread(c, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	meta, _ := rec["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	for k, v := range body.Metadata {
		meta[k] = v
	}
	rec["metadata"] = meta
	rec["updated_at"] = nowString()
	if ttl != nil {
		if err := s.setThreadTTL(c, id, rec, ttl); err != nil {
			s.fail(c, err)
			return
		}
	}
	s.noted.forget(id)
	if err := s.st.Put(c, threadNS, id, rec, store.PutOptions{Index: []string{}}); err != nil {
		s.fail(c, fmt.Errorf("save thread %q: %w", id, err))
		return
	}
	if preferMinimal(c) {
		// The Python SDK's update(return_minimal=True).
		c.Status(http.StatusNoContent)
		return
	}
	s.respondThread(c, id)
}

// preferMinimal reports whether a request asks for no body in the answer
// (Prefer: return=minimal, RFC 7240).
func preferMinimal(c *gin.Context) bool {
	for _, v := range c.Request.Header.Values("Prefer") {
		for _, p := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(p), "return=minimal") {
				return true
			}
		}
	}
	return false
}

// copyThread copies a thread — its metadata and every checkpoint, with the
// checkpoints of its subgraphs and the pending writes — into a new thread.
// The thread is held meanwhile, as for a state update: no run or update
// writes to it during the copy, which is of a state the thread had; a
// thread with an active run is busy (409).
func (s *Server) copyThread(c *gin.Context) {
	id := c.Param("thread")
	c.Set(ctxThreadID, id)
	rec, err := s.loadThread(c, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	_, release, err := s.hold(c, id, "copy it")
	if err != nil {
		s.fail(c, err)
		return
	}
	defer release()
	newThread := newID()
	meta := map[string]any{}
	if m, ok := rec["metadata"].(map[string]any); ok {
		for k, v := range m {
			meta[k] = v
		}
	}
	meta["thread_id"] = newThread
	if err := s.copyCheckpoints(c, id, newThread); err != nil {
		checkpoint.DeleteThreadTree(context.WithoutCancel(c), s.cp, newThread)
		s.fail(c, err)
		return
	}
	if _, err := s.ensureThread(c, newThread, meta); err != nil {
		s.fail(c, err)
		return
	}
	s.respondThread(c, newThread)
}

// copyCheckpoints copies the checkpoints of thread from, and those of its
// subgraphs, into thread to. A subgraph's namespace names the parent
// checkpoint and task it ran for, whose ids the copy keeps: each one's
// checkpoints go to the same namespace below the copy, where the copy's
// tasks find them (a task waiting inside a subgraph goes on there).
func (s *Server) copyCheckpoints(ctx context.Context, from, to string) error {
	children, err := checkpoint.ChildThreads(ctx, s.cp, from)
	if err != nil {
		return fmt.Errorf("copy thread %q: list its subgraphs' checkpoints: %w", from, err)
	}
	if err := s.copyThreadCheckpoints(ctx, from, to); err != nil {
		return fmt.Errorf("copy thread %q: %w", from, err)
	}
	for _, child := range children {
		if err := s.copyThreadCheckpoints(ctx, child, to+strings.TrimPrefix(child, from)); err != nil {
			return fmt.Errorf("copy thread %q: subgraph namespace %q: %w", from, namespaceOf(child), err)
		}
	}
	return nil
}

// copyThreadCheckpoints writes every checkpoint of the stored thread from
// into the stored thread to, oldest first, with the same ids and field
// versions, then the pending writes saved against each (a step's finished
// tasks, a failure): writing a checkpoint discards the writes saved
// against its parent, so they come after all of them.
func (s *Server) copyThreadCheckpoints(ctx context.Context, from, to string) error {
	list, err := s.cp.History(ctx, from, checkpoint.ListOptions{})
	if err != nil {
		if errors.Is(err, checkpoint.ErrNotFound) {
			return nil
		}
		return err
	}
	type saved struct {
		checkpointID string
		writes       []checkpoint.PendingWrite
	}
	var pending []saved
	written := map[string]int64{}
	for i := len(list) - 1; i >= 0; i-- {
		snap, err := s.cp.Get(ctx, from, list[i].ID)
		if err != nil {
			return fmt.Errorf("checkpoint %s: %w", list[i].ID, err)
		}
		cp := snap.Checkpoint
		cp.ThreadID = to
		var blobs []checkpoint.Blob
		for field, v := range cp.Versions {
			if seen, ok := written[field]; ok && seen == v {
				continue
			}
			blobs = append(blobs, checkpoint.Blob{Field: field, Version: v, Data: snap.Values[field]})
			written[field] = v
		}
		if err := s.cp.Put(ctx, cp, blobs); err != nil {
			return fmt.Errorf("checkpoint %s: %w", cp.ID, err)
		}
		if len(snap.Pending) > 0 {
			pending = append(pending, saved{cp.ID, snap.Pending})
		}
	}
	for _, p := range pending {
		for _, w := range p.writes {
			if err := s.cp.PutWrites(ctx, to, p.checkpointID, w); err != nil {
				return fmt.Errorf("checkpoint %s: pending write of task %s: %w", p.checkpointID, w.TaskID, err)
			}
		}
	}
	return nil
}

type pruneBody struct {
	ThreadIDs []string `json:"thread_ids"`
	Strategy  string   `json:"strategy"`
}

// pruneThreads deletes threads (strategy delete) or their checkpoints but
// the latest (keep_latest).
func (s *Server) pruneThreads(c *gin.Context) {
	var body pruneBody
	if err := bindJSON(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	if body.ThreadIDs == nil {
		s.fail(c, invalid("thread_ids is required"))
		return
	}
	switch body.Strategy {
	case "":
		body.Strategy = "delete"
	case "delete", "keep_latest":
	default:
		s.fail(c, invalid("strategy %q is not one of delete, keep_latest", body.Strategy))
		return
	}
	n := 0
	for _, id := range body.ThreadIDs {
		if _, err := s.loadThread(c, id); err != nil {
			continue
		}
		if body.Strategy == "delete" {
			if err := s.removeThread(c, id); err != nil {
				s.fail(c, err)
				return
			}
		} else {
			if _, busy := s.runs.Busy(id); busy {
				continue
			}
			if err := s.keepLatest(c, id); err != nil {
				s.fail(c, err)
				return
			}
		}
		n++
	}
	c.JSON(http.StatusOK, gin.H{"pruned_count": n})
}

// keepLatest prunes a thread to its newest checkpoint (LangGraph's
// keep_latest), and its subgraphs' checkpoints with it (see PruneThread),
// on the graph versions the registry holds.
func (s *Server) keepLatest(ctx context.Context, id string) error {
	return PruneThread(ctx, s.cp, id, 1, func(snap *checkpoint.Snapshot) *compile.Graph {
		if v, ok := s.reg.ForThread(snap.GraphName, snap.GraphHash); ok {
			return v.Graph
		}
		return nil
	})
}

// PruneThread keeps a thread's newest keep checkpoints and deletes the
// older ones, and prunes its subgraphs' checkpoints with it: each namespace
// the thread can still go on in from one of the checkpoints it keeps keeps
// its newest keep checkpoints, and the others (the finished subgraphs of
// earlier steps) are deleted. graphOf returns the graph a checkpoint of the
// thread runs on, or nil when it is not known; then every namespace keeps
// its newest keep checkpoints, as LangGraph's keep_latest does. A thread
// that does not exist is not an error.
func PruneThread(ctx context.Context, cp checkpoint.Checkpointer, id string, keep int, graphOf func(*checkpoint.Snapshot) *compile.Graph) error {
	if err := cp.Prune(ctx, id, keep); err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
		return fmt.Errorf("prune thread %q: %w", id, err)
	}
	children, err := checkpoint.ChildThreads(ctx, cp, id)
	if err != nil {
		return fmt.Errorf("prune thread %q: list its subgraphs' checkpoints: %w", id, err)
	}
	if len(children) == 0 {
		return nil
	}
	live, err := keptNamespaces(ctx, cp, id, keep, children, graphOf)
	if err != nil {
		return fmt.Errorf("prune thread %q: %w", id, err)
	}
	for _, child := range children {
		ns := namespaceOf(child)
		if live != nil && !live[child] {
			if err := cp.DeleteThread(ctx, child); err != nil {
				return fmt.Errorf("prune thread %q: delete subgraph namespace %q: %w", id, ns, err)
			}
			continue
		}
		if err := cp.Prune(ctx, child, keep); err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
			return fmt.Errorf("prune thread %q: subgraph namespace %q: %w", id, ns, err)
		}
	}
	return nil
}

// keptNamespaces returns the set of the stored subgraph threads children
// that the thread can go on in from one of its newest keep checkpoints, or
// nil when that is not known: the thread has no checkpoint, or the graph of
// one of them is not known.
func keptNamespaces(ctx context.Context, cp checkpoint.Checkpointer, id string, keep int, children []string, graphOf func(*checkpoint.Snapshot) *compile.Graph) (map[string]bool, error) {
	list, err := cp.History(ctx, id, checkpoint.ListOptions{Limit: keep})
	if err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
		return nil, err
	}
	if len(list) == 0 {
		return nil, nil // no checkpoint of its own: what it goes on in is not known
	}
	live := map[string]bool{}
	for _, c := range list {
		snap := &checkpoint.Snapshot{Checkpoint: c}
		g := graphOf(snap)
		if g == nil {
			return nil, nil
		}
		if err := liveNamespaces(ctx, cp, snap, g, children, live); err != nil {
			return nil, err
		}
	}
	return live, nil
}

// liveNamespaces marks in live, among the stored subgraph threads children,
// those that snap (a checkpoint of a thread of graph g, or of a subgraph)
// can go on in, and in turn those below them: the namespace each of its
// subgraph tasks waits or will run in, and every namespace of a subgraph
// node that keeps its state from one run to the next.
func liveNamespaces(ctx context.Context, cp checkpoint.Checkpointer, snap *checkpoint.Snapshot, g *compile.Graph, children []string, live map[string]bool) error {
	mark := func(id string, sub *compile.Graph) error {
		if live[id] {
			return nil
		}
		live[id] = true
		child, err := cp.Latest(ctx, id)
		if errors.Is(err, checkpoint.ErrNotFound) {
			return nil // not started yet
		}
		if err != nil {
			return fmt.Errorf("subgraph namespace %q: %w", namespaceOf(id), err)
		}
		return liveNamespaces(ctx, cp, child, sub, children, live)
	}
	for _, t := range snap.Next {
		n := g.Nodes[t.Node]
		if n == nil || n.Subgraph == nil || n.Subgraph.Graph == nil {
			continue
		}
		ns := engine.TaskNamespace(t, snap.ID, n.Subgraph.Persist)
		if t.Namespace == "" && len(t.Resume) > 0 {
			ns = t.Node + ":" + t.ID // answers for a child that waits where tasks once did
		}
		if err := mark(checkpoint.ChildThreadID(snap.ThreadID, ns), n.Subgraph.Graph); err != nil {
			return err
		}
	}
	prefix := checkpoint.ChildPrefix(snap.ThreadID)
	for _, child := range children {
		ns, below := strings.CutPrefix(child, prefix)
		if !below || strings.Contains(ns, checkpoint.NamespaceSep) {
			continue
		}
		name, _, _ := strings.Cut(ns, ":")
		if n := g.Nodes[name]; n != nil && n.Subgraph != nil && n.Subgraph.Persist && n.Subgraph.Graph != nil {
			if err := mark(child, n.Subgraph.Graph); err != nil {
				return err
			}
		}
	}
	return nil
}

// namespaceOf is the namespace, below its root thread, of a stored thread
// id, nested ones joined by "|".
func namespaceOf(id string) string {
	_, ns := checkpoint.SplitThreadID(id)
	return ns
}

// patchState merges metadata into the metadata of a thread's latest
// checkpoint (the SDK's threads.patchState).
func (s *Server) patchState(c *gin.Context) {
	id := c.Param("thread")
	c.Set(ctxThreadID, id)
	var body struct {
		Metadata map[string]any `json:"metadata"`
	}
	if err := bindJSON(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	if body.Metadata == nil {
		s.fail(c, invalid("metadata is required (an object)"))
		return
	}
	if _, err := s.loadThread(c, id); err != nil {
		s.fail(c, err)
		return
	}
	if _, busy := s.runs.Busy(id); busy {
		s.fail(c, conflict("thread %q has an active run; patch its state when the run has ended", id))
		return
	}
	snap, err := s.cp.Latest(c, id)
	if errors.Is(err, checkpoint.ErrNotFound) {
		s.fail(c, notFound("thread %q has no state to patch yet", id))
		return
	}
	if err != nil {
		s.fail(c, fmt.Errorf("thread %q state: %w", id, err))
		return
	}
	cp := snap.Checkpoint
	meta := map[string]any{}
	for k, v := range cp.Metadata {
		meta[k] = v
	}
	for k, v := range body.Metadata {
		meta[k] = v
	}
	cp.Metadata = meta
	if err := s.cp.Put(c, cp, nil); err != nil {
		s.fail(c, fmt.Errorf("patch state of thread %q: %w", id, err))
		return
	}
	c.Status(http.StatusNoContent)
}

// noteRunOnThread records the assistant and graph of a run in its thread's
// metadata, as LangGraph does (agent UIs list threads by
// metadata.graph_id); with create, a missing thread is created with them
// and the run's metadata.
func (s *Server) noteRunOnThread(ctx context.Context, thread string, a *assistantRec, runMeta map[string]any, create bool) error {
	if s.noted.has(thread, a.GraphID, a.AssistantID) {
		return nil
	}
	gen := s.noted.generation()
	rec, err := s.loadThread(ctx, thread)
	if err != nil {
		var ae *apiError
		if !create || !errors.As(err, &ae) || ae.status != http.StatusNotFound {
			return err
		}
		meta := map[string]any{}
		for k, v := range runMeta {
			meta[k] = v
		}
		meta["graph_id"], meta["assistant_id"] = a.GraphID, a.AssistantID
		_, err := s.ensureThread(ctx, thread, meta)
		return err
	}
	meta, _ := rec["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	if meta["graph_id"] == a.GraphID && meta["assistant_id"] == a.AssistantID {
		s.noted.note(gen, thread, a.GraphID, a.AssistantID)
		return nil
	}
	meta["graph_id"], meta["assistant_id"] = a.GraphID, a.AssistantID
	rec["metadata"] = meta
	rec["updated_at"] = nowString()
	s.noted.forget(thread)
	gen = s.noted.generation()
	if err := s.st.Put(ctx, threadNS, thread, rec, store.PutOptions{Index: []string{}}); err != nil {
		return fmt.Errorf("save thread %q: %w", thread, err)
	}
	s.noted.note(gen, thread, a.GraphID, a.AssistantID)
	return nil
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
