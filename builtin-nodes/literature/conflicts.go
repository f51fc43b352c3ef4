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

// CitationsEventType is the type of the event lit_conflicts emits when it
// corrects what the judgement cited: {hypotheses: [{id,
// dropped_evidence_ids, status_was?, status?}], conflicts: [{id,
// unknown_evidence_ids}]}.
const CitationsEventType = "citations_corrected"

// AutoConflictPrefix starts the ids of the conflicts lit_conflicts opens:
// auto-c1, auto-c2, …
const AutoConflictPrefix = "auto-c"

func init() {
	node.MustRegister(node.Type{
		Name: "lit_conflicts",
		Description: "Checks the judgement against the evidence: drops evidence ids a hypothesis cites that are not among the evidence, " +
			"keeps a hypothesis confirmed (refuted) only while real evidence supports (contradicts) it, dismisses open conflicts between " +
			"unknown evidence, and opens a conflict for every two pieces of evidence cited on one hypothesis with opposite stance " +
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
		upserted := f.path == "into" || f.path == "hypotheses"
		fd := check.Field(b, f.path, f.name)
		if fd == nil {
			continue
		}
		if fd.Type.Kind != graph.List || fd.Type.Elem == nil || (fd.Type.Elem.Kind != graph.Object && fd.Type.Elem.Kind != graph.Any) {
			b.Errorf(f.path, "invalid-config", "lit_conflicts node %q reads objects from %q, declared as %s; declare it as list<object>", b.NodeName(), f.name, fd.Type)
		} else if upserted && fd.Reducer != "merge_by_id" {
			b.Errorf(f.path, "invalid-config", "lit_conflicts node %q updates %q by id, whose reducer is %q; declare reducer: \"merge_by_id\"",
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
	var dismissed, dismissedReport []any
	for _, c := range objects(in.State[n.into]) {
		a, b := str(c, "source_a_id"), str(c, "source_b_id")
		if a != "" && b != "" {
			seen[pairKey(a, b)] = true
		}
		if unknown := unknownIDs(evidence, a, b); len(unknown) > 0 && str(c, "status") == "open" {
			dismissed = append(dismissed, map[string]any{"id": str(c, "id"), "status": "resolved",
				"resolution": "Dismissed: " + strings.Join(unknown, " and ") + " is not among the evidence found."})
			dismissedReport = append(dismissedReport, map[string]any{"id": str(c, "id"), "unknown_evidence_ids": unknown})
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
	var corrected, correctedReport []any
	for _, h := range objects(in.State[n.hypotheses]) {
		sup, supDropped := known(evidence, h["supporting_evidence_ids"])
		con, conDropped := known(evidence, h["contradicting_evidence_ids"])
		if fix, report := correctHypothesis(h, sup, con, append(supDropped, conDropped...)); fix != nil {
			corrected = append(corrected, fix)
			correctedReport = append(correctedReport, report)
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
	up := node.Update{}
	if len(corrected) > 0 || len(dismissed) > 0 {
		if len(corrected) > 0 {
			up[n.hypotheses] = corrected
		}
		if in.Emit != nil {
			in.Emit(event.Event{Type: CitationsEventType, Payload: map[string]any{"hypotheses": nonNil(correctedReport), "conflicts": nonNil(dismissedReport)}})
		}
	}
	if changes := append(dismissed, opened...); len(changes) > 0 {
		up[n.into] = changes
	}
	if len(opened) > 0 && in.Emit != nil {
		in.Emit(event.Event{Type: ConflictEventType, Payload: map[string]any{"count": len(opened), "conflicts": reported}})
	}
	return up, nil
}

func nonNil(list []any) []any {
	if list == nil {
		return []any{}
	}
	return list
}

// known splits the evidence ids of a hypothesis' list into those among the
// evidence and those not.
func known(evidence map[string]map[string]any, ids any) (found, unknown []string) {
	for _, id := range stringList(ids) {
		if evidence[id] != nil {
			found = append(found, id)
		} else {
			unknown = append(unknown, id)
		}
	}
	return found, unknown
}

// unknownIDs returns the non-empty ids that are not among the evidence.
func unknownIDs(evidence map[string]map[string]any, ids ...string) []string {
	var out []string
	for _, id := range ids {
		if id != "" && evidence[id] == nil {
			out = append(out, id)
		}
	}
	return out
}

// correctHypothesis returns the update that makes h cite only real
// evidence (sup, con) and hold a status that evidence bears out — confirmed
// only with supporting evidence, refuted only with contradicting evidence,
// otherwise validating when it cites any evidence and proposed when none —
// with the event's account of it; nil when h needs no correction.
func correctHypothesis(h map[string]any, sup, con, dropped []string) (map[string]any, map[string]any) {
	status := str(h, "status")
	switch {
	case status == "confirmed" && len(sup) == 0, status == "refuted" && len(con) == 0:
		if len(sup)+len(con) > 0 {
			status = "validating"
		} else {
			status = "proposed"
		}
	}
	if str(h, "id") == "" || len(dropped) == 0 && status == str(h, "status") {
		return nil, nil
	}
	fix := map[string]any{"id": h["id"]}
	report := map[string]any{"id": h["id"], "dropped_evidence_ids": stringsAsAny(dropped)}
	if len(dropped) > 0 {
		fix["supporting_evidence_ids"] = stringsAsAny(sup)
		fix["contradicting_evidence_ids"] = stringsAsAny(con)
	}
	if status != str(h, "status") {
		fix["status"] = status
		report["status_was"], report["status"] = str(h, "status"), status
	}
	return fix, report
}

func stringsAsAny(list []string) []any {
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = s
	}
	return out
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
