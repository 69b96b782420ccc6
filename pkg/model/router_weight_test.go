package model

import (
	"strings"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// routed is a traffic-routed canary of 10 at setWeight 20, both ReplicaSets
// as the caller sets them, status weight 20.
func routed(ver upstream.Version, canaryAvail, stableAvail int32) Inputs {
	w20 := int32(20)
	idx := int32(1)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	stable := &RS{Name: "app-a", Hash: "a", Created: now.Add(-time.Hour), Spec: 10, Replicas: 10, Ready: stableAvail, Available: stableAvail}
	canary := &RS{Name: "app-b", Hash: "b", Created: now, Spec: 2, Replicas: 2, Ready: canaryAvail, Available: canaryAvail}
	return Inputs{Version: ver, Replicas: 10, MaxWeight: 100, TrafficRouted: true, HasServices: true,
		Steps: []v1alpha1.CanaryStep{{SetWeight: &w20}, {Pause: &v1alpha1.RolloutPause{}}},
		Index: &idx, StableHash: "a", CurrentPodHash: "b",
		Weights: &v1alpha1.TrafficWeights{Canary: v1alpha1.WeightDestination{Weight: 20, PodTemplateHash: "b"}, Stable: v1alpha1.WeightDestination{Weight: 80, PodTemplateHash: "a"}},
		New:     canary, Stable: stable, All: []*RS{stable, canary}}
}

// A pass that writes the weight puts the router where the status says; one
// the stable gate holds leaves the router's own weight in place, and the
// exposure is measured against it.
func TestRouterWeightFollowsWrites(t *testing.T) {
	for _, ver := range upstream.Modeled {
		in := routed(ver, 2, 10)
		r := int32(60) // someone set the router to 60
		in.RouterWeight = &r
		p := Evaluate(in)
		if !p.Applied || p.Weight != 20 || p.Traffic != 20 {
			t.Fatalf("%s: a pass that writes: applied %v weight %d traffic %d", ver, p.Applied, p.Weight, p.Traffic)
		}
		if after := Apply(in, p); after.RouterWeight != nil {
			t.Errorf("%s: after a write the router weight is still %d", ver, *after.RouterWeight)
		}
		if in.Traffic() != 60 {
			t.Errorf("%s: traffic now %d, want the router's 60", ver, in.Traffic())
		}

		// Stable short of the 8 that 80% needs: v1.8+ skip the write.
		held := routed(ver, 2, 5)
		held.RouterWeight = &r
		p = Evaluate(held)
		if !upstream.At("tr.stable-check-call", ver).Absent {
			if p.Applied || p.Weight != 20 || p.Traffic != 60 {
				t.Fatalf("%s: held pass: applied %v weight %d traffic %d; want the router's 60 kept", ver, p.Applied, p.Weight, p.Traffic)
			}
			if e := exposure(held, p, "now"); e == nil || e.Weight != 60 || e.PodsNeeded != 6 {
				t.Errorf("%s: exposure %+v, want 60%% needing 6 pods", ver, e)
			}
			if after := Apply(held, p); after.RouterWeight == nil || *after.RouterWeight != 60 {
				t.Errorf("%s: a held pass dropped the router weight", ver)
			}
		} else if p.Traffic != 20 {
			t.Errorf("%s: v1.7 has no stable gate: traffic %d", ver, p.Traffic)
		}

		// Without a router reading, traffic is the status's.
		plain := routed(ver, 2, 5)
		if p := Evaluate(plain); p.Traffic != p.Weight {
			t.Errorf("%s: no router: traffic %d, weight %d", ver, p.Traffic, p.Weight)
		}
	}
}

// A stable short of pods holds the gate whatever the weight; when the
// weight is already the decided one (a promoted Rollout: 0 on the canary)
// nothing is held back, and the gate says so.
func TestStableGateIdleWhenTheWeightStands(t *testing.T) {
	twenty := int32(20)
	base := Inputs{Version: "v1.10.2", Replicas: 5, MaxWeight: 100, TrafficRouted: true, Stable: &RS{Name: "app-1", Spec: 5, Available: 4}}
	for _, c := range []struct {
		name        string
		status      int32
		router      *int32
		holds, idle bool
		whySays     string
	}{
		{name: "promoted, status and router at 0", status: 0, holds: true, idle: true, whySays: "the weight is already 0, so nothing is held back now"},
		{name: "status 0, router still at 20", status: 0, router: &twenty, holds: true, whySays: "the weight change is skipped silently"},
		{name: "status 20, deciding 0", status: 20, holds: true, whySays: "the weight change is skipped silently"},
	} {
		in := base
		in.Weights = &v1alpha1.TrafficWeights{Canary: v1alpha1.WeightDestination{Weight: c.status}, Stable: v1alpha1.WeightDestination{Weight: 100 - c.status}}
		in.RouterWeight = c.router
		g := stableGate(in, 0)
		if g.Holds != c.holds || g.Idle != c.idle || !strings.Contains(g.Why, c.whySays) {
			t.Errorf("%s: holds %v idle %v %q; want holds %v idle %v and %q", c.name, g.Holds, g.Idle, g.Why, c.holds, c.idle, c.whySays)
		}
	}
}
