package checkpoint

import "context"

// HeadReader is implemented by checkpointers that can read a thread's newest
// checkpoint without materialising its field values. The engine keeps the
// decoded state of recently run threads and uses Head to check, cheaply, that
// the checkpoint it has cached is still the thread's newest (another process
// sharing the database may have moved the thread on).
type HeadReader interface {
	// Head returns the thread's newest checkpoint with its pending writes and
	// nil Values, or ErrNotFound.
	Head(ctx context.Context, threadID string) (*Snapshot, error)
}
