package gather

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// The analysis templates a Rollout uses.
var (
	GVRAnalysisTemplate        = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "analysistemplates"}
	GVRClusterAnalysisTemplate = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "clusteranalysistemplates"}
)

// templateList is one LIST of a template kind: by name, or the read failed
// (its gap is recorded; nothing is then known to be missing).
type templateList struct {
	byName map[string]*unstructured.Unstructured
	ok     bool
}

// analysisTemplates reads the templates the Rollout's analysis reaches, in
// the background: one LIST of the AnalysisTemplates of its namespace and
// one of the ClusterAnalysisTemplates, each only when a reference needs
// that kind — the Rollout's own first, in parallel; the other kind after,
// only when a template's spec.templates names it. A LIST rather than a GET
// per name keeps the request count fixed whatever the templates and their
// nesting. Only the templates reached are kept. A reference nothing answers
// becomes a NotFound gap that names it: the analysis rules read it as "does
// not exist", which the controller rejects the Rollout for; a LIST that
// fails is a gap of its own and says nothing about existence.
func (r *reader) analysisTemplates(ro *v1alpha1.Rollout) {
	blocks := snapshot.AnalysisBlocks(ro)
	if len(blocks) == 0 {
		return
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		lists := map[bool]*templateList{}
		read := func(cluster bool) *templateList {
			gvr, kind, ns := GVRAnalysisTemplate, "AnalysisTemplate", ro.Namespace
			if cluster {
				gvr, kind, ns = GVRClusterAnalysisTemplate, "ClusterAnalysisTemplate", ""
			}
			g := resolve(r.mapper, gvr)
			l := &templateList{byName: map[string]*unstructured.Unstructured{}}
			items, err := listAll(r.ctx, r.dc, g, ns, metav1.ListOptions{})
			if err != nil {
				r.c.gap(g, ns, "", err)
				return l
			}
			for _, u := range items {
				setGVK(u, g, kind)
				l.byName[u.GetName()] = u
			}
			l.ok = true
			return l
		}
		direct := map[bool]bool{}
		for _, b := range blocks {
			for _, ref := range b.Refs() {
				direct[ref.Cluster] = true
			}
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		for cluster := range direct {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l := read(cluster)
				mu.Lock()
				lists[cluster] = l
				mu.Unlock()
			}()
		}
		wg.Wait()
		kept := map[snapshot.TemplateRef]*unstructured.Unstructured{}
		find := func(ref snapshot.TemplateRef) (*snapshot.Template, error) {
			l := lists[ref.Cluster]
			if l == nil { // named only by a template's spec.templates
				l = read(ref.Cluster)
				lists[ref.Cluster] = l
			}
			u := l.byName[ref.Name]
			if u == nil {
				return nil, nil
			}
			t, err := templateOf(ref, u)
			if err == nil {
				kept[ref] = u
			}
			return t, err
		}
		missing := map[snapshot.TemplateRef]bool{}
		for _, b := range blocks {
			for _, m := range snapshot.ResolveTemplates(b.Refs(), find).Missing {
				if lists[m.Cluster].ok {
					missing[m.TemplateRef] = true
				}
			}
		}
		refs := make([]snapshot.TemplateRef, 0, len(kept))
		for ref := range kept {
			refs = append(refs, ref)
		}
		sort.Slice(refs, func(i, j int) bool { return refs[i].String() < refs[j].String() })
		for _, ref := range refs {
			r.c.add(kept[ref])
		}
		for ref := range missing {
			r.missingTemplate(ro.Namespace, ref, lists[ref.Cluster])
		}
	}()
}

// templateOf reads a listed template's spec.
func templateOf(ref snapshot.TemplateRef, u *unstructured.Unstructured) (*snapshot.Template, error) {
	if ref.Cluster {
		t := &v1alpha1.ClusterAnalysisTemplate{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, t); err != nil {
			return nil, err
		}
		return &snapshot.Template{TemplateRef: ref, Meta: &t.ObjectMeta, Spec: &t.Spec}, nil
	}
	t := &v1alpha1.AnalysisTemplate{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, t); err != nil {
		return nil, err
	}
	return &snapshot.Template{TemplateRef: ref, Meta: &t.ObjectMeta, Spec: &t.Spec}, nil
}

// missingTemplate records a referenced template that the LIST of its kind
// did not return, with the names it did (a typo shows).
func (r *reader) missingTemplate(ns string, ref snapshot.TemplateRef, l *templateList) {
	gvr, where := GVRAnalysisTemplate, "namespace "+ns
	if ref.Cluster {
		gvr, ns, where = GVRClusterAnalysisTemplate, "", "the cluster"
	}
	names := make([]string, 0, len(l.byName))
	for n := range l.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	has := fmt.Sprintf("%s has none", where)
	if len(names) > 0 {
		has = fmt.Sprintf("%s has %s", where, strings.Join(names, ", "))
	}
	err := apierrors.NewNotFound(gvr.GroupResource(), ref.Name)
	err.ErrStatus.Message = fmt.Sprintf("%s %q, which the Rollout's analysis names, does not exist (%s)", ref.Kind(), ref.Name, has)
	r.c.gap(gvr, ns, ref.Name, err)
}
