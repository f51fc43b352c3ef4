//go:build ignore

// generate writes the compatibility fixtures of the Badger and PostgreSQL
// checkpointers: a workload of checkpoints (full values, a long chain of
// append deltas with its snapshot, pending writes, interrupts, a fork, a
// rollback and a prune), stored by the checkpointer of the checkout it runs
// in, and what that checkpointer reads back. The fixtures in
// badger/testdata/v1 and postgres/testdata/v1 were written by the
// checkpointers that preceded package checkpoint/core (commit d0e8480):
//
//	GRAPHCTL_TEST_POSTGRES=postgres://… go run ./runtime/storage/testdata/generate.go OUTDIR
package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/storage/badger"
	"github.com/graphctl/graphctl/runtime/storage/postgres"
)

var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func now() time.Time { return epoch }

func id(step int) string { return fmt.Sprintf("1f0c0000-0000-6000-8000-%012d", step) }

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// workload writes the fixture's threads.
func workload(ctx context.Context, c checkpoint.Checkpointer) {
	put := func(thread string, step int, parent string, cp checkpoint.Checkpoint, blobs ...checkpoint.Blob) {
		cp.ThreadID, cp.ID, cp.Step, cp.GraphName, cp.GraphHash = thread, id(step), step, "chat", "0123abcd"
		cp.ParentID = parent
		cp.CreatedAt = epoch.Add(time.Duration(step) * time.Second)
		must(c.Put(ctx, cp, blobs))
	}
	// chat: 40 steps of a growing message list (a chain of 39 deltas,
	// snapshotted by a Latest), a counter rewritten each step, pending
	// writes on the newest checkpoint, then a step waiting on an interrupt.
	prev := ""
	for s := 1; s <= 40; s++ {
		msg := checkpoint.Blob{Field: "messages", Version: int64(s), Data: json.RawMessage(fmt.Sprintf(`[{"role":"user","content":"message %d"}]`, s))}
		if s > 1 {
			msg.Base = int64(s - 1)
		}
		count := checkpoint.Blob{Field: "count", Version: int64(s), Data: json.RawMessage(fmt.Sprint(s))}
		src := checkpoint.SourceLoop
		if s == 1 {
			src = checkpoint.SourceInput
		}
		put("chat", s, prev, checkpoint.Checkpoint{Source: src, Versions: map[string]int64{"messages": int64(s), "count": int64(s), "model": 1},
			Next: []checkpoint.Task{{ID: "reply", Node: "reply"}}, Writers: []string{"reply"}, Metadata: map[string]any{"run_id": "run-1", "note": "kept as JSON"}},
			append([]checkpoint.Blob{msg, count}, map[bool][]checkpoint.Blob{true: {{Field: "model", Version: 1, Data: json.RawMessage(`"ABC123X"`)}}}[s == 1]...)...)
		prev = id(s)
	}
	must(c.PutWrites(ctx, "chat", id(40), checkpoint.PendingWrite{TaskID: "reply", Node: "reply", Kind: "update", Update: json.RawMessage(`{"count":41}`)}))
	must(c.PutWrites(ctx, "chat", id(40), checkpoint.PendingWrite{TaskID: "search#2", Node: "search", Kind: "update", Update: json.RawMessage(`{"hits":[1,2]}`)}))
	_, err := c.Latest(ctx, "chat")
	must(err)
	put("chat", 41, id(40), checkpoint.Checkpoint{Source: "loop", Versions: map[string]int64{"messages": 41, "count": 40, "model": 1},
		Next:       []checkpoint.Task{{ID: "ask", Node: "ask"}},
		Interrupts: []checkpoint.Interrupt{{ID: "i-1", Node: "ask", TaskID: "ask", Field: "answer", Payload: map[string]any{"question": "Which model?"}, When: "during"}}},
		checkpoint.Blob{Field: "messages", Version: 41, Base: 40, Data: json.RawMessage(`[{"role":"assistant","content":"Which model?"}]`)})
	must(c.PutWrites(ctx, "chat", id(41), checkpoint.PendingWrite{TaskID: "ask", Node: "ask", Kind: "interrupt", Update: json.RawMessage(`{"interrupt":{"id":"i-1"}}`)}))
	// copy: a fork of chat at step 20.
	_, err = c.Fork(ctx, "chat", id(20), "copy")
	must(err)
	// rolled: six steps rolled back to the third.
	prev = ""
	for s := 1; s <= 6; s++ {
		b := checkpoint.Blob{Field: "list", Version: int64(s), Data: json.RawMessage(fmt.Sprintf(`[%d]`, s))}
		if s > 1 {
			b.Base = int64(s - 1)
		}
		put("rolled", s, prev, checkpoint.Checkpoint{Source: "loop", Versions: map[string]int64{"list": int64(s)}, Next: []checkpoint.Task{{ID: "n", Node: "n"}}}, b)
		prev = id(s)
	}
	must(c.Rollback(ctx, "rolled", id(3)))
	// pruned: ten steps pruned to the newest three.
	prev = ""
	for s := 1; s <= 10; s++ {
		b := checkpoint.Blob{Field: "list", Version: int64(s), Data: json.RawMessage(fmt.Sprintf(`["item %d"]`, s))}
		if s > 1 {
			b.Base = int64(s - 1)
		}
		put("pruned", s, prev, checkpoint.Checkpoint{Source: "loop", Versions: map[string]int64{"list": int64(s)}}, b)
		prev = id(s)
	}
	must(c.Prune(ctx, "pruned", 3))
}

// fixture is checkpointtest.Fixture, declared here so that this program
// also runs in checkouts that predate it.
type fixture struct {
	Threads []checkpoint.ThreadInfo                    `json:"threads"`
	Latest  map[string]*checkpoint.Snapshot            `json:"latest"`
	History map[string][]checkpoint.Checkpoint         `json:"history"`
	Get     map[string]map[string]*checkpoint.Snapshot `json:"get"`
}

func expected(ctx context.Context, c checkpoint.Checkpointer) fixture {
	e := fixture{Latest: map[string]*checkpoint.Snapshot{}, History: map[string][]checkpoint.Checkpoint{}, Get: map[string]map[string]*checkpoint.Snapshot{}}
	var err error
	e.Threads, err = c.Threads(ctx)
	must(err)
	for _, th := range e.Threads {
		e.Latest[th.ThreadID], err = c.Latest(ctx, th.ThreadID)
		must(err)
		e.History[th.ThreadID], err = c.History(ctx, th.ThreadID, checkpoint.ListOptions{})
		must(err)
		e.Get[th.ThreadID] = map[string]*checkpoint.Snapshot{}
		for i, cp := range e.History[th.ThreadID] {
			if i%10 != 0 {
				continue
			}
			e.Get[th.ThreadID][cp.ID], err = c.Get(ctx, th.ThreadID, cp.ID)
			must(err)
		}
	}
	return e
}

func writeJSON(path string, v any) {
	data, err := json.MarshalIndent(v, "", "\t")
	must(err)
	must(os.WriteFile(path, append(data, '\n'), 0o644))
}

func main() {
	ctx := context.Background()
	out := os.Args[1]

	bdir := filepath.Join(out, "badger", "testdata", "v1")
	must(os.MkdirAll(bdir, 0o755))
	db, err := badger.Open(filepath.Join(bdir, "data"), badger.Options{Now: now, MinFree: -1})
	must(err)
	workload(ctx, db.Checkpointer())
	writeJSON(filepath.Join(bdir, "expected.json"), expected(ctx, db.Checkpointer()))
	must(db.Close())

	url := os.Getenv("GRAPHCTL_TEST_POSTGRES")
	pdir := filepath.Join(out, "postgres", "testdata", "v1")
	must(os.MkdirAll(pdir, 0o755))
	const schema = "gcfixture_v1"
	pdb, err := postgres.Open(ctx, url, postgres.Options{Schema: schema, Now: now})
	must(err)
	workload(ctx, pdb.Checkpointer())
	writeJSON(filepath.Join(pdir, "expected.json"), expected(ctx, pdb.Checkpointer()))
	pdb.Close()
	conn, err := pgx.Connect(ctx, url)
	must(err)
	defer conn.Close(ctx)
	tables := map[string][]map[string]any{}
	for _, table := range []string{"threads", "checkpoints", "blobs", "pending_writes", "snapshots"} {
		rows, err := conn.Query(ctx, "SELECT * FROM "+schema+"."+table+" ORDER BY 1, 2")
		must(err)
		for rows.Next() {
			vals, err := rows.Values()
			must(err)
			row := map[string]any{}
			for i, f := range rows.FieldDescriptions() {
				switch v := vals[i].(type) {
				case []byte:
					row[f.Name] = map[string]string{"hex": hex.EncodeToString(v)}
				default:
					row[f.Name] = v
				}
			}
			tables[table] = append(tables[table], row)
		}
		must(rows.Err())
	}
	writeJSON(filepath.Join(pdir, "tables.json"), tables)
	_, err = conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
	must(err)
}
