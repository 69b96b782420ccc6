package diagnose

import (
	"fmt"
	"math"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

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

// hpaTolerance is the autoscaler's tolerance: the kube-controller-manager
// default (--horizontal-pod-autoscaler-tolerance 0.1), or the HPA's own
// scale-up tolerance where it sets one.
func hpaTolerance(h *autoscalingv2.HorizontalPodAutoscaler) float64 {
	if b := h.Spec.Behavior; b != nil && b.ScaleUp != nil && b.ScaleUp.Tolerance != nil {
		return b.ScaleUp.Tolerance.AsApproximateFloat64()
	}
	return 0.1
}

// metricRatio is a metric's current value over its target, per pod, from
// the HPA's status (ok false when the status has no reading for it), and
// whether the HPA divides it by the pods the scale reports (External and
// Object AverageValue: by status.HPAReplicas) rather than averaging it
// over the pods the selector matches (Resource, ContainerResource, Pods).
func metricRatio(h *autoscalingv2.HorizontalPodAutoscaler, m autoscalingv2.MetricSpec) (name string, ratio float64, perScale, ok bool) {
	div := func(cur, target *resource.Quantity) (float64, bool) {
		if cur == nil || target == nil || target.IsZero() {
			return 0, false
		}
		return cur.AsApproximateFloat64() / target.AsApproximateFloat64(), true
	}
	for _, s := range h.Status.CurrentMetrics {
		if s.Type != m.Type {
			continue
		}
		switch {
		case m.Type == autoscalingv2.ExternalMetricSourceType && m.External != nil && s.External != nil && s.External.Metric.Name == m.External.Metric.Name:
			r, ok := div(s.External.Current.AverageValue, m.External.Target.AverageValue)
			return "External metric " + m.External.Metric.Name, r, true, ok
		case m.Type == autoscalingv2.ObjectMetricSourceType && m.Object != nil && s.Object != nil && s.Object.Metric.Name == m.Object.Metric.Name:
			r, ok := div(s.Object.Current.AverageValue, m.Object.Target.AverageValue)
			return "Object metric " + m.Object.Metric.Name, r, true, ok
		case m.Type == autoscalingv2.PodsMetricSourceType && m.Pods != nil && s.Pods != nil && s.Pods.Metric.Name == m.Pods.Metric.Name:
			r, ok := div(s.Pods.Current.AverageValue, m.Pods.Target.AverageValue)
			return "Pods metric " + m.Pods.Metric.Name, r, false, ok
		case m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && s.Resource != nil && s.Resource.Name == m.Resource.Name:
			r, ok := utilRatio(s.Resource.Current, m.Resource.Target, div)
			return string(m.Resource.Name), r, false, ok
		case m.Type == autoscalingv2.ContainerResourceMetricSourceType && m.ContainerResource != nil && s.ContainerResource != nil && s.ContainerResource.Name == m.ContainerResource.Name && s.ContainerResource.Container == m.ContainerResource.Container:
			r, ok := utilRatio(s.ContainerResource.Current, m.ContainerResource.Target, div)
			return string(m.ContainerResource.Name) + " of container " + m.ContainerResource.Container, r, false, ok
		}
	}
	return "", 0, false, false
}

// utilRatio is a resource metric's current over target: utilization when
// the target is one, else the average value.
func utilRatio(cur autoscalingv2.MetricValueStatus, t autoscalingv2.MetricTarget, div func(a, b *resource.Quantity) (float64, bool)) (float64, bool) {
	if t.Type == autoscalingv2.UtilizationMetricType {
		if cur.AverageUtilization == nil || t.AverageUtilization == nil || *t.AverageUtilization == 0 {
			return 0, false
		}
		return float64(*cur.AverageUtilization) / float64(*t.AverageUtilization), true
	}
	return div(cur.AverageValue, t.AverageValue)
}

// matchAutoscalerCountsCanary (#4847; #2857, #3849): during a
// traffic-routed update without dynamicStableScale the canary's pods come
// on top of a full stable (uc.stable-full-no-dss), and the Rollout's scale
// reports them all: status.HPAReplicas counts every ReplicaSet's pods
// (hpa.replicas-all-sets) and status.selector matches the canary's
// (hpa.selector-all-sets). An autoscaler reads them as the Rollout's size:
// with a per-scale metric (External, Object AverageValue) within its
// tolerance it adopts that count as spec.replicas; with a per-pod average
// (memory) the canary's pods raise the count it computes. Either way
// spec.replicas rises for pods that are only the canary, and each raise
// adds canary pods again. The arithmetic is the HPA's (Kubernetes'
// algorithm details); the counts are the snapshot's.
func matchAutoscalerCountsCanary(c *Context) *BugMatch {
	in := c.Analysis.Inputs
	if c.bg() != nil || !in.TrafficRouted || in.DSS || in.New == nil || in.Stable == nil || in.New.Hash == in.Stable.Hash || in.New.Replicas == 0 {
		return nil
	}
	counted := c.ro.Status.HPAReplicas
	if counted <= in.Replicas {
		return nil // nothing on top of spec.replicas
	}
	canary := counted - in.Replicas
	for _, h := range c.View.HPAs {
		tol := hpaTolerance(h)
		for _, m := range h.Spec.Metrics {
			name, r, perScale, ok := metricRatio(h, m)
			if !ok {
				continue
			}
			hpa := "HorizontalPodAutoscaler " + h.Name
			evs := []rules.Evidence{ev(c.obj(), "status.HPAReplicas", counted), ev(c.obj(), "spec.replicas", in.Replicas),
				ev(hpa, "current/target of "+name, fmt.Sprintf("%.2f", r))}
			pin := fmt.Sprintf("pin the autoscaler at spec.replicas for the rest of the update (%s: maxReplicas %d, or minReplicas = maxReplicas; a KEDA ScaledObject: the autoscaling.keda.sh/paused-replicas annotation), then finish it (promote) or abort; it comes back down only after its scale-down stabilization window. For later updates: dynamicStableScale (the stable shrinks as the canary grows) or setCanaryScale with a fixed count", hpa, in.Replicas)
			if perScale && math.Abs(r-1) <= tol {
				return &BugMatch{
					State: fmt.Sprintf("%s reads %d pods from the Rollout's scale (status.HPAReplicas counts the canary's %d on top of spec.replicas %d), and its %s is within its tolerance of the target per pod (%.2f of it)",
						hpa, counted, canary, in.Replicas, name, r),
					Effect:   fmt.Sprintf("inside its tolerance it sets spec.replicas to the count it read, %d, not %d; the canary is a share of spec.replicas on top of a full stable, so it grows too and the count climbs (or flips back once the metric per pod drops below the tolerance) for as long as the update lasts", counted, in.Replicas),
					Do:       pin,
					Evidence: evs,
				}
			}
			if perScale || r >= 1-tol {
				continue // a per-scale metric outside tolerance sizes from the metric alone; above target is load
			}
			ready := in.Stable.Available + in.New.Available
			want := int32(math.Ceil(r * float64(ready)))
			if want <= in.Replicas {
				continue
			}
			// Each raise adds canary pods: where it stops.
			n, share := in.Replicas, float64(in.New.Spec)/float64(in.Replicas)
			for i := 0; i < 100; i++ {
				next := min(int32(math.Ceil(r*float64(n+int32(math.Ceil(share*float64(n)))))), h.Spec.MaxReplicas)
				if next <= n {
					break
				}
				n = next
			}
			return &BugMatch{
				State: fmt.Sprintf("%s averages %s over the canary's pods too (the Rollout's scale selector matches them): at %.2f of its target it wants ceil(%.2f × %d ready pods) = %d, above spec.replicas %d (argo-rollouts #2857, #3849)",
					hpa, name, r, r, ready, want, in.Replicas),
				Effect:   fmt.Sprintf("it scales up while under its target, because the canary's %d pods come on top of a full stable; each raise adds canary pods, so at this ratio it goes on to %d (maxReplicas %d) for as long as the update lasts", canary, n, h.Spec.MaxReplicas),
				Do:       pin,
				Evidence: evs,
			}
		}
	}
	return nil
}

// checkAutoscalerOnCanary (RD221): RD183 before it happens, from the specs
// alone — in manifests (lint) and in a live Rollout that is not in an
// update RD183 reports. An HPA that scales a traffic-routed canary
// without dynamicStableScale will, during every update, read the
// canary's pods on top of a full stable (uc.stable-full-no-dss,
// hpa.replicas-all-sets, hpa.selector-all-sets). With memory it then
// scales up while under its target whenever the use is below its
// tolerance band but above target/(1+w) at the largest setWeight w (the
// HPA's ceil(ratio × pods) > spec.replicas); with a metric it divides by
// the scale's count, it adopts that count within tolerance.
func checkAutoscalerOnCanary(c *Context, r *rules.Rule) []rules.Finding {
	cs := c.canary()
	if cs == nil || cs.TrafficRouting == nil || cs.DynamicStableScale || len(c.View.HPAs) == 0 {
		return nil
	}
	if !c.View.Header.Offline && matchAutoscalerCountsCanary(c) != nil {
		return nil // RD183 reports it as it happens
	}
	var w int32
	for _, s := range cs.Steps {
		if s.SetWeight != nil {
			w = max(w, *s.SetWeight)
		}
	}
	maxW := c.Analysis.Inputs.MaxWeight
	if w <= 0 || maxW <= 0 {
		return nil
	}
	share := float64(w) / float64(maxW)
	var out []rules.Finding
	for _, h := range c.View.HPAs {
		hpa := "HorizontalPodAutoscaler " + h.Namespace + "/" + h.Name
		tol := hpaTolerance(h)
		for _, m := range h.Spec.Metrics {
			var msg string
			switch {
			case memoryMetric(m):
				lo, hi := 1/(1+share), 1-tol
				if lo >= hi {
					continue // at this weight the canary's pods do not push it past its tolerance
				}
				msg = fmt.Sprintf("%s scales on memory over the canary's pods too (the Rollout's scale selector matches them): at setWeight %d, this Rollout's largest, the canary's pods come on top of a full stable, so a memory use between %.0f%% and %.0f%% of its target — under it — makes it scale up, and each raise adds canary pods, up to maxReplicas %d, for as long as the update lasts (argo-rollouts #2857, #3849)",
					hpa, w, 100*lo, 100*hi, h.Spec.MaxReplicas)
			case perScaleMetric(m):
				msg = fmt.Sprintf("%s divides a metric by the pods the Rollout's scale reports (status.HPAReplicas), which during an update counts the canary's on top of spec.replicas (up to %d%% more at setWeight %d): whenever the metric per pod is within its tolerance it sets spec.replicas to that count, and each raise adds canary pods (argo-rollouts #4847)",
					hpa, int(math.Ceil(100*share)), w)
			default:
				continue
			}
			f := r.NewFinding(msg)
			f.Evidence = []rules.Evidence{ev(hpa, "spec.scaleTargetRef", "Rollout "+c.ro.Name), ev(c.obj(), "spec.strategy.canary.dynamicStableScale", false)}
			f.Cites = c.cites("uc.stable-full-no-dss", "hpa.replicas-all-sets", "hpa.selector-all-sets")
			out = append(out, f)
			break
		}
	}
	return out
}

// memoryMetric: a Resource or ContainerResource metric on memory, whose
// value per pod does not fall as pods are added.
func memoryMetric(m autoscalingv2.MetricSpec) bool {
	switch {
	case m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil:
		return m.Resource.Name == corev1.ResourceMemory
	case m.Type == autoscalingv2.ContainerResourceMetricSourceType && m.ContainerResource != nil:
		return m.ContainerResource.Name == corev1.ResourceMemory
	}
	return false
}

// perScaleMetric: an External or Object metric with an AverageValue
// target, which the HPA divides by the scale's count of pods.
func perScaleMetric(m autoscalingv2.MetricSpec) bool {
	switch {
	case m.Type == autoscalingv2.ExternalMetricSourceType && m.External != nil:
		return m.External.Target.Type == autoscalingv2.AverageValueMetricType
	case m.Type == autoscalingv2.ObjectMetricSourceType && m.Object != nil:
		return m.Object.Target.Type == autoscalingv2.AverageValueMetricType
	}
	return false
}
