package model

import (
	"fmt"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// The scenarios below are the rollback within the window and the actions on
// an aborted Rollout (docs/incidents.md): a canary Rollout with Istio,
// replicas 20, minPodsPerReplicaSet 2, rollbackWindow.revisions 3. They drive
// Evaluate/Apply pass by pass while emulating the ReplicaSet controller (one
// more pod available per pass), and compare with the controller's behaviour
// per version, replayed pass by pass by running each version's real
// syncHandler.

func i32(v int32) *int32 { return &v }

func sw(w int32) v1alpha1.CanaryStep { return v1alpha1.CanaryStep{SetWeight: i32(w)} }

func pause(s int) v1alpha1.CanaryStep {
	d := intstr.FromString(fmt.Sprintf("%ds", s))
	return v1alpha1.CanaryStep{Pause: &v1alpha1.RolloutPause{Duration: &d}}
}

var t0 = time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)

// rollbackScenario: B (created after A) is stable at 20/20; the template is
// reverted to A, whose ReplicaSet is at 0. The controller has not seen it yet.
func rollbackScenario(v upstream.Version, steps []v1alpha1.CanaryStep, subsetOnly bool) Inputs {
	a := &RS{Name: "app-a", Hash: "a", Created: t0, Spec: 0}
	b := &RS{Name: "app-b", Hash: "b", Created: t0.Add(time.Hour), Spec: 20, Replicas: 20, Available: 20}
	n := int32(len(steps))
	return Inputs{
		Version: v, Replicas: 20, MinPods: i32(2), MaxWeight: 100, Steps: steps,
		TrafficRouted: true, SubsetOnly: subsetOnly, HasServices: !subsetOnly, WindowRevision: 3,
		Index: &n, StableHash: "b", CurrentPodHash: "b",
		Weights:    &v1alpha1.TrafficWeights{Canary: v1alpha1.WeightDestination{Weight: 0, PodTemplateHash: "b"}, Stable: v1alpha1.WeightDestination{Weight: 100, PodTemplateHash: "b"}},
		Unobserved: true, New: a, Stable: b, All: []*RS{a, b},
	}
}

// tick emulates the ReplicaSet controller between passes.
func tick(in Inputs) Inputs {
	for _, r := range in.All {
		if r.Available < r.Spec {
			r.Available++
			r.Replicas = r.Spec
		} else if r.Available > r.Spec {
			r.Available, r.Replicas = r.Spec, r.Spec
		}
	}
	return in
}

type obs struct {
	pass      int
	idx       int32
	avail     int32 // canary A available when the pass ran
	weight    int32
	errored   bool
	promoted  bool
	abortSeen bool
}

func run(in Inputs, passes int, between func(i int, in Inputs) Inputs) []obs {
	var out []obs
	for i := 1; i <= passes; i++ {
		if between != nil {
			in = between(i, in)
		}
		var avail int32
		for _, r := range in.All {
			if r.Name == "app-a" {
				avail = r.Available
			}
		}
		p := Evaluate(in)
		out = append(out, obs{pass: i, idx: p.NextIndex, avail: avail, weight: p.Weight, errored: p.Errored, promoted: p.Promotes, abortSeen: in.Abort})
		in = tick(Apply(in, p))
	}
	return out
}

// firstAt returns the first observation whose weight is w.
func firstAt(o []obs, w int32) (obs, bool) {
	for _, x := range o {
		if x.weight == w {
			return x, true
		}
	}
	return obs{}, false
}

func promotedAt(o []obs) (obs, bool) {
	for _, x := range o {
		if x.promoted {
			return x, true
		}
	}
	return obs{}, false
}

var incidentSteps = []v1alpha1.CanaryStep{sw(5), pause(10), sw(100)}
var fixedSteps = []v1alpha1.CanaryStep{sw(5), pause(10)}

func TestIncidentHostMode(t *testing.T) {
	for _, v := range upstream.Modeled {
		t.Run(string(v), func(t *testing.T) {
			o := run(rollbackScenario(v, incidentSteps, false), 26, nil)
			// R1 resets to 0, R2 jumps to 3 with weight 0 and scales A to 2.
			if o[0].idx != 0 || o[0].weight != 0 {
				t.Fatalf("R1 = %+v, want idx 0 weight 0", o[0])
			}
			if o[1].idx != 3 || o[1].weight != 0 {
				t.Fatalf("R2 = %+v, want idx 3 weight 0", o[1])
			}
			first, ok := firstAt(o, 100)
			if !ok || first.pass != 3 || first.avail != 1 {
				t.Fatalf("first 100%% at %+v, want pass 3 with 1 canary pod available", first)
			}
			for _, x := range o[2:] {
				if x.avail < 20 && x.weight != 100 {
					t.Fatalf("pass %d: weight %d on %d/20 pods, want 100 through the ramp", x.pass, x.weight, x.avail)
				}
			}
			p, ok := promotedAt(o)
			if !ok || p.avail != 20 {
				t.Fatalf("promotion at %+v, want when A is 20/20", p)
			}
			if o[p.pass].weight != 0 {
				t.Fatalf("after promotion weight = %d, want 0 (fully promoted)", o[p.pass].weight)
			}
		})
	}
}

func TestIncidentSubsetOnly(t *testing.T) {
	// v1.8.2 and v1.9+ hold the flip until A is fully available at its current
	// size (2/2); v1.7.2 (no gate) and v1.8.3 (gate skips only the DR) flip at
	// the first pod.
	want := map[upstream.Version]int32{"v1.7.2": 1, "v1.8.2": 2, "v1.8.3": 1, "v1.9.3": 2, "v1.10.2": 2}
	for _, v := range upstream.Modeled {
		t.Run(string(v), func(t *testing.T) {
			o := run(rollbackScenario(v, incidentSteps, true), 30, nil)
			first, ok := firstAt(o, 100)
			if !ok || first.avail != want[v] {
				t.Fatalf("first 100%% at %+v, want with %d canary pod(s) available", first, want[v])
			}
			errs := 0
			for _, x := range o {
				if x.errored {
					errs++
				}
				if x.pass > first.pass && x.avail < 20 && x.weight != 100 {
					t.Fatalf("pass %d: weight %d, want 100 held during the ramp", x.pass, x.weight)
				}
			}
			if gated := want[v] == 2; gated != (errs > 0) {
				t.Fatalf("errored passes = %d, gated = %v", errs, gated)
			}
			if p, ok := promotedAt(o); !ok || p.avail != 20 {
				t.Fatalf("promotion at %+v, want at 20/20", p)
			}
		})
	}
}

func TestPrescriptionWithoutFinal100(t *testing.T) {
	for _, v := range upstream.Modeled {
		for _, subset := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/subsetOnly=%v", v, subset), func(t *testing.T) {
				o := run(rollbackScenario(v, fixedSteps, subset), 30, nil)
				if _, ok := firstAt(o, 100); ok {
					if p, _ := promotedAt(o); p.weight != 100 {
						t.Fatalf("100%% before promotion: %+v", o)
					}
				}
				five, ok := firstAt(o, 5)
				if !ok {
					t.Fatalf("never 5%%: %+v", o)
				}
				for _, x := range o {
					if x.pass >= five.pass && x.avail < 20 && x.weight != 5 {
						t.Fatalf("pass %d: weight %d on %d/20, want 5 through the ramp", x.pass, x.weight, x.avail)
					}
				}
				p, ok := promotedAt(o)
				if !ok || p.avail != 20 || p.weight != 100 {
					t.Fatalf("promotion %+v, want 100 with promotion at 20/20", p)
				}
			})
		}
	}
}

func TestStepsOnly100AndEmpty(t *testing.T) {
	for _, v := range upstream.Modeled {
		o := run(rollbackScenario(v, []v1alpha1.CanaryStep{sw(100)}, false), 25, nil)
		if f, ok := firstAt(o, 100); !ok || f.avail != 1 {
			t.Errorf("%s [100]: first 100%% at %+v, want at the first pod", v, f)
		}
		o = run(rollbackScenario(v, nil, false), 25, nil)
		for _, x := range o {
			if x.weight != 0 {
				t.Errorf("%s steps []: weight %d at pass %d, want 0 throughout", v, x.weight, x.pass)
			}
		}
		if p, ok := promotedAt(o); !ok || p.avail != 20 {
			t.Errorf("%s steps []: promotion at %+v, want at 20/20", v, p)
		}
	}
}

// stuckAt100 runs the incident until the weight is 100 with the canary still
// ramping, for the escape tests.
func stuckAt100(t *testing.T, v upstream.Version, subset bool) Inputs {
	in := rollbackScenario(v, incidentSteps, subset)
	for i := 0; i < 40; i++ {
		p := Evaluate(in)
		in = tick(Apply(in, p))
		if in.Weights != nil && in.Weights.Canary.Weight == 100 && in.New.Available >= 3 && in.New.Available < 15 {
			return in
		}
	}
	t.Fatalf("%s: never stuck at 100", v)
	return in
}

func TestAbortDuringWindowRollback(t *testing.T) {
	type want struct{ first, second int32 }
	wants := map[string]want{
		"host":           {0, 100},
		"subset/v1.7.2":  {0, 100},
		"subset/v1.8.3":  {0, 100},
		"subset/v1.8.2":  {100, 100}, // no effect: the gate errors before SetWeight
		"subset/v1.9.3":  {0, 0},     // abort exempts the canary; then the gate blocks re-raising
		"subset/v1.10.2": {0, 0},
	}
	for _, v := range upstream.Modeled {
		for _, subset := range []bool{false, true} {
			key := "host"
			if subset {
				key = "subset/" + string(v)
			}
			w := wants[key]
			in := stuckAt100(t, v, subset)
			in.Abort = true
			p1 := Evaluate(in)
			in2 := Apply(in, p1)
			p2 := Evaluate(in2)
			if p1.Weight != w.first || p2.Weight != w.second {
				t.Errorf("%s %s: abort gives %d then %d, want %d then %d", v, key, p1.Weight, p2.Weight, w.first, w.second)
			}
			if !subset && !p1.AbortCleared {
				t.Errorf("%s host: abort not cleared by the within-window pass", v)
			}
		}
	}
}

func TestAbortedRolloutActions(t *testing.T) {
	// The controller's behaviour per version on an aborted Rollout: a normal
	// update (B -> C, C newer) aborted at step 0.
	for _, v := range upstream.Modeled {
		base := func() Inputs {
			b := &RS{Name: "app-b", Hash: "b", Created: t0, Spec: 20, Replicas: 20, Available: 20}
			c := &RS{Name: "app-c", Hash: "c", Created: t0.Add(time.Hour), Spec: 2, Replicas: 2, Available: 2}
			return Inputs{Version: v, Replicas: 20, MinPods: i32(2), MaxWeight: 100, Steps: incidentSteps,
				TrafficRouted: true, HasServices: true, WindowRevision: 3, Index: i32(0), Abort: true,
				StableHash: "b", CurrentPodHash: "c",
				Weights: &v1alpha1.TrafficWeights{Canary: v1alpha1.WeightDestination{Weight: 5, PodTemplateHash: "c"}, Stable: v1alpha1.WeightDestination{Weight: 95, PodTemplateHash: "b"}},
				New:     c, Stable: b, All: []*RS{b, c}}
		}
		// Aborted baseline: weight 0, index held at 0.
		p := Evaluate(base())
		if p.Weight != 0 || p.NextIndex != 0 {
			t.Errorf("%s aborted: weight %d idx %d, want 0/0", v, p.Weight, p.NextIndex)
		}
		// Plain promote: the CLI sets the index to 1; abort stays; the controller puts it back to 0.
		in := base()
		in.Index = i32(1)
		if p := Evaluate(in); p.NextIndex != 0 || p.Weight != 0 {
			t.Errorf("%s promote: idx %d weight %d, want a no-op (0/0)", v, p.NextIndex, p.Weight)
		}
		// Retry: abort=false; steps restart at 0; weight 5 once the canary is 2/2.
		in = base()
		in.Abort = false
		in.Weights.Canary.Weight = 0
		if p := Evaluate(in); p.Weight != 5 || p.NextIndex != 1 {
			t.Errorf("%s retry: weight %d idx %d, want 5 then step 1", v, p.Weight, p.NextIndex)
		}
		// promote --full: first pass still sees abort (0); abort removed, index to the end.
		in = base()
		in.PromoteFull = true
		p = Evaluate(in)
		if p.Weight != 0 || !p.AbortCleared || p.NextIndex != 3 {
			t.Errorf("%s promote --full pass 1: %+v", v, p)
		}
		in = Apply(in, p)
		p = Evaluate(in)
		if p.Weight != 0 || p.CanaryTarget != 20 {
			t.Errorf("%s promote --full pass 2: weight %d canary target %d, want 0 and 20", v, p.Weight, p.CanaryTarget)
		}
		// undo to stable: template = B; the reset pass skips steps; then fully promoted.
		in = base()
		in.Unobserved = true
		in.New = in.Stable
		p = Evaluate(in)
		if p.NextIndex != 3 || !p.AbortCleared {
			t.Errorf("%s undo: reset pass %+v, want idx 3 and abort cleared", v, p)
		}
		in = Apply(in, p)
		if p := Evaluate(in); p.Weight != 0 || p.Decision.Branch != BranchFullyPromoted {
			t.Errorf("%s undo: weight %d branch %s, want 0 fully promoted", v, p.Weight, p.Decision.Branch)
		}
	}
}

func TestMinPodsCap(t *testing.T) {
	for _, v := range upstream.Modeled {
		in := Inputs{Version: v, Replicas: 1, MinPods: i32(2), MaxWeight: 100, TrafficRouted: true}
		got := EffectiveMinPods(in)
		want := int32(2)
		if v == "v1.10.2" {
			want = 1
		}
		if got != want {
			t.Errorf("%s: effective minPods with replicas 1 = %d, want %d", v, got, want)
		}
	}
}

func TestRollbackWindowUsesCreationTime(t *testing.T) {
	a := &RS{Name: "a", Hash: "a", Created: t0, Revision: "9"}
	x := &RS{Name: "x", Hash: "x", Created: t0.Add(time.Minute), Revision: "2"}
	y := &RS{Name: "y", Hash: "y", Created: t0.Add(2 * time.Minute), Experiment: true}
	b := &RS{Name: "b", Hash: "b", Created: t0.Add(time.Hour), Revision: "1"}
	in := Inputs{Version: "v1.8.2", WindowRevision: 1, New: a, Stable: b, All: []*RS{a, x, y, b}}
	if w := RollbackWindow(in); !w.IsRollback || w.Between != 1 || w.WithinWindow {
		t.Fatalf("window = %+v, want a rollback with 1 RS between, outside revisions 1", w)
	}
	in.WindowRevision = 2
	if w := RollbackWindow(in); !w.WithinWindow {
		t.Fatalf("window = %+v, want within revisions 2", w)
	}
	in.New, in.Stable = b, a
	if w := RollbackWindow(in); w.IsRollback {
		t.Fatalf("newer canary counted as rollback: %+v", w)
	}
}
