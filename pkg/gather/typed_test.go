package gather

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
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
	kube, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
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
