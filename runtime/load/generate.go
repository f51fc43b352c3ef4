package load

import (
	"fmt"
	"strings"

	"github.com/graphctl/graphctl/runtime/graph"
)

// GenerateGraph returns a valid CUE graph file of n chained nodes (n_0 → n_1 →
// … → END), each of type nodeType with config, a CUE struct literal such as
// `{text: "hi"}` ("" for none). It is meant for benchmarks of every stage that
// takes a graph.
func GenerateGraph(n int, nodeType, config string) []byte {
	if n < 1 {
		n = 1
	}
	var b strings.Builder
	fmt.Fprintf(&b, "dsl_version: %q\nname: \"generated_%d\"\n", graph.DSLVersion, n)
	b.WriteString("state: {\n\tmessages: {type: \"messages\"}\n\tcount: {type: \"int\", reducer: \"add\"}\n}\n")
	b.WriteString("start: \"n_0\"\nnodes: {\n")
	for i := 0; i < n; i++ {
		next := graph.End
		if i+1 < n {
			next = fmt.Sprintf("n_%d", i+1)
		}
		fmt.Fprintf(&b, "\tn_%d: {\n\t\ttype: %q\n", i, nodeType)
		if config != "" {
			fmt.Fprintf(&b, "\t\tconfig: %s\n", config)
		}
		fmt.Fprintf(&b, "\t\tnext: %q\n\t}\n", next)
	}
	b.WriteString("}\n")
	return []byte(b.String())
}
