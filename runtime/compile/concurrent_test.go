package compile

import (
	"fmt"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/runtime/load"
)

// TestValidateConcurrentWrites checks which writers of one field validate
// reports as writing it in the same step: nodes started together by a next
// list (and their plain successors, step after step) and a map's tasks, when
// the field keeps one value per step; not sequential writers, writers that
// only may meet, nor fields whose reducer merges the writes.
func TestValidateConcurrentWrites(t *testing.T) {
	const head = `dsl_version: "graphctl/v1"
name: "w"
start: "split"
`
	tests := []struct {
		name, src string
		// want is "LINE:COL fragment…" for each expected concurrent-write
		// error, in order; none when the graph is fine.
		want []string
	}{
		{"fan-out writers of a replace field", `
state: answer: {type: "string"}
nodes: {
	split: {type: "route", next: ["a", "b"]}
	a: {type: "set", config: set: answer: "'a'", next: "END"}
	b: {type: "set", config: set: answer: "'b'", next: "END"}
}`, []string{`8:41 nodes "a" and "b" both write field "answer" in the same step ("split" fans out to "a" and "b")`}},
		{"fan-out writers of a field with an explicit replace reducer", `
state: answer: {type: "string", reducer: "replace"}
nodes: {
	split: {type: "route", next: ["b", "a"]}
	a: {type: "set", config: set: answer: "'a'", next: "END"}
	b: {type: "set", config: set: answer: "'b'", next: "END"}
}`, []string{`8:41 nodes "a" and "b" both write field "answer"`}},
		{"writers one step after the fan-out", `
state: {answer: {type: "string"}, log: {type: "list<string>", reducer: "append"}, messages: {type: "messages"}}
nodes: {
	split: {type: "route", next: ["a", "b"]}
	a: {type: "set", config: set: log: "['a']", next: "a2"}
	b: {type: "set", config: set: log: "['b']", next: "b2"}
	a2: {type: "set", config: set: answer: "'a'", next: "END"}
	b2: {type: "reply", config: text: "b", next: "b3"}
	b3: {type: "set", config: set: answer: "'b'", next: "END"}
}`, nil},
		{"writers at the same depth of two branches", `
state: answer: {type: "string"}
nodes: {
	split: {type: "route", next: ["a", "b"]}
	a: {type: "route", next: "a2"}
	b: {type: "route", next: "b2"}
	a2: {type: "set", config: set: answer: "'a'", next: "END"}
	b2: {type: "set", config: set: answer: "'b'", next: "END"}
}`, []string{`10:42 nodes "a2" and "b2" both write field "answer" in the same step (the one after "split" fans out`}},
		{"a map target writing a replace field", `
state: {topics: {type: "list<string>"}, answer: {type: "string"}}
nodes: {
	split: {type: "route", map: {over: "topics", to: "w"}, next: "END"}
	w: {type: "set", config: set: answer: "item", next: "END"}
}`, []string{`7:41 node "w" writes field "answer" once per item of "topics" in the same step (it is the target of "split"'s map)`}},
		{"sequential writers", `
state: answer: {type: "string"}
nodes: {
	split: {type: "set", config: set: answer: "'s'", next: "a"}
	a: {type: "set", config: set: answer: "'a'", next: "b"}
	b: {type: "set", config: set: answer: "'b'", next: "END"}
}`, nil},
		{"writers on alternative routes", `
state: {answer: {type: "string"}, n: {type: "int"}}
nodes: {
	split: {type: "route", routes: [{when: "n > 0", to: "a"}], default: "b"}
	a: {type: "set", config: set: answer: "'a'", next: "END"}
	b: {type: "set", config: set: answer: "'b'", next: "END"}
}`, nil},
		{"fan-out writers of an append field", `
state: answer: {type: "list<string>", reducer: "append"}
nodes: {
	split: {type: "route", next: ["a", "b"]}
	a: {type: "set", config: set: answer: "['a']", next: "END"}
	b: {type: "set", config: set: answer: "['b']", next: "END"}
}`, nil},
		{"fan-out writers of a merge field", `
state: scores: {type: "map<int>", reducer: "merge"}
nodes: {
	split: {type: "route", next: ["a", "b"]}
	a: {type: "set", config: set: scores: "{a: 1}", next: "END"}
	b: {type: "set", config: set: scores: "{b: 2}", next: "END"}
}`, nil},
		{"fan-out writers of the messages field", `
state: messages: {type: "messages"}
nodes: {
	split: {type: "route", next: ["a", "b"]}
	a: {type: "reply", config: text: "a", next: "END"}
	b: {type: "reply", config: text: "b", next: "END"}
}`, nil},
		{"fan-out writers of different fields", `
state: {x: {type: "string"}, y: {type: "string"}}
nodes: {
	split: {type: "route", next: ["a", "b"]}
	a: {type: "set", config: set: x: "'a'", next: "END"}
	b: {type: "set", config: set: y: "'b'", next: "END"}
}`, nil},
		{"a join after the fan-out writes alone", `
state: {answer: {type: "string"}, log: {type: "list<string>", reducer: "append"}}
nodes: {
	split: {type: "route", next: ["a", "b"]}
	a: {type: "set", config: set: log: "['a']", next: "j"}
	b: {type: "set", config: set: log: "['b']", next: "j"}
	j: {type: "set", wait_for: ["a", "b"], config: set: answer: "'done'", next: "END"}
}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, diags := load.Source("w.cue", []byte(head+strings.TrimPrefix(tt.src, "\n")))
			if diags.HasErrors() || g == nil {
				t.Fatalf("load:\n%s", diags.Error())
			}
			_, diags = Compile(g, Options{LookupEnv: testEnv})
			var gotWrites []diag.Diagnostic
			for _, d := range diags {
				if d.Code == CodeConcurrentWrite {
					gotWrites = append(gotWrites, d)
				} else {
					t.Errorf("unexpected diagnostic %s", d)
				}
			}
			if len(gotWrites) != len(tt.want) {
				t.Fatalf("want %d concurrent-write errors, got:\n%s", len(tt.want), diags.Error())
			}
			for i, want := range tt.want {
				d := gotWrites[i]
				at, fragment, _ := strings.Cut(want, " ")
				if pos := fmt.Sprintf("%d:%d", d.Line, d.Col); pos != at || !strings.Contains(d.Message, fragment) {
					t.Errorf("got %s\nwant at %s a message with %s", d, at, fragment)
				}
				if d.Severity != diag.Error || !strings.Contains(d.Message, "reducer") {
					t.Errorf("%s: want an error that names the fix", d)
				}
			}
		})
	}
}
