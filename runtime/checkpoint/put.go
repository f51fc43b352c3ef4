package checkpoint

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// BlobRef names one version of a field's value.
type BlobRef struct {
	Field   string
	Version int64
}

// PreparedPut is a Put checked and encoded, as every backend writes it.
type PreparedPut struct {
	// Checkpoint is the checkpoint with CreatedAt set.
	Checkpoint Checkpoint
	// Data is the checkpoint's record (EncodeRecord).
	Data []byte
	// Required are the blobs that must already be stored for the Put to be
	// valid: the versions of the fields the Put does not write, and the
	// bases of its append deltas. Sorted by field, then version.
	Required []BlobRef
}

// PreparePut validates a Put (ValidatePut), sets CreatedAt to now when it is
// zero, encodes the checkpoint and lists the blobs it needs from before.
func PreparePut(cp Checkpoint, blobs []Blob, now func() time.Time) (*PreparedPut, error) {
	if err := ValidatePut(cp, blobs); err != nil {
		return nil, err
	}
	if cp.CreatedAt.IsZero() {
		cp.CreatedAt = now().UTC()
	}
	data, err := EncodeRecord(cp)
	if err != nil {
		return nil, fmt.Errorf("put %s/%s: encode checkpoint: %w", cp.ThreadID, cp.ID, err)
	}
	p := &PreparedPut{Checkpoint: cp, Data: data}
	if n := len(cp.Versions) + len(blobs); n > 0 {
		// At most one base per blob and one version per field: one
		// allocation, not one per doubling.
		p.Required = make([]BlobRef, 0, n)
	}
	for _, b := range blobs {
		if b.Base != 0 {
			p.Required = append(p.Required, BlobRef{b.Field, b.Base})
		}
	}
	for f, v := range cp.Versions {
		if !slices.ContainsFunc(blobs, func(b Blob) bool { return b.Field == f }) {
			p.Required = append(p.Required, BlobRef{f, v})
		}
	}
	slices.SortFunc(p.Required, func(a, b BlobRef) int {
		if c := strings.Compare(a.Field, b.Field); c != 0 {
			return c
		}
		return cmp.Compare(a.Version, b.Version)
	})
	return p, nil
}
