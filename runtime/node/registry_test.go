package node_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime/node"
)

func nopType(name string) node.Type {
	return node.Type{Name: name, New: func(node.Builder) (node.Node, error) {
		return node.Func(func(context.Context, *node.Input) (node.Update, error) { return nil, nil }), nil
	}}
}

// TestRegistryRegister: a registry refuses a nameless type, one without a
// constructor and a duplicate, and lists what it holds by name.
func TestRegistryRegister(t *testing.T) {
	r := node.NewRegistry()
	tests := []struct {
		name    string
		typ     node.Type
		wantErr string
	}{
		{"first", nopType("b"), ""},
		{"second", nopType("a"), ""},
		{"duplicate", nopType("a"), `node type "a" is already registered`},
		{"no name", nopType(""), "name and constructor are required"},
		{"no constructor", node.Type{Name: "c"}, "name and constructor are required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := r.Register(tt.typ)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("Register = %v, want %q", err, tt.wantErr)
			}
		})
	}
	if got := r.Names(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("Names = %v, want [a b]", got)
	}
	if _, ok := r.Lookup("a"); !ok {
		t.Error("Lookup(a) found nothing")
	}
	if _, ok := r.Lookup("c"); ok {
		t.Error("Lookup(c) found a type that failed to register")
	}
}

// TestRegistryClone: a clone holds what its source held, and registering
// in one afterwards does not reach the other.
func TestRegistryClone(t *testing.T) {
	src := node.NewRegistry()
	src.MustRegister(nopType("shared"))
	key := node.NewKey[*int]("clone.counter")
	if err := node.RegisterServiceIn(src, key, func() *int { return new(int) }); err != nil {
		t.Fatal(err)
	}
	clone := src.Clone()
	clone.MustRegister(nopType("clone_only"))
	src.MustRegister(nopType("src_only"))
	if got := clone.Names(); !slices.Equal(got, []string{"clone_only", "shared"}) {
		t.Errorf("clone Names = %v", got)
	}
	if got := src.Names(); !slices.Equal(got, []string{"shared", "src_only"}) {
		t.Errorf("source Names = %v", got)
	}
	all, created := clone.NewServices(node.Extra{})
	if !key.In(all) || len(created) != 1 {
		t.Errorf("the clone does not make its source's service: in %v, created %d", key.In(all), len(created))
	}
}

// TestRegistryServices: NewServices makes each registered service the
// given Extra lacks, keeps the given ones, and reports what it made; a key
// registers once.
func TestRegistryServices(t *testing.T) {
	r := node.NewRegistry()
	made := node.NewKey[string]("svc.made")
	given := node.NewKey[string]("svc.given")
	for _, k := range []node.Key[string]{made, given} {
		if err := node.RegisterServiceIn(r, k, func() string { return "made " + k.Name() }); err != nil {
			t.Fatal(err)
		}
	}
	if err := node.RegisterServiceIn(r, made, func() string { return "" }); err == nil {
		t.Error("a key registered twice")
	}
	if err := node.RegisterServiceIn(r, node.Key[string]{}, func() string { return "" }); err == nil {
		t.Error("the zero key registered")
	}
	in := given.Bind(node.Extra{}, "mine")
	all, created := r.NewServices(in)
	if v, _ := made.From(all); v != "made svc.made" {
		t.Errorf("made = %q", v)
	}
	if v, _ := given.From(all); v != "mine" {
		t.Errorf("given = %q, want the caller's", v)
	}
	if !slices.Equal(created, []any{"made svc.made"}) {
		t.Errorf("created = %v", created)
	}
	if in.Len() != 1 {
		t.Errorf("NewServices changed the Extra it was given: len %d", in.Len())
	}
}

// TestRegistryScriptKey: a registry has no script key until one is set, and
// keeps the first.
func TestRegistryScriptKey(t *testing.T) {
	r := node.NewRegistry()
	if _, ok := r.ScriptKey(); ok {
		t.Fatal("a new registry has a script key")
	}
	k := node.NewKey[any]("script")
	if err := r.SetScriptKey(k); err != nil {
		t.Fatal(err)
	}
	if err := r.SetScriptKey(k); err != nil {
		t.Errorf("setting the same key again: %v", err)
	}
	if err := r.SetScriptKey(node.NewKey[any]("other")); err == nil {
		t.Error("a second key replaced the first")
	}
	got, ok := r.ScriptKey()
	if !ok || got != k {
		t.Errorf("ScriptKey = %v, %v; want %v", got, ok, k)
	}
}

// TestDefaultRegistry: the package-level functions act on Default, and a
// nil registry stands for it.
func TestDefaultRegistry(t *testing.T) {
	node.MustRegister(nopType("registry_test_default"))
	if _, ok := node.Default().Lookup("registry_test_default"); !ok {
		t.Error("MustRegister did not reach the default registry")
	}
	if _, ok := node.Lookup("registry_test_default"); !ok {
		t.Error("Lookup does not read the default registry")
	}
	var none *node.Registry
	if none.OrDefault() != node.Default() {
		t.Error("a nil registry does not stand for the default")
	}
	if r := node.NewRegistry(); r.OrDefault() != r {
		t.Error("OrDefault replaced a registry")
	}
}

// TestRegistryAttach: what is attached to a registry is found there and in
// its clones, a clone's new attachment stays its own, and a Builder with no
// registry of its own builds against the default one.
func TestRegistryAttach(t *testing.T) {
	k := node.NewKey[string]("attach.part")
	r := node.NewRegistry()
	if _, ok := node.Attached(r, k); ok {
		t.Fatal("a new registry has a part attached")
	}
	node.Attach(r, k, "first")
	clone := r.Clone()
	node.Attach(clone, k, "the clone's")
	if v, _ := node.Attached(r, k); v != "first" {
		t.Errorf("source part = %q, want first", v)
	}
	if v, _ := node.Attached(clone, k); v != "the clone's" {
		t.Errorf("clone part = %q", v)
	}
	if node.RegistryOf(nil) != node.Default() {
		t.Error("RegistryOf a builder without a registry is not the default")
	}
}
