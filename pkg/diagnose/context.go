package diagnose

import (
	"fmt"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/router"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// Context is what a Rollout check sees: the snapshot view, the controller
// version and the model's analysis. The pods are podcheck's.
type Context struct {
	View     *snapshot.View
	Version  model.ControllerVersion
	Analysis model.Analysis
	// Router is what the traffic router's objects really say (nil without
	// traffic routing).
	Router *router.State
	ro     *v1alpha1.Rollout
	runs   []AnalysisRunView
	// experiments are the current revision's Experiments (experiments).
	experiments []ExperimentView
	// uses are the Rollout's analysis blocks with their templates, walked
	// on first use (analysisUses).
	uses []analysisUse
	// churn is the fights the watch's History shows at this read, by
	// object (nil outside diagnose --watch).
	churn map[string]*Churn
	// routed is routerObjects' list, made on first use.
	routed []router.Object
	// restart is restartOf's answer, made on first use.
	restart *restartMemo
}

func (c *Context) obj() string { return "Rollout " + c.ro.Namespace + "/" + c.ro.Name }

func (c *Context) cites(keys ...upstream.Key) []upstream.Cite {
	out := make([]upstream.Cite, 0, len(keys))
	for _, k := range keys {
		out = append(out, upstream.At(k, c.Version.Assumed))
	}
	return out
}

func (c *Context) canary() *v1alpha1.CanaryStrategy { return c.ro.Spec.Strategy.Canary }

func pct(w int32) string { return fmt.Sprintf("%d%%", w) }

// lastSetWeight returns the last setWeight value in the steps and its index.
func lastSetWeight(steps []v1alpha1.CanaryStep) (int32, int) {
	for i := len(steps) - 1; i >= 0; i-- {
		if steps[i].SetWeight != nil {
			return *steps[i].SetWeight, i
		}
	}
	return 0, -1
}

func setWeights(steps []v1alpha1.CanaryStep) []int32 {
	var out []int32
	for _, s := range steps {
		if s.SetWeight != nil {
			out = append(out, *s.SetWeight)
		}
	}
	return out
}

// SafePods is the safe-pods limit (docs/incidents.md, "The fix: drop the
// final setWeight 100"): the largest Rollout whose minPods canary pods can
// carry weight w% — minPods ÷ (w/100) — (0 when w is 0 or no minPods).
func SafePods(minPods, weight int32) int32 {
	if weight <= 0 || minPods <= 0 {
		return 0
	}
	return minPods * 100 / weight
}

// maxScale is the largest replica count an autoscaler may set, and who sets it.
func (c *Context) maxScale() (int32, string) {
	var best int32
	who := ""
	for _, h := range c.View.HPAs {
		if h.Spec.MaxReplicas > best {
			best, who = h.Spec.MaxReplicas, "HorizontalPodAutoscaler "+h.Name+" maxReplicas"
		}
	}
	for _, so := range c.View.ScaledObjects {
		if m, ok, _ := nestedInt(so.Object, "spec", "maxReplicaCount"); ok && int32(m) > best {
			best, who = int32(m), "ScaledObject "+so.GetName()+" maxReplicaCount"
		}
	}
	return best, who
}

func nestedInt(obj map[string]interface{}, fields ...string) (int64, bool, error) {
	var cur interface{} = obj
	for _, f := range fields {
		m, ok := cur.(map[string]interface{})
		if !ok {
			return 0, false, nil
		}
		cur, ok = m[f]
		if !ok {
			return 0, false, nil
		}
	}
	switch n := cur.(type) {
	case int64:
		return n, true, nil
	case float64:
		return int64(n), true, nil
	case int:
		return int64(n), true, nil
	}
	return 0, false, nil
}

// ev is rules.Observed, short for the checks' many evidence lines.
func ev(object, field string, value any) rules.Evidence { return rules.Observed(object, field, value) }
