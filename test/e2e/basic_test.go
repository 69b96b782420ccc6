//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/escape"
)

func init() {
	scenarios = append(scenarios, scenario{"basic-canary", basicCanary})
}

// plainCanaryYAML is a canary Rollout without trafficRouting: replicas
// pods with the given pod timing annotations, extra lines under canary
// (each starting with a newline) and steps.
func (h *harness) plainCanaryYAML(replicas int, timing, image, extra, steps string) string {
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: app
  labels: {argo-rollouts.argoproj.io/controller-instance-id: %q}
spec:
  replicas: %d
  revisionHistoryLimit: 3
  selector: {matchLabels: {app: app}}
  template:
    metadata:
      labels: {app: app}%s
    spec:
      containers: [{name: app, image: "registry.example/app:%s"}]
  strategy:
    canary:%s
      steps: %s
`, h.instanceID, replicas, timing, image, extra, steps)
}

// basicRollout is a canary without trafficRouting: 5 replicas, one surge
// pod and none unavailable, so every move is one pod of one ReplicaSet.
func (h *harness) basicRollout(image string) string {
	return h.plainCanaryYAML(5, podTiming, image, "\n      maxSurge: 1\n      maxUnavailable: 0",
		"[{setWeight: 30}, {pause: {}}, {setWeight: 70}, {pause: {duration: 5s}}]")
}

// podPairs are the distinct (canary, stable) ReplicaSet sizes the samples
// went through, from the first sample at or after from.
func podPairs(ss []sample, canaryHash, stableHash string, from time.Time) []escape.PodCounts {
	var out []escape.PodCounts
	for _, s := range ss {
		if s.At.Before(from) {
			continue
		}
		c := escape.PodCounts{Canary: int32(s.RS[canaryHash].Spec), Stable: int32(s.RS[stableHash].Spec)}
		if len(out) == 0 || out[len(out)-1] != c {
			out = append(out, c)
		}
	}
	return out
}

func pairsString(ps []escape.PodCounts) string {
	var b []string
	for _, p := range ps {
		b = append(b, fmt.Sprintf("%d/%d", p.Canary, p.Stable))
	}
	return strings.Join(b, " → ")
}

// basicCanary: without trafficRouting the controller sizes the ReplicaSets
// so that their pod counts approximate the step's weight, one ReplicaSet
// a pass, the stable first, within maxSurge and maxUnavailable. At the
// indefinite pause of setWeight 30, diagnose must give the sizes the
// controller holds (2 and 4 of 6) and escape must say that nothing moves
// by itself; the sizes escape predicts for promote (to the end, through
// the 5 s pause) and, from the next update's pause, for abort must be the
// ones the controller goes through, in order.
func basicCanary(t *testing.T, h *harness) {
	o := h.observe(isCanaryDest(hostMode))
	h.apply(h.basicRollout("a"))
	h.healthy(o, 5, 90*time.Second)
	pause := func(image string) (stableHash, canaryHash string) {
		h.apply(h.basicRollout(image))
		h.waitFor("the pause at setWeight 30", 90*time.Second, func() bool {
			phase, _, _, idx, _ := h.status()
			return phase == "Paused" && idx == 1
		})
		h.settled(o, 6*time.Second, 60*time.Second)
		_, stableHash, canaryHash, _, _ = h.status()
		return stableHash, canaryHash
	}
	stableHash, canaryHash := pause("b")
	rep := h.diagnose("app")
	s := o.Now()
	held := fmt.Sprintf("canary %d, stable %d", s.RS[canaryHash].Spec, s.RS[stableHash].Spec)
	ps := rep.PodShare
	if ps == nil {
		t.Fatalf("diagnose has no pod share for a canary without trafficRouting")
	}
	pred := fmt.Sprintf("canary %d, stable %d; next pass canary %d, stable %d", ps.StepCanary, ps.StepStable, ps.NextCanary, ps.NextStable)
	h.record("basic canary (no trafficRouting), paused at setWeight 30 of 5, maxSurge 1", pred, held)
	if want := held + "; next pass " + held; pred != want {
		t.Errorf("diagnose at the pause: %s; the controller holds %s", pred, held)
	}
	p := h.plan()
	if w, _ := p.Option(escape.Wait); !w.Effect.WaitsForPerson {
		t.Errorf("escape at an indefinite pause: wait says %q, not that it waits for a person", w.Why)
	}
	act := func(a escape.Action, name, canaryHash, stableHash string, done func() bool) {
		opt, ok := p.Option(a)
		if !ok || len(opt.Effect.Pods) == 0 {
			t.Fatalf("escape has no pod sizes for %s: %+v", a, opt.Effect)
		}
		from := time.Now()
		h.run("escape", "app", "--do", string(a), "--yes", "--force", "--watch-timeout", "0")
		h.waitFor(name+" to end", 120*time.Second, done)
		h.settled(o, 4*time.Second, 60*time.Second)
		got := podPairs(o.Samples(), canaryHash, stableHash, from)
		// The first observed pair is the state the action found.
		want := opt.Effect.Pods
		h.record(name, pairsString(want), pairsString(got))
		if pairsString(got) != pairsString(want) {
			t.Errorf("%s: escape predicted canary/stable %s; the controller went %s\n%s", name, pairsString(want), pairsString(got), h.dump())
		}
	}
	act(escape.Promote, "basic canary: promote from setWeight 30 (through setWeight 70 and a 5 s pause)", canaryHash, stableHash, func() bool {
		phase, stable, _, _, _ := h.status()
		return phase == "Healthy" && stable == canaryHash
	})
	stableHash, canaryHash = pause("c")
	p = h.plan()
	act(escape.Abort, "basic canary: abort at setWeight 30", canaryHash, stableHash, func() bool {
		phase, _, _, _, _ := h.status()
		s := o.Now()
		return phase == "Degraded" && s.RS[canaryHash].Spec == 0
	})
}
