package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/graphctl/graphctl/runtime/diagram"
)

func newGraphCommand() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "graph GRAPH",
		Short: "Draw a graph as Mermaid, Graphviz DOT or JSON",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			g, err := mustLoad(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			d := diagram.Build(g)
			out := cmd.OutOrStdout()
			switch format {
			case "mermaid":
				fmt.Fprint(out, diagram.Mermaid(d))
			case "dot":
				fmt.Fprint(out, diagram.DOT(d, g.Spec.Name))
			case "json":
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(d)
			default:
				return usageError(fmt.Errorf("unknown --format %q: want mermaid, dot or json", format))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "mermaid", "mermaid, dot or json")
	return cmd
}
