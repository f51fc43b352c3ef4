// Package checkpoint defines how thread state is persisted between super-steps.
//
// A checkpoint records where a thread is (step, next tasks, pending interrupts)
// and, for every state field, which version of the field's value is current.
// Values are stored as versioned blobs, written only when a field changes; a blob
// is either the full value or, for list fields that only grew, the appended items
// on top of an earlier version. A 1,000-turn conversation therefore stores each
// message once, not once per turn.
//
// The backends (checkpoint/memory, storage/badger, storage/postgres) are one
// implementation, core.Checkpointer in checkpoint/core, over a storage driver
// each (see docs/storage.md); every backend passes the conformance suite in
// checkpoint/checkpointtest.
package checkpoint

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// ErrNotFound is returned when a thread or checkpoint does not exist.
var ErrNotFound = errors.New("checkpoint: not found")

// Task is one unit of work of a super-step: a node, and for map fan-out tasks
// the item it was sent.
type Task struct {
	// ID is unique within the step, e.g. "ask_info" or "search#2".
	ID   string `json:"id"`
	Node string `json:"node"`
	// Item is the fan-out item of a map task.
	Item any `json:"item,omitempty"`
	// HasItem distinguishes a nil item from no item.
	HasItem bool `json:"has_item,omitempty"`
	// Resume holds answers to interrupts pending inside the subgraph this
	// task runs, by interrupt id, for the task to pass on when it runs again.
	Resume map[string]any `json:"resume,omitempty"`
	// Namespace is set on a subgraph node's task that waits inside its
	// child (see Interrupt.Namespace): the namespace of the child's
	// checkpoints, where the task goes on when it runs again.
	Namespace string `json:"ns,omitempty"`
}

// Interrupt is a pending request for human input.
type Interrupt struct {
	// ID is unique within the thread; resume names it.
	ID string `json:"id"`
	// Node is the node that asked.
	Node string `json:"node"`
	// TaskID is the task that asked.
	TaskID string `json:"task_id"`
	// Field is the state field the resume value is written to. Earlier
	// versions also recorded a breakpoint (interrupt_before /
	// interrupt_after) as an interrupt with no field; a breakpoint now
	// records none (see BreakpointKey).
	Field   string         `json:"field,omitempty"`
	Payload map[string]any `json:"payload,omitempty"`
	// When is "during"; "before" or "after" in a breakpoint an earlier
	// version recorded.
	When string `json:"when"`
	// Namespace is set when the interrupt was raised inside a subgraph: the
	// namespace of the subgraph's checkpoints (see ChildThreadID), relative
	// to the thread. Node and TaskID then name the subgraph node's task in
	// this thread, which resume runs again to answer it inside the subgraph.
	Namespace string `json:"ns,omitempty"`
}

// Source says what produced a checkpoint. Its values are stored as they are
// and shown as a checkpoint's metadata "source", as LangGraph names them.
type Source string

// The sources of checkpoints.
const (
	// SourceInput is a turn's input, written before its first super-step.
	SourceInput Source = "input"
	// SourceLoop is a super-step of the graph.
	SourceLoop Source = "loop"
	// SourceUpdate is a state update made from outside the graph.
	SourceUpdate Source = "update"
	// SourceResume is a checkpoint written when resuming from interrupts.
	SourceResume Source = "resume"
	// SourceFork is a copy of a checkpoint made to branch from it.
	SourceFork Source = "fork"
	// SourceInterrupt is a checkpoint written when a run that goes on from
	// a checkpoint stops at a breakpoint before its first step: it holds
	// what the run applied before it. (A turn stopped before its start
	// node stays at its start checkpoint, source "loop".)
	SourceInterrupt Source = "interrupt"
)

// Checkpoint is the durable position of a thread after a super-step.
type Checkpoint struct {
	ThreadID string `json:"thread_id"`
	// ID sorts in creation order within a thread.
	ID       string `json:"id"`
	ParentID string `json:"parent_id,omitempty"`
	Step     int    `json:"step"`
	// Next are the tasks the following super-step runs; empty at END.
	Next []Task `json:"next,omitempty"`
	// Interrupts are pending; while there are any, the thread waits for resume.
	Interrupts []Interrupt `json:"interrupts,omitempty"`
	GraphName  string      `json:"graph_name"`
	GraphHash  string      `json:"graph_hash"`
	// Versions maps each field with a value to its current version.
	Versions map[string]int64 `json:"versions"`
	// Source says what produced the checkpoint.
	Source Source `json:"source"`
	// Writers names the nodes whose updates this checkpoint applied.
	Writers   []string       `json:"writers,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	CreatedAt time.Time      `json:"created_at"`
	// Input is the input of the run that wrote this checkpoint (source
	// "input"), not yet applied to its values: continuing from the
	// checkpoint applies it, new input replaces it.
	Input json.RawMessage `json:"input,omitempty"`
	// VersionFloor is set once a thread has branches (a run or an update
	// started from a checkpoint other than the newest): the highest blob
	// version any branch had written, above which new blobs of every field
	// are numbered so that branches never overwrite each other's blobs.
	VersionFloor int64 `json:"version_floor,omitempty"`
}

// BreakpointKey is the metadata key of a checkpoint a run stopped at on a
// static breakpoint (interrupt_before, interrupt_after) with tasks left;
// its value says where (see engine.StoppedAt).
const BreakpointKey = "__breakpoint__"

// Stops reports whether a thread at cp stays there until a client acts:
// the run that wrote it ended with no task left, it waits for answers to
// interrupts, or the run stopped there at a breakpoint.
func (cp *Checkpoint) Stops() bool {
	_, breakpoint := cp.Metadata[BreakpointKey]
	return len(cp.Next) == 0 || len(cp.Interrupts) > 0 || breakpoint
}

// Blob is one new version of a field's value.
type Blob struct {
	Field   string `json:"field"`
	Version int64  `json:"version"`
	// Base is zero for a full value. Otherwise Data is a JSON array of items
	// appended to the value at version Base of the same field.
	Base int64           `json:"base,omitempty"`
	Data json.RawMessage `json:"data"`
}

// PendingWrite is a finished task's update, saved before its step completes.
type PendingWrite struct {
	TaskID string          `json:"task_id"`
	Node   string          `json:"node"`
	Update json.RawMessage `json:"update"`
	// Kind is "update" for a normal result, "interrupt" for an interrupt
	// request, "caught" for a failure routed by a catch, and "input" for a
	// turn's input saved before its first step.
	Kind string `json:"kind"`
}

// Snapshot is a checkpoint with its field values materialised.
type Snapshot struct {
	Checkpoint
	// Values are the full JSON values of every field in Versions.
	Values map[string]json.RawMessage `json:"values"`
	// Pending are the writes saved against this checkpoint by tasks of the step
	// that started from it.
	Pending []PendingWrite `json:"pending,omitempty"`
}

// ThreadInfo summarises a thread.
type ThreadInfo struct {
	ThreadID  string    `json:"thread_id"`
	GraphName string    `json:"graph_name"`
	Latest    string    `json:"latest_checkpoint"`
	Step      int       `json:"step"`
	UpdatedAt time.Time `json:"updated_at"`
}

// ListOptions pages a history listing, newest first.
type ListOptions struct {
	// Before lists only checkpoints older than this checkpoint id.
	Before string
	Limit  int
}

// Checkpointer persists checkpoints. Implementations are safe for concurrent use.
type Checkpointer interface {
	// Put stores a checkpoint and the blobs of the fields that changed in it.
	// Every field in cp.Versions must have a blob at that version, written now or before.
	// The pending writes saved against cp.ParentID are discarded in the same
	// transaction: the new checkpoint has applied (or superseded) them.
	Put(ctx context.Context, cp Checkpoint, blobs []Blob) error
	// PutWrites saves a task's result against the checkpoint its step started from.
	PutWrites(ctx context.Context, threadID, checkpointID string, w PendingWrite) error
	// Latest returns the thread's newest checkpoint, or ErrNotFound.
	Latest(ctx context.Context, threadID string) (*Snapshot, error)
	// Get returns one checkpoint, or ErrNotFound.
	Get(ctx context.Context, threadID, checkpointID string) (*Snapshot, error)
	// History lists checkpoints newest first, without values.
	History(ctx context.Context, threadID string, opts ListOptions) ([]Checkpoint, error)
	// Threads lists threads, most recently updated first.
	Threads(ctx context.Context) ([]ThreadInfo, error)
	// Fork copies the thread's state at checkpointID into a new thread whose
	// first checkpoint has that state; it returns the new checkpoint.
	Fork(ctx context.Context, threadID, checkpointID, newThreadID string) (*Checkpoint, error)
	// DeleteThread removes a thread and everything stored for it.
	DeleteThread(ctx context.Context, threadID string) error
	// Rollback returns a thread to checkpointID, as one transaction: every
	// checkpoint after it is deleted with its pending writes and the blobs no
	// remaining checkpoint names, checkpointID becomes the thread's latest
	// again, and the pending writes saved against it that no task of it owns
	// (a turn's input; any write when it has no next tasks) are discarded. A
	// crash leaves the thread either as it was or rolled back.
	Rollback(ctx context.Context, threadID, checkpointID string) error
	// Prune keeps the newest keep checkpoints of a thread and deletes the rest,
	// with every blob no kept checkpoint needs.
	Prune(ctx context.Context, threadID string, keep int) error
}

// RollbackKeepsWrite reports whether Rollback keeps a pending write saved
// against the checkpoint it returns to: only a task's result, and only when
// the checkpoint has tasks to run (an unfinished step); a turn's input, or
// anything saved against an idle checkpoint, belonged to the run rolled back.
func RollbackKeepsWrite(cp Checkpoint, w PendingWrite) bool {
	return len(cp.Next) > 0 && w.Kind != "input"
}

// lastTick is the 100ns tick of the newest id NewID returned; ids take the
// next tick when the clock has not moved on, so that they are unique and
// increasing within the process.
var lastTick atomic.Int64

// gregorianOffset is the number of 100ns ticks from 1582-10-15 (the epoch of
// time-based UUIDs) to 1970-01-01.
const gregorianOffset = 0x01B21DD213814000

// NewID returns a new checkpoint id: a time-ordered UUID (version 6, as
// LangGraph's checkpoint ids), so ids sort in creation order within a thread
// and a run started from an old checkpoint becomes the thread's newest. Ids
// of the older step-time form (below step 10,000,000) sort before every id
// of this form.
func NewID() string {
	now := time.Now().UnixNano()/100 + gregorianOffset
	for {
		last := lastTick.Load()
		t := max(now, last+1)
		if lastTick.CompareAndSwap(last, t) {
			now = t
			break
		}
	}
	ts := uint64(now) & (1<<60 - 1)
	var b [16]byte
	binary.BigEndian.PutUint32(b[0:4], uint32(ts>>28))
	binary.BigEndian.PutUint16(b[4:6], uint16(ts>>12))
	binary.BigEndian.PutUint16(b[6:8], uint16(ts&0xfff)|0x6000)
	binary.BigEndian.PutUint64(b[8:], rand.Uint64())
	b[8] = b[8]&0x3f | 0x80
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	hex.Encode(out[9:13], b[4:6])
	hex.Encode(out[14:18], b[6:8])
	hex.Encode(out[19:23], b[8:10])
	hex.Encode(out[24:36], b[10:16])
	out[8], out[13], out[18], out[23] = '-', '-', '-', '-'
	return string(out[:])
}
