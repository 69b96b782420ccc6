package escape

import (
	"fmt"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// leastHarmful names, when every way out is harmful, the one that hurts
// least — the smallest overload of the fewest pods — how long it lasts, and
// what can be done outside the controller's verbs at its own risk.
func leastHarmful(opts []Option, base model.Inputs, v *snapshot.View) (Action, string) {
	// Waiting adds no risk of its own: another action is less harmful only
	// when it at least halves the overload.
	var best *Option
	for i := range opts {
		if opts[i].Action == Wait {
			best = &opts[i]
		}
	}
	if best == nil {
		return Wait, "every way out is harmful, and none can be rated against another"
	}
	for i := range opts {
		o := &opts[i]
		if o.Verdict == Harmful && overload(o.Effect) < overload(best.Effect)/2 {
			best = o
		}
	}
	what := string(best.Action)
	if best.Action == Wait {
		what = "to wait"
	}
	why := fmt.Sprintf("every way out is harmful; the least harmful is %s: %s", what, best.Why)
	if x := best.Effect.Exposure; x != nil {
		need := model.WeightToReplicas(x.Replicas, x.Weight, base.MaxWeight)
		why += fmt.Sprintf(". It lasts until %d pods of %s are available", need, x.Canary)
		if hung := hungOf(base, v, x.Canary); hung != "" {
			// No rate says when a hung pod comes back: it does not.
			why += hung
		} else if rate, ok := readyRate(v, x.Canary); ok && need > x.OnPods {
			eta := time.Duration(float64(need-x.OnPods) / rate * float64(time.Minute)).Round(time.Second)
			why += fmt.Sprintf(" (about %s more at the %.1f pods/min observed)", eta, rate)
		}
	}
	if x := best.Effect.stableHarm; x != nil && best.Effect.Exposure == nil {
		why += fmt.Sprintf(". It lasts until the stable %s has %d pods available", x.Stable, x.Needs) + hungOf(base, v, x.Stable)
	}
	if base.TrafficRouted && best.Effect.Exposure != nil {
		// Only for the canary's exposure: weights back to the stable by
		// hand would add to a stable's shortage.
		why += ". Outside the controller's verbs: scale the argo-rollouts controller Deployment to 0, set the router's weights back to the stable by hand, and scale the controller up again once the canary has the pods — risk: no Rollout in the cluster is reconciled meanwhile, and on its first pass back the controller writes its own weight again"
	}
	return best.Action, why
}

// hungOf says that ReplicaSet name's first hung pod does not come back by
// itself, or "" when it has none.
func hungOf(base model.Inputs, v *snapshot.View, name string) string {
	for _, r := range base.All {
		if r.Name != name {
			continue
		}
		if hung := diagnose.HungPods(v, r.Hash); len(hung) > 0 {
			return fmt.Sprintf(", and %s has not been Ready for minutes: it does not come back by itself", hung[0].Name)
		}
	}
	return ""
}

// overload is how far the worst exposure of an effect exceeds its pods: the
// pods the weight needs over the pods it has (0 when nothing is exposed).
func overload(e Effect) float64 {
	x := e.Exposure
	var worst float64
	if s := e.stableHarm; s != nil {
		// In the canary's units, weight × replicas over the pods: the
		// pods the share needs are its weight × replicas / 100.
		worst = float64(s.Needs) * 100 / math.Max(float64(s.OnPods), 0.5)
	}
	if x == nil {
		if e.ErrorLoop {
			return math.MaxFloat64 / 2 // stuck, with no end the model can see
		}
		return worst
	}
	need := float64(x.Weight) * float64(x.Replicas)
	return math.Max(worst, need/math.Max(float64(x.OnPods), 0.5))
}

// readyRate is how fast a ReplicaSet's pods have been turning Ready, in
// pods per minute, from their creation and Ready transition times (ok only
// with two or more Ready pods over a measurable span).
func readyRate(v *snapshot.View, rsName string) (float64, bool) {
	if v.Workload == nil {
		return 0, false
	}
	var first, last time.Time
	n := 0
	for _, p := range v.Workload.Pods {
		if snapshot.ReplicaSetOf(p) != rsName {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type != corev1.PodReady || c.Status != corev1.ConditionTrue {
				continue
			}
			n++
			if first.IsZero() || p.CreationTimestamp.Time.Before(first) {
				first = p.CreationTimestamp.Time
			}
			if c.LastTransitionTime.Time.After(last) {
				last = c.LastTransitionTime.Time
			}
		}
	}
	span := last.Sub(first).Minutes()
	if n < 2 || span <= 0 {
		return 0, false
	}
	return float64(n) / span, true
}

// Annotate gives every finding that carries an escape hint the plan's
// recommendation for this state and version instead of the rule's generic
// one, so diagnose and escape give one answer for one state.
func Annotate(rep *diagnose.Report, p *Plan) {
	for i := range rep.Findings {
		if rep.Findings[i].Escape != "" {
			rep.Findings[i].Escape = p.Reason + " (kubectl rolloutdoctor escape)"
		}
	}
}
