// Package extract provides the extract node type, which pulls structured
// values out of text into state fields.
//
// In rules mode (the default) every configured field has a Go regular
// expression, a lexicon of keywords mapped to canonical values, or both:
//
//	fields: {
//		model:    {pattern: "(?i)\\b[A-Z]{3,4}\\d{3,4}[A-Z]{2,4}\\d{0,2}\\b", normalize: "upper"}
//		symptoms: {lexicon: {leaking: ["leak", "leaking", "water on the floor"]}}
//	}
//
// Lexicon phrases match case-insensitively on word boundaries; a phrase of
// several words matches across any run of spaces. A match that also matches
// one of the field's exclude patterns is dropped. A field of list type
// collects every distinct value in order of appearance; any other field takes
// the first one. A field with no match is not written, so reducers such as
// keep and union hold what earlier turns found.
//
// The text is the value of the from expression, or by default the content of
// the last message with role "user" in the messages field. Other modes (an
// LLM-backed one) are provided by packages that call RegisterMode.
package extract

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/graphctl/graphctl/builtin-nodes/internal/check"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
)

// EventType is the type of the event an extract node emits.
const EventType = "extract"

// Config is the schema of an extract node's config.
const Config = `{
	mode?: *"rules" | "llm"
	from?: string
	messages_field?: *"messages" | string
	fields: {[string]: {
		pattern?: string
		group?: int & >=0
		lexicon?: {[string]: [...string]}
		exclude?: [...string]
		normalize?: "upper" | "lower" | "trim"
	}}
}`

func init() {
	node.MustRegister(node.Type{
		Name:        "extract",
		Description: "Extracts field values from the user's text with patterns and keyword lexicons.",
		Config:      Config,
		New:         newExtract,
	})
}

var (
	modesMu sync.RWMutex
	modes   = map[string]func(node.Builder) (node.Node, error){}
)

// RegisterMode makes an extract mode other than "rules" available. build is
// called with the node's Builder instead of the rules constructor.
func RegisterMode(name string, build func(node.Builder) (node.Node, error)) error {
	if name == "" || name == "rules" || build == nil {
		return fmt.Errorf("extract mode %q: a name other than \"rules\" and a constructor are required", name)
	}
	modesMu.Lock()
	defer modesMu.Unlock()
	if _, dup := modes[name]; dup {
		return fmt.Errorf("extract mode %q is already registered", name)
	}
	modes[name] = build
	return nil
}

// FieldRule is the config of one extracted field.
type FieldRule struct {
	Pattern   string              `json:"pattern,omitempty"`
	Group     *int                `json:"group,omitempty"`
	Lexicon   map[string][]string `json:"lexicon,omitempty"`
	Exclude   []string            `json:"exclude,omitempty"`
	Normalize string              `json:"normalize,omitempty"`
}

type config struct {
	Mode          string               `json:"mode"`
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
}

type rule struct {
	field     string
	list      bool
	matchers  []matcher
	exclude   []*regexp.Regexp
	normalize string
}

type extractNode struct {
	from     node.Expr
	messages string
	rules    []rule
}

func newExtract(b node.Builder) (node.Node, error) {
	var cfg config
	if err := b.Decode(&cfg); err != nil {
		b.Errorf("", "invalid-config", "extract node %q: %v", b.NodeName(), err)
		return nil, nil
	}
	if cfg.Mode != "" && cfg.Mode != "rules" {
		modesMu.RLock()
		build, ok := modes[cfg.Mode]
		modesMu.RUnlock()
		if ok {
			return build(b)
		}
		b.Errorf("mode", "unsupported", "extract mode %q is not available in this build; use mode \"rules\"", cfg.Mode)
		return nil, nil
	}
	n := &extractNode{messages: cfg.MessagesField}
	if n.messages == "" {
		n.messages = "messages"
	}
	if cfg.From != "" {
		n.from = b.Expr("from", cfg.From, graph.String)
	} else {
		check.MessagesField(b, "messages_field", n.messages)
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
		if r, ok := compileRule(b, name, cfg.Fields[name]); ok {
			n.rules = append(n.rules, r)
		}
	}
	if b.Failed() {
		return nil, nil
	}
	return n, nil
}

func compileRule(b node.Builder, name string, fr FieldRule) (rule, bool) {
	path := "fields." + name
	r := rule{field: name, normalize: fr.Normalize}
	f := check.Field(b, path, name)
	if f != nil {
		switch {
		case f.Type.Kind == graph.String, f.Type.Kind == graph.Any:
		case f.Type.Kind == graph.List && (f.Type.Elem == nil || f.Type.Elem.Kind == graph.String || f.Type.Elem.Kind == graph.Any):
			r.list = true
		default:
			b.Errorf(path, "invalid-config", "extract writes text to %q, which is declared as %s; declare it as string or list<string>", name, f.Type)
		}
	}
	if fr.Pattern == "" && len(fr.Lexicon) == 0 {
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
		}
	} else if fr.Group != nil {
		b.Errorf(path+".group", "invalid-config", "field %q: group needs a pattern", name)
	}
	values := make([]string, 0, len(fr.Lexicon))
	for v := range fr.Lexicon {
		values = append(values, v)
	}
	sort.Strings(values)
	for _, v := range values {
		re, err := lowerLexiconRegexp(fr.Lexicon[v])
		if err != nil {
			b.Errorf(path+".lexicon."+v, "invalid-config", "field %q, value %q: %v", name, v, err)
			continue
		}
		r.matchers = append(r.matchers, matcher{re: re, value: v})
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
	for _, m := range r.matchers {
		src := text
		if m.value != "" {
			// Lexicon values are canonical, so positions in the lower-cased
			// text only order them; the text itself is not sliced by them.
			src = lower
		}
		for _, loc := range m.re.FindAllStringSubmatchIndex(src, -1) {
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

// Run implements node.Node.
func (n *extractNode) Run(_ context.Context, in *node.Input) (node.Update, error) {
	text, err := n.text(in)
	if err != nil {
		return nil, err
	}
	text = quotes.Replace(text)
	lower := strings.ToLower(text)
	up := node.Update{}
	found := map[string]any{}
	for i := range n.rules {
		r := &n.rules[i]
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
			up[r.field] = values[0]
		}
		found[r.field] = up[r.field]
	}
	if in.Emit != nil {
		in.Emit(event.Event{Type: EventType, Payload: map[string]any{"found": found}})
	}
	return up, nil
}

func (n *extractNode) text(in *node.Input) (string, error) {
	if n.from != nil {
		v, err := n.from.Eval(in.Scope)
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
	return LastUserMessage(in.Scope[n.messages]), nil
}

// LastUserMessage returns the content of the last message with role "user"
// in a messages value, or "" when there is none.
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
		if items[i]["role"] == "user" {
			s, _ := items[i]["content"].(string)
			return s
		}
	}
	return ""
}
