package diagnose

import (
	"fmt"
	"strings"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// The AnalysisRun checks, RD119–RD124: they read the runs analysisRuns
// picked (the current revision's and the one that aborted it).

func runObj(r AnalysisRunView) string { return "AnalysisRun " + r.run.Namespace + "/" + r.Name }

func metricField(m MetricView, field string) string {
	return fmt.Sprintf("status.metricResults[%s].%s", m.Name, field)
}

// limitFact is the fact behind each limit.
var limitFact = map[string]upstream.Key{
	"failureLimit":          "ar.failure-limit",
	"inconclusiveLimit":     "ar.inconclusive-limit",
	"consecutiveErrorLimit": "ar.consecutive-error-limit",
}

// abortFact is where each kind of run aborts the Rollout.
func abortFact(r AnalysisRunView) upstream.Key {
	switch r.Type {
	case v1alpha1.RolloutTypeBackgroundRunLabel:
		return "an.background-abort"
	case v1alpha1.RolloutTypePrePromotionLabel, v1alpha1.RolloutTypePostPromotionLabel:
		return "an.bluegreen-abort"
	}
	return "an.step-abort"
}

func pauseFact(r AnalysisRunView) upstream.Key {
	switch r.Type {
	case v1alpha1.RolloutTypeBackgroundRunLabel:
		return "an.background-inconclusive-pause"
	case v1alpha1.RolloutTypePrePromotionLabel, v1alpha1.RolloutTypePostPromotionLabel:
		return "an.bluegreen-inconclusive-pause"
	}
	return "an.step-inconclusive-pause"
}

// values lists the values of the newest ShownMeasurements measurements
// that have one, oldest first, and how many measurements with a value the
// run keeps in all.
func values(m MetricView) (shown []string, of int) {
	var all []string
	for _, x := range m.Measurements {
		if x.Value != "" {
			all = append(all, x.Value)
		}
	}
	if len(all) > ShownMeasurements {
		return all[len(all)-ShownMeasurements:], len(all)
	}
	return all, len(all)
}

// checkAnalysisAborted names the metric whose run aborted the Rollout.
func checkAnalysisAborted(c *Context, r *rules.Rule) []rules.Finding {
	if !c.ro.Status.Abort {
		return nil
	}
	for _, run := range c.runs {
		if !run.CausedAbort || run.argsError() {
			continue // RD124 says why a run ended before measuring
		}
		var m *MetricView
		for i := range run.Metrics {
			if run.Metrics[i].Name == run.DecidedBy {
				m = &run.Metrics[i]
			}
		}
		msg := fmt.Sprintf("%s aborted the Rollout: it ended %s", run.Words(), run.Phase)
		var evs []rules.Evidence
		evs = append(evs, ev(runObj(run), "status.phase", run.Phase))
		keys := []upstream.Key{abortFact(run), "an.abort-message-prefix"}
		if m == nil {
			if run.Message != "" {
				msg += ": " + run.Message
			}
		} else {
			msg += fmt.Sprintf(" on metric %q (%s)", m.Name, m.Provider)
			if l, ok := m.decidingLimit(); ok {
				msg += " because " + l.String()
				evs = append(evs, ev(runObj(run), metricField(*m, l.StatusField()), l.Count))
				keys = append(keys, limitFact[l.Name])
				if l.Default && l.Name == "consecutiveErrorLimit" {
					keys = append(keys, "df.consecutive-error-limit")
				}
			} else if run.ResultsOverwritten {
				msg += overwritten(run, *m)
				evs = append(evs, ev(runObj(run), "status.message", run.Message), ev(runObj(run), metricField(*m, "phase"), m.Phase))
				keys = append(keys, "ar.status-merge-patch")
			}
			if m.Phase == string(v1alpha1.AnalysisPhaseError) {
				if last, ok := m.last(); ok && last.Message != "" {
					msg += fmt.Sprintf("; last error: %s", last.Message)
				}
			} else if vs, of := values(*m); len(vs) > 0 {
				msg += fmt.Sprintf("; values %s", strings.Join(vs, ", "))
				if of > len(vs) {
					msg += fmt.Sprintf(" (the last %d of %d)", len(vs), of)
				}
				if m.SuccessCondition != "" {
					msg += fmt.Sprintf(" against successCondition %s", m.SuccessCondition)
					if d := missOf(m, m.SuccessCondition); d != "" {
						msg += fmt.Sprintf(" (the last failed one missed it by %s)", d)
					}
				} else if m.FailureCondition != "" {
					msg += fmt.Sprintf(" against failureCondition %s", m.FailureCondition)
					if d := missOf(m, m.FailureCondition); d != "" {
						msg += fmt.Sprintf(" (the last failed one was %s past it)", d)
					}
				}
			}
			if m.SuccessCondition != "" {
				evs = append(evs, ev(runObj(run), fmt.Sprintf("spec.metrics[%s].successCondition", m.Name), m.SuccessCondition))
			}
			if m.FailureCondition != "" {
				evs = append(evs, ev(runObj(run), fmt.Sprintf("spec.metrics[%s].failureCondition", m.Name), m.FailureCondition))
			}
		}
		if sm := c.ro.Status.Message; sm != "" {
			evs = append(evs, ev(c.obj(), "status.message", sm))
		}
		f := r.NewFinding(msg)
		f.Evidence = evs
		f.Cites = c.cites(keys...)
		return []rules.Finding{f}
	}
	return nil
}

// overwritten says, for a run whose metric results were written over after
// the decision, what decided it and what its results read now.
func overwritten(run AnalysisRunView, m MetricView) string {
	return fmt.Sprintf(" because %s, as the run's message says — but the metric's result was written over after that decision and reads %s now (failed %d, inconclusive %d, consecutiveErrors %d): a reconcile of the analysis controller that started from an older copy of the run patched its own results over the ones that decided it, so the deciding measurement is gone from the run",
		run.DecidingLimit, m.Phase, m.Failed, m.Inconclusive, m.limit("consecutiveErrorLimit").Count)
}

// missOf is by how much the newest Failed measurement missed cond.
func missOf(m *MetricView, cond string) string {
	for i := len(m.Measurements) - 1; i >= 0; i-- {
		x := m.Measurements[i]
		if x.Phase == string(v1alpha1.AnalysisPhaseFailed) {
			return miss(cond, x.Value)
		}
	}
	return ""
}

// checkAnalysisProviderError reports a metric whose provider errors: how many
// errors in a row, the last message, and how many more the limit allows.
func checkAnalysisProviderError(c *Context, r *rules.Rule) []rules.Finding {
	var out []rules.Finding
	for _, run := range c.runs {
		for _, m := range run.Metrics {
			l := m.limit("consecutiveErrorLimit")
			last, ok := m.last()
			if !ok || last.Phase != string(v1alpha1.AnalysisPhaseError) || l.Count == 0 {
				continue
			}
			def := ""
			if l.Default {
				def = ", the default"
			}
			var msg string
			if l.Exceeded {
				msg = fmt.Sprintf("metric %q (%s) of %s failed on provider errors: %s", m.Name, m.Provider, run.Words(), l.String())
			} else if run.Phase == string(v1alpha1.AnalysisPhaseRunning) {
				left := l.Limit + 1 - l.Count
				msg = fmt.Sprintf("metric %q (%s) of %s is erroring: %d error(s) in a row; %d more and the metric ends in Error (consecutiveErrors > consecutiveErrorLimit %d%s), which ends the run in Error — the controller tries again 10 s after each error, so about %d s after the last one if the provider keeps failing",
					m.Name, m.Provider, run.Words(), l.Count, left, l.Limit, def, int(left)*int(errorRetry/time.Second))
			} else {
				continue // completed with errors under the limit: RD121's case
			}
			if last.Message != "" {
				msg += ": " + last.Message
			}
			f := r.NewFinding(msg)
			f.Evidence = []rules.Evidence{
				ev(runObj(run), metricField(m, "consecutiveError"), l.Count),
				ev(runObj(run), metricField(m, "measurements[-1].message"), last.Message),
			}
			f.Cites = c.cites("ar.consecutive-error-limit", "df.consecutive-error-limit", "ar.error-not-counted", "ar.error-retry")
			out = append(out, f)
		}
	}
	return out
}

// checkAnalysisPassedWithoutData reports a Successful run with a metric that
// never measured a value: all errors, failures under the limit, empty
// results, or no measurement at all (#4479, #1329).
func checkAnalysisPassedWithoutData(c *Context, r *rules.Rule) []rules.Finding {
	var out []rules.Finding
	for _, run := range c.runs {
		if run.Phase != string(v1alpha1.AnalysisPhaseSuccessful) {
			continue
		}
		for _, m := range run.Metrics {
			if m.DryRun || len(run.run.Status.MetricResults) == 0 {
				continue
			}
			withData := 0
			total := m.Dropped + len(m.Measurements)
			for _, x := range m.Measurements {
				if x.Phase == string(v1alpha1.AnalysisPhaseSuccessful) && !emptyValue(x.Value) {
					withData++
				}
			}
			// Measurements the run no longer keeps count when the counters
			// say they succeeded.
			if withData > 0 || (m.Dropped > 0 && m.Successful > int32(countPhase(m, v1alpha1.AnalysisPhaseSuccessful))) {
				continue
			}
			how := "no measurement at all"
			if total > 0 || m.Error+m.Failed+m.Inconclusive+m.Successful > 0 {
				how = fmt.Sprintf("%d successful with data; %d error, %d failed, %d inconclusive", withData, m.Error, m.Failed, m.Inconclusive)
				if m.Successful > 0 {
					how += fmt.Sprintf(", %d successful with an empty result", m.Successful)
				}
			}
			msg := fmt.Sprintf("%s is Successful, but metric %q (%s) never measured a value (%s)", run.Words(), m.Name, m.Provider, how)
			if run.Terminated {
				msg += ": the run was terminated before a limit was reached, and a terminated metric counts as Successful"
			} else {
				msg += ": no limit was exceeded, so nothing failed it"
			}
			f := r.NewFinding(msg)
			f.Evidence = []rules.Evidence{ev(runObj(run), "status.phase", run.Phase),
				ev(runObj(run), metricField(m, "error"), m.Error), ev(runObj(run), metricField(m, "successful"), m.Successful)}
			if run.Terminated {
				f.Evidence = append(f.Evidence, ev(runObj(run), "spec.terminate", true))
			}
			f.Cites = c.cites("ar.terminated-successful", "ar.error-not-counted", "ar.consecutive-error-limit")
			out = append(out, f)
		}
	}
	return out
}

func countPhase(m MetricView, p v1alpha1.AnalysisPhase) int {
	n := 0
	for _, x := range m.Measurements {
		if x.Phase == string(p) {
			n++
		}
	}
	return n
}

// checkAnalysisInconclusive explains an InconclusiveAnalysisRun pause and
// what promote does then.
func checkAnalysisInconclusive(c *Context, r *rules.Rule) []rules.Finding {
	paused := false
	for _, pc := range c.ro.Status.PauseConditions {
		if pc.Reason == v1alpha1.PauseReasonInconclusiveAnalysis {
			paused = true
		}
	}
	if !paused {
		return nil
	}
	var run *AnalysisRunView
	for i := range c.runs {
		if c.runs[i].Phase == string(v1alpha1.AnalysisPhaseInconclusive) && (run == nil || c.runs[i].Role == "current") {
			run = &c.runs[i]
		}
	}
	msg := "paused by an Inconclusive AnalysisRun"
	keys := []upstream.Key{"an.step-inconclusive-pause"}
	if run != nil {
		keys = []upstream.Key{pauseFact(*run)}
		msg = fmt.Sprintf("paused: %s is Inconclusive", run.Words())
		for _, m := range run.Metrics {
			if m.Name == run.DecidedBy {
				msg += fmt.Sprintf(" on metric %q", m.Name)
				if l, ok := m.decidingLimit(); ok {
					msg += " (" + l.String() + ")"
				} else if run.ResultsOverwritten {
					msg += overwritten(*run, m)
					keys = append(keys, "ar.status-merge-patch")
				}
			}
		}
		step := c.ro.Status.Canary.CurrentStepAnalysisRunStatus
		if run.Type == v1alpha1.RolloutTypeStepLabel && step != nil && step.Name == run.Name && c.ro.Status.ControllerPause {
			msg += "; promote counts the analysis step as passed and moves to the next step without a new measurement"
			keys = append(keys, "cli.promote-inconclusive-step")
		} else {
			msg += "; promote clears the pause and the controller starts a new run of the same analysis, which pauses again if it is Inconclusive too"
			keys = append(keys, "cli.promote-clear-pause", "an.rerun-after-inconclusive")
		}
		msg += "; abort ends the update"
	}
	f := r.NewFinding(msg)
	f.Evidence = []rules.Evidence{ev(c.obj(), "status.pauseConditions", v1alpha1.PauseReasonInconclusiveAnalysis)}
	if run != nil {
		f.Evidence = append(f.Evidence, ev(runObj(*run), "status.phase", run.Phase))
	}
	f.Cites = c.cites(keys...)
	return []rules.Finding{f}
}

// checkAnalysisDryRunWouldFail reports a dryRun metric that failed: without
// dryRun it would have failed the run.
func checkAnalysisDryRunWouldFail(c *Context, r *rules.Rule) []rules.Finding {
	var out []rules.Finding
	for _, run := range c.runs {
		for _, m := range run.Metrics {
			if !m.DryRun {
				continue
			}
			effect := ""
			switch v1alpha1.AnalysisPhase(m.Phase) {
			case v1alpha1.AnalysisPhaseFailed, v1alpha1.AnalysisPhaseError:
				effect = "the run would have ended " + m.Phase + " and aborted the Rollout"
			case v1alpha1.AnalysisPhaseInconclusive:
				effect = "the run would have ended Inconclusive and paused the Rollout"
			default:
				continue
			}
			msg := fmt.Sprintf("dryRun metric %q (%s) of %s was assessed %s", m.Name, m.Provider, run.Words(), m.Phase)
			if l, ok := m.decidingLimit(); ok {
				msg += " (" + l.String() + ")"
			}
			msg += ": without dryRun " + effect
			f := r.NewFinding(msg)
			f.Evidence = []rules.Evidence{ev(runObj(run), metricField(m, "phase"), m.Phase), ev(runObj(run), metricField(m, "dryRun"), true)}
			f.Cites = c.cites("ar.dryrun-excluded")
			if l, ok := m.decidingLimit(); ok {
				f.Cites = append(f.Cites, c.cites(limitFact[l.Name])...)
			}
			out = append(out, f)
		}
	}
	return out
}

// checkAnalysisArgs reports a run that ended in Error before measuring: its
// arguments did not resolve or its spec was invalid.
func checkAnalysisArgs(c *Context, r *rules.Rule) []rules.Finding {
	var out []rules.Finding
	for _, run := range c.runs {
		if !run.argsError() {
			continue
		}
		msg := fmt.Sprintf("%s ended in Error before measuring anything: %s", run.Words(), run.Message)
		var unresolved []string
		for _, m := range run.Metrics {
			for _, u := range m.Unresolved {
				unresolved = append(unresolved, fmt.Sprintf("%s in metric %q", u, m.Name))
			}
		}
		if len(unresolved) > 0 {
			msg += "; no argument resolves " + strings.Join(unresolved, ", ")
		}
		f := r.NewFinding(msg)
		f.Evidence = []rules.Evidence{ev(runObj(run), "status.phase", run.Phase), ev(runObj(run), "status.message", run.Message)}
		f.Cites = c.cites("ar.args-error", abortFact(run))
		out = append(out, f)
	}
	return out
}
