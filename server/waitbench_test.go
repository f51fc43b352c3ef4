package server

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/graphctl/graphctl/runtime/audit"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/storage/badger"
	"github.com/graphctl/graphctl/server/graphs"
)

// BenchmarkThreadedWaitRun measures a slot-filling turn through
// /threads/{id}/runs/wait as graphctl serve wires it (a Badger data dir,
// the audit log), one client, a new thread every 10 runs: the server's work
// per run, the client's included, and what it writes to storage: the
// bytes of keys and values, commits and fsyncs per run.
func BenchmarkThreadedWaitRun(b *testing.B) {
	dir := b.TempDir()
	src, err := os.ReadFile("../graphs/slot_filling.cue")
	if err != nil {
		b.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "slot_filling.cue"), src, 0o644)
	ws, err := openServed(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	opts := engine.Options{Observers: []engine.Observer{&audit.Recorder{Store: ws.Store()}}}
	reg, diags, err := graphs.Open(dir, func(g *compile.Graph) (*engine.Engine, error) {
		return ws.Engine(g, opts), nil
	}, nil)
	if err != nil || reg == nil {
		b.Fatalf("open graphs: %v %v", err, diags)
	}
	f := wrapFixture(b, ws, reg, nil)
	body := []byte(`{"assistant_id":"slot_filling","input":{"messages":[{"role":"user","content":"My dishwasher WDT780SAEM1 is leaking"}]}}`)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	thread := ""
	db := ws.Store().(*badger.Store)
	before := db.Stats()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%10 == 0 {
			resp, err := client.Post(f.http.URL+"/threads", "application/json", bytes.NewReader([]byte(`{}`)))
			if err != nil {
				b.Fatal(err)
			}
			var out map[string]any
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err := jsonUnmarshal(raw, &out); err != nil {
				b.Fatal(err)
			}
			thread = fmt.Sprint(out["thread_id"])
		}
		resp, err := client.Post(f.http.URL+"/threads/"+thread+"/runs/wait", "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
	after := db.Stats()
	n := float64(b.N)
	b.ReportMetric(float64(after.Bytes-before.Bytes)/n, "stored-bytes/run")
	b.ReportMetric(float64(after.Commits-before.Commits)/n, "commits/run")
	b.ReportMetric(float64(after.Syncs-before.Syncs)/n, "syncs/run")
}
