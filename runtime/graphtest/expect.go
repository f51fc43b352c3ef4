package graphtest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
)

// outcome is what one turn produced.
type outcome struct {
	res    *engine.Result
	events []event.Event
	// reply is the last assistant message of the turn, nil when it added none.
	reply *string
}

// failure formats one failed expectation: its position, the turn and what
// was expected against what happened.
func failure(pos diag.Pos, t *turn, what, format string, args ...any) string {
	prefix := ""
	if pos.IsValid() {
		prefix = pos.String() + ": "
	}
	return fmt.Sprintf("%sturn %d: %s: %s", prefix, t.index, what, fmt.Sprintf(format, args...))
}

// check compares a turn's outcome with its expectations and returns one
// failure per unmet expectation.
func check(g *compile.Graph, t *turn, out *outcome) []string {
	c := &checker{g: g, t: t, e: &t.expect, out: out}
	if out.res.Err != nil {
		c.errText = out.res.Err.Error()
	}
	c.status()
	c.path()
	c.state()
	c.exprs()
	c.reply()
	c.events()
	return c.fails
}

// checker collects the failures of one turn's expectations.
type checker struct {
	g       *compile.Graph
	t       *turn
	e       *expectation
	out     *outcome
	errText string
	fails   []string
}

// fail records a failure of the expectation key, positioned at it.
func (c *checker) fail(key, format string, args ...any) {
	c.fails = append(c.fails, failure(c.g.Spec.PosOf(c.e.path+"."+key), c.t, key, format, args...))
}

// failAt records a failure positioned at pos.
func (c *checker) failAt(pos diag.Pos, what, format string, args ...any) {
	c.fails = append(c.fails, failure(pos, c.t, what, format, args...))
}

// status checks the run's status and error.
func (c *checker) status() {
	e, res := c.e, c.out.res
	wantStatus := e.status
	if wantStatus == "" && e.err != nil {
		wantStatus = engine.StatusError
	}
	switch {
	case wantStatus != "" && res.Status != wantStatus:
		detail := ""
		if c.errText != "" {
			detail = " (error: " + c.errText + ")"
		}
		c.fail("status", "want %s, got %s%s", wantStatus, res.Status, detail)
	case wantStatus == "" && res.Status == engine.StatusError:
		// An error nobody expected fails the turn.
		c.failAt(c.t.pos, "run", "unexpected error: %s", c.errText)
	}
	if e.err != nil && !strings.Contains(c.errText, *e.err) {
		if c.errText == "" {
			c.fail("error", "want an error containing %q, got no error", *e.err)
		} else {
			c.fail("error", "want an error containing %q, got %q", *e.err, c.errText)
		}
	}
}

// path checks the nodes run: path, visits and not_visits.
func (c *checker) path() {
	e, ran := c.e, c.out.res.Path
	if e.hasPath && !slices.Equal(ran, e.runPath) {
		c.fail("path", "want %s, got %s", listText(e.runPath), listText(ran))
	}
	for _, n := range e.visits {
		if !slices.Contains(ran, n) {
			c.fail("visits", "want node %q to run, but the path was %s", n, listText(ran))
		}
	}
	for _, n := range e.notVisits {
		if slices.Contains(ran, n) {
			c.fail("not_visits", "want node %q not to run, but the path was %s", n, listText(ran))
		}
	}
}

// state checks the fields of state and contains.
func (c *checker) state() {
	e, st := c.e, c.out.res.State
	for _, k := range sortedKeys(e.state) {
		want, got := normalize(e.state[k]), normalize(st[k])
		if !reflect.DeepEqual(want, got) && !(isEmpty(want) && isEmpty(got)) {
			c.failAt(c.g.Spec.PosOf(e.path+".state."+k), "state."+k, "want %s, got %s", compact(want), compact(got))
		}
	}
	for _, k := range sortedKeys(e.contains) {
		if msg := containsFailure(normalize(st[k]), normalize(e.contains[k])); msg != "" {
			c.failAt(c.g.Spec.PosOf(e.path+".contains."+k), "contains."+k, "%s", msg)
		}
	}
}

// exprs checks the expressions that must hold over the state.
func (c *checker) exprs() {
	if len(c.e.exprs) == 0 {
		return
	}
	scope := scopeOf(c.g, c.out.res.State)
	for _, x := range c.e.exprs {
		v, err := x.prog.Eval(scope)
		switch {
		case err != nil:
			c.failAt(x.pos, "expr", "%q failed: %v", x.src, err)
		case v != true:
			c.failAt(x.pos, "expr", "want %q to hold, it is %v", x.src, compact(v))
		}
	}
}

// reply checks the text of the turn's replies.
func (c *checker) reply() {
	want := c.e.reply
	if want == nil {
		return
	}
	switch {
	case c.out.reply == nil:
		c.fail("reply", "want a reply containing %q, but the turn added no assistant message", *want)
	case !strings.Contains(*c.out.reply, *want):
		c.fail("reply", "want a reply containing %q, got %q", *want, *c.out.reply)
	}
}

// events checks the events the turn must have emitted.
func (c *checker) events() {
	for i, want := range c.e.events {
		if !eventSeen(c.out.events, want) {
			c.failAt(c.g.Spec.PosOf(fmt.Sprintf("%s.events.%d", c.e.path, i)), "events",
				"want an event %s, but the turn emitted %s", eventText(want), eventsSeen(c.out.events, want.typ))
		}
	}
}

// scopeOf is the environment expressions see, as the engine builds it: the
// graph's vars, every state field, and state itself.
func scopeOf(g *compile.Graph, state map[string]any) map[string]any {
	s := make(map[string]any, len(state)+len(g.Spec.Vars)+1)
	for k, v := range g.Spec.Vars {
		s[k] = v
	}
	for k, v := range state {
		s[k] = v
	}
	s["state"] = state
	return s
}

// containsFailure checks that got contains want: a substring of a string, or
// items of a list (an object item matches any list item it is a subset of).
// It returns "" when it does.
func containsFailure(got, want any) string {
	switch g := got.(type) {
	case string:
		w, ok := want.(string)
		if !ok {
			return fmt.Sprintf("the field is a string; want a substring, got %s", compact(want))
		}
		if !strings.Contains(g, w) {
			return fmt.Sprintf("want %q in %q", w, g)
		}
		return ""
	case []any, nil:
		items, ok := want.([]any)
		if !ok {
			items = []any{want}
		}
		list, _ := g.([]any)
		var missing []string
		for _, item := range items {
			found := false
			for _, have := range list {
				if subset(item, have) {
					found = true
					break
				}
			}
			if !found {
				missing = append(missing, compact(item))
			}
		}
		if len(missing) > 0 {
			return fmt.Sprintf("want items %s in %s", strings.Join(missing, ", "), compact(got))
		}
		return ""
	}
	return fmt.Sprintf("the field holds %s, which is neither a string nor a list", compact(got))
}

// subset reports whether want matches got: objects by the keys want lists
// (recursively), lists item by item, anything else by equality.
func subset(want, got any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			gv, present := g[k]
			if !present || !subset(wv, gv) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !subset(w[i], g[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(want, got)
}

func eventSeen(events []event.Event, want eventExpect) bool {
	for _, ev := range events {
		if ev.Type != want.typ || (want.node != "" && ev.Node != want.node) {
			continue
		}
		if want.payload == nil || subset(normalize(want.payload), normalize(ev.Payload)) {
			return true
		}
	}
	return false
}

func eventText(e eventExpect) string {
	s := "of type " + e.typ
	if e.node != "" {
		s += " from node " + e.node
	}
	if e.payload != nil {
		s += " with payload " + compact(e.payload)
	}
	return s
}

// eventsSeen describes the turn's events of a type, or the types seen.
func eventsSeen(events []event.Event, typ string) string {
	var same []string
	types := map[string]bool{}
	var order []string
	for _, ev := range events {
		if ev.Type == typ {
			p := compact(ev.Payload)
			if len(p) > 200 {
				p = p[:197] + "..."
			}
			same = append(same, p)
		}
		if !types[ev.Type] {
			types[ev.Type] = true
			order = append(order, ev.Type)
		}
	}
	if len(same) > 0 {
		return fmt.Sprintf("%d such events: %s", len(same), strings.Join(same, "; "))
	}
	return fmt.Sprintf("none of that type (types seen: %s)", strings.Join(order, ", "))
}

// normalize converts a value to its JSON form (numbers as float64, lists as
// []any, objects as map[string]any), so that values from graph files, node
// updates and checkpoints compare equal when their JSON is equal.
func normalize(v any) any {
	raw, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		return v
	}
	return out
}

// isEmpty reports whether v is null, "", an empty list or an empty object:
// a field not set yet equals any of them.
func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// decodeBlob decodes a stored field value; an absent value is nil.
func decodeBlob(raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// deepCopy copies a decoded JSON value, so that no run can modify the case.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, item := range x {
			out[k] = deepCopy(item)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			out[i] = deepCopy(item)
		}
		return out
	}
	return v
}

// compact formats a value as compact JSON for messages.
func compact(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(raw)
}

func listText(list []string) string {
	if len(list) == 0 {
		return "[]"
	}
	return "[" + strings.Join(list, ", ") + "]"
}
