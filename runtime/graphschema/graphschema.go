// Package graphschema owns the CUE schema of a graph file (graph.cue, whose
// definition #Graph runtime/load unifies user files with) and the words that
// say in a graph file's own terms what a schema value accepts, for
// diagnostics and documents. The published documents derived from it (the
// full CUE schema, the JSON Schema) are built by the schemas package.
package graphschema

import (
	_ "embed"
	"strings"

	"github.com/graphctl/graphctl/runtime/node"
)

// GraphCUE is the CUE source of the graph-file schema (definition #Graph).
//
//go:embed graph.cue
var GraphCUE string

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
