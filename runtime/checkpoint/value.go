package checkpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// DecodeValue decodes a stored field value as every reader of state does:
// numbers stay json.Number, so an integer beyond 2^53 keeps its digits.
func DecodeValue(raw json.RawMessage) (any, error) {
	var v any
	if err := DecodeJSON(raw, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// DecodeJSON decodes one JSON value into v with numbers as json.Number
// wherever v holds them as interfaces; trailing data is an error.
func DecodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("unexpected data after the JSON value")
	}
	return nil
}

// Syncer is implemented by checkpointers whose writes can reach the disk
// after they return: Sync makes every write before it durable. Callers sync
// before telling a client that a run has ended.
type Syncer interface {
	Sync(ctx context.Context) error
}

// ErrStorageFull is wrapped by the errors of writes a backend refuses because
// its storage is (nearly) full; the write can be tried again once space is
// freed. Servers answer it with 507 Insufficient Storage.
var ErrStorageFull = errors.New("storage is full")
