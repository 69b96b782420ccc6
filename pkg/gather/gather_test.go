package gather

import (
	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"

	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

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
