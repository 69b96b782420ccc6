package render

import (
	"strings"
	"testing"
	"time"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
)

// The short view leads with the metric that decided the run, then the
// counted metrics from the worst phase, dryRun metrics last; only the first
// is shown whole, with its newest measurements.
func TestAnalysisWorstMetricFirst(t *testing.T) {
	ms := func(n int) []diagnose.MeasurementView {
		var out []diagnose.MeasurementView
		for i := 0; i < n; i++ {
			out = append(out, diagnose.MeasurementView{Phase: "Error", Message: "m" + string(rune('a'+i))})
		}
		return out
	}
	run := diagnose.AnalysisRunView{Name: "r", Phase: "Error", DecidedBy: "errs", Metrics: []diagnose.MetricView{
		{Name: "fine", Phase: "Successful"},
		{Name: "dry", Phase: "Failed", DryRun: true},
		{Name: "inc", Phase: "Inconclusive"},
		{Name: "errs", Phase: "Error", Measurements: ms(5)},
	}}
	var names []string
	for _, m := range worstFirst(run) {
		names = append(names, m.Name)
	}
	if got := strings.Join(names, " "); got != "errs inc fine dry" {
		t.Fatalf("order %q", got)
	}
	rep := &diagnose.Report{AnalysisRuns: []diagnose.AnalysisRunView{run}}
	var short, full strings.Builder
	humanAnalysis(&short, rep, NewStyles(&short, false), false)
	humanAnalysis(&full, rep, NewStyles(&full, false), true)
	s, f := short.String(), full.String()
	if strings.Contains(s, "  ma\n") || !strings.Contains(s, "  me\n") || !strings.Contains(s, "the newest 3 of the 5") || !strings.Contains(s, "--analysis") {
		t.Errorf("short view:\n%s", s)
	}
	if strings.Index(s, "errs") > strings.Index(s, "inc") {
		t.Errorf("the deciding metric is not first:\n%s", s)
	}
	if !strings.Contains(f, "  ma\n") || strings.Contains(f, "--analysis") || strings.Count(f, "no measurement") != 3 {
		t.Errorf("full view:\n%s", f)
	}
}

// The Experiments section: phase, when the duration ends, each template's
// pods and each analysis.
func TestExperimentsSection(t *testing.T) {
	at := time.Date(2026, 12, 6, 17, 43, 51, 0, time.UTC)
	end := at.Add(time.Hour)
	rep := &diagnose.Report{Experiments: []diagnose.ExperimentView{
		{Name: "app-5d-2-1", Phase: "Running", Current: true, Duration: "1h", AvailableAt: &at, EndsAt: &end,
			Templates: []diagnose.ExperimentTemplate{{Name: "canary", Replicas: 2, Available: 1, Status: "Progressing"}},
			Analyses:  []diagnose.ExperimentAnalysis{{Name: "smoke", Run: "app-5d-2-1-smoke", Phase: "Running", Required: true}}},
		{Name: "app-5d-2-2", Phase: "Pending"},
	}}
	var b strings.Builder
	humanExperiments(&b, rep, NewStyles(&b, false))
	for _, want := range []string{
		"Experiment app-5d-2-1 Running — the current step's  duration 1h from 17:43:51Z: ends 2026-12-06 18:43:51Z\n",
		"    template canary           1/2 available  Progressing\n",
		"    analysis smoke            Running  requiredForCompletion  AnalysisRun app-5d-2-1-smoke\n",
		"Experiment app-5d-2-2 Pending  no duration\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the section lacks %q:\n%s", want, b.String())
		}
	}
	var none strings.Builder
	humanExperiments(&none, &diagnose.Report{}, NewStyles(&none, false))
	if none.Len() != 0 {
		t.Errorf("a report without Experiments has a section: %q", none.String())
	}
}
