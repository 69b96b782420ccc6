//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func init() {
	// First: it waits two minutes for a pod to count as hung, and then for
	// two restarts, some five minutes in all.
	scenarios = append([]scenario{{"restart-stalled", restartStalledScenario}}, scenarios...)
}

// restartPods is each pod's name and creationTimestamp, and whether it is
// being deleted, in name order.
func (h *harness) restartPods() []string {
	out := strings.TrimSpace(h.kubectl("-n", h.ns, "get", "pods", "-l", "app=app", "--sort-by", "{.metadata.name}",
		"-o", `jsonpath={range .items[*]}{.metadata.name}{"@"}{.metadata.creationTimestamp}{"@"}{.metadata.deletionTimestamp}{"\n"}{end}`))
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// olderThan counts the pods created before at (RFC 3339) and lists every
// pod being deleted.
func olderThan(pods []string, at string) (old int, deleting []string) {
	t, _ := time.Parse(time.RFC3339, at)
	for _, p := range pods {
		f := strings.Split(p, "@")
		if len(f) < 3 {
			continue
		}
		if c, err := time.Parse(time.RFC3339, f[1]); err == nil && c.Before(t) {
			old++
		}
		if f[2] != "" {
			deleting = append(deleting, f[0])
		}
	}
	return old, deleting
}

// restartAt is spec.restartAt and status.restartedAt.
func (h *harness) restartAt() (spec, done string) {
	u := h.get(gvrRollout, "app")
	spec, _, _ = unstructured.NestedString(u.Object, "spec", "restartAt")
	done, _, _ = unstructured.NestedString(u.Object, "status", "restartedAt")
	return spec, done
}

// restartStalledScenario: `kubectl argo rollouts restart` of a Healthy
// Rollout of 5 (maxUnavailable 25%: 1) with one pod hung, unready — the
// pod a restart is usually run for. That pod alone fills the allowance, so
// the controller evicts nothing, it included: RD172 first says the restart
// waits for it, and once it has been unready two minutes RD173 names it
// and says to delete it. Deleting it, as RD173 says, lets the restart finish, RD172
// (never RD173) describing it meanwhile. Then a PodDisruptionBudget with
// maxUnavailable 0: every eviction refused (RD173 names the budget);
// deleting the budget lets it finish.
func restartStalledScenario(t *testing.T, h *harness) {
	spec := rolloutSpec{replicas: 5, steps: "[{setWeight: 20}, {pause: {}}]", mode: hostMode}
	o := h.observe(isCanaryDest(hostMode))
	h.apply(h.trafficObjects(spec.mode))
	h.apply(h.rolloutYAML(spec, "a"))
	stable := h.healthy(o, 5, 90*time.Second)

	// One pod hangs: its container exits after 1 s ready and waits an hour
	// in CrashLoopBackOff (the lab's kwok stages).
	pods := h.restartPods()
	hung := strings.Split(pods[0], "@")[0]
	h.hang(hung)
	h.waitFor("the hung pod to turn unready and the Rollout to count 4 available", 60*time.Second, func() bool {
		ready := h.kubectl("-n", h.ns, "get", "pod", hung, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
		return ready == "False" && o.Now().RS[stable].Available == 4
	})

	h.officialPlugin("restart", "app")
	at, _ := h.restartAt()
	time.Sleep(2 * time.Second) // past restartAt's second, so the restart is due
	// Unready for seconds, the pod may still come back: RD172 says the
	// restart waits for it.
	rep := h.diagnose("app")
	if f := finding(rep, "RD172"); f == nil || !strings.Contains(f.Message, "it waits for "+hung) || finding(rep, "RD173") != nil {
		t.Errorf("a pod unready for seconds: want RD172 waiting for %s, not RD173; findings %s", hung, findingIDs(rep))
	}
	// Unready for two minutes, it is hung: RD173.
	unready, _ := time.Parse(time.RFC3339, h.kubectl("-n", h.ns, "get", "pod", hung, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].lastTransitionTime}`))
	time.Sleep(time.Until(unready.Add(2*time.Minute + 3*time.Second)))
	rep = h.diagnose("app")
	f := finding(rep, "RD173")
	pred := "RD173 absent"
	if f != nil {
		pred = fmt.Sprintf("RD173 %s: nothing evicted, the hung pod included", f.Severity)
		if !strings.Contains(f.Message, hung+" has not been available since") || !strings.Contains(f.Message, "and predates spec.restartAt") || !strings.Contains(f.Remediation, "kubectl delete pod -n "+h.ns+" "+hung) {
			pred += " (but RD173 does not name the hung pod and say to delete it)"
		}
	}
	if finding(rep, "RD172") != nil {
		t.Errorf("RD172 beside RD173: one answer per state\n%+v", rep.Findings)
	}
	// escape's plan carries the same answer: no way out ends the restart,
	// and its fix is in the reason.
	if p := h.plan(); p.Restart == nil || !p.Restart.Stalled || !strings.Contains(p.Restart.Fix, "kubectl delete pod -n "+h.ns+" "+hung) ||
		!strings.Contains(p.Reason, "kubectl delete pod -n "+h.ns+" "+hung) {
		t.Errorf("escape's plan on the stalled restart: restart %+v, reason %q", p.Restart, p.Reason)
	}
	// The controller looks again every 30 s: two minutes without an
	// eviction are passes that found nothing to do, and re-checks that
	// found the same.
	old, deleting := olderThan(h.restartPods(), at)
	_, done := h.restartAt()
	phase := h.rolloutMessage()
	obs := fmt.Sprintf("after 2 min %d of 5 pods older than restartAt, %d being deleted, restartedAt %q, message %q", old, len(deleting), done, phase)
	h.record("restart of 5 (maxUnavailable 1) with one pod hung unready", pred, obs)
	if pred != "RD173 warning: nothing evicted, the hung pod included" || old != 5 || len(deleting) != 0 || done != "" || phase != "rollout is restarting" {
		t.Errorf("hung pod: diagnose %s; the controller: %s\n%s", pred, obs, h.dump())
	}

	// RD173's remedy: delete the hung pod. The restart goes on; while it
	// does, diagnose says RD172 and never RD173.
	h.kubectl("-n", h.ns, "delete", "pod", hung, "--wait=false")
	h.restartRuns(at, "after the hung pod was deleted")

	// A PodDisruptionBudget that allows none.
	h.apply(`apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: app}
spec: {maxUnavailable: 0, selector: {matchLabels: {app: app}}}
`)
	h.waitFor("the PodDisruptionBudget's status", 60*time.Second, func() bool {
		return h.kubectl("-n", h.ns, "get", "pdb", "app", "-o", "jsonpath={.status.observedGeneration}/{.status.expectedPods}") == "1/5"
	})
	time.Sleep(time.Second) // a new second: restartAt is whole seconds
	h.officialPlugin("restart", "app")
	at, _ = h.restartAt()
	time.Sleep(2 * time.Second)
	rep = h.diagnose("app")
	pred = "RD173 absent"
	if f := finding(rep, "RD173"); f != nil {
		pred = fmt.Sprintf("RD173 %s: nothing evicted", f.Severity)
		if !strings.Contains(f.Message, "PodDisruptionBudget app allows no disruption") {
			pred += " (but RD173 does not name the budget)"
		}
	}
	time.Sleep(35 * time.Second)
	old, deleting = olderThan(h.restartPods(), at)
	_, done = h.restartAt()
	obs = fmt.Sprintf("after 35 s %d of 5 pods older than restartAt, %d being deleted, restartedAt recorded %v", old, len(deleting), done == at)
	h.record("restart of 5 under a PodDisruptionBudget with maxUnavailable 0", pred, obs)
	if pred != "RD173 warning: nothing evicted" || old != 5 || len(deleting) != 0 || done == at {
		t.Errorf("PodDisruptionBudget: diagnose %s; the controller: %s\n%s", pred, obs, h.dump())
	}
	h.kubectl("-n", h.ns, "delete", "pdb", "app")
	h.restartRuns(at, "after the PodDisruptionBudget was deleted")
}

// restartRuns waits for the restart requested at at to finish,
// status.restartedAt set to it and no pod older, sampling diagnose
// meanwhile: RD172 describes it, RD173 never fires. Three minutes at most:
// in a whole-suite run four versions took just over 90 s once the
// PodDisruptionBudget was gone, the controller's passes far apart under
// load.
func (h *harness) restartRuns(at, after string) {
	h.t.Helper()
	seen172, seen173 := 0, ""
	h.waitFor("the restart to finish "+after, 3*time.Minute, func() bool {
		_, done := h.restartAt()
		if done == at {
			old, _ := olderThan(h.restartPods(), at)
			return old == 0
		}
		rep := h.diagnose("app")
		if finding(rep, "RD172") != nil {
			seen172++
		}
		if f := finding(rep, "RD173"); f != nil && seen173 == "" {
			seen173 = f.Message
		}
		// A read every few seconds: each is a whole plugin run, and five
		// versions sample at once beside the rest of the suite.
		time.Sleep(3 * time.Second)
		return false
	})
	obs := "RD172 seen, RD173 never"
	if seen172 == 0 || seen173 != "" {
		obs = fmt.Sprintf("RD172 in %d reads, RD173: %q", seen172, seen173)
	}
	h.record("restart "+after+": diagnose while it runs to the end", "RD172 seen, RD173 never", obs)
	if seen173 != "" {
		h.t.Errorf("RD173 while the restart ran %s: %s", after, seen173)
	}
	if seen172 == 0 {
		h.t.Errorf("RD172 never seen while the restart ran %s", after)
	}
}
