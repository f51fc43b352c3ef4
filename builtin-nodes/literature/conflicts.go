package literature

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/graphctl/graphctl/builtin-nodes/internal/check"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
)

// ConflictEventType is the type of the event lit_conflicts emits when it
// opens conflicts: {count, conflicts: [{id, hypothesis_id, kind,
// source_a_id, source_b_id}]}.
const ConflictEventType = "conflict_detected"

// Kinds of structurally detected conflicts.
const (
	// ConflictStance: one hypothesis lists one record as supporting and the
	// other as contradicting.
	ConflictStance = "stance"
	// ConflictOutcome: one hypothesis cites both records, one reporting an
	// effect and the other none (see Outcome).
	ConflictOutcome = "outcome"
)

// AutoConflictPrefix starts the ids of the conflicts lit_conflicts opens:
// auto-c1, auto-c2, …
const AutoConflictPrefix = "auto-c"

func init() {
	node.MustRegister(node.Type{
		Name: "lit_conflicts",
		Description: "Opens a conflict for every two pieces of evidence cited on one hypothesis with opposite stance " +
			"(supporting vs contradicting) or opposite outcome (an effect vs none), unless the pair has a conflict already.",
		Config: `{
	hypotheses?: *"hypotheses" | string
	evidence?: *"evidence" | string
	into?: *"conflicts" | string
	max_new?: *10 | int & >0 & <=100
}`,
		New: newConflictsNode,
	})
}

type conflictsNode struct {
	hypotheses, evidence, into string
	maxNew                     int
}

func newConflictsNode(b node.Builder) (node.Node, error) {
	var cfg struct {
		Hypotheses string `json:"hypotheses"`
		Evidence   string `json:"evidence"`
		Into       string `json:"into"`
		MaxNew     int    `json:"max_new"`
	}
	if err := b.Decode(&cfg); err != nil {
		b.Errorf("", "invalid-config", "lit_conflicts node %q: %v", b.NodeName(), err)
		return nil, nil
	}
	n := &conflictsNode{hypotheses: cfg.Hypotheses, evidence: cfg.Evidence, into: cfg.Into, maxNew: cfg.MaxNew}
	if n.hypotheses == "" {
		n.hypotheses = "hypotheses"
	}
	if n.evidence == "" {
		n.evidence = "evidence"
	}
	if n.into == "" {
		n.into = "conflicts"
	}
	if n.maxNew <= 0 {
		n.maxNew = 10
	}
	for _, f := range []struct{ path, name string }{{"hypotheses", n.hypotheses}, {"evidence", n.evidence}, {"into", n.into}} {
		fd := check.Field(b, f.path, f.name)
		if fd == nil {
			continue
		}
		if fd.Type.Kind != graph.List || fd.Type.Elem == nil || (fd.Type.Elem.Kind != graph.Object && fd.Type.Elem.Kind != graph.Any) {
			b.Errorf(f.path, "invalid-config", "lit_conflicts node %q reads objects from %q, declared as %s; declare it as list<object>", b.NodeName(), f.name, fd.Type)
		} else if f.path == "into" && fd.Reducer != "merge_by_id" {
			b.Errorf("into", "invalid-config", "lit_conflicts node %q adds conflicts to %q, whose reducer is %q; declare reducer: \"merge_by_id\" so that resolving a conflict updates it by id",
				b.NodeName(), f.name, reducerName(fd.Reducer))
		}
	}
	if b.Failed() {
		return nil, nil
	}
	return n, nil
}

// pairKey identifies an unordered pair of evidence ids.
func pairKey(a, b string) string {
	if a > b {
		a, b = b, a
	}
	return a + "\x00" + b
}

func objects(v any) []map[string]any {
	list, _ := v.([]any)
	out := make([]map[string]any, 0, len(list))
	for _, x := range list {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func stringList(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		if s, ok := x.(string); ok && s != "" && !containsString(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// Run implements node.Node.
func (n *conflictsNode) Run(_ context.Context, in *node.Input) (node.Update, error) {
	evidence := map[string]map[string]any{}
	for _, e := range objects(in.State[n.evidence]) {
		if id := str(e, "id"); id != "" {
			evidence[id] = e
		}
	}
	outcomes := map[string]string{}
	outcome := func(id string) string {
		if o, ok := outcomes[id]; ok {
			return o
		}
		e := evidence[id]
		o := str(e, "outcome")
		if o == "" {
			o = Outcome(str(e, "title"), str(e, "summary"))
		}
		outcomes[id] = o
		return o
	}
	seen := map[string]bool{}
	next := 1
	for _, c := range objects(in.State[n.into]) {
		a, b := str(c, "source_a_id"), str(c, "source_b_id")
		if a != "" && b != "" {
			seen[pairKey(a, b)] = true
		}
		if num, ok := strings.CutPrefix(str(c, "id"), AutoConflictPrefix); ok {
			if k, err := strconv.Atoi(num); err == nil && k >= next {
				next = k + 1
			}
		}
	}
	var opened []any
	var reported []any
	add := func(h map[string]any, kind, a, b, description string) {
		if len(opened) == n.maxNew || a == b || seen[pairKey(a, b)] {
			return
		}
		seen[pairKey(a, b)] = true
		id := AutoConflictPrefix + strconv.Itoa(next)
		next++
		opened = append(opened, map[string]any{
			"id": id, "description": description, "source_a_id": a, "source_b_id": b,
			"status": "open", "resolution": nil, "hypothesis_id": str(h, "id"), "kind": kind, "detected_by": "structure",
		})
		reported = append(reported, map[string]any{"id": id, "hypothesis_id": str(h, "id"), "kind": kind, "source_a_id": a, "source_b_id": b})
	}
	for _, h := range objects(in.State[n.hypotheses]) {
		var sup, con []string
		for _, id := range stringList(h["supporting_evidence_ids"]) {
			if evidence[id] != nil {
				sup = append(sup, id)
			}
		}
		for _, id := range stringList(h["contradicting_evidence_ids"]) {
			if evidence[id] != nil {
				con = append(con, id)
			}
		}
		for _, a := range sup {
			for _, b := range con {
				add(h, ConflictStance, a, b, fmt.Sprintf("On %s, %s supports it while %s contradicts it.",
					hypothesisText(h), recordText(evidence[a]), recordText(evidence[b])))
			}
		}
		cited := append(append([]string(nil), sup...), con...)
		for i, a := range cited {
			for _, b := range cited[i+1:] {
				oa, ob := outcome(a), outcome(b)
				if oa == "" || ob == "" || oa == ob {
					continue
				}
				if oa == OutcomeNoEffect {
					a, b, oa, ob = b, a, ob, oa
				}
				add(h, ConflictOutcome, a, b, fmt.Sprintf("On %s, %s reports an effect (%q) while %s reports none (%q).",
					hypothesisText(h), recordText(evidence[a]), OutcomeSentence(str(evidence[a], "title"), str(evidence[a], "summary"), oa),
					recordText(evidence[b]), OutcomeSentence(str(evidence[b], "title"), str(evidence[b], "summary"), ob)))
			}
		}
	}
	if len(opened) == 0 {
		return node.Update{}, nil
	}
	if in.Emit != nil {
		in.Emit(event.Event{Type: ConflictEventType, Payload: map[string]any{"count": len(opened), "conflicts": reported}})
	}
	return node.Update{n.into: opened}, nil
}

func hypothesisText(h map[string]any) string {
	if s := str(h, "statement"); s != "" {
		return fmt.Sprintf("hypothesis %s (%q)", str(h, "id"), s)
	}
	return "hypothesis " + str(h, "id")
}

func recordText(e map[string]any) string {
	title := str(e, "title")
	if len(title) > 90 {
		title = strings.TrimSpace(title[:strings.LastIndex(title[:90], " ")+1]) + "…"
	}
	if title == "" {
		return str(e, "id")
	}
	return fmt.Sprintf("%s (%q)", str(e, "id"), title)
}
