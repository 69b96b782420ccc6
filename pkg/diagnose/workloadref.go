package diagnose

import (
	"fmt"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
)

// checkWorkloadRefPods (RD168): the Deployment a workloadRef names keeps
// pods of its own. The deployment controller rolls them to each template
// change at once, outside the canary; the Rollout's controller scales the
// Deployment down only during the migration (revision 1, scaleDown
// onsuccess or progressively). Critical while an update is under way and
// some of those pods already run its template: the canary is wider than
// its step says.
func checkWorkloadRefPods(c *Context, r *rules.Rule) []rules.Finding {
	ref, d := c.ro.Spec.WorkloadRef, c.View.WorkloadRef
	if ref == nil || d == nil || c.View.Header.Offline {
		return nil // manifests have no pods: RD220 reads their replicas
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	if want == 0 && d.Status.Replicas == 0 {
		return nil
	}
	in := c.Analysis.Inputs
	rev := ""
	if in.New != nil {
		rev = in.New.Revision
	}
	migrating := rev == "1" && (ref.ScaleDown == v1alpha1.ScaleDownOnSuccess || ref.ScaleDown == v1alpha1.ScaleDownProgressively)
	if migrating && want > 0 {
		return nil // the controller scales it down as the migration ends
	}
	scaleDown := ref.ScaleDown
	if scaleDown == "" {
		scaleDown = "never, the default"
	}
	obj := "Deployment " + d.Namespace + "/" + d.Name
	msg := fmt.Sprintf("%s, which spec.workloadRef names, runs pods of its own (spec.replicas %d, %d ready): they take requests from any Service that selects the app's labels, and the Deployment rolls them to each template change at once, outside the canary's steps", obj, want, d.Status.ReadyReplicas)
	switch {
	case rev != "1" && (ref.ScaleDown == v1alpha1.ScaleDownOnSuccess || ref.ScaleDown == v1alpha1.ScaleDownProgressively):
		msg += fmt.Sprintf("; workloadRef.scaleDown %s no longer scales it: the controller does so only at revision 1, and the Rollout is at revision %s", scaleDown, rev)
	default:
		msg += fmt.Sprintf("; workloadRef.scaleDown %s: the controller never scales it", scaleDown)
	}
	updating := in.New != nil && in.Stable != nil && in.New.Name != in.Stable.Name && !in.Abort
	f := r.NewFinding(msg)
	if updating && d.Status.UpdatedReplicas > 0 && d.Status.ReadyReplicas > 0 {
		f.Severity = rules.Critical
		f.Message += fmt.Sprintf(" — now %d of its pods already run the update's template (status.updatedReplicas) while the canary is at step %d", d.Status.UpdatedReplicas, in.Index0())
	}
	f.Evidence = []rules.Evidence{
		ev(obj, "spec.replicas", want),
		ev(obj, "status.readyReplicas", d.Status.ReadyReplicas),
		ev(obj, "status.updatedReplicas", d.Status.UpdatedReplicas),
	}
	f.Cites = c.cites("wr.progressively-rev1", "wr.onsuccess-rev1")
	return []rules.Finding{f}
}

// checkWorkloadRefReplicas (RD220): in manifests (lint), the Deployment a
// workloadRef names has replicas other than 0 (1 when unset): each apply
// or sync gives it pods of its own. Live, RD168 reports the pods instead.
func checkWorkloadRefReplicas(c *Context, r *rules.Rule) []rules.Finding {
	ref, d := c.ro.Spec.WorkloadRef, c.View.WorkloadRef
	if ref == nil || d == nil || !c.View.Header.Offline {
		return nil
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	set := fmt.Sprintf("sets replicas %d", want)
	if d.Spec.Replicas == nil {
		set = "leaves replicas unset (1)"
	}
	if want == 0 {
		return nil
	}
	obj := "Deployment " + d.Namespace + "/" + d.Name
	msg := fmt.Sprintf("the manifest of %s, which spec.workloadRef names, %s: every apply or sync gives it pods of its own, which the deployment controller rolls to each template change at once, outside the canary's steps", obj, set)
	if ref.ScaleDown == v1alpha1.ScaleDownOnSuccess || ref.ScaleDown == v1alpha1.ScaleDownProgressively {
		msg += fmt.Sprintf("; workloadRef.scaleDown %s scales it down only while the Rollout is at revision 1, so a sync after the first update scales it back up for good", ref.ScaleDown)
	}
	f := r.NewFinding(msg)
	f.Subject = obj
	f.Evidence = []rules.Evidence{ev(obj, "spec.replicas", want)}
	f.Cites = c.cites("wr.progressively-rev1", "wr.onsuccess-rev1")
	return []rules.Finding{f}
}
