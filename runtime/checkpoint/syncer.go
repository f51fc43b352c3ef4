package checkpoint

import "context"

type syncedByCallerKey struct{}

// WithSyncByCaller returns a context whose writes a backend need not make
// durable when they end a run (see core.Options.SyncEnds): the caller calls
// Syncer.Sync itself before anyone is told the run ended, and that one
// fsync covers the run's last checkpoint and the caller's own records.
func WithSyncByCaller(ctx context.Context) context.Context {
	return context.WithValue(ctx, syncedByCallerKey{}, true)
}

// SyncedByCaller reports whether ctx comes from WithSyncByCaller.
func SyncedByCaller(ctx context.Context) bool {
	b, _ := ctx.Value(syncedByCallerKey{}).(bool)
	return b
}
