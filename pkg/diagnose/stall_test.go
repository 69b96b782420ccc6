package diagnose

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// The example's ReplicaSets: the canary (revision 3, its pod not Ready),
// the older revision 2 with one ready pod, the stable (revision 1, 4/4).
const (
	stallCanary = "app-7977f4bd87"
	stallOlder  = "app-5998b8ffff"
)

// diagnoseReplaced diagnoses the replaced basic canary (the lab's v1.10.2
// state) after edit, on every object (each edit checks the kind it wants),
// with the extra objects added.
func diagnoseReplaced(t *testing.T, ver upstream.Version, edit func(*unstructured.Unstructured), extra ...*unstructured.Unstructured) *Report {
	t.Helper()
	objs, hdr := exampletest.Decode(t, exampletest.BasicReplaced)
	for _, o := range objs {
		if edit != nil {
			edit(o)
		}
	}
	objs = append(objs, extra...)
	cv := model.ControllerVersion{Assumed: ver, Source: model.SourceFlag, Exact: true}
	return Run(exampletest.ViewOf(t, snapshot.New(*hdr, objs)), cv, Options{})
}

func onKind(kind, name string, edit func(*unstructured.Unstructured)) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		if u.GetKind() == kind && (name == "" || u.GetName() == name) {
			edit(u)
		}
	}
}

// canaryReady makes the canary's pod available.
var canaryReady = onKind("ReplicaSet", stallCanary, both(set([]string{"status", "readyReplicas"}, int64(1)), set([]string{"status", "availableReplicas"}, int64(1))))

var stallCases = []struct {
	name  string
	edit  func(*unstructured.Unstructured)
	fires bool
	sev   rules.Severity
	says  string
}{
	{name: "example: the older revision holds the room, the canary's pod not Ready", fires: true, sev: rules.Warning,
		says: "nothing scales until a pod of the canary app-7977f4bd87 turns Ready (0 of 1 available): 6 pods exist (replicas 5 + maxSurge 1) and 5 are available (replicas 5 − maxUnavailable 0); the older revision app-5998b8ffff (rev 2, 1 ready) keeps taking requests (20% of the ready pods)"},
	// The lab: an abort in this state scaled nothing in minutes (v1.7.2, v1.10.2).
	{name: "aborted", edit: onKind("Rollout", "", set([]string{"status", "abort"}, true)), fires: true, sev: rules.Critical,
		says: "the abort cannot finish until a pod of the canary app-7977f4bd87 turns Ready (0 of 1 available): 6 pods exist (replicas 5 + maxSurge 1) and 5 are available (replicas 5 − maxUnavailable 0), so the stable cannot grow back to 5 nor the canary go to 0"},
	{name: "the canary's pod Ready: the older revision goes down next", edit: canaryReady},
	{name: "maxUnavailable 1 leaves room", edit: onKind("Rollout", "", set([]string{"spec", "strategy", "canary", "maxUnavailable"}, int64(1)))},
	{name: "maxSurge 2 leaves room", edit: onKind("Rollout", "", set([]string{"spec", "strategy", "canary", "maxSurge"}, int64(2)))},
	{name: "spec.paused halts scaling on purpose", edit: onKind("Rollout", "", set([]string{"spec", "paused"}, true))},
}

func TestBasicStall(t *testing.T) {
	for _, ver := range upstream.Modeled {
		for _, c := range stallCases {
			r := diagnoseReplaced(t, ver, c.edit)
			f := findingOf(r, "RD167")
			if (f != nil) != c.fires {
				t.Errorf("%s %s: RD167 fires=%v, want %v; findings %+v", ver, c.name, f != nil, c.fires, r.Findings)
				continue
			}
			if f == nil {
				continue
			}
			if f.Severity != c.sev || !strings.Contains(f.Message, c.says) {
				t.Errorf("%s %s: RD167 %s %q, want %s and %q", ver, c.name, f.Severity, f.Message, c.sev, c.says)
			}
			for _, k := range []upstream.Key{"bc.older-first", "bc.others-min-available"} {
				if _, ok := cited(*f, k); !ok {
					t.Errorf("%s %s: RD167 does not cite %s", ver, c.name, k)
				}
			}
		}
	}
}

// The pod share names the older revision's pods, the next pass's move for
// them, and why nothing moves.
func TestPodShareOlderRevision(t *testing.T) {
	for _, ver := range upstream.Modeled {
		p := diagnoseReplaced(t, ver, nil).PodShare
		if p == nil || p.CanaryReady != 0 || p.OtherReady != 5 || p.OlderReady != 1 || len(p.OlderMoves) != 0 ||
			p.Waits != "nothing scales until another pod is available: 6 pods exist and maxSurge 1 allows no more; 5 are available and maxUnavailable 0 allows no fewer" {
			t.Errorf("%s: pod share %+v", ver, p)
		}
		// Once the canary's pod is available, the older revision goes down
		// first (the lab: 1/4/1 → 1/4/0 → 2/4/0).
		p = diagnoseReplaced(t, ver, canaryReady).PodShare
		want := []RSMove{{Name: stallOlder, Revision: "2", From: 1, To: 0}}
		if p == nil || p.Waits != "" || !reflect.DeepEqual(p.OlderMoves, want) || p.NextCanary != 1 || p.NextStable != 4 {
			t.Errorf("%s: with the canary's pod Ready: pod share %+v, want older moves %+v", ver, p, want)
		}
		// A manual pause or an InconclusiveAnalysis pause halts the
		// scaling: the next pass moves nothing, and says why.
		for edit, says := range map[string]string{
			"spec.paused":     "nothing scales while spec.paused is set (a manual pause: plain promote clears it)",
			"pauseConditions": "nothing scales while the InconclusiveAnalysis pause holds (promote or abort ends it)",
		} {
			e := set([]string{"spec", "paused"}, true)
			if edit == "pauseConditions" {
				e = set([]string{"status", "pauseConditions"}, []interface{}{map[string]interface{}{"reason": "InconclusiveAnalysisRun", "startTime": "2026-12-07T00:34:00Z"}})
			}
			p = diagnoseReplaced(t, ver, both(canaryReady, onKind("Rollout", "", e))).PodShare
			if p == nil || p.Waits != says || len(p.OlderMoves) != 0 {
				t.Errorf("%s: %s: pod share %+v, want %q and no move", ver, edit, p, says)
			}
		}
	}
}

// RD104 says where requests are for a canary without trafficRouting: not
// "back on stable" while other pods are ready.
func TestAbortedBasicCanaryWords(t *testing.T) {
	r := diagnoseReplaced(t, "v1.10.2", onKind("Rollout", "", set([]string{"status", "abort"}, true)))
	f := finding(t, r, "RD104")
	if want := "aborted: the controller scales the canary to 0 and the stable back to 5 (no trafficRouting: requests follow ready pods, 1 of the 5 ready pods is not the stable's yet)"; !strings.HasPrefix(f.Message, want) {
		t.Errorf("RD104 %q, want it to start %q", f.Message, want)
	}
}

// The lab's hung stable pod (see exampletest.LabPausedStableHung): paused,
// nothing is due to scale; aborted, the abort cannot finish (v1.7.2 scaled
// nothing in a minute); after an undo (v1.10.2), the stable cannot grow.
// RD167 names the stable and the pod to delete, not an undo.
func TestBasicStallOnTheStable(t *testing.T) {
	run := func(name string, ver upstream.Version, edit func(*snapshot.View)) *Report {
		v := exampletest.View(t, name)
		if edit != nil {
			edit(v)
		}
		return Run(v, model.ControllerVersion{Assumed: ver, Source: model.SourceFlag, Exact: true}, Options{})
	}
	if f := findingOf(run(exampletest.LabPausedStableHung, "v1.10.2", nil), "RD167"); f != nil {
		t.Errorf("paused: RD167 %s", f.Message)
	}
	abort := func(v *snapshot.View) { v.Rollout.Status.Abort = true; v.Rollout.Status.PauseConditions = nil }
	for name, ver := range map[string]upstream.Version{exampletest.LabPausedStableHung: "v1.10.2", exampletest.LabPausedStableHung17: "v1.7.2"} {
		f := findingOf(run(name, ver, abort), "RD167")
		if f == nil || f.Severity != rules.Critical || !strings.Contains(f.Message, "the abort cannot finish until a pod of the stable app-65") ||
			!strings.Contains(f.Message, "turns Ready (3 of 4 available): 6 pods exist (replicas 5 + maxSurge 1) and 5 are available (replicas 5 − maxUnavailable 0)") ||
			!strings.HasPrefix(f.Remediation, "Wait for app-65") || !strings.Contains(f.Remediation, "may still be starting. If it never does (a hung process, a probe that never passes again), delete it (`kubectl delete pod -n c1") || !strings.Contains(f.Remediation, "Or promote") {
			t.Errorf("%s aborted: RD167 %+v", name, f)
		} else if _, ok := cited(*f, "bc.stable-first"); !ok {
			t.Errorf("%s aborted: RD167's remedy promotes, without citing that a pass scales the stable first", name)
		}
	}
	f := findingOf(run(exampletest.LabUndoStableHung, "v1.10.2", nil), "RD167")
	if f == nil || !strings.HasPrefix(f.Message, "the stable app-65bd9c766b cannot grow to 5 nor the other ReplicaSets go to 0 until a pod of the stable app-65bd9c766b turns Ready (3 of 4 available)") ||
		!strings.HasPrefix(f.Remediation, "Delete the hung pod, not Ready for over two minutes (`kubectl delete pod -n c10 app-65bd9c766b-f5blw`)") || !strings.Contains(f.Remediation, "Abort and undo do not help") {
		t.Errorf("after the undo: RD167 %+v", f)
	}
	// The stable already at spec.replicas: only the other ReplicaSet is
	// left to go, and it cannot.
	f = findingOf(run(exampletest.LabUndoStableHung, "v1.10.2", func(v *snapshot.View) {
		for _, rs := range v.ReplicaSets {
			if rs.Name == "app-65bd9c766b" {
				five := int32(5)
				rs.Spec.Replicas = &five
			}
		}
	}), "RD167")
	if f == nil || !strings.HasPrefix(f.Message, "the other ReplicaSets cannot go to 0 until a pod of the stable app-65bd9c766b turns Ready (3 of 5 available)") {
		t.Errorf("after the undo, the stable at 5: RD167 %+v", f)
	}
}

// An aborted Istio canary whose stable has a hung pod (the lab, v1.10.2:
// the router kept 20% on the canary Service for minutes): RD104 must not
// say traffic is back on stable, says what holds it, and that the abort
// points that Service at the stable's pods; v1.7.2 writes 0% regardless.
func TestAbortHeldByTheStable(t *testing.T) {
	for name, ver := range map[string]upstream.Version{exampletest.LabIstioStableHung: "v1.10.2", exampletest.LabIstioStableHung17: "v1.7.2"} {
		v := exampletest.View(t, name)
		v.Rollout.Status.Abort, v.Rollout.Status.PauseConditions = true, nil
		r := Run(v, model.ControllerVersion{Assumed: ver, Source: model.SourceFlag, Exact: true}, Options{})
		f := findingOf(r, "RD104")
		held := f != nil && strings.HasPrefix(f.Message, "aborted, but the router still sends 20% to the canary Service app-canary, and the controller does not write 0% while stable app-65")
		if held != (ver == "v1.10.2") {
			t.Errorf("%s: RD104 %+v; want it held: %v", ver, f, ver == "v1.10.2")
		}
		if _, ok := cited(*f, "tr.stable-check-call"); held && !ok {
			t.Errorf("%s: RD104 does not cite the stable availability check", ver)
		}
	}
}
