package diagnose

import (
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
)

// checkHPAStuck (RD165): a HorizontalPodAutoscaler that scales the Rollout
// says, in its own conditions, that it cannot: ScalingActive False (no
// replica count computed: its metrics cannot be read) or AbleToScale False
// (it cannot read or write the Rollout's scale). It then holds spec.replicas
// where it is — during an update the canary's ReplicaSet is sized from that
// count, so more weight gets no more pods from load.
func checkHPAStuck(c *Context, r *rules.Rule) []rules.Finding {
	var out []rules.Finding
	for _, h := range c.View.HPAs {
		for _, typ := range []autoscalingv2.HorizontalPodAutoscalerConditionType{autoscalingv2.AbleToScale, autoscalingv2.ScalingActive} {
			cond := hpaCondition(h, typ)
			// ScalingDisabled: the target was scaled to 0 on purpose, and
			// the HPA leaves it there by design.
			if cond == nil || cond.Status != corev1.ConditionFalse || cond.Reason == "ScalingDisabled" {
				continue
			}
			obj := "HorizontalPodAutoscaler " + h.Namespace + "/" + h.Name
			what := "cannot compute a replica count"
			if typ == autoscalingv2.AbleToScale {
				what = "cannot read or change the Rollout's scale"
			}
			f := r.NewFinding(fmt.Sprintf("%s %s since %s (%s: %s): it holds the Rollout at %d replicas and will not scale it up or down until that clears — during an update the canary is sized from that count whatever load the weight brings",
				obj, what, cond.LastTransitionTime.UTC().Format("2006-01-02T15:04:05Z"), cond.Reason, cond.Message, h.Status.CurrentReplicas))
			f.Evidence = []rules.Evidence{ev(obj, fmt.Sprintf("status.conditions[%s]", typ), fmt.Sprintf("False (%s)", cond.Reason))}
			f.Cites = c.cites("uc.ceil") // the canary's pods are a share of spec.replicas
			out = append(out, f)
		}
	}
	return out
}

func hpaCondition(h *autoscalingv2.HorizontalPodAutoscaler, t autoscalingv2.HorizontalPodAutoscalerConditionType) *autoscalingv2.HorizontalPodAutoscalerCondition {
	for i := range h.Status.Conditions {
		if h.Status.Conditions[i].Type == t {
			return &h.Status.Conditions[i]
		}
	}
	return nil
}
