package model

import (
	"testing"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// A Rollout of 4 held at its pause step after setWeight 50, with setWeight
// 100 to come. Left alone, the controller ends a pause with a duration once
// the duration has passed (CompletedCanaryPauseStep), goes on to the last
// step and promotes; an indefinite pause, or spec.paused (no step completes
// then, completedCurrentCanaryStep), holds at the pause. The same in every
// modeled version; what is expected is read from that source, not from the
// model.
func TestSimulateEndsTimedPauses(t *testing.T) {
	indefinite := v1alpha1.CanaryStep{Pause: &v1alpha1.RolloutPause{}}
	cases := []struct {
		name      string
		pause     v1alpha1.CanaryStep
		paused    bool
		wantIdx   int32
		wantW     int32
		promoted  bool
		pauseEnds bool
	}{
		{name: "pause 10s", pause: pause(10), wantIdx: 3, wantW: 0, promoted: true, pauseEnds: true},
		{name: "indefinite pause", pause: indefinite, wantIdx: 1, wantW: 50},
		{name: "pause 10s under spec.paused", pause: pause(10), paused: true, wantIdx: 1, wantW: 50},
	}
	for _, ver := range upstream.Modeled {
		for _, c := range cases {
			a := &RS{Name: "app-a", Hash: "a", Created: t0, Spec: 4, Replicas: 4, Available: 4}
			b := &RS{Name: "app-b", Hash: "b", Created: t0.Add(1), Spec: 2, Replicas: 2, Available: 2}
			in := Inputs{
				Version: ver, Replicas: 4, MaxWeight: 100, Steps: []v1alpha1.CanaryStep{sw(50), c.pause, sw(100)},
				TrafficRouted: true, HasServices: true, Paused: c.paused, Index: i32(1), StableHash: "a", CurrentPodHash: "b",
				Weights: &v1alpha1.TrafficWeights{Canary: v1alpha1.WeightDestination{Weight: 50, PodTemplateHash: "b"}, Stable: v1alpha1.WeightDestination{Weight: 50, PodTemplateHash: "a"}},
				New:     b, Stable: a, All: []*RS{a, b},
			}
			steps := Simulate(in, 100)
			last := steps[len(steps)-1]
			ended := false
			for _, s := range steps {
				ended = ended || s.PauseEnded
				if s.PauseEnded && (len(s.Pass.IndexCites) == 0 || s.Pass.IndexCites[0].Key != "pa.duration-ends") {
					t.Errorf("%s %s: the pause ends without its citation: %v", ver, c.name, s.Pass.IndexCites)
				}
			}
			if last.Index != c.wantIdx || last.Pass.Weight != c.wantW || (last.StableHash == "b") != c.promoted || ended != c.pauseEnds {
				t.Errorf("%s %s: ends at step %d, weight %d, stable %s, pause ended %v; want step %d, weight %d, promoted %v, pause ended %v",
					ver, c.name, last.Index, last.Pass.Weight, last.StableHash, ended, c.wantIdx, c.wantW, c.promoted, c.pauseEnds)
			}
		}
	}
}
