// Package exampletest loads the bundled examples (examples/ at the module
// root) for tests, from any package's directory: one loader instead of a
// copy per package.
package exampletest

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// Incident is the rollback-incident snapshot (a Rollout within its
// rollbackWindow, 100% on the first canary pods).
const Incident = "incident-rollback-window.yaml"

// BlueGreen is a blue-green Rollout paused before promotion, its preview
// at previewReplicaCount.
const BlueGreen = "bluegreen-paused.yaml"

// AnalysisAbort is a canary aborted by a failed Prometheus step analysis.
const AnalysisAbort = "analysis-abort.yaml"

// BasicReplaced is a canary without trafficRouting updated a second time
// mid-rollout (lab, v1.10.2): the older revision keeps a ready pod and the
// newest one's pod is not Ready, so the controller can scale nothing.
const BasicReplaced = "basic-canary-replaced.yaml"

// IncidentRecord is a record (kubectl rolloutdoctor record) of the
// rollback incident in the lab, Argo Rollouts v1.8.2, its pods' and
// EndpointSlices' changes left out.
const IncidentRecord = "incident-record.rec"

// PodsWeb is a Deployment behind an ALB Ingress with pod-check findings.
const PodsWeb = "pods-web.yaml"

// Lab snapshots: states of the lab's real controllers, written by
// `kubectl rolloutdoctor snapshot` (Events, managedFields and the other
// versions' controller Deployments dropped). A canary without
// trafficRouting of 5 (maxSurge 1, maxUnavailable 0) paused at setWeight
// 30 (canary/stable 2/4) with one stable pod made unready for good by the
// lab's crash-loop stage, 15 s after it turned unready: on v1.10.2 and on
// v1.7.2; and, on v1.10.2, the same after an undo, minutes later (stable
// 4 with that pod, the update's ReplicaSet 2: nothing moves).
//
// The Istio ones: a canary of 5 (host mode) paused at setWeight 20, one
// stable pod held unready the same way, 15 s after, on v1.10.2 and v1.7.2.
// The blue-green one: 4 replicas paused before promotion (previewReplicaCount
// 2), one pod of the active ReplicaSet held unready for 2m10s, on v1.10.2.
const (
	LabBlueGreenActiveHung = "lab/bluegreen-active-hung-v1.10.json"
	LabIstioStableHung     = "lab/istio-paused-stable-hung-v1.10.json"
	LabIstioStableHung17   = "lab/istio-paused-stable-hung-v1.7.json"
	LabPausedStableHung    = "lab/paused-stable-hung-v1.10.json"
	LabPausedStableHung17  = "lab/paused-stable-hung-v1.7.json"
	LabUndoStableHung      = "lab/undo-stable-hung-v1.10.json"
	// An Istio canary of 5 with dynamicStableScale, one stable pod hung
	// (the lab): paused at 20% (v1.7.2), aborted (both held at 20%), then
	// undone (both Healthy at 80/20, the canary Service on the canary).
	LabDSSPausedStableHung17  = "lab/istio-dss-paused-stable-hung-v1.7.json"
	LabDSSAbortedStableHung   = "lab/istio-dss-aborted-stable-hung-v1.10.json"
	LabDSSAbortedStableHung17 = "lab/istio-dss-aborted-stable-hung-v1.7.json"
	LabDSSUndoneStableHung    = "lab/istio-dss-undone-stable-hung-v1.10.json"
	LabDSSUndoneStableHung17  = "lab/istio-dss-undone-stable-hung-v1.7.json"
	// The same canary of 5 paused at 20% with the stable short (the lab):
	// with dynamicStableScale the stable at 4 pods, one hung (v1.10.2);
	// without it at 5, two hung (v1.7.2 and v1.10.2). Either way the
	// stable carries 80% on 3 available pods.
	LabDSSPausedStableHung      = "lab/istio-dss-paused-stable-hung-v1.10.json"
	LabIstioPausedStableShort   = "lab/istio-paused-stable-short-v1.10.json"
	LabIstioPausedStableShort17 = "lab/istio-paused-stable-short-v1.7.json"
	// That Rollout (v1.10.2, two stable pods hung) undone: the router
	// still at 20% while the canary Service selects the stable's pods,
	// Degraded once the progress deadline passed.
	LabIstioUndoneStableShort = "lab/istio-undone-stable-short-v1.10.json"
	// An ALB canary of 4 that ran with stableService and canaryService,
	// switched to pingPong with two new Services (selector app: app), then
	// paused at 25% of its next revision (v1.10.2, #5006): pong, the stable
	// one, without a pod-template hash.
	LabPingPongAdopted = "lab/alb-pingpong-adopted-v1.10.json"
	// A blue-green Rollout of 4 paused before promotion, one of its two
	// preview pods hung (the lab, v1.7.2 and v1.10.2).
	LabBlueGreenPreviewShort   = "lab/bluegreen-preview-short-v1.10.json"
	LabBlueGreenPreviewShort17 = "lab/bluegreen-preview-short-v1.7.json"
	// An Istio canary of 6 with dynamicStableScale, aborted at 20% (0%),
	// then three stable pods hung: v1.10.2 sized the aborted canary 2 again
	// (#4973). The controller log is cut to its last 300 lines.
	LabDSSAbortedRescaled = "lab/istio-dss-aborted-rescaled-v1.10.json"
	// An Istio canary of 4 (steps setWeight 25, pause 5s) rolled back
	// within its window from B to A under a ResourceQuota of 5 pods: A's
	// ReplicaSet created 1 of its 4 pods (ReplicaFailure, FailedCreate),
	// 25% on it, B at 4 (e2e window-deadline-abort, before its deadline),
	// on v1.10.2 and v1.7.2. The controller log is cut to its last 150
	// lines.
	LabWindowQuota   = "lab/istio-window-quota-v1.10.json"
	LabWindowQuota17 = "lab/istio-window-quota-v1.7.json"
	// An Istio canary of 4 with dynamicStableScale and
	// minPodsPerReplicaSet 2, aborted at 20% (v1.10.2): 20% kept, the
	// stable complete (#4841).
	LabDSSMinPodsAborted = "lab/istio-dss-minpods-aborted-v1.10.json"
)

// Path is the path of examples/name, or of a lab snapshot (a name under
// "lab/"), relative to the test's directory when it can be (reports print
// it, and goldens must not depend on the checkout).
func Path(name string) string {
	_, file, _, _ := runtime.Caller(0)
	abs := filepath.Join(filepath.Dir(file), "..", "..", "examples", name)
	if strings.HasPrefix(name, "lab/") {
		abs = filepath.Join(filepath.Dir(file), "testdata", name)
	}
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, abs); err == nil {
			return rel
		}
	}
	return abs
}

// Read returns the bytes of examples/name.
func Read(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(Path(name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Decode returns the objects of examples/name (fresh copies, free to edit)
// and its snapshot header, if it has one.
func Decode(t testing.TB, name string) ([]*unstructured.Unstructured, *snapshot.Header) {
	t.Helper()
	located, hdr, err := snapshot.Decode(name, bytes.NewReader(Read(t, name)))
	if err != nil {
		t.Fatal(err)
	}
	objs := make([]*unstructured.Unstructured, 0, len(located))
	for _, l := range located {
		objs = append(objs, l.Object)
	}
	return objs, hdr
}

// Objects returns the objects of examples/name for a fake cluster; edit, if
// given, may change each one first (a resourceVersion, a status field).
func Objects(t testing.TB, name string, edit func(*unstructured.Unstructured)) []k8sruntime.Object {
	t.Helper()
	objs, _ := Decode(t, name)
	out := make([]k8sruntime.Object, 0, len(objs))
	for _, o := range objs {
		if edit != nil {
			edit(o)
		}
		out = append(out, o)
	}
	return out
}

// Snapshot returns examples/name as a snapshot.
func Snapshot(t testing.TB, name string) *snapshot.Snapshot {
	t.Helper()
	s, err := snapshot.Read(name, bytes.NewReader(Read(t, name)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// View returns the view of the only Rollout of examples/name.
func View(t testing.TB, name string) *snapshot.View {
	t.Helper()
	return ViewOf(t, Snapshot(t, name))
}

// ViewOf returns the view of the only Rollout of a snapshot.
func ViewOf(t testing.TB, s *snapshot.Snapshot) *snapshot.View {
	t.Helper()
	ro, err := s.FindRollout("", "")
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.View(ro)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Docs parses YAML fixtures, one object each, as a test writes them inline.
func Docs(t testing.TB, docs ...string) []*unstructured.Unstructured {
	t.Helper()
	objs := make([]*unstructured.Unstructured, 0, len(docs))
	for _, d := range docs {
		m := map[string]interface{}{}
		if err := yaml.Unmarshal([]byte(d), &m); err != nil {
			t.Fatalf("fixture: %v\n%s", err, d)
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	return objs
}

// AtDeadlineAbort edits v's canary Rollout into the moment its progress
// deadline aborted it (the lab's window-deadline-abort after 20 s):
// status.abort, 0% on the canary, the Progressing condition
// ProgressDeadlineExceeded.
func AtDeadlineAbort(v *snapshot.View) {
	ro := v.Rollout
	ro.Status.Abort = true
	if w := ro.Status.Canary.Weights; w != nil {
		w.Canary.Weight, w.Stable.Weight = 0, 100
	}
	for i := range ro.Status.Conditions {
		if c := &ro.Status.Conditions[i]; c.Type == v1alpha1.RolloutProgressing {
			c.Status, c.Reason = corev1.ConditionFalse, "ProgressDeadlineExceeded"
		}
	}
}
