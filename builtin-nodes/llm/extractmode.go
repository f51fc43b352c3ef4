package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/graphctl/graphctl/builtin-nodes/extract"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/node"
)

// The extract node's llm mode (and auto mode with a model): the model is
// asked for a JSON object with exactly the node's fields, described from
// their config; every value it gives is checked by the extract rules'
// Accept, so that only canonical lexicon values and values matching a
// field's pattern are written.

func init() {
	if err := extract.RegisterMode(extract.ModeLLM, newExtractMode); err != nil {
		panic(err)
	}
}

// lexiconExamples is how many phrases of each lexicon value the prompt shows.
const lexiconExamples = 5

type extractMode struct {
	rules        *extract.Extractor
	fields       []extract.Field
	auto         bool
	model        string
	graphDefault string
	system       string
}

func newExtractMode(b node.Builder, x *extract.Extractor) (node.Node, error) {
	if x.Model() != "" {
		if _, _, err := ParseSpec(x.Model()); err != nil {
			b.Errorf("model", "invalid-config", "%v", err)
			return nil, nil
		}
	}
	n := &extractMode{
		rules: x, fields: x.Fields(), auto: x.Mode() == extract.ModeAuto,
		model: x.Model(), graphDefault: GraphDefault(b.Graph()),
	}
	n.system = extractPrompt(n.fields)
	return n, nil
}

// extractPrompt writes the instructions: the JSON object's keys, and for
// each field its type, meaning, allowed values or format.
func extractPrompt(fields []extract.Field) string {
	var sb strings.Builder
	keys := make([]string, len(fields))
	for i, f := range fields {
		keys[i] = strconv.Quote(f.Name)
	}
	sb.WriteString("You extract information from the user's message into fields.\n")
	sb.WriteString("Reply with one JSON object only, no other text, with exactly these keys: " + strings.Join(keys, ", ") + ".\n")
	sb.WriteString("Use null for a text field and [] for a list field the message does not state. " +
		"Take only what the message states; do not guess, and never put a value meant for one field into another.\n\nFields:\n")
	for _, f := range fields {
		kind := "a string or null"
		if f.List {
			kind = "an array of strings"
		}
		fmt.Fprintf(&sb, "- %s (%s)", f.Name, kind)
		if f.Description != "" {
			sb.WriteString(": " + f.Description)
		}
		sb.WriteString("\n")
		allowed := f.Values
		if len(allowed) == 0 && f.Pattern == "" {
			allowed = f.Enum
		}
		if len(allowed) > 0 {
			quoted := make([]string, len(allowed))
			for i, v := range allowed {
				quoted[i] = strconv.Quote(v)
			}
			if f.List {
				sb.WriteString("  Each item must be exactly one of: " + strings.Join(quoted, ", "))
			} else {
				sb.WriteString("  The value must be exactly one of: " + strings.Join(quoted, ", "))
			}
			if f.Pattern != "" {
				sb.WriteString(", or text matching the pattern below")
			}
			sb.WriteString(". Map what the user says to the value with the closest meaning.\n")
			for _, v := range f.Values {
				phrases := f.Lexicon[v]
				if len(phrases) == 0 {
					continue
				}
				if len(phrases) > lexiconExamples {
					phrases = phrases[:lexiconExamples]
				}
				quotedP := make([]string, len(phrases))
				for i, p := range phrases {
					quotedP[i] = strconv.Quote(p)
				}
				fmt.Fprintf(&sb, "    %q: said as %s, or anything meaning the same\n", v, strings.Join(quotedP, ", "))
			}
		}
		if f.Pattern != "" {
			fmt.Fprintf(&sb, "  Format: a value matching the regular expression %s", f.Pattern)
			if f.Normalize == "upper" || f.Normalize == "lower" {
				fmt.Fprintf(&sb, " (it is stored in %s case)", f.Normalize)
			}
			sb.WriteString("; leave it out when the message has no such value.\n")
		}
	}
	return sb.String()
}

// configured reports whether a model is configured for the node: a test
// case's scripted replies, the override, the node's model or the graph's.
func (n *extractMode) configured(s *node.Services) bool {
	if raw, _ := ScriptKey.Get(s); raw != nil {
		return true
	}
	_, err := Resolve(s, n.model, n.graphDefault)
	return err == nil
}

// Prepare implements node.Preparer. In llm mode a model must be configured
// and its client buildable; in auto mode no model is fine (the rules run),
// but a configured model whose client cannot be built is reported.
func (n *extractMode) Prepare(ctx context.Context, s *node.Services) error {
	if n.auto && !n.configured(s) {
		return nil
	}
	if _, err := Model(ctx, s, n.model, n.graphDefault); err != nil {
		return fmt.Errorf("extract mode %q: %w", n.mode(), err)
	}
	return nil
}

func (n *extractMode) mode() string {
	if n.auto {
		return extract.ModeAuto
	}
	return extract.ModeLLM
}

// dropped is a value the model gave that was not written, and why.
type dropped struct {
	field, value, reason string
}

// Run implements node.Node.
func (n *extractMode) Run(ctx context.Context, in *node.Input) (node.Update, error) {
	ctx = node.WithCall(ctx, in)
	if n.auto && !n.configured(in.Services) {
		return n.rules.Run(ctx, in)
	}
	text, err := n.rules.Text(in)
	if err != nil {
		return nil, err
	}
	emit := in.Emit
	if emit == nil {
		emit = event.Discard
	}
	up, drops, err := n.ask(WithNode(ctx, in.Node), in, text, emit)
	if err != nil {
		if !n.auto || ctx.Err() != nil {
			return nil, err
		}
		emit(event.Event{Type: extract.FallbackEventType, Payload: map[string]any{
			"error": err.Error(), "code": node.CodeOf(err), "to": extract.ModeRules,
		}})
		return n.rules.Run(ctx, in)
	}
	found := make(map[string]any, len(up))
	for k, v := range up {
		found[k] = v
	}
	payload := map[string]any{"found": found, "mode": extract.ModeLLM}
	if len(drops) > 0 {
		list := make([]any, len(drops))
		for i, d := range drops {
			list[i] = map[string]any{"field": d.field, "value": d.value, "reason": d.reason}
		}
		payload["dropped"] = list
	}
	emit(event.Event{Type: extract.EventType, Payload: payload})
	return up, nil
}

// ask calls the model (with one repair round-trip when its reply is not a
// JSON object of the declared shape) and returns the accepted values.
func (n *extractMode) ask(ctx context.Context, in *node.Input, text string, emit event.Sink) (node.Update, []dropped, error) {
	if strings.TrimSpace(text) == "" {
		return node.Update{}, nil, nil
	}
	model, err := Model(ctx, in.Services, n.model, n.graphDefault)
	if err != nil {
		return nil, nil, node.Errorf("no_model", "extract node %q: %w", in.Node, err)
	}
	model = Traced(SpecFor(in.Services, n.model, n.graphDefault), model)
	msgs := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, n.system),
		llms.TextParts(llms.ChatMessageTypeHuman, text),
	}
	opts := []llms.CallOption{llms.WithJSONMode(), llms.WithTemperature(0)}
	usage := map[string]float64{}
	defer emitUsage(emit, usage)
	content, err := n.call(ctx, in, model, msgs, opts, usage)
	if err != nil {
		return nil, nil, err
	}
	obj, err := n.parse(content)
	if err != nil {
		repair := append(append([]llms.MessageContent(nil), msgs...),
			llms.TextParts(llms.ChatMessageTypeAI, content),
			llms.TextParts(llms.ChatMessageTypeHuman, "Your reply could not be used: "+err.Error()+
				". Reply again with only the corrected JSON object, no other text."))
		content2, err2 := n.call(ctx, in, model, repair, opts, usage)
		if err2 != nil {
			return nil, nil, err2
		}
		obj, err2 = n.parse(content2)
		if err2 != nil {
			return nil, nil, node.Errorf("invalid_output", "extract node %q: the model's JSON is invalid after one repair attempt: %v (first attempt: %v)", in.Node, err2, err)
		}
	}
	up, drops := n.accept(obj)
	return up, drops, nil
}

func (n *extractMode) call(ctx context.Context, in *node.Input, model llms.Model, msgs []llms.MessageContent, opts []llms.CallOption, usage map[string]float64) (string, error) {
	resp, err := model.GenerateContent(ctx, msgs, opts...)
	if err != nil {
		return "", classifyExtract(ctx, in.Node, err)
	}
	choice, err := firstChoice(resp)
	if err != nil {
		return "", node.Errorf("llm_error", "extract node %q: %w", in.Node, err)
	}
	addUsage(usage, choice.GenerationInfo)
	return choice.Content, nil
}

// classifyExtract is classify with the error naming an extract node.
func classifyExtract(ctx context.Context, nodeName string, err error) error {
	if cerr := cut(ctx, "extract node", nodeName); cerr != nil {
		return cerr
	}
	c := classify(ctx, nodeName, err)
	var ne *node.Error
	if errors.As(c, &ne) {
		return &node.Error{Code: ne.Code, Retryable: ne.Retryable,
			Err: fmt.Errorf("extract node %q: model call: %w", nodeName, err)}
	}
	return fmt.Errorf("extract node %q: %w", nodeName, err)
}

// parse decodes the reply and checks its shape: an object whose declared
// keys hold a string or null (list fields: an array of strings, or null).
// Values are checked later, one by one, by accept.
func (n *extractMode) parse(content string) (map[string]any, error) {
	raw := extractJSON(content)
	if raw == "" {
		return nil, fmt.Errorf("the reply is not JSON: %q", truncate(content, 120))
	}
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return nil, fmt.Errorf("the reply is not valid JSON: %v", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the reply is JSON %s, want an object", jsonType(v))
	}
	var problems []string
	for _, f := range n.fields {
		val := obj[f.Name]
		switch x := val.(type) {
		case nil:
		case string:
			if f.List {
				problems = append(problems, fmt.Sprintf("%q must be an array of strings, got a string", f.Name))
			}
		case []any:
			if !f.List {
				problems = append(problems, fmt.Sprintf("%q must be a string or null, got an array", f.Name))
				continue
			}
			for i, item := range x {
				if _, ok := item.(string); !ok {
					problems = append(problems, fmt.Sprintf("%q[%d] must be a string, got %s", f.Name, i, jsonType(item)))
				}
			}
		default:
			want := "a string or null"
			if f.List {
				want = "an array of strings"
			}
			problems = append(problems, fmt.Sprintf("%q must be %s, got %s", f.Name, want, jsonType(val)))
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("the JSON does not have the asked shape: %s", strings.Join(problems, "; "))
	}
	return obj, nil
}

// accept keeps the values the field rules accept; the others, and keys that
// are no declared field, are returned as dropped.
func (n *extractMode) accept(obj map[string]any) (node.Update, []dropped) {
	up := node.Update{}
	var drops []dropped
	declared := map[string]bool{}
	for _, f := range n.fields {
		declared[f.Name] = true
		var proposed []string
		switch x := obj[f.Name].(type) {
		case string:
			proposed = []string{x}
		case []any:
			for _, item := range x {
				proposed = append(proposed, item.(string))
			}
		}
		var kept []any
		seen := map[string]bool{}
		for _, p := range proposed {
			if strings.TrimSpace(p) == "" {
				continue
			}
			v, err := n.rules.Accept(f.Name, p)
			if err != nil {
				drops = append(drops, dropped{field: f.Name, value: p, reason: err.Error()})
				continue
			}
			if !seen[v] {
				seen[v] = true
				kept = append(kept, v)
			}
		}
		switch {
		case len(kept) == 0:
		case f.List:
			up[f.Name] = kept
		default:
			up[f.Name] = kept[0]
		}
	}
	for _, k := range sortedKeys(obj) {
		if !declared[k] && obj[k] != nil {
			drops = append(drops, dropped{field: k, value: compactJSON(obj[k]), reason: fmt.Sprintf("%q is not a field of this node", k)})
		}
	}
	return up, drops
}
