package server

import (
	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// stateValues is state written by a client (a run's input): decoded with
// the engine's decoder, so numbers keep every digit on their way to the
// state and back.
type stateValues map[string]any

// UnmarshalJSON decodes numbers as json.Number.
func (v *stateValues) UnmarshalJSON(data []byte) error {
	var m map[string]any
	if err := decodeExact(data, &m); err != nil {
		return err
	}
	*v = m
	return nil
}

// decodeExact decodes JSON with numbers as json.Number, as the engine and
// every state reader do.
func decodeExact(data []byte, v any) error { return checkpoint.DecodeJSON(data, v) }
