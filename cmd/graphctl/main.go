// Command graphctl validates, runs, tests and inspects declarative agent graphs.
//
// Exit codes: 0 success; 1 an invalid graph, a failed run or a failed test;
// 2 a usage, I/O or configuration error.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	_ "github.com/graphctl/graphctl/builtin-nodes/all"
)

// exitError carries the process exit code of a failed command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// failed is a command failure that exits with status 1.
func failed(err error) error { return &exitError{code: 1, err: err} }

// usageError is a failure that exits with status 2.
func usageError(err error) error { return &exitError{code: 2, err: err} }

// silent is a failure whose details the command already printed.
type silent struct{ code int }

func (s silent) Error() string { return "" }

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "graphctl",
		Short: "A declarative agent-graph runtime",
		Long: `graphctl validates, runs, tests and inspects agent graphs written in CUE or YAML:
a state schema with reducers, nodes of registered types, and expression-based routing.
Checkpoints and long-term memory live in an embedded Badger database in the data dir.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	addEvalFlags(root)
	root.AddCommand(
		newValidateCommand(),
		newSchemaCommand(),
		newNodesCommand(),
		newToolsCommand(),
		newRunCommand(),
		newResumeCommand(),
		newThreadsCommand(),
		newDocsCommand(),
		newGraphCommand(),
		newTestCommand(),
		newServeCommand(),
		newStudioCommand(),
		newBenchCommand(),
	)
	return root
}

func main() {
	os.Exit(execute(os.Args[1:]))
}

// execute runs the command line and returns the exit code.
func execute(args []string) int {
	root := newRootCommand()
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	var s silent
	if errors.As(err, &s) {
		return s.code
	}
	fmt.Fprintln(os.Stderr, "graphctl:", err)
	return exitCode(err)
}

// exitCode maps a command's error to the process exit code. Errors from cobra
// itself (an unknown flag, a missing argument) are usage errors.
func exitCode(err error) int {
	var s silent
	if errors.As(err, &s) {
		return s.code
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 2
}
