package model

import (
	"strings"
	"testing"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// viewWith is the view of a Rollout in namespace shop, labelled with
// instanceID unless empty, with the controllers split as View splits them.
func viewWith(instanceID string, controllers ...*appsv1.Deployment) *snapshot.View {
	ro := &v1alpha1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "app"}}
	if instanceID != "" {
		ro.Labels = map[string]string{snapshot.InstanceIDLabel: instanceID}
	}
	v := &snapshot.View{Rollout: ro}
	v.Controllers, v.OtherControllers = snapshot.OwningControllers(ro, controllers)
	return v
}

func controller(name, tag string, args ...string) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "argo-rollouts", Name: name}}
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "argo-rollouts", Image: "quay.io/argoproj/argo-rollouts:" + tag, Args: args}}
	return d
}

func TestDetectVersionForPicksTheOwningController(t *testing.T) {
	all := []*appsv1.Deployment{
		controller("argo-rollouts", "v1.7.2"),
		controller("argo-rollouts-a", "v1.8.2", "--instance-id=a"),
		controller("argo-rollouts-b", "v1.10.2", "--instance-id", "b"),
	}
	for id, want := range map[string]string{"": "v1.7.2", "a": "v1.8.2", "b": "v1.10.2"} {
		cv, err := DetectVersionFor("", viewWith(id, all...), "")
		if err != nil {
			t.Fatal(err)
		}
		if string(cv.Assumed) != want || cv.Source != SourceImageTag || !cv.Exact {
			t.Errorf("instance-id %q: %+v, want %s from its image tag", id, cv, want)
		}
	}

	// Only other instances run: unknown, and the note says why.
	cv, err := DetectVersionFor("", viewWith("c", all...), "")
	if err != nil {
		t.Fatal(err)
	}
	if cv.Source != SourceUnknown || cv.Detected != "" || cv.From != "" ||
		!strings.Contains(cv.Note, "--instance-id=c") || !strings.Contains(cv.Note, "argo-rollouts/argo-rollouts-a (--instance-id=a)") {
		t.Errorf("no owner: %+v", cv)
	}
	// The flag still wins.
	if cv, _ := DetectVersionFor("v1.9.3", viewWith("c", all...), ""); cv.Source != SourceFlag || cv.Assumed != "v1.9.3" {
		t.Errorf("flag: %+v", cv)
	}
	// Nothing found at all keeps its own note.
	if cv, _ := DetectVersionFor("", viewWith("c"), ""); cv.Source != SourceUnknown || !strings.Contains(cv.Note, "no argo-rollouts controller Deployment was found") {
		t.Errorf("none found: %+v", cv)
	}
	// Two owners of different versions are ambiguous, as before.
	two := []*appsv1.Deployment{controller("x", "v1.8.2", "--instance-id=a"), controller("y", "v1.9.3", "--instance-id=a")}
	if cv, _ := DetectVersionFor("", viewWith("a", two...), ""); cv.Source != SourceAmbiguous {
		t.Errorf("two owners: %+v", cv)
	}
}
