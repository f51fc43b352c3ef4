package badger

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/graphctl/graphctl/runtime/jsonread"
	"github.com/graphctl/graphctl/runtime/store/jsonenc"
)

// TestDecodeObjectIsUnmarshal checks that decodeObject decodes what
// json.Unmarshal decodes into a map[string]any, and fails where it fails,
// on what the fast path takes and on what it leaves to json.Unmarshal (the
// map of a failed decode is not used).
func TestDecodeObjectIsUnmarshal(t *testing.T) {
	tests := []string{
		`{}`,
		` { "a" : 1 , "b" : [ ] , "c" : { } } `,
		`{"s":"plain","u":"héllo ✓","e":"q\"b\\s\/n\nr\rt\tb\bf\f"}`,
		`{"amp":"\u0026\u003c\u003e","nul":"\u0000","bmp":"\u00e9\u2028\uFFFD"}`,
		`{"pair":"\ud83d\ude00","lone":"\ud800x","bad":"\uZZZZ"}`,
		"{\"invalid\":\"\xff\xfe\"}",
		"{\"ctrl\":\"a\x01b\"}",
		`{"n":[0,-0,1,-1,12.5,1e3,1E-3,-2.5e+10,123456789012345678901234567890]}`,
		`{"big":1e999}`,
		`{"lead":01}`, `{"dot":1.}`, `{"exp":1e}`, `{"minus":-}`,
		`{"lit":[true,false,null]}`, `{"lit":tru}`, `{"lit":nul}`,
		`{"dup":1,"dup":2}`,
		`{"nest":{"a":[{"b":[1,{"c":"d"}]}]}}`,
		`{"a":1}x`, `{"a":1`, `{"a" 1}`, `{"a":1,}`, `{,}`, `{"a":[1,]}`, `{"a":[1 2]}`, `{1:2}`,
		`[1,2]`, `"s"`, `null`, ``, `   `,
		`{"unterminated":"abc`, `{"esc":"abc\`, `{"esc":"\x"}`,
	}
	for _, in := range tests {
		var want map[string]any
		werr := json.Unmarshal([]byte(in), &want)
		got, err := decodeObject([]byte(in))
		if (err != nil) != (werr != nil) || err != nil && err.Error() != werr.Error() {
			t.Errorf("decodeObject(%q) error %v, json.Unmarshal's %v", in, err, werr)
			continue
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("decodeObject(%q) = %#v, json.Unmarshal gives %#v", in, got, want)
		}
	}
}

// TestDecodeObjectReadsStoredValues checks decodeObject on what the Store
// writes: values encoded by jsonenc, which escapes < > & and U+2028.
func TestDecodeObjectReadsStoredValues(t *testing.T) {
	v := map[string]any{"text": "a <b> & c\u2028d\n\t\"q\"", "n": 3.25, "list": []any{"x", 1.0, true, nil, map[string]any{}},
		"raw": jsonenc.Raw(`{"k":[1,2]}`), "emoji": "😀"}
	b, err := jsonenc.Append(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	r := jsonread.Reader{Data: b}
	fast, ok := r.Document()
	if !ok || !reflect.DeepEqual(fast, want) {
		t.Errorf("the fast path on %s: %#v (ok %v), want %#v", b, fast, ok, want)
	}
}

// BenchmarkDecodeObject decodes an audit conversation record's value, as
// the audit log reads it at every run's end, with decodeObject and with
// json.Unmarshal.
func BenchmarkDecodeObject(b *testing.B) {
	v := []byte(`{"created_at":"2026-11-26T22:33:03.617039236Z","graph":"slot_filling","messages":8,"runs":4,"thread_id":"ebf87082-a73c-431b-8441-5ddc61d94f65","updated_at":"2026-11-26T22:33:03.622648085Z"}`)
	b.Run("decodeObject", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeObject(v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m map[string]any
			if err := json.Unmarshal(v, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// FuzzDecodeObject checks decodeObject against json.Unmarshal on any input:
// the same map, or the same error.
func FuzzDecodeObject(f *testing.F) {
	for _, seed := range []string{`{}`, `{"a":[1,-2.5e3,true,null,{"b":"c\n\u00e9"}]}`, `{"a":"\ud83d\ude00"}`, `{"a":1,}`, `[1]`, "{\"x\":\"\xff\"}"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var want map[string]any
		werr := json.Unmarshal(in, &want)
		got, err := decodeObject(in)
		if (err != nil) != (werr != nil) || err != nil && err.Error() != werr.Error() {
			t.Fatalf("decodeObject(%q) error %v, json.Unmarshal's %v", in, err, werr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeObject(%q) = %#v, json.Unmarshal gives %#v", in, got, want)
		}
	})
}
