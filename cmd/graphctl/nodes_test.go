package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// `graphctl nodes TYPE` shows, for every config key, what it accepts, whether
// it is required, its default, and how a string there is read; the JSON
// Schema's config properties say the same.
func TestNodesShowHowConfigStringsAreRead(t *testing.T) {
	out, errOut, code := run(t, "nodes", "--json", "reply", "set", "memory_retrieve", "tool", "interrupt")
	if code != 0 {
		t.Fatalf("exit %d %s", code, errOut)
	}
	var infos []nodeTypeInfo
	if err := json.Unmarshal([]byte(out), &infos); err != nil || len(infos) != 5 {
		t.Fatalf("nodes --json: %v\n%s", err, out)
	}
	type want struct {
		required bool
		def      string
		reads    string
	}
	wants := map[string]map[string]want{
		"reply":           {"text": {true, "", "template"}, "field": {false, `"messages"`, "field"}, "role": {false, `"assistant"`, "literal"}},
		"set":             {"set": {true, "", "keys: field; values: expression"}},
		"memory_retrieve": {"namespace": {true, "", "each item: template"}, "query": {false, "", "expression"}, "messages_field": {false, `"messages"`, "field"}, "limit": {false, "5", ""}},
		"tool":            {"tool": {true, "", "literal"}, "args": {false, "", "values: expression"}, "output": {false, "", "field"}},
		"interrupt":       {"field": {true, "", "field"}, "message": {false, "", "template"}},
	}
	for _, info := range infos {
		for _, f := range info.Config {
			w, ok := wants[info.Name][f.Name]
			if !ok {
				continue
			}
			delete(wants[info.Name], f.Name)
			if f.Required != w.required || f.Default != w.def || f.Reads != w.reads {
				t.Errorf("%s.%s: required %v, default %q, reads %q; want %v, %q, %q", info.Name, f.Name, f.Required, f.Default, f.Reads, w.required, w.def, w.reads)
			}
		}
		for key := range wants[info.Name] {
			t.Errorf("%s has no config key %s", info.Name, key)
		}
	}
	text, _, code := run(t, "nodes", "memory_retrieve")
	if code != 0 || !strings.Contains(text, "KEY") || !regexpLine(text, `namespace\s+yes\s+a list of strings\s+each item: template`) {
		t.Errorf("nodes memory_retrieve:\n%s", text)
	}
	if _, errOut, code := run(t, "nodes", "replly"); code != 2 || !strings.Contains(errOut, `did you mean "reply"?`) {
		t.Errorf("unknown type: exit %d %s", code, errOut)
	}
	schema, _, code := run(t, "schema", "--format", "jsonschema")
	if code != 0 || !strings.Contains(schema, "A string here is read as: template (template: a template: text with ${expr} interpolations") {
		t.Errorf("the JSON Schema does not say how reply's text is read")
	}
}

func regexpLine(text, pattern string) bool {
	for _, line := range strings.Split(text, "\n") {
		if ok, _ := regexpMatch(pattern, line); ok {
			return true
		}
	}
	return false
}

func regexpMatch(pattern, s string) (bool, error) { return regexp.MatchString(pattern, s) }
