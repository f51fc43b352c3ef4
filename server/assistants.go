package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/diagram"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/store"
	"github.com/graphctl/graphctl/server/graphs"
)

// Assistants are stored, versioned configurations of a graph (config,
// context, metadata, name), as in LangGraph. Every loaded graph is also an
// assistant named after it (metadata.created_by "system"); updating one
// stores it like any other. Records live in the Store under
// assistantNS/ID, their versions under assistantVersionNS/ID/VERSION.

var (
	assistantNS        = []string{"graphctl", "assistants"}
	assistantVersionNS = []string{"graphctl", "assistant_versions"}
)

// assistantRec is an assistant (or one version of it).
type assistantRec struct {
	AssistantID string         `json:"assistant_id"`
	GraphID     string         `json:"graph_id"`
	Config      map[string]any `json:"config"`
	Context     any            `json:"context"`
	Metadata    map[string]any `json:"metadata"`
	Name        string         `json:"name"`
	Description any            `json:"description"`
	Version     int            `json:"version"`
	CreatedAt   string         `json:"created_at"`
	UpdatedAt   string         `json:"updated_at,omitempty"`
	// system marks a loaded graph's own assistant that was never stored.
	system bool
}

func (a *assistantRec) object() map[string]any {
	m := toMap(a)
	if m["context"] == nil {
		m["context"] = map[string]any{}
	}
	return m
}

func toMap(v any) map[string]any {
	b, _ := json.Marshal(v)
	var m map[string]any
	json.Unmarshal(b, &m)
	return m
}

func fromMap(m map[string]any, v any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

const timeLayout = "2006-01-02T15:04:05.000000Z07:00"

// systemAssistant is the assistant of a loaded graph.
func systemAssistant(v *graphs.Version) *assistantRec {
	ts := v.LoadedAt.UTC().Format(timeLayout)
	var desc any // null without one, as on the Agent Server
	if d := v.Graph.Spec.Description; d != "" {
		desc = d
	}
	return &assistantRec{AssistantID: v.Name, GraphID: v.Name, Name: v.Name, Description: desc,
		Config: map[string]any{}, Context: map[string]any{},
		Metadata: map[string]any{"created_by": "system", "version": v.Graph.Spec.Version, "hash": v.ShortHash, "file": v.File},
		Version:  1, CreatedAt: ts, UpdatedAt: ts, system: true}
}

// assistants caches stored assistant records by id (nil: known not to be
// stored, kept only for graph names).
type assistantCache struct {
	mu   sync.Mutex
	recs map[string]*assistantRec
}

// storedAssistant reads a stored assistant, or nil when there is none.
func (s *Server) storedAssistant(ctx context.Context, id string) (*assistantRec, error) {
	s.assistants.mu.Lock()
	rec, ok := s.assistants.recs[id]
	s.assistants.mu.Unlock()
	if ok && s.cfg.RunQueue == nil {
		// Replicas read the Store each time: another may have changed it.
		return rec, nil
	}
	it, err := s.st.Get(ctx, assistantNS, id)
	if errors.Is(err, store.ErrNotFound) {
		if _, isGraph := s.reg.Get(id); isGraph {
			s.cacheAssistant(id, nil)
		}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load assistant %q: %w", id, err)
	}
	rec = &assistantRec{}
	if err := fromMap(it.Value, rec); err != nil {
		return nil, fmt.Errorf("load assistant %q: %w", id, err)
	}
	s.cacheAssistant(id, rec)
	return rec, nil
}

func (s *Server) cacheAssistant(id string, rec *assistantRec) {
	s.assistants.mu.Lock()
	defer s.assistants.mu.Unlock()
	if s.assistants.recs == nil {
		s.assistants.recs = map[string]*assistantRec{}
	}
	s.assistants.recs[id] = rec
}

// resolveAssistant finds an assistant by id: a stored one, else a loaded
// graph's own; an apiError 404 otherwise.
func (s *Server) resolveAssistant(ctx context.Context, id string) (*assistantRec, error) {
	rec, err := s.storedAssistant(ctx, id)
	if err != nil {
		return nil, err
	}
	if rec != nil {
		return rec, nil
	}
	if v, ok := s.reg.Get(id); ok {
		return systemAssistant(v), nil
	}
	return nil, notFound("assistant %q not found (each graph is an assistant named after it; others are created with POST /assistants)", id)
}

// graphOf returns the graph an assistant id runs: the id itself when it
// names a loaded graph and no stored assistant overrides it, else the
// stored assistant's graph. Unknown ids are returned unchanged.
func (s *Server) graphOf(ctx context.Context, id string) string {
	if id == "" {
		return id
	}
	if rec, err := s.storedAssistant(ctx, id); err == nil && rec != nil {
		return rec.GraphID
	}
	return id
}

// runConfig merges the assistant's config under a run's config, as
// LangGraph does (the run's keys win; configurable maps are merged).
func (a *assistantRec) runConfig(cfg map[string]any) map[string]any {
	if len(a.Config) == 0 {
		return cfg
	}
	out := map[string]any{}
	for k, v := range a.Config {
		out[k] = v
	}
	for k, v := range cfg {
		out[k] = v
	}
	if ac, ok := a.Config["configurable"].(map[string]any); ok {
		conf := map[string]any{}
		for k, v := range ac {
			conf[k] = v
		}
		if rc, ok := cfg["configurable"].(map[string]any); ok {
			for k, v := range rc {
				conf[k] = v
			}
		}
		out["configurable"] = conf
	}
	return out
}

// allAssistants lists the loaded graphs' assistants (unless stored) and the
// stored ones.
func (s *Server) allAssistants(ctx context.Context) ([]*assistantRec, error) {
	items, err := s.st.Search(ctx, assistantNS, store.SearchQuery{Limit: 1000000})
	if err != nil {
		return nil, fmt.Errorf("list assistants: %w", err)
	}
	var out []*assistantRec
	stored := map[string]bool{}
	for _, it := range items {
		if len(it.Namespace) != len(assistantNS) {
			continue
		}
		rec := &assistantRec{}
		if err := fromMap(it.Value, rec); err != nil {
			continue
		}
		stored[rec.AssistantID] = true
		out = append(out, rec)
	}
	for _, v := range s.reg.List() {
		if !stored[v.Name] {
			out = append(out, systemAssistant(v))
		}
	}
	return out, nil
}

type assistantFilter struct {
	GraphID  string         `json:"graph_id"`
	Name     string         `json:"name"`
	Metadata map[string]any `json:"metadata"`
}

func (f assistantFilter) match(a *assistantRec) bool {
	if f.GraphID != "" && f.GraphID != a.GraphID {
		return false
	}
	if f.Name != "" && !strings.Contains(strings.ToLower(a.Name), strings.ToLower(f.Name)) {
		return false
	}
	return len(f.Metadata) == 0 || jsonContains(a.Metadata, f.Metadata)
}

type searchAssistantsBody struct {
	assistantFilter
	paging
	SortBy    string   `json:"sort_by"`
	SortOrder string   `json:"sort_order"`
	Select    []string `json:"select"`
}

func checkSort(by, order string, fields ...string) error {
	if order != "" && order != "asc" && order != "desc" {
		return invalid("sort_order %q is not one of asc, desc", order)
	}
	if by == "" {
		return nil
	}
	for _, f := range fields {
		if by == f {
			return nil
		}
	}
	return invalid("sort_by %q is not one of %s", by, strings.Join(fields, ", "))
}

// Fields a search's select may name, as the SDK declares them.
var (
	assistantFields = []string{"assistant_id", "graph_id", "name", "description", "config", "context", "created_at", "updated_at", "metadata", "version"}
	threadFields    = []string{"thread_id", "created_at", "updated_at", "state_updated_at", "metadata", "config", "context", "status", "values", "interrupts"}
	runFields       = []string{"run_id", "thread_id", "assistant_id", "created_at", "updated_at", "status", "metadata", "kwargs", "multitask_strategy"}
	cronFields      = []string{"cron_id", "assistant_id", "thread_id", "end_time", "schedule", "created_at", "updated_at", "user_id", "payload", "next_run_date", "metadata", "now", "enabled", "on_run_completed"}
)

// checkSelect refuses (422) a select that names a field outside fields.
func checkSelect(sel []string, fields []string) error {
	for _, f := range sel {
		if !slices.Contains(fields, f) {
			return invalid("select names %q, which is not one of %s", f, strings.Join(fields, ", "))
		}
	}
	return nil
}

// pick keeps the selected fields of an object (all without select).
func pick(obj map[string]any, sel []string) map[string]any {
	if len(sel) == 0 {
		return obj
	}
	out := make(map[string]any, len(sel))
	for _, k := range sel {
		if v, ok := obj[k]; ok {
			out[k] = v
		}
	}
	return out
}

func (s *Server) searchAssistants(c *gin.Context) {
	var body searchAssistantsBody
	if err := bindJSON(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	if err := body.paging.check(10); err != nil {
		s.fail(c, err)
		return
	}
	if err := checkSort(body.SortBy, body.SortOrder, "assistant_id", "graph_id", "name", "created_at", "updated_at"); err != nil {
		s.fail(c, err)
		return
	}
	if err := checkSelect(body.Select, assistantFields); err != nil {
		s.fail(c, err)
		return
	}
	all, err := s.allAssistants(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	var found []*assistantRec
	for _, a := range all {
		if body.match(a) {
			found = append(found, a)
		}
	}
	by := body.SortBy
	if by == "" {
		by = "created_at"
	}
	asc := body.SortOrder == "asc"
	objs := make([]map[string]any, len(found))
	for i, a := range found {
		objs[i] = a.object()
	}
	sortObjects(objs, by, "assistant_id", asc)
	page := pageOf(objs, body.paging)
	out := make([]map[string]any, len(page))
	for i, o := range page {
		out[i] = pick(o, body.Select)
	}
	setPagination(c, body.paging, len(out), len(objs))
	c.JSON(http.StatusOK, out)
}

// sortObjects sorts by a string or number field, ties broken by tie.
func sortObjects(objs []map[string]any, by, tie string, asc bool) {
	sort.SliceStable(objs, func(i, j int) bool {
		a, b := fmt.Sprint(objs[i][by]), fmt.Sprint(objs[j][by])
		if a == b {
			a, b = fmt.Sprint(objs[i][tie]), fmt.Sprint(objs[j][tie])
		}
		if asc {
			return a < b
		}
		return a > b
	})
}

func pageOf[T any](list []T, p paging) []T {
	if p.Offset >= len(list) {
		return []T{}
	}
	list = list[p.Offset:]
	if len(list) > p.Limit {
		list = list[:p.Limit]
	}
	return list
}

func (s *Server) countAssistants(c *gin.Context) {
	var body assistantFilter
	if err := bindJSON(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	all, err := s.allAssistants(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	n := 0
	for _, a := range all {
		if body.match(a) {
			n++
		}
	}
	c.JSON(http.StatusOK, n)
}

func (s *Server) assistant(c *gin.Context) (*assistantRec, *graphs.Version, bool) {
	a, err := s.resolveAssistant(c, c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return nil, nil, false
	}
	v, ok := s.reg.Get(a.GraphID)
	if !ok {
		s.fail(c, notFound("assistant %q runs graph %q, which is not loaded", a.AssistantID, a.GraphID))
		return nil, nil, false
	}
	return a, v, true
}

func (s *Server) getAssistant(c *gin.Context) {
	a, err := s.resolveAssistant(c, c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, a.object())
}

type assistantBody struct {
	GraphID     *string        `json:"graph_id"`
	AssistantID string         `json:"assistant_id"`
	Config      map[string]any `json:"config"`
	Context     any            `json:"context"`
	Metadata    map[string]any `json:"metadata"`
	Name        *string        `json:"name"`
	Description any            `json:"description"`
	IfExists    string         `json:"if_exists"`
}

// saveAssistant stores an assistant's record and a version entry.
func (s *Server) saveAssistant(ctx context.Context, a *assistantRec) error {
	if err := s.st.Put(ctx, assistantNS, a.AssistantID, toMap(a), store.PutOptions{Index: []string{}}); err != nil {
		return fmt.Errorf("save assistant %q: %w", a.AssistantID, err)
	}
	v := *a
	v.UpdatedAt = ""
	if err := s.st.Put(ctx, versionNS(a.AssistantID), versionKey(a.Version), toMap(&v), store.PutOptions{Index: []string{}}); err != nil {
		return fmt.Errorf("save assistant %q version %d: %w", a.AssistantID, a.Version, err)
	}
	s.cacheAssistant(a.AssistantID, a)
	return nil
}

func versionNS(id string) []string { return append(append([]string(nil), assistantVersionNS...), id) }

func versionKey(v int) string { return fmt.Sprintf("%010d", v) }

func (s *Server) createAssistant(c *gin.Context) {
	var body assistantBody
	if err := bindJSON(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	if body.GraphID == nil || *body.GraphID == "" {
		s.fail(c, invalid("graph_id is required (the name of a loaded graph)"))
		return
	}
	if _, ok := s.reg.Get(*body.GraphID); !ok {
		s.fail(c, notFound("graph %q is not loaded", *body.GraphID))
		return
	}
	switch body.IfExists {
	case "", "raise", "do_nothing":
	default:
		s.fail(c, invalid("if_exists %q is not one of raise, do_nothing", body.IfExists))
		return
	}
	if body.AssistantID == "" {
		body.AssistantID = newID()
	}
	if err := validID("assistant", body.AssistantID); err != nil {
		s.fail(c, err)
		return
	}
	if existing, err := s.resolveAssistant(c, body.AssistantID); err == nil {
		if body.IfExists == "do_nothing" {
			c.JSON(http.StatusOK, existing.object())
			return
		}
		s.fail(c, conflict("assistant %q already exists", body.AssistantID))
		return
	}
	now := time.Now().UTC().Format(timeLayout)
	// An assistant created without a name is "Untitled", as on the Agent
	// Server (a graph's own assistant is named after the graph).
	a := &assistantRec{AssistantID: body.AssistantID, GraphID: *body.GraphID, Config: body.Config, Context: body.Context,
		Metadata: body.Metadata, Name: "Untitled", Description: body.Description, Version: 1, CreatedAt: now, UpdatedAt: now}
	if body.Name != nil && *body.Name != "" {
		a.Name = *body.Name
	}
	a.defaults()
	if err := s.saveAssistant(c, a); err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, a.object())
}

func (a *assistantRec) defaults() {
	if a.Config == nil {
		a.Config = map[string]any{}
	}
	if a.Context == nil {
		a.Context = map[string]any{}
	}
	if a.Metadata == nil {
		a.Metadata = map[string]any{}
	}
}

// latestVersion returns the highest stored version number of an assistant.
func (s *Server) latestVersion(ctx context.Context, id string) (int, error) {
	items, err := s.st.Search(ctx, versionNS(id), store.SearchQuery{Limit: 1000000})
	if err != nil {
		return 0, fmt.Errorf("versions of assistant %q: %w", id, err)
	}
	n := 0
	for _, it := range items {
		if v, err := strconv.Atoi(it.Key); err == nil && v > n {
			n = v
		}
	}
	return n, nil
}

func (s *Server) updateAssistant(c *gin.Context) {
	var body assistantBody
	if err := bindJSON(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	a, err := s.resolveAssistant(c, c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	up := *a
	if a.system {
		// The graph's own assistant becomes a stored one; its first
		// version is what it was.
		if err := s.saveAssistant(c, a); err != nil {
			s.fail(c, err)
			return
		}
	}
	if body.GraphID != nil && *body.GraphID != "" {
		if _, ok := s.reg.Get(*body.GraphID); !ok {
			s.fail(c, notFound("graph %q is not loaded", *body.GraphID))
			return
		}
		up.GraphID = *body.GraphID
	}
	if body.Config != nil {
		up.Config = body.Config
	}
	if body.Context != nil {
		up.Context = body.Context
	}
	if body.Name != nil && *body.Name != "" {
		up.Name = *body.Name
	}
	if body.Description != nil {
		up.Description = body.Description
	}
	if body.Metadata != nil {
		meta := map[string]any{}
		for k, v := range a.Metadata {
			meta[k] = v
		}
		for k, v := range body.Metadata {
			meta[k] = v
		}
		up.Metadata = meta
	}
	last, err := s.latestVersion(c, a.AssistantID)
	if err != nil {
		s.fail(c, err)
		return
	}
	up.Version = last + 1
	up.UpdatedAt = time.Now().UTC().Format(timeLayout)
	up.system = false
	if err := s.saveAssistant(c, &up); err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, up.object())
}

func (s *Server) deleteAssistant(c *gin.Context) {
	id := c.Param("id")
	a, err := s.resolveAssistant(c, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	if a.system {
		s.fail(c, conflict("assistant %q is graph %q's own assistant; it goes away with the graph file", id, a.GraphID))
		return
	}
	deleteThreads, _ := strconv.ParseBool(c.DefaultQuery("delete_threads", "false"))
	if deleteThreads {
		recs, err := s.threadRecords(c)
		if err != nil {
			s.fail(c, err)
			return
		}
		for _, rec := range recs {
			if meta, _ := rec["metadata"].(map[string]any); meta != nil && meta["assistant_id"] == id {
				tid, _ := rec["thread_id"].(string)
				if err := s.removeThread(c, tid); err != nil {
					s.fail(c, err)
					return
				}
			}
		}
	}
	items, err := s.st.Search(c, versionNS(id), store.SearchQuery{Limit: 1000000})
	if err != nil {
		s.fail(c, fmt.Errorf("delete assistant %q: %w", id, err))
		return
	}
	for _, it := range items {
		s.st.Delete(c, it.Namespace, it.Key)
	}
	if err := s.st.Delete(c, assistantNS, id); err != nil && !errors.Is(err, store.ErrNotFound) {
		s.fail(c, fmt.Errorf("delete assistant %q: %w", id, err))
		return
	}
	s.assistants.mu.Lock()
	delete(s.assistants.recs, id)
	s.assistants.mu.Unlock()
	c.Status(http.StatusNoContent)
}

type versionsBody struct {
	Metadata map[string]any `json:"metadata"`
	paging
}

// versions lists an assistant's versions, newest first.
func (s *Server) versions(ctx context.Context, a *assistantRec) ([]*assistantRec, error) {
	if a.system {
		v := *a
		v.UpdatedAt = ""
		return []*assistantRec{&v}, nil
	}
	items, err := s.st.Search(ctx, versionNS(a.AssistantID), store.SearchQuery{Limit: 1000000})
	if err != nil {
		return nil, fmt.Errorf("versions of assistant %q: %w", a.AssistantID, err)
	}
	var out []*assistantRec
	for _, it := range items {
		v := &assistantRec{}
		if fromMap(it.Value, v) == nil {
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version > out[j].Version })
	return out, nil
}

func (s *Server) assistantVersions(c *gin.Context) {
	var body versionsBody
	if err := bindJSON(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	if err := body.paging.check(10); err != nil {
		s.fail(c, err)
		return
	}
	a, err := s.resolveAssistant(c, c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	all, err := s.versions(c, a)
	if err != nil {
		s.fail(c, err)
		return
	}
	var found []map[string]any
	for _, v := range all {
		if len(body.Metadata) == 0 || jsonContains(v.Metadata, body.Metadata) {
			o := v.object()
			delete(o, "updated_at")
			found = append(found, o)
		}
	}
	c.JSON(http.StatusOK, pageOf(found, body.paging))
}

func (s *Server) setLatestAssistant(c *gin.Context) {
	var body struct {
		Version *int `json:"version"`
	}
	if err := bindJSON(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	if body.Version == nil {
		s.fail(c, invalid("version is required"))
		return
	}
	a, err := s.resolveAssistant(c, c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	all, err := s.versions(c, a)
	if err != nil {
		s.fail(c, err)
		return
	}
	for _, v := range all {
		if v.Version != *body.Version {
			continue
		}
		if a.system {
			c.JSON(http.StatusOK, a.object())
			return
		}
		cur := *v
		cur.CreatedAt = a.CreatedAt
		cur.UpdatedAt = time.Now().UTC().Format(timeLayout)
		if err := s.st.Put(c, assistantNS, cur.AssistantID, toMap(&cur), store.PutOptions{Index: []string{}}); err != nil {
			s.fail(c, fmt.Errorf("save assistant %q: %w", cur.AssistantID, err))
			return
		}
		s.cacheAssistant(cur.AssistantID, &cur)
		c.JSON(http.StatusOK, cur.object())
		return
	}
	s.fail(c, notFound("assistant %q has no version %d", a.AssistantID, *body.Version))
}

func (s *Server) assistantGraph(c *gin.Context) {
	depth, err := xrayDepth(c.Query("xray"))
	if err != nil {
		s.fail(c, err)
		return
	}
	if _, v, ok := s.assistant(c); ok {
		c.JSON(http.StatusOK, xray(diagram.Build(v.Graph), depth))
	}
}

// xrayDepth reads the xray query parameter: false or 0 draws no subgraph,
// true every level, a number that many levels.
func xrayDepth(v string) (int, error) {
	switch v {
	case "", "false", "0":
		return 0, nil
	case "true":
		return math.MaxInt32, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, invalid("xray must be true, false or a depth (a non-negative integer), got %q", v)
	}
	return n, nil
}

// xray draws each subgraph node as its graph's nodes, named
// "node:child" as LangGraph draws them with xray, down to depth levels:
// edges into the node go to the child's first nodes, edges out of it leave
// from its last ones.
func xray(d diagram.Diagram, depth int) diagram.Diagram {
	if depth <= 0 {
		return d
	}
	out := diagram.Diagram{}
	entries, exits := map[string][]string{}, map[string][]string{}
	for _, n := range d.Nodes {
		if n.Subgraph == nil {
			out.Nodes = append(out.Nodes, n)
			continue
		}
		child := xray(*n.Subgraph, depth-1)
		inner := 0
		for _, cn := range child.Nodes {
			if cn.ID == diagram.Start || cn.ID == diagram.End {
				continue
			}
			inner++
			data := maps.Clone(cn.Data)
			if data == nil {
				data = map[string]any{}
			}
			data["name"] = n.ID + ":" + cn.ID
			out.Nodes = append(out.Nodes, diagram.Node{ID: n.ID + ":" + cn.ID, Type: cn.Type, Data: data, Subgraph: cn.Subgraph})
		}
		if inner == 0 {
			out.Nodes = append(out.Nodes, n)
			continue
		}
		for _, e := range child.Edges {
			switch {
			case e.Source == diagram.Start:
				entries[n.ID] = append(entries[n.ID], n.ID+":"+e.Target)
			case e.Target == diagram.End:
				exits[n.ID] = append(exits[n.ID], n.ID+":"+e.Source)
			default:
				e.Source, e.Target = n.ID+":"+e.Source, n.ID+":"+e.Target
				out.Edges = append(out.Edges, e)
			}
		}
	}
	for _, e := range d.Edges {
		sources, targets := exits[e.Source], entries[e.Target]
		if sources == nil {
			sources = []string{e.Source}
		}
		if targets == nil {
			targets = []string{e.Target}
		}
		for _, src := range sources {
			for _, dst := range targets {
				out.Edges = append(out.Edges, diagram.Edge{Source: src, Target: dst, Conditional: e.Conditional, Label: e.Label})
			}
		}
	}
	return out
}

// jsonSchemaOf describes a state field type as JSON Schema.
func jsonSchemaOf(t graph.Type) map[string]any {
	switch t.Kind {
	case graph.String:
		return map[string]any{"type": "string"}
	case graph.Int:
		return map[string]any{"type": "integer"}
	case graph.Float:
		return map[string]any{"type": "number"}
	case graph.Bool:
		return map[string]any{"type": "boolean"}
	case graph.List:
		if t.Elem != nil {
			return map[string]any{"type": "array", "items": jsonSchemaOf(*t.Elem)}
		}
		return map[string]any{"type": "array"}
	case graph.Map:
		if t.Elem != nil {
			return map[string]any{"type": "object", "additionalProperties": jsonSchemaOf(*t.Elem)}
		}
		return map[string]any{"type": "object"}
	case graph.Object:
		return map[string]any{"type": "object"}
	case graph.Messages:
		return map[string]any{"type": "array", "items": map[string]any{"type": "object",
			"properties": map[string]any{"role": map[string]any{"type": "string"}, "content": map[string]any{}}, "required": []string{"role"}}}
	}
	if t.IsList() { // a list type a node package declares: a list of objects
		return map[string]any{"type": "array", "items": map[string]any{"type": "object"}}
	}
	return map[string]any{}
}

func (s *Server) assistantSchemas(c *gin.Context) {
	_, v, ok := s.assistant(c)
	if !ok {
		return
	}
	c.JSON(http.StatusOK, graphSchemas(v.Name, v.Graph))
}

// graphSchemas describes a graph's state as LangGraph's schemas endpoint
// does, under the graph id name.
func graphSchemas(name string, g *compile.Graph) gin.H {
	props := map[string]any{}
	for _, name := range g.FieldOrder {
		f := g.Fields[name]
		sch := jsonSchemaOf(f.Spec.Type)
		if f.Spec.Reducer != "" {
			sch["x-reducer"] = f.Spec.Reducer
		}
		if len(f.Spec.Enum) > 0 {
			sch["enum"] = f.Spec.Enum
		}
		props[name] = sch
	}
	state := map[string]any{"title": name, "type": "object", "properties": props}
	return gin.H{"graph_id": name, "input_schema": state, "output_schema": state, "state_schema": state,
		"config_schema": map[string]any{"type": "object", "properties": map[string]any{}}, "context_schema": nil}
}
