package cli

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/gather"
)

// addCopies adds n copies of the example Rollout and its ReplicaSets, in
// n/50 namespaces, healthy (fully promoted) for every copy but the original.
func addCopies(t *testing.T, fc *fakeCluster, n int) {
	t.Helper()
	ro, err := fc.dc.Resource(gather.GVRRollout).Namespace("shop").Get(context.Background(), "checkout-api", metav1.GetOptions{})
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
		if err := fc.dc.Tracker().Add(c); err != nil {
			t.Fatal(err)
		}
	}
}

func TestScanRanksByRiskWithFewRequests(t *testing.T) {
	fc := newFakeCluster(t)
	addCopies(t, fc, 120)
	lists := 0
	fc.dc.PrependReactor("*", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetVerb() != "list" {
			t.Errorf("scan made a %s request on %s: only lists are allowed", a.GetVerb(), a.GetResource().Resource)
		}
		lists++
		return false, nil, nil
	})
	rep, err := Scan(context.Background(), fc.dc, gather.FleetOptions{}, "")
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
}
