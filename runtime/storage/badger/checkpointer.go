package badger

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"sync"
	"time"

	bdg "github.com/dgraph-io/badger/v4"
	"github.com/klauspost/compress/s2"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/checkpoint/core"
)

// driver is the checkpoint storage of a DB: core.Driver over Badger
// transactions, with the key layout of the package documentation. Ended
// transactions are kept for reuse, with their scratch space.
type driver struct {
	d   *DB
	txs sync.Pool
}

var _ core.Driver = (*driver)(nil)

const (
	blobFull  byte = 0
	blobDelta byte = 1
)

func encodeBlob(b checkpoint.Blob) []byte {
	if b.Base == 0 {
		return append([]byte{blobFull}, b.Data...)
	}
	out := binary.AppendUvarint([]byte{blobDelta}, uint64(b.Base))
	return append(out, b.Data...)
}

// decodeBlob returns the base (0 for a full value) and the data of a stored
// blob; data aliases val.
func decodeBlob(val []byte) (base int64, data []byte, err error) {
	if len(val) == 0 {
		return 0, nil, errors.New("empty blob")
	}
	switch val[0] {
	case blobFull:
		return 0, val[1:], nil
	case blobDelta:
		b, n := binary.Uvarint(val[1:])
		if n <= 0 {
			return 0, nil, errors.New("corrupt delta base")
		}
		return int64(b), val[1+n:], nil
	}
	return 0, nil, fmt.Errorf("unknown blob kind %d", val[0])
}

// exists reports whether the key (a scratch key) is stored.
func (t *tx) exists(key []byte) (bool, error) {
	_, err := t.get(key)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, bdg.ErrKeyNotFound):
		return false, nil
	}
	return false, err
}

// tx is one Badger transaction. Writes check the free space once, at the
// first Set: deletes go on when the disk is nearly full, so that space can
// be freed.
type tx struct {
	d    *DB
	pool *sync.Pool
	txn  *bdg.Txn
	room bool
	// vlog is whether the transaction wrote a value that may go to the
	// value log.
	vlog bool
	// key is scratch space for the keys of point reads, which Badger does
	// not keep.
	key []byte
	// buf holds the keys and values of the transaction's writes, which
	// Badger keeps until the transaction ends: a Put's entries cost one
	// allocation instead of two each. It is never reused.
	buf []byte
	// overflow holds the keys of a deleted thread that did not fit the
	// transaction; Update deletes them in batches after it commits.
	overflow [][]byte
	// changes are the transaction's uses of the DB's presence records.
	changes []change
	// write is whether the transaction may write.
	write bool
	// lock is the lock of thread locked (Lock), held shared or not.
	lock   *sync.RWMutex
	locked string
	shared bool
	// heads are the summaries the transaction writes (latest "" for one it
	// deletes or writes without the thread's lock), for the DB's heads
	// once it commits.
	heads []headChange
	// newest is the checkpoint the transaction last wrote under its
	// thread's lock held exclusively, for the summary that names it.
	newest struct {
		thread, id string
		record     []byte
	}
	// found are blobs of the locked thread the transaction wrote or found
	// stored, and forget the threads whose blobs it deleted or wrote
	// without their lock, for the DB's knownBlobs once it commits.
	found  []knownBlob
	forget []string
	// itemUnlock unlocks the store items' locks PutItems took, and items
	// are its writes, for the DB's knownItems once the transaction
	// commits.
	itemUnlock func()
	items      []itemWrite
}

// headChange is a thread summary a transaction writes: the newest id it
// names (with that checkpoint's record when the transaction wrote it), or
// "" to forget the thread's entry in the DB's heads.
type headChange struct {
	thread, latest string
	record         []byte
}

func (d *driver) Begin(ctx context.Context, write bool) (core.Txn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t, _ := d.txs.Get().(*tx)
	if t == nil {
		t = &tx{d: d.d, pool: &d.txs}
	}
	t.write = write
	return t, nil
}

// x returns the Badger transaction, begun at its first use: after Lock, so
// that it sees everything committed by the lock's previous holder.
func (t *tx) x() *bdg.Txn {
	if t.txn == nil {
		t.txn = t.d.begin(t.write)
	}
	return t.txn
}

// Commit commits the transaction, then deletes the keys that overflowed it.
func (t *tx) Commit() error {
	if t.txn == nil {
		return nil // neither read nor wrote
	}
	t.d.commits.Add(1)
	err := t.d.commit(t.txn)
	if t.vlog {
		t.d.logs.wroteValueLog()
	}
	if errors.Is(err, bdg.ErrConflict) {
		return fmt.Errorf("%w: %w", core.ErrConflict, err)
	}
	for _, thread := range t.forget {
		t.d.blobs.forget(thread)
	}
	for _, w := range t.items {
		t.d.items.learn(w.ps, w.facts, err == nil && w.facts != nil)
	}
	if err == nil && len(t.forget) == 0 {
		t.d.blobs.add(t.locked, t.found)
	}
	if err == nil {
		for _, h := range t.heads {
			if h.latest == "" {
				t.d.heads.forget(h.thread)
			} else {
				t.d.heads.set(h.thread, head{latest: h.latest, record: h.record})
			}
		}
	}
	if err == nil && len(t.overflow) > 0 {
		err = t.d.deleteKeys(t.overflow)
	}
	if err == nil {
		for _, c := range t.changes {
			if !c.add {
				c.p.remove(c.entry, c.prefix, c.seen)
			}
		}
	}
	return err
}

// Discard discards the Badger transaction, releases the thread's lock and
// keeps t for reuse.
func (t *tx) Discard() {
	if t.txn != nil {
		t.d.discard(t.txn)
	}
	switch {
	case t.lock == nil:
	case t.shared:
		t.lock.RUnlock()
	default:
		t.lock.Unlock()
	}
	if t.itemUnlock != nil {
		t.itemUnlock()
	}
	clear(t.items)
	t.itemUnlock, t.items = nil, t.items[:0]
	for _, c := range t.changes {
		if c.add {
			c.p.release(c.entry)
		}
	}
	clear(t.changes)
	clear(t.heads)
	clear(t.found)
	clear(t.forget)
	t.found, t.forget = t.found[:0], t.forget[:0]
	t.txn, t.room, t.vlog, t.overflow, t.changes, t.buf = nil, false, false, nil, t.changes[:0], nil
	t.lock, t.locked, t.heads = nil, "", t.heads[:0]
	t.newest.thread, t.newest.id, t.newest.record = "", "", nil
	t.pool.Put(t)
}

// adding records, before the transaction writes a key under entry, that it
// may be stored, with a bound of at least bound.
func (t *tx) adding(p *presence, entry string, bound int64) {
	p.add(entry, bound)
	t.changes = append(t.changes, change{p: p, entry: entry, add: true})
}

// removing has entry forgotten once the transaction, which deletes every
// key under it, commits.
func (t *tx) removing(p *presence, entry string, prefix bool, seen uint64) {
	t.changes = append(t.changes, change{p: p, entry: entry, prefix: prefix, seen: seen})
}

// scratch returns the scratch key, emptied.
func (t *tx) scratch() []byte { return t.key[:0] }

// get reads the item at a scratch key, and keeps the key's buffer for the
// next.
func (t *tx) get(key []byte) (*bdg.Item, error) {
	t.key = key
	return t.x().Get(key)
}

func appendThreadPrefix(dst []byte, kind byte, threadID string) []byte {
	return appendPart(append(dst, kind, '/'), threadID)
}

func appendBlobKey(dst []byte, threadID, field string, version int64) []byte {
	dst = appendPart(appendThreadPrefix(dst, kindBlob, threadID), field)
	return binary.BigEndian.AppendUint64(dst, uint64(version))
}

// keep returns a copy of the concatenated parts in the transaction's
// buffer.
func (t *tx) keep(parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if cap(t.buf)-len(t.buf) < n {
		t.buf = make([]byte, 0, max(n, 512))
	}
	start := len(t.buf)
	for _, p := range parts {
		t.buf = append(t.buf, p...)
	}
	return t.buf[start:len(t.buf):len(t.buf)]
}

func (t *tx) set(key, val []byte) error {
	if !t.room {
		if err := t.d.space.room(); err != nil {
			return err
		}
		t.room = true
	}
	if t.d.logs.inValueLog(len(val)) {
		t.vlog = true
	}
	t.d.wrote(len(key) + len(val))
	return t.x().Set(key, val)
}

func (t *tx) Checkpoint(threadID, id string) ([]byte, error) {
	item, err := t.get(append(appendThreadPrefix(t.scratch(), kindCheckpoint, threadID), id...))
	if errors.Is(err, bdg.ErrKeyNotFound) {
		return nil, checkpoint.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return item.ValueCopy(nil)
}

// Newest reads the thread's newest checkpoint. The thread summary names it,
// so this is two point reads; a reverse scan of the thread's checkpoints,
// slow where many deleted threads left tombstones nearby, is only the
// fallback for a summary that does not match.
func (t *tx) Newest(threadID string) (string, []byte, error) {
	if id, record, ok := t.knownNewest(threadID); ok {
		return id, record, nil
	}
	info, err := t.Thread(threadID)
	if err != nil {
		return "", nil, err
	}
	if data, err := t.Checkpoint(threadID, info.Latest); err == nil {
		return info.Latest, data, nil
	} else if !errors.Is(err, checkpoint.ErrNotFound) {
		return "", nil, err
	}
	var id string
	var data []byte
	err = t.Checkpoints(threadID, "", 1, func(i string, rec []byte) error {
		id, data = i, slices.Clone(rec)
		return nil
	})
	if err == nil && id == "" {
		err = checkpoint.ErrNotFound
	}
	return id, data, err
}

// knownNewest answers Newest from the DB's heads, for a transaction that
// has neither read nor locked yet: under the thread's lock held shared, no
// Put of the thread is between its commit and its heads entry, so the
// entry names the newest checkpoint committed, and the transaction's
// snapshot, taken then, holds it. It does not wait for the lock.
func (t *tx) knownNewest(threadID string) (string, []byte, bool) {
	if t.txn != nil || t.lock != nil {
		return "", nil, false
	}
	l := t.d.locks.of(threadID)
	if !l.TryRLock() {
		return "", nil, false
	}
	e, ok := t.d.heads.entry(threadID)
	t.x()
	l.RUnlock()
	if !ok || e.record == nil {
		return "", nil, false
	}
	return e.latest, slices.Clone(e.record), true
}

func (t *tx) Checkpoints(threadID, before string, limit int, fn func(string, []byte) error) error {
	prefix := threadPrefix(kindCheckpoint, threadID)
	it := t.x().NewIterator(bdg.IteratorOptions{Prefix: prefix, Reverse: true, PrefetchValues: true, PrefetchSize: 32})
	defer it.Close()
	start := append(slices.Clone(prefix), 0xFF)
	if before != "" {
		start = checkpointKey(threadID, before)
	}
	it.Seek(start)
	if before != "" && it.Valid() && bytes.Equal(it.Item().Key(), start) {
		it.Next()
	}
	for n := 0; it.Valid() && (limit == 0 || n < limit); it.Next() {
		id := string(it.Item().Key()[len(prefix):])
		if err := it.Item().Value(func(v []byte) error { return fn(id, v) }); err != nil {
			return err
		}
		n++
	}
	return nil
}

func (t *tx) Writes(threadID, checkpointID string) ([]checkpoint.PendingWrite, error) {
	prefix := writePrefix(threadID, checkpointID)
	it := t.x().NewIterator(bdg.IteratorOptions{Prefix: prefix, PrefetchValues: true, PrefetchSize: 16})
	defer it.Close()
	var out []checkpoint.PendingWrite
	for it.Rewind(); it.Valid(); it.Next() {
		var w checkpoint.PendingWrite
		err := it.Item().Value(func(v []byte) error {
			var err error
			w, err = core.DecodeWrite(v)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("pending write %q: %w", it.Item().Key()[len(prefix):], err)
		}
		out = append(out, w)
	}
	return out, nil
}

// Chains walks every field's chain with one reverse iterator over the
// thread's blobs, stepping with Next when the base is the adjacent older key
// and seeking otherwise. A chain ends at the field's snapshot when it
// reaches the snapshot's version and the blob there has the CRC the
// snapshot recorded.
func (t *tx) Chains(threadID string, versions map[string]int64) (map[string][]core.Link, error) {
	out := make(map[string][]core.Link, len(versions))
	it := t.x().NewIterator(bdg.IteratorOptions{Prefix: threadPrefix(kindBlob, threadID), Reverse: true})
	defer it.Close()
	fields := make([]string, 0, len(versions))
	for f := range versions {
		fields = append(fields, f)
	}
	slices.Sort(fields)
	for _, f := range fields {
		chain, err := t.chain(it, threadID, f, versions[f])
		if err != nil {
			return nil, err
		}
		out[f] = chain
	}
	return out, nil
}

func (t *tx) chain(it *bdg.Iterator, threadID, field string, v int64) ([]core.Link, error) {
	prefix := blobFieldPrefix(threadID, field)
	key := binary.BigEndian.AppendUint64(slices.Clone(prefix), uint64(v))
	it.Seek(key)
	var snap *fieldSnapshot
	first := true
	return core.WalkChain(v, func(v int64) (core.Link, bool, error) {
		binary.BigEndian.PutUint64(key[len(prefix):], uint64(v))
		if !first {
			it.Next()
			if !it.Valid() || !bytes.Equal(it.Item().Key(), key) {
				it.Seek(key)
			}
		}
		if !it.Valid() || !bytes.Equal(it.Item().Key(), key) {
			return core.Link{}, false, nil
		}
		val, err := it.Item().ValueCopy(nil)
		if err != nil {
			return core.Link{}, false, fmt.Errorf("field %s version %d: %w", field, v, err)
		}
		base, data, err := decodeBlob(val)
		if err != nil {
			return core.Link{}, false, fmt.Errorf("field %s version %d: %w", field, v, err)
		}
		if base != 0 && first {
			// A chain: the field's snapshot may shorten it.
			if snap, err = readSnapshot(t.x(), threadID, field); err != nil {
				return core.Link{}, false, fmt.Errorf("field %s snapshot: %w", field, err)
			}
		}
		first = false
		if base != 0 && snap != nil && snap.version == v && snap.sum == crc32.ChecksumIEEE(val) {
			base, data = 0, snap.data
		}
		return core.Link{Version: v, Base: base, Data: data}, true, nil
	})
}

// fieldSnapshot is a field's saved value at one version.
type fieldSnapshot struct {
	version int64
	sum     uint32
	data    []byte
}

// readSnapshot returns the field's snapshot, if it has a readable one.
func readSnapshot(txn *bdg.Txn, threadID, field string) (*fieldSnapshot, error) {
	item, err := txn.Get(snapshotKey(threadID, field))
	switch {
	case errors.Is(err, bdg.ErrKeyNotFound):
		return nil, nil
	case err != nil:
		return nil, err
	}
	val, err := item.ValueCopy(nil)
	if err != nil {
		return nil, err
	}
	v, n := binary.Uvarint(val)
	if n <= 0 || len(val) < n+4 {
		return nil, nil // unreadable: ignored, and replaced by the next save
	}
	data, err := s2.Decode(nil, val[n+4:])
	if err != nil {
		return nil, nil // likewise
	}
	return &fieldSnapshot{version: int64(v), sum: binary.BigEndian.Uint32(val[n:]), data: data}, nil
}

func (t *tx) Blobs(threadID string) ([]checkpoint.Blob, error) {
	prefix := threadPrefix(kindBlob, threadID)
	it := t.x().NewIterator(bdg.IteratorOptions{Prefix: prefix, PrefetchValues: true})
	defer it.Close()
	var out []checkpoint.Blob
	for it.Rewind(); it.Valid(); it.Next() {
		field, rest, err := readPart(it.Item().Key()[len(prefix):])
		if err != nil || len(rest) != 8 {
			return nil, fmt.Errorf("corrupt blob key %q", it.Item().Key())
		}
		b := checkpoint.Blob{Field: field, Version: int64(binary.BigEndian.Uint64(rest))}
		err = it.Item().Value(func(val []byte) error {
			var err error
			b.Base, _, err = decodeBlob(val)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("blob %s@%d: %w", b.Field, b.Version, err)
		}
		out = append(out, b)
	}
	return out, nil
}

func (t *tx) Thread(threadID string) (checkpoint.ThreadInfo, error) {
	var info checkpoint.ThreadInfo
	item, err := t.get(appendThreadPrefix(t.scratch(), kindThread, threadID))
	switch {
	case errors.Is(err, bdg.ErrKeyNotFound):
		return info, checkpoint.ErrNotFound
	case err != nil:
		return info, err
	}
	if err := item.Value(func(v []byte) error { return decodeThread(threadID, v, &info) }); err != nil {
		return info, fmt.Errorf("thread summary: %w", err)
	}
	return info, nil
}

func (t *tx) Threads() ([]checkpoint.ThreadInfo, error) {
	prefix := []byte{kindThread, '/'}
	it := t.x().NewIterator(bdg.IteratorOptions{Prefix: prefix, PrefetchValues: true, PrefetchSize: 64})
	defer it.Close()
	var out []checkpoint.ThreadInfo
	for it.Rewind(); it.Valid(); it.Next() {
		var info checkpoint.ThreadInfo
		threadID, rest, err := readPart(it.Item().Key()[len(prefix):])
		if err == nil && len(rest) > 0 {
			err = errors.New("trailing bytes")
		}
		if err == nil {
			err = it.Item().Value(func(v []byte) error { return decodeThread(threadID, v, &info) })
		}
		if err != nil {
			return nil, fmt.Errorf("decode thread summary %q: %w", it.Item().Key(), err)
		}
		out = append(out, info)
	}
	return out, nil
}

// threadV1 starts a compact thread summary; one written as JSON, as earlier
// versions did, starts with '{'.
const threadV1 byte = 0x01

// encodeThread encodes a thread summary: threadV1, the latest checkpoint
// id, the graph name, the step and the update time (Unix nanoseconds, or
// 0 for none). The thread id is the key's.
func encodeThread(info checkpoint.ThreadInfo) []byte {
	return appendThread(make([]byte, 0, 16+len(info.Latest)+len(info.GraphName)), info)
}

// appendThread appends encodeThread(info) to out.
func appendThread(out []byte, info checkpoint.ThreadInfo) []byte {
	out = append(out, threadV1)
	out = appendPart(out, info.Latest)
	out = appendPart(out, info.GraphName)
	out = binary.AppendVarint(out, int64(info.Step))
	var at int64
	if !info.UpdatedAt.IsZero() {
		at = info.UpdatedAt.UnixNano()
	}
	return binary.AppendVarint(out, at)
}

// decodeThread decodes a thread summary of either form into info.
func decodeThread(threadID string, v []byte, info *checkpoint.ThreadInfo) error {
	if len(v) > 0 && v[0] != threadV1 {
		return json.Unmarshal(v, info)
	}
	latest, rest, ok := threadLatest(v)
	if !ok {
		return errors.New("corrupt summary")
	}
	graphName, rest, err := readPart(rest)
	if err != nil {
		return err
	}
	step, n := binary.Varint(rest)
	if n <= 0 {
		return errors.New("corrupt summary step")
	}
	at, m := binary.Varint(rest[n:])
	if m <= 0 || n+m != len(rest) {
		return errors.New("corrupt summary time")
	}
	*info = checkpoint.ThreadInfo{ThreadID: threadID, GraphName: graphName, Latest: latest, Step: int(step)}
	if at != 0 {
		info.UpdatedAt = time.Unix(0, at).UTC()
	}
	return nil
}

// threadLatestBytes reads the latest checkpoint id of a compact summary
// without copying it.
func threadLatestBytes(v []byte) ([]byte, bool) {
	if len(v) == 0 || v[0] != threadV1 {
		return nil, false
	}
	n, w := binary.Uvarint(v[1:])
	if w <= 0 || uint64(len(v)-1-w) < n {
		return nil, false
	}
	return v[1+w : 1+w+int(n)], true
}

// threadLatest reads the latest checkpoint id of a compact summary and
// returns the rest of it.
func threadLatest(v []byte) (latest string, rest []byte, ok bool) {
	if len(v) == 0 || v[0] != threadV1 {
		return "", nil, false
	}
	latest, rest, err := readPart(v[1:])
	return latest, rest, err == nil
}

// Lock locks the thread until the transaction ends. It must come before
// the transaction's first read or write, whose Badger transaction then
// begins after the lock's previous holder committed. Conflicts between
// transactions that do not lock stay Badger's.
func (t *tx) Lock(threadID string, shared bool) error {
	if t.txn != nil || t.lock != nil {
		return errors.New("badger: Lock after the transaction's first read or write, or twice")
	}
	l := t.d.locks.of(threadID)
	if shared {
		l.RLock()
	} else {
		l.Lock()
	}
	t.lock, t.locked, t.shared = l, threadID, shared
	return nil
}

// exclusive reports whether the transaction holds the thread's lock
// exclusively.
func (t *tx) exclusive(threadID string) bool {
	return t.lock != nil && !t.shared && t.locked == threadID
}

// RequireBlobs reads no blob the DB knows to be stored (see knownBlobs).
func (t *tx) RequireBlobs(threadID string, refs []checkpoint.BlobRef) error {
	locked := t.exclusive(threadID)
	for _, r := range refs {
		if locked && t.d.blobs.has(threadID, r.Field, r.Version) {
			continue
		}
		ok, err := t.exists(appendBlobKey(t.scratch(), threadID, r.Field, r.Version))
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("field %s version %d has no blob", r.Field, r.Version)
		}
		t.wroteBlob(threadID, r.Field, r.Version)
	}
	return nil
}

// wroteBlob records that the transaction wrote, or found, the thread's
// blob of field at version v, for the DB's knownBlobs.
func (t *tx) wroteBlob(threadID, field string, v int64) {
	if t.exclusive(threadID) {
		t.found = append(t.found, knownBlob{field, v})
		return
	}
	t.forgetBlobs(threadID)
}

// forgetBlobs has the DB forget what it knows of the thread's blobs now
// and once the transaction commits.
func (t *tx) forgetBlobs(threadID string) {
	t.d.blobs.forget(threadID)
	t.forget = append(t.forget, threadID)
}

func (t *tx) PutBlob(threadID string, b checkpoint.Blob) error {
	key := t.keep(appendBlobKey(t.scratch(), threadID, b.Field, b.Version))
	var head [1 + binary.MaxVarintLen64]byte
	h := append(head[:0], blobFull)
	if b.Base != 0 {
		h = binary.AppendUvarint(append(head[:0], blobDelta), uint64(b.Base))
	}
	val := t.keep(h, b.Data)
	t.wroteBlob(threadID, b.Field, b.Version)
	if len(val) >= writeAheadSize {
		return t.d.writeAhead(key, val)
	}
	err := t.set(key, val)
	if errors.Is(err, bdg.ErrTxnTooBig) {
		return t.d.writeAhead(key, val)
	}
	return err
}

// writeAheadSize is the size from which a blob is written ahead of its
// checkpoint's transaction (see DB.writeAhead); smaller ones are written
// ahead only when the transaction is full.
const writeAheadSize = 256 << 10

func (t *tx) DeleteBlobs(threadID string, refs []checkpoint.BlobRef) error {
	t.forgetBlobs(threadID)
	for _, r := range refs {
		if err := t.delete(blobKey(threadID, r.Field, r.Version)); err != nil {
			return err
		}
	}
	return nil
}

func (t *tx) PutCheckpoint(threadID, id string, record []byte) error {
	if t.exclusive(threadID) {
		t.newest.thread, t.newest.id, t.newest.record = threadID, id, record
	}
	return t.set(t.keep(append(appendThreadPrefix(t.scratch(), kindCheckpoint, threadID), id...)), record)
}

func (t *tx) DeleteCheckpoints(threadID string, ids []string) error {
	for _, id := range ids {
		if err := t.deleteWrites(threadID, id); err != nil {
			return err
		}
		if err := t.delete(checkpointKey(threadID, id)); err != nil {
			return err
		}
	}
	return nil
}

func (t *tx) PutWrite(threadID, checkpointID string, w checkpoint.PendingWrite) error {
	record, err := core.EncodeWrite(w)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	ok, err := t.exists(append(appendThreadPrefix(t.scratch(), kindCheckpoint, threadID), checkpointID...))
	if err != nil {
		return err
	}
	if !ok {
		return checkpoint.ErrNotFound
	}
	prefix := writePrefix(threadID, checkpointID)
	t.adding(t.d.writes, string(prefix), 0)
	return t.set(append(prefix, w.TaskID...), record)
}

func (t *tx) DeleteWrites(threadID, checkpointID string, taskIDs []string) error {
	if taskIDs == nil {
		return t.deleteWrites(threadID, checkpointID)
	}
	prefix := writePrefix(threadID, checkpointID)
	for _, task := range taskIDs {
		if err := t.delete(append(slices.Clip(prefix), task...)); err != nil {
			return err
		}
	}
	return nil
}

// deleteWrites deletes every pending write of a checkpoint; it looks for
// none when the checkpoint has had none since the database was opened.
func (t *tx) deleteWrites(threadID, checkpointID string) error {
	prefix := appendPart(appendThreadPrefix(t.scratch(), kindWrite, threadID), checkpointID)
	t.key = prefix
	ok, seen := t.d.writes.has(prefix)
	if !ok {
		return nil
	}
	prefix = slices.Clone(prefix)
	if err := t.deletePrefix(prefix); err != nil {
		return err
	}
	t.removing(t.d.writes, string(prefix), false, seen)
	return nil
}

// PutThread reads the stored summary even when it replaces it regardless:
// two transactions that write a summary then both read it, and the one
// that commits second conflicts whichever of them got the lower commit
// timestamp (see oracle).
func (t *tx) PutThread(info checkpoint.ThreadInfo, ifNewer bool) error {
	newer, err := t.storedNewer(info.ThreadID, info.Latest)
	if err != nil || (ifNewer && newer) {
		return err
	}
	key := t.keep(appendThreadPrefix(t.scratch(), kindThread, info.ThreadID))
	t.key = appendThread(t.scratch(), info)
	if err := t.set(key, t.keep(t.key)); err != nil {
		return err
	}
	if t.exclusive(info.ThreadID) {
		h := headChange{thread: info.ThreadID, latest: info.Latest}
		if t.newest.thread == info.ThreadID && t.newest.id == info.Latest {
			h.record = t.newest.record // never modified (core.Driver)
		}
		t.heads = append(t.heads, h)
	} else {
		t.d.heads.forget(info.ThreadID)
		t.heads = append(t.heads, headChange{thread: info.ThreadID})
	}
	return nil
}

// storedNewer reports whether the thread's stored summary names a checkpoint
// id above latest. A compact summary is compared without decoding it.
func (t *tx) storedNewer(threadID, latest string) (bool, error) {
	if t.exclusive(threadID) {
		if old, ok := t.d.heads.get(threadID); ok {
			return old > latest, nil
		}
	}
	item, err := t.get(appendThreadPrefix(t.scratch(), kindThread, threadID))
	switch {
	case errors.Is(err, bdg.ErrKeyNotFound):
		return false, nil
	case err != nil:
		return false, err
	}
	var newer bool
	err = item.Value(func(v []byte) error {
		if old, ok := threadLatestBytes(v); ok {
			newer = string(old) > latest
			return nil
		}
		var old checkpoint.ThreadInfo
		if err := decodeThread(threadID, v, &old); err != nil {
			return fmt.Errorf("thread summary: %w", err)
		}
		newer = old.Latest > latest
		return nil
	})
	return newer, err
}

// PutSnapshot stores the snapshot with the CRC-32 of the blob at its
// version, which reads check before they use it.
func (t *tx) PutSnapshot(threadID, field string, version int64, value []byte) error {
	item, err := t.x().Get(blobKey(threadID, field, version))
	if err != nil {
		return fmt.Errorf("field %s: blob version %d: %w", field, version, err)
	}
	var sum uint32
	if err := item.Value(func(b []byte) error { sum = crc32.ChecksumIEEE(b); return nil }); err != nil {
		return err
	}
	out := binary.AppendUvarint(nil, uint64(version))
	out = binary.BigEndian.AppendUint32(out, sum)
	t.adding(t.d.snaps, string(snapshotKey(threadID, field)), version)
	return t.set(snapshotKey(threadID, field), append(out, s2.EncodeBetter(nil, value)...))
}

// DropSnapshot reads nothing when the field has no snapshot, or one whose
// version is known to be below from (the database records the versions of
// the snapshots it writes, and of those it reads here): reading it would
// copy the whole snapshot.
func (t *tx) DropSnapshot(threadID, field string, from int64) error {
	key := appendPart(appendThreadPrefix(t.scratch(), kindSnapshot, threadID), field)
	t.key = key
	bound, ok, seen := t.d.snaps.bound(key)
	if !ok || bound < from {
		return nil
	}
	item, err := t.get(key)
	switch {
	case errors.Is(err, bdg.ErrKeyNotFound):
		return nil
	case err != nil:
		return err
	}
	var v uint64
	n := 0
	if err := item.Value(func(val []byte) error { v, n = binary.Uvarint(val); return nil }); err != nil {
		return err
	}
	if n > 0 && int64(v) < from {
		t.d.snaps.learn(string(key), int64(v), seen)
		return nil
	}
	t.removing(t.d.snaps, string(key), false, seen)
	return t.delete(snapshotKey(threadID, field))
}

func (t *tx) DropSnapshots(threadID string) error {
	prefix := threadPrefix(kindSnapshot, threadID)
	seen := t.d.snaps.now()
	if err := t.deletePrefix(prefix); err != nil {
		return err
	}
	t.removing(t.d.snaps, string(prefix), true, seen)
	return nil
}

// DeleteThread deletes the thread's keys in the transaction; those that do
// not fit it are deleted in batches after it commits. It locks the thread
// when the transaction has not begun and holds no lock (as a
// Checkpointer's DeleteThread), so that it does not delete blobs under a
// Put that knows them to be stored (see knownBlobs).
func (t *tx) DeleteThread(threadID string) error {
	if t.txn == nil && t.lock == nil {
		if err := t.Lock(threadID, false); err != nil {
			return err
		}
	}
	t.forgetBlobs(threadID)
	t.d.heads.forget(threadID)
	t.heads = append(t.heads, headChange{thread: threadID})
	t.removing(t.d.writes, string(threadPrefix(kindWrite, threadID)), true, t.d.writes.now())
	t.removing(t.d.snaps, string(threadPrefix(kindSnapshot, threadID)), true, t.d.snaps.now())
	var keys [][]byte
	for _, kind := range threadKinds {
		it := t.x().NewIterator(bdg.IteratorOptions{Prefix: threadPrefix(kind, threadID)})
		for it.Rewind(); it.Valid(); it.Next() {
			keys = append(keys, it.Item().KeyCopy(nil))
		}
		it.Close()
	}
	for i, k := range keys {
		err := t.delete(k)
		if errors.Is(err, bdg.ErrTxnTooBig) {
			t.overflow = keys[i:]
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// delete deletes key in the transaction.
func (t *tx) delete(key []byte) error {
	t.d.wrote(len(key))
	return t.x().Delete(key)
}

// deletePrefix deletes every key with the prefix inside the transaction.
func (t *tx) deletePrefix(prefix []byte) error {
	txn := t.x()
	opts := bdg.DefaultIteratorOptions
	opts.PrefetchValues = false
	opts.Prefix = prefix
	it := txn.NewIterator(opts)
	var keys [][]byte
	for it.Rewind(); it.Valid(); it.Next() {
		keys = append(keys, it.Item().KeyCopy(nil))
	}
	it.Close()
	for _, k := range keys {
		if err := t.delete(k); err != nil {
			return err
		}
	}
	return nil
}
