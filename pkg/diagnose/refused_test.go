package diagnose

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// rsRole is the view's ReplicaSet of a role: "canary" (the update's) or
// "stable".
func rsRole(v *snapshot.View, role string) *appsv1.ReplicaSet {
	want := v.Rollout.Status.StableRS
	for _, rs := range v.ReplicaSets {
		if h := rs.Labels["rollouts-pod-template-hash"]; (h == want) == (role == "stable") {
			return rs
		}
	}
	return nil
}

// The lab's rollback within the window under a pods quota (v1.10.2,
// v1.7.2): A's ReplicaSet has 1 of its 4 pods and quotes the quota's
// refusal; and edits of it.
var refusedCases = []labCase{
	{name: "a rollback within the window, 3 of 4 pods refused by a quota (lab v1.10.2)", file: exampletest.LabWindowQuota, ver: "v1.10.2", fires: true, sev: rules.Critical,
		says: `app-5c86d995c8, the ReplicaSet a rollback within the window returns to, cannot create its pods: 3 of 4 missing — pods "app-5c86d995c8-vk26n" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=5, limited: pods=5 (its ReplicaFailure condition, FailedCreate, since 2026-12-07T23:35:12Z). They never appear until that is fixed: the rollback cannot finish, and 25% of traffic stays on its 1 available pod`,
		do:   "A ResourceQuota in the namespace is full (`kubectl describe resourcequota -n e2e-v1-10-2-window-deadline-abort`)"},
	{name: "the same on v1.7.2", file: exampletest.LabWindowQuota17, ver: "v1.7.2", fires: true, sev: rules.Critical,
		says: "cannot create its pods: 3 of 4 missing", do: "an edit of the ReplicaSet (an annotation) makes it retry at once"},
	// The ReplicaSet controller removes the condition once it creates
	// what it needs; until its next sync a condition may stay with every
	// pod there.
	{name: "the condition, every pod created", file: exampletest.LabWindowQuota, ver: "v1.10.2", edit: func(v *snapshot.View) { rsRole(v, "canary").Status.Replicas = 4 }},
	{name: "pods missing, no condition", file: exampletest.LabWindowQuota, ver: "v1.10.2", edit: func(v *snapshot.View) { rsRole(v, "canary").Status.Conditions = nil }},
	{name: "a condition that is False", file: exampletest.LabWindowQuota, ver: "v1.10.2", edit: func(v *snapshot.View) {
		rsRole(v, "canary").Status.Conditions[0].Status = corev1.ConditionFalse
	}},
	// The stable refused (a Pod Security level raised on the namespace
	// while its pods were being replaced), the canary fine.
	{name: "the stable refused by Pod Security admission", file: exampletest.LabWindowQuota, ver: "v1.10.2", fires: true, sev: rules.Critical, edit: func(v *snapshot.View) {
		c, s := rsRole(v, "canary"), rsRole(v, "stable")
		s.Status.Conditions, c.Status.Conditions = c.Status.Conditions, nil
		s.Status.Conditions[0].Message = `pods "app-6b8c67c687-x2x9q" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false)`
		s.Status.Replicas = 2
	}, says: "app-6b8c67c687, the stable ReplicaSet, cannot create its pods: 2 of 4 missing — pods \"app-6b8c67c687-x2x9q\" is forbidden: violates PodSecurity", do: "Pod Security admission refuses the pod template"},
}

func TestPodsRefused(t *testing.T) {
	checkLabCases(t, "RD185", refusedCases, func(c labCase, r *Report, f *rules.Finding) {
		if _, ok := cited(*f, "sy.replica-failure-copied"); !ok {
			t.Errorf("%s: RD185 does not cite sy.replica-failure-copied", c.name)
		}
		if len(f.Evidence) != 2 {
			t.Errorf("%s: evidence %+v", c.name, f.Evidence)
		}
	})
}

// TestRefusalFix: each admission plugin's refusal, in the words the API
// server gives it, gets its own fix.
func TestRefusalFix(t *testing.T) {
	for _, c := range []struct{ msg, fix string }{
		{`pods "app-1" is forbidden: exceeded quota: compute, requested: limits.cpu=2, used: limits.cpu=8, limited: limits.cpu=9`, "A ResourceQuota in the namespace is full (`kubectl describe resourcequota -n shop`)"},
		{`pods "app-1" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`, "Pod Security admission refuses the pod template"},
		{`admission webhook "validate.kyverno.svc-fail" denied the request: policy Pod/shop/app-1 for resource violation: require-requests-limits`, "An admission webhook denied the pods"},
		{`pods "app-1" is forbidden: error looking up service account shop/app: serviceaccount "app" not found`, "The pod template's ServiceAccount does not exist"},
		{`pods "app-1" is forbidden: maximum memory usage per Container is 1Gi, but limit is 2Gi`, "A LimitRange refuses the pod's resources"},
		{`Internal error occurred: failed calling webhook`, "Fix what refuses the pods: the message says what."},
	} {
		if got := RefusalFix(c.msg, "shop"); !strings.HasPrefix(got, c.fix) {
			t.Errorf("%q: %q, want %q…", c.msg, got, c.fix)
		}
	}
}

// Refused reads only a ReplicaFailure that is True with pods missing.
func TestRefused(t *testing.T) {
	four := int32(4)
	rs := func(replicas int32, conds ...appsv1.ReplicaSetCondition) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "app"}, Spec: appsv1.ReplicaSetSpec{Replicas: &four},
			Status: appsv1.ReplicaSetStatus{Replicas: replicas, Conditions: conds}}
	}
	fail := appsv1.ReplicaSetCondition{Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: "refused"}
	got := Refused([]*appsv1.ReplicaSet{rs(1, fail), rs(4, fail), rs(1)})
	if len(got) != 1 || got[0].Missing != 3 || got[0].Message != "refused" {
		t.Errorf("%+v", got)
	}
}

// The same rollback 12 s after A's last pod turned available (deadline 20 s,
// progressDeadlineAbort): RD170 says when the deadline aborts it, and that
// within the window the abort lasts only until A's scale-down, after which
// the rollback starts over (the lab's window-deadline-abort saw the cycle
// on every version).
func TestDeadlineInWindow(t *testing.T) {
	for file, ver := range map[string]upstream.Version{exampletest.LabWindowQuota: "v1.10.2", exampletest.LabWindowQuota17: "v1.7.2"} {
		v := exampletest.View(t, file)
		v.Now = v.Now.Add(12 * time.Second)
		r := Run(v, model.ControllerVersion{Assumed: ver, Source: model.SourceFlag, Exact: true}, Options{})
		f := findingOf(r, "RD170")
		if f == nil {
			t.Fatalf("%s: no RD170: %v", ver, findingIDs(r))
		}
		if !strings.Contains(f.Message, "the controller aborts it: traffic back on the stable") ||
			!strings.Contains(f.Message, "scaled down — but only until that scale-down, which counts as progress: the window's next pass clears the abort and the rollback starts over") ||
			f.Severity != rules.Warning {
			t.Errorf("%s: %s %s", ver, f.Severity, f.Message)
		}
		if _, ok := cited(*f, "co.updated-change-is-progress"); !ok {
			t.Errorf("%s: RD170 in the window does not cite the scale-down as progress", ver)
		}
	}
}

// A scan reads the ReplicaSets' status whole: the fleet row of the
// refused rollback says RD185 as diagnose does.
func TestPodsRefusedInAFleetRead(t *testing.T) {
	objs, hdr := exampletest.Decode(t, exampletest.LabWindowQuota)
	r := Run(exampletest.ViewOf(t, snapshot.New(fleetHeader(*hdr), fleetShaped(objs))), model.ControllerVersion{Assumed: "v1.10.2", Source: model.SourceFlag, Exact: true}, Options{NoPods: true, Source: "scan"})
	if f := findingOf(r, "RD185"); f == nil || f.Severity != rules.Critical || !strings.Contains(f.Message, "exceeded quota") {
		t.Errorf("a fleet read of the refused rollback: RD185 %+v; findings %v", f, findingIDs(r))
	}
}

// The same rollback at the deadline's abort (the lab's window-deadline-abort
// after 20 s): status.abort, the Progressing condition
// ProgressDeadlineExceeded, 0% on A. RD104 must say that the abort holds
// until A's scale-down and then goes, not that the next pass clears it;
// the next pass keeps it; the simulation scales A down, clears the abort
// and resumes the rollback. Without progressDeadlineAbort it is a person's
// abort, which the window clears on the next pass.
func TestDeadlineAbortInWindow(t *testing.T) {
	for file, ver := range map[string]upstream.Version{exampletest.LabWindowQuota: "v1.10.2", exampletest.LabWindowQuota17: "v1.7.2"} {
		v := exampletest.View(t, file)
		exampletest.AtDeadlineAbort(v)
		ro := v.Rollout
		cv := model.ControllerVersion{Assumed: ver, Source: model.SourceFlag, Exact: true}
		r := Run(v, cv, Options{})
		f := findingOf(r, "RD104")
		if f == nil || !strings.Contains(f.Message, "aborted by the progress deadline during a rollback within rollbackWindow") ||
			!strings.Contains(f.Message, "the abort then goes and the rollback starts over") {
			t.Errorf("%s: RD104 %+v", ver, f)
		} else if _, ok := cited(*f, "sy.deadline-abort-again"); !ok {
			t.Errorf("%s: RD104 does not cite sy.deadline-abort-again", ver)
		}
		a := model.Analyze(v, ver)
		if a.Next.AbortCleared || !strings.Contains(a.Next.IndexWhy, "progressDeadlineAbort aborts it again in the same pass") {
			t.Errorf("%s: next pass clears the abort %v: %s", ver, a.Next.AbortCleared, a.Next.IndexWhy)
		}
		steps := model.Simulate(a.Inputs, 100)
		ended := -1
		for i, s := range steps {
			if s.DeadlineAbortEnded {
				ended = i
			}
		}
		if ended < 0 || !steps[ended].Pass.AbortCleared || steps[ended].Specs[a.Inputs.New.Name] != 0 || steps[len(steps)-1].Abort || steps[len(steps)-1].Specs[a.Inputs.New.Name] != 4 {
			t.Errorf("%s: the deadline's abort never ends, or the rollback does not resume: ended at %d, last %+v", ver, ended, steps[len(steps)-1])
		}
		// A person's abort: cleared on the next pass, as before.
		ro.Spec.ProgressDeadlineAbort = false
		if a := model.Analyze(v, ver); !a.Next.AbortCleared {
			t.Errorf("%s: a person's abort in the window is not cleared on the next pass: %s", ver, a.Next.IndexWhy)
		}
		if f := findingOf(Run(v, cv, Options{}), "RD104"); f == nil || !strings.HasPrefix(f.Message, "aborted during a rollback within rollbackWindow: the controller clears this abort on its next pass") {
			t.Errorf("%s: RD104 for a person's abort %+v", ver, f)
		}
	}
}
