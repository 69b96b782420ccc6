package snapshot

import (
	"encoding/json"
	"sort"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
)

// Refs are the names of objects a Rollout's spec points at, by kind. The
// gatherer reads exactly these; View picks exactly these out of a snapshot.
// A kind the Rollout names nothing of has a nil map: read, never write.
type Refs struct {
	Services         map[string]bool
	VirtualServices  map[string]bool
	DestinationRules map[string]bool
	Ingresses        map[string]bool
	TrafficSplits    map[string]bool
	HTTPRoutes       map[string]bool
	// The other routers' objects: TraefikServices, ApisixRoutes, Ambassador
	// Mappings (each base Mapping and the canary Mapping the controller
	// makes from it), App Mesh VirtualServices and VirtualNodes, and the
	// Gateway API plugin's GRPCRoutes, TCPRoutes and TLSRoutes. Ingresses
	// holds the canary Ingresses the nginx reconciler creates too.
	TraefikServices map[string]bool
	ApisixRoutes    map[string]bool
	Mappings        map[string]bool
	AppMeshServices map[string]bool
	AppMeshNodes    map[string]bool
	GRPCRoutes      map[string]bool
	TCPRoutes       map[string]bool
	TLSRoutes       map[string]bool
	// RouteNamespace is where the Gateway API plugin looks for its routes
	// (its config's "namespace"; "" for the Rollout's).
	RouteNamespace string
	// Plugins are the traffic router plugins the Rollout names, sorted.
	Plugins []string
}

// GatewayAPIPlugin is the name the Gateway API traffic router plugin is
// configured under in the controller's ConfigMap and in a Rollout.
const GatewayAPIPlugin = "argoproj-labs/gatewayAPI"

// NginxCanaryIngress is the name of the Ingress the nginx reconciler creates
// beside a stable Ingress: "<rollout>-<stableIngress>", cut to leave room
// for the "-canary" suffix within the 253 characters a name may have
// (upstream utils/ingress GetCanaryIngressName, the same in every modeled
// version).
func NginxCanaryIngress(rollout, stableIngress string) string {
	if stableIngress == "" {
		return ""
	}
	const suffix = "-canary"
	prefix := rollout + "-" + stableIngress
	if len(prefix) > 253-len(suffix) {
		prefix = prefix[:253-len(suffix)]
	}
	return prefix + suffix
}

// AmbassadorCanaryMapping is the name of the Mapping the Ambassador
// reconciler creates from a base Mapping: its name cut to 246 characters,
// then "-canary".
func AmbassadorCanaryMapping(base string) string {
	if len(base) > 246 {
		base = base[:246]
	}
	return base + "-canary"
}

// SMITrafficSplitName is the TrafficSplit the SMI reconciler writes: the one
// the Rollout names, else one named after the Rollout.
func SMITrafficSplitName(ro *v1alpha1.Rollout) string {
	c := ro.Spec.Strategy.Canary
	if c != nil && c.TrafficRouting != nil && c.TrafficRouting.SMI != nil && c.TrafficRouting.SMI.TrafficSplitName != "" {
		return c.TrafficRouting.SMI.TrafficSplitName
	}
	return ro.Name
}

// ReferencedNames collects every name the Rollout's strategy refers to.
func ReferencedNames(ro *v1alpha1.Rollout) Refs {
	var r Refs
	// Each map is made on its first name: a Rollout names two or three
	// kinds of the fourteen, and a fleet scan asks this several times per
	// Rollout. Reading a nil map is reading an empty one.
	add := func(m *map[string]bool, names ...string) {
		for _, n := range names {
			if n == "" {
				continue
			}
			if *m == nil {
				*m = map[string]bool{}
			}
			(*m)[n] = true
		}
	}
	if bg := ro.Spec.Strategy.BlueGreen; bg != nil {
		add(&r.Services, bg.ActiveService, bg.PreviewService)
	}
	c := ro.Spec.Strategy.Canary
	if c == nil {
		return r
	}
	add(&r.Services, c.CanaryService, c.StableService)
	if pp := c.PingPong; pp != nil {
		add(&r.Services, pp.PingService, pp.PongService)
	}
	tr := c.TrafficRouting
	if tr == nil {
		return r
	}
	if is := tr.Istio; is != nil {
		if is.VirtualService != nil {
			add(&r.VirtualServices, is.VirtualService.Name)
		}
		for _, vs := range is.VirtualServices {
			add(&r.VirtualServices, vs.Name)
		}
		if is.DestinationRule != nil {
			add(&r.DestinationRules, is.DestinationRule.Name)
		}
	}
	if n := tr.Nginx; n != nil {
		// The reconciler uses stableIngresses when set, else stableIngress.
		stables := n.StableIngresses
		if stables == nil {
			stables = []string{n.StableIngress}
		}
		for _, s := range stables {
			add(&r.Ingresses, s, NginxCanaryIngress(ro.Name, s))
		}
	}
	if a := tr.ALB; a != nil {
		add(&r.Ingresses, a.Ingress)
		add(&r.Ingresses, a.Ingresses...)
		add(&r.Services, a.RootService)
	}
	if s := tr.SMI; s != nil {
		add(&r.TrafficSplits, SMITrafficSplitName(ro))
		add(&r.Services, s.RootService)
	}
	if t := tr.Traefik; t != nil {
		add(&r.TraefikServices, t.WeightedTraefikServiceName)
	}
	if a := tr.Apisix; a != nil && a.Route != nil {
		add(&r.ApisixRoutes, a.Route.Name)
	}
	if a := tr.Ambassador; a != nil {
		for _, m := range a.Mappings {
			if m != "" {
				add(&r.Mappings, m, AmbassadorCanaryMapping(m))
			}
		}
	}
	if m := tr.AppMesh; m != nil {
		if m.VirtualService != nil {
			add(&r.AppMeshServices, m.VirtualService.Name)
		}
		if g := m.VirtualNodeGroup; g != nil {
			if g.CanaryVirtualNodeRef != nil {
				add(&r.AppMeshNodes, g.CanaryVirtualNodeRef.Name)
			}
			if g.StableVirtualNodeRef != nil {
				add(&r.AppMeshNodes, g.StableVirtualNodeRef.Name)
			}
		}
	}
	// Plugins keep their config as opaque JSON in the Rollout type; the
	// Gateway API plugin's names its routes.
	for name, raw := range tr.Plugins {
		r.Plugins = append(r.Plugins, name)
		if name != GatewayAPIPlugin {
			continue
		}
		cfg := GatewayRoutes(raw)
		add(&r.HTTPRoutes, cfg.HTTP...)
		add(&r.GRPCRoutes, cfg.GRPC...)
		add(&r.TCPRoutes, cfg.TCP...)
		add(&r.TLSRoutes, cfg.TLS...)
		r.RouteNamespace = cfg.Namespace
	}
	sort.Strings(r.Plugins)
	return r
}

// GatewayConfig is what the Gateway API plugin's config in a Rollout names:
// the routes of each kind it sets weights on, and their namespace ("" for
// the Rollout's).
type GatewayConfig struct {
	HTTP, GRPC, TCP, TLS []string
	Namespace            string
	// Invalid is the JSON error when the config does not parse.
	Invalid string
}

// GatewayRoutes reads the Gateway API plugin's config: a single route per
// kind ({"httpRoute": "x"}) or lists ({"httpRoutes": [{"name": "x"}]}), as
// the plugin's documentation shows them
// (https://github.com/argoproj-labs/rollouts-plugin-trafficrouter-gatewayapi).
func GatewayRoutes(raw []byte) GatewayConfig {
	type named struct {
		Name string `json:"name"`
	}
	var cfg struct {
		HTTPRoute  string  `json:"httpRoute"`
		HTTPRoutes []named `json:"httpRoutes"`
		GRPCRoute  string  `json:"grpcRoute"`
		GRPCRoutes []named `json:"grpcRoutes"`
		TCPRoute   string  `json:"tcpRoute"`
		TCPRoutes  []named `json:"tcpRoutes"`
		TLSRoute   string  `json:"tlsRoute"`
		TLSRoutes  []named `json:"tlsRoutes"`
		Namespace  string  `json:"namespace"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return GatewayConfig{Invalid: err.Error()}
	}
	names := func(one string, list []named) []string {
		var out []string
		if one != "" {
			out = append(out, one)
		}
		for _, n := range list {
			if n.Name != "" {
				out = append(out, n.Name)
			}
		}
		return out
	}
	return GatewayConfig{HTTP: names(cfg.HTTPRoute, cfg.HTTPRoutes), GRPC: names(cfg.GRPCRoute, cfg.GRPCRoutes),
		TCP: names(cfg.TCPRoute, cfg.TCPRoutes), TLS: names(cfg.TLSRoute, cfg.TLSRoutes), Namespace: cfg.Namespace}
}
