package pgqueue_test

import (
	"context"
	"errors"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/storage/postgres"
	"github.com/graphctl/graphctl/runtime/storage/postgres/pgtest"
	"github.com/graphctl/graphctl/server/runs"
	"github.com/graphctl/graphctl/server/runs/pgqueue"
)

// A run's execution whose lease expired, with nobody else taking the run,
// while this replica claimed the run again (the same generation: its
// execution goes on), ends or releases the run under its claim: the claim
// made again is kept for the execution that starts under it, which then
// starts fenced and has its writes refused (the run is no longer held),
// rather than starting without a fence and writing to the thread unchecked.
func TestEndUnderAClaimKeepsTheClaimMadeAgain(t *testing.T) {
	cases := []struct {
		name string
		end  func(q *pgqueue.Queue, ctx context.Context, rec runs.Record) error
	}{
		{"finish", func(q *pgqueue.Queue, ctx context.Context, rec runs.Record) error {
			rec.Status = runs.StatusSuccess
			return q.Finish(ctx, rec, false)
		}},
		{"finish and forget", func(q *pgqueue.Queue, ctx context.Context, rec runs.Record) error {
			rec.Status = runs.StatusInterrupted
			return q.Finish(ctx, rec, true)
		}},
		{"release", func(q *pgqueue.Queue, ctx context.Context, rec runs.Record) error {
			return q.Release(ctx, []string{rec.RunID})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := pgtest.Open(t, postgres.Options{})
			ctx := context.Background()
			first, _, rec, executing := claimedByFirst(t, db)
			gen := readRow(t, db, rec.RunID).Gen
			claimWhenExpired(t, first, rec.RunID)
			if got := readRow(t, db, rec.RunID).Gen; got != gen {
				t.Fatalf("generation after the replica's own claim again = %d, want %d (kept)", got, gen)
			}
			if err := c.end(first, executing, rec); err != nil {
				t.Fatalf("%s under the executing claim: %v", c.name, err)
			}
			next := first.Fence(ctx, rec.RunID)
			f, ok := checkpoint.FenceOf(next)
			if !ok {
				t.Fatalf("the claim made again was dropped by the %s: its execution would start without a fence", c.name)
			}
			if f.Token != gen {
				t.Fatalf("the claim made again has generation %d, want %d", f.Token, gen)
			}
			if _, err := putStep(next, db.Checkpointer(), rec.ThreadID, "", 0, "next"); !errors.Is(err, checkpoint.ErrFenced) {
				t.Fatalf("checkpoint of the execution started under the claim made again, after the %s: err = %v, want ErrFenced", c.name, err)
			}
		})
	}
}
