package escape

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/gather"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// exampleCluster serves the bundled incident through a fake dynamic client.
func exampleCluster(t *testing.T) *dynfake.FakeDynamicClient {
	t.Helper()
	f, err := os.Open("../../examples/incident-rollback-window.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	located, _, err := snapshot.Decode("example", f)
	if err != nil {
		t.Fatal(err)
	}
	var objs []runtime.Object
	for _, l := range located {
		if l.Object.GetKind() == "Rollout" {
			l.Object.SetResourceVersion("4242")
		}
		objs = append(objs, l.Object)
	}
	lists := map[schema.GroupVersionResource]string{}
	for gvr, kind := range map[schema.GroupVersionResource]string{
		gather.GVRRollout: "RolloutList", gather.GVRAnalysisRun: "AnalysisRunList", gather.GVRReplicaSet: "ReplicaSetList",
		gather.GVRDeployment: "DeploymentList", gather.GVRPod: "PodList", gather.GVRService: "ServiceList", gather.GVRNode: "NodeList",
		gather.GVRNamespace: "NamespaceList", gather.GVREvent: "EventList", gather.GVREndpointSlice: "EndpointSliceList",
		gather.GVRIngress: "IngressList", gather.GVRHPA: "HorizontalPodAutoscalerList", gather.GVRPDB: "PodDisruptionBudgetList",
		gather.GVRVirtualService: "VirtualServiceList", gather.GVRDestRule: "DestinationRuleList", gather.GVRTrafficSplit: "TrafficSplitList",
		gather.GVRHTTPRoute: "HTTPRouteList", gather.GVRScaledObject: "ScaledObjectList", gather.GVRLease: "LeaseList",
		gather.GVRConfigMap: "ConfigMapList",
	} {
		lists[gvr] = kind
	}
	return dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists, objs...)
}

func examplePlanner(dc *dynfake.FakeDynamicClient) *Planner {
	return &Planner{Client: dc, Target: Target{Namespace: "shop", Name: "checkout-api"}}
}

func TestRecheckRefusesAPlanThatNoLongerHolds(t *testing.T) {
	dc := exampleCluster(t)
	pl := examplePlanner(dc)
	p, view, err := pl.Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// While the person reads the plan, someone aborts the Rollout.
	ro, err := dc.Resource(gather.GVRRollout).Namespace("shop").Get(context.Background(), "checkout-api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	unstructured.SetNestedField(ro.Object, true, "status", "abort")
	ro.SetResourceVersion("4243")
	if err := dc.Tracker().Update(gather.GVRRollout, ro, "shop"); err != nil {
		t.Fatal(err)
	}
	patches := 0
	dc.PrependReactor("patch", "*", func(k8stesting.Action) (bool, runtime.Object, error) {
		patches++
		return false, nil, nil
	})
	_, err = ApplyWithReplan(context.Background(), pl, p, view, Abort, ReplanOptions{Recheck: true})
	var ce *ChangedError
	if !errors.As(err, &ce) || !ce.BeforeWrite || ce.Reason == "" || patches != 0 {
		t.Fatalf("err %v, %d patches: want a ChangedError before any write", err, patches)
	}
	if want := "the Rollout changed while you were deciding (" + ce.Reason + "): nothing was written; re-run to see the new plan"; err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
}

func TestApplyWithReplanWritesOnceWhenNothingChanged(t *testing.T) {
	dc := exampleCluster(t)
	pl := examplePlanner(dc)
	p, view, err := pl.Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	replans := 0
	a, err := ApplyWithReplan(context.Background(), pl, p, view, Undo, ReplanOptions{Recheck: true, OnReplan: func(_, _ *Plan, _ *Option) { replans++ }})
	if err != nil || len(a.Sent) != 1 || replans != 0 || a.Option.Action != Undo {
		t.Fatalf("err %v, applied %+v, %d re-plans: want one undo request and no re-plan", err, a, replans)
	}
}

func TestWatchOutcomeReportsWhatItSaw(t *testing.T) {
	dc := exampleCluster(t)
	p, _, err := examplePlanner(dc).Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	o, _ := p.Option(Undo)
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	tick := 0
	clock := func() time.Time { tick++; return start.Add(time.Duration(tick) * time.Second) }
	var seen []Observation
	// Nothing was applied: the Rollout stays where it is, and a zero
	// timeout ends the watch after the first read.
	out, err := WatchOutcome(context.Background(), dc, p, o, WatchOptions{Now: clock, Interval: time.Millisecond, OnChange: func(ob Observation) { seen = append(seen, ob) }})
	if err != nil {
		t.Fatal(err)
	}
	if out.Reached || len(seen) != 1 || !seen[0].At.Equal(start.Add(2*time.Second)) {
		t.Fatalf("outcome %+v, observations %+v", out, seen)
	}
	if l := out.Last; !l.Routed || l.CanaryWeight != 100 || l.CanaryAvailable != 2 || l.Aborted || l.Settled {
		t.Fatalf("observed %+v: want 100%% on 2 canary pods, not settled", l)
	}
}
