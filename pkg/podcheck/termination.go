package podcheck

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// Termination: what happens between a pod's deletion and SIGKILL — the
// preStop delay, the grace period and the Istio sidecar's drain: RD303, RD304,
// RD305.

// behindService names what sends traffic to the pods, or "".
func behindService(w *snapshot.Workload) string {
	var parts []string
	for _, s := range w.Services {
		parts = append(parts, "Service "+s.Name)
	}
	for _, i := range w.Ingresses {
		parts = append(parts, "Ingress "+i.Name)
	}
	return strings.Join(parts, ", ")
}

func checkNoPreStop(c *Context, r *rules.Rule) []rules.Finding {
	w := c.W
	path := behindService(w)
	if path == "" {
		return nil
	}
	serving := servingContainers(&w.Template.Spec)
	var without []string
	for _, ct := range serving {
		if _, ok, _ := preStopSeconds(ct); !ok {
			without = append(without, ct.Name)
		}
	}
	if len(without) == 0 {
		return nil
	}
	f := r.NewFinding(fmt.Sprintf("container %s behind %s has no preStop: on every scale-in and rollout the pod gets SIGTERM while load balancers still send to it — 502s and resets for the seconds endpoint removal takes to propagate",
		strings.Join(without, ", "), path))
	for _, n := range without {
		f.Evidence = append(f.Evidence, ev(w.Obj(), "spec.template.spec.containers["+n+"].lifecycle.preStop", "absent"))
	}
	f.Evidence = append(f.Evidence, ev(w.Obj(), "traffic path", path))
	return []rules.Finding{f}
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

// preStopMax is the longest readable preStop delay among serving containers.
func preStopMax(w *snapshot.Workload) (secs float64, container string, known bool) {
	known = true
	any := false
	for _, ct := range servingContainers(&w.Template.Spec) {
		s, ok, k := preStopSeconds(ct)
		if !ok {
			continue
		}
		any = true
		if !k {
			known = false
			continue
		}
		if s >= secs {
			secs, container = s, ct.Name
		}
	}
	return secs, container, any && known
}

func checkGrace(c *Context, r *rules.Rule) []rules.Finding {
	w := c.W
	grace := graceSeconds(&w.Template.Spec)
	pre, name, known := preStopMax(w)
	graceEv := ev(w.Obj(), "spec.template.spec.terminationGracePeriodSeconds", fmt.Sprintf("%d s", grace))
	if w.Template.Spec.TerminationGracePeriodSeconds == nil {
		graceEv.Value += " (default)"
	}
	if known && pre >= float64(grace) {
		f := r.NewFinding(fmt.Sprintf("preStop sleeps %s s in container %s but terminationGracePeriodSeconds is %d s: the kubelet kills the container right after preStop (+2 s), so the application never gets time to finish in-flight requests — resets/502 at every pod deletion", secs(pre), name, grace))
		f.Evidence = []rules.Evidence{ev(w.Obj(), "spec.template.spec.containers["+name+"].lifecycle.preStop", secs(pre)+" s"), graceEv}
		return []rules.Finding{f}
	}
	if c.Grace.P99 <= 0 {
		return nil
	}
	g := GraceFor(w, c.Grace)
	need := g.GracePeriod
	budget := fmt.Sprintf("DRAIN_TIMEOUT %d s + preStop %d s", g.DrainTimeout, g.PreStop)
	if g.TerminationDrain > g.DrainTimeout+g.PreStop {
		budget = fmt.Sprintf("Istio terminationDrainDuration %d s", g.TerminationDrain)
	}
	// A longer preStop than recommended, kept as it is, needs its own room.
	if cur := int64(math.Ceil(pre)); known && cur > g.PreStop && cur+g.DrainTimeout+g.Margin > need {
		need = cur + g.DrainTimeout + g.Margin
		budget = fmt.Sprintf("DRAIN_TIMEOUT %d s + the current preStop %d s", g.DrainTimeout, cur)
	}
	if grace >= need {
		return nil
	}
	after := fmt.Sprintf("after the %s s preStop the application has %s s", secs(pre), secs(float64(grace)-pre))
	if pre == 0 {
		after = fmt.Sprintf("the application has %d s from SIGTERM", grace)
	}
	f := r.NewFinding(fmt.Sprintf("terminationGracePeriodSeconds %d s is %d s short of the %d s the drain needs (p99 %d s → %s + margin %d s): %s before SIGKILL, so requests longer than that are cut at every pod deletion",
		grace, need-grace, need, g.P99, budget, g.Margin, after))
	f.Severity = rules.Warning
	f.Evidence = []rules.Evidence{graceEv, ev("input", "--p99", fmt.Sprintf("%d s", g.P99))}
	if known && name != "" {
		f.Evidence = append(f.Evidence, ev(w.Obj(), "spec.template.spec.containers["+name+"].lifecycle.preStop", secs(pre)+" s"))
	}
	return []rules.Finding{f}
}

func checkIstioDrain(c *Context, r *rules.Rule) []rules.Finding {
	w := c.W
	on, why := istioSidecar(w)
	if !on {
		return nil
	}
	d, from := istioDrain(w)
	grace := graceSeconds(&w.Template.Spec)
	dEv := ev(w.Obj(), "istio terminationDrainDuration", fmt.Sprintf("%s (%s)", d, from))
	gEv := ev(w.Obj(), "spec.template.spec.terminationGracePeriodSeconds", fmt.Sprintf("%d s", grace))
	sEv := ev(w.Obj(), "istio sidecar", why)
	if d > secondsDur(grace) {
		f := r.NewFinding(fmt.Sprintf("the istio-proxy sidecar drains for %s but terminationGracePeriodSeconds is %d s: Envoy is killed mid-drain and requests still passing through it are reset at every pod deletion", d, grace))
		f.Evidence = []rules.Evidence{dEv, gEv, sEv}
		return []rules.Finding{f}
	}
	if c.Grace.P99 > 0 {
		g := CalcGrace(c.Grace)
		if d < secondsDur(g.DrainTimeout) {
			f := r.NewFinding(fmt.Sprintf("the istio-proxy sidecar drains for %s, less than DRAIN_TIMEOUT %d s (p99 %d s × 1.2): Envoy exits before the application's long requests finish and their responses are lost", d, g.DrainTimeout, g.P99))
			f.Evidence = []rules.Evidence{dEv, ev("input", "--p99", fmt.Sprintf("%d s", g.P99)), sEv}
			return []rules.Finding{f}
		}
	}
	return nil
}

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

// secondsDur converts whole seconds to a Duration, saturating instead of
// overflowing: a grace period near the int64 maximum means "never killed",
// not a negative duration.
func secondsDur(s int64) time.Duration {
	switch {
	case s <= 0:
		return 0
	case s > int64(math.MaxInt64/int64(time.Second)):
		return math.MaxInt64
	}
	return time.Duration(s) * time.Second
}

// secs formats a number of seconds without exponent notation.
func secs(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
