package main

import (
	"bufio"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchServe runs `graphctl bench serve` briefly against a serve child
// process and checks that it reports every figure: runs of both modes with
// their costs per run, the per-token delay and the idle streams' memory.
func TestBenchServe(t *testing.T) {
	t.Setenv("GRAPHCTL_TEST_CHILD", "1") // the child is this test binary acting as graphctl
	stdout, stderr, code := run(t, "bench", "serve", "--graphs", filepath.Join(repoRoot(t), "graphs"), "--json",
		"--duration", "300ms", "--clients", "2", "--mode", "both", "--tokens", "20", "--token-interval", "0s", "--streams", "30", "--stream-runs", "3")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	seen := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		var line map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("not a JSON line: %q", sc.Text())
		}
		for kind, v := range line {
			seen[kind]++
			switch kind {
			case "runs":
				var r struct {
					Result struct {
						Mode      string  `json:"mode"`
						Runs      int     `json:"runs"`
						Failures  int     `json:"failures"`
						PerSecond float64 `json:"runs_per_second"`
						P50       int64   `json:"p50_ns"`
					} `json:"result"`
					PerRun map[string]float64 `json:"per_run"`
				}
				if err := json.Unmarshal(v, &r); err != nil {
					t.Fatal(err)
				}
				if r.Result.Runs == 0 || r.Result.Failures != 0 || r.Result.PerSecond <= 0 || r.Result.P50 <= 0 {
					t.Errorf("%s runs: %s", r.Result.Mode, v)
				}
				// A stateless run's thread is in memory: it commits its
				// record, not its checkpoints, and is not synced.
				_, synced := r.PerRun["storage_syncs"]
				if r.PerRun["storage_commits"] < 1 || !synced || r.PerRun["mallocs"] < 1 {
					t.Errorf("%s runs: costs per run missing: %s", r.Result.Mode, v)
				}
				// Runs that end together share one fsync, so there may be
				// fewer fsyncs than runs, but never none.
				if r.Result.Mode == "threaded" && r.PerRun["storage_syncs"] <= 0 {
					t.Errorf("threaded runs are not synced to disk as they end: %s", v)
				}
			case "tokens":
				var tk struct {
					Tokens int   `json:"tokens"`
					P99    int64 `json:"p99_ns"`
				}
				json.Unmarshal(v, &tk)
				if tk.Tokens != 20 || tk.P99 <= 0 {
					t.Errorf("tokens: %s", v)
				}
			case "streams":
				var st struct {
					Streams   int   `json:"streams"`
					RSSBefore int64 `json:"rss_before_bytes"`
					RSSAfter  int64 `json:"rss_after_bytes"`
				}
				json.Unmarshal(v, &st)
				if st.Streams != 30 || st.RSSBefore <= 0 || st.RSSAfter <= 0 {
					t.Errorf("streams: %s", v)
				}
			}
		}
	}
	for kind, want := range map[string]int{"server": 1, "runs": 2, "tokens": 1, "streams": 1} {
		if seen[kind] != want {
			t.Errorf("%d %q lines, want %d:\n%s", seen[kind], kind, want, stdout)
		}
	}
}
