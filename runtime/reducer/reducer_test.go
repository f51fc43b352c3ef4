package reducer

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime/graph"
)

func msg(id, role, content string) map[string]any {
	m := map[string]any{"role": role, "content": content}
	if id != "" {
		m["id"] = id
	}
	return m
}

// TestMessagesAssignUUIDs checks that messages written without an id get a
// UUID, distinct for each message, as LangChain's add_messages gives them.
func TestMessagesAssignUUIDs(t *testing.T) {
	r, _ := Lookup("messages")
	res, err := r.Reduce([]any{msg("m1", "user", "hi")}, []any{msg("", "assistant", "hello"), msg("", "assistant", "again")})
	if err != nil {
		t.Fatal(err)
	}
	list := res.Value.([]any)
	if len(list) != 3 || res.AppendedFrom != 1 {
		t.Fatalf("got %v (appended from %d), want 3 messages appended from 1", list, res.AppendedFrom)
	}
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	a, b := list[1].(map[string]any)["id"].(string), list[2].(map[string]any)["id"].(string)
	if !uuid.MatchString(a) || !uuid.MatchString(b) || a == b {
		t.Fatalf("ids %q and %q: want two distinct version 4 UUIDs", a, b)
	}
}

func TestReducers(t *testing.T) {
	tests := []struct {
		name         string
		reducer      string
		old, update  any
		want         string // JSON of the result
		appendedFrom int
		err          string
	}{
		{name: "replace", reducer: "replace", old: "a", update: "b", want: `"b"`, appendedFrom: -1},
		{name: "append item", reducer: "append", old: []any{"a"}, update: "b", want: `["a","b"]`, appendedFrom: 1},
		{name: "append list", reducer: "append", old: []any{"a"}, update: []any{"b", "c"}, want: `["a","b","c"]`, appendedFrom: 1},
		{name: "append to non-list", reducer: "append", old: "x", update: "b", err: "needs a list"},
		{name: "union skips present", reducer: "union", old: []any{"leaking"}, update: []any{"leaking", "noisy"}, want: `["leaking","noisy"]`, appendedFrom: 1},
		{name: "merge deep", reducer: "merge", old: map[string]any{"a": map[string]any{"x": 1, "y": 2}}, update: map[string]any{"a": map[string]any{"y": 3}, "b": true}, want: `{"a":{"x":1,"y":3},"b":true}`, appendedFrom: -1},
		{name: "merge non-map", reducer: "merge", old: map[string]any{}, update: "x", err: "needs maps"},
		{name: "merge_by_id upsert", reducer: "merge_by_id",
			old:    []any{map[string]any{"id": "h1", "confidence": 0.5}},
			update: []any{map[string]any{"id": "h1", "confidence": 0.9}, map[string]any{"id": "h2", "confidence": 0.1}},
			want:   `[{"confidence":0.9,"id":"h1"},{"confidence":0.1,"id":"h2"}]`, appendedFrom: -1},
		{name: "merge_by_id only new", reducer: "merge_by_id", old: []any{map[string]any{"id": "h1"}}, update: map[string]any{"id": "h2"}, want: `[{"id":"h1"},{"id":"h2"}]`, appendedFrom: 1},
		{name: "add ints", reducer: "add", old: 2, update: 3, want: `5`, appendedFrom: -1},
		{name: "add float", reducer: "add", old: 2, update: 0.5, want: `2.5`, appendedFrom: -1},
		{name: "add string", reducer: "add", old: 2, update: "x", err: "needs numbers"},
		{name: "keep first", reducer: "keep", old: "WDT780SAEM1", update: "OTHER", want: `"WDT780SAEM1"`, appendedFrom: -1},
		{name: "keep fills empty", reducer: "keep", old: "", update: "WDT780SAEM1", want: `"WDT780SAEM1"`, appendedFrom: -1},
		{name: "messages remove by id", reducer: "messages", old: []any{msg("m1", "user", "hi"), msg("m2", "assistant", "hello")}, update: msg("m1", "remove", ""),
			want: `[{"content":"hello","id":"m2","role":"assistant"}]`, appendedFrom: -1},
		{name: "messages remove all then add", reducer: "messages", old: []any{msg("m1", "user", "hi"), msg("m2", "assistant", "hello")},
			update: []any{msg(RemoveAll, "remove", ""), msg("m3", "user", "again")},
			want:   `[{"content":"again","id":"m3","role":"user"}]`, appendedFrom: -1},
		{name: "messages remove unknown id", reducer: "messages", old: []any{msg("m1", "user", "hi")}, update: msg("m9", "remove", ""), err: `cannot remove message "m9"`},
		{name: "messages remove without id", reducer: "messages", old: []any{}, update: msg("", "remove", ""), err: "names no id"},
		{name: "messages keep content parts", reducer: "messages", old: []any{},
			update: map[string]any{"id": "m1", "role": "user", "content": []any{map[string]any{"type": "text", "text": "what is this?"}, map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,AAAA"}}}},
			want:   `[{"content":[{"text":"what is this?","type":"text"},{"image_url":{"url":"data:image/png;base64,AAAA"},"type":"image_url"}],"id":"m1","role":"user"}]`, appendedFrom: 0},
		{name: "messages replace by id", reducer: "messages", old: []any{msg("m1", "user", "hi")}, update: msg("m1", "user", "hey"),
			want: `[{"content":"hey","id":"m1","role":"user"}]`, appendedFrom: -1},
		{name: "messages without role", reducer: "messages", old: []any{}, update: map[string]any{"content": "x"}, err: "no role"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := Lookup(tt.reducer)
			if !ok {
				t.Fatalf("reducer %q not registered", tt.reducer)
			}
			res, err := r.Reduce(tt.old, tt.update)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(res.Value)
			if string(got) != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
			if res.AppendedFrom != tt.appendedFrom {
				t.Fatalf("AppendedFrom %d, want %d", res.AppendedFrom, tt.appendedFrom)
			}
		})
	}
}

func TestAccepts(t *testing.T) {
	tests := []struct {
		reducer, typ string
		ok           bool
	}{
		{"append", "list<string>", true},
		{"append", "string", false},
		{"add", "int", true},
		{"add", "string", false},
		{"merge", "map<int>", true},
		{"merge", "list<string>", false},
		{"messages", "messages", true},
		{"merge_by_id", "list<object>", true},
		{"merge_by_id", "list<string>", false},
		{"keep", "string", true},
	}
	for _, tt := range tests {
		typ, err := graph.ParseType(tt.typ)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := Lookup(tt.reducer)
		if got := r.Accepts(typ); got != tt.ok {
			t.Errorf("%s accepts %s = %v, want %v", tt.reducer, tt.typ, got, tt.ok)
		}
	}
}

func TestOldValueNotModified(t *testing.T) {
	old := []any{map[string]any{"id": "h1", "v": 1}}
	r, _ := Lookup("merge_by_id")
	if _, err := r.Reduce(old, map[string]any{"id": "h1", "v": 2}); err != nil {
		t.Fatal(err)
	}
	if old[0].(map[string]any)["v"] != 1 {
		t.Fatal("reducer modified the old value")
	}
}
