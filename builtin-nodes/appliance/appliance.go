// Package appliance bundles a catalog of appliance models and replacement
// parts (dishwashers, refrigerators, washers; PartSelect-style part numbers)
// and registers three builtin tools over it:
//
//   - diagnose_repair {model, symptoms[]}: the model's parts ranked by how many
//     of the symptoms they fix.
//   - get_installation_instructions {part, model?}: difficulty, time, tools
//     and numbered steps.
//   - check_compatibility {part, model}: a clear yes or no with the reason.
//
// An unknown model or part is not an error: the result says so and lists the
// closest catalog entries.
//
// The package also exports what a slot-filling graph declares in its extract
// node: ModelPattern, PartPattern, SymptomLexicon and GoalLexicon. Copy them
// into a graph file like this (see README.md for the full lexicons):
//
//	fields: {
//		model: {pattern: "(?i)\\b[A-Z]{3,4}\\d{3,4}[A-Z]{2,4}\\d{0,2}\\b", normalize: "upper"}
//		part:  {pattern: "(?i)\\bPS\\d{5,10}\\b", normalize: "upper"}
//		symptoms: {lexicon: {leaking: ["leak", "leaks", "leaking", "water on the floor"], ...}}
//		goal:     {lexicon: {install_instruction: ["install", "replace", ...], ...}}
//	}
package appliance

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// ModelPattern matches appliance model numbers such as WDT780SAEM1,
// KDTE334GPS or MFI2570FEZ: three or four letters, three or four digits, two
// to four letters and up to two trailing digits. It never matches a part number.
const ModelPattern = `(?i)\b[A-Z]{3,4}\d{3,4}[A-Z]{2,4}\d{0,2}\b`

// PartPattern matches PartSelect part numbers such as PS3406971.
const PartPattern = `(?i)\bPS\d{5,10}\b`

var (
	modelRe = regexp.MustCompile(ModelPattern)
	partRe  = regexp.MustCompile(PartPattern)
)

// symptomLexicon maps each canonical symptom to the phrases that name it.
var symptomLexicon = map[string][]string{
	"leaking":         {"leak", "leaks", "leaking", "leaky", "water on the floor", "puddle", "dripping"},
	"noisy":           {"noise", "noises", "noisy", "loud", "grinding", "rattling", "squealing", "buzzing", "humming", "banging"},
	"not_draining":    {"not draining", "won't drain", "wont drain", "doesn't drain", "does not drain", "standing water", "water in the bottom"},
	"not_cleaning":    {"not cleaning", "dishes are dirty", "dirty dishes", "still dirty", "residue", "food left on"},
	"not_filling":     {"not filling", "won't fill", "wont fill", "doesn't fill", "no water"},
	"not_starting":    {"won't start", "wont start", "not starting", "doesn't start", "does not start", "won't turn on", "no power", "dead"},
	"door_wont_close": {"door won't close", "door wont close", "door doesn't close", "won't latch", "door won't latch", "latch is broken"},
	"rack_problem":    {"rack", "dishrack", "wheel fell off", "rack won't roll"},
	"not_cooling":     {"not cooling", "not cold", "too warm", "warm", "not cold enough"},
	"ice_maker":       {"ice maker", "icemaker", "no ice", "not making ice"},
	"water_dispenser": {"water dispenser", "dispenser", "bad taste", "water tastes"},
	"not_spinning":    {"not spinning", "won't spin", "wont spin", "doesn't spin", "clothes soaking wet"},
	"off_balance":     {"off balance", "unbalanced", "shaking", "walking", "wobbling"},
	"broken_shelf":    {"shelf", "door bin", "bin is broken", "cracked bin"},
}

// goalLexicon maps each goal to the phrases that state it.
var goalLexicon = map[string][]string{
	"install_instruction": {"install", "installing", "installation", "replace", "replacing", "put in", "put it in", "swap"},
	"check_compatibility": {"compatible", "compatibility", "fit", "fits", "work with", "works with", "right part for"},
	"diagnose_repair":     {"fix", "repair", "broken", "not working", "diagnose", "troubleshoot", "what's wrong", "what is wrong"},
}

// SymptomLexicon returns a copy of the symptom lexicon: canonical symptom to
// the phrases that name it (matched case-insensitively on word boundaries).
func SymptomLexicon() map[string][]string { return copyLexicon(symptomLexicon) }

// GoalLexicon returns a copy of the goal lexicon: goal to the phrases that state it.
func GoalLexicon() map[string][]string { return copyLexicon(goalLexicon) }

func copyLexicon(l map[string][]string) map[string][]string {
	out := make(map[string][]string, len(l))
	for k, v := range l {
		out[k] = slices.Clone(v)
	}
	return out
}

// Install describes how a part is installed.
type Install struct {
	Difficulty string   `json:"difficulty"`
	Time       string   `json:"time"`
	Tools      []string `json:"tools"`
	Steps      []string `json:"steps"`
}

// Part is a replacement part.
type Part struct {
	Number             string   `json:"number"`
	Name               string   `json:"name"`
	ManufacturerNumber string   `json:"manufacturer_number"`
	Price              float64  `json:"price"`
	Symptoms           []string `json:"symptoms"`
	Models             []string `json:"models"`
	Install            Install  `json:"install"`
}

// FitsModel reports whether the part is listed for the model.
func (p *Part) FitsModel(model string) bool {
	return slices.Contains(p.Models, model)
}

// Model is an appliance model.
type Model struct {
	Number      string `json:"number"`
	Brand       string `json:"brand"`
	Type        string `json:"type"`
	Description string `json:"description"`
}

// Catalog is the set of models and parts.
type Catalog struct {
	Models []Model `json:"models"`
	Parts  []Part  `json:"parts"`

	models map[string]*Model
	parts  map[string]*Part
}

//go:embed catalog.json
var catalogJSON []byte

var (
	loadOnce sync.Once
	bundled  *Catalog
	loadErr  error
)

// Bundled returns the catalog shipped with graphctl. It is parsed once and
// must not be modified.
func Bundled() (*Catalog, error) {
	loadOnce.Do(func() { bundled, loadErr = Parse(catalogJSON) })
	return bundled, loadErr
}

// Parse decodes and checks a catalog: unique numbers that fit ModelPattern
// and PartPattern, known symptoms, and parts listing only known models.
func Parse(data []byte) (*Catalog, error) {
	var c Catalog
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("appliance catalog: %w", err)
	}
	c.models = map[string]*Model{}
	c.parts = map[string]*Part{}
	for i := range c.Models {
		m := &c.Models[i]
		if !modelRe.MatchString(m.Number) || partRe.MatchString(m.Number) {
			return nil, fmt.Errorf("appliance catalog: model %q does not fit ModelPattern", m.Number)
		}
		if _, dup := c.models[m.Number]; dup {
			return nil, fmt.Errorf("appliance catalog: model %q is listed twice", m.Number)
		}
		c.models[m.Number] = m
	}
	for i := range c.Parts {
		p := &c.Parts[i]
		if !partRe.MatchString(p.Number) || modelRe.MatchString(p.Number) {
			return nil, fmt.Errorf("appliance catalog: part %q does not fit PartPattern", p.Number)
		}
		if _, dup := c.parts[p.Number]; dup {
			return nil, fmt.Errorf("appliance catalog: part %q is listed twice", p.Number)
		}
		for _, s := range p.Symptoms {
			if _, ok := symptomLexicon[s]; !ok {
				return nil, fmt.Errorf("appliance catalog: part %q: unknown symptom %q", p.Number, s)
			}
		}
		for _, m := range p.Models {
			if _, ok := c.models[m]; !ok {
				return nil, fmt.Errorf("appliance catalog: part %q lists unknown model %q", p.Number, m)
			}
		}
		if len(p.Install.Steps) == 0 {
			return nil, fmt.Errorf("appliance catalog: part %q has no install steps", p.Number)
		}
		c.parts[p.Number] = p
	}
	return &c, nil
}

// Model returns the model with the given number (case and spaces ignored).
func (c *Catalog) Model(number string) (*Model, bool) {
	m, ok := c.models[canon(number)]
	return m, ok
}

// Part returns the part with the given number (case and spaces ignored).
func (c *Catalog) Part(number string) (*Part, bool) {
	p, ok := c.parts[canon(number)]
	return p, ok
}

// PartsFor returns the parts listed for a model, in catalog order.
func (c *Catalog) PartsFor(model string) []*Part {
	model = canon(model)
	var out []*Part
	for i := range c.Parts {
		if c.Parts[i].FitsModel(model) {
			out = append(out, &c.Parts[i])
		}
	}
	return out
}

// Match is a part ranked by the symptoms it fixes.
type Match struct {
	Part *Part
	// Fixes lists the requested canonical symptoms the part fixes.
	Fixes []string
}

// Diagnose ranks the model's parts by how many of the symptoms they fix
// (most first, catalog order among equals); parts fixing none are left out.
// Symptoms may be canonical names or free phrases from SymptomLexicon.
func (c *Catalog) Diagnose(model string, symptoms []string) []Match {
	wanted := CanonicalSymptoms(symptoms)
	var out []Match
	for _, p := range c.PartsFor(model) {
		var fixes []string
		for _, s := range wanted {
			if slices.Contains(p.Symptoms, s) {
				fixes = append(fixes, s)
			}
		}
		if len(fixes) > 0 {
			out = append(out, Match{Part: p, Fixes: fixes})
		}
	}
	slices.SortStableFunc(out, func(a, b Match) int { return len(b.Fixes) - len(a.Fixes) })
	return out
}

// CanonicalSymptoms maps each symptom to its canonical name: a canonical name
// stays, free text is matched against SymptomLexicon. Unknown text is dropped;
// the result has no duplicates.
func CanonicalSymptoms(symptoms []string) []string {
	var out []string
	add := func(s string) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	keys := slices.Sorted(maps.Keys(symptomLexicon))
	for _, s := range symptoms {
		norm := strings.ToLower(strings.TrimSpace(s))
		norm = strings.ReplaceAll(norm, " ", "_")
		if _, ok := symptomLexicon[norm]; ok {
			add(norm)
			continue
		}
		for _, k := range keys {
			if lexiconMatches(k, s) {
				add(k)
			}
		}
	}
	return out
}

// symptomRes holds one compiled regexp per canonical symptom.
var symptomRes = sync.OnceValue(func() map[string]*regexp.Regexp {
	out := make(map[string]*regexp.Regexp, len(symptomLexicon))
	for k, phrases := range symptomLexicon {
		alts := make([]string, len(phrases))
		for i, p := range phrases {
			alts[i] = regexp.QuoteMeta(strings.ToLower(p))
		}
		out[k] = regexp.MustCompile(`(^|\W)(` + strings.Join(alts, "|") + `)(\W|$)`)
	}
	return out
})

func lexiconMatches(canonical, text string) bool {
	return symptomRes()[canonical].MatchString(strings.ToLower(text))
}

// canon normalises a user-typed number: trimmed, upper case, no inner spaces or dashes.
func canon(s string) string {
	s = strings.ToUpper(strings.TrimSpace(s))
	return strings.NewReplacer(" ", "", "-", "").Replace(s)
}
