package reducer

import "fmt"

// Contract statuses of an ExecutionContract.
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

func checkContractTransition(before, after map[string]any) error {
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
