// Package graphs keeps the graphs a server offers: every graph file of a
// directory, loaded and validated at start, each with an engine. Polling the
// directory picks up changed files: a valid new version serves new threads
// while threads that started on an older version keep it (versions are kept
// by content hash); an invalid file leaves the old version in place.
package graphs

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/load"
)

// Version is one loaded version of a graph.
type Version struct {
	// Name is the graph's name, its assistant id.
	Name string
	// Hash is the graph's content hash; ShortHash is the prefix checkpoints record.
	Hash, ShortHash string
	// File is the path the version was loaded from.
	File     string
	Graph    *compile.Graph
	Engine   *engine.Engine
	LoadedAt time.Time
}

// EngineFunc builds (and prepares) the engine of a compiled graph.
type EngineFunc func(g *compile.Graph) (*engine.Engine, error)

// LoadFunc loads, validates and compiles one graph file; runtime.Load is the
// default. A server passes one that bounds the file's evaluation
// (load/evalguard), for the first load and every reload alike.
type LoadFunc func(path string) (*compile.Graph, diag.List, error)

// Options configure OpenWith.
type Options struct {
	// Lenient keeps invalid files out instead of failing (see OpenLenient).
	Lenient bool
	// Load loads each file; nil means runtime.Load.
	Load LoadFunc
}

type fileStat struct {
	size    int64
	modTime time.Time
}

// Registry holds the current version of each graph and every version still
// in use. It is safe for concurrent use.
type Registry struct {
	dir       string
	newEngine EngineFunc
	log       *slog.Logger
	load      LoadFunc

	mu      sync.RWMutex
	current map[string]*Version
	byHash  map[string]*Version
	files   map[string]fileStat
	// names maps a file to the graph it defined.
	names map[string]string
	// problems holds, per file, the diagnostics of its last rejected load;
	// a file that loads again is removed.
	problems map[string]diag.List
}

// Open loads every graph file under dir. Any invalid graph, a file that
// cannot be read, or two files defining one graph name, is an error: the
// diagnostics are returned and the registry is nil.
func Open(dir string, newEngine EngineFunc, log *slog.Logger) (*Registry, diag.List, error) {
	return open(dir, newEngine, log, false)
}

// OpenLenient is Open for development servers: an invalid graph file is kept
// out with its diagnostics recorded (see Problems) instead of failing the
// whole directory, so that the valid graphs are served and the invalid ones
// join when they are fixed; so is a file that cannot be read, and the
// second of two files that define one graph name. It fails only when the
// directory cannot be read.
func OpenLenient(dir string, newEngine EngineFunc, log *slog.Logger) (*Registry, diag.List, error) {
	return open(dir, newEngine, log, true)
}

// OpenWith is Open (or OpenLenient) with options.
func OpenWith(dir string, newEngine EngineFunc, log *slog.Logger, opts Options) (*Registry, diag.List, error) {
	return openWith(dir, newEngine, log, opts)
}

func open(dir string, newEngine EngineFunc, log *slog.Logger, lenient bool) (*Registry, diag.List, error) {
	return openWith(dir, newEngine, log, Options{Lenient: lenient})
}

func openWith(dir string, newEngine EngineFunc, log *slog.Logger, opts Options) (*Registry, diag.List, error) {
	lenient := opts.Lenient
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.Load == nil {
		opts.Load = runtime.Load
	}
	r := &Registry{dir: dir, newEngine: newEngine, log: log, load: opts.Load,
		current: map[string]*Version{}, byHash: map[string]*Version{},
		files: map[string]fileStat{}, names: map[string]string{}, problems: map[string]diag.List{}}
	files, err := load.Expand([]string{dir})
	if err != nil {
		return nil, nil, fmt.Errorf("graphs dir %s: %w", dir, err)
	}
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("graphs dir %s holds no graph files (.cue, .yaml, .yml)", dir)
	}
	var all diag.List
	for _, f := range files {
		v, diags, err := r.loadFile(f)
		all = append(all, diags...)
		if err != nil {
			return nil, all, err
		}
		if v == nil {
			if diags.HasErrors() {
				r.problems[f] = diags
			}
			continue
		}
		if prev, dup := r.current[v.Name]; dup {
			d := duplicateName(v, prev)
			all = append(all, d...)
			r.problems[f] = d
			v.Engine.Close()
			continue
		}
		r.install(v)
	}
	if all.HasErrors() && !lenient {
		return nil, all, nil
	}
	return r, all, nil
}

// CodeUnreadable is the diagnostic code of a file of the graphs directory
// that cannot be read: a symbolic link to nothing or to itself, a named
// pipe, a file without read permission.
const CodeUnreadable = load.CodeUnreadable

// CodeDuplicateGraph is the diagnostic code of a graph file whose graph
// name another file of the directory already serves.
const CodeDuplicateGraph = load.CodeDuplicateGraph

// statOf returns what Reload compares to tell a changed file: its size and
// modification time, or a size of -1 when it cannot be read.
func statOf(path string) fileStat {
	st, err := os.Stat(path)
	if err != nil {
		return fileStat{size: -1}
	}
	return fileStat{size: st.Size(), modTime: st.ModTime()}
}

// duplicateName is the diagnostic of a graph whose name another file
// already serves, at its name.
func duplicateName(v, prev *Version) diag.List { return load.DuplicateGraph(v.Graph.Spec, prev.File) }

// loadFile loads, validates and compiles one file and builds its engine. It
// returns a nil version when the file has errors, a file that cannot be
// read among them.
func (r *Registry) loadFile(path string) (*Version, diag.List, error) {
	st := statOf(path)
	r.mu.Lock()
	r.files[path] = st
	r.mu.Unlock()
	if _, d, err := load.ReadFile(path); err != nil {
		return nil, load.Unreadable(path, err), nil
	} else if d != nil {
		return nil, d, nil
	}
	g, diags, err := r.load(path)
	if err != nil {
		r.mu.Lock()
		delete(r.files, path) // not loaded: Reload tries again
		r.mu.Unlock()
		return nil, diags, fmt.Errorf("load graph file %s: %w", path, err)
	}
	if g == nil {
		return nil, diags, nil
	}
	eng, err := r.newEngine(g)
	if err != nil {
		return nil, diags, fmt.Errorf("graph %q (%s): %w", g.Spec.Name, path, err)
	}
	h := g.Spec.Hash
	return &Version{Name: g.Spec.Name, Hash: h, ShortHash: short(h), File: path, Graph: g, Engine: eng, LoadedAt: time.Now()}, diags, nil
}

func short(h string) string {
	if len(h) > 16 {
		return h[:16]
	}
	return h
}

func (r *Registry) install(v *Version) {
	r.current[v.Name] = v
	r.byHash[v.ShortHash] = v
	r.names[v.File] = v.Name
}

// Get returns the current version of a graph.
func (r *Registry) Get(name string) (*Version, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	v, ok := r.current[name]
	return v, ok
}

// ForThread returns the version a thread written by graph name with the given
// checkpoint hash runs on: that exact version when it is still loaded, else
// the current version of the graph.
func (r *Registry) ForThread(name, shortHash string) (*Version, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if v, ok := r.byHash[shortHash]; ok && shortHash != "" && v.Name == name {
		return v, true
	}
	v, ok := r.current[name]
	return v, ok
}

// List returns the current versions sorted by name.
func (r *Registry) List() []*Version {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*Version, 0, len(r.current))
	for _, v := range r.current {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Reload checks the directory for new or changed files (by size and
// modification time) and loads them. It returns the names of graphs that got
// a new version and the diagnostics of files that were rejected.
func (r *Registry) Reload() ([]string, diag.List) {
	files, err := load.Expand([]string{r.dir})
	if err != nil {
		r.log.Warn("graphs reload: list directory", "dir", r.dir, "error", err)
		return nil, nil
	}
	var changed []string
	var rejected diag.List
	for _, f := range files {
		st := statOf(f)
		r.mu.RLock()
		old, seen := r.files[f]
		r.mu.RUnlock()
		if seen && old.size == st.size && old.modTime.Equal(st.modTime) {
			continue
		}
		// Loading runs without the lock: a slow file must not hold up the
		// requests that read the registry.
		v, diags, err := r.loadFile(f)
		if err != nil {
			r.log.Warn("graphs reload: file rejected", "file", f, "error", err)
			continue
		}
		if v == nil {
			rejected = append(rejected, diags...)
			r.mu.Lock()
			r.problems[f] = diags
			r.mu.Unlock()
			r.log.Warn("graphs reload: invalid graph kept out, the previous version stays", "file", f, "diagnostics", diagText(diags))
			continue
		}
		r.mu.Lock()
		delete(r.problems, f)
		if prev, ok := r.current[v.Name]; ok && prev.File != f {
			d := duplicateName(v, prev)
			r.problems[f] = d
			r.mu.Unlock()
			rejected = append(rejected, d...)
			r.log.Warn("graphs reload: graph name already defined by another file", "graph", v.Name, "file", f, "defined_in", prev.File)
			v.Engine.Close()
			continue
		}
		if prev, ok := r.current[v.Name]; ok && prev.Hash == v.Hash {
			r.mu.Unlock()
			v.Engine.Close()
			continue
		}
		r.install(v)
		r.mu.Unlock()
		changed = append(changed, v.Name)
		r.log.Info("graphs reload: new version serves new threads", "graph", v.Name, "hash", v.ShortHash, "file", f)
	}
	return changed, rejected
}

// Problems returns the diagnostics of the graph files whose last load was
// rejected (at start with OpenLenient, or by Reload), sorted by file; the
// previous version of such a graph, if any, is still served.
func (r *Registry) Problems() diag.List {
	r.mu.RLock()
	defer r.mu.RUnlock()
	files := make([]string, 0, len(r.problems))
	for f := range r.problems {
		files = append(files, f)
	}
	sort.Strings(files)
	var out diag.List
	for _, f := range files {
		out = append(out, r.problems[f]...)
	}
	return out
}

// Watch polls the directory every interval until ctx is done.
func (r *Registry) Watch(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.Reload()
		}
	}
}

// Close closes the engines of every version.
func (r *Registry) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []string
	for _, v := range r.byHash {
		if err := v.Engine.Close(); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("close graph engines: %s", strings.Join(errs, "; "))
	}
	return nil
}

func diagText(l diag.List) string {
	parts := make([]string, len(l))
	for i, d := range l {
		parts[i] = d.String()
	}
	return strings.Join(parts, "; ")
}
