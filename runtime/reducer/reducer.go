// Package reducer holds the builtin reducers that merge a node's write to a state
// field into the field's current value, the reducers node packages register
// for the list types they declare, and user-defined reducers written as
// expressions over old and new.
//
// A reducer reports, besides the merged value, whether the result is the old
// list with items appended; the engine then stores only the appended items.
package reducer

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"strconv"
	"sync"

	"github.com/graphctl/graphctl/runtime/graph"
)

// Result is a reducer's output.
type Result struct {
	Value any
	// AppendedFrom is len(old) when Value is old with items appended (so the
	// items from that index on are new), else -1.
	AppendedFrom int
	// Unchanged is true when the write left the value as it was.
	Unchanged bool
}

func replaced(v any) Result { return Result{Value: v, AppendedFrom: -1} }

// Reducer merges a write into a field's current value.
type Reducer struct {
	Name        string
	Description string
	// Accepts reports whether the reducer can serve a field of type t.
	Accepts func(t graph.Type) bool
	// Reduce merges update into old. old is never nil: the engine starts every
	// field at its default or zero value. Neither argument may be modified.
	Reduce func(old, update any) (Result, error)
	// Exclusive reducers allow only one writer per super-step.
	Exclusive bool
	// Appends is set on reducers that add the written items to a list value
	// (keyed or not), so that a written list is items to add, not the value.
	Appends bool
}

var (
	builtinMu sync.RWMutex
	builtin   = map[string]*Reducer{}
)

func register(r *Reducer) { builtin[r.Name] = r }

// Register adds a reducer, such as the one of a list type a node package
// declares (graph.RegisterListType), under its name. It fails when the name
// is taken or the reducer lacks Accepts or Reduce.
func Register(r *Reducer) error {
	if r == nil || r.Name == "" || r.Accepts == nil || r.Reduce == nil {
		return fmt.Errorf("register reducer: a name, Accepts and Reduce are required")
	}
	builtinMu.Lock()
	defer builtinMu.Unlock()
	if _, dup := builtin[r.Name]; dup {
		return fmt.Errorf("reducer %q is already registered", r.Name)
	}
	register(r)
	return nil
}

// MustRegister is Register for init functions: it panics on error, at
// program start.
func MustRegister(r *Reducer) {
	if err := Register(r); err != nil {
		panic(err)
	}
}

// Lookup returns the builtin reducer with the given name.
func Lookup(name string) (*Reducer, bool) {
	builtinMu.RLock()
	defer builtinMu.RUnlock()
	r, ok := builtin[name]
	return r, ok
}

// Names lists the builtin reducers, sorted.
func Names() []string {
	builtinMu.RLock()
	defer builtinMu.RUnlock()
	out := make([]string, 0, len(builtin))
	for k := range builtin {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Default returns the reducer a field of type t gets when it names none:
// messages for messages, the declared reducer of a declared list type,
// else replace.
func Default(t graph.Type) string {
	if t.Kind == graph.Messages {
		return "messages"
	}
	if lt, ok := graph.ListTypeOf(t.Kind); ok {
		return lt.Reducer
	}
	return "replace"
}

// IsObjectList reports whether t is a list of objects (list<object>,
// list<map<T>>, list<any>), which keyed reducers also serve.
func IsObjectList(t graph.Type) bool { return isObjectList(t) }

func anyType(graph.Type) bool { return true }

func isList(t graph.Type) bool { return t.Kind == graph.List }

func isNumber(t graph.Type) bool { return t.Kind == graph.Int || t.Kind == graph.Float }

func isMap(t graph.Type) bool { return t.Kind == graph.Map || t.Kind == graph.Object }

func isObjectList(t graph.Type) bool {
	return t.Kind == graph.List && t.Elem != nil && (t.Elem.Kind == graph.Object || t.Elem.Kind == graph.Any || t.Elem.Kind == graph.Map)
}

func init() {
	register(&Reducer{Name: "replace", Description: "the write replaces the value; two writers in one step is an error",
		Accepts: anyType, Exclusive: true,
		Reduce: func(_, update any) (Result, error) { return replaced(update), nil }})
	register(&Reducer{Name: "append", Description: "appends the written item or list of items",
		Accepts: isList, Reduce: appendReduce, Appends: true})
	register(&Reducer{Name: "union", Description: "appends the written items that are not already present",
		Accepts: isList, Reduce: unionReduce, Appends: true})
	register(&Reducer{Name: "merge", Description: "deep-merges the written map into the value",
		Accepts: isMap, Reduce: func(old, update any) (Result, error) {
			o, ok1 := old.(map[string]any)
			u, ok2 := update.(map[string]any)
			if !ok1 || !ok2 {
				return Result{}, fmt.Errorf("merge needs maps, got %s and %s", graph.DescribeValue(old), graph.DescribeValue(update))
			}
			return replaced(deepMerge(o, u)), nil
		}})
	register(&Reducer{Name: "merge_by_id", Description: "upserts list items by their id field",
		Accepts: isObjectList, Reduce: func(old, update any) (Result, error) { return upsertByID(old, update, nil) }, Appends: true})
	register(&Reducer{Name: "add", Description: "adds the written number to the value",
		Accepts: isNumber, Reduce: addReduce})
	register(&Reducer{Name: "keep", Description: "the first non-empty value is kept; later writes are ignored",
		Accepts: anyType, Reduce: func(old, update any) (Result, error) {
			if !isEmpty(old) {
				return Result{Value: old, AppendedFrom: -1, Unchanged: true}, nil
			}
			return replaced(update), nil
		}})
	register(&Reducer{Name: "messages", Description: "appends messages; a message with an existing id replaces it",
		Accepts: func(t graph.Type) bool { return t.Kind == graph.Messages || isObjectList(t) },
		Reduce:  messagesReduce, Appends: true})
}

func asItems(update any) []any {
	if l, ok := update.([]any); ok {
		return l
	}
	return []any{update}
}

func appendReduce(old, update any) (Result, error) {
	o, ok := old.([]any)
	if !ok {
		return Result{}, fmt.Errorf("append needs a list value, have %s", graph.DescribeValue(old))
	}
	return Result{Value: appendShared(o, asItems(update)), AppendedFrom: len(o)}, nil
}

func unionReduce(old, update any) (Result, error) {
	o, ok := old.([]any)
	if !ok {
		return Result{}, fmt.Errorf("union needs a list value, have %s", graph.DescribeValue(old))
	}
	m := openMerge(o, "union", unionKey)
	for _, item := range asItems(update) {
		k, _ := unionKey(item)
		if _, seen := m.find(k); !seen {
			m.put(k, true, item)
		}
	}
	out, _ := m.finish()
	return Result{Value: out, AppendedFrom: len(o)}, nil
}

func unionKey(v any) (string, bool) { return key(v), true }

func key(v any) string {
	if s, ok := v.(string); ok {
		return "s:" + s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func addReduce(old, update any) (Result, error) {
	switch o := old.(type) {
	case int:
		switch u := update.(type) {
		case int:
			return replaced(o + u), nil
		case float64:
			return replaced(float64(o) + u), nil
		}
	case float64:
		switch u := update.(type) {
		case int:
			return replaced(o + float64(u)), nil
		case float64:
			return replaced(o + u), nil
		}
	}
	return Result{}, fmt.Errorf("add needs numbers, got %s and %s", graph.DescribeValue(old), graph.DescribeValue(update))
}

func deepMerge(old, update map[string]any) map[string]any {
	out := make(map[string]any, len(old)+len(update))
	for k, v := range old {
		out[k] = v
	}
	for k, v := range update {
		om, ok1 := out[k].(map[string]any)
		um, ok2 := v.(map[string]any)
		if ok1 && ok2 {
			out[k] = deepMerge(om, um)
			continue
		}
		out[k] = v
	}
	return out
}

func idOf(item any) (string, bool) {
	m, ok := item.(map[string]any)
	if !ok {
		return "", false
	}
	switch id := m["id"].(type) {
	case string:
		return id, id != ""
	case int:
		return strconv.Itoa(id), true
	}
	return "", false
}

// UpsertByID replaces the items of the list old whose id is already present
// (merging their fields) and appends the others; update is an item or a list
// of items. check, when set, vets each item written: before is nil for a new
// item. It is the merge of keyed reducers that node packages register.
func UpsertByID(old, update any, check func(before, after map[string]any) error) (Result, error) {
	return upsertByID(old, update, check)
}

// upsertByID replaces items whose id is already present (merging their fields)
// and appends the others. check, when set, vets each replacement.
func upsertByID(old, update any, check func(before, after map[string]any) error) (Result, error) {
	o, ok := old.([]any)
	if !ok {
		return Result{}, fmt.Errorf("need a list value, have %s", graph.DescribeValue(old))
	}
	items := asItems(update)
	for _, item := range items {
		if _, isMap := item.(map[string]any); !isMap {
			return Result{}, fmt.Errorf("items must be objects, got %s", graph.DescribeValue(item))
		}
	}
	mg := openMerge(o, "id", idOf)
	for _, item := range items {
		m := item.(map[string]any)
		id, hasID := idOf(m)
		if have, exists := mg.find(id); hasID && exists {
			before := have.(map[string]any)
			after := make(map[string]any, len(before)+len(m))
			for k, v := range before {
				after[k] = v
			}
			for k, v := range m {
				after[k] = v
			}
			if check != nil {
				if err := check(before, after); err != nil {
					mg.abort()
					return Result{}, fmt.Errorf("item %q: %w", id, err)
				}
			}
			mg.put(id, true, after)
			continue
		}
		if check != nil {
			if err := check(nil, m); err != nil {
				mg.abort()
				return Result{}, fmt.Errorf("item %q: %w", id, err)
			}
		}
		mg.put(id, hasID, m)
	}
	out, appendOnly := mg.finish()
	if appendOnly {
		return Result{Value: out, AppendedFrom: len(o)}, nil
	}
	return replaced(out), nil
}

// RemoveRole is the role of a message that removes the message with its id
// from the list instead of being added (LangChain's RemoveMessage, sent as
// {"type": "remove", "id": ...}); RemoveAll as its id removes every message
// before it.
const (
	RemoveRole = "remove"
	RemoveAll  = "__remove_all__"
)

// NewMessageID returns a new message id: a random (version 4) UUID, as
// LangChain gives messages.
func NewMessageID() string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[0:8], rand.Uint64())
	binary.BigEndian.PutUint64(b[8:16], rand.Uint64())
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func messagesReduce(old, update any) (Result, error) {
	items := asItems(update)
	withIDs := make([]any, len(items))
	removes := false
	for i, item := range items {
		m, ok := item.(map[string]any)
		if !ok {
			return Result{}, fmt.Errorf("messages must be objects with role and content, got %s", graph.DescribeValue(item))
		}
		role, ok := m["role"].(string)
		if !ok {
			return Result{}, fmt.Errorf("message %d has no role", i)
		}
		if _, has := idOf(m); !has {
			if role == RemoveRole {
				return Result{}, fmt.Errorf("message %d removes a message but names no id", i)
			}
			cp := make(map[string]any, len(m)+1)
			for k, v := range m {
				cp[k] = v
			}
			cp["id"] = NewMessageID()
			m = cp
		}
		removes = removes || role == RemoveRole
		withIDs[i] = m
	}
	if !removes {
		return upsertByID(old, withIDs, nil)
	}
	// Removals: apply the items in order to a copy of the list.
	o, ok := old.([]any)
	if !ok {
		return Result{}, fmt.Errorf("need a list value, have %s", graph.DescribeValue(old))
	}
	out := append([]any(nil), o...)
	for _, item := range withIDs {
		m := item.(map[string]any)
		id, _ := idOf(m)
		if m["role"] != RemoveRole {
			res, err := upsertByID(out, []any{m}, nil)
			if err != nil {
				return Result{}, err
			}
			out = res.Value.([]any)
			continue
		}
		if id == RemoveAll {
			out = []any{}
			continue
		}
		found := false
		for j, have := range out {
			if hid, ok := idOf(have); ok && hid == id {
				out = append(out[:j:j], out[j+1:]...)
				found = true
				break
			}
		}
		if !found {
			return Result{}, fmt.Errorf("cannot remove message %q: no message has that id", id)
		}
	}
	return replaced(out), nil
}

func isEmpty(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.String, reflect.Slice, reflect.Map:
		return rv.Len() == 0
	}
	return false
}

// Custom builds a reducer from a function of the old value and the write, such
// as a compiled user expression over old and new.
func Custom(name string, fn func(old, update any) (any, error)) *Reducer {
	return &Reducer{Name: name, Description: "user-defined: " + name, Accepts: anyType,
		Reduce: func(old, update any) (Result, error) {
			v, err := fn(old, update)
			if err != nil {
				return Result{}, err
			}
			return replaced(v), nil
		}}
}
