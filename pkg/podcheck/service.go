package podcheck

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/router"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// The Services in front of the pods: RD308, and the traffic weight each
// Service of a Rollout carries.

func checkTrafficPolicy(c *Context, r *rules.Rule) []rules.Finding {
	var out []rules.Finding
	for _, s := range c.W.Services {
		if s.Spec.Type != corev1.ServiceTypeNodePort && s.Spec.Type != corev1.ServiceTypeLoadBalancer {
			continue
		}
		if s.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal {
			continue
		}
		// An NLB with ip targets sends to pods directly; the policy does not apply.
		if s.Annotations["service.beta.kubernetes.io/aws-load-balancer-nlb-target-type"] == "ip" || s.Annotations["service.beta.kubernetes.io/aws-load-balancer-type"] == "nlb-ip" {
			continue
		}
		pol := string(s.Spec.ExternalTrafficPolicy)
		if pol == "" {
			pol = "Cluster (default)"
		}
		f := r.NewFinding(fmt.Sprintf("Service %s is %s with externalTrafficPolicy %s: a load balancer's health check on node:port is answered by whichever pod kube-proxy picks, on any node, so a draining or dead pod is never taken out of the pool", s.Name, s.Spec.Type, pol))
		f.Evidence = []rules.Evidence{ev("Service "+s.Namespace+"/"+s.Name, "spec.externalTrafficPolicy", pol), ev("Service "+s.Namespace+"/"+s.Name, "spec.type", s.Spec.Type)}
		out = append(out, f)
	}
	return out
}

// serviceWeights returns the traffic weight each Rollout Service carries
// (canary and stable Services of a traffic-routed canary), and the maximum:
// what the router's objects send each Service when the snapshot has them
// (whatever the router), else what the Rollout's status says.
func serviceWeights(w *snapshot.Workload, ver upstream.Version) (map[string]int32, int32) {
	ro := w.Rollout
	if ro == nil || ro.Spec.Strategy.Canary == nil || ro.Spec.Strategy.Canary.TrafficRouting == nil {
		return nil, 0
	}
	c := ro.Spec.Strategy.Canary
	maxW := int32(100)
	if c.TrafficRouting.MaxTrafficWeight != nil {
		maxW = *c.TrafficRouting.MaxTrafficWeight
	}
	var ctls []*appsv1.Deployment
	if w.Router != nil {
		ctls = w.Router.Controllers
	}
	if rw := router.Read(ro, w.Router, ver, router.FlagsOf(ctls)).ServiceWeights(); rw != nil {
		return rw, maxW
	}
	out := map[string]int32{}
	if c.StableService == "" {
		return out, maxW
	}
	st := ro.Status.Canary.Weights
	switch {
	case st != nil:
		if c.CanaryService != "" {
			out[c.CanaryService] = st.Canary.Weight
		}
		out[c.StableService] = st.Stable.Weight
	default:
		out[c.StableService] = maxW
		if c.CanaryService != "" {
			out[c.CanaryService] = 0
		}
	}
	if c.CanaryService == c.StableService {
		out[c.StableService] = maxW
	}
	return out, maxW
}
