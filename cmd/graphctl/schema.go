package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/graphctl/graphctl/builtin-nodes/tool"
	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/runtime/graphschema"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/schemas"
)

func newSchemaCommand() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "schema",
		Short: "Print the graph-file schema with every registered node type's config",
		Long: `Schema prints the schema of a graph file, including the config schema of every
registered node type: as CUE (for cue vet and editors with CUE support) or as
JSON Schema (for YAML editors, e.g. yaml-language-server).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch format {
			case "cue":
				s, err := schemas.Full(node.Types())
				if err != nil {
					return failed(err)
				}
				fmt.Fprint(cmd.OutOrStdout(), s)
			case "jsonschema", "json":
				reads := schemas.ReadsByType{}
				for _, t := range node.Types() {
					info, err := describeNodeType(t)
					if err != nil {
						return failed(err)
					}
					reads[t.Name] = info.reads
				}
				b, err := schemas.JSONSchema(node.Types(), reads)
				if err != nil {
					return failed(err)
				}
				fmt.Fprintln(cmd.OutOrStdout(), string(b))
			default:
				return usageError(fmt.Errorf("unknown --format %q: want cue or jsonschema", format))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "cue", "cue or jsonschema")
	return cmd
}

// nodeTypeInfo is the JSON form of a node type in `graphctl nodes --json`.
type nodeTypeInfo struct {
	Name        string                `json:"name"`
	Description string                `json:"description"`
	Config      []schemas.ConfigField `json:"config"`
	Schema      string                `json:"schema"`
	// reads are the probe's findings (schemas.ConfigReads).
	reads map[string][]string
}

func newNodesCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "nodes [TYPE...]",
		Short: "List the registered node types and their config fields",
		Long: `Nodes lists the registered node types (or the ones named) with, for every
config key: what it accepts, whether it is required, its default, and how the
node reads a string there —
  template    text with ${expr} interpolations, e.g. "Hello ${name}"
  expression  an expr-lang expression over the state, e.g. len(messages) > 0
  field       the name of a state field
  literal     used as written
How strings are read is learnt from each node type's own constructor, so it
cannot drift from what the node does.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			types := node.Types()
			if len(args) > 0 {
				types = nil
				var names []string
				for _, t := range node.Types() {
					names = append(names, t.Name)
				}
				for _, name := range args {
					t, ok := node.Lookup(name)
					if !ok {
						return usageError(fmt.Errorf("unknown node type %q%s; registered: %s", name, diag.DidYouMean(name, names), strings.Join(names, ", ")))
					}
					types = append(types, t)
				}
			}
			var infos []nodeTypeInfo
			for _, t := range types {
				info, err := describeNodeType(t)
				if err != nil {
					return failed(err)
				}
				infos = append(infos, info)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(infos)
			}
			for i, info := range infos {
				if i > 0 {
					fmt.Fprintln(out)
				}
				printNodeType(out, info)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

// describeNodeType gathers a node type's config fields and how it reads them.
func describeNodeType(t node.Type) (nodeTypeInfo, error) {
	overrides := probeOverrides(t)
	reads, err := schemas.ConfigReads(t, overrides)
	if err != nil {
		return nodeTypeInfo{}, fmt.Errorf("node type %s: %w", t.Name, err)
	}
	if args, ok := overrides["args"].(map[string]any); ok {
		// The probe used one tool's argument names; any tool's read the same.
		for name := range args {
			if how, ok := reads["args."+name]; ok {
				reads["args.*"] = how
				delete(reads, "args."+name)
			}
		}
	}
	fields, err := schemas.ConfigFields(t, reads)
	if err != nil {
		return nodeTypeInfo{}, fmt.Errorf("node type %s: %w", t.Name, err)
	}
	return nodeTypeInfo{Name: t.Name, Description: t.Description, Config: fields, Schema: graphschema.ConfigSchema(t), reads: reads}, nil
}

// probeOverrides gives the probe of a node type the real values it needs to
// go on: the tool node needs a registered tool and its argument names.
func probeOverrides(t node.Type) map[string]any {
	if t.Name != "tool" {
		return nil
	}
	for _, tl := range tool.List() {
		props, _ := tl.Input["properties"].(map[string]any)
		if len(props) == 0 {
			continue
		}
		args := map[string]any{}
		for name := range props {
			args[name] = "probe_arg"
		}
		return map[string]any{"tool": tl.Name, "args": args}
	}
	return nil
}

// printNodeType writes one node type for people.
func printNodeType(out io.Writer, info nodeTypeInfo) {
	fmt.Fprintf(out, "%s — %s\n", info.Name, info.Description)
	if len(info.Config) == 0 {
		fmt.Fprintln(out, "    (no config)")
		return
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "    KEY\tREQUIRED\tACCEPTS\tA STRING IS READ AS")
	for _, f := range info.Config {
		req := "no"
		if f.Required {
			req = "yes"
		}
		what := f.Type
		if f.Default != "" {
			what += " (default " + f.Default + ")"
		}
		reads := f.Reads
		if reads == "" {
			reads = "-"
		}
		fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\n", f.Name, req, what, reads)
	}
	tw.Flush()
}
