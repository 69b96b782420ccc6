package gather

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// metaMap makes what the converter makes, for metadata with every field
// set, with none, and with empty collections.
func TestMetaMapIsTheConvertersMap(t *testing.T) {
	// Fifteen fields in the ObjectMeta of the Kubernetes libraries built
	// in: one more must be added to metaMap and to full below.
	if n := reflect.TypeOf(metav1.ObjectMeta{}).NumField(); n != 15 {
		t.Fatalf("metav1.ObjectMeta has %d fields, metaMap writes out 15 (managedFields dropped): add the new one", n)
	}
	yes, no, grace := true, false, int64(30)
	del := metav1.NewTime(time.Date(2026, 8, 11, 3, 12, 40, 0, time.FixedZone("x", 3600)))
	full := metav1.ObjectMeta{
		Name: "app-6d8f7c9b5d", GenerateName: "app-", Namespace: "shop", SelfLink: "/apis/apps/v1/x", UID: "u-1",
		ResourceVersion: "123", Generation: 4, CreationTimestamp: metav1.NewTime(time.Date(2026, 8, 11, 3, 12, 10, 500, time.UTC)),
		DeletionTimestamp: &del, DeletionGracePeriodSeconds: &grace,
		Labels:      map[string]string{"app": "app", "rollouts-pod-template-hash": "6d8f7c9b5d"},
		Annotations: map[string]string{"rollout.argoproj.io/revision": "3", "empty": ""},
		OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "argoproj.io/v1alpha1", Kind: "Rollout", Name: "app", UID: "r-1", Controller: &yes, BlockOwnerDeletion: &no},
			{APIVersion: "v1", Kind: "Thing", Name: "t", UID: "t-1"},
		},
		Finalizers:    []string{"a", "b"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}},
	}
	for name, m := range map[string]metav1.ObjectMeta{
		"every field":              full,
		"none":                     {},
		"deleted at the zero time": {DeletionTimestamp: &metav1.Time{}},
		"empty collections": {Name: "x", Labels: map[string]string{}, Annotations: map[string]string{},
			OwnerReferences: []metav1.OwnerReference{}, Finalizers: []string{}},
	} {
		want, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&m)
		if err != nil {
			t.Fatal(err)
		}
		delete(want, "managedFields")
		if got := metaMap(&m); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %#v\nwant %#v", name, got, want)
		}
	}
}
