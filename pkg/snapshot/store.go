// Package snapshot is rolloutdoctor's picture of the cluster: the objects read
// once (from the API server or from a file) plus a header that says when, from
// where, and what could not be read. Everything downstream is pure analysis of
// a Snapshot; nothing after this package talks to a cluster.
package snapshot

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	yamlv3 "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/rolloutdoctor/rolloutdoctor/internal/par"
)

// HeaderAPIVersion and HeaderKind identify the header item that `snapshot`
// writes into its v1 List. kubectl ignores nothing here: the item is only read
// back by rolloutdoctor.
const (
	HeaderAPIVersion = "rolloutdoctor.io/v1alpha1"
	HeaderKind       = "SnapshotInfo"
)

// GapReason says why a kind of object is missing from a snapshot.
type GapReason string

// Gap reasons.
const (
	GapForbidden    GapReason = "Forbidden"    // RBAC denied the read
	GapNotInstalled GapReason = "NotInstalled" // the API (CRD) is not served
	GapError        GapReason = "Error"        // any other failure (timeout, server error)
	GapNotFound     GapReason = "NotFound"     // a named object the Rollout references does not exist
)

// Gap records something the gatherer wanted to read and could not. The report
// names every gap: a missing kind is never silently treated as "healthy".
type Gap struct {
	Resource  string    `json:"resource"`            // e.g. "virtualservices.networking.istio.io"
	Namespace string    `json:"namespace,omitempty"` // empty for cluster-scoped reads
	Name      string    `json:"name,omitempty"`      // set when a single named object was wanted
	Reason    GapReason `json:"reason"`
	Message   string    `json:"message"`
}

func (g Gap) String() string {
	what := g.Resource
	if g.Name != "" {
		what += " " + g.Name
	}
	if g.Namespace != "" {
		what += " in " + g.Namespace
	}
	return fmt.Sprintf("%s: %s (%s)", what, g.Reason, g.Message)
}

// Fix says what to do about a list or get that was refused or failed: grant
// the read, or run again (a timeout, a server error).
func (g Gap) Fix() string {
	if g.Reason != GapForbidden {
		return "run again"
	}
	verb := "list"
	if g.Name != "" {
		verb = "get"
	}
	return fmt.Sprintf("grant %s on %s (docs/rbac.yaml), or run it as someone who may", verb, g.Resource)
}

// ListGap is the gap, if any, that kept the objects of resource
// (plural.group) in namespace from being listed: their list refused or
// failed there or across all namespaces. Those objects are then unknown,
// not absent.
func (h Header) ListGap(resource, namespace string) (Gap, bool) {
	for _, g := range h.Gaps {
		if g.Resource == resource && g.Name == "" && (g.Namespace == "" || g.Namespace == namespace) {
			return g, true
		}
	}
	return Gap{}, false
}

// ListedWhole: an object of resource in namespace that the snapshot does
// not hold does not exist — the read listed resource there (Listed, within
// the target's namespace) without a gap. A scan lists less than a
// diagnose, a list can be refused, a snapshot written before Listed was
// kept says nothing of what it listed, and a file without a header holds
// what its author put in.
func (h Header) ListedWhole(resource, namespace string) bool {
	if h.Offline || h.TargetNamespace != "" && h.TargetNamespace != namespace || !slices.Contains(h.Listed, resource) {
		return false
	}
	_, gap := h.ListGap(resource, namespace)
	return !gap
}

// Header describes how the snapshot was taken.
type Header struct {
	// Target is the Rollout (or Deployment) the snapshot was taken for.
	TargetKind      string    `json:"targetKind,omitempty"`
	TargetNamespace string    `json:"targetNamespace,omitempty"`
	TargetName      string    `json:"targetName,omitempty"`
	TakenAt         time.Time `json:"takenAt"`
	Context         string    `json:"context,omitempty"`
	Server          string    `json:"server,omitempty"`
	ToolVersion     string    `json:"toolVersion,omitempty"`
	Gaps            []Gap     `json:"gaps,omitempty"`
	// Listed names the resources (as Gap.Resource does) the read listed in
	// the target's namespace, or in every namespace when it has none, and
	// kept each of the target's objects of: what the snapshot lacks of them
	// does not exist (ListedWhole). A list that failed is a gap instead.
	Listed []string `json:"listed,omitempty"`
	// ControllerLog is what was read of the controller's log for the target
	// (diagnose --controller-logs); nil when it was not read.
	ControllerLog *ControllerLog `json:"controllerLog,omitempty"`
	// Offline is true when the objects came from a file without a header:
	// nothing is known about what was not captured.
	Offline bool `json:"-"`
}

// Snapshot is an immutable set of objects plus its header. Objects are kept
// exactly as read (unstructured) so that writing a snapshot back out loses
// nothing; typed views are built on demand by View.
type Snapshot struct {
	Header  Header
	objects []*unstructured.Unstructured
	// byKind indexes objects by "group/kind" (the order of objects kept).
	byKind map[string][]*unstructured.Unstructured

	// tc holds the typed forms, shared with the snapshots ByNamespace
	// splits this one into.
	tc *typedCache

	// now is the "now" of input without a header (see Now), computed once:
	// per view it made lint quadratic in the Rollouts of one namespace.
	nowOnce sync.Once
	now     time.Time

	idxOnce sync.Once
	index   *index
}

// typedCache holds the typed forms of a snapshot's objects.
type typedCache struct {
	// typed caches the typed form of objects that many workloads of one
	// snapshot read (Services, EndpointSlices, Nodes…): lint and scan build
	// a view per Rollout, and converting the same Service once per Rollout
	// made lint quadratic in a namespace. Values are shared and read-only.
	mu    sync.Mutex
	typed map[*unstructured.Unstructured]interface{}
	// stubs are the objects held as metadata only, their body in typed
	// (see Decoded). Set by NewTyped, read-only afterwards.
	stubs map[*unstructured.Unstructured]bool
}

// Now is the instant the analysis treats as "now": when the snapshot was
// taken, or, for input without a header, the newest timestamp any object
// carries, so that the same file always gives the same report.
func (s *Snapshot) Now() time.Time {
	if !s.Header.TakenAt.IsZero() {
		return s.Header.TakenAt
	}
	s.nowOnce.Do(func() { s.now = latestTimestamp(s) })
	return s.now
}

// typedOf converts u once per snapshot and returns the shared typed copy.
func typedOf[T any](s *Snapshot, u *unstructured.Unstructured) (*T, error) {
	c := s.tc
	c.mu.Lock()
	if v, ok := c.typed[u]; ok {
		c.mu.Unlock()
		return v.(*T), nil
	}
	c.mu.Unlock()
	t := new(T)
	if err := convert(u, t); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.typed[u]; ok {
		return v.(*T), nil // converted meanwhile by another diagnosis: every caller gets the one kept
	}
	if c.typed == nil {
		c.typed = map[*unstructured.Unstructured]interface{}{}
	}
	c.typed[u] = t
	return t, nil
}

// New builds a snapshot of objs, sorted so that the same objects always give
// the same snapshot, whatever order they were read in. The snapshot takes
// ownership of the objects (every caller hands over what it just read or
// decoded): the caller must not change them afterwards. Copying them cost as
// much as a third of a 2,000-pod diagnose.
func New(h Header, objs []*unstructured.Unstructured) *Snapshot {
	return NewTyped(h, objs, nil)
}

// Decoded is the typed form of an object that a reader decoded straight into
// it (gather reads pods as protobuf into structs).
type Decoded struct {
	// Obj points to the typed object (a *corev1.Pod).
	Obj interface{}
	// Stub is set when the unstructured object holds only apiVersion, kind
	// and metadata — what the snapshot's index reads. The whole object is
	// derived from Obj only when it is needed (Objects, Write, an input's
	// newest timestamp): for a diagnose of 2,000 pods, converting every pod
	// back into a map was 40% of the CPU, for a form it never read.
	Stub bool
}

// NewTyped is New for a reader that also holds the typed form of some of the
// objects: typed maps such an object to it, and views use it instead of
// converting the object. The typed values are owned by the snapshot too.
func NewTyped(h Header, objs []*unstructured.Unstructured, typed map[*unstructured.Unstructured]Decoded) *Snapshot {
	// Keys computed once: the sort compares each object about log n times.
	type keyed struct {
		key string
		o   *unstructured.Unstructured
	}
	ks := make([]keyed, 0, len(objs))
	seen := make(map[string]bool, len(objs))
	for _, o := range objs {
		if o == nil {
			continue
		}
		k := objKey(o)
		if seen[k] {
			continue
		}
		seen[k] = true
		ks = append(ks, keyed{k, o})
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i].key < ks[j].key }) // keys are unique
	cp := make([]*unstructured.Unstructured, len(ks))
	for i := range ks {
		cp[i] = ks[i].o
	}
	gaps := append([]Gap(nil), h.Gaps...)
	sort.SliceStable(gaps, func(i, j int) bool { return gaps[i].String() < gaps[j].String() })
	h.Gaps = gaps
	c := &typedCache{}
	if len(typed) > 0 {
		c.typed = make(map[*unstructured.Unstructured]interface{}, len(typed))
		for u, d := range typed {
			c.typed[u] = d.Obj
			if d.Stub {
				if c.stubs == nil {
					c.stubs = map[*unstructured.Unstructured]bool{}
				}
				c.stubs[u] = true
			}
		}
	}
	return &Snapshot{Header: h, objects: cp, byKind: byKindOf(cp), tc: c}
}

// byKindOf indexes objs by "group/kind", keeping their order.
func byKindOf(objs []*unstructured.Unstructured) map[string][]*unstructured.Unstructured {
	idx := map[string][]*unstructured.Unstructured{}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		idx[gvk.Group+"/"+gvk.Kind] = append(idx[gvk.Group+"/"+gvk.Kind], o)
	}
	return idx
}

// full is the whole object: o itself, or for a stub, o derived from its
// typed form (a fresh map each time).
func (s *Snapshot) full(o *unstructured.Unstructured) *unstructured.Unstructured {
	if !s.tc.stubs[o] {
		return o
	}
	s.tc.mu.Lock()
	t := s.tc.typed[o]
	s.tc.mu.Unlock()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(t)
	if err != nil {
		return o // cannot happen for a typed API object; the metadata is still there
	}
	m["apiVersion"], m["kind"] = o.GetAPIVersion(), o.GetKind()
	return &unstructured.Unstructured{Object: m}
}

func objKey(o *unstructured.Unstructured) string {
	gvk := o.GroupVersionKind()
	return gvk.Group + "/" + gvk.Kind + "/" + o.GetNamespace() + "/" + o.GetName()
}

// Objects returns copies of all objects, in a stable order.
func (s *Snapshot) Objects() []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(s.objects))
	for i, o := range s.objects {
		if s.tc.stubs[o] {
			out[i] = s.full(o) // already a fresh copy
		} else {
			out[i] = o.DeepCopy()
		}
	}
	return out
}

// ObjectsOf returns copies of the objects whose group and kind keep
// accepts, in a stable order. The others are never copied: a recorder
// taking a 2,000-pod snapshot's static context copies no pod.
func (s *Snapshot) ObjectsOf(keep func(group, kind string) bool) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range s.objects {
		gvk := o.GroupVersionKind()
		if !keep(gvk.Group, gvk.Kind) {
			continue
		}
		if s.tc.stubs[o] {
			out = append(out, s.full(o))
		} else {
			out = append(out, o.DeepCopy())
		}
	}
	return out
}

// Len is the number of objects.
func (s *Snapshot) Len() int { return len(s.objects) }

// byGroupKind returns the objects of one group/kind (shared, not copied: callers
// in this package convert them into typed copies).
func (s *Snapshot) byGroupKind(group, kind string) []*unstructured.Unstructured {
	return s.byKind[group+"/"+kind]
}

// HasGap reports whether reading the given resource (plural.group) failed.
func (s *Snapshot) HasGap(resource string) (Gap, bool) {
	for _, g := range s.Header.Gaps {
		if g.Resource == resource {
			return g, true
		}
	}
	return Gap{}, false
}

// WriteJSON prints the snapshot as a v1 List in JSON, the format `kubectl
// get -o json` uses, with the header as the first item.
func (s *Snapshot) WriteJSON(w io.Writer) error {
	list, err := s.list()
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return fmt.Errorf("encode snapshot: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// Write prints the snapshot as a v1 List in YAML, the format `kubectl get -o
// yaml` uses, with the header as the first item.
func (s *Snapshot) Write(w io.Writer) error {
	list, err := s.list()
	if err != nil {
		return err
	}
	b, err := yaml.Marshal(list)
	if err != nil {
		return fmt.Errorf("encode snapshot: %w", err)
	}
	_, err = w.Write(b)
	return err
}

// list is the snapshot as a v1 List, the header first.
func (s *Snapshot) list() (map[string]interface{}, error) {
	items := make([]interface{}, 0, len(s.objects)+1)
	hdr := map[string]interface{}{
		"apiVersion": HeaderAPIVersion,
		"kind":       HeaderKind,
		"metadata":   map[string]interface{}{"name": "snapshot"},
	}
	spec, err := toMap(s.Header)
	if err != nil {
		return nil, err
	}
	hdr["spec"] = spec
	items = append(items, hdr)
	for _, o := range s.objects {
		items = append(items, s.full(o).Object)
	}
	return map[string]interface{}{
		"apiVersion": "v1",
		"kind":       "List",
		"metadata":   map[string]interface{}{"resourceVersion": ""},
		"items":      items,
	}, nil
}

func toMap(v interface{}) (map[string]interface{}, error) {
	b, err := yaml.Marshal(v)
	if err != nil {
		return nil, err
	}
	m := map[string]interface{}{}
	if err := yaml.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// Source is one input document's origin, for error messages and for lint's
// file:line locations.
type Source struct {
	File string // "-" for stdin
	Line int    // 1-based line of the document start
}

// Located is an object with where it came from.
type Located struct {
	Object *unstructured.Unstructured
	Source Source

	// typed is the struct Read decoded the object into (Object is then its
	// metadata stub); nil for everything Decode returns.
	typed interface{}
}

// ParseError is a malformed input document. Parsing stops at the first one in
// a file, since a YAML stream cannot be resynchronised reliably after it.
type ParseError struct {
	File string
	Line int
	Err  error
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.File, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// Decode reads multi-document YAML or JSON: single objects, v1 Lists (any kind
// ending in "List" with items) and rolloutdoctor's header item. It returns the
// objects with their sources and the header if one was present.
func Decode(name string, r io.Reader) ([]Located, *Header, error) {
	return decode(name, r, false)
}

// decode is Decode; typed decodes a List's pods into structs (see
// decodeTypedItem).
func decode(name string, r io.Reader, typed bool) ([]Located, *Header, error) {
	data, err := readAll(name, r)
	if err != nil {
		return nil, nil, err
	}
	return decodeData(name, data, typed)
}

// readAll reads a whole input, refusing one beyond maxInput.
func readAll(name string, r io.Reader) ([]byte, error) {
	data, err := readInput(r)
	if err != nil {
		return nil, &ParseError{File: name, Err: err}
	}
	if len(data) > maxInput {
		return nil, &ParseError{File: name, Err: fmt.Errorf("input is larger than %d MiB: split it (a snapshot of one Rollout is a few MB)", maxInput>>20)}
	}
	return data, nil
}

// decodeData is decode of input already read.
func decodeData(name string, data []byte, typed bool) ([]Located, *Header, error) {
	docs := splitDocuments(data)
	decoded := make([]decodedDoc, len(docs))
	for i, d := range docs {
		rest, items, ok := splitList(d)
		isJSON := false
		if !ok {
			rest, items, ok = splitJSONList(d)
			isJSON = ok
		}
		if ok {
			decoded[i] = decodeList(name, d, rest, items, typed, isJSON)
			docs[i] = document{} // done
		}
	}
	par.Do(len(docs), func(i int) {
		if docs[i].body != nil {
			decoded[i] = decodeDocument(name, docs[i])
		}
	})
	var out []Located
	var hdr *Header
	for _, d := range decoded {
		if d.err != nil {
			return out, hdr, d.err
		}
		if d.obj == nil {
			continue
		}
		if err := collect(name, d.line, d.lines, d.typed, d.obj, &out, &hdr); err != nil {
			return out, hdr, err
		}
	}
	return out, hdr, nil
}

// readInput reads all of r, up to one byte more than maxInput. A regular
// file is read into a buffer of its size: growing one step by step to the
// 12 MB of a 2,000-pod snapshot was a tenth of a `diagnose -f`.
func readInput(r io.Reader) ([]byte, error) {
	limited := io.LimitReader(r, int64(maxInput)+1)
	if f, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() <= int64(maxInput) {
			buf := bytes.NewBuffer(make([]byte, 0, st.Size()+bytes.MinRead))
			_, err := buf.ReadFrom(limited)
			return buf.Bytes(), err
		}
	}
	return io.ReadAll(limited)
}

// decodeList decodes a List whose items splitList cut apart: each item on
// its own, in parallel, then the List around them.
func decodeList(name string, whole, rest document, items []document, typed, isJSON bool) decodedDoc {
	d := decodeDocument(name, rest)
	if d.err != nil {
		return decodedDoc{err: d.err}
	}
	if kind, _ := d.obj["kind"].(string); !strings.HasSuffix(kind, "List") {
		// Not a List (collect reads items only of a kind ending in List):
		// decoded whole, its items are whatever that kind says they are.
		return decodeDocument(name, whole)
	}
	parts := make([]decodedDoc, len(items))
	var structs []interface{}
	if typed {
		structs = make([]interface{}, len(items))
	}
	var invalid atomic.Bool
	par.Do(len(items), func(i int) {
		if typed {
			if stub, obj, ok := decodeTypedItem(items[i].body); ok {
				parts[i] = decodedDoc{obj: stub}
				structs[i] = obj
				return
			}
		}
		// splitJSONList does not validate an item, and the item's own
		// decoder would read some invalid JSON as YAML, as the whole
		// document's would not.
		if isJSON && !json.Valid(items[i].body) {
			invalid.Store(true)
			return
		}
		parts[i] = decodeDocument(name, items[i])
	})
	if invalid.Load() {
		return decodeDocument(name, whole)
	}
	d.typed = structs
	list := make([]interface{}, 0, len(items))
	d.lines = make([]int, 0, len(items))
	for i, p := range parts {
		if p.err != nil {
			return decodedDoc{err: p.err}
		}
		if p.obj == nil {
			return decodedDoc{err: &ParseError{File: name, Line: items[i].line, Err: fmt.Errorf("%s item %d is not an object", d.obj["kind"], i)}}
		}
		list = append(list, p.obj)
		d.lines = append(d.lines, items[i].line)
	}
	d.obj["items"] = list
	return d
}

// decodedDoc is one document of a stream, decoded.
type decodedDoc struct {
	obj   map[string]interface{} // nil: nothing in it
	line  int                    // where its content starts
	lines []int                  // a List's items' lines
	typed []interface{}          // a List's items' structs, where decoded into one
	err   error
}

// decodeDocument decodes one document of a stream. Documents are decoded
// independently (and in parallel: YAML parsing is most of lint's time).
func decodeDocument(name string, doc document) decodedDoc {
	// JSON has no comments: stripping them from each of a JSON List's
	// items was a sixth of a `diagnose -f`.
	if t := bytes.TrimLeft(doc.body, " \t\r\n"); (len(t) == 0 || t[0] != '{') && len(bytes.TrimSpace(stripComments(doc.body))) == 0 {
		return decodedDoc{}
	}
	if err := checkAliases(doc.body); err != nil {
		return decodedDoc{err: &ParseError{File: name, Line: doc.line, Err: err}}
	}
	var v interface{}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(doc.body), 4096)
	if err := dec.Decode(&v); err != nil {
		return decodedDoc{err: &ParseError{File: name, Line: doc.line + yamlErrLine(err) - 1, Err: cleanYAMLErr(err)}}
	}
	obj, ok := v.(map[string]interface{})
	if !ok {
		if v == nil {
			return decodedDoc{}
		}
		return decodedDoc{err: &ParseError{File: name, Line: doc.line + leadingNoise(doc.body), Err: fmt.Errorf("the document is %s, not a Kubernetes object (a mapping with apiVersion and kind)", shapeOf(v))}}
	}
	if len(obj) == 0 {
		return decodedDoc{}
	}
	d := decodedDoc{obj: obj, line: doc.line + leadingNoise(doc.body)}
	if _, ok := obj["items"]; ok {
		d.lines = itemLines(doc.body, doc.line)
	}
	return d
}

// itemLines finds the line of each item of a List document, so that an
// object inside `kubectl get -o yaml` output is located at its own line.
// It returns nil when the document is not a YAML mapping with items.
func itemLines(body []byte, first int) []int {
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		return jsonItemLines(body, first)
	}
	var n yamlv3.Node
	if err := yamlv3.Unmarshal(body, &n); err != nil || len(n.Content) == 0 || n.Content[0].Kind != yamlv3.MappingNode {
		return nil
	}
	m := n.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "items" && m.Content[i+1].Kind == yamlv3.SequenceNode {
			var out []int
			for _, it := range m.Content[i+1].Content {
				out = append(out, first+it.Line-1)
			}
			return out
		}
	}
	return nil
}

// jsonItemLines is itemLines for a JSON document (`kubectl get -o json`, a
// JSON snapshot): one pass of the JSON tokenizer, about a tenth of what
// building a YAML node tree of the same document costs.
func jsonItemLines(body []byte, first int) []int {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	// line counts the newlines before an offset, incrementally: offsets
	// only grow.
	line, seen := first, 0
	lineAt := func(off int) int {
		line += bytes.Count(body[seen:off], []byte{'\n'})
		seen = off
		return line
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		if key != "items" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return nil
		}
		var out []int
		for dec.More() {
			// The item starts at the first non-space byte after the offset.
			off := int(dec.InputOffset())
			for off < len(body) && (body[off] == ' ' || body[off] == '\t' || body[off] == '\r' || body[off] == '\n' || body[off] == ',') {
				off++
			}
			out = append(out, lineAt(off))
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil
			}
		}
		return out
	}
	return nil
}

func collect(name string, line int, lines []int, typed []interface{}, obj map[string]interface{}, out *[]Located, hdr **Header) error {
	u := &unstructured.Unstructured{Object: obj}
	apiVersion, kind := u.GetAPIVersion(), u.GetKind()
	if apiVersion == HeaderAPIVersion && kind == HeaderKind {
		h, err := headerFrom(obj)
		if err != nil {
			return &ParseError{File: name, Line: line, Err: fmt.Errorf("snapshot header: %w", err)}
		}
		*hdr = h
		return nil
	}
	if items, ok := obj["items"].([]interface{}); ok && strings.HasSuffix(kind, "List") {
		for i, it := range items {
			m, ok := it.(map[string]interface{})
			if !ok {
				return &ParseError{File: name, Line: line, Err: fmt.Errorf("%s item %d is not an object", kind, i)}
			}
			at := line
			if i < len(lines) {
				at = lines[i]
			}
			if i < len(typed) && typed[i] != nil {
				*out = append(*out, Located{Object: &unstructured.Unstructured{Object: m}, Source: Source{File: name, Line: at}, typed: typed[i]})
				continue
			}
			if err := collect(name, at, nil, nil, m, out, hdr); err != nil {
				return err
			}
		}
		return nil
	}
	if kind == "" || apiVersion == "" {
		return &ParseError{File: name, Line: line, Err: errors.New("object has no apiVersion or kind (is this a Kubernetes manifest?)")}
	}
	if _, err := schema.ParseGroupVersion(apiVersion); err != nil {
		return &ParseError{File: name, Line: line, Err: fmt.Errorf("bad apiVersion %q", apiVersion)}
	}
	*out = append(*out, Located{Object: u, Source: Source{File: name, Line: line}})
	return nil
}

func headerFrom(obj map[string]interface{}) (*Header, error) {
	spec, _ := obj["spec"].(map[string]interface{})
	b, err := yaml.Marshal(spec)
	if err != nil {
		return nil, err
	}
	h := &Header{}
	if err := yaml.Unmarshal(b, h); err != nil {
		return nil, err
	}
	return h, nil
}

type document struct {
	body []byte
	line int // 1-based line where the document's content starts
}

// MaxInputBytes bounds one input (a file or stdin): everything is held in
// memory, and no snapshot or rendered chart comes near it.
const MaxInputBytes = 1 << 30

// maxInput is MaxInputBytes; tests lower it.
var maxInput = MaxInputBytes

// splitDocuments splits a YAML stream on "---" lines, remembering where each
// document starts so errors and lint findings can point at file:line. Lines
// have no length limit (a one-line JSON List of any size is one line).
func splitDocuments(data []byte) []document {
	var docs []document
	docStart, start, n := 0, 1, 0
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
		line := bytes.TrimSuffix(data[pos:end], []byte("\r"))
		if bytes.HasPrefix(line, []byte("---")) && len(bytes.TrimSpace(bytes.TrimLeft(line, "-"))) == 0 {
			docs = append(docs, document{body: data[docStart:pos], line: start})
			docStart, start = next, n+1
		}
		pos = next
	}
	docs = append(docs, document{body: data[docStart:], line: start})
	return docs
}

// shapeOf names a decoded YAML value's shape for an error message.
func shapeOf(v interface{}) string {
	switch v.(type) {
	case []interface{}:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, int64, int:
		return "a number"
	}
	return fmt.Sprintf("a %T", v)
}

// leadingNoise counts the blank and comment lines before a document's first
// content line (helm template puts "# Source: …" there), so an object is
// located at its own first line.
func leadingNoise(body []byte) int {
	n := 0
	for _, l := range bytes.Split(body, []byte("\n")) {
		t := bytes.TrimSpace(l)
		if len(t) != 0 && t[0] != '#' {
			return n
		}
		n++
	}
	return 0
}

func stripComments(b []byte) []byte {
	var out bytes.Buffer
	for _, l := range bytes.Split(b, []byte("\n")) {
		t := bytes.TrimSpace(l)
		if len(t) == 0 || t[0] == '#' {
			continue
		}
		out.Write(l)
		out.WriteByte('\n')
	}
	return out.Bytes()
}

// yamlErrLine extracts "line N" from a YAML error, 1 if none.
func yamlErrLine(err error) int {
	var n int
	s := err.Error()
	if i := strings.Index(s, "line "); i >= 0 {
		if _, e := fmt.Sscanf(s[i:], "line %d", &n); e == nil && n > 0 {
			return n
		}
	}
	return 1
}

func cleanYAMLErr(err error) error {
	s := err.Error()
	s = strings.TrimPrefix(s, "error converting YAML to JSON: ")
	if i := strings.Index(s, "line "); i >= 0 {
		if j := strings.Index(s[i:], ": "); j >= 0 {
			s = s[:i] + s[i+j+2:]
		}
	}
	s = strings.TrimPrefix(strings.TrimSpace(s), "yaml: ")
	return errors.New(strings.TrimSpace(s))
}

// Read decodes a file (see Decode) into a snapshot. Without a header item
// the snapshot is marked offline: it is `kubectl get -o yaml` output, not a
// rolloutdoctor snapshot. A record file (see ReadRecording) reads as its
// state at the end of the record.
func Read(name string, r io.Reader) (*Snapshot, error) {
	rec, snap, err := ReadAny(name, r)
	if err != nil || rec == nil {
		return snap, err
	}
	return rec.Final()
}

// ReadAny reads an input that may be a record: a record file is returned
// as a Recording (snap nil), anything else as Read returns it (rec nil).
func ReadAny(name string, r io.Reader) (rec *Recording, snap *Snapshot, err error) {
	data, err := readAll(name, r)
	if err != nil {
		return nil, nil, err
	}
	if isRecording(data) {
		rec, err := parseRecording(name, data)
		return rec, nil, err
	}
	snap, err = readSnapshot(name, data)
	return nil, snap, err
}

func readSnapshot(name string, data []byte) (*Snapshot, error) {
	located, hdr, err := decodeData(name, data, true)
	if err != nil {
		return nil, err
	}
	objs := make([]*unstructured.Unstructured, 0, len(located))
	var typed map[*unstructured.Unstructured]Decoded
	for _, l := range located {
		objs = append(objs, l.Object)
		if l.typed != nil {
			if typed == nil {
				typed = map[*unstructured.Unstructured]Decoded{}
			}
			typed[l.Object] = Decoded{Obj: l.typed, Stub: true}
		}
	}
	h := Header{Offline: true}
	if hdr != nil {
		h = *hdr
	}
	return NewTyped(h, objs, typed), nil
}

// ByNamespace splits the snapshot into one snapshot per namespace, in
// namespace order, each with that namespace's objects and every object
// shared accepts (the controller Deployments a fleet scan reads
// cluster-wide). The objects and their typed forms are shared, not copied:
// snapshots are immutable, and copying a fleet of 1,000 Rollouts cost a
// scan more than reading it. They share one typed cache too, so that
// what every namespace reads (the controller Deployments) is converted once.
func (s *Snapshot) ByNamespace(shared func(*unstructured.Unstructured) bool) []*Snapshot {
	// Positions in s.objects, which is in key order: merging a namespace's
	// positions with the shared ones keeps each part in key order without
	// sorting it again.
	var common []int
	byNS := map[string][]int{}
	for i, o := range s.objects {
		if shared != nil && shared(o) {
			common = append(common, i)
			continue
		}
		byNS[o.GetNamespace()] = append(byNS[o.GetNamespace()], i)
	}
	nss := make([]string, 0, len(byNS))
	for n := range byNS {
		nss = append(nss, n)
	}
	sort.Strings(nss)
	out := make([]*Snapshot, 0, len(nss))
	for _, n := range nss {
		own := byNS[n]
		objs := make([]*unstructured.Unstructured, 0, len(own)+len(common))
		i, j := 0, 0
		for i < len(own) || j < len(common) {
			if j == len(common) || (i < len(own) && own[i] < common[j]) {
				objs = append(objs, s.objects[own[i]])
				i++
			} else {
				objs = append(objs, s.objects[common[j]])
				j++
			}
		}
		out = append(out, &Snapshot{Header: s.Header, objects: objs, byKind: byKindOf(objs), tc: s.tc})
	}
	return out
}
