package checkpointtest

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// ErrBatchRefused is the error of a FailingBatches' refused batch.
var ErrBatchRefused = errors.New("disk on fire")

// FailingBatches wraps a Checkpointer that writes batches: while Fail is
// set, every PutBatch fails with ErrBatchRefused and writes nothing; other
// calls go to the Checkpointer.
type FailingBatches struct {
	checkpoint.Checkpointer
	Fail atomic.Bool
}

// PutBatch implements checkpoint.BatchPutter.
func (f *FailingBatches) PutBatch(ctx context.Context, puts []checkpoint.PutRequest) error {
	if f.Fail.Load() {
		return ErrBatchRefused
	}
	return f.Checkpointer.(checkpoint.BatchPutter).PutBatch(ctx, puts)
}
