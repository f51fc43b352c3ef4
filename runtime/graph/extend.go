package graph

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Node packages extend the graph language with what their node types read:
// keys of the defaults block (a model, tool servers) and state field types
// (lists of domain objects with a reducer of their own). They register them
// in init, as node types are registered; the loader, the compiler and the
// published schemas see the registered keys and types alongside the core
// ones.

// DefaultsKey is a key of a graph's defaults block declared by a node package.
type DefaultsKey struct {
	// Name is the key as graph files write it.
	Name string
	// Schema is the CUE expression the key's value must satisfy, such as
	// "string" or "[string]: {...}".
	Schema string
	// Doc says what the key sets; it becomes the key's comment in the
	// published schema.
	Doc string
}

// ListType is a state field type declared by a node package: a list of
// objects, such as the records the package's nodes read and write.
type ListType struct {
	// Kind is the type's name as graph files write it.
	Kind Kind
	// Doc says what the items are.
	Doc string
	// Reducer is the reducer of a field of the type that names none; the
	// package registers it (see runtime/reducer).
	Reducer string
	// Fields are the item fields expressions may rely on, by name; items may
	// hold others.
	Fields map[string]Type
}

var extensions = struct {
	sync.RWMutex
	defaults map[string]DefaultsKey
	types    map[Kind]ListType
}{defaults: map[string]DefaultsKey{}, types: map[Kind]ListType{}}

var extensionName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// coreDefaults are the keys of the defaults block the runtime itself reads.
var coreDefaults = map[string]bool{"recursion_limit": true, "max_concurrency": true, "call_retry": true}

// RegisterDefaultsKey declares a key of the defaults block. It fails when the
// name is not a lower-case identifier, is a core key or is already declared,
// or when the schema is empty.
func RegisterDefaultsKey(k DefaultsKey) error {
	if !extensionName.MatchString(k.Name) {
		return fmt.Errorf("defaults key %q: want a lower-case identifier", k.Name)
	}
	if strings.TrimSpace(k.Schema) == "" {
		return fmt.Errorf("defaults key %q: a schema is required", k.Name)
	}
	extensions.Lock()
	defer extensions.Unlock()
	if _, dup := extensions.defaults[k.Name]; dup || coreDefaults[k.Name] {
		return fmt.Errorf("defaults key %q is already declared", k.Name)
	}
	extensions.defaults[k.Name] = k
	return nil
}

// MustRegisterDefaultsKey is RegisterDefaultsKey for init functions: it
// panics on error, at program start.
func MustRegisterDefaultsKey(k DefaultsKey) {
	if err := RegisterDefaultsKey(k); err != nil {
		panic(err)
	}
}

// DefaultsKeys returns the declared keys of the defaults block, by name.
func DefaultsKeys() []DefaultsKey {
	extensions.RLock()
	defer extensions.RUnlock()
	out := make([]DefaultsKey, 0, len(extensions.defaults))
	for _, k := range extensions.defaults {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// RegisterListType declares a state field type. It fails when the name is
// not a lower-case identifier or is already a type, or when no reducer is
// named.
func RegisterListType(t ListType) error {
	if !extensionName.MatchString(string(t.Kind)) {
		return fmt.Errorf("state type %q: want a lower-case identifier", t.Kind)
	}
	if t.Reducer == "" {
		return fmt.Errorf("state type %q: a reducer is required", t.Kind)
	}
	extensions.Lock()
	defer extensions.Unlock()
	if _, dup := extensions.types[t.Kind]; dup || isCoreKind(t.Kind) {
		return fmt.Errorf("state type %q is already declared", t.Kind)
	}
	extensions.types[t.Kind] = t
	return nil
}

// MustRegisterListType is RegisterListType for init functions: it panics on
// error, at program start.
func MustRegisterListType(t ListType) {
	if err := RegisterListType(t); err != nil {
		panic(err)
	}
}

// ListTypeOf returns the declared list type of kind k.
func ListTypeOf(k Kind) (ListType, bool) {
	extensions.RLock()
	defer extensions.RUnlock()
	t, ok := extensions.types[k]
	return t, ok
}

// ListTypes returns the declared list types, by name.
func ListTypes() []ListType {
	extensions.RLock()
	defer extensions.RUnlock()
	out := make([]ListType, 0, len(extensions.types))
	for _, t := range extensions.types {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out
}

// isListKind reports whether k is a declared list type.
func isListKind(k Kind) bool {
	_, ok := ListTypeOf(k)
	return ok
}
