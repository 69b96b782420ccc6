//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func init() {
	scenarios = append(scenarios, scenario{"bug-stale-scale-down-deadline", bugStaleScaleDownDeadline})
}

// bugStaleScaleDownDeadline: an Istio canary of 4 with progressDeadlineSeconds
// 12 and progressDeadlineAbort, abortScaleDownDelaySeconds 3.
//
// First an update whose pod never turns ready: once it has waited half the
// deadline diagnose must say when the deadline aborts it (RD170, a
// warning), and the controller must abort it then.
//
// Then #4971: the aborted ReplicaSet is scaled to 0 and keeps its
// scale-down-deadline annotation, whose time passes. The next update whose
// pod never turns ready is never timed out: 10 s past its deadline it must
// still be Progressing, diagnose must report RD171 (and not RD170's
// deadline, which will not come). Removing the annotation, as RD171 says to,
// must let the deadline abort it within seconds.
func bugStaleScaleDownDeadline(t *testing.T, h *harness) {
	spec := rolloutSpec{replicas: 4, steps: "[{setWeight: 20}, {pause: {}}]", mode: hostMode, progressDeadline: 12, abortDelay: 3, deadlineAbort: true}
	o := h.observe(isCanaryDest(hostMode))
	h.apply(h.trafficObjects(hostMode))
	h.apply(h.rolloutYAML(spec, "a"))
	h.healthy(o, 4, 90*time.Second)

	h.holdUnready("b")
	var said string
	h.waitFor("RD170 on the unready canary", 30*time.Second, func() bool {
		rep := h.diagnose("app")
		for _, f := range rep.Findings {
			if f.ID == "RD170" {
				said = f.Severity.String() + ": " + f.Message
			}
		}
		return said != ""
	})
	_, from, _ := h.progressing()
	// escape's "if nothing is done" says when the deadline aborts.
	escapeDue := "none"
	if p := h.plan(); p.Deadline != nil {
		escapeDue = p.Deadline.Due.UTC().Format(time.RFC3339)
	}
	h.waitFor("the deadline's abort", 40*time.Second, func() bool {
		_, _, _, _, abort := h.status()
		return abort
	})
	// The pass that times the update out writes the abort with the
	// ProgressDeadlineExceeded condition (its lastUpdateTime is that
	// moment); the next pass makes the condition RolloutAborted.
	reason, at, _ := h.progressing()
	t0, _ := time.Parse(time.RFC3339, from)
	t1, _ := time.Parse(time.RFC3339, at)
	after := int(t1.Sub(t0).Seconds())
	h.record("progressDeadlineSeconds 12 with progressDeadlineAbort, the canary's pod never ready: diagnose (RD170) against the controller",
		"warning: aborted at the deadline, 12 s after the last progress", fmt.Sprintf("%s: aborted %d s after the last progress", strings.SplitN(said, ":", 2)[0], after))
	if !strings.HasPrefix(said, "warning: ") || !strings.Contains(said, "the controller aborts it") || (reason != "RolloutAborted" && reason != "ProgressDeadlineExceeded") || after < 12 || after > 16 {
		t.Errorf("RD170 said %q; the controller: %s %d s after the last progress (%s → %s)\n%s", said, reason, after, from, at, h.dump())
	}
	if want := t0.Add(12 * time.Second).UTC().Format(time.RFC3339); escapeDue != want {
		t.Errorf("escape's deadline abort due %s, want %s (12 s after %s)", escapeDue, want, from)
	}

	// The aborted ReplicaSet goes to 0 after abortScaleDownDelaySeconds and
	// keeps its annotation.
	_, _, aborted, _, _ := h.status()
	var annotated string
	h.waitFor("the aborted canary scaled to 0, its scale-down deadline passed", 60*time.Second, func() bool {
		annotated = strings.TrimSpace(h.kubectl("-n", h.ns, "get", "rs", "app-"+aborted, "-o", "jsonpath={.spec.replicas} {.metadata.annotations.scale-down-deadline}"))
		n, when, _ := strings.Cut(annotated, " ")
		d, err := time.Parse(time.RFC3339, when)
		return n == "0" && err == nil && time.Now().After(d.Add(time.Second))
	})
	h.holdUnready("c")
	h.waitFor("the new update", 30*time.Second, func() bool {
		_, _, cur, _, abort := h.status()
		return cur != aborted && !abort
	})
	_, from, _ = h.progressing()
	t0, _ = time.Parse(time.RFC3339, from)
	for time.Now().Before(t0.Add(22 * time.Second)) {
		time.Sleep(500 * time.Millisecond)
	}
	reason, _, _ = h.progressing()
	_, _, _, _, abort := h.status()
	rep := h.diagnose("app")
	want := h.affects("RD171")
	h.record("known bug #4971: the next update's pod never ready, the aborted ReplicaSet's scale-down-deadline stale; 10 s past the deadline",
		fmt.Sprintf("RD171 %v (catalogue: affected %v), RD170 false", hasFinding(rep, "RD171"), want),
		fmt.Sprintf("Progressing reason %s, aborted %v", reason, abort))
	if abort == want || hasFinding(rep, "RD171") != want || hasFinding(rep, "RD170") == want {
		t.Errorf("%s: catalogue says #4971 affected=%v; aborted %v (%s); findings %s\n%s", h.version, want, abort, reason, findingIDs(rep), h.dump())
	}
	h.kubectl("-n", h.ns, "annotate", "rs", "app-"+aborted, "scale-down-deadline-")
	start := time.Now()
	h.waitFor("the abort once the stale annotation is gone", 30*time.Second, func() bool {
		_, _, _, _, abort := h.status()
		return abort
	})
	h.record("known bug #4971: the stale annotation removed, as RD171 says", "aborted by the deadline", fmt.Sprintf("aborted %.0f s later", time.Since(start).Seconds()))
}
