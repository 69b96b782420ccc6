package diagnose

import (
	"fmt"
	"slices"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
)

// checkDynamicRollback (RD175): an update back to the stable revision (an
// undo) with dynamicStableScale and trafficRouting is complete as far as
// the status goes — the Rollout reads Healthy once the stable's available
// pods count against spec.replicas — while the router still sends the
// share the stable's available pods cannot take to the revision it left,
// and the canary Service still selects that revision's pods. The lab
// (v1.7.2 and v1.10.2, one hung stable pod): Healthy, 80/20, the canary
// Service on the aborted canary, for as long as the pod hung.
func checkDynamicRollback(c *Context, r *rules.Rule) []rules.Finding {
	in := c.Analysis.Inputs
	d := c.Analysis.Next.Decision
	if d.Branch != model.BranchRollbackToStable || in.Traffic() == 0 || in.Stable == nil || in.Weights == nil {
		return nil
	}
	left := in.Weights.Canary.PodTemplateHash
	for _, x := range in.All {
		if x.Hash == left {
			left = fmt.Sprintf("%s (revision %s)", x.Name, x.Revision)
		}
	}
	state := "the Rollout reads " + c.ro.Status.Phase + ", but"
	if c.ro.Status.Phase == "" {
		state = "rolling back to the stable:"
	}
	msg := fmt.Sprintf("%s %d%% of traffic still goes to %s, the revision it rolled back from: with dynamicStableScale the controller moves weight off it only as the stable %s's pods become available (%d of %d now), and the canary Service selects its pods until then",
		state, in.Traffic(), left, in.Stable.Name, in.Stable.Available, in.Replicas)
	f := r.NewFinding(msg)
	if hung := HungPods(c.View, in.Stable.Hash); len(hung) > 0 {
		// Nothing ends it: the hung pod does not come back by itself.
		f.Severity = rules.Critical
		f.Message += fmt.Sprintf("; %s %s not been Ready for minutes, so it does not end by itself", names(hung), hasHave(len(hung)))
	}
	f.Evidence = []rules.Evidence{
		ev(c.obj(), "status.canary.weights.canary", fmt.Sprintf("%s at %d%%", in.Weights.Canary.PodTemplateHash, in.Weights.Canary.Weight)),
		ev("ReplicaSet "+c.ro.Namespace+"/"+in.Stable.Name, "status.availableReplicas", fmt.Sprintf("%d (spec.replicas %d)", in.Stable.Available, in.Replicas)),
	}
	f.Cites = append(slices.Clone(d.Cites), c.cites("sv.dss-rollback-keeps-canary-svc", "rc.status-available-all", "ru.phase-available")...)
	f.Remediation = missingPodsFix(c, in.Stable, "the controller moves the rest of the weight to the stable")
	return []rules.Finding{f}
}
