package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/graphctl/graphctl/runtime/bench"
)

func newBenchCommand() *cobra.Command {
	var (
		opts        bench.Options
		asJSON      bool
		quick       bool
		langgraphjs string
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure per-step, per-turn, fan-out and validation costs (optionally beside LangGraph.js)",
		Long: `bench runs graphctl's performance scenarios on this machine and prints a table:
  loop      a 1,000-step loop: cost per super-step in memory, on Badger, and on Badger with fsync
  chat      a 1,000-turn chat on one thread: cost per turn early and late, and its size on disk
  fan-out   100 parallel tasks and a join
  validate  loading and checking a 1,000-node graph
With --langgraphjs DIR (examples/bench/langgraphjs after npm ci there), the same
graphs run in LangGraph.js in the same invocation, with MemorySaver and with
SqliteSaver on a file, and the ratios are printed: in memory against graphctl's
memory checkpointer, durable against graphctl on Badger with and without fsync.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if quick {
				opts = bench.Options{LoopSteps: 200, LoopRuns: 2, ChatTurns: 200, FanOut: 20, FanOutRuns: 5, ValidateNodes: 200, Postgres: opts.Postgres}
			}
			var js *langGraphJS
			if langgraphjs != "" {
				var err error
				if js, err = findLangGraphJS(langgraphjs); err != nil {
					return usageError(err)
				}
			}
			out := cmd.OutOrStdout()
			var ours []bench.Result
			err := bench.Run(cmd.Context(), opts, func(r bench.Result) {
				ours = append(ours, r)
				if asJSON {
					data, _ := json.Marshal(r)
					fmt.Fprintln(out, string(data))
				}
			})
			if err != nil {
				return failed(err)
			}
			if !asJSON {
				fmt.Fprintf(out, "graphctl (%s, %d CPUs)\n%s", runtime.Version(), runtime.NumCPU(), bench.Table(ours))
			}
			if js == nil {
				return nil
			}
			other, err := js.run(cmd.Context(), opts, quick)
			if err != nil {
				return failed(err)
			}
			if asJSON {
				return writeComparisonJSON(out, ours, other)
			}
			writeComparison(out, ours, other)
			return nil
		},
	}
	cmd.AddCommand(newBenchServeCommand())
	cmd.Flags().BoolVar(&asJSON, "json", false, "print every figure as a JSON line")
	cmd.Flags().BoolVar(&quick, "quick", false, "smaller scenarios (200 steps, 200 turns): a rough figure in seconds")
	cmd.Flags().StringVar(&langgraphjs, "langgraphjs", "", "directory of examples/bench/langgraphjs with its npm packages installed: run the same graphs in LangGraph.js and print the ratios")
	cmd.Flags().StringVar(&opts.Postgres, "postgres", "", "also measure the loop on this PostgreSQL database (in a temporary schema)")
	cmd.Flags().IntVar(&opts.LoopSteps, "loop-steps", 0, "steps of the loop scenario (default 1000)")
	cmd.Flags().IntVar(&opts.ChatTurns, "chat-turns", 0, "turns of the chat scenario (default 1000)")
	return cmd
}

// durabilityNotes say how durable graphctl's commits are on the backends
// the LangGraph.js figures are compared with.
var durabilityNotes = []string{
	"badger = graphctl on Badger, runs with LangGraph's default durability (async, as LangGraph.js's runs here): a run's checkpoints are written behind it, several in one commit, all before the run returns; data dir durability batch: a commit is written to the OS before it returns (it survives a killed process) and fsynced in the background; the checkpoint that ends a run is fsynced before the run returns",
	"badger-sync = as badger, but runs with durability sync: each checkpoint is committed before the next step starts",
	"badger-fsync = graphctl on Badger, runs with durability sync and data dir durability fsync: every checkpoint is committed and fsynced before the next step starts",
}

// writeComparison prints LangGraph.js's figures, then each figure measured
// on both sides with its ratio: in memory first, then on disk, then what
// each side's durable backend guarantees.
func writeComparison(out io.Writer, ours []bench.Result, js langGraphJSResults) {
	fmt.Fprintf(out, "\nLangGraph.js (same machine, same run)\n%s", bench.Table(js.Results))
	cs := bench.Compare(ours, js.Results)
	for _, durable := range []bool{false, true} {
		title := "in memory: MemorySaver vs graphctl's memory checkpointer"
		if durable {
			title = "durable: SqliteSaver on a file vs graphctl on Badger, without and with fsync"
		}
		fmt.Fprintf(out, "\nLangGraph.js vs graphctl, %s\n", title)
		fmt.Fprintf(out, "%-58s %14s %14s %9s\n", "", "LangGraph.js", "graphctl", "ratio")
		n := 0
		for _, c := range cs {
			if c.Durable != durable {
				continue
			}
			n++
			fmt.Fprintf(out, "%-58s %s %s %8.1f×\n", c.Metric, figure(c.Other), figure(c.Ours), c.Ratio)
		}
		if n == 0 {
			fmt.Fprintln(out, "(no figure measured on both sides)")
		}
	}
	fmt.Fprintln(out, "\nDurability")
	for _, note := range append(append([]string{}, js.Notes...), durabilityNotes...) {
		fmt.Fprintf(out, "  %s\n", note)
	}
}

// figure formats a value with its unit, with three significant digits or
// more, right-aligned in 14 columns.
func figure(r bench.Result) string {
	var s string
	switch v := r.Value; {
	case v >= 100:
		s = fmt.Sprintf("%.0f %s", v, r.Unit)
	case v >= 10:
		s = fmt.Sprintf("%.1f %s", v, r.Unit)
	default:
		s = fmt.Sprintf("%.2f %s", v, r.Unit)
	}
	return strings.Repeat(" ", max(14-utf8.RuneCountInString(s), 0)) + s
}

// writeComparisonJSON prints LangGraph.js's notes and every figure measured
// on both sides as JSON lines.
func writeComparisonJSON(out io.Writer, ours []bench.Result, js langGraphJSResults) error {
	enc := json.NewEncoder(out)
	for _, note := range append(append([]string{}, js.Notes...), durabilityNotes...) {
		if err := enc.Encode(map[string]string{"note": note}); err != nil {
			return fmt.Errorf("write comparison: %w", err)
		}
	}
	for _, c := range bench.Compare(ours, js.Results) {
		line := map[string]any{"compare": c.Metric, "durable": c.Durable, "langgraphjs": c.Other.Value, "graphctl": c.Ours.Value, "unit": c.Ours.Unit, "ratio": c.Ratio}
		if err := enc.Encode(line); err != nil {
			return fmt.Errorf("write comparison: %w", err)
		}
	}
	return nil
}

// langGraphJSResults is what bench.mjs printed: its figures, and notes on
// what it measured (versions, the durability of its SQLite commits).
type langGraphJSResults struct {
	Results []bench.Result
	Notes   []string
}

// langGraphJS is the LangGraph.js side of the comparison: bench.mjs in a
// directory with its npm packages installed, and the node that runs it.
type langGraphJS struct {
	dir, script, node string
}

// findLangGraphJS checks that dir holds bench.mjs and its installed packages
// and that Node.js is on the PATH, before anything is measured.
func findLangGraphJS(dir string) (*langGraphJS, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("--langgraphjs %s: %w", dir, err)
	}
	script := filepath.Join(dir, "bench.mjs")
	if _, err := os.Stat(script); err != nil {
		return nil, fmt.Errorf("--langgraphjs %s: %w (give the directory examples/bench/langgraphjs)", dir, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules")); err != nil {
		return nil, fmt.Errorf("--langgraphjs %s: no node_modules: run npm ci there first", dir)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("--langgraphjs needs Node.js: %w", err)
	}
	return &langGraphJS{dir: dir, script: script, node: node}, nil
}

// run runs bench.mjs with the same sizes as our scenarios and reads its
// figures.
func (js *langGraphJS) run(ctx context.Context, opts bench.Options, quick bool) (langGraphJSResults, error) {
	loop, chat, fan, runs := 1000, 1000, 100, 5
	if quick {
		loop, chat, fan, runs = 200, 200, 20, 2
	}
	if opts.LoopSteps > 0 {
		loop = opts.LoopSteps
	}
	if opts.ChatTurns > 0 {
		chat = opts.ChatTurns
	}
	if opts.FanOut > 0 {
		fan = opts.FanOut
	}
	if opts.LoopRuns > 0 {
		runs = opts.LoopRuns
	}
	c := exec.CommandContext(ctx, js.node, js.script, "--loop-steps", strconv.Itoa(loop), "--chat-turns", strconv.Itoa(chat), "--fanout", strconv.Itoa(fan), "--runs", strconv.Itoa(runs))
	c.Dir = js.dir
	var stderr bytes.Buffer
	c.Stderr = &stderr
	data, err := c.Output()
	if err != nil {
		return langGraphJSResults{}, fmt.Errorf("%s: %w: %s", js.script, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return parseLangGraphJS(js.script, data)
}

// parseLangGraphJS reads bench.mjs's output: one JSON object a line, a
// figure ({"scenario", "metric", "value", "unit"}) or a note ({"note"}).
func parseLangGraphJS(script string, data []byte) (langGraphJSResults, error) {
	var out langGraphJSResults
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var v struct {
			bench.Result
			Note *string `json:"note"`
		}
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			return out, fmt.Errorf("%s: line %d %q: %w", script, line, text, err)
		}
		switch {
		case v.Note != nil:
			out.Notes = append(out.Notes, *v.Note)
		case v.Scenario == "" || v.Metric == "":
			return out, fmt.Errorf("%s: line %d %q: a figure needs a scenario and a metric", script, line, text)
		default:
			out.Results = append(out.Results, v.Result)
		}
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("%s: read output: %w", script, err)
	}
	if len(out.Results) == 0 {
		return out, fmt.Errorf("%s printed no figure", script)
	}
	return out, nil
}
