// Package mcpserver serves graphs as MCP tools over the streamable HTTP
// transport of the official MCP Go SDK: one tool per graph, named after it,
// with an input schema built from the graph's state fields (enums kept), an
// optional thread_id to continue a conversation and resume to answer an
// interrupt. A call runs the graph through a Runner (the server's run
// manager, so MCP runs are ordinary runs: listed, streamed, resumable) and
// returns the replies and final state; node progress is sent as MCP
// progress notifications when the client asks for them.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Argument names every tool takes besides the graph's state fields.
const (
	ArgThreadID = "thread_id"
	ArgResume   = "resume"
	ArgMessage  = "message"
)

// Field is a state field a run accepts as input.
type Field struct {
	Name string
	// Schema is the field's JSON Schema (with enum and description when the
	// graph declares them).
	Schema map[string]any
	// Messages marks a field of type messages: the tool's message argument
	// appends a user message to the first such field.
	Messages bool
}

// Graph is a served graph, as the tools are built from it.
type Graph struct {
	Name, Description string
	// Hash changes when the graph does; tools are rebuilt then.
	Hash   string
	Fields []Field
}

// Call is one tool call to run.
type Call struct {
	Graph string
	// ThreadID continues a thread; empty starts a new one.
	ThreadID string
	// Input is written to state; nil when Resume is set.
	Input map[string]any
	// Resume answers the thread's pending interrupt (HasResume tells a
	// given null apart from none).
	Resume    any
	HasResume bool
}

// Interrupt is a question a run stopped on.
type Interrupt struct {
	ID      string         `json:"id"`
	Node    string         `json:"node"`
	Field   string         `json:"field,omitempty"`
	Message string         `json:"message,omitempty"`
	Payload map[string]any `json:"payload,omitempty"`
}

// Outcome is what a run ended with.
type Outcome struct {
	ThreadID string `json:"thread_id"`
	RunID    string `json:"run_id"`
	// Status is completed, interrupted or error.
	Status string `json:"status"`
	// Replies are the assistant messages the run added.
	Replies    []string       `json:"replies"`
	Interrupts []Interrupt    `json:"interrupts,omitempty"`
	Error      string         `json:"error,omitempty"`
	Values     map[string]any `json:"values"`
}

// Progress reports a node that finished while a call runs.
type Progress struct {
	// Done counts the node updates so far.
	Done    int
	Message string
}

// Runner runs tool calls.
type Runner interface {
	// Graphs lists the graphs to offer as tools.
	Graphs() []Graph
	// Run runs a call to its end (completed, interrupted or failed),
	// reporting progress as nodes finish. An error is a call that could not
	// run (bad input, unknown thread, a busy thread); a run that fails
	// returns an Outcome with status error.
	Run(ctx context.Context, call Call, progress func(Progress)) (*Outcome, error)
}

// Options configure New.
type Options struct {
	Runner Runner
	// Version is the server version reported to clients.
	Version string
	Log     *slog.Logger
}

// Handler is the /mcp endpoint.
type Handler struct {
	runner Runner
	srv    *mcp.Server
	http   http.Handler

	mu    sync.Mutex
	tools map[string]string // tool name -> graph hash
}

// New builds the MCP endpoint. Its tools follow Runner.Graphs: they are
// brought up to date on each request, so a reloaded graph file changes its
// tool for the next call.
func New(opts Options) *Handler {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &Handler{runner: opts.Runner, tools: map[string]string{}}
	h.srv = mcp.NewServer(&mcp.Implementation{Name: "graphctl", Title: "graphctl graphs", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: "Each tool runs one graph. Pass thread_id from a result to continue that conversation; when a result says the graph is waiting for an answer, call the same tool with that thread_id and resume set to the answer.",
		Logger:       log,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	h.sync()
	// Stateless: every request stands alone (no session to keep or lose), so
	// any replica can answer any call; threads carry the conversation.
	h.http = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		h.sync()
		return h.srv
	}, &mcp.StreamableHTTPOptions{Stateless: true, Logger: log})
	return h
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.http.ServeHTTP(w, r) }

// sync adds, replaces and removes tools to match the runner's graphs.
func (h *Handler) sync() {
	graphs := h.runner.Graphs()
	h.mu.Lock()
	defer h.mu.Unlock()
	seen := map[string]bool{}
	for _, g := range graphs {
		seen[g.Name] = true
		if h.tools[g.Name] == g.Hash && g.Hash != "" {
			continue
		}
		h.srv.AddTool(Tool(g), h.handle(g))
		h.tools[g.Name] = g.Hash
	}
	var gone []string
	for name := range h.tools {
		if !seen[name] {
			gone = append(gone, name)
			delete(h.tools, name)
		}
	}
	if len(gone) > 0 {
		h.srv.RemoveTools(gone...)
	}
}

// messagesField returns the graph's first messages field, or "".
func messagesField(g Graph) string {
	for _, f := range g.Fields {
		if f.Messages {
			return f.Name
		}
	}
	return ""
}

// Tool describes a graph as an MCP tool.
func Tool(g Graph) *mcp.Tool {
	props := map[string]any{}
	if mf := messagesField(g); mf != "" {
		props[ArgMessage] = map[string]any{"type": "string",
			"description": fmt.Sprintf("the user's message; it is appended to %s", mf)}
	}
	for _, f := range g.Fields {
		if f.Messages {
			continue
		}
		props[f.Name] = f.Schema
	}
	props[ArgThreadID] = map[string]any{"type": "string",
		"description": "continue this conversation (the thread_id of an earlier result); omit to start a new one"}
	props[ArgResume] = map[string]any{
		"description": "the answer to the question the graph is waiting on (an interrupt) in thread_id; given instead of new input"}
	desc := strings.TrimSpace(g.Description)
	if desc == "" {
		desc = "Runs the graph " + g.Name + "."
	}
	desc += "\n\nReturns the graph's replies and its final state. To continue a conversation pass the thread_id of an earlier result. " +
		"When the graph stops to ask something, the result says what; call again with that thread_id and resume set to the answer."
	return &mcp.Tool{Name: g.Name, Title: g.Name, Description: desc,
		InputSchema: map[string]any{"type": "object", "properties": props, "additionalProperties": false}}
}

func (h *Handler) handle(g Graph) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		call, err := parseCall(g, req.Params.Arguments)
		if err != nil {
			return errorResult(err), nil
		}
		tok := req.Params.GetProgressToken()
		progress := func(p Progress) {
			if tok == nil || req.Session == nil {
				return
			}
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(p.Done), Message: p.Message})
		}
		out, err := h.runner.Run(ctx, call, progress)
		if err != nil {
			return errorResult(err), nil
		}
		return result(g, out), nil
	}
}

// parseCall checks a call's arguments against the graph's fields.
func parseCall(g Graph, raw json.RawMessage) (Call, error) {
	call := Call{Graph: g.Name}
	args := map[string]any{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &args); err != nil {
			return call, fmt.Errorf("arguments must be a JSON object: %w", err)
		}
	}
	fields := map[string]Field{}
	for _, f := range g.Fields {
		if !f.Messages {
			fields[f.Name] = f
		}
	}
	mf := messagesField(g)
	input := map[string]any{}
	var unknown []string
	for k, v := range args {
		switch {
		case k == ArgThreadID:
			s, ok := v.(string)
			if !ok {
				return call, errors.New("thread_id must be a string")
			}
			call.ThreadID = s
		case k == ArgResume:
			if v == nil {
				return call, errors.New("resume must be the answer to the pending question, not null")
			}
			call.Resume, call.HasResume = v, true
		case k == ArgMessage && mf != "":
			s, ok := v.(string)
			if !ok {
				return call, errors.New("message must be a string")
			}
			if s != "" {
				input[mf] = []any{map[string]any{"role": "user", "content": s}}
			}
		default:
			if _, ok := fields[k]; !ok {
				unknown = append(unknown, k)
				continue
			}
			if v != nil {
				input[k] = v
			}
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		names := make([]string, 0, len(fields)+3)
		if mf != "" {
			names = append(names, ArgMessage)
		}
		for _, f := range g.Fields {
			if !f.Messages {
				names = append(names, f.Name)
			}
		}
		names = append(names, ArgThreadID, ArgResume)
		return call, fmt.Errorf("unknown argument %s; tool %s takes %s", strings.Join(unknown, ", "), g.Name, strings.Join(names, ", "))
	}
	if call.HasResume {
		if len(input) > 0 {
			return call, errors.New("give either resume (to answer the pending question) or new input, not both")
		}
		if call.ThreadID == "" {
			return call, errors.New("resume needs the thread_id of the conversation that is waiting")
		}
		return call, nil
	}
	call.Input = input
	return call, nil
}

func errorResult(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
}

// result renders an outcome: the replies (and, when the graph waits, what
// it asks and how to answer) as text, everything as structured content.
func result(g Graph, out *Outcome) *mcp.CallToolResult {
	var b strings.Builder
	for _, r := range out.Replies {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(r)
	}
	switch out.Status {
	case "interrupted":
		for _, in := range out.Interrupts {
			if b.Len() > 0 {
				b.WriteString("\n\n")
			}
			q := in.Message
			if q == "" {
				pb, _ := json.Marshal(in.Payload)
				q = string(pb)
			}
			fmt.Fprintf(&b, "The graph is waiting for an answer (interrupt %s at node %s): %s\nTo answer, call %s again with {\"thread_id\": %q, \"resume\": <the answer>}.",
				in.ID, in.Node, q, g.Name, out.ThreadID)
		}
	case "error":
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "The run failed: %s", out.Error)
	}
	if b.Len() == 0 {
		b.WriteString("The run completed without a reply.")
	}
	fmt.Fprintf(&b, "\n\n(thread_id: %s)", out.ThreadID)
	if out.Replies == nil {
		out.Replies = []string{}
	}
	return &mcp.CallToolResult{IsError: out.Status == "error", Content: []mcp.Content{&mcp.TextContent{Text: b.String()}}, StructuredContent: out}
}
