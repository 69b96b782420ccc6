package model

import (
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
)

// A ReplicaSet whose new pods the API server refuses (Capped) keeps the
// pods it has, which still turn available, and gets no more; the
// simulation settles there instead of running out its passes. Scaling it
// down still works.
func TestCappedReplicaSet(t *testing.T) {
	four := int32(4)
	c := &RS{Name: "app-c", Hash: "c", Created: t0.Add(time.Hour), Spec: 2, Replicas: 1, Available: 0, Desired: &four, Capped: true}
	s := &RS{Name: "app-s", Hash: "s", Created: t0, Spec: 4, Replicas: 4, Ready: 4, Available: 4, Desired: &four}
	idx := int32(1)
	in := Inputs{
		Version: "v1.10.2", Replicas: 4, MaxWeight: 100, Steps: []v1alpha1.CanaryStep{sw(50), {Pause: &v1alpha1.RolloutPause{}}},
		TrafficRouted: true, HasServices: true, Index: &idx, StableHash: "s", CurrentPodHash: "c",
		Weights: &v1alpha1.TrafficWeights{Canary: v1alpha1.WeightDestination{Weight: 0, PodTemplateHash: "c"}, Stable: v1alpha1.WeightDestination{Weight: 100, PodTemplateHash: "s"}},
		New:     c, Stable: s, All: []*RS{c, s},
	}
	steps := Simulate(in, 400)
	last := steps[len(steps)-1]
	if len(steps) > 20 || last.CanaryAvailable != 1 || last.CanarySpec != 2 {
		t.Errorf("%d passes, the canary at %d of %d", len(steps), last.CanaryAvailable, last.CanarySpec)
	}
	in.Abort = true
	zero := int32(0)
	in.AbortDelay = &zero
	if last := Simulate(in, 400); last[len(last)-1].Specs["app-c"] != 0 || last[len(last)-1].CanaryAvailable != 0 {
		t.Errorf("aborted, the capped canary is not scaled down: %+v", last[len(last)-1])
	}
}
