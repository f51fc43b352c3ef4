package node

import (
	"fmt"
	"slices"
	"sort"
	"sync"
)

// Registry is a set of node types and of the per-engine services their
// packages share. Loading and compiling a graph resolve its node types in a
// registry, and the engine that runs the compiled graph creates the
// registry's services. The default registry (Default) is where packages
// register in init; an embedder or a test builds its own with NewRegistry or
// Default().Clone(). A Registry is safe for concurrent use.
type Registry struct {
	mu       sync.RWMutex
	types    map[string]Type
	services []service
	script   *Key[any]
	// parts are what packages attach (Attach): registries of their own
	// beside node types, such as builtin tools.
	parts Extra
}

// service is a registered service factory.
type service struct {
	id  *keyID
	new func() any
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{types: map[string]Type{}} }

var defaultRegistry = NewRegistry()

// Default returns the registry that the package-level functions (Register,
// MustRegister, Lookup, Types, RegisterService, SetScriptKey) act on, and
// that loading, compiling and running use when given no other.
func Default() *Registry { return defaultRegistry }

// OrDefault returns r, or the default registry when r is nil: how an option naming
// a registry gets its default.
func (r *Registry) OrDefault() *Registry {
	if r == nil {
		return defaultRegistry
	}
	return r
}

// Clone returns a new registry holding what r holds; registering node types
// or services in either afterwards does not change the other. Attached parts
// are shared: to change one in the clone, attach a new one to it.
func (r *Registry) Clone() *Registry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := &Registry{types: make(map[string]Type, len(r.types)), services: slices.Clone(r.services), script: r.script, parts: r.parts}
	for name, t := range r.types {
		out.types[name] = t
	}
	return out
}

// Register adds a node type. It returns an error if the name is empty, already
// taken, or the type has no constructor.
func (r *Registry) Register(t Type) error {
	if t.Name == "" || t.New == nil {
		return fmt.Errorf("node type %q: name and constructor are required", t.Name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.types[t.Name]; dup {
		return fmt.Errorf("node type %q is already registered", t.Name)
	}
	r.types[t.Name] = t
	return nil
}

// MustRegister is Register for use in init functions: a failure is a
// programming error in the registering package and panics at start-up.
func (r *Registry) MustRegister(t Type) {
	if err := r.Register(t); err != nil {
		panic(err)
	}
}

// Lookup returns the node type with the given name.
func (r *Registry) Lookup(name string) (Type, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.types[name]
	return t, ok
}

// Types returns every node type of r, sorted by name.
func (r *Registry) Types() []Type {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Type, 0, len(r.types))
	for _, t := range r.types {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Names returns the names of the node types of r, sorted.
func (r *Registry) Names() []string {
	types := r.Types()
	out := make([]string, len(types))
	for i, t := range types {
		out[i] = t.Name
	}
	return out
}

// RegisterServiceIn registers in r a factory for a per-engine service that
// node types of a package share (a connection pool to tool servers, a model
// cache). Every engine running a graph compiled against r calls the factory
// once, unless it is given a service under k, and hands the result to nodes
// in Services.Extra; the engine closes the services it created that
// implement io.Closer when it is closed.
func RegisterServiceIn[T any](r *Registry, k Key[T], factory func() T) error {
	if k.id == nil || factory == nil {
		return fmt.Errorf("service %q: a key made by NewKey and a factory are required", k.Name())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.services {
		if s.id == k.id {
			return fmt.Errorf("service %q is already registered", k.Name())
		}
	}
	r.services = append(r.services, service{id: k.id, new: func() any { return factory() }})
	return nil
}

// NewServices returns given with a new instance of every service registered
// in r that given lacks, in registration order, and the instances it
// created: those belong to the caller, which closes them.
func (r *Registry) NewServices(given Extra) (all Extra, created []any) {
	r.mu.RLock()
	factories := slices.Clone(r.services)
	r.mu.RUnlock()
	all = given.Merge(Extra{})
	for _, s := range factories {
		if _, ok := all.vals[s.id]; ok {
			continue
		}
		v := s.new()
		all.vals[s.id] = v
		created = append(created, v)
	}
	return all, created
}

// SetScriptKey names the key under which declarative tests hand a case's
// scripted model replies (a list, []any) to nodes: the package whose
// node types call models sets it, so that the test runner needs no name of
// its own. It fails when r has one already.
func (r *Registry) SetScriptKey(k Key[any]) error {
	if k.id == nil {
		return fmt.Errorf("script key: a key made by NewKey is required")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.script != nil && r.script.id != k.id {
		return fmt.Errorf("script key: %q is set already, cannot set %q", r.script.Name(), k.Name())
	}
	r.script = &k
	return nil
}

// ScriptKey returns the key set with SetScriptKey; ok is false when no
// package set one.
func (r *Registry) ScriptKey() (k Key[any], ok bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.script == nil {
		return k, false
	}
	return *r.script, true
}

// Attach attaches v to r under k, replacing what was attached under k: how
// a package that keeps a registry of its own beside node types (the builtin
// tools) lets a node registry carry its own set, which the package's node
// constructors find through the Builder (RegistryOf).
func Attach[T any](r *Registry, k Key[T], v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.parts = k.Bind(r.parts, v)
}

// Attached returns what is attached to r under k; ok is false when nothing
// is.
func Attached[T any](r *Registry, k Key[T]) (v T, ok bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return k.From(r.parts)
}

// RegistryOf returns the registry a Builder builds nodes against: the
// Registry method's result when b has one (the compiler's builder has),
// else the default registry.
func RegistryOf(b Builder) *Registry {
	if rb, ok := b.(interface{ Registry() *Registry }); ok {
		return rb.Registry().OrDefault()
	}
	return defaultRegistry
}

// Register adds a node type to the default registry; see Registry.Register.
func Register(t Type) error { return defaultRegistry.Register(t) }

// MustRegister adds a node type to the default registry in an init
// function; see Registry.MustRegister.
func MustRegister(t Type) { defaultRegistry.MustRegister(t) }

// Lookup returns the node type of the default registry with the given name.
func Lookup(name string) (Type, bool) { return defaultRegistry.Lookup(name) }

// Types returns every node type of the default registry, sorted by name.
func Types() []Type { return defaultRegistry.Types() }

// RegisterService registers a service factory in the default registry; see
// RegisterServiceIn.
func RegisterService[T any](k Key[T], factory func() T) error {
	return RegisterServiceIn(defaultRegistry, k, factory)
}

// SetScriptKey sets the script key of the default registry; see
// Registry.SetScriptKey.
func SetScriptKey(k Key[any]) error { return defaultRegistry.SetScriptKey(k) }
