package node_test

import (
	"testing"

	"github.com/graphctl/graphctl/runtime/node"
)

// TestKey: a typed key reads only a value of its type, tells presence apart
// from a value, and binds into a nil map.
func TestKey(t *testing.T) {
	text := node.NewKey[string]("t.text")
	num := node.NewKey[int]("t.num")
	extra := text.Bind(nil, "hello")
	extra[num.Name()] = "not a number"
	s := &node.Services{Extra: extra}
	tests := []struct {
		name    string
		get     func() (any, bool)
		has     bool
		want    any
		wantOK  bool
		hasFunc func() bool
	}{
		{"value of its type", func() (any, bool) { return text.Get(s) }, true, "hello", true, func() bool { return text.Has(s) }},
		{"value of another type", func() (any, bool) { return num.Get(s) }, true, 0, false, func() bool { return num.Has(s) }},
		{"absent", func() (any, bool) { return node.NewKey[string]("t.none").Get(s) }, false, "", false, func() bool { return node.NewKey[string]("t.none").Has(s) }},
		{"nil services", func() (any, bool) { return text.Get(nil) }, false, "", false, func() bool { return text.Has(nil) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.get()
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("Get = %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
			if h := tt.hasFunc(); h != tt.has {
				t.Errorf("Has = %v, want %v", h, tt.has)
			}
		})
	}
}
