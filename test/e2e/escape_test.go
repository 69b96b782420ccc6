//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/escape"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/gather"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

func init() {
	for _, a := range []escape.Action{escape.Retry, escape.Promote, escape.PromoteFull, escape.Undo, escape.Abort} {
		scenarios = append(scenarios, scenario{"aborted-" + string(a), func(t *testing.T, h *harness) { abortedEscape(t, h, a) }})
	}
	// incident-undo and incident-wait first: their pods turn Ready 9–39 s
	// after they start, the longest scenarios; started first
	// (TestControllers starts scenarios in this order), they do not extend
	// the run.
	scenarios = append([]scenario{{"incident-undo", incidentUndo}, {"incident-wait", incidentWait}}, scenarios...)
	scenarios = append(scenarios,
		scenario{"stale-write-409", staleWrite},
		scenario{"guided-tmux", guidedInTmux},
		scenario{"rbac-readonly", rbacReadOnly},
		scenario{"diagnose-watch", diagnoseWatch},
		scenario{"replaced-undo", replacedUndo},
		scenario{"dss-undo", dssUndo},
	)
}

// plan runs `escape -o json` (read-only) with the real binary.
func (h *harness) plan() *escape.Plan {
	h.t.Helper()
	out := h.run("escape", "app", "-o", "json")
	p := &escape.Plan{}
	if err := json.Unmarshal([]byte(out), p); err != nil {
		h.t.Fatalf("escape -o json: %v\n%s", err, out)
	}
	return p
}

// planLater plans in-process from a snapshot the plugin takes now, read as
// if d had passed: escape counts a pod as hung only after minutes
// unready, and in the states this is for the controller does nothing
// meanwhile, so the lab need not wait them out.
func (h *harness) planLater(d time.Duration) *escape.Plan {
	h.t.Helper()
	v, cv := h.viewLater(d)
	p, err := escape.Build(escape.Input{View: v, Controller: cv})
	if err != nil {
		h.t.Fatalf("escape: %v", err)
	}
	return p
}

// viewLater is the Rollout's view from a snapshot the plugin takes now,
// read as if d had passed, and the controller version detected in it.
func (h *harness) viewLater(d time.Duration) (*snapshot.View, model.ControllerVersion) {
	h.t.Helper()
	cmd := exec.Command(plugin, "snapshot", "app", "-n", h.ns, "--kubeconfig", kubeconfig)
	out, err := cmd.Output()
	if err != nil {
		h.t.Fatalf("snapshot: %v", err)
	}
	s, err := snapshot.Read("snapshot", bytes.NewReader(out))
	if err != nil {
		h.t.Fatalf("snapshot: %v", err)
	}
	ro, err := s.FindRollout(h.ns, "app")
	if err != nil {
		h.t.Fatal(err)
	}
	v, err := s.View(ro)
	if err != nil {
		h.t.Fatal(err)
	}
	v.Now = v.Now.Add(d)
	cv, err := model.DetectVersionFor("", v, "")
	if err != nil {
		h.t.Fatal(err)
	}
	return v, cv
}

// run runs the plugin binary on the lab; exit code 1 is tolerated (findings,
// or an outcome that differs: callers check the output).
func (h *harness) run(args ...string) string {
	h.t.Helper()
	out, code := h.runCode(args...)
	if code != 0 && code != 1 {
		h.t.Fatalf("kubectl-rolloutdoctor %s: exit %d\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

func (h *harness) runCode(args ...string) (string, int) {
	cmd := exec.Command(plugin, append(args, "-n", h.ns, "--kubeconfig", kubeconfig)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		h.t.Fatalf("running the plugin: %v", err)
	}
	return stdout.String() + stderr.String(), code
}

// abortedRollout brings a Rollout of 10 to an abort at setWeight 20 and waits
// until the controller holds that state.
func (h *harness) abortedRollout() *observer {
	o := h.abortAt20(rolloutSpec{replicas: 10, steps: "[{setWeight: 20}, {pause: {}}]", mode: hostMode})
	h.settled(o, 8*time.Second, 60*time.Second)
	return o
}

// abortAt20 brings a Rollout to the pause at setWeight 20, aborts it and
// returns as soon as the controller has written the abort (phase Degraded).
func (h *harness) abortAt20(spec rolloutSpec) *observer {
	o := h.observe(isCanaryDest(hostMode))
	h.firstPause(o, spec, 20)
	// Abort a quiet Rollout. Patched while the controller is still writing
	// the pause status, the abort can be lost: the lab showed (mostly on
	// v1.9.3) the controller writing its own, older copy back into its
	// informer cache after the abort's watch event, and then reconciling
	// without the abort until the next event (see the session notes).
	h.settled(o, 3*time.Second, 60*time.Second)
	h.kubectl("-n", h.ns, "patch", "rollout", "app", "--subresource", "status", "--type", "merge", "-p", `{"status":{"abort":true}}`)
	h.waitFor("the controller to process the abort", 60*time.Second, func() bool {
		phase, _, _, _, _ := h.status()
		return phase == "Degraded"
	})
	return o
}

// observedOutcome is the Rollout's end state in the plan's terms.
func (h *harness) observedOutcome(o *observer) (stable string, weight int64, abort bool, phase string) {
	s := o.Now()
	phase, stableHash, _, _, abort := h.status()
	for _, u := range h.listRS() {
		if u.GetLabels()["rollouts-pod-template-hash"] == stableHash {
			stable = u.GetName()
		}
	}
	return stable, s.CanaryWeight, abort, phase
}

// abortedEscape: ORACLE §4, in the lab. The plugin plans, then applies the
// action with --yes and watches; the prediction (end state) must be what the
// controller does, and the plugin's own watch must report "as predicted".
func abortedEscape(t *testing.T, h *harness, a escape.Action) {
	o := h.abortedRollout()
	p := h.plan()
	opt, ok := p.Option(a)
	if !ok {
		t.Fatalf("no option %s", a)
	}
	// A phase of its own before the action: the aborted Rollout left alone
	// for a while must hold what the plan says of doing nothing.
	h.nothingDone("aborted at setWeight 20, held before escape "+string(a), o, p, 5*time.Second, 60*time.Second)
	out, code := h.runCode("escape", "app", "--do", string(a), "--yes", "--force", "--color", "never", "--watch-timeout", "150s", "--interval", "1s")
	h.settled(o, 8*time.Second, 120*time.Second)
	stable, weight, abort, phase := h.observedOutcome(o)
	pred := fmt.Sprintf("%s: stable %s, weight %d, aborted %v, phase %s", opt.Verdict, opt.Effect.FinalStable, opt.Effect.FinalWeight, opt.Effect.FinalAbort, opt.Effect.Phase)
	obs := fmt.Sprintf("stable %s, weight %d, aborted %v, phase %s", stable, weight, abort, phase)
	h.record("escape from an aborted Rollout: "+string(a), pred, obs)
	if stable != opt.Effect.FinalStable || weight != int64(opt.Effect.FinalWeight) || abort != opt.Effect.FinalAbort || phase != opt.Effect.Phase {
		t.Errorf("%s: predicted %s; observed %s\nplugin output:\n%s", a, pred, obs, out)
	}
	if code != 0 || !strings.Contains(out, "outcome: as predicted") {
		t.Errorf("%s: the plugin's watch did not report the predicted outcome (exit %d):\n%s", a, code, out)
	}
}

// replacedUndo: a canary replaced mid-rollout (A stable, B paused at 20%,
// then C). Plain `kubectl argo rollouts undo` would go to B, the
// second-highest revision, and start an update to it; the plan's undo goes
// back to the stable A with --to-revision, and the controller must end
// there: Healthy on A, weight 0, the steps skipped.
func replacedUndo(t *testing.T, h *harness) {
	spec := rolloutSpec{replicas: 10, steps: "[{setWeight: 20}, {pause: {}}]", mode: hostMode}
	o := h.observe(isCanaryDest(hostMode))
	stableHash, b := h.firstPause(o, spec, 20)
	h.setImage("c")
	h.waitFor("the pause at setWeight 20 on the third revision", 90*time.Second, func() bool {
		phase, _, current, idx, _ := h.status()
		return phase == "Paused" && idx == 1 && current != b && o.Now().CanaryWeight == 20
	})
	h.settled(o, 3*time.Second, 60*time.Second)
	var stable, revision string
	for _, u := range h.listRS() {
		if u.GetLabels()["rollouts-pod-template-hash"] == stableHash {
			stable, revision = u.GetName(), u.GetAnnotations()["rollout.argoproj.io/revision"]
		}
	}
	p := h.plan()
	opt, _ := p.Option(escape.Undo)
	if revision == "" || opt.TargetRevision != revision || !strings.HasSuffix(opt.Command, " --to-revision "+revision) || opt.Note == "" {
		t.Errorf("undo targets revision %q with %q (note %q), want the stable %s's revision %s with --to-revision", opt.TargetRevision, opt.Command, opt.Note, stable, revision)
	}
	out, code := h.runCode("escape", "app", "--do", "undo", "--yes", "--color", "never", "--watch-timeout", "150s", "--interval", "1s")
	h.settled(o, 8*time.Second, 120*time.Second)
	gotStable, weight, abort, phase := h.observedOutcome(o)
	pred := fmt.Sprintf("%s to revision %s: stable %s, weight %d, aborted %v, phase %s", opt.Verdict, opt.TargetRevision, opt.Effect.FinalStable, opt.Effect.FinalWeight, opt.Effect.FinalAbort, opt.Effect.Phase)
	obs := fmt.Sprintf("stable %s, weight %d, aborted %v, phase %s", gotStable, weight, abort, phase)
	h.record("escape after a canary was replaced mid-rollout (revisions 1, 2 paused at 20%, 3): undo", pred, obs)
	if gotStable != stable || gotStable != opt.Effect.FinalStable || weight != 0 || abort || phase != "Healthy" || phase != opt.Effect.Phase || opt.Verdict != escape.Safe {
		t.Errorf("undo: predicted %s; observed %s; want safe, Healthy on the stable %s\nplugin output:\n%s", pred, obs, stable, out)
	}
	if code != 0 || !strings.Contains(out, "outcome: as predicted") {
		t.Errorf("undo: the plugin's watch did not report the predicted outcome (exit %d):\n%s", code, out)
	}
}

// incidentUndo: the seed incident (host mode), and the escape the plugin
// recommends while 100% sits on the reverted canary: undo, back to the
// stable revision, weight 0 on the next pass.
func incidentUndo(t *testing.T, h *harness) { incidentSlow(t, h, true) }

// incidentWait: the same incident and the same plan, but nothing is done:
// the plan's "if nothing is done" (100% on the reverted canary until it is
// full, then promoted) against what the controller does by itself — the
// other branch of incidentUndo's decision, which that scenario cannot
// watch once it has undone.
func incidentWait(t *testing.T, h *harness) { incidentSlow(t, h, false) }

func incidentSlow(t *testing.T, h *harness, undo bool) {
	const replicas = 20
	// Pods turn Ready 9–39 s after they start (a service that warms up), so
	// the exposure lasts long enough to plan and take the escape during it.
	slow := `
      annotations:
        pod-create.stage.kwok.x-k8s.io/delay: "1s"
        pod-create.stage.kwok.x-k8s.io/jitter-delay: "2s"
        pod-ready.stage.kwok.x-k8s.io/delay: "8s"
        pod-ready.stage.kwok.x-k8s.io/jitter-delay: "30s"`
	spec := rolloutSpec{replicas: replicas, minPods: 2, steps: "[{setWeight: 5}, {pause: {duration: 10s}}, {setWeight: 100}]", mode: hostMode, podTiming: slow}
	o := h.observe(isCanaryDest(hostMode))
	hashA, hashB := h.aThenB(o, spec, 120*time.Second)
	h.setImage("a")
	h.waitFor("100% on the reverted canary", 60*time.Second, func() bool {
		s := o.Now()
		return s.CanaryWeight == 100 && s.RS[hashA].Available < replicas
	})
	p := h.plan()
	if p.Recommended != escape.Undo {
		t.Errorf("recommended %s (%s), want undo", p.Recommended, p.Reason)
	}
	if !undo {
		h.nothingDone("incident (final setWeight 100, slow pods), 100% on the reverted canary", o, p, 8*time.Second, 200*time.Second)
		return
	}
	opt, _ := p.Option(escape.Undo)
	out, code := h.runCode("escape", "app", "--do", "undo", "--yes", "--color", "never", "--watch-timeout", "150s", "--interval", "1s")
	h.settled(o, 8*time.Second, 150*time.Second)
	stable, weight, abort, phase := h.observedOutcome(o)
	// After the undo the weight must fall to 0 and stay there: no write of a
	// non-zero weight once the undo landed.
	ss := o.Samples()
	// The undo has landed once the controller, after working on the revert
	// to A, records B as current again; every weight it writes after that
	// (in etcd revision order) must be 0.
	maxAfter, landedAt := int64(0), int64(0)
	bStable, reverted := false, false
	for _, s := range ss {
		if s.Kind != gvrRollout.Resource {
			continue
		}
		bStable = bStable || s.StableHash == hashB
		reverted = reverted || bStable && s.CurrentHash == hashA
		if reverted && s.CurrentHash == hashB && (landedAt == 0 || s.RV < landedAt) {
			landedAt = s.RV
		}
	}
	for _, s := range ss {
		if landedAt > 0 && s.Kind == gvrVS.Resource && s.RV > landedAt && s.CanaryWeight > maxAfter {
			maxAfter = s.CanaryWeight
		}
	}
	pred := fmt.Sprintf("%s: stable %s, weight %d, phase %s", opt.Verdict, opt.Effect.FinalStable, opt.Effect.FinalWeight, opt.Effect.Phase)
	obs := fmt.Sprintf("stable %s, weight %d (highest weight written after the undo: %d), phase %s", stable, weight, maxAfter, phase)
	h.record("escape from the incident: undo", pred, obs)
	// Undo during a rollback within the window takes the rollback back: the
	// traffic is safe at once, but the cost is the revision it returns to.
	if opt.Verdict != escape.SafeWithCost || stable != opt.Effect.FinalStable || weight != 0 || maxAfter != 0 || abort || phase != opt.Effect.Phase {
		var trail []string
		for _, s := range ss {
			if s.RV >= landedAt-200 && s.Kind != gvrRS.Resource {
				trail = append(trail, fmt.Sprintf("%s rv=%d w=%d cur=%s stable=%s idx=%d", s.Kind, s.RV, s.CanaryWeight, s.CurrentHash, s.StableHash, s.Index))
			}
		}
		t.Errorf("undo: predicted %s; observed %s (landed at rv %d)\n%s\n%s", pred, obs, landedAt, strings.Join(trail, "\n"), out)
	}
	if code != 0 || !strings.Contains(out, "outcome: as predicted") {
		t.Errorf("undo: the plugin's watch did not report the predicted outcome (exit %d):\n%s", code, out)
	}
}

// staleWrite: a plan read before the Rollout changed is never applied; the
// API server answers 409 to the resourceVersion precondition.
func staleWrite(t *testing.T, h *harness) {
	o := h.abortedRollout()
	dc := dyn
	snap, err := gather.Rollout(h.ctx, dc, gather.Options{Namespace: h.ns, Name: "app"})
	if err != nil {
		t.Fatal(err)
	}
	ro, _ := snap.FindRollout(h.ns, "app")
	view, err := snap.View(ro)
	if err != nil {
		t.Fatal(err)
	}
	cv, _ := model.DetectVersionFor("", view, "")
	p, err := escape.Build(escape.Input{View: view, Controller: cv})
	if err != nil {
		t.Fatal(err)
	}
	h.kubectl("-n", h.ns, "annotate", "rollout", "app", "e2e/touched=yes")
	opt, _ := p.Option(escape.Retry)
	_, err = escape.Apply(context.Background(), dc, p, opt, escape.ApplyOptions{})
	_, _, _, _, abort := h.status()
	h.record("stale plan (Rollout changed after it was read)", "nothing written: 409 Conflict", fmt.Sprintf("error: %v; still aborted: %v", err, abort))
	if err == nil || !strings.Contains(err.Error(), "changed since it was read") || !abort {
		t.Errorf("retry with a stale resourceVersion: err %v, aborted %v; want a conflict and no change", err, abort)
	}
	// Nothing was written, so the plan's own "if nothing is done" is what
	// the controller must go on holding.
	h.nothingDone("aborted at setWeight 20, after a refused stale write", o, p, 5*time.Second, 60*time.Second)
}

// guidedInTmux drives the guided mode through a real terminal: the plan is
// shown, the recommended action (undo on an aborted Rollout) is chosen with
// Enter, the exact patch is shown, the name is typed, and the watch reports.
func guidedInTmux(t *testing.T, h *harness) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is needed for the guided-mode test (apt-get install tmux)")
	}
	o := h.abortedRollout()
	// A phase of its own before the guided undo: left alone, the aborted
	// Rollout holds what the plan says of doing nothing.
	h.nothingDone("aborted at setWeight 20, held before the guided undo", o, h.plan(), 5*time.Second, 60*time.Second)
	session := "rd-" + h.ns + "-" + runID // tmux sessions are per user, not per lab
	cmdline := fmt.Sprintf("%s escape app -n %s --kubeconfig %s --color never --watch-timeout 120s --interval 1s; echo EXIT=$?; sleep 600",
		plugin, h.ns, kubeconfig)
	if out, err := exec.Command("tmux", "new-session", "-d", "-s", session, "-x", "220", "-y", "80", cmdline).CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("tmux", "kill-session", "-t", session).Run() })
	screen := func() string {
		out, _ := exec.Command("tmux", "capture-pane", "-p", "-J", "-S", "-200", "-t", session).Output()
		return string(out)
	}
	waitScreen := func(what string, timeout time.Duration) string {
		end := time.Now().Add(timeout)
		for {
			s := screen()
			if strings.Contains(s, what) {
				return s
			}
			if time.Now().After(end) {
				t.Fatalf("screen never showed %q:\n%s", what, s)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	waitScreen("Choose an action", 30*time.Second)
	exec.Command("tmux", "send-keys", "-t", session, "Enter").Run()
	s := waitScreen("Type the Rollout's name (app)", 30*time.Second)
	if !strings.Contains(s, "PATCH rollout "+h.ns+"/app (json)") || !strings.Contains(s, `"path":"/metadata/resourceVersion"`) {
		t.Errorf("the undo patch with its precondition was not shown before confirming:\n%s", s)
	}
	exec.Command("tmux", "send-keys", "-t", session, "app", "Enter").Run()
	s = waitScreen("EXIT=", 150*time.Second)
	stable, weight, abort, phase := h.observedOutcome(o)
	h.record("guided mode in a terminal (tmux): Enter, then the name", "undo applied after typed confirmation; outcome as predicted",
		fmt.Sprintf("stable %s, weight %d, aborted %v, phase %s; screen says as predicted: %v", stable, weight, abort, phase, strings.Contains(s, "outcome: as predicted")))
	if !strings.Contains(s, "outcome: as predicted") || !strings.Contains(s, "EXIT=0") || abort {
		t.Errorf("guided undo did not end as predicted:\n%s", s)
	}
}

// rbacReadOnly: docs/rbac.yaml's read-only ClusterRole is enough for diagnose
// and for escape's plan (no Forbidden gap), and escape's write is refused for
// that user with a one-line message saying which permission is missing.
// It also checks that shell completion offers the namespace's Rollouts.
func rbacReadOnly(t *testing.T, h *harness) {
	o := h.abortedRollout()
	// Every version's scenario applies it at once: a create that loses the
	// race answers AlreadyExists, and the next apply updates.
	for i := 0; ; i++ {
		out, err := exec.Command("kubectl", "--kubeconfig", kubeconfig, "apply", "-f", root+"/docs/rbac.yaml").CombinedOutput()
		if err == nil {
			break
		}
		if i == 4 {
			t.Fatalf("kubectl apply -f docs/rbac.yaml: %v\n%s", err, out)
		}
		time.Sleep(time.Second)
	}
	user := "reader-" + h.ns
	h.bindUser("rd-"+h.ns, "rolloutdoctor-reader", user)

	out := h.run("diagnose", "app", "-o", "json", "--as", user)
	var rep struct {
		Gaps          []struct{ Resource, Reason string } `json:"gaps"`
		ControllerLog *struct{ Gap string }               `json:"controllerLog"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("diagnose as %s: %v\n%s", user, err, out)
	}
	for _, g := range rep.Gaps {
		if g.Reason == "Forbidden" {
			t.Errorf("diagnose as %s: %s is forbidden with the read-only ClusterRole", user, g.Resource)
		}
	}
	// The Rollout is aborted: diagnose reads the controller's log, which
	// the role allows (pods/log).
	if rep.ControllerLog == nil || rep.ControllerLog.Gap != "" {
		t.Errorf("diagnose as %s of an aborted Rollout: controller log %+v, want it read", user, rep.ControllerLog)
	}
	podsOut, code := h.runCode("pods", "app", "-o", "json", "--as", user)
	if code > 1 || strings.Contains(podsOut, `"reason": "Forbidden"`) || !strings.Contains(podsOut, `"kind": "PodCheck"`) {
		t.Errorf("pods as %s: exit %d\n%s", user, code, podsOut)
	}
	scanOut, code := h.runCode("scan", "-o", "json", "--as", user)
	if code != 0 || !strings.Contains(scanOut, `"name": "app"`) || strings.Contains(scanOut, `"reason": "Forbidden"`) {
		t.Errorf("scan as %s: exit %d\n%s", user, code, scanOut)
	}
	planOut, code := h.runCode("escape", "app", "-o", "json", "--as", user)
	if code != 0 {
		t.Errorf("escape plan as %s: exit %d\n%s", user, code, planOut)
	}
	wOut, code := h.runCode("escape", "app", "--do", "undo", "--yes", "--as", user, "--watch-timeout", "0")
	_, _, _, _, abort := h.status()
	h.record("read-only ClusterRole (docs/rbac.yaml) via --as", "diagnose, pods, scan and plan work; escape refused with a clear message",
		fmt.Sprintf("gaps %d; plan exit 0; escape exit %d: %s; still aborted %v", len(rep.Gaps), code, strings.TrimSpace(lastLine(wOut)), abort))
	if code != 2 || !strings.Contains(wOut, "not allowed to patch rollout") || !strings.Contains(wOut, "grant patch on rollouts") || !abort {
		t.Errorf("escape as a read-only user: exit %d, aborted %v:\n%s", code, abort, wOut)
	}
	// The escape was refused: the read-only user's own plan says what the
	// controller then does, left alone.
	readerPlan := &escape.Plan{}
	if err := json.Unmarshal([]byte(planOut), readerPlan); err != nil {
		t.Fatalf("escape -o json as %s: %v\n%s", user, err, planOut)
	}
	h.nothingDone("aborted at setWeight 20, after escape was refused (read-only user)", o, readerPlan, 5*time.Second, 60*time.Second)
	compOut, _ := exec.Command(plugin, "__complete", "diagnose", "-n", h.ns, "--kubeconfig", kubeconfig, "").Output()
	if comp := string(compOut); !strings.HasPrefix(comp, "app\n") {
		t.Errorf("completion of Rollout names in %s: %q", h.ns, comp)
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// diagnoseWatch: `diagnose --watch -o json` prints a new document when the
// Rollout changes, and stops cleanly on Ctrl-C (SIGINT).
func diagnoseWatch(t *testing.T, h *harness) {
	spec := rolloutSpec{replicas: 4, steps: "[{setWeight: 50}, {pause: {}}]", mode: hostMode}
	o := h.observe(isCanaryDest(hostMode))
	h.apply(h.trafficObjects(hostMode))
	h.apply(h.rolloutYAML(spec, "a"))
	hashA := h.healthy(o, 4, 90*time.Second)
	cmd := exec.Command(plugin, "diagnose", "app", "--watch", "-o", "json", "-n", h.ns, "--kubeconfig", kubeconfig)
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	docs := make(chan diagnose.Report, 100)
	go func() {
		dec := json.NewDecoder(pr)
		for {
			var r diagnose.Report
			if err := dec.Decode(&r); err != nil {
				close(docs)
				return
			}
			docs <- r
		}
	}()
	first := <-docs
	h.setImage("b")
	// escape's plan once the controller has taken up the update (the watch
	// goes on meanwhile): from here it ramps to 50% and pauses on its own.
	h.waitFor("the update to be observed", 20*time.Second, func() bool {
		_, stable, current, _, _ := h.status()
		return current != "" && current != stable
	})
	p := h.plan()
	var n int
	seen := false
	timeout := time.After(90 * time.Second)
	for !seen {
		select {
		case r, ok := <-docs:
			if !ok {
				t.Fatal("the watch ended by itself")
			}
			n++
			seen = r.State.CurrentHash != "" && r.State.CurrentHash != hashA && r.State.Paused
		case <-timeout:
			t.Fatalf("no redraw showed the update after %d documents", n)
		}
	}
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	pw.Close()
	h.record("diagnose --watch -o json", "a document per change; exits 0 on Ctrl-C",
		fmt.Sprintf("first at %s, %d more until the pause at setWeight 50; exit %v", first.State.CurrentHash, n, err))
	if err != nil {
		t.Errorf("--watch did not exit cleanly on SIGINT: %v", err)
	}
	h.nothingDone("setWeight 50 of 4 with an indefinite pause, from the update to the pause", o, p, 5*time.Second, 60*time.Second)
}

// dssUndo: undo at the pause of setWeight 70 of 10 with
// dynamicStableScale. The stable was scaled down to 3 as the canary came
// up; undo makes it the update's target again, and while it scales back up
// the controller keeps the old canary as the canary destination (its
// weight, and the canary Service's selector): v1.7 and v1.8 move the weight
// to the stable as its pods become available, v1.9+ hold it until all are.
// The plan's undo must name the old canary as the carrier of every non-zero
// weight (it named the stable, on 3 of 10 pods), the weights the controller
// writes must be among those it predicts, in its order, and at every moment
// the pods behind the canary Service must be enough for its weight.
func dssUndo(t *testing.T, h *harness) {
	spec := rolloutSpec{replicas: 10, steps: "[{setWeight: 70}, {pause: {}}]", mode: hostMode, dss: true}
	o := &observer{stop: make(chan struct{}), canary: isCanaryDest(hostMode), cur: emptySample(), canarySvc: "app-canary"}
	h.watch(o, gvrRS, gvrVS, gvrRollout, gvrSvc)
	stable, canary := h.firstPause(o, spec, 70)
	h.settled(o, 3*time.Second, 60*time.Second)
	p := h.plan()
	opt, _ := p.Option(escape.Undo)
	var predicted []int64
	for _, s := range opt.Effect.Serving {
		predicted = append(predicted, int64(s.Weight))
		if s.Weight > 0 && s.Canary != "app-"+canary {
			t.Errorf("undo's prediction puts %d%% on %s, want the old canary app-%s: %s", s.Weight, s.Canary, canary, opt.Effect.Summary)
		}
	}
	start := time.Now()
	out, code := h.runCode("escape", "app", "--do", "undo", "--yes", "--color", "never", "--watch-timeout", "150s", "--interval", "1s")
	h.settled(o, 8*time.Second, 120*time.Second)
	var seen []int64
	var trace []string
	short := ""
	for _, s := range o.Samples() {
		if s.At.Before(start) || s.CanaryWeight < 0 {
			continue
		}
		if n := len(seen); n == 0 || seen[n-1] != s.CanaryWeight {
			seen = append(seen, s.CanaryWeight)
			trace = append(trace, fmt.Sprintf("%d on %s (%d/10)", s.CanaryWeight, s.CanarySvc, s.RS[s.CanarySvc].Available))
		}
		if need := model.WeightToReplicas(10, int32(s.CanaryWeight), 100); s.CanaryWeight > 0 && s.RS[s.CanarySvc].Available < int64(need) && short == "" {
			short = fmt.Sprintf("%d%% on %s with %d of the %d pods it needs", s.CanaryWeight, s.CanarySvc, s.RS[s.CanarySvc].Available, need)
		}
	}
	gotStable, weight, abort, phase := h.observedOutcome(o)
	pred := fmt.Sprintf("%s: %s", opt.Verdict, opt.Effect.Summary)
	obs := fmt.Sprintf("%s; ends stable %s, weight %d, aborted %v, phase %s", strings.Join(trace, " → "), gotStable, weight, abort, phase)
	h.record("dynamicStableScale: undo at the pause of setWeight 70 of 10", pred, obs)
	if !subsequence(seen, predicted) || short != "" || gotStable != "app-"+stable || gotStable != opt.Effect.FinalStable || weight != 0 || phase != "Healthy" || opt.Verdict != escape.Safe {
		t.Errorf("undo: predicted %s (weights %v); observed %s (weights %v)%s", pred, predicted, obs, seen, map[bool]string{true: "; " + short}[short != ""])
	}
	if code != 0 || !strings.Contains(out, "outcome: as predicted") {
		t.Errorf("undo: the plugin's watch did not report the predicted outcome (exit %d):\n%s", code, out)
	}
}

// subsequence: every element of got is in want, in want's order.
func subsequence(got, want []int64) bool {
	i := 0
	for _, g := range got {
		for i < len(want) && want[i] != g {
			i++
		}
		if i == len(want) {
			return false
		}
	}
	return true
}
