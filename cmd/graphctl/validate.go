package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/graphtest"
	"github.com/graphctl/graphctl/runtime/load"
)

func newValidateCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "validate PATH...",
		Short: "Check graph files and report every problem as file:line:col",
		Long: `Validate checks graph files (.cue, .yaml, .yml; directories are searched recursively)
against the graph schema, each node type's config schema and the semantic rules
(routing targets, reachability, expression types, templates, reducers, tests).
It reports every problem of every file, exits 0 when all are valid and 1 otherwise.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			files, err := graphFiles(args)
			if err != nil {
				return usageError(err)
			}
			if len(files) == 0 {
				return usageError(fmt.Errorf("no graph files (.cue, .yaml, .yml) in %s", strings.Join(args, ", ")))
			}
			named := namedFiles(args)
			names := newDirectoryNames(args)
			all := diag.List{}
			out := cmd.OutOrStdout()
			for _, file := range files {
				g, diags, err := loadListed(cmd.Context(), file, named)
				if err != nil {
					return usageError(err)
				}
				if g != nil {
					diags = append(diags, names.check(file, g.Spec)...)
				}
				all = append(all, diags...)
				if !asJSON {
					for _, d := range diags {
						fmt.Fprintln(out, d.String())
					}
					if !diags.HasErrors() {
						fmt.Fprintf(cmd.ErrOrStderr(), "ok  %s\n", file)
					}
				}
			}
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(all); err != nil {
					return usageError(err)
				}
			}
			if all.HasErrors() {
				return silent{code: 1}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the diagnostics as a JSON array")
	return cmd
}

// graphFiles expands paths to the graph files they hold, as load.Expand
// does; a test file given by name stands for its graph, which is loaded with it.
func graphFiles(paths []string) ([]string, error) {
	files, err := load.Expand(paths)
	if err != nil {
		return nil, err
	}
	out := files[:0]
	seen := map[string]bool{}
	for _, f := range files {
		if load.IsTestFile(f) {
			g, ok := load.GraphOf(f)
			if !ok {
				stem := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(f), filepath.Ext(f)), "_test")
				return nil, fmt.Errorf("%s is a test file, and its graph (%s.cue, .yaml or .yml) is not beside it", f, stem)
			}
			f = g
		}
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out, nil
}

// namedFiles is the set of the paths of args that are not directories,
// and of the graphs of the test files among them.
func namedFiles(args []string) map[string]bool {
	named := map[string]bool{}
	for _, p := range args {
		if info, err := os.Stat(p); err == nil && info.IsDir() {
			continue
		}
		named[p] = true
		if g, ok := load.GraphOf(p); ok {
			named[g] = true
		}
	}
	return named
}

// directoryNames finds the graphs of one directory argument that have the
// name of another graph of it, which serve refuses: it serves the graphs of
// a directory by name.
type directoryNames struct {
	dirs []string
	// seen maps a directory and a graph name to the file that has it.
	seen map[[2]string]string
}

// newDirectoryNames watches the graphs of the directories among args.
func newDirectoryNames(args []string) *directoryNames {
	n := &directoryNames{seen: map[[2]string]string{}}
	for _, p := range args {
		if info, err := os.Stat(p); err == nil && info.IsDir() {
			n.dirs = append(n.dirs, p)
		}
	}
	return n
}

// check returns the duplicate-graph diagnostic of graph g of file when a
// graph of the same directory argument has its name already.
func (n *directoryNames) check(file string, g *graph.Graph) diag.List {
	for _, dir := range n.dirs {
		rel, err := filepath.Rel(dir, file)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		key := [2]string{dir, g.Name}
		if prev, ok := n.seen[key]; ok {
			return load.DuplicateGraph(g, prev)
		}
		n.seen[key] = file
		return nil
	}
	return nil
}

// loadListed is loadChecked for a file of graphFiles: a file found in a
// directory that cannot be read (a dangling or looping link, a named pipe,
// no permission) is reported by its diagnostic, as serve reports it, and the
// directory's other files are still checked; a file named on the command
// line that cannot be read stays an error of the command.
func loadListed(ctx context.Context, file string, named map[string]bool) (*compile.Graph, diag.List, error) {
	g, diags, err := loadChecked(ctx, file)
	var re *load.ReadError
	if err != nil && !named[file] && errors.As(err, &re) {
		return nil, load.Unreadable(re.Path, err), nil
	}
	return g, diags, err
}

// loadChecked loads and compiles a graph file and checks its declarative tests.
func loadChecked(ctx context.Context, file string) (*compile.Graph, diag.List, error) {
	g, diags, err := loadGraph(ctx, file)
	if err != nil {
		return nil, nil, err
	}
	if g != nil {
		diags = append(diags, graphtest.Check(g)...)
		diags.Sort()
		if diags.HasErrors() {
			return nil, diags, nil
		}
	}
	return g, diags, nil
}

// mustLoad loads a graph for running, turning diagnostics into an error.
// mustLoadWarn is mustLoad for the commands that run a graph: it also prints
// the file's warnings (an unset environment variable) to the command's
// stderr, since what they warn of happens in the run.
func mustLoadWarn(cmd *cobra.Command, file string) (*compile.Graph, error) {
	g, diags, err := loadGraph(cmd.Context(), file)
	if err != nil {
		return nil, usageError(err)
	}
	if diags.HasErrors() {
		return nil, failed(fmt.Errorf("%s is not a valid graph:\n%v", file, diags))
	}
	for _, d := range diags {
		fmt.Fprintln(cmd.ErrOrStderr(), d.String())
	}
	return g, nil
}

func mustLoad(ctx context.Context, file string) (*compile.Graph, error) {
	g, diags, err := loadGraph(ctx, file)
	if err != nil {
		return nil, usageError(err)
	}
	if diags.HasErrors() {
		return nil, failed(fmt.Errorf("%s is not a valid graph:\n%v", file, diags))
	}
	return g, nil
}
