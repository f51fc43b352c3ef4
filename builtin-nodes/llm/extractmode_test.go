package llm_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/appliance"
	"github.com/graphctl/graphctl/builtin-nodes/extract"
	"github.com/graphctl/graphctl/builtin-nodes/internal/nodetest"
	"github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/builtin-nodes/llm/llmtest"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
)

func lexiconConfig(l map[string][]string) map[string]any {
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

// slotExtract is the slot-filling graph's extract config in a mode.
func slotExtract(mode string) map[string]any {
	return map[string]any{"mode": mode, "fields": map[string]any{
		"model":    map[string]any{"pattern": appliance.ModelPattern, "normalize": "upper"},
		"part":     map[string]any{"pattern": appliance.PartPattern, "normalize": "upper"},
		"symptoms": map[string]any{"lexicon": lexiconConfig(appliance.SymptomLexicon())},
		"goal":     map[string]any{"lexicon": lexiconConfig(appliance.GoalLexicon())},
	}}
}

func slotGraph(t testing.TB, defaultLLM string) *graph.Graph {
	t.Helper()
	g, err := nodetest.Graph(nil, "messages: messages", "model: string", "part: string", "symptoms: list<string>", "goal: string")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range g.State {
		switch f.Name {
		case "model":
			f.Description = "appliance model number"
		case "goal":
			f.Enum = []any{"install_instruction", "check_compatibility", "diagnose_repair"}
		}
	}
	if g.Defaults.Raw == nil {
		g.Defaults.Raw = map[string]any{}
	}
	g.Defaults.Raw[llm.DefaultsKey] = defaultLLM
	return g
}

func buildExtract(t testing.TB, g *graph.Graph, cfg map[string]any) node.Node {
	t.Helper()
	n, b, err := nodetest.Build(g, "extract", "extract", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if n == nil {
		t.Fatalf("extract node does not build: %v", b.Problems())
	}
	return n
}

// runExtract runs an extract node; callRetry, when given, is its call retry policy.
func runExtract(g *graph.Graph, n node.Node, s *node.Services, text string, callRetry ...*graph.RetryPolicy) (node.Update, *events, error) {
	rec := &events{}
	state := map[string]any{"messages": []any{map[string]any{"role": "user", "content": text, "id": "m1"}}}
	in := &node.Input{Node: "extract", ThreadID: "th", RunID: "run1", Step: 1, Attempt: 1,
		State: state, Scope: nodetest.Scope(g, state), Emit: rec.sink, Services: s}
	if len(callRetry) > 0 {
		in.CallRetry = callRetry[0]
	}
	up, err := n.Run(context.Background(), in)
	return up, rec, err
}

func TestExtractLLMMode(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		reply map[string]any
		want  node.Update
		// dropped lists the fields whose proposed values are not written.
		dropped []string
	}{
		{
			name:  "a paraphrase becomes a canonical symptom",
			text:  "the thing that holds the plates fell off its track",
			reply: map[string]any{"model": nil, "part": nil, "symptoms": []any{"rack_problem"}, "goal": nil},
			want:  node.Update{"symptoms": []any{"rack_problem"}},
		},
		{
			name:  "a model number is normalized",
			text:  "my Whirlpool dishwasher, model number is wdt780saem1",
			reply: map[string]any{"model": "wdt780saem1", "part": nil, "symptoms": []any{}, "goal": nil},
			want:  node.Update{"model": "WDT780SAEM1"},
		},
		{
			name: "canonical values in another spelling, duplicates once, a goal",
			text: "it won't drain and leaks, please repair it",
			reply: map[string]any{"symptoms": []any{"Not draining", "leaking", "not-draining"}, "goal": "Diagnose Repair",
				"model": "", "part": nil},
			want: node.Update{"symptoms": []any{"not_draining", "leaking"}, "goal": "diagnose_repair"},
		},
		{
			name: "invalid values are dropped, valid ones kept",
			text: "I need PS3406971 for my dishwasher, it smells",
			reply: map[string]any{"model": "PS3406971", "part": "ps3406971", "symptoms": []any{"leaking", "bad smell"},
				"goal": "buy_new", "colour": "white"},
			want:    node.Update{"part": "PS3406971", "symptoms": []any{"leaking"}},
			dropped: []string{"model", "symptoms", "goal", "colour"},
		},
		{
			name:    "a model number with extra words does not match the pattern in full",
			text:    "model WDT780SAEM1",
			reply:   map[string]any{"model": "model WDT780SAEM1"},
			want:    node.Update{},
			dropped: []string{"model"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.WithReplies(llmtest.JSON(tt.reply)))
			g := slotGraph(t, "openai:gpt-4o-mini")
			n := buildExtract(t, g, slotExtract("llm"))
			up, rec, err := runExtract(g, n, services(srv), tt.text)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if !reflect.DeepEqual(up, tt.want) {
				t.Errorf("update = %#v, want %#v", up, tt.want)
			}
			evs := rec.of(extract.EventType)
			if len(evs) != 1 {
				t.Fatalf("extract events = %v, want one", rec.all)
			}
			if found := evs[0].Payload["found"].(map[string]any); !reflect.DeepEqual(node.Update(found), tt.want) {
				t.Errorf("event found = %v, want %v", found, tt.want)
			}
			if evs[0].Payload["mode"] != "llm" {
				t.Errorf("event mode = %v, want llm", evs[0].Payload["mode"])
			}
			var droppedFields []string
			if list, ok := evs[0].Payload["dropped"].([]any); ok {
				for _, d := range list {
					droppedFields = append(droppedFields, d.(map[string]any)["field"].(string))
				}
			}
			if !sameSet(droppedFields, tt.dropped) {
				t.Errorf("dropped fields = %v, want %v", droppedFields, tt.dropped)
			}
			if len(rec.of(node.UsageEvent)) != 1 {
				t.Errorf("usage events = %d, want 1", len(rec.of(node.UsageEvent)))
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("requests = %d, want 1", len(reqs))
			}
			req := reqs[0]
			if !req.JSONMode || req.Model != "gpt-4o-mini" {
				t.Errorf("request JSON mode %v model %q, want JSON mode and gpt-4o-mini", req.JSONMode, req.Model)
			}
			if len(req.Messages) != 2 || req.Messages[0].Role != "system" || req.Messages[1].Role != "user" || req.Messages[1].Content != tt.text {
				t.Fatalf("messages = %+v, want the instructions and the user's text", req.Messages)
			}
			sys := req.Messages[0].Content
			for _, want := range []string{`"goal", "model", "part", "symptoms"`, `"rack_problem"`, `"diagnose_repair"`,
				"symptoms (an array of strings)", "model (a string or null): appliance model number", appliance.ModelPattern, "upper case"} {
				if !strings.Contains(sys, want) {
					t.Errorf("instructions lack %q:\n%s", want, sys)
				}
			}
		})
	}
}

func sameSet(a, b []string) bool {
	count := map[string]int{}
	for _, s := range a {
		count[s]++
	}
	for _, s := range b {
		count[s]--
	}
	for _, c := range count {
		if c != 0 {
			return false
		}
	}
	return true
}

func TestExtractLLMRepair(t *testing.T) {
	good := llmtest.JSON(map[string]any{"model": "WDT780SAEM1", "symptoms": []any{"leaking"}})
	tests := []struct {
		name    string
		mode    string
		replies []llmtest.Reply
		want    node.Update
		// code is the node error's code, "" for success.
		code     string
		fallback bool
		requests int
	}{
		{name: "prose, then JSON", mode: "llm", replies: []llmtest.Reply{llmtest.Text("The model is WDT780SAEM1."), good},
			want: node.Update{"model": "WDT780SAEM1", "symptoms": []any{"leaking"}}, requests: 2},
		{name: "a list field given as a string, then fixed", mode: "llm",
			replies: []llmtest.Reply{llmtest.JSON(map[string]any{"symptoms": "leaking"}), good},
			want:    node.Update{"model": "WDT780SAEM1", "symptoms": []any{"leaking"}}, requests: 2},
		{name: "invalid twice in llm mode is an error", mode: "llm",
			replies: []llmtest.Reply{llmtest.Text("no"), llmtest.JSON([]any{"WDT780SAEM1"})}, code: "invalid_output", requests: 2},
		{name: "invalid twice in auto mode falls back to the rules", mode: "auto",
			replies: []llmtest.Reply{llmtest.Text("no"), llmtest.JSON(map[string]any{"model": 7})},
			want:    node.Update{"model": "KDTE334GPS", "symptoms": []any{"noisy"}}, fallback: true, requests: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.WithReplies(tt.replies...))
			g := slotGraph(t, "openai:gpt-4o-mini")
			n := buildExtract(t, g, slotExtract(tt.mode))
			text := "my KDTE334GPS is loud"
			if tt.want["model"] == "WDT780SAEM1" {
				text = "my WDT780SAEM1 leaks"
			}
			up, rec, err := runExtract(g, n, services(srv), text)
			if tt.code != "" {
				if err == nil || node.CodeOf(err) != tt.code || !strings.Contains(err.Error(), "after one repair attempt") {
					t.Fatalf("err = %v, want code %s after one repair", err, tt.code)
				}
			} else if err != nil {
				t.Fatalf("run: %v", err)
			}
			if tt.code == "" && !reflect.DeepEqual(up, tt.want) {
				t.Errorf("update = %#v, want %#v", up, tt.want)
			}
			if got := len(rec.of(extract.FallbackEventType)); got != map[bool]int{true: 1}[tt.fallback] {
				t.Errorf("fallback events = %d, want fallback %v", got, tt.fallback)
			}
			reqs := srv.Requests()
			if len(reqs) != tt.requests {
				t.Fatalf("requests = %d, want %d", len(reqs), tt.requests)
			}
			if tt.requests == 2 {
				last := reqs[1].Messages[len(reqs[1].Messages)-1]
				if last.Role != "user" || !strings.Contains(last.Content, "could not be used") {
					t.Errorf("repair message = %+v, want the problem shown to the model", last)
				}
				if prev := reqs[1].Messages[len(reqs[1].Messages)-2]; prev.Role != "assistant" {
					t.Errorf("repair request does not carry the first reply: %+v", prev)
				}
			}
		})
	}
}

func TestExtractAutoFallsBackOnServerError(t *testing.T) {
	tests := []struct {
		name   string
		status int
		code   string
	}{
		{"server error", http.StatusInternalServerError, "llm_error"},
		{"rate limited", http.StatusTooManyRequests, "rate_limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := "Is PS3406971 compatible with WDT780SAEM1?"
			want := node.Update{"part": "PS3406971", "model": "WDT780SAEM1", "goal": "check_compatibility"}

			srv := llmtest.NewServer(t, llmtest.WithFailures(1, tt.status))
			g := slotGraph(t, "openai:gpt-4o-mini")
			n := buildExtract(t, g, slotExtract("auto"))
			up, rec, err := runExtract(g, n, services(srv), text, noCallRetry)
			if err != nil {
				t.Fatalf("auto mode must fall back, got %v", err)
			}
			if !reflect.DeepEqual(up, want) {
				t.Errorf("update = %#v, want the rules' %#v", up, want)
			}
			fb := rec.of(extract.FallbackEventType)
			if len(fb) != 1 || fb[0].Payload["code"] != tt.code || !strings.Contains(fb[0].Payload["error"].(string), "extract node \"extract\"") {
				t.Fatalf("fallback events = %v, want one with code %s naming the node", fb, tt.code)
			}
			if ex := rec.of(extract.EventType); len(ex) != 1 || len(ex[0].Payload["found"].(map[string]any)) != 3 {
				t.Errorf("extract events = %v, want the rules' one", ex)
			}
			if reqs := srv.Requests(); len(reqs) != 1 || reqs[0].Status != tt.status {
				t.Errorf("requests = %+v, want the one failed call", reqs)
			}

			// The same failure in llm mode is the node's error, retryable.
			srv2 := llmtest.NewServer(t, llmtest.WithFailures(1, tt.status))
			n2 := buildExtract(t, g, slotExtract("llm"))
			_, rec2, err := runExtract(g, n2, services(srv2), text, noCallRetry)
			var ne *node.Error
			if !errors.As(err, &ne) || ne.Code != tt.code || !ne.Retryable {
				t.Fatalf("llm mode err = %v, want retryable %s", err, tt.code)
			}
			if len(rec2.of(extract.FallbackEventType)) != 0 || len(rec2.of(extract.EventType)) != 0 {
				t.Errorf("llm mode emitted %v, want no extract or fallback event on failure", rec2.all)
			}
		})
	}
}

func TestExtractWithoutModel(t *testing.T) {
	srv := llmtest.NewServer(t)
	g := slotGraph(t, "")
	s := services(srv)
	ctx := context.Background()

	auto := buildExtract(t, g, slotExtract("auto"))
	if err := auto.(node.Preparer).Prepare(ctx, s); err != nil {
		t.Errorf("auto mode without a model: Prepare = %v, want nil", err)
	}
	up, rec, err := runExtract(g, auto, s, "My dishwasher WDT780SAEM1 is leaking")
	if err != nil {
		t.Fatal(err)
	}
	if want := (node.Update{"model": "WDT780SAEM1", "symptoms": []any{"leaking"}}); !reflect.DeepEqual(up, want) {
		t.Errorf("auto without a model: update = %#v, want the rules' %#v", up, want)
	}
	if len(rec.of(extract.FallbackEventType)) != 0 || len(srv.Requests()) != 0 {
		t.Errorf("auto without a model called the server (%d) or reported a fallback (%v)", len(srv.Requests()), rec.all)
	}

	strict := buildExtract(t, g, slotExtract("llm"))
	err = strict.(node.Preparer).Prepare(ctx, s)
	if !errors.Is(err, llm.ErrNoModel) || !strings.Contains(err.Error(), "--llm") || !strings.Contains(err.Error(), `mode "llm"`) {
		t.Errorf("llm mode without a model: Prepare = %v, want ErrNoModel saying how to configure one", err)
	}
	if _, _, err := runExtract(g, strict, s, "hello"); node.CodeOf(err) != "no_model" {
		t.Errorf("llm mode without a model: Run = %v, want no_model", err)
	}

	// A configured model whose client cannot be built is reported even in auto mode.
	noKey := &node.Services{Extra: llm.OverrideKey.Bind(llm.ServiceKey.Bind(node.Extra{}, llm.NewModels(func(string) string { return "" })), "openai:gpt-4o-mini")}
	if err := auto.(node.Preparer).Prepare(ctx, noKey); err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("auto mode with an unusable model: Prepare = %v, want the missing key named", err)
	}
}

func TestExtractModelResolution(t *testing.T) {
	tests := []struct {
		name      string
		nodeModel string
		graph     string
		override  string
		want      string
	}{
		{name: "graph default", graph: "openai:graph-model", want: "graph-model"},
		{name: "node over graph", nodeModel: "openai:node-model", graph: "openai:graph-model", want: "node-model"},
		{name: "override over all", nodeModel: "openai:node-model", graph: "openai:graph-model", override: "openai:flag-model", want: "flag-model"},
		{name: "override alone switches auto mode on", override: "openai:flag-model", want: "flag-model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.WithReplies(llmtest.JSON(map[string]any{"goal": "install_instruction"})))
			g := slotGraph(t, tt.graph)
			cfg := slotExtract("auto")
			if tt.nodeModel != "" {
				cfg["model"] = tt.nodeModel
			}
			n := buildExtract(t, g, cfg)
			s := services(srv)
			if tt.override != "" {
				s.Extra = llm.OverrideKey.Bind(s.Extra, tt.override)
			}
			up, _, err := runExtract(g, n, s, "how do I put the new one in")
			if err != nil {
				t.Fatal(err)
			}
			if up["goal"] != "install_instruction" {
				t.Errorf("update = %v, want the model's goal", up)
			}
			if reqs := srv.Requests(); len(reqs) != 1 || reqs[0].Model != tt.want {
				t.Errorf("requests = %+v, want one to %s", reqs, tt.want)
			}
		})
	}
}

// TestExtractScriptedRepliesForTheNode checks that the model call is tagged
// with the node's name: a reply reserved for another node is skipped.
func TestExtractScriptedRepliesForTheNode(t *testing.T) {
	g := slotGraph(t, "")
	n := buildExtract(t, g, slotExtract("auto"))
	s := &node.Services{Extra: llm.ScriptKey.Bind(llm.ServiceKey.Bind(node.Extra{}, llm.NewModels(func(string) string { return "" })), []any{
		map[string]any{"node": "reasoning", "json": map[string]any{"model": "KDTE334GPS"}},
		map[string]any{"node": "extract", "json": map[string]any{"model": "WDT780SAEM1"}},
	})}
	up, _, err := runExtract(g, n, s, "it is the one in my kitchen")
	if err != nil {
		t.Fatal(err)
	}
	if up["model"] != "WDT780SAEM1" {
		t.Errorf("update = %v, want the reply reserved for extract", up)
	}
}

func TestExtractModeConfig(t *testing.T) {
	free := map[string]any{"fields": map[string]any{"model": map[string]any{"description": "the model number"}}}
	tests := []struct {
		name   string
		config map[string]any
		// path and code of the expected problem; "" builds.
		path, code string
	}{
		{name: "llm mode takes a field with only a description", config: withMode(free, "llm")},
		{name: "auto mode needs a pattern or lexicon to fall back on", config: withMode(free, "auto"), path: "fields.model", code: "invalid-config"},
		{name: "bad model spec", config: map[string]any{"mode": "llm", "model": "gpt-4o", "fields": map[string]any{"model": map[string]any{"pattern": "x"}}},
			path: "model", code: "invalid-config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := slotGraph(t, "")
			n, b, err := nodetest.Build(g, "extract", "x", tt.config)
			if err != nil {
				t.Fatal(err)
			}
			if tt.code == "" {
				if n == nil {
					t.Fatalf("does not build: %v", b.Problems())
				}
				return
			}
			if n != nil || !b.Has(tt.path, tt.code) {
				t.Errorf("want %s at %q and no node, got node=%v problems=%v", tt.code, tt.path, n != nil, b.Problems())
			}
		})
	}
}

func withMode(cfg map[string]any, mode string) map[string]any {
	out := map[string]any{"mode": mode}
	for k, v := range cfg {
		out[k] = v
	}
	return out
}

// TestExtractFreeTextField checks a field with neither pattern nor lexicon in
// llm mode: any non-empty text is written, normalized.
func TestExtractFreeTextField(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.WithReplies(llmtest.JSON(map[string]any{"model": "  Kenmore Elite  "})))
	g := slotGraph(t, "openai:m")
	n := buildExtract(t, g, map[string]any{"mode": "llm", "fields": map[string]any{
		"model": map[string]any{"description": "the brand and line", "normalize": "trim"}}})
	up, _, err := runExtract(g, n, services(srv), "a Kenmore Elite")
	if err != nil {
		t.Fatal(err)
	}
	if up["model"] != "Kenmore Elite" {
		t.Errorf("update = %v, want the trimmed text", up)
	}
	if sys := srv.Requests()[0].Messages[0].Content; !strings.Contains(sys, "the brand and line") {
		t.Errorf("instructions lack the field's description:\n%s", sys)
	}
}

// BenchmarkExtractLLMScripted measures the llm mode's own cost per run
// (prompt, JSON parsing, validation against the rules) with a scripted model
// of one reply per run.
func BenchmarkExtractLLMScripted(b *testing.B) {
	g := slotGraph(b, "")
	n := buildExtract(b, g, slotExtract("auto"))
	reply := map[string]any{"json": map[string]any{"model": "wdt780saem1", "part": "PS3406971",
		"symptoms": []any{"leaking", "noisy", "smells"}, "goal": "check_compatibility"}}
	s := &node.Services{Extra: llm.ServiceKey.Bind(node.Extra{}, llm.NewModels(func(string) string { return "" }))}
	state := map[string]any{"messages": []any{map[string]any{"role": "user", "content": "Will PS3406971 fit my wdt780saem1? It leaks and is loud."}}}
	in := &node.Input{Node: "extract", State: state, Scope: nodetest.Scope(g, state), Services: s}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		s.Extra = llm.ScriptKey.Bind(s.Extra, []any{reply})
		up, err := n.Run(ctx, in)
		if err != nil || up["model"] != "WDT780SAEM1" {
			b.Fatalf("run: %v %v", up, err)
		}
	}
}
