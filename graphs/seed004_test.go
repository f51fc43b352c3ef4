package graphs_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/graphctl/graphctl/builtin-nodes/literature"
	"github.com/graphctl/graphctl/builtin-nodes/literature/littest"
	"github.com/graphctl/graphctl/builtin-nodes/llm/llmtest"
)

// Seed 004 — the research graph — walked criterion by criterion against
// graphs/research.cue, served as `graphctl serve` serves it, through the
// LangGraph runs API, searching local PubMed, Europe PMC and
// ClinicalTrials.gov servers that answer in the real services' JSON (the
// evidence is what a search returns, not state written by the test), with
// the judge, resolve and synthesize models answered by a local
// OpenAI-compatible server.

// researchServer serves the shipped graphs with the literature sources and
// the model on local servers.
func researchServer(t *testing.T, replies ...llmtest.Reply) (*shipped, *llmtest.Server, *littest.Server) {
	t.Helper()
	lit := littest.NewServer(t)
	t.Setenv(literature.EnvPubMedURL, lit.PubMedURL())
	t.Setenv(literature.EnvEuropePMCURL, lit.EuropePMCURL())
	t.Setenv(literature.EnvClinicalTrialsURL, lit.ClinicalTrialsURL())
	model := llmtest.NewServer(t, llmtest.WithReplies(replies...))
	t.Setenv("OPENAI_BASE_URL", model.URL())
	t.Setenv("OPENAI_API_KEY", "test-key")
	t.Setenv("GRAPHCTL_LLM", "")
	return serveShipped(t, "cognitive"), model, lit
}

// byID returns the objects of a list field by id.
func byID(v any) map[string]map[string]any {
	out := map[string]map[string]any{}
	list, _ := v.([]any)
	for _, x := range list {
		m, _ := x.(map[string]any)
		id, _ := m["id"].(string)
		out[id] = m
	}
	return out
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// metforminQuery is the research question as the seed's orchestrator passes
// it (ResearchState.query): the search terms the sources are queried with.
const metforminQuery = "metformin cognitive decline"

// TestSeed004_JudgeDetectsConflictsStructurally: the judge step opens a
// conflict for two pieces of evidence on one hypothesis with opposite stance
// (one cited as supporting, one as contradicting) or opposite outcome (an
// effect and none, read from the abstracts the search returned), although
// the model reported none; resolve settles them; a resolved conflict is not
// reopened in the next round.
func TestSeed004_JudgeDetectsConflictsStructurally(t *testing.T) {
	const report = "Metformin does not slow cognitive decline [pubmed:39000102]; the mechanism seen in mice [pubmed:39000103] is not borne out, and observational associations are explained by confounding [pmc:PMC11000104]."
	s, model, _ := researchServer(t,
		// Round 1: the judge sorts the evidence the search found, reporting no conflict.
		llmtest.JSON(map[string]any{
			"hypotheses": []any{
				// pubmed:39000101 is not among the evidence this search found
				// (its abstract does not mention cognitive decline): ignored.
				map[string]any{"id": "h1", "statement": "Metformin slows cognitive decline", "status": "validating", "confidence": 0.5,
					"supporting_evidence_ids": []any{"pubmed:39000103", "nct:NCT09000201", "pubmed:39000101"}, "contradicting_evidence_ids": []any{"pubmed:39000102"}},
				// Both cited as supporting, but one abstract reports no association.
				map[string]any{"id": "h2", "statement": "Metformin protects against dementia", "status": "proposed", "confidence": 0.6,
					"supporting_evidence_ids": []any{"pubmed:39000103", "pmc:PMC11000104"}, "contradicting_evidence_ids": []any{}},
			},
			"next_step": "search",
		}),
		llmtest.JSON(map[string]any{
			"conflicts": []any{
				map[string]any{"id": "auto-c1", "status": "resolved", "resolution": "A mouse mechanism does not show a clinical effect."},
				map[string]any{"id": "auto-c2", "status": "resolved", "resolution": "A trial still recruiting has no results to weigh against a completed one."},
				map[string]any{"id": "auto-c3", "status": "resolved", "resolution": "Adjusting for kidney function removes the association: confounding by indication."},
			},
			"hypotheses": []any{map[string]any{"id": "h1", "status": "refuted", "confidence": 0.2}, map[string]any{"id": "h2", "status": "validating", "confidence": 0.4}},
		}),
		// Round 2: the same citations again; nothing new to open.
		llmtest.JSON(map[string]any{
			"hypotheses": []any{map[string]any{"id": "h1", "confidence": 0.15, "status": "refuted",
				"supporting_evidence_ids": []any{"pubmed:39000103", "nct:NCT09000201"}, "contradicting_evidence_ids": []any{"pubmed:39000102"}}},
			"next_step": "synthesize",
		}),
		llmtest.JSON(map[string]any{"report": report, "citations": []any{"pubmed:39000102", "pubmed:39000103", "pmc:PMC11000104"}}),
	)
	tr := s.runInput("research", "conflicts", map[string]any{"query": metforminQuery})

	want := []string{"begin", "search", "judge", "cross_check", "resolve", "recheck", "supervisor", "search", "judge", "cross_check", "supervisor", "synthesize", "cite_check"}
	if !slices.Equal(tr.nodes, want) {
		t.Fatalf("nodes %v, want %v", tr.nodes, want)
	}
	ev := byID(tr.values["evidence"])
	if ev["pubmed:39000103"]["outcome"] != "effect" || ev["pubmed:39000102"]["outcome"] != "no_effect" || ev["pmc:PMC11000104"]["outcome"] != "no_effect" || ev["nct:NCT09000201"]["outcome"] != nil {
		t.Errorf("evidence outcomes read from the abstracts: %v", tr.values["evidence"])
	}
	detected := tr.event("conflict_detected")
	if len(detected) != 1 {
		t.Fatalf("conflict_detected events %v, want one (the second round reopens nothing)", detected)
	}
	wantConflicts := []any{
		map[string]any{"id": "auto-c1", "hypothesis_id": "h1", "kind": "stance", "source_a_id": "pubmed:39000103", "source_b_id": "pubmed:39000102"},
		map[string]any{"id": "auto-c2", "hypothesis_id": "h1", "kind": "stance", "source_a_id": "nct:NCT09000201", "source_b_id": "pubmed:39000102"},
		map[string]any{"id": "auto-c3", "hypothesis_id": "h2", "kind": "outcome", "source_a_id": "pubmed:39000103", "source_b_id": "pmc:PMC11000104"},
	}
	if !equalJSON(detected[0].Payload["conflicts"], wantConflicts) {
		t.Errorf("detected %v\nwant     %v", detected[0].Payload["conflicts"], wantConflicts)
	}
	// resolve was shown the open conflicts with the evidence behind them.
	resolvePrompt := model.Requests()[1].Messages[0].Content
	for _, want := range []string{`"id":"auto-c1"`, `"id":"auto-c3"`, "did not slow cognitive decline", "removes most of the apparent association"} {
		if !strings.Contains(resolvePrompt, want) {
			t.Errorf("resolve prompt lacks %s:\n%s", want, resolvePrompt)
		}
	}
	conflicts := byID(tr.values["conflicts"])
	if len(conflicts) != 3 {
		t.Fatalf("conflicts %v, want 3", tr.values["conflicts"])
	}
	for id, c := range conflicts {
		if c["status"] != "resolved" || c["resolution"] == nil || c["detected_by"] != "structure" || c["description"] == "" {
			t.Errorf("conflict %s: %v, want resolved by resolve with its description kept", id, c)
		}
	}
	if d, _ := conflicts["auto-c3"]["description"].(string); !strings.Contains(d, "reports an effect") || !strings.Contains(d, "removes most of the apparent association") {
		t.Errorf("outcome conflict description %q", d)
	}
	// §4.1: the second round's judgement updated h1 in place (merge by id):
	// one h1, its statement kept, its confidence the latest.
	hyps, _ := tr.values["hypotheses"].([]any)
	if h1 := byID(hyps)["h1"]; len(hyps) != 2 || h1["confidence"] != 0.15 || h1["statement"] != "Metformin slows cognitive decline" {
		t.Errorf("hypotheses %v, want h1 updated in place and h2", hyps)
	}
	if tr.values["report"] != report || !strings.Contains(tr.reply(), "[pmc:PMC11000104]") {
		t.Errorf("report %q, reply %q", tr.values["report"], tr.reply())
	}
	if model.Pending() != 0 {
		t.Errorf("%d model replies unused", model.Pending())
	}
}

// TestSeed004_UnknownEvidenceIsDropped: evidence ids the judge cites that
// the search did not find (one the sources know but this search did not
// return, one made up) are dropped from the hypothesis; the hypothesis the
// judge called confirmed on them alone is not confirmed, so the report does
// not conclude from it, and the user's stream says what was corrected; an
// id the report itself makes up is named in a note after it.
func TestSeed004_UnknownEvidenceIsDropped(t *testing.T) {
	s, model, _ := researchServer(t,
		llmtest.JSON(map[string]any{"hypotheses": []any{
			map[string]any{"id": "h1", "statement": "Metformin slows cognitive decline", "status": "confirmed", "confidence": 0.95,
				"supporting_evidence_ids": []any{"pubmed:39000101", "pubmed:99999999"}, "contradicting_evidence_ids": []any{}},
			map[string]any{"id": "h2", "statement": "Metformin does not slow decline in mild cognitive impairment", "status": "confirmed", "confidence": 0.85,
				"supporting_evidence_ids": []any{"pubmed:39000102", "pmc:PMC0000000"}},
		}, "next_step": "synthesize"}),
		llmtest.JSON(map[string]any{"report": "In mild cognitive impairment metformin did not slow decline [pubmed:39000102; pubmed:99999999]."}),
	)
	tr := s.runInput("research", "unknown-ids", map[string]any{"query": metforminQuery})
	// The report's made-up citation is named in a note after it, in the
	// report and in the conversation.
	const note = "Note: pubmed:99999999 is cited above but is not among the evidence the search found; it supports nothing in this report."
	if r, _ := tr.values["report"].(string); !strings.HasSuffix(r, "\n\n"+note) || tr.reply() != note {
		t.Errorf("report %q, last message %q; want the note on pubmed:99999999", r, tr.reply())
	}
	hyps := byID(tr.values["hypotheses"])
	if h := hyps["h1"]; h["status"] != "proposed" || !equalJSON(h["supporting_evidence_ids"], []any{}) {
		t.Errorf("h1 %v, want proposed with no supporting evidence", h)
	}
	if h := hyps["h2"]; h["status"] != "confirmed" || !equalJSON(h["supporting_evidence_ids"], []any{"pubmed:39000102"}) {
		t.Errorf("h2 %v, want confirmed on pubmed:39000102 alone", h)
	}
	corrected := tr.event(literature.CitationsEventType)
	want := []any{
		map[string]any{"id": "h1", "dropped_evidence_ids": []any{"pubmed:39000101", "pubmed:99999999"}, "status_was": "confirmed", "status": "proposed"},
		map[string]any{"id": "h2", "dropped_evidence_ids": []any{"pmc:PMC0000000"}},
	}
	if len(corrected) != 2 || !equalJSON(corrected[0].Payload["hypotheses"], want) ||
		!equalJSON(corrected[1].Payload["text"], map[string]any{"field": "report", "unknown_evidence_ids": []any{"pubmed:99999999"}}) {
		t.Errorf("%s events %v, want cross_check's %v and cite_check's", literature.CitationsEventType, corrected, want)
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want judge and synthesize", len(reqs))
	}
	synth := reqs[1].Messages[0].Content
	for _, unknown := range []string{"pubmed:99999999", "pmc:PMC0000000", "pubmed:39000101"} {
		if strings.Contains(synth, unknown) {
			t.Errorf("the synthesize prompt still cites %s:\n%s", unknown, synth)
		}
	}
	_, confirmed, _ := strings.Cut(synth, "## Confirmed hypotheses\n")
	confirmed, _, _ = strings.Cut(confirmed, "\n## ")
	if !strings.Contains(confirmed, `"h2"`) || strings.Contains(confirmed, `"h1"`) {
		t.Errorf("confirmed hypotheses given to synthesize: %s", confirmed)
	}
}

// TestSeed004_ASecondRoundSearchesWhatTheJudgeAskedFor: when the judge asks
// for more evidence it names the terms to search; the next round searches
// those (not the question again, which would find nothing new), and the
// evidence grows with what they find.
func TestSeed004_ASecondRoundSearchesWhatTheJudgeAskedFor(t *testing.T) {
	s, model, _ := researchServer(t,
		llmtest.JSON(map[string]any{"hypotheses": []any{map[string]any{"id": "h1", "statement": "Metformin lowers dementia risk", "status": "proposed", "confidence": 0.4}},
			"next_step": "search", "search_query": "metformin dementia incidence"}),
		llmtest.JSON(map[string]any{"hypotheses": []any{map[string]any{"id": "h1", "status": "validating", "confidence": 0.6, "supporting_evidence_ids": []any{"pubmed:39000101"}}},
			"next_step": "synthesize"}),
		llmtest.JSON(map[string]any{"report": "A cohort links metformin to less dementia [pubmed:39000101]."}),
	)
	tr := s.runInput("research", "refine", map[string]any{"query": metforminQuery, "max_iterations": 3})
	sr := tr.event("search_result")
	if len(sr) != 2 || sr[0].Payload["query"] != metforminQuery || sr[1].Payload["query"] != "metformin dementia incidence" {
		t.Fatalf("search_result events %v, want the question, then the judge's terms", sr)
	}
	if !slices.Contains(tr.values["evidence_ids"].([]any), any("pubmed:39000101")) {
		t.Errorf("evidence_ids %v, want the cohort the second search found", tr.values["evidence_ids"])
	}
	if h := byID(tr.values["hypotheses"])["h1"]; h["status"] != "validating" || !equalJSON(h["supporting_evidence_ids"], []any{"pubmed:39000101"}) {
		t.Errorf("h1 %v, want it supported by the evidence the second search found", h)
	}
	if p := model.Requests()[1].Messages[0].Content; !strings.Contains(p, "metformin dementia incidence") || !strings.Contains(p, "[pubmed:39000101]") {
		t.Errorf("the second judgement did not see the terms searched and what they found:\n%s", p)
	}
}

// TestSeed004_AC1_ResearchStateDefinedWithAllFields: the state schema the
// server publishes has the seed's ResearchState fields (evidence holds the
// records behind evidence_ids).
func TestSeed004_AC1_ResearchStateDefinedWithAllFields(t *testing.T) {
	s, _, _ := researchServer(t)
	code, out := s.do("GET", "/assistants/research/schemas", nil)
	if code != http.StatusOK {
		t.Fatalf("schemas: %d %v", code, out)
	}
	state, _ := out["state_schema"].(map[string]any)
	props, _ := state["properties"].(map[string]any)
	for _, f := range []string{"query", "hypotheses", "conflicts", "evidence", "messages", "next_step", "iteration_count", "max_iterations", "evidence_ids"} {
		if props[f] == nil {
			t.Errorf("state schema lacks %s: %v", f, props)
		}
	}
	next, _ := props["next_step"].(map[string]any)
	if !equalJSON(next["enum"], []any{"search", "judge", "resolve", "synthesize", "finish"}) {
		t.Errorf("next_step %v, want the seed's five steps", next)
	}
}

// TestSeed004_AC2_AllFourNodesRun: search, judge, resolve and synthesize
// (and the supervisor) run in one research.
func TestSeed004_AC2_AllFourNodesRun(t *testing.T) {
	s, _, _ := researchServer(t,
		llmtest.JSON(map[string]any{"hypotheses": []any{map[string]any{"id": "h1", "statement": "Metformin slows cognitive decline", "status": "validating", "confidence": 0.5}},
			"conflicts": []any{map[string]any{"id": "c1", "description": "Mouse model versus trial", "source_a_id": "pubmed:39000103", "source_b_id": "pubmed:39000102", "status": "open"}},
			"next_step": "synthesize"}),
		llmtest.JSON(map[string]any{"conflicts": []any{map[string]any{"id": "c1", "status": "resolved", "resolution": "The trial is stronger evidence."}}}),
		llmtest.JSON(map[string]any{"report": "No benefit [pubmed:39000102]."}),
	)
	tr := s.runInput("research", "four", map[string]any{"query": metforminQuery})
	for _, n := range []string{"search", "judge", "resolve", "supervisor", "synthesize", "cite_check"} {
		if !slices.Contains(tr.nodes, n) {
			t.Errorf("nodes %v lack %s", tr.nodes, n)
		}
	}
	if sr := tr.event("search_result"); len(sr) != 1 || sr[0].Payload["total"] != float64(5) {
		t.Errorf("search_result %v, want 5 records from the three sources", sr)
	}
	// evidence_ids names the records the search found, each once.
	ev, _ := tr.values["evidence"].([]any)
	var ids []any
	for _, e := range ev {
		ids = append(ids, e.(map[string]any)["id"])
	}
	if len(ids) != 5 || !equalJSON(tr.values["evidence_ids"], ids) {
		t.Errorf("evidence_ids %v, want the ids of evidence %v", tr.values["evidence_ids"], ids)
	}
}

// TestSeed004_AC3_SupervisorRoutesOnStructuredState: the supervisor's
// decision follows the structured state, case by case.
func TestSeed004_AC3_SupervisorRoutesOnStructuredState(t *testing.T) {
	// h1 cites the mouse study the search found as supporting it.
	hyp := func(conf float64, status string) map[string]any {
		return map[string]any{"id": "h1", "statement": "Metformin slows cognitive decline", "status": status, "confidence": conf,
			"supporting_evidence_ids": []any{"pubmed:39000103"}}
	}
	tests := []struct {
		name    string
		input   map[string]any
		replies []llmtest.Reply
		want    []string
	}{
		{"every hypothesis above the threshold: synthesize", map[string]any{"query": metforminQuery},
			[]llmtest.Reply{llmtest.JSON(map[string]any{"hypotheses": []any{hyp(0.9, "confirmed")}, "next_step": "search"}), llmtest.JSON(map[string]any{"report": "r"})},
			[]string{"begin", "search", "judge", "cross_check", "supervisor", "synthesize", "cite_check"}},
		{"low confidence: search again, until the iteration limit", map[string]any{"query": metforminQuery, "max_iterations": 2},
			[]llmtest.Reply{llmtest.JSON(map[string]any{"hypotheses": []any{hyp(0.3, "proposed")}, "next_step": "search"}),
				llmtest.JSON(map[string]any{"hypotheses": []any{hyp(0.4, "validating")}, "next_step": "search"}), llmtest.JSON(map[string]any{"report": "r"})},
			[]string{"begin", "search", "judge", "cross_check", "supervisor", "search", "judge", "cross_check", "supervisor", "synthesize", "cite_check"}},
		{"an open conflict left by resolve: resolve again", map[string]any{"query": metforminQuery, "max_iterations": 5},
			[]llmtest.Reply{llmtest.JSON(map[string]any{"hypotheses": []any{hyp(0.9, "confirmed")}, "next_step": "synthesize",
				"conflicts": []any{map[string]any{"id": "c1", "description": "d", "source_a_id": "pubmed:39000103", "source_b_id": "pubmed:39000102", "status": "open"}}}),
				llmtest.JSON(map[string]any{"conflicts": []any{}}),
				llmtest.JSON(map[string]any{"conflicts": []any{map[string]any{"id": "c1", "status": "resolved", "resolution": "x"}}}), llmtest.JSON(map[string]any{"report": "r"})},
			[]string{"begin", "search", "judge", "cross_check", "resolve", "recheck", "supervisor", "resolve", "recheck", "supervisor", "synthesize", "cite_check"}},
		{"the judge says the evidence suffices: synthesize", map[string]any{"query": metforminQuery},
			[]llmtest.Reply{llmtest.JSON(map[string]any{"hypotheses": []any{hyp(0.5, "validating")}, "next_step": "synthesize"}), llmtest.JSON(map[string]any{"report": "r"})},
			[]string{"begin", "search", "judge", "cross_check", "supervisor", "synthesize", "cite_check"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, _ := researchServer(t, tt.replies...)
			tr := s.runInput("research", "sup-"+string(rune('a'+i)), tt.input)
			if !slices.Equal(tr.nodes, tt.want) {
				t.Errorf("nodes %v, want %v", tr.nodes, tt.want)
			}
		})
	}
}

// TestSeed004_SynthesizeUsesConfirmedHypothesesAndResolvedConflicts: the
// report is written from the confirmed hypotheses and the resolved
// conflicts; the rest reach the model only as not established.
func TestSeed004_SynthesizeUsesConfirmedHypothesesAndResolvedConflicts(t *testing.T) {
	s, model, _ := researchServer(t,
		llmtest.JSON(map[string]any{"hypotheses": []any{
			map[string]any{"id": "h1", "statement": "Metformin slows cognitive decline", "status": "confirmed", "confidence": 0.9, "supporting_evidence_ids": []any{"pubmed:39000103"}},
			map[string]any{"id": "h2", "statement": "Metformin prevents dementia outright", "status": "refuted", "confidence": 0.1, "contradicting_evidence_ids": []any{"pubmed:39000102"}},
		}, "conflicts": []any{
			map[string]any{"id": "c1", "description": "mouse model against trial", "source_a_id": "pubmed:39000103", "source_b_id": "pubmed:39000102", "status": "resolved", "resolution": "the trial is in people"},
		}, "next_step": "synthesize"}),
		llmtest.JSON(map[string]any{"report": "Metformin slows decline [pubmed:39000102]."}),
	)
	s.runInput("research", "synth", map[string]any{"query": metforminQuery})
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want judge and synthesize", len(reqs))
	}
	prompt := reqs[1].Messages[0].Content
	section := func(title string) string {
		_, rest, ok := strings.Cut(prompt, "## "+title+"\n")
		if !ok {
			t.Fatalf("the synthesize prompt has no %q section:\n%s", title, prompt)
		}
		body, _, _ := strings.Cut(rest, "\n## ")
		return body
	}
	if c := section("Confirmed hypotheses"); !strings.Contains(c, `"h1"`) || strings.Contains(c, `"h2"`) {
		t.Errorf("confirmed hypotheses: %s", c)
	}
	if c := section("Resolved conflicts"); !strings.Contains(c, `"c1"`) {
		t.Errorf("resolved conflicts: %s", c)
	}
	if c := section("Not established (other hypotheses, open conflicts)"); !strings.Contains(c, `"h2"`) || strings.Contains(c, `"h1"`) {
		t.Errorf("not established: %s", c)
	}
}

// TestSeed004_AC4_CheckpointingEnablesPauseAndResume: a research paused
// before its supervisor survives a server restart and resumes from its
// checkpoint without repeating the search or the judgement.
func TestSeed004_AC4_CheckpointingEnablesPauseAndResume(t *testing.T) {
	s, model, lit := researchServer(t,
		llmtest.JSON(map[string]any{"hypotheses": []any{map[string]any{"id": "h1", "statement": "Metformin slows cognitive decline", "status": "refuted", "confidence": 0.9}}, "next_step": "synthesize"}),
		llmtest.JSON(map[string]any{"report": "Metformin does not slow cognitive decline [pubmed:39000102]."}),
	)
	code, out := s.do("POST", "/threads/pause/runs/wait", map[string]any{"assistant_id": "research", "if_not_exists": "create",
		"input": map[string]any{"query": metforminQuery}, "interrupt_before": []any{"supervisor"}})
	if code != http.StatusOK || out["report"] != "" {
		t.Fatalf("paused run: %d %v", code, out)
	}
	searches := len(lit.Requests())
	s.restart()
	code, out = s.do("POST", "/threads/pause/runs/wait", map[string]any{"assistant_id": "research", "command": map[string]any{"resume": true}})
	if code != http.StatusOK || out["report"] != "Metformin does not slow cognitive decline [pubmed:39000102]." {
		t.Fatalf("resumed run: %d %v", code, out)
	}
	if len(lit.Requests()) != searches || len(model.Requests()) != 2 {
		t.Errorf("after the resume: %d literature requests (was %d), %d model requests (want judge and synthesize only)", len(lit.Requests()), searches, len(model.Requests()))
	}
}

// TestSeed004_AC4_AResearchStoppedMidRunResumes: a research stopped while
// its judge waits on the model (the run cancelled as a pause button does)
// resumes from its last checkpoint when run again without input: the search
// is not repeated and the report is written.
func TestSeed004_AC4_AResearchStoppedMidRunResumes(t *testing.T) {
	s, model, lit := researchServer(t,
		llmtest.JSON(map[string]any{"hypotheses": []any{map[string]any{"id": "h1", "statement": "Metformin slows cognitive decline", "status": "refuted", "confidence": 0.9}}, "next_step": "synthesize"}),
		llmtest.JSON(map[string]any{"report": "Metformin does not slow cognitive decline [pubmed:39000102]."}),
	)
	model.Fail(1000, http.StatusInternalServerError) // the judge retries until the pause
	if code, out := s.do("POST", "/threads", map[string]any{"thread_id": "paused"}); code != http.StatusOK {
		t.Fatalf("create thread: %d %v", code, out)
	}
	code, out := s.do("POST", "/threads/paused/runs", map[string]any{"assistant_id": "research", "input": map[string]any{"query": metforminQuery}})
	runID, _ := out["run_id"].(string)
	if code != http.StatusOK || runID == "" {
		t.Fatalf("start: %d %v", code, out)
	}
	for deadline := time.Now().Add(10 * time.Second); len(model.Requests()) == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the judge never called the model")
		}
	}
	searches := len(lit.Requests())
	if code, out := s.do("POST", "/threads/paused/runs/"+runID+"/cancel?action=interrupt&wait=true", nil); code/100 != 2 {
		t.Fatalf("cancel: %d %v", code, out)
	}
	model.Fail(0, http.StatusInternalServerError)
	code, out = s.do("POST", "/threads/paused/runs/wait", map[string]any{"assistant_id": "research", "input": nil})
	if code != http.StatusOK || out["report"] != "Metformin does not slow cognitive decline [pubmed:39000102]." {
		t.Fatalf("resumed run: %d %v", code, out)
	}
	if len(lit.Requests()) != searches {
		t.Errorf("the resumed research searched again: %d literature requests, was %d", len(lit.Requests()), searches)
	}
}

// runInput runs a graph on a thread with an input object and reads the stream.
func (s *shipped) runInput(graph, thread string, input map[string]any) turn {
	s.t.Helper()
	body, _ := json.Marshal(map[string]any{"assistant_id": graph, "if_not_exists": "create",
		"stream_mode": []any{"updates", "custom", "values"}, "input": input})
	resp, err := http.Post(s.url+"/threads/"+thread+"/runs/stream", "application/json", bytes.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	return s.readTurn(graph, thread, resp)
}

// TestSeed004_QuestionAsAChatMessage: a question asked as a chat message
// is searched by its terms (the sources AND every word, and Europe PMC reads
// "?" as a wildcard), and the research runs on what that finds.
func TestSeed004_QuestionAsAChatMessage(t *testing.T) {
	s, model, lit := researchServer(t,
		llmtest.JSON(map[string]any{"hypotheses": []any{map[string]any{"id": "h1", "statement": "Metformin slows cognitive decline", "status": "refuted", "confidence": 0.85,
			"supporting_evidence_ids": []any{}, "contradicting_evidence_ids": []any{"pubmed:39000102"}}}, "next_step": "synthesize"}),
		llmtest.JSON(map[string]any{"report": "No: the randomized trial found no slowing [pubmed:39000102]."}),
	)
	tr := s.send("research", "asked", "Does metformin slow cognitive decline?")
	sr := tr.event("search_result")
	if len(sr) != 1 || sr[0].Payload["query"] != "metformin slow cognitive decline" || sr[0].Payload["total"] == float64(0) {
		t.Fatalf("search_result %v, want the question's terms searched with hits", sr)
	}
	for _, uri := range lit.Requests() {
		if strings.Contains(uri, "Does") || strings.Contains(uri, "%3F") {
			t.Errorf("a source was sent the question's words: %s", uri)
		}
	}
	if tr.values["query"] != "Does metformin slow cognitive decline?" || !strings.Contains(tr.reply(), "[pubmed:39000102]") {
		t.Errorf("query %v, reply %q", tr.values["query"], tr.reply())
	}
	if !strings.Contains(model.Requests()[0].Messages[0].Content, "did not slow cognitive decline") {
		t.Error("the judge did not see the trial the search found")
	}
}
