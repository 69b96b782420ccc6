package gather

import (
	"fmt"
	"reflect"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// richReplicaSet is a ReplicaSet as a production Rollout's history holds
// them: two containers with env, probes, resources and mounts, volumes,
// managedFields from two writers.
func richReplicaSet(i int, replicas *int32) *appsv1.ReplicaSet {
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromString("http")}}, PeriodSeconds: 5}
	container := func(name string) corev1.Container {
		c := corev1.Container{Name: name, Image: fmt.Sprintf("registry.example.com/shop/%s:1.%d.0", name, i),
			Ports:          []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
			ReadinessProbe: probe, LivenessProbe: probe,
			Resources:    corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("256Mi")}},
			VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/app"}},
			Lifecycle:    &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 20}}}}
		for e := range 12 {
			c.Env = append(c.Env, corev1.EnvVar{Name: fmt.Sprintf("SETTING_%d", e), Value: fmt.Sprintf("value-%d-%d", i, e)})
		}
		return c
	}
	now := metav1.Date(2026, 8, 11, 3, 10, i, 0, metav1.Now().Location())
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("checkout-%d", i), Namespace: "shop", UID: "u", ResourceVersion: "7", Generation: 3, CreationTimestamp: now,
			Labels:          map[string]string{"app": "checkout", "rollouts-pod-template-hash": fmt.Sprintf("h%d", i)},
			Annotations:     map[string]string{"rollout.argoproj.io/revision": fmt.Sprint(i), "rollout.argoproj.io/desired-replicas": "10"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "argoproj.io/v1alpha1", Kind: "Rollout", Name: "checkout", UID: "r"}},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "rollouts-controller", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1", Time: &now, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:replicas":{}}}`)}},
				{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1", Time: &now, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:replicas":{}}}`)}, Subresource: "status"},
			}},
		Spec: appsv1.ReplicaSetSpec{Replicas: replicas, MinReadySeconds: 10,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "checkout", "rollouts-pod-template-hash": fmt.Sprintf("h%d", i)}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "checkout", "rollouts-pod-template-hash": fmt.Sprintf("h%d", i)}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{container("app"), container("sidecar")},
					Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "checkout"}}}}}}}},
		Status: appsv1.ReplicaSetStatus{Replicas: 10, ReadyReplicas: 9, AvailableReplicas: 8, FullyLabeledReplicas: 10, ObservedGeneration: 3},
	}
}

// TestFleetReplicaSetDecode: the fleet's decoding of a ReplicaSet is the
// generated decoder's less managedFields and the template's body (its
// containers' names and images kept), whatever is set; no prefix of an
// encoding makes it panic.
func TestFleetReplicaSetDecode(t *testing.T) {
	three := int32(3)
	empty := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "bare"}}
	for _, rs := range []*appsv1.ReplicaSet{richReplicaSet(1, &three), richReplicaSet(2, nil), empty} {
		b, err := rs.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		var want, got appsv1.ReplicaSet
		if err := want.Unmarshal(b); err != nil {
			t.Fatal(err)
		}
		want.ManagedFields = nil
		var cs []corev1.Container
		for _, c := range want.Spec.Template.Spec.Containers {
			cs = append(cs, corev1.Container{Name: c.Name, Image: c.Image})
		}
		want.Spec.Template.Spec = corev1.PodSpec{Containers: cs}
		if err := unmarshalFleetReplicaSet(&got, b); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\n got %+v\nwant %+v", rs.Name, got, want)
		}
		for n := range len(b) {
			_ = unmarshalFleetReplicaSet(new(appsv1.ReplicaSet), b[:n])
		}
	}
	// managedFields first (a server that writes fields out of number
	// order): the metadata is still the generated decoder's without them.
	rs := richReplicaSet(3, &three)
	meta, err := rs.ObjectMeta.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var first, rest []byte
	for b := meta; len(b) > 0; {
		num, _, n := protowire.ConsumeField(b)
		if num == 17 {
			first = append(first, b[:n]...)
		} else {
			rest = append(rest, b[:n]...)
		}
		b = b[n:]
	}
	if len(first) == 0 {
		t.Fatal("no managedFields in the encoding")
	}
	var got, want metav1.ObjectMeta
	if err := unmarshalMetaWithoutManagedFields(&got, append(first, rest...)); err != nil {
		t.Fatal(err)
	}
	if err := want.Unmarshal(meta); err != nil {
		t.Fatal(err)
	}
	want.ManagedFields = nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("managedFields first:\n got %+v\nwant %+v", got, want)
	}
}

// BenchmarkFleetReplicaSet decodes a production-like ReplicaSet with the
// generated decoder and with the fleet's.
func BenchmarkFleetReplicaSet(b *testing.B) {
	ten := int32(10)
	raw, err := richReplicaSet(1, &ten).Marshal()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("generated", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var rs appsv1.ReplicaSet
			if err := rs.Unmarshal(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fleet", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var rs appsv1.ReplicaSet
			if err := unmarshalFleetReplicaSet(&rs, raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}
