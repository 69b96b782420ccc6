//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/escape"
)

func init() {
	scenarios = append(scenarios, scenario{"window-deadline-abort", windowDeadlineAbort})
}

// windowDeadlineAbort: an Istio canary of 4 (setWeight 25, pause 5s) with
// progressDeadlineSeconds 20 and progressDeadlineAbort goes from A to B;
// then a ResourceQuota of 5 pods, and the template back to A: a rollback
// within the window that needs 8 pods. A's ReplicaSet creates 1 and the
// API server refuses the rest.
//
// diagnose must report RD185 with the quota's refusal, and escape must put
// letting the pods be created first, its wait ending short of Healthy.
// Before the deadline RD170 must say that the deadline's abort lasts only
// until A's scale-down, after which the rollback starts over; the
// controller must then abort at the deadline, move the weight to 0, scale
// A down after the abort delay, clear the abort and scale A up again.
// Deleting the quota and annotating A's ReplicaSet, as RD185's remedy
// says, must bring A's pods at once, and the rollback must finish.
func windowDeadlineAbort(t *testing.T, h *harness) {
	spec := rolloutSpec{replicas: 4, steps: "[{setWeight: 25}, {pause: {duration: 5s}}]", mode: hostMode, progressDeadline: 20, deadlineAbort: true}
	o := h.observe(isCanaryDest(hostMode))
	hashA, _ := h.aThenB(o, spec, 90*time.Second)
	h.apply("apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: pods}\nspec: {hard: {pods: \"5\"}}\n")
	h.waitFor("the quota's usage", 30*time.Second, func() bool {
		return strings.TrimSpace(h.kubectl("-n", h.ns, "get", "resourcequota", "pods", "-o", "jsonpath={.status.used.pods}")) == "4"
	})
	h.setImage("a")
	h.waitFor("25% on A's one pod", 60*time.Second, func() bool {
		s := o.Now()
		return s.CanaryWeight == 25 && s.RS[hashA].Available == 1
	})
	if dir := os.Getenv("E2E_KEEP_SNAPSHOTS"); dir != "" {
		// How internal/exampletest's lab/istio-window-quota fixtures were taken.
		_ = os.WriteFile(fmt.Sprintf("%s/window-quota-%s.json", dir, h.version), []byte(h.stdout("snapshot", "app", "-n", h.ns, "--kubeconfig", kubeconfig)), 0o644)
	}
	rep := h.diagnose("app")
	p := h.plan()
	wait, _ := p.Option(escape.Wait)
	refused := strings.Join(messages(rep, "RD185"), " ")
	got := fmt.Sprintf("RD185 quotes the quota %v; escape: %s first %v, wait ends %s at %d%%", strings.Contains(refused, "exceeded quota: pods"),
		p.Recommended, strings.HasPrefix(p.Reason, "first let the pods be created (RD185)"), wait.Effect.Phase, wait.Effect.FinalWeight)
	want := "RD185 quotes the quota true; escape: wait first true, wait ends Progressing at 25%"
	h.record("rollback within the window under a pods quota, 3 of A's 4 pods refused: RD185 and escape", want, got)
	if got != want {
		t.Errorf("%s: %s, want %s\n%s", h.version, got, want, h.dump())
	}

	// RD170 once half the deadline has passed: the abort and the cycle.
	var said string
	h.waitFor("RD170 on the stuck rollback", 30*time.Second, func() bool {
		said = strings.Join(messages(h.diagnose("app"), "RD170"), " ")
		return said != ""
	})
	cycle := strings.Contains(said, "the window's next pass clears the abort and the rollback starts over")
	// The controller: the abort (weight 0) and A scaled down, the abort
	// cleared, A asking for its 4 pods again. When its one pod comes back
	// (and 25% with it) is up to the ReplicaSet controller's back-off,
	// which grows with every refusal: 8–30 s alone, minutes under the
	// full suite's load.
	var aborted, down, cleared, again time.Time
	// diagnose while the abort holds (the abort delay, 5 s): RD104 must
	// say that it holds until A's scale-down, not that the next pass
	// clears it. A loaded machine may read it only after it went.
	rd104 := ""
	h.waitFor("the deadline's abort, its end and A scaled up again", 90*time.Second, func() bool {
		if !aborted.IsZero() && down.IsZero() && rd104 == "" {
			if m := messages(h.diagnose("app"), "RD104"); len(m) > 0 {
				rd104 = m[0]
			}
		}
		for _, s := range o.Samples() {
			switch {
			case aborted.IsZero() && s.Abort && s.CanaryWeight == 0:
				aborted = s.At
			case !aborted.IsZero() && down.IsZero() && s.RS[hashA].Spec == 0 && s.At.After(aborted):
				down = s.At
			case !down.IsZero() && cleared.IsZero() && !s.Abort && !s.At.Before(down):
				cleared = s.At
			case !cleared.IsZero() && again.IsZero() && s.RS[hashA].Spec == 4 && !s.At.Before(cleared):
				again = s.At
			}
		}
		return !again.IsZero()
	})
	got = fmt.Sprintf("RD170 says the rollback starts over %v; aborted (0%%), A scaled to 0 %.0f s later, the abort cleared %.1f s after that, A scaled to 4 again %.1f s after that",
		cycle, down.Sub(aborted).Seconds(), cleared.Sub(down).Seconds(), again.Sub(cleared).Seconds())
	h.record("rollback within the window under a pods quota, at the progress deadline (20 s, progressDeadlineAbort): RD170, then the controller",
		"RD170 says the rollback starts over true; aborted (0%), A scaled to 0 after the abort delay (5 s), the abort cleared at once, A scaled to 4 again", got)
	if !cycle || down.Sub(aborted) > 30*time.Second || cleared.Sub(down) > 10*time.Second {
		t.Errorf("%s: %s\nRD170: %s\n%s", h.version, got, said, h.dump())
	}
	switch holds := strings.Contains(rd104, "aborted by the progress deadline during a rollback within rollbackWindow"); {
	case rd104 == "":
		t.Logf("%s: the abort went before diagnose read it", h.version)
	case !holds:
		t.Errorf("%s: RD104 while the deadline's abort holds: %s", h.version, rd104)
	default:
		h.record("rollback within the window under a pods quota, while the deadline's abort holds: RD104", "the abort holds until A's scale-down, then the rollback starts over", "RD104: "+rd104)
	}

	// RD185's remedy: the quota gone, the ReplicaSet annotated.
	h.waitFor("A asking for 4 again", 60*time.Second, func() bool {
		return strings.TrimSpace(h.kubectl("-n", h.ns, "get", "rs", "-l", "rollouts-pod-template-hash="+hashA, "-o", "jsonpath={.items[0].spec.replicas}")) == "4"
	})
	h.kubectl("-n", h.ns, "delete", "resourcequota", "pods")
	h.kubectl("-n", h.ns, "annotate", "rs", "-l", "rollouts-pod-template-hash="+hashA, "rolloutdoctor.dev/retry=1")
	freed := time.Now()
	var pods string
	h.waitFor("A's pods created", 60*time.Second, func() bool {
		pods = strings.TrimSpace(h.kubectl("-n", h.ns, "get", "rs", "-l", "rollouts-pod-template-hash="+hashA, "-o", "jsonpath={.items[0].status.replicas}"))
		return pods == "4"
	})
	created := time.Since(freed)
	h.waitFor("A promoted back to stable", 90*time.Second, func() bool {
		phase, stable, _, _, _ := h.status()
		return phase == "Healthy" && stable == hashA
	})
	h.record("rollback within the window under a pods quota, the quota deleted and A's ReplicaSet annotated (RD185's remedy)", "A's 4 pods at once, then Healthy on A", fmt.Sprintf("A's 4 pods %.1f s after, then Healthy on A", created.Seconds()))
	if created > 5*time.Second {
		t.Errorf("%s: A's pods took %s after the quota was deleted and the ReplicaSet annotated", h.version, created)
	}
}
