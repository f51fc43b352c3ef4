package cognitive_test

import (
	"context"
	"testing"
	"time"

	_ "github.com/graphctl/graphctl/builtin-nodes/cognitive"
	"github.com/graphctl/graphctl/builtin-nodes/internal/nodetest"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
)

func emotionGraph(t testing.TB) *graph.Graph {
	t.Helper()
	g, err := nodetest.Graph(nil, "messages: messages", "emotional_context: object", "note: string", "mood: any")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func buildNode(t testing.TB, g *graph.Graph, typ string, cfg map[string]any) node.Node {
	t.Helper()
	n, b, err := nodetest.Build(g, typ, typ, cfg)
	if err != nil {
		t.Fatalf("build %s: %v", typ, err)
	}
	if n == nil {
		t.Fatalf("build %s: %v", typ, b.Problems())
	}
	return n
}

func userMessage(text string) map[string]any {
	return map[string]any{"messages": []any{
		map[string]any{"role": "user", "content": "earlier message, I am so happy"},
		map[string]any{"role": "assistant", "content": "I'm sad to hear that"},
		map[string]any{"role": "user", "content": text},
	}}
}

func TestEmotionLexicon(t *testing.T) {
	g := emotionGraph(t)
	n := buildNode(t, g, "emotion", nil)
	tests := []struct {
		text    string
		want    string
		minConf float64 // confidence must be at least this
		maxConf float64 // and at most this (0: no bound)
	}{
		{"I'm so happy today, everything went great!", "joy", 0.8, 0},
		{"I feel really sad and lonely since she left", "sadness", 0.3, 0.8},
		{"This is unacceptable, I'm furious!", "anger", 0.8, 0},
		{"I'm worried about my exam tomorrow", "anxiety", 0.6, 0},
		{"Ugh, it still doesn't work and I'm fed up", "frustration", 0.9, 0},
		{"Thank you so much for your help", "gratitude", 0.7, 0},
		{"Wow, I can't believe it", "surprise", 0.7, 0},
		{"I'm terrified of the dark", "fear", 0.6, 0},
		{"What time is it in Tokyo?", "neutral", 0.5, 0.5},
		{"", "neutral", 0.5, 0.5},
		{"I am not happy with this", "sadness", 0.3, 0.8},
		{"I'm not angry, just asking about the schedule", "neutral", 0.5, 0.5},
		{"I was sad yesterday, but now I'm happy", "joy", 0.3, 0.6},
		{"I'm a bit worried", "anxiety", 0.4, 0.7},
		{"我今天非常开心！", "joy", 0.8, 0},
		{"我很难过，心情低落", "sadness", 0.9, 0},
		{"我不开心", "sadness", 0.6, 0},
		{"我不太高兴", "sadness", 0.3, 0.8},
		{"气死我了，太可恶了", "anger", 0.9, 0},
		{"我有点担心明天的面试", "anxiety", 0.4, 0.7},
		{"谢谢你的帮助", "gratitude", 0.7, 0},
		{"明天北京的天气怎么样", "neutral", 0.5, 0.5},
		{"我并不害怕", "neutral", 0.5, 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			up, events, err := nodetest.Run(context.Background(), g, n, "emotion", userMessage(tt.text))
			if err != nil {
				t.Fatal(err)
			}
			ctx, ok := up["emotional_context"].(map[string]any)
			if !ok || len(up) != 1 {
				t.Fatalf("update = %#v, want only emotional_context", up)
			}
			if got := ctx["current_emotion"]; got != tt.want {
				t.Fatalf("current_emotion = %v, want %s", got, tt.want)
			}
			conf := ctx["confidence"].(float64)
			if conf < tt.minConf || tt.maxConf > 0 && conf > tt.maxConf {
				t.Errorf("confidence = %v, want in [%v, %v]", conf, tt.minConf, tt.maxConf)
			}
			if instr, _ := ctx["modulation_instruction"].(string); instr == "" {
				t.Errorf("no modulation instruction: %#v", ctx)
			}
			intensity := ctx["intensity"].(float64)
			if intensity < 0 || intensity > 1 || (tt.want == "neutral") != (intensity == 0) {
				t.Errorf("intensity = %v for %s", intensity, tt.want)
			}
			if _, err := time.Parse(time.RFC3339, ctx["detected_at"].(string)); err != nil {
				t.Errorf("detected_at: %v", err)
			}
			if len(events) != 1 || events[0].Type != "emotion" || len(events[0].Payload) != 2 ||
				events[0].Payload["primary"] != tt.want || events[0].Payload["confidence"] != conf {
				t.Errorf("events = %#v, want one emotion event {primary: %s, confidence: %v}", events, tt.want, conf)
			}
		})
	}
}

func TestEmotionIntensifiers(t *testing.T) {
	g := emotionGraph(t)
	n := buildNode(t, g, "emotion", nil)
	pairs := []struct{ plain, stronger string }{
		{"I am happy", "I am extremely happy!!"},
		{"I am a little worried", "I am worried"},
		{"I am angry", "I am ANGRY"},
		{"我开心", "我非常开心"},
		{"我有点难过", "我难过死了"},
	}
	intensity := func(text string) float64 {
		up, _, err := nodetest.Run(context.Background(), g, n, "emotion", userMessage(text))
		if err != nil {
			t.Fatal(err)
		}
		return up["emotional_context"].(map[string]any)["intensity"].(float64)
	}
	for _, p := range pairs {
		t.Run(p.stronger, func(t *testing.T) {
			if a, b := intensity(p.plain), intensity(p.stronger); !(b > a) {
				t.Errorf("intensity(%q) = %v, not above intensity(%q) = %v", p.stronger, b, p.plain, a)
			}
		})
	}
}

func TestEmotionConfig(t *testing.T) {
	g := emotionGraph(t)
	tests := []struct {
		name   string
		cfg    map[string]any
		state  map[string]any
		want   string
		instr  string
		update string
	}{
		{"custom emotion and modulation, text expression",
			map[string]any{
				"text":       "note",
				"field":      "mood",
				"lexicon":    map[string]any{"boredom": []any{"bored", "boring", "无聊"}},
				"modulation": map[string]any{"boredom": "Be lively."},
			},
			map[string]any{"note": "this lecture is so boring"}, "boredom", "Be lively.", "mood"},
		{"custom emotion without a modulation gets a generic one",
			map[string]any{"lexicon": map[string]any{"boredom": []any{"无聊"}}},
			userMessage("好无聊啊"), "boredom", "The user seems to feel boredom: acknowledge it briefly and adapt your tone to it.", "emotional_context"},
		{"an emotion listed with no phrases is removed",
			map[string]any{"lexicon": map[string]any{"gratitude": []any{}}},
			userMessage("thanks a lot"), "neutral", "Respond in a natural, friendly and clear tone.", "emotional_context"},
		{"added phrases: an emoticon and several words",
			map[string]any{"lexicon": map[string]any{"joy": []any{":)", "over the moon"}}},
			userMessage("see you tomorrow :)"), "joy", "", "emotional_context"},
		{"a phrase of several words matches across spaces",
			map[string]any{"lexicon": map[string]any{"joy": []any{"over the moon"}}},
			userMessage("I am over   the moon"), "joy", "", "emotional_context"},
		{"nested target field",
			map[string]any{"field": "emotional_context.user"},
			userMessage("I'm thrilled"), "joy", "", "emotional_context"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := buildNode(t, g, "emotion", tt.cfg)
			up, _, err := nodetest.Run(context.Background(), g, n, "emotion", tt.state)
			if err != nil {
				t.Fatal(err)
			}
			ctx, _ := up[tt.update].(map[string]any)
			if inner, ok := ctx["user"].(map[string]any); ok {
				ctx = inner
			}
			if ctx["current_emotion"] != tt.want {
				t.Fatalf("update = %#v, want %s in %s", up, tt.want, tt.update)
			}
			if tt.instr != "" && ctx["modulation_instruction"] != tt.instr {
				t.Errorf("modulation_instruction = %q, want %q", ctx["modulation_instruction"], tt.instr)
			}
		})
	}
}

func TestEmotionConfigErrors(t *testing.T) {
	g := emotionGraph(t)
	tests := []struct {
		name string
		cfg  map[string]any
		path string
		code string
	}{
		{"undeclared field", map[string]any{"field": "emotion_ctx"}, "field", "unknown-field"},
		{"field of the wrong type", map[string]any{"field": "note"}, "field", "invalid-config"},
		{"text expression of an unknown field", map[string]any{"text": "notes"}, "text", nodetest.CodeExpression},
		{"empty phrase", map[string]any{"lexicon": map[string]any{"joy": []any{" "}}}, "lexicon.joy.0", "invalid-config"},
		{"neutral is not a lexicon emotion", map[string]any{"lexicon": map[string]any{"neutral": []any{"ok"}}}, "lexicon.neutral", "invalid-config"},
		{"unknown key", map[string]any{"fields": "x"}, "", nodetest.CodeSchema},
		{"unknown mode", map[string]any{"mode": "magic"}, "", nodetest.CodeSchema},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, b, err := nodetest.Build(g, "emotion", "emotion", tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if n != nil || !b.Has(tt.path, tt.code) {
				t.Errorf("problems = %v, want %s at %q", b.Problems(), tt.code, tt.path)
			}
		})
	}
}
