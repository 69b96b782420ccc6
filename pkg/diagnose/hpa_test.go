package diagnose

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
)

// withHPA adds an HPA that targets the example Rollout, with one condition
// of the given type and status.
func withHPA(condType, status string) func(*example) {
	return func(e *example) {
		e.objs = append(e.objs, &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
			"metadata": map[string]interface{}{"name": "checkout-api", "namespace": "shop"},
			"spec": map[string]interface{}{"minReplicas": int64(10), "maxReplicas": int64(40),
				"scaleTargetRef": map[string]interface{}{"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "name": "checkout-api"}},
			"status": map[string]interface{}{"currentReplicas": int64(20), "desiredReplicas": int64(20),
				"conditions": []interface{}{map[string]interface{}{"type": condType, "status": status, "reason": "FailedGetResourceMetric",
					"lastTransitionTime": "2026-08-11T02:00:00Z",
					"message":            "the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)"}}},
		}})
	}
}

// hpaCases are RD165's states (the lab's HPA without a metrics API wrote
// the first one's condition); rolloutCases holds them.
var hpaCases = []rolloutCase{
	{name: "HPA without metrics", id: "RD165", fires: true, more: withHPA("ScalingActive", "False"),
		says: "HorizontalPodAutoscaler shop/checkout-api cannot compute a replica count since 2026-08-11T02:00:00Z (FailedGetResourceMetric: the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)): it holds the Rollout at 20 replicas and will not scale it up or down until that clears — during an update the canary is sized from that count whatever load the weight brings"},
	{name: "HPA that cannot reach the scale", id: "RD165", fires: true, more: withHPA("AbleToScale", "False")},
	{name: "HPA scaling", id: "RD165", more: withHPA("ScalingActive", "True")},
	{name: "HPA of a Rollout scaled to 0", id: "RD165", more: func(e *example) {
		withHPA("ScalingActive", "False")(e)
		conds, _, _ := unstructured.NestedSlice(e.objs[len(e.objs)-1].Object, "status", "conditions")
		conds[0].(map[string]interface{})["reason"] = "ScalingDisabled"
		_ = unstructured.SetNestedSlice(e.objs[len(e.objs)-1].Object, conds, "status", "conditions")
	}},
	{name: "no HPA", id: "RD165"},
}

// withObj adds an object to the example.
func withObj(u *unstructured.Unstructured) func(*example) {
	return func(e *example) { e.objs = append(e.objs, u) }
}

// cpuHPA targets 60% CPU utilization (load-proportional: no RD221).
func cpuHPA() *unstructured.Unstructured {
	return metricHPA(map[string]interface{}{"type": "Resource", "resource": map[string]interface{}{"name": "cpu", "target": map[string]interface{}{"type": "Utilization", "averageUtilization": int64(60)}}},
		map[string]interface{}{"type": "Resource", "resource": map[string]interface{}{"name": "cpu", "current": map[string]interface{}{"averageUtilization": int64(42)}}})
}

// autoscalerStaticCases are RD221's, in manifests (offline): the example's
// largest setWeight is 100, so memory between 50% and 90% of its target.
var autoscalerStaticCases = []rolloutCase{
	{name: "memory HPA on a routed canary, in manifests", id: "RD221", fires: true, more: offline(withObj(memoryHPA(42))),
		says: "HorizontalPodAutoscaler shop/checkout-api scales on memory over the canary's pods too (the Rollout's scale selector matches them): at setWeight 100, this Rollout's largest, the canary's pods come on top of a full stable, so a memory use between 50% and 90% of its target — under it — makes it scale up, and each raise adds canary pods, up to maxReplicas 42, for as long as the update lasts (argo-rollouts #2857, #3849)"},
	{name: "KEDA-cron-shaped HPA on a routed canary, in manifests", id: "RD221", fires: true, more: offline(withObj(cronHPA("1"))),
		says: "HorizontalPodAutoscaler shop/checkout-api divides a metric by the pods the Rollout's scale reports (status.HPAReplicas), which during an update counts the canary's on top of spec.replicas (up to 100% more at setWeight 100): whenever the metric per pod is within its tolerance it sets spec.replicas to that count, and each raise adds canary pods (argo-rollouts #4847)"},
	{name: "CPU HPA on a routed canary, in manifests", id: "RD221", more: offline(withObj(cpuHPA()))},
	{name: "memory HPA, dynamicStableScale, in manifests", id: "RD221", edit: set(canaryField("dynamicStableScale"), true), more: offline(withObj(memoryHPA(42)))},
	{name: "memory HPA, setWeight 10 at most, in manifests", id: "RD221", more: offline(withObj(memoryHPA(42))),
		edit: set(canaryField("steps"), []interface{}{map[string]interface{}{"setWeight": int64(10)}, map[string]interface{}{"pause": map[string]interface{}{}}})},
}

func init() { rolloutCases = append(rolloutCases, append(hpaCases, autoscalerStaticCases...)...) }

// The evidence names the HPA's condition; the sizing from spec.replicas is cited.
func TestHPAStuckEvidence(t *testing.T) {
	r := diagnoseEdited(t, "v1.10.2", nil, withHPA("ScalingActive", "False"))
	f := finding(t, r, "RD165")
	if f.Evidence[0].Field != "status.conditions[ScalingActive]" {
		t.Errorf("RD165 evidence %+v", f.Evidence)
	}
	if _, ok := cited(f, "uc.ceil"); !ok {
		t.Errorf("RD165 does not cite how the canary is sized from spec.replicas: %+v", f.Cites)
	}
}

// RD183's projection is the HPA's own arithmetic on the snapshot's numbers:
// at 0.70 of a memory target with a canary of 65% on top of 20 it climbs
// 20 → 24 → 28 → 33 → 39 → 42 (the #3849 report's 42 + 28), and the
// cron metric within tolerance is read back as the count with the canary.
func TestAutoscalerCountsCanaryArithmetic(t *testing.T) {
	for _, c := range bugCases {
		if c.id != "RD183" || len(c.fires) == 0 {
			continue
		}
		v := bugView(t, c)
		r := Run(v, model.ControllerVersion{Assumed: "v1.10.2", Source: model.SourceFlag, Exact: true}, Options{})
		f := findingOf(r, "RD183")
		if f == nil {
			t.Fatalf("%s: no RD183", c.name)
		}
		for _, want := range map[bool][]string{
			true:  {"goes on to 42 (maxReplicas 42)", "pin the autoscaler at spec.replicas", "maxReplicas 20"},
			false: {"sets spec.replicas to the count it read, 21, not 20", "maxReplicas 20"},
		}[strings.HasPrefix(c.name, "memory")] {
			if !strings.Contains(f.Message+" "+f.Remediation, want) {
				t.Errorf("%s: RD183 does not say %q: %s / %s", c.name, want, f.Message, f.Remediation)
			}
		}
	}
}
