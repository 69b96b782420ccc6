package podcheck

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// Small pure readers the checks share: objects in, values out.

// sidecarNames are proxies injected next to the application; their own
// probes and lifecycle are the mesh's business.
var sidecarNames = map[string]bool{"istio-proxy": true, "linkerd-proxy": true}

// appContainers are the template's containers minus mesh sidecars.
func appContainers(spec *corev1.PodSpec) []*corev1.Container {
	var out []*corev1.Container
	for i := range spec.Containers {
		if !sidecarNames[spec.Containers[i].Name] {
			out = append(out, &spec.Containers[i])
		}
	}
	return out
}

// servingContainers are the app containers that declare ports, or all app
// containers when none does (ports are optional in Kubernetes).
func servingContainers(spec *corev1.PodSpec) []*corev1.Container {
	all := appContainers(spec)
	var out []*corev1.Container
	for _, c := range all {
		if len(c.Ports) > 0 {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return all
	}
	return out
}

func condTrue(conds []corev1.PodCondition, t corev1.PodConditionType) (bool, *corev1.PodCondition) {
	for i := range conds {
		if conds[i].Type == t {
			return conds[i].Status == corev1.ConditionTrue, &conds[i]
		}
	}
	return false, nil
}

// podReady is the pod's Ready condition.
func podReady(p *corev1.Pod) bool { ok, _ := condTrue(p.Status.Conditions, corev1.PodReady); return ok }

// terminating reports a pod being deleted.
func terminating(p *corev1.Pod) bool { return p.DeletionTimestamp != nil }

func boolOr(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func valueOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func firstN(ss []string, n int) []string {
	if len(ss) <= n {
		return ss
	}
	return append(append([]string{}, ss[:n]...), fmt.Sprintf("… %d more", len(ss)-n))
}

// plural writes "1 pod reports" / "3 pods report".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
