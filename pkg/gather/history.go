package gather

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// A stream is one LIST (and, for record, WATCH) of what a Rollout's history
// is made of: the Rollout itself, its ReplicaSets, AnalysisRuns, Events,
// the Services and traffic objects it names. Each keeps its objects'
// managedFields, which say who wrote what and when (the author of each
// change), except where nobody acts but controllers and the objects are
// many (pods, EndpointSlices, Events).
type stream struct {
	// resource names the stream in a record ("replicasets.apps").
	resource string
	gvr      schema.GroupVersionResource
	kind     string
	lo       metav1.ListOptions
	// keep selects the stream's objects among those the LIST returns.
	keep func(*unstructured.Unstructured) bool
	// managed keeps managedFields.
	managed bool
}

// historyStreams are the streams of one Rollout. record adds its pods and
// the EndpointSlices of the Services it names (the timeline of what the
// cluster holds has no pod history to read), and Experiments even when the
// Rollout has no experiment step yet: a record outlives its first read,
// and a step added while it runs starts an Experiment it must see.
func historyStreams(ro *v1alpha1.Rollout, mapper meta.RESTMapper, record bool) []stream {
	name := ro.Name
	selector := selectorString(ro.Spec.Selector)
	owned := ownedBy("Rollout", name)
	out := []stream{
		{gvr: GVRRollout, kind: "Rollout", lo: metav1.ListOptions{FieldSelector: "metadata.name=" + name}, managed: true},
		{gvr: GVRReplicaSet, kind: "ReplicaSet", lo: metav1.ListOptions{LabelSelector: selector}, keep: owned, managed: true},
		{gvr: GVRAnalysisRun, kind: "AnalysisRun", keep: owned, managed: true},
		{gvr: GVREvent, kind: "Event", keep: aboutRollout(name)},
	}
	if record || hasExperiments(ro) {
		// As diagnose reads them: a Rollout with an experiment step.
		out = append(out, stream{gvr: GVRExperiment, kind: "Experiment", keep: owned, managed: true})
	}
	refs := snapshot.ReferencedNames(ro)
	named := func(names map[string]bool) func(*unstructured.Unstructured) bool {
		return func(u *unstructured.Unstructured) bool { return names[u.GetName()] }
	}
	vs := map[string]bool{}
	for n := range refs.VirtualServices {
		vs[strings.Split(n, ".")[0]] = true
	}
	for _, r := range []struct {
		gvr   schema.GroupVersionResource
		kind  string
		names map[string]bool
	}{
		{GVRService, "Service", refs.Services},
		{GVRVirtualService, "VirtualService", vs},
		{GVRDestRule, "DestinationRule", refs.DestinationRules},
		{GVRIngress, "Ingress", refs.Ingresses},
		{GVRTrafficSplit, "TrafficSplit", refs.TrafficSplits},
		{GVRHTTPRoute, "HTTPRoute", refs.HTTPRoutes},
	} {
		if len(r.names) > 0 {
			out = append(out, stream{gvr: resolve(mapper, r.gvr), kind: r.kind, keep: named(r.names), managed: true})
		}
	}
	if record {
		out = append(out, stream{gvr: GVRPod, kind: "Pod", lo: metav1.ListOptions{LabelSelector: selector}})
		if len(refs.Services) > 0 {
			out = append(out, stream{gvr: GVREndpointSlice, kind: "EndpointSlice",
				lo: metav1.ListOptions{LabelSelector: "kubernetes.io/service-name in (" + strings.Join(sortedKeys(refs.Services), ",") + ")"}})
		}
	}
	for i := range out {
		out[i].resource = resourceName(out[i].gvr)
	}
	return out
}

// aboutRollout keeps the Events of a Rollout and of what it owns by name
// (its ReplicaSets and AnalysisRuns are named after it): the controller
// reports on the Rollout, the ReplicaSet controller on the ReplicaSets,
// and the analysis controller on the runs. Pods' Events are left out: a
// Rollout of 2,000 pods has thousands, and the pods' own state says more.
func aboutRollout(name string) func(*unstructured.Unstructured) bool {
	return func(u *unstructured.Unstructured) bool {
		kind, _, _ := unstructured.NestedString(u.Object, "involvedObject", "kind")
		n, _, _ := unstructured.NestedString(u.Object, "involvedObject", "name")
		switch kind {
		case "Rollout":
			return n == name
		case "ReplicaSet", "AnalysisRun", "Experiment":
			return strings.HasPrefix(n, name+"-")
		}
		return false
	}
}

// prepare sets an object's kind (a LIST's items may lack it) and drops
// managedFields unless the stream keeps them.
func (s *stream) prepare(u *unstructured.Unstructured) {
	if u.GetKind() == "" {
		u.SetGroupVersionKind(s.gvr.GroupVersion().WithKind(s.kind))
	}
	if !s.managed {
		u.SetManagedFields(nil)
	}
}

// History reads what the cluster still holds of one Rollout's history: the
// Rollout and its ReplicaSets, AnalysisRuns and Events, the Services and
// traffic objects it names — with managedFields, which say who last wrote
// what and when — and the controller Deployment for the version. It is one
// LIST per kind (the Rollout by field selector), in parallel; what cannot
// be read is a gap, as in a snapshot.
func History(ctx context.Context, dc dynamic.Interface, opt Options) (*snapshot.Snapshot, error) {
	u, err := dc.Resource(GVRRollout).Namespace(opt.Namespace).Get(ctx, opt.Name, metav1.GetOptions{})
	if err != nil {
		return nil, rolloutError(err, opt)
	}
	ro := &v1alpha1.Rollout{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, ro); err != nil {
		return nil, &Error{Msg: fmt.Sprintf("rollout %q: cannot decode: %v", opt.Name, err)}
	}
	c := &collector{}
	var wg sync.WaitGroup
	for _, s := range historyStreams(ro, opt.Mapper, false) {
		if s.kind == "Rollout" {
			s.prepare(u) // read above, with its managedFields
			c.add(u)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			list, err := listAll(ctx, dc, s.gvr, ro.Namespace, s.lo)
			if err != nil {
				c.gap(s.gvr, ro.Namespace, "", err)
				return
			}
			c.listedIn(s.gvr, ro.Namespace)
			for _, o := range list {
				s.prepare(o)
				if s.keep == nil || s.keep(o) {
					c.add(o)
				}
			}
		}()
	}
	if !opt.SkipController {
		wg.Add(1)
		go func() {
			defer wg.Done()
			findController(ctx, dc, c, opt.ControllerNamespace, ro)
		}()
	}
	wg.Wait()
	sort.SliceStable(c.gaps, func(i, j int) bool { return c.gaps[i].String() < c.gaps[j].String() })
	return snapshot.New(opt.header("Rollout", ro.Namespace, ro.Name, c), c.objs), nil
}
