//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
)

func init() {
	scenarios = append(scenarios, scenario{"controller-errors-args", argsError})
}

// argsError: analysis arguments that have no value. The controller reports
// neither as a Warning Event of its own, so RD159 must stay quiet and
// another rule say it:
//
//  1. The step's template declares an argument (region) that neither it nor
//     the Rollout gives a value: the controller's validation of the
//     Rollout's references merges the arguments, finds args.region without
//     a value and rejects the Rollout — an InvalidSpec condition, no Event,
//     no AnalysisRun (RD113 quotes the condition; the rules that read the
//     spec, RD212 among them, stay quiet on a spec the controller rejects).
//  2. The template then takes region from a Secret that does not exist:
//     validation passes (a valueFrom stands for a value), the step's
//     AnalysisRun is created and the analysis controller, reading the
//     Secret before measuring, ends it in Error — the Rollout's Warning
//     Events are AnalysisRunError and RolloutAborted, which RD124 reads.
func argsError(t *testing.T, h *harness) {
	s := h.metricServer(func(int) reply { return value("0.99") })
	m := webMetric{interval: "1s", count: 2, success: "result >= 0.95"}
	tmpl := func(region string) string {
		y := h.templateYAML(s, m)
		return strings.Replace(y, "  - name: hash\n", "  - name: hash\n  - {name: region"+region+"}\n", 1)
	}
	h.apply(tmpl(""))
	h.apply(h.analysisRolloutYAML("a", "[{setWeight: 50}, {pause: {}}]", false))
	h.revisionAHealthy()
	h.apply(h.analysisRolloutYAML("b", stepAnalysis, false))
	h.checkError("the step's template declares an argument nothing gives a value (args.region)", "InvalidSpec", "RD113", "args.region was not resolved")
	if warnings := h.warningEvents(); strings.Contains(warnings, "resolve") {
		t.Errorf("a Warning Event names the argument: %s", warnings)
	}
	if n := len(h.runs()); n != 0 {
		t.Errorf("the controller created %d AnalysisRun(s) for a Rollout it rejects", n)
	}

	h.apply(tmpl(", valueFrom: {secretKeyRef: {name: region, key: name}}"))
	ar := s.waitRun(h, "the step's AnalysisRun in Error", v1alpha1.RolloutTypeStepLabel, 90*time.Second, func(ar *v1alpha1.AnalysisRun) bool {
		return ar.Status.Phase == v1alpha1.AnalysisPhaseError
	})
	_, _, s.hash, _, _ = h.status()
	if !strings.Contains(ar.Status.Message, `secrets "region" not found`) || len(s.Hits()) != 0 {
		t.Errorf("the run ended %s %q after %d measurement(s); want Error on the missing Secret before measuring", ar.Status.Phase, ar.Status.Message, len(s.Hits()))
	}
	h.checkError(fmt.Sprintf("the argument's Secret does not exist: AnalysisRun %s ends in Error", strings.Replace(ar.Name, s.hash, "B", 1)),
		"AnalysisRunError", "RD124", `secrets "region" not found`)
	// The Rollout's own Warnings: the run's Error and the abort it causes.
	var reasons string
	h.waitFor("the abort's Warning Event", 30*time.Second, func() bool {
		reasons = h.kubectl("-n", h.ns, "get", "events", "--field-selector", "type=Warning,involvedObject.kind=Rollout",
			"-o", `jsonpath={range .items[*]}{.reason}: {.message}{"\n"}{end}`)
		return strings.Contains(reasons, "RolloutAborted: ")
	})
	for _, l := range strings.Split(strings.TrimSpace(reasons), "\n") {
		if r, _, _ := strings.Cut(l, ":"); r != "AnalysisRunError" && r != "RolloutAborted" {
			t.Errorf("an unexpected Warning Event on the Rollout: %s", l)
		}
	}
	s.record(h, "controller error: the Rollout's Warning Events when its AnalysisRun's argument cannot be resolved", "AnalysisRunError, RolloutAborted; no RD159",
		strings.ReplaceAll(strings.TrimSpace(reasons), "\n", " / "))
}

// warningEvents are the messages of the namespace's Warning Events, one a
// line, with their reasons.
func (h *harness) warningEvents() string {
	return h.kubectl("-n", h.ns, "get", "events", "--field-selector", "type=Warning",
		"-o", `jsonpath={range .items[*]}{.reason}: {.message}{"\n"}{end}`)
}
