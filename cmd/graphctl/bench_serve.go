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
	// turns bounds the threads of threaded runs (0: one thread per client
	// for the whole duration).
	turns                int
	duration, tokenEvery time.Duration
	asJSON               bool
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
             /threads/{id}/runs/wait (threaded, one thread per client, a
             new one every --turns runs when set) for
             --duration: runs/s, latency percentiles and the CPU time of
             the load clients per run; with the child's /debug/counters,
             Badger commits, fsyncs, heap allocations and CPU time per run
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
	fl.IntVar(&f.turns, "turns", 0, "threaded runs: each client starts a new thread after this many turns (0: one growing thread per client)")
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
	modes, err := benchModes(f.modes)
	if err != nil {
		return usageError(err)
	}
	if f.replicas < 1 || (f.replicas > 1 && (f.postgres == "" || f.url != "")) {
		return usageError(fmt.Errorf("--replicas %d: replicas need --postgres (and no --url)", f.replicas))
	}
	emit := benchEmitter{out: cmd.OutOrStdout(), asJSON: f.asJSON}
	t := &benchTarget{url: f.url}
	defer t.close()
	if t.url == "" {
		if err := t.start(ctx, f); err != nil {
			return failed(err)
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	emit.print("server", map[string]any{"url": t.url, "pid": t.pid, "cpus": runtime.NumCPU(), "loadavg": strings.TrimSpace(string(load))},
		fmt.Sprintf("graphctl serve at %s (pid %d, durability %s), %d CPUs, load average %s\n", t.url, t.pid, f.durability, runtime.NumCPU(), strings.Join(strings.Fields(string(load))[:3], " ")))
	c := loadgen.NewClient(t.url, f.apiKey, 1)
	defer c.Close()
	if err := benchStreaming(ctx, f, t, c, emit); err != nil {
		return failed(err)
	}
	if t.model == nil && (cmd.Flags().Changed("tokens") || cmd.Flags().Changed("streams")) {
		fmt.Fprintln(cmd.ErrOrStderr(), "tokens and idle streams are measured only on a server bench serve starts (without --url)")
	}
	if !f.asJSON {
		fmt.Fprintf(emit.out, "%-10s %-13s %7s %7s %8s %9s %9s %9s %9s %12s %10s %11s %9s %8s %15s\n", "runs", "graph", "clients", "runs", "failures", "runs/s", "p50", "p90", "p99", "commits/run", "syncs/run", "allocs/run", "CPU/run", "sql/run", "client CPU/run")
	}
	for _, threaded := range modes {
		if err := benchRuns(ctx, f, t, c, threaded, input, emit); err != nil {
			return failed(err)
		}
	}
	return nil
}

// benchModes parses --mode: a comma-separated list of stateless, threaded
// or both, as whether each measured mode is threaded.
func benchModes(list string) ([]bool, error) {
	var modes []bool
	for _, m := range strings.Split(list, ",") {
		switch strings.TrimSpace(m) {
		case "stateless":
			modes = append(modes, false)
		case "threaded":
			modes = append(modes, true)
		case "both":
			modes = append(modes, false, true)
		default:
			return nil, fmt.Errorf("--mode: %q is not stateless, threaded or both", m)
		}
	}
	return modes, nil
}

// benchEmitter prints a figure as text, or as a JSON line under its kind.
type benchEmitter struct {
	out    io.Writer
	asJSON bool
}

func (e benchEmitter) print(kind string, v any, text string) {
	if e.asJSON {
		data, _ := json.Marshal(map[string]any{kind: v})
		fmt.Fprintln(e.out, string(data))
		return
	}
	fmt.Fprint(e.out, text)
}

// benchTarget is the server under load: the one at --url, or the serve
// processes bench serve starts (with their model, and their URLs when there
// are several replicas), which close stops.
type benchTarget struct {
	url      string
	pid      int
	model    *loadgen.Model
	replicas []string
	cleanup  []func()
}

// start starts the model and --replicas serve processes (on a temporary
// PostgreSQL schema with --postgres); the first one is the target.
func (t *benchTarget) start(ctx context.Context, f benchServeFlags) error {
	model, err := loadgen.StartModel()
	if err != nil {
		return err
	}
	t.model = model
	t.cleanup = append(t.cleanup, func() { model.Close() })
	var storage []string
	if f.postgres != "" {
		schemaURL, drop, err := benchSchema(ctx, f.postgres)
		if err != nil {
			return err
		}
		t.cleanup = append(t.cleanup, func() { drop() })
		storage = []string{"--postgres", schemaURL}
	}
	for i := 0; i < f.replicas; i++ {
		p, dir, err := startServeChild(ctx, f, model, storage)
		if err != nil {
			return err
		}
		t.cleanup = append(t.cleanup, func() { os.RemoveAll(dir) }, func() { p.Stop() })
		t.replicas = append(t.replicas, p.URL)
		if i == 0 {
			t.url, t.pid = p.URL, p.PID
		}
	}
	if len(t.replicas) == 1 {
		t.replicas = nil
	}
	return nil
}

// close stops what start started, in reverse order.
func (t *benchTarget) close() {
	for i := len(t.cleanup) - 1; i >= 0; i-- {
		t.cleanup[i]()
	}
}

// benchStreaming measures, on a server bench serve started, the memory of
// idle SSE streams and the latency of streamed tokens.
func benchStreaming(ctx context.Context, f benchServeFlags, t *benchTarget, c *loadgen.Client, emit benchEmitter) error {
	if t.model == nil {
		return nil
	}
	if f.streams > 0 {
		// First, while the process has not yet grown its heap for the runs.
		runs := min(f.streamRuns, f.streams)
		s, err := loadgen.IdleStreams(ctx, t.url, f.apiKey, t.model, loadgen.StreamGraphName, t.pid, f.streams, runs)
		if err != nil {
			return fmt.Errorf("idle streams: %w", err)
		}
		emit.print("streams", s, fmt.Sprintf("idle SSE streams: %d open on %d waiting runs: serve RSS %.0f MiB (%.0f MiB before them; %.1f KiB per stream)\n",
			s.Streams, s.Runs, mib(s.RSSAfter), mib(s.RSSBefore), float64(s.RSSAfter-s.RSSBefore)/1024/float64(s.Streams)))
	}
	if f.tokens > 0 {
		tk, err := loadgen.Tokens(ctx, c, loadgen.StreamGraphName, f.tokens, f.tokenEvery)
		if err != nil {
			return fmt.Errorf("tokens: %w", err)
		}
		emit.print("tokens", tk, fmt.Sprintf("model token sent → SSE frame parsed: %d tokens %v apart: p50 %s, p90 %s, p99 %s, max %s\n",
			tk.Tokens, f.tokenEvery, round(tk.P50), round(tk.P90), round(tk.P99), round(tk.Max)))
	}
	return nil
}

// benchRuns loads the target with runs of one mode and prints their rate,
// latency and the server's counters per run.
func benchRuns(ctx context.Context, f benchServeFlags, t *benchTarget, c *loadgen.Client, threaded bool, input map[string]any, emit benchEmitter) error {
	before, err := sumCounters(ctx, c, t.replicas, f.apiKey)
	if err != nil {
		return err
	}
	r, err := loadgen.Runs(ctx, loadgen.RunsOptions{URL: t.url, Replicas: t.replicas, APIKey: f.apiKey, Clients: f.clients, Duration: f.duration, Threaded: threaded, Turns: f.turns, Graph: f.graph, Input: input})
	if err != nil {
		return err
	}
	after, err := sumCounters(ctx, c, t.replicas, f.apiKey)
	if err != nil {
		return err
	}
	per, cols := perRun(before, after, r.Runs)
	emit.print("runs", map[string]any{"result": r, "per_run": per},
		fmt.Sprintf("%-10s %-13s %7d %7d %8d %9.0f %9s %9s %9s %12s %10s %11s %9s %8s %15s\n", r.Mode, r.Graph, r.Clients, r.Runs, r.Failures, r.PerSecond,
			round(r.P50), round(r.P90), round(r.P99), cols[0], cols[1], cols[2], cols[3], cols[4], round(r.ClientCPU)))
	if r.FirstFailure != "" && !f.asJSON {
		fmt.Fprintf(emit.out, "  first failure: %s\n", r.FirstFailure)
	}
	return nil
}

// perRun divides the growth of the server's counters by the runs: commits,
// syncs, allocations, CPU time and SQL round trips per run, and their
// columns of the text table ("-" when the counters are unknown).
func perRun(before, after map[string]float64, runs int) (map[string]float64, []string) {
	per := map[string]float64{}
	cols := []string{"-", "-", "-", "-", "-"}
	if before == nil || after == nil || runs <= 0 {
		return per, cols
	}
	for i, k := range []string{"storage_commits", "storage_syncs", "mallocs"} {
		per[k] = (after[k] - before[k]) / float64(runs)
		cols[i] = fmt.Sprintf("%.1f", per[k])
	}
	per["cpu_seconds"] = (after["cpu_seconds"] - before["cpu_seconds"]) / float64(runs)
	cols[3] = round(time.Duration(per["cpu_seconds"] * 1e9))
	per["sql_round_trips"] = (after["sql_round_trips"] - before["sql_round_trips"]) / float64(runs)
	cols[4] = fmt.Sprintf("%.1f", per["sql_round_trips"])
	return per, cols
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
