package jsonenc_test

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/store/jsonenc"
)

// Append writes what json.Marshal writes, byte for byte.
func TestAppendIsJSONMarshal(t *testing.T) {
	type point struct {
		X, Y int
	}
	zone := time.FixedZone("x", -(3*3600 + 30*60))
	for _, tt := range []struct {
		name string
		v    any
	}{
		{"nil", nil},
		{"strings", []any{"", "plain", `quote " and \ backslash`, "<b>&amp;</b>", "tab\tnew\nline\r", "\u2028\u2029", "bad \xff utf-8", "日本語"}},
		{"numbers", []any{0, -1, int64(math.MaxInt64), 0.0, math.Copysign(0, -1), 0.1, -2.5, 1e-6, 1e-7, 1.5e-9, 123456789.125, 1e20, 1e21, -1e21, 1.7976931348623157e308, 5e-324, float64(1 << 53)}},
		{"bools", []any{true, false}},
		{"times", []any{time.Date(2026, 11, 26, 9, 40, 51, 123456789, time.UTC), time.Date(2026, 1, 2, 3, 4, 5, 0, zone), time.Time{}}},
		{"string lists", map[string]any{"some": []string{"a", "<b>"}, "empty": []string{}, "none": []string(nil)}},
		{"nested", map[string]any{"z": map[string]any{"b": []any{map[string]any{"y": 1.5, "x": nil}}, "a": map[string]any(nil)}, "a": []any(nil), "m": []any{}, "<k>": "v"}},
		{"raw", map[string]any{"raw": jsonenc.Raw(`{"a":[1,"\u003cb\u003e"]}`), "none": jsonenc.Raw(nil), "list": []any{jsonenc.Raw(`2`)}}},
		{"other types", map[string]any{"struct": point{1, 2}, "raw": json.RawMessage(`{"b": 1, "a" : [1, 2]}`), "ints": []int{1, 2}, "strmap": map[string]string{"b": "1", "a": "2"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want, err := json.Marshal(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			got, err := jsonenc.Append([]byte("prefix:"), tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != "prefix:"+string(want) {
				t.Errorf("got\n%s\nwant\nprefix:%s", got, want)
			}
		})
	}
}

// Every byte alone and in context, and pseudo-random byte strings, are
// escaped as encoding/json escapes them.
func TestAppendStringIsJSONMarshal(t *testing.T) {
	var strs []string
	for c := 0; c < 256; c++ {
		strs = append(strs, string([]byte{byte(c)}), "a"+string([]byte{byte(c)})+"z")
	}
	seed := uint32(1)
	for n := 0; n < 2000; n++ {
		raw := make([]byte, n%23)
		for i := range raw {
			seed = seed*1664525 + 1013904223
			raw[i] = byte(seed >> 24)
		}
		strs = append(strs, string(raw))
	}
	for _, s := range strs {
		want, _ := json.Marshal(s)
		if got := jsonenc.AppendString(nil, s); string(got) != string(want) {
			t.Errorf("string %q: got %s, want %s", s, got, want)
		}
	}
}

// What json.Marshal cannot encode is an error, not a partial encoding.
func TestAppendReportsUnencodableValues(t *testing.T) {
	for name, v := range map[string]any{
		"channel":    map[string]any{"ch": make(chan int)},
		"NaN":        []any{math.NaN()},
		"infinity":   math.Inf(1),
		"year 10000": time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		if got, err := jsonenc.Append(nil, v); err == nil {
			t.Errorf("%s: encoded as %s", name, got)
		}
	}
}
