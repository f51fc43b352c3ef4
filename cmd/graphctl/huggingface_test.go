package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/graphctl/graphctl/builtin-nodes/literature"
	"github.com/graphctl/graphctl/builtin-nodes/literature/littest"
	"github.com/graphctl/graphctl/builtin-nodes/llm/llmtest"
)

// TestResearchWithHuggingFace runs the shipped research graph from the
// command line with `--llm huggingface:meta-llama/Llama-3.1-8B-Instruct` and
// no OpenAI configuration: every model call goes, with HF_TOKEN, to a local
// server speaking the Hugging Face router's (and TGI's) OpenAI-compatible
// chat API, and the literature sources are local servers.
func TestResearchWithHuggingFace(t *testing.T) {
	localLiterature(t)
	const report = "Metformin probably does not slow cognitive decline [pubmed:39000102]."
	hub := llmtest.NewServer(t, llmtest.WithReplies(
		llmtest.JSON(map[string]any{
			"hypotheses": []any{map[string]any{"id": "h1", "statement": "Metformin slows cognitive decline", "status": "validating", "confidence": 0.5,
				"supporting_evidence_ids": []any{"pubmed:39000101"}, "contradicting_evidence_ids": []any{"pubmed:39000102"}}},
			"next_step": "synthesize",
		}),
		llmtest.JSON(map[string]any{"report": report, "citations": []any{"pubmed:39000102"}}),
	))
	t.Setenv("HF_TOKEN", "hf_test_token")
	t.Setenv("HF_BASE_URL", hub.URL())
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("GRAPHCTL_LLM", "")

	graph := filepath.Join(repoRoot(t), "graphs", "research.cue")
	const spec = "huggingface:meta-llama/Llama-3.1-8B-Instruct"
	out, errOut, code := run(t, "run", graph, "--data-dir", t.TempDir(), "--llm", spec, "-i", "Does metformin slow cognitive decline?")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(out, report) {
		t.Errorf("stdout lacks the report:\n%s", out)
	}
	reqs := hub.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model server got %d requests, want judge and synthesize", len(reqs))
	}
	for i, r := range reqs {
		if r.Model != "meta-llama/Llama-3.1-8B-Instruct" || r.Authorization != "Bearer hf_test_token" || r.Status != 200 {
			t.Errorf("request %d: model %q, auth %q, status %d", i, r.Model, r.Authorization, r.Status)
		}
	}
}

// TestResearchWithASourceThatHangs runs the shipped research graph from the
// command line while ClinicalTrials.gov accepts the request and never
// answers: after the search node's timeout (shortened from the shipped 30s)
// the source is reported and the research goes on with the other two.
func TestResearchWithASourceThatHangs(t *testing.T) {
	localLiterature(t, littest.WithFailure("clinicaltrials", littest.Failure{Hang: true}))
	const report = "Metformin probably does not slow cognitive decline [pubmed:39000102]."
	model := llmtest.NewServer(t, llmtest.WithReplies(
		llmtest.JSON(map[string]any{"hypotheses": []any{map[string]any{"id": "h1", "statement": "Metformin slows cognitive decline",
			"status": "refuted", "confidence": 0.85}}, "next_step": "synthesize"}),
		llmtest.JSON(map[string]any{"report": report}),
	))
	shipped := shippedResearchOn(t, model.URL())
	if !strings.Contains(shipped, `timeout: "30s"`) {
		t.Fatal(`the shipped research graph no longer sets the search's timeout: "30s"`)
	}
	graph := filepath.Join(t.TempDir(), "research.cue")
	if err := os.WriteFile(graph, []byte(strings.Replace(shipped, `timeout: "30s"`, `timeout: "300ms"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, "run", graph, "--data-dir", t.TempDir(), "-i", "Does metformin slow cognitive decline?")
	if code != 0 || !strings.Contains(out, report) {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	judge := model.Requests()[0].Messages[0].Content
	if !strings.Contains(judge, "[pubmed:39000102]") || strings.Contains(judge, "[nct:") {
		t.Errorf("the judge's evidence is not that of PubMed and Europe PMC alone:\n%s", judge)
	}
}

// TestResearchWhenTheModelHangs runs the shipped research graph from the
// command line while the judge's model accepts the request and never
// answers: after the judge's timeout (shortened from the shipped 300s) the
// run fails naming the judge and its timeout, and graphctl resume finishes
// the research from its checkpoint without searching again.
func TestResearchWhenTheModelHangs(t *testing.T) {
	lit := localLiterature(t)
	const report = "Metformin probably does not slow cognitive decline [pubmed:39000102]."
	judge := llmtest.JSON(map[string]any{"hypotheses": []any{map[string]any{"id": "h1", "statement": "Metformin slows cognitive decline",
		"status": "refuted", "confidence": 0.85}}, "next_step": "synthesize"})
	hung := judge
	hung.Delay = time.Minute
	model := llmtest.NewServer(t, llmtest.WithReplies(hung, judge, llmtest.JSON(map[string]any{"report": report})))
	shipped := shippedResearchOn(t, model.URL())
	if n := strings.Count(shipped, `timeout: "300s"`); n != 3 {
		t.Fatalf(`the shipped research graph sets timeout: "300s" on %d model nodes, want 3 (judge, resolve, synthesize)`, n)
	}
	graph := filepath.Join(t.TempDir(), "research.cue")
	if err := os.WriteFile(graph, []byte(strings.ReplaceAll(shipped, `timeout: "300s"`, `timeout: "500ms"`)), 0o644); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	out, errOut, code := run(t, "run", graph, "--data-dir", data, "--thread", "hung", "-i", "Does metformin slow cognitive decline?")
	if code == 0 || !strings.Contains(errOut, "judge") || !strings.Contains(errOut, "timeout") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	searches := len(lit.Requests())
	out, errOut, code = run(t, "resume", graph, "--data-dir", data, "--thread", "hung")
	if code != 0 || !strings.Contains(out, report) {
		t.Fatalf("resume: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if len(lit.Requests()) != searches {
		t.Errorf("the resumed research searched again")
	}
}

// localLiterature starts local PubMed, Europe PMC and ClinicalTrials.gov
// servers and points the research graph's sources at them.
func localLiterature(t *testing.T, opts ...littest.Option) *littest.Server {
	t.Helper()
	lit := littest.NewServer(t, opts...)
	t.Setenv(literature.EnvPubMedURL, lit.PubMedURL())
	t.Setenv(literature.EnvEuropePMCURL, lit.EuropePMCURL())
	t.Setenv(literature.EnvClinicalTrialsURL, lit.ClinicalTrialsURL())
	return lit
}

// shippedResearchOn points the OpenAI provider at a local model server and
// returns the shipped research graph's source.
func shippedResearchOn(t *testing.T, modelURL string) string {
	t.Helper()
	t.Setenv("OPENAI_API_KEY", "sk-test")
	t.Setenv("OPENAI_BASE_URL", modelURL)
	t.Setenv("GRAPHCTL_LLM", "")
	src, err := os.ReadFile(filepath.Join(repoRoot(t), "graphs", "research.cue"))
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}
