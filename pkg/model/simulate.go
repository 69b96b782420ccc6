package model

import "fmt"

// Step is one simulated reconcile: the pass and the world it ran against.
type Step struct {
	Pass Pass `json:"pass"`
	// CanaryName, CanaryAvailable and CanarySpec describe the canary
	// ReplicaSet as the pass saw it ("" when there is none).
	CanaryName      string `json:"canary,omitempty"`
	CanaryHash      string `json:"canaryHash,omitempty"`
	CanaryAvailable int32  `json:"canaryAvailable"`
	CanarySpec      int32  `json:"canarySpec"`
	StableName      string `json:"stable,omitempty"`
	StableAvailable int32  `json:"stableAvailable"`
	// CarrierName and CarrierAvailable are the ReplicaSet that receives the
	// canary weight after the pass — the one the recorded canary weight points
	// at, which is not the canary ReplicaSet while a pass errors before the
	// traffic switch — and its available pods when the pass ran.
	CarrierName      string `json:"carrier,omitempty"`
	CarrierAvailable int32  `json:"carrierAvailable"`
	// Available is every ReplicaSet's available pods together, and Others
	// the pods of the ReplicaSets that are neither canary nor stable, when
	// the pass ran: the controller's phase counts the first against the
	// updated pods (an old canary's ready pod makes up for a hung stable
	// one), and without trafficRouting waits for the second to go.
	Available int32 `json:"available"`
	Others    int32 `json:"others"`
	// Specs are every ReplicaSet's size after the pass, by name.
	Specs map[string]int32 `json:"specs,omitempty"`
	// PauseEnded: the pass ends a pause step with a duration (the time
	// between simulated passes is not counted: the duration is let pass).
	PauseEnded bool `json:"pauseEnded,omitempty"`
	// AbortDelayEnded: on a pass of an abort that meets a scale
	// (AbortMeetsScale), the abort scale-down delay is let pass: the pass
	// scales the aborted canary to 0 with the weight still on it, and the
	// next pass moves the weight back (endAbortDelay).
	AbortDelayEnded bool `json:"abortDelayEnded,omitempty"`
	// DeadlineAbortEnded: on a pass of a rollback within the window that
	// the progress deadline keeps aborting, the abort scale-down delay is
	// let pass: the pass scales the aborted canary down, which is
	// progress, so the window's clearing of the abort lasts and the
	// rollback starts over (endDeadlineAbort).
	DeadlineAbortEnded bool `json:"deadlineAbortEnded,omitempty"`
	// After the pass.
	Abort      bool   `json:"abort"`
	StableHash string `json:"stableHash,omitempty"`
	Index      int32  `json:"stepIndex"`
}

// Simulate runs the controller forward from in, pass after pass. Between
// passes the ReplicaSet controller moves every ReplicaSet toward its spec by
// one pod (or a stride of 1/48 of it for large sets): pods become available
// and surplus pods go away. It stops once a pass changes nothing (weight,
// index, abort, sizes, promotion) with every ReplicaSet at its spec, or after
// max passes. A pause with a duration ends by itself, as the controller
// ends it once the duration has passed; an indefinite pause, analysis and
// experiments do not complete here: the simulation shows what the objects
// and the clock alone make the controller do.
func Simulate(in Inputs, max int) []Step {
	var out []Step
	cur := in.clone()
	for i := 0; i < max; i++ {
		p := Evaluate(cur)
		ended := endTimedPause(cur, &p)
		s := Step{Pass: p, PauseEnded: ended, AbortDelayEnded: endAbortDelay(cur, &p), DeadlineAbortEnded: endDeadlineAbort(cur, &p)}
		if cur.New != nil {
			s.CanaryName, s.CanaryHash, s.CanaryAvailable, s.CanarySpec = cur.New.Name, cur.New.Hash, cur.New.Available, cur.New.Spec
		}
		if cur.Stable != nil {
			s.StableName, s.StableAvailable = cur.Stable.Name, cur.Stable.Available
		}
		s.Available = availableSum(cur.All...)
		for _, r := range cur.others() {
			s.Others += r.Replicas
		}
		next := Apply(cur, p)
		s.Abort, s.StableHash, s.Index = next.Abort, next.StableHash, next.index()
		s.Specs = map[string]int32{}
		for _, r := range next.All {
			s.Specs[r.Name] = r.Spec
		}
		s.CarrierName, s.CarrierAvailable = s.CanaryName, s.CanaryAvailable
		carrier := ""
		if next.Weights != nil {
			carrier = next.Weights.Canary.PodTemplateHash
		}
		if next.ServiceRouted && next.CanaryServiceHash != "" {
			// The router sends the canary weight to the canary Service:
			// it lands on the pods the Service selects (the stable's,
			// after an abort).
			carrier = next.CanaryServiceHash
		}
		for _, r := range cur.All {
			if carrier != "" && r.Hash == carrier {
				s.CarrierName, s.CarrierAvailable = r.Name, r.Available
			}
		}
		out = append(out, s)
		settled := !p.Reset && !p.Promotes && !moving(next) && sameStatus(cur, next)
		cur = tickAll(next)
		if settled {
			break
		}
	}
	return out
}

// moving reports whether some ReplicaSet is not yet at its spec (a capped
// one: at the pods it has).
func moving(in Inputs) bool {
	for _, r := range in.All {
		if r.Capped && r.Spec > r.Replicas {
			// It gets no more pods: moving only while those it has turn available.
			if r.Available < r.Replicas {
				return true
			}
			continue
		}
		if r.Available != r.Spec || r.Replicas != r.Spec {
			return true
		}
	}
	return false
}

func sameStatus(a, b Inputs) bool {
	w := func(in Inputs) int32 {
		if in.Weights == nil {
			return -1
		}
		return in.Weights.Canary.Weight
	}
	return a.index() == b.index() && a.Abort == b.Abort && a.StableHash == b.StableHash &&
		a.PromoteFull == b.PromoteFull && w(a) == w(b)
}

// tickAll is the ReplicaSet controller between two passes.
func tickAll(in Inputs) Inputs {
	out := in.clone()
	for _, r := range out.All {
		stride := (r.Spec + 47) / 48
		if stride < 1 {
			stride = 1
		}
		switch {
		case r.Capped && r.Spec > r.Replicas:
			// No pod is created; those there may still turn available.
			r.Available = min32(r.Replicas, r.Available+stride)
			r.Ready = r.Available
		case r.Stuck && r.Hung > 0:
			if r.Replicas > r.Spec {
				r.Hung = max(0, r.Hung-(r.Replicas-r.Spec)) // unready pods go first
			}
			r.Replicas = r.Spec
			r.Available = min32(r.Spec-r.Hung, r.Available+stride)
			r.Ready = r.Available
		case r.Available < r.Spec && r.Stuck:
			r.Replicas = r.Spec
		case r.Available < r.Spec:
			r.Available = min32(r.Spec, r.Available+stride)
			r.Replicas, r.Ready = r.Spec, r.Available
		case r.Available > r.Spec || r.Replicas != r.Spec:
			r.Available, r.Replicas, r.Ready = r.Spec, r.Spec, r.Spec
		}
	}
	return out
}

// endTimedPause completes, on a pass that stays at a pause step with a
// duration, that step: the controller completes it once the duration has
// passed since the pause condition started, which in a simulation without
// a clock is the pass itself. Not while spec.paused is set (no step
// completes then), aborted, on a full promotion or when the pass errors,
// resets or promotes.
func endTimedPause(in Inputs, p *Pass) bool {
	idx, n := in.index(), in.stepCount()
	if p.Reset || p.Errored || p.Promotes || in.Abort || in.Paused || in.Inconclusive || in.PromoteFull || in.fullyPromoted() ||
		idx >= n || p.NextIndex != idx {
		return false
	}
	pause := in.Steps[idx].Pause
	if pause == nil || pause.Duration == nil {
		return false
	}
	p.NextIndex = idx + 1
	p.IndexWhy = fmt.Sprintf("step %d (%s) ends by itself once its duration has passed: the index moves to %d", idx, stepString(in.Steps[idx]), idx+1)
	p.IndexCites = in.cites("pa.duration-ends", "rc.spec-paused-no-step", "rc.step-completed")
	return true
}

// endAbortDelay lets, on a pass of an abort that meets a scale
// (AbortMeetsScale), the abort scale-down delay pass once the controller
// has stamped the deadline — it does when the stable has spec.replicas
// available — as endTimedPause lets a pause's duration pass. The pass at
// the deadline scales the aborted canary to 0, still writing no weight,
// and that scale brings the canary's desired-replicas annotation to
// spec.replicas, which ends the scaling event: the next pass writes the
// weight back to the stable. The lab saw it on v1.7.2–v1.9.3 (e2e
// bug-scaled-paused): the weight was still on the canary when it reached
// 0 pods, and 0 soon after.
func endAbortDelay(in Inputs, p *Pass) bool {
	r := in.AbortMeetsScale()
	if r == nil || !p.ReplicasOnly || in.Unobserved || (r.ScaleDownDeadline == "" && !in.abortStableReady()) {
		return false
	}
	p.CanaryTarget = 0
	p.IndexWhy = fmt.Sprintf("aborted while %s was last sized for %d and spec.replicas is %d: every pass only syncs replicas until the canary's abort scale-down deadline, which the controller sets once the stable has %d available; once it has passed, the pass scales %s to 0 with %d%% still on it — it writes no weight — and the scale brings its desired-replicas annotation to %d, so the next pass moves the weight back", r.Name, *r.Desired, in.Replicas, in.Replicas, r.Name, p.Traffic, in.Replicas)
	p.IndexCites = in.cites("se.compare-annotation", "se.replicas-only", "rs.abort-delay-needs-stable-full", "rs.abort-delay-deadline-passed", "sy.scale-sets-annotation")
	return true
}

// endDeadlineAbort lets, on a pass of a rollback within the window that the
// progress deadline aborts again (statusPass: no progress, the update still
// timed out), the abort scale-down delay pass once the controller would
// stamp it — the stable has spec.replicas available — or has stamped it.
// The pass at the deadline scales the aborted canary to its computed size
// (rs.abort-delay-deadline-passed); that is progress, so no new abort
// follows the window's clearing of it, and the next pass resumes the
// rollback. The lab saw it on every modeled version (e2e
// window-deadline-abort): the canary scaled to 0 five seconds (the delay)
// after the abort, the abort gone 0.1–0.4 s later, the canary scaled up
// again at once.
func endDeadlineAbort(in Inputs, p *Pass) bool {
	if !in.Abort || !in.DeadlineAborted || p.AbortCleared || in.New == nil || in.Stable == nil || !RollbackWindow(in).WithinWindow {
		return false
	}
	if in.New.ScaleDownDeadline == "" && !in.abortStableReady() {
		return false
	}
	target, _ := DesiredCounts(in, nextWeights(in, p.Weight))
	if target == in.New.Spec {
		return false
	}
	p.CanaryTarget = target
	p.AbortCleared = true
	p.IndexWhy = fmt.Sprintf("rollback within rollbackWindow, aborted by the progress deadline: once %s's abort scale-down deadline has passed the pass scales it from %d to %d; that is progress, so the update is no longer timed out, the window's clearing of the abort lasts, and the next pass resumes the rollback", in.New.Name, in.New.Spec, target)
	p.IndexCites = in.cites("rs.abort-delay-needs-stable-full", "rs.abort-delay-deadline-passed", "co.updated-change-is-progress", "rc.every-pass-remove-abort")
	return true
}
