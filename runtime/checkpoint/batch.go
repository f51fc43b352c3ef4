package checkpoint

import (
	"context"
	"fmt"
)

// Durability says when a run's checkpoints are written, as LangGraph's
// durability run option does.
type Durability string

// The durability modes of a run.
const (
	// DurabilitySync writes each checkpoint before the next step starts.
	DurabilitySync Durability = "sync"
	// DurabilityAsync writes checkpoints in the background while the next
	// steps run, several in one transaction, and every one of them before
	// the run ends (finishes, stops at an interrupt or fails).
	DurabilityAsync Durability = "async"
	// DurabilityExit writes the run's checkpoints when it ends, all in one
	// transaction.
	DurabilityExit Durability = "exit"
)

// ParseDurability reads a durability mode; "" is def.
func ParseDurability(s string, def Durability) (Durability, error) {
	switch d := Durability(s); d {
	case "":
		return def, nil
	case DurabilitySync, DurabilityAsync, DurabilityExit:
		return d, nil
	}
	return "", fmt.Errorf("durability %q: use sync, async or exit", s)
}

// PutRequest is one checkpoint to put, with the blobs of the fields that
// changed in it.
type PutRequest struct {
	Checkpoint Checkpoint
	Blobs      []Blob
}

// BatchPutter is implemented by a Checkpointer that writes several
// checkpoints of one thread in one transaction.
type BatchPutter interface {
	// PutBatch stores the checkpoints, which all belong to one thread and
	// each of which is the child of the one before it (the first one's
	// parent may be stored already), with their blobs: all or none of them,
	// as the same Puts in a row would. A checkpoint's blobs may be based on
	// the blobs of the ones before it in the batch.
	PutBatch(ctx context.Context, puts []PutRequest) error
}

// MemoryResident is implemented by a Checkpointer that can tell whether it
// keeps its checkpoints in the process's memory, where a write costs no
// I/O: writing checkpoints behind a run, in batches, then does not pay.
type MemoryResident interface {
	InMemory() bool
}

// PutAll stores the checkpoints of puts in order: in one transaction when c
// is a BatchPutter, else one Put after another.
func PutAll(ctx context.Context, c Checkpointer, puts []PutRequest) error {
	if len(puts) == 0 {
		return nil
	}
	if b, ok := c.(BatchPutter); ok {
		return b.PutBatch(ctx, puts)
	}
	for _, p := range puts {
		if err := c.Put(ctx, p.Checkpoint, p.Blobs); err != nil {
			return err
		}
	}
	return nil
}
