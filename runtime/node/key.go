package node

// Key names a service of type T. The package that owns a service declares its
// key once (a model override, a bot client, GraphFileKey); a service is
// found by the key value itself, never by a name, so callers neither repeat a
// name nor assert a type, and two keys declared with the same name are still
// two keys.
type Key[T any] struct{ id *keyID }

// keyID is the identity of a key; its name is for messages only.
type keyID struct{ name string }

// NewKey returns a new key of a service of type T. name says what the service
// is in messages ("models"); it does not identify the key.
func NewKey[T any](name string) Key[T] { return Key[T]{id: &keyID{name: name}} }

// Name is the name the key was declared with, for messages.
func (k Key[T]) Name() string {
	if k.id == nil {
		return ""
	}
	return k.id.name
}

// String returns the key's name.
func (k Key[T]) String() string { return k.Name() }

// Get returns the service under k; ok is false when s holds none.
func (k Key[T]) Get(s *Services) (v T, ok bool) {
	if s == nil {
		return v, false
	}
	return k.From(s.Extra)
}

// From returns the service under k in x; ok is false when x holds none.
func (k Key[T]) From(x Extra) (v T, ok bool) {
	v, ok = x.vals[k.id].(T)
	return v, ok
}

// Has reports whether s holds a service under k.
func (k Key[T]) Has(s *Services) bool {
	if s == nil {
		return false
	}
	return k.In(s.Extra)
}

// In reports whether x holds a service under k.
func (k Key[T]) In(x Extra) bool {
	_, ok := x.vals[k.id]
	return ok
}

// Bind returns a copy of x that holds v under k (x itself is not changed):
// how callers fill engine.Options.Extra and Services.Extra. The zero Key,
// not made by NewKey, holds nothing: Bind with it returns x as it is.
//
//	extra := overrideKey.Bind(node.Extra{}, "openai:gpt-4o-mini")
func (k Key[T]) Bind(x Extra, v T) Extra {
	if k.id == nil {
		return x
	}
	return x.with(k.id, v)
}

// Extra is a typed store of services: each value under the Key its owning
// package declares. The zero value is empty and ready to use. An Extra is a
// value: Bind returns a new one, so an Extra handed to an engine or shared by
// concurrent nodes never changes under them.
type Extra struct{ vals map[*keyID]any }

// Len returns the number of services x holds.
func (x Extra) Len() int { return len(x.vals) }

// Merge returns a copy of x holding, in addition, every service of y that x
// lacks.
func (x Extra) Merge(y Extra) Extra {
	out := Extra{vals: make(map[*keyID]any, len(x.vals)+len(y.vals))}
	for id, v := range y.vals {
		out.vals[id] = v
	}
	for id, v := range x.vals {
		out.vals[id] = v
	}
	return out
}

func (x Extra) with(id *keyID, v any) Extra {
	out := Extra{vals: make(map[*keyID]any, len(x.vals)+1)}
	for k, old := range x.vals {
		out.vals[k] = old
	}
	out.vals[id] = v
	return out
}
