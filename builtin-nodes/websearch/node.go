package websearch

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/graphctl/graphctl/builtin-nodes/internal/check"
	"github.com/graphctl/graphctl/builtin-nodes/tool"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/telemetry"
)

// ClientKey is the node.Services.Extra key of a *Client given to the engine
// (engine.Options.Extra); without one, the node reads the environment.
var ClientKey = node.NewKey[*Client]("websearch.tavily")

// EventType is the type of the event every web_search node run emits.
const EventType = "web_search"

// Unavailable is the phrase the node's reason and event carry when there is
// no API key, for graphs and people to match on.
const Unavailable = "no web search available"

// ConfigSchema is the CUE schema of a web_search node's config.
const ConfigSchema = `{
	query: string
	decide?: string
	reason?: string
	search_depth?: *"basic" | "advanced" | "fast" | "ultra-fast"
	topic?: *"general" | "news" | "finance"
	time_range?: "day" | "week" | "month" | "year"
	max_results?: *5 | int & >=1 & <=20
	include_domains?: [...string]
	exclude_domains?: [...string]
	include_answer?: bool
	field?: *"web" | string
}`

func init() {
	node.MustRegister(node.Type{
		Name: "web_search",
		Description: "Searches the web with Tavily (TAVILY_API_KEY) and writes the results as citations; " +
			"without a key it says \"" + Unavailable + "\" and the graph goes on.",
		Config: ConfigSchema,
		New:    newNode,
	})
	tool.MustRegister(tool.Tool{
		Name:        "web_search",
		Description: "Searches the web (Tavily) and returns the top results with their URLs, titles and snippets.",
		Input: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"query":           map[string]any{"type": "string", "description": "what to search for"},
				"max_results":     map[string]any{"type": "integer", "description": "how many results (1-20, default 5)"},
				"time_range":      map[string]any{"type": "string", "description": "day, week, month or year"},
				"include_domains": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
				"exclude_domains": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			},
			"required": []any{"query"},
		},
		Func: searchTool,
	})
}

type webNode struct {
	query  node.Template
	decide node.Expr
	reason node.Template
	req    Request
	field  string
}

func newNode(b node.Builder) (node.Node, error) {
	var cfg struct {
		Query          string   `json:"query"`
		Decide         string   `json:"decide"`
		Reason         string   `json:"reason"`
		SearchDepth    string   `json:"search_depth"`
		Topic          string   `json:"topic"`
		TimeRange      string   `json:"time_range"`
		MaxResults     int      `json:"max_results"`
		IncludeDomains []string `json:"include_domains"`
		ExcludeDomains []string `json:"exclude_domains"`
		IncludeAnswer  bool     `json:"include_answer"`
		Field          string   `json:"field"`
	}
	if err := b.Decode(&cfg); err != nil {
		b.Errorf("", "invalid-config", "web_search node %q: %v", b.NodeName(), err)
		return nil, nil
	}
	n := &webNode{field: cfg.Field, req: Request{
		SearchDepth: cfg.SearchDepth, Topic: cfg.Topic, TimeRange: cfg.TimeRange, MaxResults: cfg.MaxResults,
		IncludeDomains: cfg.IncludeDomains, ExcludeDomains: cfg.ExcludeDomains, IncludeAnswer: cfg.IncludeAnswer,
	}}
	if n.field == "" {
		n.field = "web"
	}
	if n.req.MaxResults == 0 {
		n.req.MaxResults = 5
	}
	n.query = b.Template("query", cfg.Query)
	if cfg.Decide != "" {
		n.decide = b.Expr("decide", cfg.Decide, graph.Bool)
	}
	if cfg.Reason != "" {
		n.reason = b.Template("reason", cfg.Reason)
	}
	for i, d := range append(append([]string(nil), cfg.IncludeDomains...), cfg.ExcludeDomains...) {
		if strings.TrimSpace(d) == "" || strings.Contains(d, "://") || strings.Contains(d, "/") {
			path := fmt.Sprintf("include_domains.%d", i)
			if i >= len(cfg.IncludeDomains) {
				path = fmt.Sprintf("exclude_domains.%d", i-len(cfg.IncludeDomains))
			}
			b.Errorf(path, "invalid-config", "web_search node %q: domain %q: write a bare domain such as docs.drift.trade", b.NodeName(), d)
		}
	}
	if f := check.Field(b, "field", n.field); f != nil && f.Type.Kind != graph.Object && f.Type.Kind != graph.Any {
		b.Errorf("field", "invalid-config", "web_search node %q writes an object to %q, which is declared %s; declare it {type: \"object\"}", b.NodeName(), n.field, f.Type)
	}
	if b.Failed() {
		return nil, nil
	}
	return n, nil
}

// clientOf returns the engine's client or one from the environment.
func clientOf(s *node.Services) (*Client, error) {
	if s != nil {
		if c, ok := ClientKey.Get(s); ok && c != nil {
			return c, nil
		}
	}
	return FromEnv(nil)
}

// Run implements node.Node.
func (n *webNode) Run(ctx context.Context, in *node.Input) (node.Update, error) {
	query, err := n.query.Render(in.Scope)
	if err != nil {
		return nil, node.Errorf("template_error", "%s: query: %w", in.Node, err)
	}
	query = strings.Join(strings.Fields(query), " ")
	search, reason := true, "web search requested"
	if n.decide != nil {
		v, err := n.decide.Eval(in.Scope)
		if err != nil {
			return nil, node.Errorf("expression_error", "%s: decide (%s): %w", in.Node, n.decide.Source(), err)
		}
		search, _ = v.(bool)
		reason = fmt.Sprintf("decide (%s) is %t", n.decide.Source(), search)
	}
	if n.reason != nil {
		r, err := n.reason.Render(in.Scope)
		if err != nil {
			return nil, node.Errorf("template_error", "%s: reason: %w", in.Node, err)
		}
		if r = strings.TrimSpace(r); r != "" {
			reason = r
		}
	}
	if search && query == "" {
		search, reason = false, "the query is empty"
	}
	// Tavily refuses queries over 400 characters; keep the start.
	if r := []rune(query); len(r) > 400 {
		query = string(r[:400])
	}
	out := map[string]any{"query": query, "searched": false, "available": true, "reason": reason,
		"results": []any{}, "citations": []any{}, "count": 0}
	emit := func() {
		if in.Emit != nil {
			payload := map[string]any{}
			for _, k := range []string{"query", "searched", "available", "reason", "count"} {
				payload[k] = out[k]
			}
			in.Emit(event.Event{Type: EventType, Payload: payload})
		}
	}
	client, err := clientOf(in.Services)
	if errors.Is(err, ErrNoKey) {
		out["available"] = false
		out["reason"] = Unavailable + ": " + KeyEnv + " is not set"
		emit()
		return node.Update{n.field: out}, nil
	}
	if err != nil {
		return nil, node.Errorf("web_search_config", "%s: %w", in.Node, err)
	}
	if !search {
		emit()
		return node.Update{n.field: out}, nil
	}
	req := n.req
	req.Query = query
	spanCtx, span := telemetry.StartTool(ctx, "web_search", "")
	resp, err := client.Search(spanCtx, req)
	if resp != nil {
		span.SetAttributes(attribute.Int("graphctl.web.results", len(resp.Results)))
	}
	span.End(err)
	if err != nil {
		return nil, classify(in.Node, err)
	}
	cites := Citations(resp.Results)
	out["searched"] = true
	out["results"] = cites
	out["citations"] = cites
	out["count"] = len(cites)
	if resp.Answer != "" {
		out["answer"] = resp.Answer
	}
	emit()
	return node.Update{n.field: out}, nil
}

// classify turns a search failure into a node error: 429 and 5xx are
// retryable ("rate_limit", "web_search_error"), a bad key or plan limit is
// not, and network failures are retryable.
func classify(nodeName string, err error) error {
	var apiErr *APIError
	switch {
	case errors.As(err, &apiErr) && apiErr.Status == 429:
		return node.Retryable("rate_limit", fmt.Errorf("%s: %w", nodeName, err))
	case errors.As(err, &apiErr) && apiErr.Retryable():
		return node.Retryable("web_search_error", fmt.Errorf("%s: %w", nodeName, err))
	case apiErr != nil:
		return node.Errorf("web_search_error", "%s: %w", nodeName, err)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("%s: %w", nodeName, err)
	}
	return node.Retryable("web_search_error", fmt.Errorf("%s: %w", nodeName, err))
}

// searchTool is the web_search builtin tool.
func searchTool(ctx context.Context, args map[string]any) (tool.Result, error) {
	client, err := FromEnv(nil)
	if err != nil {
		return tool.Result{}, err
	}
	req := Request{MaxResults: 5}
	req.Query, _ = args["query"].(string)
	if v, ok := args["max_results"].(float64); ok && v >= 1 && v <= 20 {
		req.MaxResults = int(v)
	}
	if v, ok := args["max_results"].(int); ok && v >= 1 && v <= 20 {
		req.MaxResults = v
	}
	req.TimeRange, _ = args["time_range"].(string)
	req.IncludeDomains = stringList(args["include_domains"])
	req.ExcludeDomains = stringList(args["exclude_domains"])
	resp, err := client.Search(ctx, req)
	if err != nil {
		return tool.Result{}, err
	}
	cites := Citations(resp.Results)
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d web result(s) for %q:", len(cites), req.Query)
	for _, c := range cites {
		m := c.(map[string]any)
		fmt.Fprintf(&sb, "\n[%s] %s (%s)\n%s", m["citation_id"], m["title"], m["url"], m["snippet"])
	}
	return tool.Result{Text: sb.String(), Data: cites}, nil
}

func stringList(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, x := range list {
		if s, ok := x.(string); ok && s != "" {
			out = append(out, s)
		}
	}
	return out
}
