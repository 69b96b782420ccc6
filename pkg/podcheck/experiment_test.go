package podcheck

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
)

// An Experiment's pods carry the Rollout's labels and take requests from a
// Service that selects them by app label: pods lists them (role
// experiment), found by their ReplicaSet's name <experiment>-<template>
// (before v1.9 that ReplicaSet has only the hash label, so a diagnose,
// which lists ReplicaSets by the Rollout's selector, does not hold it),
// and not those of another Rollout's Experiment nor of an Experiment the
// snapshot lacks. The Rollout's own pods and the checks over them are
// unchanged.
func TestExperimentPodsListed(t *testing.T) {
	docs := []string{`apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: app, namespace: shop, uid: u1}
spec:
  replicas: 2
  selector: {matchLabels: {app: app}}
  template: {metadata: {labels: {app: app}}, spec: {containers: [{name: app, image: app:2}]}}
  strategy: {canary: {steps: [{setWeight: 50}, {experiment: {duration: 10m, templates: [{name: canary, specRef: canary}]}}]}}
status: {stableRS: a, currentPodHash: b}`,
		`{apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: app-a, namespace: shop, labels: {app: app, rollouts-pod-template-hash: a}, ownerReferences: [{apiVersion: argoproj.io/v1alpha1, kind: Rollout, name: app, uid: u1, controller: true}]}, spec: {replicas: 1, selector: {matchLabels: {app: app, rollouts-pod-template-hash: a}}, template: {metadata: {labels: {app: app, rollouts-pod-template-hash: a}}, spec: {containers: [{name: app, image: app:1}]}}}, status: {replicas: 1, readyReplicas: 1, availableReplicas: 1}}`,
		`{apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: app-b, namespace: shop, labels: {app: app, rollouts-pod-template-hash: b}, ownerReferences: [{apiVersion: argoproj.io/v1alpha1, kind: Rollout, name: app, uid: u1, controller: true}]}, spec: {replicas: 1, selector: {matchLabels: {app: app, rollouts-pod-template-hash: b}}, template: {metadata: {labels: {app: app, rollouts-pod-template-hash: b}}, spec: {containers: [{name: app, image: app:2}]}}}, status: {replicas: 1, readyReplicas: 1, availableReplicas: 1}}`,
		pod("app-a-1", "app-a", "a"), pod("app-b-1", "app-b", "b"),
		// The Rollout's Experiment and its template's pod (a hash of the
		// experiment controller's).
		`{apiVersion: argoproj.io/v1alpha1, kind: Experiment, metadata: {name: app-b-2-1, namespace: shop, ownerReferences: [{apiVersion: argoproj.io/v1alpha1, kind: Rollout, name: app, uid: u1, controller: true}]}, spec: {templates: [{name: canary}]}}`,
		pod("app-b-2-1-canary-x", "app-b-2-1-canary", "c"),
		// An Experiment the snapshot does not hold, and one of another Rollout.
		pod("gone-canary-x", "gone-canary", "d"),
		`{apiVersion: argoproj.io/v1alpha1, kind: Experiment, metadata: {name: other-1, namespace: shop, ownerReferences: [{apiVersion: argoproj.io/v1alpha1, kind: Rollout, name: other, uid: u2, controller: true}]}, spec: {templates: [{name: canary}]}}`,
		pod("other-1-canary-x", "other-1-canary", "e"),
	}
	w := rolloutApp(t, docs)
	if len(w.Pods) != 2 || len(w.ExperimentPods) != 1 || w.ExperimentPods[0].Name != "app-b-2-1-canary-x" {
		t.Fatalf("pods %d, Experiment pods %v: want the Rollout's 2 and app-b-2-1-canary-x", len(w.Pods), names(w.ExperimentPods))
	}
	roles := map[string]string{}
	for _, p := range Run(w, model.ControllerVersion{Assumed: "v1.10.2"}, Options{}).Pods {
		roles[p.Name] = p.Role
	}
	want := map[string]string{"app-a-1": "stable", "app-b-1": "canary", "app-b-2-1-canary-x": "experiment"}
	if len(roles) != len(want) {
		t.Errorf("rows %v, want %v", roles, want)
	}
	for n, r := range want {
		if roles[n] != r {
			t.Errorf("%s: role %q, want %q", n, roles[n], r)
		}
	}
}

func pod(name, rs, hash string) string {
	return `{apiVersion: v1, kind: Pod, metadata: {name: ` + name + `, namespace: shop, labels: {app: app, rollouts-pod-template-hash: ` + hash + `}, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: ` + rs + `, uid: r-` + name + `, controller: true}]}, spec: {nodeName: n1, containers: [{name: app, image: app:2}]}, status: {phase: Running, conditions: [{type: Ready, status: "True"}]}}`
}

func names(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}
