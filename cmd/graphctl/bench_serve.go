package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	neturl "net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/graphctl/graphctl/server/loadgen"
)

type benchServeFlags struct {
	url, apiKey, graphs, graph, input, modes, durability string
	// postgres runs the started servers on PostgreSQL (a temporary schema);
	// replicas is how many of them share it.
	postgres                                  string
	replicas                                  int
	clients, tokens, streams, streamRuns, pid int
	duration, tokenEvery                      time.Duration
	asJSON                                    bool
}

func newBenchServeCommand() *cobra.Command {
	var f benchServeFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Load a separate graphctl serve process over TCP: runs/s, latency, per-token delay, idle-stream memory",
		Long: `bench serve measures graphctl serve as its clients see it, over TCP.

Without --url it starts graphctl serve as a child process (a temporary data
dir, the graph files of --graphs and a one-node streaming graph) beside a local
OpenAI-compatible model server, and measures:
  runs       --clients concurrent clients calling /runs/wait (stateless) or
             /threads/{id}/runs/wait (threaded, one thread per client) for
             --duration: runs/s and latency percentiles; with the child's
             /debug/counters, Badger commits, fsyncs and heap allocations per run
  tokens     a streamed model reply of --tokens tokens: the time from the
             model server sending a token to this client parsing its SSE frame
  streams    --streams idle SSE streams joining --stream-runs runs that wait
             for the model: the serve process's resident memory (VmRSS)
With --url it measures the runs of a server already running (and its
/debug/counters when it was started with --debug).

With --postgres URL the started servers keep everything in PostgreSQL (a
temporary schema, dropped afterwards) instead of a data dir, and --replicas N
starts N of them on that schema, the clients spread over them; the table
then also shows the SQL round trips per run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return benchServe(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.url, "url", "", "base URL of a running graphctl serve to load (default: start one)")
	fl.StringVar(&f.apiKey, "api-key", os.Getenv("GRAPHCTL_API_KEY"), "API key for --url (default $GRAPHCTL_API_KEY)")
	fl.StringVar(&f.graphs, "graphs", "graphs", "directory of graph files for the started server")
	fl.StringVar(&f.graph, "graph", "slot_filling", "assistant (graph) the runs call")
	fl.StringVar(&f.input, "input", `{"messages":[{"role":"user","content":"My dishwasher WDT780SAEM1 is leaking"}]}`, "input of every run (JSON)")
	fl.StringVar(&f.modes, "mode", "stateless,threaded", "runs to measure: stateless, threaded or both (comma-separated)")
	fl.StringVar(&f.durability, "durability", "batch", "--durability of the started server: batch or fsync")
	fl.IntVar(&f.clients, "clients", 8, "concurrent clients")
	fl.DurationVar(&f.duration, "duration", 10*time.Second, "how long each runs measurement lasts")
	fl.IntVar(&f.tokens, "tokens", 500, "tokens of the streamed reply (0: skip)")
	fl.DurationVar(&f.tokenEvery, "token-interval", time.Millisecond, "time between the model's tokens")
	fl.IntVar(&f.streams, "streams", 10000, "idle SSE streams to hold open (0: skip)")
	fl.IntVar(&f.streamRuns, "stream-runs", 100, "held runs the idle streams join")
	fl.BoolVar(&f.asJSON, "json", false, "print every figure as a JSON line")
	fl.StringVar(&f.postgres, "postgres", "", "run the started servers on this PostgreSQL database (in a temporary schema) instead of a data dir")
	fl.IntVar(&f.replicas, "replicas", 1, "with --postgres: how many serve replicas share the database")
	return cmd
}

func benchServe(cmd *cobra.Command, f benchServeFlags) error {
	ctx := cmd.Context()
	var input map[string]any
	if err := json.Unmarshal([]byte(f.input), &input); err != nil {
		return usageError(fmt.Errorf("--input: %w", err))
	}
	var modes []bool
	for _, m := range strings.Split(f.modes, ",") {
		switch strings.TrimSpace(m) {
		case "stateless":
			modes = append(modes, false)
		case "threaded":
			modes = append(modes, true)
		case "both":
			modes = append(modes, false, true)
		default:
			return usageError(fmt.Errorf("--mode: %q is not stateless, threaded or both", m))
		}
	}
	out := cmd.OutOrStdout()
	emit := func(kind string, v any, text string) {
		if f.asJSON {
			data, _ := json.Marshal(map[string]any{kind: v})
			fmt.Fprintln(out, string(data))
			return
		}
		fmt.Fprint(out, text)
	}
	if f.replicas < 1 || (f.replicas > 1 && (f.postgres == "" || f.url != "")) {
		return usageError(fmt.Errorf("--replicas %d: replicas need --postgres (and no --url)", f.replicas))
	}
	url, pid := f.url, 0
	var model *loadgen.Model
	var replicas []string
	if url == "" {
		var err error
		model, err = loadgen.StartModel()
		if err != nil {
			return failed(err)
		}
		defer model.Close()
		var storage []string
		if f.postgres != "" {
			schemaURL, drop, err := benchSchema(ctx, f.postgres)
			if err != nil {
				return failed(err)
			}
			defer drop()
			storage = []string{"--postgres", schemaURL}
		}
		for i := 0; i < f.replicas; i++ {
			p, dir, err := startServeChild(ctx, f, model, storage)
			if err != nil {
				return failed(err)
			}
			defer os.RemoveAll(dir)
			defer p.Stop()
			replicas = append(replicas, p.URL)
			if i == 0 {
				url, pid = p.URL, p.PID
			}
		}
		if len(replicas) == 1 {
			replicas = nil
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	emit("server", map[string]any{"url": url, "pid": pid, "cpus": runtime.NumCPU(), "loadavg": strings.TrimSpace(string(load))},
		fmt.Sprintf("graphctl serve at %s (pid %d, durability %s), %d CPUs, load average %s\n", url, pid, f.durability, runtime.NumCPU(), strings.Join(strings.Fields(string(load))[:3], " ")))
	c := loadgen.NewClient(url, f.apiKey, 1)
	defer c.Close()
	if model != nil && f.streams > 0 {
		// First, while the process has not yet grown its heap for the runs.
		runs := min(f.streamRuns, f.streams)
		s, err := loadgen.IdleStreams(ctx, url, f.apiKey, model, loadgen.StreamGraphName, pid, f.streams, runs)
		if err != nil {
			return failed(fmt.Errorf("idle streams: %w", err))
		}
		emit("streams", s, fmt.Sprintf("idle SSE streams: %d open on %d waiting runs: serve RSS %.0f MiB (%.0f MiB before them; %.1f KiB per stream)\n",
			s.Streams, s.Runs, mib(s.RSSAfter), mib(s.RSSBefore), float64(s.RSSAfter-s.RSSBefore)/1024/float64(s.Streams)))
	}
	if model != nil && f.tokens > 0 {
		t, err := loadgen.Tokens(ctx, c, loadgen.StreamGraphName, f.tokens, f.tokenEvery)
		if err != nil {
			return failed(fmt.Errorf("tokens: %w", err))
		}
		emit("tokens", t, fmt.Sprintf("model token sent → SSE frame parsed: %d tokens %v apart: p50 %s, p90 %s, p99 %s, max %s\n",
			t.Tokens, f.tokenEvery, round(t.P50), round(t.P90), round(t.P99), round(t.Max)))
	}
	if model == nil && (cmd.Flags().Changed("tokens") || cmd.Flags().Changed("streams")) {
		fmt.Fprintln(cmd.ErrOrStderr(), "tokens and idle streams are measured only on a server bench serve starts (without --url)")
	}
	if !f.asJSON {
		fmt.Fprintf(out, "%-10s %-13s %7s %7s %8s %9s %9s %9s %9s %12s %10s %11s %9s %8s\n", "runs", "graph", "clients", "runs", "failures", "runs/s", "p50", "p90", "p99", "commits/run", "syncs/run", "allocs/run", "CPU/run", "sql/run")
	}
	for _, threaded := range modes {
		before, err := sumCounters(ctx, c, replicas, f.apiKey)
		if err != nil {
			return failed(err)
		}
		r, err := loadgen.Runs(ctx, loadgen.RunsOptions{URL: url, Replicas: replicas, APIKey: f.apiKey, Clients: f.clients, Duration: f.duration, Threaded: threaded, Graph: f.graph, Input: input})
		if err != nil {
			return failed(err)
		}
		after, err := sumCounters(ctx, c, replicas, f.apiKey)
		if err != nil {
			return failed(err)
		}
		per := map[string]float64{}
		cols := []string{"-", "-", "-", "-", "-"}
		if before != nil && after != nil && r.Runs > 0 {
			for i, k := range []string{"storage_commits", "storage_syncs", "mallocs"} {
				per[k] = (after[k] - before[k]) / float64(r.Runs)
				cols[i] = fmt.Sprintf("%.1f", per[k])
			}
			per["cpu_seconds"] = (after["cpu_seconds"] - before["cpu_seconds"]) / float64(r.Runs)
			cols[3] = round(time.Duration(per["cpu_seconds"] * 1e9))
			per["sql_round_trips"] = (after["sql_round_trips"] - before["sql_round_trips"]) / float64(r.Runs)
			cols[4] = fmt.Sprintf("%.1f", per["sql_round_trips"])
		}
		emit("runs", map[string]any{"result": r, "per_run": per},
			fmt.Sprintf("%-10s %-13s %7d %7d %8d %9.0f %9s %9s %9s %12s %10s %11s %9s %8s\n", r.Mode, r.Graph, r.Clients, r.Runs, r.Failures, r.PerSecond,
				round(r.P50), round(r.P90), round(r.P99), cols[0], cols[1], cols[2], cols[3], cols[4]))
		if r.FirstFailure != "" && !f.asJSON {
			fmt.Fprintf(out, "  first failure: %s\n", r.FirstFailure)
		}
	}
	return nil
}

// sumCounters adds up the /debug/counters of the server of c, or of every
// replica when there are several.
func sumCounters(ctx context.Context, c *loadgen.Client, replicas []string, apiKey string) (map[string]float64, error) {
	if len(replicas) == 0 {
		return c.Counters(ctx)
	}
	sum := map[string]float64{}
	for _, u := range replicas {
		rc := loadgen.NewClient(u, apiKey, 1)
		got, err := rc.Counters(ctx)
		rc.Close()
		if err != nil || got == nil {
			return nil, err
		}
		for k, v := range got {
			sum[k] += v
		}
	}
	return sum, nil
}

// benchSchema makes the URL of a new schema in the database at base, and the
// function that drops it.
func benchSchema(ctx context.Context, base string) (string, func(), error) {
	u, err := neturl.Parse(base)
	if err != nil {
		return "", nil, usageError(fmt.Errorf("--postgres: %w", err))
	}
	schema := fmt.Sprintf("graphctl_bench_serve_%d", os.Getpid())
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), func() {
		if conn, err := pgx.Connect(context.WithoutCancel(ctx), base); err == nil {
			_, _ = conn.Exec(context.WithoutCancel(ctx), "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
			conn.Close(context.WithoutCancel(ctx))
		}
	}, nil
}

// startServeChild starts this executable's serve command on a free port with
// a temporary data dir and a copy of f.graphs plus the streaming graph, its
// model calls going to model. It returns the process and the temporary
// directory to remove.
func startServeChild(ctx context.Context, f benchServeFlags, model *loadgen.Model, storage []string) (*loadgen.Process, string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	dir, err := os.MkdirTemp("", "graphctl-bench-serve-")
	if err != nil {
		return nil, "", err
	}
	graphsDir := filepath.Join(dir, "graphs")
	if err := copyGraphFiles(f.graphs, graphsDir); err != nil {
		os.RemoveAll(dir)
		return nil, "", err
	}
	if err := os.WriteFile(filepath.Join(graphsDir, loadgen.StreamGraphName+".cue"), []byte(loadgen.StreamGraph), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, "", err
	}
	env := []string{"OPENAI_BASE_URL=" + model.URL, "OPENAI_API_KEY=bench"}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "OPENAI_BASE_URL", "OPENAI_API_KEY", "GRAPHCTL_LLM", apiKeysEnv, "GRAPHCTL_DATA_DIR":
		default:
			env = append(env, kv)
		}
	}
	if storage == nil {
		storage = []string{"--data-dir", filepath.Join(dir, "data"), "--durability", f.durability}
	}
	args := append([]string{"serve", "--graphs", graphsDir, "--addr", "127.0.0.1:0"}, storage...)
	args = append(args, "--on-restart", "fail", "--log-level", "warn", "--no-studio", "--debug")
	p, err := loadgen.Start(ctx, exe, args, env)
	if err != nil {
		os.RemoveAll(dir)
		return nil, "", err
	}
	return p, dir, nil
}

// copyGraphFiles copies the graph files (CUE, YAML; not tests) of src to dst.
func copyGraphFiles(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return fmt.Errorf("--graphs: %w", err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		ext := filepath.Ext(name)
		if e.IsDir() || (ext != ".cue" && ext != ".yaml" && ext != ".yml") || strings.HasSuffix(strings.TrimSuffix(name, ext), "_test") {
			continue
		}
		if err := copyFile(filepath.Join(src, name), filepath.Join(dst, name)); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func round(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	default:
		return d.Round(time.Microsecond).String()
	}
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
