package runs

import (
	"context"
	"errors"
)

// Queue shares runs between server processes (replicas) on one database.
// Without one (Options.Queue nil), a Manager keeps its queues and thread
// locks in memory, as one process on a Badger data directory does; with
// one, the database holds them: which runs are queued, which one runs on
// each thread, which replica runs it (under a lease renewed by heartbeats),
// cancels, and the runs' stream frames, so that any replica answers any
// request. server/runs/pgqueue implements it on PostgreSQL.
type Queue interface {
	// Submit applies rec.MultitaskStrategy on rec's thread and queues rec
	// (status pending), startable from rec.StartAt when that is set:
	// ErrBusy for reject when the thread has a running or queued run (one
	// waiting for its start time too); with interrupt or rollback, queued
	// runs end (interrupted, or deleted for rollback) and the running one
	// is asked to stop (cancel_action set, its owner told).
	Submit(ctx context.Context, rec Record) error
	// Claim takes a run for this replica: the given one (runID non-empty)
	// or the oldest startable one — queued, its start time passed, and first
	// in start order among such runs of a thread with no running run; or
	// running under an expired lease (its replica died; resumed is then
	// true). It returns nil when there is none.
	Claim(ctx context.Context, runID string) (rec *Record, resumed bool, err error)
	// Save stores the record of a run this replica holds. With a Fencer
	// queue, when ctx carries the fence of the run's claim (see Fencer), it
	// fails with checkpoint.ErrFenced unless that claim still holds the run.
	Save(ctx context.Context, rec Record) error
	// Finish stores the final record of a run this replica holds and frees
	// its thread (forget deletes the record instead); under a fence, as
	// Save, it fails with checkpoint.ErrFenced and changes nothing unless
	// the fence's claim still holds the run.
	Finish(ctx context.Context, rec Record, forget bool) error
	// Release gives up runs this replica holds without ending them (a
	// shutdown): they stay running and any replica may resume them at once.
	// Under a fence, the fence's run is released only while its claim
	// holds it.
	Release(ctx context.Context, runIDs []string) error
	// Heartbeat renews the leases of the runs this replica holds and
	// returns, for each run still held, its cancel action ("" if none); a
	// run missing from the answer is no longer held.
	Heartbeat(ctx context.Context, runIDs []string) (map[string]string, error)
	// Cancel ends a queued run (interrupted, deleted for rollback; ended is
	// true) or asks a running one to stop, wherever it runs. A finished run
	// is returned as it is.
	Cancel(ctx context.Context, threadID, runID, action string) (rec Record, ended bool, err error)
	// Load reads a run (threadID "" matches any thread).
	Load(ctx context.Context, threadID, runID string) (Record, error)
	// List returns a thread's runs, newest first.
	List(ctx context.Context, threadID string, limit, offset int, status string) ([]Record, error)
	// Active returns the running (else the oldest queued) run of a thread;
	// runs waiting for their start time are not active yet.
	Active(ctx context.Context, threadID string) (Record, bool, error)
	// Unfinished lists the running and queued runs.
	Unfinished(ctx context.Context) ([]Record, error)
	// Delete removes a finished run or one that has not started (queued,
	// or waiting for its start time); ErrActive for a running one,
	// ErrNotFound for an unknown one.
	Delete(ctx context.Context, threadID, runID string) error
	// DeleteThread removes a thread's runs.
	DeleteThread(ctx context.Context, threadID string) error
	// Publish stores a run's stream frames (consecutive, in order) and tells
	// the other replicas. Only the replica that holds the run stores frames
	// (or, once the run has ended and is held by none, its end frame); from
	// any other the frames are dropped, as are, under a fence, those of a
	// claim that no longer holds the run or did not end it.
	Publish(ctx context.Context, runID string, entries []Entry) error
	// Frames returns a run's stored frames after sequence number after.
	Frames(ctx context.Context, runID string, after int) ([]Entry, error)
	// Hold takes an idle thread (no running run, no queued run whose start
	// time has passed) for a change made outside a run, as if a run were
	// running on it, until release is called (or, if this replica dies, its
	// lease expires); ErrBusy when the thread is not idle. The change is
	// made with held, ctx carrying the hold's fence (see checkpoint.Fence):
	// its writes are refused once the hold has been lost (its lease expired
	// while this replica was paused, and it was deleted).
	Hold(ctx context.Context, threadID string) (held context.Context, release func(), err error)
	// FailOrphans ends in error, with message, the running runs no replica
	// holds (their replica died or shut down) and returns how many. A run
	// whose claim is being changed meanwhile (taken over, renewed) is left
	// alone; the claims of the runs it ends no longer hold them (their
	// fenced writes are refused).
	FailOrphans(ctx context.Context, message string) (int, error)
	// Notices delivers what other replicas announce; it is closed by Close.
	Notices() <-chan Notice
	// Close stops the notices.
	Close() error
}

// Notice kinds.
const (
	// NoticeWake: a run may be startable (queued, or a thread freed).
	NoticeWake = "wake"
	// NoticeCancel: a running run is asked to stop (Action says how).
	NoticeCancel = "cancel"
	// NoticeFrames: a run has new stream frames.
	NoticeFrames = "frames"
)

// Notice is one announcement between replicas.
type Notice struct {
	Kind   string
	RunID  string
	Action string
}

// ErrLeaseLost is the cancel cause of a run whose lease this replica could
// not renew: another replica may have resumed it, so this one stops without
// writing anything more.
var ErrLeaseLost = errors.New("run lease lost")

// Final reports whether a run status is final.
func Final(status string) bool {
	return status == StatusSuccess || status == StatusError || status == StatusInterrupted
}
