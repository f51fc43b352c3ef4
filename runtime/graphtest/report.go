package graphtest

import (
	"fmt"
	"io"
	"time"
)

// Report prints results the way `go test` does: a "--- FAIL: name (0.01s)"
// line per failed case with its failures indented beneath, "=== RUN" and
// "--- PASS" lines and the per-turn log too when verbose, then a summary line
// "ok  <file> 0.05s (N cases)" or "FAIL <file> 0.05s (F of N cases failed)".
// It reports whether every case passed.
func Report(w io.Writer, file string, results []CaseResult, verbose bool) bool {
	var total time.Duration
	failed := 0
	for _, r := range results {
		total += r.Duration
		if verbose {
			fmt.Fprintf(w, "=== RUN   %s\n", r.Name)
			for _, line := range r.Log {
				fmt.Fprintf(w, "    %s\n", line)
			}
		}
		if r.Passed {
			if verbose {
				fmt.Fprintf(w, "--- PASS: %s (%.2fs)\n", r.Name, r.Duration.Seconds())
			}
			continue
		}
		failed++
		fmt.Fprintf(w, "--- FAIL: %s (%.2fs)\n", r.Name, r.Duration.Seconds())
		if r.Pos.IsValid() {
			fmt.Fprintf(w, "    %s: declared here\n", r.Pos)
		}
		for _, f := range r.Failures {
			fmt.Fprintf(w, "    %s\n", f)
		}
	}
	cases := fmt.Sprintf("%d cases", len(results))
	if len(results) == 1 {
		cases = "1 case"
	}
	if failed > 0 {
		fmt.Fprintf(w, "FAIL\t%s\t%.2fs (%d of %s failed)\n", file, total.Seconds(), failed, cases)
		return false
	}
	if len(results) == 0 {
		fmt.Fprintf(w, "ok  \t%s\t%.2fs [no test cases to run]\n", file, total.Seconds())
		return true
	}
	fmt.Fprintf(w, "ok  \t%s\t%.2fs (%s)\n", file, total.Seconds(), cases)
	return true
}
