package podcheck

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// Nodes that stopped reporting and pods that cannot finish terminating:
// RD322, RD326.

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

func leaseAge(w *snapshot.Workload, node string) (time.Duration, int32, bool) {
	l := w.NodeLeases[node]
	if l == nil || l.Spec.RenewTime == nil {
		return 0, 0, false
	}
	d := int32(40)
	if l.Spec.LeaseDurationSeconds != nil {
		d = *l.Spec.LeaseDurationSeconds
	}
	return snapshot.Since(w.Now, l.Spec.RenewTime.Time), d, true
}

// leaseStale: the kubelet renews its Lease every quarter of its duration
// (10 s of 40 s); older than half the duration means two renewals missed.
func leaseStale(age time.Duration, durSeconds int32) bool {
	return age > time.Duration(durSeconds)*time.Second/2
}

func checkReadyOnDeadNode(c *Context, r *rules.Rule) []rules.Finding {
	w := c.W
	byNode := map[string][]string{}
	for _, p := range w.Pods {
		if p.Spec.NodeName != "" && podReady(p) && !terminating(p) {
			byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p.Name)
		}
	}
	eps := endpointsByPod(w)
	var nodes []string
	for n := range byNode {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	var out []rules.Finding
	for _, name := range nodes {
		pods := byNode[name]
		n := w.Nodes[name]
		var why string
		sev := rules.Critical
		var evs []rules.Evidence
		if n != nil {
			st, cond := nodeReadyStatus(n)
			if st != corev1.ConditionTrue {
				why = fmt.Sprintf("node %s is Ready=%s", name, st)
				v := string(st)
				if cond != nil {
					v += fmt.Sprintf(" since %s (%s)", cond.LastTransitionTime.UTC().Format(time.RFC3339), cond.Reason)
				}
				evs = append(evs, ev("Node "+name, "status.conditions[Ready]", v))
			}
		}
		if age, dur, ok := leaseAge(w, name); ok && leaseStale(age, dur) {
			lease := fmt.Sprintf("kubelet last renewed its Lease %s ago (renewed every ~%d s, lease %d s)", age.Round(time.Second), dur/4, dur)
			if why == "" {
				why = fmt.Sprintf("node %s still reads Ready but its %s", name, lease)
				if age <= time.Duration(dur)*time.Second {
					sev = rules.Warning
				}
			} else {
				why += "; its " + lease
			}
			evs = append(evs, ev("Lease kube-node-lease/"+name, "spec.renewTime", w.NodeLeases[name].Spec.RenewTime.UTC().Format(time.RFC3339)+fmt.Sprintf(" (%s before the snapshot)", age.Round(time.Second))))
		}
		if why == "" {
			continue
		}
		inSvc := 0
		for _, p := range pods {
			for _, e := range eps[p] {
				if e.Ready {
					inSvc++
					break
				}
			}
		}
		msg := fmt.Sprintf("%s Ready on a node that stopped reporting: %s. That Ready is the last thing the kubelet wrote", plural(len(pods), "pod reports", "pods report"), why)
		if inSvc > 0 {
			total := 0
			for _, s := range w.Services {
				total += readyEndpoints(w.EndpointSlices[s.Name])
			}
			msg += fmt.Sprintf("; %s (of %d ready endpoints in the workload's Services) and get%s a share of traffic — timeouts and connection errors while every dashboard shows Ready", plural(inSvc, "is still a ready endpoint", "are still ready endpoints"), total, map[bool]string{true: "s", false: ""}[inSvc == 1])
		}
		f := r.NewFinding(msg)
		f.Severity = sev
		f.Evidence = append(evs, ev(w.Obj(), "pods Ready=True on "+name, strings.Join(firstN(pods, 5), ", ")))
		out = append(out, f)
	}
	return out
}

// overdue is how long past its deletionTimestamp a pod may linger before it
// counts as stuck: the kubelet's final kill and the API deletion take seconds.
const overdue = 30 * time.Second

func checkStuckTerminating(c *Context, r *rules.Rule) []rules.Finding {
	w := c.W
	eps := endpointsByPod(w)
	var stuck []string
	serving := 0
	var worst time.Duration
	for _, p := range w.Pods {
		if p.DeletionTimestamp == nil {
			continue
		}
		late := w.Now.Sub(p.DeletionTimestamp.Time)
		if late <= overdue {
			continue
		}
		stuck = append(stuck, fmt.Sprintf("%s on %s (%s late)", p.Name, valueOr(p.Spec.NodeName, "no node"), late.Round(time.Second)))
		if late > worst {
			worst = late
		}
		for _, e := range eps[p.Name] {
			if e.Serving {
				serving++
				break
			}
		}
	}
	if len(stuck) == 0 {
		return nil
	}
	msg := fmt.Sprintf("%s still Terminating up to %s after the grace period ended: the kubelet cannot finish them (node down, sandbox/CNI teardown failing)", plural(len(stuck), "pod is", "pods are"), worst.Round(time.Second))
	if serving > 0 {
		msg += fmt.Sprintf("; %d still serving in an EndpointSlice", serving)
	}
	f := r.NewFinding(msg)
	f.Evidence = []rules.Evidence{ev(w.Obj(), "pods past metadata.deletionTimestamp", strings.Join(firstN(stuck, 5), ", "))}
	return []rules.Finding{f}
}
