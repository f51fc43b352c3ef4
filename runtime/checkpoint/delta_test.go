package checkpoint

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestAppendArrays(t *testing.T) {
	tests := []struct {
		name   string
		base   string
		deltas []string
	}{
		{"no deltas", `[1,2]`, nil},
		{"null base", `null`, []string{`[1]`}},
		{"empty base", `[]`, []string{`[1, 2]`, `[3]`}},
		{"empty delta", `[1]`, []string{`[]`, ` [ ] `, `[2]`}},
		{"objects and whitespace", ` [ {"a":[1,2]} ] `, []string{"[\n{\"b\":\"]\"}\n]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want []any
			_ = json.Unmarshal([]byte(tt.base), &want)
			raw := make([]json.RawMessage, len(tt.deltas))
			for i, d := range tt.deltas {
				raw[i] = json.RawMessage(d)
				var items []any
				if err := json.Unmarshal([]byte(d), &items); err != nil {
					t.Fatal(err)
				}
				want = append(want, items...)
			}
			got, err := AppendArrays(json.RawMessage(tt.base), raw...)
			if err != nil {
				t.Fatalf("AppendArrays: %v", err)
			}
			var gotItems []any
			if err := json.Unmarshal(got, &gotItems); err != nil {
				t.Fatalf("result %s is not JSON: %v", got, err)
			}
			if want == nil {
				want = []any{}
			}
			if !reflect.DeepEqual(gotItems, want) {
				t.Errorf("got %s, want %v", got, want)
			}
		})
	}
}

func TestAppendArraysErrors(t *testing.T) {
	if _, err := AppendArrays(json.RawMessage(`{"a":1}`)); err == nil || !strings.Contains(err.Error(), "base") {
		t.Errorf("object base: err = %v, want error naming base", err)
	}
	if _, err := AppendArrays(json.RawMessage(`[]`), json.RawMessage(`[1]`), json.RawMessage(`3`)); err == nil || !strings.Contains(err.Error(), "delta 1") {
		t.Errorf("scalar delta: err = %v, want error naming delta 1", err)
	}
}

func TestValidateBlob(t *testing.T) {
	tests := []struct {
		name string
		blob Blob
		ok   bool
	}{
		{"full", Blob{Field: "a", Version: 1, Data: json.RawMessage(`"x"`)}, true},
		{"delta", Blob{Field: "a", Version: 3, Base: 2, Data: json.RawMessage(`[1]`)}, true},
		{"no field", Blob{Version: 1, Data: json.RawMessage(`1`)}, false},
		{"zero version", Blob{Field: "a", Data: json.RawMessage(`1`)}, false},
		{"base not older", Blob{Field: "a", Version: 2, Base: 2, Data: json.RawMessage(`[]`)}, false},
		{"negative base", Blob{Field: "a", Version: 2, Base: -1, Data: json.RawMessage(`[]`)}, false},
		{"invalid json", Blob{Field: "a", Version: 1, Data: json.RawMessage(`{`)}, false},
		{"delta not array", Blob{Field: "a", Version: 2, Base: 1, Data: json.RawMessage(`{}`)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateBlob(tt.blob)
			if (err == nil) != tt.ok {
				t.Errorf("ValidateBlob = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}
