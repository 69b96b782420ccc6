// Package model computes, without I/O, what the Argo Rollouts controller will
// do on its next reconcile of a canary Rollout: which ReplicaSets are stable and
// canary, whether a rollback within rollbackWindow is under way, the traffic
// weight it will set and the branch of its code that decides it, the gates that
// can hold that weight, how it will size the ReplicaSets and where the step
// index goes. Every decision carries citations of the controller source for
// the version being modeled (package upstream).
package model

import (
	"fmt"
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
	// Capped: the API server refuses its new pods (a full ResourceQuota,
	// an admission policy: its ReplicaFailure condition), so it keeps the
	// pods it has — which may still turn available — and never gets more
	// while the cause lasts. Scaling it down works.
	Capped bool `json:"-"`
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
	// ServiceRouted: the router sends the canary weight to the canary
	// Service, so it lands on whatever pods that Service selects. Every
	// router but Istio's DestinationRule subsets and App Mesh's virtual
	// nodes, which select the pods by pod-template hash themselves.
	ServiceRouted bool
	// MaxSurge and MaxUnavailable resolved against Replicas (Fenceposts).
	MaxSurge, MaxUnavailable int32

	// status
	Index *int32
	// Inconclusive: status.pauseConditions holds InconclusiveAnalysis,
	// which halts the ReplicaSets' scaling as spec.paused does.
	Inconclusive bool
	Abort        bool
	// DeadlineAborted: the Progressing condition says
	// ProgressDeadlineExceeded and spec.progressDeadlineAbort is set, so
	// every pass without progress aborts again (sy.deadline-abort-again),
	// even where a rollback within the window clears the abort.
	DeadlineAborted bool
	PromoteFull     bool
	StableHash      string
	CurrentPodHash  string
	Weights         *v1alpha1.TrafficWeights
	// RouterWeight is the canary weight the traffic router's objects really
	// apply, in the same units (0..MaxWeight), when they were read; nil
	// otherwise. The controller decides from Weights (the status); traffic
	// follows the router until a pass writes it again.
	RouterWeight *int32
	// CanaryServiceHash is the pod-template hash the canary Service's
	// selector carries as read ("" when it was not read or has none).
	CanaryServiceHash string
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
// After an abort the canary Service selects the stable's pods too, without
// dynamicStableScale or once its abort weight is 0
// (tr.abort-canary-svc-to-stable): where the router sends the canary
// weight through that Service, the stable takes all of it
// (CanaryWeightOnStable).
// ok is false when no canary is in play.
func (in Inputs) StableShare() (share int32, ok bool) {
	if !in.TrafficRouted || in.Stable == nil || in.New == nil {
		return 0, false
	}
	if in.New.Hash != in.Stable.Hash {
		if in.CanaryWeightOnStable() {
			return in.MaxWeight, true
		}
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

// CanaryWeightOnStable reports whether the router's canary weight lands on
// the stable's pods during an update: it goes to the canary Service, which
// selects them. After an abort (without dynamicStableScale, or with its
// abort weight at 0) every pass points it there
// (tr.abort-canary-svc-to-stable) — and back at the canary for a moment
// before that (#3078), so a read can catch either: the abort decides, not
// the read (the lab: on the stable 64–83% of the time). Otherwise the
// selector as read decides.
func (in Inputs) CanaryWeightOnStable() bool {
	if !in.ServiceRouted || in.Stable == nil || in.New == nil || in.New.Hash == in.Stable.Hash {
		return false
	}
	if in.Abort && (!in.DSS || in.Traffic() == 0) {
		return true
	}
	return in.CanaryServiceHash != "" && in.CanaryServiceHash == in.Stable.Hash
}

// ScaledWhileHalted is the canary's new or stable ReplicaSet whose
// desired-replicas annotation differs from spec.replicas (a scaling event,
// se.compare-annotation: an autoscaler or someone scaled the Rollout)
// while spec.paused or an InconclusiveAnalysis pause halts progress; nil
// otherwise. Every pass then only syncs replicas (se.replicas-only), and
// the halt skips that sync (se.halt-skips-sync): argo-rollouts #4261.
func (in Inputs) ScaledWhileHalted() *RS {
	if in.BG != nil || !(in.Paused || in.Inconclusive) {
		return nil
	}
	for _, r := range []*RS{in.New, in.Stable} {
		// Only ReplicaSets sized above 0 count (the active ones).
		if r != nil && r.Spec > 0 && r.Desired != nil && *r.Desired != in.Replicas {
			return r
		}
	}
	return nil
}

// AbortMeetsScale is the aborted canary ReplicaSet when it was last sized
// for another spec.replicas (a scale met the abort before its first
// traffic pass) on a version whose aborted canary, while it waits for its
// abort scale-down deadline, returns before it syncs that count
// (rs.abort-delay-returns, fixed by rs.abort-delay-syncs-annotation): every
// pass then only syncs replicas (se.replicas-only) until the deadline
// scales the canary to 0. nil otherwise, and while a halt holds the
// Rollout (ScaledWhileHalted: the replica sync does not even run). PR #4919.
func (in Inputs) AbortMeetsScale() *RS {
	r := in.New
	if !in.Abort || !in.TrafficRouted || r == nil || in.Stable == nil || r.Hash == in.Stable.Hash || r.Spec == 0 || r.Desired == nil || *r.Desired == in.Replicas || in.ScaledWhileHalted() != nil {
		return nil
	}
	if _, d := in.abortDelay(); d == nil || !in.present("rs.abort-delay-returns") || in.present("rs.abort-delay-syncs-annotation") {
		return nil
	}
	return r
}

// SyncCountCommand is the kubectl command that sets r's desired-replicas
// annotation to n (spec.replicas), which ends a scaling event on it
// (se.compare-annotation).
func (r *RS) SyncCountCommand(namespace string, n int32) string {
	return fmt.Sprintf("kubectl annotate rs %s -n %s %s=%d --overwrite", r.Name, namespace, annDesired, n)
}

// Index0 is status.currentStepIndex with nil read as 0, as the controller does.
func (in Inputs) Index0() int32 { return in.index() }
