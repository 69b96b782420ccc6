package model

import (
	"math"
	"strings"
	"testing"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

func TestConditionLibraryPerVersion(t *testing.T) {
	want := map[upstream.Version]ExprLibrary{"v1.7.2": ExprAntonmedv, "v1.8.2": ExprAntonmedv, "v1.8.3": ExprAntonmedv, "v1.9.3": ExprAntonmedv, "v1.10.2": ExprLang}
	for _, v := range upstream.Modeled {
		w, ok := want[v]
		if !ok {
			t.Fatalf("%s: no expectation: read utils/evaluate/evaluate.go's imports and add one", v)
		}
		if got := ConditionLibrary(v); got != w {
			t.Errorf("%s: %s, want %s", v, got, w)
		}
	}
}

// TestMeasurementPhase runs the controller's truth table through both
// libraries on the values a provider hands over when there is no data: an
// empty Prometheus vector, NaN (0/0), a nil Datadog value.
func TestMeasurementPhase(t *testing.T) {
	nan := math.NaN()
	var nilFloat *float64
	for _, tc := range []struct {
		success, failure string
		result           any
		want             v1alpha1.AnalysisPhase
		err              string
	}{
		{"", "result[0] > 0.05", []float64{0.01}, v1alpha1.AnalysisPhaseSuccessful, ""},
		{"", "result[0] > 0.05", []float64{0.2}, v1alpha1.AnalysisPhaseFailed, ""},
		{"", "result[0] > 0.05", []float64{}, v1alpha1.AnalysisPhaseError, "failureCondition"},
		{"", "result[0] > 0.05", []float64{nan}, v1alpha1.AnalysisPhaseSuccessful, ""},
		{"", "len(result) > 0 && result[0] > 0.05", []float64{}, v1alpha1.AnalysisPhaseSuccessful, ""},
		{"result[0] >= 0.95", "", []float64{nan}, v1alpha1.AnalysisPhaseFailed, ""},
		{"result[0] >= 0.95", "result[0] < 0.9", []float64{nan}, v1alpha1.AnalysisPhaseInconclusive, ""},
		{"result[0] >= 0.95", "result[0] < 0.99", []float64{0.97}, v1alpha1.AnalysisPhaseFailed, ""},
		{"all(result, {# < 0.05})", "", []float64{}, v1alpha1.AnalysisPhaseSuccessful, ""},
		{"result < 0.05", "", nan, v1alpha1.AnalysisPhaseFailed, ""},
		{"", "result > 0.05", nan, v1alpha1.AnalysisPhaseSuccessful, ""},
		{"default(result, 0) < 0.05", "", nilFloat, v1alpha1.AnalysisPhaseSuccessful, ""},
		// The controller compiles against the value's type: with a nil
		// value any comparison with result is a type error, guarded or not.
		{"isNil(result) || result < 0.05", "", nilFloat, v1alpha1.AnalysisPhaseError, "mismatched types"},
		{"", "!isNil(result) && result > 0.05", nilFloat, v1alpha1.AnalysisPhaseError, "mismatched types"},
		{"", "", []float64{}, v1alpha1.AnalysisPhaseSuccessful, ""},
		{"result[0]", "", []float64{1}, v1alpha1.AnalysisPhaseError, "expected bool"},
		{"asInt(result[0]) == 3", "", []float64{3.7}, v1alpha1.AnalysisPhaseSuccessful, ""},
		{"asFloat(result) > 1", "", "x", v1alpha1.AnalysisPhaseError, "successCondition"},
	} {
		for _, v := range upstream.Modeled {
			got, err := MeasurementPhase(v, tc.success, tc.failure, tc.result)
			if got != tc.want || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: success %q failure %q on %#v: %s %v, want %s (error %q)", v, tc.success, tc.failure, tc.result, got, err, tc.want, tc.err)
			}
		}
	}
}

func TestCompileCondition(t *testing.T) {
	for _, v := range upstream.Modeled {
		if err := CompileCondition(v, "len(result) > 0 && result[0] < 0.05"); err != nil {
			t.Errorf("%s: %v", v, err)
		}
		for _, bad := range []string{"result[0] <", "reslt[0] < 0.05", "result[0] < {{args.threshold}}"} {
			if err := CompileCondition(v, bad); err == nil {
				t.Errorf("%s: %q compiled", v, bad)
			}
		}
	}
}

// TestLibrariesDiffer: the two libraries do not accept the same
// conditions. max() over a list is expr-lang's; antonmedv/expr v1.15.5
// rejects it at compile time for a Prometheus vector, so up to v1.9 every
// measurement of such a metric errors, while v1.10 evaluates it — and a
// NaN in the vector then makes max NaN, every comparison false.
func TestLibrariesDiffer(t *testing.T) {
	for _, v := range upstream.Modeled {
		err := CompileConditionFor(v, "max(result) > 0.05", []float64{0})
		old := ConditionLibrary(v) == ExprAntonmedv
		if old != (err != nil) {
			t.Errorf("%s (%s): max over a vector compiles: %v", v, ConditionLibrary(v), err)
		}
		if old {
			continue
		}
		if ph, err := MeasurementPhase(v, "", "max(result) > 0.05", []float64{0.01, math.NaN()}); ph != v1alpha1.AnalysisPhaseSuccessful || err != nil {
			t.Errorf("%s: a NaN in the vector: %s %v", v, ph, err)
		}
	}
}
