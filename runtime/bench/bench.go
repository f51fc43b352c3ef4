// Package bench measures the runtime on the scenarios graphctl is compared
// on: a long loop of super-steps (per-step overhead, in memory and with
// durable Badger checkpoints), a long chat on one thread (per-turn cost as the
// thread grows, and the space its checkpoints take on disk), a fan-out and
// join, and validating a large graph. The graphs use only builtin node types,
// so the same three graphs can be written for another runtime and measured on
// the same machine (examples/bench/langgraphjs does so for LangGraph.js).
package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"time"

	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/checkpoint/memory"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/load"
	"github.com/graphctl/graphctl/runtime/storage/badger"
)

// Options size the scenarios.
type Options struct {
	// LoopSteps is the length of the loop graph's run (default 1000).
	LoopSteps int
	// LoopRuns is how many loop runs are timed per backend (default 5).
	LoopRuns int
	// ChatTurns is the number of turns of the long chat (default 1000).
	ChatTurns int
	// FanOut is the number of parallel tasks of the fan-out graph (default 100).
	FanOut int
	// FanOutRuns is how many fan-out runs are timed (default 20).
	FanOutRuns int
	// ValidateNodes is the size of the generated graph validated (default 1000).
	ValidateNodes int
	// Dir holds the Badger databases; a temporary directory when empty.
	Dir string
	// Postgres, when set, is a PostgreSQL URL: the loop and chat scenarios
	// also run there, in a schema of their own dropped afterwards.
	Postgres string
}

func (o *Options) defaults() {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.LoopSteps, 1000)
	def(&o.LoopRuns, 5)
	def(&o.ChatTurns, 1000)
	def(&o.FanOut, 100)
	def(&o.FanOutRuns, 20)
	def(&o.ValidateNodes, 1000)
}

// Result is one measured figure.
type Result struct {
	Scenario string  `json:"scenario"`
	Metric   string  `json:"metric"`
	Value    float64 `json:"value"`
	Unit     string  `json:"unit"`
}

// LoopGraph is a graph whose one node increments a counter and loops back to
// itself until it has run steps times: one super-step per iteration.
func LoopGraph(steps int) string {
	return fmt.Sprintf(`dsl_version: "graphctl/v1"
name: "bench_loop"
state: count: {type: "int"}
defaults: recursion_limit: %d
start: "inc"
nodes: inc: {
	type: "set"
	config: set: count: "count + 1"
	routes: [{when: "count < %d", to: "inc"}]
	default: "END"
}
`, steps+1, steps)
}

// ChatGraph answers each user message with one assistant message, so every
// turn appends two messages to the thread.
const ChatGraph = `dsl_version: "graphctl/v1"
name: "bench_chat"
state: {
	messages: {type: "messages"}
	turns: {type: "int", reducer: "add"}
}
start: "answer"
nodes: answer: {
	type: "reply"
	config: text: "Answer number ${turns + 1}: noted, thank you for the details you gave."
	next: "count"
}
nodes: count: {
	type: "set"
	config: set: turns: "1"
	next: "END"
}
`

// FanOutGraph sends one task per item of a list to a worker node, whose
// results the append reducer gathers, then a join node counts them.
const FanOutGraph = `dsl_version: "graphctl/v1"
name: "bench_fanout"
state: {
	items: {type: "list<int>"}
	results: {type: "list<int>", reducer: "append"}
	total: {type: "int"}
}
start: "plan"
nodes: {
	plan: {
		type: "route"
		map: {over: "items", to: "work", as: "item"}
	}
	work: {
		type: "set"
		config: set: results: "[item * 2]"
		next: "join"
	}
	join: {
		type: "set"
		config: set: total: "len(results)"
		next: "END"
	}
}
`

func compileSource(name, src string) (*compile.Graph, error) {
	g, diags := runtime.LoadSource(name, []byte(src))
	if diags.HasErrors() {
		return nil, fmt.Errorf("bench graph %s: %v", name, diags)
	}
	return g, nil
}

// Run measures every scenario, calling report after each figure.
func Run(ctx context.Context, opts Options, report func(Result)) error {
	opts.defaults()
	dir := opts.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "graphctl-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	steps := []func(context.Context, Options, string, func(Result)) error{loop, chat, chatInMemory, fanOut, validate}
	for _, step := range steps {
		if err := step(ctx, opts, dir, report); err != nil {
			return err
		}
	}
	return nil
}

// backend opens a checkpointer for a scenario: memory, badger and
// badger-sync (Badger's default, commits not fsynced) or badger-fsync
// (every commit fsynced). See runDurability for the runs on each.
func backend(name, dir string) (checkpoint.Checkpointer, func(), error) {
	if url, ok := strings.CutPrefix(name, "postgres="); ok {
		cp, closeFn, _, err := postgresBackend(url)
		return cp, closeFn, err
	}
	switch name {
	case "memory":
		return memory.New(), func() {}, nil
	case "badger", "badger-sync", "badger-fsync":
		db, err := badger.Open(dir, badger.Options{SyncWrites: name == "badger-fsync"})
		if err != nil {
			return nil, nil, err
		}
		return db.Checkpointer(), func() { db.Close() }, nil
	}
	return nil, nil, fmt.Errorf("unknown backend %q", name)
}

func loop(ctx context.Context, opts Options, dir string, report func(Result)) error {
	g, err := compileSource("loop.cue", LoopGraph(opts.LoopSteps))
	if err != nil {
		return err
	}
	names := []string{"memory", "badger", "badger-sync", "badger-fsync"}
	if opts.Postgres != "" {
		names = append(names, "postgres="+opts.Postgres)
	}
	for _, name := range names {
		var cp checkpoint.Checkpointer
		var closeFn func()
		var trips func() int64
		var err error
		if url, ok := strings.CutPrefix(name, "postgres="); ok {
			cp, closeFn, trips, err = postgresBackend(url)
		} else {
			cp, closeFn, err = backend(name, filepath.Join(dir, "loop-"+name))
		}
		if err != nil {
			return err
		}
		eng := engine.New(g, cp, engine.Options{})
		runs := opts.LoopRuns
		var tripsPerStep float64
		if name == "badger-fsync" || strings.HasPrefix(name, "postgres=") {
			runs = 1
		}
		var best time.Duration
		var cpuStart time.Duration
		for i := 0; i < runs+1; i++ { // the first run warms up
			if i == 1 {
				cpuStart, _ = processCPU()
			}
			start := time.Now()
			var before int64
			if trips != nil {
				before = trips()
			}
			res, err := eng.Run(ctx, engine.Request{ThreadID: fmt.Sprintf("loop-%d", i), Input: map[string]any{}, Durability: runDurability(name)}, nil)
			if err != nil {
				eng.Close()
				closeFn()
				return fmt.Errorf("loop on %s: %w", name, err)
			}
			if res.Steps != opts.LoopSteps {
				eng.Close()
				closeFn()
				return fmt.Errorf("loop on %s ran %d steps, want %d", name, res.Steps, opts.LoopSteps)
			}
			if d := time.Since(start); i > 0 && (best == 0 || d < best) {
				best = d
			}
			if trips != nil {
				tripsPerStep = float64(trips()-before) / float64(opts.LoopSteps)
			}
		}
		cpuEnd, cpuOK := processCPU()
		eng.Close()
		closeFn()
		label, _, _ := strings.Cut(name, "=")
		report(Result{"loop", "per super-step, " + label, float64(best.Microseconds()) / float64(opts.LoopSteps), "µs"})
		if cpuOK {
			report(Result{"loop", "CPU per super-step (mean), " + label, float64((cpuEnd - cpuStart).Microseconds()) / float64(runs*opts.LoopSteps), "µs"})
		}
		if trips != nil {
			report(Result{"loop", "SQL round trips per super-step, " + label, tripsPerStep, ""})
		}
	}
	return nil
}

// runDurability is the durability of the runs on a backend: LangGraph's
// default (async: a run's checkpoints written behind it, in batches) but
// on badger-sync and badger-fsync, whose runs write each checkpoint before
// the next step starts (sync).
func runDurability(backend string) checkpoint.Durability {
	if backend == "badger-sync" || backend == "badger-fsync" {
		return checkpoint.DurabilitySync
	}
	return ""
}

func chat(ctx context.Context, opts Options, dir string, report func(Result)) error {
	g, err := compileSource("chat.cue", ChatGraph)
	if err != nil {
		return err
	}
	dbDir := filepath.Join(dir, "chat")
	db, err := badger.Open(dbDir, badger.Options{})
	if err != nil {
		return err
	}
	cp := db.Checkpointer()
	eng := engine.New(g, cp, engine.Options{})
	window := max(opts.ChatTurns/100, 5)
	lateFrom := opts.ChatTurns * 2 / 5 // turn 400 of 1000
	// Whether a turn's cost depends on the thread's length is read from
	// medians over more turns: single turns take longer when Badger flushes
	// or compacts in the background, or when the machine is busy.
	wide := max(opts.ChatTurns/20, 5)
	// A new database and process pay once for work that is not the
	// thread's: the database's first writes fault its files' pages in, and
	// a small heap is collected more often. A warm-up thread of as many
	// turns as the wide window, deleted before the chat starts, pays for
	// it, so that the chat's early turns cost what a new thread's cost in a
	// process and database already in use, and the late/early ratios
	// compare threads of different lengths, not a cold start with a warm
	// process.
	for turn := 1; turn <= wide; turn++ {
		input := map[string]any{"messages": []any{map[string]any{"role": "user", "content": fmt.Sprintf("Warm-up turn %d: a detail about another order.", turn)}}}
		if _, err := eng.Run(ctx, engine.Request{ThreadID: "warm-up", Input: input}, nil); err != nil {
			eng.Close()
			db.Close()
			return fmt.Errorf("chat warm-up turn %d: %w", turn, err)
		}
	}
	if err := cp.DeleteThread(ctx, "warm-up"); err != nil {
		eng.Close()
		db.Close()
		return fmt.Errorf("chat: delete the warm-up thread: %w", err)
	}
	report(Result{"chat", "warm-up turns before the chat, on a thread then deleted", float64(wide), "turns"})
	var early, late, earlyWide, lateWide turnCost
	var final map[string]any
	// turnOn runs one turn on a thread and measures it.
	turnOn := func(thread string, turn int) (map[string]any, turnSample, error) {
		return chatTurn(ctx, eng, thread, turn)
	}
	// The chat's early and late windows are measured at different times,
	// so whatever else the machine does meanwhile moves their ratio. Each
	// turn of the late window is therefore also paired with a turn of a
	// new thread run just before it (its turns 2 on, after one unmeasured
	// turn): the pairs share the same moment, and their ratio is the cost of
	// a long thread's turn against a new one's. The new thread is deleted
	// afterwards.
	var fresh turnCost // beside the late wide window's turns, lateWide
	for turn := 1; turn <= opts.ChatTurns; turn++ {
		if k := turn - lateFrom; k >= 1 && k <= wide {
			if k == 1 {
				if _, _, err := turnOn("new-thread", 1); err != nil {
					eng.Close()
					db.Close()
					return err
				}
			}
			_, sample, err := turnOn("new-thread", k+1)
			if err != nil {
				eng.Close()
				db.Close()
				return err
			}
			fresh.add(sample)
		}
		state, sample, err := turnOn("chat", turn)
		if err != nil {
			eng.Close()
			db.Close()
			return err
		}
		switch {
		case turn > 1 && turn <= 1+window:
			early.add(sample)
		case turn > lateFrom && turn <= lateFrom+window:
			late.add(sample)
		}
		switch {
		case turn > 1 && turn <= 1+wide:
			earlyWide.add(sample)
		case turn > lateFrom && turn <= lateFrom+wide:
			lateWide.add(sample)
		}
		final = state
	}
	if err := cp.DeleteThread(ctx, "new-thread"); err != nil {
		eng.Close()
		db.Close()
		return fmt.Errorf("chat: delete the new thread: %w", err)
	}
	record, err := meanRecord(ctx, cp, "chat")
	eng.Close()
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("chat: %w", err)
	}
	report(Result{"chat", fmt.Sprintf("per turn, turns 2-%d, badger", 1+window), early.meanWall(), "µs"})
	report(Result{"chat", fmt.Sprintf("per turn, turns %d-%d, badger", lateFrom+1, lateFrom+window), late.meanWall(), "µs"})
	w1, wl := earlyWide.median(false), lateWide.median(false)
	report(Result{"chat", fmt.Sprintf("median turn, turns 2-%d", 1+wide), w1, "µs"})
	report(Result{"chat", fmt.Sprintf("median turn, turns %d-%d", lateFrom+1, lateFrom+wide), wl, "µs"})
	report(Result{"chat", "late turn / early turn (medians)", wl / w1, "×"})
	if c1, cl := earlyWide.meanCPU(), lateWide.meanCPU(); c1 > 0 {
		// Means, as examples/bench/langgraphjs reports them, for the ratios.
		report(Result{"chat", fmt.Sprintf("CPU per turn, turns 2-%d, badger", 1+wide), c1, "µs"})
		report(Result{"chat", fmt.Sprintf("CPU per turn, turns %d-%d, badger", lateFrom+1, lateFrom+wide), cl, "µs"})
	}
	if c1, cl := earlyWide.median(true), lateWide.median(true); c1 > 0 {
		report(Result{"chat", fmt.Sprintf("median CPU per turn, turns 2-%d", 1+wide), c1, "µs"})
		report(Result{"chat", fmt.Sprintf("median CPU per turn, turns %d-%d", lateFrom+1, lateFrom+wide), cl, "µs"})
		report(Result{"chat", "late turn / early turn, CPU (medians)", cl / c1, "×"})
	}
	if f, l := fresh.median(false), lateWide.median(false); f > 0 {
		report(Result{"chat", fmt.Sprintf("median turn, turns 2-%d of a new thread, each beside one of turns %d-%d", 1+wide, lateFrom+1, lateFrom+wide), f, "µs"})
		report(Result{"chat", "late turn / new thread's turn, same moments (medians)", l / f, "×"})
	}
	if f, l := fresh.median(true), lateWide.median(true); f > 0 {
		report(Result{"chat", fmt.Sprintf("median CPU per turn, turns 2-%d of a new thread", 1+wide), f, "µs"})
		report(Result{"chat", "late turn / new thread's turn, same moments, CPU (medians)", l / f, "×"})
	}
	if a1, al := earlyWide.medianAllocated(), lateWide.medianAllocated(); a1 > 0 {
		// Bytes allocated are counted, not timed: the machine's other work
		// does not move them.
		report(Result{"chat", fmt.Sprintf("median bytes allocated per turn, turns 2-%d", 1+wide), a1, "B"})
		report(Result{"chat", fmt.Sprintf("median bytes allocated per turn, turns %d-%d", lateFrom+1, lateFrom+wide), al, "B"})
		report(Result{"chat", "late turn / early turn, bytes allocated (medians)", al / a1, "×"})
	}
	report(Result{"chat", "checkpoint record, mean (without input)", record, "B"})
	state, err := json.Marshal(final)
	if err != nil {
		return err
	}
	if err := compactDir(dbDir); err != nil {
		return fmt.Errorf("chat: %w", err)
	}
	size, err := dirSize(dbDir)
	if err != nil {
		return err
	}
	report(Result{"chat", fmt.Sprintf("final state of %d turns (JSON)", opts.ChatTurns), float64(len(state)) / 1024, "KiB"})
	report(Result{"chat", "data dir on disk (du, compacted)", float64(size) / 1024, "KiB"})
	report(Result{"chat", "on disk / final state", float64(size) / float64(len(state)), "×"})
	return nil
}

// chatInMemory runs the chat on in-memory checkpoints: without the disk's
// commits and flushes, whose cost varies with whatever else the machine and
// the database do, the early and late turns show whether the runtime's own
// work grows with the thread.
func chatInMemory(ctx context.Context, opts Options, _ string, report func(Result)) error {
	g, err := compileSource("chat.cue", ChatGraph)
	if err != nil {
		return err
	}
	eng := engine.New(g, memory.New(), engine.Options{})
	defer eng.Close()
	wide := max(opts.ChatTurns/20, 5)
	lateFrom := opts.ChatTurns * 2 / 5
	// As on Badger, a warm-up thread first pays for what a new process
	// pays once.
	for turn := 1; turn <= wide; turn++ {
		if _, _, err := chatTurn(ctx, eng, "warm-up", turn); err != nil {
			return fmt.Errorf("chat in memory, warm-up: %w", err)
		}
	}
	var early, late turnCost
	for turn := 1; turn <= opts.ChatTurns; turn++ {
		_, sample, err := chatTurn(ctx, eng, "chat", turn)
		if err != nil {
			return fmt.Errorf("chat in memory: %w", err)
		}
		switch {
		case turn > 1 && turn <= 1+wide:
			early.add(sample)
		case turn > lateFrom && turn <= lateFrom+wide:
			late.add(sample)
		}
	}
	w1, wl := early.median(false), late.median(false)
	report(Result{"chat", fmt.Sprintf("median turn, turns 2-%d, memory", 1+wide), w1, "µs"})
	report(Result{"chat", fmt.Sprintf("median turn, turns %d-%d, memory", lateFrom+1, lateFrom+wide), wl, "µs"})
	report(Result{"chat", "late turn / early turn (medians), memory", wl / w1, "×"})
	if a1, al := early.medianAllocated(), late.medianAllocated(); a1 > 0 {
		report(Result{"chat", "late turn / early turn, bytes allocated (medians), memory", al / a1, "×"})
	}
	return nil
}

// chatTurn runs one turn of the chat graph on a thread and measures it.
func chatTurn(ctx context.Context, eng *engine.Engine, thread string, turn int) (map[string]any, turnSample, error) {
	input := map[string]any{"messages": []any{map[string]any{"role": "user", "content": fmt.Sprintf("Turn %d: here is one more detail about my order and its delivery.", turn)}}}
	alloc0 := allocatedBytes()
	cpu0, _ := processCPU()
	start := time.Now()
	res, err := eng.Run(ctx, engine.Request{ThreadID: thread, Input: input}, nil)
	wall := time.Since(start)
	cpu1, _ := processCPU()
	alloc1 := allocatedBytes()
	if err != nil {
		return nil, turnSample{}, fmt.Errorf("chat turn %d of thread %s: %w", turn, thread, err)
	}
	return res.State, turnSample{wall: wall, cpu: cpu1 - cpu0, allocated: alloc1 - alloc0}, nil
}

// allocatedBytes is the process's cumulative count of bytes allocated on
// the heap. runtime.ReadMemStats counts every allocation up to the call
// (it stops the world to do so; it is called between timed turns), where
// runtime/metrics counts small ones only when their span is refilled.
func allocatedBytes() uint64 {
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	return ms.TotalAlloc
}

// turnSample is what one turn cost: wall-clock and CPU time, and the bytes
// the process allocated meanwhile.
type turnSample struct {
	wall, cpu time.Duration
	allocated uint64
}

// turnCost records the wall-clock and CPU time of turns, and the bytes
// allocated during them.
type turnCost struct {
	wall, cpu []time.Duration
	allocated []uint64
}

func (t *turnCost) add(s turnSample) {
	t.wall = append(t.wall, s.wall)
	t.cpu = append(t.cpu, s.cpu)
	t.allocated = append(t.allocated, s.allocated)
}

// medianAllocated is the median of the bytes allocated per turn (0 when
// there were no turns).
func (t *turnCost) medianAllocated() float64 {
	if len(t.allocated) == 0 {
		return 0
	}
	a := slices.Clone(t.allocated)
	slices.Sort(a)
	return float64(a[len(a)/2])
}

// meanWall is the mean wall-clock time of a turn in µs.
func (t *turnCost) meanWall() float64 {
	var total time.Duration
	for _, d := range t.wall {
		total += d
	}
	return float64(total.Microseconds()) / float64(max(len(t.wall), 1))
}

// meanCPU is the mean CPU time of a turn in µs (0 where it is not known).
func (t *turnCost) meanCPU() float64 {
	var total time.Duration
	for _, d := range t.cpu {
		total += d
	}
	return float64(total.Microseconds()) / float64(max(len(t.cpu), 1))
}

// median is the median wall-clock or CPU time of a turn in µs (0 when
// there were none, or CPU time is not known here).
func (t *turnCost) median(cpu bool) float64 {
	ds := slices.Clone(t.wall)
	if cpu {
		ds = slices.Clone(t.cpu)
	}
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	m := ds[len(ds)/2]
	if len(ds)%2 == 0 {
		m = (ds[len(ds)/2-1] + m) / 2
	}
	return float64(m.Nanoseconds()) / 1000
}

// meanRecord is the mean size of the thread's checkpoint records as stored
// (checkpoint.EncodeRecord), without the turn's input that an input
// checkpoint carries: the bytes of metadata each checkpoint costs.
func meanRecord(ctx context.Context, cp checkpoint.Checkpointer, thread string) (float64, error) {
	history, err := cp.History(ctx, thread, checkpoint.ListOptions{})
	if err != nil {
		return 0, err
	}
	var total int
	for _, c := range history {
		c.Input = nil
		rec, err := checkpoint.EncodeRecord(c)
		if err != nil {
			return 0, err
		}
		total += len(rec)
	}
	return float64(total) / float64(max(len(history), 1)), nil
}

func fanOut(ctx context.Context, opts Options, dir string, report func(Result)) error {
	g, err := compileSource("fanout.cue", FanOutGraph)
	if err != nil {
		return err
	}
	items := make([]any, opts.FanOut)
	for i := range items {
		items[i] = i
	}
	for _, name := range []string{"memory", "badger"} {
		cp, closeFn, err := backend(name, filepath.Join(dir, "fanout-"+name))
		if err != nil {
			return err
		}
		eng := engine.New(g, cp, engine.Options{})
		var total time.Duration
		for i := 0; i <= opts.FanOutRuns; i++ {
			start := time.Now()
			res, err := eng.Run(ctx, engine.Request{ThreadID: fmt.Sprintf("fan-%d", i), Input: map[string]any{"items": items}}, nil)
			if err != nil || fmt.Sprint(res.State["total"]) != fmt.Sprint(opts.FanOut) {
				eng.Close()
				closeFn()
				return fmt.Errorf("fan-out on %s: %v (total %v)", name, err, res.State["total"])
			}
			if i > 0 {
				total += time.Since(start)
			}
		}
		eng.Close()
		closeFn()
		report(Result{"fan-out", fmt.Sprintf("per run of %d tasks + join, %s", opts.FanOut, name), float64(total.Microseconds()) / float64(opts.FanOutRuns) / 1000, "ms"})
	}
	return nil
}

func validate(_ context.Context, opts Options, _ string, report func(Result)) error {
	src := load.GenerateGraph(opts.ValidateNodes, "reply", `{text: "step ${count} of the conversation"}`)
	start := time.Now()
	if _, err := compileSource("validate.cue", string(src)); err != nil {
		return err
	}
	report(Result{"validate", fmt.Sprintf("load and check a %d-node graph", opts.ValidateNodes), float64(time.Since(start).Microseconds()) / 1000, "ms"})
	return nil
}

// compactDir opens the Badger database in dir, compacts it and closes it,
// so that its size on disk is the data it holds, not the logs and levels
// of the moment.
func compactDir(dir string) error {
	db, err := badger.Open(dir, badger.Options{})
	if err != nil {
		return err
	}
	if err := db.Compact(); err != nil {
		db.Close()
		return err
	}
	return db.Close()
}

// dirSize is what du reports for dir: the blocks its files take, not their
// apparent sizes (Badger preallocates files sparsely).
func dirSize(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		total += diskUsage(info)
		return nil
	})
	return total, err
}

// Comparison is a figure measured on both sides.
type Comparison struct {
	// Metric names the figure and the backend of each side, as
	// "loop: per super-step, sqlite vs badger-fsync".
	Metric string
	// Durable is set when both sides kept their checkpoints on disk: the
	// other runtime's "…, sqlite" figures against ours on Badger.
	Durable     bool
	Other, Ours Result
	// Ratio is Other / Ours: how many times graphctl is faster (or smaller).
	Ratio float64
}

// Compare pairs another runtime's figures with ours. A figure of its
// in-memory backend ("…, memory") is paired with ours of the same name; a
// figure of its durable backend ("…, sqlite") with ours on Badger ("…,
// badger") and on fsynced Badger ("…, badger-fsync"), and, when we have no
// "…, badger" figure of that name, with our figure named without a backend,
// which the scenarios measure on Badger (the chat's). Figures of other
// backends, without a backend, in another unit or of no value are left out.
func Compare(ours, other []Result) []Comparison {
	byMetric := map[string]Result{}
	for _, r := range ours {
		byMetric[r.Scenario+"\x00"+r.Metric] = r
	}
	var out []Comparison
	for _, o := range other {
		i := strings.LastIndex(o.Metric, ", ")
		if i < 0 {
			continue
		}
		base, theirs := o.Metric[:i], o.Metric[i+2:]
		type candidate struct{ metric, backend string }
		var candidates []candidate
		switch theirs {
		case "memory":
			candidates = []candidate{{base + ", memory", "memory"}}
		case "sqlite":
			candidates = []candidate{{base + ", badger", "badger"}, {base + ", badger-fsync", "badger-fsync"}}
			if _, ok := byMetric[o.Scenario+"\x00"+base+", badger"]; !ok {
				candidates = append(candidates, candidate{base, "badger"})
			}
		}
		for _, c := range candidates {
			r, ok := byMetric[o.Scenario+"\x00"+c.metric]
			if !ok || r.Value <= 0 || r.Unit != o.Unit {
				continue
			}
			out = append(out, Comparison{
				Metric:  fmt.Sprintf("%s: %s vs %s", o.Scenario, o.Metric, c.backend),
				Durable: theirs != "memory",
				Other:   o,
				Ours:    r,
				Ratio:   o.Value / r.Value,
			})
		}
	}
	return out
}

// Table formats results as an aligned text table.
func Table(results []Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-10s %-44s %12s\n", "scenario", "metric", "value")
	for _, r := range results {
		fmt.Fprintf(&b, "%-10s %-44s %10.2f %s\n", r.Scenario, r.Metric, r.Value, r.Unit)
	}
	return b.String()
}
