package diagnose

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules/rulestest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// bugCase is one row of the known-bug table: a state made from the
// rollback-incident example (outside its rollbackWindow, so that the
// canary 5f6c8d7b9a at 2/20 available is an update in progress) and the
// versions on which rule id fires on it. The versions are written out, not
// taken from the catalogue, so that a fact that moves changes a row.
type bugCase struct {
	name  string
	id    string
	edit  func(*unstructured.Unstructured)                                // on the Rollout
	objs  func([]*unstructured.Unstructured) []*unstructured.Unstructured // on the other objects
	fires []upstream.Version
	says  string                  // a part of the message on the first firing version
	log   *snapshot.ControllerLog // the controller's log read for the Rollout
}

var (
	allVersions = []upstream.Version{"v1.7.2", "v1.8.2", "v1.8.3", "v1.9.3", "v1.10.2"}
	noWindow    = remove("spec", "rollbackWindow")
	subsetOnly  = both(remove(canaryField("canaryService")...), remove(canaryField("stableService")...),
		set(canaryField("trafficRouting", "istio", "destinationRule"), map[string]interface{}{"name": "checkout-api", "canarySubsetName": "canary", "stableSubsetName": "stable"}))
	aborted = set([]string{"status", "abort"}, true)
	paused  = set([]string{"spec", "paused"}, true)
)

// rsStatus sets a ReplicaSet's spec.replicas and available count.
func rsStatus(name string, spec, available int64) func([]*unstructured.Unstructured) []*unstructured.Unstructured {
	return func(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
		for _, o := range objs {
			if o.GetKind() == "ReplicaSet" && o.GetName() == name {
				set([]string{"spec", "replicas"}, spec)(o)
				set([]string{"status", "replicas"}, spec)(o)
				set([]string{"status", "readyReplicas"}, available)(o)
				set([]string{"status", "availableReplicas"}, available)(o)
			}
		}
		return objs
	}
}

// canaryPod is a pod of the canary ReplicaSet created at created; restarts
// above zero make it crash-loop.
func canaryPod(name, created string, restarts int64) *unstructured.Unstructured {
	cs := map[string]interface{}{"name": "app", "ready": restarts == 0, "restartCount": restarts, "image": "registry.example/checkout-api:2026.08.05-1", "imageID": ""}
	if restarts > 0 {
		cs["state"] = map[string]interface{}{"waiting": map[string]interface{}{"reason": "CrashLoopBackOff"}}
		cs["lastState"] = map[string]interface{}{"terminated": map[string]interface{}{"exitCode": int64(1), "reason": "Error"}}
	} else {
		cs["state"] = map[string]interface{}{"running": map[string]interface{}{"startedAt": created}}
	}
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]interface{}{"name": name, "namespace": "shop", "creationTimestamp": created,
			"labels":          map[string]interface{}{"app": "checkout-api", "rollouts-pod-template-hash": "5f6c8d7b9a"},
			"ownerReferences": []interface{}{map[string]interface{}{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "checkout-api-5f6c8d7b9a", "uid": "x", "controller": true}}},
		"spec":   map[string]interface{}{"containers": []interface{}{map[string]interface{}{"name": "app", "image": "registry.example/checkout-api:2026.08.05-1"}}},
		"status": map[string]interface{}{"phase": "Running", "containerStatuses": []interface{}{cs}},
	}}
}

func addObjs(extra ...*unstructured.Unstructured) func([]*unstructured.Unstructured) []*unstructured.Unstructured {
	return func(objs []*unstructured.Unstructured) []*unstructured.Unstructured { return append(objs, extra...) }
}

// desiredAnn sets a ReplicaSet's desired-replicas annotation: the
// spec.replicas the controller last sized it for.
func desiredAnn(name string, n int) func([]*unstructured.Unstructured) []*unstructured.Unstructured {
	return func(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
		for _, o := range objs {
			if o.GetKind() == "ReplicaSet" && o.GetName() == name {
				set([]string{"metadata", "annotations", "rollout.argoproj.io/desired-replicas"}, strconv.Itoa(n))(o)
			}
		}
		return objs
	}
}

// metricHPA is an HPA of the example Rollout (10 to 42 replicas) with one
// metric and the HPA's reading of it.
func metricHPA(metric, current map[string]interface{}) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
		"metadata": map[string]interface{}{"name": "checkout-api", "namespace": "shop"},
		"spec": map[string]interface{}{"minReplicas": int64(10), "maxReplicas": int64(42), "metrics": []interface{}{metric},
			"scaleTargetRef": map[string]interface{}{"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "name": "checkout-api"}},
		"status": map[string]interface{}{"currentReplicas": int64(20), "desiredReplicas": int64(20), "currentMetrics": []interface{}{current}},
	}}
}

// memoryHPA targets 60% memory utilization and reads cur%.
func memoryHPA(cur int64) *unstructured.Unstructured {
	return metricHPA(map[string]interface{}{"type": "Resource", "resource": map[string]interface{}{"name": "memory", "target": map[string]interface{}{"type": "Utilization", "averageUtilization": int64(60)}}},
		map[string]interface{}{"type": "Resource", "resource": map[string]interface{}{"name": "memory", "current": map[string]interface{}{"averageUtilization": cur}}})
}

// cronHPA has KEDA's cron scaler shape: an External metric, AverageValue
// 1, read as cur per pod.
func cronHPA(cur string) *unstructured.Unstructured {
	return metricHPA(map[string]interface{}{"type": "External", "external": map[string]interface{}{"metric": map[string]interface{}{"name": "s1-cron"}, "target": map[string]interface{}{"type": "AverageValue", "averageValue": "1"}}},
		map[string]interface{}{"type": "External", "external": map[string]interface{}{"metric": map[string]interface{}{"name": "s1-cron"}, "current": map[string]interface{}{"averageValue": cur}}})
}

// both2 applies each edit of the other objects in turn.
func both2(edits ...func([]*unstructured.Unstructured) []*unstructured.Unstructured) func([]*unstructured.Unstructured) []*unstructured.Unstructured {
	return func(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
		for _, e := range edits {
			objs = e(objs)
		}
		return objs
	}
}

// statusWeights sets the Rollout's status.canary.weights.
func statusWeights(canary, stable int64) func(*unstructured.Unstructured) {
	return both(set([]string{"status", "canary", "weights", "canary", "weight"}, canary), set([]string{"status", "canary", "weights", "stable", "weight"}, stable))
}

// routerWeights sets the example VirtualService's route (vsWeights on the
// other objects): what the router really applies.
func routerWeights(stable, canary int64) func([]*unstructured.Unstructured) []*unstructured.Unstructured {
	return func(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
		vsWeights(stable, canary)(&example{objs: objs})
		return objs
	}
}

func switchEvent(count int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "v1", "kind": "Event",
		"metadata":       map[string]interface{}{"name": "checkout-api.switch", "namespace": "shop"},
		"involvedObject": map[string]interface{}{"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "name": "checkout-api", "namespace": "shop"},
		"reason":         "SwitchService", "type": "Normal", "count": count,
		"message":        "Switched selector for service 'checkout-api-canary' from '6d8f7c9b5d' to '5f6c8d7b9a'",
		"firstTimestamp": "2026-08-11T03:12:10Z", "lastTimestamp": "2026-08-11T03:12:40Z",
	}}
}

// backgroundRun is a background AnalysisRun of the example's canary in
// the given phase, owned by its Rollout.
func backgroundRun(name, phase string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "AnalysisRun",
		"metadata": map[string]interface{}{"name": name, "namespace": "shop", "creationTimestamp": "2026-08-11T03:12:00Z",
			"labels": map[string]interface{}{"rollout-type": "Background", "rollouts-pod-template-hash": "5f6c8d7b9a"},
			"ownerReferences": []interface{}{map[string]interface{}{"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "name": "checkout-api",
				"uid": "3f0c2d4e-8c1a-4c55-9d0e-6a9b7f1e2a10", "controller": true}}},
		"spec":   map[string]interface{}{"metrics": []interface{}{map[string]interface{}{"name": "success-rate", "provider": map[string]interface{}{"web": map[string]interface{}{"url": "http://metrics/"}}}}},
		"status": map[string]interface{}{"phase": phase},
	}}
}

// inPauseStep holds the example at a canary pause step, with a background
// analysis.
var inPauseStep = both(noWindow, set([]string{"status", "controllerPause"}, true),
	set([]string{"status", "pauseConditions"}, []interface{}{map[string]interface{}{"reason": "CanaryPauseStep", "startTime": "2026-08-11T03:11:00Z"}}),
	set(canaryField("analysis"), map[string]interface{}{"templates": []interface{}{map[string]interface{}{"templateName": "success-rate"}}}))

// withRoles gives the Rollout canaryMetadata and stableMetadata role
// labels, and the canary ReplicaSet's template role: canary.
var withRoles = set(canaryField("canaryMetadata"), map[string]interface{}{"labels": map[string]interface{}{"role": "canary"}})

func roleLabelled(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == "ReplicaSet" && o.GetName() == "checkout-api-5f6c8d7b9a" {
			set([]string{"spec", "template", "metadata", "labels", "role"}, "canary")(o)
		}
	}
	return objs
}

// rolePod is a canary pod labelled role.
func rolePod(name, role string) *unstructured.Unstructured {
	p := canaryPod(name, "2026-08-11T03:10:00Z", 0)
	set([]string{"metadata", "labels", "role"}, role)(p)
	return p
}

var bugCases = []bugCase{
	// PR #4919: an abort that meets a scale of the canary.
	{name: "aborted, the canary sized for 20, spec.replicas 30", id: "RD184", edit: both(noWindow, aborted, set([]string{"spec", "replicas"}, int64(30))),
		objs: desiredAnn("checkout-api-5f6c8d7b9a", 20), fires: []upstream.Version{"v1.7.2", "v1.8.2", "v1.8.3", "v1.9.3"},
		says: "still routed to canary checkout-api-5f6c8d7b9a, which was last sized for 20 while spec.replicas is 30"},
	{name: "aborted, the canary sized for 20, spec.replicas 30, no abort delay", id: "RD184",
		edit: both(noWindow, aborted, set([]string{"spec", "replicas"}, int64(30)), set(canaryField("abortScaleDownDelaySeconds"), int64(0))), objs: desiredAnn("checkout-api-5f6c8d7b9a", 20)},
	{name: "aborted while spec.paused, the canary sized for 20, spec.replicas 30 (RD182 says it)", id: "RD184",
		edit: both(noWindow, aborted, paused, set([]string{"spec", "replicas"}, int64(30))), objs: desiredAnn("checkout-api-5f6c8d7b9a", 20)},
	{name: "aborted, the canary sized for spec.replicas", id: "RD184", edit: both(noWindow, aborted), objs: desiredAnn("checkout-api-5f6c8d7b9a", 20)},
	{name: "not aborted, the canary sized for 20, spec.replicas 30", id: "RD184", edit: both(noWindow, set([]string{"spec", "replicas"}, int64(30))), objs: desiredAnn("checkout-api-5f6c8d7b9a", 20)},

	// #2857/#3849 (the #3849 comment's numbers: memory at 42% of 60%, a
	// canary of 65%) and #4847 (a KEDA cron metric within tolerance).
	{name: "memory HPA at 0.70 of target, canary 13 on top of 20", id: "RD183", edit: both(noWindow, set([]string{"status", "HPAReplicas"}, int64(33))),
		objs: both2(rsStatus("checkout-api-5f6c8d7b9a", 13, 13), rsStatus("checkout-api-6d8f7c9b5d", 20, 20), addObjs(memoryHPA(42))), fires: allVersions,
		says: "HorizontalPodAutoscaler checkout-api averages memory over the canary's pods too (the Rollout's scale selector matches them): at 0.70 of its target it wants ceil(0.70 × 33 ready pods) = 24, above spec.replicas 20 (argo-rollouts #2857, #3849)"},
	{name: "memory HPA at 0.70 of target, canary 7 on top of 20", id: "RD183", edit: both(noWindow, set([]string{"status", "HPAReplicas"}, int64(27))),
		objs: both2(rsStatus("checkout-api-5f6c8d7b9a", 7, 7), rsStatus("checkout-api-6d8f7c9b5d", 20, 20), addObjs(memoryHPA(42)))},
	{name: "memory HPA within tolerance", id: "RD183", edit: both(noWindow, set([]string{"status", "HPAReplicas"}, int64(33))),
		objs: both2(rsStatus("checkout-api-5f6c8d7b9a", 13, 13), rsStatus("checkout-api-6d8f7c9b5d", 20, 20), addObjs(memoryHPA(57)))},
	{name: "memory HPA, dynamicStableScale", id: "RD183", edit: both(noWindow, set([]string{"status", "HPAReplicas"}, int64(33)), set(canaryField("dynamicStableScale"), true)),
		objs: both2(rsStatus("checkout-api-5f6c8d7b9a", 13, 13), rsStatus("checkout-api-6d8f7c9b5d", 20, 20), addObjs(memoryHPA(42)))},
	{name: "cron External metric at 0.95 per pod, canary 1 on top of 20", id: "RD183", edit: both(noWindow, set([]string{"status", "HPAReplicas"}, int64(21))),
		objs: both2(rsStatus("checkout-api-5f6c8d7b9a", 1, 1), rsStatus("checkout-api-6d8f7c9b5d", 20, 20), addObjs(cronHPA("950m"))), fires: allVersions,
		says: "HorizontalPodAutoscaler checkout-api reads 21 pods from the Rollout's scale (status.HPAReplicas counts the canary's 1 on top of spec.replicas 20), and its External metric s1-cron is within its tolerance of the target per pod (0.95 of it)"},
	{name: "cron External metric at 0.5 per pod", id: "RD183", edit: both(noWindow, set([]string{"status", "HPAReplicas"}, int64(21))),
		objs: both2(rsStatus("checkout-api-5f6c8d7b9a", 1, 1), rsStatus("checkout-api-6d8f7c9b5d", 20, 20), addObjs(cronHPA("500m")))},
	{name: "cron HPA, nothing on top of spec.replicas", id: "RD183", edit: both(noWindow, set([]string{"status", "HPAReplicas"}, int64(20))),
		objs: addObjs(cronHPA("950m"))},

	// #4261: a scale while spec.paused (an HPA's) is never applied.
	{name: "spec.paused, spec.replicas 30, the stable sized for 20", id: "RD182", edit: both(noWindow, paused, set([]string{"spec", "replicas"}, int64(30))),
		objs: both2(desiredAnn("checkout-api-6d8f7c9b5d", 20), desiredAnn("checkout-api-5f6c8d7b9a", 20)), fires: allVersions,
		says: "spec.replicas is 30 (someone scaled the Rollout), but the update's ReplicaSet checkout-api-5f6c8d7b9a was last sized for 20, and spec.paused is true"},
	{name: "InconclusiveAnalysis pause, spec.replicas 30, the stable sized for 20", id: "RD182",
		edit: both(noWindow, set([]string{"spec", "replicas"}, int64(30)), set([]string{"status", "pauseConditions"}, []interface{}{map[string]interface{}{"reason": "InconclusiveAnalysisRun", "startTime": "2026-08-11T03:12:00Z"}})),
		objs: desiredAnn("checkout-api-6d8f7c9b5d", 20), fires: allVersions,
		says: "the stable ReplicaSet checkout-api-6d8f7c9b5d was last sized for 20, and an InconclusiveAnalysis pause holds it"},
	{name: "not paused, spec.replicas 30, the stable sized for 20", id: "RD182", edit: both(noWindow, set([]string{"spec", "replicas"}, int64(30))),
		objs: desiredAnn("checkout-api-6d8f7c9b5d", 20)},
	{name: "spec.paused, both sized for spec.replicas", id: "RD182", edit: both(noWindow, paused),
		objs: both2(desiredAnn("checkout-api-6d8f7c9b5d", 20), desiredAnn("checkout-api-5f6c8d7b9a", 20))},
	{name: "aborted while spec.paused with a scale pending (RD182 says it)", id: "RD154", edit: both(noWindow, aborted, paused, set([]string{"spec", "replicas"}, int64(30))),
		objs: desiredAnn("checkout-api-6d8f7c9b5d", 20)},

	// The lab (#4256): after a denied relabel v1.8 never relabels; the
	// others do on a later pass, and the rule reports stale pods anyway.
	{name: "canaryMetadata role: canary, one canary pod labelled role: stable", id: "RD181", edit: both(noWindow, withRoles),
		objs: both2(roleLabelled, addObjs(rolePod("checkout-api-5f6c8d7b9a-aaaaa", "canary"), rolePod("checkout-api-5f6c8d7b9a-bbbbb", "stable"))), fires: allVersions,
		says: "1 pod of the update's checkout-api-5f6c8d7b9a carries role=stable where its template has role=canary (checkout-api-5f6c8d7b9a-bbbbb)"},
	{name: "canaryMetadata role: canary, the canary pods labelled so", id: "RD181", edit: both(noWindow, withRoles),
		objs: both2(roleLabelled, addObjs(rolePod("checkout-api-5f6c8d7b9a-aaaaa", "canary")))},
	{name: "no ephemeral metadata", id: "RD181", edit: noWindow, objs: addObjs(rolePod("checkout-api-5f6c8d7b9a-bbbbb", "stable"))},

	// The lab (#3850): v1.7.2 replaced Inconclusive background runs during
	// a pause step and never paused on them.
	{name: "pause step, background runs Inconclusive twice, no Inconclusive pause", id: "RD180", edit: inPauseStep,
		objs:  addObjs(backgroundRun("checkout-api-5f6c8d7b9a-3", "Inconclusive"), backgroundRun("checkout-api-5f6c8d7b9a-3.1", "Inconclusive"), backgroundRun("checkout-api-5f6c8d7b9a-3.2", "Running")),
		fires: []upstream.Version{"v1.7.2"}, says: "held by a canary pause step with 2 Inconclusive background AnalysisRuns for the update (checkout-api-5f6c8d7b9a-3, checkout-api-5f6c8d7b9a-3.1) and no InconclusiveAnalysisRun pause"},
	{name: "pause step, the Inconclusive pause taken", id: "RD180",
		edit: both(inPauseStep, set([]string{"status", "pauseConditions"}, []interface{}{map[string]interface{}{"reason": "CanaryPauseStep", "startTime": "2026-08-11T03:11:00Z"}, map[string]interface{}{"reason": "InconclusiveAnalysisRun", "startTime": "2026-08-11T03:12:00Z"}})),
		objs: addObjs(backgroundRun("checkout-api-5f6c8d7b9a-3", "Inconclusive"))},
	{name: "pause step, the background run Running", id: "RD180", edit: inPauseStep, objs: addObjs(backgroundRun("checkout-api-5f6c8d7b9a-3", "Running"))},

	{name: "subset-only, canary 2/20", id: "RD150", edit: both(noWindow, subsetOnly), fires: []upstream.Version{"v1.8.2", "v1.9.3", "v1.10.2"},
		says: "Istio subset-only routing waits for ReplicaSet checkout-api-5f6c8d7b9a (2/20 available)"},
	{name: "canary and stable Services", id: "RD150", edit: noWindow},
	{name: "subset-only, aborted", id: "RD150", edit: both(noWindow, subsetOnly, aborted)},
	{name: "subset-only, canary fully available", id: "RD150", edit: both(noWindow, subsetOnly), objs: rsStatus("checkout-api-5f6c8d7b9a", 20, 20)},

	{name: "subset-only, aborted, canary 2/20", id: "RD151", edit: both(noWindow, subsetOnly, aborted), fires: []upstream.Version{"v1.8.2"},
		says: "scale it to 0 (`kubectl scale rs checkout-api-5f6c8d7b9a -n shop --replicas=0`)"},
	{name: "aborted with Services", id: "RD151", edit: both(noWindow, aborted)},

	{name: "canary pods crash-looping for an hour, deadline just reset", id: "RD152", edit: noWindow,
		objs:  addObjs(canaryPod("checkout-api-5f6c8d7b9a-a", "2026-08-11T02:10:00Z", 14), canaryPod("checkout-api-5f6c8d7b9a-b", "2026-08-11T02:10:00Z", 13)),
		fires: allVersions, says: "2 pod(s) of checkout-api-5f6c8d7b9a crash-loop (27 restarts"},
	{name: "canary pods running", id: "RD152", edit: noWindow, objs: addObjs(canaryPod("checkout-api-5f6c8d7b9a-a", "2026-08-11T02:10:00Z", 0))},
	{name: "crash-looping pods younger than the deadline", id: "RD152", edit: noWindow, objs: addObjs(canaryPod("checkout-api-5f6c8d7b9a-a", "2026-08-11T03:10:00Z", 3))},

	{name: "abort during promote --full", id: "RD153", edit: both(noWindow, aborted, set([]string{"status", "promoteFull"}, true)), fires: allVersions,
		says: "status.abort and status.promoteFull are both set"},
	{name: "promote --full, the abort already written away, canary 0/20 available (e2e bug-promote-full-abort)", id: "RD153",
		edit: both(noWindow, set([]string{"status", "promoteFull"}, true)), objs: rsStatus("checkout-api-5f6c8d7b9a", 20, 0), fires: allVersions,
		says: "a full promotion (status.promoteFull) of checkout-api-5f6c8d7b9a is under way with 0/20 available"},
	{name: "promote --full, canary available", id: "RD153", edit: both(noWindow, set([]string{"status", "promoteFull"}, true)), objs: rsStatus("checkout-api-5f6c8d7b9a", 20, 20)},
	{name: "abort without promote --full", id: "RD153", edit: both(noWindow, aborted)},

	{name: "aborted while spec.paused", id: "RD154", edit: both(noWindow, aborted, set([]string{"spec", "paused"}, true)), fires: allVersions,
		says: "aborted while spec.paused is true"},
	{name: "aborted, not paused", id: "RD154", edit: both(noWindow, aborted)},

	{name: "abort, dynamicStableScale, abort delay 30, stable 10/20", id: "RD155",
		edit: both(noWindow, aborted, set(canaryField("dynamicStableScale"), true), set(canaryField("abortScaleDownDelaySeconds"), int64(30))),
		objs: rsStatus("checkout-api-6d8f7c9b5d", 10, 10), fires: []upstream.Version{"v1.9.3", "v1.10.2"},
		says: "aborted with dynamicStableScale and abortScaleDownDelaySeconds 30"},
	{name: "abort, dynamicStableScale, no abort delay", id: "RD155",
		edit: both(noWindow, aborted, set(canaryField("dynamicStableScale"), true)), objs: rsStatus("checkout-api-6d8f7c9b5d", 10, 10)},

	// The lab (v1.9.3, v1.10.2): minPodsPerReplicaSet 2 kept 20% after an
	// abort with the stable complete; v1.8.3 wrote 0%.
	{name: "abort, dynamicStableScale, minPodsPerReplicaSet 3, stable complete, 10% left: down to the 5% step, no further", id: "RD176",
		edit: both(noWindow, aborted, set(canaryField("dynamicStableScale"), true), set(canaryField("minPodsPerReplicaSet"), int64(3)), statusWeights(10, 90)),
		objs: both2(rsStatus("checkout-api-5f6c8d7b9a", 3, 3), rsStatus("checkout-api-6d8f7c9b5d", 20, 20), routerWeights(90, 10)), fires: []upstream.Version{"v1.9.3", "v1.10.2"},
		says: "even with the stable complete the weight stays at 5% and the canary keeps its pods"},
	{name: "abort, dynamicStableScale, no minPodsPerReplicaSet", id: "RD176",
		edit: both(noWindow, aborted, set(canaryField("dynamicStableScale"), true), statusWeights(10, 90)),
		objs: both2(rsStatus("checkout-api-5f6c8d7b9a", 3, 3), rsStatus("checkout-api-6d8f7c9b5d", 20, 20), routerWeights(90, 10))},
	{name: "dynamicStableScale, minPodsPerReplicaSet 3, not aborted", id: "RD176",
		edit: both(noWindow, set(canaryField("dynamicStableScale"), true), set(canaryField("minPodsPerReplicaSet"), int64(3)), statusWeights(10, 90)),
		objs: both2(rsStatus("checkout-api-5f6c8d7b9a", 3, 3), rsStatus("checkout-api-6d8f7c9b5d", 20, 20), routerWeights(90, 10))},

	// The lab (v1.10.2): spec.replicas raised after an abort, three stable
	// pods hung: the aborted canary sized 2 again; v1.7.2 kept it at 0.
	{name: "aborted at 0%, dynamicStableScale, stable 10/20, canary sized 4 again", id: "RD177",
		edit: both(noWindow, aborted, set(canaryField("dynamicStableScale"), true), statusWeights(0, 100)),
		objs: both2(rsStatus("checkout-api-5f6c8d7b9a", 4, 4), rsStatus("checkout-api-6d8f7c9b5d", 20, 10), routerWeights(100, 0)), fires: []upstream.Version{"v1.9.3", "v1.10.2"},
		says: "the stable checkout-api-6d8f7c9b5d has 10 of 20 available and the aborted canary checkout-api-5f6c8d7b9a is sized 4 (4 available)"},
	{name: "aborted at 0%, dynamicStableScale, stable complete, canary at 0", id: "RD177",
		edit: both(noWindow, aborted, set(canaryField("dynamicStableScale"), true), statusWeights(0, 100)),
		objs: both2(rsStatus("checkout-api-5f6c8d7b9a", 0, 0), rsStatus("checkout-api-6d8f7c9b5d", 20, 20), routerWeights(100, 0))},
	{name: "aborted at 0%, no dynamicStableScale, stable 10/20, canary 4", id: "RD177",
		edit: both(noWindow, aborted, statusWeights(0, 100)),
		objs: both2(rsStatus("checkout-api-5f6c8d7b9a", 4, 4), rsStatus("checkout-api-6d8f7c9b5d", 20, 10), routerWeights(100, 0))},

	{name: "stable at 100 weight with 10 of 20 pods", id: "RD156",
		edit: both(noWindow, statusWeights(0, 100)),
		objs: both2(rsStatus("checkout-api-6d8f7c9b5d", 20, 10), routerWeights(100, 0)), fires: []upstream.Version{"v1.7.2"}, says: "that weight needs 20"},
	{name: "stable at 100 weight, full", id: "RD156", edit: both(noWindow, statusWeights(0, 100)), objs: routerWeights(100, 0)},
	// Promoted: all traffic is the stable's whatever its pods (a pod down,
	// a restart under way); that is not the bug.
	{name: "promoted, stable at 100 weight with 10 of 20 pods", id: "RD156", edit: both(noWindow, statusWeights(0, 100), set([]string{"status", "stableRS"}, "5f6c8d7b9a")),
		objs: both2(rsStatus("checkout-api-5f6c8d7b9a", 20, 10), routerWeights(100, 0))},
	// The router written, the status not yet (a read inside one pass):
	// traffic follows the router.
	{name: "status canary 75, router canary 0, stable 10 of 20", id: "RD156",
		edit: both(noWindow, statusWeights(75, 25)),
		objs: both2(rsStatus("checkout-api-6d8f7c9b5d", 20, 10), routerWeights(100, 0)), fires: []upstream.Version{"v1.7.2"}, says: "carries 100 of 100 weight with 10 available pods"},
	{name: "status stable 100, router canary 100, stable 10 of 20", id: "RD156",
		edit: both(noWindow, statusWeights(0, 100)), objs: both2(rsStatus("checkout-api-6d8f7c9b5d", 20, 10), routerWeights(0, 100))},

	{name: "promote --full, dynamicStableScale, canary 25 for 20 replicas", id: "RD157",
		edit: both(noWindow, set([]string{"status", "promoteFull"}, true), set(canaryField("dynamicStableScale"), true)),
		objs: rsStatus("checkout-api-5f6c8d7b9a", 25, 25), fires: allVersions, says: "100 × 25 / 20 = 125"},
	{name: "promote --full, dynamicStableScale, canary 2", id: "RD157", edit: both(noWindow, set([]string{"status", "promoteFull"}, true), set(canaryField("dynamicStableScale"), true))},

	{name: "aborted, canary 2 available, 300 SwitchService events", id: "RD158", edit: both(noWindow, aborted), objs: addObjs(switchEvent(300)), fires: allVersions,
		says: "each pass points Service checkout-api-canary at the canary"},
	{name: "aborted, canary 2 available, 5 SwitchService events (what the lab's events showed)", id: "RD158", edit: both(noWindow, aborted), objs: addObjs(switchEvent(5)), fires: allVersions,
		says: "each pass points Service checkout-api-canary at the canary"},
	{name: "aborted, canary 2 available, the stable 10 of 20", id: "RD158", edit: both(noWindow, aborted), objs: rsStatus("checkout-api-6d8f7c9b5d", 20, 10), fires: allVersions,
		says: "for as long as the stable checkout-api-6d8f7c9b5d has fewer than 20 available (10 now): the canary is scaled down only abortScaleDownDelaySeconds after it is full"},
	{name: "aborted, canary scaled down", id: "RD158", edit: both(noWindow, aborted), objs: rsStatus("checkout-api-5f6c8d7b9a", 0, 0)},
	{name: "not aborted", id: "RD158", edit: noWindow},

	{name: "a Warning event", id: "RD159", objs: addObjs(warning("w", "VirtualServiceNotFound", "VirtualService `x` not found", 1, "")), fires: allVersions},
	{name: "Normal events only", id: "RD159"},
	{name: "the controller logs a policy denial of the VirtualService", id: "RD162", log: ctrlLog(
		logLine("2026-08-11T03:12:30Z", "error", syncErrorPrefix+eventMsg("policy")), logLine("2026-08-11T03:12:35Z", "error", syncErrorPrefix+eventMsg("policy"))),
		fires: allVersions, says: "(ValidatingAdmissionPolicy no-split): the controller's log has 2 error line(s) about this Rollout (1 distinct)"},
	{name: "the controller's log has only info lines", id: "RD162", log: ctrlLog(logLine("2026-08-11T03:12:30Z", "info", "Reconciliation completed"))},
	{name: "the controller's log could not be read", id: "RD162", log: &snapshot.ControllerLog{Gap: "pods \"x\" is forbidden; grant get on pods/log in namespace argo-rollouts"}},
	{name: "abort not acted on", id: "RD112", edit: both(noWindow, aborted), fires: allVersions, says: "the controller has not acted on the abort yet"},
}

func diagnoseBugCase(t *testing.T, ver upstream.Version, c bugCase) *Report {
	t.Helper()
	cv := model.ControllerVersion{Assumed: ver, Source: model.SourceFlag, Exact: true}
	return Run(bugView(t, c), cv, Options{})
}

// bugView is the example incident's view with the case's edits.
func bugView(t *testing.T, c bugCase) *snapshot.View {
	t.Helper()
	objs, hdr := exampletest.Decode(t, exampletest.Incident)
	return exampletest.ViewOf(t, snapshot.New(*hdr, c.apply(objs, hdr)))
}

// apply makes the case's state of the incident example's objects and header.
func (c bugCase) apply(objs []*unstructured.Unstructured, hdr *snapshot.Header) []*unstructured.Unstructured {
	editRollout(objs, c.edit)
	if c.objs != nil {
		objs = c.objs(objs)
	}
	if c.log != nil {
		hdr.ControllerLog = c.log
	}
	return objs
}

// TestKnownBugsPerVersion runs every row on every modeled version: the
// rule fires on the versions listed and on no other.
func TestKnownBugsPerVersion(t *testing.T) {
	for _, c := range bugCases {
		for _, v := range allVersions {
			t.Run(c.id+"/"+c.name+"/"+string(v), func(t *testing.T) {
				want := false
				for _, f := range c.fires {
					want = want || f == v
				}
				r := diagnoseBugCase(t, v, c)
				var got *rules.Finding
				for i, f := range r.Findings {
					if f.ID == c.id {
						got = &r.Findings[i]
					}
				}
				if (got != nil) != want {
					t.Fatalf("%s on %s fires=%v, want %v; findings: %+v", c.id, v, got != nil, want, r.Findings)
				}
				if got == nil {
					return
				}
				rulestest.NoInternalRefs(t, got.ID+" message", got.Message)
				if c.says != "" && !strings.Contains(got.Message, c.says) {
					t.Errorf("%s on %s says\n  %s\nwant a part\n  %s", c.id, v, got.Message, c.says)
				}
				if b, _ := bugByRule(c.id); b.Issue != 0 && !strings.Contains(got.Message, "argo-rollouts #") {
					t.Errorf("%s on %s does not name the upstream issue: %s", c.id, v, got.Message)
				}
				if _, bug := bugByRule(c.id); bug && (len(got.Cites) == 0 || got.Cites[0].Version != v) {
					t.Errorf("%s on %s cites %+v, want the buggy line at %s", c.id, v, got.Cites, v)
				}
			})
		}
	}
}

// TestRD157StableWeightPerVersion: the Istio router floors the negative
// stable weight at 0 from v1.9 (the lab's webhook saw stable -100 on v1.7.2,
// v1.8.2, v1.8.3 and 0 on v1.9.3, v1.10.2 beside canary 200).
func TestRD157StableWeightPerVersion(t *testing.T) {
	c := bugCase{edit: both(noWindow, set([]string{"status", "promoteFull"}, true), set(canaryField("dynamicStableScale"), true)),
		objs: rsStatus("checkout-api-5f6c8d7b9a", 25, 25)}
	for v, want := range map[upstream.Version]string{
		"v1.7.2": "so the stable's weight is -25", "v1.8.3": "so the stable's weight is -25",
		"v1.9.3": "writes the stable's -25 as 0, a total of 125", "v1.10.2": "writes the stable's -25 as 0, a total of 125",
	} {
		msgs := ""
		for _, f := range diagnoseBugCase(t, v, c).Findings {
			if f.ID == "RD157" {
				msgs += f.Message
			}
		}
		if !strings.Contains(msgs, want) {
			t.Errorf("RD157 on %s says %q, want a part %q", v, msgs, want)
		}
	}
}

// TestRD112DefersToTheBugThatHoldsTheAbort: on v1.8.2 an abort held by the
// subset-only gate is not blamed on the informer write-back (the nudge the
// write-back needs would not help).
func TestRD112DefersToTheBugThatHoldsTheAbort(t *testing.T) {
	r := diagnoseBugCase(t, "v1.8.2", bugCase{edit: both(noWindow, subsetOnly, aborted)})
	for _, f := range r.Findings {
		if f.ID == "RD112" && (strings.Contains(f.Message, "nudge") || !strings.Contains(f.Message, "RD151 says why")) {
			t.Errorf("RD112 on a gate-held abort: %s", f.Message)
		}
	}
	if !has(r, "RD112") || !has(r, "RD151") {
		t.Errorf("want RD112 and RD151, got %+v", r.Findings)
	}
}

// TestBugProseNamesVersions keeps rules.yaml honest: each bug rule's why
// names the upstream issue and every version the catalogue says it affects.
func TestBugProseNamesVersions(t *testing.T) {
	for _, b := range Bugs() {
		r, ok := rules.ByID(b.Rule)
		if !ok {
			t.Fatalf("%s: no rule", b.Rule)
		}
		if b.Issue != 0 && !strings.Contains(r.Why, "#"+strconv.Itoa(b.Issue)) {
			t.Errorf("%s: why does not name upstream #%d", b.Rule, b.Issue)
		}
		for _, v := range b.Affected() {
			if !strings.Contains(r.Why, string(v)) {
				t.Errorf("%s: why does not name affected version %s", b.Rule, v)
			}
		}
		if b.Lab == "" {
			t.Errorf("%s: no lab record (reproduced, or why not)", b.Rule)
		}
	}
}

// TestFidelityListsTheCatalogue: docs/fidelity.md ends with the catalogue
// as BugsMarkdown prints it (the e2e run that regenerates the page appends
// it; UPDATE_FIDELITY=1 rewrites just that section).
func TestFidelityListsTheCatalogue(t *testing.T) {
	const path = "../../docs/fidelity.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("UPDATE_FIDELITY") != "" {
		page := string(b)
		if i := strings.Index(page, "\n## Known controller bugs\n"); i >= 0 {
			page = page[:i]
		}
		if err := os.WriteFile(path, []byte(page+BugsMarkdown()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !strings.HasSuffix(string(b), BugsMarkdown()) {
		t.Errorf("docs/fidelity.md does not end with the current catalogue: run UPDATE_FIDELITY=1 go test -run TestFidelityListsTheCatalogue ./pkg/diagnose")
	}
}

func TestEveryEventClassHasALabLine(t *testing.T) {
	for _, c := range eventClasses {
		if eventLab[c.key] == "" {
			t.Errorf("RD159 class %s: no line in eventLab (docs/fidelity.md)", c.key)
		}
	}
}

// warning is a Warning Event on the example's Rollout, last seen at the
// snapshot's time (03:12:40) unless at is given.
func warning(name, reason, msg string, count int64, at string) *unstructured.Unstructured {
	if at == "" {
		at = "2026-08-11T03:12:40Z"
	}
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "v1", "kind": "Event",
		"metadata":       map[string]interface{}{"name": "checkout-api." + name, "namespace": "shop"},
		"involvedObject": map[string]interface{}{"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "name": "checkout-api", "namespace": "shop"},
		"reason":         reason, "type": "Warning", "count": count, "message": msg,
		"source":         map[string]interface{}{"component": "rollouts-controller"},
		"firstTimestamp": at, "lastTimestamp": at,
	}}
}

// eventCases are Warning Events as the controller words them (reason and
// message shape from its source; the embedded errors as the API server,
// Istio's webhook and the plugin loader word theirs), each with the part
// of RD159's message that names its cause.
var eventCases = []struct {
	name, reason, msg string
	count             int64
	at                string
	says              string
	sev               rules.Severity
}{
	{"rbac", "TrafficRoutingError", `virtualservices.networking.istio.io "checkout-api" is forbidden: User "system:serviceaccount:argo-rollouts:argo-rollouts" cannot update resource "virtualservices" in API group "networking.istio.io" in the namespace "shop"`, 12, "",
		"(system:serviceaccount:argo-rollouts:argo-rollouts may not update virtualservices.networking.istio.io)", rules.Critical},
	{"webhook", "TrafficRoutingError", `admission webhook "validation.istio.io" denied the request: configuration is invalid: total destination weight 0 != 100`, 40, "",
		"an admission webhook rejects the controller's write (validation.istio.io)", rules.Critical},
	{"webhook unreachable", "TrafficRoutingError", `Internal error occurred: failed calling webhook "validation.istio.io": failed to call webhook: Post "https://istiod.istio-system.svc:443/validate?timeout=10s": dial tcp 10.96.12.7:443: connect: connection refused`, 9, "",
		"the API server cannot call an admission webhook that must answer (failurePolicy Fail), so it refuses the controller's write (validation.istio.io)", rules.Critical},
	// Both answer "is forbidden", as an RBAC denial does; messages as the
	// lab's API server (v1.34) wrote them for the real controller.
	{"policy", "TrafficRoutingError", `virtualservices.networking.istio.io "app" is forbidden: ValidatingAdmissionPolicy 'no-split' with binding 'no-split' denied request: traffic splits are not allowed in this namespace`, 4, "",
		"a ValidatingAdmissionPolicy rejects the controller's write (ValidatingAdmissionPolicy no-split)", rules.Critical},
	{"quota", "ReplicaSetCreateError", `Failed to create new replica set "app-5c97c7d687": replicasets.apps "app-5c97c7d687" is forbidden: exceeded quota: rs, requested: count/replicasets.apps=1, used: count/replicasets.apps=1, limited: count/replicasets.apps=1`, 3, "",
		"a ResourceQuota in the namespace refuses what the controller creates (ResourceQuota rs)", rules.Critical},
	{"conflict", "TrafficRoutingError", `Operation cannot be fulfilled on virtualservices.networking.istio.io "checkout-api": the object has been modified; please apply your changes to the latest version and try again`, 7, "",
		"conflict with another writer", rules.Warning},
	{"plugin", "TrafficRoutingError", `failed to get traffic router plugin argoproj-labs/gatewayAPI: plugin argoproj-labs/gatewayAPI not configured in configmap`, 3, "",
		"a traffic-router or step plugin fails", rules.Critical},
	{"not found", "VirtualServiceNotFound", "VirtualService `checkout-api` not found", 2, "", "does not exist", rules.Critical},
	{"old webhook rejection", "TrafficRoutingError", `admission webhook "validation.istio.io" denied the request: x`, 1, "2026-08-11T02:00:00Z", "it may have cleared", rules.Info},
}

func TestControllerErrorEvents(t *testing.T) {
	for _, c := range eventCases {
		t.Run(c.name, func(t *testing.T) {
			r := diagnoseBugCase(t, "v1.9.3", bugCase{objs: addObjs(warning(c.name, c.reason, c.msg, c.count, c.at))})
			var got []rules.Finding
			for _, f := range r.Findings {
				if f.ID == "RD159" {
					got = append(got, f)
				}
			}
			if len(got) != 1 {
				t.Fatalf("want one RD159 finding, got %+v", got)
			}
			if !strings.Contains(got[0].Message, c.says) || got[0].Severity != c.sev {
				t.Errorf("RD159 %s says\n  %s\nwant a part %q at severity %v", got[0].Severity, got[0].Message, c.says, c.sev)
			}
		})
	}
	// A Normal event (the example's TrafficWeightUpdated) is no error; two
	// classes give two findings, the newest first.
	if r := diagnoseBugCase(t, "v1.9.3", bugCase{}); has(r, "RD159") {
		t.Errorf("RD159 on Normal events only: %+v", r.Findings)
	}
	// An AnalysisRun in Error is the analysis rules' (RD124), not a
	// controller error: the Warnings the lab's v1.10.2 wrote when a step
	// argument's Secret was missing (e2e controller-errors-args).
	for _, w := range []*unstructured.Unstructured{
		warning("ar", "AnalysisRunError", "Step Analysis Run 'app-5c97c7d687-2-1' Status New: 'Error' Previous: ''", 1, ""),
		warning("abort", "RolloutAborted", "Rollout aborted update to revision 2: Step-based analysis phase error/failed: Unable to resolve metric arguments: secrets \"region\" not found", 1, ""),
	} {
		if r := diagnoseBugCase(t, "v1.9.3", bugCase{objs: addObjs(w)}); has(r, "RD159") {
			t.Errorf("RD159 on %s: %+v", w.Object["reason"], r.Findings)
		}
	}
	r := diagnoseBugCase(t, "v1.9.3", bugCase{objs: addObjs(
		warning("a", "TrafficRoutingError", eventMsg("conflict"), 1, "2026-08-11T03:10:00Z"),
		warning("b", "TrafficRoutingError", eventMsg("rbac"), 1, ""))})
	var ids []string
	for _, f := range r.Findings {
		if f.ID == "RD159" {
			ids = append(ids, f.Message[:20])
		}
	}
	if len(ids) != 2 {
		t.Errorf("want two RD159 findings (rbac, conflict), got %v", ids)
	}
}

// specManager is a managedFields entry that owns the given spec fields.
func specManager(manager, op, at string, fields ...string) map[string]interface{} {
	spec := map[string]interface{}{}
	for _, f := range fields {
		spec["f:"+f] = map[string]interface{}{}
	}
	return map[string]interface{}{"manager": manager, "operation": op, "apiVersion": "argoproj.io/v1alpha1", "time": at,
		"fieldsType": "FieldsV1", "fieldsV1": map[string]interface{}{"f:spec": spec}}
}

func managed(entries ...interface{}) func(*unstructured.Unstructured) {
	return set([]string{"metadata", "managedFields"}, entries)
}

var tracked = set([]string{"metadata", "annotations"}, map[string]interface{}{"argocd.argoproj.io/tracking-id": "shop:argoproj.io/Rollout:shop/checkout-api"})

// application is an Argo CD Application as data: the CRD's fields that
// say how it syncs.
func application(selfHeal bool, ignore []interface{}) *unstructured.Unstructured {
	spec := map[string]interface{}{"syncPolicy": map[string]interface{}{"automated": map[string]interface{}{"selfHeal": selfHeal, "prune": true}}}
	if ignore != nil {
		spec["ignoreDifferences"] = ignore
		spec["syncPolicy"].(map[string]interface{})["syncOptions"] = []interface{}{"RespectIgnoreDifferences=true"}
	}
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]interface{}{"name": "shop", "namespace": "argocd"},
		"spec":     spec,
		"status":   map[string]interface{}{"sync": map[string]interface{}{"status": "OutOfSync"}},
	}}
}

// helmRelease is a Flux HelmRelease as data (suspended or not).
func helmRelease(suspend bool) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
		"metadata": map[string]interface{}{"name": "checkout", "namespace": "flux-system"},
		"spec":     map[string]interface{}{"interval": "10m", "suspend": suspend, "chart": map[string]interface{}{"spec": map[string]interface{}{"chart": "checkout"}}},
		"status":   map[string]interface{}{"conditions": []interface{}{map[string]interface{}{"type": "Ready", "status": "True"}}},
	}}
}

var helmLabels = set([]string{"metadata", "labels"}, map[string]interface{}{"helm.toolkit.fluxcd.io/name": "checkout", "helm.toolkit.fluxcd.io/namespace": "flux-system"})

// history gives a ReplicaSet the revisions it served before its current one.
func history(rs, revs string) func([]*unstructured.Unstructured) []*unstructured.Unstructured {
	return func(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
		for _, o := range objs {
			if o.GetKind() == "ReplicaSet" && o.GetName() == rs {
				set([]string{"metadata", "annotations", "rollout.argoproj.io/revision-history"}, revs)(o)
			}
		}
		return objs
	}
}

func allOf(fs ...func([]*unstructured.Unstructured) []*unstructured.Unstructured) func([]*unstructured.Unstructured) []*unstructured.Unstructured {
	return func(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
		for _, f := range fs {
			objs = f(objs)
		}
		return objs
	}
}

func init() {
	bugCases = append(bugCases,
		bugCase{name: "a pipeline writes spec.template a minute after Argo CD's sync", id: "RD160",
			edit: both(tracked, managed(specManager("argocd-controller", "Apply", "2026-08-11T03:11:30Z", "template", "replicas"), specManager("deploy-bot", "Update", "2026-08-11T03:12:30Z", "template"))),
			objs: addObjs(application(true, nil)), fires: allVersions,
			says: "deploy-bot changed spec fields the GitOps sync writes (template) at 2026-08-11T03:12:30Z, after the sync's last write (argocd-controller at 2026-08-11T03:11:30Z)"},
		bugCase{name: "Argo CD's sync after the pipeline's write (it left the pipeline's fields alone)", id: "RD160",
			edit: both(tracked, managed(specManager("argocd-controller", "Apply", "2026-08-11T03:12:30Z", "template", "replicas"), specManager("deploy-bot", "Update", "2026-08-11T03:11:30Z", "template"))),
			objs: addObjs(application(true, nil))},
		bugCase{name: "kubectl apply, then set image (no GitOps)", id: "RD160",
			edit: managed(specManager("kubectl-client-side-apply", "Update", "2026-08-11T03:11:30Z", "template", "replicas"), specManager("kubectl-patch", "Update", "2026-08-11T03:12:30Z", "template"))},
		bugCase{name: "two writers of different fields", id: "RD160",
			edit: managed(specManager("argocd-controller", "Apply", "2026-08-11T03:12:30Z", "template"), specManager("hpa-bot", "Update", "2026-08-11T03:11:30Z", "replicas"))},
		bugCase{name: "the second writer an hour earlier", id: "RD160",
			edit: managed(specManager("argocd-controller", "Apply", "2026-08-11T03:12:30Z", "template"), specManager("deploy-bot", "Update", "2026-08-11T02:11:30Z", "template"))},
		bugCase{name: "the controller's own spec.paused write", id: "RD160",
			edit: managed(specManager("argocd-controller", "Apply", "2026-08-11T03:12:30Z", "paused"), specManager("rollouts-controller", "Update", "2026-08-11T03:11:30Z", "paused"))},

		// A forced apply or an update takes the contested fields: one owner
		// is left, and the ReplicaSets' revision history shows the fight.
		bugCase{name: "template back and forth, Argo CD's forced apply owns it", id: "RD160",
			edit: both(tracked, managed(specManager("argocd-controller", "Apply", "2026-08-11T03:12:30Z", "template", "replicas"))),
			objs: allOf(history("checkout-api-5f6c8d7b9a", "3,5"), history("checkout-api-6d8f7c9b5d", "4"), addObjs(application(true, nil))), fires: allVersions,
			says: "went back to an earlier one 3 times (revisions by template, from the ReplicaSets' revision-history: 5f6c8d7b9a (3) → 6d8f7c9b5d (4) → 5f6c8d7b9a (5) → 6d8f7c9b5d (6) → 5f6c8d7b9a (7))"},
		bugCase{name: "template back and forth, Argo CD's client-side apply (Update)", id: "RD160",
			edit: both(tracked, managed(specManager("argocd-controller", "Update", "2026-08-11T03:12:30Z", "template"), specManager("deploy-bot", "Update", "2026-08-11T03:12:00Z", "replicas"))),
			objs: allOf(history("checkout-api-5f6c8d7b9a", "3,5"), history("checkout-api-6d8f7c9b5d", "4"), addObjs(application(true, nil))), fires: allVersions,
			says: "other writers of the spec: deploy-bot; Application shop puts Git's template back"},
		bugCase{name: "template back and forth, Flux", id: "RD160",
			edit: both(set([]string{"metadata", "labels", "kustomize.toolkit.fluxcd.io/name"}, "shop"), managed(specManager("kustomize-controller", "Apply", "2026-08-11T03:12:30Z", "template"))),
			objs: allOf(history("checkout-api-5f6c8d7b9a", "3,5"), history("checkout-api-6d8f7c9b5d", "4")), fires: allVersions,
			says: "flux suspend kustomization shop"},
		bugCase{name: "template back and forth, Flux's helm-controller", id: "RD160",
			edit: both(helmLabels, managed(specManager("helm-controller", "Apply", "2026-08-11T03:12:30Z", "template"))),
			objs: allOf(history("checkout-api-5f6c8d7b9a", "3,5"), history("checkout-api-6d8f7c9b5d", "4"), addObjs(helmRelease(false))), fires: allVersions,
			says: "HelmRelease flux-system/checkout puts Git's template back after every change made in the cluster: commit the change to Git instead, or make the sync leave the template alone: `flux suspend helmrelease checkout -n flux-system`"},
		bugCase{name: "one return (an undo)", id: "RD160",
			edit: managed(specManager("kubectl-argo-rollouts", "Update", "2026-08-11T03:12:30Z", "template")),
			objs: history("checkout-api-5f6c8d7b9a", "5")},
		bugCase{name: "rolled back, then the same version deployed again (two returns)", id: "RD160",
			edit: managed(specManager("kubectl-argo-rollouts", "Update", "2026-08-11T03:12:30Z", "template")),
			objs: allOf(history("checkout-api-5f6c8d7b9a", "5"), history("checkout-api-6d8f7c9b5d", "4"))},
		bugCase{name: "back and forth an hour ago", id: "RD160",
			edit: managed(specManager("argocd-controller", "Apply", "2026-08-11T02:12:30Z", "template")),
			objs: allOf(history("checkout-api-5f6c8d7b9a", "3,5"), history("checkout-api-6d8f7c9b5d", "4"))},
		bugCase{name: "back and forth, saved without managedFields", id: "RD160",
			objs: allOf(history("checkout-api-5f6c8d7b9a", "3,5"), history("checkout-api-6d8f7c9b5d", "4")), fires: allVersions,
			says: "find the writers"},

		bugCase{name: "Argo CD selfHeal, template not ignored", id: "RD161", edit: tracked, objs: addObjs(application(true, nil)), fires: allVersions,
			says: "syncs this Rollout automatically with selfHeal: a spec change made in the cluster (undo, set image, edit) is reverted"},
		bugCase{name: "Argo CD selfHeal, template ignored", id: "RD161", edit: tracked, fires: allVersions,
			objs: addObjs(application(true, []interface{}{map[string]interface{}{"group": "argoproj.io", "kind": "Rollout", "jsonPointers": []interface{}{"/spec/template"}}})),
			says: "ignoreDifferences already leaves spec.template alone"},
		bugCase{name: "no GitOps mark", id: "RD161"},
		bugCase{name: "Flux HelmRelease, not suspended", id: "RD161", edit: helmLabels, objs: addObjs(helmRelease(false)), fires: allVersions,
			says: "Flux applies this Rollout (HelmRelease flux-system/checkout, every 10m): a spec change made in the cluster (undo, set image, edit) is reverted at its next reconciliation"},
		bugCase{name: "Flux HelmRelease, suspended", id: "RD161", edit: helmLabels, objs: addObjs(helmRelease(true)), fires: allVersions,
			says: "every 10m, suspended): nothing is reverted while it stays suspended"},
	)
}
