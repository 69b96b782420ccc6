package gather

import (
	"context"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// template is an AnalysisTemplate (ns set) or ClusterAnalysisTemplate
// with one metric and, optionally, nested references.
func template(kind, ns, name string, nested ...interface{}) *unstructured.Unstructured {
	spec := map[string]interface{}{
		"args": []interface{}{map[string]interface{}{"name": "service-name"}, map[string]interface{}{"name": "canary-hash"}},
		"metrics": []interface{}{map[string]interface{}{
			"name": name, "successCondition": "len(result) > 0 && result[0] >= 0.95",
			"provider": map[string]interface{}{"prometheus": map[string]interface{}{"query": `up{svc="{{args.service-name}}",hash="{{args.canary-hash}}"}`}},
		}},
	}
	if len(nested) > 0 {
		spec["templates"] = nested
	}
	if kind == "ClusterAnalysisTemplate" {
		spec["args"] = nil
		spec["metrics"].([]interface{})[0].(map[string]interface{})["provider"] = map[string]interface{}{"prometheus": map[string]interface{}{"query": "up"}}
	}
	meta := map[string]interface{}{"name": name}
	if ns != "" {
		meta["namespace"] = ns
	}
	return &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": "argoproj.io/v1alpha1", "kind": kind, "metadata": meta, "spec": spec}}
}

// analysisWorld is the analysis example (its step 2 names AnalysisTemplate
// checkout-slo) with extra objects.
func analysisWorld(t *testing.T, extra ...*unstructured.Unstructured) []runtime.Object {
	objs := exampletest.Objects(t, exampletest.AnalysisAbort, nil)
	for _, u := range extra {
		objs = append(objs, u)
	}
	return objs
}

// gatherCounting gathers payments-api and counts the LISTs of each
// template resource.
func gatherCounting(t *testing.T, objs []runtime.Object, react func(*k8stesting.Fake)) (*snapshot.Snapshot, map[string]int) {
	t.Helper()
	dc := fakeClient(t, objs...)
	var mu sync.Mutex
	lists := map[string]int{}
	dc.PrependReactor("list", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		lists[a.GetResource().Resource]++
		mu.Unlock()
		return false, nil, nil
	})
	if react != nil {
		react(&dc.Fake)
	}
	snap, err := Rollout(context.Background(), dc, Options{Namespace: "shop", Name: "payments-api", SkipController: true})
	if err != nil {
		t.Fatal(err)
	}
	return snap, lists
}

// TestGatherAnalysisTemplates: one LIST per template kind the analysis
// reaches (the cluster one through the namespaced template's
// spec.templates), and only the templates reached are kept.
func TestGatherAnalysisTemplates(t *testing.T) {
	snap, lists := gatherCounting(t, analysisWorld(t,
		template("AnalysisTemplate", "shop", "checkout-slo", map[string]interface{}{"templateName": "latency", "clusterScope": true}),
		template("AnalysisTemplate", "shop", "unrelated"),
		template("ClusterAnalysisTemplate", "", "latency"),
		template("ClusterAnalysisTemplate", "", "other"),
	), nil)
	if lists["analysistemplates"] != 1 || lists["clusteranalysistemplates"] != 1 {
		t.Errorf("lists %v, want one of each template kind", lists)
	}
	var kept []string
	for _, o := range snap.Objects() {
		if strings.HasSuffix(o.GetKind(), "AnalysisTemplate") {
			kept = append(kept, o.GetKind()+"/"+o.GetName())
		}
	}
	if strings.Join(kept, ",") != "AnalysisTemplate/checkout-slo,ClusterAnalysisTemplate/latency" {
		t.Errorf("kept %v", kept)
	}
	v := exampletest.ViewOf(t, snap)
	if v.AnalysisTemplates["checkout-slo"] == nil || v.ClusterAnalysisTemplates["latency"] == nil || len(templateGaps(snap)) != 0 {
		t.Errorf("view templates %v %v, gaps %v", v.AnalysisTemplates, v.ClusterAnalysisTemplates, templateGaps(snap))
	}
}

// TestGatherNoAnalysisReadsNoTemplates: a Rollout without analysis costs
// no template read (the pinned request budget of the incident example
// stays as it was).
func TestGatherNoAnalysisReadsNoTemplates(t *testing.T) {
	dc := fakeClient(t, exampleObjects(t)...)
	var n int
	dc.PrependReactor("*", "*analysistemplates", func(k8stesting.Action) (bool, runtime.Object, error) {
		n++
		return false, nil, nil
	})
	if _, err := Rollout(context.Background(), dc, Options{Namespace: "shop", Name: "checkout-api"}); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d template reads for a Rollout without analysis", n)
	}
}

// TestGatherMissingTemplate: a template the LIST did not return is a
// NotFound gap naming it and what the namespace has; the diagnosis says the
// controller rejects the Rollout. A LIST that is forbidden is a Forbidden
// gap, and nothing is called missing.
func TestGatherMissingTemplate(t *testing.T) {
	cv := model.ControllerVersion{Assumed: "v1.9.3", Exact: true, Source: model.SourceFlag}
	snap, _ := gatherCounting(t, analysisWorld(t, template("AnalysisTemplate", "shop", "checkout-sli")), nil)
	gaps := templateGaps(snap)
	if len(gaps) != 1 || gaps[0].Reason != snapshot.GapNotFound || gaps[0].Name != "checkout-slo" || gaps[0].Resource != "analysistemplates.argoproj.io" ||
		!strings.Contains(gaps[0].Message, "namespace shop has checkout-sli") {
		t.Fatalf("gaps %+v", gaps)
	}
	r := diagnose.Run(exampletest.ViewOf(t, snap), cv, diagnose.Options{})
	if !hasFinding(r, "RD211", diagnose.Critical, "the step 2 analysis names AnalysisTemplate checkout-slo, which does not exist in namespace shop") {
		t.Errorf("findings %+v", r.Findings)
	}

	snap, _ = gatherCounting(t, analysisWorld(t), func(f *k8stesting.Fake) {
		f.PrependReactor("list", "analysistemplates", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "argoproj.io", Resource: "analysistemplates"}, "", nil)
		})
	})
	if gaps := templateGaps(snap); len(gaps) != 1 || gaps[0].Reason != snapshot.GapForbidden || gaps[0].Name != "" {
		t.Fatalf("gaps %+v", gaps)
	}
	r = diagnose.Run(exampletest.ViewOf(t, snap), cv, diagnose.Options{})
	for _, f := range r.Findings {
		if f.ID == "RD211" {
			t.Errorf("a template that could not be read was called missing: %s", f.Message)
		}
	}
}

// templateGaps are the snapshot's gaps about templates (the example has no
// Namespace object: that one is beside the point).
func templateGaps(s *snapshot.Snapshot) []snapshot.Gap {
	var out []snapshot.Gap
	for _, g := range s.Header.Gaps {
		if strings.HasSuffix(g.Resource, "analysistemplates.argoproj.io") {
			out = append(out, g)
		}
	}
	return out
}

func hasFinding(r *diagnose.Report, id string, sev diagnose.Severity, says string) bool {
	for _, f := range r.Findings {
		if f.ID == id && f.Severity == sev && strings.Contains(f.Message, says) {
			return true
		}
	}
	return false
}
