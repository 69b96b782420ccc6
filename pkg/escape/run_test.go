package escape

import (
	"context"
	"errors"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/gather"
)

// exampleCluster serves the bundled incident through a fake dynamic client.
func exampleCluster(t *testing.T) *dynfake.FakeDynamicClient {
	t.Helper()
	objs := exampletest.Objects(t, exampletest.Incident, func(o *unstructured.Unstructured) {
		if o.GetKind() == "Rollout" {
			o.SetResourceVersion("4242")
		}
	})
	return dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), gather.ListKinds(), objs...)
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

// A later request of one action (promote's spec patch after its status
// patch) meets a resourceVersion the controller's status write moved on
// (the lab: every version reconciles between the two): it is retried once
// when the spec is as the action left it, and refused when someone changed
// the spec in between.
func TestApplyRetriesAfterTheControllersStatusWrite(t *testing.T) {
	for _, specChanged := range []bool{false, true} {
		dc := exampleCluster(t)
		p := &Plan{Namespace: "shop", Name: "checkout-api", ResourceVersion: "4242"}
		o := &Option{Action: Promote, Requests: []Request{
			merge("status", `{"status":{"pauseConditions":null}}`, "checkout-api", ""),
			merge("", `{"spec":{"paused":false}}`, "checkout-api", ""),
		}}
		patches := 0
		dc.PrependReactor("patch", "rollouts", func(a k8stesting.Action) (bool, runtime.Object, error) {
			patches++
			if patches != 2 {
				return false, nil, nil
			}
			// Between the two: the controller writes the status, and in
			// the second case someone edits the spec too.
			ro, err := dc.Tracker().Get(gather.GVRRollout, "shop", "checkout-api")
			if err != nil {
				return true, nil, err
			}
			u := ro.(*unstructured.Unstructured)
			u.SetResourceVersion("5000")
			if specChanged {
				u.SetGeneration(u.GetGeneration() + 1)
			}
			if err := dc.Tracker().Update(gather.GVRRollout, u, "shop"); err != nil {
				return true, nil, err
			}
			return true, nil, apierrors.NewConflict(schema.GroupResource{Group: "argoproj.io", Resource: "rollouts"}, "checkout-api", errors.New("the object has been modified"))
		})
		sent, err := Apply(context.Background(), dc, p, o, ApplyOptions{})
		var ae *ApplyError
		switch {
		case !specChanged && (err != nil || len(sent) != 2 || !sent[1].Retried || patches != 3):
			t.Errorf("status written in between: err %v, %d sent, %d patches; want both sent, the second retried", err, len(sent), patches)
		case specChanged && (!errors.As(err, &ae) || !ae.Conflict || len(sent) != 1 || patches != 2):
			t.Errorf("spec changed in between: err %v, %d sent, %d patches; want the conflict, one request sent, no retry", err, len(sent), patches)
		}
	}
}
