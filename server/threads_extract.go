package server

import (
	"fmt"
	"strconv"
	"strings"
)

// A thread search's extract (the Python SDK's threads.search(extract=...))
// maps aliases to paths into each thread found ("values.messages[-1]",
// "metadata.user"): keys in dot notation, list indices in brackets,
// negative ones counting from the end. Each thread found carries the values
// at those paths under "extracted", null where a path leads nowhere.

// maxExtract is how many paths a search may extract, as on the Agent Server.
const maxExtract = 10

// pathStep is one step of an extract path: a key, or a list index.
type pathStep struct {
	key   string
	index int
	isKey bool
}

// extractPaths reads a search's extract: an object of alias → path.
func extractPaths(v any) (map[string][]pathStep, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, invalid("extract must be an object mapping names to paths such as \"values.messages[-1]\"")
	}
	if len(m) > maxExtract {
		return nil, invalid("extract names %d paths; at most %d are allowed", len(m), maxExtract)
	}
	out := make(map[string][]pathStep, len(m))
	for alias, p := range m {
		s, ok := p.(string)
		if !ok {
			return nil, invalid("extract.%s must be a path (a string), not %s", alias, jsonKindOf(p))
		}
		steps, err := parsePath(s)
		if err != nil {
			return nil, invalid("extract.%s: %v", alias, err)
		}
		out[alias] = steps
	}
	return out, nil
}

// parsePath reads a path: keys joined by dots, each followed by any number
// of [index].
func parsePath(p string) ([]pathStep, error) {
	if p == "" {
		return nil, fmt.Errorf("the path is empty")
	}
	var steps []pathStep
	for _, part := range strings.Split(p, ".") {
		key, rest, _ := strings.Cut(part, "[")
		if key == "" || strings.ContainsAny(key, "]") {
			return nil, fmt.Errorf("path %q: %q is not a key", p, part)
		}
		steps = append(steps, pathStep{key: key, isKey: true})
		if rest == "" && !strings.Contains(part, "[") {
			continue
		}
		rest = "[" + rest
		for rest != "" {
			if rest[0] != '[' {
				return nil, fmt.Errorf("path %q: %q is not an index such as [0] or [-1]", p, rest)
			}
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, fmt.Errorf("path %q: %q has no closing ]", p, rest)
			}
			n, err := strconv.Atoi(rest[1:end])
			if err != nil {
				return nil, fmt.Errorf("path %q: %q is not an index such as [0] or [-1]", p, rest[:end+1])
			}
			steps = append(steps, pathStep{index: n})
			rest = rest[end+1:]
		}
	}
	return steps, nil
}

// extractFrom returns the value at each path of a thread object.
func extractFrom(obj map[string]any, paths map[string][]pathStep) map[string]any {
	obj = toMap(obj) // the values as JSON decodes them: maps and []any
	out := make(map[string]any, len(paths))
	for alias, steps := range paths {
		var cur any = obj
		for _, st := range steps {
			switch x := cur.(type) {
			case map[string]any:
				if !st.isKey {
					cur = nil
					break
				}
				cur = x[st.key]
			case []any:
				i := st.index
				if i < 0 {
					i += len(x)
				}
				if st.isKey || i < 0 || i >= len(x) {
					cur = nil
					break
				}
				cur = x[i]
			default:
				cur = nil
			}
			if cur == nil {
				break
			}
		}
		out[alias] = cur
	}
	return out
}

// jsonKindOf names the JSON kind of a decoded value.
func jsonKindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return "a number"
}
