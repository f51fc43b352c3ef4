package engine_test

import (
	"fmt"

	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/reducer"
)

// The engine tests declare a list type as node packages do: "tickets",
// whose reducer upserts tickets by id and refuses to reopen a closed one.
func init() {
	graph.MustRegisterListType(graph.ListType{Kind: "tickets", Doc: "tickets {id, status}", Reducer: "tickets",
		Fields: map[string]graph.Type{"id": {Kind: graph.String}, "status": {Kind: graph.String}}})
	reducer.MustRegister(&reducer.Reducer{Name: "tickets", Description: "upserts tickets by id; a closed ticket stays closed",
		Accepts: func(t graph.Type) bool { return t.Kind == "tickets" }, Appends: true,
		Reduce: func(old, update any) (reducer.Result, error) {
			return reducer.UpsertByID(old, update, func(before, after map[string]any) error {
				if before != nil && before["status"] == "closed" && after["status"] != "closed" {
					return fmt.Errorf("ticket %v is closed", before["id"])
				}
				return nil
			})
		}})
}
