// Package tool holds the registry of builtin Go tools and provides the tool
// node type, which calls one of them with arguments computed from state.
//
// A tool declares its input as a JSON Schema object (properties with a type,
// required names); arguments are checked against it before every call, so a
// tool function only ever sees arguments of the declared shapes.
//
// Node config:
//
//	{tool: "diagnose_repair", args: {model: "model", symptoms: "symptoms"}, output: "result"}
//
// Each argument is an expression. The result is appended to the messages
// field as an assistant message "[TOOL USED: <name>]\n\n<text>" (reply: false
// turns that off) and, with output, written to a declared field as
// {"tool", "args", "text", "data"}. Every call emits a tool_result event.
// A failing tool fails the node with code "tool_error"; arguments that do not
// fit the schema fail it with "invalid_arguments".
package tool

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/graphctl/graphctl/runtime/node"
)

// Result is what a tool returns: text for people (and chat history) and data
// for later nodes.
type Result struct {
	Text string
	Data any
}

// Tool is a builtin Go tool.
type Tool struct {
	// Name is how graph files refer to the tool.
	Name string
	// Description is one line for listings and for models choosing a tool.
	Description string
	// Input is the JSON Schema of the arguments: {"type": "object",
	// "properties": {...}, "required": [...]}.
	Input map[string]any
	// Func runs the tool with arguments that passed Input.
	Func func(ctx context.Context, args map[string]any) (Result, error)
}

// Registry is a set of builtin tools. Packages register theirs in init into
// the default registry (Default, which the package-level functions act on);
// a program or a test with a set of its own attaches a Registry to the
// node.Registry it compiles graphs against (Use), and the tool node and the
// llm node's tools list resolve names in it. A Registry is safe for
// concurrent use.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]Tool
}

// NewRegistry returns an empty tool registry.
func NewRegistry() *Registry { return &Registry{tools: map[string]Tool{}} }

var defaultRegistry = NewRegistry()

// Default returns the tool registry that Register, MustRegister, Lookup,
// List and Names act on, and that graphs use unless their node registry has
// another attached.
func Default() *Registry { return defaultRegistry }

// registryKey is the key a tool registry is attached to a node registry
// under.
var registryKey = node.NewKey[*Registry]("tool.registry")

// Use attaches tools to r: graphs compiled against r resolve builtin tool
// names in tools.
func Use(r *node.Registry, tools *Registry) { node.Attach(r, registryKey, tools) }

// Of returns the tools graphs compiled against r resolve names in: the
// registry Use attached to r, else Default().
func Of(r *node.Registry) *Registry {
	if tools, ok := node.Attached(r.OrDefault(), registryKey); ok && tools != nil {
		return tools
	}
	return defaultRegistry
}

// Clone returns a new registry holding r's tools.
func (r *Registry) Clone() *Registry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := NewRegistry()
	for name, t := range r.tools {
		out.tools[name] = t
	}
	return out
}

// Register adds a tool. It fails on an empty name, a missing function, a
// name already taken, or an Input schema this package cannot check.
func (r *Registry) Register(t Tool) error {
	if t.Name == "" || t.Func == nil {
		return fmt.Errorf("tool %q: a name and a function are required", t.Name)
	}
	if err := checkSchema(t.Input); err != nil {
		return fmt.Errorf("tool %q: input schema: %w", t.Name, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.tools[t.Name]; dup {
		return fmt.Errorf("tool %q is already registered", t.Name)
	}
	r.tools[t.Name] = t
	return nil
}

// MustRegister is Register for init functions; a failure is a programming
// error in the registering package and panics at start-up.
func (r *Registry) MustRegister(t Tool) {
	if err := r.Register(t); err != nil {
		panic(err)
	}
}

// Lookup returns the tool with the given name.
func (r *Registry) Lookup(name string) (Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// List returns every tool of r, sorted by name.
func (r *Registry) List() []Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Tool, 0, len(r.tools))
	for _, t := range r.tools {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Names returns the names of the tools of r, sorted.
func (r *Registry) Names() []string {
	tools := r.List()
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}

// Register adds a tool to the default registry; see Registry.Register.
func Register(t Tool) error { return defaultRegistry.Register(t) }

// MustRegister adds a tool to the default registry in an init function;
// see Registry.MustRegister.
func MustRegister(t Tool) { defaultRegistry.MustRegister(t) }

// Lookup returns the tool of the default registry with the given name.
func Lookup(name string) (Tool, bool) { return defaultRegistry.Lookup(name) }

// List returns every tool of the default registry, sorted by name.
func List() []Tool { return defaultRegistry.List() }

// Names returns the names of the default registry's tools, sorted.
func Names() []string { return defaultRegistry.Names() }

// Properties returns the declared argument schemas of a tool's Input.
func (t Tool) Properties() map[string]map[string]any {
	return properties(t.Input)
}

// Required returns the names of the required arguments.
func (t Tool) Required() []string {
	return required(t.Input)
}

func properties(schema map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	props, _ := schema["properties"].(map[string]any)
	for k, v := range props {
		if m, ok := v.(map[string]any); ok {
			out[k] = m
		}
	}
	return out
}

func required(schema map[string]any) []string {
	switch r := schema["required"].(type) {
	case []string:
		return r
	case []any:
		out := make([]string, 0, len(r))
		for _, v := range r {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

var knownTypes = map[string]bool{"string": true, "integer": true, "number": true, "boolean": true, "array": true, "object": true}

func checkSchema(schema map[string]any) error {
	if schema == nil {
		return nil
	}
	if t, ok := schema["type"]; ok && t != "object" {
		return fmt.Errorf("type must be \"object\", got %v", t)
	}
	props := properties(schema)
	for name, p := range props {
		if t, ok := p["type"].(string); ok && !knownTypes[t] {
			return fmt.Errorf("property %q: unknown type %q", name, t)
		}
	}
	for _, r := range required(schema) {
		if _, ok := props[r]; !ok {
			return fmt.Errorf("required argument %q is not among the properties", r)
		}
	}
	return nil
}

// ValidateArgs checks args against a JSON Schema object: every required
// argument present and non-empty, every argument declared (unless
// additionalProperties is true), and each of the declared type and enum.
func ValidateArgs(schema map[string]any, args map[string]any) error {
	if schema == nil {
		return nil
	}
	props := properties(schema)
	var problems []string
	for _, r := range required(schema) {
		v, ok := args[r]
		if !ok || v == nil || v == "" {
			problems = append(problems, fmt.Sprintf("missing required argument %q", r))
		}
	}
	names := make([]string, 0, len(args))
	for k := range args {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		p, ok := props[k]
		if !ok {
			if extra, _ := schema["additionalProperties"].(bool); !extra {
				problems = append(problems, fmt.Sprintf("unknown argument %q", k))
			}
			continue
		}
		if err := validateValue(p, args[k]); err != nil {
			problems = append(problems, fmt.Sprintf("argument %q: %v", k, err))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

func validateValue(schema map[string]any, v any) error {
	if v == nil {
		return nil
	}
	typ, _ := schema["type"].(string)
	ok := true
	switch typ {
	case "string":
		_, ok = v.(string)
	case "boolean":
		_, ok = v.(bool)
	case "integer":
		switch n := v.(type) {
		case int, int64, int32:
		case float64:
			ok = n == float64(int64(n))
		default:
			ok = false
		}
	case "number":
		switch v.(type) {
		case int, int64, int32, float64, float32:
		default:
			ok = false
		}
	case "object":
		_, ok = v.(map[string]any)
	case "array":
		items, isList := v.([]any)
		if !isList {
			if ss, isStrings := v.([]string); isStrings {
				items, isList = make([]any, len(ss)), true
				for i, s := range ss {
					items[i] = s
				}
			}
		}
		if !isList {
			ok = false
			break
		}
		if itemSchema, has := schema["items"].(map[string]any); has {
			for i, item := range items {
				if err := validateValue(itemSchema, item); err != nil {
					return fmt.Errorf("item %d: %w", i, err)
				}
			}
		}
	}
	if !ok {
		return fmt.Errorf("want %s, got %T", typ, v)
	}
	if enum, has := schema["enum"].([]any); has {
		for _, e := range enum {
			if e == v {
				return nil
			}
		}
		return fmt.Errorf("%v is not one of %v", v, enum)
	}
	return nil
}
