package diagnose

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// Sources the pod checks come from (seed documents and the incident library).
const (
	srcIL0188 = "IL-0188 (EKS: ALB target not healthy when the pod turned Ready; ~30 s of 502 on every rolling update)"
	srcIL0178 = "IL-0178 (EKS: containers exited before endpoint removal on HPA scale-in; 502; conntrack sent established connections to deleted pods in instance mode)"
	srcIL0062 = "IL-0062 (GKE Ingress: pods refused new connections on SIGTERM while the Ingress still sent to them; intermittent 502)"
	srcSeed3  = "seed 003 (draining a pod behind an external load balancer)"
	srcSeed4  = "seed 004 (readiness hides a broken node: Ready=True on a powered-off node)"
)

// podRules are the checks on the pod template, the running pods and their
// traffic path. Static ones read only the template and the objects beside
// it, so lint runs them too; live ones need running pods.
var podRules = []*Rule{
	{
		ID: "RD301", Name: "readiness-probe-missing", Severity: Warning, Scope: Static, Area: AreaPods,
		Title: "A serving container has no readiness probe",
		Why: "Without a readiness probe a pod is Ready as soon as its containers start. Every rollout and scale-out then sends requests to pods that are not listening yet: " +
			"connection refused or 502 for as long as the application takes to start, and a canary counts as available before it can serve. " +
			"The controller's availability checks (and the traffic weight a Rollout moves) all rest on Ready.",
		Remedy:  "Add a readinessProbe on an endpoint that answers \"can this pod take traffic now\" (not the liveness endpoint, RD302).",
		Sources: []string{"BRIEF §3", srcSeed3 + " §3-3"},
		check:   checkReadinessMissing,
	},
	{
		ID: "RD302", Name: "readiness-same-as-liveness", Severity: Warning, Scope: Static, Area: AreaPods,
		Title: "The readiness probe asks the same question as the liveness probe",
		Why: "Readiness (should the Service send traffic here) and liveness (should the kubelet restart this container) answer different questions. " +
			"With the same handler, a slow dependency or overload fails both: instead of taking pods out of rotation the kubelet restarts them, often all at once. " +
			"And a graceful drain cannot fail readiness to leave the Service without also failing liveness and being killed mid-drain. " +
			"Seed 003 splits three endpoints: LB health (/health_check.html), Kubernetes readiness (/health), liveness (/live).",
		Remedy:  "Point liveness at a cheap \"process is not wedged\" endpoint that ignores dependencies and stays 200 while draining; keep readiness for \"can take traffic now\".",
		Sources: []string{srcSeed3 + " §3-3", "BRIEF §3"},
		check:   checkReadinessIsLiveness,
	},
	{
		ID: "RD303", Name: "no-prestop-behind-service", Severity: Warning, Scope: Static, Area: AreaPods,
		Title: "Pods behind a Service have no preStop delay",
		Why: "When a pod is deleted, its removal from EndpointSlices and SIGTERM happen at the same time. Load balancers, ingress controllers and kube-proxy on other nodes " +
			"learn about the removal seconds later and keep sending to a pod that has already stopped accepting: 502s and connection resets on every scale-in and every rollout. " +
			"A preStop delay keeps the pod serving until they have caught up; SIGTERM comes after it.",
		Remedy: "Add `lifecycle.preStop.sleep.seconds: N` (Kubernetes 1.30+) or an exec `sleep N` to the serving container, N ≥ the time your load balancer needs to stop sending " +
			"(LB interval × fall; at least 5 s in-cluster), and keep terminationGracePeriodSeconds ≥ preStop + drain (RD304; `kubectl rolloutdoctor pods NAME --p99 …` computes it).",
		Sources: []string{srcIL0178, srcIL0062, srcSeed3 + " §1"},
		check:   checkNoPreStop,
	},
	{
		ID: "RD304", Name: "grace-shorter-than-drain", Severity: Critical, Scope: Static, Area: AreaPods,
		Title: "terminationGracePeriodSeconds does not cover preStop plus drain",
		Why: "terminationGracePeriodSeconds is the whole budget from the start of termination to SIGKILL; the preStop hook runs inside it and the application's drain after it. " +
			"If preStop alone uses it up, the kubelet kills the container right after preStop (one extra 2 s is granted): requests in flight are cut. " +
			"With a measured long-request p99, seed 003 §3-4 gives the budget: max(DRAIN_TIMEOUT + LB_BUFFER, terminationDrainDuration) + 30 s, DRAIN_TIMEOUT = p99 × 1.2.",
		Remedy:  "Raise terminationGracePeriodSeconds to the value the grace calculator prints (`kubectl rolloutdoctor pods NAME --p99 40s --lb-interval 2s --lb-fall 2`), or shorten preStop.",
		Sources: []string{srcSeed3 + " §3-4, §4-4", srcIL0178},
		check:   checkGrace,
	},
	{
		ID: "RD305", Name: "istio-drain-exceeds-grace", Severity: Warning, Scope: Static, Area: AreaPods,
		Title: "The Istio sidecar's drain does not fit the grace period, or ends before the application's",
		Why: "On SIGTERM the istio-proxy sidecar drains for terminationDrainDuration (pod annotation proxy.istio.io/config, else the mesh default, else 5 s) and then exits. " +
			"If that is longer than terminationGracePeriodSeconds the kubelet kills Envoy mid-drain and every request still passing through it is reset. " +
			"If it is shorter than the application's drain (DRAIN_TIMEOUT), Envoy leaves first and the application's last responses have no way out.",
		Remedy:  "Set terminationDrainDuration ≥ DRAIN_TIMEOUT and terminationGracePeriodSeconds ≥ terminationDrainDuration + margin (annotation `proxy.istio.io/config: '{\"terminationDrainDuration\": \"45s\"}'`).",
		Sources: []string{srcSeed3 + " §3-4"},
		check:   checkIstioDrain,
	},
	{
		ID: "RD306", Name: "alb-ip-without-readiness-gate", Severity: Critical, Scope: Static, Area: AreaPods,
		Title: "ALB in ip target mode without the pod readiness gate",
		Why: "In ip mode the ALB sends to pod IPs and health-checks each new target from `initial`; Kubernetes knows nothing about that. A new pod turns Ready, the rolling update deletes an old one, " +
			"and for ~30 s the ALB has fewer healthy targets than Kubernetes thinks — 502s on every deploy while every pod is Ready and every dashboard is green. " +
			"With the namespace label `elbv2.k8s.aws/pod-readiness-gate-inject=enabled` the AWS Load Balancer Controller's webhook adds a readiness gate, and a pod is Ready only once its target is healthy. " +
			"The webhook acts at pod creation: pods created before the label carry no gate until they are replaced.",
		Remedy:  "`kubectl label namespace NS elbv2.k8s.aws/pod-readiness-gate-inject=enabled`, then restart the workload so every pod carries the gate; allow 30–40 s more per pod to become Ready (size HPA/replicas for it).",
		Sources: []string{srcIL0188},
		check:   checkALBGate,
	},
	{
		ID: "RD307", Name: "alb-instance-mode", Severity: Info, Scope: Static, Area: AreaPods,
		Title: "ALB in instance target mode: readiness gates cannot work",
		Why: "In instance mode the ALB's targets are nodes (NodePort), not pods: the pod readiness gate has nothing to report, and traffic passes kube-proxy's iptables and conntrack. " +
			"After a switch or scale-in, established connections can still be sent to deleted pods (IL-0178). ip mode removes the hop; a target group holds at most 1000 targets.",
		Remedy:  "Use `alb.ingress.kubernetes.io/target-type: ip` with the readiness gate (RD306) where the target count allows; otherwise keep a preStop delay covering the ALB deregistration.",
		Sources: []string{srcIL0178, srcIL0188},
		check:   checkALBInstance,
	},
	{
		ID: "RD308", Name: "lb-health-check-cluster-policy", Severity: Warning, Scope: Static, Area: AreaPods,
		Title: "A NodePort/LoadBalancer Service has externalTrafficPolicy: Cluster",
		Why: "With Cluster, kube-proxy on any node forwards the load balancer's health check (and its traffic) to any pod of the Service, on any node. " +
			"The LB asks \"is this backend alive\" and gets another pod's answer: a draining or dead pod is never taken out, and draining by failing the health check cannot work. " +
			"With Local, a node answers only for its own pods (and healthCheckNodePort reports them).",
		Remedy:  "Set `externalTrafficPolicy: Local` on Services that external load balancers health-check, and spread pods so every node the LB targets runs one (or target pods directly).",
		Sources: []string{srcSeed3 + " §3-2", "BRIEF §3"},
		check:   checkTrafficPolicy,
	},
	{
		ID: "RD309", Name: "anti-affinity-update-deadlock", Severity: Critical, Scope: Static, Area: AreaPods,
		Title: "Required pod anti-affinity leaves no room for the update's extra pods",
		Why: "With required anti-affinity at most one pod per topology domain (node) can run. A rolling update with maxUnavailable resolving to 0 must start a surge pod before removing an old one; " +
			"with replicas ≥ schedulable nodes the surge pod stays Pending and no old pod is ever removed — the update deadlocks. " +
			"maxUnavailable 25% (the default) rounds down to 0 below 4 replicas. A traffic-routed canary always adds its pods on top of a full stable, and blue-green adds a full preview.",
		Remedy:  "Use maxUnavailable: 1 (with a preStop/drain the pod removed first loses no requests), or add a node, or make the anti-affinity preferred.",
		Facts:   []upstream.Key{"df.surge-unavailable-default", "ur.unavailable-rounds-down", "ur.both-zero-unavailable-one", "uc.stable-full-no-dss", "ur.bluegreen-preview-size", "ur.bluegreen-preview-count"},
		Sources: []string{srcSeed3 + " §4-2"},
		check:   checkAntiAffinity,
	},
	{
		ID: "RD310", Name: "no-pdb", Severity: Warning, Scope: Static, Area: AreaPods,
		Title: "No PodDisruptionBudget covers the pods",
		Why: "Without a PDB a node drain, cluster upgrade or autoscaler scale-down may evict as many of these pods at once as share the drained nodes, " +
			"while a rollout may have already taken some out of service.",
		Remedy:  "Add a PodDisruptionBudget with `maxUnavailable: 1` (or a percentage) selecting the pods.",
		Sources: []string{"BRIEF §3"},
		check:   checkNoPDB,
	},
	{
		ID: "RD311", Name: "pdb-blocks-eviction", Severity: Warning, Scope: Static, Area: AreaPods,
		Title: "The PodDisruptionBudget can never allow an eviction",
		Why: "maxUnavailable: 0, or minAvailable equal to (or above) the replicas, lets no pod be evicted even when all are healthy. " +
			"Node drains hang until someone deletes the pods by hand, and cluster upgrades stall on these nodes.",
		Remedy:  "Use `maxUnavailable: 1` (or minAvailable below replicas); the PDB should limit disruption, not forbid it.",
		Sources: []string{"BRIEF §3"},
		check:   checkPDBBlocks,
	},
	{
		ID: "RD321", Name: "readiness-gate-unsatisfied", Severity: Warning, Scope: Live, Area: AreaPods,
		Title: "Running pods wait on a readiness gate",
		Why: "A readiness gate keeps a pod out of Ready (and out of Service endpoints) until some controller sets the named condition. " +
			"For `target-health.elbv2.k8s.aws/…` that is the AWS Load Balancer Controller once the ALB target is healthy, normally 30–40 s after the containers are ready. " +
			"A gate that stays unset means the ALB health check fails or the controller is not running: the rollout waits, the pods take no traffic.",
		Remedy:  "Check the target group's health in AWS and the aws-load-balancer-controller logs; for other gates, the controller that owns the condition.",
		Sources: []string{srcIL0188},
		check:   checkGatesUnsatisfied,
	},
	{
		ID: "RD322", Name: "ready-on-unresponsive-node", Severity: Critical, Scope: Live, Area: AreaPods,
		Title: "Pods report Ready on a node that stopped reporting",
		Why: "A pod's Ready condition is written by the kubelet on its node. When the node dies, nobody writes it any more and it stays True: the pods stay in the Service's endpoints and keep receiving traffic " +
			"(timeouts, connection errors) while dashboards show them Ready. The node lifecycle controller marks the node Unknown and its pods not Ready only after node-monitor-grace-period " +
			"(50 s by default in current Kubernetes, 40 s in older releases; in the rolloutdoctor lab on 1.34 the pods were marked ~45 s after the node died). Until then the node's Lease in kube-node-lease, renewed every ~10 s, is the signal: its age shows the kubelet is gone.",
		Remedy:  "Check the node (`kubectl describe node`, cloud console). If it is gone, cordon and drain it or delete the pods so the ReplicaSet replaces them elsewhere; do not trust Ready until the node reports again.",
		Sources: []string{srcSeed4, "BRIEF §3"},
		check:   checkReadyOnDeadNode,
	},
	{
		ID: "RD323", Name: "endpoint-readiness-mismatch", Severity: Warning, Scope: Live, Area: AreaPods,
		Title: "EndpointSlices disagree with pod readiness",
		Why: "The Service sends traffic to the endpoints the EndpointSlice controller marked ready, not to the pods that are Ready. They agree within a second or two; a lasting disagreement means " +
			"a Ready pod that gets no traffic (selector, port or slice-controller trouble) or an unready pod that still does.",
		Remedy:  "Compare `kubectl get endpointslices -l kubernetes.io/service-name=SVC -o yaml` with the pods; check kube-controller-manager's endpointslice controller and the Service's selector and targetPort.",
		Sources: []string{srcSeed4, "BRIEF §3"},
		check:   checkEndpointMismatch,
	},
	{
		ID: "RD324", Name: "service-without-ready-endpoints", Severity: Critical, Scope: Live, Area: AreaPods,
		Title: "A Service in the traffic path has no ready endpoints",
		Why: "Every request routed to this Service fails: ingress controllers and meshes answer 503 (no healthy upstream), kube-proxy rejects the connection. " +
			"Terminating endpoints that are still serving are used only as a last resort by kube-proxy, not by most ingress controllers.",
		Remedy:  "Find why no selected pod is Ready (`kubectl rolloutdoctor pods NAME`, pod events); move traffic off this Service (for a Rollout: `kubectl rolloutdoctor escape NAME`).",
		Sources: []string{srcSeed4, "BRIEF §3"},
		check:   checkNoReadyEndpoints,
	},
	{
		ID: "RD325", Name: "endpoint-traffic-share", Severity: Warning, Scope: Live, Area: AreaPods,
		Title: "Few ready endpoints carry a large share of traffic",
		Why: "The traffic weight goes to the Service's ready endpoints, however few. Each endpoint then takes weight ÷ ready endpoints of all traffic; at full size each pod takes 100% ÷ replicas. " +
			"When one side has far fewer ready endpoints than its weight assumes, those pods are overloaded while the other side idles (seed 000's incident: 100% on 1–2 of 20 pods).",
		Remedy:  "Lower the weight to what the ready endpoints can carry (for a Rollout: `kubectl rolloutdoctor escape NAME`), or wait until enough pods are ready before moving traffic.",
		Facts:   []upstream.Key{"tr.stable-check-call"},
		Sources: []string{"seed 000 §1", "BRIEF §3"},
		check:   checkEndpointShare,
	},
	{
		ID: "RD326", Name: "pod-stuck-terminating", Severity: Warning, Scope: Live, Area: AreaPods,
		Title: "Pods are still Terminating after their grace period ended",
		Why: "A deleted pod's deletionTimestamp is the moment its grace period ends; the kubelet then kills the containers and removes the pod. " +
			"A pod still there well after it is one the kubelet cannot finish: the node is down, or tearing down its sandbox fails (a CNI that cannot release the IP — IL-0139). " +
			"It keeps its IP and, on a dead node, its endpoint may still be served; the ReplicaSet has already replaced it, so the count of pods looks higher than what serves.",
		Remedy:  "Check the node and the kubelet/CNI logs for the pod's sandbox. If the node is gone, `kubectl delete pod --force --grace-period=0` once you are sure its containers no longer run.",
		Sources: []string{"IL-0139 (GKE with Calico: pods stuck Terminating after an upgrade)"},
		check:   checkStuckTerminating,
	},
}

// --- static checks ---

func checkReadinessMissing(c *Context, r *Rule) []Finding {
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
	f := r.finding(fmt.Sprintf("container %s has no readiness probe: each new pod takes traffic the moment it starts, before it listens — connection refused/502 during every rollout and scale-out (BRIEF §3)", strings.Join(names, ", ")))
	for _, n := range names {
		f.Evidence = append(f.Evidence, ev(w.Obj(), "spec.template.spec.containers["+n+"].readinessProbe", "absent"))
	}
	return []Finding{f}
}

func checkReadinessIsLiveness(c *Context, r *Rule) []Finding {
	w := c.W
	var out []Finding
	for _, ct := range appContainers(&w.Template.Spec) {
		if ct.ReadinessProbe == nil || ct.LivenessProbe == nil {
			continue
		}
		rk, lk := handlerKey(ct, ct.ReadinessProbe), handlerKey(ct, ct.LivenessProbe)
		if rk == "" || rk != lk {
			continue
		}
		f := r.finding(fmt.Sprintf("container %s: readiness and liveness both probe %s — a slow dependency restarts pods instead of taking them out of rotation, and a drain cannot fail readiness without being killed (seed 003 §3-3)", ct.Name, rk))
		f.Evidence = []Evidence{ev(w.Obj(), "spec.template.spec.containers["+ct.Name+"].readinessProbe", rk), ev(w.Obj(), "spec.template.spec.containers["+ct.Name+"].livenessProbe", lk)}
		out = append(out, f)
	}
	return out
}

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

func checkNoPreStop(c *Context, r *Rule) []Finding {
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
	f := r.finding(fmt.Sprintf("container %s behind %s has no preStop: on every scale-in and rollout the pod gets SIGTERM while load balancers still send to it — 502s and resets for the seconds endpoint removal takes to propagate (IL-0178, IL-0062)",
		strings.Join(without, ", "), path))
	for _, n := range without {
		f.Evidence = append(f.Evidence, ev(w.Obj(), "spec.template.spec.containers["+n+"].lifecycle.preStop", "absent"))
	}
	f.Evidence = append(f.Evidence, ev(w.Obj(), "traffic path", path))
	return []Finding{f}
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

// GraceFor runs the calculator with the workload's Istio drain.
func GraceFor(w *snapshot.Workload, in GraceInput) Grace {
	if ok, _ := istioSidecar(w); ok {
		in.IstioDrain, _ = istioDrain(w)
	}
	return CalcGrace(in)
}

func checkGrace(c *Context, r *Rule) []Finding {
	w := c.W
	grace := graceSeconds(&w.Template.Spec)
	pre, name, known := preStopMax(w)
	graceEv := ev(w.Obj(), "spec.template.spec.terminationGracePeriodSeconds", fmt.Sprintf("%d s", grace))
	if w.Template.Spec.TerminationGracePeriodSeconds == nil {
		graceEv.Value += " (default)"
	}
	if known && pre >= float64(grace) {
		f := r.finding(fmt.Sprintf("preStop sleeps %g s in container %s but terminationGracePeriodSeconds is %d s: the kubelet kills the container right after preStop (+2 s), so the application never gets time to finish in-flight requests — resets/502 at every pod deletion (IL-0178; seed 003 §3-4)", pre, name, grace))
		f.Evidence = []Evidence{ev(w.Obj(), "spec.template.spec.containers["+name+"].lifecycle.preStop", fmt.Sprintf("%g s", pre)), graceEv}
		return []Finding{f}
	}
	if c.Pods.P99 <= 0 {
		return nil
	}
	g := GraceFor(w, c.Pods)
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
	after := fmt.Sprintf("after the %g s preStop the application has %g s", pre, float64(grace)-pre)
	if pre == 0 {
		after = fmt.Sprintf("the application has %d s from SIGTERM", grace)
	}
	f := r.finding(fmt.Sprintf("terminationGracePeriodSeconds %d s is %d s short of the %d s the drain needs (p99 %d s → %s + margin %d s): %s before SIGKILL, so requests longer than that are cut at every pod deletion (seed 003 §3-4)",
		grace, need-grace, need, g.P99, budget, g.Margin, after))
	f.Severity = Warning
	f.Evidence = []Evidence{graceEv, ev("input", "--p99", fmt.Sprintf("%d s", g.P99))}
	if known && name != "" {
		f.Evidence = append(f.Evidence, ev(w.Obj(), "spec.template.spec.containers["+name+"].lifecycle.preStop", fmt.Sprintf("%g s", pre)))
	}
	return []Finding{f}
}

func checkIstioDrain(c *Context, r *Rule) []Finding {
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
	if d > time.Duration(grace)*time.Second {
		f := r.finding(fmt.Sprintf("the istio-proxy sidecar drains for %s but terminationGracePeriodSeconds is %d s: Envoy is killed mid-drain and requests still passing through it are reset at every pod deletion (seed 003 §3-4)", d, grace))
		f.Evidence = []Evidence{dEv, gEv, sEv}
		return []Finding{f}
	}
	if c.Pods.P99 > 0 {
		g := CalcGrace(c.Pods)
		if d < time.Duration(g.DrainTimeout)*time.Second {
			f := r.finding(fmt.Sprintf("the istio-proxy sidecar drains for %s, less than DRAIN_TIMEOUT %d s (p99 %d s × 1.2): Envoy exits before the application's long requests finish and their responses are lost (seed 003 §3-4 step 4)", d, g.DrainTimeout, g.P99))
			f.Evidence = []Evidence{dEv, ev("input", "--p99", fmt.Sprintf("%d s", g.P99)), sEv}
			return []Finding{f}
		}
	}
	return nil
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

func checkALBGate(c *Context, r *Rule) []Finding {
	w := c.W
	var ip []string
	var evs []Evidence
	albBackends(w, func(ing, svc, t, from string) {
		if t == "ip" {
			ip = append(ip, "Ingress "+ing+" → Service "+svc)
			evs = append(evs, ev("Ingress "+w.Namespace+"/"+ing, "target-type for Service "+svc, t+" ("+from+")"))
		}
	})
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
		f := r.finding(fmt.Sprintf("%s uses ALB ip targets; namespace %s is not in the input, so its %s label cannot be checked: without it every rolling update serves 502s for ~30 s (IL-0188)", strings.Join(ip, ", "), w.Namespace, snapshot.ALBGateLabel))
		f.Severity = Info
		f.Evidence = evs
		return []Finding{f}
	case !labelled && (ns != nil || len(noGate) > 0):
		msg := fmt.Sprintf("%s uses ALB ip targets but namespace %s lacks %s=enabled: pods turn Ready before the ALB marks them healthy, old pods are deleted, and every rolling update serves 502s for ~30 s while all pods look Ready (IL-0188)", strings.Join(ip, ", "), w.Namespace, snapshot.ALBGateLabel)
		f := r.finding(msg)
		if ns != nil {
			f.Evidence = append(evs, ev("Namespace "+ns.Name, "metadata.labels["+snapshot.ALBGateLabel+"]", valueOr(ns.Labels[snapshot.ALBGateLabel], "absent")))
		} else {
			f.Evidence = evs
		}
		if len(noGate) > 0 {
			f.Evidence = append(f.Evidence, ev(w.Obj(), "pods without a target-health readiness gate", fmt.Sprintf("%d of %d", len(noGate), len(w.Pods))))
		}
		return []Finding{f}
	case labelled && len(noGate) > 0:
		f := r.finding(fmt.Sprintf("namespace %s has %s=enabled but %d of %d pods carry no ALB readiness gate (created before the label, or before a TargetGroupBinding matched them): those pods can turn Ready before their ALB target is healthy", w.Namespace, snapshot.ALBGateLabel, len(noGate), len(w.Pods)))
		f.Severity = Warning
		f.Remediation = "Restart the workload (`kubectl argo rollouts restart` / `kubectl rollout restart`) so the webhook injects the gate into every pod."
		f.Evidence = append(evs, ev(w.Obj(), "pods without the gate", strings.Join(firstN(noGate, 5), ", ")))
		return []Finding{f}
	}
	return nil
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

func checkALBInstance(c *Context, r *Rule) []Finding {
	w := c.W
	var inst []string
	var evs []Evidence
	albBackends(w, func(ing, svc, t, from string) {
		if t == "instance" {
			inst = append(inst, "Ingress "+ing+" → Service "+svc)
			evs = append(evs, ev("Ingress "+w.Namespace+"/"+ing, "target-type for Service "+svc, t+" ("+from+")"))
		}
	})
	if len(inst) == 0 {
		return nil
	}
	msg := fmt.Sprintf("%s uses ALB instance targets: the ALB targets nodes, so readiness gates cannot tie pod readiness to ALB health, and after a switch or scale-in established connections can reach deleted pods through conntrack (IL-0178)", strings.Join(inst, ", "))
	if ns := w.NamespaceObj; ns != nil && ns.Labels[snapshot.ALBGateLabel] == "enabled" {
		msg += fmt.Sprintf("; namespace %s has %s=enabled, which does nothing for instance targets", ns.Name, snapshot.ALBGateLabel)
	}
	f := r.finding(msg)
	f.Evidence = evs
	return []Finding{f}
}

func checkTrafficPolicy(c *Context, r *Rule) []Finding {
	var out []Finding
	for _, s := range c.W.Services {
		if s.Spec.Type != corev1.ServiceTypeNodePort && s.Spec.Type != corev1.ServiceTypeLoadBalancer {
			continue
		}
		if s.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal {
			continue
		}
		// An NLB with ip targets sends to pods directly; the policy does not apply.
		if s.Annotations["service.beta.kubernetes.io/aws-load-balancer-nlb-target-type"] == "ip" || s.Annotations["service.beta.kubernetes.io/aws-load-balancer-type"] == "nlb-ip" {
			continue
		}
		pol := string(s.Spec.ExternalTrafficPolicy)
		if pol == "" {
			pol = "Cluster (default)"
		}
		f := r.finding(fmt.Sprintf("Service %s is %s with externalTrafficPolicy %s: a load balancer's health check on node:port is answered by whichever pod kube-proxy picks, on any node, so a draining or dead pod is never taken out of the pool (seed 003 §3-2)", s.Name, s.Spec.Type, pol))
		f.Evidence = []Evidence{ev("Service "+s.Namespace+"/"+s.Name, "spec.externalTrafficPolicy", pol), ev("Service "+s.Namespace+"/"+s.Name, "spec.type", s.Spec.Type)}
		out = append(out, f)
	}
	return out
}

func checkAntiAffinity(c *Context, r *Rule) []Finding {
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
		surge, unav := scaled(w.MaxSurge, w.MaxUnavailable, w.Replicas)
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
		f := r.finding(fmt.Sprintf("required anti-affinity on %s and %s: on a cluster with fewer than %d schedulable %s domains the update deadlocks (new pods Pending, old pods never removed; seed 003 §4-2)", key, why, w.Replicas+extra, key))
		f.Severity = Warning
		f.Evidence = []Evidence{aEv, rEv}
		f.Cites = cites
		return []Finding{f}
	}
	domains, nodes := schedulableDomains(w, key)
	if w.Replicas+extra <= int32(domains) {
		return nil
	}
	f := r.finding(fmt.Sprintf("required anti-affinity on %s with %d replicas and only %d schedulable %s domains (%d nodes): %s, and it can never schedule — the next update stays Pending and never finishes (seed 003 §4-2)", key, w.Replicas, domains, key, nodes, why))
	f.Evidence = []Evidence{aEv, rEv, ev("cluster", "schedulable domains for "+key+" (Ready, not cordoned, nodeSelector and taints honoured)", domains)}
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
	return []Finding{f}
}

func intOrDefault(v *intstr.IntOrString) string {
	if v == nil {
		return "25% (default)"
	}
	return v.String()
}

func checkNoPDB(c *Context, r *Rule) []Finding {
	w := c.W
	if len(w.PDBs) > 0 || w.Replicas < 2 || !w.PDBsRead {
		return nil
	}
	where := ""
	if w.Offline {
		where = " in the input"
	}
	f := r.finding(fmt.Sprintf("no PodDisruptionBudget%s selects the %d pods: a node drain or cluster upgrade can evict every pod on the drained nodes at once, even mid-rollout (BRIEF §3)", where, w.Replicas))
	f.Evidence = []Evidence{ev(w.Obj(), "PodDisruptionBudgets selecting spec.template.metadata.labels", 0)}
	return []Finding{f}
}

func checkPDBBlocks(c *Context, r *Rule) []Finding {
	w := c.W
	var out []Finding
	for _, p := range w.PDBs {
		why := pdbBlocks(p, w.Replicas)
		if why == "" {
			continue
		}
		f := r.finding(fmt.Sprintf("PodDisruptionBudget %s %s: node drains and upgrades hang on these pods until someone deletes them by hand (BRIEF §3)", p.Name, why))
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

// --- live checks ---

func checkGatesUnsatisfied(c *Context, r *Rule) []Finding {
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
	var out []Finding
	for _, g := range gates {
		s := byGate[corev1.PodConditionType(g)]
		msg := fmt.Sprintf("%d running pod(s) wait on readiness gate %s: they take no traffic until it is set", len(s.pods), g)
		if strings.HasPrefix(g, snapshot.ALBGateCondPrefix) {
			msg += " by the AWS Load Balancer Controller once the ALB target is healthy (IL-0188)"
		}
		f := r.finding(msg)
		if s.stuck == 0 {
			f.Severity = Info
			f.Message += " (containers ready for under a minute: usually normal)"
		} else {
			f.Message += fmt.Sprintf("; %d have had ready containers for over a minute — the gate is stuck", s.stuck)
		}
		f.Evidence = []Evidence{ev(w.Obj(), "pods with status.conditions["+g+"] not True", strings.Join(firstN(s.pods, 5), ", "))}
		out = append(out, f)
	}
	return out
}

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

func boolOr(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

// readyEndpoints counts a Service's ready endpoints.
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

func leaseAge(w *snapshot.Workload, node string) (time.Duration, int32, bool) {
	l := w.NodeLeases[node]
	if l == nil || l.Spec.RenewTime == nil {
		return 0, 0, false
	}
	d := int32(40)
	if l.Spec.LeaseDurationSeconds != nil {
		d = *l.Spec.LeaseDurationSeconds
	}
	return w.Now.Sub(l.Spec.RenewTime.Time), d, true
}

// leaseStale: the kubelet renews its Lease every quarter of its duration
// (10 s of 40 s); older than half the duration means two renewals missed.
func leaseStale(age time.Duration, durSeconds int32) bool {
	return age > time.Duration(durSeconds)*time.Second/2
}

func checkReadyOnDeadNode(c *Context, r *Rule) []Finding {
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
	var out []Finding
	for _, name := range nodes {
		pods := byNode[name]
		n := w.Nodes[name]
		var why string
		sev := Critical
		var evs []Evidence
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
					sev = Warning
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
		f := r.finding(msg + " (seed 004)")
		f.Severity = sev
		f.Evidence = append(evs, ev(w.Obj(), "pods Ready=True on "+name, strings.Join(firstN(pods, 5), ", ")))
		out = append(out, f)
	}
	return out
}

// settle is how long a disagreement between a pod and its endpoint must last
// before it is not just the EndpointSlice controller catching up.
const settle = 10 * time.Second

func checkEndpointMismatch(c *Context, r *Rule) []Finding {
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
	var out []Finding
	if len(readyNoTraffic) > 0 {
		f := r.finding(fmt.Sprintf("%d Ready pod(s) are not ready endpoints of a Service that selects them, for over %s: they get no traffic and the others carry their share (seed 004)", len(readyNoTraffic), settle))
		f.Evidence = []Evidence{ev(w.Obj(), "Ready pods missing from EndpointSlices", strings.Join(firstN(readyNoTraffic, 5), ", "))}
		out = append(out, f)
	}
	if len(unreadyServed) > 0 {
		f := r.finding(fmt.Sprintf("%d pod(s) are not Ready but still ready endpoints, for over %s: requests keep going to pods that failed readiness (seed 004)", len(unreadyServed), settle))
		f.Severity = Critical
		f.Evidence = []Evidence{ev(w.Obj(), "unready pods still ready endpoints", strings.Join(firstN(unreadyServed, 5), ", "))}
		out = append(out, f)
	}
	return out
}

// selectsHash checks the Rollout's hash label in a Service selector, which
// ServiceSelects ignores for the template.
func selectsHash(svc *corev1.Service, p *corev1.Pod) bool {
	h, ok := svc.Spec.Selector[snapshot.RolloutHashLabel]
	return !ok || p.Labels[snapshot.RolloutHashLabel] == h
}

// serviceWeights returns the traffic weight each Rollout Service carries
// (canary and stable Services of a traffic-routed canary), and the maximum.
func serviceWeights(w *snapshot.Workload) (map[string]int32, int32) {
	ro := w.Rollout
	if ro == nil || ro.Spec.Strategy.Canary == nil || ro.Spec.Strategy.Canary.TrafficRouting == nil {
		return nil, 0
	}
	c := ro.Spec.Strategy.Canary
	maxW := int32(100)
	if c.TrafficRouting.MaxTrafficWeight != nil {
		maxW = *c.TrafficRouting.MaxTrafficWeight
	}
	out := map[string]int32{}
	if c.StableService == "" {
		return out, maxW
	}
	st := ro.Status.Canary.Weights
	switch {
	case st != nil:
		if c.CanaryService != "" {
			out[c.CanaryService] = st.Canary.Weight
		}
		out[c.StableService] = st.Stable.Weight
	default:
		out[c.StableService] = maxW
		if c.CanaryService != "" {
			out[c.CanaryService] = 0
		}
	}
	if c.CanaryService == c.StableService {
		out[c.StableService] = maxW
	}
	return out, maxW
}

func checkNoReadyEndpoints(c *Context, r *Rule) []Finding {
	w := c.W
	if !w.SlicesRead {
		return nil
	}
	weights, _ := serviceWeights(w)
	var out []Finding
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
		f := r.finding(msg + " (BRIEF §3)")
		f.Evidence = []Evidence{ev("Service "+s.Namespace+"/"+s.Name, "EndpointSlices ready endpoints", 0), ev("Service "+s.Namespace+"/"+s.Name, "EndpointSlices", len(slices))}
		out = append(out, f)
	}
	return out
}

func checkEndpointShare(c *Context, r *Rule) []Finding {
	w := c.W
	if !w.SlicesRead || w.Replicas == 0 {
		return nil
	}
	weights, maxW := serviceWeights(w)
	var names []string
	for n := range weights {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []Finding
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
		f := r.finding(fmt.Sprintf("Service %s carries %d%% of traffic on %d ready endpoint(s): each takes %.1f%% of all traffic, %.1f× what a pod takes at full size (%d replicas) — seed 000's incident shape",
			name, wt*100/maxW, n, float64(wt)*100/float64(maxW)/float64(n), ratio, w.Replicas))
		if ratio >= 4 {
			f.Severity = Critical
		}
		f.Evidence = []Evidence{ev(w.Obj(), "status.canary.weights → Service "+name, wt), ev("Service "+w.Namespace+"/"+name, "ready endpoints", n), ev(w.Obj(), "spec.replicas", w.Replicas)}
		f.Cites = c.cites("tr.stable-check-call")
		out = append(out, f)
	}
	return out
}

// plural writes "1 pod reports" / "3 pods report".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// overdue is how long past its deletionTimestamp a pod may linger before it
// counts as stuck: the kubelet's final kill and the API deletion take seconds.
const overdue = 30 * time.Second

func checkStuckTerminating(c *Context, r *Rule) []Finding {
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
	msg := fmt.Sprintf("%s still Terminating up to %s after the grace period ended: the kubelet cannot finish them (node down, sandbox/CNI teardown failing — IL-0139)", plural(len(stuck), "pod is", "pods are"), worst.Round(time.Second))
	if serving > 0 {
		msg += fmt.Sprintf("; %d still serving in an EndpointSlice", serving)
	}
	f := r.finding(msg)
	f.Evidence = []Evidence{ev(w.Obj(), "pods past metadata.deletionTimestamp", strings.Join(firstN(stuck, 5), ", "))}
	return []Finding{f}
}
