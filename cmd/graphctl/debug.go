package main

import (
	"encoding/json"
	"net/http"
	"net/http/pprof"
	"runtime"

	"github.com/graphctl/graphctl/runtime/storage/badger"
	"github.com/graphctl/graphctl/runtime/workspace"
)

// debugCounters is what GET /debug/counters answers: counters a load test
// reads before and after a measurement to get costs per request.
type debugCounters struct {
	// Mallocs is the number of heap objects allocated since the process started.
	Mallocs uint64 `json:"mallocs"`
	// HeapBytes is the bytes of live and not yet collected heap objects.
	HeapBytes uint64 `json:"heap_bytes"`
	// Goroutines is the number of goroutines.
	Goroutines int `json:"goroutines"`
	// StorageCommits and StorageSyncs count Badger's write transactions and
	// fsyncs (zero on PostgreSQL).
	StorageCommits uint64 `json:"storage_commits"`
	StorageSyncs   uint64 `json:"storage_syncs"`
	// StorageBytes is the bytes of the keys and values Badger's commits
	// set, and of the keys they deleted.
	StorageBytes uint64 `json:"storage_bytes"`
	// CPUSeconds is the user and system CPU time the process has used.
	CPUSeconds float64 `json:"cpu_seconds"`
	// SQLRoundTrips counts the statements and batches sent to PostgreSQL
	// (zero on Badger).
	SQLRoundTrips int64 `json:"sql_round_trips"`
}

// debugHandler serves Go's profiles under /debug/pprof/ and the process's
// counters at /debug/counters (graphctl serve --debug).
func debugHandler(ws *workspace.Workspace) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("GET /debug/counters", func(w http.ResponseWriter, _ *http.Request) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		c := debugCounters{Mallocs: ms.Mallocs, HeapBytes: ms.HeapAlloc, Goroutines: runtime.NumGoroutine(), CPUSeconds: cpuSeconds()}
		c.StorageCommits, c.StorageSyncs = ws.StorageCommits()
		if st, ok := ws.Store().(*badger.Store); ok {
			c.StorageBytes = st.Stats().Bytes
		}
		if pg := ws.Postgres(); pg != nil {
			c.SQLRoundTrips = pg.RoundTrips()
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(c)
	})
	return mux
}
