package diagnose

import (
	"fmt"
	"strings"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// registry is the one list of rules. Append only; never reuse an ID.
var registry = append(rolloutRules, podRules...)

// rolloutRules read the Rollout itself; podRules (pods.go) its pods.
var rolloutRules = []*Rule{
	{
		ID: "RD101", Name: "canary-over-capacity", Severity: Critical, Scope: Live,
		Title: "The canary carries more traffic than its available pods can serve",
		Why: "The traffic router sends the canary weight to the canary ReplicaSet's ready endpoints whatever their number. " +
			"The controller checks only the stable side before changing a weight; it never compares the canary weight with canary availability " +
			"(upstream issue #3941, open; PR #4852 unreleased). In the seed incident 100% of traffic sat on 1–2 of 20 pods for ~45 s.",
		Remedy: "Move traffic off the under-provisioned canary now: if the canary version is the one you are rolling back *from*, `undo` to the stable revision; " +
			"if it is the one you want, wait for it to become available or `promote --full` only when it is. Then fix the step shape (RD201).",
		Escape:  "undo to the stable revision (see `kubectl rolloutdoctor escape`)",
		Facts:   []upstream.Key{"tr.stable-check-call", "tr.reverse-loop", "sv.partial-availability"},
		Sources: []string{"seed 000 §1", "ORACLE.md C1, C9, C15"},
		check:   checkCanaryOverCapacity,
	},
	{
		ID: "RD102", Name: "canary-over-capacity-next", Severity: Critical, Scope: Live,
		Title: "The controller is about to send more traffic to the canary than its pods can serve",
		Why: "Replaying the controller's next passes on this state (ReplicaSets becoming available one pod at a time) shows a pass whose weight exceeds the canary's available pods. " +
			"In a rollback within rollbackWindow the index sits at the end of the steps, so until the canary is at full size the traffic code walks back to the last setWeight step — with a final `setWeight: 100`, 100%.",
		Remedy:  "Act before the canary's first pod becomes available: `undo` to the stable revision or delete the final `setWeight: 100` (the index then walks back to the previous rung).",
		Escape:  "undo to the stable revision, or accept the exposure",
		Facts:   []upstream.Key{"tr.reverse-loop", "rc.every-pass-idx", "uc.current-set-weight-end", "tr.stable-check-call"},
		Sources: []string{"seed 000 §1", "ORACLE.md §3, §5.2"},
		check:   checkCanaryOverCapacityNext,
	},
	{
		ID: "RD103", Name: "rollback-within-window", Severity: Warning, Scope: Live,
		Title: "A rollback within rollbackWindow is in progress: steps and analysis are skipped",
		Why: "The canary ReplicaSet was created before the stable one and fewer than `rollbackWindow.revisions` ReplicaSets were created between them " +
			"(creationTimestamp order, not revision numbers). The controller sets the step index to the end of the steps on every pass, clears abort, and cancels analysis.",
		Remedy:  "Expect no steps, no pauses and no analysis until the canary is fully available and promoted. Watch canary availability against the weight (RD101/RD102).",
		Escape:  "wait (if the canary has capacity), or undo to stable",
		Facts:   []upstream.Key{"sy.within-window-created-before", "sy.within-window-count", "sy.within-window-compare", "rc.every-pass-window", "an.cancel-on-window"},
		Sources: []string{"seed 000 §1", "ORACLE.md C2, C7"},
		check:   checkWindow,
	},
	{
		ID: "RD104", Name: "aborted", Severity: Critical, Scope: Live,
		Title: "The Rollout is aborted",
		Why: "With status.abort the controller routes all traffic back to stable (weight 0 without dynamicStableScale), holds the step index at 0 and reports Degraded/RolloutAborted. " +
			"Nothing in the controller clears an abort by itself except a completed promotion or a rollback within the window: an aborted Rollout stays aborted until someone acts.",
		Remedy:  "Choose an exit: `undo` (back to the stable template: clears abort, safest), `promote --full` (ships the aborted version once fully available), `retry` (re-releases the aborted version from step 0). Plain `promote` does nothing on an aborted Rollout.",
		Escape:  "undo; promote --full only to ship the aborted version",
		Facts:   []upstream.Key{"tr.branch-aborted", "rc.abort-idx", "sy.reset-remove-abort", "ct.fully-promoted-remove-abort", "co.aborted-reason"},
		Sources: []string{"seed 000 §5", "ORACLE.md C11, §4"},
		check:   checkAborted,
	},
	{
		ID: "RD105", Name: "progress-deadline-exceeded", Severity: Warning, Scope: Live,
		Title:   "Progress deadline exceeded (can recover by itself)",
		Why:     "The Progressing condition reports ProgressDeadlineExceeded: the update did not progress within progressDeadlineSeconds. Unlike RolloutAborted this is not sticky: it clears when the ReplicaSets progress again (unless progressDeadlineAbort is set).",
		Remedy:  "Find what stops progress (pods not becoming available, minPodsPerReplicaSet above replicas — RD203), fix it; the condition clears when progress resumes.",
		Facts:   []upstream.Key{"co.timed-out-reason"},
		Sources: []string{"seed 000 §4"},
		check:   checkProgressDeadline,
	},
	{
		ID: "RD106", Name: "paused", Severity: Info, Scope: Live,
		Title:  "The Rollout is paused",
		Why:    "A pause step, a manual pause (spec.paused), an inconclusive analysis or a controller pause holds the Rollout at its current step.",
		Remedy: "A timed pause ends by itself; an indefinite one needs `promote` (or `promote --full` to skip the remaining steps).",
		Facts:  []upstream.Key{"rc.step-completed"},
		check:  checkPaused,
	},
	{
		ID: "RD107", Name: "router-weight-mismatch", Severity: Warning, Scope: Live,
		Title: "The traffic router's weight disagrees with the Rollout status",
		Why: "The weight in the VirtualService (or Ingress annotation) is what the proxies enforce; status.canary.weights is what the controller believes it set. " +
			"They differ while a change is in flight, when another actor (a GitOps sync, a human) edited the router, or when the controller's write failed.",
		Remedy: "If the mismatch persists, check the controller logs for TrafficRoutingError events and check whether a GitOps tool owns the VirtualService/Ingress fields the controller manages.",
		Facts:  []upstream.Key{"tr.set-weight-call"},
		check:  checkRouterMismatch,
	},
	{
		ID: "RD108", Name: "weight-held-by-gate", Severity: Warning, Scope: Live,
		Title: "A controller gate holds the traffic weight",
		Why: "Before writing a weight the controller checks stable availability (v1.8+) and, in Istio subset-only mode, that the ReplicaSets behind the DestinationRule subsets are fully available. " +
			"A holding stable check skips the weight change silently; the subset-only gate makes every pass error until availability recovers, which also stops scaling and status updates on that pass.",
		Remedy:  "Restore availability of the ReplicaSet named in the evidence; in subset-only mode consider naming canaryService/stableService so the gate does not apply.",
		Facts:   []upstream.Key{"tr.stable-check-call", "tr.stable-check-def", "is.subset-only-gate", "is.subset-only-error"},
		Sources: []string{"ORACLE.md C9, §2"},
		check:   checkGates,
	},
	{
		ID: "RD109", Name: "controller-version-unknown", Severity: Info, Scope: Live,
		Title:  "The controller version is not known exactly",
		Why:    "Controller behaviour differs between v1.7, v1.8.2, v1.8.3, v1.9 and v1.10 (traffic gates, abort weight, minPods cap, analysis cancellation). Without the version the report assumes the newest modeled release and lists where the others would differ.",
		Remedy: "Pass --controller-version, or grant read access to the argo-rollouts controller Deployment so its image tag can be read.",
		check:  checkVersion,
	},
	{
		ID: "RD110", Name: "data-gap", Severity: Warning, Scope: Live,
		Title:  "Some objects could not be read",
		Why:    "A kind the user may not read, or a CRD that is not installed, leaves part of the picture unknown. Checks that need it are skipped, not passed.",
		Remedy: "Grant read access (see docs/rbac), or install the missing CRD if the Rollout relies on it.",
		check:  checkGaps,
	},
	{
		ID: "RD111", Name: "spec-not-observed", Severity: Info, Scope: Live,
		Title:  "The controller has not yet reconciled the latest spec",
		Why:    "status.observedGeneration is behind metadata.generation: the next pass is the reset pass (status reset; index to 0, or to the end for a rollback to stable or within the window to a ReplicaSet that still has replicas).",
		Remedy: "Re-run in a few seconds; if it persists, the controller is down, overloaded, or does not own this Rollout (check its logs and --namespaced/instance-id settings).",
		Facts:  []upstream.Key{"rc.reset-path-window", "rc.rollback-to-stable-skip"},
		check:  checkUnobserved,
	},
	{
		ID: "RD112", Name: "abort-not-acted-on", Severity: Warning, Scope: Live,
		Title: "status.abort is set but the controller has not acted on it",
		Why: "After an abort the controller reports Degraded/RolloutAborted and moves traffic to the stable on its next pass, normally within a second. " +
			"Up to v1.9 the controller writes its own copy of the Rollout back into its informer cache after each status patch; an abort that lands while it does so can be overwritten in that cache, " +
			"and the controller then reconciles without it until the next change to the Rollout or its resync (15 minutes by default). The rolloutdoctor lab saw this in 6 of 8 aborts on v1.9.3 in one run. v1.10 no longer writes back.",
		Remedy:  "Make the controller read the Rollout again: any change to it does, e.g. `kubectl annotate rollout NAME rolloutdoctor.io/nudge=$(date +%s) --overwrite`. If the abort is still not acted on, check that the controller runs and read its log for this Rollout.",
		Escape:  "abort (again) only after the nudge; watch the phase become Degraded",
		Facts:   []upstream.Key{"ct.write-back-informer", "tr.branch-aborted"},
		Sources: []string{"rolloutdoctor lab (docs/fidelity.md)"},
		check:   checkAbortNotActedOn,
	},
	{
		ID: "RD201", Name: "final-setweight-100", Severity: Critical, Scope: Static,
		Title: "The last setWeight is 100 and rollbackWindow is set: a rollback sends 100% to the first canary pod(s)",
		Why: "A rollback within rollbackWindow skips the steps: the index goes to the end. Until the canary is at full size the traffic code walks back to the last setWeight step, and the canary Service switches at the first available pod. " +
			"With a final `setWeight: 100` that is 100% of traffic on 1–2 pods (exactly minPodsPerReplicaSet in Istio subset-only mode on v1.8.2 and v1.9+). " +
			"The final 100 is redundant: after the last step the controller goes to the maximum weight by itself. " +
			"Deleting it makes the walk-back pick the previous rung; the cost is that during the ramp most traffic stays on the version being rolled back from.",
		Remedy: "Delete the final `setWeight: 100` (a trailing pause after it may go too). `[5, 100]` → `[5]`; `[100]` alone → `steps: []` (normal deploys already wait for full availability); `[10, 50, 100]` → deleting leaves 50: lower the earlier rungs too. " +
			"Helm replaces lists: fix every values file that declares its own steps, and lint what `helm template` renders.",
		Facts:   []upstream.Key{"rc.every-pass-idx", "tr.reverse-loop", "uc.current-set-weight-end", "sv.partial-availability", "uc.set-canary-scale-unused"},
		Sources: []string{"seed 000 §1", "ORACLE.md C1, C8"},
		check:   checkFinal100,
	},
	{
		ID: "RD202", Name: "rollback-rung-over-safe-pods", Severity: Warning, Scope: Static,
		Title: "The rung a rollback would use is too high for minPodsPerReplicaSet at this scale",
		Why: "During a rollback within the window the canary gets the last setWeight value while it has only its first pods. " +
			"minPodsPerReplicaSet pods can carry that weight only up to `safe pods = minPodsPerReplicaSet ÷ weight% × 100` total replicas (2 ÷ 5% = 40). " +
			"Above that — at current replicas or at the autoscaler's maximum — the first canary pods are overloaded.",
		Remedy:  "Lower the earlier rungs so the last setWeight fits (weight ≤ minPods × 100 ÷ maxReplicas), or raise minPodsPerReplicaSet (it raises the canary's pod count on every rollout, and must stay ≤ replicas).",
		Facts:   []upstream.Key{"uc.canary-count", "uc.check-min-max", "uc.ceil", "tr.reverse-loop"},
		Sources: []string{"seed 000 §1"},
		check:   checkSafePods,
	},
	{
		ID: "RD203", Name: "minpods-exceeds-replicas", Severity: Critical, Scope: Static,
		Title: "minPodsPerReplicaSet is greater than replicas: the Healthy condition can never become True",
		Why: "The canary is sized to at least minPodsPerReplicaSet, so updatedReplicas can never equal spec.replicas, which RolloutHealthy requires: the Healthy condition never becomes True. " +
			"Depending on timing the update either stays Progressing (canary at minPods next to the stable, more pods than replicas) until ProgressDeadlineExceeded, " +
			"or the canary is promoted and the phase reads Healthy with minPods pods for fewer replicas — the lab run showed both. " +
			"v1.10 caps minPodsPerReplicaSet at spec.replicas and so avoids it.",
		Remedy:  "Set minPodsPerReplicaSet ≤ replicas (including the autoscaler's minimum), or upgrade to v1.10+ where it is capped.",
		Facts:   []upstream.Key{"uc.check-min-max", "uc.min-cap-replicas", "co.healthy-updated"},
		Sources: []string{"seed 000 §4"},
		check:   checkMinPods,
	},
	{
		ID: "RD204", Name: "dynamic-stable-scale", Severity: Warning, Scope: Static,
		Title: "dynamicStableScale removes the warm standby and does not stop the rollback exposure",
		Why: "With dynamicStableScale the stable ReplicaSet is scaled down as weight moves to the canary: after a 100% flip the stable goes to 0 on the next pass (minPodsPerReplicaSet does not hold a 0). " +
			"It caps the weight by canary availability only under promote --full, not in the rollback path. Unless abortScaleDownDelaySeconds is set explicitly it also disables the abort scale-down delay, and the abort weight follows stable availability (formula rewritten in v1.9).",
		Remedy:  "Prefer dynamicStableScale: false for services where a fast abort matters; if you keep it, set abortScaleDownDelaySeconds explicitly.",
		Facts:   []upstream.Key{"tr.promote-full-dss-cap", "uc.dss-stable-count", "uc.check-min-zero", "rs.abort-delay-dss-unset", "tr.abort-weight-formula"},
		Sources: []string{"seed 000 §2", "ORACLE.md C9, C10, C16"},
		check:   checkDSS,
	},
	{
		ID: "RD205", Name: "abort-scale-down-delay-zero", Severity: Warning, Scope: Static,
		Title:   "abortScaleDownDelaySeconds: 0 scales the aborted canary down at once",
		Why:     "Upstream docs say 0 means \"do not scale down\"; in the code 0 turns the delay logic off: on abort the canary is scaled in the same pass to its computed size, which is 0 unless a setCanaryScale step applies.",
		Remedy:  "Remove the field (default 30 s with traffic routing) or set the delay you want in seconds.",
		Facts:   []upstream.Key{"df.abort-delay-zero", "rs.abort-delay-nil"},
		Sources: []string{"seed 000 §2", "ORACLE.md C9"},
		check:   checkAbortDelayZero,
	},
	{
		ID: "RD206", Name: "replica-progress-threshold-pods", Severity: Critical, Scope: Static,
		Title:   "replicaProgressThreshold of type Pods lets a rollback put 100% on a few pods even without a final setWeight 100",
		Why:     "From v1.9 the canary counts as at its desired size once `value` pods are available. In a rollback within the window the desired weight at the end of the steps is the maximum, so the weight goes to 100% with `value` pods and the canary is promoted early.",
		Remedy:  "Use type Percent with a high value, or remove replicaProgressThreshold.",
		Facts:   []upstream.Key{"uc.rpt-pods", "uc.at-desired-canary", "sy.full-promote-gate"},
		Sources: []string{"seed 000 §3", "ORACLE.md C12"},
		check:   checkRPT,
	},
	{
		ID: "RD207", Name: "max-traffic-weight-unsupported", Severity: Warning, Scope: Static,
		Title:   "maxTrafficWeight is only valid with nginx or traffic plugins",
		Why:     "Validation rejects maxTrafficWeight for every other router (InvalidSpec). Where it is valid it changes the denominator of every weight, not a cap.",
		Remedy:  "Remove maxTrafficWeight; express rungs as percentages of 100.",
		Facts:   []upstream.Key{"va.max-weight-only-nginx"},
		Sources: []string{"seed 000 §1", "ORACLE.md C6"},
		check:   checkMaxWeight,
	},
	{
		ID: "RD208", Name: "abort-delay-over-resync", Severity: Info, Scope: Static,
		Title:   "abortScaleDownDelaySeconds is longer than the controller's resync period",
		Why:     "When the delay has not expired the code falls through to scaling the canary to its computed size: with a delay longer than the resync (900 s by default) the aborted canary is scaled down on the second pass after the abort, not after the delay.",
		Remedy:  "Keep abortScaleDownDelaySeconds below the controller's resync period.",
		Facts:   []upstream.Key{"rs.abort-delay-fallthrough"},
		Sources: []string{"ORACLE.md C9"},
		check:   checkAbortDelayResync,
	},
}

func checkCanaryOverCapacity(c *Context, r *Rule) []Finding {
	in := c.Analysis.Inputs
	if !in.TrafficRouted || in.Weights == nil || in.Weights.Canary.Weight == 0 {
		return nil
	}
	w := in.Weights.Canary.Weight
	var canary *model.RS
	for _, r := range in.All {
		if r.Hash == in.Weights.Canary.PodTemplateHash {
			canary = r
		}
	}
	if canary == nil || (in.Stable != nil && canary.Hash == in.Stable.Hash) {
		return nil
	}
	need := model.WeightToReplicas(in.Replicas, w, in.MaxWeight)
	if canary.Available >= need {
		return nil
	}
	f := r.finding(fmt.Sprintf("%s of traffic on %d of %d pods: canary %s has %d available, the weight needs %d",
		pct(w*100/in.MaxWeight), canary.Available, in.Replicas, canary.Name, canary.Available, need))
	f.Evidence = []Evidence{
		ev(c.obj(), "status.canary.weights.canary.weight", w),
		ev("ReplicaSet "+canary.Name, "status.availableReplicas", canary.Available),
		ev(c.obj(), "spec.replicas", in.Replicas),
	}
	f.Cites = c.cites("tr.stable-check-call", "sv.partial-availability")
	return []Finding{f}
}

func checkCanaryOverCapacityNext(c *Context, r *Rule) []Finding {
	e := c.Analysis.Exposure
	if e == nil {
		return nil
	}
	in := c.Analysis.Inputs
	if in.Weights != nil && in.Weights.Canary.Weight == e.Weight && e.When == "on the next pass" {
		return nil // RD101 already reports it as current
	}
	name := ""
	if in.New != nil {
		name = in.New.Name
	}
	f := r.finding(fmt.Sprintf("%s of traffic will go to %d of %d pods %s (canary %s; %d needed)", pct(e.Weight*100/in.MaxWeight), e.CanaryAvailable, e.Replicas, e.When, name, e.PodsNeeded))
	f.Evidence = []Evidence{
		ev(c.obj(), "status.currentStepIndex", fmt.Sprintf("%d → %d of %d steps", in.Index0(), e.Pass.Index, len(in.Steps))),
		ev(c.obj(), "predicted weight ("+string(e.Pass.Decision.Branch)+")", e.Weight),
	}
	if in.New != nil {
		f.Evidence = append(f.Evidence, ev("ReplicaSet "+in.New.Name, "status.availableReplicas", in.New.Available))
	}
	f.Cites = e.Pass.Decision.Cites
	return []Finding{f}
}

func checkWindow(c *Context, r *Rule) []Finding {
	w := c.Analysis.Window
	if !w.WithinWindow {
		return nil
	}
	f := r.finding("rollback within rollbackWindow: " + w.Why + "; steps and analysis are skipped")
	in := c.Analysis.Inputs
	f.Evidence = []Evidence{
		ev(c.obj(), "spec.rollbackWindow.revisions", w.Revisions),
		ev("ReplicaSet "+in.New.Name, "metadata.creationTimestamp", in.New.Created.UTC().Format(time.RFC3339)),
		ev("ReplicaSet "+in.Stable.Name, "metadata.creationTimestamp", in.Stable.Created.UTC().Format(time.RFC3339)),
	}
	f.Cites = c.cites("sy.within-window-created-before", "sy.within-window-compare", "rc.every-pass-window", "an.cancel-on-window")
	return []Finding{f}
}

func condition(ro *v1alpha1.Rollout, t v1alpha1.RolloutConditionType) *v1alpha1.RolloutCondition {
	for i := range ro.Status.Conditions {
		if ro.Status.Conditions[i].Type == t {
			return &ro.Status.Conditions[i]
		}
	}
	return nil
}

func checkAborted(c *Context, r *Rule) []Finding {
	if !c.ro.Status.Abort {
		return nil
	}
	msg := "aborted: traffic is back on stable and the index is held at 0; it will not recover by itself"
	if c.Analysis.Window.WithinWindow {
		msg = "aborted during a rollback within rollbackWindow: the controller clears this abort on its next pass and the rollback resumes"
	}
	f := r.finding(msg)
	f.Evidence = []Evidence{ev(c.obj(), "status.abort", true)}
	if m := c.ro.Status.Message; m != "" {
		f.Evidence = append(f.Evidence, ev(c.obj(), "status.message", m))
	}
	if at := c.ro.Status.AbortedAt; at != nil {
		f.Evidence = append(f.Evidence, ev(c.obj(), "status.abortedAt", at.UTC().Format(time.RFC3339)))
	}
	f.Cites = c.cites("tr.branch-aborted", "rc.abort-idx", "ct.fully-promoted-remove-abort")
	if c.Analysis.Window.WithinWindow {
		f.Cites = append(f.Cites, c.cites("rc.every-pass-remove-abort")...)
	}
	return []Finding{f}
}

func checkProgressDeadline(c *Context, r *Rule) []Finding {
	cond := condition(c.ro, v1alpha1.RolloutProgressing)
	if cond == nil || cond.Reason != "ProgressDeadlineExceeded" {
		return nil
	}
	f := r.finding("progress deadline exceeded since " + cond.LastTransitionTime.UTC().Format(time.RFC3339) + ": " + cond.Message + " (clears by itself when progress resumes)")
	f.Evidence = []Evidence{ev(c.obj(), "status.conditions[Progressing].reason", cond.Reason)}
	f.Cites = c.cites("co.timed-out-reason")
	return []Finding{f}
}

func checkPaused(c *Context, r *Rule) []Finding {
	st := c.ro.Status
	if !c.ro.Spec.Paused && len(st.PauseConditions) == 0 && !st.ControllerPause {
		return nil
	}
	var parts []string
	var evs []Evidence
	if c.ro.Spec.Paused {
		parts = append(parts, "spec.paused is true (manual pause)")
		evs = append(evs, ev(c.obj(), "spec.paused", true))
	}
	for _, pc := range st.PauseConditions {
		s := fmt.Sprintf("%s since %s (%s ago)", pc.Reason, pc.StartTime.UTC().Format(time.RFC3339), c.View.Now.Sub(pc.StartTime.Time).Round(time.Second))
		if pc.Reason == v1alpha1.PauseReasonCanaryPauseStep {
			idx := c.Analysis.Inputs.Index0()
			steps := c.Analysis.Inputs.Steps
			if int(idx) < len(steps) && steps[idx].Pause != nil {
				if d := steps[idx].Pause.DurationSeconds(); d > 0 {
					end := pc.StartTime.Add(time.Duration(d) * time.Second)
					s += fmt.Sprintf(", ends %s", end.UTC().Format(time.RFC3339))
				} else {
					s += ", indefinite: needs promote"
				}
			}
		}
		parts = append(parts, s)
		evs = append(evs, ev(c.obj(), "status.pauseConditions", pc.Reason))
	}
	if st.ControllerPause {
		parts = append(parts, "paused by the controller (controllerPause)")
		evs = append(evs, ev(c.obj(), "status.controllerPause", true))
	}
	f := r.finding("paused: " + strings.Join(parts, "; "))
	f.Evidence = evs
	return []Finding{f}
}

func checkGates(c *Context, r *Rule) []Finding {
	var out []Finding
	for _, g := range c.Analysis.Next.Gates {
		if !g.Holds {
			continue
		}
		f := r.finding(g.Why)
		f.Evidence = []Evidence{ev(c.obj(), "predicted weight", fmt.Sprintf("%d (held at %d)", c.Analysis.Next.Decision.Weight, c.Analysis.Next.Weight))}
		f.Cites = g.Cites
		if g.Effect == model.EffectReconcileError {
			f.Severity = Critical
		}
		out = append(out, f)
	}
	return out
}

func checkVersion(c *Context, r *Rule) []Finding {
	if c.Version.Known() && c.Version.Exact {
		return nil
	}
	msg := c.Version.Note
	if msg == "" {
		msg = "controller version approximated as " + string(c.Version.Assumed)
	}
	f := r.finding(msg)
	if !c.Version.Known() {
		f.Severity = Warning
	}
	if c.Version.Detected != "" {
		f.Evidence = []Evidence{ev("Deployment "+c.Version.From, "image tag", c.Version.Detected)}
	}
	return []Finding{f}
}

func checkGaps(c *Context, r *Rule) []Finding {
	var out []Finding
	for _, g := range c.View.Header.Gaps {
		f := r.finding("could not read " + g.String())
		if g.Reason == "NotInstalled" {
			f.Severity = Info
		}
		out = append(out, f)
	}
	return out
}

func checkUnobserved(c *Context, r *Rule) []Finding {
	if !c.Analysis.Inputs.Unobserved {
		return nil
	}
	f := r.finding(fmt.Sprintf("the controller last observed generation %s, the spec is at generation %d; its next pass resets the status (index → %d)", c.ro.Status.ObservedGeneration, c.ro.Generation, c.Analysis.Next.NextIndex))
	f.Cites = c.Analysis.Next.IndexCites
	return []Finding{f}
}

func checkAbortNotActedOn(c *Context, r *Rule) []Finding {
	st := c.ro.Status
	if !st.Abort || st.Phase == v1alpha1.RolloutPhaseDegraded || c.Analysis.Window.WithinWindow {
		return nil
	}
	if cond := condition(c.ro, v1alpha1.RolloutProgressing); cond != nil && cond.Reason == "RolloutAborted" {
		return nil
	}
	msg := fmt.Sprintf("status.abort is true but the phase is %s, not Degraded: the controller has not acted on the abort yet", st.Phase)
	if !upstream.At("ct.write-back-informer", c.Version.Assumed).Absent {
		msg += fmt.Sprintf("; on %s it can miss an abort that lands while it writes back its own copy of the Rollout, until the next change to the Rollout", c.Version.Assumed)
	}
	f := r.finding(msg)
	f.Evidence = []Evidence{ev(c.obj(), "status.abort", true), ev(c.obj(), "status.phase", st.Phase)}
	f.Cites = c.cites("ct.write-back-informer", "tr.branch-aborted")
	return []Finding{f}
}
