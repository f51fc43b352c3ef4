package hitl

import (
	"strings"
	"testing"
)

func TestValidateResponse(t *testing.T) {
	form := map[string]any{"fields": []any{
		map[string]any{"name": "key", "required": true},
		map[string]any{"key": "when", "required": true},
		map[string]any{"name": "category", "options": []any{"plan", map[string]any{"value": "note", "label": "Note"}}},
	}}
	tests := []struct {
		name     string
		form     map[string]any
		response any
		want     string // "" when the response is valid
	}{
		{"complete", form, map[string]any{"key": "k", "when": "today", "category": "note"}, ""},
		{"optional left out", form, map[string]any{"key": "k", "when": "today"}, ""},
		{"one missing", form, map[string]any{"key": "k"}, "missing required fields: when"},
		{"blank counts as missing", form, map[string]any{"key": " ", "when": "x"}, "missing required fields: key"},
		{"bad option", form, map[string]any{"key": "k", "when": "x", "category": "misc"}, `field "category": misc is not one of [plan, note]`},
		{"not an object", form, "yes", "must be an object, got string"},
		{"nothing", form, nil, "no response was given"},
		{"no fields takes any answer", nil, "yes", ""},
		{"no fields still needs an answer", nil, "", "no response was given"},
		{"fields as a map", map[string]any{"fields": map[string]any{"a": map[string]any{"required": true}}}, map[string]any{}, "no response was given"},
		{"fields as a map, missing", map[string]any{"fields": map[string]any{"a": map[string]any{"required": true}, "b": map[string]any{}}}, map[string]any{"b": 1}, "missing required fields: a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fields, err := parseForm(tt.form)
			if err != nil {
				t.Fatal(err)
			}
			err = validate(fields, tt.response)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestParseFormErrors(t *testing.T) {
	tests := []struct {
		form map[string]any
		want string
	}{
		{map[string]any{"fields": "x"}, "fields must be a list or a map"},
		{map[string]any{"fields": []any{"x"}}, "fields[0] must be an object"},
		{map[string]any{"fields": []any{map[string]any{"label": "L"}}}, "has no name"},
		{map[string]any{"fields": []any{map[string]any{"name": "a", "required": "yes"}}}, "required must be true or false"},
		{map[string]any{"fields": []any{map[string]any{"name": "a", "options": "x"}}}, "options must be a list"},
	}
	for _, tt := range tests {
		if _, err := parseForm(tt.form); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseForm(%v) = %v, want %q", tt.form, err, tt.want)
		}
	}
}
