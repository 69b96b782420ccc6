package diagnose

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// managedRoutes names routes in the Rollout's trafficRouting.managedRoutes.
func managedRoutes(names ...string) func(*unstructured.Unstructured) {
	var list []interface{}
	for _, n := range names {
		list = append(list, map[string]interface{}{"name": n})
	}
	return set(canaryField("trafficRouting", "managedRoutes"), list)
}

// withRoute puts an http route ahead of the example VirtualService's
// weighted one, as the controller writes a managed route.
func withRoute(route map[string]interface{}) func(*example) {
	return func(e *example) {
		for _, o := range e.objs {
			if o.GetKind() != "VirtualService" {
				continue
			}
			routes, _, _ := unstructured.NestedSlice(o.Object, "spec", "http")
			if err := unstructured.SetNestedSlice(o.Object, append([]interface{}{route}, routes...), "spec", "http"); err != nil {
				panic(err)
			}
		}
	}
}

// headerRoute is the route a setHeaderRoute step writes: the match, all of
// it to the canary Service.
func headerRoute(match ...interface{}) map[string]interface{} {
	r := map[string]interface{}{"name": "by-header",
		"route": []interface{}{map[string]interface{}{"destination": map[string]interface{}{"host": "checkout-api-canary"}, "weight": int64(100)}}}
	if len(match) > 0 {
		r["match"] = match
	}
	return r
}

var headerMatch = map[string]interface{}{"headers": map[string]interface{}{"x-canary": map[string]interface{}{"exact": "yes"}}}

var mirrorRoute = map[string]interface{}{"name": "mirror",
	"match":  []interface{}{map[string]interface{}{"method": map[string]interface{}{"exact": "GET"}}},
	"mirror": map[string]interface{}{"host": "checkout-api-canary"}, "mirrorPercentage": map[string]interface{}{"value": int64(30)},
	"route": []interface{}{
		map[string]interface{}{"destination": map[string]interface{}{"host": "checkout-api-stable"}, "weight": int64(0)},
		map[string]interface{}{"destination": map[string]interface{}{"host": "checkout-api-canary"}, "weight": int64(100)}}}

// managedRouteCases are RD164's states; rolloutCases holds them.
var managedRouteCases = []rolloutCase{
	{name: "header route to the canary", id: "RD164", fires: true, edit: managedRoutes("by-header"), more: withRoute(headerRoute(headerMatch)),
		says: "route by-header of VirtualService shop/checkout-api sends every request matching headers.x-canary.exact=yes to the canary (100 of 100 of the route), whatever the weight (100%)"},
	{name: "header route without a match", id: "RD164", fires: true, edit: managedRoutes("by-header"), more: withRoute(headerRoute())},
	{name: "mirror route", id: "RD164", fires: true, edit: managedRoutes("mirror"), more: withRoute(mirrorRoute),
		says: "route mirror of VirtualService shop/checkout-api copies 30% of the requests matching method.exact=GET to the canary; the answers come from the route's own destinations (canary 100 of 100)"},
	{name: "header route left after an abort", id: "RD164", fires: true, edit: both(managedRoutes("by-header"), set([]string{"status", "abort"}, true)), more: withRoute(headerRoute(headerMatch))},
	{name: "managed route declared, none written", id: "RD164", edit: managedRoutes("by-header")},
	{name: "a route of another name", id: "RD164", edit: managedRoutes("other"), more: withRoute(headerRoute(headerMatch))},
	// The controller's validation of route steps (RD113).
	{name: "setHeaderRoute naming a route managedRoutes does not list", id: "RD113", fires: true,
		edit: both(managedRoutes("other"), routeStep("setHeaderRoute", "by-header")),
		says: "the controller rejects this spec (InvalidSpec) and will not scale, shift traffic or move steps until it is fixed: spec.strategy.canary.steps[1].setHeaderRoute by-header: is not in spec.strategy.canary.trafficRouting.managedRoutes"},
	{name: "setMirrorRoute without Istio", id: "RD113", fires: true,
		edit: both(remove(canaryField("trafficRouting", "istio")...), set(canaryField("trafficRouting", "nginx"), map[string]interface{}{"stableIngress": "web"}), routeStep("setMirrorRoute", "mirror")),
		says: "the controller rejects this spec (InvalidSpec) and will not scale, shift traffic or move steps until it is fixed: spec.strategy.canary.steps[1].setMirrorRoute mirror: needs trafficRouting with Istio (or, from v1.10, a plugin)"},
	{name: "setHeaderRoute without a router", id: "RD113", fires: true,
		edit: both(remove(canaryField("trafficRouting")...), routeStep("setHeaderRoute", "by-header"))},
	{name: "setHeaderRoute listed in managedRoutes", id: "RD113", edit: both(managedRoutes("by-header"), routeStep("setHeaderRoute", "by-header"))},
}

// routeStep makes the example's step 1 a setHeaderRoute or setMirrorRoute
// step naming route.
func routeStep(kind, route string) func(*unstructured.Unstructured) {
	return set(canaryField("steps"), []interface{}{
		map[string]interface{}{"setWeight": int64(5)},
		map[string]interface{}{kind: map[string]interface{}{"name": route, "match": []interface{}{map[string]interface{}{"method": map[string]interface{}{"exact": "GET"}}}}},
		map[string]interface{}{"setWeight": int64(100)},
	})
}

func init() { rolloutCases = append(rolloutCases, managedRouteCases...) }

// Which managed routes warn, and what a canary without an available pod
// behind a header route means per version: v1.8+ removes the route on the
// next pass, v1.7 keeps it until promotion or abort.
func TestManagedRoutes(t *testing.T) {
	noPods := func(e *example) {
		withRoute(headerRoute(headerMatch))(e)
		for _, o := range e.objs {
			if o.GetKind() == "ReplicaSet" && o.GetName() == "checkout-api-5f6c8d7b9a" {
				_ = unstructured.SetNestedField(o.Object, int64(0), "status", "availableReplicas")
				_ = unstructured.SetNestedField(o.Object, int64(0), "status", "readyReplicas")
			}
		}
	}
	for _, c := range []struct {
		name string
		ver  upstream.Version
		edit func(*unstructured.Unstructured)
		more func(*example)
		sev  rules.Severity
		says string
		cite upstream.Key
	}{
		{"header route", "v1.10.2", managedRoutes("by-header"), withRoute(headerRoute(headerMatch)), rules.Info, "whatever the weight (100%)", "tr.managed-set-header"},
		{"every request", "v1.10.2", managedRoutes("by-header"), withRoute(headerRoute()), rules.Warning, "sends every request (it has no match: every request) to the canary (100 of 100 of the route), whatever the weight (100%): all traffic on the canary", "tr.managed-set-header"},
		{"no canary pod, v1.10", "v1.10.2", managedRoutes("by-header"), noPods, rules.Warning, "the canary has no available pod, so such requests fail until the controller's next pass removes the route", "tr.managed-remove-unavailable"},
		{"no canary pod, v1.7", "v1.7.2", managedRoutes("by-header"), noPods, rules.Warning, "the canary has no available pod, so every such request fails, and v1.7.2 keeps the route until the Rollout is promoted or aborted", "tr.managed-set-header"},
		{"left after an abort", "v1.10.2", both(managedRoutes("by-header"), set([]string{"status", "abort"}, true)), withRoute(headerRoute(headerMatch)), rules.Warning, "it is still there although the Rollout is aborted", "tr.managed-remove-aborted"},
		{"left after promotion", "v1.10.2", both(managedRoutes("by-header"), set([]string{"status", "stableRS"}, "5f6c8d7b9a")), withRoute(headerRoute(headerMatch)), rules.Warning, "it is still there although the Rollout is fully promoted", "tr.managed-remove-promoted"},
	} {
		f := finding(t, diagnoseEdited(t, c.ver, c.edit, c.more), "RD164")
		if !strings.Contains(f.Message, c.says) || f.Severity != c.sev {
			t.Errorf("%s: RD164 is %s: %s\nwant %s containing %s", c.name, f.Severity, f.Message, c.sev, c.says)
		}
		if _, ok := cited(f, c.cite); !ok {
			t.Errorf("%s: RD164 does not cite %s: %+v", c.name, c.cite, f.Cites)
		}
	}
}
