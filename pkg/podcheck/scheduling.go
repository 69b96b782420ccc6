package podcheck

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// Scheduling and disruption: required anti-affinity against the update's
// extra pods (RD309) and PodDisruptionBudgets (RD310, RD311).

func checkAntiAffinity(c *Context, r *rules.Rule) []rules.Finding {
	w := c.W
	keys := requiredSelfAntiAffinity(w)
	if len(keys) == 0 || w.Replicas == 0 {
		return nil
	}
	key := keys[0]
	// extra is how many pods the update must add before it removes one, and
	// why; 0 means the strategy can remove first.
	var extra int32
	var why string
	var cites []upstream.Cite
	switch w.Strategy {
	case "Recreate":
		return nil
	case "canary+traffic":
		extra, why = 1, "a traffic-routed canary adds its pods on top of a full stable"
		cites = c.cites("uc.stable-full-no-dss")
	case "blueGreen":
		extra, why = w.Replicas, "blue-green starts a full preview next to the active pods"
		cites = c.cites("ur.bluegreen-preview-size")
		if w.PreviewReplicas != nil {
			extra = *w.PreviewReplicas
			cites = c.cites("ur.bluegreen-preview-count")
		}
	default:
		surge, unav := model.Fenceposts(w.MaxSurge, w.MaxUnavailable, w.Replicas)
		if unav > 0 {
			return nil
		}
		extra = 1
		why = fmt.Sprintf("maxUnavailable %s resolves to 0 at %d replicas (maxSurge %d), so a surge pod must start before any old pod goes", intOrDefault(w.MaxUnavailable), w.Replicas, surge)
		if w.Kind == snapshot.KindRollout {
			cites = c.cites("df.surge-unavailable-default", "ur.unavailable-rounds-down", "ur.both-zero-unavailable-one")
		}
	}
	if extra == 0 {
		return nil
	}
	aEv := ev(w.Obj(), "spec.template.spec.affinity.podAntiAffinity.required…topologyKey", key)
	rEv := ev(w.Obj(), "spec.replicas", w.Replicas)
	if len(w.Nodes) == 0 {
		f := r.NewFinding(fmt.Sprintf("required anti-affinity on %s and %s: on a cluster with fewer than %d schedulable %s domains the update deadlocks (new pods Pending, old pods never removed)", key, why, w.Replicas+extra, key))
		f.Severity = rules.Warning
		f.Evidence = []rules.Evidence{aEv, rEv}
		f.Cites = cites
		return []rules.Finding{f}
	}
	domains, nodes := schedulableDomains(w, key)
	if w.Replicas+extra <= int32(domains) {
		return nil
	}
	f := r.NewFinding(fmt.Sprintf("required anti-affinity on %s with %d replicas and only %d schedulable %s domains (%d nodes): %s, and it can never schedule — the next update stays Pending and never finishes", key, w.Replicas, domains, key, nodes, why))
	f.Evidence = []rules.Evidence{aEv, rEv, ev("cluster", "schedulable domains for "+key+" (Ready, not cordoned, nodeSelector and taints honoured)", domains)}
	var pending []string
	for _, p := range w.Pods {
		if p.Status.Phase == corev1.PodPending && p.Spec.NodeName == "" {
			pending = append(pending, p.Name)
		}
	}
	if len(pending) > 0 {
		f.Evidence = append(f.Evidence, ev(w.Obj(), "unscheduled pods now", strings.Join(firstN(pending, 5), ", ")))
	}
	f.Cites = cites
	return []rules.Finding{f}
}

func intOrDefault(v *intstr.IntOrString) string {
	if v == nil {
		return "25% (default)"
	}
	return v.String()
}

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

// resolveIntOrPercent resolves a PodDisruptionBudget's maxUnavailable or
// minAvailable against replicas (a percentage rounds up, as the disruption
// controller rounds it).
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

func checkNoPDB(c *Context, r *rules.Rule) []rules.Finding {
	w := c.W
	if len(w.PDBs) > 0 || w.Replicas < 2 || !w.PDBsRead {
		return nil
	}
	where := ""
	if w.Offline {
		where = " in the input"
	}
	f := r.NewFinding(fmt.Sprintf("no PodDisruptionBudget%s selects the %d pods: a node drain or cluster upgrade can evict every pod on the drained nodes at once, even mid-rollout", where, w.Replicas))
	f.Evidence = []rules.Evidence{ev(w.Obj(), "PodDisruptionBudgets selecting spec.template.metadata.labels", 0)}
	return []rules.Finding{f}
}

func checkPDBBlocks(c *Context, r *rules.Rule) []rules.Finding {
	w := c.W
	var out []rules.Finding
	for _, p := range w.PDBs {
		why := pdbBlocks(p, w.Replicas)
		if why == "" {
			continue
		}
		f := r.NewFinding(fmt.Sprintf("PodDisruptionBudget %s %s: node drains and upgrades hang on these pods until someone deletes them by hand", p.Name, why))
		obj := "PodDisruptionBudget " + p.Namespace + "/" + p.Name
		switch {
		case p.Spec.MaxUnavailable != nil:
			f.Evidence = append(f.Evidence, ev(obj, "spec.maxUnavailable", p.Spec.MaxUnavailable.String()))
		case p.Spec.MinAvailable != nil:
			f.Evidence = append(f.Evidence, ev(obj, "spec.minAvailable", p.Spec.MinAvailable.String()))
		}
		f.Evidence = append(f.Evidence, ev(w.Obj(), "spec.replicas", w.Replicas))
		if p.Status.ObservedGeneration > 0 {
			f.Evidence = append(f.Evidence, ev(obj, "status.disruptionsAllowed", p.Status.DisruptionsAllowed))
		}
		out = append(out, f)
	}
	return out
}

// pdbBlocks says why a PDB allows no eviction even with every pod healthy, or "".
func pdbBlocks(p *policyv1.PodDisruptionBudget, replicas int32) string {
	if mu := p.Spec.MaxUnavailable; mu != nil {
		if resolveIntOrPercent(*mu, replicas, true) == 0 {
			return "has maxUnavailable " + mu.String()
		}
		return ""
	}
	if ma := p.Spec.MinAvailable; ma != nil {
		if n := resolveIntOrPercent(*ma, replicas, true); n >= replicas && replicas > 0 {
			return fmt.Sprintf("has minAvailable %s for %d replicas", ma.String(), replicas)
		}
		return ""
	}
	// Status from the disruption controller: blocked although all are healthy.
	st := p.Status
	if st.ObservedGeneration > 0 && st.ExpectedPods > 0 && st.DisruptionsAllowed == 0 && st.CurrentHealthy >= st.ExpectedPods {
		return fmt.Sprintf("allows 0 disruptions with all %d pods healthy", st.CurrentHealthy)
	}
	return ""
}
