package mcp

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/graphctl/graphctl/builtin-nodes/internal/check"
	"github.com/graphctl/graphctl/builtin-nodes/internal/suggest"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/reducer"
)

// EventType is the type of the event emitted for every executed contract.
const EventType = "tool_result"

// ActionToolCall is the action_type of the contracts the mcp_tool node executes.
const ActionToolCall = "tool_call"

// maxParallel bounds how many contracts one mcp_tool run executes at once.
const maxParallel = 4

func init() {
	node.MustRegister(node.Type{
		Name:        "mcp_tool",
		Description: "Executes pending tool_call ExecutionContracts on MCP servers (PENDING → RUNNING → COMPLETED or FAILED).",
		Config: `{
	contracts_field?: *"contracts" | string
	observation_field?: string
	server?: string
}`,
		New: newToolNode,
	})
}

// toolNode is the mcp_tool node type.
//
// Contract fields it reads: id, action_type ("tool_call"), status
// ("PENDING"), tool_name ("server/tool", or a bare tool name on the
// configured server) and arguments (an object). It writes status and either
// result ({text, structured}) or error_message. A tool's error result and a
// transport failure both end the contract FAILED and the node succeeds, so
// the graph carries on and a later node reads the outcome from the contract.
// Only an exceeded timeout or a cancellation fails the node itself.
type toolNode struct {
	name          string
	contracts     string
	observation   string
	defaultServer string
	servers       map[string]ServerConfig
}

func newToolNode(b node.Builder) (node.Node, error) {
	var cfg struct {
		ContractsField   string `json:"contracts_field"`
		ObservationField string `json:"observation_field"`
		Server           string `json:"server"`
	}
	if err := b.Decode(&cfg); err != nil {
		b.Errorf("", "invalid-config", "mcp_tool node %q: %v", b.NodeName(), err)
		return nil, nil
	}
	n := &toolNode{name: b.NodeName(), contracts: cfg.ContractsField, observation: cfg.ObservationField, defaultServer: cfg.Server}
	if n.contracts == "" {
		n.contracts = "contracts"
	}
	ContractsField(b, "contracts_field", n.contracts)
	if n.observation != "" {
		if f := check.Field(b, "observation_field", n.observation); f != nil && f.Type.Kind != graph.String && f.Type.Kind != graph.Any {
			b.Errorf("observation_field", "invalid-config", "mcp_tool node %q writes a text observation to %q, declared as %s; declare it as string",
				n.name, n.observation, f.Type)
		}
	}
	servers, err := Servers(b.Graph())
	if err != nil {
		b.Errorf("", "invalid-config", "mcp_tool node %q: %v", n.name, err)
		return nil, nil
	}
	n.servers = servers
	switch {
	case len(servers) == 0:
		b.Errorf("", "invalid-config", "mcp_tool node %q needs MCP servers, and the graph declares none in defaults.%s", n.name, DefaultsKey)
	case n.defaultServer != "":
		if _, ok := servers[n.defaultServer]; !ok {
			names := serverNames(servers)
			b.Errorf("server", "unknown-server", "MCP server %q is not declared in defaults.%s%s; declared: %s",
				n.defaultServer, DefaultsKey, suggest.Hint(n.defaultServer, names), strings.Join(names, ", "))
		}
	}
	for _, name := range n.referenced() {
		if cfg, ok := servers[name]; ok {
			for _, v := range cfg.UnsetEnv() {
				b.Warnf("server", "unset-env", "MCP server %q reads environment variable %s, which is not set", name, v)
			}
		}
	}
	if b.Failed() {
		return nil, nil
	}
	return n, nil
}

// ContractsField checks that name is a declared field of type contracts,
// reporting at path otherwise. It returns whether the field is usable.
func ContractsField(b node.Builder, path, name string) bool {
	f := check.Field(b, path, name)
	if f == nil {
		return false
	}
	if f.Type.Kind != graph.Contracts {
		b.Errorf(path, "invalid-config", "node %q reads ExecutionContracts from %q, which is declared as %s, not contracts",
			b.NodeName(), name, f.Type)
		return false
	}
	return true
}

func serverNames(servers map[string]ServerConfig) []string {
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// referenced returns the servers the node may call before any contract is
// seen: the configured server, else every declared one.
func (n *toolNode) referenced() []string {
	if n.defaultServer != "" {
		return []string{n.defaultServer}
	}
	return serverNames(n.servers)
}

// Prepare implements node.Preparer: it connects to the servers the node uses,
// so that a server that cannot be started or reached is reported before a run.
func (n *toolNode) Prepare(ctx context.Context, s *node.Services) error {
	m, err := ManagerOf(s)
	if err != nil {
		return fmt.Errorf("mcp_tool node %q: %w", n.name, err)
	}
	for _, name := range n.referenced() {
		if err := m.Connect(ctx, n.servers[name]); err != nil {
			return fmt.Errorf("mcp_tool node %q: %w (check defaults.%s.%s)", n.name, err, DefaultsKey, name)
		}
	}
	return nil
}

// call is one contract to execute and its outcome.
type call struct {
	id     string
	server string
	tool   string
	args   map[string]any
	// outcome
	status  string
	result  map[string]any
	errMsg  string
	emitted bool
}

// resolve splits a contract's tool_name into server and tool.
func (n *toolNode) resolve(toolName string) (string, string, error) {
	if server, tool, ok := strings.Cut(toolName, "/"); ok {
		if _, declared := n.servers[server]; declared && tool != "" {
			return server, tool, nil
		}
	}
	switch {
	case toolName == "":
		return "", "", fmt.Errorf("the contract names no tool (tool_name is empty)")
	case n.defaultServer != "":
		return n.defaultServer, toolName, nil
	case len(n.servers) == 1:
		return serverNames(n.servers)[0], toolName, nil
	}
	return "", "", fmt.Errorf("tool %q names no declared MCP server; write it as server/tool (servers: %s) or set the node's server",
		toolName, strings.Join(serverNames(n.servers), ", "))
}

// Pending returns the contracts of a contracts-field value with the given
// action type and status PENDING, in order.
func Pending(value any, actionType string) []map[string]any {
	items, _ := value.([]any)
	var out []map[string]any
	for _, item := range items {
		c, ok := item.(map[string]any)
		if ok && c["action_type"] == actionType && c["status"] == reducer.Pending {
			out = append(out, c)
		}
	}
	return out
}

// Run implements node.Node.
func (n *toolNode) Run(ctx context.Context, in *node.Input) (node.Update, error) {
	pending := Pending(in.State[n.contracts], ActionToolCall)
	if len(pending) == 0 {
		return nil, nil
	}
	emit := in.Emit
	if emit == nil {
		emit = event.Discard
	}
	var emitMu sync.Mutex
	m, mErr := ManagerOf(in.Services)
	calls := make([]*call, len(pending))
	for i, c := range pending {
		id, _ := c["id"].(string)
		if id == "" {
			return nil, node.Errorf("invalid_contract", "mcp_tool node %q: a pending tool_call contract has no id: %v", n.name, c)
		}
		toolName, _ := c["tool_name"].(string)
		args, _ := c["arguments"].(map[string]any)
		cl := &call{id: id, tool: toolName, args: args}
		calls[i] = cl
		if raw, has := c["arguments"]; has && raw != nil && args == nil {
			cl.fail(fmt.Sprintf("arguments must be an object, got %s", graph.DescribeValue(raw)))
			continue
		}
		server, tool, err := n.resolve(toolName)
		if err != nil {
			cl.fail(err.Error())
			continue
		}
		cl.server, cl.tool = server, tool
		if mErr != nil {
			cl.fail(mErr.Error())
		}
	}
	sem := make(chan struct{}, maxParallel)
	var wg sync.WaitGroup
	for _, cl := range calls {
		if cl.status != "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				cl.fail(ctx.Err().Error())
				return
			}
			defer func() { <-sem }()
			res, err := m.Call(ctx, n.servers[cl.server], cl.tool, cl.args)
			switch {
			case err != nil:
				cl.fail(err.Error())
			case res.IsError:
				msg := res.Text
				if msg == "" {
					msg = "the tool reported an error without a message"
				}
				cl.fail(msg)
			default:
				cl.status = reducer.Completed
				cl.result = map[string]any{"text": res.Text, "structured": res.Structured}
			}
			emitMu.Lock()
			emit(cl.event())
			cl.emitted = true
			emitMu.Unlock()
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("mcp_tool node %q: %w", n.name, err)
	}
	writes := make([]any, 0, 2*len(calls))
	summary := make([]string, 0, len(calls))
	for _, cl := range calls {
		if !cl.emitted { // failed before calling
			emit(cl.event())
		}
		writes = append(writes, map[string]any{"id": cl.id, "status": reducer.Running})
		final := map[string]any{"id": cl.id, "status": cl.status}
		if cl.status == reducer.Completed {
			final["result"] = cl.result
			summary = append(summary, fmt.Sprintf("[%s] %s", cl.label(), cl.result["text"]))
		} else {
			final["error_message"] = cl.errMsg
			summary = append(summary, fmt.Sprintf("[%s] FAILED: %s", cl.label(), cl.errMsg))
		}
		writes = append(writes, final)
	}
	up := node.Update{n.contracts: writes}
	if n.observation != "" {
		up[n.observation] = strings.Join(summary, "\n")
	}
	return up, nil
}

func (c *call) fail(msg string) {
	c.status, c.errMsg = reducer.Failed, msg
}

func (c *call) label() string {
	if c.server == "" {
		return c.tool
	}
	return c.server + "/" + c.tool
}

func (c *call) event() event.Event {
	args := c.args
	if args == nil {
		args = map[string]any{}
	}
	p := map[string]any{"contract_id": c.id, "tool": c.label(), "arguments": args, "status": c.status}
	if c.status == reducer.Completed {
		p["result"] = c.result
	} else {
		p["error_message"] = c.errMsg
	}
	return event.Event{Type: EventType, Payload: p}
}
