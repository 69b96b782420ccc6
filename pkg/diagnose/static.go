package diagnose

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
)

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

func checkFinal100(c *Context, r *Rule) []Finding {
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
	f := r.finding(fmt.Sprintf("steps %s end in setWeight %d with rollbackWindow.revisions %d: a rollback sends 100%% of traffic to the first canary pod(s) of %d; %s",
		shape, last, c.ro.Spec.RollbackWindow.Revisions, in.Replicas, advice))
	f.Evidence = []Evidence{
		ev(c.obj(), fmt.Sprintf("spec.strategy.canary.steps[%d].setWeight", at), last),
		ev(c.obj(), "spec.rollbackWindow.revisions", c.ro.Spec.RollbackWindow.Revisions),
	}
	f.Cites = c.cites("rc.every-pass-idx", "tr.reverse-loop", "sv.partial-availability")
	return []Finding{f}
}

func checkSafePods(c *Context, r *Rule) []Finding {
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
	var evs []Evidence
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
	f := r.finding(fmt.Sprintf("a rollback would put %d%% on %d canary pod(s); that is safe up to %d total pods, but %s", last, m, safe, strings.Join(over, " and ")))
	f.Evidence = append([]Evidence{ev(c.obj(), fmt.Sprintf("spec.strategy.canary.steps[%d].setWeight", at), last), ev(c.obj(), "spec.strategy.canary.minPodsPerReplicaSet (effective)", m)}, evs...)
	f.Cites = c.cites("uc.canary-count", "uc.check-min-max", "tr.reverse-loop")
	return []Finding{f}
}

func checkMinPods(c *Context, r *Rule) []Finding {
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
	msg := fmt.Sprintf("minPodsPerReplicaSet %d > replicas %d: the canary is sized to %d, so updatedReplicas never equals replicas and the Healthy condition never becomes True (the phase may still read Healthy once the canary is promoted, with %d pods for %d replicas)", m, replicas, m, m, replicas)
	f := r.finding(msg)
	if capped {
		f.Severity = Info
		f.Message = fmt.Sprintf("minPodsPerReplicaSet %d > replicas %d: %s caps it at %d, but on older controllers the Healthy condition never becomes True with this spec", m, replicas, c.Version.Assumed, replicas)
	}
	f.Evidence = []Evidence{ev(c.obj(), "spec.strategy.canary.minPodsPerReplicaSet", m), ev(c.obj(), "spec.replicas", replicas)}
	f.Cites = c.cites("uc.check-min-max", "uc.min-cap-replicas", "co.healthy-updated")
	return []Finding{f}
}

func checkDSS(c *Context, r *Rule) []Finding {
	if !c.trafficRouted() || !c.canary().DynamicStableScale {
		return nil
	}
	msg := "dynamicStableScale: stable is scaled down as weight moves to the canary (to 0 after a 100% flip), the weight is capped by canary availability only under promote --full"
	if c.canary().AbortScaleDownDelaySeconds == nil {
		msg += ", and with abortScaleDownDelaySeconds unset the abort scale-down delay is off"
	}
	f := r.finding(msg)
	f.Evidence = []Evidence{ev(c.obj(), "spec.strategy.canary.dynamicStableScale", true)}
	f.Cites = c.cites("tr.promote-full-dss-cap", "uc.dss-stable-count", "rs.abort-delay-dss-unset")
	return []Finding{f}
}

func checkAbortDelayZero(c *Context, r *Rule) []Finding {
	if !c.trafficRouted() || c.canary().AbortScaleDownDelaySeconds == nil || *c.canary().AbortScaleDownDelaySeconds != 0 {
		return nil
	}
	f := r.finding("abortScaleDownDelaySeconds: 0 turns the abort delay off: an abort scales the canary down in the same pass (to 0 unless a setCanaryScale step applies)")
	f.Evidence = []Evidence{ev(c.obj(), "spec.strategy.canary.abortScaleDownDelaySeconds", 0)}
	f.Cites = c.cites("df.abort-delay-zero", "rs.abort-delay-nil")
	return []Finding{f}
}

func checkRPT(c *Context, r *Rule) []Finding {
	if c.canary() == nil || c.canary().ReplicaProgressThreshold == nil {
		return nil
	}
	t := c.canary().ReplicaProgressThreshold
	if string(t.Type) != "Pods" {
		return nil
	}
	f := r.finding(fmt.Sprintf("replicaProgressThreshold {type: Pods, value: %d}: the canary counts as at size with %d available pods; a rollback within the window goes to 100%% and promotes at %d of %d", t.Value, t.Value, t.Value, c.Analysis.Inputs.Replicas))
	f.Evidence = []Evidence{ev(c.obj(), "spec.strategy.canary.replicaProgressThreshold", fmt.Sprintf("%s/%d", t.Type, t.Value))}
	if upstream := c.cites("uc.rpt-pods"); upstream[0].Absent {
		f.Severity = Info
		f.Message = fmt.Sprintf("replicaProgressThreshold is ignored by %s (added in v1.9); after an upgrade it would let a rollback put 100%% on %d pods", c.Version.Assumed, t.Value)
	}
	f.Cites = c.cites("uc.rpt-pods", "uc.at-desired-canary", "sy.full-promote-gate")
	return []Finding{f}
}

func checkMaxWeight(c *Context, r *Rule) []Finding {
	if !c.trafficRouted() || c.canary().TrafficRouting.MaxTrafficWeight == nil {
		return nil
	}
	tr := c.canary().TrafficRouting
	if tr.Nginx != nil || len(tr.Plugins) > 0 {
		return nil
	}
	f := r.finding(fmt.Sprintf("maxTrafficWeight %d is set without nginx or a traffic plugin: the controller rejects the spec (InvalidSpec)", *tr.MaxTrafficWeight))
	f.Evidence = []Evidence{ev(c.obj(), "spec.strategy.canary.trafficRouting.maxTrafficWeight", *tr.MaxTrafficWeight)}
	f.Cites = c.cites("va.max-weight-only-nginx")
	return []Finding{f}
}

func checkAbortDelayResync(c *Context, r *Rule) []Finding {
	if !c.trafficRouted() || c.canary().AbortScaleDownDelaySeconds == nil || *c.canary().AbortScaleDownDelaySeconds <= 900 {
		return nil
	}
	f := r.finding(fmt.Sprintf("abortScaleDownDelaySeconds %d exceeds the default 900 s resync: an aborted canary is scaled down on the second pass after the abort, not after the delay", *c.canary().AbortScaleDownDelaySeconds))
	f.Evidence = []Evidence{ev(c.obj(), "spec.strategy.canary.abortScaleDownDelaySeconds", *c.canary().AbortScaleDownDelaySeconds)}
	f.Cites = c.cites("rs.abort-delay-fallthrough")
	return []Finding{f}
}

// routerWeights reads the canary and stable weights the VirtualService routes
// enforce, for the destinations the Rollout names.
func routerWeights(c *Context) (canary, stable int64, where string, ok bool) {
	tr := c.canary().TrafficRouting
	if tr == nil || tr.Istio == nil {
		return 0, 0, "", false
	}
	hosts := map[string]string{}
	if cs := c.canary().CanaryService; cs != "" {
		hosts[cs] = "canary"
	}
	if ss := c.canary().StableService; ss != "" {
		hosts[ss] = "stable"
	}
	subsets := map[string]string{}
	if dr := tr.Istio.DestinationRule; dr != nil {
		subsets[dr.CanarySubsetName] = "canary"
		subsets[dr.StableSubsetName] = "stable"
	}
	for name, vs := range c.View.VirtualServices {
		routes, _, _ := unstructured.NestedSlice(vs.Object, "spec", "http")
		for _, rt := range routes {
			rm, _ := rt.(map[string]interface{})
			dests, _ := rm["route"].([]interface{})
			found := false
			for _, d := range dests {
				dm, _ := d.(map[string]interface{})
				dest, _ := dm["destination"].(map[string]interface{})
				host, _ := dest["host"].(string)
				subset, _ := dest["subset"].(string)
				role := hosts[strings.Split(host, ".")[0]]
				if subset != "" && len(subsets) > 0 {
					role = subsets[subset]
				}
				w, _, _ := nestedInt(dm, "weight")
				switch role {
				case "canary":
					canary, found = w, true
				case "stable":
					stable, found = w, true
				}
			}
			if found {
				return canary, stable, "VirtualService " + name, true
			}
		}
	}
	return 0, 0, "", false
}

func checkRouterMismatch(c *Context, r *Rule) []Finding {
	if !c.trafficRouted() || c.ro.Status.Canary.Weights == nil {
		return nil
	}
	cw, sw, where, ok := routerWeights(c)
	if !ok {
		return nil
	}
	st := c.ro.Status.Canary.Weights
	if int64(st.Canary.Weight) == cw && int64(st.Stable.Weight) == sw {
		return nil
	}
	f := r.finding(fmt.Sprintf("%s sends canary %d%% / stable %d%%, the Rollout status says canary %d%% / stable %d%%", where, cw, sw, st.Canary.Weight, st.Stable.Weight))
	f.Evidence = []Evidence{ev(where, "spec.http[].route[].weight", fmt.Sprintf("%d/%d", cw, sw)), ev(c.obj(), "status.canary.weights", fmt.Sprintf("%d/%d", st.Canary.Weight, st.Stable.Weight))}
	f.Cites = c.cites("tr.set-weight-call")
	return []Finding{f}
}
