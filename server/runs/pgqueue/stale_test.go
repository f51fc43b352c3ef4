package pgqueue_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/storage/postgres"
	"github.com/graphctl/graphctl/runtime/storage/postgres/pgtest"
	"github.com/graphctl/graphctl/server/runs"
	"github.com/graphctl/graphctl/server/runs/pgqueue"
)

// runRow is what the runs table says of a run's claim.
type runRow struct {
	Status string
	Owner  string // "" when none
	Gen    int64
	Error  string // the record's error
}

func readRow(t *testing.T, db *postgres.DB, runID string) runRow {
	t.Helper()
	var r runRow
	var owner, rerr *string
	err := db.Pool().QueryRow(context.Background(),
		`SELECT status, owner, lease_gen, record->>'error' FROM runs WHERE run_id = $1`, runID).Scan(&r.Status, &owner, &r.Gen, &rerr)
	if err != nil {
		t.Fatalf("read run %s: %v", runID, err)
	}
	if owner != nil {
		r.Owner = *owner
	}
	if rerr != nil {
		r.Error = *rerr
	}
	return r
}

// storedFrames returns the stored frames of a run as seq:data.
func storedFrames(t *testing.T, q *pgqueue.Queue, runID string) []string {
	t.Helper()
	entries, err := q.Frames(context.Background(), runID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, fmt.Sprintf("%d:%s", e.Seq, e.Frame.Data))
	}
	return out
}

func frameOf(seq int, from string) runs.Entry {
	e := runs.Entry{Seq: seq, Mode: "values"}
	e.Frame.Event, e.Frame.Data = "values", []byte(`"`+from+`"`)
	return e
}

// The end of a run (Finish), its release and its frames, written under a
// claim that another replica has superseded, are refused, whatever happened
// since: the other replica holds the run, or it ended it, or the run came
// back to this replica under a newer claim (A -> B -> A, the same replica
// id). The run stays as its holder left it.
func TestStaleClaimCannotEndReleaseOrStream(t *testing.T) {
	cases := []struct {
		name string
		// since moves the run on after the first replica's claim, and
		// returns the row the stale writes must leave as it is.
		since func(t *testing.T, first, second *pgqueue.Queue, rec runs.Record) (holder *pgqueue.Queue, holderCtx context.Context)
	}{
		{"taken over", func(t *testing.T, first, second *pgqueue.Queue, rec runs.Record) (*pgqueue.Queue, context.Context) {
			claimWhenExpired(t, second, rec.RunID)
			return second, second.Fence(context.Background(), rec.RunID)
		}},
		{"taken over and claimed back", func(t *testing.T, first, second *pgqueue.Queue, rec runs.Record) (*pgqueue.Queue, context.Context) {
			claimWhenExpired(t, second, rec.RunID)
			second.Fence(context.Background(), rec.RunID)
			claimWhenExpired(t, first, rec.RunID)
			return first, first.Fence(context.Background(), rec.RunID)
		}},
		{"taken over and ended", func(t *testing.T, first, second *pgqueue.Queue, rec runs.Record) (*pgqueue.Queue, context.Context) {
			claimWhenExpired(t, second, rec.RunID)
			ctx := second.Fence(context.Background(), rec.RunID)
			if err := second.Publish(ctx, rec.RunID, []runs.Entry{frameOf(1, "holder")}); err != nil {
				t.Fatal(err)
			}
			done := rec
			done.Status, done.Error = runs.StatusSuccess, "holder"
			if err := second.Finish(ctx, done, false); err != nil {
				t.Fatalf("finish under the current claim: %v", err)
			}
			return second, ctx
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := pgtest.Open(t, postgres.Options{})
			first, second, rec, staleCtx := claimedByFirst(t, db)
			holder, holderCtx := c.since(t, first, second, rec)
			if c.name != "taken over and ended" {
				if err := holder.Publish(holderCtx, rec.RunID, []runs.Entry{frameOf(1, "holder")}); err != nil {
					t.Fatal(err)
				}
			}
			before := readRow(t, db, rec.RunID)

			// The stale execution streams (past the holder's frames too),
			// ends, forgets, releases: none of it lands.
			if err := first.Publish(staleCtx, rec.RunID, []runs.Entry{frameOf(1, "stale"), frameOf(2, "stale")}); err != nil {
				t.Fatalf("publish under a superseded claim: %v", err)
			}
			stale := rec
			stale.Status, stale.Error = runs.StatusError, "stale"
			for _, forget := range []bool{false, true} {
				if err := first.Finish(staleCtx, stale, forget); !errors.Is(err, checkpoint.ErrFenced) {
					t.Errorf("finish (forget %v) under a superseded claim: err = %v, want ErrFenced", forget, err)
				}
			}
			if err := first.Release(staleCtx, []string{rec.RunID}); err != nil {
				t.Fatalf("release under a superseded claim: %v", err)
			}
			if got := readRow(t, db, rec.RunID); got != before {
				t.Errorf("run after the stale writes = %+v, want it as its holder left it: %+v", got, before)
			}
			if got, want := storedFrames(t, first, rec.RunID), []string{`1:"holder"`}; strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("stored frames = %v, want only the holder's %v", got, want)
			}
			if before.Status != runs.StatusRunning {
				return
			}
			// The holder's own end goes through.
			done := rec
			done.Status = runs.StatusSuccess
			if err := holder.Finish(holderCtx, done, false); err != nil {
				t.Fatalf("finish under the current claim: %v", err)
			}
			if got := readRow(t, db, rec.RunID); got.Status != runs.StatusSuccess || got.Owner != "" {
				t.Fatalf("run after its holder's end = %+v, want success with no owner", got)
			}
			if err := holder.Publish(holderCtx, rec.RunID, []runs.Entry{frameOf(2, "end")}); err != nil {
				t.Fatal(err)
			}
			if got, want := storedFrames(t, first, rec.RunID), []string{`1:"holder"`, `2:"end"`}; strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("stored frames = %v, want the holder's end stored after its end %v", got, want)
			}
		})
	}
}

// FailOrphans ends a run by the claim it found: it increments the run's
// generation, so that its last claim's writes — a replica that was paused,
// not dead — are refused from then on, its frames included (the run has
// no owner then, and once ended any replica's end frame was accepted).
func TestFailOrphansSupersedesTheOrphanedClaim(t *testing.T) {
	db := pgtest.Open(t, postgres.Options{})
	ctx := context.Background()
	paused, live := openQueue(t, db, 200*time.Millisecond), openQueue(t, db, time.Minute)
	rec := submitted(t, paused, "t1")
	if got, _, err := paused.Claim(ctx, rec.RunID); err != nil || got == nil {
		t.Fatalf("claim = %v, %v", got, err)
	}
	staleCtx := paused.Fence(ctx, rec.RunID)
	if err := paused.Publish(staleCtx, rec.RunID, []runs.Entry{frameOf(1, "paused")}); err != nil {
		t.Fatal(err)
	}
	waitExpired(t, db, rec.RunID)
	gen := readRow(t, db, rec.RunID).Gen
	if n, err := live.FailOrphans(ctx, "orphaned"); err != nil || n != 1 {
		t.Fatalf("FailOrphans = %d, %v; want the one orphaned run", n, err)
	}
	failed := readRow(t, db, rec.RunID)
	if failed.Status != runs.StatusError || failed.Error != "orphaned" || failed.Owner != "" || failed.Gen != gen+1 {
		t.Fatalf("orphan after FailOrphans = %+v, want error, no owner, generation %d", failed, gen+1)
	}
	// The paused replica wakes up and goes on with the run.
	if err := paused.Publish(staleCtx, rec.RunID, []runs.Entry{frameOf(2, "paused"), frameOf(3, "paused")}); err != nil {
		t.Fatalf("publish under the orphaned claim: %v", err)
	}
	end := rec
	end.Status = runs.StatusSuccess
	if err := paused.Save(staleCtx, end); !errors.Is(err, checkpoint.ErrFenced) {
		t.Errorf("save under the orphaned claim: err = %v, want ErrFenced", err)
	}
	if err := paused.Finish(staleCtx, end, false); !errors.Is(err, checkpoint.ErrFenced) {
		t.Errorf("finish under the orphaned claim: err = %v, want ErrFenced", err)
	}
	if got := readRow(t, db, rec.RunID); got != failed {
		t.Errorf("run after the orphaned claim's writes = %+v, want %+v", got, failed)
	}
	if got, want := storedFrames(t, live, rec.RunID), []string{`1:"paused"`}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("stored frames = %v, want only those stored before the run was failed %v", got, want)
	}
}

// FailOrphans does not act on (nor wait for) a run whose claim is being
// changed: a takeover (or a renewal) in progress holds the run's row, and
// the run is left to it, running under its new claim.
func TestFailOrphansLeavesARunBeingClaimed(t *testing.T) {
	db := pgtest.Open(t, postgres.Options{})
	ctx := context.Background()
	dead, live := openQueue(t, db, 200*time.Millisecond), openQueue(t, db, time.Minute)
	rec := submitted(t, dead, "t1")
	if got, _, err := dead.Claim(ctx, rec.RunID); err != nil || got == nil {
		t.Fatalf("claim = %v, %v", got, err)
	}
	waitExpired(t, db, rec.RunID)
	gen := readRow(t, db, rec.RunID).Gen

	// A replica taking the run over: it has locked the run's row (as
	// Claim does) and not yet committed its claim.
	tx, err := db.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT 1 FROM runs WHERE run_id = $1 FOR UPDATE`, rec.RunID); err != nil {
		t.Fatal(err)
	}
	var taker int
	if err := tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&taker); err != nil {
		t.Fatal(err)
	}
	// The server is asked on a connection of its own: the pool's may all be
	// taken (the queues' listeners, the takeover, FailOrphans).
	probe, err := pgx.Connect(ctx, pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close(ctx)
	type result struct {
		n   int
		err error
	}
	failed := make(chan result, 1)
	go func() {
		n, err := live.FailOrphans(ctx, "orphaned")
		failed <- result{n, err}
	}()
	// FailOrphans either answers or waits for the takeover's lock: which
	// one is known from the server, without timing it.
	var got result
	answered, waited := false, false
	for !answered && !waited {
		select {
		case got = <-failed:
			answered = true
			continue
		default:
		}
		if err := probe.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid)))`, taker).Scan(&waited); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if waited {
		t.Error("FailOrphans waits for a run whose claim is being changed")
	}
	// The takeover commits.
	if _, err := tx.Exec(ctx, `UPDATE runs SET owner = 'taker', lease_gen = lease_gen + 1, lease_until = now() + interval '1 minute' WHERE run_id = $1`, rec.RunID); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if !answered {
		got = <-failed
	}
	if got.err != nil || got.n != 0 {
		t.Errorf("FailOrphans during a takeover = %d, %v; want no run failed", got.n, got.err)
	}
	if r := readRow(t, db, rec.RunID); r.Status != runs.StatusRunning || r.Owner != "taker" || r.Gen != gen+1 {
		t.Fatalf("run after the takeover = %+v, want running under the taker's claim (generation %d)", r, gen+1)
	}
	if n, err := live.FailOrphans(ctx, "orphaned"); err != nil || n != 0 {
		t.Fatalf("FailOrphans of a run held under a live lease = %d, %v; want none", n, err)
	}
}

// waitExpired waits until the lease of run runID has expired.
func waitExpired(t *testing.T, db *postgres.DB, runID string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var expired bool
		if err := db.Pool().QueryRow(context.Background(), "SELECT lease_until < now() FROM runs WHERE run_id = $1", runID).Scan(&expired); err != nil {
			t.Fatal(err)
		}
		if expired {
			return
		}
	}
	t.Fatalf("the lease of run %s never expired", runID)
}
