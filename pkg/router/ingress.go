package router

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

const groupKindIngress = snapshot.GroupNetworking + "/Ingress"

// albManagedAnnotation lists, per Rollout, the ALB annotations the
// controller manages on an Ingress.
const albManagedAnnotation = "rollouts.argoproj.io/managed-alb-annotations"

// nginx reads the canary Ingress the controller writes beside each stable
// Ingress: canary-weight of canary-weight-total (ingress-nginx sends the
// rest to the stable Ingress).
func (rd *reader) nginx() []Object {
	n := rd.ro.Spec.Strategy.Canary.TrafficRouting.Nginx
	stables := n.StableIngresses
	if stables == nil {
		stables = []string{n.StableIngress}
	}
	prefix := n.AnnotationPrefix
	if prefix == "" {
		prefix = "nginx.ingress.kubernetes.io"
	}
	keyW, keyT, keyC := prefix+"/canary-weight", prefix+"/canary-weight-total", prefix+"/canary"
	var out []Object
	for _, stable := range stables {
		name := snapshot.NginxCanaryIngress(rd.ro.Name, stable)
		u := rd.r.Find(snapshot.GroupNetworking, "Ingress", name)
		o := rd.object("Ingress", rd.ro.Namespace, name, "metadata.annotations["+keyW+"]", u, groupKindIngress)
		o.ExpectedTotal = int64(rd.maxW)
		o.Cites = rd.cites("ng.canary-name", "ng.canary-weight", "ng.weight-total", "ng.keep-annotations")
		if rd.r.Find(snapshot.GroupNetworking, "Ingress", stable) == nil && rd.r.Read(groupKindIngress) {
			o.Notes = append(o.Notes, fmt.Sprintf("the stable Ingress %s does not exist: the controller fails every pass before it writes a canary Ingress", stable))
			o.Cites = append(o.Cites, rd.cites("ng.stable-missing")...)
		}
		if u == nil {
			out = append(out, o)
			continue
		}
		o.NotOwned = !rd.owned(u)
		ann := u.GetAnnotations()
		o.Total = 100
		if t, ok := ann[keyT]; ok {
			if v, err := strconv.ParseInt(t, 10, 64); err == nil {
				o.Total = v
			} else {
				o.Notes = append(o.Notes, fmt.Sprintf("%s is %q, not a number", keyT, t))
			}
		}
		if v, err := strconv.ParseInt(ann[keyW], 10, 64); err == nil {
			o.Canary = ptr64(v)
			o.Stable = ptr64(o.Total - v)
		} else if _, has := ann[keyW]; has {
			o.Notes = append(o.Notes, fmt.Sprintf("%s is %q, not a number", keyW, ann[keyW]))
		}
		if ann[keyC] != "true" {
			o.Notes = append(o.Notes, fmt.Sprintf("%s is %q: ingress-nginx does not treat this Ingress as a canary", keyC, ann[keyC]))
		}
		c := rd.ro.Spec.Strategy.Canary
		canaryW := int64(0)
		if o.Canary != nil {
			canaryW = *o.Canary
		}
		o.Backends = []Backend{{Name: c.CanaryService, Role: RoleCanary, Weight: canaryW}, {Name: c.StableService, Role: RoleStable, Weight: o.Total - canaryW}}
		for _, svc := range ingressBackends(u) {
			if svc != c.CanaryService {
				o.Notes = append(o.Notes, fmt.Sprintf("it routes to Service %s, not the canaryService %s", svc, c.CanaryService))
			}
		}
		e := int64(rd.maxW) - rd.canaryW
		o.ExpectedStable = &e
		stamp(&o, u, fieldPath("metadata", "annotations", keyW)...)
		out = append(out, o)
	}
	return out
}

// albAction is the part of the AWS Load Balancer Controller's forward action
// annotation the weights live in.
type albAction struct {
	Type          string `json:"Type"`
	ForwardConfig struct {
		TargetGroups []struct {
			ServiceName string          `json:"ServiceName"`
			ServicePort json.RawMessage `json:"ServicePort"`
			Weight      *int64          `json:"Weight"`
		} `json:"TargetGroups"`
		TargetGroupStickinessConfig *struct {
			Enabled         bool  `json:"Enabled"`
			DurationSeconds int64 `json:"DurationSeconds"`
		} `json:"TargetGroupStickinessConfig"`
	} `json:"ForwardConfig"`
}

// PingPong returns the stable and canary Services of a ping-pong Rollout
// (status.canary.stablePingPong "ping": ping is stable; anything else: pong
// is), and false without ping-pong.
func (rd *reader) pingPong() (stable, canary string, ok bool) {
	c := rd.ro.Spec.Strategy.Canary
	if c.PingPong == nil {
		return "", "", false
	}
	if rd.ro.Status.Canary.StablePingPong == "ping" {
		return c.PingPong.PingService, c.PingPong.PongService, true
	}
	return c.PingPong.PongService, c.PingPong.PingService, true
}

// alb reads the forward action the controller writes on each ALB Ingress.
func (rd *reader) alb() []Object {
	c := rd.ro.Spec.Strategy.Canary
	a := c.TrafficRouting.ALB
	ings := a.Ingresses
	if ings == nil {
		ings = []string{a.Ingress}
	}
	prefix := a.AnnotationPrefix
	if prefix == "" {
		prefix = "alb.ingress.kubernetes.io"
	}
	actionSvc := a.RootService
	if actionSvc == "" {
		actionSvc = c.StableService
	}
	key := prefix + "/actions." + actionSvc
	stableSvc, canarySvc := c.StableService, c.CanaryService
	if s, cn, ok := rd.pingPong(); ok {
		stableSvc, canarySvc = s, cn
	}
	var out []Object
	for _, name := range ings {
		u := rd.r.Find(snapshot.GroupNetworking, "Ingress", name)
		o := rd.object("Ingress", rd.ro.Namespace, name, "metadata.annotations["+key+"]", u, groupKindIngress)
		o.Cites = rd.cites("alb.action-key", "alb.forward-services", "alb.stable-rest")
		if len(ings) > 1 {
			o.Cites = append(o.Cites, rd.cites("alb.stop-unmodified")...)
		}
		e := 100 - rd.canaryW
		o.ExpectedStable = &e
		if u == nil {
			out = append(out, o)
			continue
		}
		raw, has := u.GetAnnotations()[key]
		if !has {
			o.Notes = append(o.Notes, fmt.Sprintf("it has no %s annotation: the controller has not written its action here", key))
			out = append(out, o)
			continue
		}
		var act albAction
		if err := json.Unmarshal([]byte(raw), &act); err != nil {
			o.Notes = append(o.Notes, fmt.Sprintf("%s does not parse as a forward action: %v", key, err))
			out = append(out, o)
			continue
		}
		for _, tg := range act.ForwardConfig.TargetGroups {
			role := RoleOther
			switch tg.ServiceName {
			case canarySvc:
				role = RoleCanary
			case stableSvc:
				role = RoleStable
			}
			var w int64
			if tg.Weight != nil {
				w = *tg.Weight
			}
			o.Backends = append(o.Backends, Backend{Name: tg.ServiceName, Role: role, Weight: w})
		}
		if st := act.ForwardConfig.TargetGroupStickinessConfig; st != nil && st.Enabled {
			o.Stickiness = st.DurationSeconds
		}
		rd.finish(&o, true)
		if o.Canary == nil && len(o.Backends) > 0 {
			// The controller writes the whole action: without the canary's
			// target group the canary gets nothing.
			o.Canary = ptr64(0)
		}
		managed := false
		var m map[string][]string
		if json.Unmarshal([]byte(u.GetAnnotations()[albManagedAnnotation]), &m) == nil {
			for _, k := range m[rd.ro.Name] {
				managed = managed || k == key
			}
		}
		o.Managed = &managed
		rd.albManagedRoutes(u, prefix, canarySvc)
		stamp(&o, u, fieldPath("metadata", "annotations", key)...)
		if !hasIngressService(u, actionSvc) {
			o.Notes = append(o.Notes, fmt.Sprintf("no rule routes to Service %s: the controller fails every pass (ingress does not have service `%s` in rules)", actionSvc, actionSvc))
		}
		out = append(out, o)
	}
	return out
}

// albManagedRoutes collects the header routes a setHeaderRoute step wrote
// on an ALB Ingress: for each route trafficRouting.managedRoutes names, the
// action annotation (a forward action, to the canary) and the conditions
// annotation (the headers it matches), and a rule whose backend is the
// route's name, which the load balancer evaluates before the others.
func (rd *reader) albManagedRoutes(u *unstructured.Unstructured, prefix, canarySvc string) {
	for _, m := range rd.ro.Spec.Strategy.Canary.TrafficRouting.ManagedRoutes {
		raw, ok := u.GetAnnotations()[prefix+"/actions."+m.Name]
		if !ok {
			continue
		}
		mr := ManagedRoute{Object: "Ingress " + u.GetNamespace() + "/" + u.GetName(), Name: m.Name, BeforePrimary: hasIngressService(u, m.Name)}
		var act albAction
		if err := json.Unmarshal([]byte(raw), &act); err == nil {
			for _, tg := range act.ForwardConfig.TargetGroups {
				var w int64
				if tg.Weight != nil {
					w = *tg.Weight
				}
				mr.RouteTotal += w
				if tg.ServiceName == canarySvc {
					mr.CanaryWeight += w
				}
			}
		}
		var conds []struct {
			Field            string `json:"field"`
			HTTPHeaderConfig struct {
				HTTPHeaderName string   `json:"httpHeaderName"`
				Values         []string `json:"values"`
			} `json:"httpHeaderConfig"`
		}
		if err := json.Unmarshal([]byte(u.GetAnnotations()[prefix+"/conditions."+m.Name]), &conds); err == nil {
			var alts []string
			for _, c := range conds {
				alts = append(alts, fmt.Sprintf("%s %s=%s", c.Field, c.HTTPHeaderConfig.HTTPHeaderName, strings.Join(c.HTTPHeaderConfig.Values, "|")))
			}
			// ALB ANDs the conditions of one rule.
			mr.Match = strings.Join(alts, " and ")
		}
		rd.managed = append(rd.managed, mr)
	}
}

// ingressBackends lists the Services an Ingress's rules route to.
func ingressBackends(u *unstructured.Unstructured) []string {
	var out []string
	seen := map[string]bool{}
	rules, _, _ := unstructured.NestedSlice(u.Object, "spec", "rules")
	for _, r := range rules {
		rm, _ := r.(map[string]interface{})
		paths, _, _ := unstructured.NestedSlice(rm, "http", "paths")
		for _, p := range paths {
			pm, _ := p.(map[string]interface{})
			n, _, _ := unstructured.NestedString(pm, "backend", "service", "name")
			if n != "" && !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out
}

func hasIngressService(u *unstructured.Unstructured, svc string) bool {
	for _, n := range ingressBackends(u) {
		if n == svc {
			return true
		}
	}
	return false
}
