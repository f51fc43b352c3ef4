package load

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/cuecontext"

	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/graphschema"
	"github.com/graphctl/graphctl/runtime/node"
)

// Defaults applied when a graph file does not set them.
const (
	DefaultRecursionLimit = 25
	DefaultMaxConcurrency = 8
)

// loader holds the state of loading one graph.
type loader struct {
	ctx       *cue.Context
	file      string
	idx       *posIndex
	userFiles map[string]bool
	diags     diag.List
	user      cue.Value
	doc       cue.Value
	configs   map[string]configSchema
	// registry holds the node types the graph may use.
	registry *node.Registry
	// plainConfigs are the config schemas compiled for checking plain data
	// (nil for a schema beyond it), by node type.
	plainConfigs map[string]*schema
	// evaluatorOnly loads every file with the CUE evaluator, even plain data.
	evaluatorOnly bool
	// userNodes indexes the user's nodes by name (nodeConfig).
	userNodes map[string]cue.Value
}

type configSchema struct {
	v   cue.Value
	err error
}

func loadSources(reg *node.Registry, files []SourceFile) (g *graph.Graph, diags diag.List) {
	return loadWith(reg, files, false)
}

// loadWith loads files, with the CUE evaluator alone when evaluatorOnly.
func loadWith(reg *node.Registry, files []SourceFile, evaluatorOnly bool) (g *graph.Graph, diags diag.List) {
	main := files[0].Name
	defer func() {
		// CUE's evaluator is third-party code; whatever it does with hostile
		// input must reach the user as a diagnostic, not a crash.
		if r := recover(); r != nil {
			g = nil
			diags.Errorf(diag.Pos{File: main, Line: 1, Col: 1}, "internal", "",
				"internal error while loading the graph: %v", r)
		}
	}()
	l := &loader{
		ctx:       cuecontext.New(),
		file:      main,
		idx:       &posIndex{pos: map[string]diag.Pos{}, literals: map[string]string{}, labels: map[string]diag.Pos{}, srcs: map[string][]byte{}},
		userFiles: map[string]bool{},
		configs:   map[string]configSchema{},
		registry:  reg,

		plainConfigs:  map[string]*schema{},
		evaluatorOnly: evaluatorOnly,
	}
	g = l.load(files)
	l.explainMisplacedConfig(g)
	seen := map[diag.Diagnostic]bool{}
	unique := l.diags[:0]
	for _, d := range l.diags {
		if !seen[d] {
			seen[d] = true
			unique = append(unique, d)
		}
	}
	l.diags = unique
	l.diags.Sort()
	return g, l.diags
}

func (l *loader) load(files []SourceFile) *graph.Graph {
	var asts []*ast.File
	for _, f := range files {
		if len(f.Data) > MaxFileSize {
			l.diags = append(l.diags, tooLarge(f.Name, int64(len(f.Data))))
			continue
		}
		data := normalizeSource(f.Name, f.Data)
		l.idx.srcs[f.Name] = data
		l.userFiles[f.Name] = true
		af, d := parseFile(f.Name, data)
		l.diags = append(l.diags, d...)
		if af != nil {
			asts = append(asts, af)
		}
	}
	if l.diags.HasErrors() {
		return nil
	}
	if len(asts) > 0 && isEmptyFile(asts[0]) {
		l.diags.Errorf(diag.Pos{File: l.file, Line: 1, Col: 1}, "empty-file", "",
			`the file is empty: a graph file declares at least dsl_version: "graphctl/v1", name, start and nodes`)
		return nil
	}
	for _, af := range asts {
		l.idx.indexFile(af)
	}
	l.diags = append(l.diags, l.idx.diags...)

	g := &graph.Graph{File: l.file, Pos: l.idx.pos, Literals: l.idx.literals}
	if !l.evaluatorOnly && len(l.diags) == 0 && l.loadPlain(asts, g) {
		return g
	}
	for i, af := range asts {
		v := l.ctx.BuildFile(af)
		if i == 0 {
			l.user = v
		} else {
			l.user = l.user.Unify(v)
		}
	}
	if err := l.user.Err(); err != nil {
		c := l.condenser("", l.user, l.user)
		c.userOnly = true
		c.add(&l.diags, err)
		return g
	}
	if k := l.user.IncompleteKind(); k != cue.StructKind {
		l.diags.Errorf(diag.Pos{File: l.file, Line: 1, Col: 1}, "type-mismatch", "",
			"a graph file must be an object of fields (dsl_version, name, start, nodes, …), got %s", kindName(k))
		return g
	}
	l.checkDSLVersion()

	schema := l.ctx.CompileString(graphschema.Source(), cue.Filename(graphschema.GraphFilename))
	if err := schema.Err(); err != nil {
		l.diags.Errorf(diag.Pos{File: l.file, Line: 1, Col: 1}, "internal", "", "the graph schema does not compile: %v", err)
		return g
	}
	graphDef := schema.LookupPath(cue.MakePath(cue.Def("#Graph")))
	for prefix := range l.idx.comprehensions {
		var segs []string
		if prefix != "" {
			segs = strings.Split(prefix, ".")
		}
		l.placeGenerated(prefix, lookupSegs(l.user, segs), 0)
	}
	l.doc = graphDef.Unify(l.user)
	c := l.condenser("", l.user, l.doc)
	c.schema = graphDef
	c.defs = map[string]cue.Value{
		"nodes": schema.LookupPath(cue.MakePath(cue.Def("#Node"))),
		"state": schema.LookupPath(cue.MakePath(cue.Def("#Field"))),
	}
	c.skip = map[string]bool{"dsl_version": true}
	c.add(&l.diags, l.doc.Validate(cue.Concrete(true), cue.All()))
	l.checkRequired(l.doc, l.user, "")

	l.decode(g)
	g.Hash = l.hash()
	return g
}

// maxGeneratedDepth bounds how deep placeGenerated follows the values a
// comprehension generates: a node or a state field is a few levels deep.
const maxGeneratedDepth = 8

// placeGenerated records the places of the fields under path that a CUE
// comprehension generated (for n in names {(n): {…}}), which the index of
// the source cannot name, from the evaluated value: so that their problems
// are reported in the comprehension, not at the struct that holds it.
func (l *loader) placeGenerated(path string, v cue.Value, depth int) {
	if depth > maxGeneratedDepth || !v.Exists() {
		return
	}
	record := func(p string, field cue.Value) {
		if _, known := l.idx.pos[p]; known {
			return
		}
		// A field's place is its label's, a scalar's that of its text,
		// as the index records them.
		var value ast.Expr
		switch src := field.Source().(type) {
		case *ast.Field:
			if src.Label == nil || !src.Label.Pos().IsValid() || !l.userFiles[src.Label.Pos().Filename()] {
				return
			}
			l.idx.pos[p] = l.idx.at(src.Label.Pos())
			l.idx.labels[p] = l.idx.pos[p]
			value = src.Value
		case ast.Expr:
			value = src
		}
		switch value.(type) {
		case *ast.BasicLit, *ast.Interpolation:
			if value.Pos().IsValid() && l.userFiles[value.Pos().Filename()] {
				l.idx.pos[p] = l.idx.valuePos(value)
			}
		}
	}
	switch v.IncompleteKind() {
	case cue.StructKind:
		it, err := v.Fields()
		if err != nil {
			return
		}
		for it.Next() {
			p := joinPath(path, selectorName(it.Selector()))
			record(p, it.Value())
			l.placeGenerated(p, it.Value(), depth+1)
		}
	case cue.ListKind:
		it, err := v.List()
		if err != nil {
			return
		}
		for i := 0; it.Next(); i++ {
			p := joinPath(path, strconv.Itoa(i))
			record(p, it.Value())
			l.placeGenerated(p, it.Value(), depth+1)
		}
	}
}

func (l *loader) condenser(prefix string, user, scope cue.Value) *condenser {
	return &condenser{
		file: l.file, idx: l.idx, pos: l.idx.pos, labels: l.idx.labels, user: user, scope: scope,
		prefix: prefix, userFiles: l.userFiles,
	}
}

// posFor is the position of a document path or of its nearest recorded ancestor.
func (l *loader) posFor(path string) diag.Pos {
	for p := path; ; p = parentPath(p) {
		if pos, ok := l.idx.pos[p]; ok {
			return pos
		}
		if p == "" {
			return diag.Pos{File: l.file, Line: 1, Col: 1}
		}
	}
}

func (l *loader) checkDSLVersion() {
	v := l.user.LookupPath(cue.MakePath(cue.Str("dsl_version")))
	if !v.Exists() {
		l.diags.Errorf(diag.Pos{File: l.file, Line: 1, Col: 1}, "dsl-version", "dsl_version",
			"missing dsl_version: a graph file must declare dsl_version: %q", graph.DSLVersion)
		return
	}
	if s, err := v.String(); err != nil || s != graph.DSLVersion {
		l.diags.Errorf(l.posFor("dsl_version"), "dsl-version", "dsl_version",
			"dsl_version: this graphctl reads %q, got %v", graph.DSLVersion, v)
	}
}

// checkRequired reports required fields of the schema that the user's value
// lacks, at the label of the struct that should hold them. v is the value
// checked (schema unified with user), user the user's own value at path.
func (l *loader) checkRequired(v, user cue.Value, path string) {
	switch v.IncompleteKind() {
	case cue.StructKind:
		it, err := v.Fields(cue.Optional(true))
		if err != nil {
			return
		}
		var fields map[string]cue.Value
		for i := 0; it.Next(); i++ {
			sel := it.Selector()
			name := selectorName(sel)
			p := joinPath(path, name)
			if i == indexFieldsAfter {
				fields = userFields(user)
			}
			uv, ok := fields[name]
			if !ok {
				uv = user.LookupPath(cue.MakePath(cue.Str(name)))
			}
			if !uv.Exists() {
				if sel.ConstraintType() == cue.RequiredConstraint && p != "dsl_version" {
					l.diags.Errorf(l.posFor(path), "missing-field", p, "%s", missingMessage(p))
				}
				continue
			}
			l.checkRequired(it.Value(), uv, p)
		}
	case cue.ListKind:
		if user.IncompleteKind() != cue.ListKind {
			return
		}
		vi, err1 := v.List()
		ui, err2 := user.List()
		if err1 != nil || err2 != nil {
			return
		}
		for i := 0; vi.Next() && ui.Next(); i++ {
			l.checkRequired(vi.Value(), ui.Value(), joinPath(path, fmt.Sprint(i)))
		}
	}
}

// indexFieldsAfter is the number of fields of a struct after which
// checkRequired looks the rest up in an index of the user's fields: a lookup
// by name scans the struct, so looking up each field of a struct of
// thousands (a graph of thousands of nodes) would take the square of that.
const indexFieldsAfter = 32

// userFields indexes the regular fields of a struct by name.
func userFields(user cue.Value) map[string]cue.Value {
	out := map[string]cue.Value{}
	it, err := user.Fields()
	if err != nil {
		return out
	}
	for it.Next() {
		if sel := it.Selector(); sel.LabelType() == cue.StringLabel {
			out[sel.Unquoted()] = it.Value()
		}
	}
	return out
}

// decode fills g from the checked document, as far as it is well formed.
func (l *loader) decode(g *graph.Graph) {
	d := l.doc
	g.DSLVersion = str(d, "dsl_version")
	g.Name = str(d, "name")
	g.Version = str(d, "version")
	g.Description = str(d, "description")
	g.Start = str(d, "start")
	if m, ok := toGo(lookup(d, "vars"), false).(map[string]any); ok {
		g.Vars = m
	}

	g.Defaults = graph.Defaults{RecursionLimit: DefaultRecursionLimit, MaxConcurrency: DefaultMaxConcurrency, Raw: map[string]any{}}
	if m, ok := toGo(lookup(d, "defaults"), false).(map[string]any); ok {
		g.Defaults.Raw = m
		if n, ok := m["recursion_limit"].(int64); ok && n > 0 {
			g.Defaults.RecursionLimit = int(n)
		}
		if n, ok := m["max_concurrency"].(int64); ok && n > 0 {
			g.Defaults.MaxConcurrency = int(n)
		}
		if r := lookup(lookup(d, "defaults"), "call_retry"); r.Exists() {
			g.Defaults.CallRetry = l.retryPolicy(r, "defaults.call_retry")
		}
	}

	eachField(lookup(d, "state"), func(name string, v cue.Value) {
		g.State = append(g.State, l.decodeField(name, v))
	})
	eachField(lookup(d, "nodes"), func(name string, v cue.Value) {
		g.Nodes = append(g.Nodes, l.decodeNode(name, v))
	})

	if list, err := lookup(d, "tests").List(); err == nil {
		for i := 0; list.Next(); i++ {
			m, _ := toGo(list.Value(), false).(map[string]any)
			if m == nil {
				m = map[string]any{}
			}
			g.Tests = append(g.Tests, m)
			g.TestsPos = append(g.TestsPos, l.posFor(fmt.Sprintf("tests.%d", i)))
		}
	}
}

func (l *loader) decodeField(name string, v cue.Value) *graph.Field {
	path := "state." + name
	f := &graph.Field{Name: name, Pos: l.posFor(path), Description: str(v, "description")}
	if tv := lookup(v, "type"); tv.Exists() {
		if s, err := tv.String(); err == nil {
			f.TypeText = s
			t, err := graph.ParseType(s)
			if err != nil {
				l.diags.Errorf(l.posFor(path+".type"), "invalid-type", path+".type", "%s.type: %v%s", path, err, TypeHint(s))
			} else {
				f.Type = t
			}
		}
	}
	r := lookup(v, "reducer")
	if s, err := r.String(); err == nil {
		f.Reducer = s
	} else {
		f.ReducerExpr = str(r, "expr")
	}
	if dv := lookup(v, "default"); dv.Exists() {
		f.Default = toGo(dv, false)
		f.HasDefault = true
	}
	if e, ok := toGo(lookup(v, "enum"), false).([]any); ok {
		f.Enum = e
	}
	return f
}

func (l *loader) decodeNode(name string, v cue.Value) *graph.Node {
	path := "nodes." + name
	n := &graph.Node{
		Name: name, Pos: l.posFor(path),
		Type:        str(v, "type"),
		Default:     str(v, "default"),
		Description: str(v, "description"),
		WaitFor:     strList(lookup(v, "wait_for")),
	}
	if next := lookup(v, "next"); next.Exists() {
		if s, err := next.String(); err == nil {
			n.Next = []string{s}
		} else {
			n.Next = strList(next)
		}
	}
	if list, err := lookup(v, "routes").List(); err == nil {
		for i := 0; list.Next(); i++ {
			rp := fmt.Sprintf("%s.routes.%d", path, i)
			r := list.Value()
			n.Routes = append(n.Routes, graph.Route{
				When: str(r, "when"), To: str(r, "to"),
				WhenPos: l.posFor(rp + ".when"), ToPos: l.posFor(rp + ".to"),
			})
		}
	}
	if m := lookup(v, "map"); m.Exists() {
		n.Map = &graph.MapRoute{
			Over: str(m, "over"), To: str(m, "to"), As: str(m, "as"), OnEmpty: str(m, "on_empty"),
			OverPos: l.posFor(path + ".map.over"), ToPos: l.posFor(path + ".map.to"),
		}
		if n.Map.As == "" {
			n.Map.As = "item"
		}
	}
	n.Timeout = l.duration(v, path, "timeout")
	if r := lookup(v, "retry"); r.Exists() {
		n.Retry = l.retryPolicy(r, path+".retry")
	}
	if r := lookup(v, "call_retry"); r.Exists() {
		n.CallRetry = l.retryPolicy(r, path+".call_retry")
	}
	if list, err := lookup(v, "catch").List(); err == nil {
		for i := 0; list.Next(); i++ {
			c := list.Value()
			n.Catch = append(n.Catch, graph.Catch{
				On: strList(lookup(c, "on")), To: str(c, "to"),
				Pos: l.posFor(fmt.Sprintf("%s.catch.%d", path, i)),
			})
		}
	}
	if c := lookup(v, "cache"); c.Exists() {
		n.Cache = &graph.Cache{
			Key: str(c, "key"), KeyPos: l.posFor(path + ".cache.key"),
			TTL: l.duration(c, path+".cache", "ttl"),
		}
	}
	n.Config = l.nodeConfig(n, path)
	return n
}

// nodeConfig checks a node's config against its type's schema and returns it
// decoded, with the schema's defaults filled in.
func (l *loader) nodeConfig(n *graph.Node, path string) map[string]any {
	cfgPath := path + ".config"
	if l.userNodes == nil {
		l.userNodes = userFields(l.user.LookupPath(cue.MakePath(cue.Str("nodes"))))
	}
	un, ok := l.userNodes[n.Name]
	if !ok {
		un = l.user.LookupPath(cue.MakePath(cue.Str("nodes"), cue.Str(n.Name)))
	}
	ucfg := un.LookupPath(cue.MakePath(cue.Str("config")))
	raw, _ := toGo(ucfg, false).(map[string]any)
	if n.Type == "" {
		return raw
	}
	t, ok := l.registry.Lookup(n.Type)
	if !ok {
		names := l.registry.Names()
		msg := fmt.Sprintf("%s.type: unknown node type %q", path, n.Type)
		if s := diag.Closest(n.Type, names); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		l.diags.Add(diag.New(l.posFor(path+".type"), "unknown-node-type", path+".type", "%s", msg))
		return raw
	}
	cs := l.configSchema(t)
	if cs.err != nil {
		l.diags.Errorf(l.posFor(path+".type"), "invalid-config-schema", path+".type",
			"%s: node type %q has an invalid config schema: %v", path, t.Name, cs.err)
		return raw
	}
	if !ucfg.Exists() {
		ucfg = l.ctx.CompileString("{}")
	} else if ucfg.IncompleteKind() != cue.StructKind {
		return raw // reported by the graph schema
	}
	cv := cs.v.Unify(ucfg)
	cc := l.condenser(cfgPath, ucfg, cv)
	cc.schema = cs.v
	cc.add(&l.diags, cv.Validate(cue.Concrete(true), cue.All()))
	l.checkRequired(cv, ucfg, cfgPath)
	if m, ok := toGo(cv, true).(map[string]any); ok {
		return m
	}
	return raw
}

// configSchema compiles a node type's config schema once per load.
func (l *loader) configSchema(t node.Type) configSchema {
	if cs, ok := l.configs[t.Name]; ok {
		return cs
	}
	v := l.ctx.CompileString("#C: "+graphschema.ConfigSchema(t)+"\n", cue.Filename("graphctl:nodetype/"+t.Name+".cue"))
	cs := configSchema{err: v.Err()}
	if cs.err == nil {
		cs.v = v.LookupPath(cue.MakePath(cue.Def("#C")))
		if k := cs.v.IncompleteKind(); k != cue.StructKind {
			cs.err = fmt.Errorf("config schema must be a struct, got %s", kindName(k))
		}
	}
	l.configs[t.Name] = cs
	return cs
}

// retryPolicy decodes a retry or call_retry block at path.
func (l *loader) retryPolicy(r cue.Value, path string) *graph.RetryPolicy {
	p := &graph.RetryPolicy{
		InitialInterval: l.duration(r, path, "initial_interval"),
		MaxInterval:     l.duration(r, path, "max_interval"),
		MaxRetryAfter:   l.duration(r, path, "max_retry_after"),
		On:              strList(lookup(r, "on")),
	}
	if i, err := lookup(r, "max_attempts").Int64(); err == nil {
		p.MaxAttempts = int(i)
	}
	if f, err := lookup(r, "backoff").Float64(); err == nil {
		p.Backoff = f
	}
	if b, err := lookup(r, "jitter").Bool(); err == nil {
		p.Jitter = b
	}
	return p
}

// duration decodes a Go duration at v.name, reporting one that does not parse.
func (l *loader) duration(v cue.Value, path, name string) time.Duration {
	return l.parseDuration(str(v, name), path, name)
}

// parseDuration decodes s, the Go duration at path.name, reporting one that
// does not parse.
func (l *loader) parseDuration(s, path, name string) time.Duration {
	if s == "" {
		return 0
	}
	p := path + "." + name
	d, err := time.ParseDuration(s)
	if err != nil {
		l.diags.Errorf(l.posFor(p), "invalid-duration", p, "%s: %q is not a duration (want e.g. \"30s\", \"1m30s\", \"500ms\")", p, s)
		return 0
	}
	if d <= 0 {
		l.diags.Errorf(l.posFor(p), "invalid-duration", p, "%s: duration must be positive, got %q", p, s)
		return 0
	}
	return d
}

// hash is the hex SHA-256 of the canonical JSON of the user's document
// without its tests.
func (l *loader) hash() string {
	m, _ := toGo(l.user, false).(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	delete(m, "tests")
	data, err := json.Marshal(m)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// toGo decodes a concrete CUE value to JSON-like Go values. Values that are
// not concrete are left out. With defaults, optional fields that have a
// default take it.
func toGo(v cue.Value, defaults bool) any {
	if !v.Exists() || v.Err() != nil {
		return nil
	}
	if d, ok := v.Default(); ok {
		v = d
	}
	switch v.Kind() {
	case cue.NullKind:
		return nil
	case cue.BoolKind:
		b, _ := v.Bool()
		return b
	case cue.IntKind:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	case cue.FloatKind:
		f, _ := v.Float64()
		return f
	case cue.StringKind:
		s, _ := v.String()
		return s
	case cue.BytesKind:
		b, _ := v.Bytes()
		return string(b)
	case cue.StructKind:
		var opts []cue.Option
		if defaults {
			opts = append(opts, cue.Optional(true))
		}
		it, err := v.Fields(opts...)
		if err != nil {
			return nil
		}
		m := map[string]any{}
		for it.Next() {
			fv := it.Value()
			if it.Selector().ConstraintType() != 0 {
				d, ok := fv.Default()
				if !ok || !d.IsConcrete() {
					continue
				}
				fv = d
			}
			if !isConcreteTree(fv) {
				continue
			}
			m[selectorName(it.Selector())] = toGo(fv, defaults)
		}
		return m
	case cue.ListKind:
		it, err := v.List()
		if err != nil {
			return nil
		}
		out := []any{}
		for it.Next() {
			out = append(out, toGo(it.Value(), defaults))
		}
		return out
	}
	return nil
}

// isConcreteTree reports whether v is a value toGo can decode: concrete, or a
// struct or list.
func isConcreteTree(v cue.Value) bool {
	if v.Err() != nil {
		return false
	}
	if d, ok := v.Default(); ok {
		v = d
	}
	return v.Kind() != cue.BottomKind
}

func lookup(v cue.Value, name string) cue.Value {
	return v.LookupPath(cue.MakePath(cue.Str(name)))
}

func str(v cue.Value, name string) string {
	s, _ := lookup(v, name).String()
	return s
}

func strList(v cue.Value) []string {
	it, err := v.List()
	if err != nil {
		return nil
	}
	var out []string
	for it.Next() {
		if s, err := it.Value().String(); err == nil {
			out = append(out, s)
		}
	}
	return out
}

// eachField calls fn for each regular field of a struct in declaration order.
func eachField(v cue.Value, fn func(name string, v cue.Value)) {
	it, err := v.Fields()
	if err != nil {
		return
	}
	for it.Next() {
		fn(selectorName(it.Selector()), it.Value())
	}
}

// selectorName returns a field's name. Labels that are not plain strings (a YAML
// document can produce integer labels, e.g. for a key written as 0) are
// named by their CUE syntax instead of being unquoted, which would panic.
func selectorName(sel cue.Selector) string {
	if sel.LabelType() == cue.StringLabel && sel.ConstraintType() < cue.PatternConstraint {
		return sel.Unquoted()
	}
	return sel.String()
}

// isEmptyFile reports whether a parsed file declares nothing: only comments,
// a package clause or imports (a YAML file of blank lines or a lone null).
func isEmptyFile(f *ast.File) bool {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.CommentGroup, *ast.Package, *ast.ImportDecl, *ast.Attribute:
		case *ast.EmbedDecl:
			if !isNothing(d.Expr) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// isNothing reports whether e is null, top (_), or a disjunction or default of
// those: what the YAML decoder makes of an empty document.
func isNothing(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.BasicLit:
		return e.Value == "null"
	case *ast.Ident:
		return e.Name == "_"
	case *ast.UnaryExpr:
		return isNothing(e.X)
	case *ast.BinaryExpr:
		return isNothing(e.X) && isNothing(e.Y)
	case *ast.ParenExpr:
		return isNothing(e.X)
	}
	return false
}
