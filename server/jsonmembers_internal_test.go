package server

import (
	"bytes"
	"encoding/json"
	"testing"
)

// kwargsByJSON is what kwargs were before toKwargs built them: the request
// encoded and decoded exactly.
func kwargsByJSON(t *testing.T, body *runBody) map[string]any {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := decodeExact(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// decodeRequest decodes a run request as the API does.
func decodeRequest(t *testing.T, raw string) *runBody {
	t.Helper()
	var body runBody
	dec := jsonDecoder(bytes.NewReader([]byte(raw)))
	if err := dec.Decode(&body); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return &body
}

// toKwargs gives the kwargs that encoding and decoding the request gives,
// member for member: their JSON is the same bytes.
func TestKwargsAsTheRequestsJSON(t *testing.T) {
	for _, raw := range []string{
		`{}`,
		`{"assistant_id":"a","input":{"messages":[{"role":"user","content":"hi <&> \u2028"}],"n":1.50,"big":12345678901234567890123}}`,
		`{"assistant_id":"a","input":null,"command":{"resume":{"x":1e300},"goto":["n"]}}`,
		`{"assistant_id":"a","input":{},"command":{}}`,
		`{"assistant_id":"a","command":{"resume":false,"interrupt_id":"i","update":[["k",2]],"goto":{"node":"n","input":{"a":null}}}}`,
		`{"checkpoint":{},"checkpoint_id":"c","stream_subgraphs":true,"stream_mode":["values","updates"],"interrupt_before":"*","interrupt_after":[]}`,
		`{"multitask_strategy":"enqueue","if_not_exists":"create","on_disconnect":"cancel","metadata":{},"config":{"recursion_limit":7,"configurable":{"x":[1,2.5e-7,1e21]}}}`,
		`{"metadata":{"a":{"b":[true,null]}},"context":{},"on_completion":"keep","durability":"exit"}`,
		`{"checkpoint_during":false,"stream_resumable":0,"feedback_keys":[],"langsmith_tracer":{},"webhook":"http://x","after_seconds":1.5}`,
		`{"stream_subgraphs":false,"stream_mode":"","context":null,"webhook":null}`,
	} {
		body := decodeRequest(t, raw)
		got, err := toKwargs(body)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		want := kwargsByJSON(t, body)
		gotJSON, _ := json.Marshal(got)
		wantJSON, _ := json.Marshal(want)
		if !bytes.Equal(gotJSON, wantJSON) {
			t.Errorf("%s:\n got %s\nwant %s", raw, gotJSON, wantJSON)
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d members, want %d", raw, len(got), len(want))
		}
		for k, v := range want {
			if _, ok := got[k]; !ok {
				t.Errorf("%s: member %q (%v) missing", raw, k, v)
			}
		}
	}
}

// Every field of a run request that holds a value is a member of its
// kwargs: a field added to runBody cannot be left out of them.
func TestKwargsHaveEveryField(t *testing.T) {
	body := decodeRequest(t, `{"assistant_id":"a","input":{"k":"v"},"command":{"resume":1},"checkpoint":{"checkpoint_id":"c"},"checkpoint_id":"c",
		"stream_subgraphs":true,"stream_mode":"values","interrupt_before":"*","interrupt_after":"*","multitask_strategy":"enqueue",
		"if_not_exists":"create","on_disconnect":"cancel","metadata":{"m":1},"config":{"c":1},"context":{"x":1},"on_completion":"keep",
		"durability":"sync","checkpoint_during":true,"stream_resumable":true,"feedback_keys":["f"],"langsmith_tracer":{"t":1},
		"webhook":"http://h","after_seconds":1}`)
	got, err := toKwargs(body)
	if err != nil {
		t.Fatal(err)
	}
	want := kwargsByJSON(t, body)
	if len(got) != len(runBodyMembers.fields) || len(want) != len(got) {
		t.Errorf("%d members, want every one of the %d fields (%d by JSON)", len(got), len(runBodyMembers.fields), len(want))
	}
	gotJSON, _ := json.Marshal(got)
	wantJSON, _ := json.Marshal(want)
	if !bytes.Equal(gotJSON, wantJSON) {
		t.Errorf("got %s\nwant %s", gotJSON, wantJSON)
	}
}

// BenchmarkKwargs reports the cost of a run request's kwargs.
func BenchmarkKwargs(b *testing.B) {
	var body runBody
	raw := []byte(`{"assistant_id":"slot_filling","input":{"messages":[{"role":"user","content":"My dishwasher WDT780SAEM1 is leaking"}]},"stream_mode":"__none__","config":{"recursion_limit":25}}`)
	if err := jsonDecoder(bytes.NewReader(raw)).Decode(&body); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := toKwargs(&body); err != nil {
			b.Fatal(err)
		}
	}
}
