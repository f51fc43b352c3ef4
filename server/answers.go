package server

import (
	"encoding/json"
	"fmt"

	"github.com/graphctl/graphctl/runtime/compile"
)

// AnswerKind is a kind of answer to a pending interrupt of the chat graph,
// defined by the node package whose nodes raise such interrupts, beside the
// form answers of /hitl/*: it is posted to /<Name>/respond, stored, and used
// by /<Name>/continue to resume the session. The application lists the kinds
// it serves in Config.Answers.
type AnswerKind struct {
	// Name is the endpoints' path segment and the kind stored with an answer.
	Name string
	// Pending reports whether an answer is for the pending interrupt whose
	// payload is given. request is the answer's JSON body (nil when the
	// stored answer is used), state the session's state as stored, field by
	// field, and g the chat graph. An error says why the interrupt cannot be
	// answered now; the server answers it with a 409.
	Pending func(payload, request map[string]any, state map[string]json.RawMessage, g *compile.Graph) (bool, error)
	// Waiting completes "session … is not waiting" when no pending
	// interrupt is of the kind, such as "on a request".
	Waiting string
}

// formAnswers is the kind of /hitl/*: an answer to any pending interrupt.
const formAnswers responseKind = "hitl"

// checkAnswerKinds checks the configured answer kinds: each named, with a
// Pending function, once, and not the form answers' name.
func checkAnswerKinds(kinds []AnswerKind) error {
	seen := map[string]bool{string(formAnswers): true}
	for i, k := range kinds {
		if k.Name == "" || k.Pending == nil {
			return fmt.Errorf("answer kind %d: a name and a Pending function are required", i)
		}
		if !isPathSegment(k.Name) {
			return fmt.Errorf("answer kind %q: the name must be letters, digits, - or _", k.Name)
		}
		if seen[k.Name] {
			return fmt.Errorf("answer kind %q is given twice (or is the form answers' own)", k.Name)
		}
		seen[k.Name] = true
	}
	return nil
}

func isPathSegment(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return s != ""
}

// answerKind returns the configured kind named kind, or nil for the form
// answers.
func (s *Server) answerKind(kind responseKind) *AnswerKind {
	for i := range s.cfg.Answers {
		if s.cfg.Answers[i].Name == string(kind) {
			return &s.cfg.Answers[i]
		}
	}
	return nil
}
