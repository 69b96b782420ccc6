package router

import (
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// routerReasons are the reasons of the controller's Events about writing a
// router or verifying its weights (upstream utils/conditions and the
// routers' own reasons).
var routerReasons = map[string]bool{
	"TrafficRoutingError": true, "TargetGroupUnverified": true, "TargetGroupVerifyError": true,
	"TargetGroupVerified": true, "LoadBalancerNotFound": true, "WeightVerifyError": true,
	"TraefikServiceUpdateError": true, "CanaryMappingUpdateError": true, "CanaryMappingCreationError": true,
	"CanaryMappingCleanupError": true, "AmbassadorMappingConfigError": true, "AmbassadorMappingNotFound": true,
	"ApisixRouteUpdateError": true, "ApisixRouteCreateError": true, "TrafficSplitNotCreated": true,
	"VirtualServiceNotFound": true, "VirtualRouterNotFound": true, "VirtualNodeNotFound": true,
	"CreatingCanaryIngress": true, "PatchingCanaryIngress": true, "PatchingALBIngress": true,
	"TrafficSplitCreated": true,
}

// events keeps the newest Event of each router reason, and when the
// controller last recorded a new weight (TrafficWeightUpdated).
func events(evs []*corev1.Event) ([]Event, *time.Time) {
	by := map[string]*Event{}
	var setAt *time.Time
	for _, e := range evs {
		t := snapshot.EventTime(e)
		if e.Reason == "TrafficWeightUpdated" {
			if setAt == nil || t.After(*setAt) {
				tt := t
				setAt = &tt
			}
			continue
		}
		if !routerReasons[e.Reason] {
			continue
		}
		count := e.Count
		if count == 0 {
			count = 1
		}
		if cur, ok := by[e.Reason]; ok {
			cur.Count += count
			if t.After(cur.Last) {
				cur.Last, cur.Message, cur.Type = t, e.Message, e.Type
			}
			continue
		}
		by[e.Reason] = &Event{Reason: e.Reason, Type: e.Type, Message: e.Message, Count: count, Last: t}
	}
	out := make([]Event, 0, len(by))
	for _, e := range by {
		out = append(out, *e)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Last.Equal(out[j].Last) {
			return out[i].Last.After(out[j].Last)
		}
		return out[i].Reason < out[j].Reason
	})
	return out, setAt
}

// Latest is the newest Event of any of these reasons, or nil.
func (s *State) Latest(reasons ...string) *Event {
	if s == nil {
		return nil
	}
	for i := range s.Events {
		for _, r := range reasons {
			if s.Events[i].Reason == r {
				return &s.Events[i]
			}
		}
	}
	return nil
}
