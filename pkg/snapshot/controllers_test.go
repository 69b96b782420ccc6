package snapshot

import (
	"strings"
	"testing"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func controllerDeployment(ns, name string, c corev1.Container) *appsv1.Deployment {
	if c.Name == "" {
		c.Name = "argo-rollouts"
	}
	if c.Image == "" {
		c.Image = "quay.io/argoproj/argo-rollouts:v1.8.2"
	}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "sidecar", Image: "envoy", Args: []string{"--instance-id=sidecar"}}, c}
	return d
}

func rollout(ns, instanceID string) *v1alpha1.Rollout {
	ro := &v1alpha1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"}}
	if instanceID != "" {
		ro.Labels = map[string]string{InstanceIDLabel: instanceID}
	}
	return ro
}

func TestScopeOfParsesFlagsAsTheController(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    corev1.Container
		want ControllerScope // the Deployment's namespace is argo-rollouts
	}{
		{"no flags", corev1.Container{}, ControllerScope{}},
		{"--instance-id=X", corev1.Container{Args: []string{"--loglevel", "info", "--instance-id=blue"}}, ControllerScope{InstanceID: "blue"}},
		{"--instance-id X", corev1.Container{Args: []string{"--instance-id", "green"}}, ControllerScope{InstanceID: "green"}},
		{"in the command", corev1.Container{Command: []string{"/bin/rollouts-controller", "--instance-id", "cmd"}}, ControllerScope{InstanceID: "cmd"}},
		{"last one wins", corev1.Container{Args: []string{"--instance-id=a", "--instance-id=b"}}, ControllerScope{InstanceID: "b"}},
		{"after -- is not a flag", corev1.Container{Args: []string{"--", "--instance-id=x"}}, ControllerScope{}},
		{"dangling flag", corev1.Container{Args: []string{"--instance-id"}}, ControllerScope{}},
		{"--namespaced runs in its namespace", corev1.Container{Args: []string{"--namespaced"}}, ControllerScope{Namespace: "argo-rollouts"}},
		{"--namespaced=false", corev1.Container{Args: []string{"--namespaced=false"}}, ControllerScope{}},
		{"--namespaced=true --namespace shop", corev1.Container{Args: []string{"--namespaced=true", "--namespace", "shop"}}, ControllerScope{Namespace: "shop"}},
		{"-n shop", corev1.Container{Args: []string{"--namespaced", "-n", "shop"}}, ControllerScope{Namespace: "shop"}},
		{"-nshop", corev1.Container{Args: []string{"--namespaced", "-nshop"}}, ControllerScope{Namespace: "shop"}},
		{"-n=shop", corev1.Container{Args: []string{"--namespaced", "-n=shop"}}, ControllerScope{Namespace: "shop"}},
		{"POD_NAMESPACE literal", corev1.Container{Args: []string{"--namespaced"}, Env: []corev1.EnvVar{{Name: "POD_NAMESPACE", Value: "cart"}}}, ControllerScope{Namespace: "cart"}},
		{"POD_NAMESPACE from the downward API", corev1.Container{Args: []string{"--namespaced"}, Env: []corev1.EnvVar{{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}}}, ControllerScope{Namespace: "argo-rollouts"}},
		{"--namespace without --namespaced watches all", corev1.Container{Args: []string{"--namespace", "shop"}}, ControllerScope{}},
		{"both", corev1.Container{Args: []string{"--instance-id=blue", "--namespaced"}}, ControllerScope{InstanceID: "blue", Namespace: "argo-rollouts"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ScopeOf(controllerDeployment("argo-rollouts", "argo-rollouts", tc.c)); got != tc.want {
				t.Fatalf("ScopeOf = %+v, want %+v", got, tc.want)
			}
		})
	}
	// The controller container is found by name or image; a lone container
	// is the controller whatever its name.
	lone := &appsv1.Deployment{}
	lone.Spec.Template.Spec.Containers = []corev1.Container{{Name: "controller", Image: "mirror/rollouts:v1.9.3", Args: []string{"--instance-id=m"}}}
	if got := ScopeOf(lone); got.InstanceID != "m" {
		t.Fatalf("lone container: %+v", got)
	}
}

func TestOwningControllers(t *testing.T) {
	plain := controllerDeployment("argo-rollouts", "argo-rollouts", corev1.Container{})
	blue := controllerDeployment("argo-rollouts", "argo-rollouts-blue", corev1.Container{Args: []string{"--instance-id=blue"}})
	green := controllerDeployment("argo-rollouts", "argo-rollouts-green", corev1.Container{Args: []string{"--instance-id", "green"}})
	shop := controllerDeployment("shop", "argo-rollouts", corev1.Container{Args: []string{"--namespaced"}})
	shopBlue := controllerDeployment("shop", "argo-rollouts-blue", corev1.Container{Args: []string{"--namespaced", "--instance-id=blue"}})
	all := []*appsv1.Deployment{plain, blue, green, shop, shopBlue}
	names := func(ds []*appsv1.Deployment) string {
		var s []string
		for _, d := range ds {
			s = append(s, d.Namespace+"/"+d.Name)
		}
		return strings.Join(s, ",")
	}
	for _, tc := range []struct {
		ro   *v1alpha1.Rollout
		want string
	}{
		{rollout("cart", ""), "argo-rollouts/argo-rollouts"},
		{rollout("cart", "blue"), "argo-rollouts/argo-rollouts-blue"},
		{rollout("cart", "green"), "argo-rollouts/argo-rollouts-green"},
		{rollout("cart", "red"), ""},
		// In shop a cluster-wide and a namespaced controller both reconcile it:
		// both are returned (the version detection then calls it ambiguous).
		{rollout("shop", ""), "argo-rollouts/argo-rollouts,shop/argo-rollouts"},
		{rollout("shop", "blue"), "argo-rollouts/argo-rollouts-blue,shop/argo-rollouts-blue"},
	} {
		owners, others := OwningControllers(tc.ro, all)
		if got := names(owners); got != tc.want {
			t.Errorf("%s labelled %q: owners %s, want %s", tc.ro.Namespace, tc.ro.Labels[InstanceIDLabel], got, tc.want)
		}
		if len(owners)+len(others) != len(all) {
			t.Errorf("owners and others must partition the controllers: %d + %d", len(owners), len(others))
		}
	}
	if o, _ := OwningControllers(rollout("cart", ""), nil); o != nil {
		t.Errorf("no controllers: %v", o)
	}
}

func TestNoOwnerNote(t *testing.T) {
	blue := controllerDeployment("argo-rollouts", "argo-rollouts-blue", corev1.Container{Args: []string{"--instance-id=blue"}})
	shop := controllerDeployment("shop", "argo-rollouts", corev1.Container{Args: []string{"--namespaced"}})
	note := NoOwnerNote(rollout("cart", "red"), []*appsv1.Deployment{blue, shop})
	for _, want := range []string{
		"no controller found reconciles this Rollout",
		"labelled argo-rollouts.argoproj.io/controller-instance-id=red",
		"--instance-id=red",
		"argo-rollouts/argo-rollouts-blue (--instance-id=blue)",
		"shop/argo-rollouts (no --instance-id, --namespaced in shop)",
	} {
		if !strings.Contains(note, want) {
			t.Errorf("note lacks %q:\n%s", want, note)
		}
	}
	if note := NoOwnerNote(rollout("cart", ""), []*appsv1.Deployment{blue}); !strings.Contains(note, "has no argo-rollouts.argoproj.io/controller-instance-id label") {
		t.Errorf("unlabelled Rollout: %s", note)
	}
	if note := NoOwnerNote(rollout("cart", "x"), nil); note != "" {
		t.Errorf("no controllers found gives no note: %q", note)
	}
}

func TestViewSplitsControllersByOwner(t *testing.T) {
	dep := func(ns, name, args string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]interface{}{"name": name, "namespace": ns,
				"labels": map[string]interface{}{"app.kubernetes.io/name": "argo-rollouts"}},
			"spec": map[string]interface{}{"template": map[string]interface{}{"spec": map[string]interface{}{
				"containers": []interface{}{map[string]interface{}{"name": "argo-rollouts", "image": "quay.io/argoproj/argo-rollouts:v1.9.3",
					"args": []interface{}{args}}}}}},
		}}
	}
	ro := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
		"metadata": map[string]interface{}{"name": "app", "namespace": "shop",
			"labels": map[string]interface{}{InstanceIDLabel: "b"}},
	}}
	s := New(Header{}, []*unstructured.Unstructured{ro, dep("argo-rollouts", "a", "--instance-id=a"), dep("argo-rollouts", "b", "--instance-id=b"), dep("shop", "c", "--namespaced")})
	r, err := s.FindRollout("shop", "app")
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.View(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Controllers) != 1 || v.Controllers[0].Name != "b" || len(v.OtherControllers) != 2 {
		t.Fatalf("controllers %v, others %v", v.Controllers, v.OtherControllers)
	}
}
