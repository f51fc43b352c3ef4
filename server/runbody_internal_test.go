package server

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// runBodySamples are run requests, plain and odd: readRunBody reads the
// plain ones and leaves the others to encoding/json.
var runBodySamples = []string{
	`{"assistant_id":"slot_filling","input":{"messages":[{"role":"user","content":"My dishwasher WDT780SAEM1 is leaking"}]}}`,
	` {"assistant_id" : "a" , "input" : { "n" : -0.5e+3 , "big" : 123456789012345678901234567890, "z": 0, "l": [ ] , "o": { } } } `,
	`{"assistant_id":"a","input":{"messages":[{"type":"human","content":"tab\tnew\nline \"q\" \\ \u00e9 \ud83d\ude00 \u2028 <&>"}]}}`,
	`{"assistant_id":"a","input":{"s":"caf\u00e9 ☕ naïve"},"metadata":{"k":1.25,"n":null,"t":true,"f":false},"config":{"recursion_limit":7,"configurable":{"x":[1,2]}}}`,
	`{"assistant_id":"a","command":{"resume":{"answer":42},"interrupt_id":"i","update":[["k",2]],"goto":[{"node":"n","input":{"a":1}},"m"]}}`,
	`{"command":{},"input":null,"checkpoint":null,"metadata":null,"stream_mode":null,"command":null}`,
	`{"command":null}`,
	`{"stream_mode":["values","updates"],"stream_subgraphs":true,"interrupt_before":"*","interrupt_after":["a"],"multitask_strategy":"enqueue"}`,
	`{"if_not_exists":"create","on_disconnect":"cancel","on_completion":"keep","durability":"exit","context":{"c":1},"checkpoint_during":false}`,
	`{"stream_resumable":true,"feedback_keys":["x"],"langsmith_tracer":{},"webhook":"http://h/x","after_seconds":1.5,"checkpoint":{"checkpoint_id":"c"},"checkpoint_id":"c"}`,
	`{"unknown":{"deep":[1,2,{"x":1e999}]},"assistant_id":"a"}`,
	`{"Assistant_ID":"a"}`,
	`{"assistant_id":"a","assistant_id":"b"}`,
	`{"metadata":{"a":1},"metadata":{"b":2}}`,
	`{"metadata":{"a":1,"a":2}}`,
	`{"assistant_id":5}`,
	`{"stream_subgraphs":"yes"}`,
	`{"input":[1,2]}`,
	`{"input":"text"}`,
	`{"config":[]}`,
	`{"command":{"resume":1e400}}`,
	`{"after_seconds":1e400}`,
	`{"input":{"x":1e400}}`,
	`{"assistant_id":"a"} {}`,
	`{"assistant_id":"a"}x`,
	`{"assistant_id":"a",}`,
	`{"assistant_id":"a"`,
	`{"input":{"x":01}}`,
	`{"input":{"x":-}}`,
	`{"input":{"x":1.}}`,
	`{"input":{"x":.5}}`,
	`{"input":{"x":"bad \x01 control"}}`,
	"{\"input\":{\"x\":\"invalid \xff utf8\"}}",
	"{\"input\":{\"x\":\"\\ud800 lone surrogate\"}}",
	`{"input":{"x":tru}}`,
	`[]`,
	`null`,
	``,
	`   `,
	`"str"`,
}

// readRunBody reads what it takes exactly as encoding/json decodes it.
func TestReadRunBodyAsEncodingJSON(t *testing.T) {
	read := 0
	for _, raw := range runBodySamples {
		if checkRunBodyRead(t, []byte(raw)) {
			read++
		}
	}
	if read < 10 {
		t.Errorf("readRunBody read %d of the samples; the plain ones are to be read", read)
	}
}

// checkRunBodyRead compares readRunBody with encoding/json on data and
// reports whether readRunBody read it.
func checkRunBodyRead(t *testing.T, data []byte) bool {
	t.Helper()
	var want runBody
	err := decodeBody(bytes.NewReader(data), &want)
	var got runBody
	if !readRunBody(data, &got) {
		return false
	}
	if err != nil {
		t.Errorf("%q: read, but encoding/json fails: %v", data, err)
		return true
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%q:\n read %#v\n want %#v", data, got, want)
	}
	return true
}

// decodeExact gives what checkpoint.DecodeJSON gives, value or error.
func TestDecodeExactAsDecodeJSON(t *testing.T) {
	for _, raw := range runBodySamples {
		for _, data := range []string{raw, `{"v":` + raw + `}`} {
			checkDecodeExact(t, []byte(data))
		}
	}
}

func checkDecodeExact(t *testing.T, data []byte) {
	t.Helper()
	var wantMap, gotMap map[string]any
	wantErr := checkpoint.DecodeJSON(data, &wantMap)
	gotErr := decodeExact(data, &gotMap)
	if (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error() || !reflect.DeepEqual(gotMap, wantMap) {
		t.Errorf("%q into a map: got %#v, %v; want %#v, %v", data, gotMap, gotErr, wantMap, wantErr)
	}
	var wantAny, gotAny any
	wantErr = checkpoint.DecodeJSON(data, &wantAny)
	gotErr = decodeExact(data, &gotAny)
	if (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error() || !reflect.DeepEqual(gotAny, wantAny) {
		t.Errorf("%q into an any: got %#v, %v; want %#v, %v", data, gotAny, gotErr, wantAny, wantErr)
	}
}

// FuzzRunBody compares readRunBody and decodeExact with encoding/json on
// any body.
func FuzzRunBody(f *testing.F) {
	for _, raw := range runBodySamples {
		f.Add([]byte(raw))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRunBodyRead(t, data)
		checkDecodeExact(t, data)
	})
}

// BenchmarkBindRunBody reports the cost of decoding the run request of
// bench serve: by readRunBody, and by encoding/json as before it.
func BenchmarkBindRunBody(b *testing.B) {
	raw := []byte(`{"assistant_id":"slot_filling","input":{"messages":[{"role":"user","content":"My dishwasher WDT780SAEM1 is leaking"}]}}`)
	b.Run("readRunBody", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var body runBody
			if !readRunBody(raw, &body) {
				b.Fatal("not read")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var body runBody
			if err := decodeBody(bytes.NewReader(raw), &body); err != nil {
				b.Fatal(err)
			}
		}
	})
}
