package render

import (
	"fmt"
	"strings"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
)

// humanAnalysis writes the Analysis section: each AnalysisRun of the current
// revision (and the one that aborted it), metric by metric — provider, query
// with arguments resolved (Secret values masked), conditions, the counts
// against each limit (the controller fails a metric when a count is greater),
// and the newest measurements (-o json carries all the run keeps).
func humanAnalysis(b *strings.Builder, rep *diagnose.Report, s Styles) {
	if len(rep.AnalysisRuns) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s\n", s.Title.Render("Analysis"))
	for _, r := range rep.AnalysisRuns {
		phase := r.Phase
		switch phase {
		case "Failed", "Error":
			phase = s.Crit.Render(phase)
		case "Inconclusive":
			phase = s.Warn.Render(phase)
		case "Successful":
			phase = s.OK.Render(phase)
		}
		head := fmt.Sprintf("  %s %s", r.Words(), phase)
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
		for _, m := range r.Metrics {
			line := fmt.Sprintf("    %s  %s  %s", s.Bold.Render(m.Name), m.Provider, m.Phase)
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
			fmt.Fprintf(b, "      %s\n", strings.Join(limits, "; "))
			total := len(m.Measurements)
			if total == 0 {
				fmt.Fprintf(b, "      %s\n", s.Dim.Render("no measurement"))
				continue
			}
			counts := fmt.Sprintf("measurements: %d successful, %d failed, %d inconclusive, %d error", m.Successful, m.Failed, m.Inconclusive, m.Error)
			shown := m.Shown()
			if len(shown) < total {
				counts += fmt.Sprintf("; the last %d of the %d kept:", len(shown), total)
			}
			fmt.Fprintf(b, "      %s\n", counts)
			for _, x := range shown {
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
		}
	}
}
