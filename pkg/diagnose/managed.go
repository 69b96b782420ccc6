package diagnose

import (
	"fmt"
	"strings"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// checkManagedRoutes (RD164): the routes a setHeaderRoute or setMirrorRoute
// step put in the VirtualService. The weight is not the whole story while
// they exist: a header route sends every request it matches to the canary.
// A warning where that hurts: a canary without an available pod behind a
// header route, a header route that matches every request, or a route left
// after the controller should have removed it.
func checkManagedRoutes(c *Context, r *rules.Rule) []rules.Finding {
	if c.Router == nil || len(c.Router.ManagedRoutes) == 0 {
		return nil
	}
	st := c.ro.Status
	_, unread := c.View.ReplicaSetsUnread()
	avail, known := int32(0), !unread
	if n := c.Analysis.Inputs.New; n != nil {
		avail = n.Available
	}
	var out []rules.Finding
	for _, mr := range c.Router.ManagedRoutes {
		f := r.NewFinding("")
		what := fmt.Sprintf("route %s of %s", mr.Name, mr.Object)
		match := "matching " + mr.Match
		if mr.Match == "" {
			match = "(it has no match: every request)"
		}
		var keys []upstream.Key
		switch {
		case mr.Mirror:
			f.Message = fmt.Sprintf("%s copies %g%% of the requests %s to the canary; the answers come from the route's own destinations (canary %d of %d)", what, mr.MirrorPercent, match, mr.CanaryWeight, mr.RouteTotal)
			keys = append(keys, "tr.managed-set-mirror")
		case mr.CanaryWeight > 0:
			f.Message = fmt.Sprintf("%s sends %s to the canary (%d of %d of the route), whatever the weight (%d%%)", what, "every request "+match, mr.CanaryWeight, mr.RouteTotal, canaryWeight(c))
			keys = append(keys, "tr.managed-set-header")
			if strings.HasPrefix(mr.Object, "Ingress ") {
				keys = append(keys, "alb.header-route-annotations")
			}
			if mr.Match == "" {
				f.Severity = rules.Warning
				f.Message += ": all traffic on the canary"
			}
			if known && avail == 0 && !st.Abort && st.StableRS != st.CurrentPodHash {
				f.Severity = rules.Warning
				if upstream.At("tr.managed-remove-unavailable", c.Version.Assumed).Absent {
					f.Message += fmt.Sprintf("; the canary has no available pod, so every such request fails, and %s keeps the route until the Rollout is promoted or aborted", c.Version.Assumed)
				} else {
					f.Message += "; the canary has no available pod, so such requests fail until the controller's next pass removes the route"
					keys = append(keys, "tr.managed-remove-unavailable")
				}
			}
		default:
			f.Message = fmt.Sprintf("%s sends every request %s to its own destinations (no canary destination)", what, match)
		}
		switch {
		case st.Abort:
			f.Severity = rules.Warning
			f.Message += "; it is still there although the Rollout is aborted: the controller removes managed routes on an abort, so it has not reconciled since, or its write failed (RD159 and the controller's log say which)"
			keys = append(keys, "tr.managed-remove-aborted")
		case st.StableRS != "" && st.StableRS == st.CurrentPodHash:
			f.Severity = rules.Warning
			f.Message += "; it is still there although the Rollout is fully promoted: the controller removes managed routes then, so it has not reconciled since, or its write failed (RD159 and the controller's log say which)"
			keys = append(keys, "tr.managed-remove-promoted")
		}
		shown := mr.Match
		if shown == "" {
			shown = "(no match)"
		}
		f.Evidence = []rules.Evidence{ev(mr.Object, "spec.http["+mr.Name+"].match", shown)}
		f.Cites = c.cites(keys...)
		out = append(out, f)
	}
	return out
}

// canaryWeight is the canary weight the status records.
func canaryWeight(c *Context) int32 {
	if w := c.ro.Status.Canary.Weights; w != nil {
		return w.Canary.Weight
	}
	return 0
}
