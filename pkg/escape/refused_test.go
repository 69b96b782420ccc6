package escape

import (
	"strings"
	"testing"

	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// The lab's rollback within the window under a full pods quota (A has 1
// of its 4 pods, 25% on it): no way out counts on the refused pods. Doing
// nothing leaves the rollback where it is, not Healthy, and since that is
// all that holds it, letting the pods be created comes first; an abort's
// traffic back on the stable lasts only until the window clears it. With
// the refusal gone from the ReplicaSet, waiting converges as before.
func TestPlanPodsRefused(t *testing.T) {
	for file, ver := range map[string]upstream.Version{exampletest.LabWindowQuota: "v1.10.2", exampletest.LabWindowQuota17: "v1.7.2"} {
		v := exampletest.View(t, file)
		p := plan(t, v, ver)
		a := v.Rollout.Status.Canary.Weights.Canary.PodTemplateHash
		w, _ := p.Option(Wait)
		if p.Refused == nil || len(p.Refused.ReplicaSets) != 1 || !strings.HasSuffix(p.Refused.ReplicaSets[0], a) ||
			!strings.Contains(p.Refused.Text, "exceeded quota: pods") {
			t.Fatalf("%s: refused %+v", ver, p.Refused)
		}
		if w.Verdict != SafeWithCost || !strings.HasPrefix(w.Why, "the Rollout does not finish while the API server refuses app-"+a+"'s missing pods (RD185): 25% on app-"+a+" (1/4 available); ends Progressing") {
			t.Errorf("%s: wait %s: %s", ver, w.Verdict, w.Why)
		}
		if p.Recommended != Wait || !strings.HasPrefix(p.Reason, "first let the pods be created (RD185): A ResourceQuota in the namespace is full") ||
			!strings.Contains(p.Reason, "; then nothing needs an escape: the controller converges by itself") || strings.Contains(p.Reason, ".;") {
			t.Errorf("%s: recommended %s: %s", ver, p.Recommended, p.Reason)
		}
		if u, _ := p.Option(Undo); u.Effect.Phase != "Healthy" || u.Effect.FinalWeight != 0 {
			t.Errorf("%s: undo, which does not need the refused pods, ends %s at %d%%", ver, u.Effect.Phase, u.Effect.FinalWeight)
		}
		for _, rs := range v.ReplicaSets {
			rs.Status.Conditions = nil
		}
		p = plan(t, v, ver)
		if w, _ := p.Option(Wait); p.Refused != nil || w.Verdict != Safe || w.Effect.Phase != "Healthy" {
			t.Errorf("%s: without the refusal, wait %s ends %s; refused %+v", ver, w.Verdict, w.Effect.Phase, p.Refused)
		}
	}
}

// The same rollback at the deadline's abort (0%, ProgressDeadlineExceeded):
// doing nothing ends the abort once A is scaled down and starts the
// rollback over (the lab: window-deadline-abort), which the refused pods
// then hold; letting them be created still comes first.
func TestPlanDeadlineAbortInWindow(t *testing.T) {
	for file, ver := range map[string]upstream.Version{exampletest.LabWindowQuota: "v1.10.2", exampletest.LabWindowQuota17: "v1.7.2"} {
		v := exampletest.View(t, file)
		exampletest.AtDeadlineAbort(v)
		p := plan(t, v, ver)
		w, _ := p.Option(Wait)
		if w.Verdict != SafeWithCost || !strings.HasPrefix(w.Why, "the progress deadline's abort ends by itself once app-") || !strings.Contains(w.Why, "does not finish while the API server refuses") {
			t.Errorf("%s: wait %s: %s", ver, w.Verdict, w.Why)
		}
		if _, ok := citedKey(w.Cites, "sy.deadline-abort-again"); !ok {
			t.Errorf("%s: wait does not cite sy.deadline-abort-again: %v", ver, w.Cites)
		}
		if p.Recommended != Wait || !strings.HasPrefix(p.Reason, "first let the pods be created (RD185)") || !strings.Contains(p.Reason, "ends Healthy") {
			t.Errorf("%s: recommended %s: %s", ver, p.Recommended, p.Reason)
		}
	}
}
