package snapshot

import (
	"fmt"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The AnalysisTemplates a Rollout's analysis uses: where its strategy names
// them, and the templates those name in turn (spec.templates), walked as the
// Rollout controller walks them before it reconciles.

// TemplateRef names an AnalysisTemplate, or a ClusterAnalysisTemplate when
// Cluster is set (a reference with clusterScope: true).
type TemplateRef struct {
	Name    string
	Cluster bool
}

// Kind is the reference's kind: AnalysisTemplate or ClusterAnalysisTemplate.
func (r TemplateRef) Kind() string {
	if r.Cluster {
		return "ClusterAnalysisTemplate"
	}
	return "AnalysisTemplate"
}

// String is "AnalysisTemplate NAME".
func (r TemplateRef) String() string { return r.Kind() + " " + r.Name }

func refsOf(list []v1alpha1.AnalysisTemplateRef) []TemplateRef {
	out := make([]TemplateRef, 0, len(list))
	for _, t := range list {
		out = append(out, TemplateRef{Name: t.TemplateName, Cluster: t.IsClusterScope()})
	}
	return out
}

// AnalysisBlock is one place a Rollout's strategy runs analysis from
// templates: a canary analysis step, the canary's background analysis, or
// blue-green pre- or post-promotion analysis.
type AnalysisBlock struct {
	// Type is the rollout-type label the controller gives the block's runs:
	// Step, Background, PrePromotion or PostPromotion.
	Type string
	// Step is a Step block's index in the canary steps.
	Step int
	// Field is the block's path in the Rollout
	// (spec.strategy.canary.steps[2].analysis).
	Field    string
	Analysis *v1alpha1.RolloutAnalysis
}

// Refs are the templates the block names, in order.
func (b AnalysisBlock) Refs() []TemplateRef { return refsOf(b.Analysis.Templates) }

// Gates says whether the block's run holds the update until it completes:
// a step run holds its step, a pre-promotion run the switch of the active
// Service, a post-promotion run the new stable; a background run holds
// nothing.
func (b AnalysisBlock) Gates() bool { return b.Type != v1alpha1.RolloutTypeBackgroundRunLabel }

// AnalysisBlocks lists the Rollout's analysis blocks in spec order: the
// blue-green ones, else the canary steps' and then the background one (the
// controller reads blueGreen first when both strategies are set).
func AnalysisBlocks(ro *v1alpha1.Rollout) []AnalysisBlock {
	var out []AnalysisBlock
	if bg := ro.Spec.Strategy.BlueGreen; bg != nil {
		if bg.PrePromotionAnalysis != nil {
			out = append(out, AnalysisBlock{Type: v1alpha1.RolloutTypePrePromotionLabel, Field: "spec.strategy.blueGreen.prePromotionAnalysis", Analysis: bg.PrePromotionAnalysis})
		}
		if bg.PostPromotionAnalysis != nil {
			out = append(out, AnalysisBlock{Type: v1alpha1.RolloutTypePostPromotionLabel, Field: "spec.strategy.blueGreen.postPromotionAnalysis", Analysis: bg.PostPromotionAnalysis})
		}
		return out
	}
	c := ro.Spec.Strategy.Canary
	if c == nil {
		return nil
	}
	for i, s := range c.Steps {
		if s.Analysis != nil {
			out = append(out, AnalysisBlock{Type: v1alpha1.RolloutTypeStepLabel, Step: i, Field: fmt.Sprintf("spec.strategy.canary.steps[%d].analysis", i), Analysis: s.Analysis})
		}
	}
	if c.Analysis != nil {
		out = append(out, AnalysisBlock{Type: v1alpha1.RolloutTypeBackgroundRunLabel, Field: "spec.strategy.canary.analysis", Analysis: &c.Analysis.RolloutAnalysis})
	}
	return out
}

// Template is one template an analysis block uses.
type Template struct {
	TemplateRef
	Meta *metav1.ObjectMeta
	Spec *v1alpha1.AnalysisTemplateSpec
	// Via is the chain of templates whose spec.templates led to this one;
	// empty for a template the Rollout names itself.
	Via []TemplateRef
}

// Object names the template as reports do: "AnalysisTemplate shop/x",
// "ClusterAnalysisTemplate x".
func (t *Template) Object() string {
	if t.Cluster {
		return t.Kind() + " " + t.Name
	}
	return t.Kind() + " " + t.Meta.Namespace + "/" + t.Name
}

// MissingTemplate is a reference no template answers.
type MissingTemplate struct {
	TemplateRef
	// Via is the chain of templates that led to the reference; empty when
	// the Rollout names it. Index is its position in the list that names it.
	Via   []TemplateRef
	Index int
}

// TemplateWalk is what ResolveTemplates found for one block.
type TemplateWalk struct {
	// Used are the templates found, each once, in the controller's order:
	// namespaced ones, then cluster ones, each in the order first reached.
	Used    []*Template
	Missing []MissingTemplate
	// Cycles are chains of spec.templates that lead back to a template on
	// the way (a → b → a).
	Cycles [][]TemplateRef
	// Unreadable are templates present but not decodable, with why.
	Unreadable map[TemplateRef]string
}

// ResolveTemplates walks refs as the controller does — each template, then
// the templates it lists in spec.templates, depth first — looking each up
// with find (nil: no such template; an error: present but unreadable).
// Unlike the controller, which stops at the first missing template and
// follows a cycle without end, it reports every missing reference and
// stops at a template already on the way.
func ResolveTemplates(refs []TemplateRef, find func(TemplateRef) (*Template, error)) TemplateWalk {
	w := TemplateWalk{}
	seen := map[TemplateRef]bool{}
	var ns, cluster []*Template
	var walk func(refs []TemplateRef, via []TemplateRef)
	walk = func(refs []TemplateRef, via []TemplateRef) {
		for i, r := range refs {
			for j, p := range via {
				if p == r {
					w.Cycles = append(w.Cycles, append(append([]TemplateRef{}, via[j:]...), r))
				}
			}
			if onPath(via, r) {
				continue
			}
			t, err := find(r)
			switch {
			case err != nil:
				if w.Unreadable == nil {
					w.Unreadable = map[TemplateRef]string{}
				}
				w.Unreadable[r] = err.Error()
				continue
			case t == nil:
				w.Missing = append(w.Missing, MissingTemplate{TemplateRef: r, Via: append([]TemplateRef(nil), via...), Index: i})
				continue
			}
			if !seen[r] {
				seen[r] = true
				cp := *t
				cp.Via = append([]TemplateRef(nil), via...)
				if r.Cluster {
					cluster = append(cluster, &cp)
				} else {
					ns = append(ns, &cp)
				}
			}
			walk(refsOf(t.Spec.Templates), append(append([]TemplateRef(nil), via...), r))
		}
	}
	walk(refs, nil)
	w.Used = append(ns, cluster...)
	return w
}

func onPath(via []TemplateRef, r TemplateRef) bool {
	for _, p := range via {
		if p == r {
			return true
		}
	}
	return false
}
