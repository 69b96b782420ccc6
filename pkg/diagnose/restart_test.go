package diagnose

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// The replaced canary (examples/basic-canary-replaced.yaml, read at
// 00:34:08): 5 replicas, maxSurge 1 and maxUnavailable 0, so the restart
// evicts 1 at a time while more than 5 of the 6 pods its ReplicaSets ask for
// are available. The stable's 4 pods were created at 00:33:14, revision 2's
// ready pod at 00:33:25, and revision 3's pod, not Ready, at 00:33:42.
const (
	restartNew    = "app-7977f4bd87-lml5f" // revision 3, not Ready
	restartMiddle = "app-5998b8ffff-9wwfn" // revision 2, Ready
	restartStable = "app-65bd9c766b-bwnff" // one of the stable's 4
)

func restartAt(at string) func(*unstructured.Unstructured) {
	return onKind("Rollout", "", set([]string{"spec", "restartAt"}, at))
}

func podCreated(name, at string) func(*unstructured.Unstructured) {
	return onKind("Pod", name, set([]string{"metadata", "creationTimestamp"}, at))
}

// podTurnsReady makes revision 3's pod Ready (at 00:33:50).
var podTurnsReady = onKind("Pod", restartNew, func(u *unstructured.Unstructured) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m := c.(map[string]interface{}); m["type"] == "Ready" || m["type"] == "ContainersReady" {
			m["status"], m["lastTransitionTime"] = "True", "2026-12-07T00:33:50Z"
			delete(m, "reason")
		}
	}
	_ = unstructured.SetNestedSlice(u.Object, conds, "status", "conditions")
})

// unreadyAt moves the last transition of revision 3's pod's Ready
// condition (False) to at.
func unreadyAt(at string) func(*unstructured.Unstructured) {
	return onKind("Pod", restartNew, func(u *unstructured.Unstructured) {
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			if m := c.(map[string]interface{}); m["type"] == "Ready" {
				m["lastTransitionTime"] = at
			}
		}
		_ = unstructured.SetNestedSlice(u.Object, conds, "status", "conditions")
	})
}

// crashedPod gives the pod a container that restarted and waits in
// CrashLoopBackOff: it ran, and failed.
func crashedPod(name string) func(*unstructured.Unstructured) {
	return onKind("Pod", name, func(u *unstructured.Unstructured) {
		cs, _, _ := unstructured.NestedSlice(u.Object, "status", "containerStatuses")
		for _, c := range cs {
			m := c.(map[string]interface{})
			m["restartCount"] = int64(1)
			m["state"] = map[string]interface{}{"waiting": map[string]interface{}{"reason": "CrashLoopBackOff"}}
		}
		_ = unstructured.SetNestedSlice(u.Object, cs, "status", "containerStatuses")
	})
}

var crashed = crashedPod(restartNew)

// hung makes revision 3's pod older than the restart, crashed, and
// unready since 00:31:30, 2m38s before the snapshot.
var hung = both(podCreated(restartNew, "2026-12-07T00:31:00Z"), unreadyAt("2026-12-07T00:31:30Z"), crashed)

// pdb selects the Rollout's pods; its status allows allowed disruptions.
func pdb(allowed int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
		"metadata": map[string]interface{}{"name": "app", "namespace": "shop"},
		"spec":     map[string]interface{}{"maxUnavailable": int64(0), "selector": map[string]interface{}{"matchLabels": map[string]interface{}{"app": "app"}}},
		"status":   map[string]interface{}{"observedGeneration": int64(1), "disruptionsAllowed": allowed, "currentHealthy": int64(6), "desiredHealthy": int64(6), "expectedPods": int64(6)},
	}}
}

var restartCases = []struct {
	name  string
	id    string
	edit  func(*unstructured.Unstructured)
	extra []*unstructured.Unstructured
	fires bool
	sev   rules.Severity
	says  []string
	do    string             // in the finding's remediation
	on    []upstream.Version // fires only on these (nil: every version)
}{
	{name: "no restartAt", id: "RD172"},
	{name: "no restartAt", id: "RD173"},
	{name: "restart recorded done", id: "RD172", edit: both(restartAt("2026-12-07T00:33:50Z"), onKind("Rollout", "", set([]string{"status", "restartedAt"}, "2026-12-07T00:33:50Z")))},
	{name: "restart recorded done", id: "RD173", edit: both(restartAt("2026-12-07T00:33:50Z"), onKind("Rollout", "", set([]string{"status", "restartedAt"}, "2026-12-07T00:33:50Z")))},
	{name: "scheduled", id: "RD172", edit: restartAt("2026-12-07T00:40:00Z"), fires: true, sev: rules.Info,
		says: []string{"a restart is scheduled for 2026-12-07T00:40:00Z (spec.restartAt, in 5m52s)", "1 at a time"}},
	{name: "scheduled", id: "RD173", edit: restartAt("2026-12-07T00:40:00Z")},
	{name: "every pod newer: the next pass records it", id: "RD172", edit: restartAt("2026-12-07T00:33:00Z")},
	// Revision 3's pod predates the restart and has been unready for
	// 2m38s: it alone fills the allowance, so nothing is ever evicted.
	{name: "a hung pod predates the restart", id: "RD173", edit: both(restartAt("2026-12-07T00:33:50Z"), hung), fires: true, sev: rules.Warning,
		says: []string{restartNew + " has not been available since 2026-12-07T00:31:30Z (2m38s ago) and predates spec.restartAt", "5 of 6 pods are available and the controller evicts only while more than 5 are (the larger of spec.replicas 5 and the 6 its ReplicaSets ask for, less 1 at a time)", "it never evicts it, the pod the restart was meant to replace", "6 of 6 pods still predate it"},
		do:   "`kubectl delete pod -n shop " + restartNew + "`"},
	{name: "a hung pod predates the restart", id: "RD172", edit: both(restartAt("2026-12-07T00:33:50Z"), hung)},
	// Two hung pods: the remedy deletes both.
	{name: "two hung pods predate the restart", id: "RD173", fires: true, sev: rules.Warning,
		edit: both(restartAt("2026-12-07T00:33:50Z"), hung, crashedPod(restartMiddle), onKind("Pod", restartMiddle, func(u *unstructured.Unstructured) {
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			for _, c := range conds {
				if m := c.(map[string]interface{}); m["type"] == "Ready" {
					m["status"], m["lastTransitionTime"] = "False", "2026-12-07T00:31:00Z"
				}
			}
			_ = unstructured.SetNestedSlice(u.Object, conds, "status", "conditions")
		})),
		says: []string{restartMiddle + ", " + restartNew + " have not been available, the first since 2026-12-07T00:31:00Z (3m8s ago), and predate spec.restartAt", "4 of 6 pods are available"},
		do:   "`kubectl delete pod -n shop " + restartMiddle + " " + restartNew + "`"},
	// spec.replicas raised, the ReplicaSets not yet scaled up: the restart
	// waits for the pods that come.
	{name: "spec.replicas above what the ReplicaSets ask for", id: "RD173", edit: both(restartAt("2026-12-07T00:33:50Z"), podTurnsReady, onKind("Rollout", "", set([]string{"spec", "replicas"}, int64(8))))},
	{name: "spec.replicas above what the ReplicaSets ask for", id: "RD172", edit: both(restartAt("2026-12-07T00:33:50Z"), podTurnsReady, onKind("Rollout", "", set([]string{"spec", "replicas"}, int64(8)))), fires: true, sev: rules.Info,
		says: []string{"it waits until more than 7 pods are available"}},
	{name: "a hung pod, the Rollout reads restarting", id: "RD173", fires: true, sev: rules.Warning,
		edit: both(restartAt("2026-12-07T00:33:50Z"), hung, onKind("Rollout", "", set([]string{"status", "message"}, "rollout is restarting"))),
		says: []string{"; the Rollout reads Progressing (rollout is restarting) until status.restartedAt is set, when no pod is older"}},
	// 2m38s in ContainerCreating, never Ready, never restarted: as far as
	// anything shows it is still starting (an image pull), not hung.
	{name: "an older pod creating its container for minutes", id: "RD173", edit: both(restartAt("2026-12-07T00:33:50Z"), podCreated(restartNew, "2026-12-07T00:31:00Z"), unreadyAt("2026-12-07T00:31:30Z"))},
	{name: "an older pod creating its container for minutes", id: "RD172", edit: both(restartAt("2026-12-07T00:33:50Z"), podCreated(restartNew, "2026-12-07T00:31:00Z"), unreadyAt("2026-12-07T00:31:30Z")), fires: true, sev: rules.Info,
		says: []string{"it waits for " + restartNew + " to turn available"}},
	// Unready for 24 s only: it may be starting (revision 3's pod is).
	{name: "an older pod still starting", id: "RD172", edit: restartAt("2026-12-07T00:33:50Z"), fires: true, sev: rules.Info,
		says: []string{"6 of 6 pods predate it", "it waits for " + restartNew + " to turn available; status.restartedAt is set when no pod is older"}},
	{name: "an older pod still starting", id: "RD173", edit: restartAt("2026-12-07T00:33:50Z")},
	// Ready, waiting out minReadySeconds: it turns available by itself.
	{name: "a Ready pod within minReadySeconds", id: "RD172", fires: true, sev: rules.Info,
		edit: both(restartAt("2026-12-07T00:33:50Z"), hung, podTurnsReady, onKind("Rollout", "", set([]string{"spec", "minReadySeconds"}, int64(300)))),
		says: []string{"it waits for"}},
	{name: "a Ready pod within minReadySeconds", id: "RD173",
		edit: both(restartAt("2026-12-07T00:33:50Z"), hung, podTurnsReady, onKind("Rollout", "", set([]string{"spec", "minReadySeconds"}, int64(300))))},
	// Revision 3's pod came after the restart 26 s ago: on its way.
	{name: "a young pod not yet Ready", id: "RD172", edit: restartAt("2026-12-07T00:33:30Z"), fires: true, sev: rules.Info,
		says: []string{"5 of 6 pods predate it", "evicts 1 at a time while more than 5 pods are available", "it waits for " + restartNew + " to turn available"}},
	{name: "a young pod not yet Ready", id: "RD173", edit: restartAt("2026-12-07T00:33:30Z")},
	{name: "a pod after the restart unready for 2m28s", id: "RD173", fires: true, sev: rules.Warning,
		edit: both(restartAt("2026-12-07T00:31:30Z"), onKind("Pod", "", func(u *unstructured.Unstructured) {
			if u.GetName() != restartNew {
				set([]string{"metadata", "creationTimestamp"}, "2026-12-07T00:30:00Z")(u)
			}
		}), podCreated(restartNew, "2026-12-07T00:31:40Z"), unreadyAt("2026-12-07T00:31:40Z"), crashed),
		says: []string{restartNew + " has not been available since 2026-12-07T00:31:40Z (2m28s ago)", "the restart waits for it", "5 of 6 pods still predate it"}},
	{name: "room for one: the next pass evicts", id: "RD172", edit: both(restartAt("2026-12-07T00:33:50Z"), podTurnsReady), fires: true, sev: rules.Info,
		says: []string{"6 of 6 pods predate it", "its next pass may evict 1"}},
	{name: "room for one: the next pass evicts", id: "RD173", edit: both(restartAt("2026-12-07T00:33:50Z"), podTurnsReady)},
	{name: "a pod being evicted", id: "RD172", fires: true, sev: rules.Info,
		edit: both(restartAt("2026-12-07T00:33:50Z"), podTurnsReady, onKind("Pod", restartStable, set([]string{"metadata", "deletionTimestamp"}, "2026-12-07T00:34:00Z"))),
		says: []string{"being evicted: " + restartStable}},
	{name: "a pod being evicted", id: "RD173", edit: both(restartAt("2026-12-07T00:33:50Z"), podTurnsReady, onKind("Pod", restartStable, set([]string{"metadata", "deletionTimestamp"}, "2026-12-07T00:34:00Z")))},
	// The unready pod that predates the restart still holds it once the
	// evicted pod's replacement turns available.
	{name: "a pod being evicted beside a hung old one", id: "RD173", fires: true, sev: rules.Warning,
		edit: both(restartAt("2026-12-07T00:33:50Z"), hung, onKind("Pod", restartStable, set([]string{"metadata", "deletionTimestamp"}, "2026-12-07T00:34:00Z"))),
		says: []string{restartNew + " has not been available", "4 of 6 pods are available"}},
	{name: "a PodDisruptionBudget that allows none", id: "RD173", edit: both(restartAt("2026-12-07T00:33:50Z"), podTurnsReady), extra: []*unstructured.Unstructured{pdb(0)}, fires: true, sev: rules.Warning,
		says: []string{"PodDisruptionBudget app allows no disruption (status.disruptionsAllowed 0, 6 of 6 pods healthy)", "429 Too Many Requests"},
		do:   "Let PodDisruptionBudget app allow one disruption"},
	{name: "a PodDisruptionBudget that allows none", id: "RD172", edit: both(restartAt("2026-12-07T00:33:50Z"), podTurnsReady), extra: []*unstructured.Unstructured{pdb(0)}},
	{name: "a PodDisruptionBudget that allows one", id: "RD173", edit: both(restartAt("2026-12-07T00:33:50Z"), podTurnsReady), extra: []*unstructured.Unstructured{pdb(1)}},
	{name: "a PodDisruptionBudget that allows one", id: "RD172", edit: both(restartAt("2026-12-07T00:33:50Z"), podTurnsReady), extra: []*unstructured.Unstructured{pdb(1)}, fires: true, sev: rules.Info,
		says: []string{"its next pass may evict 1"}},
	// Known bug #4221: the update's ReplicaSets ask for 6 pods for
	// spec.replicas 5, so the pass that evicts may scale down too.
	{name: "a restart due mid-update, room for one", id: "RD174", edit: both(restartAt("2026-12-07T00:33:50Z"), podTurnsReady), fires: true, sev: rules.Warning,
		on:   []upstream.Version{"v1.7.2", "v1.8.2"},
		says: []string{"ask for 6 pods for spec.replicas 5", "argo-rollouts #4221", "below the 5 available pods (spec.replicas − maxUnavailable)", "fixed in v1.8.3"}, do: ""},
	{name: "no restart", id: "RD174"},
	{name: "a restart scheduled mid-update", id: "RD174", edit: restartAt("2026-12-07T00:40:00Z")},
}

func TestRestartRules(t *testing.T) {
	for _, ver := range upstream.Modeled {
		for _, c := range restartCases {
			r := diagnoseReplaced(t, ver, c.edit, c.extra...)
			f := findingOf(r, c.id)
			fires := c.fires && (c.on == nil || slices.Contains(c.on, ver))
			if (f != nil) != fires {
				t.Errorf("%s %s: %s fires=%v, want %v; findings %v", ver, c.name, c.id, f != nil, fires, findingIDs(r))
				continue
			}
			if f == nil {
				continue
			}
			if f.Severity != c.sev {
				t.Errorf("%s %s: %s is %s, want %s", ver, c.name, c.id, f.Severity, c.sev)
			}
			for _, s := range c.says {
				if !strings.Contains(f.Message, s) {
					t.Errorf("%s %s: %s\n  %s\ndoes not say\n  %s", ver, c.name, c.id, f.Message, s)
				}
			}
			if len(f.Cites) == 0 {
				t.Errorf("%s %s: %s cites nothing", ver, c.name, c.id)
			}
			if !strings.Contains(f.Remediation, c.do) {
				t.Errorf("%s %s: %s remediation %q does not say %q", ver, c.name, c.id, f.Remediation, c.do)
			}
		}
	}
}

// restartNoHeader is a blue-green Rollout with spec.restartAt read from a
// file without a snapshot header (kubectl get output: "now" is inferred
// from its newest timestamp), a pod, and a PodDisruptionBudget whose
// selector does not parse; maxUnavailable above 100%. The fuzzer starts
// from it too.
const restartNoHeader = `kind: List
items:
- apiVersion: argoproj.io/v1alpha1
  kind: Rollout
  metadata: {name: a, namespace: b, uid: u1}
  spec:
    replicas: 2
    restartAt: '2026-01-01T00:00:00Z'
    selector: {matchLabels: {app: a}}
    template: {metadata: {labels: {app: a}}, spec: {containers: [{name: a, image: x}]}}
    strategy: {blueGreen: {activeService: s, maxUnavailable: '150%'}}
  status: {stableRS: h1, currentPodHash: h1}
- apiVersion: apps/v1
  kind: ReplicaSet
  metadata: {name: a-h1, namespace: b, uid: r1, labels: {rollouts-pod-template-hash: h1}, ownerReferences: [{kind: Rollout, name: a, uid: u1, controller: true}]}
  spec: {replicas: 3}
- apiVersion: v1
  kind: Pod
  metadata: {name: a-h1-x, namespace: b, creationTimestamp: '2025-01-01T00:00:00Z', labels: {app: a, rollouts-pod-template-hash: h1}, ownerReferences: [{kind: ReplicaSet, name: a-h1, uid: r1, controller: true}]}
  status: {conditions: [{type: Ready, status: 'False'}]}
- apiVersion: policy/v1
  kind: PodDisruptionBudget
  metadata: {name: p, namespace: b}
  spec: {selector: {matchExpressions: [{key: app, operator: Bogus}]}}
  status: {observedGeneration: 1, disruptionsAllowed: 0}
`

// Without a snapshot header, "now" is only the input's newest time, so a
// restartAt after it may have come already: RD172 does not call it
// scheduled.
func TestRestartWhenTheInputHasNoTime(t *testing.T) {
	located, hdr, err := snapshot.Decode("seed", strings.NewReader(restartNoHeader))
	if err != nil || hdr != nil {
		t.Fatalf("decode: %v, header %v", err, hdr)
	}
	objs := make([]*unstructured.Unstructured, 0, len(located))
	for _, l := range located {
		objs = append(objs, l.Object)
	}
	r := Run(exampletest.ViewOf(t, snapshot.New(snapshot.Header{}, objs)), model.ControllerVersion{Assumed: "v1.10.2", Source: model.SourceFlag, Exact: true}, Options{})
	f := findingOf(r, "RD172")
	if f == nil || !strings.Contains(f.Message, "which does not say when it was taken: if that time has come") || !strings.Contains(f.Message, "2 at a time") {
		t.Fatalf("RD172: %+v; findings %v", f, findingIDs(r))
	}
}

// diagnoseWithoutPods diagnoses the replaced canary with spec.restartAt at
// and its pods left out: listed, as a diagnose that found none; or not, as
// a scan that reads none.
func diagnoseWithoutPods(t *testing.T, at string, listed bool) *Report {
	t.Helper()
	objs, hdr := exampletest.Decode(t, exampletest.BasicReplaced)
	kept := objs[:0]
	for _, o := range objs {
		if o.GetKind() != "Pod" {
			restartAt(at)(o)
			kept = append(kept, o)
		}
	}
	if !listed {
		hdr.Listed = []string{"replicasets.apps"}
	}
	return Run(exampletest.ViewOf(t, snapshot.New(*hdr, kept)), model.ControllerVersion{Assumed: "v1.7.2", Source: model.SourceFlag, Exact: true}, Options{NoPods: true})
}

// A scan lists no pods: RD172 says a restart is not done and where to look,
// RD173 and RD174 (v1.7.2) stay quiet: they need the pods. A diagnose that
// listed the pods and found none knows there is nothing to restart.
func TestRestartPodsUnread(t *testing.T) {
	r := diagnoseWithoutPods(t, "2026-12-07T00:33:50Z", false)
	f172 := findingOf(r, "RD172")
	if f172 == nil || f172.Severity != rules.Info || !strings.Contains(f172.Message, "the pods were not read here, so what it waits for is not known: `kubectl rolloutdoctor diagnose app -n shop` reads them") || findingOf(r, "RD173") != nil || findingOf(r, "RD174") != nil {
		t.Errorf("pods not listed: RD172 %+v; findings %v", f172, findingIDs(r))
	}
	// No pod is older: the controller's next pass marks it done.
	r = diagnoseWithoutPods(t, "2026-12-07T00:33:50Z", true)
	if f172, f173 := findingOf(r, "RD172"), findingOf(r, "RD173"); f172 != nil || f173 != nil {
		t.Errorf("pods listed, none: RD172 %+v RD173 %+v", f172, f173)
	}
	// Outstanding more than ten minutes, it is a warning: a fleet view
	// cannot tell slow from stalled.
	r = diagnoseWithoutPods(t, "2026-12-07T00:20:00Z", false)
	if f := findingOf(r, "RD172"); f == nil || f.Severity != rules.Warning || !strings.Contains(f.Message, "requested 2026-12-07T00:20:00Z (14m8s ago) is not done") {
		t.Errorf("RD172 14 minutes on: %+v", f)
	}
}
