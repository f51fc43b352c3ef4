package audit

import (
	"slices"
	"strconv"

	"github.com/graphctl/graphctl/runtime/store/jsonenc"
)

// encodedOr returns the JSON encoding of v by enc, as encoding/json encodes
// it, for the Store to write as it is (jsonenc.Raw); or v itself when enc
// fails, so that the Store's encoder reports the error. size is the room
// the encoding is expected to take.
func encodedOr[T any](v T, enc func([]byte, T) ([]byte, error), size int) any {
	b, err := enc(make([]byte, 0, size), v)
	if err != nil {
		return v
	}
	return jsonenc.Raw(b)
}

// appendMessages appends ms as encoding/json encodes them, without
// reflection.
func appendMessages(b []byte, ms []Message) ([]byte, error) {
	if ms == nil {
		return append(b, "null"...), nil
	}
	b = append(b, '[')
	for i, m := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"role":`...)
		b = jsonenc.AppendString(b, m.Role)
		b = append(b, `,"content":`...)
		b = jsonenc.AppendString(b, m.Content)
		if len(m.Meta) > 0 {
			b = append(b, `,"meta":`...)
			var err error
			if b, err = jsonenc.Append(b, m.Meta); err != nil {
				return nil, err
			}
		}
		b = append(b, `,"created_at":`...)
		b = jsonenc.AppendString(b, m.CreatedAt)
		b = append(b, '}')
	}
	return append(b, ']'), nil
}

// appendNodes appends ns as encoding/json encodes them, without
// reflection.
func appendNodes(b []byte, ns []Node) ([]byte, error) {
	if ns == nil {
		return append(b, "null"...), nil
	}
	b = append(b, '[')
	for i, n := range ns {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"node":`...)
		b = jsonenc.AppendString(b, n.Node)
		b = append(b, `,"type":`...)
		b = jsonenc.AppendString(b, n.Type)
		b = append(b, `,"step":`...)
		b = strconv.AppendInt(b, int64(n.Step), 10)
		b = append(b, `,"started_at":`...)
		b = jsonenc.AppendString(b, n.StartedAt)
		b = append(b, `,"duration_ms":`...)
		var err error
		if b, err = jsonenc.Append(b, n.DurationMS); err != nil {
			return nil, err
		}
		b = append(b, `,"status":`...)
		b = jsonenc.AppendString(b, n.Status)
		if n.Attempts != 0 {
			b = append(b, `,"attempts":`...)
			b = strconv.AppendInt(b, int64(n.Attempts), 10)
		}
		if n.Error != "" {
			b = append(b, `,"error":`...)
			b = jsonenc.AppendString(b, n.Error)
		}
		if n.CaughtBy != "" {
			b = append(b, `,"caught_by":`...)
			b = jsonenc.AppendString(b, n.CaughtBy)
		}
		if len(n.Input) > 0 {
			b = appendSorted(append(b, `,"input":`...), n.Input, jsonenc.AppendString)
		}
		if len(n.Output) > 0 {
			b = appendSorted(append(b, `,"output":`...), n.Output, jsonenc.AppendString)
		}
		if n.Retrieved != nil {
			b = append(b, `,"retrieval_count":`...)
			b = strconv.AppendInt(b, int64(*n.Retrieved), 10)
		}
		if len(n.Tokens) > 0 {
			b = appendSorted(append(b, `,"tokens":`...), n.Tokens, func(b []byte, c int) []byte { return strconv.AppendInt(b, int64(c), 10) })
		}
		b = append(b, '}')
	}
	return append(b, ']'), nil
}

// appendSorted appends a map as encoding/json does: its keys sorted.
func appendSorted[V any](b []byte, m map[string]V, elem func([]byte, V) []byte) []byte {
	var keys [16]string
	ks := keys[:0]
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	b = append(b, '{')
	for i, k := range ks {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonenc.AppendString(b, k)
		b = append(b, ':')
		b = elem(b, m[k])
	}
	return append(b, '}')
}
