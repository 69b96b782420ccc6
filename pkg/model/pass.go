package model

import (
	"fmt"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// Evaluate predicts the controller's next reconcile of a canary Rollout, in
// the order the controller runs it: Services, traffic weight and its gates,
// ReplicaSet sizing, then status (index, abort, promotion).
func Evaluate(in Inputs) Pass {
	p := evaluate(in)
	p.Traffic = p.Weight
	if in.TrafficRouted && !p.Applied && !p.EarlyWeight && in.RouterWeight != nil {
		// Nothing is written: the router keeps what it has.
		p.Traffic = *in.RouterWeight
	}
	return p
}

func evaluate(in Inputs) Pass {
	p := Pass{Index: in.index(), Weight: currentWeight(in)}
	if p.Index < 0 {
		// The controller never writes a negative index; one that was edited
		// in would make it index its steps out of range. Predict nothing.
		p.Errored, p.NextIndex = true, p.Index
		p.IndexWhy = fmt.Sprintf("status.currentStepIndex is %d, which the controller never writes: no prediction (was status edited by hand?)", p.Index)
		return p
	}
	if len(in.Invalid) > 0 {
		// The controller validates before it reconciles: an invalid spec
		// gets the InvalidSpec condition and nothing else happens.
		p.Errored, p.NextIndex = true, p.Index
		p.IndexWhy = fmt.Sprintf("the controller rejects the spec (InvalidSpec: %s) and does not reconcile this Rollout until it is fixed: no weight, scaling or step change", in.Invalid[0])
		p.IndexCites = in.cites("ct.invalid-spec", in.Invalid[0].Fact)
		return p
	}
	if r := in.ScaledWhileHalted(); r != nil {
		// Every pass of a scaling event only syncs replicas — no traffic,
		// Services, steps or abort — and a halted canary skips that too,
		// leaving the annotation that makes the next pass one again.
		p.ReplicasOnly, p.NextIndex = true, p.Index
		p.CanaryTarget, p.StableTarget = rsSpec(in.New), rsSpec(in.Stable)
		p.AtDesired = AtDesired(in, nil)
		halt, key := "spec.paused is true", upstream.Key("cx.halt-user-paused")
		if !in.Paused {
			halt, key = "an InconclusiveAnalysis pause halts progress", "cx.halt-inconclusive"
		}
		p.IndexWhy = fmt.Sprintf("spec.replicas is %d but %s's desired-replicas annotation says %d, so every pass only syncs replicas, and while %s that sync does nothing: no weight, Service, step or abort is acted on until the halt ends", in.Replicas, r.Name, *r.Desired, halt)
		p.IndexCites = in.cites("se.compare-annotation", "se.replicas-only", "se.canary-sync", "se.halt-skips-sync", key)
		return p
	}
	if r := in.AbortMeetsScale(); r != nil && !in.Unobserved {
		// The replica sync scales the stable for spec.replicas; the
		// aborted canary waits for its deadline, traffic is not touched.
		p.ReplicasOnly, p.NextIndex = true, p.Index
		_, p.StableTarget = DesiredCounts(in, in.Weights)
		p.CanaryTarget = r.Spec
		p.AtDesired = AtDesired(in, nil)
		p.IndexWhy = fmt.Sprintf("aborted while %s was last sized for %d and spec.replicas is %d: every pass only syncs replicas, and this version's aborted canary returns before it syncs that count, so the weight is not reconciled until the canary's abort scale-down deadline scales it to 0", r.Name, *r.Desired, in.Replicas)
		p.IndexCites = in.cites("se.compare-annotation", "se.replicas-only", "rs.abort-delay-returns", "rs.abort-delay-needs-stable-full")
		return p
	}
	if in.Unobserved {
		return resetPass(in, p)
	}
	p.Decision = DecideWeight(in)
	p.CanaryServiceHash = canaryServiceTarget(in, p.Decision.Weight)
	if in.TrafficRouted && !trafficPass(in, &p) {
		return p
	}
	weights := nextWeights(in, p.Weight)
	sizePass(in, &p, weights)
	statusPass(in, &p, weights)
	return p
}

// canaryServiceTarget is the pod-template hash a managed canary Service
// selects after a pass with canary weight w ("" when the pass leaves it as
// it is). Services are reconciled before traffic: the Service follows the
// canary once it has an available pod (sv.canary-svc-target) — but not
// while dynamicStableScale rolls back to a stable that is not full
// (sv.dss-rollback-keeps-canary-svc) — or the stable after an abort
// without trafficRouting. With trafficRouting the abort points it back at
// the stable later in the same pass: without dynamicStableScale at once,
// with it once the abort weight is 0 (tr.abort-canary-svc-to-stable).
func canaryServiceTarget(in Inputs, w int32) string {
	if !in.HasServices || in.New == nil {
		return ""
	}
	if in.Abort && in.Stable != nil && !in.TrafficRouted {
		return in.Stable.Hash
	}
	rollingBack, _ := in.dynamicRollbackToStable()
	if in.Abort && in.Stable != nil && !rollingBack && !in.fullyPromoted() && (!in.DSS || w == 0) {
		return in.Stable.Hash
	}
	if !rollingBack && in.New.Available > 0 {
		return in.New.Hash
	}
	return ""
}

// trafficPass runs the traffic reconcile: the stable availability gate, the
// v1.9+ early write, the Istio subset-only gate and the weight write. It
// returns false when the pass ends there with an error.
func trafficPass(in Inputs, p *Pass) bool {
	canaryHash, stableHash := "", ""
	if in.New != nil {
		canaryHash = in.New.Hash
	}
	if in.Stable != nil {
		stableHash = in.Stable.Hash
	}
	if ok, prev := in.dynamicRollbackToStable(); ok {
		canaryHash = prev
	}
	sg := stableGate(in, p.Decision.Weight)
	p.Gates = append(p.Gates, sg)
	if sg.Holds {
		return true
	}
	// v1.9+ writes the weight before UpdateHash when the canary has
	// no available pod and it previously carried traffic.
	if in.present("tr.early-setweight") && (in.New == nil || in.New.Available == 0) && in.Weights != nil && in.Weights.Canary.Weight > 0 {
		p.EarlyWeight = true
		p.Weight = p.Decision.Weight
		p.Cites = append(p.Cites, in.cite("tr.early-setweight"))
	}
	ig := subsetOnlyGate(in, canaryHash, stableHash)
	if ig.Why != "" {
		p.Gates = append(p.Gates, ig)
	}
	if ig.Holds && ig.Effect == EffectReconcileError {
		p.Errored = true
		p.NextIndex = p.Index
		p.IndexWhy = "the pass ends with an error before the status is written: the index does not move"
		p.CanaryTarget, p.StableTarget = rsSpec(in.New), rsSpec(in.Stable)
		p.AtDesired = AtDesired(in, nil)
		return false
	}
	p.Applied = true
	p.Weight = p.Decision.Weight
	return true
}

// sizePass sizes the canary and stable ReplicaSets for the pass's weights.
func sizePass(in Inputs, p *Pass, weights *v1alpha1.TrafficWeights) {
	if in.Paused || in.Inconclusive {
		// spec.paused and an InconclusiveAnalysis pause halt the
		// ReplicaSets' scaling (the weight is still written).
		p.CanaryTarget, p.StableTarget = rsSpec(in.New), rsSpec(in.Stable)
		p.AtDesired = AtDesired(in, weights)
		if in.Paused {
			p.Cites = append(p.Cites, in.cite("cx.halt-user-paused"))
		} else {
			p.Cites = append(p.Cites, in.cite("cx.halt-inconclusive"))
		}
		return
	}
	if !in.TrafficRouted {
		basicSizePass(in, p)
		return
	}
	p.CanaryTarget, p.StableTarget = DesiredCounts(in, weights)
	if in.Abort {
		if set, d := in.abortDelay(); d == nil || (in.DSS && !set) {
			// No abort scale-down delay: the canary goes to its computed size now.
			c, _ := DesiredCounts(in, weights)
			p.CanaryTarget = c
		} else if in.New != nil {
			// The aborted canary is kept until the delay after stable is fully available.
			p.CanaryTarget = in.New.Spec
		}
	}
	if in.fullyPromoted() {
		// The stable is the new ReplicaSet: only the new ReplicaSet's sizing
		// runs, for the maximum weight and raised to minPodsPerReplicaSet.
		// Before v1.10 (no cap at replicas) a minPods above replicas keeps
		// that many pods after the promotion.
		n := minPods(in, in.Replicas)
		p.CanaryTarget, p.StableTarget = n, n
		if n > in.Replicas {
			p.Cites = append(p.Cites, in.cites("ur.new-rs-traffic-routed", "rc.stable-is-new-skip", "uc.promote-full-max-weight", "uc.canary-count", "uc.check-min-max")...)
		}
	}
	p.AtDesired = AtDesired(in, weights)
}

// basicSizePass scales as the controller does without trafficRouting: the
// stable first, and a pass that scales it ends there; then the canary; then
// the other ReplicaSets down.
func basicSizePass(in Inputs, p *Pass) {
	p.CanaryTarget, p.StableTarget = rsSpec(in.New), rsSpec(in.Stable)
	c, s := BasicCounts(in)
	switch {
	case in.stableApart() && s != in.Stable.Spec:
		p.StableTarget = s
	case in.New != nil && c != in.New.Spec:
		p.CanaryTarget = c
	default:
		p.OtherTargets = othersScaledDown(in)
	}
	p.Cites = append(p.Cites, in.cites("bc.counts", "bc.stable-first", "bc.at-desired-others")...)
	if len(p.OtherTargets) > 0 {
		p.Cites = append(p.Cites, in.cite("bc.others-down"))
	}
	p.AtDesired = atDesiredBasic(in)
}

// statusPass predicts the status the pass writes: the step index, abort and
// promotion.
func statusPass(in Inputs, p *Pass, weights *v1alpha1.TrafficWeights) {
	win := RollbackWindow(in)
	n := in.stepCount()
	idx := in.index()
	abort := in.Abort
	p.NextIndex = idx
	if in.PromoteFull || win.WithinWindow {
		// The progress deadline's abort comes back in the same pass while
		// the update stays timed out: until a pass scales the aborted
		// canary (its abort scale-down is progress).
		again := abort && win.WithinWindow && in.DeadlineAborted && in.New != nil && p.CanaryTarget == in.New.Spec
		if abort && !again {
			p.AbortCleared = true
		}
		abort = false
		if n > 0 {
			idx = n
			p.NextIndex = n
			switch {
			case again:
				p.IndexWhy = fmt.Sprintf("rollback within rollbackWindow: the index is set to the end of the steps (%d) and the abort cleared, but the update is still past its progress deadline and this pass makes no progress, so progressDeadlineAbort aborts it again in the same pass — until %s's abort scale-down, which is progress", n, in.New.Name)
				p.IndexCites = in.cites("rc.every-pass-window", "rc.every-pass-remove-abort", "rc.every-pass-idx", "sy.deadline-abort-again", "co.updated-change-is-progress")
			case win.WithinWindow:
				p.IndexWhy = fmt.Sprintf("rollback within rollbackWindow: the index is set to the end of the steps (%d) and abort is cleared, on every pass", n)
				p.IndexCites = in.cites("rc.every-pass-window", "rc.every-pass-remove-abort", "rc.every-pass-idx")
			default:
				p.IndexWhy = fmt.Sprintf("promote --full: the index is set to the end of the steps (%d)", n)
				p.IndexCites = in.cites("rc.every-pass-window", "rc.every-pass-idx")
			}
		}
	}
	if why := shouldFullPromote(in, abort, win); why != "" {
		p.Promotes, p.PromoteWhy = true, why
		return
	}
	if abort {
		if n > 0 {
			if in.StableHash == in.CurrentPodHash {
				p.NextIndex = n
			} else {
				p.NextIndex = 0
			}
			p.IndexWhy = fmt.Sprintf("aborted: the controller holds the index at %d", p.NextIndex)
			p.IndexCites = in.cites("rc.abort-idx-stable", "rc.abort-idx")
		}
		return
	}
	if in.Paused && idx < n {
		p.IndexWhy = fmt.Sprintf("spec.paused is set: step %d (%s) does not complete until it is cleared", idx, stepString(in.Steps[idx]))
		p.IndexCites = in.cites("rc.spec-paused-no-step")
		return
	}
	if idx < n && stepCompletes(in, weights) {
		p.NextIndex = idx + 1
		p.IndexWhy = fmt.Sprintf("step %d (%s) is complete: the index moves to %d", idx, stepString(in.Steps[idx]), idx+1)
		p.IndexCites = in.cites("rc.step-completed")
	}
}

func rsSpec(r *RS) int32 {
	if r == nil {
		return 0
	}
	return r.Spec
}

func currentWeight(in Inputs) int32 {
	if in.Weights == nil {
		return 0
	}
	return in.Weights.Canary.Weight
}

func nextWeights(in Inputs, w int32) *v1alpha1.TrafficWeights {
	if !in.TrafficRouted {
		return nil
	}
	out := &v1alpha1.TrafficWeights{}
	if in.Weights != nil {
		*out = *in.Weights
	}
	out.Canary.Weight = w
	out.Stable.Weight = in.MaxWeight - w
	if back, prev := in.dynamicRollbackToStable(); back {
		// Rolling back to the stable with dynamicStableScale, the
		// controller keeps the previous canary as the canary destination
		// until the stable is fully available.
		out.Canary.PodTemplateHash = prev
	} else if in.New != nil {
		out.Canary.PodTemplateHash = in.New.Hash
	}
	if in.Stable != nil {
		out.Stable.PodTemplateHash = in.Stable.Hash
	}
	return out
}

// stepCompletes reports whether the current step completes on this pass as
// far as the objects tell: setWeight and setCanaryScale when the canary is at
// its desired count; route steps at once. Pauses, analysis and experiments
// depend on time and other objects and are reported separately.
func stepCompletes(in Inputs, weights *v1alpha1.TrafficWeights) bool {
	if in.Paused {
		return false // completedCurrentCanaryStep: no step completes under spec.paused
	}
	s := in.Steps[in.index()]
	switch {
	case s.SetWeight != nil || s.SetCanaryScale != nil:
		return AtDesired(in, weights)
	case s.SetHeaderRoute != nil || s.SetMirrorRoute != nil:
		return true
	}
	return false
}

func shouldFullPromote(in Inputs, aborted bool, win Window) string {
	if in.Stable == nil {
		return "Initial deploy"
	}
	if aborted || in.New == nil {
		return ""
	}
	if PromotesAboveReplicas(in) { // v1.9+: fewer than desired and threshold not met
		if in.New.Available < in.Replicas && !rptMet(in, in.New, in.Replicas) {
			return ""
		}
	} else if in.New.Available != in.Replicas {
		return ""
	}
	if in.fullyPromoted() {
		return ""
	}
	if in.PromoteFull {
		return "Full promotion requested"
	}
	if win.WithinWindow {
		return "Rollback within window"
	}
	n := in.stepCount()
	if n == 0 || in.index() == n {
		return fmt.Sprintf("Completed all %d canary steps", n)
	}
	return ""
}

// resetPass is the first pass after a template or steps change: status is
// reset and persisted, nothing else runs.
func resetPass(in Inputs, p Pass) Pass {
	p.Reset = true
	p.Weight = currentWeight(in)
	p.Decision = Decision{Weight: p.Weight, Branch: BranchReset, Why: "the controller has not reconciled the current template/steps yet: its next pass only resets the status"}
	n := in.stepCount()
	p.NextIndex = 0
	p.AbortCleared = in.Abort
	p.CanaryTarget, p.StableTarget = rsSpec(in.New), rsSpec(in.Stable)
	if in.New != nil && n > 0 {
		if in.New.Hash != "" && in.New.Hash == in.StableHash {
			p.NextIndex = n
			p.IndexWhy = "rollback to the stable ReplicaSet: steps are skipped"
			p.IndexCites = in.cites("rc.rollback-to-stable-skip")
		} else if win := RollbackWindow(in); win.WithinWindow && in.New.Spec > 0 {
			p.NextIndex = n
			p.IndexWhy = "rollback within rollbackWindow to a ReplicaSet that still has replicas: steps are skipped at once"
			p.IndexCites = in.cites("rc.reset-path-window")
		} else if win.WithinWindow {
			p.IndexWhy = "rollback within rollbackWindow to a ReplicaSet scaled to 0: the reset pass starts at index 0, and the next pass jumps to the end"
			p.IndexCites = in.cites("rc.reset-path-window", "rc.every-pass-window")
		}
	}
	return p
}

// Apply returns the inputs as they stand after a pass: status written, and
// ReplicaSet specs scaled (availability is the world's business: callers
// that simulate time change Available themselves).
func Apply(in Inputs, p Pass) Inputs {
	out := in.clone()
	// A pass that writes an abort, a full promotion, a rollback within the
	// window or a reset writes no pause conditions: the halt ends.
	if p.Reset || in.Abort || in.PromoteFull || RollbackWindow(in).WithinWindow {
		out.Inconclusive = false
	}
	if p.Reset {
		out.Unobserved = false
		i := p.NextIndex
		out.Index = &i
		out.Abort = false
		out.PromoteFull = false
		if out.New != nil {
			out.CurrentPodHash = out.New.Hash
		}
		return out
	}
	if p.CanaryServiceHash != "" {
		// The Services are reconciled before anything that can fail.
		out.CanaryServiceHash = p.CanaryServiceHash
	}
	if p.ReplicasOnly {
		// Only the stable may be scaled (AbortMeetsScale), and the aborted
		// canary at its deadline (endAbortDelay): scaling a ReplicaSet
		// writes its desired-replicas annotation too.
		if out.Stable != nil && out.New != nil && out.Stable.Name != out.New.Name {
			out.Stable.Spec = p.StableTarget
			if out.New.Spec != p.CanaryTarget {
				d := in.Replicas
				out.New.Spec, out.New.Desired = p.CanaryTarget, &d
			}
		}
		return out
	}
	if p.Errored {
		return out
	}
	if out.TrafficRouted && (p.Applied || p.EarlyWeight) {
		out.Weights = nextWeights(in, p.Weight)
		out.RouterWeight = nil // written: the router has what the status says
	}
	if out.New != nil {
		out.New.Spec = p.CanaryTarget
	}
	if out.Stable != nil && out.New != nil && out.Stable.Name != out.New.Name {
		out.Stable.Spec = p.StableTarget
	}
	for _, r := range out.All {
		if n, ok := p.OtherTargets[r.Name]; ok {
			r.Spec = n
		}
	}
	i := p.NextIndex
	if len(out.Steps) > 0 {
		out.Index = &i
	}
	if p.AbortCleared {
		out.Abort = false
		out.DeadlineAborted = false
	}
	if p.Promotes && out.New != nil {
		out.StableHash = out.New.Hash
		out.Stable = out.New
		out.PromoteFull = false
	}
	return out
}

func stepString(s v1alpha1.CanaryStep) string {
	switch {
	case s.SetWeight != nil:
		return fmt.Sprintf("setWeight %d", *s.SetWeight)
	case s.Pause != nil:
		if s.Pause.Duration != nil {
			return "pause " + s.Pause.Duration.String()
		}
		return "pause (until promoted)"
	case s.SetCanaryScale != nil:
		switch {
		case s.SetCanaryScale.Replicas != nil:
			return fmt.Sprintf("setCanaryScale replicas %d", *s.SetCanaryScale.Replicas)
		case s.SetCanaryScale.Weight != nil:
			return fmt.Sprintf("setCanaryScale weight %d", *s.SetCanaryScale.Weight)
		}
		return "setCanaryScale matchTrafficWeight"
	case s.Analysis != nil:
		return "analysis"
	case s.Experiment != nil:
		return "experiment"
	case s.SetHeaderRoute != nil:
		return "setHeaderRoute"
	case s.SetMirrorRoute != nil:
		return "setMirrorRoute"
	case s.Plugin != nil:
		return "plugin " + s.Plugin.Name
	}
	return "step"
}

// StepString describes a canary step in one short phrase.
func StepString(s v1alpha1.CanaryStep) string { return stepString(s) }
