package engine_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/load"
	"github.com/graphctl/graphctl/runtime/storage/postgres"
	"github.com/graphctl/graphctl/runtime/storage/postgres/pgtest"
)

// tripCounter counts what the PostgreSQL checkpointer sends: every query and
// every batch is one round trip once its statements are prepared on the
// connection; a write transaction is a batch or a statement other than a
// SELECT sent outside an explicit transaction (an implicit transaction), or
// an explicit transaction that is not read-only.
type tripCounter struct {
	mu                     sync.Mutex
	trips, batches, writes int
}

type trips struct{ trips, batches, writes int }

func (c *tripCounter) TraceQueryStart(ctx context.Context, conn *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trips++
	sql := strings.ToLower(strings.TrimSpace(d.SQL))
	switch {
	case strings.HasPrefix(sql, "begin"):
		if !strings.Contains(sql, "read only") {
			c.writes++
		}
	case conn.PgConn().TxStatus() == 'I' && !strings.HasPrefix(sql, "select"):
		c.writes++ // a statement on its own: an implicit transaction
	}
	return ctx
}

func (c *tripCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *tripCounter) TraceBatchStart(ctx context.Context, conn *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trips++
	c.batches++
	if conn.PgConn().TxStatus() == 'I' {
		c.writes++
	}
	return ctx
}

func (c *tripCounter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (c *tripCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

func (c *tripCounter) take() trips {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := trips{c.trips, c.batches, c.writes}
	c.trips, c.batches, c.writes = 0, 0, 0
	return t
}

// TestPostgresRoundTripsPerSuperStep counts the round trips and write
// transactions a super-step of one node costs on PostgreSQL: the difference
// between a run of 60 steps and one of 10, over 50. A step of one task
// saves its checkpoint with the task's update applied (a Put, one batch in
// one round trip); a pending write only comes first when a step has several
// tasks or fails.
func TestPostgresRoundTripsPerSuperStep(t *testing.T) {
	ctx := context.Background()
	counter := &tripCounter{}
	db := pgtest.Open(t, postgres.Options{Tracer: counter})
	run := func(steps int) trips {
		t.Helper()
		g, diags := runtime.LoadSource("trips.cue", load.GenerateGraph(steps, "enginetest", ""))
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		eng := engine.New(g, db.Checkpointer(), engine.Options{RecursionLimit: steps + 1})
		counter.take()
		res, err := eng.Run(ctx, engine.Request{ThreadID: fmt.Sprint("steps-", steps), Input: map[string]any{}}, nil)
		if err != nil || res.Steps != steps {
			t.Fatalf("run of %d steps: %v (%d steps)", steps, err, res.Steps)
		}
		return counter.take()
	}
	short, long := run(10), run(60)
	per := func(a, b int) float64 { return float64(b-a) / 50 }
	t.Logf("run of 10 steps: %+v; of 60 steps: %+v", short, long)
	t.Logf("per super-step: %.2f round trips, %.2f batches, %.2f write transactions",
		per(short.trips, long.trips), per(short.batches, long.batches), per(short.writes, long.writes))
	if got := per(short.trips, long.trips); got > 1 {
		t.Errorf("a super-step costs %.2f round trips, want 1 (its checkpoint)", got)
	}
	if got := per(short.writes, long.writes); got > 1 {
		t.Errorf("a super-step costs %.2f write transactions, want 1", got)
	}
}
