package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/runtime/load/evalguard"
)

// evalFlags are the limits on evaluating a graph file's CUE, flags of every
// command that loads graphs.
type evalFlags struct {
	time   time.Duration
	memory string
}

type evalLimitsKey struct{}

// addEvalFlags registers --max-eval-time and --max-eval-memory on root for
// every command, and hands the limits to the commands through their context.
func addEvalFlags(root *cobra.Command) {
	f := &evalFlags{}
	root.PersistentFlags().DurationVar(&f.time, "max-eval-time", evalguard.DefaultTime,
		"longest a graph file's evaluation may take (0 = no limit)")
	root.PersistentFlags().StringVar(&f.memory, "max-eval-memory", evalguard.FormatSize(evalguard.DefaultMemory),
		"most memory a graph file's evaluation may use (512MiB, 1GB; 0 = no limit)")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		mem, err := evalguard.ParseSize(f.memory)
		if err != nil {
			return usageError(fmt.Errorf("--max-eval-memory: %w", err))
		}
		if f.time < 0 {
			return usageError(fmt.Errorf("--max-eval-time must not be negative, got %s", f.time))
		}
		ctx := cmd.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		cmd.SetContext(context.WithValue(ctx, evalLimitsKey{}, evalguard.Limits{Time: f.time, Memory: mem}))
		return nil
	}
}

// evalLimits returns the limits the command line set (the defaults when
// none did).
func evalLimits(ctx context.Context) evalguard.Limits {
	if ctx != nil {
		if l, ok := ctx.Value(evalLimitsKey{}).(evalguard.Limits); ok {
			return l
		}
	}
	return evalguard.DefaultLimits()
}

// loadGraph loads, validates and compiles a graph file within the
// evaluation limits of ctx.
func loadGraph(ctx context.Context, file string) (*compile.Graph, diag.List, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	return evalguard.Load(ctx, file, evalLimits(ctx))
}
