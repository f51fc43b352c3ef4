package all

import (
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/internal/nodetest"
	"github.com/graphctl/graphctl/builtin-nodes/tool"
	"github.com/graphctl/graphctl/runtime/node"
)

func TestEverythingRegistered(t *testing.T) {
	// A minimal valid config per type; each schema must accept it and reject an unknown key.
	minimal := map[string]map[string]any{
		"route":     {},
		"set":       {"set": map[string]any{"x": "1"}},
		"reply":     {"text": "hi"},
		"interrupt": {"field": "x"},
		"extract":   {"fields": map[string]any{"x": map[string]any{"pattern": "a"}}},
		"tool":      {"tool": "diagnose_repair"},
	}
	for name, cfg := range minimal {
		typ, ok := node.Lookup(name)
		if !ok {
			t.Errorf("node type %q is not registered", name)
			continue
		}
		if typ.Description == "" {
			t.Errorf("node type %q has no description", name)
		}
		if _, err := nodetest.ApplySchema(typ.Config, cfg); err != nil {
			t.Errorf("node type %q rejects a minimal config: %v", name, err)
		}
		bad := map[string]any{"no_such_key": true}
		for k, v := range cfg {
			bad[k] = v
		}
		if _, err := nodetest.ApplySchema(typ.Config, bad); err == nil {
			t.Errorf("node type %q accepts an unknown config key", name)
		}
	}
	for _, name := range []string{"diagnose_repair", "get_installation_instructions", "check_compatibility"} {
		if _, ok := tool.Lookup(name); !ok {
			t.Errorf("tool %q is not registered", name)
		}
	}
}
