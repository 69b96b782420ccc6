// Package model computes, without I/O, what the Argo Rollouts controller will
// do on its next reconcile of a canary Rollout: which ReplicaSets are stable and
// canary, whether a rollback within rollbackWindow is under way, the traffic
// weight it will set and the branch of its code that decides it, the gates that
// can hold that weight, how it will size the ReplicaSets and where the step
// index goes. Every decision carries citations of the controller source for
// the version being modeled (package upstream).
package model

import (
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// RS is the part of a ReplicaSet the controller's decisions read.
type RS struct {
	Name       string    `json:"name"`
	Hash       string    `json:"podTemplateHash"`
	Revision   string    `json:"revision,omitempty"`
	Created    time.Time `json:"created"`
	Spec       int32     `json:"specReplicas"`
	Replicas   int32     `json:"replicas"`
	Ready      int32     `json:"readyReplicas"`
	Available  int32     `json:"availableReplicas"`
	Experiment bool      `json:"experiment,omitempty"`
	// ScaleDownDeadline is the scale-down-deadline annotation, if any.
	ScaleDownDeadline string `json:"scaleDownDeadline,omitempty"`
	// Desired is the desired-replicas annotation the controller writes
	// when it scales the ReplicaSet (nil when absent).
	Desired *int32 `json:"desiredReplicasAnnotation,omitempty"`
	// Stuck: its missing pods do not become available (a what-if for
	// revisions that crash); replays keep its availability where it is.
	Stuck bool `json:"-"`
	// Hung, with Stuck, counts only those of its pods that never turn
	// Ready (a hung pod): pods it creates later do, and a scale-down
	// removes the hung ones first, as the ReplicaSet controller deletes
	// unready pods before ready ones. 0: every missing pod stays missing.
	Hung int32 `json:"-"`
}

// Inputs is everything a reconcile decision depends on, flattened out of the
// Rollout and its ReplicaSets. It is a value: evaluating "what if" questions
// (what happens once the canary has one pod?) means copying and changing it.
type Inputs struct {
	Version upstream.Version

	// spec
	Replicas       int32 // spec.replicas (default 1)
	MinPods        *int32
	MaxWeight      int32 // 100 unless maxTrafficWeight is set
	Steps          []v1alpha1.CanaryStep
	TrafficRouted  bool
	SubsetOnly     bool // Istio DestinationRule with no canary/stable Service
	DSS            bool // dynamicStableScale
	AbortDelay     *int32
	RPT            *v1alpha1.ReplicaProgressThreshold
	WindowRevision int32 // spec.rollbackWindow.revisions, 0 when unset
	HasServices    bool  // canaryService or stableService set
	Paused         bool  // spec.paused
	// MaxSurge and MaxUnavailable resolved against Replicas (Fenceposts).
	MaxSurge, MaxUnavailable int32

	// status
	Index *int32
	// Inconclusive: status.pauseConditions holds InconclusiveAnalysis,
	// which halts the ReplicaSets' scaling as spec.paused does.
	Inconclusive   bool
	Abort          bool
	PromoteFull    bool
	StableHash     string
	CurrentPodHash string
	Weights        *v1alpha1.TrafficWeights
	// RouterWeight is the canary weight the traffic router's objects really
	// apply, in the same units (0..MaxWeight), when they were read; nil
	// otherwise. The controller decides from Weights (the status); traffic
	// follows the router until a pass writes it again.
	RouterWeight *int32
	// Unobserved is true when the controller has not yet reconciled the
	// current pod template or steps (its next pass is the reset pass).
	Unobserved bool

	New    *RS
	Stable *RS
	All    []*RS

	// BG is set for a blue-green Rollout: its spec, status and Services.
	BG *BlueGreen

	// Invalid lists the spec values the controller's validation rejects:
	// it then does not reconcile the Rollout at all.
	Invalid []Invalid
}

func (in Inputs) stepCount() int32 { return int32(len(in.Steps)) }

func (in Inputs) index() int32 {
	if in.Index == nil {
		return 0
	}
	return *in.Index
}

// fullyPromoted mirrors IsFullyPromoted: the stable hash equals the current hash.
func (in Inputs) fullyPromoted() bool {
	return in.StableHash != "" && in.StableHash == in.CurrentPodHash
}

func (in Inputs) cite(k upstream.Key) upstream.Cite { return upstream.At(k, in.Version) }

func (in Inputs) cites(keys ...upstream.Key) []upstream.Cite {
	out := make([]upstream.Cite, 0, len(keys))
	for _, k := range keys {
		out = append(out, in.cite(k))
	}
	return out
}

// present reports whether a fact exists in the modeled version.
func (in Inputs) present(k upstream.Key) bool { return !in.cite(k).Absent }

func (in Inputs) clone() Inputs {
	out := in
	cp := func(r *RS) *RS {
		if r == nil {
			return nil
		}
		x := *r
		return &x
	}
	out.New, out.Stable = cp(in.New), cp(in.Stable)
	if in.New != nil && in.Stable != nil && in.New.Name == in.Stable.Name {
		out.Stable = out.New // one ReplicaSet, one copy
	}
	if in.BG != nil {
		b := *in.BG
		out.BG = &b
	}
	out.All = make([]*RS, len(in.All))
	for i, r := range in.All {
		out.All[i] = cp(r)
		if in.New != nil && r.Name == in.New.Name {
			out.All[i] = out.New
		}
		if in.Stable != nil && r.Name == in.Stable.Name {
			out.All[i] = out.Stable
		}
	}
	if in.Index != nil {
		i := *in.Index
		out.Index = &i
	}
	if in.Weights != nil {
		w := *in.Weights
		out.Weights = &w
	}
	if in.RouterWeight != nil {
		w := *in.RouterWeight
		out.RouterWeight = &w
	}
	return out
}

// Traffic is the canary weight traffic follows now: the router's when it was
// read, else the status's.
func (in Inputs) Traffic() int32 {
	if in.RouterWeight != nil {
		return *in.RouterWeight
	}
	return currentWeight(in)
}

// StableShare is the traffic the stable's pods take now, with
// trafficRouting while a canary is in play (an update under way, or the
// router still sending a weight to another revision's destination: an undo
// it has not caught up with): the rest of the canary weight, or all of it
// when the update is the stable's revision and, without
// dynamicStableScale, the canary Service already selects the stable's pods
// (sv.canary-svc-target; with it the Service waits, sv.dss-rollback-keeps-canary-svc).
// ok is false when no canary is in play.
func (in Inputs) StableShare() (share int32, ok bool) {
	if !in.TrafficRouted || in.Stable == nil || in.New == nil {
		return 0, false
	}
	if in.New.Hash != in.Stable.Hash {
		return in.MaxWeight - in.Traffic(), true
	}
	if in.Weights == nil || in.Weights.Canary.PodTemplateHash == in.Stable.Hash || in.Traffic() <= 0 {
		return 0, false
	}
	if in.DSS {
		return in.MaxWeight - in.Traffic(), true
	}
	return in.MaxWeight, true
}

// Index0 is status.currentStepIndex with nil read as 0, as the controller does.
func (in Inputs) Index0() int32 { return in.index() }
