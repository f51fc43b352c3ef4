package extract_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/appliance"
	"github.com/graphctl/graphctl/builtin-nodes/extract"
	"github.com/graphctl/graphctl/builtin-nodes/internal/nodetest"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
)

func lexicon(l map[string][]string) map[string]any {
	out := map[string]any{}
	for k, phrases := range l {
		ps := make([]any, len(phrases))
		for i, p := range phrases {
			ps[i] = p
		}
		out[k] = ps
	}
	return out
}

// slotConfig is the extract config a slot-filling graph declares.
func slotConfig() map[string]any {
	return map[string]any{"fields": map[string]any{
		"model":    map[string]any{"pattern": appliance.ModelPattern, "normalize": "upper"},
		"part":     map[string]any{"pattern": appliance.PartPattern, "normalize": "upper"},
		"symptoms": map[string]any{"lexicon": lexicon(appliance.SymptomLexicon())},
		"goal":     map[string]any{"lexicon": lexicon(appliance.GoalLexicon())},
	}}
}

func slotGraph(t *testing.T) *graph.Graph {
	t.Helper()
	g, err := nodetest.Graph(nil, "messages: messages", "model: string", "part: string",
		"symptoms: list<string>", "goal: string", "note: string", "count: int")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func userSays(history ...string) map[string]any {
	var msgs []any
	for i, h := range history {
		msgs = append(msgs, map[string]any{"role": "user", "content": h})
		if i < len(history)-1 {
			msgs = append(msgs, map[string]any{"role": "assistant", "content": "What would you like to do? Fix it, install a part, or check compatibility?"})
		}
	}
	return map[string]any{"messages": msgs}
}

func TestSlotFillingScenarios(t *testing.T) {
	g := slotGraph(t)
	n, b, err := nodetest.Build(g, "extract", "extract", slotConfig())
	if err != nil || n == nil {
		t.Fatalf("build: %v %v", err, b.Problems())
	}
	tests := []struct {
		name    string
		history []string
		want    node.Update
	}{
		{"model and symptom, no goal", []string{"My dishwasher WDT780SAEM1 is leaking"},
			node.Update{"model": "WDT780SAEM1", "symptoms": []any{"leaking"}}},
		{"install a part", []string{"Install PS3406971"},
			node.Update{"part": "PS3406971", "goal": "install_instruction"}},
		{"symptom only", []string{"Dishwasher making noise"},
			node.Update{"symptoms": []any{"noisy"}}},
		{"goal on the next turn reads only the last user message", []string{"Dishwasher making noise", "Fix it"},
			node.Update{"goal": "diagnose_repair"}},
		{"part and model, compatibility", []string{"Is PS3406971 compatible with WDT780SAEM1?"},
			node.Update{"part": "PS3406971", "model": "WDT780SAEM1", "goal": "check_compatibility"}},
		{"lower case numbers are normalized", []string{"will ps11750057 fit my wdt780saem1"},
			node.Update{"part": "PS11750057", "model": "WDT780SAEM1", "goal": "check_compatibility"}},
		{"several symptoms in order, multi-word phrase, curly apostrophe", []string{"It won\u2019t drain, there's water on the floor and it's loud"},
			node.Update{"symptoms": []any{"not_draining", "leaking", "noisy"}}},
		{"word boundaries: 'fitted' and 'prefix' are no goal", []string{"The prefix of my fitted kitchen"},
			node.Update{}},
		{"a question about fixing is a repair goal", []string{"How do I fix my KDTE334GPS? The door won't latch"},
			node.Update{"goal": "diagnose_repair", "model": "KDTE334GPS", "symptoms": []any{"door_wont_close"}}},
		{"nothing to find", []string{"hello"}, node.Update{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up, events, err := nodetest.Run(context.Background(), g, n, "extract", userSays(tt.history...))
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if !reflect.DeepEqual(up, tt.want) {
				t.Errorf("update = %#v, want %#v", up, tt.want)
			}
			if len(events) != 1 || events[0].Type != "extract" {
				t.Fatalf("events = %#v, want one extract event", events)
			}
			if found := events[0].Payload["found"].(map[string]any); len(found) != len(tt.want) {
				t.Errorf("event found = %v, want the %d written fields", found, len(tt.want))
			}
		})
	}
}

// TestCorrectionTakesTheNewValue: a message naming the remembered value and
// another one yields the other one, wherever it stands.
func TestCorrectionTakesTheNewValue(t *testing.T) {
	g := slotGraph(t)
	n, b, err := nodetest.Build(g, "extract", "extract", slotConfig())
	if err != nil || n == nil {
		t.Fatalf("build: %v %v", err, b.Problems())
	}
	tests := []struct {
		name, current, text, want string
	}{
		{"new value first", "WDT780SAEM1", "sorry, it's WDT750SAHZ0, not WDT780SAEM1", "WDT750SAHZ0"},
		{"new value last", "WDT780SAEM1", "not WDT780SAEM1 but WDT750SAHZ0, my mistake", "WDT750SAHZ0"},
		{"only the new value", "WDT780SAEM1", "Sorry, it's WDT750SAHZ0", "WDT750SAHZ0"},
		{"only the current value", "WDT780SAEM1", "yes, the WDT780SAEM1", "WDT780SAEM1"},
		{"nothing remembered: the first", "", "WDT780SAEM1 or maybe WDT750SAHZ0", "WDT780SAEM1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := userSays(tt.text)
			state["model"] = tt.current
			up, _, err := nodetest.Run(context.Background(), g, n, "extract", state)
			if err != nil {
				t.Fatal(err)
			}
			if up["model"] != tt.want {
				t.Errorf("model = %v, want %s", up["model"], tt.want)
			}
		})
	}
}

func TestPatternsNeverConfuseModelAndPart(t *testing.T) {
	g := slotGraph(t)
	n, b, err := nodetest.Build(g, "extract", "extract", slotConfig())
	if err != nil || n == nil {
		t.Fatalf("build: %v %v", err, b.Problems())
	}
	c, err := appliance.Bundled()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range c.Parts {
		up, _, err := nodetest.Run(context.Background(), g, n, "extract", userSays("I need "+p.Number))
		if err != nil {
			t.Fatal(err)
		}
		if up["part"] != p.Number || up["model"] != nil {
			t.Errorf("%q: got part %v model %v", p.Number, up["part"], up["model"])
		}
	}
	for _, m := range c.Models {
		up, _, err := nodetest.Run(context.Background(), g, n, "extract", userSays("My model is "+m.Number))
		if err != nil {
			t.Fatal(err)
		}
		if up["model"] != m.Number || up["part"] != nil {
			t.Errorf("%q: got model %v part %v", m.Number, up["model"], up["part"])
		}
	}
}

func TestRuleOptions(t *testing.T) {
	g := slotGraph(t)
	tests := []struct {
		name   string
		config map[string]any
		state  map[string]any
		want   node.Update
	}{
		{
			name: "group, exclude and list of distinct matches",
			config: map[string]any{"from": "note", "fields": map[string]any{
				"symptoms": map[string]any{"pattern": `#(\w+)`, "group": 1, "exclude": []any{`(?i)#ignore`}, "normalize": "lower"},
			}},
			state: map[string]any{"note": "#Leak then #ignore_me and #NOISE, #leak again"},
			want:  node.Update{"symptoms": []any{"leak", "noise"}},
		},
		{
			name: "scalar takes the first match; from expression",
			config: map[string]any{"from": "note + ' ' + part", "fields": map[string]any{
				"model": map[string]any{"pattern": `\b\d{3}\b`},
			}},
			state: map[string]any{"note": "codes 123 and 456", "part": "789"},
			want:  node.Update{"model": "123"},
		},
		{
			name: "longer lexicon phrase wins at the same place",
			config: map[string]any{"from": "note", "fields": map[string]any{
				"goal": map[string]any{"lexicon": map[string]any{"works": []any{"working"}, "broken": []any{"not working"}}},
			}},
			state: map[string]any{"note": "the ice maker is not working"},
			want:  node.Update{"goal": "broken"},
		},
		{
			name: "pattern and lexicon together",
			config: map[string]any{"from": "note", "fields": map[string]any{
				"symptoms": map[string]any{"pattern": `E\d\d`, "lexicon": map[string]any{"leaking": []any{"leak"}}},
			}},
			state: map[string]any{"note": "a leak and error E24"},
			want:  node.Update{"symptoms": []any{"leaking", "E24"}},
		},
		{
			name: "no user message yet",
			config: map[string]any{"fields": map[string]any{
				"model": map[string]any{"pattern": appliance.ModelPattern},
			}},
			state: map[string]any{"messages": []any{map[string]any{"role": "assistant", "content": "Model WDT780SAEM1?"}}},
			want:  node.Update{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, b, err := nodetest.Build(g, "extract", "x", tt.config)
			if err != nil || n == nil {
				t.Fatalf("build: %v %v", err, b.Problems())
			}
			up, _, err := nodetest.Run(context.Background(), g, n, "x", tt.state)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if !reflect.DeepEqual(up, tt.want) {
				t.Errorf("update = %#v, want %#v", up, tt.want)
			}
		})
	}
}

func TestExtractConfigErrors(t *testing.T) {
	g := slotGraph(t)
	pat := map[string]any{"pattern": "x"}
	tests := []struct {
		name   string
		config map[string]any
		path   string
		code   string
	}{
		{"llm mode not in this build", map[string]any{"mode": "llm", "fields": map[string]any{"model": pat}}, "mode", "unsupported"},
		{"undeclared field", map[string]any{"fields": map[string]any{"modle": pat}}, "fields.modle", "unknown-field"},
		{"bad regexp", map[string]any{"fields": map[string]any{"model": map[string]any{"pattern": "PS(\\d+"}}}, "fields.model.pattern", "invalid-config"},
		{"group beyond pattern", map[string]any{"fields": map[string]any{"model": map[string]any{"pattern": "(a)", "group": 2}}}, "fields.model.group", "invalid-config"},
		{"bad exclude", map[string]any{"fields": map[string]any{"model": map[string]any{"pattern": "a", "exclude": []any{"ok", "(("}}}}, "fields.model.exclude.1", "invalid-config"},
		{"neither pattern nor lexicon", map[string]any{"fields": map[string]any{"model": map[string]any{"normalize": "upper"}}}, "fields.model", "invalid-config"},
		{"int field", map[string]any{"fields": map[string]any{"count": pat}}, "fields.count", "invalid-config"},
		{"no fields", map[string]any{"fields": map[string]any{}}, "fields", "invalid-config"},
		{"from must be a string", map[string]any{"from": "count", "fields": map[string]any{"model": pat}}, "from", nodetest.CodeExpression},
		{"messages field of the wrong type", map[string]any{"messages_field": "note", "fields": map[string]any{"model": pat}}, "messages_field", "invalid-config"},
		{"unknown normalize", map[string]any{"fields": map[string]any{"model": map[string]any{"pattern": "a", "normalize": "title"}}}, "", nodetest.CodeSchema},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, b, err := nodetest.Build(g, "extract", "x", tt.config)
			if err != nil {
				t.Fatal(err)
			}
			if n != nil || !b.Has(tt.path, tt.code) {
				t.Errorf("want %s at %q and no node, got node=%v problems=%v", tt.code, tt.path, n != nil, b.Problems())
			}
		})
	}
}

func BenchmarkExtractSlotFilling(b *testing.B) {
	g, err := nodetest.Graph(nil, "messages: messages", "model: string", "part: string", "symptoms: list<string>", "goal: string")
	if err != nil {
		b.Fatal(err)
	}
	n, bld, err := nodetest.Build(g, "extract", "extract", slotConfig())
	if err != nil || n == nil {
		b.Fatalf("build: %v %v", err, bld.Problems())
	}
	scope := nodetest.Scope(g, userSays("Is PS3406971 compatible with WDT780SAEM1? It is leaking and loud."))
	in := &node.Input{Node: "extract", Scope: scope, State: scope["state"].(map[string]any)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := n.Run(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAutoModeWithoutModelSupport checks that auto mode is rules mode in a
// build without the llm package (this test binary does not link it).
func TestAutoModeWithoutModelSupport(t *testing.T) {
	g := slotGraph(t)
	cfg := slotConfig()
	cfg["mode"] = "auto"
	n, b, err := nodetest.Build(g, "extract", "extract", cfg)
	if err != nil || n == nil {
		t.Fatalf("build: %v %v", err, b.Problems())
	}
	up, events, err := nodetest.Run(context.Background(), g, n, "extract", userSays("Install PS3406971"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (node.Update{"part": "PS3406971", "goal": "install_instruction"}); !reflect.DeepEqual(up, want) {
		t.Errorf("update = %#v, want %#v", up, want)
	}
	if len(events) != 1 || events[0].Type != extract.EventType {
		t.Errorf("events = %v, want one extract event", events)
	}
}

func TestAccept(t *testing.T) {
	g := slotGraph(t)
	g.Field("goal").Enum = []any{"install_instruction", "check_compatibility", "diagnose_repair"}
	cfg := slotConfig()
	fields := cfg["fields"].(map[string]any)
	fields["note"] = map[string]any{"pattern": `(?i)code\s+(E\d\d)`, "group": 1, "exclude": []any{`E00`}, "normalize": "upper"}
	fields["goal"].(map[string]any)["lexicon"].(map[string]any)["browse"] = []any{"look around"}
	b := nodetest.NewBuilder(g, "x", cfg)
	x := extract.Compile(b)
	if x == nil {
		t.Fatalf("compile: %v", b.Problems())
	}
	tests := []struct {
		field, value string
		want         string // "" when refused
		why          string // part of the refusal
	}{
		{"model", "wdt780saem1", "WDT780SAEM1", ""},
		{"model", " WDT780SAEM1 ", "WDT780SAEM1", ""},
		{"model", "PS3406971", "", "not a value matching"},
		{"model", "model WDT780SAEM1", "", "not a value matching"},
		{"part", "ps3406971", "PS3406971", ""},
		{"part", "WDT780SAEM1", "", "not a value matching"},
		{"symptoms", "leaking", "leaking", ""},
		{"symptoms", "Not Draining", "not_draining", ""},
		{"symptoms", "door-wont-close", "door_wont_close", ""},
		{"symptoms", "leak", "", "not one of"},
		{"symptoms", "smells bad", "", "not one of"},
		{"goal", "install_instruction", "install_instruction", ""},
		{"goal", "browse", "", "enum"},
		{"note", "code e24", "E24", ""},
		{"note", "code E00", "", "not a value matching"},
		{"note", "", "", "empty"},
		{"colour", "white", "", "not a configured field"},
	}
	for _, tt := range tests {
		t.Run(tt.field+"="+tt.value, func(t *testing.T) {
			got, err := x.Accept(tt.field, tt.value)
			if tt.want != "" {
				if err != nil || got != tt.want {
					t.Errorf("Accept = %q, %v; want %q", got, err, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.why) {
				t.Errorf("Accept = %q, %v; want a refusal saying %q", got, err, tt.why)
			}
		})
	}
}

func TestFields(t *testing.T) {
	g := slotGraph(t)
	g.Field("model").Description = "appliance model number"
	cfg := slotConfig()
	cfg["fields"].(map[string]any)["part"].(map[string]any)["description"] = "the PS number"
	b := nodetest.NewBuilder(g, "x", cfg)
	x := extract.Compile(b)
	if x == nil {
		t.Fatalf("compile: %v", b.Problems())
	}
	var names []string
	byName := map[string]extract.Field{}
	for _, f := range x.Fields() {
		names = append(names, f.Name)
		byName[f.Name] = f
	}
	if want := []string{"goal", "model", "part", "symptoms"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("fields = %v, want %v", names, want)
	}
	if f := byName["model"]; f.Pattern != appliance.ModelPattern || f.Description != "appliance model number" || f.List || f.Normalize != "upper" {
		t.Errorf("model = %+v", f)
	}
	if f := byName["part"]; f.Description != "the PS number" {
		t.Errorf("part description = %q, want the config's", f.Description)
	}
	if f := byName["symptoms"]; !f.List || len(f.Values) != len(appliance.SymptomLexicon()) || f.Pattern != "" {
		t.Errorf("symptoms = %+v", f)
	}
	if x.Mode() != extract.ModeRules || x.Model() != "" {
		t.Errorf("mode %q model %q, want rules and none", x.Mode(), x.Model())
	}
}

func TestLastUserMessage(t *testing.T) {
	tests := []struct {
		name     string
		messages any
		want     string
	}{
		{"none", nil, ""},
		{"string content", []any{
			map[string]any{"role": "user", "content": "first"},
			map[string]any{"role": "assistant", "content": "reply"},
			map[string]any{"role": "user", "content": "second"},
			map[string]any{"role": "assistant", "content": "reply"},
		}, "second"},
		{"typed slice", []map[string]any{{"role": "user", "content": "hi"}}, "hi"},
		{"content parts", []any{map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "my model is WDT780SAEM1"},
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": "https://example.com/a.png"}},
			map[string]any{"type": "text", "text": "it leaks"},
		}}}, "my model is WDT780SAEM1\nit leaks"},
		{"no user message", []any{map[string]any{"role": "assistant", "content": "hello"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := extract.LastUserMessage(tt.messages); got != tt.want {
				t.Errorf("LastUserMessage = %q, want %q", got, tt.want)
			}
		})
	}
}
