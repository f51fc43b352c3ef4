// Package graphschema owns the CUE schema of a graph file (graph.cue, whose
// definition #Graph runtime/load unifies user files with, completed by
// Source with the defaults keys node packages declare) and the words that
// say in a graph file's own terms what a schema value accepts, for
// diagnostics and documents. The published documents derived from it (the
// full CUE schema, the JSON Schema) are built by the schemas package.
package graphschema

import (
	_ "embed"
	"strings"

	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
)

// GraphCUE is the CUE source of the core graph-file schema (definition
// #Graph): its #Defaults holds only the keys the runtime reads. Source adds
// the keys node packages declare.
//
//go:embed graph.cue
var GraphCUE string

// declaredKeys is the line of GraphCUE's #Defaults after which Source
// writes the declared defaults keys.
const declaredKeys = "\t// (the keys node packages declare follow)\n"

// Source returns the CUE source of the graph-file schema: GraphCUE whose
// #Defaults also holds each defaults key declared with
// graph.RegisterDefaultsKey, optional, with its schema and its doc as comment.
func Source() string {
	keys := graph.DefaultsKeys()
	if len(keys) == 0 {
		return GraphCUE
	}
	var b strings.Builder
	for _, k := range keys {
		for _, line := range strings.Split(strings.TrimSpace(k.Doc), "\n") {
			b.WriteString("\t// " + strings.TrimSpace(line) + "\n")
		}
		b.WriteString("\t" + k.Name + "?: " + strings.TrimSpace(k.Schema) + "\n")
	}
	return strings.Replace(GraphCUE, declaredKeys, b.String(), 1)
}

// GraphFilename is the file name the embedded schema is compiled under. Errors
// positioned in it are never shown to users.
const GraphFilename = "graphctl:graph.cue"

// ConfigSchema returns the CUE expression a node type's config must satisfy:
// its declared Config, or an empty struct when the type takes no config.
func ConfigSchema(t node.Type) string {
	if strings.TrimSpace(t.Config) == "" {
		return "{}"
	}
	return t.Config
}
