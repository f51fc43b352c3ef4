package badger

import (
	"encoding/binary"
	"fmt"
	"slices"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// Children implements core.Reader over the thread summaries' keys, which
// are kindThread, '/', the id's length as a uvarint, then the id. The ids
// that start with the child prefix are not one key range then, but one
// range in each group of keys of one length: it reads those ranges alone,
// skipping each group with two seeks (one to the child prefix within it,
// one past it), so its cost grows with the number of distinct id lengths
// stored and the number of children, not with the number of threads.
//
// A uvarint is prefix-free, so the keys of one length are contiguous and
// end where the group's prefix, whose last byte is below 0x80, is
// incremented. Lengths below 128 take one byte and sort in numeric order,
// so the scan starts at the shortest length a child can have; longer ones
// take two or more bytes starting at 0x80 or above, after every one-byte
// length.
func (t *tx) Children(threadID string) ([]string, error) {
	base := []byte{kindThread, '/'}
	child := checkpoint.ChildPrefix(threadID)
	it := t.x().NewIterator(bdg.IteratorOptions{Prefix: base})
	defer it.Close()
	start := base
	if len(child) < 0x80 {
		start = append(slices.Clone(base), byte(len(child)))
	}
	var out []string
	var group, want []byte
	for it.Seek(start); it.Valid(); {
		key := it.Item().Key()
		n, w := binary.Uvarint(key[len(base):])
		if w <= 0 {
			return nil, fmt.Errorf("corrupt thread summary key %q", key)
		}
		group = append(group[:0], key[:len(base)+w]...)
		if n >= uint64(len(child)) {
			want = append(append(want[:0], group...), child...)
			for it.Seek(want); it.ValidForPrefix(want); it.Next() {
				out = append(out, string(it.Item().Key()[len(group):]))
			}
		}
		group[len(group)-1]++ // past every key of this length
		it.Seek(group)
	}
	return out, nil
}
