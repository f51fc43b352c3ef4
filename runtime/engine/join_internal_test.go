package engine

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/graphctl/graphctl/runtime/compile"
)

// storedMetadata decodes checkpoint metadata as a checkpointer returns it.
func storedMetadata(t *testing.T, js string) map[string]any {
	t.Helper()
	var meta map[string]any
	if err := json.Unmarshal([]byte(js), &meta); err != nil {
		t.Fatal(err)
	}
	return meta
}

// Joins' progress stored by earlier versions (a list per join node of the
// completed nodes, with "\x00triggered" once an edge led to it) reads the
// same and is stored again in the same form.
func TestJoinStateStoredForm(t *testing.T) {
	tests := []struct {
		name   string
		stored string
		want   joinState
	}{
		{
			name:   "triggered and waiting",
			stored: `{"run_id":"r1","joins":{"merge":["\u0000triggered","left"],"final":["a","b"]}}`,
			want: joinState{
				"merge": {arrived: map[string]bool{"left": true}, triggered: true},
				"final": {arrived: map[string]bool{"a": true, "b": true}},
			},
		},
		{
			name:   "triggered before any arrival",
			stored: `{"joins":{"merge":["\u0000triggered"]}}`,
			want:   joinState{"merge": {arrived: map[string]bool{}, triggered: true}},
		},
		{
			name:   "empty list",
			stored: `{"joins":{"merge":[]}}`,
			want:   joinState{"merge": {arrived: map[string]bool{}}},
		},
		{
			name:   "no joins",
			stored: `{"run_id":"r1"}`,
			want:   joinState{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			meta := storedMetadata(t, tt.stored)
			got := loadJoins(meta)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("loadJoins = %v, want %v", describeJoins(got), describeJoins(tt.want))
			}
			again := map[string]any{}
			for k, v := range meta {
				if k != joinsKey {
					again[k] = v
				}
			}
			got.store(again)
			b, err := json.Marshal(again)
			if err != nil {
				t.Fatal(err)
			}
			if rewritten := storedMetadata(t, string(b)); !reflect.DeepEqual(rewritten, meta) {
				t.Errorf("stored again as %s, want %s", b, tt.stored)
			}
		})
	}
}

// A join read from a stored checkpoint runs once the last node it waits
// for completes, and then starts waiting afresh.
func TestJoinStateTriggersAfterReload(t *testing.T) {
	e := &Engine{joinsOf: map[string][]string{"left": {"merge"}, "right": {"merge"}}}
	merge := &compile.Node{Name: "merge", WaitFor: []string{"left", "right"}}
	js := loadJoins(storedMetadata(t, `{"joins":{"merge":["\u0000triggered","left"]}}`))
	if js.trigger(merge) {
		t.Fatal("merge runs before right completed")
	}
	js.arrive(e, "right")
	if !js.trigger(merge) {
		t.Fatal("merge does not run once left and right completed")
	}
	if _, waiting := js["merge"]; waiting {
		t.Errorf("merge still has progress after it ran: %v", describeJoins(js))
	}
	meta := map[string]any{}
	js.store(meta)
	if _, ok := meta[joinsKey]; ok {
		t.Errorf("no join in progress, but metadata holds %v", meta[joinsKey])
	}
}

func describeJoins(js joinState) map[string][]string {
	out := map[string][]string{}
	for join, p := range js {
		out[join] = p.list()
	}
	return out
}
