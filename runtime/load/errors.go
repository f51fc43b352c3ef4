package load

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/errors"

	"github.com/graphctl/graphctl/runtime/diag"
)

// condenser turns CUE evaluation errors into diagnostics: positions come from
// the user's files only, a failed disjunction becomes one "must be one of"
// diagnostic, and each problem gets a stable code.
type condenser struct {
	file   string
	idx    *posIndex
	pos    map[string]diag.Pos
	labels map[string]diag.Pos
	user   cue.Value // the user's own value at prefix, for "got" kinds
	scope  cue.Value // the value checked, at prefix, for field suggestions
	// prefix is the document path of the checked value ("" or "nodes.a.config").
	prefix string
	// skip lists document paths whose problems are reported elsewhere.
	skip map[string]bool
	// userFiles are the files whose positions may appear in diagnostics.
	userFiles map[string]bool
	// schema is the schema of the checked value, at prefix (may not exist);
	// defs maps a top-level field whose members share a definition (nodes,
	// state) to that definition.
	schema cue.Value
	defs   map[string]cue.Value
	// userOnly is set while the file's own values are evaluated, before
	// the schema: what they refuse, the file's own definitions refuse.
	userOnly bool
}

// schemaAt returns the schema of a path relative to the prefix, following
// list elements and pattern fields, or a value that does not exist.
func (c *condenser) schemaAt(rel []string) cue.Value {
	v := c.schema
	if !v.Exists() {
		return cue.Value{}
	}
	for i, s := range rel {
		if i == 1 {
			if d, ok := c.defs[rel[0]]; ok {
				v = d
				continue
			}
		}
		next := v.LookupPath(cue.MakePath(cue.Str(s)))
		if !next.Exists() {
			next = v.LookupPath(cue.MakePath(cue.Str(s).Optional()))
		}
		if !next.Exists() {
			next = v.LookupPath(cue.MakePath(cue.Str(s).Required()))
		}
		if !next.Exists() {
			if n, err := strconv.Atoi(s); err == nil {
				if next = v.LookupPath(cue.MakePath(cue.Index(n))); !next.Exists() {
					next = v.LookupPath(cue.MakePath(cue.AnyIndex))
				}
			} else {
				next = v.LookupPath(cue.MakePath(cue.AnyString))
			}
		}
		if !next.Exists() {
			return cue.Value{}
		}
		v = next
	}
	return v
}

type cueProblem struct {
	rel    []string
	path   string
	format string
	args   []any
	msg    string
	err    errors.Error
}

// add reports every problem of err.
func (c *condenser) add(l *diag.List, err error) {
	if err == nil {
		return
	}
	var probs []cueProblem
	disj := map[string]bool{}
	for _, e := range errors.Errors(err) {
		rel := docSegments(e.Path())
		path := c.prefix
		for _, s := range rel {
			path = joinPath(path, s)
		}
		if c.skip[path] {
			continue
		}
		format, args := e.Msg()
		p := cueProblem{rel: rel, path: path, format: format, args: args, err: e}
		p.msg = strings.TrimSpace(fmt.Sprintf(format, args...))
		if strings.Contains(format, "empty disjunction") {
			disj[path] = true
		}
		probs = append(probs, p)
	}
	// Alternatives of each failed disjunction, from its branch errors.
	alts := map[string][]string{}
	reported := map[string]bool{}
	for _, p := range probs {
		if !disj[p.path] || len(p.args) < 2 ||
			!strings.HasPrefix(p.format, "conflicting values") && !strings.Contains(p.format, "out of bound") {
			continue
		}
		got := c.userString(p.rel)
		if strings.Contains(p.format, "out of bound") && len(p.args) >= 2 {
			alts[p.path] = appendUnique(alts[p.path], fmt.Sprint(p.args[1]))
			continue
		}
		alt := fmt.Sprint(p.args[1])
		if alt == got {
			alt = fmt.Sprint(p.args[0])
		}
		alts[p.path] = appendUnique(alts[p.path], alt)
	}
	for _, p := range probs {
		if under(p.path, disj) != "" {
			root := under(p.path, disj)
			if reported[root] {
				continue
			}
			reported[root] = true
			msg := root + ": must be " + c.wanted(relOf(root, c.prefix), alts[root])
			if got := c.userString(relOf(root, c.prefix)); got != "" {
				msg += "; got " + got
			}
			l.Add(diag.New(c.posFor(root, p.err), "invalid-value", root, "%s", msg))
			continue
		}
		c.addOne(l, p, reported)
	}
}

// wanted says what the schema accepts at a path, from the schema when it is
// known, else from the alternatives a failed disjunction's errors name.
func (c *condenser) wanted(rel []string, alts []string) string {
	if s := c.schemaAt(rel); s.Exists() {
		return describe(s)
	}
	words := make([]string, len(alts))
	for i, a := range alts {
		words[i] = typeWord(boundText(a))
	}
	return "one of " + strings.Join(words, ", ")
}

// addOne reports one problem that is not part of a failed disjunction.
func (c *condenser) addOne(l *diag.List, p cueProblem, reported map[string]bool) {
	if c.isMissing(p) {
		c.addMissing(l, p, reported)
		return
	}
	code, msg, at := c.explain(p)
	key := code + "\x00" + at
	if reported[key] {
		return
	}
	reported[key] = true
	pos := c.posFor(at, p.err)
	if lp, ok := c.labels[at]; ok && code == "unknown-field" {
		pos = lp
	}
	l.Add(diag.New(pos, code, at, "%s", msg))
}

// isMissing reports whether p is a required field the user did not write.
func (c *condenser) isMissing(p cueProblem) bool {
	if strings.Contains(p.format, "field not allowed") {
		return false
	}
	return strings.Contains(p.format, "required but not present") ||
		strings.HasPrefix(p.format, "incomplete value") && !lookupSegs(c.user, p.rel).Exists()
}

// addMissing reports a missing required field once, at its parent.
func (c *condenser) addMissing(l *diag.List, p cueProblem, reported map[string]bool) {
	const code = "missing-field"
	at := p.path
	// A missing list reads as its missing first item: report the list.
	for rel := p.rel; len(rel) > 0 && isIndex(rel[len(rel)-1]) && !lookupSegs(c.user, rel[:len(rel)-1]).Exists(); rel = rel[:len(rel)-1] {
		at = parentPath(at)
	}
	key := code + "\x00" + at
	if reported[key] {
		return
	}
	reported[key] = true
	l.Add(diag.New(c.posFor(parentPath(at), nil), code, at, "%s", missingMessage(at)))
}

// bigNumberRE finds the digits of a number the YAML decoder could not convert.
var bigNumberRE = regexp.MustCompile(`([-+]?[0-9][0-9_.eE+-]*)"?$`)

// explain turns a problem into a diagnostic's code, message and path.
func (c *condenser) explain(p cueProblem) (code, msg, at string) {
	code, msg, at = "invalid-value", p.path+": "+p.msg, p.path
	if p.path == "" {
		msg = p.msg
	}
	switch {
	case strings.Contains(p.format, "structural cycle"):
		where := p.path
		if p.err != nil && len(p.err.Path()) > 0 {
			where = strings.Join(p.err.Path(), ".")
		}
		msg = fmt.Sprintf("%s: structural cycle: the value contains itself, so it has no end", where)
	case strings.Contains(p.msg, "illegal number start"):
		// The YAML decoder hands numbers past 64 bits on as text CUE cannot read.
		num := p.msg
		if m := bigNumberRE.FindStringSubmatch(p.msg); m != nil {
			num = m[1]
		}
		code = "invalid-number"
		msg = fmt.Sprintf("%s: the number %s is too large: a number in a YAML graph file fits in 64 bits (quote it to write it as text)", p.path, num)
	case (strings.HasPrefix(p.format, "builtin package") && strings.HasSuffix(p.format, "undefined") ||
		strings.Contains(p.format, "imported but not defined")) && len(p.args) > 0:
		code = "invalid-import"
		msg = fmt.Sprintf("package %q cannot be imported: a graph file may import only CUE's standard packages without side effects (strings, list, math, regexp, …)", fmt.Sprint(p.args[0]))
	case strings.Contains(p.format, "field not allowed"):
		return c.unknownField(p)
	case strings.HasPrefix(p.format, "reference") && strings.Contains(p.format, "not found"):
		code = "unknown-reference"
		if len(p.args) > 0 {
			name := strings.Trim(fmt.Sprint(p.args[0]), `"`)
			msg = fmt.Sprintf("%s: %s is not defined; to write the text %s, quote it: %q", p.path, name, name, name)
		}
	case strings.Contains(p.format, "mismatched types") && len(p.args) >= 4:
		code, msg = "type-mismatch", c.mismatchMessage(p)
	case strings.Contains(p.format, "out of bound") && len(p.args) >= 2:
		msg = fmt.Sprintf("%s: must be %s; got %v", p.path, boundText(fmt.Sprint(p.args[1])), p.args[0])
		if s := c.schemaAt(p.rel); s.Exists() {
			msg = fmt.Sprintf("%s: must be %s; got %v", p.path, describe(s), p.args[0])
		}
	case strings.HasPrefix(p.format, "conflicting values") && len(p.args) >= 2:
		msg = c.conflictMessage(p)
	case strings.Contains(p.format, "incompatible list lengths") && len(p.args) >= 2:
		msg = c.lengthMessage(p)
	case strings.HasPrefix(p.format, "incomplete value"):
		code = "incomplete-value"
		msg = fmt.Sprintf("%s: must be a value, not a type (%s)", p.path, strings.TrimSpace(strings.TrimPrefix(p.msg, "incomplete value")))
	}
	return code, msg, at
}

// langGraphKeys explains the top-level keys of a LangGraph StateGraph that a
// graph file says another way.
var langGraphKeys = map[string]string{
	"entry":             `the first node is named by "start"`,
	"entrypoint":        `the first node is named by "start"`,
	"entry_point":       `the first node is named by "start"`,
	"entry_node":        `the first node is named by "start"`,
	"start_node":        `the first node is named by "start"`,
	"set_entry_point":   `the first node is named by "start"`,
	"finish_point":      `a node ends the run with next: "END"`,
	"set_finish_point":  `a node ends the run with next: "END"`,
	"edges":             `edges are written on the node they leave: next, or routes with a default`,
	"conditional_edges": `conditional edges are a node's routes: [{when: EXPR, to: NODE}] with a default`,
	"channels":          `state fields are declared under "state", each with a type and a reducer`,
}

// keySynonyms are the keys other frameworks give what a key of a graph
// file holds, with the keys they may mean, tried in order against the keys
// allowed where they are written: a model node's prompt is its system, a reply's
// message its text, an interrupt's question its message.
var keySynonyms = map[string][]string{
	"prompt":        {"system", "message", "text", "query"},
	"system_prompt": {"system"},
	"instructions":  {"system"},
	"model_name":    {"model"},
	"message":       {"text"},
	"content":       {"text", "message"},
	"question":      {"message", "query"},
	"values":        {"set"},
	"assign":        {"set"},
	"updates":       {"set"},
	"output_key":    {"output", "field"},
	"output_field":  {"output", "field"},
	"state_key":     {"field"},
}

// maxAllowedListed bounds the keys an unknown key's message lists.
const maxAllowedListed = 20

// schemaKeys lists the keys the schema allows in the object at rel, or nil
// where no schema is known.
func (c *condenser) schemaKeys(rel []string) []string {
	v := c.schemaAt(rel)
	if !v.Exists() {
		return nil
	}
	it, err := v.Fields(cue.Optional(true))
	if err != nil {
		return nil
	}
	var names []string
	for it.Next() {
		if sel := it.Selector(); sel.LabelType() == cue.StringLabel && sel.ConstraintType() < cue.PatternConstraint {
			names = append(names, sel.Unquoted())
		}
	}
	return names
}

// byNameHints explains the objects of a graph file keyed by name that
// other formats write as lists of items with a name.
var byNameHints = map[string]string{
	"state": "state fields are keyed by name: state: {messages: {type: \"messages\"}}",
	"nodes": "nodes are keyed by name: nodes: {greet: {type: \"reply\", …}}",
}

// nodeKeys explains the keys of a node that other graph languages use for
// its edges.
var nodeKeys = map[string]string{
	"edges":             `a node's edges are next (a node, a list of nodes run in parallel, or "END"), or routes with a default`,
	"edge":              `a node's edges are next (a node, a list of nodes run in parallel, or "END"), or routes with a default`,
	"conditional_edges": `conditional edges are routes: [{when: EXPR, to: NODE}] with a default`,
	"conditions":        `conditional edges are routes: [{when: EXPR, to: NODE}] with a default`,
	"branches":          `conditional edges are routes: [{when: EXPR, to: NODE}] with a default`,
	"goto":              `the node that runs next is next: NODE`,
	"then":              `the node that runs next is next: NODE`,
}

// routeKeys explains the keys of a route that other languages use for its
// condition and target.
var routeKeys = map[string]string{
	"if": `the condition is "when"`, "condition": `the condition is "when"`, "cond": `the condition is "when"`,
	"expr": `the condition is "when"`, "expression": `the condition is "when"`, "predicate": `the condition is "when"`,
	"goto": `the target is "to"`, "target": `the target is "to"`, "node": `the target is "to"`,
	"next": `the target is "to"`, "then": `the target is "to"`, "dest": `the target is "to"`,
}

// unknownField explains a field the schema does not allow: a badly named
// node (reported once, at the node) or a misspelt key.
func (c *condenser) unknownField(p cueProblem) (code, msg, at string) {
	name := ""
	if len(p.rel) > 0 {
		name = p.rel[len(p.rel)-1]
	}
	parent := parentPath(p.path)
	badName := func(name string) string {
		return fmt.Sprintf("nodes.%s: node name %q must be an identifier (letters, digits, _ and -, not starting with a digit or -)", name, name)
	}
	switch {
	case parent == "nodes" && !isIdentifier(name):
		return "invalid-name", badName(name), p.path
	case strings.HasPrefix(parent, "nodes.") && strings.Count(parent, ".") == 1 && !isIdentifier(parent[len("nodes."):]):
		// Fields of a badly named node: the name is reported once.
		return "invalid-name", badName(parent[len("nodes."):]), parent
	}
	msg = fmt.Sprintf("%s: unknown field %q", p.path, name)
	if hint, ok := langGraphKeys[name]; ok && p.path == name {
		return "unknown-field", msg + " (" + hint + ")", p.path
	}
	segs := strings.Split(p.path, ".")
	if hint, ok := nodeKeys[name]; ok && len(segs) == 3 && segs[0] == "nodes" {
		return "unknown-field", msg + " (" + hint + ")", p.path
	}
	if hint, ok := routeKeys[name]; ok && len(segs) == 5 && segs[0] == "nodes" && segs[2] == "routes" {
		return "unknown-field", msg + " (" + hint + ")", p.path
	}
	if strings.HasPrefix(name, "x-") && p.path == name {
		// docker-compose's place for YAML anchors.
		return "unknown-field", msg + " (values to share, such as YAML anchors, go under vars)", p.path
	}
	if c.userOnly {
		// Only the file's own values are evaluated: a field is refused by
		// a definition of the file (#R & {config: …}), closed as CUE's are.
		return "unknown-field", fmt.Sprintf("%s: field %q is not allowed by a definition of the file it is unified with: a CUE definition (#Name) is closed; declare %q in it, or share the shape as a hidden field (_name), which is open", p.path, name, name), p.path
	}
	if s := diag.Closest(name, c.fieldNames(p.rel[:max(len(p.rel)-1, 0)])); s != "" {
		return "unknown-field", msg + fmt.Sprintf(" (did you mean %q?)", s), p.path
	}
	allowed := c.schemaKeys(p.rel[:max(len(p.rel)-1, 0)])
	for _, s := range keySynonyms[strings.ToLower(name)] {
		if slices.Contains(allowed, s) {
			return "unknown-field", msg + fmt.Sprintf(" (did you mean %q?)", s), p.path
		}
	}
	if len(allowed) > 0 && len(allowed) <= maxAllowedListed {
		msg += fmt.Sprintf(" (the keys here: %s)", strings.Join(allowed, ", "))
	}
	return "unknown-field", msg, p.path
}

// mismatchMessage explains a value of the wrong type.
func (c *condenser) mismatchMessage(p cueProblem) string {
	got := c.userKind(p.rel)
	want := typeWord(fmt.Sprint(p.args[3]))
	if want == got {
		want = typeWord(fmt.Sprint(p.args[2]))
	}
	if s := c.schemaAt(p.rel); s.Exists() {
		want = typeName(s.IncompleteKind())
	}
	if got == "" {
		got = typeWord(fmt.Sprint(p.args[2]))
	}
	if got == "nothing" { // two values of the user's own disagree
		return fmt.Sprintf("%s is given two values of different types, %s and %s; keep one", p.path,
			typeWord(fmt.Sprint(p.args[2])), typeWord(fmt.Sprint(p.args[3])))
	}
	msg := fmt.Sprintf("%s: want %s, got %s", p.path, want, got)
	if hint, ok := byNameHints[p.path]; ok && want == "object" && got == "list" {
		return msg + " (" + hint + ")"
	}
	if field, ok := strings.CutPrefix(p.path, "state."); ok && !strings.Contains(field, ".") && want == "object" && got == "string" {
		// state: {name: "string"}, the shorthand of other schema languages.
		if text, err := lookupSegs(c.user, p.rel).String(); err == nil {
			return msg + fmt.Sprintf(" (a state field is declared as an object: %s: {type: %q})", field, text)
		}
	}
	if want == "string" && isYAML(c.file) && (got == "number" || got == "int" || got == "float" || got == "bool") && !isDurationKey(p.path) {
		// YAML reads 1.0, 42, yes and true unquoted as a number or a bool.
		if text := c.userString(p.rel); text != "" {
			a := "a"
			if got == "int" {
				a = "an"
			}
			msg += fmt.Sprintf(` (YAML reads %s as %s %s: quote it, "%s", to write text)`, text, a, got, text)
		} else {
			msg += " (quote it to write text)"
		}
	}
	return msg + c.unquoteHint(p, want, got)
}

// unquoteHint advises on a value written in the wrong form for its key: a
// number or bool in quotes, or a duration without its unit.
func (c *condenser) unquoteHint(p cueProblem, want, got string) string {
	switch {
	case want == "string" && isDurationKey(p.path) && (got == "int" || got == "float" || got == "number"):
		if text := c.userString(p.rel); text != "" {
			return fmt.Sprintf(` (a duration is text with its unit: "%ss", "%sms", "%sm")`, text, text, text)
		}
	case got == "string" && (want == "int" || want == "float" || want == "number" || want == "bool"):
		if text, err := lookupSegs(c.user, p.rel).String(); err == nil {
			return UnquoteHint(text, want)
		}
	}
	return ""
}

// UnquoteHint advises, for text written where want ("int", "float",
// "number" or "bool") is expected, to write the number or bool it reads as
// without quotes; it returns "" when the text reads as none.
func UnquoteHint(text, want string) string {
	text = strings.TrimSpace(text)
	if want == "bool" {
		if b, ok := yamlBool(text); ok {
			if text == strconv.FormatBool(b) {
				return fmt.Sprintf(" (write %t, without quotes)", b)
			}
			return fmt.Sprintf(" (write %t: %s is text here)", b, text)
		}
		return ""
	}
	if _, err := strconv.ParseFloat(text, 64); err == nil && text != "" {
		return fmt.Sprintf(" (write %s, without quotes)", text)
	}
	return ""
}

// yamlBool reads the words that mean a bool in YAML 1.1 and other
// configuration files (yes, no, on, off, true, false), which a graph file
// reads as text when they are quoted (or, in YAML, when they are not true
// or false).
func yamlBool(text string) (value, ok bool) {
	switch strings.ToLower(strings.TrimSpace(text)) {
	case "true", "yes", "y", "on":
		return true, true
	case "false", "no", "n", "off":
		return false, true
	}
	return false, false
}

// isDurationKey reports whether path names a Go duration setting, where a
// bare number is not text to quote but a duration to write with its unit.
func isDurationKey(path string) bool {
	switch path[strings.LastIndexByte(path, '.')+1:] {
	case "timeout", "ttl", "initial_interval", "max_interval", "max_retry_after":
		return true
	}
	return false
}

// conflictMessage explains two values that disagree: the user's and the
// schema's literal, or two of the user's own.
func (c *condenser) conflictMessage(p cueProblem) string {
	a, b := fmt.Sprint(p.args[0]), fmt.Sprint(p.args[1])
	if s := c.schemaAt(p.rel); s.Exists() && isConcrete(s) {
		want, got := literal(s), a
		if got == want {
			got = b
		}
		return fmt.Sprintf("%s: must be %s; got %s", p.path, want, got)
	}
	return fmt.Sprintf("%s is given two different values, %s and %s; keep one", p.path, a, b)
}

// lengthMessage explains a list with too few or too many items.
func (c *condenser) lengthMessage(p cueProblem) string {
	s := c.schemaAt(p.rel)
	switch {
	case !s.Exists():
		return fmt.Sprintf("%s: must have %v; got %v", p.path, items(p.args[1]), items(p.args[0]))
	case s.LookupPath(cue.MakePath(cue.AnyIndex)).Exists():
		return fmt.Sprintf("%s: must be %s, with at least %v; got %v", p.path, describe(s), items(p.args[1]), items(p.args[0]))
	}
	return fmt.Sprintf("%s: must be %s, with exactly %v; got %v", p.path, describe(s), items(p.args[1]), items(p.args[0]))
}

// missingMessage describes a missing required field at path.
func missingMessage(path string) string {
	parent, name := parentPath(path), path[strings.LastIndexByte(path, '.')+1:]
	if parent == "" {
		parent = "the graph"
	}
	switch path {
	case "start":
		return `the graph: missing required field "start": name the node every run begins with, e.g. start: "greet" (LangGraph's edge from START)`
	case "nodes":
		return `the graph: missing required field "nodes": declare at least one node, e.g. nodes: greet: {type: "reply", config: text: "Hello!", next: "END"}`
	case "state":
		return `the graph: missing required field "state": declare the state fields, e.g. state: messages: {type: "messages"}`
	}
	return fmt.Sprintf("%s: missing required field %q", parent, name)
}

// posFor finds the position of a document path: the recorded position of the
// path or its nearest ancestor, else the first position of the error that lies
// in a user's file.
func (c *condenser) posFor(path string, e errors.Error) diag.Pos {
	// The file itself (path "") is the last resort, after the error's own
	// positions: a problem in a definition has no document path.
	for p := path; p != ""; p = parentPath(p) {
		if pos, ok := c.pos[p]; ok {
			return pos
		}
	}
	if e != nil {
		for _, tp := range errors.Positions(e) {
			if tp.IsValid() && c.userFiles[tp.Filename()] {
				return c.idx.at(tp)
			}
		}
		// A problem inside a definition of the user's (#A.a) is placed at
		// the definition.
		if raw := e.Path(); len(raw) > 0 && strings.HasPrefix(raw[0], "#") {
			for p := strings.Join(raw, "."); p != ""; p = parentPath(p) {
				if pos, ok := c.pos[p]; ok {
					return pos
				}
				if pos, ok := c.idx.labels[p]; ok {
					return pos
				}
			}
		}
	}
	if pos, ok := c.pos[""]; ok {
		return pos
	}
	return diag.Pos{File: c.file, Line: 1, Col: 1}
}

// fieldNames lists the fields allowed at a path relative to the scope.
func (c *condenser) fieldNames(rel []string) []string {
	v := lookupSegs(c.scope, rel)
	it, err := v.Fields(cue.Optional(true))
	if err != nil {
		return nil
	}
	var names []string
	for it.Next() {
		names = append(names, selectorName(it.Selector()))
	}
	return names
}

func (c *condenser) userKind(rel []string) string {
	v := lookupSegs(c.user, rel)
	if !v.Exists() {
		return ""
	}
	return typeName(v.IncompleteKind())
}

// items says "1 item" or "N items".
func items(n any) string {
	if fmt.Sprint(n) == "1" {
		return "1 item"
	}
	return fmt.Sprintf("%v items", n)
}

func isIndex(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

func (c *condenser) userString(rel []string) string {
	v := lookupSegs(c.user, rel)
	if !v.Exists() {
		return ""
	}
	return fmt.Sprint(v)
}

// kindName names a CUE kind as a schema speaks of it.
func kindName(k cue.Kind) string {
	switch k {
	case cue.StructKind:
		return "struct"
	case cue.ListKind:
		return "list"
	case cue.NumberKind, cue.FloatKind:
		return "float"
	}
	return k.String()
}

// lookupSegs follows document path segments, using indexes for lists.
func lookupSegs(v cue.Value, segs []string) cue.Value {
	for _, s := range segs {
		if v.IncompleteKind() == cue.ListKind {
			i, err := strconv.Atoi(s)
			if err != nil {
				return cue.Value{}
			}
			v = v.LookupPath(cue.MakePath(cue.Index(i)))
			continue
		}
		v = v.LookupPath(cue.MakePath(cue.Str(s)))
	}
	return v
}

// docSegments converts a CUE error path to document path segments, dropping
// the schema definition it was reached through.
func docSegments(p []string) []string {
	out := make([]string, 0, len(p))
	for _, s := range p {
		if strings.HasPrefix(s, "#") && len(out) == 0 {
			continue
		}
		if strings.HasPrefix(s, `"`) {
			if u, err := strconv.Unquote(s); err == nil {
				s = u
			}
		}
		out = append(out, s)
	}
	return out
}

// under returns the member of set that path equals or lies beneath, or "".
func under(path string, set map[string]bool) string {
	for p := path; ; p = parentPath(p) {
		if set[p] {
			return p
		}
		if p == "" {
			return ""
		}
	}
}

func relOf(path, prefix string) []string {
	rest := strings.TrimPrefix(strings.TrimPrefix(path, prefix), ".")
	if rest == "" {
		return nil
	}
	return strings.Split(rest, ".")
}

func parentPath(p string) string {
	i := strings.LastIndexByte(p, '.')
	if i < 0 {
		return ""
	}
	return p[:i]
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// isIdentifier reports whether s matches ^[a-zA-Z_][a-zA-Z0-9_-]*$.
func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && (r == '-' || r >= '0' && r <= '9'):
		default:
			return false
		}
	}
	return true
}
