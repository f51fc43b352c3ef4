package load

import (
	"strings"
	"testing"
)

const hdr = "dsl_version: \"graphctl/v1\"\nname: \"g\"\nstart: \"a\"\n"

func TestDiagnostics(t *testing.T) {
	tests := []struct {
		name string
		file string
		src  string
		// want lists "line:col code" of every diagnostic, in order.
		want []string
		// msg is a substring of the first diagnostic's message.
		msg string
	}{
		{"missing node type", "g.cue", hdr + "nodes: {\n\ta: {next: \"END\"}\n}\n",
			[]string{"5:2 missing-field"}, `nodes.a: missing required field "type"`},
		{"config enum", "g.cue", hdr + "nodes: {\n\ta: {type: \"loadtest_reply\", config: {text: \"x\", role: \"user\"}}\n}\n",
			[]string{"5:57 invalid-value"}, `must be one of "assistant", "system"`},
		{"config unknown field", "g.cue", hdr + "nodes: {\n\ta: {type: \"loadtest_reply\", config: {txt: \"x\"}}\n}\n",
			[]string{"5:39 unknown-field"}, `unknown field "txt" (did you mean "text"?)`},
		{"config of a type without config", "g.cue", hdr + "nodes: a: {type: \"loadtest_route\", config: {x: 1}}\n",
			[]string{"4:45 unknown-field"}, `unknown field "x"`},
		{"config missing", "g.cue", hdr + "nodes: {\n\ta: {type: \"loadtest_reply\"}\n}\n",
			[]string{"5:2 missing-field"}, `nodes.a.config: missing required field "text"`},
		{"wrong kind", "g.cue", hdr + "nodes: {\n\ta: {type: \"loadtest_route\", timeout: 5}\n}\n",
			[]string{"5:39 type-mismatch"}, "nodes.a.timeout: want string, got int"},
		{"unknown node type", "g.cue", hdr + "nodes: {\n\ta: {type: \"loadtest_replay\", config: {zzz: 1}}\n}\n",
			[]string{"5:13 unknown-node-type"}, `did you mean "loadtest_reply"?`},
		{"unknown node field", "g.cue", hdr + "nodes: {\n\ta: {type: \"loadtest_route\", nxt: \"END\"}\n}\n",
			[]string{"5:30 unknown-field"}, `did you mean "next"?`},
		{"unknown top-level field", "g.cue", hdr + "bogus: 1\nnodes: {}\n",
			[]string{"4:1 unknown-field"}, `unknown field "bogus"`},
		{"next disjunction", "g.cue", hdr + "nodes: {\n\ta: {type: \"loadtest_route\", next: 5}\n}\n",
			[]string{"5:36 invalid-value"}, "nodes.a.next: must be a string or a list of strings; got 5"},
		{"reducer disjunction", "g.cue", hdr + "state: x: {type: \"string\", reducer: 5}\nnodes: {}\n",
			[]string{"4:37 invalid-value"}, "state.x.reducer: must be a string or an object with expr (a string); got 5"},
		{"bad duration", "g.cue", hdr + "nodes: {\n\ta: {type: \"loadtest_route\", timeout: \"5 sec\"}\n}\n",
			[]string{"5:40 invalid-duration"}, `"5 sec" is not a duration`},
		{"bad retry interval", "g.cue", hdr + "nodes: a: {type: \"loadtest_route\", retry: {initial_interval: \"1x\", max_interval: \"-1s\"}}\n",
			[]string{"4:63 invalid-duration", "4:83 invalid-duration"}, "initial_interval"},
		{"duplicate node", "g.cue", hdr + "nodes: {\n\ta: {type: \"loadtest_route\"}\n\ta: {type: \"loadtest_route\"}\n}\n",
			[]string{"6:2 duplicate-name"}, `node "a" is declared twice`},
		{"duplicate state field", "g.cue", hdr + "state: {\n\tx: {type: \"int\"}\n\tx: {type: \"int\"}\n}\nnodes: {}\n",
			[]string{"6:2 duplicate-name"}, `state field "x"`},
		{"bad type", "g.cue", hdr + "state: x: {type: \"lst<string>\"}\nnodes: {}\n",
			[]string{"4:19 invalid-type"}, `unknown type "lst<string>"`},
		{"dsl version missing", "g.cue", "name: \"g\"\nstart: \"a\"\nnodes: {}\n",
			[]string{"1:1 dsl-version"}, "missing dsl_version"},
		{"dsl version wrong", "g.cue", "dsl_version: \"graphctl/v2\"\nname: \"g\"\nstart: \"a\"\nnodes: {}\n",
			[]string{"1:15 dsl-version"}, `got "graphctl/v2"`},
		{"cue syntax", "g.cue", hdr + "nodes: {\n\ta: {type: \"loadtest_route\",\n}\n",
			[]string{"6:3 syntax"}, "expected '}'"},
		{"route missing to", "g.cue", hdr + "nodes: {\n\ta: {type: \"loadtest_route\", routes: [{when: \"x\"}]}\n}\n",
			[]string{"5:39 missing-field"}, `nodes.a.routes.0: missing required field "to"`},
		{"bad node name", "g.cue", hdr + "nodes: {\n\t\"1a\": {type: \"loadtest_route\"}\n}\n",
			[]string{"5:2 invalid-name"}, "must be an identifier"},
		{"config element kind and bound", "g.cue", hdr + "nodes: {\n\ta: {type: \"loadtest_set\", config: {set: {x: 1}, limit: 0}}\n}\n",
			[]string{"5:46 type-mismatch", "5:57 invalid-value"}, "nodes.a.config.set.x: want string, got int"},
		{"bounds", "g.cue", hdr + "nodes: a: {type: \"loadtest_route\", retry: {max_attempts: 0, backoff: 0.5}}\n",
			[]string{"4:58 invalid-value", "4:70 invalid-value"}, "nodes.a.retry.max_attempts: must be an int, at least 1; got 0"},
		{"unknown reference", "g.cue", hdr + "x: y\nnodes: {}\n",
			[]string{"4:1 unknown-reference"}, `x: y is not defined; to write the text y, quote it: "y"`},
		{"test without name", "g.cue", hdr + "tests: [{turns: []}]\nnodes: {}\n",
			[]string{"4:9 missing-field"}, `tests.0: missing required field "name"`},
		{"missing start and name", "g.cue", "dsl_version: \"graphctl/v1\"\nnodes: {}\n",
			[]string{"1:1 missing-field", "1:1 missing-field"}, "the graph: missing required field"},
		{"several problems at once", "g.cue", hdr + "nodes: {\n\ta: {type: \"nope\"}\n\tb: {type: \"loadtest_route\", timeout: \"x\"}\n\tc: {next: \"a\"}\n}\n",
			[]string{"5:13 unknown-node-type", "6:40 invalid-duration", "7:2 missing-field"}, `unknown node type "nope"`},
		{"not a struct", "g.yaml", "- a\n- b\n",
			[]string{"1:1 type-mismatch"}, "must be an object of fields"},
		// One document per file: a --- after content starts a second one.
		{"yaml second document", "g.yaml", "dsl_version: graphctl/v1\nname: g\nstart: a\nnodes: {}\n---\nname: h\n",
			[]string{"5:1 syntax"}, "a second YAML document starts here"},
		{"yaml empty second document", "g.yaml", "dsl_version: graphctl/v1\nname: g\nstart: a\nnodes: {}\n--- # more\n",
			[]string{"5:1 syntax"}, "a second YAML document starts here"},
		{"yaml content after the end marker", "g.yaml", "dsl_version: graphctl/v1\nname: g\nstart: a\nnodes: {}\n...\n# more\nname: h\n",
			[]string{"5:1 syntax"}, "a second YAML document starts here"},
		{"yaml start and end markers of one document", "g.yaml", "# a graph\n---\ndsl_version: graphctl/v1\nname: g\nstart: a\ndescription: |\n  text\n  ---\nnodes: {a: {type: loadtest_route}}\n...\n",
			nil, ""},
		{"yaml 1.2 directive", "g.yaml", "# a graph\n%YAML 1.2\n---\ndsl_version: graphctl/v1\nname: g\nstart: a\nnodes: {}\n",
			[]string{"2:1 syntax"}, "remove the %YAML line"},
		{"yaml alias of no anchor", "g.yaml", "dsl_version: graphctl/v1\nname: g\nstart: a\nnodes:\n  a: {type: loadtest_route, retry: *r}\n",
			[]string{"5:36 syntax"}, "alias *r names no anchor"},
		{"yaml syntax", "g.yaml", "dsl_version: graphctl/v1\nname: g\nstart: a\nnodes:\n  a:\n    type: [\n",
			[]string{"6:11 syntax"}, "sequence end token ']' not found"},
		{"yaml unknown field", "g.yaml", "dsl_version: graphctl/v1\nname: g\nstart: a\nnodes:\n  a:\n    type: loadtest_route\n    bogus: 1\n",
			[]string{"7:5 unknown-field"}, `nodes.a.bogus: unknown field "bogus"`},
		{"yaml duplicate node", "g.yaml", "dsl_version: graphctl/v1\nname: g\nstart: a\nnodes:\n  a:\n    type: loadtest_route\n  a:\n    type: loadtest_route\n",
			[]string{"7:3 duplicate-name"}, "declared twice"},
		{"yaml wrong kind", "g.yaml", "dsl_version: graphctl/v1\nname: g\nstart: a\nnodes:\n  a:\n    type: loadtest_route\n    timeout: 30\n",
			[]string{"7:14 type-mismatch"}, "want string, got int"},
		{"yaml config enum", "g.yaml", "dsl_version: graphctl/v1\nname: g\nstart: a\nnodes:\n  a:\n    type: loadtest_reply\n    config: {text: hi, role: \"user\"}\n",
			[]string{"7:31 invalid-value"}, `must be one of "assistant", "system"`},
		// Every YAML line break counts as one line, as the user's editor shows it.
		{"yaml crlf line breaks", "g.yaml", "dsl_version: graphctl/v1\r\nname: g\r\nstart: a\r\nnodes:\r\n  a:\r\n    type: loadtest_route\r\n    timeout: 30\r\n",
			[]string{"7:14 type-mismatch"}, "want string, got int"},
		{"yaml cr line breaks", "g.yaml", "dsl_version: graphctl/v1\rname: g\rstart: a\rnodes:\r  a:\r    type: loadtest_route\r    timeout: 30\r",
			[]string{"7:14 type-mismatch"}, "want string, got int"},
		{"yaml nel and line separator breaks", "g.yaml", "dsl_version: graphctl/v1\u0085name: g\u2028start: a\u2029nodes:\n  a:\n    type: loadtest_route\n    timeout: 30\n",
			[]string{"7:14 type-mismatch"}, "want string, got int"},
		{"yaml scalar after cr breaks", "g.yaml", "\r\r0",
			[]string{"1:1 type-mismatch"}, "must be an object of fields"},
		// Columns count bytes in YAML as in CUE, also after multi-byte characters.
		{"yaml value after multi-byte characters", "g.yaml", "dsl_version: graphctl/v1\nname: g\nstart: a\nnodes:\n  a: {description: \"éé\", timeout: \"x\", type: loadtest_route}\n",
			[]string{"5:38 invalid-duration"}, `"x" is not a duration`},
		{"yaml label after multi-byte characters", "g.yaml", "dsl_version: graphctl/v1\nname: g\nstart: a\nnodes:\n  a: {description: 日本, bogus: 1, type: loadtest_route}\n",
			[]string{"5:28 unknown-field"}, `unknown field "bogus"`},
		{"yaml values along one line of multi-byte characters", "g.yaml", "dsl_version: graphctl/v1\nname: g\nstart: a\nnodes:\n  a: {description: \"é\", cache: {key: \"ü\", ttl: \"ñ\"}, timeout: \"日\", type: loadtest_route}\n",
			[]string{"5:51 invalid-duration", "5:67 invalid-duration"}, `is not a duration`},
		{"cue value after multi-byte characters", "g.cue", hdr + "nodes: a: {description: \"éé\", timeout: \"x\", type: \"loadtest_route\"}\n",
			[]string{"4:43 invalid-duration"}, `"x" is not a duration`},
		// A file with nothing in it says so, once, whatever the format.
		{"empty cue", "g.cue", "", []string{"1:1 empty-file"}, "the file is empty"},
		{"cue of comments and a package clause", "g.cue", "// draft\npackage g\n", []string{"1:1 empty-file"}, "the file is empty"},
		{"empty yaml", "g.yaml", "", []string{"1:1 empty-file"}, "the file is empty"},
		{"yaml of blank lines and comments", "g.yaml", "\n   \n# draft\n", []string{"1:1 empty-file"}, "the file is empty"},
		{"yaml of a lone document marker", "g.yaml", "---\n", []string{"1:1 empty-file"}, "the file is empty"},
		{"yaml null", "g.yaml", "null\n", []string{"1:1 empty-file"}, "the file is empty"},
		// Bytes that are not UTF-8 are reported where they are, once.
		{"yaml with a latin-1 byte", "g.yaml", "dsl_version: graphctl/v1\nname: caf\xe9\n", []string{"2:10 encoding"}, "byte 0xe9 is not UTF-8"},
		{"cue with a latin-1 byte", "g.cue", hdr + "description: \"caf\xe9\"\n", []string{"4:18 encoding"}, "byte 0xe9 is not UTF-8"},
		{"utf-16 file", "g.cue", "\xff\xfed\x00s\x00", []string{"1:1 encoding"}, "UTF-16"},
		// Imports: only CUE's pure standard packages exist.
		{"import of os", "g.cue", "import \"os\"\n" + hdr + "description: os.Getenv(\"HOME\")\nnodes: {}\n",
			[]string{"1:8 invalid-import"}, `package "os" cannot be imported`},
		{"import of a module", "g.cue", "import \"example.com/x\"\n" + hdr + "description: x.Y\nnodes: {}\n",
			[]string{"1:8 invalid-import", "5:1 invalid-value"}, `package "example.com/x" cannot be imported`},
		// A YAML number past 64 bits names the number, not the decoder's text.
		{"yaml number past 64 bits", "g.yaml", "dsl_version: graphctl/v1\nname: g\nstart: a\nvars: {big: 123456789012345678901234567890}\nnodes: {}\n",
			[]string{"4:13 invalid-number"}, "vars.big: the number 123456789012345678901234567890 is too large"},
		// A definition of the file's own that contains itself is placed at the definition.
		{"definition that contains itself", "g.cue", hdr + "#A: {a: #A}\nvars: x: #A\nnodes: {}\n",
			[]string{"4:1 invalid-value"}, "#A.a: structural cycle"},
		// YAML parser errors are placed at the offending token, not at the
		// start of the mapping around it.
		{"yaml misindented key", "g.yaml", "dsl_version: graphctl/v1\nname: g\nstart: a\nnodes:\n  a:\n    type: loadtest_route\n   next: END\n",
			[]string{"7:4 syntax"}, "not allowed in this context"},
		{"yaml unclosed flow mapping", "g.yaml", "dsl_version: graphctl/v1\nname: g\nstart: a\nnodes: {a: {type: loadtest_route}\n",
			[]string{"4:8 syntax"}, "flow mapping end token '}'"},
		{"yaml tab", "g.yaml", "dsl_version: graphctl/v1\nname: g\nstart: a\nnodes:\n\ta: {type: loadtest_route}\n",
			[]string{"5:1 syntax"}, "YAML indents with spaces"},
		// A YAML key repeated in one mapping is an error, not a silent merge;
		// a merge key's override is not a repetition.
		{"yaml top-level key twice", "g.yaml", "dsl_version: graphctl/v1\nname: g\nstart: a\nnodes:\n  a: {type: loadtest_route, next: END}\nnodes:\n  b: {type: loadtest_route, next: END}\n",
			[]string{"6:1 duplicate-key"}, `nodes: key "nodes" appears twice in this mapping`},
		{"yaml merge key override", "g.yaml", "dsl_version: graphctl/v1\nname: g\nstart: a\nvars:\n  r: &r {type: loadtest_route, next: b}\nnodes:\n  a: {<<: *r, next: END}\n",
			nil, ""},
		// YAML reads 1.0 unquoted as a number: the message says to quote it.
		{"yaml number for a string", "g.yaml", "dsl_version: graphctl/v1\nname: g\nversion: 1.0\nstart: a\nnodes:\n  a: {type: loadtest_route, next: END}\n",
			[]string{"3:10 type-mismatch"}, `version: want string, got number (YAML reads 1.0 as a number: quote it, "1.0", to write text)`},
		// An x- key for YAML anchors, as docker-compose has, says where they go.
		{"yaml x- key", "g.yaml", "dsl_version: graphctl/v1\nname: g\nstart: a\nx-reply: &reply {type: loadtest_route, next: END}\nnodes:\n  a: *reply\n",
			[]string{"4:1 unknown-field"}, "YAML anchors, go under vars"},
		// LangGraph's keys get their graphctl spelling.
		{"langgraph entry point", "g.cue", hdr + "entry_point: \"a\"\nnodes: {}\n",
			[]string{"4:1 unknown-field"}, `unknown field "entry_point" (the first node is named by "start")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, d := Source(tt.file, []byte(tt.src))
			var got []string
			for _, x := range d {
				if x.File != tt.file {
					t.Errorf("diagnostic outside the user's file: %v", x)
				}
				got = append(got, strings.Join([]string{itoa(x.Line) + ":" + itoa(x.Col), x.Code}, " "))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Fatalf("diagnostics:\n%v\ngot  %q\nwant %q", d, got, tt.want)
			}
			if len(tt.want) > 0 && !strings.Contains(d[0].Message, tt.msg) {
				t.Errorf("message %q does not contain %q", d[0].Message, tt.msg)
			}
		})
	}
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
