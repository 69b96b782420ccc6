//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

func init() {
	scenarios = append(scenarios,
		scenario{"bug-subset-unready", bugSubsetUnready},
		scenario{"bug-abort-paused", bugAbortPaused},
		scenario{"bug-dss-abort", bugDSSAbort},
	)
}

// affects says whether the catalogue gives bug rule id for the harness's
// controller version.
func (h *harness) affects(id string) bool {
	for _, b := range diagnose.Bugs() {
		if b.Rule == id {
			return b.Affects(upstream.Version(h.version))
		}
	}
	h.t.Fatalf("no catalogued bug %s", id)
	return false
}

// holdUnready moves the Rollout to image and makes its new pods never turn
// ready (kwok's pod-ready stage an hour away): a canary whose pods stay
// unavailable, as with ImagePullBackOff or a failing readiness probe.
func (h *harness) holdUnready(image string) {
	h.kubectl("-n", h.ns, "patch", "rollout", "app", "--type", "json", "-p", fmt.Sprintf(`[
{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"registry.example/app:%s"},
{"op":"replace","path":"/spec/template/metadata/annotations/pod-ready.stage.kwok.x-k8s.io~1delay","value":"3600s"},
{"op":"replace","path":"/spec/template/metadata/annotations/pod-ready.stage.kwok.x-k8s.io~1jitter-delay","value":"3600s"}]`, image))
}

// progressingReason is the reason of the Rollout's Progressing condition.
func (h *harness) progressingReason() string {
	u := h.get(gvrRollout, "app")
	conds, _ := u.Object["status"].(map[string]interface{})["conditions"].([]interface{})
	for _, c := range conds {
		cm, _ := c.(map[string]interface{})
		if cm["type"] == "Progressing" {
			r, _ := cm["reason"].(string)
			return r
		}
	}
	return ""
}

// bugSubsetUnready reproduces #4626 and #4128: Istio subset-only routing, a
// canary whose pods never become ready and progressDeadlineSeconds 10.
// Where the gate's wait is an error (v1.8.2, v1.9.3, v1.10.2) the deadline
// never fires; elsewhere the Rollout turns Degraded. Then an abort: v1.8.2
// never acts on it, the others do. diagnose must report RD150/RD151 on the
// affected versions and not on the others.
func bugSubsetUnready(t *testing.T, h *harness) {
	spec := rolloutSpec{replicas: 4, steps: "[{setWeight: 50}, {pause: {}}]", mode: subsetOnly, progressDeadline: 10}
	o := h.observe(isCanaryDest(subsetOnly))
	h.apply(h.trafficObjects(subsetOnly))
	h.apply(h.rolloutYAML(spec, "a"))
	h.healthy(o, 4, 90*time.Second)
	h.holdUnready("b")
	h.waitFor("the canary's pods to exist", 60*time.Second, func() bool {
		_, stable, current, _, _ := h.status()
		return current != stable && o.Now().RS[current].Spec > 0
	})
	// Four times the deadline: a deadline that is evaluated has fired.
	time.Sleep(40 * time.Second)
	reason := h.progressingReason()
	rep := h.diagnose("app")
	stuck := reason != "ProgressDeadlineExceeded"
	want := h.affects("RD150")
	h.record("known bug #4626: subset-only canary never ready, progressDeadlineSeconds 10, after 40 s",
		fmt.Sprintf("RD150 %v", hasFinding(rep, "RD150")), "Progressing reason "+reason)
	if stuck != want || hasFinding(rep, "RD150") != want {
		t.Errorf("%s: catalogue says affected=%v; observed Progressing reason %q; diagnose findings %s", h.version, want, reason, findingIDs(rep))
	}

	h.kubectl("-n", h.ns, "patch", "rollout", "app", "--subresource", "status", "--type", "merge", "-p", `{"status":{"abort":true}}`)
	held := false
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && h.progressingReason() != "RolloutAborted" {
		time.Sleep(time.Second)
	}
	held = h.progressingReason() != "RolloutAborted"
	rep = h.diagnose("app")
	want = h.affects("RD151")
	h.record("known bug #4128: abort of that canary, after 20 s",
		fmt.Sprintf("RD151 %v", hasFinding(rep, "RD151")), fmt.Sprintf("abort acted on: %v (Progressing reason %s)", !held, h.progressingReason()))
	if held != want || hasFinding(rep, "RD151") != want {
		t.Errorf("%s: catalogue says #4128 affected=%v; abort held=%v; diagnose findings %s", h.version, want, held, findingIDs(rep))
	}
}

// bugAbortPaused reproduces #3756: an abort of a Rollout whose spec.paused
// is true moves traffic to the stable but leaves the canary its pods.
func bugAbortPaused(t *testing.T, h *harness) {
	spec := rolloutSpec{replicas: 4, steps: "[{setWeight: 50}, {pause: {}}]", mode: hostMode}
	o := h.observe(isCanaryDest(hostMode))
	h.apply(h.trafficObjects(hostMode))
	h.apply(h.rolloutYAML(spec, "a"))
	h.healthy(o, 4, 90*time.Second)
	h.setImage("b")
	h.waitFor("the pause at setWeight 50", 90*time.Second, func() bool {
		phase, _, _, idx, _ := h.status()
		return phase == "Paused" && idx == 1 && o.Now().CanaryWeight == 50
	})
	_, _, canary, _, _ := h.status()
	h.kubectl("-n", h.ns, "patch", "rollout", "app", "--type", "merge", "-p", `{"spec":{"paused":true}}`)
	h.settled(o, 3*time.Second, 30*time.Second)
	h.kubectl("-n", h.ns, "patch", "rollout", "app", "--subresource", "status", "--type", "merge", "-p", `{"status":{"abort":true}}`)
	// abortScaleDownDelaySeconds is 5 s in these Rollouts: well past it the
	// canary of an abort that completes is at 0.
	time.Sleep(20 * time.Second)
	left := o.Now().RS[canary].Spec
	rep := h.diagnose("app")
	want := h.affects("RD154")
	h.record("known bug #3756: abort while spec.paused, after 20 s", fmt.Sprintf("RD154 %v", hasFinding(rep, "RD154")),
		fmt.Sprintf("canary %d pods, weight %d", left, o.Now().CanaryWeight))
	if (left > 0) != want || hasFinding(rep, "RD154") != want {
		t.Errorf("%s: catalogue says #3756 affected=%v; canary still has %d pods; findings %s", h.version, want, left, findingIDs(rep))
	}
	// Unpausing, the remedy the finding gives, completes the abort.
	h.kubectl("-n", h.ns, "patch", "rollout", "app", "--type", "merge", "-p", `{"spec":{"paused":false}}`)
	h.waitFor("the canary to be scaled down after unpausing", 40*time.Second, func() bool { return o.Now().RS[canary].Spec == 0 })
	if ids := findingIDs(h.diagnose("app")); strings.Contains(ids, "RD154") {
		t.Errorf("RD154 still reported after the unpause: %s", ids)
	}
}

// bugDSSAbort tries #4898: an abort at setWeight 50 with dynamicStableScale
// and abortScaleDownDelaySeconds. The source puts the circular wait in
// v1.9.3 and v1.10.2, but in this shape (Istio host mode, 4 replicas, a
// 5 s delay) the abort completed on every version (v1.9.3 and v1.10.2 too): the
// issue was seen with ALB and the Gateway API plugin. So the check is that
// diagnose agrees with the controller — RD155 exactly when the canary is
// still held with the stable short — and the record says what happened on
// each version.
func bugDSSAbort(t *testing.T, h *harness) {
	spec := rolloutSpec{replicas: 4, steps: "[{setWeight: 50}, {pause: {}}]", mode: hostMode, dss: true, abortDelay: 5}
	o := h.observe(isCanaryDest(hostMode))
	h.apply(h.trafficObjects(hostMode))
	h.apply(h.rolloutYAML(spec, "a"))
	stable := h.healthy(o, 4, 90*time.Second)
	h.setImage("b")
	h.waitFor("the pause at setWeight 50", 90*time.Second, func() bool {
		phase, _, _, idx, _ := h.status()
		return phase == "Paused" && idx == 1 && o.Now().CanaryWeight == 50
	})
	_, _, canary, _, _ := h.status()
	h.kubectl("-n", h.ns, "patch", "rollout", "app", "--subresource", "status", "--type", "merge", "-p", `{"status":{"abort":true}}`)
	// Five times abortScaleDownDelaySeconds: an abort that completes has
	// scaled the canary to 0 and the stable back to 4.
	time.Sleep(25 * time.Second)
	now := o.Now()
	stuck := now.RS[canary].Spec > 0 && now.RS[stable].Available < 4
	rep := h.diagnose("app")
	want := h.affects("RD155")
	h.record("known bug #4898: abort at setWeight 50 with dynamicStableScale and abortScaleDownDelaySeconds 5, after 25 s",
		fmt.Sprintf("RD155 %v (catalogue: affected %v)", hasFinding(rep, "RD155"), want),
		fmt.Sprintf("canary %d/%d pods, stable %d/4 available, weight %d", now.RS[canary].Available, now.RS[canary].Spec, now.RS[stable].Available, now.CanaryWeight))
	if hasFinding(rep, "RD155") != stuck {
		t.Errorf("%s (catalogue: #4898 affected=%v): abort held=%v (canary spec %d, stable available %d) but RD155 %v; findings %s",
			h.version, want, stuck, now.RS[canary].Spec, now.RS[stable].Available, hasFinding(rep, "RD155"), findingIDs(rep))
	}
}
