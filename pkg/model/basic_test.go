package model

import (
	"slices"
	"testing"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

func ios(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
func ioi(i int32) *intstr.IntOrString  { v := intstr.FromInt32(i); return &v }

// maxSurge and maxUnavailable resolve as the controller resolves them
// (utils/replicaset/replicaset.go resolveFenceposts, MaxUnavailable): a
// string is a percentage with or without "%", surge rounds up, unavailable
// down, both 0 make unavailable 1, unavailable is at most replicas.
func TestFenceposts(t *testing.T) {
	for _, tc := range []struct {
		surge, unav *intstr.IntOrString
		replicas    int32
		s, u        int32
	}{
		{nil, nil, 5, 2, 1},               // the default "25": 1.25 up, 1.25 down
		{nil, nil, 3, 1, 0},               // 0.75: up to 1, down to 0
		{ios("25%"), ios("10%"), 2, 1, 0}, // 0.5 up to 1; 0.2 down to 0, and surge is not 0
		{ioi(0), ios("10%"), 5, 0, 1},     // both 0: unavailable 1
		{ioi(1), ioi(9), 5, 1, 5},         // unavailable capped at replicas
		{ios("x%"), ioi(1), 5, 0, 0},      // does not parse: the controller's error path, both 0
		{ioi(1), ioi(0), 0, 1, 0},         // no replicas
		{nil, nil, 4, 1, 1},               // 25% of 4 = 1 each
		{ioi(0), ioi(0), 3, 0, 1},         // both zero: unavailable becomes 1
		{ios("25"), ios("25"), 2, 1, 0},   // Argo's bare "25" default is a percentage
		{ios("0%"), ios("10%"), 5, 0, 1},  // 10% of 5 floors to 0, surge 0: unavailable 1
		{ioi(1), ios("50%"), 3, 1, 1},
	} {
		s, u := Fenceposts(tc.surge, tc.unav, tc.replicas)
		if s != tc.s || u != tc.u {
			t.Errorf("Fenceposts(%v, %v, %d) = %d, %d; want %d, %d", tc.surge, tc.unav, tc.replicas, s, u, tc.s, tc.u)
		}
	}
}

// The closest counts to a weight, as approximateWeightedCanaryStableReplicaCounts
// picks them: 30% of 5 is 1.5, a tie, so 2 of 5 (40%) competes with 2 of 6
// (33%) and 1 of 6 (17%) when maxSurge allows a sixth pod; 70% of 5 is 4 of
// 6; a weight between 0 and 100 never rounds either side to 0.
func TestApproxCounts(t *testing.T) {
	for _, tc := range []struct {
		replicas, weight, surge int32
		c, s                    int32
	}{
		{5, 30, 1, 2, 4},
		{5, 30, 0, 2, 3},
		{5, 70, 1, 4, 2},
		{5, 70, 0, 4, 1},
		{4, 50, 1, 2, 2},
		{3, 50, 0, 2, 1},  // tie: the canary rounds up
		{10, 1, 0, 1, 9},  // never 0 for a weight above 0
		{10, 99, 0, 9, 1}, // nor the stable below 100
		{1, 50, 0, 1, 0},  // one pod without surge: 0 allowed, ceil 1 taken
		{1, 50, 1, 1, 1},  // one more pod when surge allows
		{5, 100, 1, 5, 0},
		{5, 0, 1, 0, 5},
	} {
		c, s := approxCounts(tc.replicas, tc.weight, 100, tc.surge)
		if c != tc.c || s != tc.s {
			t.Errorf("approxCounts(%d, %d%%, surge %d) = %d, %d; want %d, %d", tc.replicas, tc.weight, tc.surge, c, s, tc.c, tc.s)
		}
	}
}

// basicLab is the lab's basic canary (replicas 5, maxSurge 1, maxUnavailable
// 0) at setWeight 70 after 30, canary c and stable s as (spec, available).
func basicLab(v upstream.Version, c, s [2]int32) Inputs {
	seventy, thirty := int32(70), int32(30)
	idx := int32(2)
	cn := &RS{Name: "app-c", Hash: "c", Revision: "2", Spec: c[0], Replicas: c[0], Available: c[1]}
	st := &RS{Name: "app-s", Hash: "s", Revision: "1", Spec: s[0], Replicas: s[0], Available: s[1]}
	return Inputs{Version: v, Replicas: 5, MaxWeight: 100, MaxSurge: 1, MaxUnavailable: 0,
		Steps: []v1alpha1.CanaryStep{{SetWeight: &thirty}, {Pause: &v1alpha1.RolloutPause{}}, {SetWeight: &seventy}, {Pause: &v1alpha1.RolloutPause{}}},
		Index: &idx, StableHash: "s", CurrentPodHash: "c", New: cn, Stable: st, All: []*RS{cn, st}}
}

// The sequence the lab's controllers (v1.7.2 and v1.10.2) went through after
// a promote from the 30% pause to setWeight 70 of 5 — stable 4→3, canary
// 2→3, stable 3→2, canary 3→4 — pass by pass: each pass scales one
// ReplicaSet, the stable first, never more than 6 pods, never fewer than 5
// available.
func TestBasicCanaryStepsLikeTheController(t *testing.T) {
	for _, v := range upstream.Modeled {
		type pair struct{ c, s int32 }
		for _, tc := range []struct {
			c, s [2]int32
			want pair
		}{
			{[2]int32{2, 2}, [2]int32{4, 4}, pair{2, 3}}, // over maxUnavailable room: the stable gives one up first
			{[2]int32{2, 2}, [2]int32{3, 3}, pair{3, 3}}, // a sixth pod: the canary's
			{[2]int32{3, 2}, [2]int32{3, 3}, pair{3, 3}}, // waits for it to be available
			{[2]int32{3, 3}, [2]int32{3, 3}, pair{3, 2}},
			{[2]int32{3, 3}, [2]int32{2, 2}, pair{4, 2}},
		} {
			in := basicLab(v, tc.c, tc.s)
			p := Evaluate(in)
			if (pair{p.CanaryTarget, p.StableTarget}) != tc.want || p.NextIndex != 2 {
				t.Errorf("%s: canary %v stable %v: pass scales canary %d stable %d (index %d), want %+v", v, tc.c, tc.s, p.CanaryTarget, p.StableTarget, p.NextIndex, tc.want)
			}
		}
		// At 4/4 and 2/2 the step is complete.
		if p := Evaluate(basicLab(v, [2]int32{4, 4}, [2]int32{2, 2})); p.NextIndex != 3 {
			t.Errorf("%s: at canary 4/4, stable 2/2 the index stays %d, want 3", v, p.NextIndex)
		}
		// The whole way, simulated: the same ReplicaSet sizes, and the
		// step completes.
		steps := Simulate(basicLab(v, [2]int32{2, 2}, [2]int32{4, 4}), 40)
		last := steps[len(steps)-1]
		if last.Index != 3 || last.CanarySpec != 4 {
			t.Errorf("%s: the simulation ends at index %d with the canary at %d, want 3 and 4", v, last.Index, last.CanarySpec)
		}
	}
}

// Other ReplicaSets' pods take requests too: without trafficRouting they go
// before the canary or stable moves, newest first, while replicas −
// maxUnavailable pods stay available; and a step is complete only once
// none is left available.
func TestBasicCanaryScalesOthersDownFirst(t *testing.T) {
	in := basicLab("v1.10.2", [2]int32{2, 2}, [2]int32{3, 3})
	old := &RS{Name: "app-o", Hash: "o", Revision: "0", Spec: 1, Replicas: 1, Available: 1}
	in.All = append(in.All, old)
	if c, s := BasicCounts(in); c != 2 || s != 3 {
		t.Errorf("with an older ReplicaSet's pod up, BasicCounts = %d, %d; want nothing moved (2, 3)", c, s)
	}
	p := Evaluate(in)
	if p.OtherTargets["app-o"] != 0 || len(p.OtherTargets) != 1 || AtDesired(in, nil) {
		t.Errorf("other targets %v, at desired %v: want app-o scaled to 0 and the step not complete", p.OtherTargets, AtDesired(in, nil))
	}
	if next := Apply(in, p); next.All[2].Spec != 0 {
		t.Errorf("Apply leaves app-o at %d", next.All[2].Spec)
	}
}

// spec.paused halts the ReplicaSets' scaling, with or without
// trafficRouting (rolloutContext.haltProgress).
func TestSpecPausedHaltsScaling(t *testing.T) {
	in := basicLab("v1.10.2", [2]int32{2, 2}, [2]int32{4, 4})
	in.Paused = true
	if p := Evaluate(in); p.CanaryTarget != 2 || p.StableTarget != 4 {
		t.Errorf("paused: the pass scales canary %d stable %d, want 2 and 4", p.CanaryTarget, p.StableTarget)
	}
}

// An InconclusiveAnalysis pause halts the scaling as spec.paused does
// (rolloutContext.haltProgress), on every version; the pass that writes an
// abort writes no pause conditions, so the abort's scale-down follows.
func TestInconclusivePauseHaltsScaling(t *testing.T) {
	for _, v := range upstream.Modeled {
		in := basicLab(v, [2]int32{2, 2}, [2]int32{4, 4}) // on the way to setWeight 70: the stable goes 4 → 3 next
		in.Inconclusive = true
		p := Evaluate(in)
		if p.CanaryTarget != 2 || p.StableTarget != 4 {
			t.Errorf("%s: inconclusive: the pass scales canary %d stable %d, want 2 and 4 (halted)", v, p.CanaryTarget, p.StableTarget)
		}
		if !slices.ContainsFunc(p.Cites, func(c upstream.Cite) bool { return c.Key == "cx.halt-inconclusive" }) {
			t.Errorf("%s: the halt does not cite cx.halt-inconclusive: %v", v, p.Cites)
		}
		in.Abort = true
		next := Apply(in, Evaluate(in))
		if next.Inconclusive {
			t.Errorf("%s: the aborting pass keeps the InconclusiveAnalysis pause", v)
		}
		if p := Evaluate(next); p.CanaryTarget == next.New.Spec && p.StableTarget == next.Stable.Spec {
			t.Errorf("%s: after the abort's first pass nothing scales (canary %d, stable %d)", v, p.CanaryTarget, p.StableTarget)
		}
	}
}

// Under spec.paused no step completes (completedCurrentCanaryStep), a
// setWeight whose sizes are reached included, on every version.
func TestSpecPausedHoldsTheStep(t *testing.T) {
	for _, v := range upstream.Modeled {
		in := basicLab(v, [2]int32{2, 2}, [2]int32{4, 4})
		zero := int32(0)
		in.Index = &zero // setWeight 30, at its sizes
		if p := Evaluate(in); p.NextIndex != 1 {
			t.Fatalf("%s: unpaused, setWeight 30 at its sizes moves to %d, want 1", v, p.NextIndex)
		}
		in.Paused = true
		p := Evaluate(in)
		if p.NextIndex != 0 || !slices.ContainsFunc(p.IndexCites, func(c upstream.Cite) bool { return c.Key == "rc.spec-paused-no-step" }) {
			t.Errorf("%s: spec.paused: the index moves to %d (%s), want it held at 0", v, p.NextIndex, p.IndexWhy)
		}
	}
}

// maxUnavailable as the controller resolves it for a restart
// (replicasetutil.MaxUnavailable): a canary's through the fenceposts, a
// blue-green's as a percentage rounded down, "%" optional.
func TestMaxUnavailableForARestart(t *testing.T) {
	for _, c := range []struct {
		canary         bool
		surge, unav    *intstr.IntOrString
		replicas, want int32
	}{
		{canary: true, replicas: 5, want: 1},                                  // 25% of 5, rounded down
		{canary: true, replicas: 3, want: 0},                                  // 25% of 3 is 0; maxSurge 25% is 1, so not both 0
		{canary: true, surge: ioi(0), unav: ios("10%"), replicas: 5, want: 1}, // both resolve to 0: the controller takes 1
		{canary: true, unav: ioi(2), replicas: 0, want: 0},                    // scaled to 0
		{replicas: 8, want: 2},                                                // 25% of 8
		{unav: ios("50%"), replicas: 3, want: 1},
		{unav: ios("50"), replicas: 3, want: 1}, // the controller's parser takes a percentage without "%"
		{unav: ioi(9), replicas: 3, want: 3},    // at most replicas
		{unav: ios("x"), replicas: 3, want: 0},
	} {
		got := BlueGreenMaxUnavailable(c.unav, c.replicas)
		if c.canary {
			_, got = Fenceposts(c.surge, c.unav, c.replicas)
		}
		if got != c.want {
			t.Errorf("%+v: %d, want %d", c, got, c.want)
		}
	}
}
