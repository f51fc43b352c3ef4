package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

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
				b, err := schemas.JSONSchema(node.Types())
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
}

func newNodesCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "nodes",
		Short: "List the registered node types and their config fields",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var infos []nodeTypeInfo
			for _, t := range node.Types() {
				fields, err := schemas.ConfigFields(t)
				if err != nil {
					return failed(fmt.Errorf("node type %s: %w", t.Name, err))
				}
				infos = append(infos, nodeTypeInfo{Name: t.Name, Description: t.Description, Config: fields, Schema: schemas.ConfigSchema(t)})
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(infos)
			}
			for _, info := range infos {
				fmt.Fprintf(out, "%s\n    %s\n", info.Name, info.Description)
				if len(info.Config) == 0 {
					fmt.Fprintln(out, "    (no config)")
					continue
				}
				tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				for _, f := range info.Config {
					req := "optional"
					if f.Required {
						req = "required"
					}
					def := ""
					if f.Default != "" {
						def = "default " + f.Default
					}
					fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\n", f.Name, oneLine(f.Type), req, def)
				}
				tw.Flush()
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}
