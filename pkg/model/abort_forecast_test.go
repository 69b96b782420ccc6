package model

import (
	"strings"
	"testing"

	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// After an abort the forecast includes the canary's scale-down once the
// abort delay has passed (30 s by default), with its citations — and none
// when abortScaleDownDelaySeconds is 0 (the pass itself scales it).
func TestForecastAfterAbortScalesCanaryDown(t *testing.T) {
	for _, ver := range upstream.Modeled {
		v := exampletest.View(t, exampletest.Incident)
		v.Rollout.Spec.RollbackWindow = nil
		v.Rollout.Status.Abort = true
		a := Analyze(v, ver)
		var ev *Forecast
		for i := range a.Forecast {
			if a.Forecast[i].Event != "" {
				ev = &a.Forecast[i]
			}
		}
		if ev == nil {
			t.Fatalf("%s: no scale-down in the forecast after an abort: %+v", ver, a.Forecast)
		}
		if !strings.Contains(ev.Event, "abortScaleDownDelaySeconds (30 s) after the stable is fully available: the aborted canary checkout-api-5f6c8d7b9a is scaled from") || ev.CanaryTarget != 0 || len(ev.Cites) == 0 {
			t.Errorf("%s: event %q, target %d, %d cites", ver, ev.Event, ev.CanaryTarget, len(ev.Cites))
		}
		zero := int32(0)
		v.Rollout.Spec.Strategy.Canary.AbortScaleDownDelaySeconds = &zero
		for _, f := range Analyze(v, ver).Forecast {
			if f.Event != "" {
				t.Errorf("%s: abortScaleDownDelaySeconds 0 still forecasts %q", ver, f.Event)
			}
		}
	}
}
