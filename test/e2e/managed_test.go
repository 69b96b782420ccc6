//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
)

func init() {
	scenarios = append(scenarios,
		scenario{"managed-header-route", func(t *testing.T, h *harness) { managedHeaderRoute(t, h, hostMode) }},
		scenario{"managed-header-route-alb", func(t *testing.T, h *harness) { managedHeaderRoute(t, h, albMode) }})
}

// managedHeaderRoute: a setHeaderRoute step on Istio or ALB, then the canary
// replaced by a revision whose pods never become ready. diagnose must show
// the header route (RD164) while it stands, and say what the controller then
// does with it: v1.8+ removes it while the canary has no available pod,
// v1.7 keeps it, sending every matching request to pods that are not there
// (RD164 a warning). Observed: the VirtualService's routes once the
// controller has stopped writing.
func managedHeaderRoute(t *testing.T, h *harness, mode trafficMode) {
	spec := rolloutSpec{replicas: 4, mode: mode,
		steps: `[{setWeight: 10}, {setHeaderRoute: {name: by-header, match: [{headerName: x-canary, headerValue: {exact: "yes"}}]}}, {pause: {}}]`}
	yaml := strings.Replace(h.rolloutYAML(spec, "a"), "      trafficRouting:\n", "      trafficRouting:\n        managedRoutes: [{name: by-header}]\n", 1)
	o := h.observe(isCanaryDest(mode))
	h.apply(h.trafficObjects(spec.mode))
	h.apply(yaml)
	h.healthy(o, int64(spec.replicas), 90*time.Second)
	h.setImage("b")
	h.waitFor("the pause after the header route", 90*time.Second, func() bool {
		phase, _, _, idx, _ := h.status()
		return phase == "Paused" && idx == 2 && strings.Contains(h.managedRoutes(mode), "by-header")
	})
	rep := h.diagnose("app")
	f := finding(rep, "RD164")
	match := map[trafficMode]string{hostMode: "matching headers.x-canary.exact=yes to the canary", albMode: "matching http-header x-canary=yes to the canary"}[mode]
	if f == nil || f.Severity != rules.Info || !strings.Contains(f.Message, match) {
		t.Fatalf("RD164 while the header route stands: %+v (findings %s)", f, findingIDs(rep))
	}
	h.holdUnready("c")
	// Quiet: nothing the observer sees changes for 5 s (the new canary's
	// pods never become ready, so the usual wait for availability would not end).
	h.waitFor("the controller to stop writing", 90*time.Second, func() bool {
		_, _, current, _, _ := h.status()
		ss := o.Samples()
		return current != "" && o.Now().RS[current].Spec > 0 && len(ss) > 0 && time.Since(ss[len(ss)-1].At) > 5*time.Second
	})
	routes := h.managedRoutes(mode)
	rep = h.diagnose("app")
	f = finding(rep, "RD164")
	pred := "no RD164 (the route is removed)"
	if f != nil {
		pred = fmt.Sprintf("RD164 %s: %s", f.Severity, strings.TrimPrefix(f.Message[strings.LastIndex(f.Message, ";")+1:], " "))
	}
	obs := map[trafficMode]string{hostMode: "VirtualService routes: ", albMode: "Ingress header actions: "}[mode] + routes
	h.record("managed routes"+modeNames[mode]+": a setHeaderRoute step, then the canary replaced by one never ready", pred, obs)
	kept := strings.Contains(routes, "by-header")
	if h.version == "v1.7.2" {
		if !kept || f == nil || f.Severity != rules.Warning || !strings.Contains(f.Message, "keeps the route until the Rollout is promoted or aborted") {
			t.Errorf("v1.7.2: predicted %s; observed %s", pred, obs)
		}
	} else if kept || f != nil {
		t.Errorf("%s: predicted %s; observed %s", h.version, pred, obs)
	}
}

// managedRoutes are the names of the VirtualService's http routes, in
// order (Istio), or the header routes' action annotations of the Ingress
// (ALB), "none" without any.
func (h *harness) managedRoutes(mode trafficMode) string {
	if mode == albMode {
		var names []string
		for k := range h.get(gvrIngress, "web").GetAnnotations() {
			if n, ok := strings.CutPrefix(k, "alb.ingress.kubernetes.io/actions."); ok && n != "app-stable" {
				names = append(names, n)
			}
		}
		if len(names) == 0 {
			return "none"
		}
		return strings.Join(names, ", ")
	}
	u := h.get(gvrVS, "app")
	routes, _, _ := unstructured.NestedSlice(u.Object, "spec", "http")
	var names []string
	for _, r := range routes {
		n, _ := r.(map[string]interface{})["name"].(string)
		names = append(names, n)
	}
	return strings.Join(names, ", ")
}
