// Package pgtest opens PostgreSQL databases for tests: each in a schema of
// its own on the server at $GRAPHCTL_TEST_POSTGRES, dropped when the test
// ends; without the variable the test is skipped with a message naming it.
package pgtest

import (
	"context"
	"fmt"
	neturl "net/url"
	"os"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/graphctl/graphctl/runtime/storage/postgres"
)

// Env names the variable holding the URL of a PostgreSQL server the tests
// may create and drop schemas in.
const Env = "GRAPHCTL_TEST_POSTGRES"

var seq atomic.Int64

// URL returns the server's URL, or skips the test.
func URL(t testing.TB) string {
	t.Helper()
	url := os.Getenv(Env)
	if url == "" {
		t.Skipf("$%s is not set: the PostgreSQL tests need a server (e.g. postgres://postgres@127.0.0.1:5432/test)", Env)
	}
	return url
}

// Schema returns a new schema name, dropped (with what it holds) when the
// test ends.
func Schema(t testing.TB, prefix string) string {
	t.Helper()
	url := URL(t)
	schema := fmt.Sprintf("%s_%d_%d", prefix, os.Getpid(), seq.Add(1))
	t.Cleanup(func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Errorf("drop schema: %v", err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema: %v", err)
		}
	})
	return schema
}

// SchemaURL returns the server's URL with search_path set to a new schema
// of the test's own (see Schema), for code that connects by URL, such as a
// graphctl process started with --postgres.
func SchemaURL(t testing.TB, prefix string) string {
	t.Helper()
	u, err := neturl.Parse(URL(t))
	if err != nil {
		t.Fatalf("$%s: %v", Env, err)
	}
	q := u.Query()
	q.Set("search_path", Schema(t, prefix))
	u.RawQuery = q.Encode()
	return u.String()
}

// Open opens a database in a schema of its own (opts.Schema is replaced).
func Open(t testing.TB, opts postgres.Options) *postgres.DB {
	t.Helper()
	url := URL(t)
	opts.Schema = Schema(t, "gctest")
	db, err := postgres.Open(context.Background(), url, opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
