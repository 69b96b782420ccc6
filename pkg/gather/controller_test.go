package gather

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// controllerDeployment is a Helm-style controller Deployment.
func controllerDeployment(ns, name, tag string, args ...interface{}) *unstructured.Unstructured {
	l := map[string]interface{}{"app.kubernetes.io/name": "argo-rollouts", "app.kubernetes.io/instance": name}
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]interface{}{"name": name, "namespace": ns, "labels": l},
		"spec": map[string]interface{}{"selector": map[string]interface{}{"matchLabels": l},
			"template": map[string]interface{}{"metadata": map[string]interface{}{"labels": l},
				"spec": map[string]interface{}{"containers": []interface{}{map[string]interface{}{
					"name": "argo-rollouts", "image": "quay.io/argoproj/argo-rollouts:" + tag, "args": args}}}}},
	}}
}

// versionOf gathers the example Rollout, labelled with instanceID unless
// empty, next to the extra controllers, and returns the detected version and
// the Deployment gets and lists the gather made.
func versionOf(t *testing.T, instanceID string, extra ...runtime.Object) (cv model.ControllerVersion, gets, lists int) {
	return versionOfWith(t, instanceID, nil, extra...)
}

// versionOfWith first lets defaultArgs set the args of the example's
// controller, argo-rollouts/argo-rollouts.
func versionOfWith(t *testing.T, instanceID string, defaultArgs []interface{}, extra ...runtime.Object) (cv model.ControllerVersion, gets, lists int) {
	t.Helper()
	objs := exampleObjects(t)
	for _, o := range objs {
		u := o.(*unstructured.Unstructured)
		if u.GetKind() == "Rollout" && instanceID != "" {
			u.SetLabels(map[string]string{snapshot.InstanceIDLabel: instanceID})
		}
		if u.GetKind() == "Deployment" && u.GetName() == "argo-rollouts" && defaultArgs != nil {
			cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			cs[0].(map[string]interface{})["args"] = defaultArgs
			if err := unstructured.SetNestedSlice(u.Object, cs, "spec", "template", "spec", "containers"); err != nil {
				t.Fatal(err)
			}
		}
	}
	dc := fakeClient(t, append(objs, extra...)...)
	dc.PrependReactor("*", "deployments", func(a k8stesting.Action) (bool, runtime.Object, error) {
		switch a.GetVerb() {
		case "get":
			gets++
		case "list":
			lists++
		}
		return false, nil, nil
	})
	snap, err := Rollout(context.Background(), dc, Options{Namespace: "shop", Name: "checkout-api"})
	if err != nil {
		t.Fatal(err)
	}
	ro, err := snap.FindRollout("shop", "checkout-api")
	if err != nil {
		t.Fatal(err)
	}
	v, err := snap.View(ro)
	if err != nil {
		t.Fatal(err)
	}
	if cv, err = model.DetectVersionFor("", v, ""); err != nil {
		t.Fatal(err)
	}
	return cv, gets, lists
}

func TestFindControllerOneGetInTheCommonCase(t *testing.T) {
	// The example's argo-rollouts/argo-rollouts (v1.8.2, no flags) owns the
	// unlabelled Rollout: one Get, no list, whatever else runs.
	cv, gets, lists := versionOf(t, "", controllerDeployment("rollouts-blue", "argo-rollouts-blue", "v1.10.2", "--instance-id=blue"))
	if cv.Assumed != "v1.8.2" || cv.Source != model.SourceImageTag || cv.From != "argo-rollouts/argo-rollouts" {
		t.Fatalf("version %+v, want v1.8.2 from argo-rollouts/argo-rollouts", cv)
	}
	if gets != 1 || lists != 0 {
		t.Fatalf("%d gets and %d lists of Deployments; the common case is one get", gets, lists)
	}
}

func TestFindControllerByInstanceID(t *testing.T) {
	blue := controllerDeployment("rollouts-blue", "argo-rollouts-blue", "v1.10.2", "--instance-id", "blue")
	green := controllerDeployment("rollouts-green", "argo-rollouts-green", "v1.9.3", "--instance-id=green")
	cv, gets, lists := versionOf(t, "blue", blue, green)
	if cv.Assumed != "v1.10.2" || cv.Source != model.SourceImageTag || cv.From != "rollouts-blue/argo-rollouts-blue" {
		t.Fatalf("version %+v, want v1.10.2 from rollouts-blue/argo-rollouts-blue", cv)
	}
	if gets != 0 || lists != 1 {
		t.Fatalf("%d gets and %d lists of Deployments; a labelled Rollout lists once", gets, lists)
	}

	// No controller runs with that instance-id: unknown, and the note says so.
	cv, _, _ = versionOf(t, "red", blue, green)
	if cv.Source != model.SourceUnknown || !strings.Contains(cv.Note, "--instance-id=red") ||
		!strings.Contains(cv.Note, "rollouts-green/argo-rollouts-green (--instance-id=green)") {
		t.Fatalf("no owner: %+v", cv)
	}
}

func TestFindControllerLooksFurtherWhenTheDefaultIsAnotherInstance(t *testing.T) {
	// argo-rollouts/argo-rollouts runs --instance-id=blue; the unlabelled
	// Rollout belongs to the controller without one, installed elsewhere:
	// the Get finds the first, which does not own it, so the list follows.
	other := controllerDeployment("platform", "rollouts", "v1.9.3")
	cv, gets, lists := versionOfWith(t, "", []interface{}{"--instance-id=blue"}, other)
	if cv.Assumed != "v1.9.3" || cv.Source != model.SourceImageTag || cv.From != "platform/rollouts" {
		t.Fatalf("version %+v, want v1.9.3 from platform/rollouts", cv)
	}
	if gets != 1 || lists != 1 {
		t.Fatalf("%d gets and %d lists of Deployments, want the get and then the list", gets, lists)
	}
	// Without that other install nothing owns it, and the note names the
	// default controller's instance-id.
	cv, _, _ = versionOfWith(t, "", []interface{}{"--instance-id=blue"})
	if cv.Source != model.SourceUnknown || !strings.Contains(cv.Note, "argo-rollouts/argo-rollouts (--instance-id=blue)") ||
		!strings.Contains(cv.Note, "has no argo-rollouts.argoproj.io/controller-instance-id label") {
		t.Fatalf("no owner: %+v", cv)
	}
}
