// Package mcp connects graphs to tools served by Model Context Protocol
// servers, through the official Go SDK, and provides the mcp_tool node type,
// which executes tool-call ExecutionContracts.
//
// Servers are declared in the graph's defaults:
//
//	defaults: mcp_servers: {
//		files:   {command: ["mcp-server-files", "/data"], env: {TOKEN: {env: "FILES_TOKEN"}}}
//		weather: {url: "http://127.0.0.1:8080/mcp", headers: {Authorization: {env: "WEATHER_AUTH"}}}
//		local:   {builtin: ["calculate", "current_time"]}
//	}
//
// A command is started once and spoken to over stdio; a url is reached over
// the streamable HTTP transport; builtin: true (or a list of tool names)
// serves the builtin Go tools of the builtin-nodes/tool registry from an
// in-process server over the SDK's in-memory transports. Connections belong to a Manager, a per-engine
// service (under ServiceName) that connects lazily, once per server, is
// safe for concurrent use, and closes every connection when the engine closes.
//
// Tools and Call are the library surface other node types (a model choosing
// tools) build on. A tool's own error result is a Result with IsError set,
// never a Go error; a Go error means the server could not be reached or
// answered outside the protocol.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/graphctl/graphctl/builtin-nodes/internal/callretry"
	"github.com/graphctl/graphctl/builtin-nodes/tool"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/telemetry"
)

// ServiceName is the key of the Manager among a node's services.
var ServiceName = node.NewKey[*Manager]("mcp")

func init() {
	if err := node.RegisterService(ServiceName, NewManager); err != nil {
		panic(err)
	}
}

// ToolInfo describes a tool offered by an MCP server.
type ToolInfo struct {
	// Server is the name the graph declares the server under.
	Server string
	// Name is the tool's name on its server.
	Name string
	// Description is the server's description of the tool.
	Description string
	// InputSchema is the JSON Schema of the tool's arguments.
	InputSchema map[string]any
}

// Result is the outcome of a tool call.
type Result struct {
	// Text joins the text content of the result (other content is described
	// in brackets, such as "[image image/png]").
	Text string
	// Structured is the structured content as generic JSON, or nil.
	Structured any
	// IsError is set when the tool reported an error.
	IsError bool
}

// terminateAfter is how long closing a stdio server waits for it to exit
// after its stdin is closed before terminating it.
const terminateAfter = 2 * time.Second

// ErrClosed is returned by a Manager that has been closed.
var ErrClosed = errors.New("mcp connections are closed")

// Manager holds the connections of one engine to MCP servers.
type Manager struct {
	mu     sync.Mutex
	conns  map[string]*conn
	closed bool
}

// NewManager returns a Manager with no connections.
func NewManager() *Manager {
	return &Manager{conns: map[string]*conn{}}
}

// conn is one server's connection. mu is held while connecting, so that
// concurrent first uses connect once; calls run concurrently on the session.
type conn struct {
	cfg ServerConfig

	mu      sync.Mutex
	session *sdk.ClientSession
	// server is the in-process server session of a builtin server.
	server *sdk.ServerSession

	toolsMu    sync.Mutex
	tools      []ToolInfo
	toolsStale atomic.Bool
}

// ManagerOf returns the Manager among the services.
func ManagerOf(s *node.Services) (*Manager, error) {
	if s == nil {
		return nil, fmt.Errorf("no services: the %q service (an *mcp.Manager) is required to reach MCP servers", ServiceName.Name())
	}
	m, ok := ServiceName.Get(s)
	if !ok || m == nil {
		return nil, fmt.Errorf("services hold no *mcp.Manager under the key %q", ServiceName.Name())
	}
	return m, nil
}

// Tools lists the tools of a server declared in g.
func Tools(ctx context.Context, s *node.Services, g *graph.Graph, server string) ([]ToolInfo, error) {
	m, err := ManagerOf(s)
	if err != nil {
		return nil, err
	}
	cfg, err := ServerWith(g, server, toolsOf(s))
	if err != nil {
		return nil, err
	}
	return m.Tools(ctx, cfg)
}

// Call calls a tool of a server declared in g.
func Call(ctx context.Context, s *node.Services, g *graph.Graph, server, tool string, args map[string]any) (Result, error) {
	m, err := ManagerOf(s)
	if err != nil {
		return Result{}, err
	}
	cfg, err := ServerWith(g, server, toolsOf(s))
	if err != nil {
		return Result{}, err
	}
	return m.Call(ctx, cfg, tool, args)
}

// toolsOf returns the builtin tools of the registry the engine runs the
// graph with (node.RegistryKey), else the default ones.
func toolsOf(s *node.Services) *tool.Registry {
	reg, _ := node.RegistryKey.Get(s)
	return tool.Of(reg)
}

// Connect makes sure a connection to the server exists, starting it if needed.
func (m *Manager) Connect(ctx context.Context, cfg ServerConfig) error {
	_, _, err := m.session(ctx, cfg)
	return err
}

// Tools lists the server's tools. The list is cached until the server
// announces that it changed.
func (m *Manager) Tools(ctx context.Context, cfg ServerConfig) ([]ToolInfo, error) {
	c, cs, err := m.session(ctx, cfg)
	if err != nil {
		return nil, err
	}
	c.toolsMu.Lock()
	cached := c.tools
	c.toolsMu.Unlock()
	if cached != nil && !c.toolsStale.Load() {
		return append([]ToolInfo(nil), cached...), nil
	}
	c.toolsStale.Store(false)
	var out []ToolInfo
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			m.dropIfClosed(c, cs, err)
			return nil, fmt.Errorf("MCP server %q: list tools: %w", cfg.Name, err)
		}
		schema, err := generic(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("MCP server %q: tool %q: input schema: %w", cfg.Name, t.Name, err)
		}
		sm, _ := schema.(map[string]any)
		out = append(out, ToolInfo{Server: cfg.Name, Name: t.Name, Description: t.Description, InputSchema: sm})
	}
	if out == nil {
		out = []ToolInfo{}
	}
	c.toolsMu.Lock()
	c.tools = out
	c.toolsMu.Unlock()
	return append([]ToolInfo(nil), out...), nil
}

// Call calls a tool on the server. A call whose connection broke (a server
// process that exited, a connection reset) is retried on a new connection
// per the calling node's call_retry policy; an HTTP server's 429 and 5xx
// answers are retried by the transport.
func (m *Manager) Call(ctx context.Context, cfg ServerConfig, tool string, args map[string]any) (Result, error) {
	if args == nil {
		args = map[string]any{}
	}
	var res *sdk.CallToolResult
	broken := false // the call's connection broke (not: could not connect)
	err := callretry.Do(ctx, "tool", func() error {
		broken = false
		c, cs, err := m.session(ctx, cfg)
		if err != nil {
			return err
		}
		spanCtx, span := telemetry.StartTool(ctx, tool, "")
		res, err = cs.CallTool(spanCtx, &sdk.CallToolParams{Name: tool, Arguments: args})
		span.End(err)
		if err != nil {
			m.dropIfClosed(c, cs, err)
			broken = isClosedErr(err)
			return fmt.Errorf("MCP server %q: call tool %q: %w", cfg.Name, tool, err)
		}
		return nil
	}, func(err error) callretry.Failure {
		// HTTP answers (429, 5xx) and resets were retried by the transport
		// already; what is left to retry here is a connection that broke
		// during the call, on a new connection.
		return callretry.Failure{Transient: broken && ctx.Err() == nil, Reason: err.Error()}
	})
	if err != nil {
		return Result{}, err
	}
	return convert(res)
}

// Close closes every connection; the Manager cannot be used afterwards.
func (m *Manager) Close() error {
	m.mu.Lock()
	conns := m.conns
	m.conns = map[string]*conn{}
	m.closed = true
	m.mu.Unlock()
	var errs []error
	for _, c := range conns {
		c.mu.Lock()
		if c.session != nil {
			if err := c.session.Close(); err != nil && !isClosedErr(err) && !terminated(err) {
				errs = append(errs, fmt.Errorf("close MCP server %q: %w", c.cfg.Name, err))
			}
			c.session = nil
		}
		c.closeServer()
		c.mu.Unlock()
	}
	return errors.Join(errs...)
}

// session returns the server's session, connecting on first use.
func (m *Manager) session(ctx context.Context, cfg ServerConfig) (*conn, *sdk.ClientSession, error) {
	key := cfg.Name + "\x00" + cfg.fingerprint()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, nil, ErrClosed
	}
	c, ok := m.conns[key]
	if !ok {
		c = &conn{cfg: cfg}
		m.conns[key] = c
	}
	m.mu.Unlock()

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.session != nil {
		return c, c.session, nil
	}
	cs, err := c.connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		_ = cs.Close()
		return nil, nil, ErrClosed
	}
	c.session = cs
	return c, cs, nil
}

// dropIfClosed forgets a session whose connection is gone, so that the next
// use reconnects (a crashed command is started again).
func (m *Manager) dropIfClosed(c *conn, cs *sdk.ClientSession, err error) {
	if !isClosedErr(err) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.session == cs {
		_ = cs.Close()
		c.session = nil
		c.closeServer()
	}
}

// closeServer closes the in-process server of a builtin server, if any; c.mu
// is held.
func (c *conn) closeServer() {
	if c.server != nil {
		_ = c.server.Close() // the client side is gone; nothing is left to report
		c.server = nil
	}
}

// terminated reports whether err is a server process's exit by the signal
// Close sends to a command that does not exit when its stdin closes.
func terminated(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee) && ee.ProcessState != nil && ee.ProcessState.ExitCode() == -1
}

// isClosedErr reports whether err means the connection itself is gone (the
// process exited, nothing listens at the URL), as opposed to an error answer.
func isClosedErr(err error) bool {
	var op *net.OpError
	return errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, os.ErrClosed) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &op)
}

func (c *conn) connect(ctx context.Context) (*sdk.ClientSession, error) {
	var transport sdk.Transport
	switch {
	case c.cfg.Builtin:
		t, ss, err := connectBuiltin(ctx, c.cfg)
		if err != nil {
			return nil, err
		}
		transport, c.server = t, ss
	case c.cfg.Stdio():
		cmd := exec.Command(c.cfg.Command[0], c.cfg.Command[1:]...)
		cmd.Env = os.Environ()
		for k, v := range c.cfg.Env {
			s, err := v.Resolve()
			if err != nil {
				return nil, fmt.Errorf("MCP server %q: env %s: %w", c.cfg.Name, k, err)
			}
			cmd.Env = append(cmd.Env, k+"="+s)
		}
		cmd.Stderr = nil // a server's log is not part of the run's output
		transport = &sdk.CommandTransport{Command: cmd, TerminateDuration: terminateAfter}
	default:
		headers := http.Header{}
		for k, v := range c.cfg.Headers {
			s, err := v.Resolve()
			if err != nil {
				return nil, fmt.Errorf("MCP server %q: header %s: %w", c.cfg.Name, k, err)
			}
			headers.Set(k, s)
		}
		transport = &sdk.StreamableClientTransport{
			Endpoint:   c.cfg.URL,
			HTTPClient: callretry.Client("tool", headerTransport{headers: headers, base: http.DefaultTransport}),
		}
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "graphctl", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { c.toolsStale.Store(true) },
	})
	cs, err := client.Connect(ctx, transport, nil)
	if err != nil {
		c.closeServer()
		return nil, fmt.Errorf("MCP server %q: connect to %s: %w", c.cfg.Name, c.cfg.describe(), err)
	}
	return cs, nil
}

func (c ServerConfig) describe() string {
	if c.Builtin {
		return "the builtin tools served in process"
	}
	if c.Stdio() {
		return "command " + strings.Join(c.Command, " ")
	}
	return c.URL
}

// headerTransport adds configured headers to every request.
type headerTransport struct {
	headers http.Header
	base    http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		r = r.Clone(r.Context())
		for k, vs := range t.headers {
			r.Header[k] = vs
		}
	}
	return t.base.RoundTrip(r)
}

// convert turns an SDK result into a Result.
func convert(res *sdk.CallToolResult) (Result, error) {
	var parts []string
	for _, c := range res.Content {
		switch x := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, x.Text)
		case *sdk.ImageContent:
			parts = append(parts, "[image "+x.MIMEType+"]")
		case *sdk.AudioContent:
			parts = append(parts, "[audio "+x.MIMEType+"]")
		case *sdk.ResourceLink:
			parts = append(parts, "[resource "+x.URI+"]")
		case *sdk.EmbeddedResource:
			if x.Resource != nil && x.Resource.Text != "" {
				parts = append(parts, x.Resource.Text)
			} else if x.Resource != nil {
				parts = append(parts, "[resource "+x.Resource.URI+"]")
			}
		}
	}
	structured, err := generic(res.StructuredContent)
	if err != nil {
		return Result{}, fmt.Errorf("structured content: %w", err)
	}
	return Result{Text: strings.Join(parts, "\n"), Structured: structured, IsError: res.IsError}, nil
}

// generic converts a decoded value to the maps, lists and scalars state holds.
func generic(v any) (any, error) {
	switch v.(type) {
	case nil, string, bool, float64, map[string]any, []any:
		return v, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	return out, nil
}
