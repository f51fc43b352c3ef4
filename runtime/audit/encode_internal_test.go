package audit

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/store/jsonenc"
)

// A summary appended as JSON is the JSON string of Summary, whatever the
// value: cut or not, valid UTF-8 or not, data URLs, values encoding/json
// cannot encode.
func TestAppendedSummaryIsSummary(t *testing.T) {
	long := strings.Repeat("é<&>", summaryRunes)
	var list []any
	obj := map[string]any{}
	for i := 0; i < 300; i++ {
		list = append(list, map[string]any{"role": "user", "content": long[:i*3], "n": i})
		obj[strings.Repeat("k", i%20)+string(rune('a'+i%26))] = []any{i, "x&y", nil}
	}
	type point struct{ X, Y int }
	for _, v := range []any{
		nil, "", "short", long, long[:summaryRunes], "\u2028 \u2029 tab\t \x7f", "bad \xff " + long, long[:7] + "\xff\xfe" + long,
		strings.Repeat("a", summaryRunes-1) + "\xff" + long, "\xff" + strings.Repeat("b", summaryRunes),
		"data:image/png;base64," + long, "data:text/plain,hi", "data:\xff<>;base64,xyz", "data:no comma", "data:,",
		list, obj, []any{}, map[string]any{}, []any(nil), map[string]any(nil), []any{[]any(nil), map[string]any(nil)},
		[]any{map[string]any{"b": long, "a": 1}}, map[string]any{"a": []any{long, long}},
		1.5, math.NaN(), []any{1, math.Inf(1)}, map[string]any{"c": make(chan int)}, point{1, 2}, []point{{3, 4}},
		true, int64(-7), time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), jsonenc.Raw(`{"raw":true}`), []string{"a", "<b>"},
	} {
		want := jsonenc.AppendString(nil, Summary(v))
		if got := appendSummary(nil, v); !bytes.Equal(got, want) {
			t.Errorf("appendSummary(%.60v):\n got %s\nwant %s", v, got, want)
		}
	}
}

// Durations in milliseconds are encoded as encoding/json encodes them.
func TestMillisAreTheirJSON(t *testing.T) {
	for _, d := range []time.Duration{0, 1, 999, 1000, 1001, 58123, 33456, 1200, 12345678, time.Second, -1500 * time.Microsecond,
		90 * time.Minute, 1<<62 + 12345, -1 << 62, 7 * 24 * time.Hour} {
		for _, ms := range []float64{millis(d), millis(d) * 1000} {
			want, err := json.Marshal(ms)
			if err != nil {
				t.Fatal(err)
			}
			if got := appendMillis(nil, ms); !bytes.Equal(got, want) {
				t.Errorf("%v: %s, encoding/json %s", d, got, want)
			}
		}
	}
}

// A summary is appended without allocating: the value is encoded in a
// reused buffer and escaped into the record.
func TestAppendedSummaryDoesNotAllocate(t *testing.T) {
	msgs := []any{map[string]any{"role": "user", "content": strings.Repeat("My dishwasher is leaking. ", 20), "id": "u1"}}
	buf := make([]byte, 0, 4096)
	for _, v := range []any{msgs, map[string]any{"b": []any{"x", 1.5}, "a": true}, []any{"leaking"}, "WDT780SAEM1", strings.Repeat("é", 300)} {
		if n := testing.AllocsPerRun(100, func() { appendSummary(buf[:0], v) }); n != 0 {
			t.Errorf("%v allocations appending the summary of %.40v", n, v)
		}
	}
}
