package jsonread_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime/jsonread"
)

// unmarshal decodes data as encoding/json does, with json.Number when exact.
func unmarshal(data []byte, exact bool) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	if exact {
		d.UseNumber()
	}
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, &json.SyntaxError{}
	}
	return v, nil
}

// A document the Reader takes decodes to what encoding/json gives, in both
// number modes; one it gives up on is one encoding/json refuses or decodes
// by a rule the Reader leaves to it.
func TestReaderDecodesAsEncodingJSON(t *testing.T) {
	cases := []struct {
		in   string
		take bool
	}{
		{`{}`, true},
		{` {"a": [1, -2.5e3, true, false, null, {"b": "c"}], "d": ""} `, true},
		{`[1,2,3]`, true},
		{`"plain ✓"`, true},
		{`"esc\n\u00e9"`, true},
		{`12345678901234567890`, true},
		{`{"a":1,}`, false},
		{`{"a" 1}`, false},
		{`[1 2]`, false},
		{`01`, false},
		{`1.`, false},
		{"\"\xff\"", true},
		{`"\x"`, false},
		{"\"a\x01\"", false},
		{`tru`, false},
		{`{"a":1} x`, false},
		{strings.Repeat("[", 10001) + strings.Repeat("]", 10001), false},
	}
	for _, c := range cases {
		for _, exact := range []bool{false, true} {
			r := jsonread.Reader{Data: []byte(c.in), Exact: exact}
			got, ok := r.Document()
			if ok != c.take {
				t.Errorf("%.40q (exact %v): taken %v, want %v", c.in, exact, ok, c.take)
				continue
			}
			if !ok {
				continue
			}
			want, err := unmarshal([]byte(c.in), exact)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%.40q (exact %v) = %#v, encoding/json gives %#v (%v)", c.in, exact, got, want, err)
			}
		}
	}
}
