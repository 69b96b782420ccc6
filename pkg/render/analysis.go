package render

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
)

// humanAnalysis writes the Analysis section: each AnalysisRun of the current
// revision (and the one that aborted it), its metrics worst first. The worst
// metric is shown whole — provider, query with arguments resolved (Secret
// values masked), conditions, the counts against each limit (the controller
// fails a metric when a count is greater) and its newest measurements —
// and the others in one line each; with full (--analysis) every metric is
// shown whole with every measurement the run keeps.
func humanAnalysis(b *strings.Builder, rep *diagnose.Report, s Styles, full bool) {
	if len(rep.AnalysisRuns) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s\n", s.Title.Render("Analysis"))
	hidden := 0
	for _, r := range rep.AnalysisRuns {
		head := fmt.Sprintf("  %s %s", r.Words(), phaseWord(r.Phase, s))
		if r.Terminated {
			head += " (terminated)"
		}
		head += s.Dim.Render(" — " + r.Role)
		if r.DecidedBy != "" {
			head += s.Dim.Render(", decided by metric " + r.DecidedBy)
		}
		if r.ResultsOverwritten {
			head += s.Dim.Render(" (" + r.DecidingLimit + " per the run's message; its metric results were written over after)")
		}
		b.WriteString(head + "\n")
		if r.Message != "" {
			fmt.Fprintf(b, "    %s\n", r.Message)
		}
		for i, m := range worstFirst(r) {
			if full || i == 0 {
				hidden += humanMetric(b, m, s, full)
				continue
			}
			line := fmt.Sprintf("    %s  %s  %s  %s", s.Bold.Render(m.Name), m.Provider, phaseWord(m.Phase, s), s.Dim.Render(metricCounts(m)))
			if m.DryRun {
				line += "  dryRun"
			}
			b.WriteString(line + "\n")
			hidden++
		}
	}
	if hidden > 0 {
		fmt.Fprintf(b, "  %s\n", s.Dim.Render("--analysis shows every metric and measurement; -o json carries them all"))
	}
}

// humanMetric writes one metric whole and returns 1 if it left
// measurements out (the short view shows the newest ShownMeasurements).
func humanMetric(b *strings.Builder, m diagnose.MetricView, s Styles, full bool) int {
	line := fmt.Sprintf("    %s  %s  %s", s.Bold.Render(m.Name), m.Provider, phaseWord(m.Phase, s))
	if m.DryRun {
		line += "  dryRun"
	}
	if m.DecidedBy != "" {
		line += " (" + m.DecidedBy + ")"
	}
	b.WriteString(line + "\n")
	if m.Query != "" {
		fmt.Fprintf(b, "      query  %s\n", m.Query)
	}
	if m.SuccessCondition != "" {
		fmt.Fprintf(b, "      successCondition  %s\n", m.SuccessCondition)
	}
	if m.FailureCondition != "" {
		fmt.Fprintf(b, "      failureCondition  %s\n", m.FailureCondition)
	}
	var limits []string
	for _, l := range m.Limits {
		t := l.String()
		if l.Exceeded {
			t = s.Crit.Render(t)
		}
		limits = append(limits, t)
	}
	if len(limits) > 0 {
		fmt.Fprintf(b, "      %s\n", strings.Join(limits, "; "))
	}
	if len(m.Measurements) == 0 && m.Dropped == 0 {
		fmt.Fprintf(b, "      %s\n", s.Dim.Render("no measurement"))
		return 0
	}
	counts := "measurements: " + metricCounts(m)
	ms, left := m.Measurements, 0
	if !full && len(ms) > diagnose.ShownMeasurements {
		left = 1
		ms = ms[len(ms)-diagnose.ShownMeasurements:]
	}
	switch {
	case len(ms) < len(m.Measurements):
		counts += fmt.Sprintf("; the newest %d of the %d the run keeps:", len(ms), len(m.Measurements))
	case m.Dropped > 0:
		counts += fmt.Sprintf("; the %d the run keeps:", len(ms))
	}
	fmt.Fprintf(b, "      %s\n", counts)
	for _, x := range ms {
		at := "-"
		if x.At != nil {
			at = x.At.UTC().Format("2006-01-02 15:04:05Z")
		}
		line := fmt.Sprintf("        %s  %-12s %s", at, x.Phase, x.Value)
		if x.Message != "" {
			line += "  " + x.Message
		}
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	return left
}

func metricCounts(m diagnose.MetricView) string {
	return fmt.Sprintf("%d successful, %d failed, %d inconclusive, %d error", m.Successful, m.Failed, m.Inconclusive, m.Error)
}

func phaseWord(phase string, s Styles) string {
	switch phase {
	case "Failed", "Error":
		return s.Crit.Render(phase)
	case "Inconclusive":
		return s.Warn.Render(phase)
	case "Successful":
		return s.OK.Render(phase)
	}
	return phase
}

// phaseOrder ranks metric phases from worst, as the controller combines
// them into the run's phase (Failed over Error over Inconclusive …).
var phaseOrder = map[string]int{"Failed": 0, "Error": 1, "Inconclusive": 2, "Pending": 3, "Running": 4, "Successful": 5}

// worstFirst orders a run's metrics: the one that decided the run, then
// the counted metrics by phase from worst, then dryRun ones; the spec's
// order breaks ties.
func worstFirst(r diagnose.AnalysisRunView) []diagnose.MetricView {
	ms := append([]diagnose.MetricView(nil), r.Metrics...)
	rank := func(m diagnose.MetricView) int {
		n, ok := phaseOrder[m.Phase]
		if !ok {
			n = 3
		}
		if m.Name == r.DecidedBy {
			n = -1
		}
		if m.DryRun {
			n += 10
		}
		return n
	}
	sort.SliceStable(ms, func(i, j int) bool { return rank(ms[i]) < rank(ms[j]) })
	return ms
}

// humanExperiments writes the Experiments of the current revision: phase,
// when the duration started and ends, each template's pods and each
// analysis.
func humanExperiments(b *strings.Builder, rep *diagnose.Report, s Styles) {
	if len(rep.Experiments) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s\n", s.Title.Render("Experiments"))
	for _, e := range rep.Experiments {
		head := fmt.Sprintf("  Experiment %s %s", e.Name, phaseWord(e.Phase, s))
		if e.Current {
			head += s.Dim.Render(" — the current step's")
		}
		switch {
		case e.EndsAt != nil:
			head += fmt.Sprintf("  duration %s from %s: ends %s", e.Duration, e.AvailableAt.UTC().Format("15:04:05Z"), e.EndsAt.UTC().Format("2006-01-02 15:04:05Z"))
		case e.Duration != "":
			head += fmt.Sprintf("  duration %s, from when every template's pods are available", e.Duration)
		default:
			head += "  no duration"
		}
		b.WriteString(head + "\n")
		if e.Message != "" {
			fmt.Fprintf(b, "    %s\n", e.Message)
		}
		for _, t := range e.Templates {
			line := fmt.Sprintf("    template %-16s %d/%d available  %s", t.Name, t.Available, t.Replicas, t.Status)
			if t.Message != "" {
				line += "  " + t.Message
			}
			b.WriteString(line + "\n")
		}
		for _, a := range e.Analyses {
			line := fmt.Sprintf("    analysis %-16s %s", a.Name, phaseWord(a.Phase, s))
			if a.Required {
				line += s.Dim.Render("  requiredForCompletion")
			}
			if a.Run != "" {
				line += s.Dim.Render("  AnalysisRun " + a.Run)
			}
			if a.Message != "" {
				line += "  " + a.Message
			}
			b.WriteString(line + "\n")
		}
	}
}
