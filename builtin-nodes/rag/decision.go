package rag

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/graphctl/graphctl/builtin-nodes/internal/check"
	"github.com/graphctl/graphctl/builtin-nodes/internal/namespace"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/store"
)

// DecisionEvent is the type of the event a decision_log node emits.
const DecisionEvent = "decision"

// DecisionConfig is the schema of a decision_log node's config.
const DecisionConfig = `{
	namespace: [...string] & [_, ...]
	decision: string
	question?: string
	field: string
}`

func init() {
	node.MustRegister(node.Type{
		Name: "decision_log",
		Description: "Records a routing decision (plan, reason, …) with a decision_log_id in a persisted decision log " +
			"and writes it, id included, to a state field.",
		Config: DecisionConfig,
		New:    newDecision,
	})
}

type decisionNode struct {
	namespace []node.Template
	decision  node.Expr
	question  node.Template
	field     string
}

func newDecision(b node.Builder) (node.Node, error) {
	var cfg struct {
		Namespace []string `json:"namespace"`
		Decision  string   `json:"decision"`
		Question  string   `json:"question"`
		Field     string   `json:"field"`
	}
	if err := b.Decode(&cfg); err != nil {
		b.Errorf("", "invalid-config", "decision_log node %q: %v", b.NodeName(), err)
		return nil, nil
	}
	n := &decisionNode{field: cfg.Field}
	n.namespace = namespace.Compile(b, cfg.Namespace)
	n.decision = b.Expr("decision", cfg.Decision, "")
	if cfg.Question != "" {
		n.question = b.Template("question", cfg.Question)
	}
	if f := check.Field(b, "field", cfg.Field); f != nil && f.Type.Kind != graph.Object && f.Type.Kind != graph.Any {
		b.Errorf("field", "invalid-config", "decision_log node %q writes an object to %q, which is declared %s; declare it {type: \"object\"}", b.NodeName(), cfg.Field, f.Type)
	}
	if b.Failed() {
		return nil, nil
	}
	return n, nil
}

// Prepare implements node.Preparer.
func (n *decisionNode) Prepare(_ context.Context, s *node.Services) error {
	return namespace.RequireStore(s, "decision_log")
}

// DecisionID is the id of the decision a node makes in a run's step: the
// same on a re-run of the step, so a retried or resumed node overwrites its
// own record instead of adding a second one.
func DecisionID(thread, run, nodeName string, step int) string {
	return "dec-" + Hash(fmt.Sprintf("%s\x00%s\x00%s\x00%d", thread, run, nodeName, step))[:16]
}

// Run implements node.Node.
func (n *decisionNode) Run(ctx context.Context, in *node.Input) (node.Update, error) {
	if in.Services == nil || in.Services.Store == nil {
		return nil, node.Errorf("no_store", "%s: %v", in.Node, namespace.RequireStore(in.Services, "decision_log"))
	}
	v, err := n.decision.Eval(in.Scope)
	if err != nil {
		return nil, node.Errorf("expression_error", "%s: decision (%s): %w", in.Node, n.decision.Source(), err)
	}
	d, ok := v.(map[string]any)
	if !ok {
		return nil, node.Errorf("invalid_decision", "%s: decision (%s) is %s, want an object with plan and reason", in.Node, n.decision.Source(), graph.DescribeValue(v))
	}
	plan, _ := d["plan"].(string)
	if strings.TrimSpace(plan) == "" {
		return nil, node.Errorf("invalid_decision", "%s: decision (%s) has no plan", in.Node, n.decision.Source())
	}
	ns, err := namespace.Render(in, n.namespace)
	if err != nil {
		return nil, err
	}
	id := DecisionID(in.ThreadID, in.RunID, in.Node, in.Step)
	out := make(map[string]any, len(d)+1)
	for k, val := range d {
		out[k] = val
	}
	out["decision_log_id"] = id
	rec := make(map[string]any, len(out)+6)
	for k, val := range out {
		rec[k] = val
	}
	rec["thread_id"], rec["run_id"], rec["node"], rec["step"] = in.ThreadID, in.RunID, in.Node, in.Step
	rec["created_at"] = time.Now().UTC().Format(time.RFC3339Nano)
	if n.question != nil {
		q, err := n.question.Render(in.Scope)
		if err != nil {
			return nil, node.Errorf("template_error", "%s: question: %w", in.Node, err)
		}
		rec["question"] = strings.TrimSpace(q)
	}
	if err := in.Services.Store.Put(ctx, ns, id, rec, store.PutOptions{Index: []string{"question", "reason"}}); err != nil {
		return nil, node.Retryable("store_error", fmt.Errorf("%s: record decision %s in %v: %w", in.Node, id, ns, err))
	}
	if in.Emit != nil {
		payload := make(map[string]any, len(out))
		for k, val := range out {
			payload[k] = val
		}
		in.Emit(event.Event{Type: DecisionEvent, Payload: payload})
	}
	return node.Update{n.field: out}, nil
}
