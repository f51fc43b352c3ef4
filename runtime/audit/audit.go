// Package audit keeps a persisted log of conversations for auditing and
// improvement: per thread (and so per user, for threads such as
// tg:{user_id}), a conversation record with its creation and update times,
// and per run the messages it added (role, content, meta, time) and an
// observation of every node that ran (input and output summaries, duration,
// status, retrieval count, tokens).
//
// Recorder is an engine.Observer that writes these records into the
// long-term Store, one record per run and one per conversation, when each run
// ends; Log reads them back (graphctl threads log, GET
// /threads/{id}/log).
//
// Store layout:
//
//	["audit", "conversations"]     key thread_id   Conversation
//	["audit", "runs", thread_id]   key <started_at>-<run_id>   Run
package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/store"
	"github.com/graphctl/graphctl/runtime/store/jsonenc"
)

// ConversationsNS is the namespace of conversation records.
var ConversationsNS = []string{"audit", "conversations"}

// RunsNS is the namespace of a thread's run records.
func RunsNS(thread string) []string { return []string{"audit", "runs", thread} }

// Conversation is a thread's audit record.
type Conversation struct {
	ThreadID string `json:"thread_id"`
	// UserID is the thread's user_id state field when the graph has one
	// (the Telegram user id for tg:{user_id} threads).
	UserID    string `json:"user_id,omitempty"`
	Graph     string `json:"graph"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
	Runs      int    `json:"runs"`
	Messages  int    `json:"messages"`
}

// Run is the audit record of one run.
type Run struct {
	RunID      string    `json:"run_id"`
	ThreadID   string    `json:"thread_id"`
	Graph      string    `json:"graph"`
	UserID     string    `json:"user_id,omitempty"`
	Status     string    `json:"status"`
	Error      string    `json:"error,omitempty"`
	Resumed    bool      `json:"resumed,omitempty"`
	StartedAt  string    `json:"started_at"`
	EndedAt    string    `json:"ended_at"`
	DurationMS float64   `json:"duration_ms"`
	Messages   []Message `json:"messages"`
	Nodes      []Node    `json:"nodes"`
}

// Message is a message a run added to the conversation.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// Meta holds the message's other keys, the node that wrote it, and for
	// the user's message the run's other input (chat ids and the like).
	Meta      map[string]any `json:"meta,omitempty"`
	CreatedAt string         `json:"created_at"`
}

// Node is the observation of one task.
type Node struct {
	Node       string  `json:"node"`
	Type       string  `json:"type"`
	Step       int     `json:"step"`
	StartedAt  string  `json:"started_at"`
	DurationMS float64 `json:"duration_ms"`
	Status     string  `json:"status"`
	Attempts   int     `json:"attempts,omitempty"`
	Error      string  `json:"error,omitempty"`
	CaughtBy   string  `json:"caught_by,omitempty"`
	// Input summarizes the state fields the node's config refers to; Output
	// what it wrote.
	Input  map[string]string `json:"input,omitempty"`
	Output map[string]string `json:"output,omitempty"`
	// Retrieved counts what retrieval, web search or memory recall found.
	Retrieved *int           `json:"retrieval_count,omitempty"`
	Tokens    map[string]int `json:"tokens,omitempty"`
}

// Recorder is the engine.Observer that writes the audit log into Store.
type Recorder struct {
	Store store.Store
	// OnError, when set, is told about records that could not be written
	// (the run itself is not affected).
	OnError func(error)
	// Now reads the clock; nil means time.Now.
	Now func() time.Time

	// names caches, by node config (its map, which compiled graphs never
	// change), the identifiers the config refers to.
	names sync.Map
}

func (r *Recorder) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

type runKey struct{}

// runRec collects a run's node observations.
type runRec struct {
	r    *Recorder
	ctx  context.Context
	info engine.RunInfo
	// before is how many messages the thread had when the run started.
	before int
	mu     sync.Mutex
	nodes  []Node
}

// ObserveRun implements engine.Observer.
func (r *Recorder) ObserveRun(ctx context.Context, run engine.RunInfo) (context.Context, engine.RunObservation) {
	msgs, _ := run.State["messages"].([]any)
	rec := &runRec{r: r, ctx: context.WithoutCancel(ctx), info: run, before: len(msgs)}
	return context.WithValue(ctx, runKey{}, rec), rec
}

// ObserveNode implements engine.Observer.
func (r *Recorder) ObserveNode(ctx context.Context, task engine.TaskInfo) (context.Context, engine.NodeObservation) {
	rec, _ := ctx.Value(runKey{}).(*runRec)
	return ctx, &nodeRec{run: rec, task: task, input: inputSummary(task, r.configNames(task.Config))}
}

// configNames returns the identifiers a node's config refers to (see
// identifiers), read once per config: the key is the config map itself,
// which the cache keeps alive, so a config loaded later never takes its
// place.
func (r *Recorder) configNames(cfg map[string]any) map[string]bool {
	key := reflect.ValueOf(cfg).UnsafePointer()
	if v, ok := r.names.Load(key); ok {
		return v.(map[string]bool)
	}
	b, _ := json.Marshal(cfg)
	names := identifiers(string(b))
	if key != nil {
		r.names.Store(key, names)
	}
	return names
}

type nodeRec struct {
	run   *runRec
	task  engine.TaskInfo
	input map[string]string

	mu        sync.Mutex
	retrieved int
	counted   bool
	tokens    map[string]int
}

func (n *nodeRec) Event(ev event.Event) {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch ev.Type {
	case "retrieval", "web_search", "memory_recalled":
		n.retrieved += toInt(ev.Payload["count"])
		n.counted = true
	case node.UsageEvent:
		if n.tokens == nil {
			n.tokens = map[string]int{}
		}
		for _, k := range []string{"prompt_tokens", "completion_tokens", "total_tokens"} {
			n.tokens[k] += toInt(ev.Payload[k])
		}
	}
}

func (n *nodeRec) End(end engine.TaskEnd) {
	if n.run == nil {
		return
	}
	n.mu.Lock()
	obs := Node{
		Node: n.task.Node, Type: n.task.Type, Step: n.task.Step,
		StartedAt:  n.task.Start.UTC().Format(time.RFC3339Nano),
		DurationMS: float64(end.Duration.Microseconds()) / 1000, Status: end.Status, CaughtBy: end.CaughtBy,
		Input: n.input, Output: summaries(end.Update), Tokens: n.tokens,
	}
	if end.Attempts > 1 {
		obs.Attempts = end.Attempts
	}
	if end.Err != nil {
		obs.Error = Summary(end.Err.Error())
	}
	if n.counted {
		c := n.retrieved
		obs.Retrieved = &c
	}
	n.mu.Unlock()
	n.run.mu.Lock()
	n.run.nodes = append(n.run.nodes, obs)
	n.run.mu.Unlock()
}

// End implements engine.RunObservation: the run's record and its
// conversation's are written.
func (rec *runRec) End(res *engine.Result) {
	if res == nil {
		return
	}
	r := rec.r
	end := r.now()
	rec.mu.Lock()
	nodes := append([]Node(nil), rec.nodes...)
	rec.mu.Unlock()
	sort.SliceStable(nodes, func(i, j int) bool {
		if nodes[i].Step != nodes[j].Step {
			return nodes[i].Step < nodes[j].Step
		}
		return nodes[i].StartedAt < nodes[j].StartedAt
	})
	run := Run{
		RunID: res.RunID, ThreadID: res.ThreadID, Graph: rec.info.Graph, Status: res.Status, Resumed: rec.info.Resume != nil,
		StartedAt: rec.info.Start.UTC().Format(time.RFC3339Nano), EndedAt: end.UTC().Format(time.RFC3339Nano),
		DurationMS: float64(end.Sub(rec.info.Start).Microseconds()) / 1000, Nodes: nodes,
	}
	if res.Err != nil {
		run.Error = Summary(res.Err.Error())
	}
	run.UserID, _ = res.State["user_id"].(string)
	run.Messages = newMessages(rec.info, rec.before, res.State, nodes, end)
	if err := r.write(rec.ctx, run); err != nil && r.OnError != nil {
		r.OnError(err)
	}
}

// write stores a run's record and updates its conversation's: in one
// transaction when the Store is a store.Batcher, else one after the other.
// The run's record is written even when its conversation cannot be read.
// When the run's context carries a store.Deferred for the run's thread,
// both are handed over to it, to be written with the run's end.
func (r *Recorder) write(ctx context.Context, run Run) error {
	unindexed := store.PutOptions{Index: []string{}}
	runPut := store.BatchPut{Namespace: RunsNS(run.ThreadID), Key: run.StartedAt + "-" + run.RunID, Value: run.value(), Opts: unindexed}
	putRun := func() error {
		if err := r.Store.Put(ctx, runPut.Namespace, runPut.Key, runPut.Value, runPut.Opts); err != nil {
			return fmt.Errorf("audit: record run %s of thread %s: %w", run.RunID, run.ThreadID, err)
		}
		return nil
	}
	b, batched := r.Store.(store.Batcher)
	if !batched {
		if err := putRun(); err != nil {
			return err
		}
	}
	conv, err := r.conversation(ctx, run)
	if err != nil {
		if batched {
			return errors.Join(putRun(), err)
		}
		return err
	}
	convPut := store.BatchPut{Namespace: ConversationsNS, Key: run.ThreadID, Value: conv.value(), Opts: unindexed}
	if d := store.DeferredOf(ctx); batched && d != nil && d.Thread == run.ThreadID && d.Add(runPut, convPut) {
		// Written with the record of the run's end, in one commit.
		return nil
	}
	if batched {
		if err := b.PutBatch(ctx, []store.BatchPut{runPut, convPut}); err != nil {
			return fmt.Errorf("audit: record run %s of thread %s and its conversation: %w", run.RunID, run.ThreadID, err)
		}
		return nil
	}
	if err := r.Store.Put(ctx, convPut.Namespace, convPut.Key, convPut.Value, convPut.Opts); err != nil {
		return fmt.Errorf("audit: record conversation %s: %w", run.ThreadID, err)
	}
	return nil
}

// conversation reads a run's conversation record (a new one for a thread
// that has none) and counts the run in it.
func (r *Recorder) conversation(ctx context.Context, run Run) (Conversation, error) {
	conv := Conversation{ThreadID: run.ThreadID, UserID: run.UserID, Graph: run.Graph, CreatedAt: run.StartedAt}
	if it, err := r.Store.Get(ctx, ConversationsNS, run.ThreadID); err == nil {
		if err := conversationFromMap(it.Value, &conv); err != nil {
			return conv, fmt.Errorf("audit: conversation %s: %w", run.ThreadID, err)
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return conv, fmt.Errorf("audit: read conversation %s: %w", run.ThreadID, err)
	}
	conv.UpdatedAt = run.EndedAt
	conv.Runs++
	conv.Messages += len(run.Messages)
	if run.UserID != "" {
		conv.UserID = run.UserID
	}
	conv.Graph = run.Graph
	return conv, nil
}

// newMessages returns the messages the run added to the messages field,
// stamped: the user's at the run's start with the run's other input as meta,
// the others at the end of the node that wrote them. The answer that
// resumed an interrupt counts as the user's message.
func newMessages(info engine.RunInfo, before int, after map[string]any, nodes []Node, end time.Time) []Message {
	var out []Message
	if r := info.Resume; r != nil {
		var v any = r.Value
		if r.Values != nil {
			v = r.Values
		}
		content, ok := v.(string)
		if !ok {
			content = Summary(v)
		}
		meta := map[string]any{"resume": true}
		if r.InterruptID != "" {
			meta["interrupt_id"] = r.InterruptID
		}
		out = append(out, Message{Role: "user", Content: content, Meta: meta, CreatedAt: info.Start.UTC().Format(time.RFC3339Nano)})
	}
	all, _ := after["messages"].([]any)
	if len(all) <= before {
		return out
	}
	var writers []Node
	for _, n := range nodes {
		if _, ok := n.Output["messages"]; ok {
			writers = append(writers, n)
		}
	}
	w := 0
	for _, raw := range all[before:] {
		m, _ := raw.(map[string]any)
		role, _ := m["role"].(string)
		msg := Message{Role: role, Content: contentText(m["content"]), Meta: map[string]any{}}
		for k, v := range m {
			if k != "role" && k != "content" {
				msg.Meta[k] = v
			}
		}
		switch {
		case role == "user" || role == "human":
			msg.CreatedAt = info.Start.UTC().Format(time.RFC3339Nano)
			for k, v := range info.Input {
				if k == "messages" {
					continue
				}
				if s := Summary(v); s != "" {
					msg.Meta[k] = s
				}
			}
		case w < len(writers):
			msg.Meta["node"] = writers[w].Node
			if t, err := time.Parse(time.RFC3339Nano, writers[w].StartedAt); err == nil {
				msg.CreatedAt = t.Add(time.Duration(writers[w].DurationMS * float64(time.Millisecond))).UTC().Format(time.RFC3339Nano)
			}
			w++
		}
		if msg.CreatedAt == "" {
			msg.CreatedAt = end.UTC().Format(time.RFC3339Nano)
		}
		if len(msg.Meta) == 0 {
			msg.Meta = nil
		}
		out = append(out, msg)
	}
	return out
}

// contentText is a message's text: the string, or its text parts.
func contentText(v any) string {
	switch c := v.(type) {
	case string:
		return c
	case []any:
		var parts []string
		for _, p := range c {
			if m, ok := p.(map[string]any); ok {
				if t, ok := m["text"].(string); ok {
					parts = append(parts, t)
				}
			}
		}
		return strings.Join(parts, "\n")
	}
	return Summary(v)
}

// conversationReaders holds the node types declared with ReadsConversation.
var conversationReaders sync.Map

// ReadsConversation declares that nodes of the named type read the
// conversation (the state's messages field) without naming it in their
// config, so that the input of their audit records summarizes it. Node
// packages call it in init.
func ReadsConversation(nodeType string) { conversationReaders.Store(nodeType, true) }

// inputSummary summarizes the state fields a node's config refers to
// (names, the identifiers of its config) and the conversation, for the
// types that read it.
func inputSummary(task engine.TaskInfo, names map[string]bool) map[string]string {
	out := map[string]string{}
	for field, v := range task.State {
		if field == "state" {
			continue
		}
		if names[field] {
			out[field] = Summary(v)
		}
	}
	if _, reads := conversationReaders.Load(task.Type); reads {
		if v, ok := task.State["messages"]; ok {
			out["messages"] = Summary(v)
		}
	}
	if task.Item != nil {
		out["item"] = Summary(task.Item)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// identifiers returns the identifiers ([A-Za-z_][A-Za-z0-9_]*) text names
// that are not preceded by a dot: the state fields an expression or template
// may refer to.
func identifiers(text string) map[string]bool {
	out := map[string]bool{}
	for i := 0; i < len(text); {
		if !identStart(text[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(text) && (identStart(text[j]) || text[j] >= '0' && text[j] <= '9') {
			j++
		}
		if i == 0 || text[i-1] != '.' {
			out[text[i:j]] = true
		}
		i = j
	}
	return out
}

func identStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func summaries(u node.Update) map[string]string {
	if len(u) == 0 {
		return nil
	}
	out := make(map[string]string, len(u))
	for k, v := range u {
		out[k] = Summary(v)
	}
	return out
}

// jsonPrefix appends to buf v's compact JSON, or a prefix of it of more
// than max runes: a list or an object is encoded element by element until
// max is passed, so that summarising a long conversation does not encode
// all of it.
func jsonPrefix(buf []byte, v any, max int) ([]byte, error) {
	var err error
	switch x := v.(type) {
	case []any:
		buf = append(buf, '[')
		for i, e := range x {
			if past(buf, max) {
				return buf, nil
			}
			if i > 0 {
				buf = append(buf, ',')
			}
			if buf, err = jsonenc.Append(buf, e); err != nil {
				return nil, err
			}
		}
		return append(buf, ']'), nil
	case map[string]any:
		buf = append(buf, '{')
		for i, k := range jsonenc.SortedKeys(x) {
			if past(buf, max) {
				return buf, nil
			}
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(jsonenc.AppendString(buf, k), ':')
			if buf, err = jsonenc.Append(buf, x[k]); err != nil {
				return nil, err
			}
		}
		return append(buf, '}'), nil
	}
	return jsonenc.Append(buf, v)
}

// past reports whether buf has more than max runes.
func past(buf []byte, max int) bool {
	// A rune takes at least one byte: only a longer buf can have more
	// than max runes.
	return len(buf) > max && utf8.RuneCount(buf) > max
}

// summaryRunes bounds a summary.
const summaryRunes = 240

// Summary describes a value in at most a few hundred characters: strings as
// they are (data URLs by their type and size), other values as compact
// JSON, cut with "…".
func Summary(v any) string {
	var s string
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		s = x
		if strings.HasPrefix(s, "data:") {
			if i := strings.IndexByte(s, ','); i > 0 {
				return fmt.Sprintf("%s (%d bytes)", strings.TrimSuffix(s[:i], ";base64"), len(s)-i-1)
			}
		}
	default:
		bp := summaryBufs.Get().(*[]byte)
		b, err := jsonPrefix((*bp)[:0], x, summaryRunes)
		if err != nil {
			s = cut(fmt.Sprint(x), summaryRunes)
		} else {
			s = cut(string(b), summaryRunes)
		}
		if cap(b) <= maxSummaryBuf {
			*bp = b[:0]
		}
		summaryBufs.Put(bp)
		return s
	}
	return cut(s, summaryRunes)
}

// summaryBufs are the buffers summaries are encoded in: a few hundred
// bytes each, reused rather than allocated for every summary of every node.
var summaryBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// maxSummaryBuf is the largest buffer kept for the next summary (one
// element of a list may be long).
const maxSummaryBuf = 64 << 10

// cut returns s when it has at most n runes, else its first n runes and
// "…" (invalid UTF-8 in them as U+FFFD).
func cut(s string, n int) string {
	count := 0
	for i := range s {
		if count == n {
			if utf8.ValidString(s[:i]) {
				return s[:i] + "…"
			}
			return string([]rune(s[:i])) + "…"
		}
		count++
	}
	return s
}

func toInt(v any) int {
	switch x := v.(type) {
	case int:
		return x
	case int64:
		return int(x)
	case float64:
		return int(x)
	}
	return 0
}

// value is the conversation record as the Store keeps it: the members of
// its JSON encoding, without encoding and decoding it first.
func (c Conversation) value() map[string]any {
	v := map[string]any{"thread_id": c.ThreadID, "graph": c.Graph, "created_at": c.CreatedAt, "updated_at": c.UpdatedAt,
		"runs": c.Runs, "messages": c.Messages}
	if c.UserID != "" {
		v["user_id"] = c.UserID
	}
	return v
}

// value is the run record as the Store keeps it: the members of its JSON
// encoding, the messages and nodes already encoded (the Store would encode
// their structs by reflection).
func (r Run) value() map[string]any {
	v := map[string]any{"run_id": r.RunID, "thread_id": r.ThreadID, "graph": r.Graph, "status": r.Status,
		"started_at": r.StartedAt, "ended_at": r.EndedAt, "duration_ms": r.DurationMS,
		"messages": encodedOr(r.Messages, appendMessages, 160*len(r.Messages)+4), "nodes": encodedOr(r.Nodes, appendNodes, 256*len(r.Nodes)+4)}
	if r.UserID != "" {
		v["user_id"] = r.UserID
	}
	if r.Error != "" {
		v["error"] = r.Error
	}
	if r.Resumed {
		v["resumed"] = true
	}
	return v
}

// conversationFromMap reads a stored conversation record as fromMap does,
// without encoding and decoding it when its members have the types a
// record decodes to.
func conversationFromMap(m map[string]any, c *Conversation) error {
	var d Conversation
	var ok [7]bool
	d.ThreadID, ok[0] = optString(m, "thread_id")
	d.UserID, ok[1] = optString(m, "user_id")
	d.Graph, ok[2] = optString(m, "graph")
	d.CreatedAt, ok[3] = optString(m, "created_at")
	d.UpdatedAt, ok[4] = optString(m, "updated_at")
	d.Runs, ok[5] = optInt(m, "runs")
	d.Messages, ok[6] = optInt(m, "messages")
	for _, o := range ok {
		if !o {
			return fromMap(m, c)
		}
	}
	// Members a record lacks keep the values c has, as decoding leaves them.
	merge := func(dst *string, src string, key string) {
		if _, has := m[key]; has {
			*dst = src
		}
	}
	merge(&c.ThreadID, d.ThreadID, "thread_id")
	merge(&c.UserID, d.UserID, "user_id")
	merge(&c.Graph, d.Graph, "graph")
	merge(&c.CreatedAt, d.CreatedAt, "created_at")
	merge(&c.UpdatedAt, d.UpdatedAt, "updated_at")
	if _, has := m["runs"]; has {
		c.Runs = d.Runs
	}
	if _, has := m["messages"]; has {
		c.Messages = d.Messages
	}
	return nil
}

// optString reads a string member; ok is false when it is there with
// another type (null included, which decoding treats differently).
func optString(m map[string]any, key string) (string, bool) {
	v, has := m[key]
	if !has {
		return "", true
	}
	s, ok := v.(string)
	return s, ok
}

// optInt reads an integer member stored as a JSON number; ok is false when
// it is there as anything but a whole number that fits an int.
func optInt(m map[string]any, key string) (int, bool) {
	v, has := m[key]
	if !has {
		return 0, true
	}
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int(x), true
		}
	case json.Number:
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil && n == int64(int(n)) {
			return int(n), true
		}
	case int:
		return x, true
	case int64:
		if x == int64(int(x)) {
			return int(x), true
		}
	}
	return 0, false
}

func fromMap(m map[string]any, v any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// ErrNoLog is returned by Log for a thread with no audit record.
var ErrNoLog = errors.New("no audit log")

// Log reads a thread's conversation record and its runs, oldest first.
func Log(ctx context.Context, st store.Store, thread string) (*Conversation, []Run, error) {
	it, err := st.Get(ctx, ConversationsNS, thread)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, fmt.Errorf("thread %q: %w (it has not run since audit logging began, or does not exist)", thread, ErrNoLog)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("thread %q: read its conversation record: %w", thread, err)
	}
	var conv Conversation
	if err := fromMap(it.Value, &conv); err != nil {
		return nil, nil, fmt.Errorf("thread %q: conversation record: %w", thread, err)
	}
	items, err := st.Search(ctx, RunsNS(thread), store.SearchQuery{Limit: 100000})
	if err != nil {
		return nil, nil, fmt.Errorf("thread %q: list its runs: %w", thread, err)
	}
	runs := make([]Run, 0, len(items))
	for _, it := range items {
		var r Run
		if err := fromMap(it.Value, &r); err != nil {
			return nil, nil, fmt.Errorf("thread %q: run record %s: %w", thread, it.Key, err)
		}
		runs = append(runs, r)
	}
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].StartedAt < runs[j].StartedAt })
	return &conv, runs, nil
}

// Conversations lists the conversation records, most recently updated
// first, of one user when userID is not empty.
func Conversations(ctx context.Context, st store.Store, userID string) ([]Conversation, error) {
	q := store.SearchQuery{Limit: 100000}
	if userID != "" {
		q.Filter = map[string]any{"user_id": userID}
	}
	items, err := st.Search(ctx, ConversationsNS, q)
	if err != nil {
		return nil, fmt.Errorf("list conversations: %w", err)
	}
	out := make([]Conversation, 0, len(items))
	for _, it := range items {
		var c Conversation
		if err := fromMap(it.Value, &c); err != nil {
			return nil, fmt.Errorf("conversation %s: %w", it.Key, err)
		}
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].UpdatedAt > out[j].UpdatedAt })
	return out, nil
}
