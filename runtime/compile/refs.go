package compile

import (
	"fmt"
	"sort"
)

// checkTests reports test cases sharing a name.
func (c *compiler) checkTests() {
	first := map[string]int{}
	for i, t := range c.g.Tests {
		name, _ := t["name"].(string)
		if name == "" {
			continue
		}
		path := fmt.Sprintf("tests.%d.name", i)
		if j, dup := first[name]; dup {
			fallback := c.g.PosOf(fmt.Sprintf("tests.%d", i))
			if i < len(c.g.TestsPos) && c.g.TestsPos[i].IsValid() {
				fallback = c.g.TestsPos[i]
			}
			c.errorf(c.pos(path, fallback), CodeDuplicateName, path,
				"test %q is declared twice (tests %d and %d)", name, j, i)
			continue
		}
		first[name] = i
	}
}

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
// defaults and field defaults whose variable is not set.
func (c *compiler) checkEnvRefs() {
	for _, n := range c.g.Nodes {
		c.walkEnvRefs(n.Config, "nodes."+n.Name+".config")
	}
	c.walkEnvRefs(c.g.Defaults.Raw, "defaults")
	for _, f := range c.g.State {
		if f.HasDefault {
			c.walkEnvRefs(f.Default, "state."+f.Name+".default")
		}
	}
}

func (c *compiler) walkEnvRefs(v any, path string) {
	if name, ok := envRef(v); ok {
		if _, set := c.opts.LookupEnv(name); !set {
			at := c.nearest(path+".env", c.g.PosOf(path))
			c.diags.Warnf(at, CodeEnvUnset, path,
				"environment variable %s is not set (referenced at %s)", name, path)
		}
		return
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			c.walkEnvRefs(x[k], path+"."+k)
		}
	case []any:
		for i, item := range x {
			c.walkEnvRefs(item, fmt.Sprintf("%s.%d", path, i))
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
