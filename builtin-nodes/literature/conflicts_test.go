package literature_test

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/internal/nodetest"
	"github.com/graphctl/graphctl/builtin-nodes/literature"
	"github.com/graphctl/graphctl/builtin-nodes/literature/littest"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
)

func TestOutcome(t *testing.T) {
	tests := []struct {
		title, summary, want string
	}{
		{"", "Over 18 months, metformin did not slow cognitive decline compared with placebo.", literature.OutcomeNoEffect},
		{"", "<h4>Results</h4>Metformin use was associated with a lower incidence of dementia (HR 0.79).", literature.OutcomeEffect},
		{"", "There was no significant difference in ADAS-Cog between groups.", literature.OutcomeNoEffect},
		{"", "Statin use was not associated with incident dementia.", literature.OutcomeNoEffect},
		{"", "Exercise slowed hippocampal atrophy and improved memory scores.", literature.OutcomeEffect},
		{"Metformin does not reduce dementia risk: a cohort study", "", literature.OutcomeNoEffect},
		// A registered trial without results, a question, mixed findings: nothing.
		{"Metformin in Mild Cognitive Impairment", "A phase 2 trial of metformin to slow cognitive decline.", ""},
		{"", "Does metformin lower the risk of dementia?", ""},
		{"", "Metformin reduced tau phosphorylation. It did not improve memory.", ""},
	}
	for _, tt := range tests {
		if got := literature.Outcome(tt.title, tt.summary); got != tt.want {
			t.Errorf("Outcome(%q, %q) = %q, want %q", tt.title, tt.summary, got, tt.want)
		}
	}
}

func conflictsGraph(t *testing.T) *graph.Graph {
	t.Helper()
	g, err := nodetest.Graph(nil, "hypotheses: list<object>", "evidence: list<object>", "conflicts: list<object>", "notes: list<object>")
	if err != nil {
		t.Fatal(err)
	}
	g.Field("conflicts").Reducer = "merge_by_id"
	g.Field("hypotheses").Reducer = "merge_by_id"
	return g
}

// corpusEvidence is the default littest corpus as lit_search stores it.
func corpusEvidence() []any {
	var out []any
	for _, a := range littest.Articles() {
		id := "pubmed:" + a.PMID
		if a.PMID == "" {
			id = "pmc:" + a.PMCID
		}
		out = append(out, map[string]any{"id": id, "title": a.Title, "summary": a.Abstract})
	}
	for _, tr := range littest.Trials() {
		out = append(out, map[string]any{"id": "nct:" + tr.NCTID, "title": tr.BriefTitle, "summary": tr.BriefSummary})
	}
	return out
}

func TestLitConflicts(t *testing.T) {
	g := conflictsGraph(t)
	n, b, err := nodetest.Build(g, "lit_conflicts", "cross_check", nil)
	if err != nil || n == nil {
		t.Fatalf("build: %v %v", err, b.Problems())
	}
	h := func(sup, con []any) []any {
		return []any{map[string]any{"id": "h1", "statement": "Metformin slows cognitive decline",
			"supporting_evidence_ids": sup, "contradicting_evidence_ids": con}}
	}
	tests := []struct {
		name      string
		hyps      []any
		conflicts []any
		want      []string // "a|b|kind"
	}{
		{"supporting vs contradicting", h([]any{"pubmed:39000101"}, []any{"pubmed:39000102"}), nil,
			[]string{"pubmed:39000101|pubmed:39000102|stance"}},
		{"all cited as supporting: the outcomes disagree", h([]any{"pubmed:39000101", "pubmed:39000102", "pubmed:39000103"}, nil), nil,
			[]string{"pubmed:39000101|pubmed:39000102|outcome", "pubmed:39000103|pubmed:39000102|outcome"}},
		{"a trial without results conflicts by stance only", h([]any{"nct:NCT09000201"}, []any{"pubmed:39000102"}), nil,
			[]string{"nct:NCT09000201|pubmed:39000102|stance"}},
		{"agreeing evidence is no conflict", h([]any{"pubmed:39000101", "pubmed:39000103", "nct:NCT09000201"}, nil), nil, nil},
		{"ids not among the evidence are ignored", h([]any{"pubmed:1"}, []any{"pubmed:39000102"}), nil, nil},
		{"a pair with a conflict already (either order, resolved) is not reopened",
			h([]any{"pubmed:39000101"}, []any{"pubmed:39000102", "pmc:PMC11000104"}),
			[]any{map[string]any{"id": "c1", "source_a_id": "pubmed:39000102", "source_b_id": "pubmed:39000101", "status": "resolved"}},
			[]string{"pubmed:39000101|pmc:PMC11000104|stance"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := map[string]any{"hypotheses": tt.hyps, "evidence": corpusEvidence(), "conflicts": tt.conflicts}
			up, events, err := nodetest.Run(context.Background(), g, n, "cross_check", state)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := up["conflicts"].([]any)
			if len(got) != len(tt.want) {
				t.Fatalf("conflicts %v, want %v", got, tt.want)
			}
			for i, c := range got {
				m := c.(map[string]any)
				if key := m["source_a_id"].(string) + "|" + m["source_b_id"].(string) + "|" + m["kind"].(string); key != tt.want[i] {
					t.Errorf("conflict %d is %s, want %s", i, key, tt.want[i])
				}
				if m["status"] != "open" || m["hypothesis_id"] != "h1" || !strings.HasPrefix(m["id"].(string), literature.AutoConflictPrefix) ||
					!strings.Contains(m["description"].(string), `"Metformin slows cognitive decline"`) {
					t.Errorf("conflict %v", m)
				}
			}
			events = slices.DeleteFunc(events, func(e event.Event) bool { return e.Type != literature.ConflictEventType })
			if len(tt.want) > 0 && (len(events) != 1 || events[0].Payload["count"] != len(tt.want)) {
				t.Errorf("events %v", events)
			}
			if len(tt.want) == 0 && len(events) != 0 {
				t.Errorf("events %v, want none", events)
			}
		})
	}
	t.Run("ids continue after earlier auto conflicts; the description quotes the findings", func(t *testing.T) {
		state := map[string]any{"hypotheses": h([]any{"pubmed:39000101", "pubmed:39000102"}, nil), "evidence": corpusEvidence(),
			"conflicts": []any{map[string]any{"id": "auto-c2", "source_a_id": "x", "source_b_id": "y", "status": "resolved"}}}
		up, _, err := nodetest.Run(context.Background(), g, n, "cross_check", state)
		if err != nil {
			t.Fatal(err)
		}
		c := up["conflicts"].([]any)[0].(map[string]any)
		if c["id"] != "auto-c3" || !strings.Contains(c["description"].(string), "did not slow cognitive decline") ||
			!strings.Contains(c["description"].(string), "linked to lower dementia risk") {
			t.Errorf("conflict %v", c)
		}
	})
}

// TestLitConflictsCorrectsCitations: evidence ids the judgement cites that
// are not among the evidence are dropped, a hypothesis keeps its status only
// while the evidence left bears it out, and an open conflict between unknown
// evidence is dismissed; each correction is reported in one event.
func TestLitConflictsCorrectsCitations(t *testing.T) {
	g := conflictsGraph(t)
	n, b, err := nodetest.Build(g, "lit_conflicts", "cross_check", nil)
	if err != nil || n == nil {
		t.Fatalf("build: %v %v", err, b.Problems())
	}
	hyp := func(status string, sup, con []any) map[string]any {
		return map[string]any{"id": "h1", "statement": "Metformin slows cognitive decline", "status": status, "confidence": 0.9,
			"supporting_evidence_ids": sup, "contradicting_evidence_ids": con}
	}
	tests := []struct {
		name      string
		hyp       map[string]any
		conflicts []any
		wantHyp   []any // the update of hypotheses
		wantConfl []any // the update of conflicts
	}{
		{"an unknown id is dropped, the real one keeps the hypothesis confirmed",
			hyp("confirmed", []any{"pubmed:1", "pubmed:39000101"}, []any{}), nil,
			[]any{map[string]any{"id": "h1", "supporting_evidence_ids": []any{"pubmed:39000101"}, "contradicting_evidence_ids": []any{}}}, nil},
		{"confirmed only by unknown evidence: proposed",
			hyp("confirmed", []any{"pubmed:1", "pmc:PMC9"}, nil), nil,
			[]any{map[string]any{"id": "h1", "supporting_evidence_ids": []any{}, "contradicting_evidence_ids": []any{}, "status": "proposed"}}, nil},
		{"refuted only by unknown evidence, supported by real evidence: validating",
			hyp("refuted", []any{"pubmed:39000101"}, []any{"pubmed:2"}), nil,
			[]any{map[string]any{"id": "h1", "supporting_evidence_ids": []any{"pubmed:39000101"}, "contradicting_evidence_ids": []any{}, "status": "validating"}}, nil},
		{"confirmed citing nothing: proposed",
			hyp("confirmed", nil, nil), nil,
			[]any{map[string]any{"id": "h1", "status": "proposed"}}, nil},
		{"real citations and a status they bear out: nothing to correct",
			hyp("refuted", []any{}, []any{"pubmed:39000102"}), nil, nil, nil},
		{"an open conflict citing unknown evidence is dismissed, a resolved one kept",
			hyp("validating", nil, nil),
			[]any{
				map[string]any{"id": "c1", "source_a_id": "pubmed:39000101", "source_b_id": "pubmed:7", "status": "open"},
				map[string]any{"id": "c2", "source_a_id": "pubmed:8", "source_b_id": "pubmed:39000102", "status": "resolved", "resolution": "r"},
				map[string]any{"id": "c3", "source_a_id": "pubmed:39000101", "source_b_id": "pubmed:39000102", "status": "open"},
			}, nil,
			[]any{map[string]any{"id": "c1", "status": "resolved", "resolution": "Dismissed: pubmed:7 is not among the evidence found."}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := map[string]any{"hypotheses": []any{tt.hyp}, "evidence": corpusEvidence(), "conflicts": tt.conflicts}
			up, events, err := nodetest.Run(context.Background(), g, n, "cross_check", state)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(up["hypotheses"], orNil(tt.wantHyp)) {
				t.Errorf("hypotheses update %#v\nwant %#v", up["hypotheses"], tt.wantHyp)
			}
			if !reflect.DeepEqual(up["conflicts"], orNil(tt.wantConfl)) {
				t.Errorf("conflicts update %#v\nwant %#v", up["conflicts"], tt.wantConfl)
			}
			corrected := tt.wantHyp != nil || tt.wantConfl != nil
			if got := len(events) == 1 && events[0].Type == literature.CitationsEventType; got != corrected {
				t.Errorf("events %v, want a %s event: %v", events, literature.CitationsEventType, corrected)
			}
		})
	}
}

// orNil makes an empty want comparable with a missing update.
func orNil(list []any) any {
	if list == nil {
		return nil
	}
	return list
}

func TestLitConflictsConfig(t *testing.T) {
	g := conflictsGraph(t)
	g.Field("notes").Reducer = "append"
	for _, tt := range []struct {
		cfg  map[string]any
		path string
	}{
		{map[string]any{"into": "notes"}, "into"},
		{map[string]any{"hypotheses": "notes"}, "hypotheses"},
		{map[string]any{"evidence": "missing"}, "evidence"},
	} {
		n, b, _ := nodetest.Build(g, "lit_conflicts", "cross_check", tt.cfg)
		if n != nil || !b.Has(tt.path, "invalid-config") && !b.Has(tt.path, "unknown-field") {
			t.Errorf("config %v: problems %v, want one at %s", tt.cfg, b.Problems(), tt.path)
		}
	}
}
