package load

import "testing"

// TestTypeHint names the state type meant by the types of other languages
// and by misspelt ones, and nothing for text that resembles no type.
func TestTypeHint(t *testing.T) {
	tests := []struct{ text, want string }{
		{"str", "string"},
		{"String", "string"},
		{"integer", "int"},
		{"number", "float"},
		{"boolean", "bool"},
		{"dict", "object"},
		{"array", "list"},
		{"list[str]", "list<string>"},
		{"List[int]", "list<int>"},
		{"typing.List[str]", "list<string>"},
		{"Array<number>", "list<float>"},
		{"string[]", "list<string>"},
		{"[]string", "list<string>"},
		{"Dict[str, int]", "map<int>"},
		{"Record<string, boolean>", "map<bool>"},
		{"map[string]float64", "map<float>"},
		{"Optional[str]", "string"},
		{"list[dict]", "list<object>"},
		{"list[BaseMessage]", "messages"},
		{"Annotated[list, add_messages]", "messages"},
		{"Annotated[int, operator.add]", "int"},
		{"strng", "string"},
		{"flaot", "float"},
		{"list<str>", "list<string>"},
		{"widget", ""},
		{"list[widget]", ""},
		{"list[list[list[list[list[list[str]]]]]]", ""},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			want := ""
			if tt.want != "" {
				want = `; did you mean "` + tt.want + `"?`
			}
			if got := TypeHint(tt.text); got != want {
				t.Errorf("TypeHint(%q) = %q, want %q", tt.text, got, want)
			}
		})
	}
}
