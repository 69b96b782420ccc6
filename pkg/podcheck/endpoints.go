package podcheck

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// EndpointSlices against pods and weights: RD323, RD324, RD325.

// endpointState is one pod's endpoint conditions in one Service.
type endpointState struct {
	Service                     string
	Ready, Serving, Terminating bool
}

func endpointsByPod(w *snapshot.Workload) map[string][]endpointState {
	out := map[string][]endpointState{}
	for svc, slices := range w.EndpointSlices {
		for _, es := range slices {
			for _, e := range es.Endpoints {
				if e.TargetRef == nil || e.TargetRef.Kind != "Pod" {
					continue
				}
				out[e.TargetRef.Name] = append(out[e.TargetRef.Name], endpointState{Service: svc,
					Ready: boolOr(e.Conditions.Ready, true), Serving: boolOr(e.Conditions.Serving, boolOr(e.Conditions.Ready, true)), Terminating: boolOr(e.Conditions.Terminating, false)})
			}
		}
	}
	return out
}

// readyEndpoints counts a Service's ready endpoints.
// ReadyEndpoints counts the ready endpoints of a Service's EndpointSlices
// (each address once).
func ReadyEndpoints(slices []*discoveryv1.EndpointSlice) int { return readyEndpoints(slices) }

func readyEndpoints(slices []*discoveryv1.EndpointSlice) int {
	seen := map[string]bool{}
	n := 0
	for _, es := range slices {
		for _, e := range es.Endpoints {
			if !boolOr(e.Conditions.Ready, true) || len(e.Addresses) == 0 || seen[e.Addresses[0]] {
				continue
			}
			seen[e.Addresses[0]] = true
			n++
		}
	}
	return n
}

// selectsHash checks the Rollout's hash label in a Service selector, which
// ServiceSelects ignores for the template.
func selectsHash(svc *corev1.Service, p *corev1.Pod) bool {
	h, ok := svc.Spec.Selector[snapshot.RolloutHashLabel]
	return !ok || p.Labels[snapshot.RolloutHashLabel] == h
}

// settle is how long a disagreement between a pod and its endpoint must last
// before it is not just the EndpointSlice controller catching up.
const settle = 10 * time.Second

func checkEndpointMismatch(c *Context, r *rules.Rule) []rules.Finding {
	w := c.W
	if !w.SlicesRead {
		return nil
	}
	eps := endpointsByPod(w)
	var readyNoTraffic, unreadyServed []string
	for _, p := range w.Pods {
		if terminating(p) || p.Status.PodIP == "" {
			continue
		}
		ready, cond := condTrue(p.Status.Conditions, corev1.PodReady)
		if cond == nil || w.Now.Sub(cond.LastTransitionTime.Time) < settle {
			continue
		}
		for _, svc := range w.Services {
			if len(svc.Spec.Selector) == 0 || !snapshot.ServiceSelects(svc, p.Labels) || !selectsHash(svc, p) {
				continue
			}
			var st *endpointState
			for i, e := range eps[p.Name] {
				if e.Service == svc.Name {
					st = &eps[p.Name][i]
				}
			}
			switch {
			case ready && (st == nil || !st.Ready):
				readyNoTraffic = append(readyNoTraffic, p.Name+" (Service "+svc.Name+")")
			case !ready && st != nil && st.Ready:
				unreadyServed = append(unreadyServed, p.Name+" (Service "+svc.Name+")")
			}
		}
	}
	var out []rules.Finding
	if len(readyNoTraffic) > 0 {
		f := r.NewFinding(fmt.Sprintf("%d Ready pod(s) are not ready endpoints of a Service that selects them, for over %s: they get no traffic and the others carry their share", len(readyNoTraffic), settle))
		f.Evidence = []rules.Evidence{ev(w.Obj(), "Ready pods missing from EndpointSlices", strings.Join(firstN(readyNoTraffic, 5), ", "))}
		out = append(out, f)
	}
	if len(unreadyServed) > 0 {
		f := r.NewFinding(fmt.Sprintf("%d pod(s) are not Ready but still ready endpoints, for over %s: requests keep going to pods that failed readiness", len(unreadyServed), settle))
		f.Severity = rules.Critical
		f.Evidence = []rules.Evidence{ev(w.Obj(), "unready pods still ready endpoints", strings.Join(firstN(unreadyServed, 5), ", "))}
		out = append(out, f)
	}
	return out
}

func checkNoReadyEndpoints(c *Context, r *rules.Rule) []rules.Finding {
	w := c.W
	if !w.SlicesRead {
		return nil
	}
	weights, _ := serviceWeights(w, c.Version)
	var out []rules.Finding
	for _, s := range w.Services {
		if len(s.Spec.Selector) == 0 || s.Spec.Type == corev1.ServiceTypeExternalName {
			continue
		}
		wt, weighted := weights[s.Name]
		if weighted && wt == 0 {
			continue // a canary Service at weight 0 may well be empty
		}
		slices := w.EndpointSlices[s.Name]
		if readyEndpoints(slices) > 0 {
			continue
		}
		serving := 0
		for _, es := range slices {
			for _, e := range es.Endpoints {
				if boolOr(e.Conditions.Serving, false) {
					serving++
				}
			}
		}
		msg := fmt.Sprintf("Service %s has no ready endpoints: every request routed to it fails (503 from ingress/mesh, connection refused through kube-proxy)", s.Name)
		if weighted {
			msg = fmt.Sprintf("Service %s carries %d%% of traffic and has no ready endpoints: those requests fail (503 from ingress/mesh, connection refused through kube-proxy)", s.Name, wt)
		}
		if serving > 0 {
			msg += fmt.Sprintf("; %d terminating endpoint(s) still serve, which only kube-proxy falls back to", serving)
		}
		if w.Replicas == 0 {
			msg += fmt.Sprintf(" — the %s is scaled to 0 (spec.replicas 0), so every request fails until it is scaled up; expected only if that is on purpose", w.Kind)
		}
		f := r.NewFinding(msg)
		f.Evidence = []rules.Evidence{ev("Service "+s.Namespace+"/"+s.Name, "EndpointSlices ready endpoints", 0), ev("Service "+s.Namespace+"/"+s.Name, "EndpointSlices", len(slices))}
		if w.Replicas == 0 {
			// Scaled to zero on purpose (KEDA, an idle environment), or by
			// mistake: the cause is plain, and it is no rollout's doing.
			f.Severity = rules.Warning
			f.Evidence = append(f.Evidence, ev(string(w.Kind)+" "+w.Namespace+"/"+w.Name, "spec.replicas", 0))
		}
		out = append(out, f)
	}
	return out
}

func checkEndpointShare(c *Context, r *rules.Rule) []rules.Finding {
	w := c.W
	if !w.SlicesRead || w.Replicas == 0 {
		return nil
	}
	weights, maxW := serviceWeights(w, c.Version)
	var names []string
	for n := range weights {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []rules.Finding
	for _, name := range names {
		wt := weights[name]
		n := readyEndpoints(w.EndpointSlices[name])
		if wt == 0 || n == 0 {
			continue // RD324 reports a weighted Service with none
		}
		// Per-endpoint share vs the share a pod carries at full size.
		ratio := float64(wt) * float64(w.Replicas) / (float64(n) * float64(maxW))
		if ratio < 2 {
			continue
		}
		f := r.NewFinding(fmt.Sprintf("Service %s carries %d%% of traffic on %d ready endpoint(s): each takes %.1f%% of all traffic, %.1f× what a pod takes at full size (%d replicas) — the shape of a rollback within the window: the weight lands on the first ready pods",
			name, wt*100/maxW, n, float64(wt)*100/float64(maxW)/float64(n), ratio, w.Replicas))
		if ratio >= 4 {
			f.Severity = rules.Critical
		}
		f.Evidence = []rules.Evidence{ev(w.Obj(), "status.canary.weights → Service "+name, wt), ev("Service "+w.Namespace+"/"+name, "ready endpoints", n), ev(w.Obj(), "spec.replicas", w.Replicas)}
		f.Cites = c.cites("tr.stable-check-call")
		out = append(out, f)
	}
	return out
}
