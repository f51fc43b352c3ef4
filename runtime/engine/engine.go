// Package engine executes compiled graphs in bulk-synchronous super-steps, as
// LangGraph's Pregel does, with durable checkpoints after every step.
//
// One step: the active tasks run concurrently (bounded by max_concurrency) on the
// same state snapshot; each finished task's update is saved at once as a pending
// write, so a crash re-runs only the unfinished tasks of the step; the updates
// are applied through each field's reducer in a deterministic order (task id) and
// checked against the state schema; a checkpoint is written, storing only the
// fields that changed (appended list items only, where a reducer appended); then
// routes are evaluated on the new state to choose the next tasks.
//
// A run stops at END everywhere, at an interrupt (the thread waits for resume),
// at an error (the thread stays resumable at its last checkpoint), or at the
// recursion limit.
package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/store"
)

// Run statuses reported in Result.Status and the done event.
const (
	StatusCompleted   = "completed"
	StatusInterrupted = "interrupted"
	StatusError       = "error"
)

// ErrIncompatibleGraph is returned when a thread's checkpoint was written by a
// version of the graph that the loaded graph cannot continue.
var ErrIncompatibleGraph = errors.New("thread was written by an incompatible graph")

// Options configure an Engine.
type Options struct {
	// Store is the long-term memory store handed to nodes; may be nil.
	Store store.Store
	// Extra holds services for node packages (models, tool clients), each
	// under its typed key; the engine creates, for each service registered
	// in the graph's registry that Extra lacks, one of its own.
	Extra node.Extra
	// MaxConcurrency overrides the graph's max_concurrency when > 0.
	MaxConcurrency int
	// RecursionLimit overrides the graph's recursion_limit when > 0.
	RecursionLimit int
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Overrides replace the implementation of nodes by name, keeping their
	// routing: declarative tests use them to mock nodes.
	Overrides map[string]node.Node
	// StateCache is the number of threads whose decoded state the engine
	// keeps between runs (0 means 128, negative none); see stateCache.
	StateCache int
	// SnapshotEvery is how many append deltas a field gathers, at least,
	// before the engine asks for its snapshot at the end of a run (0 means
	// checkpoint.SnapshotEvery); see checkpoint.SnapshotSaver.
	SnapshotEvery int
	// Observers follow runs and tasks (tracing, audit logs); see Observer.
	Observers []Observer
	// Durability is when a run's checkpoints are written, unless its
	// request says (Request.Durability); "" means checkpoint.DurabilityAsync.
	Durability checkpoint.Durability
}

// Engine runs one compiled graph against a checkpointer. It is safe for
// concurrent use by many threads. It does not lock threads: its caller runs
// at most one run or state update of a thread at a time — the server's run
// manager (server/runs) owns thread locking there, and the CLI runs one
// request per process.
type Engine struct {
	graph    *compile.Graph
	cp       checkpoint.Checkpointer
	services *node.Services
	opts     Options

	// joinsOf maps a node to the join nodes that wait for it.
	joinsOf map[string][]string
	// itemName maps a map fan-out target to the name its item is visible under.
	itemName map[string]string

	// Built once for the graph, never modified, so that a step does not
	// allocate them each time: names holds each node's name as an
	// interface value (for the step's trace) and writerOf as a list of one
	// (a step's writers), fixed the successors of each node whose edges
	// are fixed (no routes, default or map), and taskOf a list of the one
	// task that runs each node, for a chosen route.
	names    map[string]any
	writerOf map[string][]string
	fixed    map[string][]checkpoint.Task
	taskOf   map[string][]checkpoint.Task

	cache *stateCache
	// writers holds the writer of each run in progress that writes its
	// checkpoints behind it, by thread (see Flush).
	writers sync.Map

	// children holds the engine of each subgraph node's child graph.
	children map[string]*Engine

	// owned are the services the engine created, which Close closes.
	owned []any

	// life records the nodes' preparation and which were closed (see
	// lifecycle.go).
	life lifecycle
}

// New returns an engine for g storing checkpoints in cp. Its nodes (those of
// subgraphs too) are prepared once, by Preflight or else by the first Run,
// and closed by Close.
func New(g *compile.Graph, cp checkpoint.Checkpointer, opts Options) *Engine {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	extra, owned := g.Registry.OrDefault().NewServices(opts.Extra)
	if !node.GraphFileKey.In(extra) && g.Spec.File != "" {
		extra = node.GraphFileKey.Bind(extra, g.Spec.File)
	}
	if !node.RegistryKey.In(extra) {
		extra = node.RegistryKey.Bind(extra, g.Registry.OrDefault())
	}
	e := &Engine{
		graph:    g,
		cp:       cp,
		services: &node.Services{Store: opts.Store, Extra: extra},
		opts:     opts,
		owned:    owned,
		joinsOf:  map[string][]string{},
		itemName: map[string]string{},
		cache:    newStateCache(opts.StateCache),
		names:    make(map[string]any, len(g.NodeOrder)),
		writerOf: make(map[string][]string, len(g.NodeOrder)),
		fixed:    make(map[string][]checkpoint.Task, len(g.NodeOrder)),
		taskOf:   make(map[string][]checkpoint.Task, len(g.NodeOrder)),
	}
	e.newChildren()
	for _, name := range g.NodeOrder {
		n := g.Nodes[name]
		e.names[name] = name
		e.writerOf[name] = []string{name}
		e.taskOf[name] = []checkpoint.Task{{ID: name, Node: name}}
		if len(n.Routes) == 0 && n.Default == "" && n.Map == nil {
			fixed := make([]checkpoint.Task, len(n.Next))
			for i, to := range n.Next {
				fixed[i] = checkpoint.Task{ID: to, Node: to}
			}
			e.fixed[name] = fixed
		}
		for _, w := range n.WaitFor {
			e.joinsOf[w] = append(e.joinsOf[w], name)
		}
		if n.Map != nil {
			as := n.Map.As
			if as == "" {
				as = "item"
			}
			e.itemName[n.Map.To] = as
		}
	}
	return e
}

// impl returns the implementation that runs node n.
func (e *Engine) impl(n *compile.Node) node.Node {
	if o, ok := e.opts.Overrides[n.Name]; ok {
		return o
	}
	return n.Impl
}

// TextInput builds the input for a user's chat message, following LangGraph's
// convention: the message is appended to the graph's messages field (the field
// named "messages", else the first field of type messages).
func TextInput(g *compile.Graph, text string) (map[string]any, error) {
	field := ""
	if f, ok := g.Fields["messages"]; ok && f.Spec.Type.Kind == graph.Messages {
		field = "messages"
	} else {
		for _, name := range g.FieldOrder {
			if g.Fields[name].Spec.Type.Kind == graph.Messages {
				field = name
				break
			}
		}
	}
	if field == "" {
		return nil, fmt.Errorf("graph %q has no field of type messages to put a text message in; pass the input as JSON instead", g.Spec.Name)
	}
	return map[string]any{field: []any{map[string]any{"role": "user", "content": text}}}, nil
}

// Close closes the graph's nodes that implement node.Closer (those of
// subgraphs too), then releases the engine's services (tool-server connections and the
// like) that implement io.Closer. Services passed in Options.Extra belong to
// the caller and are not closed.
func (e *Engine) Close() error {
	errs := []error{e.closeNodes(context.Background(), e.graph.NodeOrder)}
	for _, svc := range e.owned {
		if c, ok := svc.(io.Closer); ok {
			if err := c.Close(); err != nil {
				errs = append(errs, fmt.Errorf("close service %T: %w", svc, err))
			}
		}
	}
	return errors.Join(errs...)
}

// Graph returns the compiled graph the engine runs.
func (e *Engine) Graph() *compile.Graph { return e.graph }

// Checkpointer returns the engine's checkpointer.
func (e *Engine) Checkpointer() checkpoint.Checkpointer { return e.cp }

// Request is one invocation of a thread.
type Request struct {
	ThreadID string
	// CheckpointID starts the run from this checkpoint of the thread instead
	// of its newest one. A run from an older checkpoint forks the thread
	// there, as LangGraph does: its checkpoints are a new branch whose newest
	// becomes the thread's state; the old branch stays in the history.
	CheckpointID string
	// Input is written to state (through the reducers) and the run starts at
	// the graph's start node; pending interrupts and next tasks of the thread
	// are dropped. First an "input" checkpoint is written: the state before
	// the input, with the input pending, so that a later run from it can
	// replay the turn or replace its input.
	//
	// Nil with no Resume continues the thread from its checkpoint: the input
	// of an input checkpoint is applied, the next tasks run (a breakpoint
	// before them is passed, see Breakpoint); an interrupt that waits for
	// an answer keeps waiting. A new thread starts at its start node.
	Input map[string]any
	// Resume answers pending interrupts. On a thread stopped at a
	// breakpoint with none pending, it goes on as a run with no input does.
	Resume *Resume
	// Update is written to the state (through the reducers, as writer
	// "command") before the run goes on, as LangGraph's Command(update=...).
	Update map[string]any
	// Goto adds tasks for these nodes to the next step, as LangGraph's
	// Command(goto=...). Interrupts still pending and not answered are dropped.
	Goto []Goto
	// InterruptBefore and InterruptAfter stop the run before or after the named
	// nodes run ("*" for every node), for debugging: static breakpoints (see
	// Breakpoint). A run that goes on from a checkpoint does not stop before
	// the tasks it starts with.
	InterruptBefore []string
	InterruptAfter  []string
	// RecursionLimit overrides the graph's and the engine's limit when > 0.
	RecursionLimit int
	// RunID identifies the run in events; generated when empty.
	RunID string
	// Metadata is stored with every checkpoint the run writes.
	Metadata map[string]any
	// Durability is when the run's checkpoints are written (LangGraph's
	// durability); "" means the engine's Options.Durability. Whatever the
	// mode, every checkpoint of the run is written before Run returns.
	Durability checkpoint.Durability

	// fresh starts the run from the graph's initial state, as on a new
	// thread, on a thread that has checkpoints (see Engine.freshState).
	fresh bool
}

// Goto names a node to run next; with HasInput, the node runs once with
// Input as its item (LangGraph's Send), visible as a map target's item is.
type Goto struct {
	Node     string
	Input    any
	HasInput bool
}

// Resume answers pending interrupts: Value for the single pending interrupt (or
// the one named by InterruptID), or Values keyed by interrupt id. A Value that
// is a map keyed by pending interrupt ids answers each of them (LangGraph's
// resume map).
type Resume struct {
	InterruptID string
	Value       any
	Values      map[string]any
}

// Result is the outcome of a run.
type Result struct {
	ThreadID     string
	RunID        string
	Status       string
	CheckpointID string
	// State is the thread's state after the run.
	State map[string]any
	// Interrupts are pending when Status is interrupted: those that wait
	// for an answer. A stop at a breakpoint is none of them (see Breakpoint).
	Interrupts []checkpoint.Interrupt
	// Breakpoint is set when the run stopped at a static breakpoint
	// (interrupt_before or interrupt_after). Status is then interrupted,
	// unless the run stopped after the last nodes: with no task left it
	// completed, as a LangGraph thread with no next task is idle.
	Breakpoint *Breakpoint
	// Path lists the nodes that ran, in order (tasks of one step sorted by id).
	Path []string
	// Steps counts the super-steps this run executed.
	Steps int
	// Err is the failure when Status is error.
	Err error
	// EndWrites, set when the run's context asked for it (HoldEndWrites)
	// and the run writes its checkpoints behind it, writes the checkpoints
	// the run left queued, with the puts given in the same transaction when
	// the checkpointer carries them (it reports whether it did). The caller
	// calls it once before anyone learns that the run ended; until then the
	// run's last checkpoints may not be written. An error means they were
	// not: the run failed.
	EndWrites func(puts []store.BatchPut) (carried bool, err error)
}

// Stream runs the request and delivers its events on a channel, which is closed
// after the final done event. The result is sent on the second channel.
func (e *Engine) Stream(ctx context.Context, req Request) (<-chan event.Event, <-chan *Result) {
	events := make(chan event.Event, 64)
	results := make(chan *Result, 1)
	go func() {
		defer close(results)
		defer close(events)
		res, err := e.Run(ctx, req, func(ev event.Event) {
			select {
			case events <- ev:
			case <-ctx.Done():
			}
		})
		if res == nil {
			res = &Result{ThreadID: req.ThreadID, Status: StatusError, Err: err}
		}
		results <- res
	}()
	return events, results
}
