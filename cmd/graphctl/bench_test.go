package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/bench"
	"github.com/graphctl/graphctl/runtime/graphtest"
	"github.com/graphctl/graphctl/runtime/load"
)

// BenchmarkValidate measures what `graphctl validate` does for one file —
// load, schema and config checks, semantic checks, node construction, test
// checks — on generated chains of reply nodes with a template each.
func BenchmarkValidate(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		src := load.GenerateGraph(n, "reply", `{text: "step ${count} of the conversation"}`)
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				g, diags := runtime.LoadSource("bench.cue", src)
				if g == nil || diags.HasErrors() {
					b.Fatalf("generated graph is invalid:\n%v", diags)
				}
				if d := graphtest.Check(g); d.HasErrors() {
					b.Fatal(d)
				}
			}
		})
	}
}

// bench.mjs's output is read as figures and notes; anything else is an
// error naming the script and the line.
func TestParseLangGraphJS(t *testing.T) {
	tests := []struct {
		name      string
		out       string
		figures   int
		notes     []string
		wantError string
	}{
		{
			name: "figures and notes",
			out: `{"note":"sqlite = SqliteSaver, journal_mode=wal"}
{"scenario":"loop","metric":"per super-step, memory","value":41.5,"unit":"µs"}

{"scenario":"chat","metric":"data dir on disk, sqlite","value":1024,"unit":"KiB"}
`,
			figures: 2,
			notes:   []string{"sqlite = SqliteSaver, journal_mode=wal"},
		},
		{name: "not JSON", out: "{\"note\":\"a\"}\nnpm warn something\n", wantError: `bench.mjs: line 2 "npm warn something"`},
		{name: "unknown field", out: `{"scenario":"loop","metric":"m","value":1,"unit":"µs","extra":1}`, wantError: `unknown field "extra"`},
		{name: "figure without metric", out: `{"scenario":"loop","value":1,"unit":"µs"}`, wantError: "line 1"},
		{name: "no figure", out: `{"note":"only a note"}`, wantError: "printed no figure"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseLangGraphJS("bench.mjs", []byte(tt.out))
			if tt.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantError) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Results) != tt.figures || !slices.Equal(got.Notes, tt.notes) {
				t.Fatalf("got %+v, want %d figures and notes %q", got, tt.figures, tt.notes)
			}
		})
	}
}

// A directory without bench.mjs or without its installed packages is refused
// before anything is measured, with what to do.
func TestFindLangGraphJSErrors(t *testing.T) {
	noScript := t.TempDir()
	noModules := t.TempDir()
	if err := os.WriteFile(filepath.Join(noModules, "bench.mjs"), []byte("\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{noScript: "give the directory examples/bench/langgraphjs", noModules: "run npm ci there first"} {
		if _, err := findLangGraphJS(dir); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("findLangGraphJS(%s) = %v, want an error containing %q", dir, err, want)
		}
	}
}

// fakeBenchScript stands in for examples/bench/langgraphjs/bench.mjs: it
// prints a note and one figure per size it was given, so that a test sees
// which sizes reached it; it needs Node.js but no npm package.
const fakeBenchScript = `const args = process.argv.slice(2);
console.log(JSON.stringify({ note: "fake LangGraph.js, relative dir " + process.cwd().endsWith("langgraphjs") }));
for (let i = 0; i < args.length; i += 2) {
  console.log(JSON.stringify({ scenario: "args", metric: args[i].slice(2), value: Number(args[i + 1]), unit: "" }));
}
if (process.env.FAKE_BENCH_FAIL) { console.error("SqliteSaver: no native module"); process.exit(3); }
`

// bench.mjs is run in its directory (also when given as a relative path)
// with the sizes of our scenarios, and its figures and notes come back.
func TestRunLangGraphJS(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("no Node.js")
	}
	root := t.TempDir()
	dir := filepath.Join(root, "langgraphjs")
	if err := os.MkdirAll(filepath.Join(dir, "node_modules"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bench.mjs"), []byte(fakeBenchScript), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	js, err := findLangGraphJS("langgraphjs")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		opts  bench.Options
		quick bool
		want  map[string]float64
	}{
		{"defaults", bench.Options{}, false, map[string]float64{"loop-steps": 1000, "chat-turns": 1000, "fanout": 100, "runs": 5}},
		{"quick", bench.Options{}, true, map[string]float64{"loop-steps": 200, "chat-turns": 200, "fanout": 20, "runs": 2}},
		{"sizes given", bench.Options{LoopSteps: 50, ChatTurns: 70, FanOut: 7, LoopRuns: 3}, false, map[string]float64{"loop-steps": 50, "chat-turns": 70, "fanout": 7, "runs": 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := js.run(context.Background(), tt.opts, tt.quick)
			if err != nil {
				t.Fatal(err)
			}
			args := map[string]float64{}
			for _, r := range got.Results {
				args[r.Metric] = r.Value
			}
			if !maps.Equal(args, tt.want) {
				t.Errorf("bench.mjs got %v, want %v", args, tt.want)
			}
			if !slices.Equal(got.Notes, []string{"fake LangGraph.js, relative dir true"}) {
				t.Errorf("notes %q", got.Notes)
			}
		})
	}
	t.Run("script fails", func(t *testing.T) {
		t.Setenv("FAKE_BENCH_FAIL", "1")
		_, err := js.run(context.Background(), bench.Options{}, true)
		if err == nil || !strings.Contains(err.Error(), "SqliteSaver: no native module") || !strings.Contains(err.Error(), "exit status 3") {
			t.Fatalf("error %v, want the script's exit status and its stderr", err)
		}
	})
}

// The comparison prints the in-memory figures, then the durable ones (ours
// on Badger with and without fsync against SqliteSaver), each with its
// ratio, then what each durable backend guarantees.
func TestWriteComparison(t *testing.T) {
	ours := []bench.Result{
		{Scenario: "loop", Metric: "per super-step, memory", Value: 2, Unit: "µs"},
		{Scenario: "loop", Metric: "per super-step, badger", Value: 10, Unit: "µs"},
		{Scenario: "loop", Metric: "per super-step, badger-fsync", Value: 500, Unit: "µs"},
		{Scenario: "chat", Metric: "per turn, turns 2-11, badger", Value: 40, Unit: "µs"},
		{Scenario: "chat", Metric: "data dir on disk", Value: 100, Unit: "KiB"},
		{Scenario: "fan-out", Metric: "per run of 100 tasks + join, memory", Value: 1.5, Unit: "ms"},
	}
	js := langGraphJSResults{
		Results: []bench.Result{
			{Scenario: "loop", Metric: "per super-step, memory", Value: 70, Unit: "µs"},
			{Scenario: "loop", Metric: "per super-step, sqlite", Value: 1000, Unit: "µs"},
			{Scenario: "chat", Metric: "per turn, turns 2-11, memory", Value: 900, Unit: "µs"},
			{Scenario: "chat", Metric: "per turn, turns 2-11, sqlite", Value: 1200, Unit: "µs"},
			{Scenario: "chat", Metric: "data dir on disk, sqlite", Value: 32000, Unit: "KiB"},
			{Scenario: "fan-out", Metric: "per run of 100 tasks + join, memory", Value: 30, Unit: "ms"},
		},
		Notes: []string{"sqlite = SqliteSaver, synchronous=NORMAL"},
	}
	var b strings.Builder
	writeComparison(&b, ours, js)
	out := b.String()
	lines := []string{
		"in memory: MemorySaver",
		"loop: per super-step, memory vs memory 70.0 µs 2.00 µs 35.0×",
		"fan-out: per run of 100 tasks + join, memory vs memory 30.0 ms 1.50 ms 20.0×",
		"durable: SqliteSaver",
		"loop: per super-step, sqlite vs badger 1000 µs 10.0 µs 100.0×",
		"loop: per super-step, sqlite vs badger-fsync 1000 µs 500 µs 2.0×",
		"chat: per turn, turns 2-11, sqlite vs badger 1200 µs 40.0 µs 30.0×",
		"chat: data dir on disk, sqlite vs badger 32000 KiB 100 KiB 320.0×",
		"Durability",
		"sqlite = SqliteSaver, synchronous=NORMAL",
		"badger = graphctl on Badger, runs with LangGraph's default durability (async",
		"badger-sync = as badger, but runs with durability sync",
		"badger-fsync = graphctl on Badger, runs with durability sync and data dir durability fsync",
	}
	flat := strings.Join(strings.Fields(out), " ")
	at := 0
	for _, line := range lines {
		i := strings.Index(flat[at:], line)
		if i < 0 {
			t.Fatalf("no %q after offset %d in\n%s", line, at, out)
		}
		at += i + len(line)
	}
	width := 0
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasSuffix(line, "×") || !strings.Contains(line, " vs ") {
			continue
		}
		if n := utf8.RuneCountInString(line); width == 0 {
			width = n
		} else if n != width {
			t.Errorf("comparison lines not aligned: %q is %d columns wide, others %d", line, n, width)
		}
	}
	if strings.Contains(out, "turns 2-11, memory vs") {
		t.Errorf("a chat figure in memory was compared though graphctl measured none:\n%s", out)
	}

	b.Reset()
	if err := writeComparisonJSON(&b, ours, js); err != nil {
		t.Fatal(err)
	}
	var durable, inMemory int
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var v struct {
			Compare string  `json:"compare"`
			Durable bool    `json:"durable"`
			Ratio   float64 `json:"ratio"`
		}
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		switch {
		case v.Compare == "":
		case v.Durable:
			durable++
		default:
			inMemory++
		}
	}
	if durable != 4 || inMemory != 2 {
		t.Errorf("%d durable and %d in-memory comparisons, want 4 and 2:\n%s", durable, inMemory, b.String())
	}
}

// Every figure bench.mjs measures on a backend that graphctl measures too
// pairs with one of ours, so that a metric renamed on one side shows here.
// It runs the real LangGraph.js at a small size, and is skipped where
// examples/bench/langgraphjs has no npm packages installed.
func TestLangGraphJSFiguresPair(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "bench", "langgraphjs")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@langchain", "langgraph-checkpoint-sqlite")); err != nil {
		t.Skip("npm packages of examples/bench/langgraphjs not installed (npm ci there)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("no Node.js")
	}
	js, err := findLangGraphJS(dir)
	if err != nil {
		t.Fatal(err)
	}
	opts := bench.Options{LoopSteps: 20, LoopRuns: 1, ChatTurns: 40, FanOut: 5, FanOutRuns: 2, ValidateNodes: 10, Dir: t.TempDir()}
	var ours []bench.Result
	if err := bench.Run(t.Context(), opts, func(r bench.Result) { ours = append(ours, r) }); err != nil {
		t.Fatal(err)
	}
	other, err := js.run(t.Context(), opts, false)
	if err != nil {
		t.Fatal(err)
	}
	paired := map[string]bool{}
	for _, c := range bench.Compare(ours, other.Results) {
		paired[c.Other.Scenario+": "+c.Other.Metric] = true
	}
	for _, r := range other.Results {
		name := r.Scenario + ": " + r.Metric
		// graphctl's chat runs on Badger only: LangGraph.js's in-memory
		// chat has no counterpart.
		want := strings.HasSuffix(r.Metric, ", sqlite") || (strings.HasSuffix(r.Metric, ", memory") && r.Scenario != "chat")
		if want && !paired[name] {
			t.Errorf("LangGraph.js's %q pairs with no figure of graphctl's:\n%s", name, bench.Table(ours))
		}
	}
	if len(other.Notes) == 0 || !strings.Contains(other.Notes[0], "journal_mode=wal") {
		t.Errorf("notes %q do not state SqliteSaver's journal mode", other.Notes)
	}
}
