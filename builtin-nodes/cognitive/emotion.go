package cognitive

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
)

// EmotionConfig is the schema of an emotion node's config.
const EmotionConfig = `{
	mode?: *"lexicon" | "llm"
	model?: string
	text?: string
	messages_field?: *"messages" | string
	field?: *"emotional_context" | string
	lexicon?: {[string]: [...string]}
	modulation?: {[string]: string}
}`

func init() {
	node.MustRegister(node.Type{
		Name:        "emotion",
		Description: "Detects the user's emotion (lexicon or model), writes an emotional context with a tone instruction, emits an emotion event.",
		Config:      EmotionConfig,
		New:         newEmotion,
	})
}

type emotionConfig struct {
	Mode          string              `json:"mode"`
	Model         string              `json:"model"`
	Text          string              `json:"text"`
	MessagesField string              `json:"messages_field"`
	Field         string              `json:"field"`
	Lexicon       map[string][]string `json:"lexicon"`
	Modulation    map[string]string   `json:"modulation"`
}

type emotionNode struct {
	source     textSource
	field      []string
	lexicon    *lexicon
	modulation map[string]string
	llm        *modelRef // nil in lexicon mode
	now        func() time.Time
}

func newEmotion(b node.Builder) (node.Node, error) {
	var cfg emotionConfig
	if err := b.Decode(&cfg); err != nil {
		b.Errorf("", "invalid-config", "emotion node %q: %v", b.NodeName(), err)
		return nil, nil
	}
	if cfg.Field == "" {
		cfg.Field = "emotional_context"
	}
	n := &emotionNode{now: time.Now}
	n.source = newTextSource(b, "text", cfg.Text, "messages_field", cfg.MessagesField)
	n.field = objectField(b, "field", cfg.Field, graph.Object)
	for _, emotion := range sortedKeys(cfg.Lexicon) {
		if strings.TrimSpace(emotion) == "" || emotion == Neutral {
			b.Errorf("lexicon."+emotion, "invalid-config", "emotion node %q: %q cannot be a lexicon emotion", b.NodeName(), emotion)
		}
		for i, p := range cfg.Lexicon[emotion] {
			if strings.TrimSpace(p) == "" {
				b.Errorf(fmt.Sprintf("lexicon.%s.%d", emotion, i), "invalid-config", "emotion %q: empty phrase", emotion)
			}
		}
	}
	if !b.Failed() {
		lx, err := compileLexicon(cfg.Lexicon)
		if err != nil {
			b.Errorf("lexicon", "invalid-config", "emotion node %q: %v", b.NodeName(), err)
		}
		n.lexicon = lx
	}
	n.modulation = BundledModulation()
	for emotion, instruction := range cfg.Modulation {
		if strings.TrimSpace(instruction) == "" {
			b.Errorf("modulation."+emotion, "invalid-config", "emotion %q: empty modulation instruction", emotion)
		}
		n.modulation[emotion] = instruction
	}
	switch cfg.Mode {
	case "", "lexicon":
		if cfg.Model != "" {
			b.Warnf("model", "unused", "emotion node %q uses the lexicon; model %q is used only with mode \"llm\"", b.NodeName(), cfg.Model)
		}
	case "llm":
		n.llm = &modelRef{name: cfg.Model, graphDefault: llm.GraphDefault(b.Graph())}
	default:
		b.Errorf("mode", "invalid-config", "emotion mode must be \"lexicon\" or \"llm\", got %q", cfg.Mode)
	}
	if b.Failed() {
		return nil, nil
	}
	return n, nil
}

// Prepare implements node.Preparer: in model mode the model must be available.
func (n *emotionNode) Prepare(ctx context.Context, services *node.Services) error {
	if n.llm == nil {
		return nil
	}
	return n.llm.prepare(ctx, services, "emotion")
}

// Run implements node.Node.
func (n *emotionNode) Run(ctx context.Context, in *node.Input) (node.Update, error) {
	text, err := n.source.text(in, "text")
	if err != nil {
		return nil, err
	}
	d := n.lexicon.detect(text)
	if n.llm != nil && strings.TrimSpace(text) != "" {
		if md, ok, err := n.askModel(ctx, in, text, d); err != nil {
			return nil, err
		} else if ok {
			d = md
		}
	}
	instruction, ok := n.modulation[d.Emotion]
	if !ok {
		instruction = genericModulation(d.Emotion)
	}
	if in.Emit != nil {
		in.Emit(event.Event{Type: EmotionEvent, Payload: map[string]any{"primary": d.Emotion, "confidence": d.Confidence}})
	}
	return nested(n.field, map[string]any{
		"current_emotion":        d.Emotion,
		"confidence":             d.Confidence,
		"intensity":              d.Intensity,
		"modulation_instruction": instruction,
		"detected_at":            n.now().UTC().Format(time.RFC3339),
	}), nil
}

// emotionPrompt asks a model for the primary emotion as JSON.
func (n *emotionNode) emotionPrompt(text string) string {
	return "Classify the emotion the user expresses in the message below.\n" +
		"Answer with one JSON object only, no other text: " +
		`{"primary": "<emotion>", "confidence": <number from 0 to 1>, "intensity": <number from 0 to 1>}` + "\n" +
		"Use one of: " + strings.Join(append(append([]string(nil), n.lexicon.emotions...), Neutral), ", ") +
		" (neutral when no emotion is expressed).\n\nMessage:\n" + text
}

// askModel asks the model; ok is false when the answer is unusable, so the
// lexicon's detection stands. A failed call is a retryable node error.
func (n *emotionNode) askModel(ctx context.Context, in *node.Input, text string, lex Detection) (Detection, bool, error) {
	answer, err := n.llm.complete(ctx, in, n.emotionPrompt(text))
	if err != nil {
		return Detection{}, false, err
	}
	obj, err := parseJSONObject(answer)
	if err != nil {
		return Detection{}, false, nil
	}
	primary, _ := obj["primary"].(string)
	primary = strings.ToLower(strings.TrimSpace(primary))
	conf, okConf := number(obj["confidence"])
	if primary == "" || !okConf || conf < 0 || conf > 1 {
		return Detection{}, false, nil
	}
	intensity, okInt := number(obj["intensity"])
	if !okInt || intensity < 0 || intensity > 1 {
		intensity = conf
		if primary == Neutral {
			intensity = 0
		}
	}
	return Detection{Emotion: primary, Confidence: round2(conf), Intensity: round2(intensity), Scores: lex.Scores}, true, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
