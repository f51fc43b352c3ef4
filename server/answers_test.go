package server

import (
	"strings"
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/contract"
)

// contractAnswers is the answer kind graphctl serve serves at /ecs/*.
var contractAnswers = AnswerKind{Name: contract.AnswerName, Pending: contract.PendingAnswer, Waiting: contract.AnswerWaiting}

func TestCheckAnswerKinds(t *testing.T) {
	for _, tc := range []struct {
		name  string
		kinds []AnswerKind
		err   string
	}{
		{name: "none"},
		{name: "one", kinds: []AnswerKind{contractAnswers}},
		{name: "no name", kinds: []AnswerKind{{Pending: contract.PendingAnswer}}, err: "a name and a Pending function"},
		{name: "no function", kinds: []AnswerKind{{Name: "x"}}, err: "a name and a Pending function"},
		{name: "the form answers' name", kinds: []AnswerKind{{Name: "hitl", Pending: contract.PendingAnswer}}, err: `"hitl" is given twice`},
		{name: "twice", kinds: []AnswerKind{contractAnswers, contractAnswers}, err: "given twice"},
		{name: "not a path segment", kinds: []AnswerKind{{Name: "a/b", Pending: contract.PendingAnswer}}, err: "letters, digits"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkAnswerKinds(tc.kinds)
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want one containing %q", err, tc.err)
			}
		})
	}
}
