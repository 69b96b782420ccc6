package diagnose

import (
	"fmt"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
)

// checkStableOverCapacity (RD178): with trafficRouting the stable takes
// whatever the canary weight leaves — all of it once the canary
// destination selects the stable's pods too — on however many of its pods
// are available. The controller checks the stable only before it changes
// a weight (tr.stable-check-call, from v1.8.2): a stable that loses pods
// afterwards keeps its share, and with dynamicStableScale it is sized for
// that share, so one missing pod is enough. The lab (an Istio canary of 5
// at 20%, v1.7.2 and v1.10.2): two of 5 stable pods hung, or one of 4 with
// dynamicStableScale, left 80% on 3 pods for as long as they hung.
func checkStableOverCapacity(c *Context, r *rules.Rule) []rules.Finding {
	in := c.Analysis.Inputs
	share, ok := in.StableShare()
	if !ok {
		return nil // no canary in play: the stable's pods are the Rollout's
	}
	s := in.Stable
	need := model.WeightToReplicas(in.Replicas, share, in.MaxWeight)
	if share <= 0 || s.Available >= need {
		return nil
	}
	msg := fmt.Sprintf("%s of traffic on the stable %s's %d available %s: that share needs %d of %d",
		pct(share*100/in.MaxWeight), s.Name, s.Available, plural("pod", int(s.Available)), need, in.Replicas)
	if share == in.MaxWeight && in.New.Hash == s.Hash {
		msg += fmt.Sprintf(" (the router still sends %d%% to the canary Service, which already selects the stable's pods)", in.Traffic())
	} else if share == in.MaxWeight && in.Abort && in.Traffic() > 0 {
		msg = "up to " + msg + fmt.Sprintf(" (the router still sends %d%% to the canary Service, which the abort points at the stable's pods; each pass points it back at the canary for a moment: argo-rollouts #3078)", in.Traffic())
	} else if in.DSS && s.Spec < in.Replicas {
		msg += fmt.Sprintf(" (dynamicStableScale sized it for that share, %d pods)", s.Spec)
	}
	f := r.NewFinding(msg)
	if hung := HungPods(c.View, s.Hash); len(hung) > 0 {
		// It does not end by itself: a hung pod does not come back.
		f.Severity = rules.Critical
		f.Message += fmt.Sprintf("; %s %s not been Ready for minutes, so it does not end by itself", names(hung), hasHave(len(hung)))
	}
	f.Evidence = []rules.Evidence{
		ev("ReplicaSet "+c.ro.Namespace+"/"+s.Name, "status.availableReplicas / spec.replicas", fmt.Sprintf("%d/%d", s.Available, s.Spec)),
		ev(c.obj(), "spec.replicas", in.Replicas),
	}
	if in.Weights != nil {
		f.Evidence = append(f.Evidence, ev(c.obj(), "status.canary.weights.canary", fmt.Sprintf("%s at %d%%", in.Weights.Canary.PodTemplateHash, in.Weights.Canary.Weight)))
	}
	f.Cites = c.cites("tr.stable-check-call", "tr.stable-check-def")
	if share == in.MaxWeight && in.New.Hash == s.Hash {
		f.Cites = append(f.Cites, c.cites("rc.service-before-traffic", "sv.canary-svc-target")...)
	} else if share == in.MaxWeight && in.Abort {
		f.Cites = append(f.Cites, c.cites("tr.abort-canary-svc-to-stable", "sv.canary-svc-target")...)
	}
	f.Remediation = missingPodsFix(c, s, "the stable carries its share on enough pods again")
	return []rules.Finding{f}
}
