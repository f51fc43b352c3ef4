package contract

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/graphctl/graphctl/runtime/compile"
)

// Answers about contracts (a human's answer to an ecs_request) are posted to
// graphctl serve's /ecs/respond and /ecs/continue: AnswerName and
// PendingAnswer make that server answer kind.
const (
	// AnswerName is the path segment of the answer endpoints.
	AnswerName = "ecs"
	// AnswerWaiting completes "session … is not waiting" when no pending
	// interrupt asks about a contract.
	AnswerWaiting = "on an execution contract"
	// AnswerContractField is the field of an answer's body that names the
	// contract it answers (optional).
	AnswerContractField = "contract_id"
)

// PendingAnswer reports whether an answer about a contract is for the
// pending interrupt whose payload is given: the payload names a contract
// (its "contract", or its "contract_id"), the one the answer's body names in
// contract_id when it names one. The contract must be WAITING as the payload
// has it and in the session's state (every contracts field of g, the chat
// graph; a graph without one has nothing to check), else the error says what
// it is. request and g may be nil.
func PendingAnswer(payload, request map[string]any, state map[string]json.RawMessage, g *compile.Graph) (bool, error) {
	asked, ok := payload["contract"].(map[string]any)
	if !ok {
		id, hasID := payload["contract_id"].(string)
		if !hasID || id == "" {
			return false, nil
		}
		asked = map[string]any{"id": id}
	}
	if want, _ := request[AnswerContractField].(string); want != "" && fmt.Sprint(asked["id"]) != want {
		return false, nil
	}
	if st, has := asked["status"].(string); has && !strings.EqualFold(st, Waiting) {
		return false, fmt.Errorf("contract %v is %s, not %s", asked["id"], st, Waiting)
	}
	// The interrupt's payload is the contract as it was asked; the state
	// says what it is now (a client may have cancelled it).
	return true, checkWaiting(state, g, fmt.Sprint(asked["id"]))
}

// checkWaiting checks that contract id is WAITING in the contracts fields
// of g in state.
func checkWaiting(state map[string]json.RawMessage, g *compile.Graph, id string) error {
	if g == nil {
		return nil
	}
	checked := false
	for _, name := range g.FieldOrder {
		f := g.Fields[name]
		if f == nil || !IsField(f.Spec.Type) {
			continue
		}
		checked = true
		raw, ok := state[name]
		if !ok {
			continue
		}
		var list []map[string]any
		if err := json.Unmarshal(raw, &list); err != nil {
			return fmt.Errorf("read contracts field %q: %w", name, err)
		}
		for _, c := range list {
			if fmt.Sprint(c["id"]) != id {
				continue
			}
			if st, _ := c["status"].(string); st != Waiting {
				return fmt.Errorf("contract %q is %s, not %s; nothing was changed", id, st, Waiting)
			}
			return nil
		}
	}
	if checked {
		return fmt.Errorf("contract %q is not in the session's state; nothing was changed", id)
	}
	return nil
}
