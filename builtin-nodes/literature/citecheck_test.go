package literature_test

import (
	"context"
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/internal/nodetest"
	"github.com/graphctl/graphctl/builtin-nodes/literature"
)

func TestLitCiteCheck(t *testing.T) {
	g, err := nodetest.Graph(nil, "report: string", "evidence: list<object>", "messages: messages", "notes: list<object>")
	if err != nil {
		t.Fatal(err)
	}
	n, b, err := nodetest.Build(g, "lit_cite_check", "cite_check", nil)
	if err != nil || n == nil {
		t.Fatalf("build: %v %v", err, b.Problems())
	}
	tests := []struct {
		name, report, note string
	}{
		{"every citation found", "No effect [pubmed:39000102]; a trial is recruiting (nct:NCT09000201).", ""},
		{"one made up, cited twice", "No effect [pubmed:39000102; pubmed:1] [pubmed:1].",
			"Note: pubmed:1 is cited above but is not among the evidence the search found; it supports nothing in this report."},
		{"two made up", "See pmc:PMC9 and europepmc:PPR:42.",
			"Note: pmc:PMC9 and europepmc:PPR:42 are cited above but are not among the evidence the search found; they support nothing in this report."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up, events, err := nodetest.Run(context.Background(), g, n, "cite_check", map[string]any{"report": tt.report, "evidence": corpusEvidence()})
			if err != nil {
				t.Fatal(err)
			}
			if tt.note == "" {
				if len(up) != 0 || len(events) != 0 {
					t.Errorf("update %v, events %v; want none", up, events)
				}
				return
			}
			msg, _ := up["messages"].(map[string]any)
			if up["report"] != tt.report+"\n\n"+tt.note || msg["content"] != tt.note || msg["role"] != "assistant" {
				t.Errorf("update %v", up)
			}
			if len(events) != 2 || events[0].Type != literature.CitationsEventType {
				t.Errorf("events %v", events)
			}
		})
	}
	for _, cfg := range []map[string]any{{"text": "evidence"}, {"evidence": "report"}, {"messages": "notes"}} {
		if n, b, _ := nodetest.Build(g, "lit_cite_check", "cite_check", cfg); n != nil || len(b.Problems()) == 0 {
			t.Errorf("config %v built without a problem", cfg)
		}
	}
}
