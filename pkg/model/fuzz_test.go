package model

import (
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// FuzzEvaluate drives the model with arbitrary numbers folded into what the
// controller's spec validation accepts (weights within maxTrafficWeight,
// minPodsPerReplicaSet >= 1), but with any step index — including past the
// end, as after steps were shortened — and any availability. It checks
// invariants that hold for every version: no panic, the next weight within
// [0, maxWeight], desired replica counts never negative, and the next index
// within [0, len(steps)] unless it was already outside and stays put.
func FuzzEvaluate(f *testing.F) {
	f.Add(int32(20), int32(2), int32(100), int32(5), int32(100), int32(2), int32(20), int32(20), true, false, false, false, uint8(3), int32(20), false)
	f.Add(int32(1), int32(5), int32(100), int32(0), int32(100), int32(0), int32(0), int32(1), true, true, true, true, uint8(0), int32(0), true)
	f.Add(int32(0), int32(-1), int32(0), int32(-4), int32(300), int32(-2), int32(-7), int32(3), false, false, true, false, uint8(255), int32(-3), false)
	f.Add(int32(10), int32(1), int32(100), int32(50), int32(100), int32(1), int32(2), int32(4), true, false, true, false, uint8(3), int32(4), true)
	f.Fuzz(func(t *testing.T, replicas, minPods, maxWeight, w1, w2, idx, canaryAvail, stableAvail int32,
		routed, subset, abort, dss bool, verPick uint8, desired int32, paused bool) {
		fold := func(v, n int32) int32 { // v into [0, n)
			if n <= 0 {
				return 0
			}
			v %= n
			if v < 0 {
				v += n
			}
			return v
		}
		maxWeight = 1 + fold(maxWeight, 100)
		w1, w2 = fold(w1, maxWeight+1), fold(w2, maxWeight+1)
		replicas, minPods = fold(replicas, 400), 1+fold(minPods, 10)
		canaryAvail, stableAvail = fold(canaryAvail, 400), fold(stableAvail, 400)
		steps := []v1alpha1.CanaryStep{{SetWeight: &w1}, {Pause: &v1alpha1.RolloutPause{}}, {SetWeight: &w2}}
		created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		canary := &RS{Name: "c", Hash: "c", Created: created, Spec: canaryAvail, Replicas: canaryAvail, Ready: canaryAvail, Available: canaryAvail}
		stable := &RS{Name: "s", Hash: "s", Created: created.Add(-time.Hour), Spec: stableAvail, Replicas: stableAvail, Ready: stableAvail, Available: stableAvail}
		// The replicas each was last sized for: a scaling event when it
		// differs from replicas (an autoscaler's scale).
		desired = fold(desired, 400)
		canary.Desired, stable.Desired = &desired, &desired
		in := Inputs{
			Version:  upstream.Modeled[int(verPick)%len(upstream.Modeled)],
			Replicas: replicas, MinPods: &minPods, MaxWeight: maxWeight, Steps: steps,
			TrafficRouted: routed, SubsetOnly: subset, DSS: dss, WindowRevision: 3, HasServices: !subset, ServiceRouted: routed && !subset, Paused: paused,
			Index: &idx, Abort: abort, StableHash: "s", CurrentPodHash: "c",
			Weights: &v1alpha1.TrafficWeights{Canary: v1alpha1.WeightDestination{Weight: w1, PodTemplateHash: "c"}, Stable: v1alpha1.WeightDestination{Weight: 100 - w1, PodTemplateHash: "s"}},
			New:     canary, Stable: stable, All: []*RS{stable, canary},
			RPT: &v1alpha1.ReplicaProgressThreshold{Type: v1alpha1.ProgressTypePods, Value: 1},
		}
		p := Evaluate(in)
		if p.Weight < 0 || p.Weight > maxWeight {
			t.Fatalf("%s: next weight %d outside [0, %d] for %+v", in.Version, p.Weight, maxWeight, in)
		}
		if p.CanaryTarget < 0 || p.StableTarget < 0 {
			t.Fatalf("%s: negative desired replicas canary %d stable %d", in.Version, p.CanaryTarget, p.StableTarget)
		}
		next := Apply(in, p)
		if next.Index != nil && (*next.Index < 0 || *next.Index > int32(len(steps))) && *next.Index != idx {
			t.Fatalf("%s: next index %d outside [0, %d] (was %d)", in.Version, *next.Index, len(steps), idx)
		}
		_ = analyzeInputs(in)
	})
}
