// Code in this file is data: the citation table checked by cite_test.go.
// Claims are our own words; Contains is only the short substring that pins
// each cited line.

package upstream

// Source files cited, relative to the argo-rollouts module root.
const (
	srcTR      = `rollout/trafficrouting.go`
	srcSY      = `rollout/sync.go`
	srcRC      = `rollout/canary.go`
	srcUC      = `utils/replicaset/canary.go`
	srcUR      = `utils/replicaset/replicaset.go`
	srcCO      = `utils/conditions/conditions.go`
	srcVA      = `pkg/apis/rollouts/validation/validation.go`
	srcRS      = `rollout/replicaset.go`
	srcDF      = `utils/defaults/defaults.go`
	srcIS      = `rollout/trafficrouting/istio/istio.go`
	srcSV      = `rollout/service.go`
	srcCT      = `rollout/controller.go`
	srcAN      = `rollout/analysis.go`
	srcAbort   = `pkg/kubectl-argo-rollouts/cmd/abort/abort.go`
	srcRetry   = `pkg/kubectl-argo-rollouts/cmd/retry/retry.go`
	srcPromote = `pkg/kubectl-argo-rollouts/cmd/promote/promote.go`
	srcUndo    = `pkg/kubectl-argo-rollouts/cmd/undo/undo.go`
)

var facts = []Fact{
	{
		Key:   "tr.branch-rollback-to-stable",
		Claim: `When the rollout is dynamically rolling back to the stable ReplicaSet, the abort/rollback weight calculation is used and the previous canary hash is kept as the canary destination.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcTR, 168, `if dynamicallyRollingBackToStable, prevDesiredHash :=`},
			"v1.8.2":  {srcTR, 187, `if dynamicallyRollingBackToStable, prevDesiredHash :=`},
			"v1.8.3":  {srcTR, 187, `if dynamicallyRollingBackToStable, prevDesiredHash :=`},
			"v1.9.3":  {srcTR, 192, `if dynamicallyRollingBackToStable, prevDesiredHash :=`},
			"v1.10.2": {srcTR, 192, `if dynamicallyRollingBackToStable, prevDesiredHash :=`},
		},
	},
	{
		Key:   "tr.branch-fully-promoted",
		Claim: `When the rollout is fully promoted, the desired canary weight stays 0 and managed routes are removed.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcTR, 175, `} else if rolloututil.IsFullyPromoted(c.rollout) {`},
			"v1.8.2":  {srcTR, 194, `} else if rolloututil.IsFullyPromoted(c.rollout) {`},
			"v1.8.3":  {srcTR, 194, `} else if rolloututil.IsFullyPromoted(c.rollout) {`},
			"v1.9.3":  {srcTR, 199, `} else if rolloututil.IsFullyPromoted(c.rollout) {`},
			"v1.10.2": {srcTR, 199, `} else if rolloututil.IsFullyPromoted(c.rollout) {`},
		},
	},
	{
		Key:   "tr.branch-aborted",
		Claim: `When the rollout is aborted, the desired canary weight comes from the abort weight calculation (0 without dynamicStableScale).`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcTR, 180, `} else if c.pauseContext.IsAborted() {`},
			"v1.8.2":  {srcTR, 199, `} else if c.pauseContext.IsAborted() {`},
			"v1.8.3":  {srcTR, 199, `} else if c.pauseContext.IsAborted() {`},
			"v1.9.3":  {srcTR, 204, `} else if c.pauseContext.IsAborted() {`},
			"v1.10.2": {srcTR, 204, `} else if c.pauseContext.IsAborted() {`},
		},
	},
	{
		Key:   "tr.abort-canary-svc-to-stable",
		Claim: `On abort the canary Service selector is pointed back at the stable ReplicaSet without an availability check.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcTR, 188, `ensureSVCTargets(c.rollout.Spec.Strategy.Canary.CanaryService, c.stableRS, false)`},
			"v1.8.2":  {srcTR, 207, `ensureSVCTargets(c.rollout.Spec.Strategy.Canary.CanaryService, c.stableRS, false)`},
			"v1.8.3":  {srcTR, 207, `ensureSVCTargets(c.rollout.Spec.Strategy.Canary.CanaryService, c.stableRS, false)`},
			"v1.9.3":  {srcTR, 212, `ensureSVCTargets(c.rollout.Spec.Strategy.Canary.CanaryService, c.stableRS, false)`},
			"v1.10.2": {srcTR, 212, `ensureSVCTargets(c.rollout.Spec.Strategy.Canary.CanaryService, c.stableRS, false)`},
		},
	},
	{
		Key:   "tr.branch-canary-unavailable",
		Claim: `When the new ReplicaSet is missing or has no available pods, the desired canary weight stays 0.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcTR, 198, `} else if c.newRS == nil || c.newRS.Status.AvailableReplicas == 0 {`},
			"v1.8.2":  {srcTR, 217, `} else if c.newRS == nil || c.newRS.Status.AvailableReplicas == 0 {`},
			"v1.8.3":  {srcTR, 217, `} else if c.newRS == nil || c.newRS.Status.AvailableReplicas == 0 {`},
			"v1.9.3":  {srcTR, 222, `} else if c.newRS == nil || c.newRS.Status.AvailableReplicas == 0 {`},
			"v1.10.2": {srcTR, 222, `} else if c.newRS == nil || c.newRS.Status.AvailableReplicas == 0 {`},
		},
	},
	{
		Key:   "tr.branch-promote-full",
		Claim: `A full promotion (status.promoteFull) has its own weight branch, evaluated before the step-index branch.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcTR, 201, `} else if c.rollout.Status.PromoteFull {`},
			"v1.8.2":  {srcTR, 229, `} else if c.rollout.Status.PromoteFull {`},
			"v1.8.3":  {srcTR, 229, `} else if c.rollout.Status.PromoteFull {`},
			"v1.9.3":  {srcTR, 234, `} else if c.rollout.Status.PromoteFull {`},
			"v1.10.2": {srcTR, 234, `} else if c.rollout.Status.PromoteFull {`},
		},
	},
	{
		Key:   "tr.promote-full-dss-cap",
		Claim: `During a full promotion with dynamicStableScale, the canary weight is capped at maxTrafficWeight times the canary's available share of spec.replicas.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcTR, 206, `desiredWeight = (weightutil.MaxTrafficWeight(c.rollout) * c.newRS.Status.AvailableReplicas) / *c.rollout.Spec.Replicas`},
			"v1.8.2":  {srcTR, 234, `desiredWeight = (weightutil.MaxTrafficWeight(c.rollout) * c.newRS.Status.AvailableReplicas) / *c.rollout.Spec.Replicas`},
			"v1.8.3":  {srcTR, 234, `desiredWeight = (weightutil.MaxTrafficWeight(c.rollout) * c.newRS.Status.AvailableReplicas) / *c.rollout.Spec.Replicas`},
			"v1.9.3":  {srcTR, 239, `desiredWeight = (weightutil.MaxTrafficWeight(c.rollout) * c.newRS.Status.AvailableReplicas) / *c.rollout.Spec.Replicas`},
			"v1.10.2": {srcTR, 239, `desiredWeight = (weightutil.MaxTrafficWeight(c.rollout) * c.newRS.Status.AvailableReplicas) / *c.rollout.Spec.Replicas`},
		},
	},
	{
		Key:   "tr.promote-full-keep-weight",
		Claim: `During a full promotion without dynamicStableScale, the previously recorded canary weight is kept.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcTR, 208, `desiredWeight = c.rollout.Status.Canary.Weights.Canary.Weight`},
			"v1.8.2":  {srcTR, 236, `desiredWeight = c.rollout.Status.Canary.Weights.Canary.Weight`},
			"v1.8.3":  {srcTR, 236, `desiredWeight = c.rollout.Status.Canary.Weights.Canary.Weight`},
			"v1.9.3":  {srcTR, 241, `desiredWeight = c.rollout.Status.Canary.Weights.Canary.Weight`},
			"v1.10.2": {srcTR, 241, `desiredWeight = c.rollout.Status.Canary.Weights.Canary.Weight`},
		},
	},
	{
		Key:   "tr.at-desired",
		Claim: `In the step-index branch, the weight depends on whether the canary (and, without dynamicStableScale, the stable) ReplicaSet is at its desired replica counts.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcTR, 216, `atDesiredReplicaCount := replicasetutil.AtDesiredReplicaCountsForCanary(`},
			"v1.8.2":  {srcTR, 244, `atDesiredReplicaCount := replicasetutil.AtDesiredReplicaCountsForCanary(`},
			"v1.8.3":  {srcTR, 244, `atDesiredReplicaCount := replicasetutil.AtDesiredReplicaCountsForCanary(`},
			"v1.9.3":  {srcTR, 249, `atDesiredReplicaCount := replicasetutil.AtDesiredReplicaCountsForCanary(`},
			"v1.10.2": {srcTR, 249, `atDesiredReplicaCount := replicasetutil.AtDesiredReplicaCountsForCanary(`},
		},
	},
	{
		Key:   "tr.reverse-loop",
		Claim: `When the ReplicaSets are not at their desired counts, the weight is the last setWeight strictly before the current step index (0 if none).`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcTR, 219, `for i := *index - 1; i >= 0; i-- {`},
			"v1.8.2":  {srcTR, 247, `for i := *index - 1; i >= 0; i-- {`},
			"v1.8.3":  {srcTR, 247, `for i := *index - 1; i >= 0; i-- {`},
			"v1.9.3":  {srcTR, 252, `for i := *index - 1; i >= 0; i-- {`},
			"v1.10.2": {srcTR, 252, `for i := *index - 1; i >= 0; i-- {`},
		},
	},
	{
		Key:   "tr.current-set-weight",
		Claim: `When at the desired counts and not past the last step, the weight is the current step's effective setWeight.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcTR, 231, `desiredWeight = replicasetutil.GetCurrentSetWeight(c.rollout)`},
			"v1.8.2":  {srcTR, 259, `desiredWeight = replicasetutil.GetCurrentSetWeight(c.rollout)`},
			"v1.8.3":  {srcTR, 259, `desiredWeight = replicasetutil.GetCurrentSetWeight(c.rollout)`},
			"v1.9.3":  {srcTR, 264, `desiredWeight = replicasetutil.GetCurrentSetWeight(c.rollout)`},
			"v1.10.2": {srcTR, 264, `desiredWeight = replicasetutil.GetCurrentSetWeight(c.rollout)`},
		},
	},
	{
		Key:   "tr.max-weight-at-end",
		Claim: `When at the desired counts and the step index equals the number of steps, the weight is maxTrafficWeight.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcTR, 234, `desiredWeight = weightutil.MaxTrafficWeight(c.rollout)`},
			"v1.8.2":  {srcTR, 262, `desiredWeight = weightutil.MaxTrafficWeight(c.rollout)`},
			"v1.8.3":  {srcTR, 262, `desiredWeight = weightutil.MaxTrafficWeight(c.rollout)`},
			"v1.9.3":  {srcTR, 267, `desiredWeight = weightutil.MaxTrafficWeight(c.rollout)`},
			"v1.10.2": {srcTR, 267, `desiredWeight = weightutil.MaxTrafficWeight(c.rollout)`},
		},
	},
	{
		Key:   "tr.stable-check-call",
		Claim: `Before applying a weight, the controller checks only the stable ReplicaSet's availability for the remaining traffic and silently skips the update if it is short.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcTR, 0, `if !c.checkReplicasAvailable(c.stableRS,`},
			"v1.8.2":  {srcTR, 266, `if !c.checkReplicasAvailable(c.stableRS,`},
			"v1.8.3":  {srcTR, 266, `if !c.checkReplicasAvailable(c.stableRS,`},
			"v1.9.3":  {srcTR, 273, `if !c.checkReplicasAvailable(c.stableRS,`},
			"v1.10.2": {srcTR, 273, `if !c.checkReplicasAvailable(c.stableRS,`},
		},
	},
	{
		Key:   "tr.stable-check-def",
		Claim: `The stable ReplicaSet must have at least its weight-proportional share of spec.replicas (rounded down) available, unless a replicaProgressThreshold is met where supported.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcTR, 0, `desiredReplicas := (desiredWeight * totalReplicas) /`},
			"v1.8.2":  {srcTR, 145, `desiredReplicas := (desiredWeight * totalReplicas) /`},
			"v1.8.3":  {srcTR, 145, `desiredReplicas := (desiredWeight * totalReplicas) /`},
			"v1.9.3":  {srcTR, 149, `desiredReplicas := (desiredWeight * totalReplicas) /`},
			"v1.10.2": {srcTR, 149, `desiredReplicas := (desiredWeight * totalReplicas) /`},
		},
	},
	{
		Key:   "tr.early-setweight",
		Claim: `If the new ReplicaSet has no available pods and a canary weight above 0 was recorded, the weight is set before the hash update.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcTR, 0, `(c.newRS == nil || c.newRS.Status.AvailableReplicas == 0) &&`},
			"v1.8.2":  {srcTR, 0, `(c.newRS == nil || c.newRS.Status.AvailableReplicas == 0) &&`},
			"v1.8.3":  {srcTR, 0, `(c.newRS == nil || c.newRS.Status.AvailableReplicas == 0) &&`},
			"v1.9.3":  {srcTR, 298, `(c.newRS == nil || c.newRS.Status.AvailableReplicas == 0) &&`},
			"v1.10.2": {srcTR, 298, `(c.newRS == nil || c.newRS.Status.AvailableReplicas == 0) &&`},
		},
	},
	{
		Key:   "tr.update-hash-call",
		Claim: `The traffic router's hash update (Istio DestinationRule subsets) runs before the weight is set.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcTR, 253, `err = reconciler.UpdateHash(canaryHash, stableHash`},
			"v1.8.2":  {srcTR, 285, `err = reconciler.UpdateHash(canaryHash, stableHash`},
			"v1.8.3":  {srcTR, 285, `err = reconciler.UpdateHash(canaryHash, stableHash`},
			"v1.9.3":  {srcTR, 306, `err = reconciler.UpdateHash(canaryHash, stableHash`},
			"v1.10.2": {srcTR, 306, `err = reconciler.UpdateHash(canaryHash, stableHash`},
		},
	},
	{
		Key:   "tr.set-weight-call",
		Claim: `The desired weight is applied to the traffic router after the hash update.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcTR, 258, `err = reconciler.SetWeight(desiredWeight, weightDestinations...)`},
			"v1.8.2":  {srcTR, 290, `err = reconciler.SetWeight(desiredWeight, weightDestinations...)`},
			"v1.8.3":  {srcTR, 290, `err = reconciler.SetWeight(desiredWeight, weightDestinations...)`},
			"v1.9.3":  {srcTR, 311, `err = reconciler.SetWeight(desiredWeight, weightDestinations...)`},
			"v1.10.2": {srcTR, 311, `err = reconciler.SetWeight(desiredWeight, weightDestinations...)`},
		},
	},
	{
		Key:   "tr.abort-weight-no-dss",
		Claim: `On abort or rollback to stable without dynamicStableScale, the canary weight is 0 immediately.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcTR, 306, `if !c.rollout.Spec.Strategy.Canary.DynamicStableScale`},
			"v1.8.2":  {srcTR, 338, `if !c.rollout.Spec.Strategy.Canary.DynamicStableScale`},
			"v1.8.3":  {srcTR, 338, `if !c.rollout.Spec.Strategy.Canary.DynamicStableScale`},
			"v1.9.3":  {srcTR, 362, `if !c.rollout.Spec.Strategy.Canary.DynamicStableScale`},
			"v1.10.2": {srcTR, 362, `if !c.rollout.Spec.Strategy.Canary.DynamicStableScale`},
		},
	},
	{
		Key:   "tr.abort-weight-formula",
		Claim: `With dynamicStableScale, the abort weight is derived from maxWeight minus the stable ReplicaSet's available share (integer division).`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcTR, 314, `desiredWeight := maxInt(0, weightutil.MaxTrafficWeight(c.rollout)-((weightutil.MaxTrafficWeight(c.rollout)*c.stableRS.Status.AvailableReplicas)`},
			"v1.8.2":  {srcTR, 346, `desiredWeight := maxInt(0, weightutil.MaxTrafficWeight(c.rollout)-((weightutil.MaxTrafficWeight(c.rollout)*c.stableRS.Status.AvailableReplicas)`},
			"v1.8.3":  {srcTR, 346, `desiredWeight := maxInt(0, weightutil.MaxTrafficWeight(c.rollout)-((weightutil.MaxTrafficWeight(c.rollout)*c.stableRS.Status.AvailableReplicas)`},
			"v1.9.3":  {srcTR, 373, `expectedCanaryWeight := maxInt(0, maxWeight-((maxWeight*c.stableRS.Status.AvailableReplicas)`},
			"v1.10.2": {srcTR, 373, `expectedCanaryWeight := maxInt(0, maxWeight-((maxWeight*c.stableRS.Status.AvailableReplicas)`},
		},
	},
	{
		Key:   "tr.abort-weight-clamp",
		Claim: `The abort weight never rises above the currently recorded canary weight.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcTR, 318, `desiredWeight = minInt(desiredWeight, c.rollout.Status.Canary.Weights.Canary.Weight)`},
			"v1.8.2":  {srcTR, 350, `desiredWeight = minInt(desiredWeight, c.rollout.Status.Canary.Weights.Canary.Weight)`},
			"v1.8.3":  {srcTR, 350, `desiredWeight = minInt(desiredWeight, c.rollout.Status.Canary.Weights.Canary.Weight)`},
			"v1.9.3":  {srcTR, 394, `return minInt(desiredCanaryWeight, currentCanaryWeight)`},
			"v1.10.2": {srcTR, 394, `return minInt(desiredCanaryWeight, currentCanaryWeight)`},
		},
	},
	{
		Key:   "sy.within-window-def",
		Claim: `isRollbackWithinWindow decides whether the rollout is a rollback inside spec.rollbackWindow.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcSY, 901, `func (c *rolloutContext) isRollbackWithinWindow() bool {`},
			"v1.8.2":  {srcSY, 903, `func (c *rolloutContext) isRollbackWithinWindow() bool {`},
			"v1.8.3":  {srcSY, 903, `func (c *rolloutContext) isRollbackWithinWindow() bool {`},
			"v1.9.3":  {srcSY, 905, `func (c *rolloutContext) isRollbackWithinWindow() bool {`},
			"v1.10.2": {srcSY, 966, `func (c *rolloutContext) isRollbackWithinWindow() bool {`},
		},
	},
	{
		Key:   "sy.within-window-created-before",
		Claim: `A rollback is detected only when the new ReplicaSet was created strictly before the stable one (creationTimestamp, not revision).`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcSY, 906, `if c.newRS.CreationTimestamp.Before(&c.stableRS.CreationTimestamp) {`},
			"v1.8.2":  {srcSY, 908, `if c.newRS.CreationTimestamp.Before(&c.stableRS.CreationTimestamp) {`},
			"v1.8.3":  {srcSY, 908, `if c.newRS.CreationTimestamp.Before(&c.stableRS.CreationTimestamp) {`},
			"v1.9.3":  {srcSY, 910, `if c.newRS.CreationTimestamp.Before(&c.stableRS.CreationTimestamp) {`},
			"v1.10.2": {srcSY, 971, `if c.newRS.CreationTimestamp.Before(&c.stableRS.CreationTimestamp) {`},
		},
	},
	{
		Key:   "sy.within-window-experiment-skip",
		Claim: `ReplicaSets created by experiments are not counted in the rollback window.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcSY, 912, `rs.Annotations[v1alpha1.ExperimentNameAnnotationKey] != ""`},
			"v1.8.2":  {srcSY, 914, `rs.Annotations[v1alpha1.ExperimentNameAnnotationKey] != ""`},
			"v1.8.3":  {srcSY, 914, `rs.Annotations[v1alpha1.ExperimentNameAnnotationKey] != ""`},
			"v1.9.3":  {srcSY, 916, `rs.Annotations[v1alpha1.ExperimentNameAnnotationKey] != ""`},
			"v1.10.2": {srcSY, 977, `rs.Annotations[v1alpha1.ExperimentNameAnnotationKey] != ""`},
		},
	},
	{
		Key:   "sy.within-window-count",
		Claim: `The window size counts existing ReplicaSets created strictly between the new and the stable ReplicaSet.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcSY, 918, `c.newRS.CreationTimestamp.Before(&rs.CreationTimestamp)`},
			"v1.8.2":  {srcSY, 920, `c.newRS.CreationTimestamp.Before(&rs.CreationTimestamp)`},
			"v1.8.3":  {srcSY, 920, `c.newRS.CreationTimestamp.Before(&rs.CreationTimestamp)`},
			"v1.9.3":  {srcSY, 922, `c.newRS.CreationTimestamp.Before(&rs.CreationTimestamp)`},
			"v1.10.2": {srcSY, 983, `c.newRS.CreationTimestamp.Before(&rs.CreationTimestamp)`},
		},
	},
	{
		Key:   "sy.within-window-compare",
		Claim: `The rollback is within the window when that count is below spec.rollbackWindow.revisions.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcSY, 922, `if windowSize < c.rollout.Spec.RollbackWindow.Revisions {`},
			"v1.8.2":  {srcSY, 924, `if windowSize < c.rollout.Spec.RollbackWindow.Revisions {`},
			"v1.8.3":  {srcSY, 924, `if windowSize < c.rollout.Spec.RollbackWindow.Revisions {`},
			"v1.9.3":  {srcSY, 926, `if windowSize < c.rollout.Spec.RollbackWindow.Revisions {`},
			"v1.10.2": {srcSY, 987, `if windowSize < c.rollout.Spec.RollbackWindow.Revisions {`},
		},
	},
	{
		Key:   "sy.full-promote-gate",
		Claim: `A canary is promoted to stable only once the new ReplicaSet has spec.replicas available pods (or, where supported, its replicaProgressThreshold is met).`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcSY, 943, `c.newRS.Status.AvailableReplicas != defaults.GetReplicasOrDefault(c.rollout.Spec.Replicas)`},
			"v1.8.2":  {srcSY, 945, `c.newRS.Status.AvailableReplicas != defaults.GetReplicasOrDefault(c.rollout.Spec.Replicas)`},
			"v1.8.3":  {srcSY, 945, `c.newRS.Status.AvailableReplicas != defaults.GetReplicasOrDefault(c.rollout.Spec.Replicas)`},
			"v1.9.3":  {srcSY, 951, `(c.newRS.Status.AvailableReplicas < defaults.GetReplicasOrDefault(c.rollout.Spec.Replicas) &&`},
			"v1.10.2": {srcSY, 1012, `(c.newRS.Status.AvailableReplicas < defaults.GetReplicasOrDefault(c.rollout.Spec.Replicas) &&`},
		},
	},
	{
		Key:   "sy.full-promote-window",
		Claim: `A within-window rollback is promoted to stable without completing the steps, once the availability gate passes.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcSY, 950, `return "Rollback within window"`},
			"v1.8.2":  {srcSY, 952, `return "Rollback within window"`},
			"v1.8.3":  {srcSY, 952, `return "Rollback within window"`},
			"v1.9.3":  {srcSY, 959, `return "Rollback within window"`},
			"v1.10.2": {srcSY, 1021, `return "Rollback within window"`},
		},
	},
	{
		Key:   "sy.completed-all-steps",
		Claim: `A canary with no steps, or whose step index equals the step count, is promoted once the availability gate passes.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcSY, 954, `completedAllSteps := stepCount == 0 ||`},
			"v1.8.2":  {srcSY, 956, `completedAllSteps := stepCount == 0 ||`},
			"v1.8.3":  {srcSY, 956, `completedAllSteps := stepCount == 0 ||`},
			"v1.9.3":  {srcSY, 963, `completedAllSteps := stepCount == 0 ||`},
			"v1.10.2": {srcSY, 1027, `completedAllSteps := stepCount == 0 ||`},
		},
	},
	{
		Key:   "sy.reset-remove-abort",
		Claim: `Resetting the rollout status after a template or steps change clears the abort flag.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcSY, 890, `c.pauseContext.RemoveAbort()`},
			"v1.8.2":  {srcSY, 891, `c.pauseContext.RemoveAbort()`},
			"v1.8.3":  {srcSY, 891, `c.pauseContext.RemoveAbort()`},
			"v1.9.3":  {srcSY, 893, `c.pauseContext.RemoveAbort()`},
			"v1.10.2": {srcSY, 923, `c.pauseContext.RemoveAbort()`},
		},
	},
	{
		Key:   "sy.is-fast-rollback",
		Claim: `isFastRollback treats a rollback as fast when it is within the window, within a blue-green scale-down delay, or back to the stable hash.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcSY, 0, `func (c *rolloutContext) isFastRollback() bool {`},
			"v1.8.2":  {srcSY, 0, `func (c *rolloutContext) isFastRollback() bool {`},
			"v1.8.3":  {srcSY, 0, `func (c *rolloutContext) isFastRollback() bool {`},
			"v1.9.3":  {srcSY, 0, `func (c *rolloutContext) isFastRollback() bool {`},
			"v1.10.2": {srcSY, 954, `func (c *rolloutContext) isFastRollback() bool {`},
		},
	},
	{
		Key:   "rc.reset-path-window",
		Claim: `On a template or steps change, a within-window rollback to a ReplicaSet that still has replicas jumps the step index to the end.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcRC, 370, `} else if c.isRollbackWithinWindow() && replicasetutil.IsActive(c.newRS) {`},
			"v1.8.2":  {srcRC, 379, `} else if c.isRollbackWithinWindow() && replicasetutil.IsActive(c.newRS) {`},
			"v1.8.3":  {srcRC, 389, `} else if c.isRollbackWithinWindow() && replicasetutil.IsActive(c.newRS) {`},
			"v1.9.3":  {srcRC, 368, `} else if c.isRollbackWithinWindow() && replicasetutil.IsActive(c.newRS) {`},
			"v1.10.2": {srcRC, 368, `} else if c.isRollbackWithinWindow() && replicasetutil.IsActive(c.newRS) {`},
		},
	},
	{
		Key:   "rc.rollback-to-stable-skip",
		Claim: `On a template change back to the stable ReplicaSet, the steps are skipped and a SkipSteps event is recorded.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcRC, 368, `"Rollback to stable ReplicaSets"`},
			"v1.8.2":  {srcRC, 377, `"Rollback to stable ReplicaSets"`},
			"v1.8.3":  {srcRC, 387, `"Rollback to stable ReplicaSets"`},
			"v1.9.3":  {srcRC, 366, `"Rollback to stable ReplicaSets"`},
			"v1.10.2": {srcRC, 366, `"Rollback to stable ReplicaSets"`},
		},
	},
	{
		Key:   "rc.every-pass-window",
		Claim: `On every later pass, a full promotion or a within-window rollback (no replica check) clears pauses and abort and moves the index to the end.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcRC, 381, `if c.rollout.Status.PromoteFull || c.isRollbackWithinWindow() {`},
			"v1.8.2":  {srcRC, 390, `if c.rollout.Status.PromoteFull || c.isRollbackWithinWindow() {`},
			"v1.8.3":  {srcRC, 400, `if c.rollout.Status.PromoteFull || c.isRollbackWithinWindow() {`},
			"v1.9.3":  {srcRC, 379, `if c.rollout.Status.PromoteFull || c.isRollbackWithinWindow() {`},
			"v1.10.2": {srcRC, 378, `if c.rollout.Status.PromoteFull || c.isRollbackWithinWindow() {`},
		},
	},
	{
		Key:   "rc.every-pass-remove-abort",
		Claim: `A full promotion or a within-window rollback clears the abort flag by itself.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcRC, 383, `c.pauseContext.RemoveAbort()`},
			"v1.8.2":  {srcRC, 392, `c.pauseContext.RemoveAbort()`},
			"v1.8.3":  {srcRC, 402, `c.pauseContext.RemoveAbort()`},
			"v1.9.3":  {srcRC, 381, `c.pauseContext.RemoveAbort()`},
			"v1.10.2": {srcRC, 380, `c.pauseContext.RemoveAbort()`},
		},
	},
	{
		Key:   "rc.every-pass-idx",
		Claim: `A full promotion or a within-window rollback sets the current step index to the number of steps.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcRC, 385, `currentStepIndex = &stepCount`},
			"v1.8.2":  {srcRC, 394, `currentStepIndex = &stepCount`},
			"v1.8.3":  {srcRC, 404, `currentStepIndex = &stepCount`},
			"v1.9.3":  {srcRC, 383, `currentStepIndex = &stepCount`},
			"v1.10.2": {srcRC, 382, `currentStepIndex = &stepCount`},
		},
	},
	{
		Key:   "rc.abort-idx",
		Claim: `While aborted, the step index is forced to 0 when the stable hash differs from the current pod hash.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcRC, 403, `newStatus.CurrentStepIndex = pointer.Int32Ptr(0)`},
			"v1.8.2":  {srcRC, 412, `newStatus.CurrentStepIndex = pointer.Int32Ptr(0)`},
			"v1.8.3":  {srcRC, 422, `newStatus.CurrentStepIndex = pointer.Int32Ptr(0)`},
			"v1.9.3":  {srcRC, 401, `newStatus.CurrentStepIndex = ptr.To[int32](0)`},
			"v1.10.2": {srcRC, 399, `newStatus.CurrentStepIndex = ptr.To[int32](0)`},
		},
	},
	{
		Key:   "rc.abort-idx-stable",
		Claim: `While aborted, the step index goes to the end only if the stable hash equals the current pod hash.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcRC, 400, `if newStatus.StableRS == newStatus.CurrentPodHash {`},
			"v1.8.2":  {srcRC, 409, `if newStatus.StableRS == newStatus.CurrentPodHash {`},
			"v1.8.3":  {srcRC, 419, `if newStatus.StableRS == newStatus.CurrentPodHash {`},
			"v1.9.3":  {srcRC, 398, `if newStatus.StableRS == newStatus.CurrentPodHash {`},
			"v1.10.2": {srcRC, 396, `if newStatus.StableRS == newStatus.CurrentPodHash {`},
		},
	},
	{
		Key:   "rc.service-before-traffic",
		Claim: `Stable and canary Services are reconciled before traffic routing in each canary pass.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcRC, 53, `if err := c.reconcileStableAndCanaryService(); err != nil {`},
			"v1.8.2":  {srcRC, 53, `if err := c.reconcileStableAndCanaryService(); err != nil {`},
			"v1.8.3":  {srcRC, 63, `if err := c.reconcileStableAndCanaryService(); err != nil {`},
			"v1.9.3":  {srcRC, 63, `if err := c.reconcileStableAndCanaryService(); err != nil {`},
			"v1.10.2": {srcRC, 63, `if err := c.reconcileStableAndCanaryService(); err != nil {`},
		},
	},
	{
		Key:   "rc.step-completed",
		Claim: `When the current canary step completes, the step index advances by one.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcRC, 412, `*currentStepIndex++`},
			"v1.8.2":  {srcRC, 421, `*currentStepIndex++`},
			"v1.8.3":  {srcRC, 431, `*currentStepIndex++`},
			"v1.9.3":  {srcRC, 410, `*currentStepIndex++`},
			"v1.10.2": {srcRC, 407, `*currentStepIndex++`},
		},
	},
	{
		Key:   "uc.check-min-zero",
		Claim: `minPodsPerReplicaSet never lifts a zero replica count: 0 passes through.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcUC, 328, `if count == 0 {`},
			"v1.8.2":  {srcUC, 328, `if count == 0 {`},
			"v1.8.3":  {srcUC, 328, `if count == 0 {`},
			"v1.9.3":  {srcUC, 358, `if count == 0 {`},
			"v1.10.2": {srcUC, 358, `if count == 0 {`},
		},
	},
	{
		Key:   "uc.check-min-max",
		Claim: `A non-zero replica count under traffic routing is raised to at least minPodsPerReplicaSet.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcUC, 334, `return max(count, `},
			"v1.8.2":  {srcUC, 334, `return max(count, `},
			"v1.8.3":  {srcUC, 334, `return max(count, `},
			"v1.9.3":  {srcUC, 364, `return max(count, `},
			"v1.10.2": {srcUC, 370, `return max(count, `},
		},
	},
	{
		Key:   "uc.min-cap-replicas",
		Claim: `minPodsPerReplicaSet is capped at spec.replicas.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcUC, 0, `if minPodsPerReplicaSet > rolloutSpecReplicaSet {`},
			"v1.8.2":  {srcUC, 0, `if minPodsPerReplicaSet > rolloutSpecReplicaSet {`},
			"v1.8.3":  {srcUC, 0, `if minPodsPerReplicaSet > rolloutSpecReplicaSet {`},
			"v1.9.3":  {srcUC, 0, `if minPodsPerReplicaSet > rolloutSpecReplicaSet {`},
			"v1.10.2": {srcUC, 367, `if minPodsPerReplicaSet > rolloutSpecReplicaSet {`},
		},
	},
	{
		Key:   "uc.canary-count",
		Claim: `With traffic routing and no setCanaryScale, the canary replica count is the weight-derived count raised to minPodsPerReplicaSet.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcUC, 350, `canaryCount = CheckMinPodsPerReplicaSet(rollout, trafficWeightToReplicas(`},
			"v1.8.2":  {srcUC, 350, `canaryCount = CheckMinPodsPerReplicaSet(rollout, trafficWeightToReplicas(`},
			"v1.8.3":  {srcUC, 350, `canaryCount = CheckMinPodsPerReplicaSet(rollout, trafficWeightToReplicas(`},
			"v1.9.3":  {srcUC, 380, `canaryCount = CheckMinPodsPerReplicaSet(rollout, trafficWeightToReplicas(`},
			"v1.10.2": {srcUC, 386, `canaryCount = CheckMinPodsPerReplicaSet(rollout, trafficWeightToReplicas(`},
		},
	},
	{
		Key:   "uc.ceil",
		Claim: `A traffic weight is turned into replicas by rounding weight * spec.replicas / maxWeight up.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcUC, 388, `int32(math.Ceil(float64(weight) * float64(replicas) / float64(maxWeight)))`},
			"v1.8.2":  {srcUC, 388, `int32(math.Ceil(float64(weight) * float64(replicas) / float64(maxWeight)))`},
			"v1.8.3":  {srcUC, 388, `int32(math.Ceil(float64(weight) * float64(replicas) / float64(maxWeight)))`},
			"v1.9.3":  {srcUC, 418, `int32(math.Ceil(float64(weight) * float64(replicas) / float64(maxWeight)))`},
			"v1.10.2": {srcUC, 424, `int32(math.Ceil(float64(weight) * float64(replicas) / float64(maxWeight)))`},
		},
	},
	{
		Key:   "uc.stable-full-without-dss",
		Claim: `Without dynamicStableScale the stable ReplicaSet is kept at spec.replicas.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcUC, 356, `return canaryCount, rolloutSpecReplica`},
			"v1.8.2":  {srcUC, 356, `return canaryCount, rolloutSpecReplica`},
			"v1.8.3":  {srcUC, 356, `return canaryCount, rolloutSpecReplica`},
			"v1.9.3":  {srcUC, 386, `return canaryCount, rolloutSpecReplica`},
			"v1.10.2": {srcUC, 392, `return canaryCount, rolloutSpecReplica`},
		},
	},
	{
		Key:   "uc.dss-stable-count",
		Claim: `With dynamicStableScale the stable count is derived from the remaining traffic weight.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcUC, 367, `stableCount = trafficWeightToReplicas(rolloutSpecReplica, maxWeight-desiredWeight, maxWeight)`},
			"v1.8.2":  {srcUC, 367, `stableCount = trafficWeightToReplicas(rolloutSpecReplica, maxWeight-desiredWeight, maxWeight)`},
			"v1.8.3":  {srcUC, 367, `stableCount = trafficWeightToReplicas(rolloutSpecReplica, maxWeight-desiredWeight, maxWeight)`},
			"v1.9.3":  {srcUC, 397, `stableCount = trafficWeightToReplicas(rolloutSpecReplica, maxWeight-desiredWeight, maxWeight)`},
			"v1.10.2": {srcUC, 403, `stableCount = trafficWeightToReplicas(rolloutSpecReplica, maxWeight-desiredWeight, maxWeight)`},
		},
	},
	{
		Key:   "uc.promote-full-max-weight",
		Claim: `The canary is sized for maxTrafficWeight on a full promotion, with no stable ReplicaSet, or when the current hash is the stable one.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcUC, 468, `if rollout.Status.PromoteFull || rollout.Status.StableRS == "" || rollout.Status.CurrentPodHash == rollout.Status.StableRS {`},
			"v1.8.2":  {srcUC, 468, `if rollout.Status.PromoteFull || rollout.Status.StableRS == "" || rollout.Status.CurrentPodHash == rollout.Status.StableRS {`},
			"v1.8.3":  {srcUC, 468, `if rollout.Status.PromoteFull || rollout.Status.StableRS == "" || rollout.Status.CurrentPodHash == rollout.Status.StableRS {`},
			"v1.9.3":  {srcUC, 497, `if rollout.Status.PromoteFull || rollout.Status.StableRS == "" || rollout.Status.CurrentPodHash == rollout.Status.StableRS {`},
			"v1.10.2": {srcUC, 503, `if rollout.Status.PromoteFull || rollout.Status.StableRS == "" || rollout.Status.CurrentPodHash == rollout.Status.StableRS {`},
		},
	},
	{
		Key:   "uc.current-set-weight-abort",
		Claim: `The current setWeight is 0 while the rollout is aborted.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcUC, 485, `if rollout.Status.Abort {`},
			"v1.8.2":  {srcUC, 485, `if rollout.Status.Abort {`},
			"v1.8.3":  {srcUC, 485, `if rollout.Status.Abort {`},
			"v1.9.3":  {srcUC, 547, `if rollout.Status.Abort {`},
			"v1.10.2": {srcUC, 553, `if rollout.Status.Abort {`},
		},
	},
	{
		Key:   "uc.current-set-weight-end",
		Claim: `Past the last step the current setWeight is maxTrafficWeight.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcUC, 489, `if currentStep == nil {`},
			"v1.8.2":  {srcUC, 489, `if currentStep == nil {`},
			"v1.8.3":  {srcUC, 489, `if currentStep == nil {`},
			"v1.9.3":  {srcUC, 551, `if currentStep == nil {`},
			"v1.10.2": {srcUC, 557, `if currentStep == nil {`},
		},
	},
	{
		Key:   "uc.set-canary-scale-unused",
		Claim: `setCanaryScale is ignored once the step index is past the last step.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcUC, 518, `if currentStep == nil {`},
			"v1.8.2":  {srcUC, 518, `if currentStep == nil {`},
			"v1.8.3":  {srcUC, 518, `if currentStep == nil {`},
			"v1.9.3":  {srcUC, 580, `if currentStep == nil {`},
			"v1.10.2": {srcUC, 586, `if currentStep == nil {`},
		},
	},
	{
		Key:   "uc.set-canary-scale-match",
		Claim: `A setCanaryScale with matchTrafficWeight returns the canary to weight-based sizing.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcUC, 527, `if step.SetCanaryScale.MatchTrafficWeight {`},
			"v1.8.2":  {srcUC, 527, `if step.SetCanaryScale.MatchTrafficWeight {`},
			"v1.8.3":  {srcUC, 527, `if step.SetCanaryScale.MatchTrafficWeight {`},
			"v1.9.3":  {srcUC, 589, `if step.SetCanaryScale.MatchTrafficWeight {`},
			"v1.10.2": {srcUC, 595, `if step.SetCanaryScale.MatchTrafficWeight {`},
		},
	},
	{
		Key:   "uc.at-desired-canary",
		Claim: `The canary is at its desired count only when its spec and available replicas equal the desired count (or, where supported, its replicaProgressThreshold is met).`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcUC, 38, `if !allDesiredAreAvailable(newRS, desiredNewRSReplicaCount) {`},
			"v1.8.2":  {srcUC, 38, `if !allDesiredAreAvailable(newRS, desiredNewRSReplicaCount) {`},
			"v1.8.3":  {srcUC, 38, `if !allDesiredAreAvailable(newRS, desiredNewRSReplicaCount) {`},
			"v1.9.3":  {srcUC, 67, `if !ReplicaProgressThresholdMet(ro.Spec.Strategy.Canary.ReplicaProgressThreshold, newRS, desiredNewRSReplicaCount) {`},
			"v1.10.2": {srcUC, 67, `if !ReplicaProgressThresholdMet(ro.Spec.Strategy.Canary.ReplicaProgressThreshold, newRS, desiredNewRSReplicaCount) {`},
		},
	},
	{
		Key:   "uc.at-desired-stable",
		Claim: `The stable ReplicaSet's counts are part of the at-desired check only without dynamicStableScale (or without traffic routing).`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcUC, 41, `if ro.Spec.Strategy.Canary.TrafficRouting == nil || !ro.Spec.Strategy.Canary.DynamicStableScale {`},
			"v1.8.2":  {srcUC, 41, `if ro.Spec.Strategy.Canary.TrafficRouting == nil || !ro.Spec.Strategy.Canary.DynamicStableScale {`},
			"v1.8.3":  {srcUC, 41, `if ro.Spec.Strategy.Canary.TrafficRouting == nil || !ro.Spec.Strategy.Canary.DynamicStableScale {`},
			"v1.9.3":  {srcUC, 71, `if ro.Spec.Strategy.Canary.TrafficRouting == nil || !ro.Spec.Strategy.Canary.DynamicStableScale {`},
			"v1.10.2": {srcUC, 71, `if ro.Spec.Strategy.Canary.TrafficRouting == nil || !ro.Spec.Strategy.Canary.DynamicStableScale {`},
		},
	},
	{
		Key:   "uc.rpt-pods",
		Claim: `A replicaProgressThreshold that is not of type Percent is met once available replicas reach its value.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcUC, 0, `return rs.Status.AvailableReplicas >= threshold.Value`},
			"v1.8.2":  {srcUC, 0, `return rs.Status.AvailableReplicas >= threshold.Value`},
			"v1.8.3":  {srcUC, 0, `return rs.Status.AvailableReplicas >= threshold.Value`},
			"v1.9.3":  {srcUC, 56, `return rs.Status.AvailableReplicas >= threshold.Value`},
			"v1.10.2": {srcUC, 56, `return rs.Status.AvailableReplicas >= threshold.Value`},
		},
	},
	{
		Key:   "uc.desired-canary-weight-abort-dss",
		Claim: `When aborted with dynamicStableScale, the canary weight steps down through the setWeight steps in reverse as the stable ReplicaSet becomes available.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcUC, 0, `if rollout.Status.Abort && rollout.Spec.Strategy.Canary.DynamicStableScale && newRS != nil && stableRS != nil {`},
			"v1.8.2":  {srcUC, 0, `if rollout.Status.Abort && rollout.Spec.Strategy.Canary.DynamicStableScale && newRS != nil && stableRS != nil {`},
			"v1.8.3":  {srcUC, 0, `if rollout.Status.Abort && rollout.Spec.Strategy.Canary.DynamicStableScale && newRS != nil && stableRS != nil {`},
			"v1.9.3":  {srcUC, 517, `if rollout.Status.Abort && rollout.Spec.Strategy.Canary.DynamicStableScale && newRS != nil && stableRS != nil {`},
			"v1.10.2": {srcUC, 523, `if rollout.Status.Abort && rollout.Spec.Strategy.Canary.DynamicStableScale && newRS != nil && stableRS != nil {`},
		},
	},
	{
		Key:   "ur.partially-available",
		Claim: `A ReplicaSet is partially available as soon as one pod is available.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcUR, 650, `return rs.Status.AvailableReplicas > 0`},
			"v1.8.2":  {srcUR, 651, `return rs.Status.AvailableReplicas > 0`},
			"v1.8.3":  {srcUR, 651, `return rs.Status.AvailableReplicas > 0`},
			"v1.9.3":  {srcUR, 651, `return rs.Status.AvailableReplicas > 0`},
			"v1.10.2": {srcUR, 651, `return rs.Status.AvailableReplicas > 0`},
		},
	},
	{
		Key:   "ur.fully-available",
		Claim: `A ReplicaSet is available when it has a non-zero spec and at least that many available pods.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcUR, 645, `return replicas != nil && *replicas != 0 && availableReplicas != 0 && *replicas <= availableReplicas`},
			"v1.8.2":  {srcUR, 646, `return replicas != nil && *replicas != 0 && availableReplicas != 0 && *replicas <= availableReplicas`},
			"v1.8.3":  {srcUR, 646, `return replicas != nil && *replicas != 0 && availableReplicas != 0 && *replicas <= availableReplicas`},
			"v1.9.3":  {srcUR, 646, `return replicas != nil && *replicas != 0 && availableReplicas != 0 && *replicas <= availableReplicas`},
			"v1.10.2": {srcUR, 646, `return replicas != nil && *replicas != 0 && availableReplicas != 0 && *replicas <= availableReplicas`},
		},
	},
	{
		Key:   "co.healthy-replicas",
		Claim: `A canary rollout counts as healthy only once status.replicas equals spec.replicas (old pods scaled down).`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcCO, 294, `scaleDownOldReplicas := newStatus.Replicas == replicas`},
			"v1.8.2":  {srcCO, 305, `scaleDownOldReplicas := newStatus.Replicas == replicas`},
			"v1.8.3":  {srcCO, 305, `scaleDownOldReplicas := newStatus.Replicas == replicas`},
			"v1.9.3":  {srcCO, 305, `scaleDownOldReplicas := newStatus.Replicas == replicas`},
			"v1.10.2": {srcCO, 305, `scaleDownOldReplicas := newStatus.Replicas == replicas`},
		},
	},
	{
		Key:   "co.healthy-updated",
		Claim: `A healthy rollout also needs updated and available replicas equal to spec.replicas and an observed current generation.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcCO, 298, `return newStatus.UpdatedReplicas == replicas &&`},
			"v1.8.2":  {srcCO, 309, `return newStatus.UpdatedReplicas == replicas &&`},
			"v1.8.3":  {srcCO, 309, `return newStatus.UpdatedReplicas == replicas &&`},
			"v1.9.3":  {srcCO, 309, `return newStatus.UpdatedReplicas == replicas &&`},
			"v1.10.2": {srcCO, 309, `return newStatus.UpdatedReplicas == replicas &&`},
		},
	},
	{
		Key:   "co.aborted-reason",
		Claim: `An aborted rollout reports the RolloutAborted condition reason.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcCO, 84, `RolloutAbortedReason = "RolloutAborted"`},
			"v1.8.2":  {srcCO, 84, `RolloutAbortedReason = "RolloutAborted"`},
			"v1.8.3":  {srcCO, 84, `RolloutAbortedReason = "RolloutAborted"`},
			"v1.9.3":  {srcCO, 84, `RolloutAbortedReason = "RolloutAborted"`},
			"v1.10.2": {srcCO, 84, `RolloutAbortedReason = "RolloutAborted"`},
		},
	},
	{
		Key:   "co.timed-out-reason",
		Claim: `A rollout past its progress deadline reports the ProgressDeadlineExceeded reason.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcCO, 138, `TimedOutReason = "ProgressDeadlineExceeded"`},
			"v1.8.2":  {srcCO, 143, `TimedOutReason = "ProgressDeadlineExceeded"`},
			"v1.8.3":  {srcCO, 143, `TimedOutReason = "ProgressDeadlineExceeded"`},
			"v1.9.3":  {srcCO, 143, `TimedOutReason = "ProgressDeadlineExceeded"`},
			"v1.10.2": {srcCO, 143, `TimedOutReason = "ProgressDeadlineExceeded"`},
		},
	},
	{
		Key:   "va.max-weight-only-nginx",
		Claim: `trafficRouting.maxTrafficWeight is accepted only with NGINX or traffic router plugins, so Istio always uses 100.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcVA, 300, `if canary.TrafficRouting.MaxTrafficWeight != nil {`},
			"v1.8.2":  {srcVA, 300, `if canary.TrafficRouting.MaxTrafficWeight != nil {`},
			"v1.8.3":  {srcVA, 300, `if canary.TrafficRouting.MaxTrafficWeight != nil {`},
			"v1.9.3":  {srcVA, 305, `if canary.TrafficRouting.MaxTrafficWeight != nil {`},
			"v1.10.2": {srcVA, 308, `if canary.TrafficRouting.MaxTrafficWeight != nil {`},
		},
	},
	{
		Key:   "rs.abort-delay-nil",
		Claim: `With abortScaleDownDelaySeconds 0 (no delay value), the aborted canary is not held back and is scaled to its computed count.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcRS, 209, `if abortDelay == nil {`},
			"v1.8.2":  {srcRS, 201, `if abortDelay == nil {`},
			"v1.8.3":  {srcRS, 201, `if abortDelay == nil {`},
			"v1.9.3":  {srcRS, 223, `if abortDelay == nil {`},
			"v1.10.2": {srcRS, 265, `if abortDelay == nil {`},
		},
	},
	{
		Key:   "rs.abort-delay-dss-unset",
		Claim: `With dynamicStableScale and no explicit abortScaleDownDelaySeconds, the abort scale-down delay is not used.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcRS, 214, `if usesDynamicStableScaling && !abortDelayWasSet {`},
			"v1.8.2":  {srcRS, 206, `if usesDynamicStableScaling && !abortDelayWasSet {`},
			"v1.8.3":  {srcRS, 206, `if usesDynamicStableScaling && !abortDelayWasSet {`},
			"v1.9.3":  {srcRS, 228, `if usesDynamicStableScaling && !abortDelayWasSet {`},
			"v1.10.2": {srcRS, 270, `if usesDynamicStableScaling && !abortDelayWasSet {`},
		},
	},
	{
		Key:   "rs.abort-delay-needs-stable-full",
		Claim: `On abort, the scale-down-deadline annotation is added to the canary only once the stable ReplicaSet has spec.replicas available.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcRS, 163, `if c.stableRS.Status.AvailableReplicas == *c.rollout.Spec.Replicas {`},
			"v1.8.2":  {srcRS, 155, `if c.stableRS.Status.AvailableReplicas == *c.rollout.Spec.Replicas {`},
			"v1.8.3":  {srcRS, 155, `if c.stableRS.Status.AvailableReplicas == *c.rollout.Spec.Replicas {`},
			"v1.9.3":  {srcRS, 159, `if c.stableRS.Status.AvailableReplicas == *c.rollout.Spec.Replicas {`},
			"v1.10.2": {srcRS, 201, `if c.stableRS.Status.AvailableReplicas >= *c.rollout.Spec.Replicas {`},
		},
	},
	{
		Key:   "rs.abort-delay-fallthrough",
		Claim: `When the abort delay has not expired and the remaining time exceeds the resync period, the code falls through to scaling the canary to its computed count.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcRS, 174, `scaled, _, err := c.scaleReplicaSetAndRecordEvent(c.newRS, newReplicasCount)`},
			"v1.8.2":  {srcRS, 166, `scaled, _, err := c.scaleReplicaSetAndRecordEvent(c.newRS, newReplicasCount)`},
			"v1.8.3":  {srcRS, 166, `scaled, _, err := c.scaleReplicaSetAndRecordEvent(c.newRS, newReplicasCount)`},
			"v1.9.3":  {srcRS, 170, `scaled, _, err := c.scaleReplicaSetAndRecordEvent(c.newRS, newReplicasCount)`},
			"v1.10.2": {srcRS, 212, `scaled, _, err := c.scaleReplicaSetAndRecordEvent(c.newRS, newReplicasCount)`},
		},
	},
	{
		Key:   "df.abort-delay-default",
		Claim: `A canary with traffic routing defaults abortScaleDownDelaySeconds to 30 seconds.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcDF, 222, `delaySeconds = DefaultAbortScaleDownDelaySeconds`},
			"v1.8.2":  {srcDF, 222, `delaySeconds = DefaultAbortScaleDownDelaySeconds`},
			"v1.8.3":  {srcDF, 222, `delaySeconds = DefaultAbortScaleDownDelaySeconds`},
			"v1.9.3":  {srcDF, 226, `delaySeconds = DefaultAbortScaleDownDelaySeconds`},
			"v1.10.2": {srcDF, 226, `delaySeconds = DefaultAbortScaleDownDelaySeconds`},
		},
	},
	{
		Key:   "df.abort-delay-zero",
		Claim: `An explicit canary abortScaleDownDelaySeconds of 0 yields no delay value at all.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcDF, 225, `if *rollout.Spec.Strategy.Canary.AbortScaleDownDelaySeconds == 0 {`},
			"v1.8.2":  {srcDF, 225, `if *rollout.Spec.Strategy.Canary.AbortScaleDownDelaySeconds == 0 {`},
			"v1.8.3":  {srcDF, 225, `if *rollout.Spec.Strategy.Canary.AbortScaleDownDelaySeconds == 0 {`},
			"v1.9.3":  {srcDF, 229, `if *rollout.Spec.Strategy.Canary.AbortScaleDownDelaySeconds == 0 {`},
			"v1.10.2": {srcDF, 229, `if *rollout.Spec.Strategy.Canary.AbortScaleDownDelaySeconds == 0 {`},
		},
	},
	{
		Key:   "is.subset-only-condition",
		Claim: `The Istio DestinationRule availability gate applies only when neither canaryService nor stableService is set.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcIS, 0, `r.rollout.Spec.Strategy.Canary.CanaryService == ""`},
			"v1.8.2":  {srcIS, 326, `if r.rollout.Spec.Strategy.Canary.CanaryService == "" && r.rollout.Spec.Strategy.Canary.StableService == "" {`},
			"v1.8.3":  {srcIS, 326, `if r.rollout.Spec.Strategy.Canary.CanaryService == "" && r.rollout.Spec.Strategy.Canary.StableService == "" {`},
			"v1.9.3":  {srcIS, 357, `if r.rollout.Spec.Strategy.Canary.CanaryService != "" || r.rollout.Spec.Strategy.Canary.StableService != "" {`},
			"v1.10.2": {srcIS, 357, `if r.rollout.Spec.Strategy.Canary.CanaryService != "" || r.rollout.Spec.Strategy.Canary.StableService != "" {`},
		},
	},
	{
		Key:   "is.subset-only-gate",
		Claim: `In subset-only mode, a ReplicaSet that is not fully available holds back the DestinationRule subset switch.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcIS, 0, `delaying destination rule switch`},
			"v1.8.2":  {srcIS, 330, `return fmt.Errorf("delaying destination rule switch`},
			"v1.8.3":  {srcIS, 334, `return nil`},
			"v1.9.3":  {srcIS, 373, `return true, rs.Name`},
			"v1.10.2": {srcIS, 373, `return true, rs.Name`},
		},
	},
	{
		Key:   "is.subset-only-error",
		Claim: `In subset-only mode the delayed DestinationRule switch is returned as an error, so the weight is not set in that pass.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcIS, 0, `return fmt.Errorf("delaying destination rule switch`},
			"v1.8.2":  {srcIS, 330, `return fmt.Errorf("delaying destination rule switch`},
			"v1.8.3":  {srcIS, 0, `return fmt.Errorf("delaying destination rule switch`},
			"v1.9.3":  {srcIS, 382, `return fmt.Errorf("delaying destination rule switch`},
			"v1.10.2": {srcIS, 382, `return fmt.Errorf("delaying destination rule switch`},
		},
	},
	{
		Key:   "is.abort-exempt",
		Claim: `When aborted or dynamically rolling back to stable, the canary ReplicaSet is exempt from the DestinationRule availability gate.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcIS, 0, `if abortOrDynamicRollbackToStable && rsHash == canaryHash {`},
			"v1.8.2":  {srcIS, 0, `if abortOrDynamicRollbackToStable && rsHash == canaryHash {`},
			"v1.8.3":  {srcIS, 0, `if abortOrDynamicRollbackToStable && rsHash == canaryHash {`},
			"v1.9.3":  {srcIS, 369, `if abortOrDynamicRollbackToStable && rsHash == canaryHash {`},
			"v1.10.2": {srcIS, 369, `if abortOrDynamicRollbackToStable && rsHash == canaryHash {`},
		},
	},
	{
		Key:   "sv.canary-svc-target",
		Claim: `The canary Service selector is switched to the new ReplicaSet, subject to an availability check.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcSV, 280, `c.ensureSVCTargets(c.rollout.Spec.Strategy.Canary.CanaryService, c.newRS, true)`},
			"v1.8.2":  {srcSV, 281, `c.ensureSVCTargets(c.rollout.Spec.Strategy.Canary.CanaryService, c.newRS, true)`},
			"v1.8.3":  {srcSV, 281, `c.ensureSVCTargets(c.rollout.Spec.Strategy.Canary.CanaryService, c.newRS, true)`},
			"v1.9.3":  {srcSV, 283, `c.ensureSVCTargets(c.rollout.Spec.Strategy.Canary.CanaryService, c.newRS, true)`},
			"v1.10.2": {srcSV, 283, `c.ensureSVCTargets(c.rollout.Spec.Strategy.Canary.CanaryService, c.newRS, true)`},
		},
	},
	{
		Key:   "sv.partial-availability",
		Claim: `A managed Service selector switch needs only one available pod in the target ReplicaSet.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcSV, 322, `if checkRsAvailability && !replicasetutil.IsReplicaSetPartiallyAvailable(rs) {`},
			"v1.8.2":  {srcSV, 323, `if checkRsAvailability && !replicasetutil.IsReplicaSetPartiallyAvailable(rs) {`},
			"v1.8.3":  {srcSV, 323, `if checkRsAvailability && !replicasetutil.IsReplicaSetPartiallyAvailable(rs) {`},
			"v1.9.3":  {srcSV, 325, `if checkRsAvailability && !replicasetutil.IsReplicaSetPartiallyAvailable(rs) {`},
			"v1.10.2": {srcSV, 325, `if checkRsAvailability && !replicasetutil.IsReplicaSetPartiallyAvailable(rs) {`},
		},
	},
	{
		Key:   "ct.fully-promoted-remove-abort",
		Claim: `A fully promoted rollout that is still marked aborted has its abort flag removed.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcCT, 532, `if rolloututil.IsFullyPromoted(rollout) && roCtx.pauseContext.IsAborted() {`},
			"v1.8.2":  {srcCT, 572, `if rolloututil.IsFullyPromoted(rollout) && roCtx.pauseContext.IsAborted() {`},
			"v1.8.3":  {srcCT, 572, `if rolloututil.IsFullyPromoted(rollout) && roCtx.pauseContext.IsAborted() {`},
			"v1.9.3":  {srcCT, 596, `if rolloututil.IsFullyPromoted(rollout) && roCtx.pauseContext.IsAborted() {`},
			"v1.10.2": {srcCT, 594, `if rolloututil.IsFullyPromoted(rollout) && roCtx.pauseContext.IsAborted() {`},
		},
	},
	{
		Key:   "an.cancel-on-window",
		Claim: `Running analysis is cancelled when the rollout is aborted, fully promoting, an initial deploy, or a (fast) rollback within the window.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcAN, 78, `if isAborted || c.rollout.Status.PromoteFull || rollbackToScaleDownDelay || initialDeploy || isRollbackWithinWindow {`},
			"v1.8.2":  {srcAN, 78, `if isAborted || c.rollout.Status.PromoteFull || rollbackToScaleDownDelay || initialDeploy || isRollbackWithinWindow {`},
			"v1.8.3":  {srcAN, 78, `if isAborted || c.rollout.Status.PromoteFull || rollbackToScaleDownDelay || initialDeploy || isRollbackWithinWindow {`},
			"v1.9.3":  {srcAN, 78, `if isAborted || c.rollout.Status.PromoteFull || rollbackToScaleDownDelay || initialDeploy || isRollbackWithinWindow {`},
			"v1.10.2": {srcAN, 78, `shouldCancelCurrentAnalysis := isFullyPromoted || isAborted || c.rollout.Status.PromoteFull || isFastRollback || initialDeploy`},
		},
	},
	{
		Key:   "cli.abort-patch",
		Claim: `kubectl argo rollouts abort sends a merge patch setting status.abort to true.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcAbort, 30, "abortPatch = `{\"status\":{\"abort\":true}}`"},
			"v1.8.2":  {srcAbort, 30, "abortPatch = `{\"status\":{\"abort\":true}}`"},
			"v1.8.3":  {srcAbort, 30, "abortPatch = `{\"status\":{\"abort\":true}}`"},
			"v1.9.3":  {srcAbort, 30, "abortPatch = `{\"status\":{\"abort\":true}}`"},
			"v1.10.2": {srcAbort, 30, "abortPatch = `{\"status\":{\"abort\":true}}`"},
		},
	},
	{
		Key:   "cli.abort-status-subresource",
		Claim: `The abort patch is sent to the status subresource first.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcAbort, 65, `[]byte(abortPatch), metav1.PatchOptions{}, "status")`},
			"v1.8.2":  {srcAbort, 65, `[]byte(abortPatch), metav1.PatchOptions{}, "status")`},
			"v1.8.3":  {srcAbort, 65, `[]byte(abortPatch), metav1.PatchOptions{}, "status")`},
			"v1.9.3":  {srcAbort, 65, `[]byte(abortPatch), metav1.PatchOptions{}, "status")`},
			"v1.10.2": {srcAbort, 65, `[]byte(abortPatch), metav1.PatchOptions{}, "status")`},
		},
	},
	{
		Key:   "cli.abort-fallback",
		Claim: `If the status subresource is not found, the abort patch is sent to the main resource.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcAbort, 67, `ro, err = rolloutIf.Patch(ctx, name, types.MergePatchType, []byte(abortPatch), metav1.PatchOptions{})`},
			"v1.8.2":  {srcAbort, 67, `ro, err = rolloutIf.Patch(ctx, name, types.MergePatchType, []byte(abortPatch), metav1.PatchOptions{})`},
			"v1.8.3":  {srcAbort, 67, `ro, err = rolloutIf.Patch(ctx, name, types.MergePatchType, []byte(abortPatch), metav1.PatchOptions{})`},
			"v1.9.3":  {srcAbort, 67, `ro, err = rolloutIf.Patch(ctx, name, types.MergePatchType, []byte(abortPatch), metav1.PatchOptions{})`},
			"v1.10.2": {srcAbort, 67, `ro, err = rolloutIf.Patch(ctx, name, types.MergePatchType, []byte(abortPatch), metav1.PatchOptions{})`},
		},
	},
	{
		Key:   "cli.retry-patch",
		Claim: `kubectl argo rollouts retry sends a merge patch setting status.abort to false.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcRetry, 19, "retryRolloutPatch    = `{\"status\":{\"abort\":false}}`"},
			"v1.8.2":  {srcRetry, 19, "retryRolloutPatch    = `{\"status\":{\"abort\":false}}`"},
			"v1.8.3":  {srcRetry, 19, "retryRolloutPatch    = `{\"status\":{\"abort\":false}}`"},
			"v1.9.3":  {srcRetry, 19, "retryRolloutPatch    = `{\"status\":{\"abort\":false}}`"},
			"v1.10.2": {srcRetry, 19, "retryRolloutPatch    = `{\"status\":{\"abort\":false}}`"},
		},
	},
	{
		Key:   "cli.promote-patch",
		Claim: `A plain promote of a canary without pause conditions clears pause conditions and sets the step index to the next step.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcPromote, 40, "`{\"status\":{\"pauseConditions\":null, \"currentStepIndex\":%d}}`"},
			"v1.8.2":  {srcPromote, 40, "`{\"status\":{\"pauseConditions\":null, \"currentStepIndex\":%d}}`"},
			"v1.8.3":  {srcPromote, 40, "`{\"status\":{\"pauseConditions\":null, \"currentStepIndex\":%d}}`"},
			"v1.9.3":  {srcPromote, 40, "`{\"status\":{\"pauseConditions\":null, \"currentStepIndex\":%d}}`"},
			"v1.10.2": {srcPromote, 40, "`{\"status\":{\"pauseConditions\":null, \"currentStepIndex\":%d}}`"},
		},
	},
	{
		Key:   "cli.promote-full-patch",
		Claim: `promote --full sends a status patch setting status.promoteFull to true.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcPromote, 39, "promoteFullPatch                            = `{\"status\":{\"promoteFull\":true}}`"},
			"v1.8.2":  {srcPromote, 39, "promoteFullPatch                            = `{\"status\":{\"promoteFull\":true}}`"},
			"v1.8.3":  {srcPromote, 39, "promoteFullPatch                            = `{\"status\":{\"promoteFull\":true}}`"},
			"v1.9.3":  {srcPromote, 39, "promoteFullPatch                            = `{\"status\":{\"promoteFull\":true}}`"},
			"v1.10.2": {srcPromote, 39, "promoteFullPatch                            = `{\"status\":{\"promoteFull\":true}}`"},
		},
	},
	{
		Key:   "cli.promote-full-guard",
		Claim: `The promote --full status patch is sent only when the current pod hash differs from the stable hash.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcPromote, 160, `if rollout.Status.CurrentPodHash != rollout.Status.StableRS {`},
			"v1.8.2":  {srcPromote, 160, `if rollout.Status.CurrentPodHash != rollout.Status.StableRS {`},
			"v1.8.3":  {srcPromote, 160, `if rollout.Status.CurrentPodHash != rollout.Status.StableRS {`},
			"v1.9.3":  {srcPromote, 164, `if rollout.Status.CurrentPodHash != rollout.Status.StableRS {`},
			"v1.10.2": {srcPromote, 164, `if rollout.Status.CurrentPodHash != rollout.Status.StableRS {`},
		},
	},
	{
		Key:   "cli.promote-full-unpause",
		Claim: `promote --full also patches spec.paused to false when the rollout is paused.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcPromote, 0, `unpauseAndPromoteFullPatch`},
			"v1.8.2":  {srcPromote, 0, `unpauseAndPromoteFullPatch`},
			"v1.8.3":  {srcPromote, 0, `unpauseAndPromoteFullPatch`},
			"v1.9.3":  {srcPromote, 162, `specPatch = []byte(unpausePatch)`},
			"v1.10.2": {srcPromote, 162, `specPatch = []byte(unpausePatch)`},
		},
	},
	{
		Key:   "cli.undo-patch",
		Claim: `kubectl argo rollouts undo replaces /spec/template with a JSON patch holding the target ReplicaSet's pod template.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcUndo, 182, `"path":  "/spec/template",`},
			"v1.8.2":  {srcUndo, 183, `"path":  "/spec/template",`},
			"v1.8.3":  {srcUndo, 183, `"path":  "/spec/template",`},
			"v1.9.3":  {srcUndo, 183, `"path":  "/spec/template",`},
			"v1.10.2": {srcUndo, 183, `"path":  "/spec/template",`},
		},
	},
	{
		Key:   "cli.undo-second-highest",
		Claim: `undo without --to-revision targets the ReplicaSet with the second-highest revision.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcUndo, 175, `return previousReplicaSet, nil`},
			"v1.8.2":  {srcUndo, 176, `return previousReplicaSet, nil`},
			"v1.8.3":  {srcUndo, 176, `return previousReplicaSet, nil`},
			"v1.9.3":  {srcUndo, 176, `return previousReplicaSet, nil`},
			"v1.10.2": {srcUndo, 176, `return previousReplicaSet, nil`},
		},
	},
	{
		Key:   "cli.retry-status-subresource",
		Claim: `The retry patch is sent to the status subresource first, then to the main resource if that is not found.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcRetry, 89, `[]byte(retryRolloutPatch), metav1.PatchOptions{}, "status")`},
			"v1.8.2":  {srcRetry, 89, `[]byte(retryRolloutPatch), metav1.PatchOptions{}, "status")`},
			"v1.8.3":  {srcRetry, 89, `[]byte(retryRolloutPatch), metav1.PatchOptions{}, "status")`},
			"v1.9.3":  {srcRetry, 89, `[]byte(retryRolloutPatch), metav1.PatchOptions{}, "status")`},
			"v1.10.2": {srcRetry, 89, `[]byte(retryRolloutPatch), metav1.PatchOptions{}, "status")`},
		},
	},
	{
		Key:   "cli.promote-status-first",
		Claim: `promote sends its status patch to the status subresource first, then any spec patch to the main resource.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcPromote, 118, `ro, err = rolloutIf.Patch(ctx, name, types.MergePatchType, statusPatch, metav1.PatchOptions{}, "status")`},
			"v1.8.2":  {srcPromote, 118, `ro, err = rolloutIf.Patch(ctx, name, types.MergePatchType, statusPatch, metav1.PatchOptions{}, "status")`},
			"v1.8.3":  {srcPromote, 118, `ro, err = rolloutIf.Patch(ctx, name, types.MergePatchType, statusPatch, metav1.PatchOptions{}, "status")`},
			"v1.9.3":  {srcPromote, 119, `ro, err = rolloutIf.Patch(ctx, name, types.MergePatchType, statusPatch, metav1.PatchOptions{}, "status")`},
			"v1.10.2": {srcPromote, 119, `ro, err = rolloutIf.Patch(ctx, name, types.MergePatchType, statusPatch, metav1.PatchOptions{}, "status")`},
		},
	},
	{
		Key:   "cli.promote-clear-pause",
		Claim: `A plain promote of a rollout with pause conditions only clears them; the controller then completes the pause step.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcPromote, 180, `statusPatch = []byte(clearPauseConditionsPatch)`},
			"v1.8.2":  {srcPromote, 180, `statusPatch = []byte(clearPauseConditionsPatch)`},
			"v1.8.3":  {srcPromote, 180, `statusPatch = []byte(clearPauseConditionsPatch)`},
			"v1.9.3":  {srcPromote, 185, `statusPatch = []byte(clearPauseConditionsPatch)`},
			"v1.10.2": {srcPromote, 185, `statusPatch = []byte(clearPauseConditionsPatch)`},
		},
	},
	{
		Key:   "cli.skip-all-steps",
		Claim: `promote --skip-all-steps sets status.currentStepIndex to the number of steps.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcPromote, 157, `statusPatch = []byte(fmt.Sprintf(setCurrentStepIndex, len(rollout.Spec.Strategy.Canary.Steps)))`},
			"v1.8.2":  {srcPromote, 157, `statusPatch = []byte(fmt.Sprintf(setCurrentStepIndex, len(rollout.Spec.Strategy.Canary.Steps)))`},
			"v1.8.3":  {srcPromote, 157, `statusPatch = []byte(fmt.Sprintf(setCurrentStepIndex, len(rollout.Spec.Strategy.Canary.Steps)))`},
			"v1.9.3":  {srcPromote, 158, `statusPatch = []byte(fmt.Sprintf(setCurrentStepIndex, len(rollout.Spec.Strategy.Canary.Steps)))`},
			"v1.10.2": {srcPromote, 158, `statusPatch = []byte(fmt.Sprintf(setCurrentStepIndex, len(rollout.Spec.Strategy.Canary.Steps)))`},
		},
	},
	{
		Key:   "cli.undo-skip-equal",
		Claim: `undo does nothing when the current template already equals the target revision's (ignoring the pod-template-hash label).`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcUndo, 84, `equal, err := equalIgnoreHash(ro, rsForRevision)`},
			"v1.8.2":  {srcUndo, 85, `equal, err := equalIgnoreHash(ro, rsForRevision)`},
			"v1.8.3":  {srcUndo, 85, `equal, err := equalIgnoreHash(ro, rsForRevision)`},
			"v1.9.3":  {srcUndo, 85, `equal, err := equalIgnoreHash(ro, rsForRevision)`},
			"v1.10.2": {srcUndo, 85, `equal, err := equalIgnoreHash(ro, rsForRevision)`},
		},
	},
	{
		Key:   "ct.write-back-informer",
		Claim: `After patching a Rollout the controller writes its own copy of the Rollout into its informer cache (removed in v1.10); a status change made by someone else in between can be hidden from it until the next event.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcCT, 476, `err = c.rolloutsInformer.GetStore().Update(&un)`},
			"v1.8.2":  {srcCT, 487, `err = c.rolloutsInformer.GetStore().Update(&un)`},
			"v1.8.3":  {srcCT, 487, `err = c.rolloutsInformer.GetStore().Update(&un)`},
			"v1.9.3":  {srcCT, 494, `err = c.rolloutsInformer.GetStore().Update(&un)`},
			"v1.10.2": {srcCT, 0, `rolloutsInformer.GetStore().Update`},
		},
	},
	{
		Key:   "df.surge-unavailable-default",
		Claim: `Without maxSurge/maxUnavailable a canary Rollout uses 25 (read as 25%) for each.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcDF, 24, `DefaultMaxSurge = "25"`},
			"v1.8.2":  {srcDF, 24, `DefaultMaxSurge = "25"`},
			"v1.8.3":  {srcDF, 24, `DefaultMaxSurge = "25"`},
			"v1.9.3":  {srcDF, 24, `DefaultMaxSurge = "25"`},
			"v1.10.2": {srcDF, 24, `DefaultMaxSurge = "25"`},
		},
	},
	{
		Key:   "ur.unavailable-rounds-down",
		Claim: `maxUnavailable is resolved against replicas rounding down (maxSurge rounds up): 25% of fewer than 4 replicas is 0.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcUR, 411, `unavailable, err := intstrutil.GetValueFromIntOrPercent(intstrutil.ValueOrDefault(maxUnavailable, intstrutil.FromInt(0)), int(desired), false)`},
			"v1.8.2":  {srcUR, 412, `unavailable, err := intstrutil.GetValueFromIntOrPercent(intstrutil.ValueOrDefault(maxUnavailable, intstrutil.FromInt(0)), int(desired), false)`},
			"v1.8.3":  {srcUR, 412, `unavailable, err := intstrutil.GetValueFromIntOrPercent(intstrutil.ValueOrDefault(maxUnavailable, intstrutil.FromInt(0)), int(desired), false)`},
			"v1.9.3":  {srcUR, 412, `unavailable, err := intstrutil.GetValueFromIntOrPercent(intstrutil.ValueOrDefault(maxUnavailable, intstrutil.FromInt(0)), int(desired), false)`},
			"v1.10.2": {srcUR, 412, `unavailable, err := intstrutil.GetValueFromIntOrPercent(intstrutil.ValueOrDefault(maxUnavailable, intstrutil.FromInt(0)), int(desired), false)`},
		},
	},
	{
		Key:   "ur.both-zero-unavailable-one",
		Claim: `Only when maxSurge and maxUnavailable both resolve to 0 is maxUnavailable raised to 1.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcUR, 421, `unavailable = 1`},
			"v1.8.2":  {srcUR, 422, `unavailable = 1`},
			"v1.8.3":  {srcUR, 422, `unavailable = 1`},
			"v1.9.3":  {srcUR, 422, `unavailable = 1`},
			"v1.10.2": {srcUR, 422, `unavailable = 1`},
		},
	},
	{
		Key:   "uc.stable-full-no-dss",
		Claim: `With traffic routing and without dynamicStableScale the stable ReplicaSet stays at spec.replicas while the canary is added on top.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcUC, 356, `return canaryCount, rolloutSpecReplica`},
			"v1.8.2":  {srcUC, 356, `return canaryCount, rolloutSpecReplica`},
			"v1.8.3":  {srcUC, 356, `return canaryCount, rolloutSpecReplica`},
			"v1.9.3":  {srcUC, 386, `return canaryCount, rolloutSpecReplica`},
			"v1.10.2": {srcUC, 392, `return canaryCount, rolloutSpecReplica`},
		},
	},
	{
		Key:   "ur.bluegreen-preview-size",
		Claim: `A blue-green Rollout sizes its new (preview) ReplicaSet to spec.replicas next to the active one.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcUR, 252, `desiredReplicas := defaults.GetReplicasOrDefault(rollout.Spec.Replicas)`},
			"v1.8.2":  {srcUR, 253, `desiredReplicas := defaults.GetReplicasOrDefault(rollout.Spec.Replicas)`},
			"v1.8.3":  {srcUR, 253, `desiredReplicas := defaults.GetReplicasOrDefault(rollout.Spec.Replicas)`},
			"v1.9.3":  {srcUR, 253, `desiredReplicas := defaults.GetReplicasOrDefault(rollout.Spec.Replicas)`},
			"v1.10.2": {srcUR, 253, `desiredReplicas := defaults.GetReplicasOrDefault(rollout.Spec.Replicas)`},
		},
	},
	{
		Key:   "ur.bluegreen-preview-count",
		Claim: `With previewReplicaCount a new blue-green update starts its preview ReplicaSet at that count.`,
		Locs: map[Version]Loc{
			"v1.7.2":  {srcUR, 266, `return *rollout.Spec.Strategy.BlueGreen.PreviewReplicaCount, nil`},
			"v1.8.2":  {srcUR, 267, `return *rollout.Spec.Strategy.BlueGreen.PreviewReplicaCount, nil`},
			"v1.8.3":  {srcUR, 267, `return *rollout.Spec.Strategy.BlueGreen.PreviewReplicaCount, nil`},
			"v1.9.3":  {srcUR, 267, `return *rollout.Spec.Strategy.BlueGreen.PreviewReplicaCount, nil`},
			"v1.10.2": {srcUR, 267, `return *rollout.Spec.Strategy.BlueGreen.PreviewReplicaCount, nil`},
		},
	},
}
