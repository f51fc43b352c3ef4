package literature_test

import (
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/literature"
)

func TestSearchTerms(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Does metformin slow cognitive decline?", "metformin slow cognitive decline"},
		{"What is the effect of statins on dementia risk in older adults?", "effect statins dementia risk older adults"},
		{"metformin cognitive decline", "metformin cognitive decline"},
		{"Is COVID-19 vaccination linked to myocarditis?", "COVID-19 vaccination linked myocarditis"},
		// The sources' own syntax is left alone.
		{`"cognitive decline" AND metformin`, `"cognitive decline" AND metformin`},
		{"metformin[Title] dementia", "metformin[Title] dementia"},
		{"(aspirin OR statin) stroke", "(aspirin OR statin) stroke"},
		// Nothing but question words: sent as written.
		{"What is it?", "What is it?"},
	}
	for _, tt := range tests {
		if got := literature.SearchTerms(tt.in); got != tt.want {
			t.Errorf("SearchTerms(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
