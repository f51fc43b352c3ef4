package load

import (
	"fmt"
	"testing"
)

func TestCostly(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string // line:col of the outermost costly expressions
	}{
		{"none", "a: 1\nb: \"x\"\nc: [1, 2]\n", nil},
		{"list comprehension", "import \"list\"\na: 1\nb: [for i in list.Range(0, 10, 1) {i}]\n", []string{"3:5"}},
		{"struct comprehension", "x: {a: 1}\nfor k, v in x {\n\t\"\\(k)2\": v\n}\n", []string{"2:1"}},
		{"repeat and multiplication", "import \"strings\"\na: strings.Repeat(\"x\", 5)\nb: \"y\" * 3\n", []string{"2:4", "3:4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, p := range Costly([]SourceFile{{Name: "g.cue", Data: []byte(tt.src)}}) {
				if p.File != "g.cue" {
					t.Errorf("position in file %q, want g.cue", p.File)
				}
				got = append(got, fmt.Sprintf("%d:%d", p.Line, p.Col))
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("Costly = %v, want %v", got, tt.want)
			}
		})
	}
	if got := Costly([]SourceFile{{Name: "bad.cue", Data: []byte("a: [")}}); len(got) != 0 {
		t.Errorf("a file that does not parse has costly expressions %v", got)
	}
}
