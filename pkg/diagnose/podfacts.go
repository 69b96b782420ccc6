package diagnose

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// This file reads facts off pod templates, pods and traffic objects for the
// pod checks. Everything here is pure: objects in, values out.

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

// graceSeconds is terminationGracePeriodSeconds with its default.
func graceSeconds(spec *corev1.PodSpec) int64 {
	if spec.TerminationGracePeriodSeconds != nil {
		return *spec.TerminationGracePeriodSeconds
	}
	return corev1.DefaultTerminationGracePeriodSeconds
}

var sleepRE = regexp.MustCompile(`(?:^|[\s;&|(])sleep\s+(\d+(?:\.\d+)?)s?(?:$|[\s;&|)])`)

// preStopSeconds reads a container's preStop delay: the sleep action, or an
// exec hook that sleeps. ok is false when there is no hook; known is false
// when there is one whose duration cannot be read (an HTTP hook, a script).
func preStopSeconds(c *corev1.Container) (secs float64, ok, known bool) {
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil {
		return 0, false, false
	}
	h := c.Lifecycle.PreStop
	switch {
	case h.Sleep != nil:
		return float64(h.Sleep.Seconds), true, true
	case h.Exec != nil:
		cmd := strings.Join(h.Exec.Command, " ")
		if m := sleepRE.FindStringSubmatch(cmd); m != nil {
			v, err := strconv.ParseFloat(m[1], 64)
			return v, true, err == nil
		}
	}
	return 0, true, false
}

// portNumber resolves a probe port (number or container port name).
func portNumber(c *corev1.Container, p intstr.IntOrString) string {
	if p.Type == intstr.Int {
		return strconv.Itoa(p.IntValue())
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return strconv.Itoa(int(cp.ContainerPort))
		}
	}
	return p.StrVal
}

// handlerKey describes what a probe asks, so that two probes asking the same
// question compare equal even when one names the port and the other numbers it.
func handlerKey(c *corev1.Container, p *corev1.Probe) string {
	switch h := p.ProbeHandler; {
	case h.HTTPGet != nil:
		path := h.HTTPGet.Path
		if path == "" {
			path = "/"
		}
		scheme := strings.ToLower(string(h.HTTPGet.Scheme))
		if scheme == "" {
			scheme = "http"
		}
		return fmt.Sprintf("%s %s:%s%s", scheme, h.HTTPGet.Host, portNumber(c, h.HTTPGet.Port), path)
	case h.TCPSocket != nil:
		return "tcp " + portNumber(c, h.TCPSocket.Port)
	case h.Exec != nil:
		return "exec " + strings.Join(h.Exec.Command, " ")
	case h.GRPC != nil:
		svc := ""
		if h.GRPC.Service != nil {
			svc = *h.GRPC.Service
		}
		return fmt.Sprintf("grpc %d %s", h.GRPC.Port, svc)
	}
	return ""
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

// --- Istio ---

// istioSidecar says whether the workload's pods get an Istio sidecar, and why.
func istioSidecar(w *snapshot.Workload) (bool, string) {
	for _, p := range w.Pods {
		for _, c := range append(append([]corev1.Container{}, p.Spec.Containers...), p.Spec.InitContainers...) {
			if c.Name == "istio-proxy" {
				return true, "pod " + p.Name + " runs an istio-proxy container"
			}
		}
	}
	for _, c := range w.Template.Spec.Containers {
		if c.Name == "istio-proxy" {
			return true, "the template declares an istio-proxy container"
		}
	}
	inject := w.Template.Labels["sidecar.istio.io/inject"]
	if inject == "" {
		inject = w.Template.Annotations["sidecar.istio.io/inject"]
	}
	switch inject {
	case "true":
		return true, "the template sets sidecar.istio.io/inject=true"
	case "false":
		return false, ""
	}
	if len(w.Pods) > 0 {
		return false, "" // running pods have no sidecar: injection is off
	}
	if ns := w.NamespaceObj; ns != nil {
		if ns.Labels["istio-injection"] == "enabled" {
			return true, "namespace " + ns.Name + " has istio-injection=enabled"
		}
		if rev := ns.Labels["istio.io/rev"]; rev != "" && ns.Labels["istio-injection"] != "disabled" {
			return true, "namespace " + ns.Name + " has istio.io/rev=" + rev
		}
	}
	return false, ""
}

// IstioDefaultDrain is Istio's terminationDrainDuration when neither the pod
// nor the mesh sets one.
const IstioDefaultDrain = 5 * time.Second

// istioDrain is the sidecar's terminationDrainDuration and where it came from:
// the pod's proxy.istio.io/config annotation, then the mesh default
// (istio-system/istio ConfigMap, defaultConfig), then Istio's 5 s.
func istioDrain(w *snapshot.Workload) (time.Duration, string) {
	read := func(src string) (time.Duration, bool) {
		var pc struct {
			TerminationDrainDuration string `json:"terminationDrainDuration"`
		}
		if yaml.Unmarshal([]byte(src), &pc) != nil || pc.TerminationDrainDuration == "" {
			return 0, false
		}
		d, err := time.ParseDuration(pc.TerminationDrainDuration)
		return d, err == nil
	}
	if a := w.Template.Annotations["proxy.istio.io/config"]; a != "" {
		if d, ok := read(a); ok {
			return d, "pod annotation proxy.istio.io/config"
		}
	}
	for _, p := range w.Pods {
		if a := p.Annotations["proxy.istio.io/config"]; a != "" {
			if d, ok := read(a); ok {
				return d, "pod " + p.Name + " annotation proxy.istio.io/config"
			}
		}
	}
	if cm := w.MeshConfig; cm != nil {
		var mesh struct {
			DefaultConfig map[string]interface{} `json:"defaultConfig"`
		}
		if yaml.Unmarshal([]byte(cm.Data[snapshot.IstioMeshDataKey]), &mesh) == nil {
			if v, ok := mesh.DefaultConfig["terminationDrainDuration"].(string); ok {
				if d, err := time.ParseDuration(v); err == nil {
					return d, "mesh default (ConfigMap istio-system/istio defaultConfig)"
				}
			}
		}
		return IstioDefaultDrain, "Istio default (the mesh ConfigMap does not set one)"
	}
	return IstioDefaultDrain, "Istio default (mesh ConfigMap not read; pass a pod annotation to be sure)"
}

// --- AWS Load Balancer Controller ---

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

// --- scheduling ---

// requiredSelfAntiAffinity returns the topology keys of required
// anti-affinity terms that select the workload's own pods.
func requiredSelfAntiAffinity(w *snapshot.Workload) []string {
	a := w.Template.Spec.Affinity
	if a == nil || a.PodAntiAffinity == nil {
		return nil
	}
	var keys []string
	for _, t := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
		if t.LabelSelector == nil || t.TopologyKey == "" {
			continue
		}
		if len(t.Namespaces) > 0 && !contains(t.Namespaces, w.Namespace) {
			continue
		}
		if sel, err := metav1.LabelSelectorAsSelector(t.LabelSelector); err == nil && !sel.Empty() && sel.Matches(labels.Set(w.Template.Labels)) {
			keys = append(keys, t.TopologyKey)
		}
	}
	return keys
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// tolerates reports whether the pod spec tolerates a taint.
func tolerates(spec *corev1.PodSpec, t corev1.Taint) bool {
	for i := range spec.Tolerations {
		if spec.Tolerations[i].ToleratesTaint(&t) {
			return true
		}
	}
	return false
}

// schedulableDomains counts the topology domains (values of key) among nodes
// the template could be scheduled on: Ready, not cordoned, matching its
// nodeSelector, no untolerated NoSchedule/NoExecute taint. Node affinity is
// not evaluated (it can only lower the count).
func schedulableDomains(w *snapshot.Workload, key string) (int, int) {
	domains := map[string]bool{}
	nodes := 0
	for _, n := range w.Nodes {
		if n.Spec.Unschedulable || !nodeReady(n) {
			continue
		}
		ok := true
		for k, v := range w.Template.Spec.NodeSelector {
			if n.Labels[k] != v {
				ok = false
			}
		}
		for _, t := range n.Spec.Taints {
			if (t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute) && !tolerates(&w.Template.Spec, t) {
				ok = false
			}
		}
		if !ok {
			continue
		}
		if v, has := n.Labels[key]; has {
			domains[v] = true
			nodes++
		}
	}
	return len(domains), nodes
}

func nodeReady(n *corev1.Node) bool {
	st, _ := nodeReadyStatus(n)
	return st == corev1.ConditionTrue
}

func nodeReadyStatus(n *corev1.Node) (corev1.ConditionStatus, *corev1.NodeCondition) {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == corev1.NodeReady {
			return n.Status.Conditions[i].Status, &n.Status.Conditions[i]
		}
	}
	return corev1.ConditionUnknown, nil
}

// scaled resolves maxSurge/maxUnavailable against replicas the way both the
// Deployment and the Rollout controllers do: surge rounds up, unavailable
// rounds down, a bare number string is a percentage (Argo's "25" default),
// and only when both are 0 does unavailable become 1.
func scaled(surge, unav *intstr.IntOrString, replicas int32) (int32, int32) {
	def := intstr.FromString("25%")
	if surge == nil {
		surge = &def
	}
	if unav == nil {
		unav = &def
	}
	s := resolveIntOrPercent(*surge, replicas, true)
	u := resolveIntOrPercent(*unav, replicas, false)
	if s == 0 && u == 0 {
		u = 1
	}
	return s, u
}

func resolveIntOrPercent(v intstr.IntOrString, total int32, up bool) int32 {
	if v.Type == intstr.Int {
		return v.IntVal
	}
	p, err := strconv.ParseFloat(strings.TrimSuffix(v.StrVal, "%"), 64)
	if err != nil {
		return 0
	}
	x := p * float64(total) / 100
	if up {
		return int32(math.Ceil(x))
	}
	return int32(x)
}
