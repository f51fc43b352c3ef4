package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/tmc/langchaingo/llms"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/store"
)

// scriptNamespace is where the position of a script:FILE model in each
// thread is kept, in the Store's reserved namespace.
var scriptNamespace = []string{"graphctl", "llm_script"}

// inGraphDir resolves a relative script:FILE named in a graph file (a node's
// model or defaults.llm) against the graph file's directory, so that the
// graph runs the same from any working directory. Other specs, and every
// spec when the graph's file is unknown, are returned unchanged.
func inGraphDir(s *node.Services, spec string) string {
	rest, ok := strings.CutPrefix(strings.TrimSpace(spec), "script:")
	if !ok || rest == "" || filepath.IsAbs(rest) || s == nil {
		return spec
	}
	file, _ := node.GraphFileKey.Get(s)
	if file == "" {
		return spec
	}
	return "script:" + filepath.Join(filepath.Dir(file), rest)
}

// threadScript is the model of a script:FILE spec. Each thread replays the
// script from its own position, which is saved in the Store after every
// reply: a conversation continued in another process (a second `graphctl
// run` on the same thread) gets the next reply, not the first again, and two
// threads do not take each other's replies. The subgraphs a thread runs
// take theirs from the thread's position too, whichever run of the
// subgraph node they belong to. Without a thread or a Store (a call outside
// a node run) the replies are shared, in order.
type threadScript struct {
	base *Script
	path string

	mu      sync.Mutex
	threads map[string]*Script
}

func loadThreadScript(path string) (llms.Model, error) {
	base, err := LoadScript(path)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	return newThreadScript(base, abs), nil
}

// newThreadScript replays base per thread; key names the script in the
// Store (its file, or "test case" for a declarative test's replies, whose
// position so survives the case's restarts).
func newThreadScript(base *Script, key string) *threadScript {
	return &threadScript{base: base, path: key, threads: map[string]*Script{}}
}

// GenerateContent implements llms.Model.
func (t *threadScript) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	in := node.InputFromContext(ctx)
	if in == nil || in.ThreadID == "" || in.Services == nil || in.Services.Store == nil {
		return t.base.GenerateContent(ctx, messages, options...)
	}
	thread, _ := checkpoint.SplitThreadID(in.ThreadID)
	sc, err := t.forThread(ctx, in.Services.Store, thread)
	if err != nil {
		return nil, err
	}
	resp, genErr := sc.GenerateContent(ctx, messages, options...)
	if err := t.save(ctx, in.Services.Store, thread, sc); err != nil {
		return nil, err
	}
	return resp, genErr
}

// Call implements llms.Model.
func (t *threadScript) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, t, prompt, options...)
}

// String names the script.
func (t *threadScript) String() string { return t.base.String() }

// forThread returns the thread's copy of the script, at the position the
// Store holds for it.
func (t *threadScript) forThread(ctx context.Context, st store.Store, thread string) (*Script, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if sc, ok := t.threads[thread]; ok {
		return sc, nil
	}
	sc := &Script{name: t.base.name, replies: t.base.replies, used: make([]bool, len(t.base.replies))}
	item, err := st.Get(ctx, scriptNamespace, t.key(thread))
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return nil, fmt.Errorf("%s: reading the thread's position: %w", t.base.name, err)
	default:
		used, _ := item.Value["used"].([]any)
		for _, u := range used {
			if i, ok := toIndex(u); ok && i >= 0 && i < len(sc.used) && !sc.used[i] {
				sc.used[i] = true
				sc.served++
			}
		}
	}
	t.threads[thread] = sc
	return sc, nil
}

// save records which replies the thread has used.
func (t *threadScript) save(ctx context.Context, st store.Store, thread string, sc *Script) error {
	sc.mu.Lock()
	used := []any{}
	for i, u := range sc.used {
		if u {
			used = append(used, i)
		}
	}
	sc.mu.Unlock()
	value := map[string]any{"script": t.path, "thread": thread, "used": used}
	if err := st.Put(ctx, scriptNamespace, t.key(thread), value, store.PutOptions{Index: []string{}}); err != nil {
		return fmt.Errorf("%s: saving the thread's position: %w", t.base.name, err)
	}
	return nil
}

func (t *threadScript) key(thread string) string { return thread + "|" + t.path }

func toIndex(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case float64:
		return int(n), n == float64(int(n))
	case json.Number:
		i, err := n.Int64()
		return int(i), err == nil
	}
	return 0, false
}
