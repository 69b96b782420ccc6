package model

import (
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// The lab's state (e2e bug-scaled-paused): an Istio canary of 4 aborted at
// 50% while scaled to 6, its canary last sized for 4. Before v1.10 every
// pass only syncs replicas: the stable grows to 6, then — the abort delay
// let pass — one pass scales the canary to 0 with 50% still on it, and
// the next writes 0%. Stable pods that never turn available keep the
// deadline from being set, and the weight where it is.
func TestAbortMeetsScaleSimulated(t *testing.T) {
	scenario := func(ver upstream.Version) Inputs {
		four := int32(4)
		c := &RS{Name: "app-c", Hash: "c", Created: t0.Add(time.Hour), Spec: 2, Replicas: 2, Ready: 2, Available: 2, Desired: &four}
		s := &RS{Name: "app-s", Hash: "s", Created: t0, Spec: 4, Replicas: 4, Ready: 4, Available: 4, Desired: &four}
		idx := int32(1)
		return Inputs{
			Version: ver, Replicas: 6, MaxWeight: 100, Steps: []v1alpha1.CanaryStep{sw(50), {Pause: &v1alpha1.RolloutPause{}}},
			TrafficRouted: true, HasServices: true, Index: &idx, Abort: true, StableHash: "s", CurrentPodHash: "c",
			Weights: &v1alpha1.TrafficWeights{Canary: v1alpha1.WeightDestination{Weight: 50, PodTemplateHash: "c"}, Stable: v1alpha1.WeightDestination{Weight: 50, PodTemplateHash: "s"}},
			New:     c, Stable: s, All: []*RS{c, s},
		}
	}
	for _, ver := range upstream.Modeled {
		affected := upstream.At("rs.abort-delay-syncs-annotation", ver).Absent
		steps := Simulate(scenario(ver), 60)
		at := -1
		for i, s := range steps {
			if s.AbortDelayEnded {
				at = i
			}
		}
		last := steps[len(steps)-1]
		switch {
		case !affected && at >= 0:
			t.Errorf("%s: the abort delay ends in a replicas-only pass, on a version that syncs the canary's annotation", ver)
		case affected && at < 0:
			t.Errorf("%s: the canary never reaches its deadline: %+v", ver, last)
		case affected:
			s := steps[at]
			if s.Pass.Traffic != 50 || s.Specs["app-c"] != 0 || s.StableAvailable != 6 || at+1 >= len(steps) || steps[at+1].Pass.Traffic != 0 {
				t.Errorf("%s: the deadline's pass leaves %d%% with the canary at %d and the stable at %d available; then %+v", ver, s.Pass.Traffic, s.Specs["app-c"], s.StableAvailable, steps[at+1:])
			}
		}
		if last.Pass.Traffic != 0 {
			t.Errorf("%s: ends at %d%%, want 0%%", ver, last.Pass.Traffic)
		}
		// Two of the stable's new pods never turn Ready: it never has 6
		// available, so the deadline is never set (and from v1.8 no weight
		// is written that the stable cannot carry either).
		in := scenario(ver)
		in.Stable.Stuck, in.Stable.Hung = true, 2
		steps = Simulate(in, 60)
		last = steps[len(steps)-1]
		for _, s := range steps {
			if s.AbortDelayEnded {
				t.Errorf("%s: the deadline passes with the stable at %d of 6 available", ver, s.StableAvailable)
			}
		}
		if last.Pass.Traffic != 50 {
			t.Errorf("%s: with the stable short, ends at %d%%, want 50%%", ver, last.Pass.Traffic)
		}
	}
}
