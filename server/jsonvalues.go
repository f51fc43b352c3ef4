package server

import (
	"slices"

	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/store/jsonenc"
)

// appendValues appends the JSON of a run's state values as LangGraph shows
// them — messages as LangChain-typed messages, exactly as annotateMessages
// and encoding/json together render them — without copying the messages or
// encoding through reflection: a thread's whole conversation is encoded in
// every /runs/wait answer.
func appendValues(b []byte, g *compile.Graph, vals map[string]any) ([]byte, error) {
	var keyBuf [16]string // the keys of most states, without allocating
	keys := keyBuf[:0]
	for k := range vals {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonenc.AppendString(b, k)
		b = append(b, ':')
		var err error
		if f, ok := g.Fields[k]; ok && f.Spec.Type.Kind == graph.Messages {
			b, err = appendMessages(b, vals[k])
		} else {
			b, err = jsonenc.Append(b, vals[k])
		}
		if err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// appendMessages appends a messages field's list with each message's
// LangChain type added (see annotateMessages); anything but a list is an
// empty list, as there.
func appendMessages(b []byte, v any) ([]byte, error) {
	list, _ := v.([]any)
	var keyBuf [8]string // the keys of most messages, without allocating
	keys := keyBuf[:0]   // reused from message to message
	b = append(b, '[')
	for i, it := range list {
		if i > 0 {
			b = append(b, ',')
		}
		m, ok := it.(map[string]any)
		if !ok {
			var err error
			if b, err = jsonenc.Append(b, it); err != nil {
				return nil, err
			}
			continue
		}
		role, _ := m["role"].(string)
		t, typed := typeOf[role]
		keys = keys[:0]
		for k := range m {
			if !typed || k != "type" {
				keys = append(keys, k)
			}
		}
		if typed {
			keys = append(keys, "type")
		}
		slices.Sort(keys)
		b = append(b, '{')
		for j, k := range keys {
			if j > 0 {
				b = append(b, ',')
			}
			b = jsonenc.AppendString(b, k)
			b = append(b, ':')
			if typed && k == "type" {
				b = jsonenc.AppendString(b, t)
				continue
			}
			var err error
			if b, err = jsonenc.Append(b, m[k]); err != nil {
				return nil, err
			}
		}
		b = append(b, '}')
	}
	return append(b, ']'), nil
}
