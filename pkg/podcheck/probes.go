package podcheck

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
)

// Readiness and liveness probes: RD301, RD302.

func checkReadinessMissing(c *Context, r *rules.Rule) []rules.Finding {
	w := c.W
	var names []string
	for _, ct := range servingContainers(&w.Template.Spec) {
		if ct.ReadinessProbe == nil {
			names = append(names, ct.Name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	f := r.NewFinding(fmt.Sprintf("container %s has no readiness probe: each new pod takes traffic the moment it starts, before it listens — connection refused/502 during every rollout and scale-out", strings.Join(names, ", ")))
	for _, n := range names {
		f.Evidence = append(f.Evidence, ev(w.Obj(), "spec.template.spec.containers["+n+"].readinessProbe", "absent"))
	}
	return []rules.Finding{f}
}

func checkReadinessIsLiveness(c *Context, r *rules.Rule) []rules.Finding {
	w := c.W
	var out []rules.Finding
	for _, ct := range appContainers(&w.Template.Spec) {
		if ct.ReadinessProbe == nil || ct.LivenessProbe == nil {
			continue
		}
		rk, lk := handlerKey(ct, ct.ReadinessProbe), handlerKey(ct, ct.LivenessProbe)
		if rk == "" || rk != lk {
			continue
		}
		f := r.NewFinding(fmt.Sprintf("container %s: readiness and liveness both probe %s — a slow dependency restarts pods instead of taking them out of rotation, and a drain cannot fail readiness without being killed", ct.Name, rk))
		f.Evidence = []rules.Evidence{ev(w.Obj(), "spec.template.spec.containers["+ct.Name+"].readinessProbe", rk), ev(w.Obj(), "spec.template.spec.containers["+ct.Name+"].livenessProbe", lk)}
		out = append(out, f)
	}
	return out
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
