package store

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Filter operators accepted by MatchFilter.
const (
	OpEq  = "$eq"
	OpNe  = "$ne"
	OpGt  = "$gt"
	OpGte = "$gte"
	OpLt  = "$lt"
	OpLte = "$lte"
)

// MatchFilter reports whether value satisfies every condition of filter.
//
// Each filter key is a dotted path into value ("user.age", "tags.0"). A
// condition is either a plain value, matched by equality, or a map of
// operators ({"$gte": 18, "$lt": 65}) that must all hold. Numbers compare
// numerically whatever their Go type; strings compare lexically, except that
// two RFC 3339 timestamps compare as instants. A missing field matches only
// $ne and equality with nil. An unknown operator is an error naming it.
func MatchFilter(value map[string]any, filter map[string]any) (bool, error) {
	// The whole filter is checked before any condition is matched, so that a
	// bad filter is an error whatever the value and whatever the map order.
	paths := sortedKeys(filter)
	conds := make([]map[string]any, len(paths))
	for i, path := range paths {
		if strings.HasPrefix(path, "$") {
			return false, fmt.Errorf("filter: unknown operator %q at top level", path)
		}
		ops, isOps, err := operators(filter[path])
		if err != nil {
			return false, fmt.Errorf("filter field %q: %w", path, err)
		}
		if !isOps {
			ops = map[string]any{OpEq: filter[path]}
		}
		for _, op := range sortedKeys(ops) {
			switch op {
			case OpEq, OpNe, OpGt, OpGte, OpLt, OpLte:
			default:
				return false, fmt.Errorf("filter field %q: unknown operator %q (want one of $eq, $ne, $gt, $gte, $lt, $lte)", path, op)
			}
		}
		conds[i] = ops
	}
	for i, path := range paths {
		got, found := Lookup(value, path)
		for op, want := range conds[i] {
			if !matchOp(op, got, found, want) {
				return false, nil
			}
		}
	}
	return true, nil
}

// operators splits a condition into its operator map when it is one. A map
// whose keys all start with "$" is an operator map; a map with no such keys is
// a plain value; mixing both is an error.
func operators(cond any) (map[string]any, bool, error) {
	m, ok := cond.(map[string]any)
	if !ok || len(m) == 0 {
		return nil, false, nil
	}
	dollar := 0
	for k := range m {
		if strings.HasPrefix(k, "$") {
			dollar++
		}
	}
	switch dollar {
	case 0:
		return nil, false, nil
	case len(m):
		return m, true, nil
	default:
		return nil, false, fmt.Errorf("condition mixes operators and plain keys: %v", m)
	}
}

func matchOp(op string, got any, found bool, want any) bool {
	if !found {
		switch op {
		case OpNe:
			return want != nil
		case OpEq:
			return want == nil
		default:
			return false
		}
	}
	switch op {
	case OpEq:
		return equal(got, want)
	case OpNe:
		return !equal(got, want)
	}
	c, ok := compare(got, want)
	if !ok {
		return false
	}
	switch op {
	case OpGt:
		return c > 0
	case OpGte:
		return c >= 0
	case OpLt:
		return c < 0
	case OpLte:
		return c <= 0
	}
	return false
}

// Lookup follows a dotted path through nested maps and lists (numeric
// segments index lists). It reports whether the path exists.
func Lookup(value any, path string) (any, bool) {
	cur := value
	for seg := range strings.SplitSeq(path, ".") {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[seg]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

func equal(a, b any) bool {
	if fa, ok := number(a); ok {
		fb, ok := number(b)
		return ok && fa == fb
	}
	if sa, ok := a.(string); ok {
		sb, ok := b.(string)
		return ok && sa == sb
	}
	return reflect.DeepEqual(normalize(a), normalize(b))
}

// compare orders two numbers or two strings; ok is false when the values are
// not comparable.
func compare(a, b any) (int, bool) {
	if fa, ok := number(a); ok {
		fb, ok := number(b)
		if !ok || math.IsNaN(fa) || math.IsNaN(fb) {
			return 0, false
		}
		switch {
		case fa < fb:
			return -1, true
		case fa > fb:
			return 1, true
		}
		return 0, true
	}
	sa, ok := a.(string)
	if !ok {
		return 0, false
	}
	sb, ok := b.(string)
	if !ok {
		return 0, false
	}
	if ta, err := time.Parse(time.RFC3339Nano, sa); err == nil {
		if tb, err := time.Parse(time.RFC3339Nano, sb); err == nil {
			return ta.Compare(tb), true
		}
	}
	return strings.Compare(sa, sb), true
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int8:
		return float64(n), true
	case int16:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint:
		return float64(n), true
	case uint8:
		return float64(n), true
	case uint16:
		return float64(n), true
	case uint32:
		return float64(n), true
	case uint64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// normalize rewrites numbers inside nested values as float64 so that values
// decoded from JSON compare equal to the Go values they were written from.
func normalize(v any) any {
	if f, ok := number(v); ok {
		return f
	}
	switch c := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(c))
		for k, x := range c {
			out[k] = normalize(x)
		}
		return out
	case []any:
		out := make([]any, len(c))
		for i, x := range c {
			out[i] = normalize(x)
		}
		return out
	case []string:
		out := make([]any, len(c))
		for i, x := range c {
			out[i] = x
		}
		return out
	}
	return v
}
