package reducer

import (
	"slices"
	"sync"
	"weak"
)

// Lists built by the list reducers share their backing arrays: appending to a
// list whose array has room writes the new items after the old ones, in
// place, and the result is a longer view of the same array. The old list is
// unaffected (it still ends where it ended), so values stay immutable as far
// as anyone holding them can see, and appending is O(1) amortised instead of
// a copy of the whole list — a conversation of n turns costs O(n), not O(n²).
//
// Writing into an array's spare room is only safe for the one list that
// ends where the array's used part ends: two appends to the same old list
// must not both write after it. arrays records, for every array the reducers
// built, how much of it is used (the longest list handed out), and for the
// keyed reducers (messages, merge_by_id, union, and those node packages
// register) the positions of the keys in it, so that an append does not
// rebuild an index of the whole list either. A list the record does not know, or one shorter than the used
// part, is copied into a new array with room to grow. The record holds its
// arrays weakly: an array nobody else references is collected as usual and
// its entry dropped.
var arrays = &arrayRecord{entries: map[weak.Pointer[any]]*arrayEntry{}}

// maxArrays bounds the record; beyond it the least recently used entries go
// (their lists are then copied on their next append, which is correct, only
// slower).
const maxArrays = 1024

type arrayRecord struct {
	mu      sync.Mutex
	entries map[weak.Pointer[any]]*arrayEntry
	tick    uint64
}

type arrayEntry struct {
	// used is the length of the longest list handed out on the array.
	used int
	// keyed names the key function of index ("" when there is none).
	keyed string
	// index maps the key of each item of the used part to its position.
	index map[string]int
	last  uint64
}

// ownerLocked returns, with r.mu held, the entry of list's array when list
// is its longest list, that is when list may grow in place.
func (r *arrayRecord) ownerLocked(list []any) *arrayEntry {
	if len(list) == 0 {
		return nil
	}
	e := r.entries[weak.Make(&list[0])]
	if e == nil || e.used != len(list) {
		return nil
	}
	r.tick++
	e.last = r.tick
	return e
}

// recordLocked notes, with r.mu held, that list is the longest list on its
// array, with index as the positions of its keys (nil when the reducer keeps
// none).
func (r *arrayRecord) recordLocked(list []any, keyed string, index map[string]int) {
	if len(list) == 0 || cap(list) == len(list) {
		return // no room to grow in place: nothing worth remembering
	}
	r.tick++
	r.entries[weak.Make(&list[0])] = &arrayEntry{used: len(list), keyed: keyed, index: index, last: r.tick}
	if len(r.entries) > maxArrays {
		r.evict()
	}
}

// evict drops the entries of collected arrays, then the least recently used
// quarter of the rest.
func (r *arrayRecord) evict() {
	for k := range r.entries {
		if k.Value() == nil {
			delete(r.entries, k)
		}
	}
	if len(r.entries) <= maxArrays*3/4 {
		return
	}
	ticks := make([]uint64, 0, len(r.entries))
	for _, e := range r.entries {
		ticks = append(ticks, e.last)
	}
	slices.Sort(ticks)
	cut := ticks[len(ticks)-maxArrays*3/4-1]
	for k, e := range r.entries {
		if e.last <= cut {
			delete(r.entries, k)
		}
	}
}

// withRoom returns a new array holding old followed by items, with room for
// as much again.
func withRoom(old, items []any) []any {
	n := len(old) + len(items)
	out := make([]any, n, max(2*n, 8))
	copy(out, old)
	copy(out[len(old):], items)
	return out
}

// appendShared returns old followed by items: in old's array when old is its
// longest list and the array has room, else in a new one.
func appendShared(old, items []any) []any {
	if len(items) == 0 {
		return old
	}
	arrays.mu.Lock()
	defer arrays.mu.Unlock()
	if e := arrays.ownerLocked(old); e != nil && len(old)+len(items) <= cap(old) {
		out := append(old, items...)
		e.used = len(out)
		e.keyed, e.index = "", nil // a keyed reducer's index no longer covers it
		return out
	}
	out := withRoom(old, items)
	arrays.recordLocked(out, "", nil)
	return out
}

// merge is a keyed reducer's view of one list while it merges a write into
// it: the keys of the old items, the items appended so far and their keys,
// and the replacements of old items. While it owns the old list's array it
// holds the record's lock, until finish.
type merge struct {
	old     []any
	keyed   string
	owner   *arrayEntry
	index   map[string]int // key -> position in old
	added   map[string]int // key -> position in tail
	tail    []any
	replace map[int]any // position in old -> new item
}

func openMerge(old []any, keyed string, keyOf func(any) (string, bool)) *merge {
	m := &merge{old: old, keyed: keyed, added: map[string]int{}}
	arrays.mu.Lock()
	if e := arrays.ownerLocked(old); e != nil {
		if e.keyed != keyed {
			e.keyed, e.index = keyed, buildIndex(old, keyOf)
		}
		m.owner, m.index = e, e.index
		return m
	}
	arrays.mu.Unlock()
	m.index = buildIndex(old, keyOf)
	return m
}

func buildIndex(list []any, keyOf func(any) (string, bool)) map[string]int {
	index := make(map[string]int, len(list))
	for i, item := range list {
		if k, ok := keyOf(item); ok {
			index[k] = i
		}
	}
	return index
}

// find returns the current item with the key, if any.
func (m *merge) find(key string) (any, bool) {
	if i, ok := m.added[key]; ok {
		return m.tail[i], true
	}
	i, ok := m.index[key]
	if !ok {
		return nil, false
	}
	if r, ok := m.replace[i]; ok {
		return r, true
	}
	return m.old[i], true
}

// put replaces the item with the key, or appends item when there is none.
func (m *merge) put(key string, hasKey bool, item any) {
	if hasKey {
		if i, ok := m.added[key]; ok {
			m.tail[i] = item
			return
		}
		if i, ok := m.index[key]; ok {
			if m.replace == nil {
				m.replace = map[int]any{}
			}
			m.replace[i] = item
			return
		}
		m.added[key] = len(m.tail)
	}
	m.tail = append(m.tail, item)
}

// abort releases the record after a failed merge.
func (m *merge) abort() {
	if m.owner != nil {
		m.owner = nil
		arrays.mu.Unlock()
	}
}

// finish returns the merged list and whether it is the old list with items
// appended (nothing replaced).
func (m *merge) finish() ([]any, bool) {
	if m.owner != nil {
		defer arrays.mu.Unlock()
	}
	if len(m.replace) == 0 && len(m.tail) == 0 {
		return m.old, true
	}
	if len(m.replace) == 0 && m.owner != nil && len(m.old)+len(m.tail) <= cap(m.old) {
		out := append(m.old, m.tail...)
		for k, i := range m.added {
			m.index[k] = len(m.old) + i
		}
		m.owner.used = len(out)
		return out, true
	}
	out := withRoom(m.old, m.tail)
	for i, item := range m.replace {
		out[i] = item
	}
	index := make(map[string]int, len(m.index)+len(m.added))
	for k, i := range m.index {
		if i < len(m.old) {
			index[k] = i
		}
	}
	for k, i := range m.added {
		index[k] = len(m.old) + i
	}
	if m.owner == nil {
		arrays.mu.Lock()
		defer arrays.mu.Unlock()
	}
	arrays.recordLocked(out, m.keyed, index)
	return out, len(m.replace) == 0
}
