package compile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/runtime/expression"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
)

// builder implements node.Builder for one node.
type builder struct {
	c      *compiler
	n      *graph.Node
	env    *expression.Env
	failed bool
}

var _ node.Builder = (*builder)(nil)

// reportedError marks an error the builder has already reported, so that a
// constructor returning it does not produce a second diagnostic.
type reportedError struct{ err error }

func (e *reportedError) Error() string { return e.err.Error() }
func (e *reportedError) Unwrap() error { return e.err }

// NodeName implements node.Builder.
func (b *builder) NodeName() string { return b.n.Name }

// Graph implements node.Builder.
func (b *builder) Graph() *graph.Graph { return b.c.g }

// Registry returns the registry the graph is compiled against, for
// node.RegistryOf.
func (b *builder) Registry() *node.Registry { return b.c.opts.Registry }

// Config implements node.Builder.
func (b *builder) Config() map[string]any { return b.n.Config }

// path returns the document path of a config path.
func (b *builder) path(rel string) string {
	p := "nodes." + b.n.Name + ".config"
	if rel != "" {
		p += "." + rel
	}
	return p
}

// posOf returns the position of a config path: the nearest enclosing value
// with a known position, else the node's own position.
func (b *builder) posOf(rel string) diag.Pos {
	return b.c.nearest(b.path(rel), b.n.Pos)
}

var unknownFieldRE = regexp.MustCompile(`unknown field "([^"]+)"`)

// Decode implements node.Builder: it decodes the config strictly (unknown keys
// are errors) into v and reports a problem at the offending config value.
func (b *builder) Decode(v any) error {
	cfg := b.n.Config
	if cfg == nil {
		cfg = map[string]any{}
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		b.Errorf("", CodeInvalidConfig, "node %q: config cannot be encoded: %v", b.n.Name, err)
		return &reportedError{fmt.Errorf("node %q: encode config: %w", b.n.Name, err)}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		rel, msg := b.describeDecodeError(err)
		b.Errorf(rel, CodeInvalidConfig, "node %q (type %q): %s", b.n.Name, b.n.Type, msg)
		return &reportedError{fmt.Errorf("node %q: decode config: %w", b.n.Name, err)}
	}
	return nil
}

// describeDecodeError locates a JSON decoding error inside the config and
// phrases it for a graph author.
func (b *builder) describeDecodeError(err error) (rel, msg string) {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		want := te.Type.String()
		switch te.Type.Kind().String() {
		case "slice", "array":
			want = "list"
		case "map", "struct":
			want = "object"
		case "int", "int64", "int32", "float64", "float32", "uint", "uint64":
			want = "number"
		}
		if te.Field != "" {
			return te.Field, fmt.Sprintf("%s must be a %s, not a %s", te.Field, want, te.Value)
		}
		return "", fmt.Sprintf("config must be a %s, not a %s", want, te.Value)
	}
	if m := unknownFieldRE.FindStringSubmatch(err.Error()); m != nil {
		key := m[1]
		if i := strings.LastIndexByte(key, '.'); i >= 0 {
			key = key[i+1:]
		}
		rel := findKey(b.n.Config, key, "")
		return rel, fmt.Sprintf("unknown config key %q", key)
	}
	return "", strings.TrimPrefix(err.Error(), "json: ")
}

// findKey returns the config path of the first key named key, depth first in
// sorted key order, or "".
func findKey(v any, key, prefix string) string {
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x[key]; ok {
			return join(key)
		}
		for _, k := range sortedKeys(x) {
			if p := findKey(x[k], key, join(k)); p != "" {
				return p
			}
		}
	case []any:
		for i, item := range x {
			if p := findKey(item, key, join(fmt.Sprint(i))); p != "" {
				return p
			}
		}
	}
	return ""
}

// Expr implements node.Builder.
func (b *builder) Expr(rel, src string, want graph.Kind) node.Expr {
	before := len(b.c.diags)
	p := b.c.compileExpr(b.env, b.path(rel), b.posOf(rel), src, want)
	if len(b.c.diags) > before {
		b.failed = true
	}
	if p == nil {
		return nil
	}
	return p
}

// Template implements node.Builder.
func (b *builder) Template(rel, src string) node.Template {
	t, err := b.env.CompileTemplate(src)
	if err != nil {
		b.failed = true
		b.c.reportExprError(b.posOf(rel), b.path(rel), src, err, b.env, CodeTemplateError)
		return nil
	}
	b.c.warnLiteralInterpolations(b.env, b.path(rel), src, b.posOf(rel))
	for _, e := range t.Expressions() {
		b.c.warnMessageKeys(b.posOf(rel), b.path(rel), src, e.Source, e.Offset)
	}
	return t
}

// Errorf implements node.Builder.
func (b *builder) Errorf(rel, code, format string, args ...any) {
	b.failed = true
	b.c.errorf(b.posOf(rel), code, b.path(rel), format, args...)
}

// Warnf implements node.Builder.
func (b *builder) Warnf(rel, code, format string, args ...any) {
	b.c.diags.Warnf(b.posOf(rel), code, b.path(rel), format, args...)
}

// Failed implements node.Builder.
func (b *builder) Failed() bool { return b.failed }
