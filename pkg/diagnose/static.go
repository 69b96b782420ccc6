package diagnose

import (
	"fmt"
	"strings"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// The static Rollout checks, RD201–RD208: they read the spec and the objects
// beside it (autoscalers), so lint runs them on manifests.

func (c *Context) windowSet() bool {
	return c.ro.Spec.RollbackWindow != nil && c.ro.Spec.RollbackWindow.Revisions > 0
}

func (c *Context) trafficRouted() bool {
	return c.canary() != nil && c.canary().TrafficRouting != nil
}

func weightsString(ws []int32) string {
	s := make([]string, len(ws))
	for i, w := range ws {
		s[i] = fmt.Sprint(w)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

func checkFinal100(c *Context, r *rules.Rule) []rules.Finding {
	if !c.trafficRouted() || !c.windowSet() {
		return nil
	}
	steps := c.canary().Steps
	last, at := lastSetWeight(steps)
	maxW := c.Analysis.Inputs.MaxWeight
	if at < 0 || last < maxW {
		return nil
	}
	ws := setWeights(steps)
	shape := weightsString(ws)
	var advice string
	rest := ws[:len(ws)-1]
	m := c.Analysis.MinPods
	switch {
	case len(rest) == 0:
		advice = "steps " + shape + " alone: delete it (steps: []); normal deploys already wait for full availability"
	default:
		prev := rest[len(rest)-1]
		advice = fmt.Sprintf("delete the final setWeight %d: a rollback would then use %d%%", last, prev)
		if prev > 3*rest[0] || prev >= 50 {
			advice += fmt.Sprintf(" — still high: lower the earlier rungs too (the last rung should stay ≤ 3× the first, %d%%)", rest[0])
		}
		if safe := SafePods(m, prev); safe > 0 {
			advice += fmt.Sprintf("; %d minPods can carry %d%% up to %d total pods", m, prev, safe)
			if max, who := c.maxScale(); max > safe {
				advice += fmt.Sprintf(", but %s is %d: lower the rungs or raise minPodsPerReplicaSet too", who, max)
			}
		}
	}
	in := c.Analysis.Inputs
	f := r.NewFinding(fmt.Sprintf("steps %s end in setWeight %d with rollbackWindow.revisions %d: a rollback sends 100%% of traffic to the first canary pod(s) of %d; %s",
		shape, last, c.ro.Spec.RollbackWindow.Revisions, in.Replicas, advice))
	f.Evidence = []rules.Evidence{
		ev(c.obj(), fmt.Sprintf("spec.strategy.canary.steps[%d].setWeight", at), last),
		ev(c.obj(), "spec.rollbackWindow.revisions", c.ro.Spec.RollbackWindow.Revisions),
	}
	f.Cites = c.cites("rc.every-pass-idx", "tr.reverse-loop", "sv.partial-availability")
	return []rules.Finding{f}
}

func checkSafePods(c *Context, r *rules.Rule) []rules.Finding {
	if !c.trafficRouted() || !c.windowSet() {
		return nil
	}
	last, at := lastSetWeight(c.canary().Steps)
	if at < 0 || last >= c.Analysis.Inputs.MaxWeight || last == 0 {
		return nil
	}
	m := c.Analysis.MinPods
	if m == 0 {
		m = 1 // without minPodsPerReplicaSet the first canary pod carries the rung
	}
	safe := SafePods(m, last)
	replicas := c.Analysis.Inputs.Replicas
	max, who := c.maxScale()
	var over []string
	var evs []rules.Evidence
	if replicas > safe {
		over = append(over, fmt.Sprintf("replicas %d", replicas))
		evs = append(evs, ev(c.obj(), "spec.replicas", replicas))
	}
	if max > safe {
		over = append(over, fmt.Sprintf("%s %d", who, max))
		evs = append(evs, ev(who, "", max))
	}
	if len(over) == 0 {
		return nil
	}
	f := r.NewFinding(fmt.Sprintf("a rollback would put %d%% on %d canary pod(s); that is safe up to %d total pods, but %s", last, m, safe, strings.Join(over, " and ")))
	f.Evidence = append([]rules.Evidence{ev(c.obj(), fmt.Sprintf("spec.strategy.canary.steps[%d].setWeight", at), last), ev(c.obj(), "spec.strategy.canary.minPodsPerReplicaSet (effective)", m)}, evs...)
	f.Cites = c.cites("uc.canary-count", "uc.check-min-max", "tr.reverse-loop")
	return []rules.Finding{f}
}

func checkMinPods(c *Context, r *rules.Rule) []rules.Finding {
	if !c.trafficRouted() || c.canary().MinPodsPerReplicaSet == nil {
		return nil
	}
	m := *c.canary().MinPodsPerReplicaSet
	replicas := c.Analysis.Inputs.Replicas
	if m <= replicas || replicas == 0 {
		return nil
	}
	in := c.Analysis.Inputs
	capped := model.EffectiveMinPods(in) < m
	msg := fmt.Sprintf("minPodsPerReplicaSet %d > replicas %d: the canary is sized to %d, so updatedReplicas never equals replicas and the Healthy condition never becomes True; ", m, replicas, m)
	if model.PromotesAboveReplicas(in) {
		msg += fmt.Sprintf("%s promotes it with %d pods for %d replicas (the phase reads Healthy) until progressDeadlineSeconds pass, then the Rollout stays Degraded (ProgressDeadlineExceeded)", c.Version.Assumed, m, replicas)
	} else {
		msg += fmt.Sprintf("%s does not promote it either (promotion needs exactly %d available), so after the last step the update holds until progressDeadlineSeconds pass, then the Rollout stays Degraded (ProgressDeadlineExceeded)", c.Version.Assumed, replicas)
	}
	f := r.NewFinding(msg)
	if capped {
		f.Severity = rules.Info
		f.Message = fmt.Sprintf("minPodsPerReplicaSet %d > replicas %d: %s caps it at %d, but on older controllers the Healthy condition never becomes True with this spec", m, replicas, c.Version.Assumed, replicas)
	}
	f.Evidence = []rules.Evidence{ev(c.obj(), "spec.strategy.canary.minPodsPerReplicaSet", m), ev(c.obj(), "spec.replicas", replicas)}
	f.Cites = c.cites("uc.check-min-max", "uc.min-cap-replicas", "co.healthy-updated", "sy.full-promote-gate", "co.timed-out-reason")
	return []rules.Finding{f}
}

func checkDSS(c *Context, r *rules.Rule) []rules.Finding {
	if !c.trafficRouted() || !c.canary().DynamicStableScale {
		return nil
	}
	msg := "dynamicStableScale: stable is scaled down as weight moves to the canary (to 0 after a 100% flip), the weight is capped by canary availability only under promote --full"
	if c.canary().AbortScaleDownDelaySeconds == nil {
		msg += ", and with abortScaleDownDelaySeconds unset the abort scale-down delay is off"
	}
	f := r.NewFinding(msg)
	f.Evidence = []rules.Evidence{ev(c.obj(), "spec.strategy.canary.dynamicStableScale", true)}
	f.Cites = c.cites("tr.promote-full-dss-cap", "uc.dss-stable-count", "rs.abort-delay-dss-unset")
	return []rules.Finding{f}
}

func checkAbortDelayZero(c *Context, r *rules.Rule) []rules.Finding {
	if !c.trafficRouted() || c.canary().AbortScaleDownDelaySeconds == nil || *c.canary().AbortScaleDownDelaySeconds != 0 {
		return nil
	}
	f := r.NewFinding("abortScaleDownDelaySeconds: 0 turns the abort delay off: an abort scales the canary down in the same pass (to 0 unless a setCanaryScale step applies)")
	f.Evidence = []rules.Evidence{ev(c.obj(), "spec.strategy.canary.abortScaleDownDelaySeconds", 0)}
	f.Cites = c.cites("df.abort-delay-zero", "rs.abort-delay-nil")
	return []rules.Finding{f}
}

func checkRPT(c *Context, r *rules.Rule) []rules.Finding {
	if c.canary() == nil || c.canary().ReplicaProgressThreshold == nil {
		return nil
	}
	t := c.canary().ReplicaProgressThreshold
	if string(t.Type) != "Pods" {
		return nil
	}
	f := r.NewFinding(fmt.Sprintf("replicaProgressThreshold {type: Pods, value: %d}: the canary counts as at size with %d available pods; a rollback within the window goes to 100%% and promotes at %d of %d", t.Value, t.Value, t.Value, c.Analysis.Inputs.Replicas))
	f.Evidence = []rules.Evidence{ev(c.obj(), "spec.strategy.canary.replicaProgressThreshold", fmt.Sprintf("%s/%d", t.Type, t.Value))}
	if upstream := c.cites("uc.rpt-pods"); upstream[0].Absent {
		f.Severity = rules.Info
		f.Message = fmt.Sprintf("replicaProgressThreshold is ignored by %s (added in v1.9); after an upgrade it would let a rollback put 100%% on %d pods", c.Version.Assumed, t.Value)
	}
	f.Cites = c.cites("uc.rpt-pods", "uc.at-desired-canary", "sy.full-promote-gate")
	return []rules.Finding{f}
}

func checkMaxWeight(c *Context, r *rules.Rule) []rules.Finding {
	if !c.trafficRouted() || c.canary().TrafficRouting.MaxTrafficWeight == nil {
		return nil
	}
	tr := c.canary().TrafficRouting
	if tr.Nginx != nil || len(tr.Plugins) > 0 {
		return nil
	}
	f := r.NewFinding(fmt.Sprintf("maxTrafficWeight %d is set without nginx or a traffic plugin: the controller rejects the spec (InvalidSpec)", *tr.MaxTrafficWeight))
	f.Evidence = []rules.Evidence{ev(c.obj(), "spec.strategy.canary.trafficRouting.maxTrafficWeight", *tr.MaxTrafficWeight)}
	f.Cites = c.cites("va.max-weight-only-nginx")
	return []rules.Finding{f}
}

func checkAbortDelayResync(c *Context, r *rules.Rule) []rules.Finding {
	if !c.trafficRouted() || c.canary().AbortScaleDownDelaySeconds == nil || *c.canary().AbortScaleDownDelaySeconds <= 900 {
		return nil
	}
	f := r.NewFinding(fmt.Sprintf("abortScaleDownDelaySeconds %d exceeds the default 900 s resync: an aborted canary is scaled down on the second pass after the abort, not after the delay", *c.canary().AbortScaleDownDelaySeconds))
	f.Evidence = []rules.Evidence{ev(c.obj(), "spec.strategy.canary.abortScaleDownDelaySeconds", *c.canary().AbortScaleDownDelaySeconds)}
	f.Cites = c.cites("rs.abort-delay-fallthrough")
	return []rules.Finding{f}
}

// checkInvalidSpec reports what the controller's validation rejects: a
// Rollout with any of it is not reconciled at all, so every other prediction
// about it is moot until it is fixed.
func checkInvalidSpec(c *Context, r *rules.Rule) []rules.Finding {
	// The controller's own InvalidSpec condition (what the spec alone does
	// not show: a VirtualService, Service or template it names that does
	// not exist) is among them: the model reads it (model.Validate).
	bad := c.Analysis.Inputs.Invalid
	if len(bad) == 0 {
		return nil
	}
	parts := make([]string, len(bad))
	keys := []upstream.Key{"ct.invalid-spec"}
	var evs []rules.Evidence
	for i, b := range bad {
		parts[i] = b.String()
		keys = append(keys, b.Fact)
		evs = append(evs, ev(c.obj(), b.Field, b.Value))
	}
	f := r.NewFinding("the controller rejects this spec (InvalidSpec) and will not scale, shift traffic or move steps until it is fixed: " + strings.Join(parts, "; "))
	f.Evidence = evs
	f.Cites = c.cites(keys...)
	return []rules.Finding{f}
}
