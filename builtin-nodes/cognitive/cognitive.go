// Package cognitive provides the node types of a cognitive chat graph that sit
// around the reasoning step: they read the user's turn and enrich state
// before (or instead of) a model reply.
//
//   - emotion:         detects the user's emotion with a bundled English and
//     Chinese lexicon (negation and intensifiers aware) or with a model, writes an
//     emotional context with a prompt modulation instruction, and emits an
//     "emotion" event.
//   - memory_retrieve: searches long-term memory (the run's Store) with BM25, or
//     BM25 merged with embedding similarity, writes MemoryRef objects and counts
//     each hit's accesses.
//   - memory_store:    upserts memory entries computed from state into the Store,
//     optionally with an embedding for semantic retrieval.
//   - vision:          reads the text of an image with a vision-capable model
//     (OCR), and either shows it or extracts a memory from it and asks the user
//     to confirm it with a form.
//
// A cognitive chat graph uses them like this:
//
//	emotion: {type: "emotion", next: "recall"}
//	recall: {
//		type: "memory_retrieve"
//		config: {namespace: ["memories", "${user_id}"], field: "working_memory.retrieved_memories"}
//		next: "reason"
//	}
//	remember: {type: "memory_store", config: {namespace: ["memories", "${user_id}"], from: "memory_update"}}
//	image: {
//		type: "vision"
//		config: {image_field: "image", action_field: "action", text_field: "semantic_input.text"}
//	}
//
// # Emotion
//
// The lexicon mode finds every phrase of the bundled lexicon (see
// BundledLexicon; a node's lexicon adds phrases, or removes an emotion listed
// with none) in one pass, keeps the longest of overlapping matches ("不开心"
// over "开心"), and weighs each by the few words before it: a negation drops
// it, except that a negated joy ("not happy", "不太高兴") counts as sadness;
// intensifiers ("very", "非常") and shouting raise it, diminishers ("a bit",
// "有点") lower it, and a clause after "but"/"但是" counts more. Confidence is
// how much of the evidence the primary emotion holds, damped when there is
// little of it; text without any indicator is neutral with confidence 0.5 and
// intensity 0. The llm mode asks the model for {primary, confidence} and keeps
// the lexicon's answer when the reply is not such an object.
//
// # Memory
//
// Memories live in the run's Store as documents {key, value, category,
// confidence, access_count, last_accessed}; see EmbeddingKey and IndexKey for
// the reserved keys. Retrieval drops stop words from the query before BM25 so
// that "what is my …" does not match every memory. With an embedder (the
// node's embedder setting, else the graph's defaults.embedder; "none" for
// BM25 only) recall is hybrid: the score is 0.7·cosine + 0.3·BM25/max(BM25),
// counting a cosine only from 0.3 up, so a new topic still retrieves nothing.
// Each vector records the embedder that computed it; a memory without a
// vector of the current embedder is embedded when it is next searched, so
// changing the embedding model re-embeds. The graph's default embedder is
// lenient: when it cannot be used, retrieval is BM25 only and storage keeps
// no vector, each saying so in a memory_fallback event. Every retrieval
// emits memory_recalled {mode, count, keys}.
package cognitive

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/graphctl/graphctl/builtin-nodes/extract"
	"github.com/graphctl/graphctl/builtin-nodes/internal/check"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
)

// Event types emitted by the node types of this package.
const (
	EmotionEvent      = "emotion"
	MemoryStoredEvent = "memory_stored"
	// MemoryRecalledEvent reports a retrieval: {mode: "hybrid" | "bm25",
	// count, keys, embedder?}.
	MemoryRecalledEvent = "memory_recalled"
	// MemoryFallbackEvent says that the graph's default embedder could not be
	// used and what the node did instead: {embedder, error, to}.
	MemoryFallbackEvent = "memory_fallback"
	HITLEvent           = "hitl"
)

// textSource yields the text a node works on: the value of an expression, or
// the content of the last user message of a messages field.
type textSource struct {
	expr     node.Expr
	messages string
}

// newTextSource compiles the optional expression at path, or checks the
// messages field used by default.
func newTextSource(b node.Builder, path, src, messagesPath, messages string) textSource {
	if messages == "" {
		messages = "messages"
	}
	ts := textSource{messages: messages}
	if src != "" {
		ts.expr = b.Expr(path, src, graph.String)
		return ts
	}
	check.MessagesField(b, messagesPath, messages)
	return ts
}

// text evaluates the source in the node's scope.
func (ts textSource) text(in *node.Input, what string) (string, error) {
	if ts.expr == nil {
		return extract.LastUserMessage(in.Scope[ts.messages]), nil
	}
	v, err := ts.expr.Eval(in.Scope)
	if err != nil {
		return "", node.Errorf("expression_error", "%s %s: %w", in.Node, what, err)
	}
	switch s := v.(type) {
	case nil:
		return "", nil
	case string:
		return s, nil
	}
	return "", node.Errorf("expression_error", "%s %s: want a string, got %s", in.Node, what, graph.DescribeValue(v))
}

// objectField checks that path names a declared state field (the first
// element of a dotted path) that can hold what the node writes there: an
// object when the path has one element and the node writes an object, or an
// object/map/any field for a nested path. It returns the split path.
func objectField(b node.Builder, cfgPath, target string, leaf graph.Kind) []string {
	parts := strings.Split(target, ".")
	for _, p := range parts {
		if p == "" {
			b.Errorf(cfgPath, "invalid-config", "node %q: %q is not a field name or a dotted path", b.NodeName(), target)
			return nil
		}
	}
	f := check.Field(b, cfgPath, parts[0])
	if f == nil {
		return nil
	}
	k := f.Type.Kind
	if len(parts) > 1 {
		leaf = graph.Object
	}
	switch {
	case k == graph.Any:
	case leaf == graph.Object && (k == graph.Object || k == graph.Map):
	case leaf == graph.List && k == graph.List:
	case leaf == graph.String && k == graph.String:
	default:
		want := map[graph.Kind]string{graph.Object: "object (or any)", graph.List: "a list (or any)", graph.String: "string (or any)"}[leaf]
		b.Errorf(cfgPath, "invalid-config", "node %q writes to %q, whose field %q is declared as %s; declare it as %s",
			b.NodeName(), target, parts[0], f.Type, want)
		return nil
	}
	return parts
}

// nested builds the update that writes v at a dotted path: {a: {b: v}} for
// ["a", "b"]. A nested path relies on the field's reducer (merge) to keep the
// object's other keys.
func nested(path []string, v any) node.Update {
	for i := len(path) - 1; i > 0; i-- {
		v = map[string]any{path[i]: v}
	}
	return node.Update{path[0]: v}
}

// parseJSONObject reads the first JSON object in a model's answer, tolerating
// code fences and text around it.
func parseJSONObject(answer string) (map[string]any, error) {
	s := strings.TrimSpace(answer)
	start := strings.IndexByte(s, '{')
	end := strings.LastIndexByte(s, '}')
	if start < 0 || end < start {
		return nil, fmt.Errorf("no JSON object in the answer %q", clip(answer, 120))
	}
	var out map[string]any
	dec := json.NewDecoder(strings.NewReader(s[start : end+1]))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("answer %q is not a JSON object: %w", clip(answer, 120), err)
	}
	return out, nil
}

// number reads a JSON number (json.Number, float or int) as a float64.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

// clip shortens s to at most n runes for messages.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
