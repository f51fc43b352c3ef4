// Package contract owns ExecutionContracts: the records of the actions a
// model asks for (a tool call, a request to a human), which the nodes that
// execute them move through their statuses. It declares the state type
// "contracts" (a list of contracts) and its reducer, which upserts
// contracts by id and rejects illegal status transitions, and it says which
// pending interrupt an answer about a contract is for (CheckAnswer, behind
// graphctl serve's /ecs/respond and /ecs/continue).
//
// Import it for its side effects to declare the type in graph files; the
// node packages that read or write contracts import it.
package contract

import (
	"fmt"

	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/reducer"
)

// Kind is the state type of a list of contracts, as graph files write it.
const Kind graph.Kind = "contracts"

// ReducerName is the reducer fields of type contracts get by default.
const ReducerName = "contracts"

// Contract statuses.
const (
	Pending   = "PENDING"
	Running   = "RUNNING"
	Waiting   = "WAITING"
	Completed = "COMPLETED"
	Failed    = "FAILED"
	Cancelled = "CANCELLED"
)

// legalTransitions lists, for each status, the statuses a contract may move to.
var legalTransitions = map[string][]string{
	Pending:   {Running, Waiting, Cancelled, Failed},
	Running:   {Completed, Failed, Waiting},
	Waiting:   {Running, Cancelled, Failed},
	Completed: {},
	Failed:    {},
	Cancelled: {},
}

// CanTransition reports whether a contract may move from one status to another.
// Keeping the same status is always allowed.
func CanTransition(from, to string) bool {
	if from == to {
		return true
	}
	for _, s := range legalTransitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// checkTransition vets a contract written over before (nil for a new one).
func checkTransition(before, after map[string]any) error {
	to, _ := after["status"].(string)
	if _, known := legalTransitions[to]; !known {
		return fmt.Errorf("unknown contract status %q", to)
	}
	if before == nil {
		return nil
	}
	from, _ := before["status"].(string)
	if !CanTransition(from, to) {
		return fmt.Errorf("illegal contract transition %s → %s", from, to)
	}
	return nil
}

// Reduce is the contracts reducer: it upserts the written contracts by id,
// rejecting illegal status transitions.
func Reduce(old, update any) (reducer.Result, error) {
	return reducer.UpsertByID(old, update, checkTransition)
}

// IsField reports whether t is the type of a contracts field.
func IsField(t graph.Type) bool { return t.Kind == Kind }

func init() {
	str := graph.Type{Kind: graph.String}
	graph.MustRegisterListType(graph.ListType{
		Kind:    Kind,
		Doc:     "ExecutionContracts `{id, action_type, tool_name, status, arguments?, result?, error_message?}`",
		Reducer: ReducerName,
		Fields:  map[string]graph.Type{"id": str, "tool_name": str, "status": str},
	})
	reducer.MustRegister(&reducer.Reducer{Name: ReducerName,
		Description: "upserts ExecutionContracts by id, rejecting illegal status transitions",
		Accepts:     func(t graph.Type) bool { return t.Kind == Kind || reducer.IsObjectList(t) },
		Reduce:      Reduce, Appends: true})
}
