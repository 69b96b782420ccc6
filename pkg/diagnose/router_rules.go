package diagnose

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/podcheck"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/router"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// The router checks, RD107 and RD130–RD137 (live) and RD230–RD231
// (static): what the traffic router's objects really say against what the
// Rollout's status and spec mean.

// routerObjects are the router objects to compare: found and writable.
// Several checks ask; the list is made on the first.
func (c *Context) routerObjects() []router.Object {
	if c.Router == nil {
		return nil
	}
	if c.routed == nil {
		c.routed = []router.Object{}
		for _, o := range c.Router.Objects {
			if !o.Missing && !o.NotOwned && !o.Unread {
				c.routed = append(c.routed, o)
			}
		}
	}
	return c.routed
}

// ago says when t was, against the snapshot's now.
func (c *Context) ago(t time.Time) string {
	s := fmt.Sprintf("%s (%s ago)", t.UTC().Format(time.RFC3339), snapshot.Since(c.View.Now, t).Round(time.Second))
	if c.View.NowInferred {
		s = fmt.Sprintf("%s (at least %s ago)", t.UTC().Format(time.RFC3339), snapshot.Since(c.View.Now, t).Round(time.Second))
	}
	return s
}

// since is how long a router object has disagreed with the status: from the
// later of its weight's last write (managedFields) and the controller's last
// weight change (its TrafficWeightUpdated event), when either is known.
func (c *Context) since(o router.Object) (time.Time, string) {
	var t time.Time
	who := ""
	if o.Writer != nil && !o.Writer.Time.IsZero() {
		t, who = o.Writer.Time, o.Writer.Manager
	}
	if s := c.Router.WeightSetAt; s != nil && s.After(t) {
		t, who = *s, "the controller's last TrafficWeightUpdated event"
	}
	return t, who
}

func checkRouterMismatch(c *Context, r *rules.Rule) []rules.Finding {
	st := c.ro.Status.Canary.Weights
	if !c.trafficRouted() || st == nil {
		return nil
	}
	var out []rules.Finding
	for _, o := range c.routerObjects() {
		if o.Canary == nil {
			continue
		}
		canaryOK := *o.Canary == int64(st.Canary.Weight)
		stableOK := o.Stable == nil || o.ExpectedStable == nil || *o.Stable == *o.ExpectedStable
		if canaryOK && stableOK {
			continue
		}
		stable := "?"
		if o.Stable != nil {
			stable = fmt.Sprint(*o.Stable)
		}
		msg := fmt.Sprintf("%s sends canary %d / stable %s, the Rollout status says canary %d / stable %d", o.Ref(), *o.Canary, stable, st.Canary.Weight, st.Stable.Weight)
		if sh, ok := o.Share(c.Router.MaxWeight); ok && sh != st.Canary.Weight {
			msg += fmt.Sprintf(": the canary's pods get %s of this route's traffic, not %s", pct(sh*100/c.Router.MaxWeight), pct(st.Canary.Weight*100/c.Router.MaxWeight))
		}
		if t, who := c.since(o); !t.IsZero() {
			msg += fmt.Sprintf("; so since %s, last written by %s", c.ago(t), who)
			if snapshot.Since(c.View.Now, t) < 10*time.Second {
				msg += " (a write in flight shows so for a moment: diagnose again)"
			}
		}
		f := r.NewFinding(msg)
		f.Evidence = []rules.Evidence{ev(o.Ref(), o.Field, backends(o)), ev(c.obj(), "status.canary.weights", fmt.Sprintf("%d/%d", st.Canary.Weight, st.Stable.Weight))}
		if o.Writer != nil {
			f.Evidence = append(f.Evidence, ev(o.Ref(), "managedFields (weights)", writerWords(o.Writer)))
		}
		f.Cites = dedupe(append(c.cites("tr.status-after-write", "tr.set-weight-call"), o.Cites...))
		out = append(out, f)
	}
	return out
}

// dedupe keeps the first of each cited fact.
func dedupe(cs []upstream.Cite) []upstream.Cite {
	seen := map[upstream.Key]bool{}
	out := cs[:0:0]
	for _, c := range cs {
		if !seen[c.Key] {
			seen[c.Key] = true
			out = append(out, c)
		}
	}
	return out
}

func backends(o router.Object) string {
	var parts []string
	for _, b := range o.Backends {
		parts = append(parts, fmt.Sprintf("%s=%d", b.Name, b.Weight))
	}
	if o.Total != 0 && o.Kind == "Ingress" && strings.Contains(o.Field, "canary-weight") {
		parts = append(parts, fmt.Sprintf("of %d", o.Total))
	}
	return strings.Join(parts, ", ")
}

func writerWords(w *router.Writer) string {
	s := w.Manager
	if w.Operation != "" {
		s += " (" + w.Operation + ")"
	}
	if !w.Time.IsZero() {
		s += " at " + w.Time.UTC().Format(time.RFC3339)
	}
	return s
}

// checkRouterObjectMissing: an object the controller writes is absent, or
// present but not the Rollout's, so the controller cannot write the weight.
func checkRouterObjectMissing(c *Context, r *rules.Rule) []rules.Finding {
	if c.Router == nil || !c.Router.Live {
		return nil
	}
	st := c.ro.Status.Canary.Weights
	errEv := c.Router.Latest("TrafficRoutingError", "TrafficSplitNotCreated", "AmbassadorMappingNotFound", "VirtualServiceNotFound", "VirtualRouterNotFound", "VirtualNodeNotFound")
	var out []rules.Finding
	for _, o := range c.Router.Objects {
		var msg string
		switch {
		case o.NotOwned:
			msg = fmt.Sprintf("%s exists but Rollout %s does not control it (no controller ownerReference): the controller refuses to write its weight and every pass fails", o.Ref(), c.ro.Name)
		case o.Missing:
			// The controller creates nginx's canary Ingress and SMI's
			// TrafficSplit on its next write; it needs every other object.
			// Absent with a weight recorded, or with the controller
			// reporting failures, it is not about to appear.
			creates := o.Kind == "TrafficSplit" || (o.Kind == "Ingress" && strings.HasSuffix(o.Name, "-canary") && c.canary().TrafficRouting.Nginx != nil)
			if creates && st == nil && errEv == nil {
				continue
			}
			msg = fmt.Sprintf("%s does not exist", o.Ref())
			if creates {
				msg += ": the controller creates it when it writes the weight, and has not (or it was deleted)"
			} else {
				msg += ": the controller writes its weights there and every pass fails until it exists"
			}
		default:
			continue
		}
		if st != nil && st.Canary.Weight > 0 {
			msg += fmt.Sprintf("; the status says the canary has %d, no router object sends it", st.Canary.Weight)
		}
		f := r.NewFinding(msg)
		if st != nil && st.Canary.Weight > 0 || o.NotOwned {
			f.Severity = rules.Critical
		}
		f.Evidence = []rules.Evidence{ev(o.Ref(), "exists", !o.Missing)}
		if o.NotOwned {
			f.Evidence = []rules.Evidence{ev(o.Ref(), "metadata.ownerReferences", "no controller reference to Rollout "+c.ro.Name)}
		}
		if errEv != nil {
			f.Evidence = append(f.Evidence, ev(c.obj(), "Event "+errEv.Reason+" at "+errEv.Last.UTC().Format(time.RFC3339), errEv.Message))
		}
		f.Cites = o.Cites
		switch {
		case o.NotOwned && o.Kind == "Ingress":
			f.Cites = append(f.Cites, c.cites("ng.controlled-by")...)
		case o.Kind == "Ingress" && o.Missing && c.canary().TrafficRouting.Nginx != nil:
			f.Cites = append(f.Cites, c.cites("ng.create")...)
		}
		out = append(out, f)
	}
	// Notes that say the controller fails every pass (a stable Ingress without
	// the stable Service, a rule or a route the spec names that is not there).
	for _, o := range c.Router.Objects {
		for _, n := range o.Notes {
			if !strings.Contains(n, "fails every pass") {
				continue
			}
			f := r.NewFinding(o.Ref() + ": " + n)
			f.Severity = rules.Critical
			f.Evidence = []rules.Evidence{ev(o.Ref(), o.Field, n)}
			if errEv != nil {
				f.Evidence = append(f.Evidence, ev(c.obj(), "Event "+errEv.Reason+" at "+errEv.Last.UTC().Format(time.RFC3339), errEv.Message))
			}
			f.Cites = o.Cites
			out = append(out, f)
		}
	}
	return out
}

// checkRouterBackendNoEndpoints: a Service the router sends traffic to has
// no ready endpoints (the pods check RD324 from the router's side, with the
// object that sends it), and nginx's stable Service at any weight:
// ingress-nginx answers 503 when the stable Ingress's Service has no
// endpoints, even at canary-weight 100 (upstream issue #1820).
func checkRouterBackendNoEndpoints(c *Context, r *rules.Rule) []rules.Finding {
	w := c.View.Workload
	if w == nil || !w.SlicesRead {
		return nil
	}
	svcs := map[string]bool{}
	for _, s := range w.Services {
		svcs[s.Name] = true
	}
	nginx := c.canary() != nil && c.canary().TrafficRouting != nil && c.canary().TrafficRouting.Nginx != nil
	seen := map[string]bool{}
	var out []rules.Finding
	for _, o := range c.routerObjects() {
		for _, b := range o.Backends {
			if !svcs[b.Name] || seen[b.Name] {
				continue
			}
			nginxStable := nginx && b.Role == router.RoleStable
			if b.Weight == 0 && !nginxStable {
				continue
			}
			if podcheck.ReadyEndpoints(w.EndpointSlices[b.Name]) > 0 {
				continue
			}
			seen[b.Name] = true
			var msg string
			if nginxStable && b.Weight == 0 {
				msg = fmt.Sprintf("Service %s, the stable Ingress's backend, has no ready endpoints: ingress-nginx answers 503 for the whole host although the canary Ingress sends it 0%%", b.Name)
			} else {
				msg = fmt.Sprintf("%s sends %s of its traffic to Service %s, which has no ready endpoints: those requests fail (503)", o.Ref(), pct(int32(b.Weight*100/max64(o.Total, 1))), b.Name)
				if nginxStable {
					msg += "; and ingress-nginx fails the canary's share too while the stable Service has none"
				}
			}
			zero := c.Analysis.Inputs.Replicas == 0
			if zero {
				msg += " — " + scaledToZero
			}
			f := r.NewFinding(msg)
			f.Evidence = []rules.Evidence{ev(o.Ref(), o.Field, backends(o)), ev("Service "+w.Namespace+"/"+b.Name, "EndpointSlices ready endpoints", 0)}
			if zero {
				f.Severity = rules.Warning
				f.Evidence = append(f.Evidence, ev(c.obj(), "spec.replicas", 0))
			}
			f.Cites = o.Cites
			out = append(out, f)
		}
	}
	return out
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// routerBackendServices are the Services RD131 reported, so that the pods
// check RD324 does not report them a second time.
func routerBackendServices(fs []rules.Finding) map[string]bool {
	out := map[string]bool{}
	for _, f := range fs {
		if f.ID != "RD131" {
			continue
		}
		for _, e := range f.Evidence {
			if strings.HasPrefix(e.Object, "Service ") {
				out[e.Object[strings.LastIndex(e.Object, "/")+1:]] = true
			}
		}
	}
	return out
}

// checkALBVerification: the controller verifies ALB target-group weights and
// they do not verify: the step does not complete, and at the end the pass
// fails.
func checkALBVerification(c *Context, r *rules.Rule) []rules.Finding {
	if c.Router == nil || c.Router.Verify == nil {
		return nil
	}
	v := c.Router.Verify
	ev1 := c.Router.Latest("TargetGroupUnverified", "TargetGroupVerifyError", "LoadBalancerNotFound", "WeightVerifyError")
	failing := v.Verified != nil && !*v.Verified
	if !failing && ev1 == nil {
		return nil
	}
	if !failing && ev1 != nil {
		// An old failure the controller has since verified past.
		if ok := c.Router.Latest("TargetGroupVerified"); ok != nil && ok.Last.After(ev1.Last) {
			return nil
		}
	}
	st := c.ro.Status.Canary.Weights
	msg := fmt.Sprintf("the controller verifies ALB target-group weights (%s) and they do not verify", v.Flag)
	if st != nil {
		msg += fmt.Sprintf(": canary %d is not confirmed in AWS, so the setWeight step does not complete", st.Canary.Weight)
		if st.Canary.Weight == c.Analysis.Inputs.MaxWeight {
			msg += " and, at the full weight, every pass fails: the Rollout cannot complete"
		}
	}
	if ev1 != nil {
		msg += fmt.Sprintf("; latest %s (%d×, %s): %s", ev1.Reason, ev1.Count, c.ago(ev1.Last), ev1.Message)
	}
	f := r.NewFinding(msg)
	f.Evidence = []rules.Evidence{ev("controller", "args", v.Flag)}
	if v.Verified != nil {
		f.Evidence = append(f.Evidence, ev(c.obj(), "status.canary.weights.verified", *v.Verified))
	}
	if ev1 != nil {
		f.Evidence = append(f.Evidence, ev(c.obj(), "Event "+ev1.Reason, ev1.Message))
	}
	f.Cites = c.cites("alb.verify-default", "tr.verify-weight", "rc.verify-step-hold", "tr.verify-final-error", "alb.verify-unverified-event")
	return []rules.Finding{f}
}

// checkPingPongOneReplicaSet: with ping-pong both Services select the same
// ReplicaSet while the canary has traffic: the canary weight lands on the
// stable pods (or the other way round).
func checkPingPongOneReplicaSet(c *Context, r *rules.Rule) []rules.Finding {
	cs := c.canary()
	w := c.View.Workload
	if cs == nil || cs.PingPong == nil || w == nil || c.Analysis.Inputs.Weights == nil {
		return nil
	}
	in := c.Analysis.Inputs
	if in.Traffic() == 0 || in.StableHash == "" || in.StableHash == in.CurrentPodHash {
		return nil
	}
	sel := map[string]string{}
	for _, s := range w.Services {
		if s.Name == cs.PingPong.PingService || s.Name == cs.PingPong.PongService {
			sel[s.Name] = s.Spec.Selector[snapshot.RolloutHashLabel]
		}
	}
	ping, pong := sel[cs.PingPong.PingService], sel[cs.PingPong.PongService]
	if ping == "" || ping != pong {
		return nil
	}
	which := "the stable"
	if ping == in.CurrentPodHash {
		which = "the canary"
	}
	f := r.NewFinding(fmt.Sprintf("ping-pong: Services %s and %s both select ReplicaSet hash %s (%s) while the canary has %d%%: both target groups send to one ReplicaSet, so the canary weight does not reach the canary (or the stable weight the stable)",
		cs.PingPong.PingService, cs.PingPong.PongService, ping, which, in.Traffic()))
	f.Evidence = []rules.Evidence{
		ev("Service "+w.Namespace+"/"+cs.PingPong.PingService, "spec.selector."+snapshot.RolloutHashLabel, ping),
		ev("Service "+w.Namespace+"/"+cs.PingPong.PongService, "spec.selector."+snapshot.RolloutHashLabel, pong),
		ev(c.obj(), "status.canary.stablePingPong", c.ro.Status.Canary.StablePingPong),
	}
	f.Cites = c.cites("pp.canary-service-new", "pp.swap-on-promotion", "alb.forward-services")
	return []rules.Finding{f}
}

// checkWeightTotal: the total the router's weights are shares of is not the
// one the controller writes against, so the canary's real share is not the
// weight the Rollout means.
func checkWeightTotal(c *Context, r *rules.Rule) []rules.Finding {
	var out []rules.Finding
	for _, o := range c.routerObjects() {
		if o.Canary == nil || o.Total <= 0 || o.Total == o.ExpectedTotal {
			continue
		}
		var msg string
		if o.Kind == "Ingress" && c.canary().TrafficRouting.Nginx != nil {
			msg = fmt.Sprintf("%s has canary-weight %d of canary-weight-total %d, the controller writes weights out of %d: the canary gets %s of the traffic where the Rollout means %s",
				o.Ref(), *o.Canary, o.Total, o.ExpectedTotal, share(*o.Canary, o.Total), share(*o.Canary, o.ExpectedTotal))
		} else {
			var others []string
			for _, b := range o.Backends {
				if b.Role == router.RoleOther && b.Weight > 0 {
					others = append(others, fmt.Sprintf("%s=%d", b.Name, b.Weight))
				}
			}
			msg = fmt.Sprintf("%s's weights add up to %d, not %d", o.Ref(), o.Total, o.ExpectedTotal)
			if len(others) > 0 {
				msg += " (the controller writes the canary and stable weights only; " + strings.Join(others, ", ") + " keep theirs)"
			}
			msg += fmt.Sprintf(": the canary's %d is %s of the traffic", *o.Canary, share(*o.Canary, o.Total))
		}
		f := r.NewFinding(msg)
		maxW := fmt.Sprint(c.Router.MaxWeight)
		if c.canary().TrafficRouting.MaxTrafficWeight == nil {
			maxW = "unset (100)"
		}
		f.Evidence = []rules.Evidence{ev(o.Ref(), o.Field, backends(o)), ev(c.obj(), "spec.strategy.canary.trafficRouting.maxTrafficWeight", maxW)}
		f.Cites = o.Cites
		out = append(out, f)
	}
	return out
}

func share(w, total int64) string {
	if total <= 0 {
		return "0%"
	}
	p := float64(w) * 100 / float64(total)
	if p == float64(int64(p)) {
		return fmt.Sprintf("%d%%", int64(p))
	}
	return fmt.Sprintf("%.1f%%", p)
}

// checkRouterEditedElsewhere: the last write of a router object's weights was
// not the controller's, and came after the controller's own. The controller's
// managedFields entry disappears once another manager takes every field it
// held, so its last weight change (TrafficWeightUpdated) stands in for it;
// with neither known, a weight that disagrees with the status says it.
func checkRouterEditedElsewhere(c *Context, r *rules.Rule) []rules.Finding {
	var out []rules.Finding
	st := c.ro.Status.Canary.Weights
	for _, o := range c.routerObjects() {
		if ch := c.churn[o.Ref()]; ch != nil {
			out = append(out, routerChurn(c, r, o, ch))
			continue
		}
		wr := o.Writer
		if wr == nil || wr.Controller {
			continue
		}
		ref, refWhat := o.ControllerWrote, "the controller's last write of it"
		if ref == nil {
			ref, refWhat = c.Router.WeightSetAt, "the controller's last weight change (TrafficWeightUpdated)"
		}
		differs := st != nil && o.Canary != nil && *o.Canary != int64(st.Canary.Weight)
		switch {
		case ref != nil && !wr.Time.After(*ref):
			continue
		case ref == nil && !differs:
			continue
		}
		msg := fmt.Sprintf("%s's weights (%s) were last written by %s at %s", o.Ref(), o.Field, wr.Manager, c.ago(wr.Time))
		if ref != nil {
			msg += fmt.Sprintf(", after %s at %s", refWhat, ref.UTC().Format(time.RFC3339))
		}
		msg += ": someone else changes what the controller manages"
		if differs {
			msg += fmt.Sprintf("; it now sends canary %d where the status says %d", *o.Canary, st.Canary.Weight)
		}
		if strings.Contains(wr.Manager, "argocd") || strings.Contains(wr.Manager, "kustomize-controller") || strings.Contains(wr.Manager, "helm") {
			msg += "; a GitOps sync puts the weight in Git back on every sync"
			if GitOpsTool(wr.Manager) != "" {
				msg += ", and the controller its own on its next pass (promote and abort are fought the same way): stop the sync writing the weights: " + RouterFix(o, wr.Manager, c.fluxSuspend())
			}
		}
		f := r.NewFinding(msg)
		f.Evidence = []rules.Evidence{ev(o.Ref(), "managedFields (weights)", writerWords(wr))}
		if ref != nil {
			f.Evidence = append(f.Evidence, ev(o.Ref(), refWhat, ref.UTC().Format(time.RFC3339)))
		}
		f.Cites = o.Cites
		if GitOpsTool(wr.Manager) != "" {
			f.Cites = append(f.Cites, c.vsRequeue(o)...)
		}
		out = append(out, f)
	}
	return out
}

// checkRouterWriteFailing: the controller reports that it cannot write the
// router (TrafficRoutingError and the routers' own error Events) after its
// last weight change.
func checkRouterWriteFailing(c *Context, r *rules.Rule) []rules.Finding {
	if c.Router == nil {
		return nil
	}
	var out []rules.Finding
	for _, e := range c.Router.Events {
		if e.Type == "Normal" || !strings.HasSuffix(e.Reason, "Error") && e.Reason != "TrafficSplitNotCreated" {
			continue
		}
		if e.Reason == "WeightVerifyError" {
			continue // RD132
		}
		if s := c.Router.WeightSetAt; s != nil && s.After(e.Last) {
			continue // a weight was written since
		}
		conflict := strings.Contains(strings.ToLower(e.Message), "the object has been modified")
		if conflict && e.Count < 3 {
			// A write that lost a race (409) is retried on the next pass:
			// once or twice is no failure to write (RD159 counts them).
			continue
		}
		msg := fmt.Sprintf("the controller cannot write the traffic router: %s %d× (latest %s): %s", e.Reason, e.Count, c.ago(e.Last), e.Message)
		if conflict {
			msg += " — another writer keeps changing the object between the controller's read and its write (RD159, RD160 name who)"
		}
		if strings.Contains(e.Message, "via plugin") {
			msg += " — the plugin failed"
		}
		f := r.NewFinding(msg)
		f.Evidence = []rules.Evidence{ev(c.obj(), "Event "+e.Reason, e.Message)}
		f.Cites = c.cites("tr.routing-error-event", "tr.each-reconciler")
		if strings.Contains(e.Message, "via plugin") {
			f.Cites = append(f.Cites, c.cites("pl.set-weight-error")...)
		}
		out = append(out, f)
	}
	return out
}

// checkPluginNotConfigured: the Rollout names a traffic router plugin the
// controller's ConfigMap does not configure, or its config does not parse.
func checkPluginNotConfigured(c *Context, r *rules.Rule) []rules.Finding {
	if c.Router == nil {
		return nil
	}
	var out []rules.Finding
	for _, p := range c.Router.Plugins {
		switch {
		case p.Known && !p.Configured:
			f := r.NewFinding(fmt.Sprintf("the Rollout uses traffic router plugin %s, which the controller's %s ConfigMap does not list under trafficRouterPlugins: the controller cannot start it and fails every pass before any weight is written (it logs the error; no Event is recorded)", p.Name, snapshot.ControllerConfigMap))
			f.Evidence = []rules.Evidence{ev("ConfigMap "+snapshot.ControllerConfigMap, "data.trafficRouterPlugins", "no entry named "+p.Name)}
			f.Cites = c.cites("tr.plugin-reconciler", "pl.not-configured")
			out = append(out, f)
		case p.ConfigError != "":
			f := r.NewFinding(fmt.Sprintf("the config of plugin %s does not parse (%s): the plugin cannot read its routes", p.Name, p.ConfigError))
			f.Evidence = []rules.Evidence{ev(c.obj(), "spec.strategy.canary.trafficRouting.plugins."+p.Name, p.ConfigError)}
			out = append(out, f)
		}
	}
	return out
}

// checkRouteNotAccepted: a Gateway API route the plugin writes is not
// Accepted by its Gateway, or its backend references do not resolve: the
// Gateway ignores the route (or drops the backends), whatever the weights.
func checkRouteNotAccepted(c *Context, r *rules.Rule) []rules.Finding {
	var out []rules.Finding
	seen := map[string]bool{}
	for _, o := range c.routerObjects() {
		for _, cd := range o.Conditions {
			k := o.Ref() + cd.Parent + cd.Type
			if cd.Status == "True" || seen[k] {
				continue
			}
			seen[k] = true
			what := "the Gateway does not apply it, so its weights route nothing"
			if cd.Type == "ResolvedRefs" {
				what = "a backend it names does not resolve, and the Gateway answers that backend's share with errors (500 for HTTP)"
			}
			f := r.NewFinding(fmt.Sprintf("%s is %s=%s for Gateway %s (%s: %s); %s", o.Ref(), cd.Type, cd.Status, cd.Parent, cd.Reason, cd.Message, what))
			f.Evidence = []rules.Evidence{ev(o.Ref(), "status.parents[parentRef "+cd.Parent+"].conditions["+cd.Type+"]", cd.Status+" "+cd.Reason)}
			out = append(out, f)
		}
	}
	return out
}

// checkNginxAnnotationWeights (static): additionalIngressAnnotations or
// canaryIngressAnnotations that set the canary's weight keys: canary-weight
// is overwritten by the controller, canary-weight-total changes what every
// weight is a share of.
func checkNginxAnnotationWeights(c *Context, r *rules.Rule) []rules.Finding {
	cs := c.canary()
	if cs == nil || cs.TrafficRouting == nil || cs.TrafficRouting.Nginx == nil {
		return nil
	}
	n := cs.TrafficRouting.Nginx
	prefix := n.AnnotationPrefix
	if prefix == "" {
		prefix = "nginx.ingress.kubernetes.io"
	}
	maxW := int64(100)
	if m := cs.TrafficRouting.MaxTrafficWeight; m != nil {
		maxW = int64(*m)
	}
	type kv struct{ field, key, val string }
	var found []kv
	for k, v := range n.AdditionalIngressAnnotations {
		full := k
		if !strings.HasPrefix(k, prefix) {
			full = prefix + "/" + k
		}
		found = append(found, kv{"additionalIngressAnnotations", full, v})
	}
	canaryAnn := !upstream.At("ng.canary-annotations", c.Version.Assumed).Absent
	if canaryAnn {
		for k, v := range n.CanaryIngressAnnotations {
			found = append(found, kv{"canaryIngressAnnotations", k, v})
		}
	}
	sort.Slice(found, func(i, j int) bool { return found[i].field+found[i].key < found[j].field+found[j].key })
	var out []rules.Finding
	for _, a := range found {
		var msg string
		switch a.key {
		case prefix + "/canary-weight":
			msg = fmt.Sprintf("%s sets %s: %s; the controller overwrites it with the step's weight, so it has no effect", a.field, a.key, a.val)
		case prefix + "/canary-weight-total":
			if cs.TrafficRouting.MaxTrafficWeight != nil {
				msg = fmt.Sprintf("%s sets %s: %s; the controller overwrites it with maxTrafficWeight %d", a.field, a.key, a.val, maxW)
			} else if a.val != "100" {
				msg = fmt.Sprintf("%s sets %s: %s without maxTrafficWeight: the controller writes weights out of 100, so every setWeight gives the canary %s of what the step says", a.field, a.key, a.val, share(100, atoi64(a.val)))
			}
		}
		if msg == "" {
			continue
		}
		f := r.NewFinding(msg)
		f.Evidence = []rules.Evidence{ev(c.obj(), "spec.strategy.canary.trafficRouting.nginx."+a.field, a.key+": "+a.val)}
		f.Cites = c.cites("ng.additional-annotations", "ng.canary-annotations", "ng.canary-weight", "ng.weight-total")
		out = append(out, f)
	}
	return out
}

func atoi64(s string) int64 {
	var n int64
	if _, err := fmt.Sscan(s, &n); err != nil || n <= 0 {
		return 100
	}
	return n
}

// checkALBStickiness (static): a stickiness duration AWS refuses makes the
// controller fail every SetWeight.
func checkALBStickiness(c *Context, r *rules.Rule) []rules.Finding {
	cs := c.canary()
	if cs == nil || cs.TrafficRouting == nil || cs.TrafficRouting.ALB == nil {
		return nil
	}
	st := cs.TrafficRouting.ALB.StickinessConfig
	if st == nil || !st.Enabled || (st.DurationSeconds >= 1 && st.DurationSeconds <= 604800) {
		return nil
	}
	f := r.NewFinding(fmt.Sprintf("alb.stickinessConfig.durationSeconds is %d, outside 1–604800: the controller cannot build the forward action, so every weight change fails and the weight never moves", st.DurationSeconds))
	f.Evidence = []rules.Evidence{ev(c.obj(), "spec.strategy.canary.trafficRouting.alb.stickinessConfig.durationSeconds", st.DurationSeconds)}
	f.Cites = c.cites("alb.stickiness-range", "tr.routing-error-event")
	return []rules.Finding{f}
}

// checkALBActionReset: the ALB action holds the stable Service alone at 100
// and its managed-alb-annotations no longer list the Rollout, while the
// status has the canary at a weight: an Argo Rollouts controller that does
// not reconcile this Rollout reset it (every controller's Ingress controller
// does so for the Rollouts of another --instance-id, on every change of the
// Ingress).
func checkALBActionReset(c *Context, r *rules.Rule) []rules.Finding {
	st := c.ro.Status.Canary.Weights
	if st == nil || st.Canary.Weight == 0 {
		return nil
	}
	var out []rules.Finding
	for _, o := range c.routerObjects() {
		if o.Managed == nil || *o.Managed || o.Canary == nil || *o.Canary != 0 {
			continue
		}
		msg := fmt.Sprintf("%s's action sends everything to the stable Service and its %s annotation no longer lists Rollout %s: an Argo Rollouts controller that does not reconcile this Rollout reset it, and the canary gets none of the %d%% the status says",
			o.Ref(), "rollouts.argoproj.io/managed-alb-annotations", c.ro.Name, st.Canary.Weight)
		if w := o.Writer; w != nil && w.Controller {
			msg += fmt.Sprintf(" (last written by %s at %s)", w.Manager, w.Time.UTC().Format(time.RFC3339))
		}
		var others []string
		for _, d := range c.View.OtherControllers {
			others = append(others, d.Namespace+"/"+d.Name+" ("+snapshot.ScopeOf(d).String()+")")
		}
		if len(others) > 0 {
			msg += "; other controllers found: " + strings.Join(others, ", ")
		}
		msg += ". The owning controller writes the action back on its next pass and the other resets it again on the Ingress's change: they fight"
		f := r.NewFinding(msg)
		f.Evidence = []rules.Evidence{ev(o.Ref(), o.Field, backends(o)), ev(o.Ref(), "metadata.annotations[rollouts.argoproj.io/managed-alb-annotations]", "does not list "+c.ro.Name),
			ev(c.obj(), "status.canary.weights.canary.weight", st.Canary.Weight)}
		if w := o.Writer; w != nil {
			f.Evidence = append(f.Evidence, ev(o.Ref(), "managedFields (weights)", writerWords(w)))
		}
		f.Cites = c.cites("alb.reset-unowned", "alb.ingress-classes", "alb.action-key")
		out = append(out, f)
	}
	return out
}
