package diagnose

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
)

// RefusedPods is a ReplicaSet whose pods the API server refuses to create:
// its ReplicaFailure condition (reason FailedCreate, from the ReplicaSet
// controller) with pods still missing. Nothing brings them until the cause
// is fixed, so whatever waits on them — an update, a rollback, the stable's
// share of the traffic — waits.
type RefusedPods struct {
	RS      *appsv1.ReplicaSet
	Missing int32  // spec.replicas less the pods that exist
	Reason  string // the condition's reason (FailedCreate)
	Message string // the API server's refusal, as the condition quotes it
	Since   time.Time
}

// Refused lists the Rollout's ReplicaSets whose pods are refused, oldest
// first. A ReplicaFailure condition with no pod missing is left out: the
// ReplicaSet controller removes it on its next sync that creates what it
// needs.
func Refused(rss []*appsv1.ReplicaSet) []RefusedPods {
	var out []RefusedPods
	for _, rs := range rss {
		spec := int32(1)
		if rs.Spec.Replicas != nil {
			spec = *rs.Spec.Replicas
		}
		if spec <= rs.Status.Replicas {
			continue
		}
		for _, c := range rs.Status.Conditions {
			if c.Type == appsv1.ReplicaSetReplicaFailure && c.Status == corev1.ConditionTrue {
				out = append(out, RefusedPods{RS: rs, Missing: spec - rs.Status.Replicas, Reason: c.Reason, Message: c.Message, Since: c.LastTransitionTime.Time})
			}
		}
	}
	return out
}

// checkPodsRefused (RD185): a ReplicaSet of the Rollout cannot create its
// pods. The refusal is the API server's (a ResourceQuota, an admission
// webhook or policy, Pod Security admission, a missing ServiceAccount, a
// LimitRange); the controller never sees it as an error, only as pods
// that do not come, so the Rollout reads Progressing until its deadline.
func checkPodsRefused(c *Context, r *rules.Rule) []rules.Finding {
	in := c.Analysis.Inputs
	var out []rules.Finding
	for _, x := range Refused(c.View.ReplicaSets) {
		role, waits := "an older ReplicaSet", ""
		f := r.NewFinding("")
		switch {
		case in.New != nil && x.RS.Name == in.New.Name && (in.Stable == nil || in.Stable.Name != in.New.Name):
			role, waits = "the update's ReplicaSet", "the update waits on them and cannot complete"
			if model.RollbackWindow(in).WithinWindow {
				role, waits = "the ReplicaSet a rollback within the window returns to", "the rollback cannot finish"
			}
			if w := in.Traffic(); in.TrafficRouted && in.BG == nil && w > 0 {
				waits += fmt.Sprintf(", and %d%% of traffic stays on its %d available %s", w, in.New.Available, plural("pod", int(in.New.Available)))
			}
		case in.Stable != nil && x.RS.Name == in.Stable.Name:
			role, waits = "the stable ReplicaSet", fmt.Sprintf("the stable stays %d short, and traffic moved back onto it (an abort, an undo) waits on them", x.Missing)
		default:
			f.Severity = rules.Warning
		}
		spec := x.Missing + x.RS.Status.Replicas
		f.Message = fmt.Sprintf("%s, %s, cannot create its pods: %d of %d missing — %s (its ReplicaFailure condition, %s, since %s). They never appear until that is fixed",
			x.RS.Name, role, x.Missing, spec, x.Message, x.Reason, x.Since.UTC().Format(time.RFC3339))
		if waits != "" {
			f.Message += ": " + waits
		}
		f.Remediation = RefusalFix(x.Message, x.RS.Namespace) + " " + f.Remediation
		f.Evidence = []rules.Evidence{
			ev("ReplicaSet "+x.RS.Name, "status.conditions[ReplicaFailure]", x.Reason+": "+x.Message),
			ev("ReplicaSet "+x.RS.Name, "status.replicas / spec.replicas", fmt.Sprintf("%d/%d", x.RS.Status.Replicas, spec)),
		}
		f.Cites = c.cites("sy.replica-failure-copied")
		out = append(out, f)
	}
	return out
}

// RefusalFix says what to fix for the refusal the API server gave, by the
// words its admission plugins use.
func RefusalFix(msg, ns string) string {
	switch {
	case strings.Contains(msg, "exceeded quota"):
		return fmt.Sprintf("A ResourceQuota in the namespace is full (`kubectl describe resourcequota -n %s`): while an update or a rollback runs, both revisions' pods count against it — up to twice spec.replicas (a canary with dynamicStableScale needs fewer) — so raise it or make room.", ns)
	case strings.Contains(msg, "violates PodSecurity"):
		return fmt.Sprintf("Pod Security admission refuses the pod template; the message lists what violates the namespace's enforce level: fix the template's securityContext, or the namespace's pod-security.kubernetes.io/enforce label (`kubectl get ns %s --show-labels`).", ns)
	case strings.Contains(msg, "admission webhook"):
		return "An admission webhook denied the pods (the message names it and gives its reason, often a policy of Kyverno or Gatekeeper): fix the pod template to pass it, or the policy."
	case strings.Contains(msg, "serviceaccount") && strings.Contains(msg, "not found"):
		return "The pod template's ServiceAccount does not exist: create it, or fix spec.template.spec.serviceAccountName."
	case strings.Contains(msg, "per Container") || strings.Contains(msg, "per Pod") || strings.Contains(msg, "LimitRange"):
		return fmt.Sprintf("A LimitRange refuses the pod's resources (`kubectl describe limitrange -n %s`): fix the template's requests and limits, or the LimitRange.", ns)
	}
	return "Fix what refuses the pods: the message says what."
}
