package transfer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	_ "github.com/graphctl/graphctl/builtin-nodes/all"
	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/storage/badger"
	"github.com/graphctl/graphctl/runtime/storage/postgres"
	"github.com/graphctl/graphctl/runtime/store"
	"github.com/graphctl/graphctl/runtime/transfer"
)

type backend struct {
	cp checkpoint.Checkpointer
	st store.Store
}

func openBadger(t *testing.T) backend {
	db, err := badger.Open(t.TempDir(), badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return backend{db.Checkpointer(), db.Store()}
}

func openPostgres(t *testing.T) backend {
	url := os.Getenv("GRAPHCTL_TEST_POSTGRES")
	if url == "" {
		t.Skip("$GRAPHCTL_TEST_POSTGRES is not set: the PostgreSQL tests need a server (e.g. postgres://postgres@127.0.0.1:5432/test)")
	}
	ctx := context.Background()
	schema := fmt.Sprintf("gctest_transfer_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	db, err := postgres.Open(ctx, url, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Close()
		if conn, err := pgx.Connect(ctx, url); err == nil {
			conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
			conn.Close(ctx)
		}
	})
	return backend{db.Checkpointer(), db.Store()}
}

func slotFilling(t *testing.T) *compile.Graph {
	g, diags, err := runtime.Load("../../graphs/slot_filling.cue")
	if err != nil || diags.HasErrors() {
		t.Fatalf("load: %v %v", err, diags)
	}
	return g
}

func turn(t *testing.T, g *compile.Graph, b backend, thread, text string) *engine.Result {
	t.Helper()
	eng := engine.New(g, b.cp, engine.Options{Store: b.st})
	defer eng.Close()
	input, err := engine.TextInput(g, text)
	if err != nil {
		t.Fatal(err)
	}
	res, err := eng.Run(context.Background(), engine.Request{ThreadID: thread, Input: input}, nil)
	if err != nil {
		t.Fatalf("turn %q: %v", text, err)
	}
	return res
}

// A Badger data dir exported and imported into PostgreSQL (and back into a
// fresh Badger) has the same threads, histories, states and memory, and its
// conversations continue there.
func TestExportImportBetweenBackends(t *testing.T) {
	targets := []struct {
		name string
		open func(t *testing.T) backend
	}{
		{"badger to postgres", openPostgres},
		{"badger to badger", openBadger},
	}
	for _, tt := range targets {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			g := slotFilling(t)
			src := openBadger(t)
			turn(t, g, src, "a", "My dishwasher WDT780SAEM1 is leaking")
			turn(t, g, src, "a", "I want to fix it")
			turn(t, g, src, "b", "I need the install instructions for part PS11750057")
			latest, err := src.cp.Latest(ctx, "a")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := src.cp.Fork(ctx, "a", latest.ParentID, "a-fork"); err != nil {
				t.Fatal(err)
			}
			if err := src.st.Put(ctx, []string{"memories", "u1"}, "pref", map[string]any{"text": "prefers email"}, store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := src.st.Put(ctx, []string{"cache"}, "short", map[string]any{"v": 1.5}, store.PutOptions{TTL: time.Hour}); err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			out, err := transfer.Export(ctx, src.cp, src.st, &buf)
			if err != nil {
				t.Fatal(err)
			}
			if out.Threads != 3 || out.Items < 2 {
				t.Fatalf("exported %+v, want 3 threads and the store items", out)
			}
			dst := tt.open(t)
			in, err := transfer.Import(ctx, dst.cp, dst.st, bytes.NewReader(buf.Bytes()), time.Now)
			if err != nil {
				t.Fatal(err)
			}
			if in != out {
				t.Errorf("imported %+v, exported %+v", in, out)
			}
			for _, th := range []string{"a", "b", "a-fork"} {
				wantHist, _ := src.cp.History(ctx, th, checkpoint.ListOptions{})
				gotHist, err := dst.cp.History(ctx, th, checkpoint.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if len(gotHist) != len(wantHist) {
					t.Fatalf("thread %s: %d checkpoints imported, want %d", th, len(gotHist), len(wantHist))
				}
				for i := range wantHist {
					w, _ := src.cp.Get(ctx, th, wantHist[i].ID)
					g, err := dst.cp.Get(ctx, th, wantHist[i].ID)
					if err != nil {
						t.Fatalf("thread %s checkpoint %s: %v", th, wantHist[i].ID, err)
					}
					if g.ParentID != w.ParentID || !reflect.DeepEqual(g.Versions, w.Versions) || !sameValues(w.Values, g.Values) {
						t.Errorf("thread %s checkpoint %s differs after import", th, w.ID)
					}
				}
			}
			item, err := dst.st.Get(ctx, []string{"cache"}, "short")
			if err != nil || item.ExpiresAt.IsZero() || fmt.Sprint(item.Value["v"]) != "1.5" {
				t.Errorf("TTL item after import: %+v, %v", item, err)
			}
			hits, err := dst.st.Search(ctx, []string{"memories"}, store.SearchQuery{Query: "email"})
			if err != nil || len(hits) != 1 || hits[0].Key != "pref" {
				t.Errorf("search after import: %+v, %v", hits, err)
			}
			// The conversation goes on in the new backend.
			res := turn(t, g, dst, "a", "It is part PS11750057")
			if res.Status != engine.StatusCompleted || res.State["model"] != "WDT780SAEM1" {
				t.Errorf("third turn on the imported thread: %s, model %v", res.Status, res.State["model"])
			}
			// Importing again refuses to overwrite.
			if _, err := transfer.Import(ctx, dst.cp, dst.st, bytes.NewReader(buf.Bytes()), time.Now); err == nil || !strings.Contains(err.Error(), "already exists") {
				t.Errorf("second import: %v, want a refusal naming the existing thread", err)
			}
		})
	}
}

func sameValues(a, b map[string]json.RawMessage) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		var x, y any
		json.Unmarshal(v, &x)
		json.Unmarshal(b[k], &y)
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

func TestImportRejectsBadInput(t *testing.T) {
	tests := []struct{ name, input, want string }{
		{"empty", "", "empty input"},
		{"not an export", `{"kind":"item"}`, "not a graphctl export"},
		{"bad JSON", `{"kind":"header","format":"graphctl-export/v1"}` + "\n{", "line 2"},
		{"unknown kind", `{"kind":"header","format":"graphctl-export/v1"}` + "\n" + `{"kind":"blob"}`, `unknown kind "blob"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := openBadger(t)
			_, err := transfer.Import(context.Background(), b.cp, b.st, strings.NewReader(tt.input), time.Now)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
