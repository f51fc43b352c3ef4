package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/graphctl/graphctl/builtin-nodes/mcp"
	"github.com/graphctl/graphctl/builtin-nodes/tool"
	"github.com/graphctl/graphctl/runtime/load"
)

// toolInfo is one tool in `graphctl tools --json`.
type toolInfo struct {
	// Ref is how a graph names the tool: the builtin name (a tool node's
	// tool, an llm node's tools) or mcp:SERVER/TOOL (an llm node's tools).
	Ref         string         `json:"ref"`
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"input_schema"`
}

// serverInfo is one MCP server declared by a graph, with its tools.
type serverInfo struct {
	Graph  string     `json:"graph"`
	Server string     `json:"server"`
	Tools  []toolInfo `json:"tools"`
	Error  string     `json:"error,omitempty"`
}

// toolsReport is the output of `graphctl tools --json`.
type toolsReport struct {
	Builtin []toolInfo   `json:"builtin"`
	MCP     []serverInfo `json:"mcp"`
}

func newToolsCommand() *cobra.Command {
	var asJSON bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "tools [GRAPH...]",
		Short: "List the builtin tools, and the tools of the MCP servers graphs declare",
		Long: `Tools lists the builtin Go tools — a tool node calls one by name (tool: NAME),
an llm node offers them to its model (tools: ["NAME"]) — with their argument
schemas. Given graph files (or directories), it also connects to every MCP
server they declare under defaults.mcp_servers and lists that server's tools
as an llm node names them (tools: ["mcp:SERVER/TOOL"], or "mcp:SERVER/*" for
all). A server that cannot be reached is reported and makes the exit status 1.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			report := toolsReport{Builtin: builtinToolInfos()}
			var files []string
			if len(args) > 0 {
				var err error
				if files, err = load.Expand(args); err != nil {
					return usageError(err)
				}
			}
			failures := 0
			for _, file := range files {
				g, err := mustLoad(cmd.Context(), file)
				if err != nil {
					return err
				}
				servers, err := mcp.Servers(g.Spec)
				if err != nil {
					return failed(fmt.Errorf("%s: %w", file, err))
				}
				names := make([]string, 0, len(servers))
				for name := range servers {
					names = append(names, name)
				}
				sort.Strings(names)
				for _, name := range names {
					info := listServerTools(cmd.Context(), file, servers[name], timeout)
					if info.Error != "" {
						failures++
					}
					report.MCP = append(report.MCP, info)
				}
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(report); err != nil {
					return usageError(err)
				}
			} else {
				printTools(out, report)
			}
			if failures > 0 {
				if !asJSON {
					fmt.Fprintf(cmd.ErrOrStderr(), "%d MCP server(s) could not be listed\n", failures)
				}
				return silent{code: 1}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "how long to wait for each MCP server to start and list its tools")
	return cmd
}

func builtinToolInfos() []toolInfo {
	var out []toolInfo
	for _, t := range tool.List() {
		out = append(out, toolInfo{Ref: t.Name, Name: t.Name, Description: t.Description, InputSchema: t.Input})
	}
	return out
}

// listServerTools connects to one server and lists its tools.
func listServerTools(ctx context.Context, file string, cfg mcp.ServerConfig, timeout time.Duration) serverInfo {
	info := serverInfo{Graph: file, Server: cfg.Name, Tools: []toolInfo{}}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	m := mcp.NewManager()
	defer m.Close()
	tools, err := m.Tools(ctx, cfg)
	if err != nil {
		info.Error = err.Error()
		return info
	}
	for _, t := range tools {
		info.Tools = append(info.Tools, toolInfo{
			Ref: "mcp:" + cfg.Name + "/" + t.Name, Name: t.Name, Description: t.Description, InputSchema: t.InputSchema,
		})
	}
	return info
}

func printTools(out io.Writer, r toolsReport) {
	fmt.Fprintln(out, `builtin tools (a tool node's tool: NAME; an llm node's tools: ["NAME"])`)
	printToolList(out, r.Builtin)
	for _, s := range r.MCP {
		fmt.Fprintf(out, "\nMCP server %q of %s (an llm node's tools: [\"mcp:%s/*\"] or the names below)\n", s.Server, s.Graph, s.Server)
		if s.Error != "" {
			fmt.Fprintf(out, "  cannot list its tools: %s\n", s.Error)
			continue
		}
		if len(s.Tools) == 0 {
			fmt.Fprintln(out, "  (no tools)")
		}
		printToolList(out, s.Tools)
	}
}

// printToolList writes each tool with its description and arguments.
func printToolList(out io.Writer, tools []toolInfo) {
	for _, t := range tools {
		fmt.Fprintf(out, "  %s\n", t.Ref)
		if d := strings.Join(strings.Fields(t.Description), " "); d != "" {
			fmt.Fprintf(out, "      %s\n", d)
		}
		props, _ := t.InputSchema["properties"].(map[string]any)
		if len(props) == 0 {
			fmt.Fprintln(out, "      (no arguments)")
			continue
		}
		required := map[string]bool{}
		if list, ok := t.InputSchema["required"].([]any); ok {
			for _, r := range list {
				if s, ok := r.(string); ok {
					required[s] = true
				}
			}
		} else if list, ok := t.InputSchema["required"].([]string); ok {
			for _, s := range list {
				required[s] = true
			}
		}
		names := make([]string, 0, len(props))
		for name := range props {
			names = append(names, name)
		}
		sort.Strings(names)
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		for _, name := range names {
			p, _ := props[name].(map[string]any)
			typ := fmt.Sprint(p["type"])
			if p["type"] == nil {
				typ = "any"
			}
			req := "optional"
			if required[name] {
				req = "required"
			}
			desc, _ := p["description"].(string)
			fmt.Fprintf(tw, "      %s\t%s\t%s\t%s\n", name, typ, req, strings.Join(strings.Fields(desc), " "))
		}
		tw.Flush()
	}
}
