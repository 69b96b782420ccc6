package podcheck

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// The AWS Load Balancer Controller and readiness gates: RD306, RD307, RD321.

const albAnnotationPrefix = "alb.ingress.kubernetes.io/"

// isALB recognises an Ingress served by the AWS Load Balancer Controller:
// by its class when it names one ("alb", or an IngressClass named after it
// such as "alb-internal"), else by the controller's annotations.
func isALB(ing *networkingv1.Ingress) bool {
	class := ing.Annotations["kubernetes.io/ingress.class"]
	if c := ing.Spec.IngressClassName; c != nil && *c != "" {
		class = *c
	}
	if class != "" {
		return strings.Contains(strings.ToLower(class), "alb")
	}
	for k := range ing.Annotations {
		if strings.HasPrefix(k, albAnnotationPrefix) {
			return true
		}
	}
	return false
}

// albTargetType is the target type for one backend Service: the Service's
// annotation wins over the Ingress's; the controller's default is instance.
func albTargetType(ing *networkingv1.Ingress, svc *corev1.Service) (string, string) {
	if svc != nil {
		if t := svc.Annotations[albAnnotationPrefix+"target-type"]; t != "" {
			return t, "Service " + svc.Name + " annotation"
		}
	}
	if t := ing.Annotations[albAnnotationPrefix+"target-type"]; t != "" {
		return t, "Ingress " + ing.Name + " annotation"
	}
	return "instance", "default (no target-type annotation)"
}

func hasALBGate(p *corev1.Pod) bool {
	for _, g := range p.Spec.ReadinessGates {
		if strings.HasPrefix(string(g.ConditionType), snapshot.ALBGateCondPrefix) {
			return true
		}
	}
	return false
}

// albBackends yields each ALB Ingress and the workload Service it targets.
func albBackends(w *snapshot.Workload, fn func(ingName, svcName, targetType, from string)) {
	svcs := map[string]*corev1.Service{}
	for _, s := range w.Services {
		svcs[s.Name] = s
	}
	for _, ing := range w.Ingresses {
		if !isALB(ing) {
			continue
		}
		seen := map[string]bool{}
		for _, name := range snapshot.IngressServices(ing) {
			svc, ok := svcs[name]
			if !ok || seen[name] {
				continue
			}
			seen[name] = true
			t, from := albTargetType(ing, svc)
			fn(ing.Name, name, t, from)
		}
	}
}

// albTargets lists the Ingress → Service pairs whose ALB target type is
// typ, with the evidence of where the type comes from.
func albTargets(w *snapshot.Workload, typ string) ([]string, []rules.Evidence) {
	var pairs []string
	var evs []rules.Evidence
	albBackends(w, func(ing, svc, t, from string) {
		if t == typ {
			pairs = append(pairs, "Ingress "+ing+" → Service "+svc)
			evs = append(evs, ev("Ingress "+w.Namespace+"/"+ing, "target-type for Service "+svc, t+" ("+from+")"))
		}
	})
	return pairs, evs
}

func checkALBGate(c *Context, r *rules.Rule) []rules.Finding {
	w := c.W
	ip, evs := albTargets(w, "ip")
	if len(ip) == 0 {
		return nil
	}
	ns := w.NamespaceObj
	labelled := ns != nil && ns.Labels[snapshot.ALBGateLabel] == "enabled"
	var noGate []string
	for _, p := range w.Pods {
		if !terminating(p) && !hasALBGate(p) {
			noGate = append(noGate, p.Name)
		}
	}
	switch {
	case ns == nil && len(w.Pods) == 0:
		f := r.NewFinding(fmt.Sprintf("%s uses ALB ip targets; namespace %s is not in the input, so its %s label cannot be checked: without it every rolling update serves 502s for ~30 s", strings.Join(ip, ", "), w.Namespace, snapshot.ALBGateLabel))
		f.Severity = rules.Info
		f.Evidence = evs
		return []rules.Finding{f}
	case !labelled && (ns != nil || len(noGate) > 0):
		msg := fmt.Sprintf("%s uses ALB ip targets but namespace %s lacks %s=enabled: pods turn Ready before the ALB marks them healthy, old pods are deleted, and every rolling update serves 502s for ~30 s while all pods look Ready", strings.Join(ip, ", "), w.Namespace, snapshot.ALBGateLabel)
		f := r.NewFinding(msg)
		if ns != nil {
			f.Evidence = append(evs, ev("Namespace "+ns.Name, "metadata.labels["+snapshot.ALBGateLabel+"]", valueOr(ns.Labels[snapshot.ALBGateLabel], "absent")))
		} else {
			f.Evidence = evs
		}
		if len(noGate) > 0 {
			f.Evidence = append(f.Evidence, ev(w.Obj(), "pods without a target-health readiness gate", fmt.Sprintf("%d of %d", len(noGate), len(w.Pods))))
		}
		return []rules.Finding{f}
	case labelled && len(noGate) > 0:
		f := r.NewFinding(fmt.Sprintf("namespace %s has %s=enabled but %d of %d pods carry no ALB readiness gate (created before the label, or before a TargetGroupBinding matched them): those pods can turn Ready before their ALB target is healthy", w.Namespace, snapshot.ALBGateLabel, len(noGate), len(w.Pods)))
		f.Severity = rules.Warning
		f.Remediation = "Restart the workload (`kubectl argo rollouts restart` / `kubectl rollout restart`) so the webhook injects the gate into every pod."
		f.Evidence = append(evs, ev(w.Obj(), "pods without the gate", strings.Join(firstN(noGate, 5), ", ")))
		return []rules.Finding{f}
	}
	return nil
}

func checkALBInstance(c *Context, r *rules.Rule) []rules.Finding {
	w := c.W
	inst, evs := albTargets(w, "instance")
	if len(inst) == 0 {
		return nil
	}
	msg := fmt.Sprintf("%s uses ALB instance targets: the ALB targets nodes, so readiness gates cannot tie pod readiness to ALB health, and after a switch or scale-in established connections can reach deleted pods through conntrack", strings.Join(inst, ", "))
	if ns := w.NamespaceObj; ns != nil && ns.Labels[snapshot.ALBGateLabel] == "enabled" {
		msg += fmt.Sprintf("; namespace %s has %s=enabled, which does nothing for instance targets", ns.Name, snapshot.ALBGateLabel)
	}
	f := r.NewFinding(msg)
	f.Evidence = evs
	return []rules.Finding{f}
}

func checkGatesUnsatisfied(c *Context, r *rules.Rule) []rules.Finding {
	w := c.W
	type gateState struct {
		pods  []string
		stuck int
	}
	byGate := map[corev1.PodConditionType]*gateState{}
	for _, p := range w.Pods {
		if terminating(p) || p.Status.Phase != corev1.PodRunning {
			continue
		}
		for _, g := range p.Spec.ReadinessGates {
			ok, _ := condTrue(p.Status.Conditions, g.ConditionType)
			if ok {
				continue
			}
			s := byGate[g.ConditionType]
			if s == nil {
				s = &gateState{}
				byGate[g.ConditionType] = s
			}
			s.pods = append(s.pods, p.Name)
			if cr, cond := condTrue(p.Status.Conditions, corev1.ContainersReady); cr && w.Now.Sub(cond.LastTransitionTime.Time) > time.Minute {
				s.stuck++
			}
		}
	}
	var gates []string
	for g := range byGate {
		gates = append(gates, string(g))
	}
	sort.Strings(gates)
	var out []rules.Finding
	for _, g := range gates {
		s := byGate[corev1.PodConditionType(g)]
		msg := fmt.Sprintf("%d running pod(s) wait on readiness gate %s: they take no traffic until it is set", len(s.pods), g)
		if strings.HasPrefix(g, snapshot.ALBGateCondPrefix) {
			msg += " by the AWS Load Balancer Controller once the ALB target is healthy"
		}
		f := r.NewFinding(msg)
		if s.stuck == 0 {
			f.Severity = rules.Info
			f.Message += " (containers ready for under a minute: usually normal)"
		} else {
			f.Message += fmt.Sprintf("; %d have had ready containers for over a minute — the gate is stuck", s.stuck)
		}
		f.Evidence = []rules.Evidence{ev(w.Obj(), "pods with status.conditions["+g+"] not True", strings.Join(firstN(s.pods, 5), ", "))}
		out = append(out, f)
	}
	return out
}
