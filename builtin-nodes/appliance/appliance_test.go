package appliance

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/tool"
)

func TestBundledCatalog(t *testing.T) {
	c, err := Bundled()
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]int{}
	for _, m := range c.Models {
		types[m.Type]++
	}
	if len(c.Models) < 5 || len(c.Parts) < 15 || types["dishwasher"] == 0 || types["refrigerator"] == 0 || types["washer"] == 0 {
		t.Errorf("catalog has %d models (%v) and %d parts", len(c.Models), types, len(c.Parts))
	}
	for _, p := range c.Parts {
		if p.Price <= 0 || p.Name == "" || len(p.Models) == 0 || len(p.Symptoms) == 0 || p.Install.Difficulty == "" {
			t.Errorf("part %s is incomplete: %+v", p.Number, p)
		}
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		name, json, want string
	}{
		{"model that looks like a part", `{"models":[{"number":"PS1234567"}]}`, "ModelPattern"},
		{"part that looks like a model", `{"models":[],"parts":[{"number":"WDT780SAEM1"}]}`, "PartPattern"},
		{"unknown model in part", `{"models":[],"parts":[{"number":"PS1234567","models":["WDT780SAEM1"],"install":{"steps":["a"]}}]}`, "unknown model"},
		{"unknown symptom", `{"models":[],"parts":[{"number":"PS1234567","symptoms":["smells"]}]}`, "unknown symptom"},
		{"duplicate model", `{"models":[{"number":"WDT780SAEM1"},{"number":"WDT780SAEM1"}]}`, "twice"},
		{"not json", `{`, "catalog"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.json))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func TestCanonicalSymptoms(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{[]string{"leaking"}, "leaking"},
		{[]string{"Not Draining"}, "not_draining"},
		{[]string{"there is water on the floor", "grinding"}, "leaking,noisy"},
		{[]string{"leak", "leaking"}, "leaking"},
		{[]string{"purple"}, ""},
	}
	for _, tt := range tests {
		if got := strings.Join(CanonicalSymptoms(tt.in), ","); got != tt.want {
			t.Errorf("CanonicalSymptoms(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func call(t *testing.T, name string, args map[string]any) tool.Result {
	t.Helper()
	tl, ok := tool.Lookup(name)
	if !ok {
		t.Fatalf("tool %q not registered", name)
	}
	if err := tool.ValidateArgs(tl.Input, args); err != nil {
		t.Fatalf("args %v rejected: %v", args, err)
	}
	res, err := tl.Func(context.Background(), args)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func TestTools(t *testing.T) {
	tests := []struct {
		name    string
		tool    string
		args    map[string]any
		has     []string
		hasNot  []string
		compat  any
		inOrder []string
	}{
		{
			name: "diagnose leaking dishwasher", tool: "diagnose_repair",
			args: map[string]any{"model": "WDT780SAEM1", "symptoms": []any{"leaking"}},
			has:  []string{"Based on your symptoms (leaking) for WDT780SAEM1, likely parts:\n• ", "PS11750057 - Dishwasher Door Gasket ($29.95)"},
			// Refrigerator and washer parts never show up for a dishwasher.
			hasNot: []string{"PS11701542", "PS11753322", "PS3406971"},
		},
		{
			name: "parts fixing more symptoms rank first", tool: "diagnose_repair",
			args:    map[string]any{"model": "wdt780saem1", "symptoms": []any{"leaking", "noisy"}},
			inOrder: []string{"PS11746591", "PS11750057"},
			has:     []string{"PS3406971 - Lower Dishrack Wheel ($33.48) — fixes: noisy"},
		},
		{
			name: "canonical symptoms read as words", tool: "diagnose_repair",
			args:   map[string]any{"model": "WRS325SDHZ", "symptoms": []any{"not_cooling"}},
			has:    []string{"Based on your symptoms (not cooling) for WRS325SDHZ", "— fixes: not cooling"},
			hasNot: []string{"not_cooling"},
		},
		{
			name: "diagnose with free-text symptom", tool: "diagnose_repair",
			args: map[string]any{"model": "WRS325SDHZ", "symptoms": []any{"no ice"}},
			has:  []string{"PS11739035 - Refrigerator Ice Maker Assembly"},
		},
		{
			name: "diagnose unknown model lists close matches", tool: "diagnose_repair",
			args: map[string]any{"model": "WDT780SAEM2", "symptoms": []any{"leaking"}},
			has:  []string{"couldn't find model WDT780SAEM2", "Did you mean: WDT780SAEM1"},
		},
		{
			name: "diagnose symptom no part fixes", tool: "diagnose_repair",
			args: map[string]any{"model": "WTW5000DW", "symptoms": []any{"ice maker"}},
			has:  []string{"None of the parts I have for WTW5000DW"},
		},
		{
			name: "installation steps", tool: "get_installation_instructions",
			args: map[string]any{"part": "PS3406971"},
			has:  []string{"Installation instructions for PS3406971 - Lower Dishrack Wheel ($33.48)", "Difficulty: Really Easy", "Tools: none", "\n1. Pull the lower dishrack", "\n4. Roll the rack"},
		},
		{
			name: "installation warns about an incompatible model", tool: "get_installation_instructions",
			args: map[string]any{"part": "PS3406971", "model": "WRS325SDHZ"},
			has:  []string{"Warning: PS3406971 is not listed as compatible with WRS325SDHZ"}, compat: false,
		},
		{
			name: "installation of unknown part", tool: "get_installation_instructions",
			args: map[string]any{"part": "PS3406972"},
			has:  []string{"couldn't find part PS3406972", "Did you mean: PS3406971"},
		},
		{
			name: "compatible", tool: "check_compatibility",
			args: map[string]any{"part": "PS3406971", "model": "WDT780SAEM1"},
			has:  []string{"Yes — PS3406971 (Lower Dishrack Wheel, $33.48) is compatible with WDT780SAEM1 (Whirlpool dishwasher)."}, compat: true,
		},
		{
			name: "not compatible, with reason and alternatives", tool: "check_compatibility",
			args: map[string]any{"part": "PS11750057", "model": "KDTE334GPS"},
			has: []string{"No — PS11750057 (Dishwasher Door Gasket) is not compatible with KDTE334GPS (KitchenAid dishwasher). It fits: WDT780SAEM1, WDF520PADM7.",
				"Parts for KDTE334GPS that fix the same problems: PS11746591"}, compat: false,
		},
		{
			name: "compatibility with unknown model", tool: "check_compatibility",
			args: map[string]any{"part": "PS3406971", "model": "XYZ"},
			has:  []string{"couldn't find model XYZ"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, tt.tool, tt.args)
			for _, s := range tt.has {
				if !strings.Contains(res.Text, s) {
					t.Errorf("text lacks %q:\n%s", s, res.Text)
				}
			}
			for _, s := range tt.hasNot {
				if strings.Contains(res.Text, s) {
					t.Errorf("text has %q:\n%s", s, res.Text)
				}
			}
			last := -1
			for _, s := range tt.inOrder {
				i := strings.Index(res.Text, s)
				if i < 0 || i < last {
					t.Errorf("%q missing or out of order:\n%s", s, res.Text)
				}
				last = i
			}
			if tt.compat != nil {
				data, _ := res.Data.(map[string]any)
				if data["compatible"] != tt.compat {
					t.Errorf("data compatible = %v, want %v", data["compatible"], tt.compat)
				}
			}
		})
	}
}

func TestLexiconsAreCopies(t *testing.T) {
	l := SymptomLexicon()
	l["leaking"][0] = "changed"
	delete(l, "noisy")
	if again := SymptomLexicon(); again["leaking"][0] == "changed" || again["noisy"] == nil {
		t.Error("SymptomLexicon returns shared state")
	}
}

func TestReadmeListsTheLexicons(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []map[string][]string{SymptomLexicon(), GoalLexicon()} {
		for k, phrases := range l {
			q := make([]string, len(phrases))
			for i, p := range phrases {
				q[i] = strconv.Quote(p)
			}
			line := k + ": [" + strings.Join(q, ", ") + "]"
			if !strings.Contains(string(readme), line) {
				t.Errorf("README.md lacks the line %s", line)
			}
		}
	}
	for _, p := range []string{ModelPattern, PartPattern} {
		if q := strconv.Quote(p); !strings.Contains(string(readme), q) {
			t.Errorf("README.md lacks the pattern %s", q)
		}
	}
}
