package escape

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// viewOf is an example after edit (on every object).
func viewOf(t *testing.T, example string, edit func(*unstructured.Unstructured)) *snapshot.View {
	t.Helper()
	objs, hdr := exampletest.Decode(t, example)
	for _, o := range objs {
		if edit != nil {
			edit(o)
		}
	}
	return exampletest.ViewOf(t, snapshot.New(*hdr, objs))
}

func planAt(t *testing.T, v *snapshot.View, ver upstream.Version) *Plan {
	t.Helper()
	p, err := Build(Input{View: v, Controller: model.ControllerVersion{Assumed: ver, Exact: true}})
	if err != nil {
		t.Fatalf("%s: %v", ver, err)
	}
	return p
}

func cited(o *Option, k upstream.Key) bool {
	for _, c := range o.Cites {
		if c.Key == k {
			return true
		}
	}
	return false
}

func option(t *testing.T, p *Plan, a Action) *Option {
	t.Helper()
	o, ok := p.Option(a)
	if !ok {
		t.Fatalf("no option %s", a)
	}
	return o
}

// A canary aborted by a failed step analysis: retry measures again with a
// new run, promote --full and undo skip the analysis, and abort (already
// aborted) says nothing about it — on every version.
func TestAnalysisNotesAfterFailedStep(t *testing.T) {
	for _, ver := range upstream.Modeled {
		p := planAt(t, viewOf(t, exampletest.AnalysisAbort, nil), ver)
		retry := option(t, p, Retry)
		if !strings.Contains(retry.Analysis, "payments-api-5b8c7d9f4-4-2 stays as history") || !strings.Contains(retry.Analysis, "payments-api-5b8c7d9f4-4-2.1") ||
			!cited(retry, "an.retry-new-run") || !cited(retry, "an.new-run-suffix") || retry.Verdict != SafeWithCost {
			t.Errorf("%s retry: %s %q", ver, retry.Verdict, retry.Analysis)
		}
		full := option(t, p, PromoteFull)
		if !strings.Contains(full.Analysis, "skips the remaining analysis (step 2)") || !strings.Contains(full.Analysis, "without being measured") || !cited(full, "an.cancel-on-window") {
			t.Errorf("%s promote --full: %q", ver, full.Analysis)
		}
		if u := option(t, p, Undo); !strings.Contains(u.Analysis, "skipped") {
			t.Errorf("%s undo: %q", ver, u.Analysis)
		}
		if a := option(t, p, Abort); a.Analysis != "" {
			t.Errorf("%s abort (no effect) speaks of analysis: %q", ver, a.Analysis)
		}
	}
}

// Paused by an Inconclusive run: promote passes a step run, but re-runs a
// background run (which can pause again).
func TestAnalysisNotesInconclusive(t *testing.T) {
	inconclusive := func(field string) func(*unstructured.Unstructured) {
		return func(u *unstructured.Unstructured) {
			if u.GetKind() != "Rollout" {
				return
			}
			setf(u, false, "status", "abort")
			unstructured.RemoveNestedField(u.Object, "status", "abortedAt")
			setf(u, int64(2), "status", "currentStepIndex")
			setf(u, true, "status", "controllerPause")
			setf(u, []interface{}{map[string]interface{}{"reason": "InconclusiveAnalysisRun", "startTime": "2026-09-02T14:25:07Z"}}, "status", "pauseConditions")
			unstructured.RemoveNestedField(u.Object, "status", "canary", "currentStepAnalysisRunStatus")
			if field == "currentBackgroundAnalysisRunStatus" {
				setf(u, []interface{}{map[string]interface{}{"templateName": "success-rate"}}, "spec", "strategy", "canary", "analysis", "templates")
			}
			setf(u, map[string]interface{}{"name": "run-x", "status": "Inconclusive"}, "status", "canary", field)
		}
	}
	for _, ver := range upstream.Modeled {
		p := planAt(t, viewOf(t, exampletest.AnalysisAbort, inconclusive("currentStepAnalysisRunStatus")), ver)
		if o := option(t, p, Promote); !strings.Contains(o.Analysis, "counts the Inconclusive analysis step (AnalysisRun run-x) as passed") || !cited(o, "cli.promote-inconclusive-step") {
			t.Errorf("%s promote on an Inconclusive step: %q", ver, o.Analysis)
		}
		if o := option(t, p, Wait); !strings.Contains(o.Analysis, "keeps the Rollout paused") {
			t.Errorf("%s wait: %q", ver, o.Analysis)
		}
		p = planAt(t, viewOf(t, exampletest.AnalysisAbort, inconclusive("currentBackgroundAnalysisRunStatus")), ver)
		if o := option(t, p, Promote); !strings.Contains(o.Analysis, "new run in place of the Inconclusive run-x") || !cited(o, "an.rerun-after-inconclusive") {
			t.Errorf("%s promote on an Inconclusive background run: %q", ver, o.Analysis)
		}
	}
}

// Blue-green aborted by a failed post-promotion run: every version keeps
// the run current and aborts again, so retry changes nothing until the run
// is deleted.
func TestRetryAfterFailedPostPromotion(t *testing.T) {
	edit := func(u *unstructured.Unstructured) {
		if u.GetKind() != "Rollout" {
			return
		}
		setf(u, true, "status", "abort")
		unstructured.RemoveNestedField(u.Object, "status", "pauseConditions")
		setf(u, false, "status", "controllerPause")
		setf(u, []interface{}{map[string]interface{}{"templateName": "smoke"}}, "spec", "strategy", "blueGreen", "postPromotionAnalysis", "templates")
		setf(u, map[string]interface{}{"name": "web-post", "status": "Failed"}, "status", "blueGreen", "postPromotionAnalysisRunStatus")
	}
	for _, ver := range upstream.Modeled {
		p := planAt(t, viewOf(t, exampletest.BlueGreen, edit), ver)
		o := option(t, p, Retry)
		if o.Verdict != NoEffect || !strings.Contains(o.Why, "aborts again") || !strings.Contains(o.Analysis, "kubectl delete analysisrun web-post") || !cited(o, "an.bg-post-kept-after-abort") {
			t.Errorf("%s: retry %s: %s / %q", ver, o.Verdict, o.Why, o.Analysis)
		}
		if p.Recommended == Retry {
			t.Errorf("%s: retry recommended although the controller aborts again", ver)
		}
	}
}

// A traffic-routed canary whose background run failed: up to v1.9 the
// aborted canary's scale-down deadline makes the pass after a retry keep
// the failed run, and the next aborts again; v1.10 makes a new run.
func TestRetryAfterFailedBackgroundRun(t *testing.T) {
	var hash string
	edit := func(u *unstructured.Unstructured) {
		switch u.GetKind() {
		case "Rollout":
			hash, _, _ = unstructured.NestedString(u.Object, "status", "currentPodHash")
			setf(u, true, "status", "abort")
			setf(u, "2026-08-11T03:14:30Z", "status", "abortedAt")
			setf(u, []interface{}{map[string]interface{}{"templateName": "error-rate"}}, "spec", "strategy", "canary", "analysis", "templates")
			setf(u, map[string]interface{}{"name": "checkout-bg", "status": "Failed"}, "status", "canary", "currentBackgroundAnalysisRunStatus")
		}
	}
	deadline := func(u *unstructured.Unstructured) {
		edit(u)
		if u.GetKind() == "ReplicaSet" && u.GetLabels()["rollouts-pod-template-hash"] == hash {
			a := u.GetAnnotations()
			if a == nil {
				a = map[string]string{}
			}
			a["scale-down-deadline"] = "2026-08-11T03:15:00Z"
			u.SetAnnotations(a)
		}
	}
	for _, ver := range upstream.Modeled {
		// The Rollout comes first in the example, so hash is set when the
		// ReplicaSets are edited.
		p := planAt(t, viewOf(t, exampletest.Incident, deadline), ver)
		o := option(t, p, Retry)
		reaborts := ver != "v1.10.2"
		if got := o.Verdict == NoEffect && strings.Contains(o.Analysis, "checkout-bg"); got != reaborts {
			t.Errorf("%s: retry %s %q; want a re-abort: %v", ver, o.Verdict, o.Analysis, reaborts)
		}
		if !reaborts && !strings.Contains(o.Analysis, "background analysis at once") {
			t.Errorf("%s: %q", ver, o.Analysis)
		}
		// Without the deadline the failed run is replaced on every version.
		p = planAt(t, viewOf(t, exampletest.Incident, edit), ver)
		if o := option(t, p, Retry); o.Verdict == NoEffect {
			t.Errorf("%s without a deadline: retry %s %q", ver, o.Verdict, o.Analysis)
		}
	}
}
