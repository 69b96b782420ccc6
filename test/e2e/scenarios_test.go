//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
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
	{"abort-wait", abortWait},
}

type trafficMode int

const (
	hostMode    trafficMode = iota // canary/stable Services named in the VirtualService
	subsetOnly                     // DestinationRule subsets, no Services in the Rollout
	nginxMode                      // the controller's canary Ingress beside a stable Ingress
	albMode                        // the forward action on an ALB Ingress (no AWS: verification off)
	smiMode                        // a TrafficSplit the controller creates
	traefikMode                    // a weighted TraefikService
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
	// progressDeadline is spec.progressDeadlineSeconds (0: unset, the
	// controller's 600 s, longer than any scenario waits).
	progressDeadline int
	// abortDelay is abortScaleDownDelaySeconds (0: 5 s; below 0: unset).
	abortDelay int
	// deadlineAbort is spec.progressDeadlineAbort.
	deadlineAbort bool
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
	switch s.mode {
	case subsetOnly:
		routing = `
      trafficRouting:
        istio:
          virtualService: {name: app, routes: [primary]}
          destinationRule: {name: app, canarySubsetName: canary, stableSubsetName: stable}`
	case nginxMode, albMode, smiMode, traefikMode:
		routing = `
      canaryService: app-canary
      stableService: app-stable
      trafficRouting:
        ` + map[trafficMode]string{nginxMode: "nginx: {stableIngress: web}", albMode: "alb: {ingress: web, servicePort: 80}",
			smiMode: "smi: {trafficSplitName: app}", traefikMode: "traefik: {weightedTraefikServiceName: app}"}[s.mode]
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
	abortDelay := fmt.Sprintf("\n      abortScaleDownDelaySeconds: %d", s.abortDelay)
	switch {
	case s.abortDelay == 0:
		abortDelay = "\n      abortScaleDownDelaySeconds: 5"
	case s.abortDelay < 0:
		abortDelay = ""
	}
	deadline := ""
	if s.progressDeadline > 0 {
		deadline = fmt.Sprintf("\n  progressDeadlineSeconds: %d", s.progressDeadline)
	}
	if s.deadlineAbort {
		deadline += "\n  progressDeadlineAbort: true"
	}
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: app
  labels: {argo-rollouts.argoproj.io/controller-instance-id: %q}
spec:
  replicas: %d%s
  revisionHistoryLimit: 5
  rollbackWindow: {revisions: 3}
  selector: {matchLabels: {app: app}}
  template:
    metadata:
      labels: {app: app}%s
    spec:
      containers: [{name: app, image: "registry.example/app:%s"}]
  strategy:
    canary:%s%s%s
      steps: %s
`, h.instanceID, s.replicas, deadline, timing, image, routing, extra, abortDelay, s.steps)
}

// services are Services of the names given, each selecting the scenario's
// pods (app: app) on port 80, as a person writes them: without the hash,
// which the controller adds.
func services(names ...string) string {
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteString("---\n")
		}
		fmt.Fprintf(&b, "apiVersion: v1\nkind: Service\nmetadata: {name: %s}\nspec:\n  selector: {app: app}\n  ports: [{port: 80}]\n", n)
	}
	return b.String()
}

// canaryStableServices are the canary and stable Services every traffic
// mode's Rollout names.
var canaryStableServices = services("app-stable", "app-canary")

func (h *harness) trafficObjects(mode trafficMode) string {
	if r := routerObjects(mode, h.version); r != "" {
		return r
	}
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
	return canaryStableServices + `---
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
// revisionAHealthy waits until the first revision is Healthy and stable.
func (h *harness) revisionAHealthy() {
	h.t.Helper()
	h.waitFor("revision A Healthy", 90*time.Second, func() bool {
		phase, stable, current, _, _ := h.status()
		return phase == "Healthy" && stable != "" && stable == current
	})
}

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

// firstPause applies spec (its traffic objects, the Rollout on image a),
// waits until it is Healthy, sets image b and waits for the pause after
// the first step, setWeight weight. It returns the stable and the canary
// ReplicaSets' hashes.
func (h *harness) firstPause(o *observer, spec rolloutSpec, weight int64) (stable, canary string) {
	h.apply(h.trafficObjects(spec.mode))
	h.apply(h.rolloutYAML(spec, "a"))
	stable = h.healthy(o, int64(spec.replicas), 90*time.Second)
	h.setImage("b")
	h.waitFor(fmt.Sprintf("the pause at setWeight %d", weight), 90*time.Second, func() bool {
		phase, _, _, idx, _ := h.status()
		return phase == "Paused" && idx == 1 && o.Now().CanaryWeight == weight
	})
	_, _, canary, _, _ = h.status()
	return stable, canary
}

func (h *harness) setImage(image string) {
	h.kubectl("-n", h.ns, "patch", "rollout", "app", "--field-manager", fieldManager, "--type", "json", "-p",
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
	h.apply(h.trafficObjects(spec.mode))
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
	o := h.observeMode(mode)
	hashA, _ := h.aThenB(o, spec, 90*time.Second)
	// `record` runs through the revert and what follows (host mode: one
	// traffic mode is enough to compare it with the observer).
	var rec *recording
	if mode == hostMode {
		rec = h.startRecording()
	}

	// The revert. Diagnose as soon as the controller has reacted (A scaled
	// up from 0), before A's first pod can be available (pods take >= 3 s).
	// Both writes of that pass must be in: A's scale-up and the status that
	// records the revert (currentPodHash A). Between the two, on a loaded
	// machine, diagnose read a status the controller had not written yet and
	// predicted from it (seen on v1.9.3 subset-only at load 10–26). A
	// controller with dozens of Rollouts to reconcile at load 8 took over
	// 30 s to see the revert at all once (v1.8.3, Traefik, a cold CI run):
	// the wait is for its reaction, whatever the machine's load.
	h.setImage("a")
	h.waitFor("the controller to scale A up and record the revert", 90*time.Second, func() bool {
		_, _, current, _, _ := h.status()
		return o.Now().RS[hashA].Spec > 0 && current == hashA
	})
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
			// Twice a second: each sample is a whole read of the Rollout's
			// objects, and the canary's ready endpoints stay short of its
			// weight for 10 s or more (pods turn Ready 9–39 s after they
			// start). Sampling ten times a second through the whole 150 s
			// wait, five versions' fix-host runs and the waits' GETs put the
			// API server so far behind that other scenarios' pods stayed
			// unready for minutes.
			pr, err := h.podsInProcess("app")
			time.Sleep(500 * time.Millisecond)
			if err != nil {
				continue
			}
			if f := podFinding(pr, "RD325"); f != nil {
				share = f
				c := serviceRow(pr, "app-canary")
				shareSeen = fmt.Sprintf("canary Service at %d%% with %d ready endpoints", derefWeight(c.Weight), c.Ready)
				return
			}
		}
	}()
	// escape's plan at the same moment: what it says the controller does
	// if nothing is done is compared once the controller has finished.
	p := h.plan()
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
	name += modeNames[mode]
	if mode >= nginxMode {
		// The router weights the tool read at the revert, against the object
		// the controller had written at that resourceVersion.
		h.routerRead(name+", at the revert", o, rep)
	}
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
	// Nothing is sent to the Rollout after the revert: the end state is the
	// controller's own. B's ReplicaSet goes after scaleDownDelaySeconds (5 s).
	h.nothingDone(name+", right after the revert", o, p, 8*time.Second, 90*time.Second)
	if rec != nil {
		rec.stop(h)
		h.checkRecording(name, rec, o, hashA, final100)
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

// quiet waits until nothing observed has changed for d, pods not available
// included: for a state the controller holds while a pod never turns Ready.
func (h *harness) quiet(o *observer, d, timeout time.Duration) {
	h.t.Helper()
	h.waitFor(fmt.Sprintf("%s without changes", d), timeout, func() bool {
		ss := o.Samples()
		return len(ss) > 0 && time.Since(ss[len(ss)-1].At) > d
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

// minPodsOverReplicas: minPodsPerReplicaSet 2 with replicas 1, and a
// progress deadline short enough to pass while the scenario watches.
//
// Before v1.10 CheckMinPodsPerReplicaSet sizes the canary to 2, so
// updatedReplicas never equals replicas and RolloutHealthy, which needs
// them equal, is never true. v1.7.2–v1.8.3 never promote that canary (full
// promotion needs its available pods to equal replicas); v1.9.3 does (at
// least replicas available is enough) but keeps it at 2 pods. Either way
// the controller has nothing left to do after the last step: no write
// counts as progress, and once progressDeadlineSeconds have passed since
// the last one, calculateRolloutConditions writes Progressing False with
// reason ProgressDeadlineExceeded, which the phase reads as Degraded. It
// stays so: RolloutTimedOut keeps answering true once that reason is set,
// and nothing progresses again. v1.10 caps minPodsPerReplicaSet at
// replicas: the canary has 1 pod and the Rollout ends Healthy.
func minPodsOverReplicas(t *testing.T, h *harness) {
	// 25 s: a pod of the lab is available within 12 s of its creation on an
	// idle machine, so the ramp itself does not time out, and the diagnosis
	// (10 s after the last write) comes before the deadline passes.
	const deadline = 25
	spec := rolloutSpec{replicas: 1, minPods: 2, steps: "[{setWeight: 50}, {pause: {duration: 2s}}]", mode: hostMode, progressDeadline: deadline}
	o := h.observe(isCanaryDest(hostMode))
	h.apply(h.trafficObjects(hostMode))
	h.apply(h.rolloutYAML(spec, "a"))
	h.settled(o, 8*time.Second, 60*time.Second)
	h.setImage("b")
	h.waitFor("the update to be observed", 20*time.Second, func() bool {
		_, stable, current, _, _ := h.status()
		return current != "" && current != stable
	})
	// escape's plan as soon as the controller has taken up the update: from
	// here it ramps the canary, waits out the 2 s pause and reaches the end
	// of the steps on its own.
	p := h.plan()
	h.settled(o, 10*time.Second, 90*time.Second)
	rep := h.diagnose("app")
	name := "minPodsPerReplicaSet 2 > replicas 1"
	h.steady(name+", settled after the update", o, rep)
	// Held for longer than the deadline: a Degraded written at the deadline
	// and one that never comes are then told apart.
	obs := h.nothingDone(name+", from the update on", o, p, (deadline+5)*time.Second, 150*time.Second)
	neverHealthy := false
	for _, f := range rep.Findings {
		if f.ID == "RD203" && f.Severity == diagnose.Critical {
			neverHealthy = true
		}
	}
	healthy := obs.healthy
	if healthy == "" {
		healthy = "absent"
	}
	h.record(name,
		map[bool]string{true: "RD203 critical: the Healthy condition never True; Degraded (ProgressDeadlineExceeded) once the deadline passes", false: "Healthy (minPods capped at replicas)"}[neverHealthy],
		fmt.Sprintf("Healthy condition %s, phase %s, Progressing %s, held %ds (progressDeadlineSeconds %d)", healthy, obs.phase, obs.progressing, int(obs.heldFor.Seconds()), deadline))
	degraded := obs.phase == "Degraded" && obs.progressing == "False/ProgressDeadlineExceeded" && obs.healthy != "True"
	if neverHealthy && !degraded || !neverHealthy && (obs.phase != "Healthy" || obs.healthy != "True") {
		t.Errorf("RD203 predicted never-Healthy=%v; observed %s after the progress deadline\n%s", neverHealthy, obs, h.dump())
	}
	// What reading each version's source says, checked independently of
	// the model: the cap arrived in v1.10.
	var major, minor int
	fmt.Sscanf(h.version, "v%d.%d", &major, &minor)
	if capped := major > 1 || minor >= 10; capped == degraded {
		t.Errorf("%s: observed %s; the controller source caps minPods from v1.10 (Healthy) and not before (Degraded)", h.version, obs)
	}
}

// dynamicStableScale: paused at setWeight 30 of 10 replicas with
// dynamicStableScale; the stable is scaled down as the canary scales up.
func dynamicStableScale(t *testing.T, h *harness) {
	spec := rolloutSpec{replicas: 10, steps: "[{setWeight: 30}, {pause: {}}]", mode: hostMode, dss: true}
	o := h.observe(isCanaryDest(hostMode))
	h.apply(h.trafficObjects(hostMode))
	h.apply(h.rolloutYAML(spec, "a"))
	h.healthy(o, 10, 90*time.Second)
	h.setImage("b")
	// The plan as soon as the controller has taken up the update: it ramps
	// the canary, scales the stable down and pauses on its own from here.
	h.waitFor("the update to be observed", 20*time.Second, func() bool {
		_, stable, current, _, _ := h.status()
		return current != "" && current != stable
	})
	p := h.plan()
	h.atFirstPause(o)
	h.steady("dynamicStableScale, paused at setWeight 30 of 10", o, h.diagnose("app"))
	h.nothingDone("dynamicStableScale 30% of 10, from the update to the pause", o, p, 6*time.Second, 60*time.Second)
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

// abortWait: aborted at setWeight 20, and escape's plan read as soon as the
// controller has written the abort, while the canary still has its pods
// (kept for abortScaleDownDelaySeconds, 15 s here, after the stable is fully
// available — at once, since it never went below full). Nothing is done:
// the plan's end state, and diagnose's forecast of the canary's scale-down,
// are compared with what the controller does by itself.
func abortWait(t *testing.T, h *harness) {
	const delay = 15
	spec := rolloutSpec{replicas: 10, steps: "[{setWeight: 20}, {pause: {}}]", mode: hostMode, abortDelay: delay}
	o := h.abortAt20(spec)
	_, _, canary, _, _ := h.status()
	p := h.plan()
	rep := h.diagnose("app")
	before := o.Now().RS[canary].Spec
	if before == 0 {
		t.Fatalf("the canary was scaled down before the plan was read: its scale-down cannot be compared")
	}
	var ev *model.Forecast
	for i := range rep.Model.Forecast {
		if rep.Model.Forecast[i].Event != "" {
			ev = &rep.Model.Forecast[i]
		}
	}
	// The deadline the controller stamped on the canary in the pass that
	// wrote the abort (second precision): the scale-down is due then.
	var deadline time.Time
	for _, u := range h.listRS() {
		if u.GetLabels()["rollouts-pod-template-hash"] == canary {
			deadline, _ = time.Parse(time.RFC3339, u.GetAnnotations()["scale-down-deadline"])
		}
	}
	// Quiet for longer than the delay: the scale-down still to come must
	// have happened, or never will, before the end state is read.
	h.nothingDone("aborted at setWeight 20, as soon as the abort is written", o, p, (delay+5)*time.Second, 90*time.Second)
	var abortedAt, downAt time.Time
	for _, x := range o.Samples() {
		if abortedAt.IsZero() && x.Abort && x.Phase == "Degraded" {
			abortedAt = x.At
		}
		if downAt.IsZero() && !abortedAt.IsZero() && x.RS[canary].Spec == 0 {
			downAt = x.At
		}
	}
	final := o.Now().RS[canary].Spec
	obs := fmt.Sprintf("canary at %d", final)
	if !downAt.IsZero() {
		// Times are those the watch delivered the writes at: late by as
		// much as the machine is loaded, never early.
		obs = fmt.Sprintf("canary scaled from %d to %d %.0f s after the abort was seen, %.0f s after its deadline %s",
			before, final, downAt.Sub(abortedAt).Seconds(), downAt.Sub(deadline).Seconds(), deadline.UTC().Format(time.RFC3339))
	}
	pred := "no scale-down forecast"
	if ev != nil {
		pred = fmt.Sprintf("%s (%d s)", ev.Event, delay)
	}
	h.record("abort: the canary's scale-down after abortScaleDownDelaySeconds", pred, obs)
	switch {
	case ev == nil:
		t.Errorf("diagnose forecast no scale-down of the aborted canary (%d pods, abortScaleDownDelaySeconds %d): %+v", before, delay, rep.Model.Forecast)
	case int64(ev.CanaryTarget) != final:
		t.Errorf("forecast the canary scaled to %d after the delay; it is at %d", ev.CanaryTarget, final)
	case deadline.IsZero():
		t.Errorf("the aborted canary had no scale-down deadline when the plan was read")
	case !strings.Contains(ev.Event, deadline.UTC().Format(time.RFC3339)):
		t.Errorf("forecast %q; the canary's deadline is %s", ev.Event, deadline.UTC().Format(time.RFC3339))
	case downAt.IsZero():
		t.Errorf("the canary was never scaled down")
	case downAt.Before(deadline.Add(-time.Second)):
		// A second for the deadline's precision; the watch only delivers late.
		t.Errorf("the canary was scaled down at %s, before its deadline %s", downAt.UTC().Format(time.RFC3339Nano), deadline.UTC().Format(time.RFC3339))
	case deadline.Sub(abortedAt) > delay*time.Second || deadline.Sub(abortedAt) < (delay-5)*time.Second:
		// The deadline is stamped in the pass that writes the abort, delay
		// seconds after it (rounded down to the second); the abort is seen
		// no sooner than it is written, and in the lab within 5 s.
		t.Errorf("the canary's deadline %s is not abortScaleDownDelaySeconds (%d s) after the abort was seen (%s)", deadline.UTC().Format(time.RFC3339), delay, abortedAt.UTC().Format(time.RFC3339Nano))
	}
}
