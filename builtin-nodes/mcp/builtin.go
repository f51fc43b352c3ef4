package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sort"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/graphctl/graphctl/builtin-nodes/internal/suggest"
	"github.com/graphctl/graphctl/builtin-nodes/tool"
)

// An mcp_servers entry {builtin: true} (every tool of the builtin-nodes/tool
// registry the graph uses: tool.Of its node registry) or {builtin:
// ["calculate", ...]} (the named ones) is served in process: a Go SDK server offering the selected builtin tools, with their
// input schemas, is connected to the Manager's client through the SDK's
// in-memory transports. Graphs then use builtin Go tools exactly as tools of
// any other MCP server, offline and with a real MCP exchange.

// builtinTools returns the tools of reg (nil: tool.Default()) a builtin
// server offers: the named ones, or all when names is empty.
func builtinTools(reg *tool.Registry, names []string) ([]tool.Tool, error) {
	if reg == nil {
		reg = tool.Default()
	}
	if len(names) == 0 {
		return reg.List(), nil
	}
	out := make([]tool.Tool, 0, len(names))
	for _, name := range names {
		t, ok := reg.Lookup(name)
		if !ok {
			return nil, fmt.Errorf("builtin tool %q is not registered%s; registered: %v", name, suggest.Hint(name, reg.Names()), reg.Names())
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// newBuiltinServer builds the SDK server offering the given tools.
func newBuiltinServer(tools []tool.Tool) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "graphctl-builtin", Version: "1"}, nil)
	for _, t := range tools {
		schema := map[string]any{"type": "object", "properties": map[string]any{}}
		if t.Input != nil {
			schema = maps.Clone(t.Input)
			schema["type"] = "object"
		}
		srv.AddTool(&sdk.Tool{Name: t.Name, Description: t.Description, InputSchema: schema}, builtinHandler(t))
	}
	return srv
}

// builtinHandler calls a builtin tool for an MCP request. Arguments that do
// not fit the tool's schema and the tool's own failures are error results
// (IsError), as the protocol wants, so the client sees them as the tool's
// answer rather than as a broken connection.
func builtinHandler(t tool.Tool) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		args := map[string]any{}
		if raw := req.Params.Arguments; len(raw) > 0 && string(raw) != "null" {
			if err := json.Unmarshal(raw, &args); err != nil {
				return errorResult(fmt.Sprintf("tool %q: arguments are not a JSON object: %v", t.Name, err)), nil
			}
		}
		if err := tool.ValidateArgs(t.Input, args); err != nil {
			return errorResult(fmt.Sprintf("tool %q: invalid arguments: %v", t.Name, err)), nil
		}
		res, err := t.Func(ctx, args)
		if err != nil {
			return errorResult(err.Error()), nil
		}
		out := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: res.Text}}}
		if res.Data != nil {
			structured, err := generic(res.Data)
			if err != nil {
				return errorResult(fmt.Sprintf("tool %q: result data is not JSON: %v", t.Name, err)), nil
			}
			if _, isObject := structured.(map[string]any); !isObject {
				structured = map[string]any{"result": structured}
			}
			out.StructuredContent = structured
		}
		return out, nil
	}
}

func errorResult(msg string) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: msg}}}
}

// connectBuiltin starts the in-process server of a builtin entry and returns
// the client transport connected to it, and the server session to close with
// the client's.
func connectBuiltin(ctx context.Context, cfg ServerConfig) (sdk.Transport, *sdk.ServerSession, error) {
	tools, err := builtinTools(cfg.tools, cfg.BuiltinTools)
	if err != nil {
		return nil, nil, fmt.Errorf("MCP server %q: %w", cfg.Name, err)
	}
	clientT, serverT := sdk.NewInMemoryTransports()
	ss, err := newBuiltinServer(tools).Connect(ctx, serverT, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("MCP server %q: start the builtin server: %w", cfg.Name, err)
	}
	return clientT, ss, nil
}
