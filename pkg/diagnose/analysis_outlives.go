package diagnose

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
)

// RD125: a background AnalysisRun that the promotion cuts short. A
// background run gates nothing; once the Rollout is fully promoted the
// controller terminates it, and a terminated run that exceeded no limit
// reads Successful.

// errorRetry is the analysis controller's wait after an Error measurement
// (fact ar.error-retry).
const errorRetry = 10 * time.Second

// metricSchedule is a metric's count and interval with the run's
// arguments substituted, as the analysis controller reads them.
type metricSchedule struct {
	count      int32 // effective count; 0 when the metric runs indefinitely
	interval   time.Duration
	initial    time.Duration
	indefinite bool
}

func schedule(m v1alpha1.Metric, args map[string]*v1alpha1.Argument) metricSchedule {
	dur := func(s v1alpha1.DurationString) time.Duration {
		r, _ := resolve(string(s), args)
		d, _ := time.ParseDuration(strings.TrimSpace(r))
		return d
	}
	s := metricSchedule{interval: dur(m.Interval), initial: dur(m.InitialDelay)}
	n, _ := limitValue(m.Count, args, 0)
	switch {
	case n > 0:
		s.count = n
	case m.Interval == "":
		s.count = 1
	default:
		s.indefinite = true
	}
	return s
}

func runArgs(run *v1alpha1.AnalysisRun) map[string]*v1alpha1.Argument {
	args := map[string]*v1alpha1.Argument{}
	for i := range run.Spec.Args {
		args[run.Spec.Args[i].Name] = &run.Spec.Args[i]
	}
	return args
}

func resultOf(run *v1alpha1.AnalysisRun, name string) v1alpha1.MetricResult {
	for _, r := range run.Status.MetricResults {
		if r.Name == name {
			return r
		}
	}
	return v1alpha1.MetricResult{}
}

// pausesLeft is how long the Rollout's remaining steps hold it by their
// pauses alone, from now: the rest of the current timed pause and every
// later one. ok is false when the steps left cannot be timed — an
// indefinite pause, an analysis, experiment or plugin step, a pause that is
// not a step's, an abort — since then the promotion waits for something
// else.
func (c *Context) pausesLeft() (left time.Duration, parts []string, ok bool) {
	ro, can := c.ro, c.canary()
	if can == nil || ro.Status.Abort || ro.Spec.Paused || ro.Status.PromoteFull {
		return 0, nil, false
	}
	var started *time.Time
	for _, pc := range ro.Status.PauseConditions {
		if pc.Reason != v1alpha1.PauseReasonCanaryPauseStep {
			return 0, nil, false
		}
		t := pc.StartTime.Time
		started = &t
	}
	idx := int32(0)
	if ro.Status.CurrentStepIndex != nil {
		idx = *ro.Status.CurrentStepIndex
	}
	for i := int(idx); i < len(can.Steps); i++ {
		st := can.Steps[i]
		switch {
		case st.Analysis != nil || st.Experiment != nil || st.Plugin != nil:
			return 0, nil, false
		case st.Pause != nil:
			d := st.Pause.DurationSeconds()
			if st.Pause.Duration == nil || d < 0 {
				return 0, nil, false
			}
			full := time.Duration(d) * time.Second
			spec := st.Pause.Duration.String()
			if st.Pause.Duration.Type == intstr.Int {
				spec += " s"
			}
			if i == int(idx) && started != nil {
				rest := max(0, started.Add(full).Sub(c.View.Now))
				left += rest
				parts = append(parts, fmt.Sprintf("step %d: pause %s, %s left", i, spec, secs(rest)))
			} else {
				left += full
				parts = append(parts, fmt.Sprintf("step %d: pause %s", i, spec))
			}
		}
	}
	return left, parts, true
}

func secs(d time.Duration) string { return strconv.Itoa(int(d.Round(time.Second).Seconds())) + " s" }

// checkAnalysisOutlivesSteps reports a background run whose metrics need
// longer than the steps' pauses left (while it runs), or that the
// promotion terminated short of its count (once it has ended).
func checkAnalysisOutlivesSteps(c *Context, r *rules.Rule) []rules.Finding {
	var out []rules.Finding
	for _, run := range c.runs {
		if run.Type != v1alpha1.RolloutTypeBackgroundRunLabel || run.run == nil {
			continue
		}
		var f *rules.Finding
		switch {
		case run.Phase == string(v1alpha1.AnalysisPhaseRunning) && !run.Terminated:
			f = outlivesSteps(c, r, run)
		case run.Phase == string(v1alpha1.AnalysisPhaseSuccessful) && run.Terminated && !c.ro.Status.Abort:
			f = cutShort(c, r, run)
		}
		if f != nil {
			f.Cites = c.cites("an.background-ends-at-promotion", "an.cancel-other-runs", "ar.terminated-successful", "pa.duration-ends", "ar.error-retry")
			out = append(out, *f)
		}
	}
	return out
}

// outlivesSteps: the metric of the running run that needs the longest
// beyond the pauses left, if any does.
func outlivesSteps(c *Context, r *rules.Rule, run AnalysisRunView) *rules.Finding {
	left, parts, ok := c.pausesLeft()
	if !ok {
		return nil
	}
	ar, args, dry := run.run, runArgs(run.run), dryRunNames(run.run)
	now := c.View.Now
	var worst *rules.Finding
	var worstNeed time.Duration
	for _, m := range ar.Spec.Metrics {
		s := schedule(m, args)
		res := resultOf(ar, m.Name)
		if dry[m.Name] || s.indefinite || res.Phase.Completed() {
			continue
		}
		remaining := s.count - res.Count
		if remaining <= 0 {
			continue
		}
		// When the next measurement is due, and whether one is in flight
		// (it counts once it finishes).
		var next time.Duration
		inFlight := false
		if n := len(res.Measurements); n > 0 {
			last := res.Measurements[n-1]
			switch {
			case last.FinishedAt == nil:
				inFlight = true
			default:
				iv := s.interval
				if last.Phase == v1alpha1.AnalysisPhaseError {
					iv = errorRetry
				}
				next = max(0, last.FinishedAt.Add(iv).Sub(now))
			}
		} else if ar.Status.StartedAt != nil {
			next = max(0, ar.Status.StartedAt.Add(s.initial).Sub(now))
		}
		need := next + time.Duration(remaining-1)*s.interval
		if need <= left || need <= worstNeed {
			continue
		}
		// Measurements taken by the time the pauses end.
		by := res.Count
		switch {
		case inFlight:
			by++
			if s.interval > 0 {
				by += int32(left / s.interval)
			}
		case left >= next:
			by++
			if s.interval > 0 {
				by += int32((left - next) / s.interval)
			}
		}
		by = min(by, s.count-1)
		pauses := "no pause is left"
		if len(parts) > 0 {
			pauses = fmt.Sprintf("the pauses left end in about %s (%s)", secs(left), strings.Join(parts, "; "))
		}
		msg := fmt.Sprintf("%s will be cut short: metric %q has taken %d of %d measurements, one every %s, and needs about %s more, but %s; once the steps are done the Rollout promotes and the controller terminates the run, which, with no limit exceeded, reads Successful short of its %d measurements (about %d taken by the end of the pauses; steps that scale pods take longer than their pauses, which gives it more)",
			run.Words(), m.Name, res.Count, s.count, m.Interval, secs(need), pauses, s.count, by)
		f := r.NewFinding(msg)
		f.Evidence = []rules.Evidence{
			ev(runObj(run), "status.phase", run.Phase),
			ev(runObj(run), metricField(MetricView{Name: m.Name}, "count"), res.Count),
			ev(runObj(run), fmt.Sprintf("spec.metrics[%s].count", m.Name), s.count),
			ev(runObj(run), fmt.Sprintf("spec.metrics[%s].interval", m.Name), m.Interval),
		}
		if ro := c.ro; ro.Status.CurrentStepIndex != nil {
			f.Evidence = append(f.Evidence, ev(c.obj(), "status.currentStepIndex", *ro.Status.CurrentStepIndex))
		}
		worst, worstNeed = &f, need
	}
	return worst
}

// cutShort: a terminated Successful run with a metric short of its count
// that did measure (one that never did is RD121's).
func cutShort(c *Context, r *rules.Rule, run AnalysisRunView) *rules.Finding {
	ar, args, dry := run.run, runArgs(run.run), dryRunNames(run.run)
	for _, m := range ar.Spec.Metrics {
		s := schedule(m, args)
		res := resultOf(ar, m.Name)
		if dry[m.Name] || s.indefinite || res.Count >= s.count || res.Successful == 0 {
			continue
		}
		msg := fmt.Sprintf("%s was terminated after %d of %d measurements of metric %q and reads Successful: the remaining %d were never taken (%d successful, %d failed, %d inconclusive, %d error)",
			run.Words(), res.Count, s.count, m.Name, s.count-res.Count, res.Successful, res.Failed, res.Inconclusive, res.Error)
		f := r.NewFinding(msg)
		f.Evidence = []rules.Evidence{
			ev(runObj(run), "spec.terminate", true),
			ev(runObj(run), "status.phase", run.Phase),
			ev(runObj(run), metricField(MetricView{Name: m.Name}, "count"), res.Count),
			ev(runObj(run), fmt.Sprintf("spec.metrics[%s].count", m.Name), s.count),
		}
		return &f
	}
	return nil
}
