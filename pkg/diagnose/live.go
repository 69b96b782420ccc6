package diagnose

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// The live Rollout checks, RD101–RD112: they read the Rollout's status, its
// ReplicaSets and the model's next pass.

func checkCanaryOverCapacity(c *Context, r *rules.Rule) []rules.Finding {
	in := c.Analysis.Inputs
	if !in.TrafficRouted || in.Weights == nil || in.Traffic() == 0 {
		return nil
	}
	// What the router applies: the status's weight, or the router objects'
	// own where they say otherwise (RD107).
	if in.CanaryWeightOnStable() {
		return nil // the stable's pods take the canary weight: RD178 rates them
	}
	w := in.Traffic()
	carrier := in.Weights.Canary.PodTemplateHash
	if in.ServiceRouted && in.CanaryServiceHash != "" {
		// The router sends the weight to the canary Service: it lands on
		// the pods that Service selects (the stable's after an abort).
		carrier = in.CanaryServiceHash
	}
	var canary *model.RS
	for _, r := range in.All {
		if r.Hash == carrier {
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
	f := r.NewFinding(fmt.Sprintf("%s of traffic on %d of %d pods: canary %s has %d available, the weight needs %d",
		pct(w*100/in.MaxWeight), canary.Available, in.Replicas, canary.Name, canary.Available, need))
	f.Evidence = []rules.Evidence{
		ev(c.obj(), "status.canary.weights.canary.weight", in.Weights.Canary.Weight),
		ev("ReplicaSet "+canary.Name, "status.availableReplicas", canary.Available),
		ev(c.obj(), "spec.replicas", in.Replicas),
	}
	if w != in.Weights.Canary.Weight {
		f.Evidence = append(f.Evidence, ev("traffic router", "canary weight applied (RD107)", w))
	}
	f.Cites = c.cites("tr.stable-check-call", "sv.partial-availability")
	return []rules.Finding{f}
}

func checkCanaryOverCapacityNext(c *Context, r *rules.Rule) []rules.Finding {
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
	f := r.NewFinding(fmt.Sprintf("%s of traffic will go to %d of %d pods %s (canary %s; %d needed)", pct(e.Weight*100/in.MaxWeight), e.CanaryAvailable, e.Replicas, e.When, name, e.PodsNeeded))
	f.Evidence = []rules.Evidence{
		ev(c.obj(), "status.currentStepIndex", fmt.Sprintf("%d → %d of %d steps", in.Index0(), e.Pass.Index, len(in.Steps))),
		ev(c.obj(), "predicted weight", fmt.Sprintf("%d (%s)", e.Weight, e.Pass.Decision.Branch.Words())),
	}
	if in.New != nil {
		f.Evidence = append(f.Evidence, ev("ReplicaSet "+in.New.Name, "status.availableReplicas", in.New.Available))
	}
	f.Cites = e.Pass.Decision.Cites
	return []rules.Finding{f}
}

func checkWindow(c *Context, r *rules.Rule) []rules.Finding {
	w := c.Analysis.Window
	if !w.WithinWindow {
		return nil
	}
	f := r.NewFinding("rollback within rollbackWindow: " + w.Why + "; steps and analysis are skipped")
	in := c.Analysis.Inputs
	if a := c.bg(); a != nil {
		msg := "rollback within rollbackWindow (blue-green): " + strings.ReplaceAll(w.Why, "canary ", "new ReplicaSet ") + "; analysis is skipped"
		if len(a.Notes) > 0 && strings.Contains(a.Notes[0], "#3304") {
			msg += "; " + a.Notes[0]
		} else if upstream.At("bg.retry-deadline-fast-track", c.Version.Assumed).Absent {
			msg += " and the pause too: the active Service switches as soon as the ReplicaSet is fully available"
		}
		f.Message = msg
	}
	f.Evidence = []rules.Evidence{
		ev(c.obj(), "spec.rollbackWindow.revisions", w.Revisions),
		ev("ReplicaSet "+in.New.Name, "metadata.creationTimestamp", in.New.Created.UTC().Format(time.RFC3339)),
		ev("ReplicaSet "+in.Stable.Name, "metadata.creationTimestamp", in.Stable.Created.UTC().Format(time.RFC3339)),
	}
	f.Cites = c.cites("sy.within-window-created-before", "sy.within-window-compare", "rc.every-pass-window", "an.cancel-on-window")
	if c.bg() != nil {
		f.Cites = c.cites("sy.within-window-created-before", "sy.within-window-compare", "bg.window-clears-pause", "bg.fast-track-rollback", "an.cancel-on-window")
	}
	return []rules.Finding{f}
}

func condition(ro *v1alpha1.Rollout, t v1alpha1.RolloutConditionType) *v1alpha1.RolloutCondition {
	for i := range ro.Status.Conditions {
		if ro.Status.Conditions[i].Type == t {
			return &ro.Status.Conditions[i]
		}
	}
	return nil
}

func checkAborted(c *Context, r *rules.Rule) []rules.Finding {
	if !c.ro.Status.Abort {
		return nil
	}
	msg := "aborted: traffic is back on stable and the index is held at 0; it will not recover by itself"
	in := c.Analysis.Inputs
	basic := c.canary() != nil && !in.TrafficRouted && in.Stable != nil
	if basic {
		// Without trafficRouting nothing switches: requests follow the
		// ready pods while the controller sizes the canary for 0%.
		var others, all int32
		for _, x := range in.All {
			all += x.Ready
			if x.Name != in.Stable.Name {
				others += x.Ready
			}
		}
		msg = fmt.Sprintf("aborted: the controller scales the canary to 0 and the stable back to %d (no trafficRouting: requests follow ready pods", in.Replicas)
		if others == 0 && in.Stable.Spec == in.Replicas && (in.New == nil || in.New.Spec == 0) {
			msg = fmt.Sprintf("aborted: the canary is scaled to 0 and the stable back to %d (no trafficRouting: requests follow ready pods", in.Replicas)
		}
		if others > 0 {
			verb := "are"
			if others == 1 {
				verb = "is"
			}
			msg += fmt.Sprintf(", %d of the %d ready pods %s not the stable's yet)", others, all, verb)
		} else {
			msg += ", and every ready pod is the stable's)"
		}
		msg += "; the index is held at 0; it will not recover by itself"
	}
	var held *model.Gate
	if in.TrafficRouted && in.Traffic() > 0 && c.bg() == nil {
		// The abort writes 0% only through the gates: while one holds,
		// the canary keeps its share (the lab, v1.10.2: one hung stable
		// pod kept 20% on an aborted canary for minutes).
		for _, g := range c.Analysis.Next.Gates {
			if g.Holds && g.Effect == model.EffectWeightSkipped {
				msg = fmt.Sprintf("aborted, but traffic is not back on stable: %d%% still goes to the canary, and the controller does not write 0%% while %s; the index is held at 0; it will not recover by itself", in.Traffic(), g.Why)
				if in.CanaryWeightOnStable() {
					// The router's share goes to the canary Service, which
					// the abort points at the stable's pods.
					msg = fmt.Sprintf("aborted, but the router still sends %d%% to the canary Service %s, and the controller does not write 0%% while %s: the abort points that Service at the stable's pods, and each pass points it back at the canary's for a moment (argo-rollouts #3078), so most of that share lands on the stable too; the index is held at 0; it will not recover by itself", in.Traffic(), c.canary().CanaryService, g.Why)
				}
				msg = strings.Replace(msg, ": the weight change is skipped silently", "", 1)
				held = &g
				break
			}
		}
	}
	var dss []upstream.Cite
	if d := c.Analysis.Next.Decision; in.TrafficRouted && in.DSS && in.Traffic() > 0 && d.Branch == model.BranchAborted && d.Weight > 0 && in.Stable != nil && c.bg() == nil {
		// dynamicStableScale: the abort's weight is the share the
		// stable's available pods cannot take, so it stays while one
		// of them is missing (the lab, v1.7.2 and v1.10.2: one hung
		// stable pod kept 20% for minutes), gate or no gate.
		msg = fmt.Sprintf("aborted, but traffic is not back on stable: %d%% still goes to the canary: with dynamicStableScale an abort moves weight off the canary only as the stable's pods become available (%d of %d now)", in.Traffic(), in.Stable.Available, in.Replicas)
		dss = slices.Clone(d.Cites)
		if in.Stable.Available >= in.Replicas && in.New != nil && !upstream.At("uc.desired-canary-weight-abort-dss", c.Version.Assumed).Absent {
			// The stable is complete: v1.9 on walk the steps back only
			// below what the canary's available pods carry (RD155, RD176).
			msg = fmt.Sprintf("aborted, but traffic is not back on stable: %d%% still goes to the canary although the stable has all %d pods: on this version an abort with dynamicStableScale does not take the weight below what the canary's %d available pods carry", in.Traffic(), in.Replicas, in.New.Available)
			dss = append(dss, c.cites("uc.desired-canary-weight-abort-dss")...)
		} else if t := c.Analysis.Next.StableTarget; t < in.Replicas && !upstream.At("uc.desired-canary-weight-abort-dss", c.Version.Assumed).Absent {
			// v1.9 on size the stable for that weight too, stepping
			// back through the setWeight steps.
			msg += fmt.Sprintf(", and the stable is sized for that weight, %d pods, until those it has are available", t)
			dss = append(dss, c.cites("uc.desired-canary-weight-abort-dss")...)
		}
		msg += "; the index is held at 0; it will not recover by itself"
		held = nil
	}
	var again []upstream.Cite
	switch {
	case c.Analysis.Window.WithinWindow && in.DeadlineAborted && in.New != nil:
		// The lab (e2e window-deadline-abort, every version): the abort
		// held until the canary's scale-down, then went.
		when := "abortScaleDownDelaySeconds after the stable has all its pods"
		if d := in.New.ScaleDownDeadline; d != "" {
			when = "at its scale-down deadline " + d
		}
		msg = fmt.Sprintf("aborted by the progress deadline during a rollback within rollbackWindow: traffic is back on the stable; every pass clears the abort, but while the update stays past its deadline the same pass aborts it again, until %s is scaled down (%s) — that is progress: the abort then goes and the rollback starts over, %s scaled up again", in.New.Name, when, in.New.Name)
		again = c.cites("sy.deadline-abort-again", "rc.every-pass-remove-abort", "co.updated-change-is-progress")
	case c.Analysis.Window.WithinWindow:
		msg = "aborted during a rollback within rollbackWindow: the controller clears this abort on its next pass and the rollback resumes"
	}
	if a := c.bg(); a != nil && a.State == model.BGAborted {
		msg = "aborted (blue-green)" + strings.TrimPrefix(a.StateWhy, "aborted")
		if len(a.Old) > 0 {
			for _, o := range a.Old {
				if o.Aborted {
					msg += fmt.Sprintf("; the aborted %s keeps its pods until %s (%s left)", o.Name, o.Deadline, o.Left.Round(time.Second))
				}
			}
		}
		msg += "; it will not recover by itself"
	}
	f := r.NewFinding(msg)
	f.Evidence = []rules.Evidence{ev(c.obj(), "status.abort", true)}
	if m := c.ro.Status.Message; m != "" {
		f.Evidence = append(f.Evidence, ev(c.obj(), "status.message", m))
	}
	if at := c.ro.Status.AbortedAt; at != nil {
		f.Evidence = append(f.Evidence, ev(c.obj(), "status.abortedAt", at.UTC().Format(time.RFC3339)))
	}
	f.Cites = c.cites("tr.branch-aborted", "rc.abort-idx", "ct.fully-promoted-remove-abort")
	if c.bg() != nil {
		f.Cites = c.cites("bg.active-abort-to-stable", "bg.preview-switch", "rs.abort-delay-needs-stable-full", "ct.fully-promoted-remove-abort")
	} else if again != nil {
		f.Cites = append(f.Cites, again...)
	} else if c.Analysis.Window.WithinWindow {
		f.Cites = append(f.Cites, c.cites("rc.every-pass-remove-abort")...)
	} else if dss != nil {
		for _, ci := range dss {
			if !slices.Contains(f.Cites, ci) { // the aborted branch is cited already
				f.Cites = append(f.Cites, ci)
			}
		}
	} else if held != nil {
		f.Cites = append(f.Cites, held.Cites...)
		if in.CanaryWeightOnStable() {
			f.Cites = append(f.Cites, c.cites("tr.abort-canary-svc-to-stable", "sv.canary-svc-target")...)
		}
	} else if basic {
		f.Cites = append(f.Cites, c.cites("bc.counts")...)
	}
	return []rules.Finding{f}
}

func checkProgressDeadline(c *Context, r *rules.Rule) []rules.Finding {
	cond := condition(c.ro, v1alpha1.RolloutProgressing)
	if cond == nil || cond.Reason != "ProgressDeadlineExceeded" {
		return nil
	}
	f := r.NewFinding("progress deadline exceeded since " + cond.LastTransitionTime.UTC().Format(time.RFC3339) + ": " + cond.Message + " (clears by itself when progress resumes)")
	f.Evidence = []rules.Evidence{ev(c.obj(), "status.conditions[Progressing].reason", cond.Reason)}
	f.Cites = c.cites("co.timed-out-reason")
	return []rules.Finding{f}
}

func checkPaused(c *Context, r *rules.Rule) []rules.Finding {
	st := c.ro.Status
	if !c.ro.Spec.Paused && len(st.PauseConditions) == 0 && !st.ControllerPause {
		return nil
	}
	var parts []string
	var evs []rules.Evidence
	var keys []upstream.Key
	if c.ro.Spec.Paused {
		parts = append(parts, "spec.paused is true (manual pause): nothing advances until it is false (plain `promote` clears it)")
		evs = append(evs, ev(c.obj(), "spec.paused", true))
		if c.canary() != nil {
			keys = append(keys, "rc.spec-paused-no-step")
		}
	}
	for _, pc := range st.PauseConditions {
		ago := snapshot.Since(c.View.Now, pc.StartTime.Time).Round(time.Second).String() + " ago"
		if c.View.NowInferred {
			ago = "at least " + ago
		}
		s := fmt.Sprintf("%s since %s (%s)", pc.Reason, pc.StartTime.UTC().Format(time.RFC3339), ago)
		if pc.Reason == v1alpha1.PauseReasonCanaryPauseStep {
			idx := c.Analysis.Inputs.Index0()
			steps := c.Analysis.Inputs.Steps
			if int(idx) < len(steps) && steps[idx].Pause != nil {
				if d := steps[idx].Pause.DurationSeconds(); d > 0 {
					end := pc.StartTime.Add(time.Duration(d) * time.Second)
					at := end.UTC().Format(time.RFC3339)
					over := !end.After(c.View.Now)
					switch {
					case c.ro.Spec.Paused && over:
						// The step's time is up, but no step completes
						// while spec.paused is set: it completes on the
						// first pass after the manual pause is cleared.
						s += fmt.Sprintf(", its %ds ran out at %s but spec.paused holds the step: it completes as soon as spec.paused is false", d, at)
					case c.ro.Spec.Paused:
						s += fmt.Sprintf(", its %ds run out at %s; while spec.paused is set the step does not complete even then", d, at)
					case over:
						s += fmt.Sprintf(", its %ds ran out at %s: the controller moves on at its next pass", d, at)
					default:
						s += ", ends " + at
					}
					keys = append(keys, "pa.duration-ends")
				} else {
					s += ", indefinite: needs promote"
				}
			}
		}
		if pc.Reason == v1alpha1.PauseReasonBlueGreenPause && c.bg() != nil {
			spec := c.ro.Spec.Strategy.BlueGreen
			auto := spec.AutoPromotionEnabled == nil || *spec.AutoPromotionEnabled
			switch t := c.bg().AutoPromoteAt; {
			case t != nil:
				s += fmt.Sprintf(", auto-promotes at %s", t.UTC().Format(time.RFC3339))
			case auto && spec.AutoPromotionSeconds > 0 && c.ro.Spec.Paused:
				// The deadline runs from the pause's start, but no selector
				// changes while spec.paused is set.
				end := pc.StartTime.Add(time.Duration(spec.AutoPromotionSeconds) * time.Second)
				verb := "run out"
				if !end.After(c.View.Now) {
					verb = "ran out"
				}
				s += fmt.Sprintf(", its autoPromotionSeconds %d %s at %s but spec.paused holds the switch: it promotes once spec.paused is false", spec.AutoPromotionSeconds, verb, end.UTC().Format(time.RFC3339))
			case !auto:
				s += ", autoPromotionEnabled false: needs promote"
			default:
				s += ", needs promote"
			}
		}
		parts = append(parts, s)
		evs = append(evs, ev(c.obj(), "status.pauseConditions", pc.Reason))
	}
	if st.ControllerPause {
		parts = append(parts, "paused by the controller (controllerPause)")
		evs = append(evs, ev(c.obj(), "status.controllerPause", true))
	}
	f := r.NewFinding("paused: " + strings.Join(parts, "; "))
	f.Evidence = evs
	f.Cites = c.cites(keys...)
	if a := c.bg(); a != nil {
		if a.Act != "" {
			f.Message += "; who must act: " + a.Act
		}
		keys = append(keys, "bg.pause-add", "bg.needs-pause", "bg.auto-promotion-deadline", "bg.pause-manual-promote")
		if c.ro.Spec.Paused {
			keys = append(keys, "bg.halt-paused")
		}
		f.Cites = c.cites(keys...)
	}
	return []rules.Finding{f}
}

func checkGates(c *Context, r *rules.Rule) []rules.Finding {
	var out []rules.Finding
	for _, g := range c.Analysis.Next.Gates {
		if !g.Holds {
			continue
		}
		f := r.NewFinding(g.Why)
		f.Evidence = []rules.Evidence{ev(c.obj(), "predicted weight", fmt.Sprintf("%d (held at %d)", c.Analysis.Next.Decision.Weight, c.Analysis.Next.Weight))}
		f.Cites = g.Cites
		switch {
		case g.Effect == model.EffectReconcileError:
			f.Severity = rules.Critical
		case g.Idle:
			f.Severity = rules.Info
		}
		out = append(out, f)
	}
	return out
}

func checkVersion(c *Context, r *rules.Rule) []rules.Finding {
	if c.Version.Known() && c.Version.Exact {
		return nil
	}
	msg := c.Version.Note
	if msg == "" {
		msg = "controller version approximated as " + string(c.Version.Assumed)
	}
	f := r.NewFinding(msg)
	if !c.Version.Known() {
		f.Severity = rules.Warning
	}
	if c.Version.Detected != "" {
		f.Evidence = []rules.Evidence{ev("Deployment "+c.Version.From, "image tag", c.Version.Detected)}
	}
	return []rules.Finding{f}
}

func checkGaps(c *Context, r *rules.Rule) []rules.Finding {
	var out []rules.Finding
	for _, g := range c.View.Header.Gaps {
		f := r.NewFinding("could not read " + g.String())
		if g.Reason == "NotInstalled" {
			f.Severity = rules.Info
		}
		out = append(out, f)
	}
	return out
}

func checkUnobserved(c *Context, r *rules.Rule) []rules.Finding {
	if !c.Analysis.Inputs.Unobserved {
		return nil
	}
	f := r.NewFinding(fmt.Sprintf("the controller last observed generation %s, the spec is at generation %d; its next pass resets the status (index → %d)", c.ro.Status.ObservedGeneration, c.ro.Generation, c.Analysis.Next.NextIndex))
	f.Cites = c.Analysis.Next.IndexCites
	if a := c.bg(); a != nil {
		f.Message = fmt.Sprintf("the controller last observed generation %s, the spec is at generation %d; its next pass points the preview Service at the new ReplicaSet and resets the status", c.ro.Status.ObservedGeneration, c.ro.Generation)
		f.Cites = c.cites("bg.preview-switch")
	}
	return []rules.Finding{f}
}
