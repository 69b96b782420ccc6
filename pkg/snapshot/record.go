package snapshot

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/rolloutdoctor/rolloutdoctor/internal/par"
)

// A record file is what `record` writes while it watches a Rollout: one
// JSON document per line (so that it can be appended to as changes arrive,
// and read with jq), the first a header of kind Recording, each further
// one a Change — an object as a list or a watch delivered it, with the
// local time it arrived, a stretch a watch lost (a gap), or the end. Read
// recognises the header and replays the file to its end, so a record file
// is an input wherever a snapshot is; ReadRecording keeps every change, for
// `--at` and `timeline`.

// RecordingKind is the kind of a record file's header line (apiVersion
// HeaderAPIVersion); its spec is a Header.
const RecordingKind = "Recording"

// ChangeType says what a Change of a record is.
type ChangeType string

// Change types.
const (
	// ChangeListed is an object as a list returned it: when a watch starts, and
	// again when one is re-listed after a gap.
	ChangeListed ChangeType = "LISTED"
	// ChangeAdded, ChangeModified and ChangeDeleted are watch events.
	ChangeAdded    ChangeType = "ADDED"
	ChangeModified ChangeType = "MODIFIED"
	ChangeDeleted  ChangeType = "DELETED"
	// ChangeGap is a stretch of one resource whose changes are not in the record:
	// the watch expired or the connection dropped and could not resume, and
	// the resource was listed again. The state after it is complete again.
	ChangeGap ChangeType = "GAP"
	// ChangeEnd closes a record: why the recorder stopped.
	ChangeEnd ChangeType = "END"
)

// Change is one line of a record after the header.
type Change struct {
	Type ChangeType `json:"type"`
	// ReceivedAt is when the recorder received it (its local clock).
	ReceivedAt time.Time `json:"receivedAt"`
	// Resource is the stream it came from ("pods", "replicasets.apps").
	Resource string `json:"resource,omitempty"`
	// Object is the object (for Deleted, its last state) as JSON.
	Object json.RawMessage `json:"object,omitempty"`
	// Ref names a deleted object that a re-list no longer returned (the
	// watch that would have said so was lost): Object is then empty.
	Ref *ObjectRef `json:"ref,omitempty"`
	// ResourceVersion is the list's resourceVersion for a Listed object
	// (from that revision on, its stream is complete), a Gap and a Deleted
	// by Ref (where in the apiserver's order it belongs).
	ResourceVersion string `json:"resourceVersion,omitempty"`
	// Since is, for a Gap, the last moment the stream was known complete.
	Since *time.Time `json:"since,omitempty"`
	// Reason says why a Gap happened or why the record ended.
	Reason string `json:"reason,omitempty"`
	// Open marks a Gap that lasts to the end of the record: the stream
	// could not be read again (permission withdrawn, the recorder stopped
	// while its watch was down).
	Open bool `json:"open,omitempty"`
}

// ObjectRef names an object.
type ObjectRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
}

// RecordWriter writes a record file: the header, then one change per line,
// each with a single Write so that a recorder that is killed leaves at most
// its last line cut off (which ReadRecording tolerates).
type RecordWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// NewRecordWriter writes the header line to w and returns the writer.
func NewRecordWriter(w io.Writer, h Header) (*RecordWriter, error) {
	line, err := json.Marshal(map[string]interface{}{
		"apiVersion": HeaderAPIVersion, "kind": RecordingKind,
		"metadata": map[string]interface{}{"name": "record"}, "spec": h,
	})
	if err != nil {
		return nil, fmt.Errorf("encode record header: %w", err)
	}
	if _, err := w.Write(append(line, '\n')); err != nil {
		return nil, err
	}
	return &RecordWriter{w: w}, nil
}

// Write appends one change. It is safe for concurrent use.
func (rw *RecordWriter) Write(c Change) error {
	line, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("encode change: %w", err)
	}
	rw.mu.Lock()
	defer rw.mu.Unlock()
	_, err = rw.w.Write(append(line, '\n'))
	return err
}

// WriteObject appends a change that carries an object.
func (rw *RecordWriter) WriteObject(t ChangeType, resource string, at time.Time, u *unstructured.Unstructured) error {
	raw, err := json.Marshal(u.Object)
	if err != nil {
		return fmt.Errorf("encode %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return rw.Write(Change{Type: t, ReceivedAt: at, Resource: resource, Object: raw})
}

// RecordGap is a stretch of one resource the record does not hold.
type RecordGap struct {
	Resource string    `json:"resource"`
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	Reason   string    `json:"reason"`
	// Open: the stream was not read again before the record ended.
	Open bool `json:"open,omitempty"`
}

// gapOf is a Gap change as a RecordGap (To is the record's end when open).
func (r *Recording) gapOf(e *entry) RecordGap {
	from := r.Start
	if e.since != nil {
		from = *e.since
	}
	return RecordGap{Resource: e.resource, From: from, To: e.received, Reason: e.reason, Open: e.open}
}

func (g RecordGap) String() string {
	return fmt.Sprintf("%s from %s to %s: %s", g.Resource, g.From.UTC().Format("15:04:05.000Z"), g.To.UTC().Format("15:04:05.000Z"), g.Reason)
}

// Recording is a record file, read: every change in replay order.
type Recording struct {
	Header Header
	// Start is when recording started (the header's takenAt); Last is the
	// latest replay time of any change.
	Start, Last time.Time
	// Gaps are the stretches a watch lost, oldest first.
	Gaps []RecordGap
	// Ended says why the recorder stopped ("" when the file has no end
	// line: the recorder was killed, or is still running).
	Ended string
	// CutOff is set when the last line was cut off mid-write and ignored.
	CutOff bool
	// RVOrder is true when the changes are replayed in the apiserver's
	// order (every resourceVersion an etcd revision), false when in the
	// order they arrived.
	RVOrder bool

	entries []entry
}

// entry is one change, indexed; its object stays raw JSON until a replay
// needs it (a record of a 2,000-pod Rollout holds thousands of pods).
type entry struct {
	typ      ChangeType
	at       time.Time // replay time: never earlier than the one before
	received time.Time
	resource string
	gk       string // group/kind
	key      string // group/kind/namespace/name
	rv       string
	order    uint64
	raw      []byte
	line     int
	since    *time.Time
	reason   string
	open     bool
}

// Len is the number of changes.
func (r *Recording) Len() int { return len(r.entries) }

// isRecording reports whether data starts with a record header line.
func isRecording(data []byte) bool {
	line := data
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		line = data[:i]
	}
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return false
	}
	apiVersion, kind, ok := typeMeta(line)
	return ok && apiVersion == HeaderAPIVersion && kind == RecordingKind
}

// ReadRecording reads a record file.
func ReadRecording(name string, r io.Reader) (*Recording, error) {
	data, err := readAll(name, r)
	if err != nil {
		return nil, err
	}
	if !isRecording(data) {
		return nil, &ParseError{File: name, Line: 1, Err: errors.New("not a record file: its first line is not a Recording header (written by `kubectl rolloutdoctor record`)")}
	}
	return parseRecording(name, data)
}

// objectMeta is what a replay indexes an object by.
type objectMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name            string `json:"name"`
		Namespace       string `json:"namespace"`
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
}

func parseRecording(name string, data []byte) (*Recording, error) {
	var lines [][]byte
	var numbers []int
	n := 0
	for pos := 0; pos < len(data); {
		end := bytes.IndexByte(data[pos:], '\n')
		next := len(data)
		if end >= 0 {
			end += pos
			next = end + 1
		} else {
			end = len(data)
		}
		n++
		if l := bytes.TrimSpace(data[pos:end]); len(l) > 0 {
			lines, numbers = append(lines, l), append(numbers, n)
		}
		pos = next
	}
	rec := &Recording{}
	var hdr struct {
		Spec Header `json:"spec"`
	}
	if err := json.Unmarshal(lines[0], &hdr); err != nil {
		return nil, &ParseError{File: name, Line: numbers[0], Err: fmt.Errorf("record header: %w", err)}
	}
	rec.Header = hdr.Spec
	rec.Start = hdr.Spec.TakenAt
	lines, numbers = lines[1:], numbers[1:]
	entries := make([]entry, len(lines))
	errs := make([]error, len(lines))
	par.Do(len(lines), func(i int) { entries[i], errs[i] = parseChange(lines[i], numbers[i]) })
	for i, err := range errs {
		if err == nil {
			continue
		}
		// A recorder killed mid-write leaves its last line cut off: what
		// came before is whole, and the record says it lost that line.
		if i == len(errs)-1 && !bytes.HasSuffix(data, []byte("\n")) {
			entries, rec.CutOff = entries[:i], true
			break
		}
		return nil, &ParseError{File: name, Line: numbers[i], Err: err}
	}
	for _, e := range entries {
		if e.typ == ChangeEnd {
			rec.Ended = e.reason
		}
	}
	rec.entries = entries
	rec.order()
	return rec, nil
}

func parseChange(line []byte, n int) (entry, error) {
	var c Change // the object kept raw
	if err := json.Unmarshal(line, &c); err != nil {
		return entry{}, fmt.Errorf("not a record change: %v", err)
	}
	e := entry{typ: c.Type, received: c.ReceivedAt, resource: c.Resource, line: n, since: c.Since, reason: c.Reason, rv: c.ResourceVersion, open: c.Open}
	switch c.Type {
	case ChangeListed, ChangeAdded, ChangeModified, ChangeDeleted:
		var m objectMeta
		switch {
		case len(c.Object) > 0:
			if err := json.Unmarshal(c.Object, &m); err != nil {
				return entry{}, fmt.Errorf("%s change: the object: %v", c.Type, err)
			}
			e.raw, e.rv = c.Object, m.Metadata.ResourceVersion
		case c.Type == ChangeDeleted && c.Ref != nil:
			m.APIVersion, m.Kind = c.Ref.APIVersion, c.Ref.Kind
			m.Metadata.Name, m.Metadata.Namespace = c.Ref.Name, c.Ref.Namespace
		default:
			return entry{}, fmt.Errorf("%s change without an object", c.Type)
		}
		gv, err := schema.ParseGroupVersion(m.APIVersion)
		if err != nil || m.Kind == "" || m.Metadata.Name == "" {
			return entry{}, fmt.Errorf("%s change: the object has no apiVersion, kind or name", c.Type)
		}
		e.gk = gv.Group + "/" + m.Kind
		e.key = e.gk + "/" + m.Metadata.Namespace + "/" + m.Metadata.Name
	case ChangeGap, ChangeEnd:
	default:
		return entry{}, fmt.Errorf("unknown change type %q", c.Type)
	}
	if c.ReceivedAt.IsZero() {
		return entry{}, fmt.Errorf("%s change without receivedAt", c.Type)
	}
	return e, nil
}

// unordered kinds are left out of the apiserver's order: Events may be kept
// in an etcd of their own (kube-apiserver --etcd-servers-overrides), whose
// revisions say nothing about the others'.
func unordered(gk string) bool { return gk == "/Event" || gk == "events.k8s.io/Event" }

// order puts the changes in replay order and gives each its replay time.
// Separate watch streams deliver in their own order: a VirtualService
// written after a ReplicaSet's status can arrive first, and a state built
// in arrival order would pair the new weight with the old availability.
// With etcd storage every resourceVersion is the global revision of its
// write, so when all of them are integers the changes are replayed in
// that order (an Event, a gap and the end keep their place after the
// change that arrived before them). Otherwise they stay in arrival order.
func (r *Recording) order() {
	es := r.entries
	numeric := true
	var last uint64
	for i := range es {
		e := &es[i]
		if e.rv == "" || unordered(e.gk) {
			e.order = last
			continue
		}
		v, err := strconv.ParseUint(e.rv, 10, 64)
		if err != nil {
			numeric = false
			break
		}
		e.order, last = v, v
	}
	r.RVOrder = numeric
	if numeric {
		sort.SliceStable(es, func(i, j int) bool { return es[i].order < es[j].order })
	}
	// Replay time never goes back. Only watch events move it: a listed
	// object is the state at the list, placed at its own (older) revision,
	// and its arrival says nothing of when that revision was written.
	at := r.Start
	for i := range es {
		e := &es[i]
		switch e.typ {
		case ChangeAdded, ChangeModified:
			if e.received.After(at) {
				at = e.received
			}
		case ChangeDeleted, ChangeEnd:
			if e.raw != nil || e.typ == ChangeEnd {
				if e.received.After(at) {
					at = e.received
				}
			}
		case ChangeGap:
			r.Gaps = append(r.Gaps, r.gapOf(e))
		}
		e.at = at
	}
	r.Last = at
	for i := range r.Gaps {
		if r.Gaps[i].Open {
			r.Gaps[i].To = at
		}
	}
	sort.SliceStable(r.Gaps, func(i, j int) bool { return r.Gaps[i].From.Before(r.Gaps[j].From) })
}

// ReplayStep is one change of a replay.
type ReplayStep struct {
	// At is the change's replay time; ReceivedAt when it arrived.
	At, ReceivedAt time.Time
	Type           ChangeType
	Resource       string
	// ResourceVersion is the object's (for a Gap, the re-list's).
	ResourceVersion string
	// Object is the object after the change (for a Deleted its last
	// state, nil when only its name is known) and Previous the state
	// before (nil when it was not known). Both are shared: read them only.
	Object, Previous *unstructured.Unstructured
	// Gap is set for a Gap change.
	Gap *RecordGap
	// Reason is a Gap's or the End's reason.
	Reason string
}

// Replay calls fn for every change in replay order whose object's kind
// keep accepts (group and kind, "" for the core group), and for every gap
// and the end; state holds the accepted objects as they are after the
// change. Objects of other kinds are never decoded. fn returning an error
// stops the replay with it.
func (r *Recording) Replay(keep func(group, kind string) bool, fn func(ReplayStep, *ReplayState) error) error {
	st := &ReplayState{rec: r, objs: map[string]*unstructured.Unstructured{}}
	keepKind := map[string]bool{}
	accepted := func(gk string) bool {
		v, ok := keepKind[gk]
		if !ok {
			group, kind := splitGK(gk)
			v = keep(group, kind)
			keepKind[gk] = v
		}
		return v
	}
	for i := range r.entries {
		e := &r.entries[i]
		step := ReplayStep{At: e.at, ReceivedAt: e.received, Type: e.typ, Resource: e.resource, ResourceVersion: e.rv, Reason: e.reason}
		switch e.typ {
		case ChangeGap:
			g := r.gapOf(e)
			if g.Open {
				g.To = r.Last
			}
			step.Gap = &g
		case ChangeEnd:
		default:
			if !accepted(e.gk) {
				continue
			}
			step.Previous = st.objs[e.key]
			if e.raw != nil {
				u, err := decodeRaw(e.raw)
				if err != nil {
					return fmt.Errorf("line %d: %w", e.line, err)
				}
				step.Object = u
			}
			if e.typ == ChangeDeleted {
				delete(st.objs, e.key)
			} else {
				st.objs[e.key] = step.Object
			}
		}
		st.at = e.at
		if err := fn(step, st); err != nil {
			return err
		}
	}
	return nil
}

// ReplayState is the objects of a replay at one step.
type ReplayState struct {
	rec  *Recording
	objs map[string]*unstructured.Unstructured
	at   time.Time
}

// Snapshot is the state as a snapshot taken at the step's time. It shares
// the objects, which the replay never changes.
func (s *ReplayState) Snapshot() *Snapshot {
	objs := make([]*unstructured.Unstructured, 0, len(s.objs))
	for _, o := range s.objs {
		objs = append(objs, o)
	}
	return New(s.rec.headerAt(s.at), objs)
}

// Objects calls fn for each object of the state.
func (s *ReplayState) Objects(fn func(*unstructured.Unstructured)) {
	for _, o := range s.objs {
		fn(o)
	}
}

func splitGK(gk string) (group, kind string) {
	for i := 0; i < len(gk); i++ {
		if gk[i] == '/' {
			return gk[:i], gk[i+1:]
		}
	}
	return "", gk
}

func decodeRaw(raw []byte) (*unstructured.Unstructured, error) {
	m := map[string]interface{}{}
	// The apimachinery decoder keeps integers as int64, as every other
	// input path does (encoding/json would make them float64).
	if err := utiljson.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// headerAt is the header of the state at t: taken then, with the gaps the
// recorder met when it started (forbidden kinds…) and, for a resource whose
// watch had lost changes at t, a gap saying that its state may be stale.
func (r *Recording) headerAt(t time.Time) Header {
	h := r.Header
	h.TakenAt = t
	h.Gaps = append([]Gap(nil), r.Header.Gaps...)
	for _, g := range r.Gaps {
		if !t.Before(g.From) && (t.Before(g.To) || g.Open) {
			h.Gaps = append(h.Gaps, Gap{Resource: g.Resource, Reason: GapError,
				Message: fmt.Sprintf("the record lost its changes from %s to %s (%s): its state at this moment may be stale", g.From.UTC().Format(time.RFC3339), g.To.UTC().Format(time.RFC3339), g.Reason)})
		}
	}
	return h
}

// ErrBeforeStart is returned by At for a time before the record starts.
var ErrBeforeStart = errors.New("before the record starts")

// At is the state at t: every change up to the last whose replay time is
// not after t. Pods are decoded straight into structs, as Read does.
func (r *Recording) At(t time.Time) (*Snapshot, error) {
	if t.Before(r.Start) {
		return nil, fmt.Errorf("%s is %w (%s)", t.UTC().Format(time.RFC3339Nano), ErrBeforeStart, r.Start.UTC().Format(time.RFC3339Nano))
	}
	last := map[string]int{}
	for i := range r.entries {
		e := &r.entries[i]
		if e.at.After(t) {
			break
		}
		switch e.typ {
		case ChangeDeleted:
			delete(last, e.key)
		case ChangeListed, ChangeAdded, ChangeModified:
			last[e.key] = i
		}
	}
	idx := make([]int, 0, len(last))
	for _, i := range last {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	objs := make([]*unstructured.Unstructured, len(idx))
	structs := make([]interface{}, len(idx))
	errs := make([]error, len(idx))
	par.Do(len(idx), func(k int) {
		e := &r.entries[idx[k]]
		if stub, obj, ok := decodeTypedItem(e.raw); ok {
			objs[k], structs[k] = &unstructured.Unstructured{Object: stub}, obj
			return
		}
		u, err := decodeRaw(e.raw)
		if err != nil {
			err = fmt.Errorf("line %d: %w", e.line, err)
		}
		objs[k], errs[k] = u, err
	})
	typed := map[*unstructured.Unstructured]Decoded{}
	for k, err := range errs {
		if err != nil {
			return nil, err
		}
		if structs[k] != nil {
			typed[objs[k]] = Decoded{Obj: structs[k], Stub: true}
		}
	}
	at := t
	if at.After(r.Last) {
		at = r.Last
	}
	return NewTyped(r.headerAt(at), objs, typed), nil
}

// Final is the state at the end of the record.
func (r *Recording) Final() (*Snapshot, error) { return r.At(r.Last) }
