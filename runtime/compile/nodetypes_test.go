package compile

import (
	"context"
	"errors"

	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
)

// Node types used by this package's tests only.
func init() {
	// A defaults key as node packages declare them (testdata uses it).
	graph.MustRegisterDefaultsKey(graph.DefaultsKey{Name: "servers", Schema: "[string]: {...}", Doc: "tool servers, by name"})
	node.MustRegister(node.Type{
		Name:        "compiletest_text",
		Description: "replies with a template",
		Config:      `{text: string}`,
		New: func(b node.Builder) (node.Node, error) {
			var cfg struct {
				Text string `json:"text"`
			}
			if err := b.Decode(&cfg); err != nil {
				return nil, err
			}
			tpl := b.Template("text", cfg.Text)
			if b.Failed() {
				return nil, nil
			}
			return node.Func(func(_ context.Context, in *node.Input) (node.Update, error) {
				s, err := tpl.Render(in.Scope)
				if err != nil {
					return nil, err
				}
				return node.Update{"reply": s}, nil
			}), nil
		},
	})
	node.MustRegister(node.Type{
		Name:        "compiletest_when",
		Description: "evaluates a condition",
		Config:      `{when: string}`,
		New: func(b node.Builder) (node.Node, error) {
			var cfg struct {
				When string `json:"when"`
			}
			if err := b.Decode(&cfg); err != nil {
				return nil, err
			}
			e := b.Expr("when", cfg.When, graph.Bool)
			if b.Failed() {
				return nil, nil
			}
			return node.Func(func(_ context.Context, in *node.Input) (node.Update, error) {
				v, err := e.Eval(in.Scope)
				if err != nil {
					return nil, err
				}
				return node.Update{"ok": v}, nil
			}), nil
		},
	})
	node.MustRegister(node.Type{
		Name:        "compiletest_noop",
		Description: "does nothing",
		Config:      `{limit?: int, nested?: {depth?: int}, key?: _}`,
		New: func(b node.Builder) (node.Node, error) {
			var cfg struct {
				Limit  int `json:"limit"`
				Nested struct {
					Depth int `json:"depth"`
				} `json:"nested"`
				Key any `json:"key"`
			}
			if err := b.Decode(&cfg); err != nil {
				return nil, err
			}
			if cfg.Limit > 100 {
				b.Errorf("limit", "invalid-config", "limit must be at most 100, got %d", cfg.Limit)
				return nil, nil
			}
			return node.Func(func(context.Context, *node.Input) (node.Update, error) { return nil, nil }), nil
		},
	})
	node.MustRegister(node.Type{
		Name:        "compiletest_broken",
		Description: "always fails to build",
		New: func(node.Builder) (node.Node, error) {
			return nil, errors.New("model registry is empty")
		},
	})
}
