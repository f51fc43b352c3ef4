package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/diagram"
	"github.com/graphctl/graphctl/runtime/load"
)

// requireToolsEnv, when set (CI sets it), turns a missing Mermaid parser or
// Graphviz into a failure instead of a skip.
const requireToolsEnv = "GRAPHCTL_REQUIRE_DIAGRAM_TOOLS"

// diagramCase is one graph drawn by `graphctl graph` in every format.
type diagramCase struct {
	file    string
	want    diagram.Diagram
	mermaid string // path of the Mermaid output
	dot     string // path of the DOT output
}

// drawAll draws every shipped graph and example, and a graph of node names and
// route conditions full of characters Mermaid and DOT give a meaning to.
func drawAll(t *testing.T) []diagramCase {
	t.Helper()
	root := repoRoot(t)
	files, err := load.Expand([]string{filepath.Join(root, "graphs"), filepath.Join(root, "examples"), filepath.Join("testdata", "diagram_labels.cue")})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var cases []diagramCase
	for i, file := range files {
		c := diagramCase{file: file}
		out, errOut, code := run(t, "graph", file, "--format", "json")
		if code != 0 {
			t.Fatalf("graph %s --format json: exit %d %s", file, code, errOut)
		}
		if err := json.Unmarshal([]byte(out), &c.want); err != nil {
			t.Fatalf("graph %s --format json: %v", file, err)
		}
		for _, f := range []struct {
			format string
			path   *string
		}{{"mermaid", &c.mermaid}, {"dot", &c.dot}} {
			out, errOut, code := run(t, "graph", file, "--format", f.format)
			if code != 0 {
				t.Fatalf("graph %s --format %s: exit %d %s", file, f.format, code, errOut)
			}
			*f.path = filepath.Join(dir, fmt.Sprintf("%d.%s", i, f.format))
			if err := os.WriteFile(*f.path, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cases = append(cases, c)
	}
	if len(cases) < 7 {
		t.Fatalf("only %d graphs drawn: %v", len(cases), files)
	}
	return cases
}

// edgeKey renders an edge as one comparable line.
func edgeKey(source, target, label string, conditional bool) string {
	return fmt.Sprintf("%s -> %s [%s] conditional=%v", source, target, label, conditional)
}

func wantEdges(d diagram.Diagram) []string {
	var out []string
	for _, e := range d.Edges {
		out = append(out, edgeKey(e.Source, e.Target, strings.Join(diagram.LabelLines(e.Label), "\n"), e.Conditional))
	}
	slices.Sort(out)
	return out
}

// withSubgraphs is what the Mermaid diagram of a case draws: its graph's
// nodes and edges, and inside each subgraph node (which Mermaid reads as a
// vertex of its own, named by its id) those of the graph it runs.
func withSubgraphs(t *testing.T, c diagramCase) diagram.Diagram {
	t.Helper()
	g, diags, err := runtime.Load(c.file)
	if err != nil || g == nil {
		t.Fatalf("load %s: %v %v", c.file, err, diags)
	}
	var out diagram.Diagram
	var add func(d diagram.Diagram)
	add = func(d diagram.Diagram) {
		out.Edges = append(out.Edges, d.Edges...)
		for _, n := range d.Nodes {
			if n.Subgraph == nil {
				out.Nodes = append(out.Nodes, n)
				continue
			}
			out.Nodes = append(out.Nodes, diagram.Node{ID: n.ID})
			add(*n.Subgraph)
		}
	}
	add(diagram.Build(g))
	return out
}

func missingTool(t *testing.T, why string) {
	t.Helper()
	if os.Getenv(requireToolsEnv) != "" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// TestMermaidParses reads every diagram back with the real Mermaid parser
// (the mermaid npm package, run by .ci/mermaid/check.mjs): each must parse, and
// Mermaid must see exactly the graph's nodes and edges, each label shown as the
// route condition is written.
func TestMermaidParses(t *testing.T) {
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		missingTool(t, "node is not on PATH")
	}
	checker, _ := filepath.Abs(filepath.Join(repoRoot(t), ".ci", "mermaid"))
	if _, err := os.Stat(filepath.Join(checker, "node_modules", "mermaid")); err != nil {
		missingTool(t, "the Mermaid parser is not installed: npm ci --prefix .ci/mermaid")
	}
	cases := drawAll(t)
	args := []string{filepath.Join(checker, "check.mjs")}
	for _, c := range cases {
		args = append(args, c.mermaid)
	}
	cmd := exec.Command(nodeBin, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node check.mjs: %v\n%s", err, out)
	}
	var parsed []struct {
		File     string
		OK       bool
		Error    string
		Vertices []struct{ ID, Text string }
		Edges    []struct{ Start, End, Text, Stroke string }
	}
	if err := json.Unmarshal(out, &parsed); err != nil || len(parsed) != len(cases) {
		t.Fatalf("checker output (%v): %s", err, out)
	}
	for i, c := range cases {
		p := parsed[i]
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			src, _ := os.ReadFile(c.mermaid)
			if !p.OK {
				t.Fatalf("Mermaid cannot parse the diagram of %s: %s\n%s", c.file, p.Error, src)
			}
			// Mermaid ids may differ from node names; the first line of a
			// vertex's label is the node's name.
			names := map[string]string{}
			var gotNodes, wantNodes []string
			for _, v := range p.Vertices {
				name, kind, _ := strings.Cut(v.Text, "\n")
				switch name {
				case "START":
					name = diagram.Start
				case "END":
					name = diagram.End
				}
				names[v.ID] = name
				gotNodes = append(gotNodes, name+" "+kind)
			}
			drawn := withSubgraphs(t, c)
			for _, n := range drawn.Nodes {
				kind := ""
				if t, ok := n.Data["node_type"]; ok {
					kind = fmt.Sprint(t)
				}
				wantNodes = append(wantNodes, n.ID+" "+kind)
			}
			slices.Sort(gotNodes)
			slices.Sort(wantNodes)
			if !slices.Equal(gotNodes, wantNodes) {
				t.Errorf("Mermaid read the nodes\n%s\nwant\n%s\nsource:\n%s", strings.Join(gotNodes, "\n"), strings.Join(wantNodes, "\n"), src)
			}
			var got []string
			for _, e := range p.Edges {
				got = append(got, edgeKey(names[e.Start], names[e.End], e.Text, e.Stroke == "dotted"))
			}
			slices.Sort(got)
			if want := wantEdges(drawn); !slices.Equal(got, want) {
				t.Errorf("Mermaid read the edges\n%s\nwant\n%s\nsource:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), src)
			}
		})
	}
}

// TestDOTParses reads every diagram back with Graphviz's dot: each must
// parse, with the graph's edges and each label as the condition is written.
func TestDOTParses(t *testing.T) {
	dotBin, err := exec.LookPath("dot")
	if err != nil {
		missingTool(t, "Graphviz's dot is not on PATH (apt-get install graphviz)")
	}
	for _, c := range drawAll(t) {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			src, _ := os.ReadFile(c.dot)
			out, err := exec.Command(dotBin, "-Tjson", c.dot).CombinedOutput()
			if err != nil {
				t.Fatalf("dot cannot read the diagram of %s: %v\n%s\nsource:\n%s", c.file, err, out, src)
			}
			var g struct {
				Objects []struct {
					GVID  int `json:"_gvid"`
					Name  string
					Label string
				}
				Edges []struct {
					Tail, Head   int
					Label, Style string
				}
			}
			if err := json.Unmarshal(out, &g); err != nil {
				t.Fatalf("dot -Tjson: %v", err)
			}
			names := map[int]string{}
			for _, o := range g.Objects {
				names[o.GVID] = o.Name
			}
			if len(g.Objects) != len(c.want.Nodes) {
				t.Errorf("dot read %d nodes, want %d", len(g.Objects), len(c.want.Nodes))
			}
			// dot keeps a label's backslash escapes (\\ and \n) for rendering.
			unescape := strings.NewReplacer(`\\`, `\`, `\n`, "\n").Replace
			var got []string
			for _, e := range g.Edges {
				got = append(got, edgeKey(names[e.Tail], names[e.Head], unescape(e.Label), e.Style == "dashed"))
			}
			slices.Sort(got)
			if want := wantEdges(c.want); !slices.Equal(got, want) {
				t.Errorf("dot read the edges\n%s\nwant\n%s\nsource:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), src)
			}
		})
	}
}
