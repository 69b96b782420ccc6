package gather

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// TestReadRolloutsTyped: the fleet's Rollout list decoded straight into
// structs, across pages, with metadata stubs for the snapshot; a number
// that overflows its field is an error, as the dynamic path makes it.
func TestReadRolloutsTyped(t *testing.T) {
	replicas := "3"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/apis/argoproj.io/v1alpha1/namespaces/shop/rollouts" || r.URL.Query().Get("labelSelector") != "team=a" {
			http.Error(w, "unexpected "+r.URL.String(), http.StatusBadRequest)
			return
		}
		item := func(name string) string {
			return fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"shop","labels":{"team":"a"}},"spec":{"replicas":%s,"strategy":{"canary":{"steps":[{"setWeight":20}]}}},"status":{"phase":"Paused"}}`, name, replicas)
		}
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("continue") == "" {
			fmt.Fprintf(w, `{"apiVersion":"argoproj.io/v1alpha1","kind":"RolloutList","metadata":{"continue":"p2"},"items":[%s]}`, item("a"))
			return
		}
		fmt.Fprintf(w, `{"apiVersion":"argoproj.io/v1alpha1","kind":"RolloutList","metadata":{},"items":[%s]}`, item("b"))
	}))
	defer srv.Close()
	kube, err := NewTyped(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	pages := 0
	set, err := readRollouts(context.Background(), nil, kube, "shop", metav1.ListOptions{LabelSelector: "team=a"}, func(int) { pages++ })
	if err != nil {
		t.Fatal(err)
	}
	if pages != 2 || len(set.objs) != 2 || !set.stubs {
		t.Fatalf("pages %d, objects %d, stubs %v", pages, len(set.objs), set.stubs)
	}
	for i, name := range []string{"a", "b"} {
		u, ro := set.objs[i], set.typed[i]
		if u.GetKind() != "Rollout" || u.GetAPIVersion() != "argoproj.io/v1alpha1" || u.GetName() != name || u.GetLabels()["team"] != "a" {
			t.Fatalf("stub %d: %v", i, u.Object)
		}
		if _, hasSpec := u.Object["spec"]; hasSpec {
			t.Fatalf("stub %d carries the body", i)
		}
		if ro.Name != name || ro.Spec.Replicas == nil || *ro.Spec.Replicas != 3 || ro.Status.Phase != "Paused" || len(ro.Spec.Strategy.Canary.Steps) != 1 {
			t.Fatalf("typed %d: %+v", i, ro)
		}
	}
	replicas = "5000000000"
	if _, err := readRollouts(context.Background(), nil, kube, "shop", metav1.ListOptions{LabelSelector: "team=a"}, nil); err == nil || !strings.Contains(err.Error(), "Rollout list") {
		t.Fatalf("replicas 5000000000 in an int32: err = %v", err)
	}
}

// protoServer serves the pods, ReplicaSets and Deployments among objs as the API server
// does: protobuf lists in the runtime.Unknown envelope, filtered by label
// selector, in pages of two items whatever the limit (a server may return
// fewer), with managedFields on every item. It returns a Typed reader of it.
func protoServer(t *testing.T, objs ...runtime.Object) *Typed {
	t.Helper()
	codec := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sel, err := labels.Parse(r.URL.Query().Get("labelSelector"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var kind string
		switch {
		case strings.HasPrefix(r.URL.Path, "/api/v1/") && strings.HasSuffix(r.URL.Path, "/pods"):
			kind = "Pod"
		case strings.HasPrefix(r.URL.Path, "/apis/apps/v1/") && strings.HasSuffix(r.URL.Path, "/replicasets"):
			kind = "ReplicaSet"
		case strings.HasPrefix(r.URL.Path, "/apis/apps/v1/") && strings.HasSuffix(r.URL.Path, "/deployments"):
			kind = "Deployment"
		default:
			http.Error(w, "unexpected "+r.URL.Path, http.StatusNotFound)
			return
		}
		if !strings.Contains(r.Header.Get("Accept"), "application/vnd.kubernetes.protobuf") {
			http.Error(w, "protobuf not asked for", http.StatusNotAcceptable)
			return
		}
		var match []runtime.Object
		for _, o := range objs {
			m := o.(metav1.Object)
			if o.GetObjectKind().GroupVersionKind().Kind == kind || reflect.TypeOf(o).Elem().Name() == kind {
				if sel.Matches(labels.Set(m.GetLabels())) {
					match = append(match, o.DeepCopyObject())
				}
			}
		}
		from, _ := strconv.Atoi(r.URL.Query().Get("continue"))
		to := min(from+2, len(match))
		cont := ""
		if to < len(match) {
			cont = strconv.Itoa(to)
		}
		mf := []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate,
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{}}`)}}}
		lm, page := metav1.ListMeta{Continue: cont, ResourceVersion: "7"}, match[from:to]
		var list runtime.Object
		switch kind {
		case "Pod":
			list = &corev1.PodList{ListMeta: lm, Items: pageItems[corev1.Pod](page, mf)}
		case "ReplicaSet":
			list = &appsv1.ReplicaSetList{ListMeta: lm, Items: pageItems[appsv1.ReplicaSet](page, mf)}
		case "Deployment":
			list = &appsv1.DeploymentList{ListMeta: lm, Items: pageItems[appsv1.Deployment](page, mf)}
		}
		w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf")
		if err := codec.Encode(list, w); err != nil {
			t.Error(err)
		}
	}))
	t.Cleanup(srv.Close)
	kube, err := NewTyped(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return kube
}

// pageItems copies a page's objects, each with managedFields mf, as a
// list's items.
func pageItems[T any, PT interface {
	*T
	metav1.Object
}](page []runtime.Object, mf []metav1.ManagedFieldsEntry) []T {
	out := make([]T, 0, len(page))
	for _, o := range page {
		x := *o.(PT)
		PT(&x).SetManagedFields(mf)
		out = append(out, x)
	}
	return out
}

// TestReadPodsProtobuf: pods read through the typed reader are the pods
// the server holds, across pages, without their managedFields; a
// malformed response is an error, not a partial list.
func TestReadPodsProtobuf(t *testing.T) {
	var objs []runtime.Object
	for i := 0; i < 5; i++ {
		objs = append(objs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%d", i), Namespace: "shop", Labels: map[string]string{"app": "a"}},
			Spec: corev1.PodSpec{NodeName: "n", Containers: []corev1.Container{{Name: "app", Image: "i"}}}})
	}
	objs = append(objs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "shop", Labels: map[string]string{"app": "b"}}})
	kube := protoServer(t, objs...)
	pods, err := listAllTyped(context.Background(), kube, nsPath("/api/v1", "shop", "pods"), metav1.ListOptions{LabelSelector: "app=a"}, nil,
		func(p *corev1.Pod) { p.ManagedFields = nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 5 {
		t.Fatalf("%d pods, want 5 (three pages)", len(pods))
	}
	for i, p := range pods {
		if p.Name != fmt.Sprintf("p-%d", i) || p.Spec.Containers[0].Image != "i" || p.ManagedFields != nil {
			t.Fatalf("pod %d: %s %+v managedFields %v", i, p.Name, p.Spec, p.ManagedFields)
		}
	}
	for _, bad := range [][]byte{
		{0x12, 0x50, 1},             // raw claims 80 bytes, has one
		{0x0a},                      // a tag without its value
		{},                          // no raw field at all
		{0x12, 0x02, 0x12, 0x05},    // an item overruns the list
		{0x12, 0x02, 0x13, 0x00},    // a group (wire type 3)
		{0x12, 0x01, 0x80},          // a varint cut off
		{0x12, 0x03, 0x12, 0x01, 1}, // an item that is not a pod
	} {
		if _, _, err := decodeProtoList(bufio.NewReader(bytes.NewReader(bad)), nil, func(*corev1.Pod) {}); err == nil {
			t.Fatalf("%x decoded without an error", bad)
		}
	}
}

// TestProtoListStreamed: a list decoded as it arrives, a byte per read
// (every field crosses a refill), is the list decoded whole; and a body cut
// off by the network is reported as a read error, not as malformed.
func TestProtoListStreamed(t *testing.T) {
	var l corev1.PodList
	l.Continue = "next"
	for i := range 300 { // across several blocks of items
		l.Items = append(l.Items, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%d", i), Namespace: "shop",
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: fmt.Sprintf("img:%d", i)}}}})
	}
	var buf bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(&l, &buf); err != nil {
		t.Fatal(err)
	}
	body := buf.Bytes()
	if !bytes.HasPrefix(body, protoMagic) {
		t.Fatalf("no magic: %x", body[:8])
	}
	trim := func(p *corev1.Pod) { p.ManagedFields = nil }
	pods, cont, err := decodeProtoList(bufio.NewReaderSize(iotest.OneByteReader(bytes.NewReader(body[4:])), 16), nil, trim)
	if err != nil {
		t.Fatal(err)
	}
	var want []*corev1.Pod
	for i := range l.Items {
		trim(&l.Items[i])
		want = append(want, &l.Items[i])
	}
	if cont != "next" || !reflect.DeepEqual(pods, want) {
		t.Fatalf("continue %q, pods %+v", cont, pods)
	}
	cut := &reading{r: io.MultiReader(bytes.NewReader(body[:len(body)/2]), iotest.ErrReader(io.ErrUnexpectedEOF))}
	br := bufio.NewReader(cut)
	_, _ = br.Discard(len(protoMagic))
	if _, _, err := decodeProtoList(br, nil, trim); err == nil {
		t.Fatal("half a list decoded")
	} else if err := cut.failed("pods", err); !strings.HasPrefix(err.Error(), "reading pods: ") || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("cut off: %v", err)
	}
}

// TestListRetriesALostConnection: a list whose connection is dropped
// before the answer is sent again, as client-go's DoRaw does for a GET
// (Go's transport may add an attempt of its own on a reused connection);
// a server that answers with an error is not asked again.
func TestListRetriesALostConnection(t *testing.T) {
	defer func(w time.Duration) { retryWait = w }(retryWait)
	retryWait = time.Millisecond
	var calls atomic.Int32
	var failures atomic.Int32
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= failures.Load() {
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				conn.Close() // no answer at all
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, `{"metadata":{},"items":[{"metadata":{"name":"a","namespace":"shop"}}]}`)
	}))
	defer srv.Close()
	kube, err := NewTyped(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	read := func() (typedSet[v1alpha1.Rollout], error) {
		calls.Store(0)
		return readRollouts(context.Background(), nil, kube, "shop", metav1.ListOptions{}, nil)
	}
	failures.Store(1)
	if set, err := read(); err != nil || len(set.typed) != 1 || calls.Load() < 2 {
		t.Fatalf("after one lost connection: %d Rollouts, %d requests, err %v", len(set.typed), calls.Load(), err)
	}
	failures.Store(100)
	if _, err := read(); err == nil || calls.Load() < 3 || calls.Load() > 6 {
		t.Fatalf("a server that never answers: %d requests, err %v", calls.Load(), err)
	}
	failures.Store(0)
	status = http.StatusInternalServerError
	if _, err := read(); err == nil || calls.Load() != 1 {
		t.Fatalf("a server error: %d requests, err %v", calls.Load(), err)
	}
}

// TestReadControllers: the controller Deployments are read typed, through
// protobuf as through the dynamic client, without managedFields, and of the
// Deployments labelled as Argo Rollouts' only the controllers are kept
// (the dashboard shares the label).
func TestReadControllers(t *testing.T) {
	deploy := func(ns, name string, labels map[string]string, image string) *appsv1.Deployment {
		return &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
			Spec:       appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}}}}}
	}
	objs := []runtime.Object{
		deploy("argo-rollouts", "argo-rollouts", map[string]string{"app.kubernetes.io/name": "argo-rollouts"}, "quay.io/argoproj/argo-rollouts:v1.8.2"),
		deploy("argo-rollouts", "argo-rollouts-dashboard", map[string]string{"app.kubernetes.io/name": "argo-rollouts", "app.kubernetes.io/component": "rollouts-dashboard"}, "quay.io/argoproj/kubectl-argo-rollouts:v1.8.2"),
		deploy("team-b", "rollouts", map[string]string{"app.kubernetes.io/name": "argo-rollouts", "app.kubernetes.io/component": "rollouts-controller"}, "quay.io/argoproj/argo-rollouts:v1.7.2"),
		deploy("shop", "argo-rollouts", map[string]string{"app": "shop"}, "shop:1"), // not labelled: not listed
	}
	check := func(how string, s typedSet[appsv1.Deployment]) {
		t.Helper()
		var got []string
		for i, u := range s.objs {
			d := s.typed[i]
			if d == nil || d.Namespace != u.GetNamespace() || d.Name != u.GetName() || d.ManagedFields != nil || u.GetManagedFields() != nil || u.GetKind() != "Deployment" {
				t.Fatalf("%s: item %d: %v / %+v", how, i, u.Object, d)
			}
			got = append(got, u.GetNamespace()+"/"+u.GetName()+" "+d.Spec.Template.Spec.Containers[0].Image)
		}
		sort.Strings(got)
		want := []string{"argo-rollouts/argo-rollouts quay.io/argoproj/argo-rollouts:v1.8.2", "team-b/rollouts quay.io/argoproj/argo-rollouts:v1.7.2"}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: read %q, want %q", how, got, want)
		}
	}
	pages := 0
	s, err := readControllers(context.Background(), nil, protoServer(t, objs...), func(int) { pages++ })
	if err != nil {
		t.Fatal(err)
	}
	check("protobuf", s)
	if !s.stubs || pages != 2 {
		t.Fatalf("protobuf: stubs %v, %d pages (want metadata stubs, two pages of two)", s.stubs, pages)
	}
	var us []runtime.Object
	for _, o := range objs {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			t.Fatal(err)
		}
		us = append(us, &unstructured.Unstructured{Object: u})
	}
	s, err = readControllers(context.Background(), fakeClient(t, us...), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	check("dynamic", s)
}
