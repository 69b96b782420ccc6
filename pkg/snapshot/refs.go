package snapshot

import (
	"encoding/json"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
)

// Refs are the names of objects a Rollout's spec points at, by kind. The
// gatherer reads exactly these; View picks exactly these out of a snapshot.
type Refs struct {
	Services         map[string]bool
	VirtualServices  map[string]bool
	DestinationRules map[string]bool
	Ingresses        map[string]bool
	TrafficSplits    map[string]bool
	HTTPRoutes       map[string]bool
}

// ReferencedNames collects every name the Rollout's strategy refers to.
func ReferencedNames(ro *v1alpha1.Rollout) Refs {
	r := Refs{
		Services:         map[string]bool{},
		VirtualServices:  map[string]bool{},
		DestinationRules: map[string]bool{},
		Ingresses:        map[string]bool{},
		TrafficSplits:    map[string]bool{},
		HTTPRoutes:       map[string]bool{},
	}
	add := func(m map[string]bool, names ...string) {
		for _, n := range names {
			if n != "" {
				m[n] = true
			}
		}
	}
	if bg := ro.Spec.Strategy.BlueGreen; bg != nil {
		add(r.Services, bg.ActiveService, bg.PreviewService)
	}
	c := ro.Spec.Strategy.Canary
	if c == nil {
		return r
	}
	add(r.Services, c.CanaryService, c.StableService)
	if pp := c.PingPong; pp != nil {
		add(r.Services, pp.PingService, pp.PongService)
	}
	tr := c.TrafficRouting
	if tr == nil {
		return r
	}
	if is := tr.Istio; is != nil {
		if is.VirtualService != nil {
			add(r.VirtualServices, is.VirtualService.Name)
		}
		for _, vs := range is.VirtualServices {
			add(r.VirtualServices, vs.Name)
		}
		if is.DestinationRule != nil {
			add(r.DestinationRules, is.DestinationRule.Name)
		}
	}
	if n := tr.Nginx; n != nil {
		add(r.Ingresses, n.StableIngress)
		add(r.Ingresses, n.StableIngresses...)
	}
	if a := tr.ALB; a != nil {
		add(r.Ingresses, a.Ingress)
		add(r.Ingresses, a.Ingresses...)
		add(r.Services, a.RootService)
	}
	if s := tr.SMI; s != nil {
		add(r.TrafficSplits, s.TrafficSplitName)
		add(r.Services, s.RootService)
	}
	// The Gateway API is served by the argoproj-labs plugin; its config names
	// the HTTPRoute(s). The config is opaque JSON in the Rollout type.
	for name, raw := range tr.Plugins {
		if name != "argoproj-labs/gatewayAPI" {
			continue
		}
		for _, n := range gatewayRouteNames(raw) {
			add(r.HTTPRoutes, n)
		}
	}
	return r
}

// gatewayRouteNames reads the HTTPRoute names from the gatewayAPI plugin
// config: {"httpRoute": "x"} or {"httpRoutes": [{"name": "x"}]}.
func gatewayRouteNames(raw []byte) []string {
	var cfg struct {
		HTTPRoute  string `json:"httpRoute"`
		HTTPRoutes []struct {
			Name string `json:"name"`
		} `json:"httpRoutes"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return nil
	}
	out := []string{}
	if cfg.HTTPRoute != "" {
		out = append(out, cfg.HTTPRoute)
	}
	for _, r := range cfg.HTTPRoutes {
		if r.Name != "" {
			out = append(out, r.Name)
		}
	}
	return out
}
