package schemas_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"

	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/graphschema"
	"github.com/graphctl/graphctl/runtime/graphtest"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/reducer"
)

// updateDocsEnv, when set, makes TestGraphFileReference rewrite the generated
// parts of docs/graph-file.md instead of failing on a difference.
const updateDocsEnv = "GRAPHCTL_UPDATE_DOCS"

var generatedBlock = regexp.MustCompile(`(?s)(<!-- BEGIN generated: ([a-z-]+) -->\n)(.*?)(<!-- END generated -->)`)

// TestGraphFileReference keeps docs/graph-file.md in step with the code: the
// parts between <!-- BEGIN generated: NAME --> and <!-- END generated --> are
// generated from the graph-file schema (keys, what they accept, their doc
// comments), the reducer registry and the test runner's keys.
// Regenerate them with GRAPHCTL_UPDATE_DOCS=1 go test ./schemas -run TestGraphFileReference.
func TestGraphFileReference(t *testing.T) {
	path := filepath.Join("..", "docs", "graph-file.md")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	gen := referenceGenerators(t)
	seen := map[string]bool{}
	var stale []string
	out := generatedBlock.ReplaceAllStringFunc(string(src), func(block string) string {
		m := generatedBlock.FindStringSubmatch(block)
		name := m[2]
		f, ok := gen[name]
		if !ok {
			t.Errorf("docs/graph-file.md: no generator for block %q", name)
			return block
		}
		seen[name] = true
		want := f()
		if m[3] != want {
			stale = append(stale, name)
		}
		return m[1] + want + m[4]
	})
	for name := range gen {
		if !seen[name] {
			t.Errorf("docs/graph-file.md lacks the generated block %q", name)
		}
	}
	if len(stale) == 0 {
		return
	}
	if os.Getenv(updateDocsEnv) != "" {
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %v in docs/graph-file.md", stale)
		return
	}
	t.Errorf("docs/graph-file.md is out of date in %v; regenerate with %s=1 go test ./schemas -run TestGraphFileReference", stale, updateDocsEnv)
}

func referenceGenerators(t *testing.T) map[string]func() string {
	ctx := cuecontext.New()
	schema := ctx.CompileString(graphschema.Source())
	if err := schema.Err(); err != nil {
		t.Fatal(err)
	}
	def := func(name string) cue.Value { return schema.LookupPath(cue.MakePath(cue.Def(name))) }
	keys := func(name string) func() string { return func() string { return keyTable(def(name)) } }
	return map[string]func() string{
		"graph-keys":      keys("#Graph"),
		"field-keys":      keys("#Field"),
		"defaults-keys":   keys("#Defaults"),
		"node-keys":       keys("#Node"),
		"route-keys":      keys("#Route"),
		"map-keys":        keys("#Map"),
		"retry-keys":      keys("#Retry"),
		"catch-keys":      keys("#Catch"),
		"call-retry-keys": keys("#CallRetry"),
		"cache-keys":      keys("#Cache"),
		"state-types":     stateTypes,
		"reducers":        reducerTable,
		"test-keys":       func() string { return testKeyTable(t) },
		"test-statuses":   func() string { return "`" + strings.Join(graphtest.Statuses(), "`, `") + "`\n" },
		"subgraph-keys":   func() string { return nodeConfigTable(t, compile.SubgraphType) },
	}
}

// nodeConfigTable lists the config keys of a registered node type.
func nodeConfigTable(t *testing.T, name string) string {
	typ, ok := node.Lookup(name)
	if !ok {
		t.Fatalf("node type %q is not registered", name)
	}
	v := cuecontext.New().CompileString("#C: " + graphschema.ConfigSchema(typ))
	if err := v.Err(); err != nil {
		t.Fatal(err)
	}
	return keyTable(v.LookupPath(cue.ParsePath("#C")))
}

// keyTable lists a schema definition's keys: required or not, what each
// accepts (in the graph's terms) and its doc comment.
func keyTable(v cue.Value) string {
	var b strings.Builder
	b.WriteString("| key | required | accepts | meaning |\n| --- | --- | --- | --- |\n")
	it, err := v.Fields(cue.Optional(true))
	if err != nil {
		return err.Error()
	}
	for it.Next() {
		sel := it.Selector()
		fv := it.Value()
		req := "no"
		if sel.ConstraintType() == cue.RequiredConstraint {
			req = "yes"
		}
		accepts := graphschema.Describe(fv)
		if ref, kind := definitionName(fv); ref != "" {
			link := "[" + strings.ToLower(ref) + "](#" + sections[ref] + ")"
			switch kind {
			case "by name":
				accepts = "an object: name → " + link
			case "list":
				accepts = "a list of " + link
			default:
				accepts = "an object: see " + link
			}
		}
		doc := ""
		for _, d := range fv.Doc() {
			doc = strings.Join(strings.Fields(d.Text()), " ")
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", sel.Unquoted(), req, cell(accepts), cell(doc))
	}
	return b.String()
}

// sections maps the schema's definitions to the sections of the page that
// document them.
var sections = map[string]string{
	"Field": "state", "Defaults": "defaults", "Node": "nodes", "Route": "route", "Map": "map",
	"Retry": "retry-and-catch", "Catch": "retry-and-catch", "CallRetry": "retry-and-catch",
	"Cache": "cache", "TestCase": "tests",
}

// definitionName names the schema definition a key refers to (#Node for
// nodes, #Field for state, …), and says whether the key holds a list or an
// object of them, so that the table links to its section.
func definitionName(v cue.Value) (string, string) {
	candidates := []struct {
		v    cue.Value
		kind string
	}{{v, "one"}, {v.LookupPath(cue.MakePath(cue.AnyString)), "by name"}, {v.LookupPath(cue.MakePath(cue.AnyIndex)), "list"}}
	if it, err := v.Fields(cue.Optional(true), cue.Patterns(true)); err == nil {
		for it.Next() {
			if it.Selector().ConstraintType()&cue.PatternConstraint != 0 {
				candidates = append(candidates, struct {
					v    cue.Value
					kind string
				}{it.Value(), "by name"})
			}
		}
	}
	for _, c := range candidates {
		if !c.v.Exists() {
			continue
		}
		if _, ref := c.v.ReferencePath(); len(ref.Selectors()) > 0 {
			name := strings.TrimPrefix(ref.String(), "#")
			if _, ok := sections[name]; ok {
				return name, c.kind
			}
		}
	}
	return "", ""
}

func cell(s string) string {
	return strings.NewReplacer("|", "\\|", "<", "&lt;", ">", "&gt;").Replace(s)
}

// stateTypes lists the state field types with their zero value and default reducer.
func stateTypes() string {
	var b strings.Builder
	b.WriteString("| type | holds | zero value | default reducer |\n| --- | --- | --- | --- |\n")
	for _, row := range []struct{ typ, holds string }{
		{"string", "text"}, {"int", "a whole number"}, {"float", "a number"}, {"bool", "true or false"},
		{"list<T>", "a list of T (`list` is `list<any>`)"}, {"map<T>", "an object whose values are T"},
		{"object", "an object of any shape"}, {"any", "any JSON value"},
		{"messages", "chat messages `{role, content, id?, tool_calls?, tool_call_id?}`"},
		{"contracts", "ExecutionContracts `{id, action_type, tool_name, status, arguments?, result?, error_message?}`"},
	} {
		text := strings.ReplaceAll(strings.ReplaceAll(row.typ, "<T>", "<string>"), "list", "list")
		typ, err := graph.ParseType(text)
		if err != nil {
			fmt.Fprintf(&b, "| `%s` | %s | ? | ? |\n", row.typ, row.holds)
			continue
		}
		zero := "null"
		if z := typ.Zero(); z != nil {
			zero = "`" + graphschema.LiteralOf(z) + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | `%s` |\n", row.typ, row.holds, zero, reducer.Default(typ))
	}
	return b.String()
}

// reducerTable lists the builtin reducers with the types they fit.
func reducerTable() string {
	var b strings.Builder
	b.WriteString("| reducer | what it does | fits |\n| --- | --- | --- |\n")
	kinds := []string{"string", "int", "float", "bool", "list<any>", "map<any>", "object", "any", "messages", "contracts"}
	for _, name := range reducer.Names() {
		r, _ := reducer.Lookup(name)
		var fits []string
		for _, k := range kinds {
			if typ, err := graph.ParseType(k); err == nil && r.Accepts(typ) {
				fits = append(fits, "`"+strings.TrimSuffix(k, "<any>")+"`")
			}
		}
		desc := r.Description
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", name, cell(strings.Join(strings.Fields(desc), " ")), strings.Join(fits, ", "))
	}
	return b.String()
}

// testKeyMeaning says what each key of a declarative test means. A key the
// runner accepts without an entry here fails the test, so the list stays
// complete.
var testKeyMeaning = map[string]map[string]string{
	"case": {
		"name": "the case's name (unique)", "description": "free text", "turns": "the turns, in order",
		"mocks": "`{NODE: mock}`: nodes replaced for this case", "llm": "scripted model replies, used in order through the case: a string, or `{content | json | tool_calls: [{name, arguments}], node?}`",
	},
	"turn": {
		"input": "a chat message (string) or an object of state fields", "resume": "the answer to a pending interrupt",
		"interrupt": "which pending interrupt `resume` answers: its id or its node", "restart": "`true`: close and reopen the database first, as a new process would",
		"expect": "what must hold after the turn",
	},
	"expect": {
		"status": "the run's status", "path": "the nodes run, in order (a resume turn starts at the interrupted node)",
		"visits": "nodes that must have run", "not_visits": "nodes that must not have run",
		"state": "fields that must equal these values", "contains": "string fields that must contain, and list fields that must hold, these values",
		"expr": "expressions over the state that must hold", "reply": "text the turn's replies must contain",
		"events": "events that must have been sent (`{type, node?, payload?}`, payload matched partially)", "error": "text the run's error must contain",
	},
	"mock": {
		"update": "the update the node returns instead of running", "error": "`{code, message}`: the node fails with this error",
		"interrupt": "`{field, payload?}`: the node suspends the thread",
	},
	"event": {"type": "the event type", "node": "the node that sent it", "payload": "fields the payload must hold"},
}

func testKeyTable(t *testing.T) string {
	var b strings.Builder
	levels := graphtest.Keys()
	names := make([]string, 0, len(levels))
	for level := range levels {
		names = append(names, level)
	}
	order := map[string]int{"case": 0, "turn": 1, "expect": 2, "mock": 3, "event": 4}
	sort.Slice(names, func(i, j int) bool { return order[names[i]] < order[names[j]] })
	b.WriteString("| in | key | meaning |\n| --- | --- | --- |\n")
	for _, level := range names {
		for _, key := range levels[level] {
			meaning, ok := testKeyMeaning[level][key]
			if !ok {
				t.Errorf("the test runner accepts %s key %q, which docs/graph-file.md does not explain: add it to testKeyMeaning", level, key)
			}
			fmt.Fprintf(&b, "| %s | `%s` | %s |\n", level, key, cell(meaning))
		}
	}
	return b.String()
}
