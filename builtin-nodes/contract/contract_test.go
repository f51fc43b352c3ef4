package contract_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/contract"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/reducer"
)

func item(id, status string) map[string]any {
	return map[string]any{"id": id, "tool_name": "search", "status": status}
}

func TestReducer(t *testing.T) {
	for _, tt := range []struct {
		name         string
		old, update  any
		want, err    string
		appendedFrom int
	}{
		{name: "legal transition", old: []any{item("c1", contract.Pending)}, update: item("c1", contract.Running),
			want: `[{"id":"c1","status":"RUNNING","tool_name":"search"}]`, appendedFrom: -1},
		{name: "new contract appended", old: []any{item("c1", contract.Pending)}, update: item("c2", contract.Pending),
			want: `[{"id":"c1","status":"PENDING","tool_name":"search"},{"id":"c2","status":"PENDING","tool_name":"search"}]`, appendedFrom: 1},
		{name: "illegal transition", old: []any{item("c1", contract.Completed)}, update: item("c1", contract.Running), err: "illegal contract transition COMPLETED → RUNNING"},
		{name: "unknown status", old: []any{}, update: item("c1", "DONE"), err: `unknown contract status "DONE"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := reducer.Lookup(contract.ReducerName)
			if !ok {
				t.Fatalf("reducer %q not registered", contract.ReducerName)
			}
			res, err := r.Reduce(tt.old, tt.update)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := json.Marshal(res.Value); string(got) != tt.want || res.AppendedFrom != tt.appendedFrom {
				t.Fatalf("got %s appended from %d, want %s from %d", got, res.AppendedFrom, tt.want, tt.appendedFrom)
			}
		})
	}
}

// The package declares the state type: a list whose zero value is [], whose
// items are objects and whose fields get the contracts reducer by default.
func TestDeclaredType(t *testing.T) {
	typ, err := graph.ParseType("contracts")
	if err != nil {
		t.Fatal(err)
	}
	if !typ.IsList() || !contract.IsField(typ) {
		t.Fatalf("contracts: list %v, field %v", typ.IsList(), contract.IsField(typ))
	}
	if got := reducer.Default(typ); got != contract.ReducerName {
		t.Errorf("default reducer %q, want %q", got, contract.ReducerName)
	}
	if _, err := typ.Normalize([]any{"not an object"}); err == nil {
		t.Error("a contract that is not an object was accepted")
	}
	r, _ := reducer.Lookup(contract.ReducerName)
	for typText, want := range map[string]bool{"contracts": true, "list<object>": true, "string": false, "list<string>": false} {
		tt, err := graph.ParseType(typText)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Accepts(tt); got != want {
			t.Errorf("contracts reducer accepts %s = %v, want %v", typText, got, want)
		}
	}
}

func TestCanTransition(t *testing.T) {
	for _, tt := range []struct {
		from, to string
		ok       bool
	}{
		{contract.Pending, contract.Waiting, true},
		{contract.Waiting, contract.Running, true},
		{contract.Completed, contract.Running, false},
		{contract.Failed, contract.Failed, true},
		{contract.Cancelled, contract.Pending, false},
	} {
		if got := contract.CanTransition(tt.from, tt.to); got != tt.ok {
			t.Errorf("%s → %s = %v, want %v", tt.from, tt.to, got, tt.ok)
		}
	}
}
