package load_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime/load"
	"github.com/graphctl/graphctl/runtime/node"
)

// plainValues are the config values drawn by TestPlainConfigsAsEvaluated:
// every kind, bounds' edges, defaults' values and nested shapes.
var plainValues = []string{
	`"x"`, `""`, `"GET"`, `"json"`, `"hybrid"`, `"system"`, `"messages"`, `"30s"`,
	`0`, `1`, `-1`, `3`, `5`, `50`, `51`, `100`, `101`, `1048576`, `0.5`, `1.0`, `2.5e1`,
	`true`, `false`, `null`,
	`[]`, `["a"]`, `["a", "b"]`, `[1]`, `["pubmed"]`, `[{title: "t", text: "x"}]`,
	`{}`, `{env: "X"}`, `{a: "b"}`, `{a: 1}`, `{a: ["x"]}`, `{a: {env: "X"}}`, `{env: "X", b: 1}`,
}

// TestPlainConfigsAsEvaluated loads random configs of every node type
// (fields of its schema and one it lacks, with values of every kind) with
// and without the evaluator: graphs and diagnostics must be equal.
func TestPlainConfigsAsEvaluated(t *testing.T) {
	const hdr = "dsl_version: \"graphctl/v1\"\nname: \"g\"\nstart: \"a\"\n"
	rng := rand.New(rand.NewPCG(1, 2))
	perType := 25
	if testing.Short() {
		perType = 3
	}
	plain := 0
	total := 0
	for _, name := range node.Default().Names() {
		typ, _ := node.Default().Lookup(name)
		fields := load.ConfigFields(typ)
		for i := 0; i < perType; i++ {
			var cfg []string
			for _, f := range fields {
				if rng.IntN(3) > 0 {
					cfg = append(cfg, fmt.Sprintf("%q: %s", f, plainValues[rng.IntN(len(plainValues))]))
				}
			}
			if rng.IntN(6) == 0 {
				cfg = append(cfg, `bogus: 1`)
			}
			src := hdr + fmt.Sprintf("nodes: a: {type: %q, config: {%s}, next: \"END\"}\n", name, strings.Join(cfg, ", "))
			if sameAsEvaluated(t, []load.SourceFile{{Name: "g.cue", Data: []byte(src)}}) {
				plain++
			}
			total++
		}
	}
	t.Logf("%d of %d random configs loaded without the evaluator", plain, total)
}
