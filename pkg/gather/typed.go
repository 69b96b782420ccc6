package gather

import (
	"context"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/rolloutdoctor/rolloutdoctor/internal/par"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// typedSet is a list read in both forms: unstructured for the snapshot and
// typed for the analysis. The reads that grow with a Rollout's size (its
// pods) or a fleet's (its ReplicaSets) are decoded once: from protobuf into
// structs when a typed client is there, with only their metadata as
// unstructured (the snapshot derives the rest when it writes them out).
type typedSet[T any] struct {
	objs  []*unstructured.Unstructured
	typed []*T
	stubs bool // objs hold metadata only
}

// decoded maps each unstructured object to its typed form, for
// snapshot.NewTyped.
func (p *typedSet[T]) decoded(into map[*unstructured.Unstructured]snapshot.Decoded) {
	for i, u := range p.objs {
		if p.typed[i] != nil {
			into[u] = snapshot.Decoded{Obj: p.typed[i], Stub: p.stubs}
		}
	}
}

// keep returns the set reduced to the objects keep accepts.
func (p typedSet[T]) keep(keep func(*T) bool) typedSet[T] {
	out := typedSet[T]{stubs: p.stubs}
	for i, u := range p.objs {
		if p.typed[i] != nil && keep(p.typed[i]) {
			out.objs, out.typed = append(out.objs, u), append(out.typed, p.typed[i])
		}
	}
	return out
}

// object is what a typed API object offers this file.
type object[T any] interface {
	*T
	runtime.Object
	metav1.Object
	metav1.ObjectMetaAccessor
}

// fromTyped makes the metadata stubs the snapshot indexes objects by, on
// every core. managedFields are dropped, as setGVK does for every object
// read.
func fromTyped[T any, PT object[T]](items []*T, apiVersion, kind string) typedSet[T] {
	s := typedSet[T]{objs: make([]*unstructured.Unstructured, len(items)), typed: make([]*T, len(items)), stubs: true}
	par.Do(len(items), func(i int) {
		o := PT(items[i])
		o.SetManagedFields(nil)
		o.GetObjectKind().SetGroupVersionKind(schema.FromAPIVersionAndKind(apiVersion, kind))
		var meta map[string]interface{}
		if om, ok := o.GetObjectMeta().(*metav1.ObjectMeta); ok {
			meta = metaMap(om)
		} else {
			var err error
			if meta, err = runtime.DefaultUnstructuredConverter.ToUnstructured(o.GetObjectMeta()); err != nil {
				return // cannot happen for decoded metadata; the object is left out rather than half-kept
			}
		}
		s.objs[i] = &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": apiVersion, "kind": kind, "metadata": meta}}
		s.typed[i] = items[i]
	})
	return s.compact()
}

// fromUnstructured derives the typed form (the dynamic client's path:
// fakes in tests, library users' own clients).
func fromUnstructured[T any](list []*unstructured.Unstructured) typedSet[T] {
	s := typedSet[T]{objs: list, typed: make([]*T, len(list))}
	par.Do(len(list), func(i int) {
		t := new(T)
		if runtime.DefaultUnstructuredConverter.FromUnstructured(list[i].Object, t) == nil {
			s.typed[i] = t
		}
	})
	return s
}

func (p typedSet[T]) compact() typedSet[T] {
	out := typedSet[T]{objs: p.objs[:0], typed: p.typed[:0], stubs: p.stubs}
	for i, u := range p.objs {
		if u != nil {
			out.objs, out.typed = append(out.objs, u), append(out.typed, p.typed[i])
		}
	}
	return out
}

// pages reads every page that page returns, telling onPage (when set) how
// many items it has so far. Pages are large, 5,000 objects: a Rollout with
// thousands of pods is read in one or two requests (kubectl asks for 500;
// the kinds read here are few and their objects small).
func pages[T any](ctx context.Context, lo metav1.ListOptions, page func(context.Context, metav1.ListOptions) ([]T, string, error), onPage func(int)) ([]T, error) {
	var out []T
	lo.Limit = 5000
	for {
		items, cont, err := page(ctx, lo)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = items
		} else {
			out = append(out, items...)
		}
		if onPage != nil {
			onPage(len(out))
		}
		if cont == "" {
			return out, nil
		}
		lo.Continue = cont
	}
}

// readPods lists the pods selected in ns: through kube (protobuf) when set,
// else through dc.
func readPods(ctx context.Context, r *reader, ns, selector string) (typedSet[corev1.Pod], error) {
	lo := metav1.ListOptions{LabelSelector: selector}
	if r.kube == nil {
		list, err := listAll(ctx, r.dc, GVRPod, ns, lo)
		for _, u := range list {
			setGVK(u, GVRPod, "Pod")
		}
		return fromUnstructured[corev1.Pod](list), err
	}
	pods, err := listAllTyped(ctx, r.kube, nsPath("/api/v1", ns, "pods"), lo, nil, func(p *corev1.Pod) { p.ManagedFields = nil }, nil)
	return fromTyped(pods, "v1", "Pod"), err
}

// readReplicaSets lists the ReplicaSets selected in ns ("" all namespaces),
// as readPods. unmarshal, when set, decodes each from protobuf in place of
// the generated decoder (a fleet's unmarshalFleetReplicaSet).
func readReplicaSets(ctx context.Context, dc dynamic.Interface, kube *Typed, ns string, lo metav1.ListOptions, unmarshal func(*appsv1.ReplicaSet, []byte) error, onPage func(int)) (typedSet[appsv1.ReplicaSet], error) {
	if kube == nil {
		list, err := listPages(ctx, dc, GVRReplicaSet, ns, lo, onPage)
		for _, u := range list {
			setGVK(u, GVRReplicaSet, "ReplicaSet")
		}
		return fromUnstructured[appsv1.ReplicaSet](list), err
	}
	rss, err := listAllTyped(ctx, kube, nsPath("/apis/apps/v1", ns, "replicasets"), lo, unmarshal, func(rs *appsv1.ReplicaSet) { rs.ManagedFields = nil }, onPage)
	return fromTyped(rss, "apps/v1", "ReplicaSet"), err
}

// readControllers lists the Deployments labelled as Argo Rollouts' in every
// namespace and keeps the controllers among them (IsControllerDeployment,
// which reads only metadata). Through kube they are decoded from protobuf
// by the generated code: the analysis reads them typed, and the
// unstructured converter's first Deployment builds its reflection caches
// for the whole pod spec (about 3 ms of CPU), on the path of every
// Rollout's diagnosis in a scan.
func readControllers(ctx context.Context, dc dynamic.Interface, kube *Typed, onPage func(int)) (typedSet[appsv1.Deployment], error) {
	lo := metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=argo-rollouts"}
	var s typedSet[appsv1.Deployment]
	var err error
	if kube == nil {
		var list []*unstructured.Unstructured
		list, err = listPages(ctx, dc, GVRDeployment, "", lo, onPage)
		for _, u := range list {
			setGVK(u, GVRDeployment, "Deployment")
		}
		s = fromUnstructured[appsv1.Deployment](list)
	} else {
		var ds []*appsv1.Deployment
		ds, err = listAllTyped(ctx, kube, "/apis/apps/v1/deployments", lo, nil, func(d *appsv1.Deployment) { d.ManagedFields = nil }, onPage)
		s = fromTyped(ds, "apps/v1", "Deployment")
	}
	if err != nil {
		return typedSet[appsv1.Deployment]{}, err
	}
	return s.keep(func(d *appsv1.Deployment) bool { return snapshot.IsControllerDeployment(d) }), nil
}

// listPods reads the pods selected in ns in the background, into into; a
// failure becomes a gap.
func (r *reader) listPods(ns, selector string, into *typedSet[corev1.Pod]) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		s, err := readPods(r.ctx, r, ns, selector)
		if err != nil {
			r.c.gap(GVRPod, ns, "", err)
			return
		}
		r.c.listedIn(GVRPod, ns)
		*into = s
	}()
}

// listReplicaSets reads the ReplicaSets selected in ns that keep accepts,
// in the background, into into; a failure becomes a gap.
func (r *reader) listReplicaSets(ns, selector string, keep func(*appsv1.ReplicaSet) bool, into *typedSet[appsv1.ReplicaSet]) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		s, err := readReplicaSets(r.ctx, r.dc, r.kube, ns, metav1.ListOptions{LabelSelector: selector}, nil, nil)
		if err != nil {
			r.c.gap(GVRReplicaSet, ns, "", err)
			return
		}
		r.c.listedIn(GVRReplicaSet, ns)
		*into = s.keep(keep)
	}()
}

// ownsReplicaSet keeps ReplicaSets with an owner reference to the named
// owner.
func ownsReplicaSet(kind, name string) func(*appsv1.ReplicaSet) bool {
	return func(rs *appsv1.ReplicaSet) bool {
		for _, o := range rs.OwnerReferences {
			if o.Kind == kind && o.Name == name {
				return true
			}
		}
		return false
	}
}

// readRollouts lists Rollouts in ns ("" all namespaces). With kube, the
// JSON is decoded straight into structs (a CRD has no protobuf) and the
// snapshot holds metadata stubs; without, through dc, leaving the typed
// form to the snapshot (typed stays nil).
func readRollouts(ctx context.Context, dc dynamic.Interface, kube *Typed, ns string, lo metav1.ListOptions, onPage func(int)) (typedSet[v1alpha1.Rollout], error) {
	if kube == nil {
		list, err := listPages(ctx, dc, GVRRollout, ns, lo, onPage)
		for _, u := range list {
			setGVK(u, GVRRollout, "Rollout")
		}
		return typedSet[v1alpha1.Rollout]{objs: list, typed: make([]*v1alpha1.Rollout, len(list))}, err
	}
	path := nsPath("/apis/argoproj.io/v1alpha1", ns, "rollouts")
	ros, err := pages(ctx, lo, func(ctx context.Context, lo metav1.ListOptions) ([]*v1alpha1.Rollout, string, error) {
		return jsonListPage[v1alpha1.Rollout](ctx, kube, path, "the Rollout list", lo)
	}, onPage)
	return fromTyped(ros, "argoproj.io/v1alpha1", "Rollout"), err
}
