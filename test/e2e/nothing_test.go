//go:build e2e

package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/escape"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
)

// controllerBackoff is longer than the longest a Rollout waits in the
// controller's work queue: every version enqueues a Rollout rate-limited
// (EnqueueRateLimited) with a per-item exponential backoff of up to 10 s,
// which grows with every enqueue and error until a pass succeeds. After
// the Istio subset-only gate has failed pass after pass, the pass that
// follows a promotion came 8–10 s after it in the lab (v1.9.3, v1.10.2),
// and until then the VirtualService still read the canary's 100%.
const controllerBackoff = 11 * time.Second

// held is the state the controller holds once it has stopped writing, read
// from the watched writes, in the terms of escape's "if nothing is done"
// prediction.
type held struct {
	stable      string // the stable ReplicaSet's name (its hash if none matches)
	weight      int64  // the canary weight in the VirtualService
	index       int64  // status.currentStepIndex (-1 when unset)
	abort       bool
	phase       string
	healthy     string // the Healthy condition's status ("" while absent)
	progressing string // the Progressing condition as "Status/Reason"
	// heldFor is how long the phase and both conditions have read as they
	// do now, from the first write that made them so.
	heldFor time.Duration
	// exposure is the highest canary weight written while the canary had
	// fewer available pods than the weight needs (0: none), and onPods the
	// canary's available pods then.
	exposure, onPods int64
}

func (s held) String() string {
	healthy := s.healthy
	if healthy == "" {
		healthy = "absent"
	}
	return fmt.Sprintf("stable %s, weight %d, step %d, aborted %v, phase %s (Healthy %s, Progressing %s, held %ds)%s",
		s.stable, s.weight, s.index, s.abort, s.phase, healthy, s.progressing, int(s.heldFor.Round(time.Second).Seconds()), exposureText(s.exposure, s.onPods))
}

func exposureText(w, onPods int64) string {
	if w == 0 {
		return "; no weight beyond the canary's pods"
	}
	return fmt.Sprintf("; %d%% on %d available canary pod(s)", w, onPods)
}

// nothingDone compares escape's "if nothing is done" prediction (p, read
// from the live Rollout by the caller) with what the controller does on its
// own afterwards: nothing is sent to the Rollout, the controller runs until
// nothing it writes has changed for quiet (every ReplicaSet's pods
// available, as settled), and the state it then holds is compared with the
// prediction's end state — stable ReplicaSet, weight, step index, abort,
// phase and the conditions the phase stands for — and with what the
// prediction says of the way there: the worst weight on too few canary pods,
// and for a Rollout that can never be Healthy, that the Healthy condition
// is never True. It records a row and reports every difference.
//
// quiet is the scenario's to choose: longer than any timed change still to
// come (a progress deadline, a scale-down delay), so that what is compared
// is a state the controller holds, not one it is about to leave. It is
// never under controllerBackoff.
func (h *harness) nothingDone(name string, o *observer, p *escape.Plan, quiet, timeout time.Duration) held {
	h.t.Helper()
	quiet = max(quiet, controllerBackoff)
	planRV, err := strconv.ParseInt(p.ResourceVersion, 10, 64)
	if err != nil {
		h.t.Fatalf("the plan's resourceVersion %q: %v", p.ResourceVersion, err)
	}
	// Until nothing has changed for quiet, and for at least quiet after
	// the plan was read: a state already held before the plan must be held
	// on after it too.
	start := time.Now()
	h.settled(o, quiet, timeout)
	if rest := quiet - time.Since(start); rest > 0 {
		time.Sleep(rest)
		h.settled(o, quiet, timeout)
	}
	obs := h.heldSince(o, planRV)
	e := p.Now
	wait, _ := p.Option(escape.Wait)

	pred := fmt.Sprintf("%s: stable %s, weight %d, step %d, aborted %v, phase %s", wait.Verdict, e.FinalStable, e.FinalWeight, e.FinalIndex, e.FinalAbort, e.Phase)
	if e.NeverHealthy {
		pred += " (the Healthy condition never True)"
	}
	if e.PauseEnds {
		pred += ", after a timed pause ends by itself"
	}
	var predExp int64
	if e.Exposure != nil {
		predExp = int64(e.Exposure.Weight)
		pred += exposureText(predExp, int64(e.Exposure.OnPods))
	} else {
		pred += exposureText(0, 0)
	}
	h.record("if nothing is done: "+name, pred, obs.String())

	var diffs []string
	if obs.stable != e.FinalStable {
		diffs = append(diffs, fmt.Sprintf("stable %s, predicted %s", obs.stable, e.FinalStable))
	}
	if obs.weight != int64(e.FinalWeight) {
		diffs = append(diffs, fmt.Sprintf("weight %d, predicted %d", obs.weight, e.FinalWeight))
	}
	if obs.index != int64(e.FinalIndex) {
		diffs = append(diffs, fmt.Sprintf("step index %d, predicted %d", obs.index, e.FinalIndex))
	}
	if obs.abort != e.FinalAbort {
		diffs = append(diffs, fmt.Sprintf("aborted %v, predicted %v", obs.abort, e.FinalAbort))
	}
	if why := phaseDiff(e, obs); why != "" {
		diffs = append(diffs, why)
	}
	if e.NeverHealthy {
		for _, s := range o.Samples() {
			if s.RV > planRV && s.Healthy == "True" {
				diffs = append(diffs, fmt.Sprintf("the Healthy condition was written True (resourceVersion %d), predicted never", s.RV))
				break
			}
		}
	}
	if obs.exposure != predExp {
		diffs = append(diffs, fmt.Sprintf("the worst weight beyond the canary's pods was %d%%, predicted %d%% (0: none)", obs.exposure, predExp))
	}
	if len(diffs) > 0 {
		h.t.Errorf("if nothing is done (%s): %s\npredicted: %s\nobserved:  %s\nsummary: %s\n%s", name, strings.Join(diffs, "; "), pred, obs, e.Summary, h.dump())
	}
	return obs
}

// phaseDiff says how the held phase and conditions differ from the phase
// the prediction names ("" when they agree). Each predicted phase stands for
// what the controller writes with it: Healthy is the Healthy condition True
// as well; an abort is Progressing False with reason RolloutAborted; a
// passed progress deadline is Progressing False with reason
// ProgressDeadlineExceeded.
func phaseDiff(e escape.Effect, s held) string {
	want, cond := e.Phase, ""
	switch {
	case e.Phase == "Healthy":
		if s.healthy != "True" {
			cond = "the Healthy condition True"
		}
	case strings.HasPrefix(e.Phase, "Degraded (ProgressDeadlineExceeded)"):
		want = "Degraded"
		if s.progressing != "False/ProgressDeadlineExceeded" {
			cond = "Progressing False/ProgressDeadlineExceeded"
		}
	case e.Phase == "Degraded" && e.FinalAbort:
		if s.progressing != "False/RolloutAborted" {
			cond = "Progressing False/RolloutAborted"
		}
	}
	switch {
	case s.phase != want && cond != "":
		return fmt.Sprintf("phase %s with Healthy %q and Progressing %s, predicted phase %s with %s", s.phase, s.healthy, s.progressing, want, cond)
	case s.phase != want:
		return fmt.Sprintf("phase %s, predicted %s", s.phase, want)
	case cond != "":
		return fmt.Sprintf("Healthy %q and Progressing %s, predicted %s", s.healthy, s.progressing, cond)
	}
	return ""
}

// heldSince reads the held state from the observer: the end state from the
// latest writes, the exposure from the state the plan was read in onwards.
func (h *harness) heldSince(o *observer, planRV int64) held {
	h.t.Helper()
	ss := o.Samples()
	if len(ss) == 0 {
		h.t.Fatal("nothing observed")
	}
	last := ss[len(ss)-1]
	s := held{stable: last.StableHash, weight: last.CanaryWeight, index: last.Index, abort: last.Abort,
		phase: last.Phase, healthy: last.Healthy, progressing: last.Progressing}
	for _, u := range h.listRS() {
		if u.GetLabels()["rollouts-pod-template-hash"] == last.StableHash {
			s.stable = u.GetName()
		}
	}
	// The phase and conditions as they read now, since their last change.
	since := last.At
	for i := len(ss) - 1; i >= 0 && ss[i].Phase == last.Phase && ss[i].Healthy == last.Healthy && ss[i].Progressing == last.Progressing; i-- {
		since = ss[i].At
	}
	s.heldFor = time.Since(since)
	replicas := h.replicas()
	// The scenarios leave maxTrafficWeight at 100.
	// From the state the plan was read in (the last write at or before its
	// resourceVersion, which holds until the next) to the end.
	from := 0
	for i, x := range ss {
		if x.RV <= planRV {
			from = i
		}
	}
	for _, x := range ss[from:] {
		if x.CanaryWeight <= 0 || x.CurrentHash == "" || x.CurrentHash == x.StableHash {
			continue
		}
		avail := x.RS[x.CurrentHash].Available
		if avail < int64(model.WeightToReplicas(replicas, int32(x.CanaryWeight), 100)) && x.CanaryWeight > s.exposure {
			s.exposure, s.onPods = x.CanaryWeight, avail
		}
	}
	return s
}

// replicas is the Rollout's spec.replicas.
func (h *harness) replicas() int32 {
	h.t.Helper()
	n, ok, _ := unstructured.NestedInt64(h.get(gvrRollout, "app").Object, "spec", "replicas")
	if !ok {
		return 1
	}
	return int32(n)
}
