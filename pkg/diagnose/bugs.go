package diagnose

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// Bug is one known controller bug that changes what an on-call engineer
// should do: the versions it affects (read from the source through facts),
// a fingerprint over the snapshot, and the rule whose finding reports it.
// The catalogue below is the one place that knows them; each rule's prose
// (why, remedy, sources) is in rules.yaml like every other rule's.
type Bug struct {
	// Rule is the ID of the rule that reports the bug.
	Rule string
	// Issue is the argo-rollouts issue number; 0 for a bug the rolloutdoctor
	// lab found that has no upstream issue.
	Issue int
	// Name says in a few words what goes wrong.
	Name string
	// Buggy are the facts that make the bug: a version is affected when it
	// has every one of them (their lines are the citation of the buggy
	// code per version) ...
	Buggy []upstream.Key
	// ... and none of Fixed, the facts whose presence fixes it while the
	// buggy line stays.
	Fixed []upstream.Key
	// FixUpstream says how upstream fixed it when no modeled release has
	// the fix ("" when no fix is merged).
	FixUpstream string
	// Always makes the rule fire on every version, the bug being a clause
	// of the finding on affected ones (RD112: an abort not acted on is worth
	// reporting whatever the cause).
	Always bool
	// Match is the fingerprint: nil when the snapshot does not show the
	// bug's state.
	Match func(c *Context) *BugMatch
	// Lab says how the rolloutdoctor lab (test/e2e) reproduced the bug on
	// an affected version and showed it absent on a fixed one, or why it
	// cannot reproduce it there.
	Lab string

	// affects is Affects at each of upstream.Modeled, worked out once for
	// the catalogue's entries (nil for others).
	affects []bool
}

// BugMatch is what a fingerprint found: the state, what the controller does
// with it on an affected version, and what to do instead.
type BugMatch struct {
	State    string
	Effect   string
	Do       string
	Evidence []rules.Evidence
	// Severity, when set, replaces the rule's usual one.
	Severity rules.Severity
}

// Affects reports whether version v has the bug.
func (b Bug) Affects(v upstream.Version) bool {
	if b.affects != nil {
		if i := slices.Index(upstream.Modeled, v); i >= 0 {
			return b.affects[i]
		}
	}
	return b.affectsFromFacts(v)
}

func (b Bug) affectsFromFacts(v upstream.Version) bool {
	for _, k := range b.Buggy {
		if upstream.At(k, v).Absent {
			return false
		}
	}
	for _, k := range b.Fixed {
		if !upstream.At(k, v).Absent {
			return false
		}
	}
	return true
}

// Affected lists the modeled versions the bug affects, oldest first.
func (b Bug) Affected() []upstream.Version {
	var out []upstream.Version
	for _, v := range upstream.Modeled {
		if b.Affects(v) {
			out = append(out, v)
		}
	}
	return out
}

// URL is the public upstream issue ("" for a lab finding).
func (b Bug) URL() string {
	if b.Issue == 0 {
		return ""
	}
	return fmt.Sprintf("https://github.com/argoproj/argo-rollouts/issues/%d", b.Issue)
}

// FixedIn says where the bug is fixed as seen from version v: the first
// newer modeled release without it, how upstream fixed it, or that no fix
// is released.
func (b Bug) FixedIn(v upstream.Version) string {
	after := false
	for _, m := range upstream.Modeled {
		if m == v {
			after = true
			continue
		}
		if after && !b.Affects(m) {
			return "fixed in " + string(m)
		}
	}
	if b.FixUpstream != "" {
		return b.FixUpstream
	}
	return "no release fixes it yet"
}

// Cites are the buggy lines at v.
func (b Bug) Cites(v upstream.Version) []upstream.Cite {
	out := make([]upstream.Cite, 0, len(b.Buggy))
	for _, k := range b.Buggy {
		out = append(out, upstream.At(k, v))
	}
	return out
}

// Bugs returns the catalogue, in rule ID order.
func Bugs() []Bug { return append([]Bug(nil), catalogue...) }

// bugByRule finds the catalogue entry of a rule (an empty Bug when it has
// none). A pointer: every Rollout of a fleet asks for each bug rule, and
// copying the entries as they were passed over was most of the bug checks'
// time.
func bugByRule(id string) (*Bug, bool) {
	for i := range catalogue {
		if catalogue[i].Rule == id {
			return &catalogue[i], true
		}
	}
	return &Bug{}, false
}

// checkKnownBug is the check of every catalogued bug's rule: it fires when
// the version is affected (or the bug is Always reported) and the
// fingerprint matches.
func checkKnownBug(c *Context, r *rules.Rule) []rules.Finding {
	b, ok := bugByRule(r.ID)
	if !ok {
		return nil
	}
	v := c.Version.Assumed
	affected := b.Affects(v)
	if !affected && !b.Always {
		return nil
	}
	m := b.Match(c)
	if m == nil {
		return nil
	}
	msg := m.State
	if affected {
		who := fmt.Sprintf("this matches argo-rollouts #%d on %s", b.Issue, v)
		if b.Issue == 0 {
			who = "this matches a controller bug the rolloutdoctor lab found on " + string(v)
		}
		msg += fmt.Sprintf(" — %s: %s (%s)", who, m.Effect, b.FixedIn(v))
	} else if m.Effect != "" {
		msg += ": " + m.Effect
	}
	if m.Do != "" {
		msg += "; do: " + m.Do
	}
	f := r.NewFinding(msg)
	if m.Severity != 0 {
		f.Severity = m.Severity
	}
	f.Evidence = m.Evidence
	f.Cites = b.Cites(v)
	return []rules.Finding{f}
}

// catalogue is the known controller bugs. Versions are never written here:
// they follow from the facts, whose lines cite_test.go checks against each
// release's source. It is filled in init because some fingerprints look up
// other entries (RD112 defers to the bugs that explain a held abort).
var catalogue []Bug

func init() {
	catalogue = knownBugs()
	for i := range catalogue {
		b := &catalogue[i]
		for _, v := range upstream.Modeled {
			b.affects = append(b.affects, b.affectsFromFacts(v))
		}
	}
}

func knownBugs() []Bug {
	return []Bug{
		{Rule: "RD112", Name: "abort lost to the informer write-back", Buggy: []upstream.Key{"ct.write-back-informer"}, Always: true, Lab: "reproduced: on v1.9.3 the lab saw 6 of 8 aborts lost in one run; none on v1.10.2", Match: matchAbortNotActedOn},
		{Rule: "RD150", Issue: 4626, Name: "subset-only gate ends the pass before the progress deadline",
			Buggy: []upstream.Key{"is.subset-only-error", "rc.traffic-error-returns"}, FixUpstream: "no release fixes it yet (fix proposed in PR #4962)", Lab: "reproduced (e2e bug-subset-unready): a subset-only canary held unready, progressDeadlineSeconds 10; after 40 s still Progressing on v1.8.2, v1.9.3, v1.10.2, ProgressDeadlineExceeded on v1.7.2 and v1.8.3", Match: matchDeadlineNeverEvaluated},
		{Rule: "RD151", Issue: 4128, Name: "abort ignored behind the subset-only gate",
			Buggy: []upstream.Key{"is.subset-only-error", "rc.traffic-error-returns"}, Fixed: []upstream.Key{"is.abort-exempt"}, Lab: "reproduced (e2e bug-subset-unready): the same canary aborted; not acted on after 20 s on v1.8.2, RolloutAborted on every other version", Match: matchAbortBehindGate},
		{Rule: "RD152", Issue: 3765, Name: "crash-looping pods keep restarting the progress deadline",
			Buggy: []upstream.Key{"co.readiness-is-progress"}, FixUpstream: "no release fixes it yet (fix proposed in PR #4769)", Lab: "reproduced (e2e bug-crash-loop): a canary of 1 of 2 whose container crash-loops through the lab's kwok stages (ready 4 s, then CrashLoopBackOff with restartCount + 1 and lastState terminated, 4 s, again), minReadySeconds 10 set with the update so it is never available, progressDeadlineSeconds 15: after 45 s never ProgressDeadlineExceeded on v1.7.2, v1.8.2, v1.8.3, v1.9.3 and v1.10.2, the Progressing condition's lastUpdateTime renewed 5–6 times, once each time readyReplicas rose (restartCount 6). The same pod then kept down: ProgressDeadlineExceeded 13–15 s later on every version. No fixed version to compare", Match: matchCrashLoopDeadline},
		{Rule: "RD171", Issue: 4971, Name: "a stale scale-down deadline keeps the progress deadline from firing",
			Buggy: []upstream.Key{"ur.scale-down-deadline-any", "sy.waiting-scale-down", "sy.requeue-now-past-deadline"}, FixUpstream: "no release fixes it yet (fix proposed in PR #4972)",
			Lab:   "reproduced (e2e bug-stale-scale-down-deadline): an Istio canary of 4, progressDeadlineSeconds 12 with progressDeadlineAbort, aborted by that deadline (its ReplicaSet scaled to 0 after abortScaleDownDelaySeconds 3, the annotation left on it), then updated again with pods that never turn ready: never ProgressDeadlineExceeded nor aborted 10 s past the deadline on v1.7.2, v1.8.2, v1.8.3, v1.9.3 and v1.10.2; with the annotation removed, aborted 0–1 s later (whole seconds). By hand on v1.10.2 the controller re-queued such a Rollout about 440 times a second meanwhile. No fixed version to compare",
			Match: matchStaleScaleDownDeadline},
		{Rule: "RD174", Issue: 4221, Name: "a restart's eviction and the canary's scale-down in one pass",
			Buggy: []upstream.Key{"rc.restart-then-scale"}, Fixed: []upstream.Key{"rc.restart-ends-pass"},
			Lab:   "reproduced by hand on v1.7.2 and v1.8.2: a canary without trafficRouting of 2 (maxSurge 1, maxUnavailable 0) at setWeight 50, restarted while the canary's pod was not yet ready; when it turned ready, one pass evicted it for the restart and scaled the stable down from 2 to 1 (the controller's log, the same second), leaving 1 ready pod. v1.10.2 ended that pass after the eviction and scaled the stable down on a later pass, once the canary's replacement was ready; its restart then evicted a stable pod, as the restart's allowance of one allows (maxUnavailable 0 counts as 1 there), so 1 ready pod was the least on v1.10.2 too: at maxUnavailable 0 the count alone does not tell them apart, the eviction and the scale-down in the same pass do. Not run as an e2e scenario",
			Match: matchRestartDuringUpdate},
		{Rule: "RD153", Issue: 4461, Name: "promote --full clears an abort on every pass",
			Buggy: []upstream.Key{"rc.every-pass-remove-abort"}, FixUpstream: "no release fixes it yet (fix proposed in PR #4462)", Lab: "reproduced (e2e bug-promote-full-abort): a canary of 4 held unready, `promote --full` then `abort` twice with the official plugin (v1.10.2): on v1.7.2, v1.8.2, v1.8.3, v1.9.3 and v1.10.2 the controller wrote each abort away within 0.2–0.8 s, never RolloutAborted, promoteFull kept; the one pass that saw an abort put a scale-down deadline on the canary, which still had its 4 pods 8 s later. Clearing status.promoteFull, then abort: RolloutAborted within 1.5 s on every version. No fixed version to compare", Match: matchAbortDuringPromoteFull},
		{Rule: "RD154", Issue: 3756, Name: "abort of a paused Rollout does not scale anything",
			Buggy: []upstream.Key{"cx.halt-user-paused"}, Lab: "reproduced (e2e bug-abort-paused): aborted at setWeight 50 with spec.paused true, the canary keeps its 2 pods 20 s later (weight 0) on every version; unpausing completes the abort. No fixed version to compare", Match: matchAbortWhilePaused},
		{Rule: "RD155", Issue: 4898, Name: "dynamicStableScale and abortScaleDownDelaySeconds deadlock on abort",
			Buggy:       []upstream.Key{"uc.desired-canary-weight-abort-dss", "rs.abort-delay-needs-stable-full"},
			FixUpstream: "fixed upstream by PR #4900, in no modeled release", Lab: "not reproduced: an abort at setWeight 50 of 4 with dynamicStableScale and abortScaleDownDelaySeconds 5, Istio host mode (e2e bug-dss-abort), completed within 25 s on v1.9.3 and v1.10.2 as on v1.7.2, v1.8.2 and v1.8.3; the issue was reported with ALB and the Gateway API plugin. The scenario checks that RD155 stays quiet on an abort that completes", Match: matchDSSAbortDeadlock},
		{Rule: "RD176", Issue: 4841, Name: "an abort with dynamicStableScale and minPodsPerReplicaSet never returns the weight to 0",
			Buggy: []upstream.Key{"uc.desired-canary-weight-abort-dss"}, FixUpstream: "no modeled release fixes it; PR #4848 proposed a fix",
			Lab: "reproduced (e2e bug-dss-minpods-abort, and by hand): an Istio canary of 4 with dynamicStableScale and minPodsPerReplicaSet 2, aborted at setWeight 20 with the stable at 4 of 4: v1.9.3 and v1.10.2 kept 20% and the canary's 2 pods (for minutes, by hand); v1.7.2, v1.8.2 and v1.8.3 wrote 0% and scaled the canary to 0. An undo then took every version to 0%", Match: matchDSSMinPodsAbort},
		{Rule: "RD177", Issue: 4973, Name: "an aborted canary with dynamicStableScale is scaled up again while the stable is short of pods",
			Buggy: []upstream.Key{"uc.desired-canary-weight-abort-dss"}, FixUpstream: "no release fixes it yet; PR #5018 proposed a fix",
			Lab: "reproduced (e2e bug-dss-abort-rescale, and by hand): an Istio canary of 4 with dynamicStableScale, aborted at 20% and done (0%, the canary at 0), then spec.replicas 6 with three stable pods hung (3 of 6 available): v1.9.3 and v1.10.2 sized the aborted canary 2 again, both pods available, and the canary Service switched to them within 15 s (by hand on v1.10.2: back and forth between them and the stable); v1.7.2, v1.8.2 and v1.8.3 kept it at 0. With one stable pod hung, v1.10.2 sized it 2 only until the stable had 4 available. Deleting the hung pods brought the canary back to 0 on every version", Match: matchDSSAbortRescale},
		{Rule: "RD179", Issue: 5006, Name: "the stable ping-pong Service selects the canary's pods",
			Buggy: []upstream.Key{"pp.canary-service-new", "pp.stable-is-ping", "sv.no-name-no-target"}, FixUpstream: "no release fixes it yet; PR #4994 proposed a fix",
			Lab:   "reproduced (e2e bug-pingpong-stable-selector, and by hand on v1.7.2 and v1.10.2): an ALB canary of 4 with stableService and canaryService, Healthy, switched to pingPong with two new Services that select app: app, then a new revision at setWeight 25: the ALB action sent 25% to ping, which the controller pointed at the canary, and 75% to pong, the stable one (status.canary.stablePingPong empty), whose selector the controller left without a pod-template hash — it selected the canary's pod as well as the stable's 4. A Rollout created with pingPong from the start was not affected: its first deploy points ping at the stable",
			Match: matchPingPongStableSelector},
		{Rule: "RD180", Issue: 3850, Name: "an Inconclusive background analysis during a pause step is replaced, not paused on",
			Buggy: []upstream.Key{"an.rerun-after-inconclusive"}, Fixed: []upstream.Key{"an.rerun-not-in-pause-step"},
			Lab:   "reproduced (e2e bug-background-inconclusive): a canary of 2 with a background analysis from step 1, a pause of 40 s there and a metric that is neither success nor failure: v1.7.2 replaced each Inconclusive run with a new one (.1, .2, …) and did not pause on any while the step lasted; v1.8.2, v1.8.3, v1.9.3 and v1.10.2 paused with InconclusiveAnalysisRun on the first run. When the 40 s were up every version stood at the next step, paused on an Inconclusive run",
			Match: matchBackgroundInconclusiveLoop},
		{Rule: "RD181", Issue: 4256, Name: "pods keep stale ephemeral labels after one failed update",
			Buggy: []upstream.Key{"em.skip-when-rs-current", "em.rs-before-pods", "em.pod-update-stops"}, Always: true, FixUpstream: "fixed in v1.9 by PR #4477",
			Lab:   "reproduced (e2e bug-ephemeral-stale): a canary of 4 with canaryMetadata role: canary and stableMetadata role: stable, promoted --full at 50% while a ValidatingAdmissionPolicy denied relabeling one canary pod; 20 s after the policy was removed v1.8.2 and v1.8.3 still had both pods of the first canary labelled role: canary in the now stable ReplicaSet (2–4 of its 4 pods: the ones scaled up during the promotion came from the template before it was relabeled); v1.7.2 had relabeled them all; v1.9.3 and v1.10.2 had relabeled all but the denied pod, which was still labelled role: canary three minutes later (its failures had backed the Rollout's retries off)",
			Match: matchStaleEphemeralLabels},
		{Rule: "RD182", Issue: 4261, Name: "a scale of a halted canary Rollout is not applied, and nothing else is done meanwhile",
			Buggy: []upstream.Key{"se.replicas-only", "se.halt-skips-sync"}, FixUpstream: "no release fixes it yet; PR #5019 proposed a fix",
			Lab: "reproduced (e2e bug-scaled-paused): an Istio canary of 4 paused at setWeight 50 (canary 2, stable 4), spec.paused set, then scaled to 6 through the scale subresource as an HPA does, then aborted: 20 s later every version still had the stable at 4, the canary at 2 and the weight at 50; unpausing scaled the stable to 6, wrote 0% and scaled the canary to 0. Under an InconclusiveAnalysis pause (e2e bug-background-inconclusive, a canary of 2 paused on an Inconclusive run at setWeight 100) a scale to 4 left every ReplicaSet's size as it was for 15 s on every version; promote cleared the pause and the scale applied. No fixed version to compare", Match: matchScaledWhileHalted},
		{Rule: "RD183", Issue: 4847, Name: "an autoscaler counts the canary's pods as the Rollout's and scales it up for them",
			Buggy: []upstream.Key{"hpa.replicas-all-sets", "hpa.selector-all-sets", "uc.stable-full-no-dss"}, FixUpstream: "no release fixes it yet; PR #4868 proposed a fix for the per-scale count (#4847), none for the selector (#2857, #3849)",
			Lab: "reproduced, the controller's side (e2e bug-hpa-counts-canary): an Istio canary of 10 paused at setWeight 10 — the Rollout's scale reported 11 pods and a selector without the pod-template hash on every version; set to 11, as an HPA within its tolerance does, the controller put 2 canary pods on top of 11 and the scale reported 13. The lab serves no metrics API, so the HPA's reading (0.95 of its target per pod) was put into the snapshot: RD183 named the state on every version. No fixed version to compare", Match: matchAutoscalerCountsCanary},
		{Rule: "RD184", Issue: 4919, Name: "an abort that meets a scale keeps the weight on the aborted canary until its scale-down",
			Buggy: []upstream.Key{"se.replicas-only", "rs.abort-delay-returns"}, Fixed: []upstream.Key{"rs.abort-delay-syncs-annotation"}, FixUpstream: "fixed in v1.10 by PR #4919",
			Lab: "reproduced (e2e bug-scaled-paused, its end): an Istio canary of 4 paused at setWeight 50 with spec.paused, scaled to 6 and aborted (nothing moves: RD182), then unpaused, so that the abort meets the scale: v1.7.2, v1.8.2, v1.8.3 and v1.9.3 kept 50% on the aborted canary until the pass that scaled it to 0 (the weight was still 50 then), after the stable had its 6 pods and the 5 s abort delay had passed, and wrote 0% 0.02–0.11 s after that scale; v1.10.2 wrote 0% first and scaled the canary down afterwards", Match: matchAbortMeetsScale},
		{Rule: "RD156", Issue: 3372, Name: "traffic moved to a stable that has not scaled up",
			Buggy: []upstream.Key{"tr.set-weight-call"}, Fixed: []upstream.Key{"tr.stable-check-call"}, Lab: "reproduced (e2e bug-stable-underweight), as in the issue: dynamicStableScale paused at setWeight 75 of 4 (stable scaled to 1), then a third revision whose pods never turn ready: v1.7.2 wrote canary weight 0 at once, 100% on the 1 available stable pod while three more took 15–20 s; v1.8.2, v1.8.3, v1.9.3 and v1.10.2 kept weight 75 on the second revision (stable 1 pod) for 30 s, never more weight on the stable than its pods carry. The same state aborted instead (e2e bug-stable-abort) stepped the weight down 75 → 50 → 25 → 0 as the stable's pods turned ready on every version, v1.7.2 included", Match: matchStableUnderweight},
		{Rule: "RD157", Issue: 4424, Name: "promote --full with dynamicStableScale computes a weight above the maximum",
			Buggy: []upstream.Key{"tr.promote-full-dss-cap"}, Lab: "reproduced (e2e bug-promote-full-overweight), as in the issue: spec.replicas 1, dynamicStableScale, setCanaryScale 2 then a pause, `promote --full` with the official plugin, Istio host mode, and a validating webhook of the test's enforcing Istio's weight rule (each weight 0–100, a route's total 100): on v1.7.2, v1.8.2 and v1.8.3 the controller wrote canary 200 and stable -100, on v1.9.3 and v1.10.2 canary 200 and stable 0; denied 14–15 times in 21 s (TrafficRoutingError), the VirtualService kept at 0, the canary at 2 and the stable at 1, the Rollout still Paused at step 1 with promoteFull set. spec.replicas raised to 2: weight 100 and Healthy on the new revision within 6–13 s on every version. No fixed version to compare", Match: matchPromoteFullOverweight},
		{Rule: "RD158", Issue: 3078, Name: "canary Service selector flips after an abort",
			Buggy: []upstream.Key{"tr.abort-canary-svc-to-stable", "sv.canary-svc-target", "rs.abort-delay-needs-stable-full"}, FixUpstream: "no release fixes it yet (fix proposed in PR #4442)", Lab: "reproduced (e2e bug-canary-svc-flap): nginx, aborted at setWeight 50 of 4 with abortScaleDownDelaySeconds 30: the canary Service selector went to the stable and back to the canary 7–34 times in the first 10 s and 46–114 times until the canary was scaled down 30–32 s after the abort on v1.7.2, v1.8.2, v1.8.3, v1.9.3 and v1.10.2 (load average about 20; 402 with two versions alone), and never afterwards; the Rollout's events showed only 4–6 SwitchService. With the stable short (Istio, 5 replicas aborted at 20% with two stable pods hung, by hand on v1.7.2 and v1.10.2) the canary was not scaled down and the selector still alternated over a minute after the abort. No fixed version to compare", Match: matchCanaryServiceFlap},
	}
}

// unavailable is a ReplicaSet the controller sized above zero whose pods
// are not all available: what the subset-only DestinationRule gate waits on.
func unavailable(r *model.RS) bool { return r != nil && r.Spec > 0 && r.Available < r.Spec }

// gateBlocker is the ReplicaSet that holds the Istio subset-only gate: the
// canary or the stable, sized and not fully available (the gate looks only
// at ReplicaSets that receive traffic).
func gateBlocker(in model.Inputs) *model.RS {
	if !in.SubsetOnly || in.New == nil || in.Stable == nil || in.New.Hash == in.Stable.Hash {
		return nil
	}
	for _, r := range []*model.RS{in.New, in.Stable} {
		if unavailable(r) {
			return r
		}
	}
	return nil
}

func rsEvidence(r *model.RS) rules.Evidence {
	return ev("ReplicaSet "+r.Name, "status.availableReplicas / spec.replicas", fmt.Sprintf("%d/%d", r.Available, r.Spec))
}

func progressDeadline(ro *v1alpha1.Rollout) time.Duration {
	s := int32(600)
	if ro.Spec.ProgressDeadlineSeconds != nil {
		s = *ro.Spec.ProgressDeadlineSeconds
	}
	return time.Duration(s) * time.Second
}

// deadlineNote says how long the Progressing condition has gone without an
// update against the deadline.
func (c *Context) deadlineNote() (string, []rules.Evidence) {
	cond := condition(c.ro, v1alpha1.RolloutProgressing)
	d := progressDeadline(c.ro)
	if cond == nil {
		return fmt.Sprintf("progressDeadlineSeconds %d", int(d.Seconds())), nil
	}
	since := snapshot.Since(c.View.Now, cond.LastUpdateTime.Time).Round(time.Second)
	note := fmt.Sprintf("no progress recorded for %s against a deadline of %s", since, d)
	if since > d {
		note = fmt.Sprintf("the deadline of %s passed %s ago without firing", d, (since - d).Round(time.Second))
	}
	return note, []rules.Evidence{ev(c.obj(), "status.conditions[Progressing].lastUpdateTime", cond.LastUpdateTime.UTC().Format(time.RFC3339))}
}

func deadlineExceeded(ro *v1alpha1.Rollout) bool {
	cond := condition(ro, v1alpha1.RolloutProgressing)
	return cond != nil && cond.Reason == "ProgressDeadlineExceeded"
}

func matchAbortNotActedOn(c *Context) *BugMatch {
	st := c.ro.Status
	if !st.Abort || st.Phase == v1alpha1.RolloutPhaseDegraded || c.Analysis.Window.WithinWindow {
		return nil
	}
	if cond := condition(c.ro, v1alpha1.RolloutProgressing); cond != nil && cond.Reason == "RolloutAborted" {
		return nil
	}
	m := &BugMatch{
		State:    fmt.Sprintf("status.abort is true but the phase is %s, not Degraded: the controller has not acted on the abort yet", st.Phase),
		Evidence: []rules.Evidence{ev(c.obj(), "status.abort", true), ev(c.obj(), "status.phase", st.Phase)},
	}
	// A bug that holds the abort back for a known reason explains it
	// better than the write-back: the nudge would not help there.
	for _, id := range []string{"RD151", "RD153"} {
		if b, _ := bugByRule(id); b.Affects(c.Version.Assumed) && b.Match(c) != nil {
			m.State += " (" + id + " says why)"
			return m
		}
	}
	m.Effect = "it can miss an abort that lands while it writes back its own copy of the Rollout, until the next change to the Rollout"
	m.Do = "make it read the Rollout again: `kubectl annotate rollout " + c.ro.Name + " -n " + c.ro.Namespace + " rolloutdoctor.io/nudge=$(date +%s) --overwrite`"
	return m
}

func matchDeadlineNeverEvaluated(c *Context) *BugMatch {
	in := c.Analysis.Inputs
	if c.bg() != nil || in.Abort || in.Paused || in.PromoteFull || deadlineExceeded(c.ro) {
		return nil
	}
	r := gateBlocker(in)
	if r == nil {
		return nil
	}
	note, evs := c.deadlineNote()
	m := &BugMatch{
		State: fmt.Sprintf("Istio subset-only routing waits for ReplicaSet %s (%d/%d available) before switching the DestinationRule; %s", r.Name, r.Available, r.Spec, note),
		Effect: "the wait is returned as an error that ends every pass before the status sync, so the progress deadline is never evaluated" +
			map[bool]string{true: " and progressDeadlineAbort will never abort", false: ""}[c.ro.Spec.ProgressDeadlineAbort],
		Do:       "do not wait for the deadline: fix the pods of " + r.Name + ", or abort yourself (`kubectl argo rollouts abort " + c.ro.Name + "`): on this version an abort exempts the canary from the gate",
		Evidence: append([]rules.Evidence{rsEvidence(r), ev(c.obj(), "spec.strategy.canary.canaryService/stableService", "unset (subset-only)")}, evs...),
	}
	if b, _ := bugByRule("RD151"); b.Affects(c.Version.Assumed) {
		m.Do = "do not wait for the deadline, and do not expect an abort to work (RD151): fix the pods of " + r.Name + ", or scale it to 0 (`kubectl scale rs " + r.Name + " -n " + c.ro.Namespace + " --replicas=0`) so the pass gets past the gate"
	}
	return m
}

func matchAbortBehindGate(c *Context) *BugMatch {
	in := c.Analysis.Inputs
	if c.bg() != nil || !in.Abort || c.Analysis.Window.WithinWindow {
		return nil
	}
	r := gateBlocker(in)
	if r == nil {
		return nil
	}
	return &BugMatch{
		State:    fmt.Sprintf("aborted, with Istio subset-only routing waiting for ReplicaSet %s (%d/%d available)", r.Name, r.Available, r.Spec),
		Effect:   "the DestinationRule gate also holds an aborted Rollout and its error ends every pass before traffic goes back to stable and before the status sync: the abort is never acted on, and a nudge does not help",
		Do:       "fix the pods of " + r.Name + " or scale it to 0 (`kubectl scale rs " + r.Name + " -n " + c.ro.Namespace + " --replicas=0`); the next pass then acts on the abort",
		Evidence: []rules.Evidence{ev(c.obj(), "status.abort", true), rsEvidence(r)},
		Severity: rules.Critical,
	}
}

func matchCrashLoopDeadline(c *Context) *BugMatch {
	in := c.Analysis.Inputs
	if in.Abort || in.Paused || deadlineExceeded(c.ro) || in.New == nil || (in.Stable != nil && in.New.Hash == in.Stable.Hash) {
		return nil
	}
	cond := condition(c.ro, v1alpha1.RolloutProgressing)
	if cond == nil || cond.Status != corev1.ConditionTrue {
		return nil
	}
	pods, restarts := c.View.Workload.CrashLooping(in.New.Hash)
	if len(pods) == 0 {
		return nil
	}
	oldest := pods[0]
	for _, p := range pods {
		if p.CreationTimestamp.Before(&oldest.CreationTimestamp) {
			oldest = p
		}
	}
	d := progressDeadline(c.ro)
	age := snapshot.Since(c.View.Now, oldest.CreationTimestamp.Time)
	sinceUpdate := snapshot.Since(c.View.Now, cond.LastUpdateTime.Time)
	// The signature: the pods have crashed for longer than the deadline,
	// yet the condition was updated within it.
	if age <= d || sinceUpdate >= d {
		return nil
	}
	return &BugMatch{
		State: fmt.Sprintf("%d pod(s) of %s crash-loop (%d restarts; the oldest, %s, is %s old) while the Progressing condition was updated %s ago, within the %s deadline",
			len(pods), in.New.Name, restarts, oldest.Name, age.Round(time.Second), sinceUpdate.Round(time.Second), d),
		Effect: "every time a crashed pod comes back ready the ready count rises, which the controller counts as progress and restarts the deadline: it may never expire" +
			map[bool]string{true: ", so progressDeadlineAbort will not abort", false: ""}[c.ro.Spec.ProgressDeadlineAbort],
		Do: "do not wait for the deadline: abort (`kubectl argo rollouts abort " + c.ro.Name + "`) or fix the image",
		Evidence: []rules.Evidence{ev("Pod "+oldest.Name, "status.containerStatuses[].restartCount", restarts),
			ev(c.obj(), "status.conditions[Progressing].lastUpdateTime", cond.LastUpdateTime.UTC().Format(time.RFC3339))},
	}
}

// matchStaleScaleDownDeadline: a ReplicaSet other than the stable and the
// current one still carries a scale-down-deadline annotation whose time has
// passed (an aborted revision's, scaled to 0, kept it in the lab), while an
// update waits on pods. The controller takes any such annotation for a
// scale-down still to come, so it never times the update out.
func matchStaleScaleDownDeadline(c *Context) *BugMatch {
	in := c.Analysis.Inputs
	clock, runs := model.ProgressClock(c.ro, in)
	if runs {
		return nil
	}
	var stale *model.RS
	var at time.Time
	for _, rs := range clock.HeldBy {
		t, err := time.Parse(time.RFC3339, rs.ScaleDownDeadline)
		if err == nil && t.Before(c.View.Now) {
			stale, at = rs, t
			break
		}
	}
	if stale == nil {
		return nil // no clock, or a scale-down still to come
	}
	d := time.Duration(clock.Seconds) * time.Second
	since := snapshot.Since(c.View.Now, clock.From)
	state := fmt.Sprintf("ReplicaSet %s (%d pods) still carries scale-down-deadline %s, %s past, while the update waits on %s (%d/%d available, no progress for %s against progressDeadlineSeconds %d)",
		stale.Name, stale.Spec, stale.ScaleDownDeadline, c.View.Now.Sub(at).Round(time.Second), in.New.Name, in.New.Available, in.New.Spec, since.Round(time.Second), int(d.Seconds()))
	effect := "the controller takes the annotation for a scale-down still to come and never times the update out: it is never ProgressDeadlineExceeded"
	if clock.Abort {
		effect += ", progressDeadlineAbort never aborts it"
	}
	if since > d {
		effect += "; past the deadline the controller re-queues the Rollout on every pass, hundreds of times a second (its CPU)"
	}
	return &BugMatch{
		State:  state,
		Effect: effect,
		Do:     fmt.Sprintf("remove the stale annotation (`kubectl annotate rs %s -n %s scale-down-deadline-`): the deadline is then evaluated on the next pass; or act yourself (abort, undo) rather than wait for it", stale.Name, c.ro.Namespace),
		Evidence: []rules.Evidence{
			ev("ReplicaSet "+stale.Name, "metadata.annotations[scale-down-deadline]", stale.ScaleDownDeadline),
			ev("ReplicaSet "+stale.Name, "spec.replicas", stale.Spec),
			ev(c.obj(), "status.conditions[Progressing].lastUpdateTime", clock.From.UTC().Format(time.RFC3339)),
			rsEvidence(in.New),
		},
	}
}

// matchRestartDuringUpdate: a restart is due while a canary update has
// pods to scale down (its ReplicaSets ask for more than spec.replicas). A
// pass that evicts a pod for the restart goes on, on these versions, to
// scale with the availability it read before the eviction.
func matchRestartDuringUpdate(c *Context) *BugMatch {
	in := c.Analysis.Inputs
	if c.bg() != nil || in.New == nil || in.Stable == nil || in.New.Hash == in.Stable.Hash {
		return nil
	}
	s, ok := restartOf(c)
	if !ok || s.scheduled || s.unread || len(s.old) == 0 || s.total <= s.replicas {
		return nil
	}
	return &BugMatch{
		State: fmt.Sprintf("a restart (spec.restartAt %s) is due while the update's ReplicaSets ask for %d pods for spec.replicas %d, so old pods are still to be scaled down",
			s.at.UTC().Format(time.RFC3339), s.total, s.replicas),
		Effect:   fmt.Sprintf("a pass that evicts a pod for the restart goes on to scale the ReplicaSets with the availability it read before the eviction, so it can scale old pods down in the same pass, below the %d available pods (spec.replicas − maxUnavailable) the update keeps", s.replicas-s.maxUnavailable),
		Do:       fmt.Sprintf("let the update finish (or abort it) before restarting: remove spec.restartAt until then (`kubectl patch rollout %s -n %s --type json -p '[{\"op\":\"remove\",\"path\":\"/spec/restartAt\"}]'`), and upgrade", c.ro.Name, c.ro.Namespace),
		Evidence: []rules.Evidence{ev(c.obj(), "spec.restartAt", s.at.UTC().Format(time.RFC3339)), ev("ReplicaSets of "+c.obj(), "spec.replicas (sum)", s.total), ev(c.obj(), "spec.replicas", s.replicas)},
	}
}

func matchAbortDuringPromoteFull(c *Context) *BugMatch {
	in := c.Analysis.Inputs
	if c.bg() != nil || !in.PromoteFull || in.New == nil || in.Stable == nil || in.New.Hash == in.Stable.Hash {
		return nil
	}
	if !in.Abort && !unavailable(in.New) {
		return nil // promoting smoothly: nothing to abort
	}
	state := fmt.Sprintf("a full promotion (status.promoteFull) of %s is under way with %d/%d available", in.New.Name, in.New.Available, in.New.Spec)
	if in.Abort {
		state = "status.abort and status.promoteFull are both set: " + state
	}
	return &BugMatch{
		State:  state,
		Effect: "every pass of a full promotion clears the abort, so `abort` does nothing until the promotion ends",
		Do: "to stop the promotion, clear it first (`kubectl patch rollout " + c.ro.Name + " -n " + c.ro.Namespace +
			" --subresource=status --type=merge -p '{\"status\":{\"promoteFull\":false}}'`) and then abort, or undo to the stable revision",
		Evidence: []rules.Evidence{ev(c.obj(), "status.promoteFull", true), ev(c.obj(), "status.abort", in.Abort), rsEvidence(in.New)},
	}
}

func matchAbortWhilePaused(c *Context) *BugMatch {
	in := c.Analysis.Inputs
	if c.bg() != nil || !in.Abort || !in.Paused || in.New == nil || in.Stable == nil || in.New.Hash == in.Stable.Hash {
		return nil
	}
	if in.ScaledWhileHalted() != nil {
		return nil // RD182: with a scale pending the abort moves no traffic either
	}
	if in.New.Spec == 0 && in.Stable.Available >= in.Replicas {
		return nil // nothing left to scale
	}
	return &BugMatch{
		State:    fmt.Sprintf("aborted while spec.paused is true: canary %s still has %d pod(s), stable %s %d/%d available", in.New.Name, in.New.Spec, in.Stable.Name, in.Stable.Available, in.Replicas),
		Effect:   "traffic goes back to the stable but no ReplicaSet is scaled while the Rollout is paused, so the canary keeps its pods and the stable is not scaled back up; the controller reconciles it again and again",
		Do:       "unpause it (`kubectl patch rollout " + c.ro.Name + " -n " + c.ro.Namespace + " --type=merge -p '{\"spec\":{\"paused\":false}}'`): the abort then completes",
		Evidence: []rules.Evidence{ev(c.obj(), "status.abort", true), ev(c.obj(), "spec.paused", true), rsEvidence(in.New)},
	}
}

// matchScaledWhileHalted (#4261): spec.replicas changed while spec.paused
// or an InconclusiveAnalysis pause halts the canary. Each pass then is a
// scaling event that only syncs replicas, and the halt skips that sync,
// so the event never ends: the pods stay as they are and the rest of the
// reconcile — weight, Services, steps, an abort — waits with them.
func matchScaledWhileHalted(c *Context) *BugMatch {
	in := c.Analysis.Inputs
	r := in.ScaledWhileHalted()
	if r == nil {
		return nil
	}
	role := "the update's"
	if in.Stable != nil && r.Name == in.Stable.Name {
		role = "the stable"
	}
	who := "someone scaled the Rollout"
	if len(c.View.HPAs) > 0 {
		who = "HorizontalPodAutoscaler " + c.View.HPAs[0].Name + " scales it"
	}
	halt := "spec.paused is true"
	evs := []rules.Evidence{ev(c.obj(), "spec.replicas", in.Replicas),
		ev("ReplicaSet "+r.Name, "metadata.annotations[rollout.argoproj.io/desired-replicas]", *r.Desired)}
	do := "unpause it (`kubectl patch rollout " + c.ro.Name + " -n " + c.ro.Namespace + " --type=merge -p '{\"spec\":{\"paused\":false}}'`, or `kubectl argo rollouts promote " + c.ro.Name + " -n " + c.ro.Namespace + "`, which also moves on a step): the scale applies on the next pass, then the rest"
	if in.Paused {
		evs = append(evs, ev(c.obj(), "spec.paused", true))
	} else {
		halt = "an InconclusiveAnalysis pause holds it"
		do = "promote (`kubectl argo rollouts promote " + c.ro.Name + " -n " + c.ro.Namespace + "` clears the pause) or decide the analysis: the scale applies on the next pass, then the rest"
		evs = append(evs, ev(c.obj(), "status.pauseConditions", "InconclusiveAnalysisRun"))
	}
	effect := "every pass only syncs replicas, and the halt skips that sync: no pod is added or removed, and no weight, Service, step or abort is acted on, until the halt ends"
	m := &BugMatch{
		State:    fmt.Sprintf("spec.replicas is %d (%s), but %s ReplicaSet %s was last sized for %d, and %s", in.Replicas, who, role, r.Name, *r.Desired, halt),
		Effect:   effect,
		Do:       do,
		Evidence: evs,
	}
	if in.Abort {
		// The abort waits too: traffic stays where it is.
		m.Severity = rules.Critical
		m.Effect += "; this abort included: the router keeps its weight"
	}
	return m
}

// matchAbortMeetsScale (PR #4919): an abort with an abort scale-down delay
// whose canary was last sized for another spec.replicas (an autoscaler
// scaled the Rollout before the abort's first traffic pass). Every pass
// is then a scaling event that only syncs replicas (se.replicas-only), and
// before v1.10 the aborted canary's reconcile returns without syncing its
// count (rs.abort-delay-returns), so the event lasts until the canary's
// scale-down deadline — which waits for a full stable
// (rs.abort-delay-needs-stable-full) — and traffic is not reconciled
// meanwhile.
func matchAbortMeetsScale(c *Context) *BugMatch {
	in := c.Analysis.Inputs
	r := in.AbortMeetsScale()
	if r == nil || in.Traffic() == 0 {
		return nil
	}
	delay := "30 s, the default"
	if in.AbortDelay != nil {
		delay = fmt.Sprintf("%d s", *in.AbortDelay)
	}
	return &BugMatch{
		Severity: rules.Critical,
		State:    fmt.Sprintf("aborted with %d%% still routed to canary %s, which was last sized for %d while spec.replicas is %d (a scale met the abort before its first traffic pass)", in.Traffic(), r.Name, *r.Desired, in.Replicas),
		Effect: fmt.Sprintf("every pass only syncs replicas, and the aborted canary's reconcile returns before it syncs that count, so traffic is not reconciled: the router keeps %d%% on the aborted canary until the stable has all %d pods available (%d now) and the abort scale-down delay (%s) has passed — the pass that then scales the canary to 0 leaves the weight on it, and only the next writes 0%%; if the stable never gets there, it stays",
			in.Traffic(), in.Replicas, in.Stable.Available, delay),
		Do: fmt.Sprintf("end the scaling event by hand: `%s` — the next pass moves the traffic back; hold the autoscaler meanwhile, and upgrade to v1.10 or later", r.SyncCountCommand(c.ro.Namespace, in.Replicas)),
		Evidence: []rules.Evidence{ev(c.obj(), "status.abort", true), ev(c.obj(), "spec.replicas", in.Replicas),
			ev("ReplicaSet "+r.Name, "metadata.annotations[rollout.argoproj.io/desired-replicas]", *r.Desired)},
	}
}

func matchDSSAbortDeadlock(c *Context) *BugMatch {
	in := c.Analysis.Inputs
	if c.bg() != nil || !in.Abort || !in.DSS || in.AbortDelay == nil || *in.AbortDelay <= 0 || in.New == nil || in.Stable == nil || in.New.Hash == in.Stable.Hash {
		return nil
	}
	if in.New.Spec == 0 || in.New.ScaleDownDeadline != "" || in.Stable.Available >= in.Replicas {
		return nil
	}
	return &BugMatch{
		State: fmt.Sprintf("aborted with dynamicStableScale and abortScaleDownDelaySeconds %d: canary %s keeps %d/%d available and no scale-down deadline, stable %s %d of %d",
			*in.AbortDelay, in.New.Name, in.New.Available, in.New.Spec, in.Stable.Name, in.Stable.Available, in.Replicas),
		Effect: "the canary gets its scale-down deadline only once the stable is full, the stable grows only as the abort weight falls, and the abort weight cannot fall below the canary's available pods: none of them moves again",
		Do:     "remove abortScaleDownDelaySeconds from the canary strategy (in Git, if Git owns the Rollout): with dynamicStableScale and no delay the canary is scaled down with the weight",
		Evidence: []rules.Evidence{ev(c.obj(), "spec.strategy.canary.abortScaleDownDelaySeconds", *in.AbortDelay), ev(c.obj(), "spec.strategy.canary.dynamicStableScale", true),
			rsEvidence(in.New), rsEvidence(in.Stable)},
		Severity: rules.Critical,
	}
}

// matchDSSMinPodsAbort (#4841): aborted with dynamicStableScale while
// minPodsPerReplicaSet holds the canary's pods; the abort's weight, even
// with the stable complete, stays at the step those pods carry.
func matchDSSMinPodsAbort(c *Context) *BugMatch {
	in := c.Analysis.Inputs
	if c.bg() != nil || !in.Abort || !in.DSS || !in.TrafficRouted || in.MinPods == nil || *in.MinPods <= 0 || in.New == nil || in.Stable == nil ||
		in.New.Hash == in.Stable.Hash || in.New.Spec == 0 || in.New.Spec > *in.MinPods || in.Traffic() == 0 {
		return nil
	}
	full := in.Clone()
	full.Stable.Available, full.Stable.Spec = full.Replicas, full.Replicas
	parked := model.AbortWeight(full)
	if parked == 0 {
		return nil
	}
	state := fmt.Sprintf("aborted with dynamicStableScale and minPodsPerReplicaSet %d: the canary %s keeps %d pods (%d available) and %d%% of traffic, the stable %s has %d of %d",
		*in.MinPods, in.New.Name, in.New.Spec, in.New.Available, in.Traffic(), in.Stable.Name, in.Stable.Available, in.Replicas)
	effect := fmt.Sprintf("the abort walks the setWeight steps back only below what the canary's available pods carry, which minPodsPerReplicaSet never lets go: even with the stable complete the weight stays at %d%% and the canary keeps its pods, for good", parked)
	return &BugMatch{
		State: state, Effect: effect,
		Do:       "undo to the stable revision (kubectl rolloutdoctor escape): once the stable is complete the weight goes to 0 and the canary is scaled down; or remove minPodsPerReplicaSet (in Git, if Git owns the Rollout)",
		Evidence: []rules.Evidence{ev(c.obj(), "spec.strategy.canary.minPodsPerReplicaSet", *in.MinPods), ev(c.obj(), "spec.strategy.canary.dynamicStableScale", true), rsEvidence(in.New), rsEvidence(in.Stable)},
		Severity: rules.Critical,
	}
}

// matchDSSAbortRescale (#4973): the abort is done (0%), yet the aborted
// canary is sized above 0 again because the stable is short of pods.
func matchDSSAbortRescale(c *Context) *BugMatch {
	in := c.Analysis.Inputs
	if c.bg() != nil || !in.Abort || !in.DSS || !in.TrafficRouted || in.New == nil || in.Stable == nil || in.New.Hash == in.Stable.Hash ||
		in.New.Spec == 0 || in.Traffic() != 0 || in.Weights == nil || in.Weights.Canary.Weight != 0 || in.Stable.Available >= in.Replicas ||
		in.MinPods != nil && in.New.Spec <= *in.MinPods {
		return nil
	}
	return &BugMatch{
		State: fmt.Sprintf("aborted with dynamicStableScale and 0%% on the canary, but the stable %s has %d of %d available and the aborted canary %s is sized %d (%d available)",
			in.Stable.Name, in.Stable.Available, in.Replicas, in.New.Name, in.New.Spec, in.New.Available),
		Effect: "this version sizes an aborted canary from the stable's missing pods (the setWeight step they add up to), so a stable short of pods — spec.replicas raised (an HPA), pods hung or evicted — scales the aborted revision up again; once its pods are available the canary Service is pointed at them again on every pass",
		Do:     "get the stable's pods available (delete a hung one; kubectl rolloutdoctor pods shows why they are not): the canary goes back to 0 once the stable has enough. Do not raise spec.replicas of an aborted Rollout with dynamicStableScale (pause the HPA): undo first",
		Evidence: []rules.Evidence{ev(c.obj(), "spec.strategy.canary.dynamicStableScale", true), ev(c.obj(), "status.canary.weights.canary.weight", 0),
			rsEvidence(in.New), rsEvidence(in.Stable)},
	}
}

func matchStableUnderweight(c *Context) *BugMatch {
	in := c.Analysis.Inputs
	if c.bg() != nil || !in.TrafficRouted || in.Weights == nil || in.Stable == nil || in.New == nil || in.New.Hash == in.Stable.Hash {
		return nil // promoted: all traffic is the stable's, short of pods or not
	}
	sw := in.Weights.Stable.Weight
	if in.RouterWeight != nil {
		// Traffic follows the router: a pass writes the router before the
		// status, so a read between the two sees the status behind, and
		// what the canary does not get goes to the stable.
		sw += in.Weights.Canary.Weight - *in.RouterWeight
	}
	need := model.WeightToReplicas(in.Replicas, sw, in.MaxWeight)
	if sw <= 0 || in.Stable.Available >= need || lostPods(c, in.Stable) >= need-in.Stable.Available {
		// Pods that ran and then went unready (hung, crashing) are the
		// stable losing pods under a weight it had them for, not the
		// controller moving weight onto pods it does not have: RD178.
		return nil
	}
	return &BugMatch{
		State:    fmt.Sprintf("stable %s carries %d of %d weight with %d available pods; that weight needs %d", in.Stable.Name, sw, in.MaxWeight, in.Stable.Available, need),
		Effect:   "this version sets the weight without checking that the stable has the pods for it, so the stable's pods take more than their share until it scales up",
		Do:       "watch the stable's pods for overload until it has " + fmt.Sprint(need) + " available; on this version do not push a new revision over an unfinished canary with dynamicStableScale: abort first and let the stable scale up",
		Evidence: []rules.Evidence{ev(c.obj(), "status.canary.weights.stable.weight", sw), rsEvidence(in.Stable)},
	}
}

// matchPingPongStableSelector: with ping-pong, the Service in the stable
// role (pong unless status.canary.stablePingPong is ping) is never pointed
// at the stable by the controller; one without the pod-template hash —
// ping-pong enabled on a Rollout that had run without it — selects the
// canary's pods too, so part of the stable's weight reaches the canary.
func matchPingPongStableSelector(c *Context) *BugMatch {
	cs, in, w := c.canary(), c.Analysis.Inputs, c.View.Workload
	if c.bg() != nil || cs == nil || cs.PingPong == nil || w == nil || in.New == nil || in.Stable == nil || in.New.Hash == in.Stable.Hash || in.New.Available == 0 {
		return nil // no canary pod for the stable's weight to reach
	}
	role, other := cs.PingPong.PongService, cs.PingPong.PingService
	if c.ro.Status.Canary.StablePingPong == v1alpha1.PPPing {
		role, other = other, role
	}
	var svc *corev1.Service
	for _, s := range w.Services {
		if s.Name == role {
			svc = s
		}
	}
	if svc == nil || len(svc.Spec.Selector) == 0 {
		return nil
	}
	// The pods carry their ReplicaSet's pod-template hash label: a
	// selector with another hash does not pick them.
	picks := func(name string) bool {
		for _, rs := range c.View.ReplicaSets {
			if rs.Name == name {
				for k, v := range svc.Spec.Selector {
					if rs.Spec.Template.Labels[k] != v {
						return false
					}
				}
				return true
			}
		}
		return false
	}
	if !picks(in.New.Name) {
		return nil
	}
	share := in.MaxWeight - in.Traffic()
	pods, also := in.New.Available, ", not the stable's"
	if picks(in.Stable.Name) {
		pods += in.Stable.Available
		also = fmt.Sprintf(" as well as the stable's %d", in.Stable.Available)
	}
	extra := share * in.New.Available / pods // pods > 0: the canary has available ones
	selector := "{" + labels.Set(svc.Spec.Selector).String() + "}"
	return &BugMatch{
		State: fmt.Sprintf("ping-pong: Service %s, the stable one (status.canary.stablePingPong %q), selects the canary %s's pods (selector %s, not the stable's %s)",
			role, c.ro.Status.Canary.StablePingPong, in.New.Name, selector, v1alpha1.DefaultRolloutUniqueLabelKey),
		Effect: fmt.Sprintf("the controller points only %s, the canary one, at a ReplicaSet and leaves %s as it is, so the router's %d%% for the stable reaches the canary's %d available %s%s: the canary takes about %d%%, not %d%%, until a promotion makes %s the canary one",
			other, role, share, in.New.Available, plural("pod", int(in.New.Available)), also, in.Traffic()+extra, in.Traffic(), role),
		Do: fmt.Sprintf("point %s at the stable (`kubectl patch service %s -n %s --type merge -p '{\"spec\":{\"selector\":{%q:%q}}}'`) — the controller does not touch it until a promotion makes it the canary one; an abort ends it only once the canary is scaled down",
			role, role, c.ro.Namespace, v1alpha1.DefaultRolloutUniqueLabelKey, in.Stable.Hash),
		Evidence: []rules.Evidence{
			ev("Service "+c.ro.Namespace+"/"+role, "spec.selector", selector),
			ev(c.obj(), "status.canary.stablePingPong", string(c.ro.Status.Canary.StablePingPong)),
			rsEvidence(in.New),
		},
	}
}

// matchBackgroundInconclusiveLoop: a canary held by a pause step whose
// background AnalysisRuns for the update came out Inconclusive, with no
// InconclusiveAnalysis pause: the controller replaced them.
func matchBackgroundInconclusiveLoop(c *Context) *BugMatch {
	cs := c.canary()
	st := c.ro.Status
	if c.bg() != nil || cs == nil || cs.Analysis == nil || len(cs.Analysis.Templates) == 0 || !st.ControllerPause {
		return nil
	}
	var stepPause, inconclusivePause bool
	for _, pc := range st.PauseConditions {
		stepPause = stepPause || pc.Reason == v1alpha1.PauseReasonCanaryPauseStep
		inconclusivePause = inconclusivePause || pc.Reason == v1alpha1.PauseReasonInconclusiveAnalysis
	}
	if !stepPause || inconclusivePause {
		return nil
	}
	var inconclusive []string
	for _, ar := range c.View.AnalysisRuns {
		if ar.Labels[v1alpha1.RolloutTypeLabel] == v1alpha1.RolloutTypeBackgroundRunLabel && ar.Labels[v1alpha1.DefaultRolloutUniqueLabelKey] == st.CurrentPodHash &&
			ar.Status.Phase == v1alpha1.AnalysisPhaseInconclusive {
			inconclusive = append(inconclusive, ar.Name)
		}
	}
	if len(inconclusive) == 0 {
		return nil
	}
	return &BugMatch{
		State: fmt.Sprintf("held by a canary pause step with %d Inconclusive background %s for the update (%s) and no InconclusiveAnalysisRun pause",
			len(inconclusive), plural("AnalysisRun", len(inconclusive)), strings.Join(inconclusive, ", ")),
		Effect:   "during a pause step this version replaces an Inconclusive background run with a new one instead of pausing on it, so the analysis does not hold the Rollout while the step lasts: nobody is asked to decide, a timed pause runs out regardless (after the last step the update can be promoted before a later run pauses it), and an indefinite one keeps replacing runs",
		Do:       "decide by hand: read the runs' measurements (kubectl rolloutdoctor diagnose shows them) and abort, or promote; set spec.paused to hold a timed pause while you look",
		Evidence: []rules.Evidence{ev(c.obj(), "status.pauseConditions", "CanaryPauseStep"), ev("AnalysisRuns (background, "+st.CurrentPodHash+")", "status.phase Inconclusive", len(inconclusive))},
	}
}

// matchStaleEphemeralLabels: pods of the Rollout's ReplicaSets whose
// ephemeral labels (canaryMetadata/stableMetadata, previewMetadata/
// activeMetadata) differ from the ones their ReplicaSet's template has.
func matchStaleEphemeralLabels(c *Context) *BugMatch {
	var metas []*v1alpha1.PodTemplateMetadata
	switch s := c.ro.Spec.Strategy; {
	case s.Canary != nil:
		metas = []*v1alpha1.PodTemplateMetadata{s.Canary.CanaryMetadata, s.Canary.StableMetadata}
	case s.BlueGreen != nil:
		metas = []*v1alpha1.PodTemplateMetadata{s.BlueGreen.PreviewMetadata, s.BlueGreen.ActiveMetadata}
	}
	keys := map[string]bool{}
	for _, m := range metas {
		if m != nil {
			for k := range m.Labels {
				keys[k] = true
			}
		}
	}
	if len(keys) == 0 || c.View.Workload == nil {
		return nil
	}
	var stale []string
	var rsName, want, have string
	for _, rs := range c.View.ReplicaSets {
		hash := rs.Labels[v1alpha1.DefaultRolloutUniqueLabelKey]
		for _, p := range c.View.Workload.Pods {
			if hash == "" || p.Labels[v1alpha1.DefaultRolloutUniqueLabelKey] != hash || p.DeletionTimestamp != nil {
				continue
			}
			for k := range keys {
				if w, h := rs.Spec.Template.Labels[k], p.Labels[k]; w != h {
					stale = append(stale, p.Name)
					if rsName == "" {
						rsName, want, have = rs.Name, k+"="+w, k+"="+h
					}
					break
				}
			}
		}
	}
	if len(stale) == 0 {
		return nil
	}
	slices.Sort(stale)
	role := "a ReplicaSet"
	if in := c.Analysis.Inputs; in.Stable != nil && in.Stable.Name == rsName {
		role = "the stable"
	} else if in.New != nil && in.New.Name == rsName {
		role = "the update's"
	}
	return &BugMatch{
		State:    fmt.Sprintf("%d %s of %s %s %s %s where its template has %s (%s)", len(stale), plural("pod", len(stale)), role, rsName, map[bool]string{true: "carries", false: "carry"}[len(stale) == 1], have, want, strings.Join(stale, ", ")),
		Effect:   staleLabelsEffect(c.Version.Assumed),
		Do:       fmt.Sprintf("relabel them (`kubectl label pod -n %s %s %s --overwrite`) or delete them one at a time so their ReplicaSet recreates them from its template", c.ro.Namespace, strings.Join(stale, " "), want),
		Evidence: []rules.Evidence{ev("ReplicaSet "+rsName, "spec.template.metadata.labels", want), ev("pods", "metadata.labels", have)},
	}
}

// staleLabelsEffect says what the controller of version v does about pods
// with stale ephemeral labels.
func staleLabelsEffect(v upstream.Version) string {
	const selects = "whatever selects on them (a Service, a ServiceMonitor, a NetworkPolicy) takes them for the other revision"
	switch {
	case upstream.At("em.skip-when-rs-current", v).Absent:
		return "the controller relabels every pod on its next pass of the Rollout (the fix of argo-rollouts #4256), but after failed relabels its retries back off (in the lab a denied pod was still stale three minutes after the cause was gone); meanwhile " + selects
	case upstream.At("em.rs-before-pods", v).Absent:
		return "the controller relabels the pods before the template, so a failed relabel is tried again on the next pass (unlike v1.8, argo-rollouts #4256); meanwhile " + selects
	}
	return "this version writes the ReplicaSet's template first and stops at the first pod it fails to relabel; on later passes the template is current, so the pods are not looked at again: they keep the old labels until they are replaced, and " + selects
}

// lostPods counts a ReplicaSet's pods that are unready after having run
// (restarted, crashing, or unready since after their container started),
// by the pods read; none when pods were not read.
func lostPods(c *Context, r *model.RS) int32 {
	var n int32
	if c.View.Workload == nil {
		return 0
	}
	for _, p := range c.View.Workload.Pods {
		if p.Labels[v1alpha1.DefaultRolloutUniqueLabelKey] != r.Hash || p.DeletionTimestamp != nil {
			continue
		}
		if since, down := unreadySince(p); down && !stillStarting(p, since) {
			n++
		}
	}
	return n
}

func matchPromoteFullOverweight(c *Context) *BugMatch {
	in := c.Analysis.Inputs
	if c.bg() != nil || !in.PromoteFull || !in.DSS || !in.TrafficRouted || in.New == nil || in.Replicas <= 0 || in.New.Available <= in.Replicas {
		return nil
	}
	w := in.MaxWeight * in.New.Available / in.Replicas
	stable := fmt.Sprintf("so the stable's weight is %d", in.MaxWeight-w)
	if tr := c.ro.Spec.Strategy.Canary.TrafficRouting; tr != nil && tr.Istio != nil && !upstream.At("is.stable-weight-floor", c.Version.Assumed).Absent {
		stable = fmt.Sprintf("and the Istio router writes the stable's %d as 0, a total of %d", in.MaxWeight-w, w)
	}
	return &BugMatch{
		State: fmt.Sprintf("full promotion with dynamicStableScale and canary %s at %d available for spec.replicas %d", in.New.Name, in.New.Available, in.Replicas),
		Effect: fmt.Sprintf("the full-promotion weight is %d × %d / %d = %d, above the maximum %d, %s: a router that rejects it (Istio does) fails every pass before the canary is scaled down",
			in.MaxWeight, in.New.Available, in.Replicas, w, in.MaxWeight, stable),
		Do:       fmt.Sprintf("raise spec.replicas to %d (in Git, if Git owns the Rollout) so the weight comes to %d, then set it back after the promotion; or scale %s down to %d", in.New.Available, in.MaxWeight, in.New.Name, in.Replicas),
		Evidence: []rules.Evidence{ev(c.obj(), "status.promoteFull", true), ev(c.obj(), "spec.replicas", in.Replicas), rsEvidence(in.New)},
		Severity: rules.Critical,
	}
}

// switchEvents counts the controller's SwitchService events on the Rollout
// (an event's count adds up its repeats).
func (c *Context) switchEvents() int32 {
	var n int32
	for _, e := range c.View.Events {
		if e.Reason == "SwitchService" {
			n += max(e.Count, 1)
		}
	}
	return n
}

func matchCanaryServiceFlap(c *Context) *BugMatch {
	in := c.Analysis.Inputs
	if c.bg() != nil || !in.Abort || !in.TrafficRouted || c.canary().CanaryService == "" || in.New == nil || in.Stable == nil || in.New.Hash == in.Stable.Hash {
		return nil
	}
	if in.New.Available == 0 {
		return nil // the Service switch needs an available pod
	}
	delay := "abortScaleDownDelaySeconds"
	if in.AbortDelay != nil {
		delay = fmt.Sprintf("abortScaleDownDelaySeconds (%d s)", *in.AbortDelay)
	}
	until := "until the canary is scaled down " + delay + " after the stable is full"
	do := "expect it to stop when the canary is scaled down; to end it sooner lower abortScaleDownDelaySeconds, and do not route anything that must stay on stable through the canary Service meanwhile"
	if s := in.Stable; s.Available < in.Replicas {
		// The scale-down deadline waits for a full stable
		// (rs.abort-delay-needs-stable-full): the lab, v1.7.2 and
		// v1.10.2, the stable at 3 of 5 with two pods hung, flipped the
		// Service for as long as they hung.
		until = fmt.Sprintf("for as long as the stable %s has fewer than %d available (%d now): the canary is scaled down only %s after it is full", s.Name, in.Replicas, s.Available, delay)
		do = "get the stable's missing pods available (a hung pod: delete it) — the flipping ends " + delay + " later; meanwhile route nothing that must stay on stable through the canary Service"
	}
	m := &BugMatch{
		State: fmt.Sprintf("aborted with traffic routing while canary %s still has %d available pod(s)", in.New.Name, in.New.Available),
		Effect: "each pass points Service " + c.canary().CanaryService + " at the canary (Service sync) and then back at the stable (traffic routing's abort), " +
			until + "; whatever sends to that Service alternates between versions, and a GitOps tool sees it change",
		Do:       do,
		Evidence: []rules.Evidence{ev(c.obj(), "status.abort", true), rsEvidence(in.New)},
	}
	if n := c.switchEvents(); n > 0 {
		m.Evidence = append(m.Evidence, ev(c.obj(), "events SwitchService", n))
	}
	return m
}

// bugRules adds the catalogue's rules to the checks.
func bugRules(m map[string]rules.Check[Context]) map[string]rules.Check[Context] {
	// Package variables are set before init runs: read the list itself.
	for _, b := range knownBugs() {
		if _, dup := m[b.Rule]; dup {
			panic("diagnose: " + b.Rule + " is both a catalogued bug and a check")
		}
		m[b.Rule] = checkKnownBug
	}
	return m
}

// absentBugs are upstream bugs the catalogue was asked about whose code no
// modeled version has: no fingerprint, only the record of why.
var absentBugs = []struct {
	Issue int
	Name  string
	Why   string
}{
	{2939, "rollbackWindow steps not skipped", "fixed before v1.7.2 (PR #2953): every modeled version sets the step index to the end of the steps for a rollback within the window (rc.every-pass-window) and skips analysis there"},
	{3669, "background analysis runs during a rollbackWindow rollback", "fixed before v1.7.2 (PR #3670): every modeled version cancels analysis for a rollback within the window (an.cancel-on-window)"},
}

// BugsMarkdown is the "Known controller bugs" section of docs/fidelity.md:
// each catalogued bug with the versions it affects, the rule that reports
// it and how the lab reproduced it, then the bugs no modeled version has.
func BugsMarkdown() string {
	var b strings.Builder
	b.WriteString("\n## Known controller bugs\n\n")
	b.WriteString("The catalogue diagnose matches snapshots against (pkg/diagnose/bugs.go). Affected versions are read from the\n")
	b.WriteString("source: the cited lines are present in those releases (`kubectl rolloutdoctor explain RULE` prints them per version).\n\n")
	b.WriteString("| bug | rule | affected | not affected | fix | lab |\n|---|---|---|---|---|---|\n")
	for _, bug := range catalogue {
		name := "lab finding: " + bug.Name
		if bug.Issue != 0 {
			name = fmt.Sprintf("[#%d](%s) %s", bug.Issue, bug.URL(), bug.Name)
		}
		var aff, not []string
		for _, v := range upstream.Modeled {
			if bug.Affects(v) {
				aff = append(aff, string(v))
			} else {
				not = append(not, string(v))
			}
		}
		fix := "in no modeled release"
		if len(aff) > 0 {
			fix = bug.FixedIn(upstream.Version(aff[len(aff)-1]))
		}
		fmt.Fprintf(&b, "| %s | [%s](rules.md#%s) | %s | %s | %s | %s |\n", name, bug.Rule, strings.ToLower(bug.Rule),
			strings.Join(aff, ", "), strings.Join(not, ", "), fix, bug.Lab)
	}
	b.WriteString("\nAsked about, present in no modeled version:\n\n")
	for _, a := range absentBugs {
		fmt.Fprintf(&b, "- [#%d](https://github.com/argoproj/argo-rollouts/issues/%d) %s: %s.\n", a.Issue, a.Issue, a.Name, a.Why)
	}
	return b.String() + EventsMarkdown()
}
