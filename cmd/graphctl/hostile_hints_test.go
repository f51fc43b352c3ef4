package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestNewcomerMistakesAreExplained gives validate, run and test the graph
// files a newcomer from LangGraph, Python or TypeScript writes by guess:
// their types, a file named .json, a second YAML document, a misspelt
// test key. Each must be refused at its file:line:col with a message that
// names the fix (the state type meant, the name to give the file, the
// value without its quotes), and the three commands must say the same.
func TestNewcomerMistakesAreExplained(t *testing.T) {
	field := func(decl string) string {
		return strings.Replace(hostileHeader, `n:        {type: "int"}`, decl, 1) + hostileNode
	}
	yamlField := func(decl string) string {
		return strings.Replace(yamlHeader, "n: {type: int}", decl, 1) + hostileYAMLNode
	}
	tests := []struct {
		name, file, src string
		at              string // line:col: [code] after the path
		want            string // the message, or its start
	}{
		// State types spelt as other languages spell them.
		{"python str", "str.cue", field(`n: {type: "str"}`), "5:13: [invalid-type]", `did you mean "string"?`},
		{"python list[str]", "liststr.cue", field(`n: {type: "list[str]"}`), "5:13: [invalid-type]", `unknown type "list[str]" (want string, int, float, bool, list<T>, map<T>, object, any, messages or contracts); did you mean "list<string>"?`},
		{"typing Dict[str, int]", "dict.yaml", yamlField(`n: {type: "Dict[str, int]"}`), "5:14: [invalid-type]", `did you mean "map<int>"?`},
		{"typescript string[]", "tsarray.cue", field(`n: {type: "string[]"}`), "5:13: [invalid-type]", `did you mean "list<string>"?`},
		{"json schema integer", "integer.yaml", yamlField(`n: {type: integer}`), "5:13: [invalid-type]", `did you mean "int"?`},
		{"json schema boolean", "boolean.cue", field(`n: {type: "boolean"}`), "5:13: [invalid-type]", `did you mean "bool"?`},
		{"list of a foreign item type", "listnum.cue", field(`n: {type: "list<number>"}`), "5:13: [invalid-type]", `did you mean "list<float>"?`},
		{"langgraph's annotated messages", "annotated.cue", field(`n: {type: "Annotated[list, add_messages]"}`), "5:13: [invalid-type]", `did you mean "messages"?`},
		{"a misspelt type", "strng.cue", field(`n: {type: "strng"}`), "5:13: [invalid-type]", `did you mean "string"?`},

		// Values in quotes, durations without a unit.
		{"a number in quotes", "quoted.cue", hostileHeader + "defaults: recursion_limit: \"10\"\n" + hostileNode, "8:29: [type-mismatch]", `defaults.recursion_limit: want int, got string (write 10, without quotes)`},
		{"a default in quotes", "quoteddefault.yaml", yamlField(`n: {type: int, default: "5"}`), "5:28: [invalid-default]", `state field "n": default is not an int: want int, got string (write 5, without quotes)`},
		{"yaml no as a bool", "no.yaml", yamlField(`n: {type: bool, default: no}`), "5:28: [invalid-default]", `want bool, got string (write false: no is text here)`},
		{"a timeout without its unit", "timeout.cue", hostileHeader + "nodes: a: {type: \"reply\", config: text: \"hi\", next: \"END\", timeout: 30}\n", "8:69: [type-mismatch]", `nodes.a.timeout: want string, got int (a duration is text with its unit: "30s", "30ms", "30m")`},

		// LangGraph's words for the graph's keys.
		{"entry instead of start", "entry.cue", strings.Replace(hostileHeader, "start:", "entry:", 1) + hostileNode, "7:1: [unknown-field]", `entry: unknown field "entry" (the first node is named by "start")`},
		{"a route's if and goto", "ifgoto.cue", hostileHeader + "nodes: a: {type: \"route\", routes: [{if: \"n > 1\", goto: \"END\"}], default: \"END\"}\n",
			"8:37: [unknown-field]", `nodes.a.routes.0.if: unknown field "if" (the condition is "when")`},
		{"a node's conditional_edges", "condedges.yaml", yamlHeader + "nodes:\n  a: {type: route, default: END, conditional_edges: {x: y}}\n",
			"8:34: [unknown-field]", `nodes.a.conditional_edges: unknown field "conditional_edges" (conditional edges are routes: [{when: EXPR, to: NODE}] with a default)`},
		{"an llm's prompt", "prompt.yaml", yamlHeader + "nodes:\n  a: {type: llm, config: {prompt: hi, model: \"script:r.json\"}, next: END}\n",
			"8:27: [unknown-field]", `nodes.a.config.prompt: unknown field "prompt" (did you mean "system"?)`},
		{"a reply's message", "message.cue", hostileHeader + "nodes: a: {type: \"reply\", config: message: \"hi\", next: \"END\"}\n",
			"8:35: [unknown-field]", `nodes.a.config.message: unknown field "message" (did you mean "text"?)`},
		{"a key like none of a node's", "foo.cue", hostileHeader + "nodes: a: {type: \"reply\", config: text: \"hi\", next: \"END\", foo: 1}\n",
			"8:60: [unknown-field]", `nodes.a.foo: unknown field "foo" (the keys here: type, config, next, routes, default, map, wait_for, timeout, retry, call_retry, catch, cache, description)`},
		{"a closed cue definition", "closed.cue", hostileHeader + "#R: {type: \"reply\", next: \"END\"}\nnodes: a: #R & {config: text: \"hi\"}\n",
			"9:17: [unknown-field]", `nodes.a.config: field "config" is not allowed by a definition of the file it is unified with: a CUE definition (#Name) is closed; declare "config" in it, or share the shape as a hidden field (_name), which is open`},
		{"a misspelt key of nodes a comprehension makes", "compr.cue", hostileHeader + "_names: [\"a\", \"b\"]\nnodes: {\n\tfor i, n in _names {\n\t\t(n): {type: \"reply\", config: text: \"hi\", nxt: \"END\"}\n\t}\n}\n",
			"11:44: [unknown-field]", `nodes.a.nxt: unknown field "nxt" (did you mean "next"?)`},
		{"an unknown target in nodes a comprehension makes", "compr2.cue", hostileHeader + "_names: [\"a\"]\nnodes: {\n\tfor n in _names {\n\t\t\"\\(n)\": {type: \"reply\", config: text: \"hi\", next: \"ENDD\"}\n\t}\n}\n",
			"11:54: [unknown-target]", `node "a": next names unknown node "ENDD"; did you mean "END"?`},
		{"nodes as a list", "nodelist.yaml", yamlHeader + "nodes:\n  - name: a\n    type: reply\n",
			"7:1: [type-mismatch]", `nodes: want object, got list (nodes are keyed by name: nodes: {greet: {type: "reply", …}})`},
		{"no nodes", "nonodes.cue", hostileHeader,
			"7:9: [unknown-start]", `start names unknown node "a": the graph declares no nodes (nodes: {a: {type: …}})`},
		{"a node declared twice", "twice.cue", hostileHeader + "nodes: {\n\ta: {type: \"reply\", config: text: \"hi\"}\n\ta: next: \"END\"\n}\n", "10:2: [duplicate-name]", `nodes.a: node "a" is declared twice (first at line 9): declare it once, with all its keys`},

		// Expressions.
		{"=> for >=", "arrow.cue", hostileHeader + "nodes: a: {type: \"route\", routes: [{when: \"n => 3\", to: \"END\"}], default: \"END\"}\n", "8:46: [expr-error]", `unexpected token Operator("=") (write >= for at least; => is not an operator of expressions)`},
		{"a misspelt field of state", "statefield.cue", hostileHeader + "nodes: a: {type: \"route\", routes: [{when: \"state.m > 1\", to: \"END\"}], default: \"END\"}\n",
			"8:50: [expr-error]", `expression "state.m > 1": unknown field m; did you mean "n"?`},
		{"a misspelt key of a vars object", "varkey.cue", hostileHeader + "vars: cfg: {limit: 3}\nnodes: a: {type: \"route\", routes: [{when: \"n > cfg.limt\", to: \"END\"}], default: \"END\"}\n",
			"9:52: [expr-error]", `expression "n > cfg.limt": unknown field limt; did you mean "limit"?`},
		{"item where the map says as", "item.cue", strings.Replace(hostileHeader, `n:        {type: "int"}`, `n:        {type: "list<string>"}`, 1) +
			"nodes: {\n\ta: {type: \"route\", map: {over: \"n\", to: \"w\", as: \"topic\"}}\n\tw: {type: \"reply\", config: text: \"${item}\", next: \"END\"}\n}\n",
			"10:38: [template-error]", `template "${item}": unknown name "item": node "w" sees its map item as "topic" (the as of the map that sends it items)`},
		{"a map item outside its target", "outside.cue", strings.Replace(hostileHeader, `n:        {type: "int"}`, `n:        {type: "list<string>"}`, 1) +
			"nodes: {\n\ta: {type: \"route\", map: {over: \"n\", to: \"w\"}}\n\tw: {type: \"reply\", config: text: \"hi\", next: \"j\"}\n\tj: {type: \"reply\", wait_for: [\"w\"], config: text: \"${item}\", next: \"END\"}\n}\n",
			"11:55: [template-error]", `unknown name "item": "item" is the item of node "a"'s map, seen only in the config of its target "w"`},
		{"one item for an appending list", "item.cue", strings.Replace(hostileHeader, `n:        {type: "int"}`, `n:        {type: "list<string>", reducer: "append"}`, 1) + "nodes: a: {type: \"set\", config: set: n: \"'x'\", next: \"END\"}\n",
			"8:42: [expr-error]", `expression "'x'": expression must yield list, but yields string (a list field is written a list: ['x'] for one item)`},

		{"map over a number", "over.cue", hostileHeader + "nodes: {\n\ta: {type: \"route\", map: {over: \"n\", to: \"b\"}}\n\tb: {type: \"reply\", config: text: \"hi\", next: \"END\"}\n}\n",
			"9:34: [expr-error]", `expression "n": expression must yield list, but yields int`},

		// Files that are not CUE or YAML by name, or hold several YAML documents.
		{"a graph named .json", "graph.json", yamlHeader + hostileYAMLNode, "1:1: [file-name]", `a graph file's name ends in .cue, .yaml or .yml, not .json: rename it graph.yaml (JSON is valid YAML)`},
		{"a graph with no extension", "graph", hostileHeader + hostileNode, "1:1: [file-name]", `"graph" has none: rename it graph.cue or graph.yaml`},
		{"two yaml documents", "docs.yaml", yamlHeader + hostileYAMLNode + "---\nname: other\n", "9:1: [syntax]", `a second YAML document starts here, and a graph file is one document`},
		{"an alias with no anchor", "alias.yaml", yamlHeader + "nodes:\n  a: *reply\n", "8:6: [syntax]", `alias *reply names no anchor: an alias refers to an anchor &reply defined before it in the file`},

		// YAML that reads otherwise than it looks.
		{"a yaml value with a colon", "colon.yaml", yamlHeader + "nodes:\n  a:\n    type: reply\n    config:\n      text: Note: this is it\n    next: END\n",
			"11:13: [syntax]", `the value Note: this is it holds ": ", which YAML reads as the start of a mapping: quote it, text: "Note: this is it"`},
		{"a yaml flow value with a colon", "flowcolon.yaml", yamlHeader + "nodes:\n  a: {type: reply, config: {text: Hello: world}, next: END}\n",
			"8:35: [syntax]", `the value Hello: world holds ": ", which YAML reads as the start of a mapping: quote it, text: "Hello: world"`},
		{"yaml keys chained as in cue", "chain.yaml", yamlHeader + "nodes: a: {type: reply, config: {text: hi}, next: END}\n",
			"7:8: [syntax]", `YAML does not chain keys on one line (nodes: a: …, as CUE does): write a: on a line of its own, indented under nodes:`},
		{"a misspelt key brought by a yaml merge", "merge.yaml", yamlHeader + "vars:\n  base: &base {type: reply, nxt: END}\nnodes:\n  a: {<<: *base, config: {text: hi}}\n",
			"10:3: [unknown-field]", `nodes.a.nxt: unknown field "nxt" (did you mean "next"?)`},
		{"a yaml condition starting with !", "tag.yaml", yamlHeader + "nodes:\n  a:\n    type: route\n    routes:\n      - when: !done\n        to: END\n    default: END\n",
			"11:15: [syntax]", `!done starts with !, which YAML reads as a tag: quote it, when: "!done"`},

		{"a control character in yaml", "bell.yaml", strings.Replace(yamlHeader, "name: h", "name: \"h\a\"", 1) + hostileYAMLNode,
			"2:9: [encoding]", `control character U+0007 is not text: remove it (inside a quoted string, write it as \u0007)`},
		{"a NUL in cue", "nul.cue", strings.Replace(hostileHeader, `name:        "h"`, "name:        \"h\"\x00", 1) + hostileNode,
			"2:17: [encoding]", `control character U+0000 is not text`},

		// Test cases.
		{"a misspelt test key", "mock.cue", hostileHeader + hostileNode + "tests: [{name: \"t\", mock: a: update: n: 1, turns: [{input: \"hi\", expect: staus: \"completed\"}]}]\n",
			"9:21: [test-unknown-key]", `a test case has no key "mock"; did you mean "mocks"? (allowed keys: name, description, mocks, llm, turns)`},
		{"a misspelt key of a scripted reply", "reply.cue", hostileHeader + hostileNode + "tests: [{name: \"t\", llm: [\"hi\", {tool_call: [{name: \"x\"}]}], turns: [{input: \"hi\"}]}]\n",
			"9:34: [test-unknown-key]", `a scripted reply has no key "tool_call"; did you mean "tool_calls"?`},
		{"a resume of an interrupt no node raises", "resume.cue", hostileHeader + hostileNode + "tests: [{name: \"t\", turns: [{input: \"hi\"}, {resume: \"yes\", interrupt: \"b\"}]}]\n",
			"9:72: [test-unknown-node]", `turn 2: interrupt "b" names no node of the graph or its subgraphs, nor an interrupt id of one (NODE-…); did you mean "a"?`},
		{"a scripted reply of a number", "replynum.yaml", yamlHeader + hostileYAMLNode + "tests:\n  - name: t\n    llm: [42]\n    turns: [{input: hi}]\n",
			"11:11: [test-invalid-value]", `scripted reply 1 must be a string or an object {content | json | tool_calls, node?}, got number`},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.file)
			writeFile(t, path, tt.src)
			want := path + ":" + tt.at + " "
			commands := [][]string{{"validate", path}, {"test", path}}
			if !strings.Contains(tt.at, "[test-") { // run does not read the test cases
				commands = append(commands, []string{"run", path, "-i", "hi", "--data-dir", filepath.Join(dir, "data")})
			}
			for _, args := range commands {
				out, errOut, code := run(t, args...)
				all := out + errOut
				if code != 1 || !strings.Contains(all, want) || !strings.Contains(all, tt.want) {
					t.Errorf("%s: exit %d, want 1 with\n%s… %s\ngot:\n%s", args[0], code, want, tt.want, all)
				}
				// The advice for one item is given only where a list field is written.
				if strings.Contains(all, "for one item") != strings.Contains(tt.want, "for one item") {
					t.Errorf("%s: advice for one item where it does not apply:\n%s", args[0], all)
				}
				assertNoGoTrace(t, args[0], all)
			}
		})
	}
}

// TestMisspeltMessageKeysAreWarned validates and runs graphs whose
// conditions and templates read a chat message by a misspelt key, which reads as nil and
// so compiles: validate warns at the key with the key meant (exit 0, the
// graph is valid), run and test print the same warning, and keys of other lists
// read inside a condition over messages are left alone.
func TestMisspeltMessageKeysAreWarned(t *testing.T) {
	route := func(when string) string {
		return `{type: "route", routes: [{when: "` + when + `", to: "END"}], default: "END"}`
	}
	tests := []struct {
		name, node string
		want       string // the warning after the path, or "" for none
	}{
		{"an indexed message", route("messages[-1].contnet == 'x'"), `8:57: warning: [unknown-message-key] a message has no key "contnet"; did you mean "content"?`},
		{"the last message", route("last(messages).rol == 'user'"), `8:59: warning: [unknown-message-key] a message has no key "rol"; did you mean "role"?`},
		{"each message of a predicate", route("any(messages, {.contnt == 'x'})"), `8:60: warning: [unknown-message-key] a message has no key "contnt"; did you mean "content"?`},
		{"a template", `{type: "reply", config: text: "You said ${messages[-1].contnet}", next: "END"}`, `8:66: warning: [unknown-message-key] a message has no key "contnet"; did you mean "content"?`},
		{"a tool call inside a predicate", route("any(messages, {any(.tool_calls ?? [], {.nam == 'x'})})"), ""},
		{"langgraph's keys", route("messages[0].additional_kwargs != nil && messages[0].type == 'human'"), ""},
	}
	dir := t.TempDir()
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("g%d.cue", i))
			writeFile(t, path, hostileHeader+"nodes: a: "+tt.node+"\n")
			for _, args := range [][]string{
				{"validate", path},
				{"run", path, "-i", "hi", "--data-dir", filepath.Join(dir, "data")},
				{"test", path},
			} {
				out, errOut, code := run(t, args...)
				all := out + errOut
				warned := strings.Contains(all, "[unknown-message-key]")
				if code != 0 || warned != (tt.want != "") || (tt.want != "" && !strings.Contains(all, path+":"+tt.want)) {
					t.Errorf("%s: exit %d, want 0 with %q:\n%s", args[0], code, tt.want, all)
				}
			}
		})
	}
}

// TestExpectedEventTypesCloseToARunsAreWarned validates test cases that
// expect events: a type a letter or two from one every run sends is a
// warning naming it (the case would fail, looking for an event no one
// sends), while a type of a node's own events, which validate cannot list,
// is left alone.
func TestExpectedEventTypesCloseToARunsAreWarned(t *testing.T) {
	tests := []struct{ name, typ, want string }{
		{"a misspelt node_start", "node_strat", `9:68: warning: [test-unknown-event] turn 1: expected event 0 has type "node_strat"; did you mean "node_start"?`},
		{"a run's own event", "node_start", ""},
		{"a node's own event", "cache_hit", ""},
	}
	dir := t.TempDir()
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("e%d.cue", i))
			writeFile(t, path, hostileHeader+hostileNode+"tests: [{name: \"t\", turns: [{input: \"hi\", expect: events: [{type: \""+tt.typ+"\"}]}]}]\n")
			out, errOut, code := run(t, "validate", path)
			all := out + errOut
			warned := strings.Contains(all, "[test-unknown-event]")
			if code != 0 || warned != (tt.want != "") || (tt.want != "" && !strings.Contains(all, path+":"+tt.want)) {
				t.Errorf("validate: exit %d, want 0 with %q:\n%s", code, tt.want, all)
			}
		})
	}
}
