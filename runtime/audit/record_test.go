package audit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/audit"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/storage/badger"
	"github.com/graphctl/graphctl/runtime/store"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// clock is a Recorder's clock that the runs of a test set.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

// task is one observed task of a recorded run.
type task struct {
	info   engine.TaskInfo
	events []event.Event
	end    engine.TaskEnd
}

// recordedRun is a run as the engine reports it to its observers.
type recordedRun struct {
	info  engine.RunInfo
	tasks []task
	// ends lists the order the tasks end in (indexes into tasks); nil
	// means the order they start in.
	ends []int
	res  *engine.Result
	end  time.Time
}

// record reports run to r the way the engine does: the run starts, its
// tasks start, emit their events and end, the run ends.
func record(ctx context.Context, r *audit.Recorder, run recordedRun) {
	ctx, obs := r.ObserveRun(ctx, run.info)
	nodes := make([]engine.NodeObservation, len(run.tasks))
	for i, t := range run.tasks {
		_, nodes[i] = r.ObserveNode(ctx, t.info)
		for _, ev := range t.events {
			nodes[i].Event(ev)
		}
	}
	ends := run.ends
	if ends == nil {
		for i := range run.tasks {
			ends = append(ends, i)
		}
	}
	for _, i := range ends {
		nodes[i].End(run.tasks[i].end)
	}
	obs.End(run.res)
}

// message is a state message as the engine keeps it.
func message(role, content, id string) map[string]any {
	return map[string]any{"role": role, "content": content, "id": id}
}

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.FixedZone("CET", 3600))

// slotFillingConfigs are the configs of the slot-filling graph's nodes that
// a turn runs (graphs/slot_filling.cue).
var slotFillingConfigs = map[string]map[string]any{
	"extract": {"mode": "auto", "fields": map[string]any{
		"model": map[string]any{"pattern": `(?i)\b[A-Z]{3,4}\d{3,4}[A-Z]{2,4}\d{0,2}\b`, "normalize": "upper"},
		"part":  map[string]any{"pattern": `(?i)\bPS\d{5,10}\b`, "normalize": "upper"},
		"symptoms": map[string]any{"lexicon": map[string]any{
			"leaking": []any{"leak", "leaks", "leaking", "leaky", "water on the floor", "puddle", "dripping"},
			"noisy":   []any{"noise", "noises", "noisy", "loud", "grinding", "rattling", "squealing", "buzzing", "humming", "banging"},
		}},
		"goal": map[string]any{"lexicon": map[string]any{
			"diagnose_repair":     []any{"fix", "repair", "broken", "not working", "diagnose", "troubleshoot"},
			"install_instruction": []any{"install", "installing", "installation", "replace", "replacing", "put in", "swap"},
		}},
	}},
	"ask_goal": {"text": "${model != '' ? 'Got it: model ' + model + '. ' : ''}${part != '' ? 'Part ' + part + ' noted. ' : ''}" +
		"${len(symptoms) > 0 ? 'I noted the symptoms: ' + join(symptoms, ', ') + '. ' : ''}What would you like to do?"},
}

const askGoalReply = "Got it: model WDT780SAEM1. I noted the symptoms: leaking. What would you like to do? I can:\n" +
	"1. give installation instructions for a part\n2. check whether a part is compatible with your model\n3. diagnose and repair a problem"

// slotFillingTurn is turn n (from 0) of a slot-filling conversation as
// graphctl bench serve drives it: the same message every turn, answered by
// extract, route_goal and ask_goal.
func slotFillingTurn(thread string, n int, start time.Time) recordedRun {
	var history []any
	for i := 0; i < n; i++ {
		history = append(history, message("user", "My dishwasher WDT780SAEM1 is leaking", fmt.Sprintf("u%d", i)),
			message("assistant", askGoalReply, fmt.Sprintf("a%d", i)))
	}
	user := message("user", "My dishwasher WDT780SAEM1 is leaking", fmt.Sprintf("u%d", n))
	input := map[string]any{"messages": []any{map[string]any{"role": "user", "content": "My dishwasher WDT780SAEM1 is leaking"}}}
	before := map[string]any{"messages": history}
	withUser := append(append([]any(nil), history...), user)
	known := map[string]any{"messages": withUser, "model": "", "part": "", "goal": "", "symptoms": []any{}}
	if n > 0 {
		known["model"], known["symptoms"] = "WDT780SAEM1", []any{"leaking"}
	}
	extracted := map[string]any{"messages": withUser, "model": "WDT780SAEM1", "part": "", "goal": "", "symptoms": []any{"leaking"}}
	reply := message("assistant", askGoalReply, fmt.Sprintf("a%d", n))
	after := map[string]any{"messages": append(append([]any(nil), withUser...), reply), "model": "WDT780SAEM1", "symptoms": []any{"leaking"}}
	runID := fmt.Sprintf("run-%s-%d", thread, n)
	at := func(us int) time.Time { return start.Add(time.Duration(us) * time.Microsecond) }
	taskInfo := func(name, typ string, step int, state map[string]any, us int) engine.TaskInfo {
		return engine.TaskInfo{ThreadID: thread, RunID: runID, Graph: "slot_filling", Node: name, Type: typ, Task: name + "-task",
			Step: 4*n + step, Config: slotFillingConfigs[name], Start: at(us), State: state}
	}
	return recordedRun{
		info: engine.RunInfo{ThreadID: thread, RunID: runID, Graph: "slot_filling", Start: start, Input: input, State: before},
		tasks: []task{
			{info: taskInfo("extract", "extract", 0, known, 150),
				events: []event.Event{{Type: "extract", Payload: map[string]any{"fields": []any{"model", "symptoms"}}}},
				end:    engine.TaskEnd{Status: "ok", Duration: 58123 * time.Nanosecond, Attempts: 1, Update: node.Update{"model": "WDT780SAEM1", "symptoms": []any{"leaking"}}}},
			{info: taskInfo("route_goal", "route", 1, extracted, 400),
				end: engine.TaskEnd{Status: "ok", Duration: 1200 * time.Nanosecond, Attempts: 1, Update: node.Update{}}},
			{info: taskInfo("ask_goal", "reply", 2, extracted, 460),
				end: engine.TaskEnd{Status: "ok", Duration: 33456 * time.Nanosecond, Attempts: 1, Update: node.Update{"messages": reply}}},
		},
		res: &engine.Result{ThreadID: thread, RunID: runID, Status: engine.StatusCompleted, State: after},
		end: at(585),
	}
}

// auditScenario lists runs that exercise every part of a record: parallel
// tasks of one step ending out of order, fan-out items, retries, errors
// caught and not, retrieval counts and token usage, messages as text parts
// with meta, resumed interrupts, a user id, long and data URL values.
func auditScenario() []recordedRun {
	// As the extract and llm node packages declare.
	audit.ReadsConversation("extract")
	audit.ReadsConversation("llm")
	long := strings.Repeat("<é&> ", 80)
	dataURL := "data:image/png;base64," + strings.Repeat("A", 4000)
	start := t0
	var runs []recordedRun
	for n := 0; n < 3; n++ {
		runs = append(runs, slotFillingTurn("t1", n, start.Add(time.Duration(n)*time.Second)))
	}
	start = t0.Add(time.Minute)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	state := map[string]any{
		"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "look " + long},
			map[string]any{"type": "image_url", "image_url": dataURL}, map[string]any{"type": "text", "text": "second part"}}, "id": "m1", "name": "ann"}},
		"query": long, "image": dataURL, "state": "skipped", "docs": []any{1.5, nil, true, map[string]any{"b": 1, "a": []any{"x"}}},
		"user_id": "u-42", "count": 3, "empty": map[string]any{},
	}
	fan := func(name string, item any, ms int) engine.TaskInfo {
		return engine.TaskInfo{ThreadID: "t2", RunID: "r2", Graph: "research", Node: name, Type: "retrieve", Task: name + fmt.Sprint(ms), Step: 1,
			Config: map[string]any{"query": "${query} ${docs[0]} state.count", "k": 5}, Start: at(ms), State: state, Item: item}
	}
	after := map[string]any{"user_id": "u-42", "messages": append(append([]any(nil), state["messages"].([]any)...),
		map[string]any{"role": "assistant", "content": "found " + long, "id": "m2", "tool_calls": []any{map[string]any{"name": "search", "args": map[string]any{"q": "x"}}}},
		map[string]any{"role": "tool", "content": []any{map[string]any{"type": "text", "text": "tool says"}}, "id": "m3", "tool_call_id": "c1"},
		map[string]any{"role": "assistant", "content": map[string]any{"odd": true}},
		"not a message",
	)}
	runs = append(runs, recordedRun{
		info: engine.RunInfo{ThreadID: "t2", RunID: "r2", Graph: "research", Start: start,
			Input: map[string]any{"messages": state["messages"], "chat_id": 12345, "lang": "fr", "photo": dataURL, "none": nil, "opts": map[string]any{"z": 1, "a": "b"}},
			State: map[string]any{}},
		tasks: []task{
			{info: engine.TaskInfo{ThreadID: "t2", RunID: "r2", Graph: "research", Node: "plan", Type: "llm", Task: "p", Step: 0,
				Config: map[string]any{"prompt": "Answer ${query}"}, Start: at(1), State: state},
				events: []event.Event{
					{Type: node.UsageEvent, Payload: map[string]any{"prompt_tokens": 120, "completion_tokens": int64(30), "total_tokens": 150.0}},
					{Type: node.UsageEvent, Payload: map[string]any{"prompt_tokens": 10, "total_tokens": 10}},
					{Type: "token", Payload: map[string]any{"text": "x"}},
				},
				end: engine.TaskEnd{Status: "ok", Duration: 12345678 * time.Nanosecond, Attempts: 3, Update: node.Update{"messages": after["messages"].([]any)[1], "plan": []any{"a", "b"}}}},
			{info: fan("search", map[string]any{"q": "first", "n": 1}, 20),
				events: []event.Event{{Type: "retrieval", Payload: map[string]any{"count": 4}}, {Type: "web_search", Payload: map[string]any{"count": 2.0}}},
				end:    engine.TaskEnd{Status: "ok", Duration: 5 * time.Millisecond, Attempts: 1, Update: node.Update{"docs": []any{"d1", "d2"}, "messages": after["messages"].([]any)[2]}}},
			{info: fan("search", "second & <third>", 20),
				events: []event.Event{{Type: "memory_recalled", Payload: map[string]any{}}},
				end:    engine.TaskEnd{Status: "caught", Duration: 7 * time.Millisecond, Attempts: 2, Err: errors.New("search failed: " + long), CaughtBy: "fallback"}},
			{info: fan("search", nil, 19),
				end: engine.TaskEnd{Status: "error", Duration: 1500 * time.Microsecond, Attempts: 1, Err: errors.New("timeout")}},
			{info: engine.TaskInfo{ThreadID: "t2", RunID: "r2", Graph: "research", Node: "wait", Type: "interrupt", Task: "w", Step: 2,
				Start: at(40), State: state},
				end: engine.TaskEnd{Status: "interrupted", Duration: 100 * time.Microsecond}},
		},
		ends: []int{0, 2, 3, 1, 4},
		res:  &engine.Result{ThreadID: "t2", RunID: "r2", Status: engine.StatusError, Err: errors.New("step 1: timeout"), State: after},
		end:  at(50),
	})
	for i, resume := range []*engine.Resume{
		{InterruptID: "i1", Value: map[string]any{"approved": true, "note": "ok <fine>"}},
		{Values: map[string]any{"i2": "yes", "i3": []any{1, 2}}},
		{Value: "plain answer"},
		{Value: nil},
	} {
		rs := at(1000 * (i + 1))
		runs = append(runs, recordedRun{
			info: engine.RunInfo{ThreadID: "t2", RunID: fmt.Sprintf("r2-resume%d", i), Graph: "research", Start: rs, Resume: resume, State: after},
			tasks: []task{{info: engine.TaskInfo{ThreadID: "t2", Node: "wait", Type: "interrupt", Step: 3 + i, Start: rs.Add(time.Millisecond), State: after},
				end: engine.TaskEnd{Status: "ok", Duration: time.Millisecond, Update: node.Update{"approved": true}}}},
			res: &engine.Result{ThreadID: "t2", RunID: fmt.Sprintf("r2-resume%d", i), Status: engine.StatusCompleted, State: map[string]any{"messages": after["messages"], "user_id": 42}},
			end: rs.Add(3 * time.Millisecond),
		})
	}
	// A run without a result records nothing.
	runs = append(runs, recordedRun{info: engine.RunInfo{ThreadID: "t3", RunID: "r3", Graph: "g", Start: at(9000)}, end: at(9001)})
	return runs
}

// storedPut is a put the Recorder made, with the value's JSON as the Store
// writes it.
type storedPut struct {
	Namespace []string        `json:"namespace"`
	Key       string          `json:"key"`
	Value     json.RawMessage `json:"value"`
}

// TestRecordedRunsMatchGolden records the scenario's runs and compares the
// values the Recorder hands to the Store, byte for byte as the Store
// encodes them, and what Log and Conversations read back, with the golden
// files recorded before (go test -run Golden -update rewrites them).
func TestRecordedRunsMatchGolden(t *testing.T) {
	db, err := badger.Open("", badger.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := db.Store()
	clk := &clock{}
	r := &audit.Recorder{Store: st, Now: clk.Now, OnError: func(err error) { t.Error(err) }}
	var puts []storedPut
	for _, run := range auditScenario() {
		clk.now = run.end
		d := &store.Deferred{Thread: run.info.ThreadID}
		record(store.WithDeferred(context.Background(), d), r, run)
		handed := d.Take()
		for _, p := range handed {
			prep, err := store.PrepareItem(p.Namespace, p.Key, p.Value, p.Opts, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, prep.Raw); err != nil || !bytes.Equal(compact.Bytes(), prep.Raw) {
				t.Errorf("%q/%s: the value is not compact JSON (%v): %s", p.Namespace, p.Key, err, prep.Raw)
			}
			if p.Namespace[1] == "runs" {
				checkStructEncoding(t, prep.Raw)
			}
			puts = append(puts, storedPut{Namespace: p.Namespace, Key: p.Key, Value: prep.Raw})
		}
		if len(handed) > 0 {
			if err := st.(store.Batcher).PutBatch(context.Background(), handed); err != nil {
				t.Fatal(err)
			}
		}
	}
	type threadLog struct {
		Conversation *audit.Conversation `json:"conversation"`
		Runs         []audit.Run         `json:"runs"`
	}
	logs := map[string]threadLog{}
	for _, th := range []string{"t1", "t2"} {
		conv, runs, err := audit.Log(context.Background(), st, th)
		if err != nil {
			t.Fatal(err)
		}
		logs[th] = threadLog{conv, runs}
	}
	if _, _, err := audit.Log(context.Background(), st, "t3"); !errors.Is(err, audit.ErrNoLog) {
		t.Errorf("a run without a result was recorded: %v", err)
	}
	convs, err := audit.Conversations(context.Background(), st, "u-42")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []struct {
		file string
		v    any
	}{{"puts.golden.json", puts}, {"log.golden.json", logs}, {"conversations.golden.json", convs}} {
		got, err := json.MarshalIndent(g.v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		path := filepath.Join("testdata", g.file)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what was recorded:\n%s", path, firstDifference(got, want))
		}
	}
}

// checkStructEncoding checks that a run record's messages and nodes are
// encoded as encoding/json encodes the Message and Node structs Log reads
// them into.
func checkStructEncoding(t *testing.T, raw []byte) {
	t.Helper()
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		name string
		into any
	}{{"messages", &[]audit.Message{}}, {"nodes", &[]audit.Node{}}} {
		if err := json.Unmarshal(members[m.name], m.into); err != nil {
			t.Fatal(err)
		}
		again, err := json.Marshal(m.into)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, members[m.name]) {
			t.Errorf("%s stored as\n%s\nencoding/json encodes them as\n%s", m.name, members[m.name], again)
		}
	}
}

// firstDifference shows the lines around the first line where got and want
// differ.
func firstDifference(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		if i >= len(g) || i >= len(w) || g[i] != w[i] {
			line := func(l []string) string {
				if i < len(l) {
					return l[i]
				}
				return "(end)"
			}
			return fmt.Sprintf("line %d\n got: %s\nwant: %s", i+1, line(g), line(w))
		}
	}
	return ""
}

// BenchmarkRecordRun measures the audit log's work for one run: a
// slot-filling turn (the sixth of a conversation) observed from its start
// to its end, its conversation record read from a Badger store, and the
// records it hands over encoded as the Store encodes them.
func BenchmarkRecordRun(b *testing.B) {
	db, err := badger.Open("", badger.Options{InMemory: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	st := db.Store()
	clk := &clock{}
	r := &audit.Recorder{Store: st, Now: clk.Now, OnError: func(err error) { b.Fatal(err) }}
	audit.ReadsConversation("extract")
	run := slotFillingTurn("t1", 5, t0)
	clk.now = run.end
	// The conversation exists, as it does from a thread's second run on.
	d := &store.Deferred{Thread: "t1"}
	record(store.WithDeferred(context.Background(), d), r, run)
	if err := st.(store.Batcher).PutBatch(context.Background(), d.Take()); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	size := 0
	for b.Loop() {
		d := &store.Deferred{Thread: "t1"}
		record(store.WithDeferred(context.Background(), d), r, run)
		size = 0
		for _, p := range d.Take() {
			prep, err := store.PrepareItem(p.Namespace, p.Key, p.Value, p.Opts, time.Time{})
			if err != nil {
				b.Fatal(err)
			}
			size += len(prep.Raw)
		}
	}
	b.ReportMetric(float64(size), "bytes/record")
}
