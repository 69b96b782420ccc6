//go:build e2e

package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/escape"
)

func init() {
	scenarios = append(scenarios, scenario{"basic-canary", basicCanary}, scenario{"basic-replaced", basicReplaced},
		scenario{"basic-paused-promote", basicPausedPromote}, scenario{"basic-stable-hung", basicStableHung},
		scenario{"istio-stable-hung", istioStableHung},
		scenario{"istio-dss-stable-hung", istioDSSStableHung}, scenario{"istio-stable-short", istioStableShort})
}

// plainCanaryYAML is a canary Rollout, without trafficRouting unless extra
// adds it: replicas pods with the given pod timing annotations, extra lines
// under canary (each starting with a newline) and steps.
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

// pausedAt is true while the Rollout is Paused at step idx.
func (h *harness) pausedAt(idx int64) func() bool {
	return func() bool {
		phase, _, _, i, _ := h.status()
		return phase == "Paused" && i == idx
	}
}

// atFirstPause waits for the pause after the first step (setWeight 30 in
// these Rollouts) and for the pods to settle there.
func (h *harness) atFirstPause(o *observer) {
	h.t.Helper()
	h.waitFor("the pause at setWeight 30", 90*time.Second, h.pausedAt(1))
	h.settled(o, 6*time.Second, 60*time.Second)
}

// basicRollout is a canary without trafficRouting: 5 replicas, one surge
// pod and none unavailable, so every move is one pod of one ReplicaSet.
func (h *harness) basicRollout(image string) string {
	return h.plainCanaryYAML(5, podTiming, image, "\n      maxSurge: 1\n      maxUnavailable: 0",
		"[{setWeight: 30}, {pause: {}}, {setWeight: 70}, {pause: {duration: 5s}}]")
}

// podPairs are the distinct ReplicaSet sizes the samples went through, from
// the first sample at or after from: the canary's, the stable's and every
// other ReplicaSet's together, as escape counts them (promoted when the
// canary is the stable).
func podPairs(ss []sample, canaryHash, stableHash string, from time.Time) []escape.PodCounts {
	var out []escape.PodCounts
	for _, s := range ss {
		if s.At.Before(from) {
			continue
		}
		c := escape.PodCounts{Stable: int32(s.RS[stableHash].Spec), Promoted: canaryHash == stableHash}
		if !c.Promoted {
			c.Canary = int32(s.RS[canaryHash].Spec)
		}
		for h, r := range s.RS {
			// "": a ReplicaSet without the Rollout's hash label (a
			// workloadRef'd Deployment's), not the Rollout's.
			if h != "" && h != canaryHash && h != stableHash {
				c.Older += int32(r.Spec)
			}
		}
		if len(out) == 0 || out[len(out)-1] != c {
			out = append(out, c)
		}
	}
	return out
}

// pairsString writes sizes as escape's summaries do.
func pairsString(ps []escape.PodCounts) string {
	_, sizes := escape.PodSizes(ps)
	return sizes
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
		h.atFirstPause(o)
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

// neverReady holds a pod's readiness for an hour: the lab's pods of that
// template never turn Ready during a scenario.
const neverReady = `
      annotations:
        pod-create.stage.kwok.x-k8s.io/delay: "1s"
        pod-create.stage.kwok.x-k8s.io/jitter-delay: "2s"
        pod-ready.stage.kwok.x-k8s.io/delay: "3600s"
        pod-ready.stage.kwok.x-k8s.io/jitter-delay: "3600s"`

// basicReplaced: a canary without trafficRouting updated again while the
// previous update waits at its pause, and the newest revision's pods never
// turn Ready. The controller makes room for one of them by scaling the
// older revision down to 1, then no pass can move (6 pods = 5 + maxSurge;
// 5 available = 5 − maxUnavailable): diagnose must say so (RD167) and the
// sizes escape predicts must hold. An abort must then scale nothing, as
// escape says for a canary whose pods never turn Ready (RD167 critical),
// and undo to the stable must go the sizes escape predicts.
func basicReplaced(t *testing.T, h *harness) {
	o := h.observe(isCanaryDest(hostMode))
	h.apply(h.basicRollout("a"))
	h.healthy(o, 5, 90*time.Second)
	_, first, _, _, _ := h.status()
	h.apply(h.basicRollout("b"))
	h.atFirstPause(o)
	h.apply(h.plainCanaryYAML(5, neverReady, "c", "\n      maxSurge: 1\n      maxUnavailable: 0",
		"[{setWeight: 30}, {pause: {}}, {setWeight: 70}, {pause: {duration: 5s}}]"))
	h.waitFor("the newest revision's ReplicaSet", 60*time.Second, func() bool {
		_, _, current, _, _ := h.status()
		return current != "" && o.Now().RS[current].Spec > 0
	})
	h.quiet(o, 8*time.Second, 60*time.Second)
	_, stableHash, canaryHash, _, _ := h.status()
	if stableHash != first {
		t.Fatalf("the stable is %s, want the first revision %s", stableHash, first)
	}
	now := podPairs([]sample{o.Now()}, canaryHash, stableHash, time.Time{})
	stall := func(rep *diagnose.Report) string {
		for _, f := range rep.Findings {
			if f.ID == "RD167" {
				return f.Severity.String() + " RD167"
			}
		}
		return "no RD167"
	}
	rep := h.diagnose("app")
	older := int32(-1)
	if rep.PodShare != nil {
		older = rep.PodShare.OlderReady
	}
	h.record("basic canary replaced mid-rollout, newest pods never Ready: sizes canary/stable/older, RD167, older ready pods",
		"1/4/1, warning RD167, 1", fmt.Sprintf("%s, %s, %d", pairsString(now), stall(rep), older))
	if pairsString(now) != "1/4/1" || stall(rep) != "warning RD167" || older != 1 {
		t.Errorf("the stalled state: sizes %s, %s, older ready pods %d; want 1/4/1, warning RD167, 1\n%s", pairsString(now), stall(rep), older, h.dump())
	}
	p := h.plan()
	if p.Now.IfNeverReady == "" {
		t.Errorf("escape does not say where scaling stops if the canary's pods never turn Ready: %+v", p.Now)
	}
	ab, _ := p.Option(escape.Abort)
	if ab.Effect.IfNeverReady != p.Now.IfNeverReady {
		t.Errorf("escape: abort if the canary never turns Ready: %q; want where doing nothing stops: %q", ab.Effect.IfNeverReady, p.Now.IfNeverReady)
	}
	// Abort: nothing scales while the canary's pod is not Ready.
	from := time.Now()
	h.abortAndHold()
	got := podPairs(o.Samples(), canaryHash, stableHash, from)
	rep = h.diagnose("app")
	h.record("basic canary replaced mid-rollout: abort while the canary's pod is never Ready (20 s)", "1/4/1, critical RD167", pairsString(got)+", "+stall(rep))
	if pairsString(got) != "1/4/1" || stall(rep) != "critical RD167" {
		t.Errorf("abort: the controller went %s (%s); want 1/4/1 and critical RD167\n%s", pairsString(got), stall(rep), h.dump())
	}
	// Undo to the stable: the older revisions go, the stable grows back.
	p = h.plan()
	u, _ := p.Option(escape.Undo)
	if len(u.Effect.Pods) == 0 || u.Effect.IfNeverReady != "" {
		t.Fatalf("escape: undo has no sizes or waits on the canary: %+v", u.Effect)
	}
	from = time.Now()
	h.run("escape", "app", "--do", "undo", "--yes", "--force", "--watch-timeout", "0")
	h.waitFor("undo to end", 120*time.Second, func() bool {
		phase, stable, current, _, _ := h.status()
		return phase == "Healthy" && stable == first && current == first
	})
	h.settled(o, 4*time.Second, 60*time.Second)
	got = podPairs(o.Samples(), stableHash, stableHash, from)
	h.record("basic canary replaced mid-rollout, aborted: undo to the stable (stable/older)", pairsString(u.Effect.Pods), pairsString(got))
	if pairsString(got) != pairsString(u.Effect.Pods) {
		t.Errorf("undo: escape predicted stable/older %s; the controller went %s\n%s", pairsString(u.Effect.Pods), pairsString(got), h.dump())
	}
}

// basicPausedPromote: at the indefinite pause, someone also sets
// spec.paused (a manual pause), which halts the scaling too. The CLI's
// promote clears the pause conditions first and unpauses after; the
// controller, still paused in between, drops controllerPause, so the pause
// step pauses again (seen on every version). escape must say so and its
// --do promote must land both patches (the second after the controller's
// status write); a second promote must then go the sizes predicted,
// through setWeight 70 and the 5 s pause, to the promotion.
func basicPausedPromote(t *testing.T, h *harness) {
	o := h.observe(isCanaryDest(hostMode))
	h.apply(h.basicRollout("a"))
	h.healthy(o, 5, 90*time.Second)
	h.apply(h.basicRollout("b"))
	h.atFirstPause(o)
	atPause := h.pausedAt(1)
	h.kubectl("-n", h.ns, "patch", "rollout", "app", "--type", "merge", "-p", `{"spec":{"paused":true}}`)
	h.settled(o, 3*time.Second, 30*time.Second)
	_, stableHash, canaryHash, _, _ := h.status()
	p := h.plan()
	pr, _ := p.Option(escape.Promote)
	restarts := strings.Contains(pr.Note, "step 1 (a pause) starts again") && strings.Contains(pr.Effect.Summary, "held at step 1 (pause, no duration)")
	specPaused := func() string {
		return strings.TrimSpace(h.kubectl("-n", h.ns, "get", "rollout", "app", "-o", "jsonpath={.spec.paused}"))
	}
	h.run("escape", "app", "--do", "promote", "--yes", "--force", "--watch-timeout", "0")
	time.Sleep(5 * time.Second)
	h.waitFor("the pause step again", 30*time.Second, atPause)
	held := specPaused() != "true" && atPause()
	pred, obs := "step 1 proceeds", "spec.paused "+specPaused()
	if restarts {
		pred = "spec.paused false, step 1 (pause) again"
	}
	if phase, _, _, idx, _ := h.status(); true {
		obs += fmt.Sprintf(", %s at step %d", phase, idx)
	}
	h.record("basic canary: promote at the pause under spec.paused (spec unpaused, the pause step again)", pred, obs)
	if !restarts || !held {
		t.Fatalf("promote under spec.paused: escape says the pause step starts again: %v (%q; %s); the controller unpaused and paused again at step 1: %v\n%s", restarts, pr.Note, pr.Effect.Summary, held, h.dump())
	}
	p = h.plan()
	pr, _ = p.Option(escape.Promote)
	from := time.Now()
	h.run("escape", "app", "--do", "promote", "--yes", "--force", "--watch-timeout", "0")
	h.waitFor("the promotion", 120*time.Second, func() bool {
		phase, stable, _, _, _ := h.status()
		return phase == "Healthy" && stable == canaryHash
	})
	h.settled(o, 4*time.Second, 60*time.Second)
	got := podPairs(o.Samples(), canaryHash, stableHash, from)
	h.record("basic canary: the second promote, after spec.paused was cleared (canary/stable)", pairsString(pr.Effect.Pods), pairsString(got))
	if pairsString(got) != pairsString(pr.Effect.Pods) {
		t.Errorf("the second promote: escape predicted %s; the controller went %s\n%s", pairsString(pr.Effect.Pods), pairsString(got), h.dump())
	}
}

// basicStableHung: the canary of basicRollout paused at canary/stable 2/4
// with one stable pod hung (the lab's crash-loop stage: Ready 1 s, then an
// hour in CrashLoopBackOff). At maxUnavailable 0 that one pod holds an
// abort and an undo, not a promotion: escape must say where abort and undo
// stop if it never turns Ready, and that promote --full does not wait on
// it. Abort: the controller must hold 2/4 for 20 s, diagnose reporting
// RD167 critical on the stable with the pod to delete. Deleting it, as
// RD167 says, the abort must finish the way escape predicted.
func basicStableHung(t *testing.T, h *harness) {
	o := h.observe(isCanaryDest(hostMode))
	h.apply(h.basicRollout("a"))
	stableHash := h.healthy(o, 5, 90*time.Second)
	h.apply(h.basicRollout("b"))
	h.atFirstPause(o)
	_, _, canaryHash, _, _ := h.status()
	hung := h.hangFirstPod(o, stableHash, 3)
	p := h.plan()
	stops := map[escape.Action]string{}
	for _, a := range []escape.Action{escape.Abort, escape.Undo, escape.PromoteFull} {
		op, _ := p.Option(a)
		stops[a] = "none"
		if i := strings.Index(op.Effect.IfNeverReady, "scaling stops at "); i >= 0 {
			stops[a] = strings.SplitN(op.Effect.IfNeverReady[i+len("scaling stops at "):], ":", 2)[0]
		}
	}
	pred := fmt.Sprintf("abort %s, undo %s, promote-full %s", stops[escape.Abort], stops[escape.Undo], stops[escape.PromoteFull])
	const want = "abort canary/stable 2/4, undo stable/other ReplicaSets 4/2, promote-full none"
	ab, _ := p.Option(escape.Abort)

	from := time.Now()
	h.abortAndHold()
	held := pairsString(podPairs(o.Samples(), canaryHash, stableHash, from))
	rep := h.diagnose("app")
	says := "no RD167"
	if f := finding(rep, "RD167"); f != nil {
		says = f.Severity.String() + " RD167"
		if !strings.Contains(f.Message, "a pod of the stable app-"+stableHash) || !strings.Contains(f.Remediation, "kubectl delete pod -n "+h.ns+" "+hung) {
			says += " (not naming the stable and the pod to delete)"
		}
	}
	// The controllers' own stops for abort and undo were measured by hand
	// in the lab (v1.7.2's abort, v1.10.2's undo, v1.10.2's promote
	// --full finishing); the abort's is checked again below.
	h.record("basic canary paused at 2/4, one stable pod hung: escape's stops for abort, undo and promote --full if it never turns Ready (expected: the lab's)", want, pred)
	h.record("basic canary, stable pod hung: abort (20 s): sizes, RD167", "2/4, critical RD167", held+", "+says)
	if pred != want || held != "2/4" || says != "critical RD167" {
		t.Errorf("stable pod hung: escape said %s (want %s); the abort went %s, diagnose %s (want 2/4, critical RD167)\n%s", pred, want, held, says, h.dump())
	}
	// RD167's remedy: delete the hung pod; its replacement turns Ready and
	// the abort goes on, as escape predicted it.
	from = time.Now()
	h.kubectl("-n", h.ns, "delete", "pod", hung, "--wait=false")
	h.waitFor("the abort to finish", 120*time.Second, func() bool {
		s := o.Now()
		return s.RS[canaryHash].Spec == 0 && s.RS[stableHash].Spec == 5 && s.RS[stableHash].Available == 5
	})
	h.settled(o, 4*time.Second, 60*time.Second)
	got := pairsString(podPairs(o.Samples(), canaryHash, stableHash, from))
	h.record("basic canary, stable pod hung, aborted: after deleting the pod (canary/stable)", pairsString(ab.Effect.Pods), got)
	if got != pairsString(ab.Effect.Pods) {
		t.Errorf("after the delete: escape predicted the abort %s; the controller went %s\n%s", pairsString(ab.Effect.Pods), got, h.dump())
	}
}

// istioStableHung: an Istio canary of 5 paused at 20% with one stable pod
// hung. Versions with the stable availability check (v1.8.2 on) write no
// weight the stable's 4 available pods cannot carry: escape must say an
// abort keeps 20% on the canary Service, which the abort points at the
// stable's pods, and the abort must keep that 20% for 20 s with the
// Service on the stable most of the time (#3078 points it back on each
// pass), and RD104 saying the router is not back on stable. v1.7.2 writes 0% at
// once, and escape must say nothing of a stop there. Deleting the pod, the
// abort must reach 0% on every version.
func istioStableHung(t *testing.T, h *harness) {
	spec := rolloutSpec{replicas: 5, steps: "[{setWeight: 20}, {pause: {}}]", mode: hostMode}
	o, stableHash := h.istioPausedAt20(spec)
	hung := h.hangFirstPod(o, stableHash, 4)
	ab, _ := h.plan().Option(escape.Abort)
	pred := "0%"
	if strings.Contains(ab.Effect.IfNeverReady, "the router keeps 20% on the canary Service, which the abort points at the stable") {
		pred = "20% on the canary Service, on the stable's pods"
	}
	h.abortAndHold()
	got := fmt.Sprintf("%d%%", o.Now().CanaryWeight)
	on := onHash(o.Samples(), stableHash, 15*time.Second)
	if on > 0.5 && o.Now().CanaryWeight > 0 {
		got += " on the canary Service, on the stable's pods"
	}
	rep := h.diagnose("app")
	says := "back on stable"
	if f := finding(rep, "RD104"); f == nil {
		says = "no RD104"
	} else if strings.HasPrefix(f.Message, "aborted, but the router still sends 20% to the canary Service app-canary") {
		says = "not back on stable"
	}
	want := map[bool]string{true: "20% on the canary Service, on the stable's pods, not back on stable", false: "0%, back on stable"}[h.version != "v1.7.2"]
	h.record("Istio canary at 20%, one stable pod hung: the canary weight 20 s after an abort (and where the canary Service pointed most of the last 15 s), RD104", pred+", "+says, got+", "+says)
	if pred+", "+says != want || got+", "+says != want {
		t.Errorf("abort with a hung stable pod: escape %s, diagnose %s, the router %s (canary Service on the stable %.0f%% of 15 s); want %s\n%s", pred, says, got, 100*on, want, h.dump())
	}
	// Deleting the pod: its replacement turns Ready, and the abort writes 0%.
	h.kubectl("-n", h.ns, "delete", "pod", hung, "--wait=false")
	h.waitFor("0% after the delete", 90*time.Second, func() bool { return o.Now().CanaryWeight == 0 })
}

// istioDSSStableHung: that Istio canary with dynamicStableScale (and no
// abortScaleDownDelaySeconds, whose deadlock is RD155's), paused at 20%
// with the stable at 4 pods, one of them hung. The abort's own weight is
// the share the stable's available pods cannot take, on every version: an
// abort must keep 20% for 20 s, as escape says, with RD104 saying why. An
// undo then must read Healthy with the router still at 20% and the canary
// Service on the canary's pods, as escape's undo stop says, and RD175 must
// say it. Deleting the pod must take the weight to 0 and the canary
// Service to the stable, and RD175 must go.
func istioDSSStableHung(t *testing.T, h *harness) {
	spec := rolloutSpec{replicas: 5, steps: "[{setWeight: 20}, {pause: {}}]", mode: hostMode, dss: true, abortDelay: -1}
	o := h.observeCanarySvc(hostMode)
	h.apply(h.trafficObjects(spec.mode))
	h.apply(h.rolloutYAML(spec, "a"))
	stableHash := h.healthy(o, 5, 90*time.Second)
	h.apply(h.rolloutYAML(spec, "b"))
	h.waitFor("the pause at 20%, the stable at 4", 90*time.Second, func() bool {
		s := o.Now()
		return h.pausedAt(1)() && s.CanaryWeight == 20 && s.RS[stableHash].Spec == 4 && s.RS[stableHash].Available == 4
	})
	_, _, canaryHash, _, _ := h.status()
	hung := h.hangFirstPod(o, stableHash, 3)
	// Once the pod counts as hung, escape rates the stable's capacity
	// after an abort: v1.9+ size the stable for the abort's 80%, 4 pods,
	// 3 of them available; v1.7 and v1.8 scale it back to 5.
	ab3, _ := h.planLater(3 * time.Minute).Option(escape.Abort)
	stablePred := "the stable carries its share"
	if m := shortRE.FindStringSubmatch(ab3.Why); ab3.Verdict == escape.Harmful && m != nil {
		stablePred = m[1] + "% on " + m[2]
	}
	p := h.plan()
	ab, _ := p.Option(escape.Abort)
	un, _ := p.Option(escape.Undo)
	pred := "abort to 0%"
	if strings.Contains(ab.Effect.IfNeverReady, "the weight stays at 20%") {
		pred = "abort stays at 20%"
	}
	if strings.Contains(un.Effect.IfNeverReady, "the Rollout reads Healthy while the router keeps 20% on the canary Service, which still selects app-"+canaryHash+"'s pods") {
		pred += ", undo Healthy at 20% on the canary's pods"
	} else {
		pred += ", undo to 0%"
	}

	h.abortAndHold()
	s0 := o.Now()
	got := fmt.Sprintf("abort at %d%%", s0.CanaryWeight)
	if f := finding(h.diagnose("app"), "RD104"); f == nil || !strings.HasPrefix(f.Message, "aborted, but traffic is not back on stable: 20% still goes to the canary: with dynamicStableScale") {
		got += " (RD104 not saying why)"
	}
	stableGot := "the stable carries its share"
	if share, a := 100-s0.CanaryWeight, s0.RS[stableHash].Available; int64(a)*100 < int64(share)*5 {
		stableGot = fmt.Sprintf("%d%% on %d", share, a)
	}
	stableWant := map[bool]string{true: "80% on 3", false: "the stable carries its share"}[!strings.HasPrefix(h.version, "v1.7.") && !strings.HasPrefix(h.version, "v1.8.")]
	h.record("Istio canary with dynamicStableScale at 20%, one stable pod hung: the stable's share after an abort, on its available pods", stablePred, stableGot)
	if stablePred != stableWant || stableGot != stableWant {
		t.Errorf("the stable after an abort with a hung pod: escape said %q, the controller left %q; want %q\n%s", stablePred, stableGot, stableWant, h.dump())
	}
	h.run("escape", "app", "--do", "undo", "--yes", "--force", "--watch-timeout", "0")
	h.waitFor("Healthy after the undo", 60*time.Second, func() bool {
		phase, stable, current, _, _ := h.status()
		return phase == "Healthy" && stable == stableHash && current == stableHash
	})
	time.Sleep(10 * time.Second)
	s := o.Now()
	got += fmt.Sprintf(", undo Healthy at %d%% on the %s's pods", s.CanaryWeight, map[string]string{canaryHash: "canary", stableHash: "stable"}[s.CanarySvc])
	if f := finding(h.diagnose("app"), "RD175"); f == nil || !strings.Contains(f.Message, "20% of traffic still goes to app-"+canaryHash) {
		got += " (no RD175)"
	}
	const want = "abort stays at 20%, undo Healthy at 20% on the canary's pods"
	h.record("Istio canary with dynamicStableScale at 20%, one stable pod hung: the weight 20 s after an abort, then after an undo (RD104, RD175)", pred, got)
	if pred != want || got != strings.Replace(want, "abort stays at", "abort at", 1) {
		t.Errorf("dynamicStableScale with a hung stable pod: escape said %q, the controller did %q; want %q\n%s", pred, got, want, h.dump())
	}
	// Deleting the pod: the stable completes, and the rollback moves the
	// rest of the weight and the canary Service to it.
	h.kubectl("-n", h.ns, "delete", "pod", hung, "--wait=false")
	h.waitFor("0% and the canary Service on the stable after the delete", 90*time.Second, func() bool {
		s := o.Now()
		return s.CanaryWeight == 0 && s.CanarySvc == stableHash
	})
	if f := finding(h.diagnose("app"), "RD175"); f != nil {
		t.Errorf("RD175 after the rollback finished: %s", f.Message)
	}
}

// istioPausedAt20 brings an Istio canary of 5 (spec, whose first step is
// setWeight 20 and then a pause) from revision a, Healthy, to b paused at
// 20%, and returns its observer and the stable's hash.
func (h *harness) istioPausedAt20(spec rolloutSpec) (*observer, string) {
	h.t.Helper()
	o := h.observeCanarySvc(hostMode)
	h.apply(h.trafficObjects(spec.mode))
	h.apply(h.rolloutYAML(spec, "a"))
	stableHash := h.healthy(o, 5, 90*time.Second)
	h.apply(h.rolloutYAML(spec, "b"))
	h.waitFor("the pause at 20%", 90*time.Second, func() bool { return h.pausedAt(1)() && o.Now().CanaryWeight == 20 })
	return o, stableHash
}

// onHash is the share of the last d during which the canary Service
// selected hash: the selector in force at each moment is the last one
// written before it.
func onHash(ss []sample, hash string, d time.Duration) float64 {
	to := time.Now()
	from := to.Add(-d)
	var on time.Duration
	cur, at := "", from
	for _, s := range ss {
		if s.At.After(to) {
			break
		}
		if s.At.After(from) {
			if cur == hash {
				on += s.At.Sub(at)
			}
			at = s.At
		}
		cur = s.CanarySvc
	}
	if cur == hash {
		on += to.Sub(at)
	}
	return float64(on) / float64(d)
}

// abortAndHold aborts with escape --do abort, waits for the abort to land,
// and gives the controller 20 s to do whatever it does next.
func (h *harness) abortAndHold() {
	h.t.Helper()
	h.run("escape", "app", "--do", "abort", "--yes", "--force", "--watch-timeout", "0")
	h.waitFor("the abort", 30*time.Second, func() bool {
		_, _, _, _, abort := h.status()
		return abort
	})
	time.Sleep(20 * time.Second)
}

// hangFirstPod hangs the first pod (by name, not being deleted) of the ReplicaSet with the
// given hash through the lab's crash-loop stage — Ready for 1 s, then an
// hour in CrashLoopBackOff — and waits until it is unready and the
// ReplicaSet counts available pods; it returns the pod's name.
func (h *harness) hangFirstPod(o *observer, hash string, available int64) string {
	h.t.Helper()
	return h.hangPods(o, hash, 1, available)[0]
}

// hangPods hangs the first n pods of the ReplicaSet as hangFirstPod does
// one, and returns their names.
func (h *harness) hangPods(o *observer, hash string, n int, available int64) []string {
	h.t.Helper()
	// Not ones being deleted: a scale-down just before leaves terminating
	// pods in the list (the lab's kwok keeps them a while).
	var pods []string
	out := h.kubectl("-n", h.ns, "get", "pods", "-l", "rollouts-pod-template-hash="+hash, "--sort-by", "{.metadata.name}",
		"-o", `jsonpath={range .items[*]}{.metadata.name}{" "}{.metadata.deletionTimestamp}{"\n"}{end}`)
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(l); len(f) == 1 && len(pods) < n {
			pods = append(pods, f[0])
		}
	}
	if len(pods) < n {
		h.t.Fatalf("fewer than %d pods of %s that are not being deleted:\n%s", n, hash, out)
	}
	for _, pod := range pods {
		h.hang(pod)
	}
	h.waitFor("the pods to hang", 60*time.Second, func() bool {
		for _, pod := range pods {
			if h.kubectl("-n", h.ns, "get", "pod", pod, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`) != "False" {
				return false
			}
		}
		return o.Now().RS[hash].Available == available
	})
	return pods
}

// hang puts the pod in the lab's crash-loop stage: Ready for 1 s, then an
// hour in CrashLoopBackOff.
func (h *harness) hang(pod string) {
	h.t.Helper()
	h.kubectl("-n", h.ns, "annotate", "pod", pod, "crash-loop.stage.rolloutdoctor.dev/enabled=true",
		"crash-loop.stage.rolloutdoctor.dev/ready-for=1s", "crash-loop.stage.rolloutdoctor.dev/back-off=3600s")
}

// shortRE reads the stable's share and available pods out of a way out's
// harmful verdict.
var shortRE = regexp.MustCompile(`(\d+)% of traffic on the stable app-[0-9a-z]+'s (\d+) available pods`)

// istioStableShort: an Istio canary of 5 paused at 20% without
// dynamicStableScale, two stable pods hung: the stable carries 80% on 3
// pods. Once they count as hung (planned three minutes on, from a
// snapshot taken now: the controller does nothing meanwhile) escape must
// rate doing nothing harmful, a promote as ending it, and an abort by the
// share it leaves on those 3 pods — 100% on every version: v1.7.2 writes
// 0% at once; from v1.8.2 the stable availability check holds 20% on the
// canary Service, which the abort points at the stable's pods (most of
// the time: #3078). RD178 must name the state. The abort must then leave
// what escape said.
func istioStableShort(t *testing.T, h *harness) {
	spec := rolloutSpec{replicas: 5, steps: "[{setWeight: 20}, {pause: {}}, {setWeight: 60}, {pause: {}}]", mode: hostMode}
	o, stableHash := h.istioPausedAt20(spec)
	h.hangPods(o, stableHash, 2, 3)
	p := h.planLater(3 * time.Minute)
	w, _ := p.Option(escape.Wait)
	pr, _ := p.Option(escape.Promote)
	ab, _ := p.Option(escape.Abort)
	short := "80% of traffic on the stable app-" + stableHash + "'s 3 available pods (that share needs 4)"
	if w.Verdict != escape.Harmful || w.Why != "doing nothing leaves "+short || !strings.HasPrefix(pr.Why, "it ends the stable's shortage; ") {
		t.Errorf("escape once the pods hung: wait %s %q; promote %s %q", w.Verdict, w.Why, pr.Verdict, pr.Why)
	}
	if f := finding(h.diagnose("app"), "RD178"); f == nil || !strings.HasPrefix(f.Message, "80% of traffic on the stable app-"+stableHash+"'s 3 available pods: that share needs 4 of 5") {
		t.Errorf("RD178: %+v", f)
	}
	pred := "the stable carries its share"
	if m := shortRE.FindStringSubmatch(ab.Why); ab.Verdict == escape.Harmful && m != nil {
		pred = m[1] + "% on " + m[2]
	}
	h.abortAndHold()
	s := o.Now()
	// What lands on the stable's pods: the stable destination's weight,
	// and the canary's too while the canary Service selects them — after
	// an abort most of the time (#3078 points it back on each pass).
	on := onHash(o.Samples(), stableHash, 15*time.Second)
	share := 100 - s.CanaryWeight
	if on > 0.5 {
		share = 100
	}
	got := fmt.Sprintf("%d%% on %d", share, s.RS[stableHash].Available)
	want := "100% on 3"
	h.record("Istio canary at 20%, two of 5 stable pods hung: the stable's share after an abort, on its available pods (the router's stable weight, and the canary's while the canary Service selects the stable most of the last 15 s)", pred,
		fmt.Sprintf("%s (router %d/%d, canary Service on the stable %.0f%% of the time)", got, 100-s.CanaryWeight, s.CanaryWeight, 100*on))
	if pred != want || got != want {
		t.Errorf("abort with the stable short: escape said %q, the controller left %q (canary Service on the stable %.0f%% of 15 s); want %q\n%s", pred, got, 100*on, want, h.dump())
	}
}
