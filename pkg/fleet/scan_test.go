package fleet

import (
	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"

	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	dynfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/gather"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// exampleCluster serves the bundled incident through a fake dynamic client.
func exampleCluster(t testing.TB) *dynfake.FakeDynamicClient {
	t.Helper()
	objs := exampletest.Objects(t, exampletest.Incident, nil)
	return dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), gather.ListKinds(), objs...)
}

// addCopies adds n copies of the example Rollout and its ReplicaSets, in
// n/50 namespaces, healthy (fully promoted) for every copy but the original.
func addCopies(t testing.TB, dc *dynfake.FakeDynamicClient, n int) {
	t.Helper()
	ro, err := dc.Resource(gather.GVRRollout).Namespace("shop").Get(context.Background(), "checkout-api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		c := ro.DeepCopy()
		c.SetName(fmt.Sprintf("svc-%04d", i))
		c.SetNamespace(fmt.Sprintf("team-%02d", i%50))
		c.SetResourceVersion("")
		unstructured.SetNestedField(c.Object, "6d8f7c9b5d", "status", "currentPodHash")
		unstructured.SetNestedField(c.Object, int64(0), "status", "canary", "weights", "canary", "weight")
		if err := dc.Tracker().Add(c); err != nil {
			t.Fatal(err)
		}
	}
}

func TestScanRanksByRiskWithFewRequests(t *testing.T) {
	dc := exampleCluster(t)
	addCopies(t, dc, 120)
	lists := 0
	dc.PrependReactor("*", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetVerb() != "list" {
			t.Errorf("scan made a %s request on %s: only lists are allowed", a.GetVerb(), a.GetResource().Resource)
		}
		lists++
		return false, nil, nil
	})
	rep, err := Scan(context.Background(), dc, gather.FleetOptions{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rollouts != 121 || len(rep.Rows) != 121 {
		t.Fatalf("%d Rollouts, %d rows", rep.Rollouts, len(rep.Rows))
	}
	if top := rep.Rows[0]; top.Name != "checkout-api" || top.Worst != "critical" || top.Weight == nil || *top.Weight != 100 || top.CanaryAvail != 2 {
		t.Fatalf("riskiest row %+v, want the incident first", top)
	}
	if lists != rep.Requests || lists > 15 {
		t.Fatalf("%d list requests (report says %d); want ≤ 15 whatever the fleet size", lists, rep.Requests)
	}
	if rep.Worst() != diagnose.Critical || rep.Rows[0].Severity() != diagnose.Critical {
		t.Fatalf("worst %v, first row %v: want critical", rep.Worst(), rep.Rows[0].Severity())
	}
}

// BenchmarkScanSnapshot is a scan's analysis of 1,000 Rollouts once they
// are read: what each cluster of a multi-cluster scan costs on top of its
// reads (make bench measures the whole command against the lab).
func BenchmarkScanSnapshot(b *testing.B) {
	dc := exampleCluster(b)
	addCopies(b, dc, 999)
	res, err := gather.Fleet(context.Background(), dc, gather.FleetOptions{})
	if err != nil {
		b.Fatal(err)
	}
	// Typed as a live read leaves them (Rollouts from JSON, ReplicaSets
	// from protobuf, straight into structs), not as the fake client does.
	typed := map[*unstructured.Unstructured]snapshot.Decoded{}
	objs := res.Snapshot.Objects()
	for _, u := range objs {
		switch u.GetKind() {
		case "Rollout":
			ro, err := snapshot.TypedRollout(u)
			if err != nil {
				b.Fatal(err)
			}
			typed[u] = snapshot.Decoded{Obj: ro}
		case "ReplicaSet":
			rs := new(appsv1.ReplicaSet)
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, rs); err != nil {
				b.Fatal(err)
			}
			typed[u] = snapshot.Decoded{Obj: rs}
		}
	}
	snap := snapshot.NewTyped(res.Snapshot.Header, objs, typed)
	b.ReportAllocs()
	for b.Loop() {
		rep, err := scanSnapshot(snap, "")
		if err != nil || rep.Rollouts != 1000 {
			b.Fatalf("%v: %d Rollouts", err, rep.Rollouts)
		}
	}
}

func TestScanRejectsAnUnknownControllerVersion(t *testing.T) {
	if _, err := Scan(context.Background(), exampleCluster(t), gather.FleetOptions{}, "nonsense"); err == nil {
		t.Fatal("--controller-version nonsense was accepted")
	}
}

// TestScanBlueGreenRow: a blue-green Rollout paused before promotion is a
// row with its blue-green state, not a canary's "0/0", and its findings,
// none of them about the Services a scan does not read.
func TestScanBlueGreenRow(t *testing.T) {
	objs := exampletest.Objects(t, "bluegreen-paused.yaml", nil)
	dc := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), gather.ListKinds(), objs...)
	rep, err := Scan(context.Background(), dc, gather.FleetOptions{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 1 {
		t.Fatalf("%d rows", len(rep.Rows))
	}
	r := rep.Rows[0]
	if r.Name != "checkout-web" || r.Step != "blueGreen paused" || r.Weight != nil || r.Phase != "Paused" {
		t.Fatalf("row %+v", r)
	}
	found := false
	for _, id := range r.FindingIDs {
		found = found || id == "RD106"
		// A scan reads no Services: the active one is not missing.
		if id == "RD114" {
			t.Errorf("RD114 in a scan, which reads no Services: %s", r.Top)
		}
	}
	if !found {
		t.Fatalf("findings %v: want RD106 (paused, who must act)", r.FindingIDs)
	}
	if r.Worst != "info" {
		t.Errorf("worst %q (%s), want info: the example is paused for a person and nothing else", r.Worst, r.Top)
	}
}
