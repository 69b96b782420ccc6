package model

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// Invalid is one spec value the controller's validation rejects. While any
// is present the controller sets the InvalidSpec condition and does not
// reconcile the Rollout: the model predicts nothing else from such a spec
// rather than computing with values the controller never uses.
type Invalid struct {
	Field   string       `json:"field"`
	Value   string       `json:"value"`
	Problem string       `json:"problem"`
	Fact    upstream.Key `json:"fact"`
}

func (i Invalid) String() string { return fmt.Sprintf("%s %s: %s", i.Field, i.Value, i.Problem) }

// RejectedByController is the InvalidSpec condition the controller wrote,
// when Validate finds nothing: the controller's validation also checks the
// objects the Rollout references (AnalysisTemplates, Services, traffic
// objects), which a snapshot does not hold, so its own word is what says
// the spec is rejected (a step analysis whose metric runs indefinitely, a
// template argument the Rollout does not give, a missing template).
func RejectedByController(ro *v1alpha1.Rollout) []Invalid {
	for _, c := range ro.Status.Conditions {
		if c.Type == v1alpha1.InvalidSpec && c.Status == corev1.ConditionTrue {
			fact := upstream.Key("va.references")
			if strings.Contains(c.Message, "runs indefinitely") {
				fact = "va.analysis-indefinite"
			}
			return []Invalid{{Field: "status.conditions[InvalidSpec]", Value: strconv.Quote(c.Message),
				Problem: "the controller's own validation, which also checks the objects the Rollout references, rejects the spec", Fact: fact}}
		}
	}
	return nil
}

// Validate returns the spec values the controller rejects (the checks of
// its validation that change what an on-call engineer sees; identical in
// every modeled version). An empty result means nothing here is rejected,
// not that the controller accepts everything else.
func Validate(ro *v1alpha1.Rollout) []Invalid {
	var out []Invalid
	add := func(field, value, problem string, k upstream.Key) {
		out = append(out, Invalid{Field: field, Value: value, Problem: problem, Fact: k})
	}
	spec := ro.Spec
	if spec.Replicas != nil && *spec.Replicas < 0 {
		add("spec.replicas", fmt.Sprint(*spec.Replicas), "must not be negative", "va.replicas-nonnegative")
	}
	if spec.WorkloadRef == nil {
		switch sel := spec.Selector; {
		case sel == nil:
			add("spec.selector", "absent", "is required (unless spec.workloadRef is set)", "va.selector-required")
		case len(sel.MatchLabels)+len(sel.MatchExpressions) == 0:
			add("spec.selector", "{}", "an empty selector is invalid", "va.selector-empty")
		}
	}
	pds := int32(600)
	if spec.ProgressDeadlineSeconds != nil {
		pds = *spec.ProgressDeadlineSeconds
	}
	if pds <= spec.MinReadySeconds {
		add("spec.progressDeadlineSeconds", fmt.Sprint(pds), fmt.Sprintf("must be greater than minReadySeconds (%d)", spec.MinReadySeconds), "va.progress-deadline")
	}
	c, bg := spec.Strategy.Canary, spec.Strategy.BlueGreen
	switch {
	case c == nil && bg == nil:
		add("spec.strategy", "absent", "needs canary or blueGreen", "va.strategy-required")
	case c != nil && bg != nil:
		add("spec.strategy", "canary and blueGreen", "only one strategy may be set", "va.strategy-one")
	case c != nil:
		out = append(out, validateSteps(c)...)
	}
	return out
}

func validateSteps(c *v1alpha1.CanaryStrategy) []Invalid {
	var out []Invalid
	maxW := int32(100)
	if c.TrafficRouting != nil && c.TrafficRouting.MaxTrafficWeight != nil {
		maxW = *c.TrafficRouting.MaxTrafficWeight
	}
	for i, st := range c.Steps {
		at := fmt.Sprintf("spec.strategy.canary.steps[%d]", i)
		if st.Experiment == nil && st.Pause == nil && st.SetWeight == nil && st.Analysis == nil && st.SetCanaryScale == nil &&
			st.SetHeaderRoute == nil && st.SetMirrorRoute == nil && st.Plugin == nil {
			out = append(out, Invalid{Field: at, Value: "{}", Problem: "a step must set one of setWeight, pause, analysis, experiment, setCanaryScale, setHeaderRoute, setMirrorRoute or plugin", Fact: "va.step-type"})
		}
		if w := st.SetWeight; w != nil && (*w < 0 || *w > maxW) {
			out = append(out, Invalid{Field: at + ".setWeight", Value: fmt.Sprint(*w), Problem: fmt.Sprintf("must be between 0 and %d", maxW), Fact: "va.set-weight-range"})
		}
		tr := c.TrafficRouting
		if st.SetHeaderRoute != nil && (tr == nil || tr.Istio == nil && tr.ALB == nil && tr.Apisix == nil && len(tr.Plugins) == 0) {
			out = append(out, Invalid{Field: at + ".setHeaderRoute", Value: st.SetHeaderRoute.Name, Problem: "needs trafficRouting with Istio, ALB, APISIX or a plugin", Fact: "va.header-route-router"})
		}
		// v1.10 also takes a plugin for a mirror route; without Istio and
		// without plugins every version rejects it.
		if st.SetMirrorRoute != nil && (tr == nil || tr.Istio == nil && len(tr.Plugins) == 0) {
			out = append(out, Invalid{Field: at + ".setMirrorRoute", Value: st.SetMirrorRoute.Name, Problem: "needs trafficRouting with Istio (or, from v1.10, a plugin)", Fact: "va.mirror-route-router"})
		}
		if tr != nil && tr.ManagedRoutes != nil {
			for _, r := range []struct{ field, name string }{{"setHeaderRoute", headerRouteName(st)}, {"setMirrorRoute", mirrorRouteName(st)}} {
				if r.name != "" && !managed(tr.ManagedRoutes, r.name) {
					out = append(out, Invalid{Field: at + "." + r.field, Value: r.name, Problem: "is not in spec.strategy.canary.trafficRouting.managedRoutes", Fact: "va.route-not-managed"})
				}
			}
		}
		if p := st.Pause; p != nil && p.DurationSeconds() < 0 {
			v := p.Duration.String()
			problem := "must not be negative"
			if p.Duration.StrVal != "" && !strings.HasPrefix(v, "-") {
				problem = "is not a duration (a number of seconds, or 30s, 5m, 1h): the controller reads it as -1 and rejects it"
			}
			out = append(out, Invalid{Field: at + ".pause.duration", Value: fmt.Sprintf("%q", v), Problem: problem, Fact: "va.pause-duration"})
		}
	}
	return out
}

func headerRouteName(st v1alpha1.CanaryStep) string {
	if st.SetHeaderRoute == nil {
		return ""
	}
	return st.SetHeaderRoute.Name
}

func mirrorRouteName(st v1alpha1.CanaryStep) string {
	if st.SetMirrorRoute == nil {
		return ""
	}
	return st.SetMirrorRoute.Name
}

func managed(routes []v1alpha1.MangedRoutes, name string) bool {
	for _, r := range routes {
		if r.Name == name {
			return true
		}
	}
	return false
}
