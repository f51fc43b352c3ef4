package bench

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/storage/postgres"
)

// postgresBackend opens a checkpointer in a fresh schema of the database at
// url; closing it drops the schema. trips counts the SQL round trips made so
// far.
func postgresBackend(url string) (cp checkpoint.Checkpointer, closeFn func(), trips func() int64, err error) {
	ctx := context.Background()
	schema := fmt.Sprintf("graphctl_bench_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	db, err := postgres.Open(ctx, url, postgres.Options{Schema: schema})
	if err != nil {
		return nil, nil, nil, err
	}
	return db.Checkpointer(), func() {
		db.Close()
		if conn, err := pgx.Connect(ctx, url); err == nil {
			_, _ = conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
			conn.Close(ctx)
		}
	}, db.RoundTrips, nil
}
