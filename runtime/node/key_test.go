package node_test

import (
	"testing"

	"github.com/graphctl/graphctl/runtime/node"
)

// TestKey: a key reads only what was bound under it — not a value bound
// under another key of the same name — tells presence apart from a value,
// and Bind leaves the Extra it was given as it was.
func TestKey(t *testing.T) {
	text := node.NewKey[string]("t.text")
	sameName := node.NewKey[string]("t.text")
	num := node.NewKey[int]("t.num")
	empty := node.Extra{}
	extra := text.Bind(empty, "hello")
	extra = num.Bind(extra, 0)
	s := &node.Services{Extra: extra}
	tests := []struct {
		name   string
		get    func() (any, bool)
		has    bool
		want   any
		wantOK bool
	}{
		{"bound value", func() (any, bool) { return text.Get(s) }, true, "hello", true},
		{"zero value bound", func() (any, bool) { return num.Get(s) }, true, 0, true},
		{"key of the same name", func() (any, bool) { return sameName.Get(s) }, false, "", false},
		{"nil services", func() (any, bool) { return text.Get(nil) }, false, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.get()
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("Get = %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
	if !text.Has(s) || !num.Has(s) || sameName.Has(s) || text.Has(nil) {
		t.Errorf("Has: text %v num %v sameName %v nil %v; want true true false false", text.Has(s), num.Has(s), sameName.Has(s), text.Has(nil))
	}
	if empty.Len() != 0 || text.In(empty) {
		t.Errorf("Bind changed the Extra it was given: len %d", empty.Len())
	}
	if extra.Len() != 2 {
		t.Errorf("Len = %d, want 2", extra.Len())
	}
	var zero node.Key[string]
	if got := zero.Bind(extra, "x"); got.Len() != 2 || zero.In(got) {
		t.Errorf("the zero key bound a value: len %d", got.Len())
	}
}

// TestExtraMerge: Merge keeps the receiver's services and adds the others'.
func TestExtraMerge(t *testing.T) {
	a := node.NewKey[string]("a")
	b := node.NewKey[string]("b")
	x := a.Bind(node.Extra{}, "x.a")
	y := b.Bind(a.Bind(node.Extra{}, "y.a"), "y.b")
	m := x.Merge(y)
	if v, _ := a.From(m); v != "x.a" {
		t.Errorf("a = %q, want x.a (the receiver's)", v)
	}
	if v, _ := b.From(m); v != "y.b" {
		t.Errorf("b = %q, want y.b", v)
	}
	if x.Len() != 1 {
		t.Errorf("Merge changed its receiver: len %d", x.Len())
	}
}
