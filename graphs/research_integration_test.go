package graphs_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	_ "github.com/graphctl/graphctl/builtin-nodes/all"
	"github.com/graphctl/graphctl/builtin-nodes/literature"
	"github.com/graphctl/graphctl/builtin-nodes/literature/littest"
	"github.com/graphctl/graphctl/builtin-nodes/llm/llmtest"
	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/storage/badger"
)

// TestResearchIntegration runs graphs/research.cue through the real engine,
// the langchaingo OpenAI client against the local OpenAI-compatible server,
// and the lit_search node against local PubMed, Europe PMC and
// ClinicalTrials.gov servers (pointed at by the environment, which overrides
// the graph's public URLs). The first run stops before the supervisor; the
// process "restarts" (engine and Badger closed and reopened) and the thread
// continues from its checkpoint: a second search round in which Europe PMC
// fails, a second judgement that updates the hypothesis in place, and the
// report.
func TestResearchIntegration(t *testing.T) {
	lit := littest.NewServer(t)
	t.Setenv(literature.EnvPubMedURL, lit.PubMedURL())
	t.Setenv(literature.EnvEuropePMCURL, lit.EuropePMCURL())
	t.Setenv(literature.EnvClinicalTrialsURL, lit.ClinicalTrialsURL())
	const report = "Metformin probably does not slow cognitive decline [pubmed:39000102]; the cohort benefit [pubmed:39000101] is likely confounded [pmc:PMC11000104]."
	model := llmtest.NewServer(t, llmtest.WithReplies(
		llmtest.JSON(map[string]any{
			"hypotheses": []any{map[string]any{"id": "h1", "statement": "Metformin slows cognitive decline", "status": "validating", "confidence": 0.5,
				"supporting_evidence_ids": []any{"nct:NCT09000201"}, "contradicting_evidence_ids": []any{"pubmed:39000102"}}},
			"conflicts": []any{map[string]any{"id": "c1", "description": "Mechanistic benefit versus a null randomized trial",
				"source_a_id": "pubmed:39000103", "source_b_id": "pubmed:39000102", "status": "open"}},
			"next_step": "search",
		}),
		llmtest.JSON(map[string]any{
			"conflicts": []any{
				map[string]any{"id": "c1", "status": "resolved", "resolution": "A mouse mechanism does not outweigh a human trial."},
				map[string]any{"id": "auto-c1", "status": "resolved", "resolution": "A registered trial without results does not weigh against a completed one."},
			},
			"hypotheses": []any{map[string]any{"id": "h1", "confidence": 0.3, "status": "validating"}},
		}),
		llmtest.JSON(map[string]any{
			"hypotheses": []any{map[string]any{"id": "h1", "confidence": 0.15, "status": "refuted"},
				map[string]any{"id": "h2", "statement": "Observational benefits reflect confounding by indication", "status": "confirmed", "confidence": 0.85,
					"supporting_evidence_ids": []any{"pmc:PMC11000104"}}},
			"next_step": "synthesize",
		}),
		llmtest.JSON(map[string]any{"report": report, "citations": []any{"pubmed:39000101", "pubmed:39000102", "pmc:PMC11000104"}}),
	))
	t.Setenv("OPENAI_BASE_URL", model.URL())
	t.Setenv("OPENAI_API_KEY", "test-key")
	t.Setenv("GRAPHCTL_LLM", "")

	g, diags, err := runtime.Load("research.cue")
	if err != nil || diags.HasErrors() {
		t.Fatalf("research.cue: %v\n%v", err, diags)
	}
	dir := t.TempDir()
	ctx := context.Background()
	const thread = "metformin"
	open := func() (*badger.DB, *engine.Engine) {
		db, err := badger.Open(dir, badger.Options{})
		if err != nil {
			t.Fatalf("open Badger: %v", err)
		}
		eng := engine.New(g, db.Checkpointer(), engine.Options{Store: db.Store()})
		if err := eng.Preflight(ctx); err != nil {
			t.Fatalf("preflight: %v", err)
		}
		return db, eng
	}

	db, eng := open()
	ev := &events{}
	res, err := eng.Run(ctx, engine.Request{ThreadID: thread, Input: map[string]any{"query": "metformin cognitive decline"},
		InterruptBefore: []string{"supervisor"}}, ev.sink)
	if err != nil || res.Status != engine.StatusInterrupted {
		t.Fatalf("run 1: status %s, err %v, run error %v; want a stop before the supervisor", res.Status, err, res.Err)
	}
	if want := []string{"begin", "search", "judge", "cross_check", "resolve", "recheck"}; !reflect.DeepEqual(res.Path, want) {
		t.Errorf("run 1 path %v, want %v", res.Path, want)
	}
	sr := ev.of(literature.EventType)
	if len(sr) != 1 {
		t.Fatalf("search_result events %v, want one", sr)
	}
	wantCounts := map[string]any{"pubmed": 2, "europepmc": 3, "clinicaltrials": 2}
	if !reflect.DeepEqual(sr[0].Payload["counts"], wantCounts) || sr[0].Payload["total"] != 5 || sr[0].Payload["errors"] != nil {
		t.Errorf("search_result %v, want counts %v, total 5 and no errors", sr[0].Payload, wantCounts)
	}
	evidence, _ := res.State["evidence"].([]any)
	if len(evidence) != 5 {
		t.Fatalf("evidence %v, want the 5 de-duplicated hits", evidence)
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests in run 1, want judge and resolve", len(reqs))
	}
	judgePrompt := reqs[0].Messages[0].Content
	for _, want := range []string{"metformin cognitive decline", "[pubmed:39000102]", "did not slow cognitive decline", "[nct:NCT09000202]", "(2019)"} {
		if !strings.Contains(judgePrompt, want) {
			t.Errorf("judge prompt lacks %q:\n%s", want, judgePrompt)
		}
	}
	// The judge's own conflict, and the one cross_check opened: the judge
	// cites the trial registration for h1 and the randomized trial against it.
	for _, want := range []string{"Mechanistic benefit versus a null randomized trial", `"id":"auto-c1"`, `"source_a_id":"nct:NCT09000201"`} {
		if !strings.Contains(reqs[1].Messages[0].Content, want) {
			t.Errorf("resolve prompt lacks %s:\n%s", want, reqs[1].Messages[0].Content)
		}
	}

	// A new process: close everything, reopen from disk, and continue.
	if err := eng.Close(); err != nil {
		t.Fatalf("close engine: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("close Badger: %v", err)
	}
	db, eng = open()
	defer func() {
		if err := eng.Close(); err != nil {
			t.Errorf("close engine: %v", err)
		}
		if err := db.Close(); err != nil {
			t.Errorf("close Badger: %v", err)
		}
	}()
	lit.SetFailure(literature.EuropePMC, littest.Failure{Status: 503, Body: "Service Unavailable"})
	ev = &events{}
	// Resuming releases the stop before the supervisor.
	res, err = eng.Run(ctx, engine.Request{ThreadID: thread, Resume: &engine.Resume{Value: true}}, ev.sink)
	if err != nil || res.Status != engine.StatusCompleted {
		t.Fatalf("run 2: status %s, err %v, run error %v", res.Status, err, res.Err)
	}
	if want := []string{"supervisor", "search", "judge", "cross_check", "supervisor", "synthesize", "cite_check"}; !reflect.DeepEqual(res.Path, want) {
		t.Errorf("run 2 path %v, want %v (nothing of run 1 repeated)", res.Path, want)
	}
	sr = ev.of(literature.EventType)
	if len(sr) != 1 {
		t.Fatalf("search_result events %v, want one", sr)
	}
	errs, _ := sr[0].Payload["errors"].([]any)
	if len(errs) != 1 || errs[0].(map[string]any)["source"] != "europepmc" || errs[0].(map[string]any)["code"] != literature.CodeSourceError {
		t.Errorf("search_result errors %v, want Europe PMC's source_error", errs)
	}
	if !reflect.DeepEqual(sr[0].Payload["counts"], map[string]any{"pubmed": 2, "clinicaltrials": 2}) {
		t.Errorf("counts %v, want pubmed and clinicaltrials only", sr[0].Payload["counts"])
	}
	state := res.State
	evidence, _ = state["evidence"].([]any)
	if len(evidence) != 5 {
		t.Errorf("after two searches %d evidence items, want 5 (upserted, not duplicated)", len(evidence))
	}
	for _, it := range evidence {
		m := it.(map[string]any)
		if m["id"] == "pubmed:39000102" && !strings.Contains(m["summary"].(string), "did not slow") {
			t.Errorf("pubmed:39000102 lost Europe PMC's abstract in the search without it: %v", m)
		}
	}
	hyps, _ := state["hypotheses"].([]any)
	if len(hyps) != 2 {
		t.Fatalf("hypotheses %v, want h1 updated in place and h2", hyps)
	}
	h1 := hyps[0].(map[string]any)
	if h1["id"] != "h1" || h1["status"] != "refuted" || h1["confidence"] != 0.15 || h1["statement"] != "Metformin slows cognitive decline" {
		t.Errorf("h1 = %v, want refuted at 0.15 with its statement kept", h1)
	}
	conflicts, _ := state["conflicts"].([]any)
	if len(conflicts) != 2 || conflicts[0].(map[string]any)["status"] != "resolved" || conflicts[1].(map[string]any)["status"] != "resolved" {
		t.Errorf("conflicts %v, want c1 and auto-c1 resolved", conflicts)
	}
	// The report cites pubmed:39000101, which this search did not find:
	// cite_check says so after it.
	if r, _ := state["report"].(string); !strings.HasPrefix(r, report+"\n\nNote: pubmed:39000101 is cited above but is not among the evidence") || state["iteration_count"] != 2 {
		t.Errorf("report %q, iteration %v; want the model's report after 2 rounds and the note on pubmed:39000101", state["report"], state["iteration_count"])
	}
	if got := textOf(ev.of(event.Text)); !strings.Contains(got, "[pmc:PMC11000104]") {
		t.Errorf("text events %q, want the report with citations", got)
	}
	if model.Pending() != 0 {
		t.Errorf("%d scripted model replies unused", model.Pending())
	}
}
