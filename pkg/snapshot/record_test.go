package snapshot

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

var recStart = time.Date(2026, 8, 11, 3, 12, 0, 0, time.UTC)

func obj(apiVersion, kind, name, rv string, fields map[string]interface{}) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]interface{}{"name": name, "namespace": "shop", "resourceVersion": rv}}}
	for k, v := range fields {
		u.Object[k] = v
	}
	return u
}

func rsObj(name, rv string, replicas, available int64) *unstructured.Unstructured {
	return obj("apps/v1", "ReplicaSet", name, rv, map[string]interface{}{
		"spec": map[string]interface{}{"replicas": replicas}, "status": map[string]interface{}{"availableReplicas": available}})
}

func vsObj(rv string, canary int64) *unstructured.Unstructured {
	return obj("networking.istio.io/v1beta1", "VirtualService", "app", rv, map[string]interface{}{
		"spec": map[string]interface{}{"canaryWeight": canary}})
}

// recordOf writes a record: the changes in the order given, each at its
// offset in seconds from recStart.
type timed struct {
	sec float64
	c   Change
}

func writeRecord(t *testing.T, changes []timed) []byte {
	t.Helper()
	var b bytes.Buffer
	rw, err := NewRecordWriter(&b, Header{TargetKind: "Rollout", TargetNamespace: "shop", TargetName: "app", TakenAt: recStart})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range changes {
		tc.c.ReceivedAt = recStart.Add(time.Duration(tc.sec * float64(time.Second)))
		if err := rw.Write(tc.c); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

func change(t ChangeType, u *unstructured.Unstructured) Change {
	raw, err := u.MarshalJSON()
	if err != nil {
		panic(err)
	}
	return Change{Type: t, Resource: strings.ToLower(u.GetKind()) + "s", Object: raw}
}

func readRec(t *testing.T, data []byte) *Recording {
	t.Helper()
	rec, err := ReadRecording("rec.json", bytes.NewReader(data))
	if err != nil {
		t.Fatalf("ReadRecording: %v", err)
	}
	return rec
}

func intField(t *testing.T, s *Snapshot, kind, name string, path ...string) int64 {
	t.Helper()
	for _, o := range s.Objects() {
		if o.GetKind() == kind && o.GetName() == name {
			v, _, _ := unstructured.NestedInt64(o.Object, path...)
			return v
		}
	}
	t.Fatalf("%s %s not in the snapshot", kind, name)
	return 0
}

// The VirtualService write that follows a ReplicaSet's status update can
// arrive first on its own watch stream: the replay follows the etcd
// revisions, so the state never pairs the new weight with the old
// availability, and the replay time never goes back.
func TestRecordReplaysInRevisionOrder(t *testing.T) {
	data := writeRecord(t, []timed{
		{0, change(ChangeListed, rsObj("app-a", "10", 20, 20))},
		{0, change(ChangeListed, vsObj("11", 0))},
		{2.0, change(ChangeModified, vsObj("21", 100))},            // written after the RS update below
		{2.1, change(ChangeModified, rsObj("app-a", "20", 20, 2))}, // arrives later on its stream
		{3.0, change(ChangeModified, rsObj("app-a", "22", 20, 5))},
	})
	rec := readRec(t, data)
	if !rec.RVOrder {
		t.Fatal("numeric resourceVersions not replayed in their order")
	}
	var seen []string
	var prev time.Time
	err := rec.Replay(func(string, string) bool { return true }, func(s ReplayStep, st *ReplayState) error {
		seen = append(seen, s.ResourceVersion)
		if s.At.Before(prev) {
			t.Errorf("replay time went back at %s: %s < %s", s.ResourceVersion, s.At, prev)
		}
		prev = s.At
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(seen, ","); got != "10,11,20,21,22" {
		t.Errorf("replay order %s, want 10,11,20,21,22", got)
	}
	// At 2.05 s only the VS write had arrived, but it was written after
	// the RS update that arrived at 2.1 s: neither is in the state yet.
	s, err := rec.At(recStart.Add(2050 * time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if w := intField(t, s, "VirtualService", "app", "spec", "canaryWeight"); w != 0 {
		t.Errorf("at 2.05 s the weight is %d, want 0 (the write before it had not arrived)", w)
	}
	s, _ = rec.At(recStart.Add(2100 * time.Millisecond))
	if w, a := intField(t, s, "VirtualService", "app", "spec", "canaryWeight"), intField(t, s, "ReplicaSet", "app-a", "status", "availableReplicas"); w != 100 || a != 2 {
		t.Errorf("at 2.1 s: weight %d on %d available, want 100 on 2", w, a)
	}
	if !s.Now().Equal(recStart.Add(2100 * time.Millisecond)) {
		t.Errorf("the state at 2.1 s is analysed as of %s", s.Now())
	}
	// Read gives the end of the record.
	final, err := Read("rec.json", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if a := intField(t, final, "ReplicaSet", "app-a", "status", "availableReplicas"); a != 5 || final.Header.Offline {
		t.Errorf("Read: availability %d (offline %v), want the record's last state 5", a, final.Header.Offline)
	}
	if _, err := rec.At(recStart.Add(-time.Second)); !errors.Is(err, ErrBeforeStart) {
		t.Errorf("a time before the start: %v", err)
	}
}

// A watch that expired and was re-listed: the gap is in the record, a
// deletion the lost watch would have delivered comes from the re-list, and
// a state inside the gap says that its pods may be stale.
func TestRecordGapAfterDroppedWatch(t *testing.T) {
	since := recStart.Add(5 * time.Second)
	pod := func(name, rv string) *unstructured.Unstructured { return obj("v1", "Pod", name, rv, nil) }
	data := writeRecord(t, []timed{
		{0, change(ChangeListed, pod("p1", "10"))},
		{0, change(ChangeListed, pod("p2", "11"))},
		{5, change(ChangeModified, pod("p1", "30"))},
		{20, Change{Type: ChangeGap, Resource: "pods", ResourceVersion: "90", Since: &since, Reason: "the watch expired (410 Gone): re-listed"}},
		{20, Change{Type: ChangeDeleted, Resource: "pods", ResourceVersion: "90", Ref: &ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: "shop", Name: "p2"}}},
		{20, change(ChangeListed, pod("p3", "70"))},
		{21, change(ChangeModified, pod("p3", "95"))},
		{22, Change{Type: ChangeEnd, Reason: "settled"}},
	})
	rec := readRec(t, data)
	if len(rec.Gaps) != 1 || rec.Gaps[0].Resource != "pods" || !rec.Gaps[0].From.Equal(since) || !rec.Gaps[0].To.Equal(recStart.Add(20*time.Second)) {
		t.Fatalf("gaps %+v", rec.Gaps)
	}
	if rec.Ended != "settled" {
		t.Errorf("ended %q", rec.Ended)
	}
	in, err := rec.At(recStart.Add(10 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := in.HasGap("pods"); !ok || !strings.Contains(g.Message, "may be stale") {
		t.Errorf("a state inside the gap does not say so: %+v", in.Header.Gaps)
	}
	after, _ := rec.Final()
	var names []string
	for _, o := range after.Objects() {
		names = append(names, o.GetName())
	}
	if got := strings.Join(names, ","); got != "p1,p3" {
		t.Errorf("after the re-list the pods are %s, want p1,p3 (p2 deleted during the gap)", got)
	}
	if _, ok := after.HasGap("pods"); ok {
		t.Errorf("the state after the re-list still reports the gap")
	}
}

// A recorder killed mid-write leaves its last line cut off: the record
// reads without it and says so. A broken line anywhere else is an error
// at its line.
func TestRecordCutOffAndBrokenLines(t *testing.T) {
	data := writeRecord(t, []timed{
		{0, change(ChangeListed, rsObj("app-a", "10", 20, 20))},
		{1, change(ChangeModified, rsObj("app-a", "11", 20, 19))},
	})
	cut := data[:len(data)-20]
	rec := readRec(t, cut)
	if !rec.CutOff || rec.Len() != 1 {
		t.Errorf("cut-off record: CutOff %v, %d changes; want true, 1", rec.CutOff, rec.Len())
	}
	lines := strings.SplitAfter(string(data), "\n")
	broken := lines[0] + lines[1][:30] + "\n" + lines[2]
	_, err := ReadRecording("rec.json", strings.NewReader(broken))
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 2 {
		t.Errorf("a broken line 2: %v", err)
	}
	for name, body := range map[string]string{
		"unknown type":  `{"type":"RENAMED","receivedAt":"2026-08-11T03:12:00Z"}`,
		"no object":     `{"type":"MODIFIED","receivedAt":"2026-08-11T03:12:00Z"}`,
		"no time":       `{"type":"END"}`,
		"nameless":      `{"type":"ADDED","receivedAt":"2026-08-11T03:12:00Z","object":{"apiVersion":"v1","kind":"Pod","metadata":{}}}`,
		"not an object": `[1,2]`,
	} {
		_, err := ReadRecording("rec.json", strings.NewReader(lines[0]+body+"\n"))
		if !errors.As(err, &pe) || pe.Line != 2 || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want a one-line error at line 2", name, err)
		}
	}
	if _, err := ReadRecording("x.yaml", strings.NewReader("apiVersion: v1\nkind: List\n")); err == nil || !strings.Contains(err.Error(), "not a record file") {
		t.Errorf("a snapshot read as a record: %v", err)
	}
}

// resourceVersions that are not integers (storage other than etcd) say
// nothing about order: the changes are replayed as they arrived.
func TestRecordOpaqueResourceVersions(t *testing.T) {
	data := writeRecord(t, []timed{
		{0, change(ChangeListed, rsObj("app-a", "b7", 20, 20))},
		{1, change(ChangeModified, rsObj("app-a", "a1", 20, 19))},
	})
	rec := readRec(t, data)
	final, _ := rec.Final()
	if rec.RVOrder || intField(t, final, "ReplicaSet", "app-a", "status", "availableReplicas") != 19 {
		t.Errorf("opaque resourceVersions: RVOrder %v; want arrival order", rec.RVOrder)
	}
}
