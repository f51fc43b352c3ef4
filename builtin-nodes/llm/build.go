package llm

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/graphctl/graphctl/builtin-nodes/contract"
	"github.com/graphctl/graphctl/builtin-nodes/internal/check"
	"github.com/graphctl/graphctl/builtin-nodes/internal/suggest"
	"github.com/graphctl/graphctl/builtin-nodes/mcp"
	"github.com/graphctl/graphctl/builtin-nodes/tool"
	"github.com/graphctl/graphctl/runtime/node"
)

type config struct {
	Model   string `json:"model"`
	System  string `json:"system"`
	Context []struct {
		Title string `json:"title"`
		Text  string `json:"text"`
	} `json:"context"`
	MessagesField string   `json:"messages_field"`
	History       int      `json:"history"`
	Stream        *bool    `json:"stream"`
	Temperature   *float64 `json:"temperature"`
	MaxTokens     int      `json:"max_tokens"`
	Output        *struct {
		Format string            `json:"format"`
		Schema map[string]any    `json:"schema"`
		Fields map[string]string `json:"fields"`
	} `json:"output"`
	Reply          *bool    `json:"reply"`
	ReplyFrom      string   `json:"reply_from"`
	Tools          []string `json:"tools"`
	MCPToolNames   string   `json:"mcp_tool_names"`
	ContractsField string   `json:"contracts_field"`
}

// newLLMNode builds an llm node in named parts: the model, the prompt, the
// output, the tools. Every problem is reported at its config path.
func newLLMNode(b node.Builder) (node.Node, error) {
	var cfg config
	if err := b.Decode(&cfg); err != nil {
		b.Errorf("", "invalid-config", "llm node %q: %v", b.NodeName(), err)
		return nil, nil
	}
	n := &llmNode{
		name: b.NodeName(), g: b.Graph(), model: cfg.Model, graphDefault: GraphDefault(b.Graph()),
		messages: cfg.MessagesField, history: cfg.History, stream: cfg.Stream == nil || *cfg.Stream,
		temperature: cfg.Temperature, maxTokens: cfg.MaxTokens, format: "text",
		reply: cfg.Reply == nil || *cfg.Reply, replyFrom: cfg.ReplyFrom, contracts: cfg.ContractsField,
		toolNames: cfg.MCPToolNames,
	}
	if n.messages == "" {
		n.messages = "messages"
	}
	if n.toolNames == "" {
		n.toolNames = DefaultToolNameFormat
	}
	n.buildModel(b, cfg)
	n.buildPrompt(b, cfg)
	n.buildOutput(b, cfg)
	n.buildTools(b, cfg)
	if b.Failed() {
		return nil, nil
	}
	return n, nil
}

// buildModel checks the model spec, and the file of a script:FILE model.
func (n *llmNode) buildModel(b node.Builder, cfg config) {
	if cfg.Model == "" {
		return
	}
	provider, file, err := ParseSpec(cfg.Model)
	if err != nil {
		b.Errorf("model", "invalid-config", "%v", err)
		return
	}
	if provider == "script" && file != "" && b.Graph().File != "" {
		if !filepath.IsAbs(file) {
			file = filepath.Join(filepath.Dir(b.Graph().File), file)
		}
		if _, err := LoadScript(file); err != nil {
			b.Errorf("model", "invalid-config", "%v", err)
		}
	}
}

// buildPrompt compiles the system template and the context blocks and checks
// the messages field.
func (n *llmNode) buildPrompt(b node.Builder, cfg config) {
	check.MessagesField(b, "messages_field", n.messages)
	if cfg.System != "" {
		n.system = b.Template("system", cfg.System)
	}
	for i, c := range cfg.Context {
		if t := b.Template(fmt.Sprintf("context.%d.text", i), c.Text); t != nil {
			n.context = append(n.context, contextBlock{title: c.Title, text: t})
		}
	}
}

// buildOutput checks the output format, its schema and the fields it writes,
// and reply_from.
func (n *llmNode) buildOutput(b node.Builder, cfg config) {
	if o := cfg.Output; o != nil {
		if o.Format != "" {
			n.format = o.Format
		}
		if n.format != "text" && n.format != "json" {
			b.Errorf("output.format", "invalid-config", "output format must be \"text\" or \"json\", got %q", n.format)
		}
		if o.Schema != nil {
			if n.format != "json" {
				b.Errorf("output.schema", "invalid-config", "an output schema needs format \"json\"")
			}
			if err := CheckSchema(o.Schema); err != nil {
				b.Errorf("output.schema", "invalid-config", "output schema: %v", err)
			}
			n.schema = o.Schema
		}
		n.buildOutputFields(b, o.Fields)
	}
	if n.replyFrom != "" && n.format != "json" {
		b.Errorf("reply_from", "invalid-config", "reply_from reads a JSON path and needs output format \"json\"")
	}
}

// buildOutputFields checks each state field a JSON output writes and its path.
func (n *llmNode) buildOutputFields(b node.Builder, fields map[string]string) {
	if len(fields) == 0 {
		return
	}
	if n.format != "json" {
		b.Errorf("output.fields", "invalid-config", "output fields are JSON paths into the reply and need format \"json\"")
	}
	n.fields = map[string]string{}
	for _, field := range sortedKeys(fields) {
		path := fields[field]
		if check.Field(b, "output.fields."+field, field) == nil {
			continue
		}
		if strings.TrimSpace(path) == "" {
			b.Errorf("output.fields."+field, "invalid-config", "output field %q: give the JSON path in the reply to read, e.g. \"response\"", field)
			continue
		}
		n.fields[field] = path
	}
}

// buildTools resolves the tools list (builtin tools by name, MCP tools as
// mcp:<server>/<tool> or mcp:<server>/*), the MCP naming format and the
// contracts field tool calls go to.
func (n *llmNode) buildTools(b node.Builder, cfg config) {
	if n.contracts != "" {
		if f := check.Field(b, "contracts_field", n.contracts); f != nil && f.Type.Kind != contract.Kind {
			b.Errorf("contracts_field", "invalid-config", "contracts_field %q is declared as %s; tool calls go to a field of type contracts", n.contracts, f.Type)
		}
	}
	if err := checkToolNameFormat(n.toolNames); err != nil {
		b.Errorf("mcp_tool_names", "invalid-config", "%v", err)
	}
	for i, name := range cfg.Tools {
		if ref, ok := resolveToolRef(b, fmt.Sprintf("tools.%d", i), name); ok {
			n.toolRefs = append(n.toolRefs, ref)
		}
	}
	if len(cfg.Tools) > 0 && n.contracts == "" {
		b.Errorf("contracts_field", "invalid-config", "llm node %q offers tools but sets no contracts_field: name the contracts field its tool calls go to", b.NodeName())
	}
}

// resolveToolRef resolves one entry of the tools list, reporting at path.
func resolveToolRef(b node.Builder, path, name string) (toolRef, bool) {
	if rest, ok := strings.CutPrefix(name, "mcp:"); ok {
		server, toolName, ok := strings.Cut(rest, "/")
		if !ok || server == "" || toolName == "" {
			b.Errorf(path, "invalid-config", "MCP tool %q: want mcp:<server>/<tool> or mcp:<server>/*", name)
			return toolRef{}, false
		}
		if _, err := mcp.ServerWith(b.Graph(), server, tool.Of(node.RegistryOf(b))); err != nil {
			b.Errorf(path, "unknown-tool", "MCP tool %q: %v", name, err)
			return toolRef{}, false
		}
		return toolRef{server: server, name: toolName}, true
	}
	tools := tool.Of(node.RegistryOf(b))
	t, ok := tools.Lookup(name)
	if !ok {
		b.Errorf(path, "unknown-tool", "tool %q is not registered%s; registered tools: %v; MCP tools are written mcp:<server>/<tool>",
			name, suggest.Hint(name, tools.Names()), tools.Names())
		return toolRef{}, false
	}
	return toolRef{builtin: &t}, true
}
