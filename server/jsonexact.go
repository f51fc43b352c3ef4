package server

import (
	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/jsonread"
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
// every state reader do. A JSON object or value decoded into a new map or
// an any is read by jsonread.Reader in one pass; anything else, and any JSON
// that reader does not take as it is, by encoding/json, which gives the
// same value or the same error.
func decodeExact(data []byte, v any) error {
	switch x := v.(type) {
	case *map[string]any:
		if *x == nil {
			r := jsonread.Reader{Data: data, Exact: true}
			if m, ok := r.Document(); ok {
				switch m := m.(type) {
				case map[string]any:
					*x = m
					return nil
				case nil:
					return nil
				}
			}
		}
	case *any:
		if *x == nil {
			r := jsonread.Reader{Data: data, Exact: true}
			if val, ok := r.Document(); ok {
				*x = val
				return nil
			}
		}
	}
	return checkpoint.DecodeJSON(data, v)
}

// jsonReader is jsonread's reader with the run body's struct reading
// (members, field) on top.
type jsonReader struct{ jsonread.Reader }
