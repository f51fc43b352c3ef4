package mcp

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/graphctl/graphctl/builtin-nodes/contract"
	"github.com/graphctl/graphctl/builtin-nodes/internal/check"
	"github.com/graphctl/graphctl/builtin-nodes/internal/suggest"
	"github.com/graphctl/graphctl/builtin-nodes/tool"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
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
	messages_field?: string
	server?: string
	call_timeout?: string
}`,
		New: newToolNode,
	})
}

// toolNode is the mcp_tool node type.
//
// Contract fields it reads: id, action_type ("tool_call"), status
// ("PENDING"), tool_name, server and arguments (an object). The server is
// the contract's server when it names a declared one; else tool_name may
// name it as "server/tool" or "server__tool"; else the node's configured
// server, or the only declared one. It writes status and either result
// ({text, structured}) or error_message. A contract with a call_id that an
// AI message of the messages field called gets its answer as a tool message
// ({role: "tool", content, tool_call_id, name, status}), as LangGraph's
// ToolNode writes it. A tool's error result and a
// transport failure both end the contract FAILED and the node succeeds, so
// the graph carries on and a later node reads the outcome from the contract.
// Only an exceeded timeout or a cancellation fails the node itself; a call
// that takes longer than call_timeout (a Go duration) ends its contract
// FAILED, saying so, and the node goes on.
type toolNode struct {
	name          string
	contracts     string
	observation   string
	messages      string
	defaultServer string
	callTimeout   time.Duration
	servers       map[string]ServerConfig
}

func newToolNode(b node.Builder) (node.Node, error) {
	var cfg struct {
		ContractsField   string `json:"contracts_field"`
		ObservationField string `json:"observation_field"`
		MessagesField    string `json:"messages_field"`
		Server           string `json:"server"`
		CallTimeout      string `json:"call_timeout"`
	}
	if err := b.Decode(&cfg); err != nil {
		b.Errorf("", "invalid-config", "mcp_tool node %q: %v", b.NodeName(), err)
		return nil, nil
	}
	n := &toolNode{name: b.NodeName(), contracts: cfg.ContractsField, observation: cfg.ObservationField, defaultServer: cfg.Server}
	if cfg.CallTimeout != "" {
		d, err := time.ParseDuration(cfg.CallTimeout)
		if err != nil || d <= 0 {
			b.Errorf("call_timeout", "invalid-config", "mcp_tool node %q: call_timeout %q is not a positive Go duration such as \"30s\"", b.NodeName(), cfg.CallTimeout)
		}
		n.callTimeout = d
	}
	if n.contracts == "" {
		n.contracts = "contracts"
	}
	ContractsField(b, "contracts_field", n.contracts)
	n.messages = messagesField(b, cfg.MessagesField)
	if n.observation != "" {
		if f := check.Field(b, "observation_field", n.observation); f != nil && f.Type.Kind != graph.String && f.Type.Kind != graph.Any {
			b.Errorf("observation_field", "invalid-config", "mcp_tool node %q writes a text observation to %q, declared as %s; declare it as string",
				n.name, n.observation, f.Type)
		}
	}
	servers, err := ServersWith(b.Graph(), tool.Of(node.RegistryOf(b)))
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
	// An unset {env: VAR} in a server's config is reported once, by the
	// compiler's env-unset check of defaults, not again here per node.
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
	if f.Type.Kind != contract.Kind {
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
	// callID is the id of the model's tool call the contract came from.
	callID string
	// outcome
	status  string
	result  map[string]any
	errMsg  string
	emitted bool
}

// resolve finds the server and tool of a contract: its server field, else
// a "server/tool" or "server__tool" tool_name, else the node's server, else
// the only declared server.
func (n *toolNode) resolve(c map[string]any) (string, string, error) {
	toolName, _ := c["tool_name"].(string)
	if toolName == "" {
		return "", "", fmt.Errorf("the contract names no tool (tool_name is empty)")
	}
	if server, _ := c["server"].(string); server != "" {
		if _, declared := n.servers[server]; !declared {
			return "", "", fmt.Errorf("the contract names MCP server %q, which is not declared in defaults.%s (declared: %s)",
				server, DefaultsKey, strings.Join(serverNames(n.servers), ", "))
		}
		return server, toolName, nil
	}
	for _, sep := range []string{"/", "__"} {
		if server, tool, ok := strings.Cut(toolName, sep); ok {
			if _, declared := n.servers[server]; declared && tool != "" {
				return server, tool, nil
			}
		}
	}
	switch {
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
		if ok && c["action_type"] == actionType && c["status"] == contract.Pending {
			out = append(out, c)
		}
	}
	return out
}

// Run implements node.Node: it reads the pending tool calls, executes them
// concurrently and writes their outcomes.
func (n *toolNode) Run(ctx context.Context, in *node.Input) (node.Update, error) {
	pending := Pending(in.State[n.contracts], ActionToolCall)
	if len(pending) == 0 {
		return nil, nil
	}
	emit := in.Emit
	if emit == nil {
		emit = event.Discard
	}
	calls, err := n.calls(in, pending)
	if err != nil {
		return nil, err
	}
	m, mErr := ManagerOf(in.Services)
	if mErr != nil {
		for _, cl := range calls {
			if cl.status == "" {
				cl.fail(mErr.Error())
			}
		}
	}
	n.execute(ctx, m, calls, emit)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("mcp_tool node %q: %w", n.name, err)
	}
	for _, cl := range calls {
		if !cl.emitted { // failed before calling
			emit(cl.event())
		}
	}
	return n.update(in, calls), nil
}

// calls reads the pending contracts; one that cannot be called is failed at once.
func (n *toolNode) calls(in *node.Input, pending []map[string]any) ([]*call, error) {
	calls := make([]*call, len(pending))
	for i, c := range pending {
		id, _ := c["id"].(string)
		if id == "" {
			return nil, node.Errorf("invalid_contract", "mcp_tool node %q: a pending tool_call contract has no id: %v", n.name, c)
		}
		toolName, _ := c["tool_name"].(string)
		args, _ := c["arguments"].(map[string]any)
		cl := &call{id: id, tool: toolName, args: args}
		cl.callID, _ = c["call_id"].(string)
		calls[i] = cl
		if raw, has := c["arguments"]; has && raw != nil && args == nil {
			cl.fail(fmt.Sprintf("arguments must be an object, got %s", graph.DescribeValue(raw)))
			continue
		}
		server, tool, err := n.resolve(c)
		if err != nil {
			cl.fail(err.Error())
			continue
		}
		cl.server, cl.tool = server, tool
	}
	return calls, nil
}

// execute runs the calls not yet failed, at most maxParallel at once,
// emitting each outcome as it arrives.
func (n *toolNode) execute(ctx context.Context, m *Manager, calls []*call, emit event.Sink) {
	var emitMu sync.Mutex
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
			res, late, err := n.call(ctx, m, cl)
			switch {
			case late:
				cl.fail(fmt.Sprintf("tool %q on MCP server %q did not answer within %s", cl.tool, cl.server, n.callTimeout))
			case err != nil:
				cl.fail(err.Error())
			case res.IsError:
				msg := res.Text
				if msg == "" {
					msg = "the tool reported an error without a message"
				}
				cl.fail(msg)
			default:
				cl.status = contract.Completed
				cl.result = map[string]any{"text": res.Text, "structured": res.Structured}
			}
			emitMu.Lock()
			emit(cl.event())
			cl.emitted = true
			emitMu.Unlock()
		}()
	}
	wg.Wait()
}

// call makes one tool call within the node's call timeout; late says the
// timeout ended it.
func (n *toolNode) call(ctx context.Context, m *Manager, cl *call) (res Result, late bool, err error) {
	callCtx := ctx
	if n.callTimeout > 0 {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithTimeout(ctx, n.callTimeout)
		defer cancel()
	}
	res, err = m.Call(callCtx, n.servers[cl.server], cl.tool, cl.args)
	late = err != nil && ctx.Err() == nil && errors.Is(callCtx.Err(), context.DeadlineExceeded)
	return res, late, err
}

// update writes each contract RUNNING then its outcome, the observation
// text, and a tool message for each call an AI message made.
func (n *toolNode) update(in *node.Input, calls []*call) node.Update {
	writes := make([]any, 0, 2*len(calls))
	summary := make([]string, 0, len(calls))
	for _, cl := range calls {
		writes = append(writes, map[string]any{"id": cl.id, "status": contract.Running})
		final := map[string]any{"id": cl.id, "status": cl.status}
		if cl.status == contract.Completed {
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
	if n.messages != "" {
		if msgs := toolMessages(in.State[n.messages], calls); len(msgs) > 0 {
			up[n.messages] = msgs
		}
	}
	return up
}

// toolMessages answers the calls that an AI message of the conversation
// made with tool messages, as LangGraph's ToolNode does: {role: "tool",
// content, tool_call_id, name, status: "success" | "error"}, with the
// structured result as artifact.
func toolMessages(conversation any, calls []*call) []any {
	names := calledNames(conversation)
	var out []any
	for _, cl := range calls {
		name, called := names[cl.callID]
		if cl.callID == "" || !called {
			continue
		}
		msg := map[string]any{"role": "tool", "tool_call_id": cl.callID, "name": name}
		if cl.status == contract.Completed {
			msg["content"], msg["status"] = cl.result["text"], "success"
			if s := cl.result["structured"]; s != nil {
				msg["artifact"] = s
			}
		} else {
			msg["content"], msg["status"] = "Error: "+cl.errMsg, "error"
		}
		out = append(out, msg)
	}
	return out
}

// calledNames maps the id of every tool call of the conversation's AI
// messages to the name the model called.
func calledNames(conversation any) map[string]string {
	out := map[string]string{}
	list, _ := conversation.([]any)
	for _, item := range list {
		m, _ := item.(map[string]any)
		calls, _ := m["tool_calls"].([]any)
		for _, c := range calls {
			tc, _ := c.(map[string]any)
			id, _ := tc["id"].(string)
			name, _ := tc["name"].(string)
			if fn, ok := tc["function"].(map[string]any); ok && name == "" {
				name, _ = fn["name"].(string)
			}
			if id != "" {
				out[id] = name
			}
		}
	}
	return out
}

// messagesField returns the field tool messages are appended to: the
// configured one, else "messages" when the graph declares it as messages,
// else none.
func messagesField(b node.Builder, name string) string {
	if name != "" {
		if check.MessagesField(b, "messages_field", name) {
			return name
		}
		return ""
	}
	if f := b.Graph().Field("messages"); f != nil && f.Type.Kind == graph.Messages {
		return "messages"
	}
	return ""
}

func (c *call) fail(msg string) {
	c.status, c.errMsg = contract.Failed, msg
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
	if c.callID != "" {
		p["tool_call_id"] = c.callID
	}
	if c.status == contract.Completed {
		p["result"] = c.result
	} else {
		p["error_message"] = c.errMsg
	}
	return event.Event{Type: EventType, Payload: p}
}
