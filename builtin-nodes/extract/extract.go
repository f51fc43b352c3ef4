// Package extract provides the extract node type, which pulls structured
// values out of text into state fields.
//
// Every configured field has a Go regular expression, a lexicon of keywords
// mapped to canonical values, or both:
//
//	fields: {
//		model:    {pattern: "(?i)\\b[A-Z]{3,4}\\d{3,4}[A-Z]{2,4}\\d{0,2}\\b", normalize: "upper"}
//		symptoms: {lexicon: {leaking: ["leak", "leaking", "water on the floor"]}}
//	}
//
// The node has three modes:
//
//   - "rules" (the default) matches the patterns and lexicons. Lexicon phrases
//     match case-insensitively on word boundaries; a phrase of several words
//     matches across any run of spaces. A match that also matches one of the
//     field's exclude patterns is dropped.
//   - "llm" asks a chat model for a JSON object with exactly the declared
//     fields. The config becomes the instructions (a lexicon field takes only
//     its canonical values, a pattern is a format hint) and each value the model
//     gives is validated the same way: a lexicon field keeps only canonical
//     values, a pattern field only values the pattern matches in full, so a
//     part number offered as a model number is dropped, not written. The model
//     is the node's model setting, else the graph's defaults.llm, overridden
//     by --llm / $GRAPHCTL_LLM. A field needs neither a pattern nor a lexicon
//     in this mode (its description tells the model what it holds).
//   - "auto" is llm mode when a model is configured and rules mode when none
//     is, so one graph runs offline and improves when given a model. When the
//     model call fails at run time, auto mode falls back to the rules and
//     emits an "extract_fallback" event carrying the error.
//
// In every mode a field of list type collects every distinct value in order
// of appearance and any other field takes the first one — in rules mode, the
// first one that differs from the field's current value, so that a message
// correcting a value ("not WDT780SAEM1, it's WDT750SAHZ0") yields the new
// one; a field with no value is not written, so the value an earlier turn
// found stays (whatever the reducer) and union reducers accumulate. Every run emits one "extract" event whose payload's found
// holds the written fields.
//
// The text is the value of the from expression, or by default the content of
// the last message with role "user" in the messages field. The llm mode is
// implemented by the llm package, which registers it with RegisterMode; in a
// build without it, auto mode is rules mode and llm mode is a configuration
// error.
package extract

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/graphctl/graphctl/builtin-nodes/internal/check"
	"github.com/graphctl/graphctl/runtime/audit"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
)

// EventType is the type of the event an extract node emits.
const EventType = "extract"

// FallbackEventType is the type of the event auto mode emits when the model
// call fails and the rules extract instead; its payload holds the error and
// its code.
const FallbackEventType = "extract_fallback"

// The extract modes.
const (
	ModeRules = "rules"
	ModeLLM   = "llm"
	ModeAuto  = "auto"
)

// Config is the schema of an extract node's config.
const Config = `{
	mode?: *"rules" | "llm" | "auto"
	model?: string
	from?: string
	messages_field?: *"messages" | string
	fields: {[string]: {
		description?: string
		pattern?: string
		group?: int & >=0
		lexicon?: {[string]: [...string]}
		exclude?: [...string]
		normalize?: "upper" | "lower" | "trim"
	}}
}`

func init() {
	audit.ReadsConversation("extract")
	node.MustRegister(node.Type{
		Name:        "extract",
		Description: "Extracts field values from the user's text with patterns and keyword lexicons, or with a model (mode llm or auto).",
		Config:      Config,
		New:         newExtract,
	})
}

// ModeBuilder builds the node of a registered mode from the node's Builder
// and its compiled config. It reports problems through b and returns a nil
// node when it reported any.
type ModeBuilder func(b node.Builder, x *Extractor) (node.Node, error)

var (
	modesMu sync.RWMutex
	modes   = map[string]ModeBuilder{}
)

// RegisterMode makes an extract mode other than "rules" and "auto"
// available; the llm package registers "llm", which auto mode also uses.
func RegisterMode(name string, build ModeBuilder) error {
	if name == "" || name == ModeRules || name == ModeAuto || build == nil {
		return fmt.Errorf("extract mode %q: a name other than %q and %q, and a constructor, are required", name, ModeRules, ModeAuto)
	}
	modesMu.Lock()
	defer modesMu.Unlock()
	if _, dup := modes[name]; dup {
		return fmt.Errorf("extract mode %q is already registered", name)
	}
	modes[name] = build
	return nil
}

func lookupMode(name string) (ModeBuilder, bool) {
	modesMu.RLock()
	defer modesMu.RUnlock()
	build, ok := modes[name]
	return build, ok
}

// FieldRule is the config of one extracted field.
type FieldRule struct {
	Description string              `json:"description,omitempty"`
	Pattern     string              `json:"pattern,omitempty"`
	Group       *int                `json:"group,omitempty"`
	Lexicon     map[string][]string `json:"lexicon,omitempty"`
	Exclude     []string            `json:"exclude,omitempty"`
	Normalize   string              `json:"normalize,omitempty"`
}

type config struct {
	Mode          string               `json:"mode"`
	Model         string               `json:"model"`
	From          string               `json:"from"`
	MessagesField string               `json:"messages_field"`
	Fields        map[string]FieldRule `json:"fields"`
}

// matcher is one compiled source of values: a pattern, or one canonical
// value's phrases.
type matcher struct {
	re    *regexp.Regexp
	group int
	value string // canonical value for lexicon matchers; "" for patterns
	// words, for a lexicon matcher, are the first words of its phrases: it
	// can only match a text that contains one of them.
	words []string
}

// mayMatch reports whether the matcher can match src: false only when src
// contains none of a lexicon matcher's first words, so that the regexp need
// not run.
func (m *matcher) mayMatch(src string) bool {
	if m.words == nil {
		return true
	}
	for _, w := range m.words {
		if strings.Contains(src, w) {
			return true
		}
	}
	return false
}

// firstWords returns the lower-cased first word of each phrase.
func firstWords(phrases []string) []string {
	out := []string{}
	for _, p := range phrases {
		if f := strings.Fields(strings.ToLower(p)); len(f) > 0 {
			out = append(out, f[0])
		}
	}
	return out
}

type rule struct {
	field     string
	list      bool
	matchers  []matcher
	exclude   []*regexp.Regexp
	normalize string

	// What a model-backed mode describes and validates against.
	description string
	pattern     string
	whole       *regexp.Regexp // the pattern anchored at both ends
	group       int
	lexicon     map[string][]string
	values      []string          // canonical lexicon values, sorted
	canonical   map[string]string // valueKey(value) → canonical value
	enum        []string          // the state field's string enum, if any
}

// Extractor is an extract node's compiled config: its mode, model, text
// source and field rules. It is the node of rules mode; other modes use it
// to describe and validate fields and to fall back on the rules.
type Extractor struct {
	mode     string
	model    string
	from     node.Expr
	messages string
	rules    []rule
}

func newExtract(b node.Builder) (node.Node, error) {
	x := Compile(b)
	if x == nil {
		return nil, nil
	}
	switch x.mode {
	case ModeRules:
		return x, nil
	case ModeAuto:
		if build, ok := lookupMode(ModeLLM); ok {
			return build(b, x)
		}
		return x, nil
	}
	build, ok := lookupMode(x.mode)
	if !ok {
		b.Errorf("mode", "unsupported", "extract mode %q is not available in this build; use mode \"rules\" or \"auto\"", x.mode)
		return nil, nil
	}
	return build(b, x)
}

// Compile decodes and checks an extract node's config, reporting every
// problem at its config path through b. It returns nil when it reported any.
func Compile(b node.Builder) *Extractor {
	var cfg config
	if err := b.Decode(&cfg); err != nil {
		b.Errorf("", "invalid-config", "extract node %q: %v", b.NodeName(), err)
		return nil
	}
	x := &Extractor{mode: cfg.Mode, model: strings.TrimSpace(cfg.Model), messages: cfg.MessagesField}
	if x.mode == "" {
		x.mode = ModeRules
	}
	if x.model != "" && x.mode == ModeRules {
		b.Warnf("model", "unused", "extract node %q uses mode \"rules\"; model %q is used only with mode \"llm\" or \"auto\"", b.NodeName(), x.model)
	}
	if x.messages == "" {
		x.messages = "messages"
	}
	if cfg.From != "" {
		x.from = b.Expr("from", cfg.From, graph.String)
	} else {
		check.MessagesField(b, "messages_field", x.messages)
	}
	if len(cfg.Fields) == 0 {
		b.Errorf("fields", "invalid-config", "extract node %q extracts no field: configure at least one under fields", b.NodeName())
	}
	names := make([]string, 0, len(cfg.Fields))
	for name := range cfg.Fields {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if r, ok := compileRule(b, name, cfg.Fields[name], x.mode != ModeLLM); ok {
			x.rules = append(x.rules, r)
		}
	}
	if b.Failed() {
		return nil
	}
	return x
}

// compileRule compiles one field's config. needMatcher requires a pattern or
// a lexicon, which every mode that may run the rules needs.
func compileRule(b node.Builder, name string, fr FieldRule, needMatcher bool) (rule, bool) {
	path := "fields." + name
	r := rule{field: name, normalize: fr.Normalize, description: strings.TrimSpace(fr.Description), pattern: fr.Pattern, lexicon: fr.Lexicon}
	f := check.Field(b, path, name)
	if f != nil {
		switch {
		case f.Type.Kind == graph.String, f.Type.Kind == graph.Any:
		case f.Type.Kind == graph.List && (f.Type.Elem == nil || f.Type.Elem.Kind == graph.String || f.Type.Elem.Kind == graph.Any):
			r.list = true
		default:
			b.Errorf(path, "invalid-config", "extract writes text to %q, which is declared as %s; declare it as string or list<string>", name, f.Type)
		}
		if r.description == "" {
			r.description = strings.TrimSpace(f.Description)
		}
		for _, e := range f.Enum {
			if s, ok := e.(string); ok && s != "" {
				r.enum = append(r.enum, s)
			}
		}
	}
	if needMatcher && fr.Pattern == "" && len(fr.Lexicon) == 0 {
		b.Errorf(path, "invalid-config", "field %q has neither a pattern nor a lexicon", name)
	}
	if fr.Pattern != "" {
		re, err := regexp.Compile(fr.Pattern)
		if err != nil {
			b.Errorf(path+".pattern", "invalid-config", "field %q: pattern is not a valid Go regular expression: %v", name, err)
		} else {
			group := 0
			if fr.Group != nil {
				group = *fr.Group
			}
			if group > re.NumSubexp() {
				b.Errorf(path+".group", "invalid-config", "field %q: group %d does not exist; the pattern has %d group(s)", name, group, re.NumSubexp())
			}
			r.matchers = append(r.matchers, matcher{re: re, group: group})
			r.group = group
			// The anchored form checks a whole proposed value; the
			// non-capturing group keeps the pattern's group numbers.
			if whole, err := regexp.Compile(`^(?:` + fr.Pattern + `)$`); err == nil {
				r.whole = whole
			} else {
				b.Errorf(path+".pattern", "invalid-config", "field %q: pattern cannot be anchored to check whole values: %v", name, err)
			}
		}
	} else if fr.Group != nil {
		b.Errorf(path+".group", "invalid-config", "field %q: group needs a pattern", name)
	}
	values := make([]string, 0, len(fr.Lexicon))
	for v := range fr.Lexicon {
		values = append(values, v)
	}
	sort.Strings(values)
	r.canonical = map[string]string{}
	for _, v := range values {
		re, err := lowerLexiconRegexp(fr.Lexicon[v])
		if err != nil {
			b.Errorf(path+".lexicon."+v, "invalid-config", "field %q, value %q: %v", name, v, err)
			continue
		}
		r.matchers = append(r.matchers, matcher{re: re, value: v, words: firstWords(fr.Lexicon[v])})
		r.values = append(r.values, v)
		r.canonical[valueKey(v)] = v
	}
	for i, src := range fr.Exclude {
		re, err := regexp.Compile(src)
		if err != nil {
			b.Errorf(fmt.Sprintf("%s.exclude.%d", path, i), "invalid-config", "field %q: exclude pattern is not a valid Go regular expression: %v", name, err)
			continue
		}
		r.exclude = append(r.exclude, re)
	}
	return r, true
}

// LexiconRegexp compiles phrases into one case-insensitive regexp matching
// any of them on word boundaries, whitespace inside a phrase matching any run
// of whitespace.
func LexiconRegexp(phrases []string) (*regexp.Regexp, error) {
	re, err := lowerLexiconRegexp(phrases)
	if err != nil {
		return nil, err
	}
	return regexp.Compile("(?i)" + re.String())
}

// lowerLexiconRegexp is LexiconRegexp for text that is already lower case:
// case folding is done once per text instead of in every comparison.
func lowerLexiconRegexp(phrases []string) (*regexp.Regexp, error) {
	var alts []string
	for _, p := range phrases {
		p = strings.ToLower(strings.TrimSpace(p))
		if p == "" {
			continue
		}
		words := strings.Fields(p)
		for i, w := range words {
			words[i] = regexp.QuoteMeta(w)
		}
		alt := strings.Join(words, `\s+`)
		if isWordByte(p[0]) {
			alt = `\b` + alt
		}
		if isWordByte(p[len(p)-1]) {
			alt += `\b`
		}
		alts = append(alts, alt)
	}
	if len(alts) == 0 {
		return nil, fmt.Errorf("no phrases")
	}
	// Longer phrases first so "not draining" wins over "draining" at one position.
	sort.SliceStable(alts, func(i, j int) bool { return len(alts[i]) > len(alts[j]) })
	return regexp.Compile(`(?:` + strings.Join(alts, "|") + `)`)
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// hit is one value found at a position of the text.
type hit struct {
	pos   int
	value string
}

// find returns the rule's values in order of appearance, excluded matches
// dropped, normalized, without duplicates.
func (r *rule) find(text, lower string) []string {
	var hits []hit
	for i := range r.matchers {
		m := &r.matchers[i]
		src := text
		if m.value != "" {
			// Lexicon values are canonical, so positions in the lower-cased
			// text only order them; the text itself is not sliced by them.
			src = lower
		}
		if !m.mayMatch(src) {
			continue
		}
		var locs [][]int
		if m.group == 0 {
			locs = m.re.FindAllStringIndex(src, -1)
		} else {
			locs = m.re.FindAllStringSubmatchIndex(src, -1)
		}
		for _, loc := range locs {
			whole := src[loc[0]:loc[1]]
			if r.excluded(whole) {
				continue
			}
			value := m.value
			if value == "" {
				s, e := loc[2*m.group], loc[2*m.group+1]
				if s < 0 {
					continue
				}
				value = src[s:e]
			}
			hits = append(hits, hit{pos: loc[0], value: normalize(value, r.normalize)})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].pos < hits[j].pos })
	seen := map[string]bool{}
	var out []string
	for _, h := range hits {
		if h.value == "" || seen[h.value] {
			continue
		}
		seen[h.value] = true
		out = append(out, h.value)
	}
	return out
}

func (r *rule) excluded(s string) bool {
	for _, re := range r.exclude {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

func normalize(s, how string) string {
	switch how {
	case "upper":
		return strings.ToUpper(strings.TrimSpace(s))
	case "lower":
		return strings.ToLower(strings.TrimSpace(s))
	case "trim":
		return strings.TrimSpace(s)
	}
	return s
}

// quotes maps typographic apostrophes and quotes to ASCII so that lexicon
// phrases such as "won't" match text typed on phones.
var quotes = strings.NewReplacer("\u2019", "'", "\u2018", "'", "\u201c", `"`, "\u201d", `"`)

// Find applies the rules to text and returns what they found: for each
// field with a match, its first value, or for a list field all distinct
// values in order of appearance.
func (x *Extractor) Find(text string) node.Update { return x.FindIn(text, nil) }

// FindIn is Find for a text said in a conversation whose state is given: a
// field that is not a list takes the first value that differs from the
// field's current value when the text mentions both ("sorry, not
// WDT780SAEM1 but WDT750SAHZ0" corrects the model number), else its first
// value.
func (x *Extractor) FindIn(text string, state map[string]any) node.Update {
	text = quotes.Replace(text)
	lower := strings.ToLower(text)
	up := node.Update{}
	for i := range x.rules {
		r := &x.rules[i]
		values := r.find(text, lower)
		if len(values) == 0 {
			continue
		}
		if r.list {
			list := make([]any, len(values))
			for j, v := range values {
				list[j] = v
			}
			up[r.field] = list
		} else {
			up[r.field] = pickNew(values, state[r.field])
		}
	}
	return up
}

// pickNew returns the first value that is not current, or the first value
// when all are.
func pickNew(values []string, current any) string {
	cur, _ := current.(string)
	if cur == "" {
		return values[0]
	}
	for _, v := range values {
		if v != cur {
			return v
		}
	}
	return values[0]
}

// Run implements node.Node with the rules: it writes what Find returns and
// emits an extract event listing it.
func (x *Extractor) Run(_ context.Context, in *node.Input) (node.Update, error) {
	text, err := x.Text(in)
	if err != nil {
		return nil, err
	}
	up := x.FindIn(text, in.State)
	if in.Emit != nil {
		found := make(map[string]any, len(up))
		for k, v := range up {
			found[k] = v
		}
		in.Emit(event.Event{Type: EventType, Payload: map[string]any{"found": found}})
	}
	return up, nil
}

// Mode returns the configured mode: "rules", "llm" or "auto".
func (x *Extractor) Mode() string { return x.mode }

// Model returns the node's own model setting ("" when unset).
func (x *Extractor) Model() string { return x.model }

// Field describes one configured field for a mode that asks a model.
type Field struct {
	// Name is the state field written.
	Name string
	// List is true for a list<string> field, which takes an array of values.
	List bool
	// Description says what the field holds: the config's description, else
	// the state field's.
	Description string
	// Pattern is the Go regular expression a value must match in full ("" when none).
	Pattern string
	// Values are the canonical lexicon values, sorted (none without a lexicon).
	Values []string
	// Lexicon maps each canonical value to its phrases.
	Lexicon map[string][]string
	// Enum lists the string values the state field's enum allows.
	Enum []string
	// Normalize is how accepted values are normalized: "upper", "lower", "trim" or "".
	Normalize string
}

// Fields returns the configured fields, sorted by name.
func (x *Extractor) Fields() []Field {
	out := make([]Field, len(x.rules))
	for i, r := range x.rules {
		out[i] = Field{
			Name: r.field, List: r.list, Description: r.description, Pattern: r.pattern,
			Values: append([]string(nil), r.values...), Lexicon: r.lexicon,
			Enum: append([]string(nil), r.enum...), Normalize: r.normalize,
		}
	}
	return out
}

// Accept checks a value proposed for a field (by a model) against the
// field's config and returns it as it would be written: a lexicon field
// takes only its canonical values (compared ignoring case and the difference
// between spaces, hyphens and underscores), a pattern field only a value the
// pattern matches in full and no exclude pattern matches (the configured
// group of it, normalized), a field with both either kind, a field with
// neither any non-empty text. A value outside the state field's enum is
// refused too. The error says why a value is refused.
func (x *Extractor) Accept(field, value string) (string, error) {
	var r *rule
	for i := range x.rules {
		if x.rules[i].field == field {
			r = &x.rules[i]
			break
		}
	}
	if r == nil {
		return "", fmt.Errorf("%q is not a configured field", field)
	}
	return r.accept(value)
}

func (r *rule) accept(value string) (string, error) {
	v := strings.TrimSpace(quotes.Replace(value))
	if v == "" {
		return "", fmt.Errorf("field %q: the value is empty", r.field)
	}
	out, ok := "", false
	if c, hit := r.canonical[valueKey(v)]; hit {
		out, ok = normalize(c, r.normalize), true
	}
	if !ok && r.whole != nil && !r.excluded(v) {
		if loc := r.whole.FindStringSubmatchIndex(v); loc != nil && loc[2*r.group] >= 0 {
			out, ok = normalize(v[loc[2*r.group]:loc[2*r.group+1]], r.normalize), true
		}
	}
	if !ok && r.whole == nil && len(r.values) == 0 {
		out, ok = normalize(v, r.normalize), true
	}
	if !ok {
		var want []string
		if len(r.values) > 0 {
			want = append(want, "one of "+strings.Join(r.values, ", "))
		}
		if r.whole != nil {
			want = append(want, "a value matching "+r.pattern)
		}
		return "", fmt.Errorf("field %q: %q is not %s", r.field, value, strings.Join(want, " or "))
	}
	if out == "" {
		return "", fmt.Errorf("field %q: %q is empty once normalized", r.field, value)
	}
	if len(r.enum) > 0 {
		for _, e := range r.enum {
			if e == out {
				return out, nil
			}
		}
		return "", fmt.Errorf("field %q: %q is not in the state field's enum (%s)", r.field, out, strings.Join(r.enum, ", "))
	}
	return out, nil
}

// valueKey folds case and treats spaces, hyphens and underscores alike, so
// that "Not draining" names the canonical value not_draining.
func valueKey(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(c rune) bool {
		return c == ' ' || c == '_' || c == '-' || c == '\t'
	}), "_")
}

// Text returns the text the node extracts from: the from expression's value,
// or the content of the last user message.
func (x *Extractor) Text(in *node.Input) (string, error) {
	if x.from != nil {
		v, err := x.from.Eval(in.Scope)
		if err != nil {
			return "", node.Errorf("expression_error", "extract from: %w", err)
		}
		if v == nil {
			return "", nil
		}
		s, ok := v.(string)
		if !ok {
			return "", node.Errorf("expression_error", "extract from: want a string, got %s", graph.DescribeValue(v))
		}
		return s, nil
	}
	return LastUserMessage(in.Scope[x.messages]), nil
}

// LastUserMessage returns the text of the last message with role "user" in
// a messages value, or "" when there is none. Content given as a list of parts
// contributes the text of its text parts, one per line.
func LastUserMessage(messages any) string {
	var items []map[string]any
	switch l := messages.(type) {
	case []any:
		for _, m := range l {
			if mm, ok := m.(map[string]any); ok {
				items = append(items, mm)
			}
		}
	case []map[string]any:
		items = l
	}
	for i := len(items) - 1; i >= 0; i-- {
		if items[i]["role"] != "user" {
			continue
		}
		switch c := items[i]["content"].(type) {
		case string:
			return c
		case []any:
			var parts []string
			for _, p := range c {
				if pm, ok := p.(map[string]any); ok {
					if t, ok := pm["text"].(string); ok {
						parts = append(parts, t)
					}
				}
			}
			return strings.Join(parts, "\n")
		}
		return ""
	}
	return ""
}
