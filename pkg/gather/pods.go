package gather

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/rolloutdoctor/rolloutdoctor/internal/par"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// podSet is a workload's pods in both forms: unstructured for the snapshot
// and typed for the analysis. A Rollout's pods are the one read that grows
// with its size, so they are decoded once: from protobuf into structs when
// a typed client is there, with only their metadata as unstructured (the
// snapshot derives the rest when it writes them out).
type podSet struct {
	objs  []*unstructured.Unstructured
	typed []*corev1.Pod
	stubs bool // objs hold metadata only
}

// typedMap maps each unstructured pod to its typed form, for
// snapshot.NewTyped.
func (p *podSet) typedMap() map[*unstructured.Unstructured]snapshot.Decoded {
	m := make(map[*unstructured.Unstructured]snapshot.Decoded, len(p.objs))
	for i, u := range p.objs {
		if p.typed[i] != nil {
			m[u] = snapshot.Decoded{Obj: p.typed[i], Stub: p.stubs}
		}
	}
	return m
}

// listPods reads the pods selected in ns in the background, into into; a
// failure becomes a gap. Through r.pods (protobuf, Connect's typed client)
// when set, else through the dynamic client.
func (r *reader) listPods(ns, selector string, into *podSet) {
	if r.pods == nil {
		r.fetch(GVRPod, "Pod", ns, metav1.ListOptions{LabelSelector: selector}, func(list []*unstructured.Unstructured) {
			*into = podsFromUnstructured(list)
		})
		return
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		pods, err := listTypedPods(r.ctx, r.pods, ns, selector)
		if err != nil {
			r.c.gap(GVRPod, ns, "", err)
			return
		}
		*into = podsFromTyped(pods)
	}()
}

// listTypedPods lists with the same page size as listAll.
func listTypedPods(ctx context.Context, pc corev1client.PodsGetter, ns, selector string) ([]corev1.Pod, error) {
	var out []corev1.Pod
	lo := metav1.ListOptions{LabelSelector: selector, Limit: 5000}
	for {
		l, err := pc.Pods(ns).List(ctx, lo)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = l.Items
		} else {
			out = append(out, l.Items...)
		}
		if l.Continue == "" {
			return out, nil
		}
		lo.Continue = l.Continue
	}
}

// podsFromTyped makes the metadata stubs the snapshot indexes pods by.
// managedFields are dropped, as setGVK does for every object read.
func podsFromTyped(pods []corev1.Pod) podSet {
	ps := podSet{objs: make([]*unstructured.Unstructured, len(pods)), typed: make([]*corev1.Pod, len(pods)), stubs: true}
	par.Do(len(pods), func(i int) {
		p := &pods[i]
		p.ManagedFields = nil
		p.APIVersion, p.Kind = "v1", "Pod"
		meta, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&p.ObjectMeta)
		if err != nil {
			return // cannot happen for decoded metadata; the pod is left out rather than half-kept
		}
		ps.objs[i] = &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": "v1", "kind": "Pod", "metadata": meta}}
		ps.typed[i] = p
	})
	return ps.compact()
}

// podsFromUnstructured derives the typed form (the dynamic client's path:
// fakes in tests, library users' own clients).
func podsFromUnstructured(list []*unstructured.Unstructured) podSet {
	ps := podSet{objs: list, typed: make([]*corev1.Pod, len(list))}
	par.Do(len(list), func(i int) {
		p := &corev1.Pod{}
		if runtime.DefaultUnstructuredConverter.FromUnstructured(list[i].Object, p) == nil {
			ps.typed[i] = p
		}
	})
	return ps
}

func (p podSet) compact() podSet {
	out := podSet{objs: p.objs[:0], typed: p.typed[:0], stubs: p.stubs}
	for i, u := range p.objs {
		if u != nil {
			out.objs, out.typed = append(out.objs, u), append(out.typed, p.typed[i])
		}
	}
	return out
}
