package checkpoint

import (
	"fmt"
	"sort"
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
	written := make(map[string]bool, len(blobs))
	p := &PreparedPut{Checkpoint: cp, Data: data}
	for _, b := range blobs {
		written[b.Field] = true
		if b.Base != 0 {
			p.Required = append(p.Required, BlobRef{b.Field, b.Base})
		}
	}
	for f, v := range cp.Versions {
		if !written[f] {
			p.Required = append(p.Required, BlobRef{f, v})
		}
	}
	sort.Slice(p.Required, func(i, j int) bool {
		a, b := p.Required[i], p.Required[j]
		if a.Field != b.Field {
			return a.Field < b.Field
		}
		return a.Version < b.Version
	})
	return p, nil
}
