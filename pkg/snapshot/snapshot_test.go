package snapshot

import (
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// decodeIncident decodes the bundled incident snapshot (exampletest
// imports this package, so it cannot serve here).
func decodeIncident(t *testing.T) ([]Located, *Header) {
	t.Helper()
	f, err := os.Open("../../examples/incident-rollback-window.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	located, hdr, err := Decode("example", f)
	if err != nil {
		t.Fatal(err)
	}
	return located, hdr
}

func TestWriteDecodeRoundTrip(t *testing.T) {
	located, hdr := decodeIncident(t)
	if hdr == nil || hdr.TargetName != "checkout-api" || !hdr.TakenAt.Equal(time.Date(2026, 8, 11, 3, 12, 41, 0, time.UTC)) {
		t.Fatalf("header = %+v", hdr)
	}
	var objs []*unstructured.Unstructured
	for _, l := range located {
		objs = append(objs, l.Object)
	}
	s1 := New(*hdr, objs)
	var buf bytes.Buffer
	if err := s1.Write(&buf); err != nil {
		t.Fatal(err)
	}
	located2, hdr2, err := Decode("again", &buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(located2) != len(located) || hdr2.TargetName != hdr.TargetName || !hdr2.TakenAt.Equal(hdr.TakenAt) {
		t.Fatalf("round trip lost data: %d→%d objects, header %+v", len(located), len(located2), hdr2)
	}
	ro, err := s1.FindRollout("", "")
	if err != nil || ro.Name != "checkout-api" {
		t.Fatalf("FindRollout = %v, %v", ro, err)
	}
	v, err := s1.View(ro)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.ReplicaSets) != 2 || len(v.Workload.Services) != 2 || len(v.VirtualServices) != 1 || len(v.ScaledObjects) != 1 || len(v.Controllers) != 1 {
		t.Fatalf("view: %d RS, %d svc, %d vs, %d keda, %d ctrl", len(v.ReplicaSets), len(v.Workload.Services), len(v.VirtualServices), len(v.ScaledObjects), len(v.Controllers))
	}
	// One selection: the Rollout checks and the pod checks see the same
	// ReplicaSets.
	if &v.ReplicaSets[0] != &v.Workload.ReplicaSets[0] {
		t.Fatal("View and Workload select ReplicaSets separately")
	}
	if v.ReplicaSets[0].Name != "checkout-api-5f6c8d7b9a" {
		t.Fatalf("ReplicaSets not oldest first: %s", v.ReplicaSets[0].Name)
	}
}

func TestDecodeErrorsNameFileAndLine(t *testing.T) {
	in := "apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: [b\n"
	_, _, err := Decode("x.yaml", strings.NewReader(in))
	if err == nil || !strings.HasPrefix(err.Error(), "x.yaml:") {
		t.Fatalf("err = %v, want x.yaml:LINE: …", err)
	}
	_, _, err = Decode("y.yaml", strings.NewReader("just: a map\n"))
	if err == nil || !strings.Contains(err.Error(), "no apiVersion or kind") {
		t.Fatalf("err = %v", err)
	}
}

// TestWriteJSONDecodesAsYAML: `snapshot` writes JSON by default; reading it
// back gives exactly the objects and header that the YAML form gives.
func TestWriteJSONDecodesAsYAML(t *testing.T) {
	located, hdr := decodeIncident(t)
	var objs []*unstructured.Unstructured
	for _, l := range located {
		objs = append(objs, l.Object)
	}
	s := New(*hdr, objs)
	var y, j bytes.Buffer
	if err := s.Write(&y); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteJSON(&j); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(j.Bytes(), []byte("{\n")) {
		t.Fatalf("not JSON: %.40s", j.String())
	}
	fromY, hy, err := Decode("y", &y)
	if err != nil {
		t.Fatal(err)
	}
	fromJ, hj, err := Decode("j", &j)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(hy, hj) || len(fromY) != len(fromJ) || len(fromJ) != len(located) {
		t.Fatalf("headers %+v vs %+v; %d vs %d objects", hy, hj, len(fromY), len(fromJ))
	}
	for i := range fromY {
		if !reflect.DeepEqual(fromY[i].Object.Object, fromJ[i].Object.Object) {
			t.Fatalf("object %d differs:\n%v\n%v", i, fromY[i].Object.Object, fromJ[i].Object.Object)
		}
		if fromJ[i].Source.Line <= 1 {
			t.Fatalf("object %d of the JSON snapshot is located at line %d, not at its own line", i, fromJ[i].Source.Line)
		}
	}
}

// TestByNamespace checks each part against a snapshot built from scratch of
// the same objects: the same objects in the same (key) order, the shared
// ones in every part, and typed forms shared with the whole, not copied.
func TestByNamespace(t *testing.T) {
	obj := func(apiVersion, kind, ns, name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": apiVersion, "kind": kind}}
		u.SetNamespace(ns)
		u.SetName(name)
		return u
	}
	ctrl := obj("apps/v1", "Deployment", "argo-rollouts", "argo-rollouts")
	objs := []*unstructured.Unstructured{
		obj("argoproj.io/v1alpha1", "Rollout", "b", "z"),
		obj("apps/v1", "Deployment", "b", "web"), // sorts with the shared Deployment
		obj("argoproj.io/v1alpha1", "Rollout", "a", "y"),
		obj("apps/v1", "ReplicaSet", "a", "y-1"),
		obj("apps/v1", "Deployment", "zz", "api"),
		ctrl,
		obj("v1", "Service", "b", "z"),
	}
	whole := New(Header{}, objs)
	isCtrl := func(u *unstructured.Unstructured) bool { return u == ctrl }
	parts := whole.ByNamespace(isCtrl)
	names := func(s *Snapshot) []string {
		var out []string
		for _, o := range s.objects {
			out = append(out, objKey(o))
		}
		return out
	}
	wantNS := []string{"a", "b", "zz"}
	if len(parts) != len(wantNS) {
		t.Fatalf("%d parts, want %d", len(parts), len(wantNS))
	}
	for i, ns := range wantNS {
		var mine []*unstructured.Unstructured
		for _, o := range objs {
			if o.GetNamespace() == ns || o == ctrl {
				mine = append(mine, o)
			}
		}
		if got, want := names(parts[i]), names(New(Header{}, mine)); !reflect.DeepEqual(got, want) {
			t.Errorf("namespace %s: %v, want %v", ns, got, want)
		}
		if parts[i].tc != whole.tc {
			t.Errorf("namespace %s: typed forms not shared with the whole", ns)
		}
	}
	// Converted once for every part.
	a, err := typedOf[struct{ Kind string }](parts[0], ctrl)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := typedOf[struct{ Kind string }](parts[2], ctrl); a != b {
		t.Error("the shared Deployment was converted once per namespace")
	}
}
