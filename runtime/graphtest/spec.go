package graphtest

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/expression"
	"github.com/graphctl/graphctl/runtime/graph"
)

// Diagnostic codes reported by Check.
const (
	CodeUnknownKey     = "test-unknown-key"
	CodeInvalidValue   = "test-invalid-value"
	CodeUnknownNode    = "test-unknown-node"
	CodeUnknownField   = "test-unknown-field"
	CodeInvalidExpr    = "test-invalid-expr"
	CodeInvalidTurn    = "test-invalid-turn"
	CodeInvalidMock    = "test-invalid-mock"
	CodeDuplicateCase  = "test-duplicate-name"
	CodeMissingCaseKey = "test-missing-key"
	// CodeUnknownEvent is a warning: an expected event's type is close to
	// one of a run's own events but is none of them.
	CodeUnknownEvent = "test-unknown-event"
)

// lifecycleEvents are the event types every run sends.
var lifecycleEvents = []string{event.RunStart, event.NodeStart, event.NodeEnd, event.Checkpoint, event.Text, event.Interrupt, event.Error, event.Done}

// Run statuses a turn can expect.
var statuses = []string{"completed", "interrupted", "error"}

// The keys each level of a case may hold; any other key is a mistake.
var (
	caseKeys   = []string{"name", "description", "mocks", "llm", "turns"}
	mockKeys   = []string{"update", "error", "interrupt"}
	turnKeys   = []string{"input", "resume", "interrupt", "restart", "expect"}
	expectKeys = []string{"status", "path", "visits", "not_visits", "state", "contains", "expr", "reply", "events", "error"}
	eventKeys  = []string{"type", "node", "payload"}
	replyKeys  = []string{"content", "json", "tool_calls", "node"}
	callKeys   = []string{"name", "arguments"}
)

// testCase is one parsed, checked test case.
type testCase struct {
	index int
	name  string
	path  string
	pos   diag.Pos
	mocks map[string]*mock
	llm   []any
	turns []*turn
}

// mock replaces a node's implementation for one case.
type mock struct {
	update    map[string]any
	errCode   string
	errMsg    string
	isErr     bool
	field     string
	payload   map[string]any
	interrupt bool
}

// turn is one invocation of the case's thread.
type turn struct {
	index     int // 1-based, as reported
	path      string
	pos       diag.Pos
	text      string
	isText    bool
	input     map[string]any
	hasInput  bool
	resume    any
	hasResume bool
	interrupt string
	restart   bool
	expect    expectation
}

// expectation is what a turn must produce; nil/empty members are not checked.
type expectation struct {
	path      string // document path of the expect block
	status    string
	runPath   []string
	hasPath   bool
	visits    []string
	notVisits []string
	state     map[string]any
	contains  map[string]any
	exprs     []checkExpr
	reply     *string
	events    []eventExpect
	err       *string
}

type checkExpr struct {
	src  string
	prog *expression.Program
	pos  diag.Pos
}

type eventExpect struct {
	typ     string
	node    string
	payload map[string]any
}

// parser turns decoded test cases into testCase values, reporting every
// problem at its position.
type parser struct {
	g     *compile.Graph
	diags diag.List
}

// Check validates the graph's declarative test cases without running them:
// unknown keys, unknown node names in mocks and path expectations, unknown
// state fields in inputs, mocks and state expectations, expressions that do not
// compile against the graph's state, and turns that neither send input nor
// resume. Each problem is reported at its file:line:col.
func Check(g *compile.Graph) diag.List {
	_, diags := parseCases(g)
	return diags
}

// parseCases parses every test case of g. Cases with problems are still
// returned (so that runs can report them as failures), with the problems in
// the diagnostics.
func parseCases(g *compile.Graph) ([]*testCase, diag.List) {
	p := &parser{g: g}
	seen := map[string]int{}
	cases := make([]*testCase, 0, len(g.Spec.Tests))
	for i, raw := range g.Spec.Tests {
		tc := p.parseCase(i, raw)
		if j, dup := seen[tc.name]; dup && tc.name != "" {
			p.errorf(tc.path+".name", CodeDuplicateCase, "test %q is declared twice (tests %d and %d)", tc.name, j, i)
		} else {
			seen[tc.name] = i
		}
		cases = append(cases, tc)
	}
	p.diags.Sort()
	return cases, p.diags
}

// pos returns the position of a document path in the graph's files.
func (p *parser) pos(path string) diag.Pos {
	return p.g.Spec.PosOf(path)
}

func (p *parser) errorf(path, code, format string, args ...any) {
	p.diags.Errorf(p.pos(path), code, path, format, args...)
}

// closed reports keys of m that are not in allowed.
func (p *parser) closed(path string, m map[string]any, allowed []string, what string) {
	for _, k := range sortedKeys(m) {
		if !contains(allowed, k) {
			if hint := diag.DidYouMean(k, allowed); hint != "" {
				p.errorf(path+"."+k, CodeUnknownKey, "%s has no key %q%s (allowed keys: %s)", what, k, hint, strings.Join(allowed, ", "))
				continue
			}
			p.errorf(path+"."+k, CodeUnknownKey, "%s has no key %q; allowed keys: %s", what, k, strings.Join(allowed, ", "))
		}
	}
}

func (p *parser) parseCase(i int, raw map[string]any) *testCase {
	path := fmt.Sprintf("tests.%d", i)
	tc := &testCase{index: i, path: path, pos: p.pos(path), mocks: map[string]*mock{}}
	if i < len(p.g.Spec.TestsPos) && p.g.Spec.TestsPos[i].IsValid() {
		tc.pos = p.g.Spec.TestsPos[i]
	}
	p.closed(path, raw, caseKeys, "a test case")
	name, ok := raw["name"].(string)
	if !ok || strings.TrimSpace(name) == "" {
		p.errorf(path, CodeMissingCaseKey, "test case %d has no name: every case needs name: \"...\"", i)
		name = fmt.Sprintf("tests[%d]", i)
	}
	tc.name = name
	if m, present := raw["mocks"]; present {
		mocks, ok := m.(map[string]any)
		if !ok {
			p.errorf(path+".mocks", CodeInvalidValue, "test %q: mocks must be an object of node name to mock, got %s", name, graph.DescribeValue(m))
		}
		for _, nodeName := range sortedKeys(mocks) {
			if mk := p.parseMock(path+".mocks."+nodeName, nodeName, mocks[nodeName]); mk != nil {
				tc.mocks[nodeName] = mk
			}
		}
	}
	if l, present := raw["llm"]; present {
		list, ok := l.([]any)
		if !ok {
			p.errorf(path+".llm", CodeInvalidValue, "test %q: llm must be a list of scripted model replies, got %s", name, graph.DescribeValue(l))
		} else if _, reads := p.g.Registry.OrDefault().ScriptKey(); !reads {
			p.errorf(path+".llm", CodeInvalidValue, "test %q scripts model replies (llm), but no node type of the graph's registry reads scripted replies", name)
		}
		for j, reply := range list {
			p.checkReply(fmt.Sprintf("%s.llm.%d", path, j), j+1, reply)
		}
		tc.llm = list
	}
	turns, ok := raw["turns"].([]any)
	if !ok || len(turns) == 0 {
		p.errorf(path, CodeMissingCaseKey, "test %q has no turns: list at least one under turns", name)
		return tc
	}
	for j, t := range turns {
		tc.turns = append(tc.turns, p.parseTurn(fmt.Sprintf("%s.turns.%d", path, j), j+1, t))
	}
	if len(tc.turns) > 0 && tc.turns[0].hasResume {
		p.errorf(tc.turns[0].path+".resume", CodeInvalidTurn, "test %q: the first turn cannot resume: a new thread has no pending interrupt", name)
	}
	return tc
}

// checkReply checks the nth scripted model reply of a case: a string, or
// {content | json | tool_calls: [{name, arguments}], node?}.
func (p *parser) checkReply(path string, n int, raw any) {
	what := fmt.Sprintf("scripted reply %d", n)
	reply, ok := raw.(map[string]any)
	if !ok {
		if _, isText := raw.(string); !isText {
			p.errorf(path, CodeInvalidValue, "%s must be a string or an object {content | json | tool_calls, node?}, got %s", what, graph.DescribeValue(raw))
		}
		return
	}
	p.closed(path, reply, replyKeys, "a scripted reply")
	if v, ok := reply["content"]; ok {
		if _, isText := v.(string); !isText {
			p.errorf(path+".content", CodeInvalidValue, "%s: content must be a string, got %s", what, graph.DescribeValue(v))
		}
		if _, both := reply["json"]; both {
			p.errorf(path+".json", CodeInvalidValue, "%s sets content and json: a reply is one or the other", what)
		}
	}
	if v, ok := reply["node"]; ok {
		if node, isText := v.(string); !isText {
			p.errorf(path+".node", CodeInvalidValue, "%s: node must be a string, got %s", what, graph.DescribeValue(v))
		} else if names := nodeNames(p.g, map[*compile.Graph]bool{}); !contains(names, node) {
			p.errorf(path+".node", CodeUnknownNode, "%s names node %q, which neither the graph nor its subgraphs declare%s", what, node, diag.DidYouMean(node, names))
		}
	}
	v, ok := reply["tool_calls"]
	if !ok {
		return
	}
	calls, isList := v.([]any)
	if !isList {
		p.errorf(path+".tool_calls", CodeInvalidValue, "%s: tool_calls must be a list of {name, arguments}, got %s", what, graph.DescribeValue(v))
		return
	}
	for k, c := range calls {
		callPath := fmt.Sprintf("%s.tool_calls.%d", path, k)
		call, isObject := c.(map[string]any)
		if !isObject {
			p.errorf(callPath, CodeInvalidValue, "%s: tool call %d must be an object {name, arguments}, got %s", what, k+1, graph.DescribeValue(c))
			continue
		}
		p.closed(callPath, call, callKeys, "a tool call")
		if name, _ := call["name"].(string); name == "" {
			p.errorf(callPath, CodeInvalidValue, "%s: tool call %d has no name: name the tool, e.g. name: \"tools__calculate\"", what, k+1)
		}
		switch a := call["arguments"].(type) {
		case nil, map[string]any, string:
		default:
			p.errorf(callPath+".arguments", CodeInvalidValue, "%s: the arguments of tool call %d must be an object, got %s", what, k+1, graph.DescribeValue(a))
		}
	}
}

// nodeNames lists the nodes of g and of its subgraphs, whose model calls a
// scripted reply may be meant for.
func nodeNames(g *compile.Graph, seen map[*compile.Graph]bool) []string {
	if seen[g] {
		return nil
	}
	seen[g] = true
	names := append([]string(nil), g.NodeOrder...)
	for _, name := range g.NodeOrder {
		if n := g.Nodes[name]; n != nil && n.Subgraph != nil && n.Subgraph.Graph != nil {
			names = append(names, nodeNames(n.Subgraph.Graph, seen)...)
		}
	}
	return names
}

// interruptOfGraph reports whether s names a node of the graph or of its
// subgraphs, or is the id of an interrupt one of them raised
// ("approve-3f2a…").
func (p *parser) interruptOfGraph(s string) bool {
	for _, name := range nodeNames(p.g, map[*compile.Graph]bool{}) {
		if s == name || strings.HasPrefix(s, name+"-") {
			return true
		}
	}
	return false
}

func (p *parser) knownNode(path, name, what string) bool {
	if _, ok := p.g.Nodes[name]; ok {
		return true
	}
	p.errorf(path, CodeUnknownNode, "%s names node %q, which the graph does not declare%s", what, name, diag.DidYouMean(name, p.g.NodeOrder))
	return false
}

func (p *parser) knownField(path, name, what string) *compile.Field {
	if f, ok := p.g.Fields[name]; ok {
		return f
	}
	p.errorf(path, CodeUnknownField, "%s names state field %q, which the graph does not declare%s", what, name, diag.DidYouMean(name, p.g.FieldOrder))
	return nil
}

// fieldValues checks that every key of m is a state field and its value fits
// the field's type.
func (p *parser) fieldValues(path string, m map[string]any, what string) {
	for _, k := range sortedKeys(m) {
		f := p.knownField(path+"."+k, k, what)
		if f == nil {
			continue
		}
		v, err := f.Spec.Type.Normalize(m[k])
		if err != nil {
			p.errorf(path+"."+k, CodeInvalidValue, "%s: state field %q (%s): %v", what, k, f.Spec.Type, err)
			continue
		}
		if err := f.CheckEnum(v); err != nil {
			p.errorf(path+"."+k, CodeInvalidValue, "%s: %v", what, err)
		}
	}
}

func (p *parser) parseMock(path, nodeName string, v any) *mock {
	p.knownNode(path, nodeName, "mock")
	m, ok := v.(map[string]any)
	if !ok {
		p.errorf(path, CodeInvalidMock, "mock of node %q must be an object with update, error or interrupt, got %s", nodeName, graph.DescribeValue(v))
		return nil
	}
	p.closed(path, m, mockKeys, "a mock")
	mk := &mock{}
	n := 0
	if u, present := m["update"]; present {
		n++
		up, ok := u.(map[string]any)
		if !ok {
			p.errorf(path+".update", CodeInvalidMock, "mock of node %q: update must be an object of state fields, got %s", nodeName, graph.DescribeValue(u))
		} else {
			p.fieldValues(path+".update", up, "mock update of node "+nodeName)
			mk.update = up
		}
	}
	if e, present := m["error"]; present {
		n++
		mk.isErr = true
		em, ok := e.(map[string]any)
		if !ok {
			p.errorf(path+".error", CodeInvalidMock, "mock of node %q: error must be {code: string, message: string}, got %s", nodeName, graph.DescribeValue(e))
		} else {
			p.closed(path+".error", em, []string{"code", "message"}, "a mock error")
			mk.errCode, _ = em["code"].(string)
			mk.errMsg, _ = em["message"].(string)
			if mk.errCode == "" {
				p.errorf(path+".error", CodeInvalidMock, "mock of node %q: error needs a code (what catch and retry match on)", nodeName)
			}
			if mk.errMsg == "" {
				mk.errMsg = "mocked failure"
			}
		}
	}
	if in, present := m["interrupt"]; present {
		n++
		mk.interrupt = true
		im, ok := in.(map[string]any)
		if !ok {
			p.errorf(path+".interrupt", CodeInvalidMock, "mock of node %q: interrupt must be {field: string, payload?: {...}}, got %s", nodeName, graph.DescribeValue(in))
		} else {
			p.closed(path+".interrupt", im, []string{"field", "payload"}, "a mock interrupt")
			mk.field, _ = im["field"].(string)
			if mk.field == "" {
				p.errorf(path+".interrupt", CodeInvalidMock, "mock of node %q: interrupt needs the field that receives the answer", nodeName)
			} else {
				p.knownField(path+".interrupt.field", mk.field, "mock interrupt of node "+nodeName)
			}
			if pl, present := im["payload"]; present {
				if mk.payload, ok = pl.(map[string]any); !ok {
					p.errorf(path+".interrupt.payload", CodeInvalidMock, "mock of node %q: interrupt payload must be an object, got %s", nodeName, graph.DescribeValue(pl))
				}
			}
		}
	}
	if n != 1 {
		p.errorf(path, CodeInvalidMock, "mock of node %q must set exactly one of update, error and interrupt (it sets %d)", nodeName, n)
	}
	return mk
}

func (p *parser) parseTurn(path string, index int, v any) *turn {
	t := &turn{index: index, path: path, pos: p.pos(path)}
	m, ok := v.(map[string]any)
	if !ok {
		p.errorf(path, CodeInvalidTurn, "turn %d must be an object with input or resume, got %s", index, graph.DescribeValue(v))
		return t
	}
	p.closed(path, m, turnKeys, "a turn")
	if in, present := m["input"]; present {
		t.hasInput = true
		switch x := in.(type) {
		case string:
			t.text, t.isText = x, true
			if !p.hasMessagesField() {
				p.errorf(path+".input", CodeInvalidTurn, "turn %d: a text input is a chat message, but the graph has no field of type messages; give the input as an object of fields", index)
			}
		case map[string]any:
			t.input = x
			p.fieldValues(path+".input", x, fmt.Sprintf("turn %d input", index))
		default:
			p.errorf(path+".input", CodeInvalidTurn, "turn %d: input must be a chat message (string) or an object of state fields, got %s", index, graph.DescribeValue(in))
		}
	}
	t.resume, t.hasResume = m["resume"]
	if iv, present := m["interrupt"]; present {
		s, ok := iv.(string)
		if !ok || s == "" {
			p.errorf(path+".interrupt", CodeInvalidTurn, "turn %d: interrupt names the interrupt to resume (its id or node), got %s", index, graph.DescribeValue(iv))
		} else if !p.interruptOfGraph(s) {
			p.errorf(path+".interrupt", CodeUnknownNode, "turn %d: interrupt %q names no node of the graph or its subgraphs, nor an interrupt id of one (NODE-…)%s", index, s, diag.DidYouMean(s, p.g.NodeOrder))
		}
		t.interrupt = s
		if !t.hasResume {
			p.errorf(path+".interrupt", CodeInvalidTurn, "turn %d names interrupt %q but gives no resume value", index, s)
		}
	}
	if r, present := m["restart"]; present {
		b, ok := r.(bool)
		if !ok {
			p.errorf(path+".restart", CodeInvalidTurn, "turn %d: restart must be a bool, got %s", index, graph.DescribeValue(r))
		}
		t.restart = b
	}
	switch {
	case t.hasInput && t.hasResume:
		p.errorf(path, CodeInvalidTurn, "turn %d has both input and resume: a turn either sends input or answers an interrupt", index)
	case !t.hasInput && !t.hasResume:
		p.errorf(path, CodeInvalidTurn, "turn %d has neither input nor resume: say what the turn sends", index)
	}
	t.expect.path = path + ".expect"
	if e, present := m["expect"]; present {
		em, ok := e.(map[string]any)
		if !ok {
			p.errorf(path+".expect", CodeInvalidValue, "turn %d: expect must be an object, got %s", index, graph.DescribeValue(e))
		} else {
			p.parseExpect(&t.expect, index, em)
		}
	}
	return t
}

func (p *parser) hasMessagesField() bool {
	for _, name := range p.g.FieldOrder {
		if p.g.Fields[name].Spec.Type.Kind == graph.Messages {
			return true
		}
	}
	return false
}

func (p *parser) stringList(path string, v any, what string) []string {
	list, ok := v.([]any)
	if !ok {
		p.errorf(path, CodeInvalidValue, "%s must be a list of strings, got %s", what, graph.DescribeValue(v))
		return nil
	}
	out := make([]string, 0, len(list))
	for i, item := range list {
		s, ok := item.(string)
		if !ok {
			p.errorf(fmt.Sprintf("%s.%d", path, i), CodeInvalidValue, "%s: item %d must be a string, got %s", what, i, graph.DescribeValue(item))
			continue
		}
		out = append(out, s)
	}
	return out
}

func (p *parser) nodeList(path string, v any, what string) []string {
	names := p.stringList(path, v, what)
	list, _ := v.([]any)
	for i, name := range names {
		if name == graph.End {
			continue
		}
		at := path
		if i < len(list) {
			at = fmt.Sprintf("%s.%d", path, i)
		}
		p.knownNode(at, name, what)
	}
	return names
}

func (p *parser) optString(path string, v any, what string) *string {
	s, ok := v.(string)
	if !ok {
		p.errorf(path, CodeInvalidValue, "%s must be a string, got %s", what, graph.DescribeValue(v))
		return nil
	}
	return &s
}

func (p *parser) parseExpect(e *expectation, index int, m map[string]any) {
	path := e.path
	p.closed(path, m, expectKeys, "an expect block")
	turnName := fmt.Sprintf("turn %d", index)
	if v, ok := m["status"]; ok {
		s, _ := v.(string)
		if !contains(statuses, s) {
			got := graph.DescribeValue(v)
			if _, isString := v.(string); isString {
				got = fmt.Sprintf("%q", v)
			}
			p.errorf(path+".status", CodeInvalidValue, "%s: status must be one of %s; got %s", turnName, strings.Join(statuses, ", "), got)
		}
		e.status = s
	}
	if v, ok := m["path"]; ok {
		e.runPath, e.hasPath = p.nodeList(path+".path", v, turnName+" expect.path"), true
	}
	if v, ok := m["visits"]; ok {
		e.visits = p.nodeList(path+".visits", v, turnName+" expect.visits")
	}
	if v, ok := m["not_visits"]; ok {
		e.notVisits = p.nodeList(path+".not_visits", v, turnName+" expect.not_visits")
	}
	if v, ok := m["state"]; ok {
		if sm, ok := v.(map[string]any); ok {
			p.fieldValues(path+".state", sm, turnName+" expect.state")
			e.state = sm
		} else {
			p.errorf(path+".state", CodeInvalidValue, "%s: expect.state must be an object of state fields, got %s", turnName, graph.DescribeValue(v))
		}
	}
	if v, ok := m["contains"]; ok {
		if cm, ok := v.(map[string]any); ok {
			p.parseContains(path+".contains", turnName, cm)
			e.contains = cm
		} else {
			p.errorf(path+".contains", CodeInvalidValue, "%s: expect.contains must be an object of state fields, got %s", turnName, graph.DescribeValue(v))
		}
	}
	if v, ok := m["expr"]; ok {
		srcs := p.stringList(path+".expr", v, turnName+" expect.expr")
		for i, src := range srcs {
			at := fmt.Sprintf("%s.expr.%d", path, i)
			prog, err := p.g.Env.Compile(src, graph.Bool)
			if err != nil {
				p.errorf(at, CodeInvalidExpr, "%s: expression %q does not compile against the graph's state: %v", turnName, src, err)
				continue
			}
			e.exprs = append(e.exprs, checkExpr{src: src, prog: prog, pos: p.pos(at)})
		}
	}
	if v, ok := m["reply"]; ok {
		e.reply = p.optString(path+".reply", v, turnName+" expect.reply")
	}
	if v, ok := m["error"]; ok {
		e.err = p.optString(path+".error", v, turnName+" expect.error")
		if e.status != "" && e.status != "error" {
			p.errorf(path+".error", CodeInvalidValue, "%s expects an error but status %q", turnName, e.status)
		}
	}
	if v, ok := m["events"]; ok {
		list, isList := v.([]any)
		if !isList {
			p.errorf(path+".events", CodeInvalidValue, "%s: expect.events must be a list of {type, payload?}, got %s", turnName, graph.DescribeValue(v))
		}
		for i, item := range list {
			at := fmt.Sprintf("%s.events.%d", path, i)
			em, ok := item.(map[string]any)
			if !ok {
				p.errorf(at, CodeInvalidValue, "%s: expected event %d must be an object {type, payload?}, got %s", turnName, i, graph.DescribeValue(item))
				continue
			}
			p.closed(at, em, eventKeys, "an expected event")
			ev := eventExpect{}
			ev.typ, _ = em["type"].(string)
			if ev.typ == "" {
				p.errorf(at, CodeInvalidValue, "%s: expected event %d needs a type", turnName, i)
			} else if best := diag.Closest(ev.typ, lifecycleEvents); best != "" && !slices.Contains(lifecycleEvents, ev.typ) {
				// Node types send events of their own, so an unknown type is
				// no mistake; one a letter or two from a run's own is.
				p.diags.Warnf(p.pos(at+".type"), CodeUnknownEvent, at+".type",
					"%s: expected event %d has type %q; did you mean %q?", turnName, i, ev.typ, best)
			}
			if n, present := em["node"]; present {
				ev.node, _ = n.(string)
				p.knownNode(at+".node", ev.node, turnName+" expected event")
			}
			if pl, present := em["payload"]; present {
				if ev.payload, ok = pl.(map[string]any); !ok {
					p.errorf(at+".payload", CodeInvalidValue, "%s: expected event %d: payload must be an object, got %s", turnName, i, graph.DescribeValue(pl))
				}
			}
			e.events = append(e.events, ev)
		}
	}
}

// parseContains checks a contains block: a string field takes a substring, a
// list field an item or a list of items.
func (p *parser) parseContains(path, turnName string, m map[string]any) {
	for _, k := range sortedKeys(m) {
		f := p.knownField(path+"."+k, k, turnName+" expect.contains")
		if f == nil {
			continue
		}
		t := f.Spec.Type
		switch {
		case t.Kind == graph.String:
			if _, ok := m[k].(string); !ok {
				p.errorf(path+"."+k, CodeInvalidValue, "%s expect.contains: %q is a string field; give a substring, got %s", turnName, k, graph.DescribeValue(m[k]))
			}
		case t.IsList(), t.Kind == graph.Any:
		default:
			p.errorf(path+"."+k, CodeInvalidValue, "%s expect.contains: %q is of type %s; contains applies to string and list fields (use state for equality)", turnName, k, t)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
