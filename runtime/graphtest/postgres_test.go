package graphtest_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/graphctl/graphctl/runtime/graphtest"
)

// caseSchemas counts the PostgreSQL schemas that test cases create.
func caseSchemas(t *testing.T, url string) int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatalf("connect to %s: %v", url, err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM information_schema.schemata WHERE schema_name LIKE 'graphtest\_%'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRunOnPostgres runs cases with Options.Postgres: they pass on
// PostgreSQL as on Badger, a restart turn reopens the case's schema with its
// thread intact, the schemas are dropped afterwards, and a database that
// cannot be reached fails the case naming it.
func TestRunOnPostgres(t *testing.T) {
	url := os.Getenv("GRAPHCTL_TEST_POSTGRES")
	if url == "" {
		t.Skip("GRAPHCTL_TEST_POSTGRES is not set: no PostgreSQL to run the cases on")
	}
	g := compileWith(t, `{name: "pg", turns: [{
	input: "it is leaking"
	expect: {status: "completed", state: {count: 1, symptoms: ["leaking"]}}
}, {
	restart: true
	input: "ABC123 makes a noise"
	expect: {status: "interrupted", state: {count: 2, symptoms: ["leaking", "noisy"], model: "ABC123"}}
}]}`)
	before := caseSchemas(t, url)
	results := graphtest.Run(context.Background(), g, graphtest.Options{Postgres: url})
	if len(results) != 1 || !results[0].Passed {
		t.Fatalf("the case failed on PostgreSQL: %+v", results)
	}
	if after := caseSchemas(t, url); after != before {
		t.Errorf("case schemas: %d before, %d after; want them dropped", before, after)
	}
	results = graphtest.Run(context.Background(), g, graphtest.Options{Postgres: "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2"})
	if len(results) != 1 || results[0].Passed || !strings.Contains(strings.Join(results[0].Failures, "\n"), "open the case's database") {
		t.Fatalf("an unreachable database: %+v; want the case to fail opening it", results)
	}
}
