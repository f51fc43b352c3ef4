package checkpoint

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// A checkpoint is stored as a record, the same in every backend. A thread
// writes one or more per turn, so records are kept small: EncodeRecord
// writes a compact binary form that leaves out what the storage key already
// says (the thread and checkpoint ids), writes ids, hashes and times as
// bytes rather than text, a task whose id is its node's name as the name
// only, and the engine's per-task trace as node, duration and the fields
// written. A typical record of a step is under 100 bytes, against about 450
// as JSON. Anything the compact form has no place for (metadata keys other
// than the engine's, a trace entry with extra keys, an unusual id) is kept as
// JSON inside the record, so every checkpoint round-trips.
//
// DecodeRecord reads both this form and the JSON records of earlier
// versions, so existing data directories and databases stay readable.

// recordV1 starts a compact record; a JSON record starts with '{'.
const recordV1 byte = 0x01

// Record flags: which optional parts follow.
const (
	recParent = 1 << iota
	recNext
	recInterrupts
	recWriters
	recMetadata
	recInput
	recFloor
	recRunID
	recTrace
	recTime
	recNilVersions
)

// sources are the sources stored as one byte, their index; any other is
// stored as a string after a zero byte.
var sources = []Source{"", SourceInput, SourceLoop, SourceUpdate, SourceResume, SourceFork, SourceInterrupt}

// EncodeRecord encodes a checkpoint for storage (see DecodeRecord).
func EncodeRecord(cp Checkpoint) ([]byte, error) {
	var flags uint64
	// The record starts with its version and flags, known only at the end:
	// room for them is kept at the front of the one buffer it is written to.
	w := recWriter{buf: make([]byte, recordHeader, 160)}
	var err error

	if cp.ParentID != "" {
		flags |= recParent
		w.id(cp.ParentID)
	}
	w.varint(int64(cp.Step))
	w.str(cp.GraphName)
	w.hexStr(cp.GraphHash)
	fields := make([]string, 0, len(cp.Versions))
	for f := range cp.Versions {
		fields = append(fields, f)
	}
	slices.Sort(fields)
	if cp.Versions == nil {
		flags |= recNilVersions
	}
	w.uvarint(uint64(len(fields)))
	for _, f := range fields {
		w.str(f)
		w.varint(cp.Versions[f])
	}
	w.source(cp.Source)
	if len(cp.Next) > 0 {
		flags |= recNext
		w.uvarint(uint64(len(cp.Next)))
		for _, t := range cp.Next {
			if err = w.task(t); err != nil {
				return nil, err
			}
		}
	}
	if len(cp.Interrupts) > 0 {
		flags |= recInterrupts
		if err = w.json(cp.Interrupts); err != nil {
			return nil, err
		}
	}
	if len(cp.Writers) > 0 {
		flags |= recWriters
		w.uvarint(uint64(len(cp.Writers)))
		for _, s := range cp.Writers {
			w.str(s)
		}
	}
	if cp.Metadata != nil {
		var compact []string // the keys written in compact form
		if runID, ok := cp.Metadata["run_id"].(string); ok {
			flags |= recRunID
			w.id(runID)
			compact = append(compact, "run_id")
		}
		if trace, ok := compactTrace(cp.Metadata["tasks"]); ok {
			flags |= recTrace
			w.uvarint(uint64(len(trace)))
			for _, e := range trace {
				w.traceEntry(e)
			}
			compact = append(compact, "tasks")
		}
		if len(cp.Metadata) > len(compact) || len(compact) == 0 {
			flags |= recMetadata
			if err = w.json(without(cp.Metadata, compact)); err != nil {
				return nil, err
			}
		}
	}
	if len(cp.Input) > 0 {
		flags |= recInput
		w.bytes(cp.Input)
	}
	if cp.VersionFloor != 0 {
		flags |= recFloor
		w.varint(cp.VersionFloor)
	}
	if idTime, ok := uuidTime(cp.ID); ok && !cp.CreatedAt.IsZero() {
		flags |= recTime
		w.varint(cp.CreatedAt.Sub(idTime).Nanoseconds())
	} else {
		w.time(cp.CreatedAt)
	}
	var hb [1 + binary.MaxVarintLen64]byte
	h := binary.AppendUvarint(append(hb[:0], recordV1), flags)
	if len(h) > recordHeader {
		out := make([]byte, 0, len(h)+len(w.buf)-recordHeader)
		return append(append(out, h...), w.buf[recordHeader:]...), nil
	}
	start := recordHeader - len(h)
	copy(w.buf[start:], h)
	return w.buf[start:], nil
}

// recordHeader is the most bytes a record's version and flags take.
const recordHeader = 1 + 2

// DecodeRecord decodes a stored checkpoint record of the thread, under the
// checkpoint id its storage key holds.
func DecodeRecord(threadID, id string, data []byte, cp *Checkpoint) error {
	if len(data) > 0 && data[0] == '{' {
		return json.Unmarshal(data, cp)
	}
	if len(data) == 0 || data[0] != recordV1 {
		return errors.New("checkpoint record: unknown format")
	}
	r := recReader{buf: data[1:]}
	flags := r.uvarint()
	*cp = Checkpoint{ThreadID: threadID, ID: id}
	if flags&recParent != 0 {
		cp.ParentID = r.id()
	}
	cp.Step = int(r.varint())
	cp.GraphName = r.str()
	cp.GraphHash = r.hexStr()
	r.versions(flags, cp)
	cp.Source = r.source()
	r.tasksAndWriters(flags, cp)
	r.metadata(flags, cp)
	if flags&recInput != 0 {
		cp.Input = json.RawMessage(slices.Clone(r.bytes()))
	}
	if flags&recFloor != 0 {
		cp.VersionFloor = r.varint()
	}
	r.createdAt(flags, id, cp)
	if r.err == nil && len(r.buf) > 0 {
		r.err = fmt.Errorf("%d bytes after the record", len(r.buf))
	}
	if r.err != nil {
		return fmt.Errorf("checkpoint record %s: %w", id, r.err)
	}
	return nil
}

// versions reads a record's channel versions: a nil map only when the
// record says so.
func (r *recReader) versions(flags uint64, cp *Checkpoint) {
	if n := r.count(); n > 0 {
		cp.Versions = make(map[string]int64, n)
		for range n {
			f := r.str()
			cp.Versions[f] = r.varint()
		}
	} else if flags&recNilVersions == 0 {
		cp.Versions = map[string]int64{}
	}
}

// tasksAndWriters reads a record's next tasks, interrupts and writers.
func (r *recReader) tasksAndWriters(flags uint64, cp *Checkpoint) {
	if flags&recNext != 0 {
		n := r.count()
		cp.Next = make([]Task, 0, n)
		for range n {
			cp.Next = append(cp.Next, r.task())
		}
	}
	if flags&recInterrupts != 0 {
		r.json(&cp.Interrupts)
	}
	if flags&recWriters != 0 {
		n := r.count()
		cp.Writers = make([]string, 0, n)
		for range n {
			cp.Writers = append(cp.Writers, r.str())
		}
	}
}

// metadata reads a record's metadata: its run id and task trace, stored in
// their own forms, and the rest as JSON.
func (r *recReader) metadata(flags uint64, cp *Checkpoint) {
	if flags&(recRunID|recTrace|recMetadata) != 0 {
		cp.Metadata = map[string]any{}
	}
	if flags&recRunID != 0 {
		cp.Metadata["run_id"] = r.id()
	}
	if flags&recTrace != 0 {
		n := r.count()
		trace := make([]any, 0, n)
		for range n {
			trace = append(trace, r.traceEntry())
		}
		cp.Metadata["tasks"] = trace
	}
	if flags&recMetadata != 0 {
		var rest map[string]any
		r.json(&rest)
		if rest == nil && flags&(recRunID|recTrace) == 0 {
			cp.Metadata = map[string]any{}
		}
		for k, v := range rest {
			cp.Metadata[k] = v
		}
	}
}

// createdAt reads a record's creation time: relative to the time in its
// (time-ordered) id, or in full.
func (r *recReader) createdAt(flags uint64, id string, cp *Checkpoint) {
	if flags&recTime == 0 {
		cp.CreatedAt = r.time()
		return
	}
	d := r.varint()
	if t, ok := uuidTime(id); ok && r.err == nil {
		cp.CreatedAt = t.Add(time.Duration(d)).UTC()
	} else if r.err == nil {
		r.err = errors.New("creation time relative to an id without a time")
	}
}

// without returns m without the keys (m itself when there are none).
func without(m map[string]any, keys []string) map[string]any {
	if len(keys) == 0 {
		return m
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if !slices.Contains(keys, k) {
			out[k] = v
		}
	}
	return out
}

// traceEntry is the compact form of one entry of the engine's per-task
// trace (metadata "tasks"): {"task", "node", "duration_ms", "writes"}.
type traceEntry struct {
	task, node string
	micros     int64
	writes     []string
}

// compactTrace returns the trace in compact form when every entry has
// exactly the engine's usual keys, with a duration in whole microseconds.
func compactTrace(v any) ([]traceEntry, bool) {
	switch l := v.(type) {
	case []any:
		out := make([]traceEntry, len(l))
		for i, item := range l {
			m, ok := item.(map[string]any)
			if !ok || !compactEntry(m, &out[i]) {
				return nil, false
			}
		}
		return out, true
	case []map[string]any:
		out := make([]traceEntry, len(l))
		for i, m := range l {
			if !compactEntry(m, &out[i]) {
				return nil, false
			}
		}
		return out, true
	}
	return nil, false
}

// compactEntry reads one trace entry into e when it has exactly the
// engine's usual keys.
func compactEntry(m map[string]any, e *traceEntry) bool {
	if len(m) != 4 {
		return false
	}
	var okTask, okNode bool
	e.task, okTask = m["task"].(string)
	e.node, okNode = m["node"].(string)
	ms, okMs := m["duration_ms"].(float64)
	if !okTask || !okNode || !okMs || ms < 0 || ms > 1e12 {
		return false
	}
	e.micros = int64(math.Round(ms * 1000))
	if float64(e.micros)/1000 != ms {
		return false
	}
	switch ws := m["writes"].(type) {
	case []string:
		if ws == nil {
			return false
		}
		e.writes = ws
	case []any:
		if ws == nil {
			return false
		}
		e.writes = make([]string, 0, len(ws))
		for _, x := range ws {
			s, ok := x.(string)
			if !ok {
				return false
			}
			e.writes = append(e.writes, s)
		}
	default:
		return false
	}
	return true
}

// uuidTime returns the time a version 6 UUID (NewID) was made at.
func uuidTime(id string) (time.Time, bool) {
	u, ok := parseUUID(id)
	if !ok || u[6]>>4 != 6 {
		return time.Time{}, false
	}
	ts := uint64(binary.BigEndian.Uint32(u[0:4]))<<28 | uint64(binary.BigEndian.Uint16(u[4:6]))<<12 | uint64(binary.BigEndian.Uint16(u[6:8])&0x0fff)
	ns := (int64(ts) - gregorianOffset) * 100
	return time.Unix(0, ns).UTC(), true
}

// parseUUID parses the canonical lowercase form of a UUID, the only form
// whose bytes can be written back exactly.
func parseUUID(s string) ([16]byte, bool) {
	var u [16]byte
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, false
	}
	var bad byte
	for j, i := range uuidHexAt {
		hi, lo := hexValue[s[i]], hexValue[s[i+1]]
		bad |= hi | lo
		u[j] = hi<<4 | lo&0x0f
	}
	return u, bad&0xf0 == 0
}

// uuidHexAt are the offsets of the 16 byte pairs of a canonical UUID.
var uuidHexAt = [16]int{0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34}

// hexValue maps a lowercase hex digit to its value and every other byte
// to 0xff.
var hexValue = func() (t [256]byte) {
	for c := range t {
		v, ok := lowerHex(byte(c))
		if !ok {
			v = 0xff
		}
		t[c] = v
	}
	return t
}()

func lowerHex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

func formatUUID(u []byte) string {
	var out [36]byte
	hex.Encode(out[0:8], u[0:4])
	hex.Encode(out[9:13], u[4:6])
	hex.Encode(out[14:18], u[6:8])
	hex.Encode(out[19:23], u[8:10])
	hex.Encode(out[24:36], u[10:16])
	out[8], out[13], out[18], out[23] = '-', '-', '-', '-'
	return string(out[:])
}

// Kinds of encoded ids and hex strings.
const (
	idString byte = iota
	idUUID
	idRun // "run-" and 16 lowercase hex digits
	idHex // an even number of lowercase hex digits
)

type recWriter struct{ buf []byte }

func (w *recWriter) uvarint(v uint64) { w.buf = binary.AppendUvarint(w.buf, v) }
func (w *recWriter) varint(v int64)   { w.buf = binary.AppendVarint(w.buf, v) }
func (w *recWriter) bytes(b []byte)   { w.uvarint(uint64(len(b))); w.buf = append(w.buf, b...) }
func (w *recWriter) str(s string)     { w.uvarint(uint64(len(s))); w.buf = append(w.buf, s...) }

func (w *recWriter) id(s string) {
	if u, ok := parseUUID(s); ok {
		w.buf = append(append(w.buf, idUUID), u[:]...)
		return
	}
	if rest, ok := bytes.CutPrefix([]byte(s), []byte("run-")); ok && len(rest) == 16 && isLowerHex(rest) {
		var b [8]byte
		hex.Decode(b[:], rest)
		w.buf = append(append(w.buf, idRun), b[:]...)
		return
	}
	w.buf = append(w.buf, idString)
	w.str(s)
}

func (w *recWriter) hexStr(s string) {
	if len(s) > 0 && len(s)%2 == 0 && isLowerHex([]byte(s)) {
		w.buf = append(w.buf, idHex)
		w.uvarint(uint64(len(s) / 2))
		for i := 0; i < len(s); i += 2 {
			w.buf = append(w.buf, hexValue[s[i]]<<4|hexValue[s[i+1]])
		}
		return
	}
	w.buf = append(w.buf, idString)
	w.str(s)
}

func isLowerHex(b []byte) bool {
	for _, c := range b {
		if _, ok := lowerHex(c); !ok {
			return false
		}
	}
	return true
}

func (w *recWriter) source(s Source) {
	if i := slices.Index(sources, s); i > 0 {
		w.buf = append(w.buf, byte(i))
		return
	}
	w.buf = append(w.buf, 0)
	w.str(string(s))
}

// Task kinds: the id is the node's name and there is no item, the id
// differs, or the task is kept as JSON.
const (
	taskPlain byte = iota
	taskID
	taskJSON
)

func (w *recWriter) task(t Task) error {
	plain := !t.HasItem && t.Item == nil && t.Resume == nil && t.Namespace == ""
	switch {
	case plain && t.ID == t.Node:
		w.buf = append(w.buf, taskPlain)
		w.str(t.Node)
	case plain:
		w.buf = append(w.buf, taskID)
		w.str(t.Node)
		w.str(t.ID)
	default:
		w.buf = append(w.buf, taskJSON)
		return w.json(t)
	}
	return nil
}

func (w *recWriter) traceEntry(e traceEntry) {
	w.str(e.node)
	if e.task == e.node {
		w.str("")
	} else {
		w.buf = append(w.buf, 0xff)
		w.str(e.task)
	}
	w.uvarint(uint64(e.micros))
	w.uvarint(uint64(len(e.writes)))
	for _, s := range e.writes {
		w.str(s)
	}
}

func (w *recWriter) json(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.bytes(b)
	return nil
}

func (w *recWriter) time(t time.Time) {
	if t.IsZero() {
		w.buf = append(w.buf, 0)
		return
	}
	w.buf = append(w.buf, 1)
	w.varint(t.Unix())
	w.uvarint(uint64(t.Nanosecond()))
}

type recReader struct {
	buf []byte
	err error
}

func (r *recReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("truncated or corrupt %s", what)
	}
	r.buf = nil
}

func (r *recReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.buf)
	if n <= 0 {
		r.fail("number")
		return 0
	}
	r.buf = r.buf[n:]
	return v
}

func (r *recReader) varint() int64 {
	v, n := binary.Varint(r.buf)
	if n <= 0 {
		r.fail("number")
		return 0
	}
	r.buf = r.buf[n:]
	return v
}

// count reads a length that the rest of the record could hold.
func (r *recReader) count() int {
	n := r.uvarint()
	if n > uint64(len(r.buf)) {
		r.fail("count")
		return 0
	}
	return int(n)
}

func (r *recReader) byte() byte {
	if len(r.buf) == 0 {
		r.fail("record")
		return 0
	}
	b := r.buf[0]
	r.buf = r.buf[1:]
	return b
}

func (r *recReader) take(n int) []byte {
	if n < 0 || n > len(r.buf) {
		r.fail("record")
		return nil
	}
	b := r.buf[:n]
	r.buf = r.buf[n:]
	return b
}

func (r *recReader) bytes() []byte { return r.take(r.count()) }
func (r *recReader) str() string   { return string(r.bytes()) }

func (r *recReader) id() string {
	switch r.byte() {
	case idString:
		return r.str()
	case idUUID:
		if b := r.take(16); b != nil {
			return formatUUID(b)
		}
	case idRun:
		if b := r.take(8); b != nil {
			return "run-" + hex.EncodeToString(b)
		}
	default:
		r.fail("id")
	}
	return ""
}

func (r *recReader) hexStr() string {
	switch r.byte() {
	case idString:
		return r.str()
	case idHex:
		return hex.EncodeToString(r.bytes())
	default:
		r.fail("hash")
	}
	return ""
}

func (r *recReader) source() Source {
	i := r.byte()
	switch {
	case i == 0:
		return Source(r.str())
	case int(i) < len(sources):
		return sources[i]
	}
	r.fail("source")
	return ""
}

func (r *recReader) task() Task {
	switch r.byte() {
	case taskPlain:
		n := r.str()
		return Task{ID: n, Node: n}
	case taskID:
		n := r.str()
		return Task{ID: r.str(), Node: n}
	case taskJSON:
		var t Task
		r.json(&t)
		return t
	}
	r.fail("task")
	return Task{}
}

func (r *recReader) traceEntry() any {
	node := r.str()
	task := node
	if len(r.buf) > 0 && r.buf[0] == 0xff {
		r.buf = r.buf[1:]
		task = r.str()
	} else if s := r.str(); s != "" {
		r.fail("trace entry")
	}
	micros := r.uvarint()
	n := r.count()
	writes := make([]any, 0, n)
	for range n {
		writes = append(writes, r.str())
	}
	return map[string]any{"task": task, "node": node, "duration_ms": float64(micros) / 1000, "writes": writes}
}

func (r *recReader) json(v any) {
	b := r.bytes()
	if r.err != nil {
		return
	}
	if err := json.Unmarshal(b, v); err != nil {
		r.err = fmt.Errorf("embedded JSON: %w", err)
	}
}

func (r *recReader) time() time.Time {
	switch r.byte() {
	case 0:
		return time.Time{}
	case 1:
		sec := r.varint()
		ns := r.uvarint()
		if ns >= 1e9 {
			r.fail("time")
			return time.Time{}
		}
		return time.Unix(sec, int64(ns)).UTC()
	}
	r.fail("time")
	return time.Time{}
}
