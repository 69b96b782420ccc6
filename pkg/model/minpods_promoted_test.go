package model

import (
	"testing"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// A fully promoted Rollout with minPodsPerReplicaSet 2 and replicas 1: its
// stable is its new ReplicaSet, sized by NewRSNewReplicas like any canary —
// for the maximum weight (1 pod) raised to minPods. Before v1.10, which
// caps minPods at replicas, that is 2 pods, as the lab saw on v1.9.3 once
// the canary was promoted (e2e minpods-over-replicas); v1.10 keeps 1. The
// expected counts are read from each version's source (utils/replicaset:
// NewRSNewReplicas, CheckMinPodsPerReplicaSet), not from the model.
func TestFullyPromotedKeepsMinPods(t *testing.T) {
	want := map[upstream.Version]int32{"v1.7.2": 2, "v1.8.2": 2, "v1.8.3": 2, "v1.9.3": 2, "v1.10.2": 1}
	for _, ver := range upstream.Modeled {
		w, ok := want[ver]
		if !ok {
			t.Fatalf("%s: no expected count in the table: read its source and add it", ver)
		}
		b := &RS{Name: "app-b", Hash: "b", Created: t0, Spec: w, Replicas: w, Available: w}
		two := int32(2)
		in := Inputs{
			Version: ver, Replicas: 1, MinPods: &two, MaxWeight: 100, Steps: []v1alpha1.CanaryStep{sw(50), pause(2)},
			TrafficRouted: true, HasServices: true, Index: i32(2), StableHash: "b", CurrentPodHash: "b",
			Weights: &v1alpha1.TrafficWeights{Canary: v1alpha1.WeightDestination{PodTemplateHash: "b"}, Stable: v1alpha1.WeightDestination{Weight: 100, PodTemplateHash: "b"}},
			New:     b, Stable: b, All: []*RS{b},
		}
		p := Evaluate(in)
		if p.CanaryTarget != w || p.StableTarget != w {
			t.Errorf("%s: the promoted ReplicaSet sized to canary %d, stable %d; want %d", ver, p.CanaryTarget, p.StableTarget, w)
		}
		cited := false
		for _, c := range p.Cites {
			cited = cited || c.Key == "ur.new-rs-traffic-routed"
		}
		if cited != (w > 1) {
			t.Errorf("%s: the sizing above replicas cited=%v, want %v (cites %v)", ver, cited, w > 1, p.Cites)
		}
		if p.Weight != 0 || p.Promotes {
			t.Errorf("%s: a fully promoted Rollout got weight %d, promotes %v", ver, p.Weight, p.Promotes)
		}
	}
}
