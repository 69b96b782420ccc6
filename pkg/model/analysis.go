package model

import (
	"fmt"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// Exposure is a predicted moment when the canary will carry more traffic
// than its available pods can serve.
type Exposure struct {
	// Weight is the canary's share of traffic (percent of MaxWeight).
	Weight int32 `json:"weight"`
	// CanaryAvailable is how many canary pods will be available at that moment.
	CanaryAvailable int32 `json:"canaryAvailable"`
	// PodsNeeded is what the weight needs: ceil(weight × replicas / max).
	PodsNeeded int32 `json:"podsNeeded"`
	Replicas   int32 `json:"replicas"`
	// When says when, relative to now ("now", "next pass", "when the canary has 1 available pod").
	When string `json:"when"`
	Pass Pass   `json:"pass"`
}

// Analysis is the model's view of one Rollout at one controller version.
type Analysis struct {
	Version  upstream.Version `json:"version"`
	Inputs   Inputs           `json:"-"`
	Window   Window           `json:"rollbackWindow"`
	Next     Pass             `json:"nextPass"`
	MinPods  int32            `json:"effectiveMinPods"`
	Exposure *Exposure        `json:"exposure,omitempty"`
	// Lookahead is the passes after the next one, while the canary ramps,
	// until the weight or the index settles (bounded).
	Lookahead []Pass `json:"-"`
	// Forecast summarises the next pass and the lookahead: the weight the
	// controller will write as the canary becomes available.
	Forecast []Forecast `json:"forecast,omitempty"`
	// BlueGreen is the blue-green model's view, for a blue-green Rollout
	// (Next, Forecast and Exposure are then empty: they are the canary's).
	BlueGreen *BlueGreenAnalysis `json:"blueGreen,omitempty"`
}

// Analyze runs the model for one version.
func Analyze(v *snapshot.View, ver upstream.Version) Analysis {
	in := FromView(v, ver)
	return analyzeInputs(in)
}

func analyzeInputs(in Inputs) Analysis {
	a := Analysis{Version: in.Version, Inputs: in, Window: RollbackWindow(in), MinPods: EffectiveMinPods(in)}
	if in.BG != nil {
		a.BlueGreen = AnalyzeBlueGreen(in)
		if len(in.Invalid) > 0 {
			a.Next = Evaluate(in)
		}
		return a
	}
	a.Next = Evaluate(in)
	a.Forecast = append(a.Forecast, forecastOf(in, a.Next))
	if f, ok := abortScaleDown(in, a.Next); ok {
		a.Forecast = append(a.Forecast, f)
	}
	if !in.TrafficRouted {
		return a
	}
	// Exposure now: the weight after the next pass against the pods available now.
	a.Exposure = exposure(in, a.Next, "on the next pass")
	// Look ahead: apply the pass, then let the canary become available pod
	// by pod (the ReplicaSet controller's job; large sets in bigger strides),
	// and forecast the weight at each count, noting the first pass where the
	// weight outruns the pods.
	cur := Apply(in, a.Next)
	for i := 0; i < 64 && cur.New != nil; i++ {
		if cur.New.Available < cur.New.Spec {
			stride := (cur.New.Spec + 47) / 48
			cur.New.Available = min32(cur.New.Spec, cur.New.Available+stride)
			cur.New.Replicas = cur.New.Spec
		}
		p := Evaluate(cur)
		a.Lookahead = append(a.Lookahead, p)
		a.Forecast = append(a.Forecast, forecastOf(cur, p))
		if a.Exposure == nil {
			a.Exposure = exposure(cur, p, fmt.Sprintf("when the canary has %d available pod(s)", cur.New.Available))
		}
		if p.Promotes || (cur.New.Available >= cur.New.Spec && p.CanaryTarget == cur.New.Spec) {
			break
		}
		cur = Apply(cur, p)
	}
	return a
}

// Forecast is one predicted pass: with the canary at this many available
// pods, the controller writes this weight and sizes the canary to this count.
type Forecast struct {
	// Event, when set, is a timed change rather than a pass that follows
	// availability (the aborted canary's scale-down after its delay).
	Event           string          `json:"event,omitempty"`
	Cites           []upstream.Cite `json:"cites,omitempty"`
	CanaryAvailable int32           `json:"canaryAvailable"`
	Weight          int32           `json:"weight"`
	CanaryTarget    int32           `json:"canaryTarget"`
	StableTarget    int32           `json:"stableTarget"`
	NextStepIndex   int32           `json:"nextStepIndex"`
	Errored         bool            `json:"errored,omitempty"`
	Promotes        bool            `json:"promotes,omitempty"`
}

func forecastOf(in Inputs, p Pass) Forecast {
	f := Forecast{Weight: p.Traffic, CanaryTarget: p.CanaryTarget, StableTarget: p.StableTarget,
		NextStepIndex: p.NextIndex, Errored: p.Errored, Promotes: p.Promotes}
	if in.New != nil {
		f.CanaryAvailable = in.New.Available
	}
	return f
}

// abortScaleDown forecasts the aborted canary's scale-down: the pass keeps
// the canary at its size for abortScaleDownDelaySeconds (30 s by default with
// traffic routing) once the stable is fully available — the controller then
// stamps the scale-down-deadline annotation — and scales it to its computed
// size when the deadline passes. A predictable event, not a guess.
func abortScaleDown(in Inputs, p Pass) (Forecast, bool) {
	if !in.Abort || in.New == nil || p.Errored || in.fullyPromoted() || !in.TrafficRouted {
		// Without trafficRouting the abort scales the canary down at once.
		return Forecast{}, false
	}
	set, d := in.abortDelay()
	if d == nil || (in.DSS && !set) {
		return Forecast{}, false // no delay: the pass itself scales the canary
	}
	target, _ := DesiredCounts(in, nextWeights(in, p.Weight))
	if p.CanaryTarget <= target {
		return Forecast{}, false
	}
	when := fmt.Sprintf("abortScaleDownDelaySeconds (%d s) after the stable is fully available", *d)
	if in.New.ScaleDownDeadline != "" {
		when = "at its scale-down deadline " + in.New.ScaleDownDeadline
	}
	return Forecast{
		Event:  fmt.Sprintf("%s: the aborted canary %s is scaled from %d to %d", when, in.New.Name, p.CanaryTarget, target),
		Cites:  in.cites("df.abort-delay-default", "rs.abort-delay-needs-stable-full", "rs.abort-delay-fallthrough"),
		Weight: p.Traffic, CanaryAvailable: in.New.Available, CanaryTarget: target, StableTarget: p.StableTarget, NextStepIndex: p.NextIndex,
	}, true
}

func exposure(in Inputs, p Pass, when string) *Exposure {
	if in.New == nil || p.Traffic == 0 || in.fullyPromoted() || p.Promotes {
		return nil
	}
	need := WeightToReplicas(in.Replicas, p.Traffic, in.MaxWeight)
	if in.New.Available >= need {
		return nil
	}
	return &Exposure{Weight: p.Traffic, CanaryAvailable: in.New.Available, PodsNeeded: need, Replicas: in.Replicas, When: when, Pass: p}
}

// Differences runs the model for every modeled version and describes where
// their predictions differ from the assumed one. Used when the version is
// not known.
func Differences(v *snapshot.View, assumed upstream.Version) []string {
	base := Analyze(v, assumed)
	var out []string
	for _, ver := range upstream.Modeled {
		if ver == assumed {
			continue
		}
		a := Analyze(v, ver)
		if base.BlueGreen != nil && a.BlueGreen != nil {
			if d := bgDifferences(base.BlueGreen, a.BlueGreen); d != "" {
				out = append(out, string(ver)+": "+d)
			}
			continue
		}
		var d []string
		if a.Next.Weight != base.Next.Weight || a.Next.Errored != base.Next.Errored {
			d = append(d, fmt.Sprintf("next weight %d%% (errored=%v) instead of %d%%", a.Next.Weight, a.Next.Errored, base.Next.Weight))
		}
		if a.Next.NextIndex != base.Next.NextIndex {
			d = append(d, fmt.Sprintf("index %d instead of %d", a.Next.NextIndex, base.Next.NextIndex))
		}
		if (a.Exposure == nil) != (base.Exposure == nil) || (a.Exposure != nil && (a.Exposure.Weight != base.Exposure.Weight || a.Exposure.CanaryAvailable != base.Exposure.CanaryAvailable)) {
			d = append(d, fmt.Sprintf("exposure %s", describeExposure(a.Exposure)))
		}
		if a.MinPods != base.MinPods {
			d = append(d, fmt.Sprintf("effective minPodsPerReplicaSet %d instead of %d", a.MinPods, base.MinPods))
		}
		if len(d) > 0 {
			s := string(ver) + ": "
			for i, x := range d {
				if i > 0 {
					s += "; "
				}
				s += x
			}
			out = append(out, s)
		}
	}
	return out
}

func describeExposure(e *Exposure) string {
	if e == nil {
		return "none"
	}
	return fmt.Sprintf("%d%% on %d of %d pods %s", e.Weight, e.CanaryAvailable, e.Replicas, e.When)
}
