package server

import "reflect"

// jsonContains reports whether have contains want as PostgreSQL's jsonb @>
// does, which is how LangGraph filters metadata and values: every key of a
// wanted object is in the object and contains the wanted value there; every
// element of a wanted list is contained in some element of the list; other
// values are equal (numbers by value).
func jsonContains(have, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			hv, ok := h[k]
			if !ok || !jsonContains(hv, wv) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok {
			return false
		}
		for _, wv := range w {
			found := false
			for _, hv := range h {
				if jsonContains(hv, wv) {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	}
	if hf, ok := number(have); ok {
		wf, ok := number(want)
		return ok && hf == wf
	}
	return reflect.DeepEqual(have, want)
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}
