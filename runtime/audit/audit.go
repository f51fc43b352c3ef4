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
	"bytes"
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
	// buf holds the JSON list of the nodes' observations, in the order they
	// ended, without its closing bracket; nodes says where each is.
	buf   []byte
	nodes []nodeEntry
	// first holds the first nodes' entries.
	first [4]nodeEntry
}

// nodeEntry is a node's observation in its run's buf.
type nodeEntry struct {
	// from and to delimit its JSON, atFrom and atTo its started_at text.
	from, to, atFrom, atTo int
	step                   int
	node                   string
	start                  time.Time
	durationMS             float64
	// writesMessages is set when the node's update has the messages field.
	writesMessages bool
}

// ObserveRun implements engine.Observer.
func (r *Recorder) ObserveRun(ctx context.Context, run engine.RunInfo) (context.Context, engine.RunObservation) {
	msgs, _ := run.State["messages"].([]any)
	rec := &runRec{r: r, ctx: context.WithoutCancel(ctx), info: run, before: len(msgs)}
	rec.nodes = rec.first[:0]
	return context.WithValue(ctx, runKey{}, rec), rec
}

// ObserveNode implements engine.Observer.
func (r *Recorder) ObserveNode(ctx context.Context, task engine.TaskInfo) (context.Context, engine.NodeObservation) {
	rec, _ := ctx.Value(runKey{}).(*runRec)
	n := &nodeRec{run: rec, node: task.Node, typ: task.Type, step: task.Step, start: task.Start}
	bp := summaryBufs.Get().(*[]byte)
	b := appendInput((*bp)[:0], task, r.configNames(task.Config))
	if len(b) > 0 {
		n.input = bytes.Clone(b)
	}
	putSummaryBuf(bp, b)
	return ctx, n
}

// configNames returns the identifiers a node's config refers to (see
// identifiers), read once per config: the key is the config map itself,
// which the cache keeps alive, so a config loaded later never takes its
// place.
func (r *Recorder) configNames(cfg map[string]any) map[string]bool {
	if cfg == nil {
		return noConfigNames
	}
	key := reflect.ValueOf(cfg).UnsafePointer()
	if v, ok := r.names.Load(key); ok {
		return v.(map[string]bool)
	}
	b, _ := jsonenc.Append(nil, cfg)
	names := identifiers(string(b))
	r.names.Store(key, names)
	return names
}

// noConfigNames are the identifiers of a node without a config: those of
// its JSON, null.
var noConfigNames = identifiers("null")

type nodeRec struct {
	run       *runRec
	node, typ string
	step      int
	start     time.Time
	// input is the JSON object of the input summaries, nil for none.
	input []byte

	mu sync.Mutex
	// usage, retrieval counts and whether there were any.
	counted, usage bool
	retrieved      int
	tokens         [len(tokenKeys)]int
}

// tokenKeys are the token counts of usage events a node's observation
// adds up.
var tokenKeys = [...]string{"prompt_tokens", "completion_tokens", "total_tokens"}

// nodeEnd is how a task ended, with what its observation gathered.
type nodeEnd struct {
	engine.TaskEnd
	durationMS     float64
	counted, usage bool
	retrieved      int
	tokens         [len(tokenKeys)]int
}

func (n *nodeRec) Event(ev event.Event) {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch ev.Type {
	case "retrieval", "web_search", "memory_recalled":
		n.retrieved += toInt(ev.Payload["count"])
		n.counted = true
	case node.UsageEvent:
		n.usage = true
		for i, k := range tokenKeys {
			n.tokens[i] += toInt(ev.Payload[k])
		}
	}
}

func (n *nodeRec) End(end engine.TaskEnd) {
	if n.run == nil {
		return
	}
	e := nodeEnd{TaskEnd: end, durationMS: millis(end.Duration)}
	n.mu.Lock()
	e.counted, e.usage, e.retrieved, e.tokens = n.counted, n.usage, n.retrieved, n.tokens
	n.mu.Unlock()
	bp := summaryBufs.Get().(*[]byte)
	b, atFrom, atTo := appendNode((*bp)[:0], n, e)
	_, writes := end.Update["messages"]
	entry := nodeEntry{step: n.step, node: n.node, start: n.start, durationMS: e.durationMS, writesMessages: writes}
	rec := n.run
	rec.mu.Lock()
	if rec.buf == nil {
		rec.buf = make([]byte, 0, 1024)
	}
	if len(rec.nodes) == 0 {
		rec.buf = append(rec.buf, '[')
	} else {
		rec.buf = append(rec.buf, ',')
	}
	entry.from = len(rec.buf)
	entry.atFrom, entry.atTo = entry.from+atFrom, entry.from+atTo
	rec.buf = append(rec.buf, b...)
	entry.to = len(rec.buf)
	rec.nodes = append(rec.nodes, entry)
	rec.mu.Unlock()
	putSummaryBuf(bp, b)
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
	buf, nodes := rec.buf, rec.nodes
	// Tasks that end after their run are not recorded.
	rec.buf, rec.nodes = nil, nil
	rec.mu.Unlock()
	nodesJSON := joinNodes(buf, nodes)
	run := Run{
		RunID: res.RunID, ThreadID: res.ThreadID, Graph: rec.info.Graph, Status: res.Status, Resumed: rec.info.Resume != nil,
		StartedAt: rec.info.Start.UTC().Format(time.RFC3339Nano), EndedAt: end.UTC().Format(time.RFC3339Nano),
		DurationMS: millis(end.Sub(rec.info.Start)),
	}
	if res.Err != nil {
		run.Error = Summary(res.Err.Error())
	}
	run.UserID, _ = res.State["user_id"].(string)
	messagesJSON, count, err := appendNewMessages(make([]byte, 0, 1024), rec.info, rec.before, res.State, nodes, end)
	if err == nil {
		err = r.write(rec.ctx, run, messagesJSON, count, nodesJSON)
	} else {
		err = fmt.Errorf("audit: record run %s of thread %s: %w", run.RunID, run.ThreadID, err)
	}
	if err != nil && r.OnError != nil {
		r.OnError(err)
	}
}

// write stores a run's record (its messages, count of them, and nodes
// given as JSON) and updates its conversation's: in one transaction when
// the Store is a store.Batcher, else one after the other. The run's record
// is written even when its conversation cannot be read. When the run's
// context carries a store.Deferred for the run's thread, both are handed
// over to it, to be written with the run's end.
func (r *Recorder) write(ctx context.Context, run Run, messages jsonenc.Raw, count int, nodes jsonenc.Raw) error {
	unindexed := store.PutOptions{Index: []string{}}
	// The key, the run's start time and id, is the run's alone and written
	// once: the store need not read an item it would replace.
	runPut := store.BatchPut{Namespace: RunsNS(run.ThreadID), Key: run.StartedAt + "-" + run.RunID, Value: run.value(messages, nodes), Opts: unindexed, New: true}
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
	conv, err := r.conversation(ctx, run, count)
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
// that has none) and counts the run, and the messages it added, in it.
func (r *Recorder) conversation(ctx context.Context, run Run, messages int) (Conversation, error) {
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
	conv.Messages += messages
	if run.UserID != "" {
		conv.UserID = run.UserID
	}
	conv.Graph = run.Graph
	return conv, nil
}

// appendNewMessages appends the JSON list of the messages the run added to
// the messages field (null for none) and counts them. They are stamped:
// the user's at the run's start with the run's other input as meta, the
// others at the end of the node that wrote them (nodes, in their order). The
// answer that resumed an interrupt counts as the user's message.
func appendNewMessages(b []byte, info engine.RunInfo, before int, after map[string]any, nodes []nodeEntry, end time.Time) (_ []byte, count int, err error) {
	start := len(b)
	var metaEntries [8]metaEntry
	meta := metaEntries[:0]
	next := func() {
		if count == 0 {
			b = append(b, '[')
		} else {
			b = append(b, ',')
		}
		count++
		meta = meta[:0]
	}
	if r := info.Resume; r != nil {
		next()
		var v any = r.Value
		if r.Values != nil {
			v = r.Values
		}
		meta = append(meta, metaEntry{key: "resume", value: true})
		if r.InterruptID != "" {
			meta = append(meta, metaEntry{key: "interrupt_id", value: r.InterruptID})
		}
		content := func(b []byte) []byte {
			if s, ok := v.(string); ok {
				return jsonenc.AppendString(b, s)
			}
			return appendSummary(b, v)
		}
		if b, err = appendMessage(b, "user", content, meta, info.Start); err != nil {
			return nil, 0, err
		}
	}
	all, _ := after["messages"].([]any)
	if len(all) > before {
		// The nodes that wrote messages, in their order (nodes is sorted
		// by joinNodes).
		w := 0
		nextWriter := func() (nodeEntry, bool) {
			for ; w < len(nodes); w++ {
				if nodes[w].writesMessages {
					w++
					return nodes[w-1], true
				}
			}
			return nodeEntry{}, false
		}
		for _, raw := range all[before:] {
			next()
			m, _ := raw.(map[string]any)
			role, _ := m["role"].(string)
			for k, v := range m {
				if k != "role" && k != "content" {
					meta = append(meta, metaEntry{key: k, value: v})
				}
			}
			createdAt := end
			switch {
			case role == "user" || role == "human":
				createdAt = info.Start
				for k, v := range info.Input {
					if k == "messages" || v == nil || v == "" {
						// No summary to add (that of nil or "" is empty).
						continue
					}
					meta = setMeta(meta, metaEntry{key: k, value: v, summarize: true})
				}
			default:
				if wr, ok := nextWriter(); ok {
					meta = setMeta(meta, metaEntry{key: "node", value: wr.node})
					if t, ok := wrote(wr); ok {
						createdAt = t
					}
				}
			}
			content := func(b []byte) []byte { return appendContentText(b, m["content"]) }
			if b, err = appendMessage(b, role, content, meta, createdAt); err != nil {
				return nil, 0, err
			}
		}
	}
	if count == 0 {
		return append(b[:start], "null"...), 0, nil
	}
	return append(b, ']'), count, nil
}

// wrote is when a node wrote its messages: its start plus its recorded
// duration, as the times of the records read back add up (the duration
// in milliseconds to the nanosecond, as a float); ok is false when its
// recorded start does not read back as a time.
func wrote(n nodeEntry) (_ time.Time, ok bool) {
	if y := n.start.UTC().Year(); y < 0 || y > 9999 {
		return time.Time{}, false
	}
	return n.start.Add(time.Duration(n.durationMS * float64(time.Millisecond))), true
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

// appendInput appends the JSON object of the summaries of the state fields
// a node's config refers to (names, the identifiers of its config), of the
// conversation for the types that read it, and of a fan-out task's item;
// it appends nothing when there are none.
func appendInput(b []byte, task engine.TaskInfo, names map[string]bool) []byte {
	var keys [16]string
	ks := keys[:0]
	for field := range task.State {
		if field != "state" && names[field] {
			ks = append(ks, field)
		}
	}
	if _, reads := conversationReaders.Load(task.Type); reads && !names["messages"] {
		if _, ok := task.State["messages"]; ok {
			ks = append(ks, "messages")
		}
	}
	if task.Item != nil {
		if _, ok := task.State["item"]; !ok || !names["item"] {
			ks = append(ks, "item")
		}
	}
	if len(ks) == 0 {
		return b
	}
	return appendSummariesOf(b, ks, func(k string) any {
		if k == "item" && task.Item != nil {
			return task.Item
		}
		return task.State[k]
	})
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

// summaryRunes bounds a summary.
const summaryRunes = 240

// Summary describes a value in at most a few hundred characters: strings as
// they are (data URLs by their type and size), other values as compact
// JSON, cut with "…".
func Summary(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		if typ, size, ok := dataURL(x); ok {
			return typ + " (" + strconv.Itoa(size) + " bytes)"
		}
		return cut(x, summaryRunes)
	}
	bp := summaryBufs.Get().(*[]byte)
	b, err := jsonPrefix((*bp)[:0], v, summaryRunes)
	var s string
	if err != nil {
		s = cut(fmt.Sprint(v), summaryRunes)
	} else {
		s = cut(string(b), summaryRunes)
	}
	putSummaryBuf(bp, b)
	return s
}

// dataURL reports whether s is a data URL, with its media type (without
// ";base64") and the size of its data.
func dataURL(s string) (mediaType string, size int, ok bool) {
	if !strings.HasPrefix(s, "data:") {
		return "", 0, false
	}
	i := strings.IndexByte(s, ',')
	if i <= 0 {
		return "", 0, false
	}
	return strings.TrimSuffix(s[:i], ";base64"), len(s) - i - 1, true
}

// cut returns s when it has at most n runes, else its first n runes and
// "…" (invalid UTF-8 in them as U+FFFD).
func cut(s string, n int) string {
	i, cutHere := cutIndex(s, n)
	if !cutHere {
		return s
	}
	if utf8.ValidString(s[:i]) {
		return s[:i] + "…"
	}
	return string([]rune(s[:i])) + "…"
}

// cutIndex returns where the rune after the first n of s starts, and
// whether s has more than n runes.
func cutIndex(s string, n int) (int, bool) {
	if len(s) <= n {
		// A rune takes at least one byte.
		return len(s), false
	}
	count := 0
	for i := range s {
		if count == n {
			return i, true
		}
		count++
	}
	return len(s), false
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
// encoding, the messages and nodes already encoded (r's are not used).
func (r Run) value(messages, nodes jsonenc.Raw) map[string]any {
	v := map[string]any{"run_id": r.RunID, "thread_id": r.ThreadID, "graph": r.Graph, "status": r.Status,
		"started_at": r.StartedAt, "ended_at": r.EndedAt, "duration_ms": r.DurationMS, "messages": messages, "nodes": nodes}
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
			// Decoded in a copy, so that c stays where the caller has it.
			d := *c
			err := fromMap(m, &d)
			*c = d
			return err
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
