package gather

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// exampleObjects loads the bundled example as the cluster's content.
func exampleObjects(t testing.TB) []runtime.Object {
	return exampletest.Objects(t, exampletest.Incident, nil)
}

func fakeClient(t testing.TB, objs ...runtime.Object) *dynfake.FakeDynamicClient {
	return dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), ListKinds(), objs...)
}

func TestGatherRecordsForbiddenAsGap(t *testing.T) {
	dc := fakeClient(t, exampleObjects(t)...)
	dc.PrependReactor("get", "virtualservices", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "networking.istio.io", Resource: "virtualservices"}, "checkout-api", nil)
	})
	var lists []string
	dc.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		lists = append(lists, a.GetNamespace())
		return false, nil, nil
	})
	snap, err := Rollout(context.Background(), dc, Options{Namespace: "shop", Name: "checkout-api"})
	if err != nil {
		t.Fatal(err)
	}
	g, ok := snap.HasGap("virtualservices.networking.istio.io")
	if !ok || g.Reason != snapshot.GapForbidden {
		t.Fatalf("gaps = %+v, want a Forbidden gap for virtualservices", snap.Header.Gaps)
	}
	for _, ns := range lists {
		if ns != "shop" {
			t.Fatalf("pods listed in namespace %q: never list pods cluster-wide", ns)
		}
	}
	kinds := map[string]int{}
	for _, o := range snap.Objects() {
		kinds[o.GetKind()]++
	}
	if kinds["Rollout"] != 1 || kinds["ReplicaSet"] != 2 || kinds["Service"] != 2 || kinds["Deployment"] != 1 || kinds["ScaledObject"] != 1 {
		t.Fatalf("gathered %v", kinds)
	}
}

func TestGatherMissingRollout(t *testing.T) {
	dc := fakeClient(t)
	_, err := Rollout(context.Background(), dc, Options{Namespace: "shop", Name: "nope"})
	if err == nil || !strings.Contains(err.Error(), `rollout "nope" not found in namespace "shop"`) {
		t.Fatalf("err = %v", err)
	}
	dc.PrependReactor("get", "rollouts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "argoproj.io", Resource: "rollouts"}, "x", nil)
	})
	_, err = Rollout(context.Background(), dc, Options{Namespace: "shop", Name: "x"})
	if err == nil || !strings.Contains(err.Error(), "grant get/list on rollouts.argoproj.io") {
		t.Fatalf("err = %v", err)
	}
}

func TestGatherCRDMissingAndPodsForbidden(t *testing.T) {
	dc := fakeClient(t, exampleObjects(t)...)
	dc.PrependReactor("get", "rollouts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewGenericServerResponse(404, "get", schema.GroupResource{Group: "argoproj.io", Resource: "rollouts"}, "", "", 0, false)
	})
	_, err := Rollout(context.Background(), dc, Options{Namespace: "shop", Name: "checkout-api"})
	if err == nil || !strings.Contains(err.Error(), "Argo Rollouts CRDs are not installed") {
		t.Fatalf("CRD missing: err = %v", err)
	}

	dc = fakeClient(t, exampleObjects(t)...)
	dc.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", nil)
	})
	snap, err := Rollout(context.Background(), dc, Options{Namespace: "shop", Name: "checkout-api"})
	if err != nil {
		t.Fatalf("pods forbidden must give a partial snapshot, got %v", err)
	}
	if g, ok := snap.HasGap("pods"); !ok || g.Reason != snapshot.GapForbidden || g.Namespace != "shop" {
		t.Fatalf("gaps = %+v, want a Forbidden gap for pods in shop", snap.Header.Gaps)
	}
}

// TestTypedPodsMatchDynamic: reading pods and ReplicaSets through the typed
// (protobuf) client must give the same snapshot as through the dynamic
// client — the same objects as written out, and the same typed pods and
// ReplicaSets in the view.
func TestTypedPodsMatchDynamic(t *testing.T) {
	// The example's ReplicaSets, with three pods each as the ReplicaSet
	// controller makes them (owner reference, template labels, a node).
	// The ReplicaSets are served as the API server would serve them, from
	// their typed form (with the empty structs a hand-written manifest
	// leaves out, such as resources: {}).
	objs := exampleObjects(t)
	var pods, typedObjs []runtime.Object
	for i, o := range objs {
		u := o.(*unstructured.Unstructured)
		if u.GetKind() != "ReplicaSet" {
			continue
		}
		rs := &appsv1.ReplicaSet{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, rs); err != nil {
			t.Fatal(err)
		}
		typedObjs = append(typedObjs, rs)
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(rs)
		if err != nil {
			t.Fatal(err)
		}
		objs[i] = &unstructured.Unstructured{Object: m}
		for i := 0; i < 3; i++ {
			p := &corev1.Pod{
				TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", rs.Name, i), Namespace: rs.Namespace,
					Labels: rs.Spec.Template.Labels, CreationTimestamp: rs.CreationTimestamp,
					OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptr.To(true)}}},
				Spec: *rs.Spec.Template.Spec.DeepCopy(),
				Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
					{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: rs.CreationTimestamp}}},
			}
			p.Spec.NodeName = fmt.Sprintf("node-%d", i)
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
			if err != nil {
				t.Fatal(err)
			}
			objs, pods = append(objs, &unstructured.Unstructured{Object: m}), append(pods, p)
		}
	}
	if len(pods) == 0 {
		t.Fatal("the example has no ReplicaSets")
	}
	kube := protoServer(t, append(typedObjs, pods...)...)
	now := func() time.Time { return time.Date(2026, 11, 30, 3, 14, 0, 0, time.UTC) } // both headers alike
	viaDynamic, err := Rollout(context.Background(), fakeClient(t, objs...), Options{Namespace: "shop", Name: "checkout-api", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	viaTyped, err := Rollout(context.Background(), fakeClient(t, objs...), Options{Namespace: "shop", Name: "checkout-api", Kube: kube, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	podsOf := func(s *snapshot.Snapshot) []*unstructured.Unstructured {
		var out []*unstructured.Unstructured
		for _, o := range s.Objects() {
			if o.GetKind() == "Pod" {
				out = append(out, o)
			}
		}
		return out
	}
	a, b := podsOf(viaDynamic), podsOf(viaTyped)
	if len(a) != len(pods) || len(b) != len(a) {
		t.Fatalf("pods: %d via dynamic, %d via typed, %d in the cluster", len(a), len(b), len(pods))
	}
	for i := range a {
		if !equality.Semantic.DeepEqual(a[i].Object, b[i].Object) {
			t.Fatalf("pod %s differs:\ndynamic: %v\ntyped:   %v", a[i].GetName(), a[i].Object, b[i].Object)
		}
	}
	// What `snapshot` writes is the same file either way (the typed path
	// holds pods as metadata stubs and derives their bodies to write them).
	var wa, wb bytes.Buffer
	if err := viaDynamic.Write(&wa); err != nil {
		t.Fatal(err)
	}
	if err := viaTyped.Write(&wb); err != nil {
		t.Fatal(err)
	}
	if wa.String() != wb.String() {
		t.Fatalf("written snapshots differ:\n--- dynamic\n%s\n--- typed\n%s", wa.String(), wb.String())
	}
	if !strings.Contains(wb.String(), "containers:") {
		t.Fatal("the written pods have no spec")
	}
	va, vb := exampletest.ViewOf(t, viaDynamic), exampletest.ViewOf(t, viaTyped)
	if len(va.Workload.Pods) != len(pods) || !equality.Semantic.DeepEqual(va.Workload.Pods, vb.Workload.Pods) {
		t.Fatalf("typed pods in the view differ (%d vs %d)", len(va.Workload.Pods), len(vb.Workload.Pods))
	}
	if len(va.ReplicaSets) != len(typedObjs) || !equality.Semantic.DeepEqual(va.ReplicaSets, vb.ReplicaSets) {
		t.Fatalf("typed ReplicaSets in the view differ (%d vs %d)", len(va.ReplicaSets), len(vb.ReplicaSets))
	}
}

// TestAbsentKEDAIsNoGap: a cluster that does not serve ScaledObjects has
// none, so its list is answered, for one Rollout and for a fleet; a list
// refused or failed is still a gap, and so is an HPA list that found no
// API (HPAs are listed for the same reason, but every cluster serves them).
func TestAbsentKEDAIsNoGap(t *testing.T) {
	soGR := schema.GroupResource{Group: "keda.sh", Resource: "scaledobjects"}
	for _, tc := range []struct {
		name   string
		err    error
		reason snapshot.GapReason // "" for no gap
	}{
		{"not served", apierrors.NewNotFound(soGR, ""), ""},
		{"forbidden", apierrors.NewForbidden(soGR, "", nil), snapshot.GapForbidden},
		{"failed", apierrors.NewServiceUnavailable("etcd is down"), snapshot.GapError},
	} {
		dc := fakeClient(t, exampleObjects(t)...)
		dc.PrependReactor("list", "scaledobjects", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, tc.err })
		dc.PrependReactor("list", "horizontalpodautoscalers", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewNotFound(schema.GroupResource{Group: "autoscaling", Resource: "horizontalpodautoscalers"}, "")
		})
		snap, err := Rollout(context.Background(), dc, Options{Namespace: "shop", Name: "checkout-api"})
		if err != nil {
			t.Fatal(err)
		}
		res, err := Fleet(context.Background(), dc, FleetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for what, s := range map[string]*snapshot.Snapshot{"diagnose": snap, "fleet": res.Snapshot} {
			g, ok := s.HasGap("scaledobjects.keda.sh")
			if tc.reason == "" && ok {
				t.Fatalf("%s, %s: gap %+v for a cluster without KEDA", tc.name, what, g)
			}
			if tc.reason != "" && (!ok || g.Reason != tc.reason) {
				t.Fatalf("%s, %s: gaps %+v, want a %s gap for scaledobjects", tc.name, what, s.Header.Gaps, tc.reason)
			}
			if _, ok := s.HasGap("horizontalpodautoscalers.autoscaling"); !ok {
				t.Fatalf("%s, %s: gaps %+v, want the HPA list's", tc.name, what, s.Header.Gaps)
			}
		}
	}
}

// Experiments are listed only for a Rollout with an experiment step, and
// only the Rollout's own are kept; a refused list is a gap. The header says
// whether they were listed, so an absent one is known absent only then. A
// fleet read lists them too when a Rollout has the step, and keeps those
// of Rollouts.
func TestGatherExperiments(t *testing.T) {
	experiment := func(name, owner string) *unstructured.Unstructured {
		md := map[string]interface{}{"name": name, "namespace": "shop"}
		if owner != "" {
			md["ownerReferences"] = []interface{}{map[string]interface{}{"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "name": owner, "uid": "u", "controller": true}}
		}
		return &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": "argoproj.io/v1alpha1", "kind": "Experiment", "metadata": md}}
	}
	withStep := func(o *unstructured.Unstructured) {
		if o.GetKind() == "Rollout" {
			steps, _, _ := unstructured.NestedSlice(o.Object, "spec", "strategy", "canary", "steps")
			steps = append(steps, map[string]interface{}{"experiment": map[string]interface{}{"duration": "1h",
				"templates": []interface{}{map[string]interface{}{"name": "canary", "specRef": "canary"}}}})
			if err := unstructured.SetNestedSlice(o.Object, steps, "spec", "strategy", "canary", "steps"); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name   string
		edit   func(*unstructured.Unstructured)
		refuse bool
		lists  int
		kept   int
	}{
		{"no experiment step", nil, false, 0, 0},
		{"an experiment step", withStep, false, 1, 1},
		{"an experiment step, list refused", withStep, true, 1, 0},
	} {
		objs := append(exampletest.Objects(t, exampletest.Incident, tc.edit), experiment("checkout-api-1", "checkout-api"), experiment("other-1", "other"), experiment("by-hand", ""))
		dc := fakeClient(t, objs...)
		lists := 0
		dc.PrependReactor("list", "experiments", func(k8stesting.Action) (bool, runtime.Object, error) {
			lists++
			if tc.refuse {
				return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "argoproj.io", Resource: "experiments"}, "", nil)
			}
			return false, nil, nil
		})
		snap, err := Rollout(context.Background(), dc, Options{Namespace: "shop", Name: "checkout-api"})
		if err != nil {
			t.Fatal(err)
		}
		kept := experiments(snap)
		if len(kept) > 0 && kept[0] != "checkout-api-1" || len(kept) > 1 {
			t.Errorf("%s: kept %v: only checkout-api-1 is the Rollout's", tc.name, kept)
		}
		if lists != tc.lists || len(kept) != tc.kept {
			t.Errorf("%s: %d list(s) of experiments, %d kept; want %d and %d", tc.name, lists, len(kept), tc.lists, tc.kept)
		}
		if g, ok := snap.HasGap("experiments.argoproj.io"); ok != tc.refuse || ok && g.Reason != snapshot.GapForbidden {
			t.Errorf("%s: gaps %+v", tc.name, snap.Header.Gaps)
		}
		// The timeline's read of what the cluster holds reads them too, so
		// its findings do not take them for absent.
		hist, err := History(context.Background(), dc, Options{Namespace: "shop", Name: "checkout-api"})
		if err != nil {
			t.Fatal(err)
		}
		if held := experiments(hist); len(held) != tc.kept {
			t.Errorf("%s: the history holds Experiments %v, want %d", tc.name, held, tc.kept)
		}
		listed := tc.lists > 0 && !tc.refuse
		for what, s := range map[string]*snapshot.Snapshot{"diagnose": snap, "history": hist} {
			if got := s.Header.ListedWhole("experiments.argoproj.io", "shop"); got != listed {
				t.Errorf("%s, %s: Experiments listed whole %v, want %v (listed %v)", tc.name, what, got, listed, s.Header.Listed)
			}
		}
		lists = 0
		res, err := Fleet(context.Background(), dc, FleetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if fleet := experiments(res.Snapshot); lists != tc.lists || len(fleet) != 2*tc.kept {
			t.Errorf("%s: a fleet read made %d list(s) of experiments and kept %v; want %d and the 2 of Rollouts", tc.name, lists, fleet, tc.lists)
		}
		if got := res.Snapshot.Header.ListedWhole("experiments.argoproj.io", "shop"); got != listed {
			t.Errorf("%s: fleet: Experiments listed whole %v, want %v", tc.name, got, listed)
		}
	}
}

// anyExperiments finds an experiment step in a decoded Rollout (a fleet
// read as JSON into structs) as in one left unstructured.
func TestAnyExperiments(t *testing.T) {
	step := v1alpha1.CanaryStep{Experiment: &v1alpha1.RolloutExperimentStep{Duration: "1h"}}
	for _, tc := range []struct {
		name  string
		steps []v1alpha1.CanaryStep
		cur   string
		want  bool
	}{
		{"no experiment step", []v1alpha1.CanaryStep{{SetWeight: ptr.To[int32](20)}}, "", false},
		{"an experiment step", []v1alpha1.CanaryStep{{SetWeight: ptr.To[int32](20)}, step}, "", true},
		{"a current Experiment, the step since removed", nil, "app-1", true},
	} {
		ro := &v1alpha1.Rollout{Spec: v1alpha1.RolloutSpec{Strategy: v1alpha1.RolloutStrategy{Canary: &v1alpha1.CanaryStrategy{Steps: tc.steps}}}}
		ro.Status.Canary.CurrentExperiment = tc.cur
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ro)
		if err != nil {
			t.Fatal(err)
		}
		stub := &unstructured.Unstructured{Object: map[string]interface{}{"metadata": map[string]interface{}{"name": "app"}}}
		typed := typedSet[v1alpha1.Rollout]{objs: []*unstructured.Unstructured{stub}, typed: []*v1alpha1.Rollout{ro}, stubs: true}
		dynamic := typedSet[v1alpha1.Rollout]{objs: []*unstructured.Unstructured{{Object: u}}, typed: []*v1alpha1.Rollout{nil}}
		if got := anyExperiments(typed); got != tc.want {
			t.Errorf("%s, decoded: %v, want %v", tc.name, got, tc.want)
		}
		if got := anyExperiments(dynamic); got != tc.want {
			t.Errorf("%s, unstructured: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// experiments names the Experiments a snapshot holds.
func experiments(s *snapshot.Snapshot) []string {
	var out []string
	for _, o := range s.Objects() {
		if o.GetKind() == "Experiment" {
			out = append(out, o.GetName())
		}
	}
	return out
}
