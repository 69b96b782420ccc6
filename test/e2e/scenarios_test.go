//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
)

// A scenario drives one Rollout through a decisive moment, asks the plugin
// what will happen, watches what the controller does and compares.
type scenario struct {
	name string
	run  func(t *testing.T, h *harness)
}

var scenarios = []scenario{
	{"incident-host", func(t *testing.T, h *harness) { incident(t, h, hostMode, true) }},
	{"incident-subset", func(t *testing.T, h *harness) { incident(t, h, subsetOnly, true) }},
	{"fix-host", func(t *testing.T, h *harness) { incident(t, h, hostMode, false) }},
	{"fix-subset", func(t *testing.T, h *harness) { incident(t, h, subsetOnly, false) }},
	{"minpods-over-replicas", minPodsOverReplicas},
	{"dynamic-stable-scale", dynamicStableScale},
	{"abort", abortBaseline},
}

type trafficMode int

const (
	hostMode   trafficMode = iota // canary/stable Services named in the VirtualService
	subsetOnly                    // DestinationRule subsets, no Services in the Rollout
)

// Pods in the lab start 2–5 s after creation and turn Ready 1–4 s later
// (kwok stage delays), so a ReplicaSet of 20 ramps over several seconds and
// each availability change is its own reconcile most of the time.
const podTiming = `
      annotations:
        pod-create.stage.kwok.x-k8s.io/delay: "2s"
        pod-create.stage.kwok.x-k8s.io/jitter-delay: "5s"
        pod-ready.stage.kwok.x-k8s.io/delay: "1s"
        pod-ready.stage.kwok.x-k8s.io/jitter-delay: "4s"`

type rolloutSpec struct {
	replicas, minPods int
	steps             string // YAML flow list
	mode              trafficMode
	dss               bool   // dynamicStableScale (which excludes scaleDownDelaySeconds)
	podTiming         string // pod template annotations; default podTiming
}

// rolloutYAML is the scenario's Rollout, labelled with the instance-id of
// the harness's controller version: only that version's controller
// reconciles it, as with `rollouts-controller --instance-id` in a cluster.
func (h *harness) rolloutYAML(s rolloutSpec, image string) string {
	routing := `
      canaryService: app-canary
      stableService: app-stable
      trafficRouting:
        istio:
          virtualService: {name: app, routes: [primary]}`
	if s.mode == subsetOnly {
		routing = `
      trafficRouting:
        istio:
          virtualService: {name: app, routes: [primary]}
          destinationRule: {name: app, canarySubsetName: canary, stableSubsetName: stable}`
	}
	timing := s.podTiming
	if timing == "" {
		timing = podTiming
	}
	extra := ""
	if s.minPods > 0 {
		extra += fmt.Sprintf("\n      minPodsPerReplicaSet: %d", s.minPods)
	}
	if s.dss {
		extra += "\n      dynamicStableScale: true"
	} else {
		extra += "\n      scaleDownDelaySeconds: 5"
	}
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: app
  labels: {argo-rollouts.argoproj.io/controller-instance-id: %q}
spec:
  replicas: %d
  revisionHistoryLimit: 5
  rollbackWindow: {revisions: 3}
  selector: {matchLabels: {app: app}}
  template:
    metadata:
      labels: {app: app}%s
    spec:
      containers: [{name: app, image: "registry.example/app:%s"}]
  strategy:
    canary:%s%s
      abortScaleDownDelaySeconds: 5
      steps: %s
`, h.instanceID, s.replicas, timing, image, routing, extra, s.steps)
}

func trafficObjects(mode trafficMode) string {
	if mode == subsetOnly {
		return `apiVersion: networking.istio.io/v1alpha3
kind: VirtualService
metadata: {name: app}
spec:
  hosts: [app]
  http:
  - name: primary
    route:
    - destination: {host: app, subset: stable}
      weight: 100
    - destination: {host: app, subset: canary}
      weight: 0
---
apiVersion: networking.istio.io/v1alpha3
kind: DestinationRule
metadata: {name: app}
spec:
  host: app
  subsets:
  - {name: stable, labels: {app: app}}
  - {name: canary, labels: {app: app}}
`
	}
	return `apiVersion: v1
kind: Service
metadata: {name: app-stable}
spec:
  selector: {app: app}
  ports: [{port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: app-canary}
spec:
  selector: {app: app}
  ports: [{port: 80}]
---
apiVersion: networking.istio.io/v1alpha3
kind: VirtualService
metadata: {name: app}
spec:
  hosts: [app]
  http:
  - name: primary
    route:
    - destination: {host: app-stable}
      weight: 100
    - destination: {host: app-canary}
      weight: 0
`
}

func isCanaryDest(mode trafficMode) func(map[string]interface{}) bool {
	if mode == subsetOnly {
		return func(d map[string]interface{}) bool { return d["subset"] == "canary" }
	}
	return func(d map[string]interface{}) bool { return d["host"] == "app-canary" }
}

// status reads the Rollout's status fields the scenarios wait on.
func (h *harness) status() (phase, stable, current string, index int64, abort bool) {
	u := h.get(gvrRollout, "app")
	st, _ := u.Object["status"].(map[string]interface{})
	phase, _ = st["phase"].(string)
	stable, _ = st["stableRS"].(string)
	current, _ = st["currentPodHash"].(string)
	index = -1
	if i, ok := st["currentStepIndex"]; ok {
		index = toInt(i)
	}
	abort, _ = st["abort"].(bool)
	return
}

// condition is the status of the Rollout condition of that type ("" if absent).
func (h *harness) condition(typ string) string {
	u := h.get(gvrRollout, "app")
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		cm, _ := c.(map[string]interface{})
		if cm["type"] == typ {
			s, _ := cm["status"].(string)
			return s
		}
	}
	return ""
}

// healthyAt waits until the Rollout is Healthy with every pod of hash h available.
func (h *harness) healthy(o *observer, replicas int64, timeout time.Duration) string {
	h.t.Helper()
	var hash string
	h.waitFor("a Healthy rollout", timeout, func() bool {
		phase, stable, current, _, _ := h.status()
		s := o.Now()
		hash = stable
		return phase == "Healthy" && stable == current && s.RS[stable].Available == replicas
	})
	return hash
}

func (h *harness) setImage(image string) {
	h.kubectl("-n", h.ns, "patch", "rollout", "app", "--type", "json", "-p",
		fmt.Sprintf(`[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"registry.example/app:%s"}]`, image))
}

func findingIDs(r *diagnose.Report) string {
	var ids []string
	for _, f := range r.Findings {
		ids = append(ids, f.ID)
	}
	return strings.Join(ids, ",")
}

func hasFinding(r *diagnose.Report, id string) bool {
	return strings.Contains(","+findingIDs(r)+",", ","+id+",")
}

// forecastTrace renders the plugin's forecast like weightTrace renders the
// observation: the distinct weights in order, with the canary's available
// count when each is first written.
func forecastTrace(r *diagnose.Report) string {
	var parts []string
	last := int32(-1)
	for _, f := range r.Model.Forecast {
		if f.Weight == last {
			continue
		}
		last = f.Weight
		parts = append(parts, fmt.Sprintf("%d (%d)", f.Weight, f.CanaryAvailable))
	}
	return strings.Join(parts, " → ")
}

// firstWrite is the first observed moment the canary weight became w, and
// the canary ReplicaSet's available count then; ok is false if never.
func firstWrite(ss []sample, hash string, w int64) (avail int64, ok bool) {
	for _, s := range ss {
		if s.CanaryWeight == w {
			return s.RS[hash].Available, true
		}
	}
	return 0, false
}

// point is a canary weight written while the canary had avail pods.
type point struct {
	weight, avail int64
}

// maxOnFewest is the highest weight among points with fewer than full pods,
// and the fewest available pods that weight was on.
func maxOnFewest(ps []point, full int64) (w, onPods int64) {
	onPods = full
	for _, p := range ps {
		if p.avail >= full {
			continue
		}
		if p.weight > w {
			w, onPods = p.weight, p.avail
		} else if p.weight == w && w > 0 && p.avail < onPods {
			onPods = p.avail
		}
	}
	return w, onPods
}

// maxWeightBeforeFull is the highest canary weight observed while the canary
// ReplicaSet had fewer than full available pods, and the fewest available
// pods that carried it.
func maxWeightBeforeFull(ss []sample, hash string, full int64) (w, onPods int64) {
	var ps []point
	for _, s := range ss {
		ps = append(ps, point{s.CanaryWeight, s.RS[hash].Available})
	}
	return maxOnFewest(ps, full)
}

// predictedMaxBeforeFull is, from the plugin's forecast, the highest weight
// the controller will write while the canary has fewer than full available
// pods, and the fewest available pods it will be written on.
func predictedMaxBeforeFull(r *diagnose.Report, full int32) (w, onPods int32) {
	var ps []point
	for _, f := range r.Model.Forecast {
		if !f.Promotes && !f.Errored {
			ps = append(ps, point{int64(f.Weight), int64(f.CanaryAvailable)})
		}
	}
	a, b := maxOnFewest(ps, int64(full))
	return int32(a), int32(b)
}

// aThenB deploys revision A, updates to B and waits until B is stable and
// A's ReplicaSet is at 0: the state before seed 000's revert.
func (h *harness) aThenB(o *observer, spec rolloutSpec, timeout time.Duration) (hashA, hashB string) {
	h.t.Helper()
	h.apply(trafficObjects(spec.mode))
	h.apply(h.rolloutYAML(spec, "a"))
	hashA = h.healthy(o, int64(spec.replicas), timeout)
	h.setImage("b")
	h.waitFor("revision B promoted and A scaled to 0", 2*timeout, func() bool {
		phase, stable, _, _, _ := h.status()
		a := o.Now().RS[hashA]
		return phase == "Healthy" && stable != hashA && a.Spec == 0 && a.Available == 0
	})
	_, hashB, _, _, _ = h.status()
	return hashA, hashB
}

// incident is seed 000: a Rollout of 20 with rollbackWindow.revisions 3 and
// minPodsPerReplicaSet 2 moves from revision A to B, then its template is
// reverted to A, whose ReplicaSet is at 0. With a final setWeight 100 the
// controller sends the canary weight 100 while A is still coming up; without
// it (the fix) the weight stays at the last rung, 5.
func incident(t *testing.T, h *harness, mode trafficMode, final100 bool) {
	steps := "[{setWeight: 5}, {pause: {duration: 10s}}, {setWeight: 100}]"
	if !final100 {
		steps = "[{setWeight: 5}, {pause: {duration: 10s}}]"
	}
	const replicas = 20
	spec := rolloutSpec{replicas: replicas, minPods: 2, steps: steps, mode: mode}
	o := h.observe(isCanaryDest(mode))
	hashA, _ := h.aThenB(o, spec, 90*time.Second)

	// The revert. Diagnose as soon as the controller has reacted (A scaled
	// up from 0), before A's first pod can be available (pods take >= 3 s).
	h.setImage("a")
	h.waitFor("the controller to scale A up", 30*time.Second, func() bool { return o.Now().RS[hashA].Spec > 0 })
	rep := h.diagnose("app")
	if !rep.State.RollbackBack {
		t.Errorf("predicted no rollback within the window; the revert to the older A is one (window: %s)", rep.Model.Window.Why)
	}
	predW, predPods := predictedMaxBeforeFull(rep, replicas)

	// In host mode the canary Service's EndpointSlices are what the weight
	// lands on: run the pods checks through the ramp (RD325 compares the
	// weight with the ready endpoints the EndpointSlice controller wrote).
	// In-process and in a loop of its own, so that a loaded machine still
	// samples the few seconds between the flip and a full canary.
	var share *diagnose.Finding
	shareSeen := ""
	stopPods := make(chan struct{})
	podsDone := make(chan struct{})
	go func() {
		defer close(podsDone)
		for mode == hostMode {
			select {
			case <-stopPods:
				return
			default:
			}
			pr, err := h.podsInProcess("app")
			if err != nil {
				continue
			}
			time.Sleep(50 * time.Millisecond) // ~10 samples a second, without flooding the API server
			if f := podFinding(pr, "RD325"); f != nil {
				share = f
				c := serviceRow(pr, "app-canary")
				shareSeen = fmt.Sprintf("canary Service at %d%% with %d ready endpoints", derefWeight(c.Weight), c.Ready)
				return
			}
		}
	}()
	h.waitFor("A promoted back to stable", 150*time.Second, func() bool {
		phase, stable, _, _, _ := h.status()
		return phase == "Healthy" && stable == hashA && o.Now().RS[hashA].Available == replicas
	})
	close(stopPods)
	<-podsDone
	if mode == hostMode {
		h.record("pods during a rollback (host mode): weight against ready canary endpoints",
			map[bool]string{true: "RD325 while 100% sits on fewer ready endpoints than half the replicas (critical below a quarter)", false: "no RD325: 5% on the first endpoints is each pod's share"}[final100],
			map[bool]string{true: "first poll that saw it: " + shareSeen + " — " + msgOf(share), false: "not raised"}[share != nil])
		// How early the poll lands in the ramp decides the count it sees
		// (and so warning or critical); that it is raised is the contract.
		if final100 && share == nil {
			t.Errorf("RD325 was not raised while 100%% sat on the first canary endpoints")
		}
		if !final100 && share != nil {
			t.Errorf("the fix raised RD325: %s (%s)", share.Message, shareSeen)
		}
	}
	ss := o.Samples()
	// Only what happened after the revert matters.
	for i := len(ss) - 1; i >= 0; i-- {
		if ss[i].RS[hashA].Spec == 0 {
			ss = ss[i+1:]
			break
		}
	}
	obsW, obsPods := maxWeightBeforeFull(ss, hashA, replicas)

	name := map[bool]string{true: "incident (final setWeight 100)", false: "fix (no final 100)"}[final100]
	name += map[trafficMode]string{hostMode: ", Istio host", subsetOnly: ", Istio subset-only"}[mode]
	h.record(name,
		fmt.Sprintf("max %d%% on ≥%d of %d pods; %s; findings %s", predW, predPods, replicas, forecastTrace(rep), findingIDs(rep)),
		fmt.Sprintf("max %d%% on %d of %d pods; %s", obsW, obsPods, replicas, weightTrace(ss, hashA)))

	if obsW != int64(predW) {
		t.Errorf("predicted the highest weight before A is full to be %d%%, observed %d%%\npredicted %s\nobserved  %s",
			predW, obsW, forecastTrace(rep), weightTrace(ss, hashA))
	}
	// The controller can see several pods turn available in one pass, never
	// fewer than the forecast: the weight must not arrive earlier than predicted.
	if predW > 0 && obsPods < int64(predPods) {
		t.Errorf("predicted %d%% first on %d available pods, observed it on %d", predW, predPods, obsPods)
	}
	if final100 {
		if predW != 100 || !(hasFinding(rep, "RD101") || hasFinding(rep, "RD102")) {
			t.Errorf("predicted max %d%% with findings %s; want 100%% and an over-capacity finding (RD101/RD102)", predW, findingIDs(rep))
		}
		if obsPods >= replicas {
			t.Errorf("observed no exposure: 100%% only once A was full")
		}
	} else if hasFinding(rep, "RD101") || hasFinding(rep, "RD102") {
		t.Errorf("the fix was diagnosed as over capacity: %s", findingIDs(rep))
	}
}

// settled waits until nothing observed has changed for quiet and every
// ReplicaSet has all its pods available, so a diagnosis taken now describes a
// state the controller is holding. Quiet alone is not enough: a pod kwok has
// not yet made Ready (up to 12 s after it is created, more on a busy machine)
// leaves every watched object unchanged while the controller waits for it.
// Under the load of five versions' scenarios minpods-over-replicas once
// diagnosed v1.10.2 so, 14 s after the update, while its canary pod was
// still starting: the Rollout reached its 2 s pause only afterwards.
func (h *harness) settled(o *observer, quiet, timeout time.Duration) {
	h.t.Helper()
	h.waitFor(fmt.Sprintf("%s without changes, every pod available", quiet), timeout, func() bool {
		ss := o.Samples()
		if len(ss) == 0 || time.Since(ss[len(ss)-1].At) <= quiet {
			return false
		}
		for _, rs := range o.Now().RS {
			if rs.Available != rs.Spec {
				return false
			}
		}
		return true
	})
}

// steady compares the plugin's next-pass prediction with the state the
// controller holds: the weight in the VirtualService and the sizes of the
// canary and stable ReplicaSets.
func (h *harness) steady(name string, o *observer, rep *diagnose.Report) {
	h.t.Helper()
	s := o.Now()
	next := rep.Model.Next
	canary, stable := s.RS[s.CurrentHash], s.RS[s.StableHash]
	pred := fmt.Sprintf("weight %d, canary %d, stable %d; findings %s", next.Weight, next.CanaryTarget, next.StableTarget, findingIDs(rep))
	obs := fmt.Sprintf("weight %d, canary %d, stable %d", s.CanaryWeight, canary.Spec, stable.Spec)
	h.record(name, pred, obs)
	if int64(next.Weight) != s.CanaryWeight || int64(next.CanaryTarget) != canary.Spec || int64(next.StableTarget) != stable.Spec {
		h.t.Errorf("%s: predicted %s; observed %s", name, pred, obs)
	}
}

// minPodsOverReplicas: minPodsPerReplicaSet 2 with replicas 1. Before v1.10
// the canary is sized to 2 and the Healthy condition can never become True
// (the phase may read Healthy if the canary gets promoted); v1.10 caps minPods
// at replicas.
func minPodsOverReplicas(t *testing.T, h *harness) {
	spec := rolloutSpec{replicas: 1, minPods: 2, steps: "[{setWeight: 50}, {pause: {duration: 2s}}]", mode: hostMode}
	o := h.observe(isCanaryDest(hostMode))
	h.apply(trafficObjects(hostMode))
	h.apply(h.rolloutYAML(spec, "a"))
	h.settled(o, 8*time.Second, 60*time.Second)
	h.setImage("b")
	h.waitFor("the update to be observed", 20*time.Second, func() bool {
		_, stable, current, _, _ := h.status()
		return current != "" && current != stable
	})
	h.settled(o, 10*time.Second, 90*time.Second)
	rep := h.diagnose("app")
	phase, _, _, _, _ := h.status()
	healthy := h.condition("Healthy")
	if healthy == "" {
		healthy = "absent"
	}
	neverHealthy := false
	for _, f := range rep.Findings {
		if f.ID == "RD203" && f.Severity == diagnose.Critical {
			neverHealthy = true
		}
	}
	h.record("minPodsPerReplicaSet 2 > replicas 1",
		map[bool]string{true: "Healthy condition never True (RD203 critical)", false: "Healthy (minPods capped at replicas)"}[neverHealthy],
		fmt.Sprintf("Healthy condition %s, phase %s", healthy, phase))
	if neverHealthy == (healthy == "True") {
		t.Errorf("predicted never-Healthy=%v; observed Healthy condition %q (phase %s) after the rollout settled\n%s", neverHealthy, healthy, phase, h.dump())
	}
}

// dynamicStableScale: paused at setWeight 30 of 10 replicas with
// dynamicStableScale; the stable is scaled down as the canary scales up.
func dynamicStableScale(t *testing.T, h *harness) {
	spec := rolloutSpec{replicas: 10, steps: "[{setWeight: 30}, {pause: {}}]", mode: hostMode, dss: true}
	o := h.observe(isCanaryDest(hostMode))
	h.apply(trafficObjects(hostMode))
	h.apply(h.rolloutYAML(spec, "a"))
	h.healthy(o, 10, 90*time.Second)
	h.setImage("b")
	h.waitFor("the pause at setWeight 30", 90*time.Second, func() bool {
		phase, _, _, idx, _ := h.status()
		return phase == "Paused" && idx == 1
	})
	h.settled(o, 6*time.Second, 60*time.Second)
	h.steady("dynamicStableScale, paused at setWeight 30 of 10", o, h.diagnose("app"))
}

// abortBaseline: aborted at setWeight 20 (status.abort, as `kubectl argo
// rollouts abort` sets it). Once settled, the prediction of the next pass
// must be what the controller holds: weight 0, the canary scaled down after
// abortScaleDownDelaySeconds, the stable at full size.
func abortBaseline(t *testing.T, h *harness) {
	o := h.abortedRollout()
	rep := h.diagnose("app")
	if !hasFinding(rep, "RD104") {
		t.Errorf("aborted rollout diagnosed without RD104: %s", findingIDs(rep))
	}
	h.steady("aborted at setWeight 20 of 10", o, rep)
}
