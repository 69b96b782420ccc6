package timeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// examples/incident-record.rec is a record of the seed-000 incident in the lab
// (test/lab), Argo Rollouts v1.8.2: a Rollout of 20 with rollbackWindow 3
// and steps [5, pause 10s, 100] went from revision A to B, and was then
// reverted to A with `kubectl patch --field-manager incident-responder`;
// the controller put 100% of the traffic on A's first pod. The pods' and
// EndpointSlices' changes are left out to keep the file small (a timeline
// does not replay them).
var incidentRec = exampletest.Path(exampletest.IncidentRecord)

// testdata/history.json is what gather.History read of the same Rollout
// minutes later: what the cluster still held.
const historySnap = "testdata/history.json"

const canaryA = "6dc7674474"

func readRecording(t testing.TB, data []byte) *snapshot.Recording {
	t.Helper()
	rec, err := snapshot.ReadRecording("incident.rec", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func incident(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile(incidentRec)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestRecordedIncident(t *testing.T) {
	tl, err := Record(readRecording(t, incident(t)), "", "", Options{Source: "record incident.rec"})
	if err != nil {
		t.Fatal(err)
	}
	if tl.Controller.Assumed != "v1.8.2" || tl.Resolution != FromRecord || tl.Name != "app" {
		t.Fatalf("controller %s, resolution %s, name %s", tl.Controller.Assumed, tl.Resolution, tl.Name)
	}
	// The worst moment: 100% on A's first available pod.
	w, ok := tl.Worst()
	if !ok {
		t.Fatal("no moment with the weight on too few pods")
	}
	c, _ := w.Count(canaryA)
	if *w.Weight != 100 || w.Canary != canaryA || c.Available != 1 || w.Needs != 20 || !hasID(w.Findings, "RD101") {
		t.Errorf("worst moment: weight %d on %s with %d available (needs %d), findings %v; want 100 on %s with 1 of 20, RD101",
			*w.Weight, w.Canary, c.Available, w.Needs, w.Findings, canaryA)
	}
	// RD101 lasts from that moment until A is full.
	var rd101 *FindingSpan
	for i := range tl.Findings {
		if tl.Findings[i].ID == "RD101" {
			rd101 = &tl.Findings[i]
		}
	}
	// It starts when the router sent 100% to A's one pod: with the status
	// (the worst moment, as the status tells it) or, when the
	// VirtualService was written first, at that write, moments before.
	if rd101 == nil || rd101.Severity != rules.Critical || rd101.From.After(w.At) || w.At.Sub(rd101.From) > time.Second || rd101.Open {
		t.Fatalf("RD101 span %+v, want from the worst moment %s (or the router's write just before it), closed", rd101, w.At)
	}
	full := false
	for _, p := range tl.Series {
		if c, _ := p.Count(canaryA); p.At.Equal(rd101.To) && c.Available == 20 {
			full = true
		}
	}
	if !full {
		t.Errorf("RD101 ends at %s, which is not the moment A had all 20 pods available", rd101.To)
	}
	if !strings.Contains(rd101.Message, "100% of traffic on 1 of 20 pods") {
		t.Errorf("RD101's message %q", rd101.Message)
	}
	// Who did what: the revert is the responder's, the rest the controller's.
	var revert, weight *Entry
	for i, e := range tl.Entries {
		switch {
		case e.Kind == KindSpec && strings.Contains(e.Message, "app:b → registry.example/app:a"):
			revert = &tl.Entries[i]
		case e.Object == "VirtualService shop/app" && e.Message == "canary weight 0% → 100%":
			weight = &tl.Entries[i]
		}
	}
	if revert == nil || revert.By == nil || revert.By.Manager != "incident-responder" || !revert.Human() {
		t.Errorf("the revert's entry %+v: want it by incident-responder, a person or tool", revert)
	}
	if weight == nil || weight.By == nil || weight.By.Kind != ActorController || !strings.HasPrefix(weight.By.Manager, "rollouts-controller") {
		t.Errorf("the weight change's entry %+v: want it by the controller", weight)
	}
	// The series is in etcd revision order, one point per change that
	// moved something a reader sees.
	var last int64
	for i, p := range tl.Series {
		rv, err := strconv.ParseInt(p.ResourceVersion, 10, 64)
		if err != nil || rv <= last {
			t.Fatalf("point %d: resourceVersion %q after %d", i, p.ResourceVersion, last)
		}
		last = rv
		if i > 0 && samePoint(tl.Series[i-1], p) {
			t.Errorf("point %d repeats the one before", i)
		}
	}
	// The Events stop before the revert: the controller's spam filter.
	for _, c := range tl.Complete {
		if c.What == "events before the record" && (len(c.Cites) == 0 || !strings.Contains(c.Note, "25 Events")) {
			t.Errorf("the Events' completeness note does not say why they stop: %+v", c)
		}
	}
}

func hasID(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// withGap derives a record whose ReplicaSets' watch was lost from one
// moment to another and re-listed, as the recorder writes it: the
// ReplicaSet changes received in between are dropped, then a gap since the
// loss, then each ReplicaSet as the re-list returned it (its state at the
// end of the stretch). It returns the re-listed resourceVersions.
func withGap(t testing.TB, data []byte, from, to time.Time) ([]byte, map[string]bool) {
	t.Helper()
	lines := bytes.SplitAfter(data, []byte("\n"))
	var out [][]byte
	lastRS := map[string][]byte{}
	relisted := map[string]bool{}
	inserted := false
	for i, l := range lines {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		if i == 0 {
			out = append(out, l)
			continue
		}
		var c snapshot.Change
		if err := json.Unmarshal(l, &c); err != nil {
			t.Fatal(err)
		}
		if !inserted && !c.ReceivedAt.Before(to) {
			since := from
			out = append(out, mustLine(t, snapshot.Change{Type: snapshot.ChangeGap, ReceivedAt: to, Resource: "replicasets.apps", ResourceVersion: "1250", Since: &since,
				Reason: "the watch could not be resumed (its resourceVersion was compacted): listed again; changes in between are not in the record"}))
			for _, obj := range lastRS {
				var m struct {
					Metadata struct{ ResourceVersion string } `json:"metadata"`
				}
				json.Unmarshal(obj, &m)
				relisted[m.Metadata.ResourceVersion] = true
				out = append(out, mustLine(t, snapshot.Change{Type: snapshot.ChangeListed, ReceivedAt: to, Resource: "replicasets.apps", Object: obj}))
			}
			inserted = true
		}
		if c.Resource == "replicasets.apps" && !c.ReceivedAt.Before(from) && c.ReceivedAt.Before(to) {
			var m struct {
				Metadata struct{ Name string } `json:"metadata"`
			}
			json.Unmarshal(c.Object, &m)
			lastRS[m.Metadata.Name] = c.Object
			continue
		}
		out = append(out, l)
	}
	return bytes.Join(out, nil), relisted
}

func mustLine(t testing.TB, c snapshot.Change) []byte {
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// A gap after a dropped watch: the timeline says which stretch it lost,
// draws none of the ReplicaSet changes it lost — only the state the
// re-list returned, at the revision it was written (its resourceVersion) —
// and a moment replayed inside it says its ReplicaSets may be stale.
func TestRecordedGapAfterDroppedWatch(t *testing.T) {
	from := time.Date(2026, 11, 30, 23, 19, 49, 0, time.UTC)
	to := time.Date(2026, 11, 30, 23, 19, 51, 0, time.UTC)
	data, relisted := withGap(t, incident(t), from, to)
	rec := readRecording(t, data)
	tl, err := Record(rec, "", "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.Gaps) != 1 || tl.Gaps[0].Resource != "replicasets.apps" || !tl.Gaps[0].From.Equal(from) || !tl.Gaps[0].To.Equal(to) {
		t.Fatalf("gaps %+v", tl.Gaps)
	}
	gapEntry := false
	for _, e := range tl.Entries {
		gapEntry = gapEntry || e.Kind == KindGap && e.Object == "replicasets.apps" && e.At.Equal(from)
	}
	if !gapEntry {
		t.Errorf("no entry for the gap")
	}
	var before, after Point
	for _, p := range tl.Series {
		if strings.HasPrefix(p.Cause, "ReplicaSet ") && !p.At.Before(from) && p.At.Before(to) && !relisted[p.ResourceVersion] {
			t.Errorf("a ReplicaSet change the gap lost is drawn at %s (resourceVersion %s)", p.At, p.ResourceVersion)
		}
		if p.At.Before(from) {
			before = p
		}
		if after.At.IsZero() && !p.At.Before(to) {
			after = p
		}
	}
	b, _ := before.Count(canaryA)
	a, _ := after.Count(canaryA)
	if a.Available <= b.Available {
		t.Errorf("A had %d available before the gap and %d after it: the re-list's state is missing", b.Available, a.Available)
	}
	in, err := rec.At(from.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := in.HasGap("replicasets.apps"); !ok || !strings.Contains(g.Message, "may be stale") {
		t.Errorf("a moment inside the gap does not say so: %+v", in.Header.Gaps)
	}
	if c := tl.Complete[0]; !strings.Contains(c.Note, "except the gaps: replicasets.apps") {
		t.Errorf("completeness does not name the gap: %s", c.Note)
	}
}

// A record whose recorder was killed mid-line, or is still running.
func TestRecordCutOffStillTells(t *testing.T) {
	data := incident(t)
	cut := data[:len(data)-40]
	tl, err := Record(readRecording(t, cut), "", "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tl.Complete[0].Note, "cut off") || !strings.Contains(tl.Complete[0].Note, "no end line") {
		t.Errorf("completeness: %s", tl.Complete[0].Note)
	}
	if _, ok := tl.Worst(); !ok {
		t.Errorf("the incident is lost with the last line")
	}
	if _, err := Record(readRecording(t, cut), "shop", "other", Options{}); err == nil || !strings.Contains(err.Error(), `"other" is not in the record`) {
		t.Errorf("a Rollout the record does not hold: %v", err)
	}
}

// What the cluster held minutes after the incident: the ReplicaSets'
// creations, conditions, Events up to the revert (the controller wrote
// none after, its spam filter), each manager's last write, and the state
// now.
func TestClusterHistory(t *testing.T) {
	f, err := os.Open(historySnap)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	snap, err := snapshot.Read(historySnap, f)
	if err != nil {
		t.Fatal(err)
	}
	tl, err := Cluster(snap, "shop", "app", Options{Source: "cluster lab"})
	if err != nil {
		t.Fatal(err)
	}
	if tl.Resolution != FromCluster || len(tl.ReplicaSets) != 2 {
		t.Fatalf("resolution %s, %d ReplicaSets", tl.Resolution, len(tl.ReplicaSets))
	}
	now := tl.Series[len(tl.Series)-1]
	if now.SizesOnly || now.Cause != "now" || *now.Weight != 0 {
		t.Errorf("the last point is not the state now: %+v", now)
	}
	// The Events' series: the weights the controller announced.
	var weights []string
	for _, p := range tl.Series[:len(tl.Series)-1] {
		if !p.SizesOnly {
			t.Errorf("a point before now claims availability: %+v", p)
		}
		if p.Weight != nil && (len(weights) == 0 || weights[len(weights)-1] != fmt.Sprint(*p.Weight)) {
			weights = append(weights, fmt.Sprint(*p.Weight))
		}
	}
	if got := strings.Join(weights, " → "); got != "0 → 5 → 100" {
		t.Errorf("weights from the Events %s, want 0 → 5 → 100 (B's rollout; none after)", got)
	}
	var responder bool
	for _, e := range tl.Entries {
		responder = responder || e.Kind == KindWrite && e.By != nil && e.By.Manager == "incident-responder" && strings.Contains(e.Message, "spec.template")
	}
	if !responder {
		t.Errorf("the responder's last write of the template is not an entry")
	}
	kinds := map[string]bool{}
	for _, c := range tl.Complete {
		kinds[c.What] = true
	}
	for _, k := range []string{"events", "revisions", "conditions", "who acted", "availability"} {
		if !kinds[k] {
			t.Errorf("no completeness note for %s", k)
		}
	}
}

// Who changed an object, from its managedFields before and after.
func TestAuthor(t *testing.T) {
	at := func(sec int) *metav1.Time {
		t := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, sec, 0, time.UTC))
		return &t
	}
	fields := func(js string) *metav1.FieldsV1 { return &metav1.FieldsV1{Raw: []byte(js)} }
	obj := func(image string, abort bool, mf ...metav1.ManagedFieldsEntry) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
			"metadata": map[string]interface{}{"name": "app"},
			"spec":     map[string]interface{}{"template": map[string]interface{}{"spec": map[string]interface{}{"containers": []interface{}{map[string]interface{}{"name": "app", "image": image}}}}},
			"status":   map[string]interface{}{"abort": abort}}}
		u.SetManagedFields(mf)
		return u
	}
	tmpl := fields(`{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{"f:image":{}}}}}}}`)
	abort := fields(`{"f:status":{"f:abort":{}}}`)
	ctrl := metav1.ManagedFieldsEntry{Manager: "rollouts-controller", Operation: "Update", Subresource: "status", Time: at(1), FieldsV1: fields(`{"f:status":{"f:phase":{}}}`)}
	prev := obj("a", false, ctrl, metav1.ManagedFieldsEntry{Manager: "kubectl-patch", Operation: "Update", Time: at(1), FieldsV1: tmpl})
	for name, tc := range map[string]struct {
		cur  *unstructured.Unstructured
		want string
	}{
		// The entry that moved is the author.
		"moved": {obj("b", false, ctrl, metav1.ManagedFieldsEntry{Manager: "kubectl-patch", Operation: "Update", Time: at(5), FieldsV1: tmpl}), "kubectl-patch"},
		// A new manager.
		"new": {obj("a", true, ctrl, metav1.ManagedFieldsEntry{Manager: "kubectl-patch", Operation: "Update", Time: at(1), FieldsV1: tmpl},
			metav1.ManagedFieldsEntry{Manager: "kubectl-argo-rollouts", Operation: "Update", Subresource: "status", Time: at(1), FieldsV1: abort}), "kubectl-argo-rollouts"},
		// Within the same second nothing moves: the owner of the
		// changed field is the author.
		"same second": {obj("b", false, ctrl, metav1.ManagedFieldsEntry{Manager: "kubectl-patch", Operation: "Update", Time: at(1), FieldsV1: tmpl}), "kubectl-patch"},
	} {
		a, ok := author(prev, tc.cur)
		if !ok || a.Manager != tc.want {
			t.Errorf("%s: author %+v (%v), want %s", name, a, ok, tc.want)
		}
	}
	if _, ok := author(prev, obj("a", false)); ok {
		t.Errorf("an object without managedFields has an author")
	}
	for manager, kind := range map[string]ActorKind{"rollouts-controller-v1.8.2": ActorController, "kube-controller-manager": ActorKubernetes,
		"kubectl-argo-rollouts": ActorPerson, "argocd-controller": ActorPerson, "ci-deployer": ActorPerson} {
		if got := classify(manager).Kind; got != kind {
			t.Errorf("%s is %s, want %s", manager, got, kind)
		}
	}
}
