package compile

import (
	"fmt"
	"sort"
	"strings"
)

// envRef reports whether v is an environment reference {env: "NAME"}: an
// object with the single key env holding a string.
func envRef(v any) (string, bool) {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return "", false
	}
	name, ok := m["env"].(string)
	return name, ok
}

// checkEnvRefs warns about environment references in node configs, graph
// defaults and field defaults whose variable is not set: once per variable,
// at its first reference, naming the others.
func (c *compiler) checkEnvRefs() {
	refs := map[string][]string{}
	var order []string
	add := func(name, path string) {
		if _, seen := refs[name]; !seen {
			order = append(order, name)
		}
		refs[name] = append(refs[name], path)
	}
	for _, n := range c.g.Nodes {
		walkEnvRefs(n.Config, "nodes."+n.Name+".config", add)
	}
	walkEnvRefs(c.g.Defaults.Raw, "defaults", add)
	for _, f := range c.g.State {
		if f.HasDefault {
			walkEnvRefs(f.Default, "state."+f.Name+".default", add)
		}
	}
	for _, name := range order {
		if _, set := c.opts.LookupEnv(name); set {
			continue
		}
		paths := refs[name]
		first := paths[0]
		where := first
		if len(paths) > 1 {
			where += " and " + strings.Join(paths[1:], ", ")
		}
		at := c.nearest(first+".env", c.g.PosOf(first))
		c.diags.Warnf(at, CodeEnvUnset, first,
			"environment variable %s is not set (referenced at %s)", name, where)
	}
}

// walkEnvRefs calls add for every environment reference {env: NAME} in v.
func walkEnvRefs(v any, path string, add func(name, path string)) {
	if name, ok := envRef(v); ok {
		add(name, path)
		return
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			walkEnvRefs(x[k], path+"."+k, add)
		}
	case []any:
		for i, item := range x {
			walkEnvRefs(item, fmt.Sprintf("%s.%d", path, i), add)
		}
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
