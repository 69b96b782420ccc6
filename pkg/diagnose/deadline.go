package diagnose

import (
	"fmt"
	"time"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// checkDeadlineDue (RD170): an update that has made no progress for a while
// is on the progress deadline's clock. The controller counts from the
// Progressing condition's lastUpdateTime (each pass that sees a pod turn
// ready or available, a step or the stable change moves it) and puts the
// Rollout back in its queue for the moment the deadline passes: then the
// update is ProgressDeadlineExceeded, and with progressDeadlineAbort it is
// aborted, without anyone acting. The on-call engineer needs that moment.
// Quiet where the clock does not run (a pause, an analysis or experiment
// step, an old ReplicaSet's scale-down deadline, an abort, a promoted
// Rollout) and where a known bug keeps it from firing (RD150, RD152).
func checkDeadlineDue(c *Context, r *rules.Rule) []rules.Finding {
	in := c.Analysis.Inputs
	ro := c.ro
	clock, runs := model.ProgressClock(ro, in)
	if !runs || matchDeadlineNeverEvaluated(c) != nil || matchCrashLoopDeadline(c) != nil {
		return nil // RD150, RD152: the deadline does not fire
	}
	d := time.Duration(clock.Seconds) * time.Second
	since := snapshot.Since(c.View.Now, clock.From)
	// Every update spends a few seconds between pods; speak once the
	// wait is longer than that.
	if since < min(30*time.Second, d/2) {
		return nil
	}
	due := clock.Due
	when := fmt.Sprintf("by %s (in %s)", due.UTC().Format(time.RFC3339), due.Sub(c.View.Now).Round(time.Second))
	if !due.After(c.View.Now) {
		when = fmt.Sprintf("by %s (%s ago: the controller put the Rollout back in its queue for then)", due.UTC().Format(time.RFC3339), c.View.Now.Sub(due).Round(time.Second))
	}
	moves := ", or the step moves,"
	if in.BG != nil {
		moves = ""
	}
	msg := fmt.Sprintf("no progress for %s (progressDeadlineSeconds %d): unless a pod of %s turns ready or available%s %s the update is ProgressDeadlineExceeded",
		since.Round(time.Second), int(d.Seconds()), in.New.Name, moves, when)
	f := r.NewFinding(msg)
	if clock.Abort {
		f.Message += " and, as progressDeadlineAbort is set, the controller aborts it: " + model.DeadlineAbortEffect(in)
		f.Severity = rules.Warning
	} else {
		f.Message += ": the Rollout turns Degraded, and nothing else changes (progressDeadlineAbort is not set)"
	}
	f.Evidence = []rules.Evidence{
		ev(c.obj(), "status.conditions[Progressing].lastUpdateTime", clock.From.UTC().Format(time.RFC3339)),
		ev(c.obj(), "spec.progressDeadlineSeconds", int(d.Seconds())),
		ev(c.obj(), "spec.progressDeadlineAbort", clock.Abort),
		rsEvidence(in.New),
	}
	f.Cites = c.cites("co.timed-out-from-update", "co.readiness-is-progress", "sy.requeue-at-deadline", "sy.indefinite-step-no-deadline", "sy.paused-progressing-unknown", "sy.waiting-scale-down", "co.timed-out-not-after-abort")
	if clock.Abort {
		f.Cites = append(f.Cites, c.cites("sy.deadline-abort")...)
		if clock.Window {
			f.Cites = append(f.Cites, c.cites("co.updated-change-is-progress", "rc.every-pass-remove-abort")...)
		}
	}
	return []rules.Finding{f}
}
