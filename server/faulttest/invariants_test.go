package faulttest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/storage/badger"
	"github.com/graphctl/graphctl/runtime/store"
)

// finalStatuses are the statuses a run ends in.
var finalStatuses = map[string]bool{"success": true, "error": true, "interrupted": true}

// runRecord is what the suite reads of a stored run record.
type runRecord struct {
	RunID    string
	ThreadID string
	Status   string
	Error    string
}

// checkDataDir opens the data directory of a stopped server and checks that
// every thread's checkpoints form one readable chain and every stored run
// record is final. It returns the records and each thread's latest values.
func checkDataDir(t *testing.T, data string, v *violations) (map[string]runRecord, map[string]map[string]json.RawMessage) {
	t.Helper()
	db, err := badger.Open(data, badger.Options{MinFree: -1})
	if err != nil {
		t.Fatalf("open the data dir after the run: %v", err)
	}
	defer db.Close()
	ctx := context.Background()
	cp := db.Checkpointer()
	threads, err := cp.Threads(ctx)
	if err != nil {
		t.Fatalf("list threads: %v", err)
	}
	latest := map[string]map[string]json.RawMessage{}
	for _, th := range threads {
		hist, err := cp.History(ctx, th.ThreadID, checkpoint.ListOptions{})
		if err != nil {
			v.add("checkpoints form one chain", "history of %s: %v", th.ThreadID, err)
			continue
		}
		for i, h := range hist {
			want := ""
			if i+1 < len(hist) {
				want = hist[i+1].ID
			}
			if h.ParentID != want {
				v.add("checkpoints form one chain", "thread %s: checkpoint %s has parent %q, want %q (the one before it)", th.ThreadID, h.ID, h.ParentID, want)
			}
			if _, err := cp.Get(ctx, th.ThreadID, h.ID); err != nil {
				v.add("checkpoints form one chain", "thread %s: checkpoint %s unreadable: %v", th.ThreadID, h.ID, err)
			}
		}
		if len(hist) > 0 && th.Latest != hist[0].ID {
			v.add("checkpoints form one chain", "thread %s: summary names %s as latest, history's newest is %s", th.ThreadID, th.Latest, hist[0].ID)
		}
		if snap, err := cp.Latest(ctx, th.ThreadID); err == nil {
			latest[th.ThreadID] = snap.Values
		}
	}
	items, err := db.Store().Search(ctx, []string{"graphctl", "runs"}, store.SearchQuery{Limit: 1 << 20})
	if err != nil {
		t.Fatalf("list run records: %v", err)
	}
	recs := map[string]runRecord{}
	for _, it := range items {
		b, _ := json.Marshal(it.Value)
		var r struct {
			RunID    string `json:"run_id"`
			ThreadID string `json:"thread_id"`
			Status   string `json:"status"`
			Error    string `json:"error"`
		}
		if err := json.Unmarshal(b, &r); err != nil || r.RunID == "" {
			continue
		}
		recs[r.RunID] = runRecord{RunID: r.RunID, ThreadID: r.ThreadID, Status: r.Status, Error: r.Error}
		if !finalStatuses[r.Status] {
			v.add("every run ends in a final state", "run %s of thread %s is %q after the system settled", r.RunID, r.ThreadID, r.Status)
		}
	}
	return recs, latest
}

// stringList decodes a list-of-strings field value.
func stringList(raw json.RawMessage) []string {
	var out []string
	json.Unmarshal(raw, &out)
	return out
}

// checkTurns checks a thread's log of applied turns: none twice, and the
// turn of every successful run once.
func checkTurns(thread string, log []string, succeeded []string, v *violations) {
	seen := map[string]int{}
	for _, turn := range log {
		seen[turn]++
		if seen[turn] == 2 {
			v.add("no input applied twice", "thread %s applied turn %s more than once (log %v)", thread, turn, log)
		}
	}
	for _, turn := range succeeded {
		if seen[turn] == 0 {
			v.add("no input applied twice", "thread %s: the successful run of turn %s left no trace in the log", thread, turn)
		}
	}
}

// recorder is an HTTP endpoint graph nodes call as their side effect; it
// remembers each call's turn and time.
type recorder struct {
	srv *httptest.Server
	mu  sync.Mutex
	// calls maps endpoint/turn to the times of its calls.
	calls map[string][]time.Time
	// delay returns how long an endpoint takes to answer.
	delay func(endpoint string) time.Duration
}

func newRecorder(t *testing.T, delay func(endpoint string) time.Duration) *recorder {
	r := &recorder{calls: map[string][]time.Time{}, delay: delay}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var body struct {
			Turn string `json:"turn"`
		}
		json.NewDecoder(req.Body).Decode(&body)
		key := req.URL.Path + " " + body.Turn
		r.mu.Lock()
		r.calls[key] = append(r.calls[key], time.Now())
		r.mu.Unlock()
		if r.delay != nil {
			select {
			case <-time.After(r.delay(req.URL.Path)):
			case <-req.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"ok": true, "turn": %q}`, body.Turn)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// checkEffects checks that no side effect happened twice for a turn
// without a kill between the two calls (a node that finished is not run
// again; one cut by a kill may be).
func (r *recorder) checkEffects(kills []time.Time, v *violations) (calls int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	keys := make([]string, 0, len(r.calls))
	for k := range r.calls {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		times := r.calls[k]
		calls += len(times)
		for i := 1; i < len(times); i++ {
			killed := slices.ContainsFunc(kills, func(at time.Time) bool { return at.After(times[i-1]) && at.Before(times[i]) })
			if !killed {
				v.add("no finished node ran twice", "%s called again at %s, %s after the previous call, with no kill between", k, times[i].Format("15:04:05.000"), times[i].Sub(times[i-1]).Round(time.Millisecond))
			}
		}
	}
	return calls
}
