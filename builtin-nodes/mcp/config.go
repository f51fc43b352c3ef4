package mcp

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/graphctl/graphctl/builtin-nodes/tool"
	"github.com/graphctl/graphctl/runtime/graph"
)

// DefaultsKey is the key of the graph defaults block that declares MCP servers.
const DefaultsKey = "mcp_servers"

func init() {
	graph.MustRegisterDefaultsKey(graph.DefaultsKey{Name: DefaultsKey, Schema: "[string]: {...}",
		Doc: "mcp_servers declares the MCP tool servers, by name: {command: [...],\n" +
			"env: {...}} (stdio), {url: \"http://…/mcp\", headers: {...}} (streamable\n" +
			"HTTP) or {builtin: true} (graphctl's builtin tools)."})
}

// Value is a configuration string given literally or read from an
// environment variable ({env: "VAR"}) when a connection is made, so that
// secrets never appear in graph files.
type Value struct {
	// Literal is the value written in the graph file.
	Literal string `json:"literal,omitempty"`
	// Env names the environment variable holding the value.
	Env string `json:"env,omitempty"`
}

// Resolve returns the value, reading the environment for an env reference.
// An unset variable is an error naming it.
func (v Value) Resolve() (string, error) {
	if v.Env == "" {
		return v.Literal, nil
	}
	s, ok := os.LookupEnv(v.Env)
	if !ok {
		return "", fmt.Errorf("environment variable %s is not set", v.Env)
	}
	return s, nil
}

// ServerConfig is one declared MCP server: a command started with stdio
// transport, a URL reached over the streamable HTTP transport, or the
// builtin Go tools served in process ({builtin: true} or {builtin: [names]}).
type ServerConfig struct {
	// Name is the server's key under defaults.mcp_servers.
	Name string `json:"name"`
	// Command is the program and its arguments (stdio transport).
	Command []string `json:"command,omitempty"`
	// Env is added to the command's environment.
	Env map[string]Value `json:"env,omitempty"`
	// URL is the streamable HTTP endpoint.
	URL string `json:"url,omitempty"`
	// Headers are sent with every HTTP request.
	Headers map[string]Value `json:"headers,omitempty"`
	// Builtin serves tools of a builtin-nodes/tool registry in process.
	Builtin bool `json:"builtin,omitempty"`
	// BuiltinTools selects the builtin tools served; empty means all.
	BuiltinTools []string `json:"builtin_tools,omitempty"`

	// tools is the tool registry a builtin entry serves from (the one of
	// the node registry the graph is compiled against); nil means
	// tool.Default().
	tools *tool.Registry
}

// Stdio reports whether the server is started as a command.
func (c ServerConfig) Stdio() bool { return len(c.Command) > 0 }

// UnsetEnv lists the environment variables the config refers to that are
// not set, sorted.
func (c ServerConfig) UnsetEnv() []string {
	var out []string
	for _, m := range []map[string]Value{c.Env, c.Headers} {
		for _, v := range m {
			if v.Env != "" {
				if _, ok := os.LookupEnv(v.Env); !ok {
					out = append(out, v.Env)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// fingerprint identifies a configuration so that two graphs declaring the
// same server name differently never share a connection.
func (c ServerConfig) fingerprint() string {
	raw, _ := json.Marshal(c) // maps are marshaled in key order
	return string(raw)
}

// Servers parses the mcp_servers block of a graph's defaults, with the
// builtin entries serving the default tool registry; see ServersWith.
func Servers(g *graph.Graph) (map[string]ServerConfig, error) { return ServersWith(g, nil) }

// ServersWith parses the mcp_servers block of a graph's defaults; builtin
// entries name and serve tools of tools (nil: tool.Default()). A graph
// without the block has no servers (an empty map, no error).
func ServersWith(g *graph.Graph, tools *tool.Registry) (map[string]ServerConfig, error) {
	out := map[string]ServerConfig{}
	if g == nil || g.Defaults.Raw == nil {
		return out, nil
	}
	raw, ok := g.Defaults.Raw[DefaultsKey]
	if !ok || raw == nil {
		return out, nil
	}
	block, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("defaults.%s must be a map from server name to server, got %T", DefaultsKey, raw)
	}
	var problems []string
	for name, v := range block {
		cfg, err := parseServer(name, v, tools)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		out[name] = cfg
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return out, nil
}

// Server returns the declared server with the given name, or an error that
// lists the declared ones; builtin entries serve the default tool registry.
func Server(g *graph.Graph, name string) (ServerConfig, error) { return ServerWith(g, name, nil) }

// ServerWith is Server with builtin entries serving tools (nil:
// tool.Default()).
func ServerWith(g *graph.Graph, name string, tools *tool.Registry) (ServerConfig, error) {
	servers, err := ServersWith(g, tools)
	if err != nil {
		return ServerConfig{}, err
	}
	cfg, ok := servers[name]
	if !ok {
		return ServerConfig{}, fmt.Errorf("MCP server %q is not declared in defaults.%s (declared: %s)",
			name, DefaultsKey, declared(servers))
	}
	return cfg, nil
}

func declared(servers map[string]ServerConfig) string {
	if len(servers) == 0 {
		return "none"
	}
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// parseServer reads one mcp_servers entry in named parts: the keys, then a
// builtin entry, or a command or URL with its environment or headers.
func parseServer(name string, v any, tools *tool.Registry) (ServerConfig, error) {
	at := fmt.Sprintf("defaults.%s.%s", DefaultsKey, name)
	m, ok := v.(map[string]any)
	if !ok {
		return ServerConfig{}, fmt.Errorf("%s must be {command: [...]}, {url: \"...\"} or {builtin: true}, got %T", at, v)
	}
	for k := range m {
		switch k {
		case "command", "env", "url", "headers", "builtin":
		default:
			return ServerConfig{}, fmt.Errorf("%s: unknown key %q (want command and env, url and headers, or builtin)", at, k)
		}
	}
	cfg := ServerConfig{Name: name}
	if b, has := m["builtin"]; has {
		if len(m) != 1 {
			return ServerConfig{}, fmt.Errorf("%s: builtin serves builtin tools in process and takes no command, url, env or headers", at)
		}
		cfg.tools = tools
		return cfg, parseBuiltin(at, b, &cfg)
	}
	if err := parseTransport(at, m, &cfg); err != nil {
		return ServerConfig{}, err
	}
	if err := parseEnvAndHeaders(at, m, &cfg); err != nil {
		return ServerConfig{}, err
	}
	return cfg, nil
}

// parseBuiltin reads builtin: true (every builtin tool) or a list of names.
func parseBuiltin(at string, b any, cfg *ServerConfig) error {
	switch x := b.(type) {
	case bool:
		if !x {
			return fmt.Errorf("%s.builtin must be true (every builtin tool) or a list of tool names; remove the server to disable it", at)
		}
	case []any:
		if len(x) == 0 {
			return fmt.Errorf("%s.builtin lists no tools; write builtin: true for all of them", at)
		}
		for i, item := range x {
			s, ok := item.(string)
			if !ok || s == "" {
				return fmt.Errorf("%s.builtin[%d] must be a tool name, got %v", at, i, item)
			}
			cfg.BuiltinTools = append(cfg.BuiltinTools, s)
		}
		if _, err := builtinTools(cfg.tools, cfg.BuiltinTools); err != nil {
			return fmt.Errorf("%s.builtin: %w", at, err)
		}
	default:
		return fmt.Errorf("%s.builtin must be true or a list of tool names, got %T", at, b)
	}
	cfg.Builtin = true
	return nil
}

// parseTransport reads the command (stdio) or the url (streamable HTTP);
// exactly one must be given.
func parseTransport(at string, m map[string]any, cfg *ServerConfig) error {
	if c, has := m["command"]; has {
		list, ok := c.([]any)
		if !ok || len(list) == 0 {
			return fmt.Errorf("%s.command must be a non-empty list of strings", at)
		}
		for i, item := range list {
			s, ok := item.(string)
			if !ok || (i == 0 && s == "") {
				return fmt.Errorf("%s.command[%d] must be a non-empty string, got %v", at, i, item)
			}
			cfg.Command = append(cfg.Command, s)
		}
	}
	if u, has := m["url"]; has {
		s, ok := u.(string)
		if !ok || s == "" {
			return fmt.Errorf("%s.url must be a non-empty string", at)
		}
		if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
			return fmt.Errorf("%s.url %q must start with http:// or https://", at, s)
		}
		cfg.URL = s
	}
	switch {
	case cfg.Command == nil && cfg.URL == "":
		return fmt.Errorf("%s needs command (stdio) or url (streamable HTTP), or builtin: true (builtin tools in process)", at)
	case cfg.Command != nil && cfg.URL != "":
		return fmt.Errorf("%s sets both command and url; choose one transport", at)
	}
	return nil
}

// parseEnvAndHeaders reads env (for a command) and headers (for a url).
func parseEnvAndHeaders(at string, m map[string]any, cfg *ServerConfig) error {
	var err error
	if cfg.Env, err = parseValues(at+".env", m["env"]); err != nil {
		return err
	}
	if cfg.Headers, err = parseValues(at+".headers", m["headers"]); err != nil {
		return err
	}
	if cfg.Env != nil && cfg.URL != "" {
		return fmt.Errorf("%s.env applies to a command; an HTTP server takes headers", at)
	}
	if cfg.Headers != nil && cfg.Command != nil {
		return fmt.Errorf("%s.headers apply to a url; a command takes env", at)
	}
	return nil
}

func parseValues(at string, v any) (map[string]Value, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s must be a map of strings or {env: \"VAR\"}, got %T", at, v)
	}
	out := make(map[string]Value, len(m))
	for k, item := range m {
		switch x := item.(type) {
		case string:
			out[k] = Value{Literal: x}
		case map[string]any:
			name, ok := x["env"].(string)
			if !ok || name == "" || len(x) != 1 {
				return nil, fmt.Errorf("%s.%s must be a string or {env: \"VAR\"}", at, k)
			}
			out[k] = Value{Env: name}
		default:
			return nil, fmt.Errorf("%s.%s must be a string or {env: \"VAR\"}, got %T", at, k, item)
		}
	}
	return out, nil
}
