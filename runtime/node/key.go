package node

// Key names a service of type T in Services.Extra. The package that owns a
// service declares its key (llm.OverrideKey, telegram.BotKey,
// GraphFileKey), so that callers neither repeat its name nor assert its type.
type Key[T any] struct{ name string }

// NewKey returns the key of a service of type T stored under name.
func NewKey[T any](name string) Key[T] { return Key[T]{name: name} }

// Name is the name the service is stored under in Services.Extra (and
// engine.Options.Extra).
func (k Key[T]) Name() string { return k.name }

// Get returns the service under k; ok is false when s holds none, or a value
// of another type.
func (k Key[T]) Get(s *Services) (v T, ok bool) {
	if s == nil {
		return v, false
	}
	v, ok = s.Extra[k.name].(T)
	return v, ok
}

// Has reports whether s holds a value under k, whatever its type.
func (k Key[T]) Has(s *Services) bool {
	if s == nil {
		return false
	}
	_, ok := s.Extra[k.name]
	return ok
}

// Bind sets v under k in extra (a new map when extra is nil) and returns it:
// how callers fill engine.Options.Extra.
func (k Key[T]) Bind(extra map[string]any, v T) map[string]any {
	if extra == nil {
		extra = map[string]any{}
	}
	extra[k.name] = v
	return extra
}
