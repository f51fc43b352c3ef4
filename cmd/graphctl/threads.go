package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/workspace"
	"github.com/graphctl/graphctl/server"
)

func shortID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// threadsCommand holds the flags shared by the threads subcommands.
type threadsCommand struct {
	flags runFlags
}

func newThreadsCommand() *cobra.Command {
	tc := &threadsCommand{}
	cmd := &cobra.Command{
		Use:   "threads",
		Short: "List, inspect, fork and delete threads in the data dir",
	}
	cmd.PersistentFlags().StringVar(&tc.flags.dataDir, "data-dir", "", "directory of the checkpoint and memory database (default $"+workspace.DataDirEnv+" or ./.graphctl)")
	cmd.PersistentFlags().StringVar(&tc.flags.postgres, "postgres", "", postgresFlagUsage)
	cmd.PersistentFlags().BoolVar(&tc.flags.asJSON, "json", false, "print as JSON")
	cmd.AddCommand(tc.list(), tc.show(), tc.history(), tc.fork(), tc.delete(), tc.prune(), tc.update())
	cmd.AddCommand(newThreadsTransferCommands(&tc.flags)...)
	cmd.AddCommand(newThreadsLogCommand(&tc.flags))
	return cmd
}

// withCheckpointer runs fn with the workspace's checkpointer; a thread not
// found is a failure (exit status 1).
func (tc *threadsCommand) withCheckpointer(fn func(ctx context.Context, cp checkpoint.Checkpointer, out io.Writer, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		ws, err := tc.flags.openWorkspace()
		if err != nil {
			return err
		}
		defer ws.Close()
		err = fn(cmd.Context(), ws.Checkpointer(), cmd.OutOrStdout(), args)
		if errors.Is(err, checkpoint.ErrNotFound) {
			return failed(err)
		}
		return err
	}
}

func (tc *threadsCommand) printJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// list is `threads list`.
func (tc *threadsCommand) list() *cobra.Command {
	list := &cobra.Command{
		Use: "list", Short: "List threads, most recently updated first", Args: cobra.NoArgs,
		RunE: tc.withCheckpointer(func(ctx context.Context, cp checkpoint.Checkpointer, out io.Writer, _ []string) error {
			all, err := cp.Threads(ctx)
			if err != nil {
				return failed(err)
			}
			threads := make([]checkpoint.ThreadInfo, 0, len(all))
			for _, t := range all {
				if !checkpoint.IsChildThread(t.ThreadID) { // a subgraph's checkpoints: see threads show
					threads = append(threads, t)
				}
			}
			if tc.flags.asJSON {
				return tc.printJSON(out, threads)
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "THREAD\tGRAPH\tSTEP\tUPDATED")
			for _, t := range threads {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", t.ThreadID, t.GraphName, t.Step, t.UpdatedAt.Format("2006-01-02 15:04:05"))
			}
			return tw.Flush()
		}),
	}
	return list
}

// show is `threads show`.
func (tc *threadsCommand) show() *cobra.Command {
	var checkpointID, namespace string
	show := &cobra.Command{
		Use: "show THREAD", Short: "Show a thread's state, next nodes and pending interrupts, with the state of its subgraphs still at work", Args: cobra.ExactArgs(1),
		RunE: tc.withCheckpointer(func(ctx context.Context, cp checkpoint.Checkpointer, out io.Writer, args []string) error {
			thread := checkpoint.NamespacedThreadID(args[0], namespace)
			var snap *checkpoint.Snapshot
			var err error
			if checkpointID != "" {
				snap, err = cp.Get(ctx, thread, checkpointID)
			} else {
				snap, err = cp.Latest(ctx, thread)
			}
			if err != nil {
				return fmt.Errorf("thread %s: %w", threadLabel(thread), err)
			}
			children := pendingSubgraphs(ctx, cp, snap)
			if tc.flags.asJSON {
				return tc.printJSON(out, struct {
					*checkpoint.Snapshot
					Subgraphs map[string]*checkpoint.Snapshot `json:"subgraphs,omitempty"`
				}{snap, children})
			}
			printSnapshot(out, snap, "")
			for _, ns := range sortedKeys(children) {
				fmt.Fprintf(out, "subgraph    %s\n", ns)
				printSnapshot(out, children[ns], "  ")
			}
			return nil
		}),
	}
	show.Flags().StringVar(&checkpointID, "checkpoint", "", "show this checkpoint instead of the latest")
	show.Flags().StringVar(&namespace, "ns", "", "show the checkpoints of the subgraph at this namespace (as threads show lists it, nested ones joined by |)")
	return show
}

// history is `threads history`.
func (tc *threadsCommand) history() *cobra.Command {
	var limit int
	var namespace string
	var before string
	history := &cobra.Command{
		Use: "history THREAD", Short: "List a thread's checkpoints, newest first", Args: cobra.ExactArgs(1),
		RunE: tc.withCheckpointer(func(ctx context.Context, cp checkpoint.Checkpointer, out io.Writer, args []string) error {
			hist, err := cp.History(ctx, checkpoint.NamespacedThreadID(args[0], namespace), checkpoint.ListOptions{Limit: limit, Before: before})
			if err != nil {
				return failed(err)
			}
			if len(hist) == 0 {
				return failed(fmt.Errorf("thread %s: %w", args[0], checkpoint.ErrNotFound))
			}
			if tc.flags.asJSON {
				return tc.printJSON(out, hist)
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "CHECKPOINT\tSTEP\tSOURCE\tWRITERS\tNEXT\tCREATED")
			for _, c := range hist {
				var next []string
				for _, t := range c.Next {
					next = append(next, t.ID)
				}
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", c.ID, c.Step, c.Source, orNone(strings.Join(c.Writers, ",")),
					orNone(strings.Join(next, ",")), c.CreatedAt.Format("15:04:05.000"))
			}
			return tw.Flush()
		}),
	}
	history.Flags().IntVar(&limit, "limit", 20, "how many checkpoints to list")
	history.Flags().StringVar(&before, "before", "", "list checkpoints older than this checkpoint id")
	history.Flags().StringVar(&namespace, "ns", "", "list the checkpoints of the subgraph at this namespace (as threads show lists it, nested ones joined by |)")
	return history
}

// fork is `threads fork`.
func (tc *threadsCommand) fork() *cobra.Command {
	var forkFrom, forkTo string
	fork := &cobra.Command{
		Use: "fork THREAD", Short: "Copy a thread's state at a checkpoint into a new thread", Args: cobra.ExactArgs(1),
		RunE: tc.withCheckpointer(func(ctx context.Context, cp checkpoint.Checkpointer, out io.Writer, args []string) error {
			from := forkFrom
			if from == "" {
				snap, err := cp.Latest(ctx, args[0])
				if err != nil {
					return fmt.Errorf("thread %s: %w", args[0], err)
				}
				from = snap.ID
			}
			to := forkTo
			if to == "" {
				to = args[0] + "-fork-" + shortID()
			}
			c, err := cp.Fork(ctx, args[0], from, to)
			if err != nil {
				return failed(err)
			}
			if tc.flags.asJSON {
				return tc.printJSON(out, c)
			}
			fmt.Fprintf(out, "forked %s at %s into %s\n", args[0], from, c.ThreadID)
			return nil
		}),
	}
	fork.Flags().StringVar(&forkFrom, "checkpoint", "", "the checkpoint to fork from (default: the latest)")
	fork.Flags().StringVar(&forkTo, "to", "", "the new thread's id (default: generated)")
	return fork
}

// delete is `threads delete`.
func (tc *threadsCommand) delete() *cobra.Command {
	del := &cobra.Command{
		Use: "delete THREAD...", Short: "Delete threads and everything stored for them", Args: cobra.MinimumNArgs(1),
		RunE: tc.withCheckpointer(func(ctx context.Context, cp checkpoint.Checkpointer, out io.Writer, args []string) error {
			for _, id := range args {
				if _, err := cp.Latest(ctx, id); err != nil {
					return fmt.Errorf("thread %s: %w", id, err)
				}
				if err := checkpoint.DeleteThreadTree(ctx, cp, id); err != nil {
					return failed(err)
				}
				fmt.Fprintf(out, "deleted %s\n", id)
			}
			return nil
		}),
	}
	return del
}

// prune is `threads prune`.
func (tc *threadsCommand) prune() *cobra.Command {
	var keep int
	var graphFile string
	prune := &cobra.Command{
		Use:   "prune THREAD --keep N [--graph GRAPH]",
		Short: "Keep a thread's newest N checkpoints, and its subgraphs', and delete the older ones",
		Long: `Prune keeps a thread's newest N checkpoints and deletes the older ones, as the
server's keep_latest does for N = 1. Its subgraphs' checkpoints are pruned with it:
with --graph (the thread's graph file), each subgraph namespace the thread can still
go on in from a checkpoint it keeps (a subgraph waiting for an answer, one that keeps
its state from run to run) keeps its newest N checkpoints, and the others (finished
subgraphs of earlier steps) are deleted. Without --graph, or when the file is another
version of the graph than the thread's checkpoints were written by, every namespace
keeps its newest N checkpoints.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if keep < 1 {
				return usageError(errors.New("--keep must be at least 1"))
			}
			var g *compile.Graph
			if graphFile != "" {
				var err error
				if g, err = mustLoad(cmd.Context(), graphFile); err != nil {
					return err
				}
			}
			return tc.withCheckpointer(func(ctx context.Context, cp checkpoint.Checkpointer, out io.Writer, args []string) error {
				return pruneThread(ctx, cp, out, args[0], keep, g, graphFile)
			})(cmd, args)
		},
	}
	prune.Flags().IntVar(&keep, "keep", 0, "how many of the newest checkpoints to keep")
	prune.Flags().StringVar(&graphFile, "graph", "", "the thread's graph file: subgraph namespaces the thread cannot go on in are deleted")

	return prune
}

// pruneThread prunes a thread and its subgraphs' checkpoints (see
// server.PruneThread) on graph g, the contents of graphFile, or on none
// when g is nil, and says what it kept.
func pruneThread(ctx context.Context, cp checkpoint.Checkpointer, out io.Writer, id string, keep int, g *compile.Graph, graphFile string) error {
	latest, err := cp.Latest(ctx, id)
	if err != nil {
		return fmt.Errorf("thread %s: %w", id, err)
	}
	if g != nil && g.Spec.Name != latest.GraphName {
		return usageError(fmt.Errorf("thread %s runs graph %q, and %s is graph %q", id, latest.GraphName, graphFile, g.Spec.Name))
	}
	before, err := checkpoint.ChildThreads(ctx, cp, id)
	if err != nil {
		return failed(fmt.Errorf("thread %s: %w", id, err))
	}
	otherVersion := false
	graphOf := func(snap *checkpoint.Snapshot) *compile.Graph {
		if g == nil || snap.GraphName != g.Spec.Name || snap.GraphHash == "" || !strings.HasPrefix(g.Spec.Hash, snap.GraphHash) {
			otherVersion = otherVersion || g != nil
			return nil
		}
		return g
	}
	if err := server.PruneThread(ctx, cp, id, keep, graphOf); err != nil {
		return failed(err)
	}
	after, err := checkpoint.ChildThreads(ctx, cp, id)
	if err != nil {
		return failed(fmt.Errorf("thread %s: %w", id, err))
	}
	fmt.Fprintf(out, "pruned %s to its newest %d checkpoint(s)", id, keep)
	if len(before) > 0 {
		fmt.Fprintf(out, "; subgraph namespaces: %d kept, %d deleted", len(after), len(before)-len(after))
	}
	fmt.Fprintln(out)
	switch {
	case len(before) == 0:
	case otherVersion:
		fmt.Fprintf(out, "%s is not the version of graph %s the thread's checkpoints were written by: every namespace kept its newest %d checkpoint(s)\n", graphFile, g.Spec.Name, keep)
	case g == nil:
		fmt.Fprintf(out, "every namespace kept its newest %d checkpoint(s); with --graph, those the thread cannot go on in are deleted\n", keep)
	}
	return nil
}

// update is `threads update`.
func (tc *threadsCommand) update() *cobra.Command {
	var graphFile, asNode, valuesJSON string
	update := &cobra.Command{
		Use:   "update THREAD --graph GRAPH --values JSON [--as-node NODE]",
		Short: "Write values to a thread's state as if a node had written them",
		Long: `Update applies values to a thread's state through the graph's reducers, in a new
checkpoint. With --as-node, the values count as that node's output: the thread then
continues along the node's routes, and an interrupt pending on it is answered.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if graphFile == "" {
				return usageError(errors.New("update needs --graph"))
			}
			var values map[string]any
			if err := json.Unmarshal([]byte(valuesJSON), &values); err != nil {
				return usageError(fmt.Errorf("--values must be a JSON object: %w", err))
			}
			g, err := mustLoad(cmd.Context(), graphFile)
			if err != nil {
				return err
			}
			ws, err := tc.flags.openWorkspace()
			if err != nil {
				return err
			}
			defer ws.Close()
			eng := ws.Engine(g, engine.Options{})
			defer eng.Close()
			c, err := eng.UpdateState(cmd.Context(), args[0], asNode, values)
			if err != nil {
				return failed(err)
			}
			if tc.flags.asJSON {
				return tc.printJSON(cmd.OutOrStdout(), c)
			}
			var next []string
			for _, t := range c.Next {
				next = append(next, t.ID)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "updated %s: checkpoint %s, next %s\n", args[0], c.ID, orNone(strings.Join(next, ", ")))
			return nil
		},
	}
	update.Flags().StringVar(&graphFile, "graph", "", "the graph file of the thread (its reducers and routes apply)")
	update.Flags().StringVar(&asNode, "as-node", "", "the node the values are written as")
	update.Flags().StringVar(&valuesJSON, "values", "{}", "the values, a JSON object of state fields")

	return update
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// threadLabel names a stored thread id for people: "root [ns]" for a
// subgraph's checkpoints.
func threadLabel(id string) string {
	root, ns := checkpoint.SplitThreadID(id)
	if ns == "" {
		return root
	}
	return root + " [" + ns + "]"
}

// printSnapshot prints a checkpoint's position and state, each line indented.
func printSnapshot(out io.Writer, snap *checkpoint.Snapshot, indent string) {
	fmt.Fprintf(out, "%sthread      %s\n%sgraph       %s (%.12s)\n%scheckpoint  %s (step %d, %s)\n",
		indent, threadLabel(snap.ThreadID), indent, snap.GraphName, snap.GraphHash, indent, snap.ID, snap.Step, snap.Source)
	var next []string
	for _, t := range snap.Next {
		next = append(next, t.ID)
	}
	fmt.Fprintf(out, "%snext        %s\n", indent, orNone(strings.Join(next, ", ")))
	if b := engine.StoppedAt(&snap.Checkpoint); b != nil {
		fmt.Fprintf(out, "%sstopped     %s %s (breakpoint)\n", indent, b.When, strings.Join(b.Nodes, ", "))
	}
	for _, in := range engine.WaitingInterrupts(&snap.Checkpoint) {
		payload, _ := json.Marshal(in.Payload)
		where := ""
		if in.Namespace != "" {
			where = " in subgraph " + in.Namespace
		}
		fmt.Fprintf(out, "%sinterrupt   %s  node %s field %s%s  %s\n", indent, in.ID, in.Node, in.Field, where, payload)
	}
	fmt.Fprintf(out, "%sstate:\n", indent)
	for _, k := range sortedKeys(snap.Values) {
		fmt.Fprintf(out, "%s  %s: %s\n", indent, k, snap.Values[k])
	}
}

// pendingSubgraphs returns the latest checkpoint of the subgraph of each of
// the snapshot's next tasks that runs one, by namespace, nested ones too.
func pendingSubgraphs(ctx context.Context, cp checkpoint.Checkpointer, snap *checkpoint.Snapshot) map[string]*checkpoint.Snapshot {
	out := map[string]*checkpoint.Snapshot{}
	var walk func(s *checkpoint.Snapshot, prefix string)
	walk = func(s *checkpoint.Snapshot, prefix string) {
		for _, t := range s.Next {
			// Without the graph, whether the node persists its child's
			// state is unknown: a child started afresh is looked for first.
			for _, persist := range []bool{false, true} {
				ns := engine.TaskNamespace(t, s.ID, persist)
				child, err := cp.Latest(ctx, checkpoint.ChildThreadID(s.ThreadID, ns))
				if err != nil {
					continue // not a subgraph task, or one not started yet
				}
				full := prefix + ns
				out[full] = child
				walk(child, full+"|")
				break
			}
		}
	}
	walk(snap, "")
	if len(out) == 0 {
		return nil
	}
	return out
}
