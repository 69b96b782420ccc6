package model

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// A canary without trafficRouting has no weight to write: a Service that
// selects both ReplicaSets spreads requests over every ready pod, so the
// controller sizes the canary and the stable so that their pod counts come
// closest to the step's weight, moving within maxSurge and maxUnavailable,
// and scales every other ReplicaSet down first (those pods take requests
// too). This file is that arithmetic.

// Fenceposts resolves maxSurge and maxUnavailable against replicas as the
// controller does for a canary (and, for the values the API accepts, as the
// deployment controller does; the pod checks use it for both): a string is a percentage of replicas (with
// or without "%"), maxSurge rounded up and maxUnavailable down; when both
// come to 0, maxUnavailable is 1; maxUnavailable is at most replicas. A
// value that does not parse makes both 0, as the controller's error path
// does. nil means the default, 25%.
func Fenceposts(surge, unavailable *intstr.IntOrString, replicas int32) (int32, int32) {
	if surge == nil {
		d := intstr.FromString("25")
		surge = &d
	}
	if unavailable == nil {
		d := intstr.FromString("25")
		unavailable = &d
	}
	s, okS := resolveFencepost(*surge, replicas, true)
	u, okU := resolveFencepost(*unavailable, replicas, false)
	if !okS || !okU {
		return 0, 0
	}
	if s == 0 && u == 0 {
		u = 1
	}
	if replicas == 0 {
		u = 0
	}
	return s, min32(u, replicas)
}

// BlueGreenMaxUnavailable resolves a blue-green Rollout's maxUnavailable
// as the controller does (fact ur.max-unavailable): a percentage of
// replicas ("%" optional) rounded down, 25% when unset, at most replicas; a
// value that does not parse is 0.
func BlueGreenMaxUnavailable(v *intstr.IntOrString, replicas int32) int32 {
	if replicas == 0 {
		return 0
	}
	if v == nil {
		d := intstr.FromString("25%")
		v = &d
	}
	u, _ := resolveFencepost(*v, replicas, false)
	return min32(u, replicas)
}

func resolveFencepost(v intstr.IntOrString, total int32, up bool) (int32, bool) {
	if v.Type == intstr.Int {
		return v.IntVal, true
	}
	p, err := strconv.Atoi(strings.ReplaceAll(v.StrVal, "%", ""))
	if err != nil {
		return 0, false
	}
	x := float64(p) * float64(total) / 100
	if up {
		return int32(math.Ceil(x)), true
	}
	return int32(math.Floor(x)), true
}

// approxCounts is the canary and stable count whose canary share comes
// closest to weight: of replicas pods, or of one more when maxSurge allows.
// A weight strictly between 0 and the maximum never rounds either to 0 once
// there are two pods or more, and a tie rounds the canary up.
func approxCounts(replicas, weight, maxWeight, surge int32) (canary, stable int32) {
	if replicas == 0 {
		return 0, 0
	}
	type option struct{ canary, total int32 }
	exact := float64(replicas) * float64(weight) / float64(maxWeight)
	ceil, floor := int32(math.Ceil(exact)), int32(math.Floor(exact))
	tied := func(total int32) bool {
		_, frac := math.Modf(float64(total) * (float64(weight) / float64(maxWeight)))
		return frac == 0.5
	}
	zeroAllowed := weight == maxWeight || weight == 0 || replicas == 1 && surge == 0
	var opts []option
	if ceil < replicas || zeroAllowed {
		opts = append(opts, option{ceil, replicas})
	}
	if !tied(replicas) && (floor != 0 || zeroAllowed) {
		opts = append(opts, option{floor, replicas})
	}
	if surge > 0 {
		opts = append(opts, option{ceil, replicas + 1})
		if !tied(replicas+1) && (floor != 0 || zeroAllowed) {
			opts = append(opts, option{floor, replicas + 1})
		}
	}
	if len(opts) == 0 {
		return 0, replicas
	}
	delta := func(o option) float64 {
		return math.Abs(float64(o.canary*maxWeight)/float64(o.total) - float64(weight))
	}
	best := opts[0]
	for _, o := range opts[1:] {
		if delta(o) < delta(best) {
			best = o
		}
	}
	return best.canary, best.total - best.canary
}

// BasicStepCounts is where the current step takes the canary and stable
// without trafficRouting: the counts closest to the weight it sizes them
// for (0 once aborted), of replicas pods or one more when maxSurge allows.
func BasicStepCounts(in Inputs) (canary, stable int32) {
	_, weight := sizingWeight(in)
	return approxCounts(in.Replicas, weight, in.MaxWeight, in.MaxSurge)
}

// others are the Rollout's ReplicaSets other than the canary and the stable.
func (in Inputs) others() []*RS {
	var out []*RS
	for _, r := range in.All {
		if r == nil || in.Stable != nil && r.Name == in.Stable.Name || in.New != nil && r.Name == in.New.Name {
			continue
		}
		out = append(out, r)
	}
	return out
}

func specSum(rss ...*RS) int32 {
	var n int32
	for _, r := range rss {
		if r != nil {
			n += r.Spec
		}
	}
	return n
}

func availableSum(rss ...*RS) int32 {
	var n int32
	for _, r := range rss {
		if r != nil {
			n += r.Available
		}
	}
	return n
}

// stableApart: a stable ReplicaSet exists and is not the canary, so the
// steps size both (CheckStableRSExists).
func (in Inputs) stableApart() bool {
	return in.Stable != nil && (in.New == nil || in.New.Name != in.Stable.Name)
}

// BasicCounts is the canary and stable size the controller scales to next
// without trafficRouting (CalculateReplicaCountsForBasicCanary): the counts
// for the weight, reached by at most maxSurge pods above replicas and at
// most maxUnavailable unavailable; other ReplicaSets with pods go down
// before the canary or stable does.
func BasicCounts(in Inputs) (canary, stable int32) {
	replicas, surge, unavailable := in.Replicas, in.MaxSurge, in.MaxUnavailable
	wantCanary, wantStable := BasicStepCounts(in)
	if in.New != nil {
		canary = in.New.Spec
	}
	apart := in.stableApart()
	if apart {
		stable = in.Stable.Spec
	} else {
		// Promoted (or no stable): the canary goes to replicas.
		wantCanary, wantStable = replicas, 0
	}
	maxTotal := replicas + surge
	others := in.others()
	all := append(append([]*RS{}, others...), in.New)
	if apart {
		all = append(all, in.Stable)
	}
	scaleUp := maxTotal - specSum(all...)
	if apart && in.Stable.Spec < wantStable && scaleUp > 0 {
		if in.Stable.Spec+scaleUp < wantStable {
			stable, scaleUp = in.Stable.Spec+scaleUp, 0
		} else {
			stable, scaleUp = wantStable, scaleUp-(wantStable-in.Stable.Spec)
		}
	}
	if in.New != nil && in.New.Spec < wantCanary && scaleUp > 0 {
		canary = min32(in.New.Spec+scaleUp, wantCanary)
	}
	if specSum(others...) > 0 {
		return canary, stable
	}
	minAvailable := replicas - unavailable
	increasing := in.New == nil || wantCanary >= in.New.Spec
	var stableRS *RS
	if apart {
		stableRS = in.Stable
	}
	toScaleDown := forScaleDown(in.New, !increasing) + forScaleDown(stableRS, increasing)
	if toScaleDown <= minAvailable {
		return canary, stable
	}
	scaleDown := toScaleDown - minAvailable
	switch {
	case !increasing:
		canary = drainTo(in.New, wantCanary, scaleDown, canary)
		canary, stable = withinLimits(in.New, stableRS, canary, stable, maxTotal, minAvailable)
	case apart:
		stable = drainTo(in.Stable, wantStable, scaleDown, stable)
		stable, canary = withinLimits(in.Stable, in.New, stable, canary, maxTotal, minAvailable)
	}
	return canary, stable
}

// forScaleDown is what a ReplicaSet counts for when the controller works out
// how far it may scale down (GetReplicasForScaleDown): its available pods,
// or its spec when that is lower or its availability is ignored.
func forScaleDown(r *RS, ignoreAvailability bool) int32 {
	if r == nil {
		return 0
	}
	if r.Spec < r.Available || ignoreAvailability {
		return r.Spec
	}
	return r.Available
}

// drainTo scales r down toward want by at most by pods.
func drainTo(r *RS, want, by, cur int32) int32 {
	if r != nil && r.Spec > want {
		return max32(want, r.Spec-by)
	}
	return cur
}

// withinLimits keeps drain and adjust within maxSurge and maxUnavailable:
// adjust gives up what exceeds the surge, takes back what that would cost
// in availability below minAvailable, and drain gives up what still exceeds
// the surge (adjustReplicaWithinLimits).
func withinLimits(drain, adjust *RS, drainCount, adjustCount, maxTotal, minAvailable int32) (int32, int32) {
	over := max32(0, adjustCount+drainCount-maxTotal)
	var avail int32
	if drain != nil {
		avail += min32(drain.Available, drainCount)
	}
	if adjust != nil {
		adjustCount -= over
		avail += min32(adjust.Available, adjustCount)
		lost := max32(0, adjust.Available-adjustCount)
		short := max32(0, minAvailable-avail)
		adjustCount += min32(lost, short)
		over = max32(0, adjustCount+drainCount-maxTotal)
		drainCount -= over
	}
	return drainCount, adjustCount
}

// othersScaledDown is what scaleDownOldReplicaSetsForCanary leaves each
// other ReplicaSet without trafficRouting: unavailable pods go first, then
// available ones, newest revision first, while the Rollout keeps
// replicas − maxUnavailable available. Keyed by name; only changes.
func othersScaledDown(in Inputs) map[string]int32 {
	others := in.others()
	if specSum(others...) == 0 {
		return nil
	}
	out := map[string]int32{}
	// Unavailable pods first, oldest ReplicaSet first; one with more
	// available pods than its spec makes the controller give up the pass.
	byAge := append([]*RS{}, others...)
	sort.SliceStable(byAge, func(i, j int) bool { return byAge[i].Created.Before(byAge[j].Created) })
	for _, r := range byAge {
		if r.Spec == 0 || r.Spec == r.Available {
			continue
		}
		if r.Available > r.Spec {
			return out
		}
		out[r.Name] = r.Available
	}
	maxDown := availableSum(in.All...) - (in.Replicas - in.MaxUnavailable)
	sorted := append([]*RS{}, others...)
	sort.SliceStable(sorted, func(i, j int) bool { return revisionOf(sorted[i]) > revisionOf(sorted[j]) })
	for _, r := range sorted {
		spec := r.Spec
		if v, ok := out[r.Name]; ok {
			spec = v
		}
		if maxDown <= 0 {
			break
		}
		if spec == 0 {
			continue
		}
		want := int32(0)
		if spec > maxDown {
			want = spec - maxDown
		}
		out[r.Name] = want
		maxDown -= spec - want
	}
	return out
}

func revisionOf(r *RS) int64 {
	n, _ := strconv.ParseInt(r.Revision, 10, 64)
	return n
}

// atDesiredBasic: without trafficRouting a step's ReplicaSets are where it
// wants them when the canary reaches its count (or the progress
// threshold), the stable has exactly its count, and no other ReplicaSet
// has an available pod (AtDesiredReplicaCountsForCanary).
func atDesiredBasic(in Inputs) bool {
	c, s := BasicCounts(in)
	if !rptMet(in, in.New, c) {
		return false
	}
	if in.Stable == nil || in.Stable.Spec != s || in.Stable.Replicas != s {
		return false
	}
	return availableSum(in.others()...) == 0
}

// BasicSized: without trafficRouting the canary and the stable have the
// current step's sizes and no other ReplicaSet has pods — what is left is
// for their pods to become available, not for any scaling.
func BasicSized(in Inputs) bool {
	if in.New == nil || !in.stableApart() {
		return false
	}
	c, s := BasicStepCounts(in)
	return in.New.Spec == c && in.Stable.Spec == s && specSum(in.others()...) == 0
}

// Stall is a canary without trafficRouting that the controller cannot
// scale: Pods exist, as many as replicas + maxSurge allow or more, and
// Available of them are available, no more than replicas − maxUnavailable.
type Stall struct {
	Pods      int32
	Available int32
}

// BasicStall reports a canary without trafficRouting whose pass p scales
// nothing although the step's sizes are not reached, because maxSurge
// allows no more pods and maxUnavailable no fewer available ones: the
// controller waits for a pod to become available. While an older
// ReplicaSet has pods, only that frees room (bc.older-first), so when the
// missing pods never turn Ready, it waits for ever. The missing pods may
// be the canary's, the stable's (an abort or an undo then cannot finish:
// the lab showed both hold on one hung stable pod at maxUnavailable 0) or,
// once the update is the stable (an undo to it), theirs while an older
// ReplicaSet still has pods.
func BasicStall(in Inputs, p Pass) (Stall, bool) {
	if in.TrafficRouted || in.BG != nil || in.Paused || in.Inconclusive || in.New == nil || in.Stable == nil {
		return Stall{}, false
	}
	if !in.stableApart() || in.fullyPromoted() {
		// Promoted: only the update's ReplicaSet is sized, against the
		// older ones it still has to drain.
		if specSum(in.others()...) == 0 || p.CanaryTarget != in.New.Spec {
			return Stall{}, false
		}
	} else if p.CanaryTarget != in.New.Spec || p.StableTarget != in.Stable.Spec || BasicSized(in) {
		return Stall{}, false
	}
	for _, r := range in.others() {
		if to, ok := p.OtherTargets[r.Name]; ok && to != r.Spec {
			return Stall{}, false
		}
	}
	st := Stall{Pods: specSum(in.All...), Available: availableSum(in.All...)}
	if st.Pods < in.Replicas+in.MaxSurge || st.Available > in.Replicas-in.MaxUnavailable {
		return Stall{}, false
	}
	return st, true
}
