package snapshot

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const withTemplates = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: web, namespace: shop}
spec:
  strategy:
    canary:
      analysis: {templates: [{templateName: slo}]}
      steps:
      - analysis: {templates: [{templateName: loop}, {templateName: broken}, {templateName: gone, clusterScope: true}]}
---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: slo, namespace: shop}
spec:
  templates: [{templateName: latency, clusterScope: true}]
  metrics: [{name: m, provider: {prometheus: {query: up}}}]
---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: loop, namespace: shop}
spec:
  templates: [{templateName: loop}]
---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: broken, namespace: shop}
spec:
  metrics: [{name: m, count: [1]}]
---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: unused, namespace: shop}
---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: elsewhere, namespace: other}
---
apiVersion: argoproj.io/v1alpha1
kind: ClusterAnalysisTemplate
metadata: {name: latency}
---
apiVersion: argoproj.io/v1alpha1
kind: ClusterAnalysisTemplate
metadata: {name: spare}
`

// TestViewTemplates: the view holds the templates the analysis reaches —
// through spec.templates, across kinds — and no other; a template that does
// not decode is set aside with why, not an error of the view; a cycle and a
// missing template are told apart per block.
func TestViewTemplates(t *testing.T) {
	located, _, err := Decode("t", bytes.NewReader([]byte(withTemplates)))
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	for _, l := range located {
		objs = append(objs, l.Object)
	}
	snap := New(Header{Offline: true}, objs)
	ro, err := snap.FindRollout("shop", "web")
	if err != nil {
		t.Fatal(err)
	}
	v, err := snap.View(ro)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.AnalysisTemplates) != 2 || v.AnalysisTemplates["slo"] == nil || v.AnalysisTemplates["loop"] == nil ||
		len(v.ClusterAnalysisTemplates) != 1 || v.ClusterAnalysisTemplates["latency"] == nil {
		t.Errorf("templates %v, cluster %v", v.AnalysisTemplates, v.ClusterAnalysisTemplates)
	}
	if why := v.UnreadableTemplates[TemplateRef{Name: "broken"}]; !strings.Contains(why, "broken") {
		t.Errorf("unreadable %v", v.UnreadableTemplates)
	}
	if strings.Join(v.TemplateNames, ",") != "broken,loop,slo,unused" || strings.Join(v.ClusterTemplateNames, ",") != "latency,spare" {
		t.Errorf("names %v %v", v.TemplateNames, v.ClusterTemplateNames)
	}
	blocks := AnalysisBlocks(v.Rollout)
	if len(blocks) != 2 || blocks[0].Field != "spec.strategy.canary.steps[0].analysis" || blocks[1].Type != "Background" || blocks[0].Gates() == blocks[1].Gates() {
		t.Fatalf("blocks %+v", blocks)
	}
	w := v.Templates(blocks[0])
	if len(w.Used) != 1 || w.Used[0].Name != "loop" || len(w.Cycles) != 1 || len(w.Cycles[0]) != 2 ||
		len(w.Missing) != 1 || w.Missing[0].Name != "gone" || !w.Missing[0].Cluster || w.Missing[0].Index != 2 || len(w.Unreadable) != 1 {
		t.Errorf("step walk %+v", w)
	}
	w = v.Templates(blocks[1])
	if len(w.Used) != 2 || w.Used[0].Name != "slo" || w.Used[1].Name != "latency" || len(w.Used[1].Via) != 1 || len(w.Missing)+len(w.Cycles) != 0 {
		t.Errorf("background walk %+v", w)
	}
}
