package diagnose

import (
	"fmt"
	"sort"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// Scope says what a rule needs to run.
type Scope string

// Scopes.
const (
	// Live rules need the Rollout's status and its ReplicaSets.
	Live Scope = "live"
	// Static rules need only manifests; lint runs them too.
	Static Scope = "static"
)

// Area says what a rule looks at.
type Area string

// Areas.
const (
	// AreaRollout rules read the Rollout's steps, status and ReplicaSets.
	AreaRollout Area = ""
	// AreaPods rules read the pod template, pods and traffic path; they run
	// for Deployments too (the pods command).
	AreaPods Area = "pods"
)

// Rule is one check. IDs are permanent: they are what users suppress and
// search for, so a rule may be reworded but never renumbered.
type Rule struct {
	ID       string
	Name     string // short kebab-case name, also permanent
	Title    string
	Severity Severity // the usual severity; a finding may lower or raise it
	Scope    Scope
	Area     Area
	// Why is the long explanation (markdown), What to do in Remedy.
	Why    string
	Remedy string
	// Escape names the way out that applies when this fires during an incident.
	Escape string
	// Facts are the controller facts the rule rests on, cited per version by explain.
	Facts []upstream.Key
	// Sources are the incidents and documents the rule comes from.
	Sources []string
	check   func(*Context, *Rule) []Finding
}

// Context is what a rule sees: the snapshot view, the version, the model.
type Context struct {
	View     *snapshot.View
	Version  model.ControllerVersion
	Analysis model.Analysis
	// W is the workload the pod checks read (for a Rollout, its own).
	W *snapshot.Workload
	// Pods holds the grace calculator's inputs (--p99, --lb-interval, …).
	Pods GraceInput
	ro   *v1alpha1.Rollout
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

func (r *Rule) finding(msg string) Finding {
	return Finding{ID: r.ID, Name: r.Name, Severity: r.Severity, Message: msg, Remediation: r.Remedy, Escape: r.Escape}
}

// PodCheck reports whether a finding comes from a pod check (AreaPods).
func (f Finding) PodCheck() bool {
	r, ok := RuleByID(f.ID)
	return ok && r.Area == AreaPods
}

// Rules returns the registry in ID order.
func Rules() []*Rule {
	out := append([]*Rule(nil), registry...)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// RuleByID finds a rule by ID or name.
func RuleByID(id string) (*Rule, bool) {
	for _, r := range registry {
		if strings.EqualFold(r.ID, id) || strings.EqualFold(r.Name, id) {
			return r, true
		}
	}
	return nil, false
}

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

// SafePods is the seed-000 limit: the largest Rollout whose minPods canary
// pods can carry weight w% — minPods ÷ (w/100) — (0 when w is 0 or no minPods).
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
