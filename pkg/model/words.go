package model

// The tags above (Branch, GateEffect, VersionSource, gate names) are stable
// values that JSON and YAML consumers match on. A person reads these words
// instead: the human view never shows a tag.

// Words says what the branch does to the weight, in a few words.
func (b Branch) Words() string {
	switch b {
	case BranchRollbackToStable:
		return "rolling back to stable as stable becomes available"
	case BranchFullyPromoted:
		return "fully promoted: all traffic on stable"
	case BranchAborted:
		return "aborted: traffic goes back to stable"
	case BranchCanaryUnavailable:
		return "no canary pod is available"
	case BranchPromoteFull:
		return "promote --full under way"
	case BranchReverseLoop:
		return "walks back to the last setWeight"
	case BranchCurrentStep:
		return "the current step's setWeight"
	case BranchEndOfSteps:
		return "past the last step: the maximum weight"
	case BranchNoSteps:
		return "no steps: 0 until promoted"
	case BranchNotTrafficRouted:
		return "no traffic routing: pod counts split the traffic"
	case BranchReset:
		return "the weight stays: this pass only resets the status"
	}
	return string(b)
}

// Words says what a holding gate does to the pass.
func (e GateEffect) Words() string {
	switch e {
	case EffectWeightSkipped:
		return "the weight is not written"
	case EffectReconcileError:
		return "the reconcile stops before writing the weight"
	case EffectDestinationRuleSkipped:
		return "the DestinationRule is not updated (the weight is)"
	}
	return string(e)
}

// GateWords names a gate (Gate.Name) in words.
func GateWords(name string) string {
	switch name {
	case GateStableAvailability:
		return "the stable availability check"
	case GateIstioSubsetOnly:
		return "Istio's subset-only availability check"
	}
	return name
}

// Words says where the controller version came from.
func (s VersionSource) Words() string {
	switch s {
	case SourceFlag:
		return "--controller-version"
	case SourceImageTag:
		return "the image tag"
	case SourceLabel:
		return "the app.kubernetes.io/version label"
	case SourceUnknown:
		return "no controller found"
	case SourceAmbiguous:
		return "controllers of several versions run"
	case SourceUnreadable:
		return "the image tag is not a version"
	}
	return string(s)
}
