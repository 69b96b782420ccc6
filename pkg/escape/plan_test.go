package escape

import (
	"flag"
	"fmt"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

func exampleView(t *testing.T) *snapshot.View {
	t.Helper()
	return exampletest.View(t, exampletest.Incident)
}

var update = flag.Bool("update", false, "rewrite golden files (then read every changed line before committing)")

// TestPlanExampleGolden pins every option's verdict, reason and predicted
// effect on the rollback-incident example, per modeled version, in
// testdata/plan-example.golden (read it line by line when it changes).
func TestPlanExampleGolden(t *testing.T) {
	v := exampleView(t)
	var b strings.Builder
	for _, ver := range upstream.Modeled {
		p := plan(t, v, ver)
		fmt.Fprintf(&b, "== %s: recommended %s: %s\n", ver, p.Recommended, p.Reason)
		for _, o := range p.Options {
			fmt.Fprintf(&b, "  %-13s %-15s %s\n", o.Action, o.Verdict, o.Why)
			if o.Effect.Summary != "" {
				fmt.Fprintf(&b, "  %13s %s\n", "", o.Effect.Summary)
			}
		}
	}
	const path = "testdata/plan-example.golden"
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./pkg/escape -run Golden -update to create it)", err)
	}
	if b.String() != string(want) {
		t.Errorf("the plans differ from %s; if intended, run go test ./pkg/escape -run Golden -update and read the diff\ngot:\n%s", path, b.String())
	}
}

func plan(t *testing.T, v *snapshot.View, ver upstream.Version) *Plan {
	t.Helper()
	p, err := Build(Input{View: v, Controller: model.ControllerVersion{Assumed: ver, Exact: true}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// subsetOnly turns the example into Istio subset-only mode: no Services in
// the Rollout, a DestinationRule with canary and stable subsets.
func subsetOnly(v *snapshot.View) {
	c := v.Rollout.Spec.Strategy.Canary
	c.CanaryService, c.StableService = "", ""
	c.TrafficRouting.Istio.DestinationRule = &v1alpha1.IstioDestinationRule{Name: "checkout-api", CanarySubsetName: "canary", StableSubsetName: "stable"}
}

// TestEscapesStuckAt100 is the escape table of the controller's behaviour per
// version, replayed pass by pass (docs/incidents.md): the rollback within
// the window holds 100% on 2 of 20 canary pods; what does each action do?
func TestEscapesStuckAt100(t *testing.T) {
	bad := []Verdict{NoEffect, Harmful} // "does not get you out"
	type cell map[Action][]Verdict
	// Undo takes the rollback back: safe for traffic, at the cost of the
	// revision the rollback was leaving.
	host := cell{Abort: bad, PromoteFull: bad, Undo: {SafeWithCost}, Retry: {NotApplicable}, Promote: {NoEffect}, Wait: {Harmful}}
	subset19 := cell{Abort: {Safe, SafeWithCost}, PromoteFull: bad, Undo: {SafeWithCost}, Retry: {NotApplicable}, Promote: {NoEffect}, Wait: {Harmful}}
	subset182 := cell{Abort: bad, PromoteFull: bad, Undo: {Harmful}, Retry: {NotApplicable}, Promote: {NoEffect}, Wait: {Harmful}}
	for _, ver := range upstream.Modeled {
		for _, mode := range []string{"host", "subset"} {
			v := exampleView(t)
			want := host
			if mode == "subset" {
				subsetOnly(v)
				switch ver {
				case "v1.8.2":
					want = subset182
				case "v1.9.3", "v1.10.2":
					want = subset19
				}
			}
			p := plan(t, v, ver)
			for a, verdicts := range want {
				o, _ := p.Option(a)
				ok := false
				for _, w := range verdicts {
					ok = ok || o.Verdict == w
				}
				if !ok {
					t.Errorf("%s %s: %s is %s (%s), want one of %v\n  effect: %s", ver, mode, a, o.Verdict, o.Why, verdicts, o.Effect.Summary)
				}
			}
			wantRec := Undo
			if mode == "subset" && ver == "v1.8.2" {
				wantRec = "" // no safe escape: the recommendation must not be undo
			}
			if wantRec != "" && p.Recommended != wantRec {
				t.Errorf("%s %s: recommended %s (%s), want %s", ver, mode, p.Recommended, p.Reason, wantRec)
			}
			if wantRec == "" && p.Recommended == Undo {
				t.Errorf("%s %s: recommended undo, which the controller replay shows stuck at 100%%", ver, mode)
			}
			// undo restores the second-highest revision: the stable one here.
			if o, _ := p.Option(Undo); o.TargetRevision != "6" {
				t.Errorf("%s: undo targets revision %q, want 6", ver, o.TargetRevision)
			}
		}
	}
}

// abortedUpdate turns the example into an aborted Rollout: a normal update
// (the canary is newer than the stable) aborted at step 0; weight 0, the
// canary at 2/2 kept by abortScaleDownDelaySeconds.
func abortedUpdate(v *snapshot.View) {
	ro := v.Rollout
	zero := int32(0)
	ro.Status.Abort = true
	ro.Status.CurrentStepIndex = &zero
	ro.Status.Canary.Weights.Canary.Weight = 0
	ro.Status.Canary.Weights.Stable.Weight = 100
	for _, rs := range v.ReplicaSets {
		if rs.Name == "checkout-api-5f6c8d7b9a" {
			rs.CreationTimestamp.Time = v.Now.Add(-time.Minute)
			two := int32(2)
			rs.Spec.Replicas = &two
			rs.Status.Replicas, rs.Status.ReadyReplicas, rs.Status.AvailableReplicas = 2, 2, 2
		}
	}
	// View keeps ReplicaSets oldest first.
	sort.Slice(v.ReplicaSets, func(i, j int) bool {
		return v.ReplicaSets[i].CreationTimestamp.Before(&v.ReplicaSets[j].CreationTimestamp)
	})
}

// updateAt is the example's update under way, not aborted, at step idx of
// steps with the canary's status weight at weight (the canary has 2 of 20
// pods available).
func updateAt(t *testing.T, steps []v1alpha1.CanaryStep, idx, weight int32) *snapshot.View {
	v := exampleView(t)
	abortedUpdate(v)
	ro := v.Rollout
	ro.Status.Abort = false
	ro.Spec.Strategy.Canary.Steps = steps
	ro.Status.CurrentStepIndex = &idx
	ro.Status.Canary.Weights.Canary.Weight, ro.Status.Canary.Weights.Stable.Weight = weight, 100-weight
	return v
}

// TestEscapesAborted is the controller's behaviour per version, replayed pass
// by pass, for each action on an aborted Rollout.
func TestEscapesAborted(t *testing.T) {
	want := map[Action]Verdict{Retry: SafeWithCost, Promote: NoEffect, PromoteFull: SafeWithCost, Undo: Safe, Abort: NoEffect, Wait: Safe}
	for _, ver := range upstream.Modeled {
		v := exampleView(t)
		abortedUpdate(v)
		p := plan(t, v, ver)
		for a, w := range want {
			o, _ := p.Option(a)
			if o.Verdict != w {
				t.Errorf("%s aborted: %s is %s (%s), want %s\n  effect: %s", ver, a, o.Verdict, o.Why, w, o.Effect.Summary)
			}
		}
		if p.Recommended != Undo {
			t.Errorf("%s aborted: recommended %s (%s), want undo", ver, p.Recommended, p.Reason)
		}
		if p.Now.Exposure != nil || p.Now.FirstWeight != 0 {
			t.Errorf("%s aborted: doing nothing predicted %d%% (exposure %+v), want 0", ver, p.Now.FirstWeight, p.Now.Exposure)
		}
		full, _ := p.Option(PromoteFull)
		if full.Effect.FinalStable != "checkout-api-5f6c8d7b9a" {
			t.Errorf("%s: promote --full ends with stable %s, want the aborted canary promoted", ver, full.Effect.FinalStable)
		}
	}
}

// An update aborted after an earlier canary was replaced mid-rollout: the
// second-highest revision is that replaced canary, not the stable. Plain
// `kubectl argo rollouts undo` would start an update to it; the plan's undo
// goes back to the stable with --to-revision and says why. --to-revision
// still chooses.
func TestUndoGoesBackToTheStable(t *testing.T) {
	for _, ver := range upstream.Modeled {
		v := exampleView(t)
		abortedUpdate(v)
		var replaced *appsv1.ReplicaSet
		for _, rs := range v.ReplicaSets {
			switch rs.Name {
			case "checkout-api-5f6c8d7b9a": // the aborted canary: the newest revision
				rs.Annotations["rollout.argoproj.io/revision"] = "8"
			case "checkout-api-6d8f7c9b5d": // the stable, revision 6
				replaced = rs.DeepCopy()
			}
		}
		replaced.Name = "checkout-api-7c7c7c7c7c"
		replaced.Labels[v1alpha1.DefaultRolloutUniqueLabelKey] = "7c7c7c7c7c"
		replaced.Spec.Template.Labels[v1alpha1.DefaultRolloutUniqueLabelKey] = "7c7c7c7c7c"
		replaced.Spec.Template.Spec.Containers[0].Image += "-replaced"
		replaced.Annotations["rollout.argoproj.io/revision"] = "7"
		zero := int32(0)
		replaced.Spec.Replicas = &zero
		replaced.Status = appsv1.ReplicaSetStatus{}
		v.ReplicaSets = append(v.ReplicaSets, replaced)

		p := plan(t, v, ver)
		o, _ := p.Option(Undo)
		if o.TargetRevision != "6" || !strings.HasSuffix(o.Command, " --to-revision 6") {
			t.Errorf("%s: undo targets revision %q with %q, want the stable revision 6 and --to-revision 6", ver, o.TargetRevision, o.Command)
		}
		if !strings.Contains(o.Note, "revision 7 (checkout-api-7c7c7c7c7c)") {
			t.Errorf("%s: undo's note does not name plain undo's target, revision 7: %q", ver, o.Note)
		}
		if o.Verdict != Safe || o.Effect.FinalStable != "checkout-api-6d8f7c9b5d" || o.Effect.Phase != "Healthy" {
			t.Errorf("%s: undo is %s (%s), ends %s with stable %s; want safe, Healthy on the stable", ver, o.Verdict, o.Why, o.Effect.Phase, o.Effect.FinalStable)
		}
		if p.Recommended != Undo {
			t.Errorf("%s: recommended %s (%s), want undo", ver, p.Recommended, p.Reason)
		}

		p, err := Build(Input{View: v, Controller: model.ControllerVersion{Assumed: ver, Exact: true}, ToRevision: 7})
		if err != nil {
			t.Fatal(err)
		}
		o, _ = p.Option(Undo)
		if o.TargetRevision != "7" || o.Note != "" || o.Verdict == Safe {
			t.Errorf("%s: undo --to-revision 7 targets %q (note %q) and is %s (%s); want revision 7, no note, not safe: it starts an update to a revision that is not the stable", ver, o.TargetRevision, o.Note, o.Verdict, o.Why)
		}
	}
}

// Plain promote ends the current step only: paused at an indefinite pause
// with a timed pause ahead, it runs the steps after it (the timed pause ends
// by itself) and promotes at the end — it does not skip them, as promote
// --full and skip do.
func TestPromoteRunsTheRemainingSteps(t *testing.T) {
	for _, ver := range upstream.Modeled {
		ten := intstr.FromString("10s")
		five, fifty, hundred := int32(5), int32(50), int32(100)
		v := updateAt(t, []v1alpha1.CanaryStep{{SetWeight: &five}, {Pause: &v1alpha1.RolloutPause{}}, {SetWeight: &fifty}, {Pause: &v1alpha1.RolloutPause{Duration: &ten}}, {SetWeight: &hundred}}, 1, 5)
		ro := v.Rollout
		ro.Status.PauseConditions = []v1alpha1.PauseCondition{{Reason: v1alpha1.PauseReasonCanaryPauseStep, StartTime: metav1.NewTime(v.Now.Add(-time.Minute))}}
		ro.Status.ControllerPause = true
		p := plan(t, v, ver)
		o, _ := p.Option(Promote)
		if o.Verdict != SafeWithCost || strings.Contains(o.Why, "skips") || !strings.Contains(o.Why, "the steps after it run to the end (a timed pause on the way ends by itself), which promotes checkout-api-5f6c8d7b9a") {
			t.Errorf("%s: promote is %s: %s", ver, o.Verdict, o.Why)
		}
		if full, _ := p.Option(PromoteFull); !strings.Contains(full.Why, "skips the remaining steps") {
			t.Errorf("%s: promote --full says %s", ver, full.Why)
		}
	}
}

// When every way out is harmful the plan says so in those words, names the
// least harmful, how long it lasts and what can be done outside the
// controller's verbs (Istio subset-only on v1.8.2: the DestinationRule
// switch waits for every ReplicaSet, so undo too stays at 100%).
func TestEveryWayOutHarmful(t *testing.T) {
	v := exampleView(t)
	subsetOnly(v)
	p := plan(t, v, "v1.8.2")
	if !p.AllHarmful || p.Recommended != Wait {
		t.Fatalf("allHarmful %v, recommended %s (%s)", p.AllHarmful, p.Recommended, p.Reason)
	}
	if len(p.ReasonCites) == 0 || p.ReasonCites[0].Key != "tr.set-weight-call" {
		t.Errorf("the out-of-band option's claim is not cited: %+v", p.ReasonCites)
	}
	for _, want := range []string{"every way out is harmful; the least harmful is to wait", "It lasts until 20 pods of checkout-api-5f6c8d7b9a are available", "Outside the controller's verbs", "risk:"} {
		if !strings.Contains(p.Reason, want) {
			t.Errorf("reason lacks %q:\n%s", want, p.Reason)
		}
	}
	// One answer per state: the finding diagnose prints carries this plan's words.
	rep := diagnose.Run(v, model.ControllerVersion{Assumed: "v1.8.2", Exact: true}, diagnose.Options{})
	Annotate(rep, p)
	n := 0
	for _, f := range rep.Findings {
		if f.Escape != "" {
			n++
			if !strings.HasPrefix(f.Escape, p.Reason) {
				t.Errorf("%s escape %q differs from the plan's %q", f.ID, f.Escape, p.Reason)
			}
		}
	}
	if n == 0 {
		t.Fatal("no finding carried an escape")
	}
}

// minPodsPerReplicaSet above replicas: before v1.10 waiting never ends
// Healthy (Degraded once the progress deadline passes); v1.10 caps it.
func TestWaitNeverHealthyBeforeV110(t *testing.T) {
	for ver, want := range map[upstream.Version]Verdict{"v1.7.2": SafeWithCost, "v1.9.3": SafeWithCost, "v1.10.2": Safe} {
		v := exampleView(t)
		ro := v.Rollout
		one, two := int32(1), int32(2)
		ro.Spec.Replicas, ro.Spec.Strategy.Canary.MinPodsPerReplicaSet = &one, &two
		ro.Spec.RollbackWindow = nil
		ro.Status.StableRS = ro.Status.CurrentPodHash // fully promoted: nothing else in flight
		p := plan(t, v, ver)
		o, _ := p.Option(Wait)
		if o.Verdict != want || (want == SafeWithCost) != strings.Contains(o.Why, "never becomes Healthy") {
			t.Errorf("%s: wait is %s (%s)", ver, o.Verdict, o.Why)
		}
		cited := false
		for _, c := range o.Cites {
			cited = cited || c.Key == "co.healthy-updated"
		}
		if cited != (want == SafeWithCost) {
			t.Errorf("%s: never-Healthy claim cited %v, want %v", ver, cited, want == SafeWithCost)
		}
	}
}

// inconclusiveAtStep turns the analysis example into a canary paused by an
// Inconclusive run of its analysis step (step 2 of 5).
func inconclusiveAtStep(v *snapshot.View) {
	ro := v.Rollout
	two := int32(2)
	ro.Status.Abort, ro.Status.AbortedAt = false, nil
	ro.Status.CurrentStepIndex = &two
	ro.Status.ControllerPause = true
	ro.Status.PauseConditions = []v1alpha1.PauseCondition{{Reason: v1alpha1.PauseReasonInconclusiveAnalysis}}
	ro.Status.Canary.CurrentStepAnalysisRunStatus.Status = v1alpha1.AnalysisPhaseInconclusive
}

// promote on a canary paused by an Inconclusive step run sends what
// `kubectl argo rollouts promote` sends: the pause conditions cleared,
// controllerPause false and the index past the analysis step — clearing
// the pause conditions alone makes the controller re-run the analysis
// (the lab's analysis-inconclusive-escape scenario showed it on every
// modeled version). Other pauses keep the plain clear.
func TestPromoteInconclusiveStepSkipsIt(t *testing.T) {
	for _, ver := range upstream.Modeled {
		v := exampletest.View(t, exampletest.AnalysisAbort)
		inconclusiveAtStep(v)
		o, _ := plan(t, v, ver).Option(Promote)
		if len(o.Requests) != 1 || string(o.Requests[0].Body) != `{"status":{"pauseConditions":null, "controllerPause":false, "currentStepIndex":3}}` || o.Requests[0].Subresource != "status" {
			t.Errorf("%s: promote sends %+v", ver, o.Requests)
		}
		if _, ok := citedKey(o.Cites, "cli.promote-inconclusive-step"); !ok {
			t.Errorf("%s: promote cites %+v", ver, o.Cites)
		}
		// A pause step's pause: the pause conditions alone.
		v.Rollout.Status.PauseConditions[0].Reason = v1alpha1.PauseReasonCanaryPauseStep
		v.Rollout.Status.Canary.CurrentStepAnalysisRunStatus.Status = v1alpha1.AnalysisPhaseSuccessful
		o, _ = plan(t, v, ver).Option(Promote)
		if len(o.Requests) != 1 || string(o.Requests[0].Body) != `{"status":{"pauseConditions":null}}` {
			t.Errorf("%s: promote of a pause step sends %+v", ver, o.Requests)
		}
	}
}

// escape's predicted effects follow the weight the router really applies:
// aborted with the stable short of what 100% needs, v1.8+ hold the weight
// change, so the canary keeps what the VirtualService sends it (100), not
// what the status says (5). Without the router objects the status is all
// there is.
func TestEffectsFollowTheRouterWeight(t *testing.T) {
	for _, ver := range upstream.Modeled {
		if upstream.At("tr.stable-check-call", ver).Absent {
			continue
		}
		v := exampleView(t)
		v.Rollout.Spec.RollbackWindow = nil
		v.Rollout.Status.Abort = true
		v.Rollout.Status.Canary.Weights.Canary.Weight = 5
		for _, rs := range v.ReplicaSets {
			if rs.Labels[v1alpha1.DefaultRolloutUniqueLabelKey] == v.Rollout.Status.StableRS {
				rs.Status.AvailableReplicas, rs.Status.ReadyReplicas = 10, 10
			}
		}
		if got := plan(t, v, ver).Now.FirstWeight; got != 100 {
			t.Errorf("%s: the first pass leaves %d%% on the canary; the VirtualService sends it 100%%", ver, got)
		}
		v.Workload.Router = nil
		if got := plan(t, v, ver).Now.FirstWeight; got != 5 {
			t.Errorf("%s: without router objects the first pass leaves %d%%, want the status's 5%%", ver, got)
		}
	}
}

// Unread ReplicaSets are not absent ones: planned from none, undo would
// have no revision to go to and waiting would look safe (both measured on
// the example before this check). The plan is refused, for a refusal and
// for a read that failed, with what to do for each.
func TestNoPlanWithoutTheReplicaSets(t *testing.T) {
	for reason, fix := range map[snapshot.GapReason]string{
		snapshot.GapForbidden: "grant list on replicasets.apps (docs/rbac.yaml)",
		snapshot.GapError:     ": run again",
	} {
		v := exampleView(t)
		v.ReplicaSets = nil
		v.Header.Gaps = append(v.Header.Gaps, snapshot.Gap{Resource: "replicasets.apps", Namespace: "shop", Reason: reason, Message: "…"})
		p, err := Build(Input{View: v, Controller: model.ControllerVersion{Assumed: "v1.8.2", Exact: true}})
		if p != nil || err == nil || !strings.Contains(err.Error(), "rollout shop/checkout-api: no way out can be planned without its ReplicaSets, which were not read (replicasets.apps in shop: "+string(reason)) || !strings.Contains(err.Error(), fix) {
			t.Errorf("%s: plan %v, error %v", reason, p != nil, err)
		}
	}
	// A gap of another namespace's ReplicaSets does not concern this one.
	v := exampleView(t)
	v.Header.Gaps = append(v.Header.Gaps, snapshot.Gap{Resource: "replicasets.apps", Namespace: "other", Reason: snapshot.GapForbidden})
	if _, err := Build(Input{View: v, Controller: model.ControllerVersion{Assumed: "v1.8.2", Exact: true}}); err != nil {
		t.Errorf("another namespace's gap: %v", err)
	}
}

// A plan for a Rollout whose controller is not running says so: no way out
// takes effect until it runs (RD166).
func TestPlanControllerNotRunning(t *testing.T) {
	v := exampleView(t)
	if len(v.Controllers) == 0 {
		t.Fatal("the example has no controller Deployment")
	}
	if p := plan(t, v, "v1.10.2"); p.ControllerNotRunning {
		t.Errorf("a running controller is reported not running")
	}
	v.Controllers[0].Status.AvailableReplicas = 0
	v.Controllers[0].Status.Replicas = 1
	if p := plan(t, v, "v1.10.2"); !p.ControllerNotRunning {
		t.Errorf("a controller without an available pod is not reported")
	}
}

// An experiment step holds the Rollout, Progressing and without a progress
// deadline, until its Experiment is Successful; the simulation does not run
// the Experiment, so the plan says where it holds and, for a step that sets
// neither a duration nor an analysis requiredForCompletion, that waiting
// never ends it: not "converges by itself".
func TestWaitHeldAtAnExperimentStep(t *testing.T) {
	for _, tc := range []struct {
		name     string
		step     v1alpha1.RolloutExperimentStep
		person   bool
		waitSays string
	}{
		{"with a duration", v1alpha1.RolloutExperimentStep{Duration: "10m"}, false, "the controller converges by itself"},
		{"without a duration or a required analysis", v1alpha1.RolloutExperimentStep{}, true, "nothing moves by itself"},
	} {
		for _, ver := range upstream.Modeled {
			// 10% of 20 replicas: the canary's 2 available pods carry it.
			ten := int32(10)
			p := plan(t, updateAt(t, []v1alpha1.CanaryStep{{SetWeight: &ten}, {Experiment: &tc.step}, {Pause: &v1alpha1.RolloutPause{}}}, 1, 10), ver)
			w, _ := p.Option(Wait)
			held := "held at step 1 (experiment) until its Experiment is Successful"
			if !strings.Contains(p.Now.Summary, held) || p.Now.WaitsForPerson != tc.person || !strings.Contains(w.Why, tc.waitSays) {
				t.Errorf("%s, %s: if nothing is done: %s (waits for a person %v); wait: %s", tc.name, ver, p.Now.Summary, p.Now.WaitsForPerson, w.Why)
			}
			if tc.person != strings.Contains(p.Now.Summary, "someone must promote") {
				t.Errorf("%s, %s: %s", tc.name, ver, p.Now.Summary)
			}
			for _, k := range []upstream.Key{"rc.experiment-step-done", "sy.indefinite-step-no-deadline"} {
				if _, ok := citedKey(w.Cites, k); !ok {
					t.Errorf("%s, %s: wait does not cite %s: %v", tc.name, ver, k, w.Cites)
				}
			}
		}
	}
}

// A pause without a duration holds the Rollout until someone promotes it,
// and spec.paused holds it (scaling too) until someone clears it: wait
// says nothing moves by itself, not that the controller converges.
func TestWaitHeldAtAnIndefinitePause(t *testing.T) {
	ten := int32(10)
	for _, ver := range upstream.Modeled {
		p := plan(t, updateAt(t, []v1alpha1.CanaryStep{{SetWeight: &ten}, {Pause: &v1alpha1.RolloutPause{}}, {SetWeight: &ten}}, 1, 10), ver)
		w, _ := p.Option(Wait)
		if !p.Now.WaitsForPerson || !strings.Contains(p.Now.Summary, "held at step 1 (pause, no duration) until someone promotes it") || !strings.Contains(w.Why, "nothing moves by itself") {
			t.Errorf("%s: indefinite pause: if nothing is done: %s; wait: %s", ver, p.Now.Summary, w.Why)
		}
		if _, ok := citedKey(w.Cites, "pa.indefinite-needs-promote"); !ok {
			t.Errorf("%s: wait does not cite pa.indefinite-needs-promote: %v", ver, w.Cites)
		}
		paused := updateAt(t, []v1alpha1.CanaryStep{{SetWeight: &ten}, {Pause: &v1alpha1.RolloutPause{}}}, 0, 10)
		paused.Rollout.Spec.Paused = true
		p = plan(t, paused, ver)
		w, _ = p.Option(Wait)
		if !p.Now.WaitsForPerson || p.Now.Phase != "Paused" || !strings.Contains(p.Now.Summary, "held at step 0 while spec.paused is set (a manual pause: no ReplicaSet is scaled)") || !strings.Contains(w.Why, "nothing moves by itself") {
			t.Errorf("%s: spec.paused: if nothing is done (%s): %s; wait: %s", ver, p.Now.Phase, p.Now.Summary, w.Why)
		}
		// Plain promote unpauses (the CLI's spec patch): the steps run on
		// to the indefinite pause (the same traffic as now, so no-effect
		// is right); promote --full unpauses too from v1.9
		// (cli.promote-full-unpause), before it the manual pause holds.
		pr, _ := p.Option(Promote)
		if strings.Contains(pr.Effect.Summary, "spec.paused") || !strings.Contains(pr.Effect.Summary, "held at step 1 (pause, no duration)") {
			t.Errorf("%s: spec.paused: promote is %s (%s): %s", ver, pr.Verdict, pr.Why, pr.Effect.Summary)
		}
		// At the pause step itself, with its pause condition: the CLI's
		// status-first order lets the controller drop controllerPause, so
		// the step pauses again (the lab, every version).
		atPause := updateAt(t, []v1alpha1.CanaryStep{{SetWeight: &ten}, {Pause: &v1alpha1.RolloutPause{}}, {SetWeight: &ten}}, 1, 10)
		atPause.Rollout.Spec.Paused = true
		atPause.Rollout.Status.PauseConditions = []v1alpha1.PauseCondition{{Reason: v1alpha1.PauseReasonCanaryPauseStep}}
		atPause.Rollout.Status.ControllerPause = true
		again, _ := plan(t, atPause, ver).Option(Promote)
		if !strings.Contains(again.Note, "step 1 (a pause) starts again") || !strings.Contains(again.Effect.Summary, "held at step 1 (pause, no duration)") || strings.Contains(again.Effect.Summary, "spec.paused") {
			t.Errorf("%s: promote at a pause step under spec.paused: note %q; %s", ver, again.Note, again.Effect.Summary)
		}
		if _, ok := citedKey(again.Cites, "pa.no-conditions-no-controller-pause"); !ok {
			t.Errorf("%s: promote under spec.paused does not cite pa.no-conditions-no-controller-pause: %v", ver, again.Cites)
		}
		full, _ := p.Option(PromoteFull)
		unpauses := !upstream.At("cli.promote-full-unpause", ver).Absent
		if promoted := full.Effect.FinalStable == "checkout-api-5f6c8d7b9a"; promoted != unpauses {
			t.Errorf("%s: spec.paused: promote --full ends with stable %s (%s); the CLI unpauses: %v", ver, full.Effect.FinalStable, full.Effect.Summary, unpauses)
		}
	}
}

// Undo back to the stable with dynamicStableScale: the controller keeps the
// old canary as the canary destination until the stable is fully available
// (its status weights keep the previous canary's hash), so the canary's
// weight is carried by the old canary's pods, not by the stable's few.
func TestUndoWithDynamicStableScaleKeepsTheOldCanary(t *testing.T) {
	for _, ver := range upstream.Modeled {
		ten := int32(10)
		v := updateAt(t, []v1alpha1.CanaryStep{{SetWeight: &ten}, {Pause: &v1alpha1.RolloutPause{}}}, 1, 10)
		v.Rollout.Spec.Strategy.Canary.DynamicStableScale = true
		for _, rs := range v.ReplicaSets {
			if rs.Name == "checkout-api-6d8f7c9b5d" { // the stable, scaled down by the canary's 2 of 20
				n := int32(18)
				rs.Spec.Replicas = &n
				rs.Status.Replicas, rs.Status.ReadyReplicas, rs.Status.AvailableReplicas = 18, 18, 18
			}
		}
		p := plan(t, v, ver)
		o, _ := p.Option(Undo)
		carried := false
		for _, s := range o.Effect.Serving {
			if s.Weight > 0 {
				carried = true
				if s.Canary != "checkout-api-5f6c8d7b9a" {
					t.Errorf("%s: undo puts %d%% on %s, want the old canary checkout-api-5f6c8d7b9a: %s", ver, s.Weight, s.Canary, o.Effect.Summary)
				}
			}
		}
		if !carried || o.Effect.FinalStable != "checkout-api-6d8f7c9b5d" || o.Effect.FinalWeight != 0 {
			t.Errorf("%s: undo: %s", ver, o.Effect.Summary)
		}
	}
}

// A canary without trafficRouting updated a second time mid-rollout (the
// lab's v1.10.2 state): the sizes name the older revision, undo goes
// stable/others 4/2 → 4/1 → 5/1 → 5/0 and an abort, if the canary's pod
// never turns Ready, scales nothing — both as the v1.7.2 and v1.10.2
// controllers did in the lab.
func TestBasicCanaryWithAnOlderRevision(t *testing.T) {
	for _, ver := range upstream.Modeled {
		p := plan(t, exampletest.View(t, exampletest.BasicReplaced), ver)
		if want := []PodCounts{{1, 4, 1, false}, {1, 4, 0, false}, {2, 4, 0, false}}; !reflect.DeepEqual(p.Now.Pods, want) {
			t.Errorf("%s: if nothing is done: sizes %+v, want %+v", ver, p.Now.Pods, want)
		}
		if !strings.Contains(p.Now.Summary, "canary/stable/older revisions 1/4/1 → 1/4/0 → 2/4/0") ||
			!strings.Contains(p.Now.IfNeverReady, "if app-7977f4bd87's 1 missing pod never turns Ready, scaling stops at canary/stable/older revisions 1/4/1") {
			t.Errorf("%s: if nothing is done: %s / %s", ver, p.Now.Summary, p.Now.IfNeverReady)
		}
		u, _ := p.Option(Undo)
		if want := []PodCounts{{0, 4, 2, true}, {0, 4, 1, true}, {0, 5, 1, true}, {0, 5, 0, true}}; !reflect.DeepEqual(u.Effect.Pods, want) || u.Effect.IfNeverReady != "" {
			t.Errorf("%s: undo: sizes %+v (%s), if never ready %q; want %+v and nothing", ver, u.Effect.Pods, u.Effect.Summary, u.Effect.IfNeverReady, want)
		}
		if !strings.Contains(u.Effect.Summary, "stable/other ReplicaSets 4/2 → 4/1 → 5/1 → 5/0") {
			t.Errorf("%s: undo: %s", ver, u.Effect.Summary)
		}
		a, _ := p.Option(Abort)
		if a.Effect.IfNeverReady != p.Now.IfNeverReady {
			t.Errorf("%s: abort if the canary never turns Ready: %q, want where doing nothing stops", ver, a.Effect.IfNeverReady)
		}
		if _, ok := citedKey(a.Cites, "bc.others-down"); !ok {
			t.Errorf("%s: abort does not cite bc.others-down: %v", ver, a.Cites)
		}
		w, _ := p.Option(Wait)
		if p.Recommended != Wait || !strings.HasPrefix(w.Why, "the controller finishes the current step, then nothing moves by itself") ||
			!strings.HasSuffix(p.Reason, "if the canary's missing pods never turn Ready, undo is the way out that does not wait on them") {
			t.Errorf("%s: recommended %s: %s (wait: %s)", ver, p.Recommended, p.Reason, w.Why)
		}
	}
}

// With progressDeadlineAbort the controller aborts an update whose pods do
// not turn ready by the deadline: "if nothing is done" (which assumes they
// do) says when, and only then; the lab's bug-stale-scale-down-deadline
// scenario checks the moment against the controller. The example is a
// rollback within the window, where the abort lasts only until the canary's
// scale-down, and the rollback starts over (the lab's
// window-deadline-abort): the note says that too.
func TestPlanDeadlineAbort(t *testing.T) {
	edit := func(abort, window, paused bool) func(*unstructured.Unstructured) {
		return func(u *unstructured.Unstructured) {
			if u.GetKind() != "Rollout" {
				return
			}
			_ = unstructured.SetNestedField(u.Object, abort, "spec", "progressDeadlineAbort")
			_ = unstructured.SetNestedField(u.Object, paused, "spec", "paused")
			if !window {
				unstructured.RemoveNestedField(u.Object, "spec", "rollbackWindow")
			}
		}
	}
	for _, ver := range upstream.Modeled {
		p := planAt(t, viewOf(t, exampletest.Incident, edit(true, false, false)), ver)
		want := "if checkout-api-5f6c8d7b9a's 18 missing pods do not turn ready by 2026-08-11T03:22:40Z (in 9m59s; progressDeadlineSeconds 600 without progress), the update is ProgressDeadlineExceeded and the controller aborts it (progressDeadlineAbort): traffic back on the stable checkout-api-6d8f7c9b5d, checkout-api-5f6c8d7b9a scaled down"
		if p.Deadline == nil || p.Deadline.Text != want {
			t.Errorf("%s: deadline %+v\nwant %s", ver, p.Deadline, want)
		} else if _, ok := citedKey(p.Deadline.Cites, "sy.deadline-abort"); !ok {
			t.Errorf("%s: the deadline's abort is not cited: %+v", ver, p.Deadline.Cites)
		}
		p = planAt(t, viewOf(t, exampletest.Incident, edit(true, true, false)), ver)
		want += " — but only until that scale-down, which counts as progress: the window's next pass clears the abort and the rollback starts over, so traffic goes back to checkout-api-5f6c8d7b9a as its pods return and away again at the next deadline, for as long as some stay missing"
		if p.Deadline == nil || p.Deadline.Text != want {
			t.Errorf("%s within the window: deadline %+v\nwant %s", ver, p.Deadline, want)
		} else if _, ok := citedKey(p.Deadline.Cites, "co.updated-change-is-progress"); !ok {
			t.Errorf("%s within the window: the scale-down as progress is not cited: %+v", ver, p.Deadline.Cites)
		}
		for name, e := range map[string]func(*unstructured.Unstructured){
			"without progressDeadlineAbort": edit(false, false, false),
			"under spec.paused":             edit(true, false, true),
		} {
			if p := planAt(t, viewOf(t, exampletest.Incident, e), ver); p.Deadline != nil {
				t.Errorf("%s %s: %s", ver, name, p.Deadline.Text)
			}
		}
	}
}

// One stable pod that never turns Ready again (the lab's crash-loop stage)
// while a canary without trafficRouting, at maxSurge 1 and maxUnavailable
// 0, is paused at canary/stable 2/4: an abort stops at 2/4 and an undo at
// stable/others 4/2, while a promotion scales the stable down, that pod
// first. The lab showed each: v1.7.2's abort scaled nothing in a minute,
// v1.10.2's undo nothing in minutes, v1.10.2's promote --full finished in
// 15 s. Fifteen seconds after the pod turned unready that is a what-if;
// minutes later it is what to expect, and deleting the pod comes first.
func TestHungStablePod(t *testing.T) {
	for name, ver := range map[string]upstream.Version{exampletest.LabPausedStableHung: "v1.10.2", exampletest.LabPausedStableHung17: "v1.7.2"} {
		v := exampletest.View(t, name)
		hung := ""
		for _, p := range v.Workload.Pods {
			if p.Labels["rollouts-pod-template-hash"] == v.Rollout.Status.StableRS && !podReady(p) {
				hung = p.Name
			}
		}
		p := plan(t, v, ver)
		for a, stop := range map[Action]string{Abort: "scaling stops at canary/stable 2/4", Undo: "scaling stops at stable/other ReplicaSets 4/2", PromoteFull: "", Promote: "", Wait: ""} {
			o, _ := p.Option(a)
			if stop == "" && o.Effect.IfNeverReady != "" || stop != "" && !strings.Contains(o.Effect.IfNeverReady, "1 missing pod never turns Ready, "+stop) {
				t.Errorf("%s %s: %s if never ready %q, want %q", name, ver, a, o.Effect.IfNeverReady, stop)
			}
		}
		if p.Hung != nil || strings.Contains(p.Reason, "delete") {
			t.Errorf("%s: 15 s unready is not hung: %+v, %s", name, p.Hung, p.Reason)
		}
		v.Now = v.Now.Add(3 * time.Minute)
		p = plan(t, v, ver)
		h := p.Hung
		if h == nil || !reflect.DeepEqual(h.Pods, []string{hung}) || !strings.Contains(h.Text, "undo and abort stop on it; promote-full, promote and skip do not") {
			t.Fatalf("%s: hung %s for 3 min: note %+v", name, hung, h)
		}
		if want := fmt.Sprintf("first delete the hung pod (`kubectl delete pod -n %s %s`)", v.Rollout.Namespace, hung); p.Recommended != Wait || !strings.HasPrefix(p.Reason, want) {
			t.Errorf("%s: recommended %s: %s; want wait, starting %q", name, p.Recommended, p.Reason, want)
		}
	}
	// After the undo: nothing moves, doing nothing included.
	v := exampletest.View(t, exampletest.LabUndoStableHung)
	p := plan(t, v, "v1.10.2")
	if !strings.Contains(p.Now.IfNeverReady, "app-65bd9c766b's 1 missing pod never turns Ready, scaling stops at stable/other ReplicaSets 4/2") ||
		p.Hung == nil || !strings.Contains(p.Hung.Text, "doing nothing and abort stop on it") || !strings.HasPrefix(p.Reason, "first delete the hung pod (`kubectl delete pod -n c10 app-65bd9c766b-f5blw`)") {
		t.Errorf("after the undo: %s / %+v / %s", p.Now.IfNeverReady, p.Hung, p.Reason)
	}
	// A minute into it, not hung yet: the what-if names the way out that
	// does not wait on the pod, and its cost — undo now redeploys the
	// revision the last undo left.
	v.Now = v.Now.Add(-3 * time.Minute)
	if p = plan(t, v, "v1.10.2"); p.Hung != nil || !strings.HasSuffix(p.Reason, "if the missing pods never turn Ready, undo is the way out that does not wait on them, at a cost: it deploys revision 2, which is not the stable revision") {
		t.Errorf("after the undo, a minute in: %+v / %s", p.Hung, p.Reason)
	}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// With trafficRouting the stable's available pods gate every weight on
// versions with the stable availability check: one hung stable pod (the
// lab, an Istio canary of 5 at 20%) kept v1.10.2's aborted canary at 20%
// and, after an undo, left the router at 80/20 with the Rollout Healthy
// (both Services on the stable's pods by then); v1.7.2's abort wrote 0%.
// Promoting writes weights the stable's pods can carry, so it does not
// wait on the pod.
func TestHungStablePodTrafficRouted(t *testing.T) {
	p := plan(t, exampletest.View(t, exampletest.LabIstioStableHung), "v1.10.2")
	for a, want := range map[Action]string{
		Abort:       "if app-65bd9c766b's 1 missing pod never turns Ready, the router keeps 20% on the canary Service, which the abort points at the stable app-65bd9c766b's pods (each pass points it back at the canary for a moment: argo-rollouts #3078), so nearly all traffic is on them: the controller writes no weight that leaves the stable more traffic than its available pods carry",
		Undo:        "if app-65bd9c766b's 1 missing pod never turns Ready, the router keeps 20% on the canary Service, which by then selects the stable app-65bd9c766b's pods too: every request reaches them, but the Rollout reads Healthy with the router not put back to 0%",
		PromoteFull: "", Promote: "", Wait: "",
	} {
		o, _ := p.Option(a)
		if o.Effect.IfNeverReady != want {
			t.Errorf("v1.10.2 %s: if never ready %q, want %q", a, o.Effect.IfNeverReady, want)
		}
		if _, ok := citedKey(o.Cites, "tr.stable-check-call"); want != "" && !ok {
			t.Errorf("v1.10.2 %s does not cite the stable availability check: %v", a, o.Cites)
		}
		if _, ok := citedKey(o.Cites, "sv.canary-svc-target"); a == Undo && !ok {
			t.Errorf("v1.10.2 undo says where the canary Service points without citing it: %v", o.Cites)
		}
	}
	v := exampletest.View(t, exampletest.LabIstioStableHung)
	v.Now = v.Now.Add(3 * time.Minute)
	if p = plan(t, v, "v1.10.2"); p.Hung == nil || !strings.Contains(p.Hung.Text, "undo and abort stop on it; promote-full") ||
		!strings.HasPrefix(p.Reason, "first delete the hung pod (`kubectl delete pod -n i10 app-65bd9c766b-") {
		t.Errorf("v1.10.2, the pod hung 3 min: %+v / %s", p.Hung, p.Reason)
	}
	p = plan(t, exampletest.View(t, exampletest.LabIstioStableHung17), "v1.7.2")
	for _, o := range p.Options {
		if o.Effect.IfNeverReady != "" {
			t.Errorf("v1.7.2 %s: %q; this version writes the weight without the check", o.Action, o.Effect.IfNeverReady)
		}
	}
}

// A restart requested on the lab's paused canary with the hung stable pod:
// the plan carries diagnose's word on it — RD172 while the pod may still
// come back, RD173 once it has hung — and says no way out ends it; the
// delete the hung-pod note puts first is the restart's fix too, so the
// reason does not repeat it.
func TestPlanCarriesTheRestart(t *testing.T) {
	v := exampletest.View(t, exampletest.LabPausedStableHung)
	at := metav1.NewTime(v.Now.Add(-10 * time.Second))
	v.Rollout.Spec.RestartAt = &at
	p := plan(t, v, "v1.10.2")
	if r := p.Restart; r == nil || r.Rule != "RD172" || r.Stalled || !strings.Contains(r.Text, "it waits for app-65bd9c766b-6f9km to turn available") {
		t.Errorf("15 s unready: restart %+v", r)
	}
	v.Now = v.Now.Add(3 * time.Minute)
	p = plan(t, v, "v1.10.2")
	r := p.Restart
	if r == nil || r.Rule != "RD173" || !r.Stalled || !strings.Contains(r.Fix, "kubectl delete pod -n c11 app-65bd9c766b-6f9km") {
		t.Fatalf("3 min unready: restart %+v", r)
	}
	if _, ok := citedKey(r.Cites, "sy.update-keeps-restart"); !ok {
		t.Errorf("the restart note does not cite why no way out ends it: %v", r.Cites)
	}
	if strings.Count(p.Reason, "kubectl delete pod") != 1 || !strings.HasPrefix(p.Reason, "first delete the hung pod") {
		t.Errorf("reason: %s", p.Reason)
	}
}

// With dynamicStableScale a hung stable pod holds the weight on both lab
// versions (v1.7.2 and v1.10.2 kept 20% after an abort, and an undo then
// read Healthy at 80/20 with the canary Service on the aborted canary): the
// abort's own weight, not the stable availability check that v1.7.2 lacks.
func TestHungStablePodDynamicStableScale(t *testing.T) {
	for _, c := range []struct {
		file   string
		ver    upstream.Version
		canary string
	}{
		{exampletest.LabDSSAbortedStableHung17, "v1.7.2", "app-6787f8d5c"},
		{exampletest.LabDSSAbortedStableHung, "v1.10.2", "app-84454fffb5"},
	} {
		v := exampletest.View(t, c.file)
		v.Now = v.Now.Add(3 * time.Minute)
		p := plan(t, v, c.ver)
		w, _ := p.Option(Wait)
		if !strings.HasSuffix(w.Effect.IfNeverReady, "the weight stays at 20% on "+c.canary+": with dynamicStableScale an aborted canary keeps the share the stable's available pods cannot take") {
			t.Errorf("%s wait: %q", c.ver, w.Effect.IfNeverReady)
		}
		// v1.7.2 scales the stable to 5 (4 available carry 80%); v1.10.2
		// sizes it for the abort's weight, 4 pods, 3 of them available.
		switch {
		case c.ver == "v1.7.2" && (w.Verdict != Safe || !strings.Contains(w.Why, "traffic goes back to the stable as its missing pods turn available")):
			t.Errorf("%s wait: %s %s", c.ver, w.Verdict, w.Why)
		case c.ver == "v1.10.2" && (w.Verdict != Harmful || w.Why != "doing nothing leaves 80% of traffic on the stable app-6d7d6d5fd8's 3 available pods (that share needs 4)"):
			t.Errorf("%s wait: %s %s", c.ver, w.Verdict, w.Why)
		}
		u, _ := p.Option(Undo)
		if !strings.Contains(u.Effect.IfNeverReady, "the Rollout reads Healthy while the router keeps 20% on the canary Service, which still selects "+c.canary+"'s pods") {
			t.Errorf("%s undo: %q", c.ver, u.Effect.IfNeverReady)
		}
		for _, k := range []upstream.Key{"tr.branch-rollback-to-stable", "sv.dss-rollback-keeps-canary-svc"} {
			if _, ok := citedKey(u.Cites, k); !ok {
				t.Errorf("%s undo does not cite %s: %v", c.ver, k, u.Cites)
			}
		}
		if _, ok := citedKey(w.Cites, "tr.stable-check-call"); ok {
			t.Errorf("%s wait cites the stable availability check for dynamicStableScale's weight", c.ver)
		}
		_, sized := citedKey(w.Cites, "uc.desired-canary-weight-abort-dss")
		if _, ok := citedKey(w.Cites, "tr.abort-weight-formula"); !ok || sized != (c.ver == "v1.10.2") {
			t.Errorf("%s wait cites %v", c.ver, w.Cites)
		}
		if p.Hung == nil || !strings.HasPrefix(p.Reason, "first delete the hung pod") {
			t.Errorf("%s: hung %+v, reason %s", c.ver, p.Hung, p.Reason)
		}
	}
}

// The lab (v1.10.2, #4841): aborted with dynamicStableScale and
// minPodsPerReplicaSet 2, the stable complete, 20% kept on the canary.
// Doing nothing leaves that traffic on the aborted revision for good: not
// "traffic on the stable"; undo takes it to 0 (measured).
func TestAbortWeightKeptByMinPods(t *testing.T) {
	p := plan(t, exampletest.View(t, exampletest.LabDSSMinPodsAborted), "v1.10.2")
	w, _ := p.Option(Wait)
	if w.Verdict != SafeWithCost || !strings.HasPrefix(w.Why, "the Rollout stays aborted with 20% of traffic still on the aborted app-84454fffb5") {
		t.Errorf("wait: %s %s", w.Verdict, w.Why)
	}
	for _, k := range []upstream.Key{"tr.abort-weight-formula", "uc.desired-canary-weight-abort-dss"} {
		if _, ok := citedKey(w.Cites, k); !ok {
			t.Errorf("wait does not cite %s: %v", k, w.Cites)
		}
	}
	if u, _ := p.Option(Undo); p.Recommended != Undo || u.Effect.FinalWeight != 0 {
		t.Errorf("recommended %s (%s); undo ends at %d%%", p.Recommended, p.Reason, u.Effect.FinalWeight)
	}
}

// A stable short of pods while the canary takes its share (the lab: an
// Istio canary of 5 paused at 20%, the stable with 3 available pods — two
// of 5 hung, or with dynamicStableScale one of 4). Measured on v1.7.2 and
// v1.10.2: an abort put 100% on those 3 pods on v1.7.2 without
// dynamicStableScale; v1.10.2 kept the router at 80/20 (the stable
// availability check), but the abort points the canary Service at the
// stable's pods, and back at the canary's for a moment on each pass
// (#3078: on the stable 64–83% of the time in the e2e), so up to 100% is
// on them; with dynamicStableScale v1.10.2 kept 80% on a stable sized for
// the abort's weight, the canary Service still on the canary;
// an undo without it moved the canary Service to the stable's pods at once
// (100% on 3); a promote to 60% ended it, the ReplicaSet deleting the hung
// pod first when it scaled the stable down. Once the pods have hung,
// doing nothing is harmful and the delete comes first.
func TestStableShortage(t *testing.T) {
	for _, c := range []struct {
		file        string
		ver         upstream.Version
		stable      string
		abort, undo string // "" when the way out ends the shortage
		pods        string
	}{
		{exampletest.LabIstioPausedStableShort17, "v1.7.2", "app-55594bfb", "100% of traffic on the stable app-55594bfb's 3 available pods (that share needs 5)", "100% of traffic on the stable app-55594bfb's 3 available pods (that share needs 5)", "hung pods"},
		{exampletest.LabIstioPausedStableShort, "v1.10.2", "app-757dcfcc6d", "up to 100% of traffic on the stable app-757dcfcc6d's 3 available pods (that share needs 5; after the abort the canary Service selects them too, flipping back to the canary on each pass: argo-rollouts #3078)", "100% of traffic on the stable app-757dcfcc6d's 3 available pods (that share needs 5)", "hung pods"},
		{exampletest.LabDSSPausedStableHung, "v1.10.2", "app-757dcfcc6d", "80% of traffic on the stable app-757dcfcc6d's 3 available pods (that share needs 4)", "", "hung pod"},
		{exampletest.LabDSSPausedStableHung17, "v1.7.2", "app-66c7799588", "", "", "hung pod"},
	} {
		v := exampletest.View(t, c.file)
		v.Now = v.Now.Add(3 * time.Minute)
		p := plan(t, v, c.ver)
		short := "80% of traffic on the stable " + c.stable + "'s 3 available pods (that share needs 4)"
		if w, _ := p.Option(Wait); w.Verdict != Harmful || w.Why != "doing nothing leaves "+short {
			t.Errorf("%s %s wait: %s %s", c.file, c.ver, w.Verdict, w.Why)
		}
		for a, want := range map[Action]string{Abort: c.abort, Undo: c.undo, Promote: ""} {
			o, _ := p.Option(a)
			switch {
			case want == "" && (o.Verdict == Harmful || !strings.HasPrefix(o.Why, "it ends the stable's shortage; ")):
				t.Errorf("%s %s %s: %s %s; want it to end the shortage", c.file, c.ver, a, o.Verdict, o.Why)
			case want != "" && (o.Verdict != Harmful || o.Why != "it puts or keeps "+want):
				t.Errorf("%s %s %s: %s %s; want harmful, %s", c.file, c.ver, a, o.Verdict, o.Why, want)
			}
		}
		a, _ := p.Option(Abort)
		u, _ := p.Option(Undo)
		if k := map[bool]upstream.Key{true: "tr.abort-weight-formula", false: "tr.stable-check-call"}[v.Rollout.Spec.Strategy.Canary.DynamicStableScale]; c.abort != "" && c.ver == "v1.10.2" {
			if _, ok := citedKey(a.Cites, k); !ok {
				t.Errorf("%s %s abort does not cite %s: %v", c.file, c.ver, k, a.Cites)
			}
		}
		if _, ok := citedKey(u.Cites, "sv.canary-svc-target"); ok != (c.undo != "") {
			t.Errorf("%s %s undo cites sv.canary-svc-target: %v, want %v", c.file, c.ver, ok, c.undo != "")
		}
		if p.Hung == nil || !strings.Contains(p.Hung.Text, "doing nothing leaves "+short+" until") ||
			!strings.HasPrefix(p.Reason, "first delete the "+c.pods) || !strings.Contains(p.Reason, "that alone ends the stable's shortage — or ") {
			t.Errorf("%s %s: hung %+v; reason %s", c.file, c.ver, p.Hung, p.Reason)
		}
	}
	// The watch after a promote ends where the lab's v1.10.2 did: 60%, the
	// stable still short of its two hung pods (promote, then 5/3), Paused.
	v := exampletest.View(t, exampletest.LabIstioPausedStableShort)
	v.Now = v.Now.Add(3 * time.Minute)
	pr, _ := plan(t, v, "v1.10.2").Option(Promote)
	end := Observation{Routed: true, CanaryWeight: 60, Phase: "Paused", Stable: "app-757dcfcc6d", ShortRS: "app-757dcfcc6d", ShortBy: 2}
	if !end.Reached(pr.Effect) {
		t.Errorf("the promote's end with the hung pods is not reached: %+v (%+v)", end, pr.Effect.endShort)
	}
	if end.ShortBy = 1; end.Reached(pr.Effect) {
		t.Errorf("one pod short reached the promote's end: %+v", end)
	}
	// A minute after the hang, before the pods count as hung: doing nothing
	// is safe (they may come back), but an abort on v1.7.2 and an undo
	// still put all the traffic on the 3 pods at once.
	p := plan(t, exampletest.View(t, exampletest.LabIstioPausedStableShort17), "v1.7.2")
	w, _ := p.Option(Wait)
	a, _ := p.Option(Abort)
	u, _ := p.Option(Undo)
	if w.Verdict != Safe || a.Verdict != Harmful || u.Verdict != Harmful || p.Hung != nil || a.Effect.StableExposure == nil || a.Effect.StableExposure.Needs != 5 {
		t.Errorf("before hung: wait %s, abort %s %+v, undo %s, hung %+v", w.Verdict, a.Verdict, a.Effect.StableExposure, u.Verdict, p.Hung)
	}
}

// The lab (v1.10.2): undone without dynamicStableScale with two stable pods
// hung, the router still at 20% while the canary Service selects the
// stable's pods: all traffic on 3 of 5. Every way out is harmful; the
// delete still comes first, the least harmful says how long it lasts, and
// the out-of-band router edit (weights back to the stable) is not offered:
// it would add to the stable's shortage.
func TestStableShortageEveryWayHarmful(t *testing.T) {
	p := plan(t, exampletest.View(t, exampletest.LabIstioUndoneStableShort), "v1.10.2")
	for _, want := range []string{
		"first delete the hung pods (`kubectl delete pod -n n-wait-v1102 app-757dcfcc6d-595sz app-757dcfcc6d-99c7f`)",
		"that alone ends the stable's shortage — until then, every way out is harmful; the least harmful is to wait: doing nothing leaves 100% of traffic on the stable app-757dcfcc6d's 3 available pods (that share needs 5)",
		"It lasts until the stable app-757dcfcc6d has 5 pods available, and app-757dcfcc6d-595sz has not been Ready for minutes",
	} {
		if !strings.Contains(p.Reason, want) {
			t.Errorf("reason %q\nwant %q", p.Reason, want)
		}
	}
	if !p.AllHarmful || p.Recommended != Wait || strings.Contains(p.Reason, "Outside the controller's verbs") || len(p.ReasonCites) != 0 {
		t.Errorf("all harmful %v, recommended %s, reason cites %v: %s", p.AllHarmful, p.Recommended, p.ReasonCites, p.Reason)
	}
}

// scaledTo30 is the example's update at the pause after setWeight 10 (the
// status's weight: no router objects), its canary at 3 of 3 — enough for
// 10% of 30 — and spec.replicas raised to 30 while both ReplicaSets were
// last sized for 20: a scale the controller has not applied yet.
func scaledTo30(t *testing.T) *snapshot.View {
	ten, thirty := int32(10), int32(30)
	v := updateAt(t, []v1alpha1.CanaryStep{{SetWeight: &ten}, {Pause: &v1alpha1.RolloutPause{}}}, 1, 10)
	v.Workload.Router = nil
	v.Rollout.Spec.Replicas = &thirty
	for _, rs := range v.ReplicaSets {
		if rs.Annotations == nil {
			rs.Annotations = map[string]string{}
		}
		rs.Annotations["rollout.argoproj.io/desired-replicas"] = "20"
		if rs.Name == "checkout-api-5f6c8d7b9a" {
			three := int32(3)
			rs.Spec.Replicas = &three
			rs.Status.Replicas, rs.Status.ReadyReplicas, rs.Status.AvailableReplicas = 3, 3, 3
		}
	}
	return v
}

// A scale (an HPA's) of a Rollout held by spec.paused is never applied,
// and every pass only syncs replicas (#4261): an abort then moves no
// traffic, while promote, which clears spec.paused, lets the scale and
// the steps go on (the lab, every version: e2e bug-scaled-paused).
func TestScaledWhilePaused(t *testing.T) {
	for _, ver := range upstream.Modeled {
		v := scaledTo30(t)
		v.Rollout.Spec.Paused = true
		p := plan(t, v, ver)
		ab, _ := p.Option(Abort)
		pr, _ := p.Option(Promote)
		if _, cited := citedKey(ab.Cites, "se.halt-skips-sync"); ab.Verdict != NoEffect || ab.Effect.FirstWeight != 10 || !cited || !strings.Contains(ab.Why, "every pass only syncs replicas, which the halt skips") {
			t.Errorf("%s: abort of a paused Rollout with a scale pending is %s (%s), first weight %d; want no-effect at 10%%\n  %s", ver, ab.Verdict, ab.Why, ab.Effect.FirstWeight, ab.Effect.Summary)
		}
		if pr.Verdict == NoEffect {
			t.Errorf("%s: promote (which unpauses) is no-effect: %s\n  %s", ver, pr.Why, pr.Effect.Summary)
		}
		// Aborted as well: the halt comes first, not RD184's annotate
		// (the replica sync that the annotate would end does not run).
		v.Rollout.Status.Abort = true
		if p := plan(t, v, ver); strings.HasPrefix(p.Reason, "first end the scaling event") {
			t.Errorf("%s: paused, aborted, a scale pending: %s", ver, p.Reason)
		}
	}
}

// An abort that meets a scale of the canary (PR #4919): before v1.10 every
// pass only syncs replicas until the canary's abort scale-down deadline, so
// doing nothing leaves the weight on the aborted canary while the stable
// grows, and on it still through the pass that scales it to 0 at the
// deadline; the pass after moves it back. v1.10.2 syncs the canary's count
// and moves the weight back once the stable carries it (the lab: e2e
// bug-scaled-paused).
func TestAbortMeetsScale(t *testing.T) {
	for _, ver := range upstream.Modeled {
		v := scaledTo30(t)
		v.Rollout.Status.Abort = true
		pl := plan(t, v, ver)
		w, _ := pl.Option(Wait)
		want := int32(0)
		if upstream.At("rs.abort-delay-syncs-annotation", ver).Absent {
			want = 10
		}
		if w.Effect.FinalWeight != 0 || w.Effect.DeadlineWeight != want {
			t.Errorf("%s: doing nothing ends at %d%%, %d%% left through the deadline's pass; want 0%%, %d%%: %s", ver, w.Effect.FinalWeight, w.Effect.DeadlineWeight, want, w.Effect.Summary)
		}
		moment := strings.Contains(w.Why, "until the stable has all 30 pods available and the canary's abort scale-down deadline (abortScaleDownDelaySeconds later) has passed; the pass that then scales checkout-api-5f6c8d7b9a to 0 writes no weight, so for a moment 10% goes to pods being deleted")
		if moment != (want > 0) || (w.Verdict == SafeWithCost) != (want > 0) {
			t.Errorf("%s: wait %s: %s; want the deadline's pass said: %v", ver, w.Verdict, w.Why, want > 0)
		}
		if want > 0 && !slices.ContainsFunc(w.Cites, func(c upstream.Cite) bool { return c.Key == "rs.abort-delay-deadline-passed" }) {
			t.Errorf("%s: wait cites %v, without the deadline's scale-down", ver, w.Cites)
		}
		first := strings.HasPrefix(pl.Reason, "first end the scaling event that holds the abort: kubectl annotate rs checkout-api-5f6c8d7b9a -n shop rollout.argoproj.io/desired-replicas=30 --overwrite")
		if first != (want > 0) {
			t.Errorf("%s: the recommendation %q; want the annotate first: %v", ver, pl.Reason, want > 0)
		}
	}
}
