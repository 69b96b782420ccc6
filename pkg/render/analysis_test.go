package render

import (
	"strings"
	"testing"

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
