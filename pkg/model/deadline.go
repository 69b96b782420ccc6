package model

import (
	"fmt"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	corev1 "k8s.io/api/core/v1"
)

// Deadline is the progress deadline's clock on an update.
type Deadline struct {
	// From is the Progressing condition's lastUpdateTime: the last pass
	// that saw progress.
	From time.Time
	// Due is when the update is ProgressDeadlineExceeded without progress.
	Due     time.Time
	Seconds int32
	// Abort: spec.progressDeadlineAbort, so the controller aborts it then.
	Abort bool
	// HeldBy, when the clock does not run only because other ReplicaSets
	// carry a scale-down-deadline annotation (sy.waiting-scale-down), are
	// those ReplicaSets; From, Due and Seconds are still filled in.
	HeldBy []*RS
	// Window: the update is a rollback within the rollback window. The
	// clock runs as for any update, but an abort it brings lasts only until
	// the aborted ReplicaSet's scale-down, which counts as progress: then
	// the window's pass clears the abort and the rollback starts over
	// (the lab, every modeled version: e2e window-deadline-abort).
	Window bool
}

// ProgressClock is the progress deadline's clock on ro's update (a
// rollback within the window's too: Window), and false
// where the controller does not run it: no update under way, aborted
// (co.timed-out-not-after-abort), promoted, paused (a pause condition or
// spec.paused: sy.paused-progressing-unknown), at a pause, analysis or
// experiment step (sy.indefinite-step-no-deadline), or while another
// ReplicaSet carries a scale-down deadline (sy.waiting-scale-down; its
// time may be long past: known bug #4971, whose ReplicaSets HeldBy names).
// It does not know the bugs that keep a running clock from firing (the
// subset-only gate, crash-looping pods): callers that speak of the
// deadline check those.
func ProgressClock(ro *v1alpha1.Rollout, in Inputs) (Deadline, bool) {
	var cond *v1alpha1.RolloutCondition
	for i := range ro.Status.Conditions {
		if ro.Status.Conditions[i].Type == v1alpha1.RolloutProgressing {
			cond = &ro.Status.Conditions[i]
		}
	}
	if cond == nil || cond.Status != corev1.ConditionTrue || in.New == nil || in.Abort || in.Paused || in.PromoteFull ||
		len(ro.Status.PauseConditions) > 0 || in.fullyPromoted() || len(in.Invalid) > 0 {
		return Deadline{}, false
	}
	if in.AtIndefiniteStep() {
		return Deadline{}, false
	}
	secs := int32(600)
	if ro.Spec.ProgressDeadlineSeconds != nil {
		secs = *ro.Spec.ProgressDeadlineSeconds
	}
	from := cond.LastUpdateTime.Time
	d := Deadline{From: from, Due: from.Add(time.Duration(secs) * time.Second), Seconds: secs, Abort: ro.Spec.ProgressDeadlineAbort}
	for _, rs := range in.All {
		if rs != in.New && rs != in.Stable && rs.ScaleDownDeadline != "" {
			d.HeldBy = append(d.HeldBy, rs)
		}
	}
	if len(d.HeldBy) > 0 {
		return d, false
	}
	// A rollback within the window runs at the end of its steps (no
	// indefinite step) and is timed out like any update; its abort does
	// not last (Window).
	if d.Window = RollbackWindow(in).WithinWindow; d.Window && in.BG != nil {
		// A blue-green rollback within the window and its deadline have
		// not been measured: nothing is said of them.
		return Deadline{}, false
	}
	return d, true
}

// AtIndefiniteStep: the current step is a pause, an analysis or an
// experiment, which the progress deadline does not apply to
// (sy.indefinite-step-no-deadline).
func (in Inputs) AtIndefiniteStep() bool {
	idx := in.index()
	if idx < 0 || idx >= in.stepCount() {
		return false
	}
	s := in.Steps[idx]
	return s.Pause != nil || s.Analysis != nil || s.Experiment != nil
}

// DeadlineAbortEffect says in a few words what the deadline's abort does
// to in's traffic and ReplicaSets: a canary's weight goes back to the
// stable; a blue-green Rollout's production was on the stable all along
// (its active Service switches only at promotion). Within the rollback
// window the abort does not last: the rollback starts over.
func DeadlineAbortEffect(in Inputs) string {
	stable := "the stable"
	if in.Stable != nil {
		stable = "the stable " + in.Stable.Name
	}
	if in.BG != nil {
		return fmt.Sprintf("production stays on %s, %s is scaled down", stable, in.New.Name)
	}
	if RollbackWindow(in).WithinWindow {
		// The scale-down is progress (co.updated-change-is-progress), and
		// the window's pass clears the abort (rc.every-pass-remove-abort).
		return fmt.Sprintf("traffic back on %s, %s scaled down — but only until that scale-down, which counts as progress: the window's next pass clears the abort and the rollback starts over, so traffic goes back to %s as its pods return and away again at the next deadline, for as long as some stay missing", stable, in.New.Name, in.New.Name)
	}
	return fmt.Sprintf("traffic back on %s, %s scaled down", stable, in.New.Name)
}
