package podcheck

import (
	"fmt"
	"math"
	"time"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// GraceInput is what the grace-period calculator needs. Only P99 is truly
// unknown to the cluster: it is the long-request p99 a person measured
// (access log %DURATION% histogram or APM); everything else is arithmetic.
type GraceInput struct {
	// P99 is the long-request p99; 0 means not given.
	P99 time.Duration
	// LBInterval × LBFall is how long an external load balancer keeps
	// sending after the pod's health check starts failing (0: not given).
	LBInterval time.Duration
	LBFall     int
	// Margin covers the kubelet's SIGTERM delay and measurement error (30 s
	// in docs/incidents.md#grace-period-budget).
	Margin time.Duration
	// IstioDrain is the sidecar's terminationDrainDuration (0: no sidecar).
	IstioDrain time.Duration
}

// Grace is the calculator's result (docs/incidents.md#grace-period-budget):
//
//	DRAIN_TIMEOUT = p99 × 1.2
//	LB_BUFFER     = LB health interval × fall count
//	terminationDrainDuration ≥ DRAIN_TIMEOUT
//	terminationGracePeriodSeconds = max(DRAIN_TIMEOUT + LB_BUFFER, terminationDrainDuration) + margin
//
// Durations are whole seconds, rounded up: the fields they are written to
// are integer seconds.
type Grace struct {
	Known        bool   `json:"known"` // false without --p99: nothing below is computed
	Formula      string `json:"formula"`
	P99          int64  `json:"p99Seconds,omitempty"`
	DrainTimeout int64  `json:"drainTimeoutSeconds,omitempty"`
	LBBuffer     int64  `json:"lbBufferSeconds"`
	Margin       int64  `json:"marginSeconds"`
	// IstioDrain is the current terminationDrainDuration (0: no sidecar);
	// TerminationDrain the recommended one.
	IstioDrain       int64 `json:"istioDrainSeconds,omitempty"`
	TerminationDrain int64 `json:"terminationDrainSeconds,omitempty"`
	// PreStop is the recommended preStop delay: long enough for load
	// balancers to stop sending before the app gets SIGTERM.
	PreStop int64 `json:"preStopSeconds,omitempty"`
	// GracePeriod is the recommended terminationGracePeriodSeconds.
	GracePeriod int64 `json:"terminationGracePeriodSeconds,omitempty"`
	// Steps show the arithmetic with the numbers filled in.
	Steps []string `json:"steps,omitempty"`
	// Assumptions say which inputs were missing and what was used instead.
	Assumptions []string `json:"assumptions,omitempty"`
}

// GraceFormula is the formula the calculator applies, for display.
const GraceFormula = "terminationGracePeriodSeconds = max(DRAIN_TIMEOUT + LB_BUFFER, terminationDrainDuration) + margin; DRAIN_TIMEOUT = p99 × 1.2; LB_BUFFER = LB interval × fall; terminationDrainDuration ≥ DRAIN_TIMEOUT"

// minPreStop is the smallest preStop delay recommended for any Service.
const minPreStop = 5

func ceilSec(d time.Duration) int64 { return int64(math.Ceil(d.Seconds())) }

// CalcGrace applies the formula. Without a p99 it returns Known=false and
// says what to measure: every timeout rests on that one number.
func CalcGrace(in GraceInput) Grace {
	g := Grace{Formula: GraceFormula, Margin: ceilSec(in.Margin), IstioDrain: ceilSec(in.IstioDrain)}
	if in.LBInterval > 0 && in.LBFall > 0 {
		g.LBBuffer = ceilSec(in.LBInterval * time.Duration(in.LBFall))
	} else {
		g.Assumptions = append(g.Assumptions, "LB_BUFFER = 0 s: no --lb-interval/--lb-fall given (an external LB keeps sending for interval × fall after its health check starts failing)")
	}
	if in.P99 <= 0 {
		g.Assumptions = append(g.Assumptions, "no --p99: measure the long-request p99 (access-log duration histogram or APM, p99 not p50); every timeout below rests on it")
		return g
	}
	g.Known = true
	g.P99 = ceilSec(in.P99)
	g.DrainTimeout = ceilSec(time.Duration(float64(in.P99) * 1.2))
	g.Steps = append(g.Steps,
		fmt.Sprintf("DRAIN_TIMEOUT = p99 %d s × 1.2 = %d s", g.P99, g.DrainTimeout),
		fmt.Sprintf("LB_BUFFER = %s = %d s", lbText(in), g.LBBuffer))
	// The preStop delay covers LB_BUFFER, and never less than the few seconds
	// endpoint removal takes to reach kube-proxy and ingress controllers.
	g.PreStop = max(g.LBBuffer, minPreStop)
	if g.PreStop > g.LBBuffer {
		g.Steps = append(g.Steps, fmt.Sprintf("preStop = max(LB_BUFFER, %d s for endpoint removal to reach kube-proxy and ingress controllers) = %d s", minPreStop, g.PreStop))
	} else {
		g.Steps = append(g.Steps, fmt.Sprintf("preStop = LB_BUFFER = %d s", g.PreStop))
	}
	need := g.DrainTimeout + g.PreStop
	dominant := "DRAIN_TIMEOUT + preStop"
	if in.IstioDrain > 0 {
		g.TerminationDrain = max(g.IstioDrain, g.DrainTimeout)
		g.Steps = append(g.Steps, fmt.Sprintf("terminationDrainDuration = max(current %d s, DRAIN_TIMEOUT %d s) = %d s", g.IstioDrain, g.DrainTimeout, g.TerminationDrain))
		if g.TerminationDrain > need {
			need = g.TerminationDrain
			dominant = "terminationDrainDuration"
		}
	}
	g.GracePeriod = need + g.Margin
	if g.TerminationDrain == 0 {
		g.Steps = append(g.Steps, fmt.Sprintf("terminationGracePeriodSeconds = DRAIN_TIMEOUT + preStop + margin = %d + %d + %d = %d s (no sidecar drain)", g.DrainTimeout, g.PreStop, g.Margin, g.GracePeriod))
	} else {
		g.Steps = append(g.Steps, fmt.Sprintf("terminationGracePeriodSeconds = max(DRAIN_TIMEOUT + preStop, terminationDrainDuration) + margin = max(%d + %d, %d) + %d = %d s (%s dominates)", g.DrainTimeout, g.PreStop, g.TerminationDrain, g.Margin, g.GracePeriod, dominant))
	}
	return g
}

func lbText(in GraceInput) string {
	if in.LBInterval > 0 && in.LBFall > 0 {
		return fmt.Sprintf("interval %s × fall %d", in.LBInterval, in.LBFall)
	}
	return "not given"
}

// GraceFor runs the calculator with the workload's Istio drain.
func GraceFor(w *snapshot.Workload, in GraceInput) Grace {
	if ok, _ := istioSidecar(w); ok {
		in.IstioDrain, _ = istioDrain(w)
	}
	return CalcGrace(in)
}
