package llm

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/graphctl/graphctl/builtin-nodes/internal/suggest"
	"github.com/graphctl/graphctl/builtin-nodes/mcp"
	"github.com/graphctl/graphctl/builtin-nodes/tool"
	"github.com/graphctl/graphctl/runtime/node"
)

// DefaultToolNameFormat is how an MCP tool is named to the model unless the
// node sets mcp_tool_names: the server's name, two underscores, the tool's
// name, so that tools of two servers never clash ("weather__get_forecast").
const DefaultToolNameFormat = "{server}__{tool}"

// maxToolName is the longest function name the OpenAI and Anthropic APIs accept.
const maxToolName = 64

// toolNameChars are the characters model APIs accept in a function name.
var toolNameChars = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// invalidToolNameChar matches one character a function name may not hold.
var invalidToolNameChar = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// toolRef is one entry of the tools list, resolved at build time.
type toolRef struct {
	builtin *tool.Tool
	server  string // MCP server
	name    string // MCP tool name, or "*" for all of the server's tools
}

// target is where a tool offered to the model lives: a builtin Go tool
// (server "") or a tool of an MCP server.
type target struct {
	server string
	tool   string
}

// toolset is what one call offers the model: the function definitions and,
// by the name the model sees, the tool behind each.
type toolset struct {
	defs   []llms.Tool
	byName map[string]target
	// byTool lists the offered names of each tool by its own name, so that a
	// JSON tool_call naming a tool without its server prefix still resolves
	// when only one server offers it.
	byTool map[string][]string
}

// empty reports whether no tool is offered.
func (ts *toolset) empty() bool { return ts == nil || len(ts.defs) == 0 }

// resolve maps a name the model called to the offered name and the tool
// behind it. A name offered verbatim wins; "server/tool" and a tool's own
// name (when one server alone offers it) are accepted too. An unknown name
// resolves to itself with no server, so the executing node reports it.
func (ts *toolset) resolve(called string) (string, target) {
	if ts == nil {
		return called, target{tool: called}
	}
	if t, ok := ts.byName[called]; ok {
		return called, t
	}
	if server, name, ok := strings.Cut(called, "/"); ok {
		for offered, t := range ts.byName {
			if t.server == server && t.tool == name {
				return offered, t
			}
		}
	}
	if names := ts.byTool[called]; len(names) == 1 {
		return names[0], ts.byName[names[0]]
	}
	return called, target{tool: called}
}

// checkToolNameFormat validates an mcp_tool_names format: it must contain
// {tool}, and its other text may hold only characters allowed in function names.
func checkToolNameFormat(format string) error {
	if !strings.Contains(format, "{tool}") {
		return fmt.Errorf("mcp_tool_names %q must contain {tool} (e.g. %q, or \"{tool}\" for bare names)", format, DefaultToolNameFormat)
	}
	rest := strings.NewReplacer("{server}", "", "{tool}", "").Replace(format)
	if rest != "" && !toolNameChars.MatchString(rest) {
		return fmt.Errorf("mcp_tool_names %q: outside {server} and {tool} only letters, digits, _ and - are allowed in a tool name", format)
	}
	return nil
}

// toolName renders the name an MCP tool is offered under. Characters model
// APIs refuse in function names (a dot, a slash) become underscores.
func toolName(format, server, name string) string {
	clean := func(s string) string { return invalidToolNameChar.ReplaceAllString(s, "_") }
	return strings.NewReplacer("{server}", clean(server), "{tool}", clean(name)).Replace(format)
}

// tools lists the tools the node offers on one call: builtin tools under
// their own names, MCP tools under the node's name format.
func (n *llmNode) tools(ctx context.Context, s *node.Services) (*toolset, error) {
	ts := &toolset{byName: map[string]target{}, byTool: map[string][]string{}}
	origin := map[string]string{}
	add := func(name, desc string, t target, params map[string]any) error {
		where := "builtin tool " + t.tool
		if t.server != "" {
			where = "MCP server " + t.server + "'s tool " + t.tool
		}
		if prev, dup := origin[name]; dup {
			return fmt.Errorf("tool name %q is offered twice (%s and %s); name MCP tools apart with mcp_tool_names, e.g. %q", name, prev, where, DefaultToolNameFormat)
		}
		if len(name) > maxToolName {
			return fmt.Errorf("tool name %q (%s) is longer than %d characters, which model APIs refuse; choose a shorter mcp_tool_names format", name, where, maxToolName)
		}
		origin[name] = where
		if params == nil {
			params = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		ts.defs = append(ts.defs, llms.Tool{Type: "function", Function: &llms.FunctionDefinition{Name: name, Description: desc, Parameters: params}})
		ts.byName[name] = t
		ts.byTool[t.tool] = append(ts.byTool[t.tool], name)
		return nil
	}
	for _, ref := range n.toolRefs {
		if ref.builtin != nil {
			if err := add(ref.builtin.Name, ref.builtin.Description, target{tool: ref.builtin.Name}, ref.builtin.Input); err != nil {
				return nil, err
			}
			continue
		}
		infos, err := mcp.Tools(ctx, s, n.g, ref.server)
		if err != nil {
			return nil, fmt.Errorf("MCP server %q: listing tools: %w", ref.server, err)
		}
		found := false
		for _, info := range infos {
			if ref.name != "*" && info.Name != ref.name {
				continue
			}
			found = true
			name := toolName(n.toolNames, ref.server, info.Name)
			if err := add(name, info.Description, target{server: ref.server, tool: info.Name}, info.InputSchema); err != nil {
				return nil, err
			}
		}
		if !found && ref.name != "*" {
			names := make([]string, len(infos))
			for i, info := range infos {
				names[i] = info.Name
			}
			return nil, fmt.Errorf("MCP server %q has no tool %q%s; it has: %v", ref.server, ref.name, suggest.Hint(ref.name, names), names)
		}
	}
	return ts, nil
}
