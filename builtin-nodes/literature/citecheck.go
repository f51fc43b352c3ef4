package literature

import (
	"cmp"
	"context"
	"regexp"
	"strings"

	"github.com/graphctl/graphctl/builtin-nodes/internal/check"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
)

func init() {
	node.MustRegister(node.Type{
		Name: "lit_cite_check",
		Description: "Checks the evidence ids a text (a report) cites against the evidence found; when it cites ids that are not " +
			"among it, appends a note saying so to the text and to the conversation, and emits citations_corrected.",
		Config: `{
	text?: *"report" | string
	evidence?: *"evidence" | string
	messages?: *"messages" | string
}`,
		New: newCiteCheckNode,
	})
}

// citedID matches an evidence id as lit_search writes them: pubmed:PMID,
// pmc:PMCID, nct:NCTID, europepmc:SOURCE:ID.
var citedID = regexp.MustCompile(`\b(?:pubmed|pmc|nct|europepmc):[A-Za-z0-9](?:[A-Za-z0-9:._-]*[A-Za-z0-9])?`)

type citeCheckNode struct {
	text, evidence, messages string
}

func newCiteCheckNode(b node.Builder) (node.Node, error) {
	var cfg struct {
		Text     string `json:"text"`
		Evidence string `json:"evidence"`
		Messages string `json:"messages"`
	}
	if err := b.Decode(&cfg); err != nil {
		b.Errorf("", "invalid-config", "lit_cite_check node %q: %v", b.NodeName(), err)
		return nil, nil
	}
	n := &citeCheckNode{text: cmp.Or(cfg.Text, "report"), evidence: cmp.Or(cfg.Evidence, "evidence"), messages: cmp.Or(cfg.Messages, "messages")}
	if fd := check.Field(b, "text", n.text); fd != nil && fd.Type.Kind != graph.String {
		b.Errorf("text", "invalid-config", "lit_cite_check node %q reads the text from %q, declared as %s; declare it as string", b.NodeName(), n.text, fd.Type)
	}
	if fd := check.Field(b, "evidence", n.evidence); fd != nil && (fd.Type.Kind != graph.List || fd.Type.Elem == nil || fd.Type.Elem.Kind != graph.Object && fd.Type.Elem.Kind != graph.Any) {
		b.Errorf("evidence", "invalid-config", "lit_cite_check node %q reads objects from %q, declared as %s; declare it as list<object>", b.NodeName(), n.evidence, fd.Type)
	}
	check.MessagesField(b, "messages", n.messages)
	if b.Failed() {
		return nil, nil
	}
	return n, nil
}

// Run implements node.Node.
func (n *citeCheckNode) Run(_ context.Context, in *node.Input) (node.Update, error) {
	text, _ := in.State[n.text].(string)
	found := map[string]bool{}
	for _, e := range objects(in.State[n.evidence]) {
		found[str(e, "id")] = true
	}
	var unknown []string
	for _, id := range citedID.FindAllString(text, -1) {
		if !found[id] && !containsString(unknown, id) {
			unknown = append(unknown, id)
		}
	}
	if len(unknown) == 0 {
		return node.Update{}, nil
	}
	note := unknownCitationsNote(unknown)
	if in.Emit != nil {
		in.Emit(event.Event{Type: CitationsEventType, Payload: map[string]any{"text": map[string]any{"field": n.text, "unknown_evidence_ids": stringsAsAny(unknown)}}})
		in.Emit(event.Event{Type: event.Text, Payload: map[string]any{"content": "\n\n" + note}})
	}
	return node.Update{
		n.text:     text + "\n\n" + note,
		n.messages: map[string]any{"role": "assistant", "content": note},
	}, nil
}

// unknownCitationsNote tells the reader which cited ids are no evidence.
func unknownCitationsNote(ids []string) string {
	if len(ids) == 1 {
		return "Note: " + ids[0] + " is cited above but is not among the evidence the search found; it supports nothing in this report."
	}
	return "Note: " + strings.Join(ids[:len(ids)-1], ", ") + " and " + ids[len(ids)-1] +
		" are cited above but are not among the evidence the search found; they support nothing in this report."
}
