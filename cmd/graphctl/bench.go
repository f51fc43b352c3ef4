package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"

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
With --langgraphjs DIR (examples/bench/langgraphjs after npm install there), the
same graphs run in LangGraph.js in the same invocation, and the ratios are printed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if quick {
				opts = bench.Options{LoopSteps: 200, LoopRuns: 2, ChatTurns: 200, FanOut: 20, FanOutRuns: 5, ValidateNodes: 200, Postgres: opts.Postgres}
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
			if langgraphjs == "" {
				return nil
			}
			other, err := runLangGraphJS(langgraphjs, opts, quick)
			if err != nil {
				return usageError(err)
			}
			if asJSON {
				for _, c := range bench.Compare(ours, other) {
					data, _ := json.Marshal(map[string]any{"compare": c.Metric, "langgraphjs": c.Other.Value, "graphctl": c.Ours.Value, "unit": c.Ours.Unit, "ratio": c.Ratio})
					fmt.Fprintln(out, string(data))
				}
				return nil
			}
			fmt.Fprintf(out, "\nLangGraph.js (same machine, same run)\n%s\n", bench.Table(other))
			fmt.Fprintf(out, "%-64s %12s %12s %8s\n", "LangGraph.js vs graphctl", "LangGraph.js", "graphctl", "ratio")
			for _, c := range bench.Compare(ours, other) {
				fmt.Fprintf(out, "%-64s %10.1f %s %10.1f %s %7.1f×\n", c.Metric, c.Other.Value, c.Other.Unit, c.Ours.Value, c.Ours.Unit, c.Ratio)
			}
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

// runLangGraphJS runs bench.mjs in dir with the same sizes and reads its figures.
func runLangGraphJS(dir string, opts bench.Options, quick bool) ([]bench.Result, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("--langgraphjs needs Node.js: %w", err)
	}
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
	script := filepath.Join(dir, "bench.mjs")
	c := exec.Command(node, script, "--loop-steps", strconv.Itoa(loop), "--chat-turns", strconv.Itoa(chat), "--fanout", strconv.Itoa(fan), "--runs", strconv.Itoa(runs))
	c.Dir = dir
	var stderr bytes.Buffer
	c.Stderr = &stderr
	data, err := c.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %s (run npm install in %s first)", script, err, bytes.TrimSpace(stderr.Bytes()), dir)
	}
	var out []bench.Result
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var r bench.Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s printed %q: %w", script, sc.Text(), err)
		}
		out = append(out, r)
	}
	return out, nil
}
