package checkpoint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// ValidateBlob checks a blob before it is stored: a field name, a positive
// version, a base older than the version, valid JSON data, and for an
// append delta (Base != 0) a JSON array.
func ValidateBlob(b Blob) error {
	switch {
	case b.Field == "":
		return fmt.Errorf("blob version %d: empty field name", b.Version)
	case b.Version <= 0:
		return fmt.Errorf("blob %s: version %d must be positive", b.Field, b.Version)
	case b.Base < 0 || (b.Base != 0 && b.Base >= b.Version):
		return fmt.Errorf("blob %s@%d: base %d must be between 1 and %d", b.Field, b.Version, b.Base, b.Version-1)
	case !json.Valid(b.Data):
		return fmt.Errorf("blob %s@%d: data is not valid JSON", b.Field, b.Version)
	}
	if b.Base != 0 {
		if _, err := arrayBody(b.Data); err != nil {
			return fmt.Errorf("blob %s@%d: append delta on %d: %w", b.Field, b.Version, b.Base, err)
		}
	}
	return nil
}

// AppendArrays returns the JSON array base followed by the items of every
// delta array, in order. A null base counts as an empty array. It works on
// the bytes without decoding items, so rebuilding a value from a long chain
// of append deltas costs time linear in its size.
func AppendArrays(base json.RawMessage, deltas ...json.RawMessage) (json.RawMessage, error) {
	var body []byte
	if t := bytes.TrimSpace(base); !bytes.Equal(t, []byte("null")) {
		var err error
		if body, err = arrayBody(base); err != nil {
			return nil, fmt.Errorf("append base: %w", err)
		}
	}
	size := len(body) + 2
	bodies := make([][]byte, len(deltas))
	for i, d := range deltas {
		b, err := arrayBody(d)
		if err != nil {
			return nil, fmt.Errorf("append delta %d: %w", i, err)
		}
		bodies[i] = b
		size += len(b) + 1
	}
	out := make([]byte, 0, size)
	out = append(out, '[')
	out = append(out, body...)
	for _, b := range bodies {
		if len(b) == 0 {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, b...)
	}
	out = append(out, ']')
	return out, nil
}

// arrayBody returns the bytes between the brackets of a JSON array, trimmed.
func arrayBody(data []byte) ([]byte, error) {
	t := bytes.TrimSpace(data)
	if len(t) < 2 || t[0] != '[' || t[len(t)-1] != ']' {
		return nil, fmt.Errorf("want a JSON array, got %.40q", t)
	}
	return bytes.TrimSpace(t[1 : len(t)-1]), nil
}

// ValidatePut checks what a Put can check without reading the store: ids are
// set, every blob is valid, names a field of cp.Versions at exactly that
// version, and appears once. Whether the versions the blobs do not cover exist
// is for the backend to check.
func ValidatePut(cp Checkpoint, blobs []Blob) error {
	if cp.ThreadID == "" {
		return fmt.Errorf("put checkpoint %q: empty thread id", cp.ID)
	}
	if cp.ID == "" {
		return fmt.Errorf("put checkpoint in thread %q: empty checkpoint id", cp.ThreadID)
	}
	seen := make(map[string]bool, len(blobs))
	for _, b := range blobs {
		if err := ValidateBlob(b); err != nil {
			return fmt.Errorf("put %s/%s: %w", cp.ThreadID, cp.ID, err)
		}
		if v, ok := cp.Versions[b.Field]; !ok || v != b.Version {
			return fmt.Errorf("put %s/%s: blob %s@%d does not match the checkpoint's version %d of that field", cp.ThreadID, cp.ID, b.Field, b.Version, v)
		}
		if seen[b.Field] {
			return fmt.Errorf("put %s/%s: two blobs for field %s", cp.ThreadID, cp.ID, b.Field)
		}
		seen[b.Field] = true
	}
	return nil
}

// ForkOf returns the first checkpoint of a thread forked from cp: the same
// step, next tasks, interrupts, graph and versions, source "fork", no parent,
// and metadata recording where it came from.
func ForkOf(cp Checkpoint, newThreadID string, now time.Time) Checkpoint {
	meta := make(map[string]any, len(cp.Metadata)+1)
	for k, v := range cp.Metadata {
		meta[k] = v
	}
	meta["forked_from"] = map[string]any{"thread_id": cp.ThreadID, "checkpoint_id": cp.ID}
	versions := make(map[string]int64, len(cp.Versions))
	for k, v := range cp.Versions {
		versions[k] = v
	}
	return Checkpoint{
		ThreadID:   newThreadID,
		ID:         NewID(),
		Step:       cp.Step,
		Next:       cp.Next,
		Interrupts: cp.Interrupts,
		GraphName:  cp.GraphName,
		GraphHash:  cp.GraphHash,
		Versions:   versions,
		Source:     SourceFork,
		Metadata:   meta,
		CreatedAt:  now,
	}
}
