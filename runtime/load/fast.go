package load

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"

	"cuelang.org/go/cue/ast"

	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/graphschema"
)

// graphSchema is #Graph compiled for checking plain data; it is built once,
// at the first load, after node packages declared their defaults keys (in
// init), so the schema no longer changes.
var graphSchema = sync.OnceValues(func() (*schema, error) {
	return compileSchemaFile(graphschema.Source(), "#Graph")
})

// loadPlain loads a graph whose files are plain data without the CUE
// evaluator: it checks the document against #Graph and each node's config
// against its type's schema in Go, and decodes the graph. It reports false
// when the files are not plain data, a schema is beyond plain checking, or
// anything is wrong or uncertain: the evaluator then loads the graph and
// reports its problems. A graph it returns is the one the evaluator would
// return, with no diagnostics.
func (l *loader) loadPlain(asts []*ast.File, g *graph.Graph) bool {
	var doc any
	for i, af := range asts {
		o, ok := plainFile(af)
		if !ok {
			return false
		}
		if i == 0 {
			doc = o
			continue
		}
		// The evaluator orders the nodes and state fields that several
		// files declare otherwise than by first appearance.
		if _, ok := o.get("nodes"); ok {
			return false
		}
		if _, ok := o.get("state"); ok {
			return false
		}
		if doc, ok = mergePlain(doc, o); !ok {
			return false
		}
	}
	user := doc.(*object)
	if v, _ := user.get("dsl_version"); v != graph.DSLVersion {
		return false
	}
	gs, err := graphSchema()
	if err != nil {
		return false
	}
	if _, ok := gs.check(user); !ok {
		return false
	}
	before := len(l.diags)
	if !l.decodePlain(g, user) || len(l.diags) > before {
		l.diags = l.diags[:before]
		*g = graph.Graph{File: g.File, Pos: g.Pos, Literals: g.Literals}
		return false
	}
	m := plainGo(user).(map[string]any)
	delete(m, "tests")
	data, err := json.Marshal(m)
	if err != nil {
		return false
	}
	sum := sha256.Sum256(data)
	g.Hash = hex.EncodeToString(sum[:])
	return true
}

// decodePlain fills g from a plain document that satisfies #Graph, as
// decode does from the evaluated one.
func (l *loader) decodePlain(g *graph.Graph, d *object) bool {
	g.DSLVersion = strOf(d, "dsl_version")
	g.Name = strOf(d, "name")
	g.Version = strOf(d, "version")
	g.Description = strOf(d, "description")
	g.Start = strOf(d, "start")
	if v, ok := d.get("vars"); ok {
		g.Vars, _ = plainGo(v).(map[string]any)
	}
	g.Defaults = graph.Defaults{RecursionLimit: DefaultRecursionLimit, MaxConcurrency: DefaultMaxConcurrency, Raw: map[string]any{}}
	if v, ok := d.get("defaults"); ok {
		m := plainGo(v).(map[string]any)
		g.Defaults.Raw = m
		if n, ok := m["recursion_limit"].(int64); ok && n > 0 {
			g.Defaults.RecursionLimit = int(n)
		}
		if n, ok := m["max_concurrency"].(int64); ok && n > 0 {
			g.Defaults.MaxConcurrency = int(n)
		}
		if r := objOf(v.(*object), "call_retry"); r != nil {
			g.Defaults.CallRetry = l.plainRetry(r, "defaults.call_retry")
		}
	}
	if state := objOf(d, "state"); state != nil {
		for _, name := range state.keys {
			g.State = append(g.State, l.plainField(name, state.vals[name].(*object)))
		}
	}
	if nodes := objOf(d, "nodes"); nodes != nil {
		for _, name := range nodes.keys {
			n, ok := l.plainNode(name, nodes.vals[name].(*object))
			if !ok {
				return false
			}
			g.Nodes = append(g.Nodes, n)
		}
	}
	if tests, ok := d.get("tests"); ok {
		for i, t := range tests.([]any) {
			g.Tests = append(g.Tests, plainGo(t).(map[string]any))
			g.TestsPos = append(g.TestsPos, l.posFor(fmt.Sprintf("tests.%d", i)))
		}
	}
	return true
}

func (l *loader) plainField(name string, v *object) *graph.Field {
	path := "state." + name
	f := &graph.Field{Name: name, Pos: l.posFor(path), Description: strOf(v, "description")}
	f.TypeText = strOf(v, "type")
	t, err := graph.ParseType(f.TypeText)
	if err != nil {
		l.diags.Errorf(l.posFor(path+".type"), "invalid-type", path+".type", "%s.type: %v%s", path, err, TypeHint(f.TypeText))
	} else {
		f.Type = t
	}
	switch r, _ := v.get("reducer"); r := r.(type) {
	case string:
		f.Reducer = r
	case *object:
		f.ReducerExpr = strOf(r, "expr")
	}
	if dv, ok := v.get("default"); ok {
		f.Default = plainGo(dv)
		f.HasDefault = true
	}
	if e, ok := v.get("enum"); ok {
		f.Enum, _ = plainGo(e).([]any)
	}
	return f
}

func (l *loader) plainNode(name string, v *object) (*graph.Node, bool) {
	path := "nodes." + name
	n := &graph.Node{
		Name: name, Pos: l.posFor(path),
		Type:        strOf(v, "type"),
		Default:     strOf(v, "default"),
		Description: strOf(v, "description"),
		WaitFor:     strListOf(v, "wait_for"),
	}
	switch next, _ := v.get("next"); next := next.(type) {
	case string:
		n.Next = []string{next}
	case []any:
		n.Next = strListOf(v, "next")
	}
	routes, _ := v.get("routes")
	for i, r := range listOf(routes) {
		rp := fmt.Sprintf("%s.routes.%d", path, i)
		ro := r.(*object)
		n.Routes = append(n.Routes, graph.Route{
			When: strOf(ro, "when"), To: strOf(ro, "to"),
			WhenPos: l.posFor(rp + ".when"), ToPos: l.posFor(rp + ".to"),
		})
	}
	if m := objOf(v, "map"); m != nil {
		n.Map = &graph.MapRoute{
			Over: strOf(m, "over"), To: strOf(m, "to"), As: strOf(m, "as"), OnEmpty: strOf(m, "on_empty"),
			OverPos: l.posFor(path + ".map.over"), ToPos: l.posFor(path + ".map.to"),
		}
		if n.Map.As == "" {
			n.Map.As = "item"
		}
	}
	n.Timeout = l.parseDuration(strOf(v, "timeout"), path, "timeout")
	if r := objOf(v, "retry"); r != nil {
		n.Retry = l.plainRetry(r, path+".retry")
	}
	if r := objOf(v, "call_retry"); r != nil {
		n.CallRetry = l.plainRetry(r, path+".call_retry")
	}
	catch, _ := v.get("catch")
	for i, c := range listOf(catch) {
		co := c.(*object)
		n.Catch = append(n.Catch, graph.Catch{
			On: strListOf(co, "on"), To: strOf(co, "to"),
			Pos: l.posFor(fmt.Sprintf("%s.catch.%d", path, i)),
		})
	}
	if c := objOf(v, "cache"); c != nil {
		n.Cache = &graph.Cache{
			Key: strOf(c, "key"), KeyPos: l.posFor(path + ".cache.key"),
			TTL: l.parseDuration(strOf(c, "ttl"), path+".cache", "ttl"),
		}
	}
	cfg, ok := l.plainConfig(n.Type, v)
	n.Config = cfg
	return n, ok
}

// plainConfig checks a node's config against its type's schema, as
// nodeConfig does, and returns it with the schema's defaults.
func (l *loader) plainConfig(typeName string, v *object) (map[string]any, bool) {
	t, ok := l.registry.Lookup(typeName)
	if !ok {
		return nil, false
	}
	cs, ok := l.plainConfigs[t.Name]
	if !ok {
		s, err := compileSchemaExpr(graphschema.ConfigSchema(t))
		if err == nil && s.op == opStruct {
			cs = s
		}
		l.plainConfigs[t.Name] = cs
	}
	if cs == nil {
		return nil, false
	}
	cfg, given := v.get("config")
	if !given {
		cfg = newObject(0)
	}
	out, ok := cs.check(cfg)
	if !ok {
		return nil, false
	}
	m, ok := out.(map[string]any)
	return m, ok
}

func (l *loader) plainRetry(r *object, path string) *graph.RetryPolicy {
	p := &graph.RetryPolicy{
		InitialInterval: l.parseDuration(strOf(r, "initial_interval"), path, "initial_interval"),
		MaxInterval:     l.parseDuration(strOf(r, "max_interval"), path, "max_interval"),
		MaxRetryAfter:   l.parseDuration(strOf(r, "max_retry_after"), path, "max_retry_after"),
		On:              strListOf(r, "on"),
	}
	if i, ok := r.vals["max_attempts"].(int64); ok {
		p.MaxAttempts = int(i)
	}
	if f, ok := number(r.vals["backoff"]); ok {
		p.Backoff = f
	}
	if b, ok := r.vals["jitter"].(bool); ok {
		p.Jitter = b
	}
	return p
}

func strOf(o *object, name string) string {
	v, _ := o.get(name)
	s, _ := v.(string)
	return s
}

func objOf(o *object, name string) *object {
	v, _ := o.get(name)
	obj, _ := v.(*object)
	return obj
}

func listOf(v any) []any {
	l, _ := v.([]any)
	return l
}

func strListOf(o *object, name string) []string {
	v, _ := o.get(name)
	var out []string
	for _, e := range listOf(v) {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
