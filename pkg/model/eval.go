package model

import (
	"fmt"
	"math"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// Branch identifies which branch of the controller's traffic code decided the
// weight. The values are stable: JSON consumers and tests match on them.
type Branch string

// Branches of reconcileTrafficRouting, in the order the controller tries them.
const (
	BranchRollbackToStable  Branch = "dynamic-rollback-to-stable"
	BranchFullyPromoted     Branch = "fully-promoted"
	BranchAborted           Branch = "aborted"
	BranchCanaryUnavailable Branch = "canary-unavailable"
	BranchPromoteFull       Branch = "promote-full"
	BranchReverseLoop       Branch = "not-at-desired-reverse-loop"
	BranchCurrentStep       Branch = "at-desired-current-step"
	BranchEndOfSteps        Branch = "at-desired-end-of-steps"
	BranchNoSteps           Branch = "no-steps"
	BranchNotTrafficRouted  Branch = "no-traffic-routing"
	// BranchReset is not the traffic code's: the pass after a template or
	// steps change only resets the status (resetPass).
	BranchReset Branch = "reset"
)

// Decision is the weight the controller's traffic code computes on a pass.
type Decision struct {
	Weight int32           `json:"weight"`
	Branch Branch          `json:"branch"`
	Why    string          `json:"why"`
	Cites  []upstream.Cite `json:"cites"`
}

// GateEffect is what a holding gate does to the pass.
type GateEffect string

// Gate effects.
const (
	// EffectWeightSkipped: the new weight is not written, the rest of the
	// reconcile (scaling, status) goes on.
	EffectWeightSkipped GateEffect = "weight-skipped"
	// EffectReconcileError: the reconcile returns an error before writing the
	// weight; nothing after it (scaling, status) runs on that pass.
	EffectReconcileError GateEffect = "reconcile-error"
	// EffectDestinationRuleSkipped: only the DestinationRule update is skipped;
	// the weight is still written.
	EffectDestinationRuleSkipped GateEffect = "destinationrule-skipped"
)

// Gate is a check that can stop the computed weight from being applied.
type Gate struct {
	Name   string          `json:"name"`
	Holds  bool            `json:"holds"`
	Effect GateEffect      `json:"effect,omitempty"`
	Why    string          `json:"why"`
	Cites  []upstream.Cite `json:"cites"`
	// Idle is set on a gate that holds while the weight is already the one
	// decided: the pass skips the router, but no weight is kept from it.
	Idle bool `json:"idle,omitempty"`
}

// Gate names.
const (
	GateStableAvailability = "stable-availability"
	GateIstioSubsetOnly    = "istio-subset-only-availability"
)

// Pass is the prediction for one reconcile of the Rollout.
type Pass struct {
	// Index is the step index the traffic code reads (the persisted one).
	Index    int32    `json:"stepIndex"`
	Reset    bool     `json:"resetPass,omitempty"` // the controller has not seen the spec yet: this pass only resets status
	Decision Decision `json:"decision"`
	Gates    []Gate   `json:"gates,omitempty"`
	// Applied is true when the decided weight is written on this pass.
	Applied bool `json:"applied"`
	// EarlyWeight is set when v1.9+ writes the weight before its gates (the
	// canary has no available pod and the previous canary weight was > 0).
	EarlyWeight bool `json:"earlyWeight,omitempty"`
	// Weight is the canary weight after the pass, as the status records it.
	Weight int32 `json:"weight"`
	// Traffic is the canary weight the router applies after the pass: Weight
	// when the pass writes it, else what the router had (which differs from
	// the status when someone else changed the router, or a write failed).
	Traffic int32 `json:"traffic"`
	// Errored: the pass returns an error before scaling and status updates.
	Errored bool `json:"errored,omitempty"`
	// ReplicasOnly: a scaling event (spec.replicas changed) that lasts:
	// the pass only syncs replicas — which a halt skips, so nothing moves
	// (ScaledWhileHalted), or which scales the stable while an aborted
	// canary waits for its deadline (AbortMeetsScale). No weight is written.
	ReplicasOnly bool `json:"replicasOnly,omitempty"`
	// CanaryTarget and StableTarget are the replica counts the pass scales
	// the canary and stable ReplicaSets to (absent when the pass errors).
	CanaryTarget int32 `json:"canaryTarget"`
	StableTarget int32 `json:"stableTarget"`
	// OtherTargets are the other ReplicaSets the pass scales down, by name
	// (without trafficRouting, whose pods take requests too).
	OtherTargets map[string]int32 `json:"otherTargets,omitempty"`
	// CanaryServiceHash is the pod-template-hash the canary Service selects
	// after the pass ("" when no canary Service is managed).
	CanaryServiceHash string `json:"canaryServiceHash,omitempty"`
	// NextIndex is the step index persisted at the end of the pass.
	NextIndex    int32           `json:"nextStepIndex"`
	IndexWhy     string          `json:"indexWhy,omitempty"`
	IndexCites   []upstream.Cite `json:"indexCites,omitempty"`
	AbortCleared bool            `json:"abortCleared,omitempty"`
	// Promotes is set when the pass marks the canary ReplicaSet stable.
	Promotes   bool            `json:"promotes,omitempty"`
	PromoteWhy string          `json:"promoteWhy,omitempty"`
	AtDesired  bool            `json:"canaryAtDesired"`
	Cites      []upstream.Cite `json:"cites,omitempty"`
}

// Window is the result of the rollbackWindow test.
type Window struct {
	IsRollback   bool            `json:"isRollback"` // canary RS created before the stable RS
	WithinWindow bool            `json:"withinWindow"`
	Revisions    int32           `json:"revisions"` // spec.rollbackWindow.revisions
	Between      int32           `json:"between"`   // RSs created strictly between the two
	Why          string          `json:"why"`
	Cites        []upstream.Cite `json:"cites"`
}

// RollbackWindow evaluates isRollbackWithinWindow: the canary ReplicaSet was
// created strictly before the stable one and fewer than `revisions`
// non-experiment ReplicaSets were created strictly between them. Revision
// numbers play no part.
func RollbackWindow(in Inputs) Window {
	w := Window{Revisions: in.WindowRevision, Cites: in.cites("sy.within-window-def", "sy.within-window-created-before", "sy.within-window-count", "sy.within-window-compare")}
	if in.New == nil || in.Stable == nil {
		w.Why = "no rollback: there is no distinct canary and stable ReplicaSet"
		return w
	}
	if !in.New.Created.Before(in.Stable.Created) {
		w.Why = fmt.Sprintf("not a rollback: canary %s was created after stable %s", in.New.Name, in.Stable.Name)
		return w
	}
	w.IsRollback = true
	for _, rs := range in.All {
		if rs.Experiment {
			continue
		}
		if rs.Created.Before(in.Stable.Created) && in.New.Created.Before(rs.Created) {
			w.Between++
		}
	}
	if in.WindowRevision <= 0 {
		w.Why = fmt.Sprintf("a rollback (canary %s was created before stable %s), but spec.rollbackWindow is not set", in.New.Name, in.Stable.Name)
		return w
	}
	w.WithinWindow = w.Between < in.WindowRevision
	rel := "<"
	if !w.WithinWindow {
		rel = "≥"
	}
	w.Why = fmt.Sprintf("canary %s (created %s) is older than stable %s (created %s); %d ReplicaSet(s) created between them %s rollbackWindow.revisions %d",
		in.New.Name, in.New.Created.UTC().Format("2006-01-02T15:04:05Z"), in.Stable.Name, in.Stable.Created.UTC().Format("2006-01-02T15:04:05Z"), w.Between, rel, in.WindowRevision)
	return w
}

// minPods mirrors CheckMinPodsPerReplicaSet: 0 stays 0; otherwise at least
// minPodsPerReplicaSet, which v1.10 caps at spec.replicas.
func minPods(in Inputs, count int32) int32 {
	if count == 0 || in.MinPods == nil || !in.TrafficRouted {
		return count
	}
	m := *in.MinPods
	if in.present("uc.min-cap-replicas") && m > in.Replicas {
		m = in.Replicas
	}
	if count < m {
		return m
	}
	return count
}

// EffectiveMinPods is minPodsPerReplicaSet as the modeled version applies it.
func EffectiveMinPods(in Inputs) int32 {
	if in.MinPods == nil || !in.TrafficRouted {
		return 0
	}
	return minPods(in, 1)
}

// NeverHealthy reports minPodsPerReplicaSet above replicas on a controller
// that does not cap it (before v1.10): the canary is sized above replicas, so
// updatedReplicas never equals replicas and the Healthy condition never
// becomes True.
func NeverHealthy(in Inputs) bool {
	return in.TrafficRouted && in.MinPods != nil && in.Replicas > 0 && *in.MinPods > in.Replicas && EffectiveMinPods(in) > in.Replicas
}

// PromotesAboveReplicas reports whether the modeled version promotes a
// canary with more available pods than replicas: from v1.9 the promotion
// gate asks for at least replicas available (or replicaProgressThreshold,
// which arrived with it); before, for exactly replicas.
func PromotesAboveReplicas(in Inputs) bool { return in.present("uc.rpt-pods") }

// WeightToReplicas is ceil(weight × replicas / maxWeight), the controller's
// conversion of a traffic weight into a pod count.
func WeightToReplicas(replicas, weight, maxWeight int32) int32 {
	if maxWeight <= 0 {
		return 0
	}
	return int32(math.Ceil(float64(weight) * float64(replicas) / float64(maxWeight)))
}

func (in Inputs) abortDelay() (set bool, delay *int32) {
	if !in.TrafficRouted {
		zero := int32(0)
		return false, &zero
	}
	if in.AbortDelay == nil {
		d := int32(30)
		return false, &d
	}
	if *in.AbortDelay == 0 {
		return true, nil
	}
	d := *in.AbortDelay
	return true, &d
}

// setCanaryScale mirrors UseSetCanaryScale.
func setCanaryScale(in Inputs) *v1alpha1.SetCanaryScale {
	if !in.TrafficRouted {
		return nil
	}
	if in.Abort {
		if _, d := in.abortDelay(); d != nil {
			return nil
		}
	}
	idx := in.index()
	if len(in.Steps) == 0 || idx >= in.stepCount() {
		return nil
	}
	for i := idx; i >= 0; i-- {
		s := in.Steps[i].SetCanaryScale
		if s == nil {
			continue
		}
		if s.MatchTrafficWeight {
			return nil
		}
		return s
	}
	return nil
}

// CurrentSetWeight is the weight the steps set now: GetCurrentSetWeight.
func CurrentSetWeight(in Inputs) int32 { return currentSetWeight(in) }

// currentSetWeight mirrors GetCurrentSetWeight.
func currentSetWeight(in Inputs) int32 {
	if in.Abort {
		return 0
	}
	idx := in.index()
	if len(in.Steps) == 0 || idx >= in.stepCount() {
		return in.MaxWeight
	}
	for i := idx; i >= 0; i-- {
		if w := in.Steps[i].SetWeight; w != nil {
			return *w
		}
	}
	return 0
}

// desiredCanaryWeight mirrors GetDesiredCanaryWeight (v1.9+): on abort with
// dynamicStableScale the canary steps down the setWeight ladder in reverse.
func desiredCanaryWeight(in Inputs) int32 {
	if in.present("uc.desired-canary-weight-abort-dss") && in.Abort && in.DSS && in.New != nil && in.Stable != nil {
		expected := in.Replicas - in.Stable.Available
		canary := expected
		if in.New.Available > canary {
			canary = in.New.Available
		}
		for i := len(in.Steps) - 1; i >= 0; i-- {
			if w := in.Steps[i].SetWeight; w != nil {
				if WeightToReplicas(in.Replicas, *w, in.MaxWeight) < canary {
					return *w
				}
			}
		}
		return 0
	}
	return currentSetWeight(in)
}

// sizingWeight mirrors GetCanaryReplicasOrWeight: an explicit canary replica
// count from setCanaryScale, or the weight the ReplicaSets are sized for.
func sizingWeight(in Inputs) (*int32, int32) {
	if in.PromoteFull || in.StableHash == "" || in.CurrentPodHash == in.StableHash {
		return nil, in.MaxWeight
	}
	if s := setCanaryScale(in); s != nil {
		if s.Replicas != nil {
			r := *s.Replicas
			return &r, 0
		}
		if s.Weight != nil {
			return nil, *s.Weight
		}
	}
	return nil, desiredCanaryWeight(in)
}

// DesiredCounts mirrors CalculateReplicaCountsForTrafficRoutedCanary, and
// without trafficRouting CalculateReplicaCountsForBasicCanary.
func DesiredCounts(in Inputs, weights *v1alpha1.TrafficWeights) (canary, stable int32) {
	if !in.TrafficRouted {
		return BasicCounts(in)
	}
	scs, w := sizingWeight(in)
	if scs != nil {
		canary = *scs
	} else {
		canary = minPods(in, WeightToReplicas(in.Replicas, w, in.MaxWeight))
	}
	if !in.DSS {
		return canary, in.Replicas
	}
	stable = WeightToReplicas(in.Replicas, in.MaxWeight-w, in.MaxWeight)
	if weights != nil {
		if s := WeightToReplicas(in.Replicas, weights.Stable.Weight, in.MaxWeight); s > stable {
			stable = s
		}
		if in.Abort {
			if c := WeightToReplicas(in.Replicas, weights.Canary.Weight, in.MaxWeight); c > canary {
				canary = c
			}
		}
	}
	return minPods(in, canary), minPods(in, stable)
}

func rptMet(in Inputs, rs *RS, desired int32) bool {
	if rs == nil {
		return false
	}
	t := in.RPT
	if !in.present("uc.rpt-pods") || t == nil || t.Value < 0 {
		return desired == rs.Spec && desired == rs.Available
	}
	if t.Type == v1alpha1.ProgressTypePercentage {
		if desired == 0 {
			return true
		}
		return float64(rs.Available)/float64(desired)*100 >= float64(t.Value)-1e-10
	}
	return rs.Available >= t.Value
}

// AtDesired mirrors AtDesiredReplicaCountsForCanary: a traffic-routed
// canary's sizes for weights, or without trafficRouting atDesiredBasic.
func AtDesired(in Inputs, weights *v1alpha1.TrafficWeights) bool {
	if !in.TrafficRouted {
		return atDesiredBasic(in)
	}
	c, s := DesiredCounts(in, weights)
	if !rptMet(in, in.New, c) {
		return false
	}
	if !in.DSS {
		if in.Stable == nil || in.Stable.Spec != s || in.Stable.Replicas != s {
			return false
		}
	}
	return true
}

// abortWeight mirrors calculateDesiredWeightOnAbortOrStableRollback.
// AbortWeight is the canary weight an aborted pass (or a rollback to the
// stable with dynamicStableScale) writes from in.
func AbortWeight(in Inputs) int32 { return abortWeight(in) }

func abortWeight(in Inputs) int32 {
	if !in.DSS {
		return 0
	}
	maxW := in.MaxWeight
	if in.present("uc.desired-canary-weight-abort-dss") { // v1.9+ rewrite
		if in.Stable == nil || in.New == nil || in.Replicas == 0 {
			return 0
		}
		desired := desiredCanaryWeight(in)
		expected := max32(0, maxW-(maxW*in.Stable.Available)/in.Replicas)
		if in.Weights == nil {
			return max32(expected, desired)
		}
		cur := in.Weights.Canary.Weight
		if desired <= 0 {
			return min32(expected, cur)
		}
		if (maxW*in.Stable.Available)/in.Replicas < maxW-desired {
			return cur
		}
		return min32(desired, cur)
	}
	if in.Stable == nil || in.Replicas == 0 {
		return 0
	}
	w := max32(0, maxW-(maxW*in.Stable.Available)/in.Replicas)
	if in.Weights != nil {
		w = min32(w, in.Weights.Canary.Weight)
	}
	return w
}

func max32(a, b int32) int32 {
	if a > b {
		return a
	}
	return b
}

func min32(a, b int32) int32 {
	if a < b {
		return a
	}
	return b
}

func (in Inputs) dynamicRollbackToStable() (bool, string) {
	if !in.present("tr.branch-rollback-to-stable") || !in.fullyPromoted() || !in.TrafficRouted || !in.DSS || in.Weights == nil || in.New == nil {
		return false, ""
	}
	prev := in.Weights.Canary.PodTemplateHash
	if prev == in.New.Hash || in.New.Available >= in.Replicas {
		return false, ""
	}
	return true, prev
}

// DecideWeight mirrors the branch order of reconcileTrafficRouting.
func DecideWeight(in Inputs) Decision {
	if !in.TrafficRouted {
		return Decision{Branch: BranchNotTrafficRouted, Why: "no trafficRouting: traffic follows pod counts, not a weight"}
	}
	if ok, _ := in.dynamicRollbackToStable(); ok {
		return Decision{Weight: abortWeight(in), Branch: BranchRollbackToStable,
			Why:   "rolling back to the stable ReplicaSet with dynamicStableScale: weight follows stable availability",
			Cites: in.cites("tr.branch-rollback-to-stable", "tr.abort-weight-formula")}
	}
	if in.fullyPromoted() {
		return Decision{Weight: 0, Branch: BranchFullyPromoted, Why: "fully promoted (stable = current): all traffic on stable, canary weight 0",
			Cites: in.cites("tr.branch-fully-promoted")}
	}
	if in.Abort {
		w := abortWeight(in)
		why := "aborted: all traffic back to stable (weight 0) since dynamicStableScale is off"
		cites := in.cites("tr.branch-aborted", "tr.abort-weight-no-dss")
		if in.DSS {
			why = fmt.Sprintf("aborted with dynamicStableScale: canary keeps %d%% until stable is available enough", w)
			cites = in.cites("tr.branch-aborted", "tr.abort-weight-formula", "tr.abort-weight-clamp")
		}
		return Decision{Weight: w, Branch: BranchAborted, Why: why, Cites: cites}
	}
	if in.New == nil || in.New.Available == 0 {
		return Decision{Weight: 0, Branch: BranchCanaryUnavailable, Why: "the canary ReplicaSet has no available pod: weight 0",
			Cites: in.cites("tr.branch-canary-unavailable")}
	}
	if in.PromoteFull {
		if in.DSS {
			w := (in.MaxWeight * in.New.Available) / in.Replicas
			return Decision{Weight: w, Branch: BranchPromoteFull,
				Why:   fmt.Sprintf("promote --full with dynamicStableScale: weight capped by canary availability %d/%d", in.New.Available, in.Replicas),
				Cites: in.cites("tr.branch-promote-full", "tr.promote-full-dss-cap")}
		}
		var w int32
		if in.Weights != nil {
			w = in.Weights.Canary.Weight
		}
		return Decision{Weight: w, Branch: BranchPromoteFull, Why: "promote --full: the weight stays where it was until the canary is fully available, then promotion moves everything",
			Cites: in.cites("tr.branch-promote-full", "tr.promote-full-keep-weight")}
	}
	if len(in.Steps) == 0 {
		return Decision{Weight: 0, Branch: BranchNoSteps, Why: "no steps: weight stays 0 until the canary is fully available and promoted"}
	}
	idx := in.index()
	at := AtDesired(in, nil)
	if !at {
		var w int32
		from := "none"
		// A status index beyond the steps (steps shortened, not yet reset by
		// the controller) must not index out of range: walk from the end.
		start := idx - 1
		if start >= in.stepCount() {
			start = in.stepCount() - 1
		}
		for i := start; i >= 0; i-- {
			if s := in.Steps[i].SetWeight; s != nil {
				w = *s
				from = fmt.Sprintf("steps[%d]", i)
				break
			}
		}
		c, _ := DesiredCounts(in, nil)
		return Decision{Weight: w, Branch: BranchReverseLoop,
			Why: fmt.Sprintf("canary %d/%d available is not at its desired count %d for step index %d: the controller walks back from index %d to the last setWeight (%s) = %d%%",
				in.New.Available, in.New.Spec, c, idx, idx-1, from, w),
			Cites: in.cites("tr.at-desired", "tr.reverse-loop", "uc.canary-count")}
	}
	if idx != in.stepCount() {
		w := currentSetWeight(in)
		return Decision{Weight: w, Branch: BranchCurrentStep,
			Why:   fmt.Sprintf("canary at its desired count: weight of the current step's setWeight (index %d) = %d%%", idx, w),
			Cites: in.cites("tr.at-desired", "tr.current-set-weight")}
	}
	return Decision{Weight: in.MaxWeight, Branch: BranchEndOfSteps,
		Why:   fmt.Sprintf("canary at its desired count with the index at the end of the steps (%d/%d): maximum weight %d", idx, in.stepCount(), in.MaxWeight),
		Cites: in.cites("tr.at-desired", "tr.max-weight-at-end")}
}

// isAvailable mirrors IsReplicaSetAvailable.
func isAvailable(rs *RS) bool { return rs.Spec != 0 && rs.Available != 0 && rs.Spec <= rs.Available }

// subsetOnlyGate models the Istio DestinationRule gate in UpdateHash, which
// differs between v1.7.2 (none), v1.8.2 (any ReplicaSet, error), v1.8.3
// (stable/canary, silent skip of the DR only) and v1.9+ (stable/canary, error,
// canary exempt when aborted).
func subsetOnlyGate(in Inputs, canaryHash, stableHash string) Gate {
	g := Gate{Name: GateIstioSubsetOnly}
	if !in.SubsetOnly || in.HasServices {
		return g
	}
	if !in.present("is.subset-only-gate") {
		g.Why = string(in.Version) + " has no DestinationRule availability gate"
		g.Cites = in.cites("is.subset-only-gate")
		return g
	}
	g.Cites = in.cites("is.subset-only-condition", "is.subset-only-gate")
	anyRS := !in.present("is.abort-exempt") && in.present("is.subset-only-error") // v1.8.2 checks every ReplicaSet
	exemptCanary := in.present("is.abort-exempt") && (in.Abort || func() bool { ok, _ := in.dynamicRollbackToStable(); return ok }())
	for _, rs := range in.All {
		if rs.Spec == 0 {
			continue
		}
		if !anyRS && (rs.Hash == "" || (rs.Hash != stableHash && rs.Hash != canaryHash)) {
			continue
		}
		if exemptCanary && rs.Hash == canaryHash {
			continue
		}
		if isAvailable(rs) {
			continue
		}
		g.Holds = true
		if in.present("is.subset-only-error") {
			g.Effect = EffectReconcileError
			g.Why = fmt.Sprintf("Istio subset-only mode: ReplicaSet %s is %d/%d available, so UpdateHash errors (\"delaying destination rule switch\") before the weight is written; the pass ends there", rs.Name, rs.Available, rs.Spec)
			g.Cites = append(g.Cites, in.cite("is.subset-only-error"))
		} else {
			g.Effect = EffectDestinationRuleSkipped
			g.Why = fmt.Sprintf("Istio subset-only mode: ReplicaSet %s is %d/%d available, so the DestinationRule subsets are not updated, but the weight is still written", rs.Name, rs.Available, rs.Spec)
		}
		return g
	}
	g.Why = "every ReplicaSet the DestinationRule gate checks is fully available"
	return g
}

// stableGate mirrors checkReplicasAvailable(stableRS, maxWeight-weight).
func stableGate(in Inputs, weight int32) Gate {
	g := Gate{Name: GateStableAvailability}
	if !in.present("tr.stable-check-call") {
		g.Why = "this version does not check stable availability before changing the weight"
		g.Cites = in.cites("tr.stable-check-call")
		return g
	}
	g.Cites = in.cites("tr.stable-check-call", "tr.stable-check-def")
	if in.Stable == nil {
		g.Holds, g.Effect = true, EffectWeightSkipped
		g.Why = "there is no stable ReplicaSet, so the stable availability check fails and the weight is not changed"
		return g
	}
	need := ((in.MaxWeight - weight) * in.Replicas) / in.MaxWeight
	if in.Stable.Available < need && !rptMet(in, in.Stable, need) {
		g.Holds, g.Effect = true, EffectWeightSkipped
		g.Why = fmt.Sprintf("stable %s has %d available, fewer than the %d that %d%% of traffic needs: the weight change is skipped silently", in.Stable.Name, in.Stable.Available, need, in.MaxWeight-weight)
		if currentWeight(in) == weight && in.Traffic() == weight {
			g.Idle = true
			g.Why = fmt.Sprintf("stable %s has %d available, fewer than the %d that %d%% of traffic needs, so each pass skips the traffic router: the weight is already %d, so nothing is held back now, but a router object that drifts is not put back until the stable has %d available", in.Stable.Name, in.Stable.Available, need, in.MaxWeight-weight, weight, need)
		}
		return g
	}
	g.Why = fmt.Sprintf("stable %s has %d available, enough for %d%% of traffic (needs %d); the canary side is never checked", in.Stable.Name, in.Stable.Available, in.MaxWeight-weight, need)
	return g
}
