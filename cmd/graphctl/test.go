package main

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/graphctl/graphctl/runtime/graphtest"
	"github.com/graphctl/graphctl/runtime/storage/postgres"
)

func newTestCommand() *cobra.Command {
	var pattern, pgURL string
	var verbose bool
	cmd := &cobra.Command{
		Use:   "test [PATH...]",
		Short: "Run the declarative tests of graphs",
		Long: `Test runs the test cases declared in each graph's tests block or in a
test file beside it (<graph>_test.cue, _test.yaml or _test.yml, in either
format). Every case runs isolated, in a temporary data dir, with its mocks and
scripted model replies; with --postgres (or $GRAPHCTL_POSTGRES_URL) each case
runs on PostgreSQL in a schema of its own, dropped afterwards. Output and exit code follow go test: 0 when every case
passed, 1 otherwise. PATH defaults to graphs/.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				if _, err := os.Stat("graphs"); err != nil {
					return usageError(errors.New("no graphs/ directory here: name the graph files or directories to test (graphctl test PATH...)"))
				}
				args = []string{"graphs"}
			}
			var filter *regexp.Regexp
			if pattern != "" {
				var err error
				if filter, err = regexp.Compile(pattern); err != nil {
					return usageError(fmt.Errorf("-run: %w", err))
				}
			}
			files, err := graphFiles(args)
			if err != nil {
				return usageError(err)
			}
			if len(files) == 0 {
				return usageError(fmt.Errorf("no graph files (.cue, .yaml, .yml) in %s", strings.Join(args, ", ")))
			}
			named := namedFiles(args)
			out := cmd.OutOrStdout()
			allPassed := true
			for _, file := range files {
				g, diags, err := loadListed(cmd.Context(), file, named)
				if err != nil {
					return usageError(err)
				}
				if g == nil {
					fmt.Fprintf(out, "%v\nFAIL\t%s [invalid graph]\n", diags, file)
					allPassed = false
					continue
				}
				for _, d := range diags { // warnings, as validate and run print them
					fmt.Fprintln(cmd.ErrOrStderr(), d.String())
				}
				if len(g.Spec.Tests) == 0 {
					fmt.Fprintf(out, "?   \t%s\t[no test cases]\n", file)
					continue
				}
				results := graphtest.Run(cmd.Context(), g, graphtest.Options{Filter: filter, Verbose: verbose, Postgres: pgURL})
				if !graphtest.Report(out, file, results, verbose) {
					allPassed = false
				}
			}
			if !allPassed {
				return silent{code: 1}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&pattern, "run", "", "run only the cases whose name matches this regular expression")
	cmd.Flags().StringVar(&pgURL, "postgres", os.Getenv(postgres.URLEnv), "run each case on this PostgreSQL database, in a schema of its own (default $"+postgres.URLEnv+")")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "print every case, not only failures")
	return cmd
}
