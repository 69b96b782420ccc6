package router

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// plugins reads which of the Rollout's traffic router plugins the
// controller's ConfigMap configures.
func (rd *reader) plugins() []Plugin {
	type item struct {
		Name     string `json:"name"`
		Location string `json:"location"`
	}
	var items []item
	known := rd.r.Config != nil
	if known {
		if err := yaml.Unmarshal([]byte(rd.r.Config.Data["trafficRouterPlugins"]), &items); err != nil {
			known = false
		}
	}
	var out []Plugin
	for name, raw := range rd.ro.Spec.Strategy.Canary.TrafficRouting.Plugins {
		p := Plugin{Name: name, Known: known}
		for _, it := range items {
			if it.Name == name {
				p.Configured, p.Location = true, it.Location
			}
		}
		if name == snapshot.GatewayAPIPlugin {
			p.ConfigError = snapshot.GatewayRoutes(raw).Invalid
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// gateway reads the Gateway API routes the Gateway API plugin writes: in
// each rule that routes to the canary or stable Service, their
// backendRefs' weights (a backendRef without one weighs 1, as the Gateway
// API defines it), and the route's Accepted and ResolvedRefs conditions.
func (rd *reader) gateway() []Object {
	raw, ok := rd.ro.Spec.Strategy.Canary.TrafficRouting.Plugins[snapshot.GatewayAPIPlugin]
	if !ok {
		return nil
	}
	cfg := snapshot.GatewayRoutes(raw)
	ns := rd.ro.Namespace
	if cfg.Namespace != "" {
		ns = cfg.Namespace
	}
	var out []Object
	for _, k := range []struct {
		kind  string
		names []string
	}{{"HTTPRoute", cfg.HTTP}, {"GRPCRoute", cfg.GRPC}, {"TCPRoute", cfg.TCP}, {"TLSRoute", cfg.TLS}} {
		for _, name := range k.names {
			out = append(out, rd.route(k.kind, ns, name)...)
		}
	}
	return out
}

func (rd *reader) route(kind, ns, name string) []Object {
	u := rd.r.Find(snapshot.GroupGateway, kind, name)
	if u == nil {
		return []Object{rd.object(kind, ns, name, "spec.rules[].backendRefs", nil, snapshot.GroupGateway+"/"+kind)}
	}
	conds := routeConditions(u)
	rules, _, _ := unstructured.NestedSlice(u.Object, "spec", "rules")
	var out []Object
	for i, r := range rules {
		rm, _ := r.(map[string]interface{})
		refs, _ := rm["backendRefs"].([]interface{})
		o := rd.object(kind, u.GetNamespace(), name, fmt.Sprintf("spec.rules[%d].backendRefs", i), u, "")
		for _, b := range refs {
			bm, _ := b.(map[string]interface{})
			n, _ := bm["name"].(string)
			w := int64(1)
			if v, ok := int64Of(bm["weight"]); ok {
				w = v
			}
			o.Backends = append(o.Backends, Backend{Name: n, Role: rd.roleOf(n), Weight: w})
		}
		rd.finish(&o, true)
		if o.Canary == nil && o.Stable == nil {
			continue // a rule the plugin does not write
		}
		// The plugin writes its weights out of 100 whatever maxTrafficWeight is.
		o.Conditions = conds
		stamp(&o, u, fieldPath("spec", "rules")...)
		out = append(out, o)
	}
	if len(out) == 0 {
		o := rd.object(kind, u.GetNamespace(), name, "spec.rules[].backendRefs", u, "")
		o.Conditions = conds
		c := rd.ro.Spec.Strategy.Canary
		o.Notes = append(o.Notes, fmt.Sprintf("no rule routes to the canaryService %s or the stableService %s: the plugin fails every pass", c.CanaryService, c.StableService))
		out = append(out, o)
	}
	return out
}

// routeConditions are a route's Accepted and ResolvedRefs conditions for
// each parent (status.parents[].conditions).
func routeConditions(u *unstructured.Unstructured) []Condition {
	parents, _, _ := unstructured.NestedSlice(u.Object, "status", "parents")
	var out []Condition
	for _, p := range parents {
		pm, _ := p.(map[string]interface{})
		ref, _ := pm["parentRef"].(map[string]interface{})
		parent, _ := ref["name"].(string)
		if pns, _ := ref["namespace"].(string); pns != "" {
			parent = pns + "/" + parent
		}
		conds, _ := pm["conditions"].([]interface{})
		for _, c := range conds {
			cm, _ := c.(map[string]interface{})
			t, _ := cm["type"].(string)
			if t != "Accepted" && t != "ResolvedRefs" {
				continue
			}
			st, _ := cm["status"].(string)
			reason, _ := cm["reason"].(string)
			msg, _ := cm["message"].(string)
			out = append(out, Condition{Parent: parent, Type: t, Status: st, Reason: reason, Message: strings.TrimSpace(msg)})
		}
	}
	return out
}
