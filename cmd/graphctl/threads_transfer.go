package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/graphctl/graphctl/runtime/transfer"
)

// newThreadsTransferCommands returns `threads export` and `threads import`,
// which move threads and long-term memory between data dirs and PostgreSQL.
func newThreadsTransferCommands(flags *runFlags) []*cobra.Command {
	var outFile string
	export := &cobra.Command{
		Use:   "export [--out FILE]",
		Short: "Write every thread (all checkpoints) and the long-term memory as JSON Lines",
		Long: `export writes every thread's checkpoints, oldest first, and every live long-term
memory item as JSON Lines, to stdout or --out. Import them into another data dir or
a PostgreSQL database with threads import:

  graphctl threads export --data-dir .graphctl --out backup.jsonl
  graphctl threads import backup.jsonl --postgres "$GRAPHCTL_POSTGRES_URL"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ws, err := flags.openWorkspace()
			if err != nil {
				return err
			}
			defer ws.Close()
			var w io.Writer = cmd.OutOrStdout()
			if outFile != "" && outFile != "-" {
				f, err := os.Create(outFile)
				if err != nil {
					return usageError(err)
				}
				defer f.Close()
				w = f
			}
			n, err := transfer.Export(cmd.Context(), ws.Checkpointer(), ws.Store(), w)
			if err != nil {
				return failed(err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "exported %d threads (%d checkpoints) and %d memory items\n", n.Threads, n.Checkpoints, n.Items)
			return nil
		},
	}
	export.Flags().StringVarP(&outFile, "out", "o", "", "file to write (default stdout)")
	imp := &cobra.Command{
		Use:   "import FILE",
		Short: "Read threads and long-term memory written by threads export (FILE - for stdin)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var r io.Reader = cmd.InOrStdin()
			if args[0] != "-" {
				f, err := os.Open(args[0])
				if err != nil {
					return usageError(err)
				}
				defer f.Close()
				r = f
			}
			ws, err := flags.openWorkspace()
			if err != nil {
				return err
			}
			defer ws.Close()
			n, err := transfer.Import(cmd.Context(), ws.Checkpointer(), ws.Store(), r, time.Now)
			if err != nil {
				return failed(fmt.Errorf("%s: %w", args[0], err))
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "imported %d threads (%d checkpoints) and %d memory items\n", n.Threads, n.Checkpoints, n.Items)
			return nil
		},
	}
	return []*cobra.Command{export, imp}
}
