package gather

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rolloutdoctor/rolloutdoctor/internal/fastjson"
)

// fleetRolloutList is a Rollout list of n items as the API server writes
// it for a fleet scan: each Rollout paused at a canary step, with the
// times an object carries (creation, managedFields, conditions, pause)
// and, as Argo CD's default sync and kubectl apply leave it, the manifest
// applied in the last-applied-configuration annotation.
func fleetRolloutList(tb testing.TB, n int) []byte {
	tb.Helper()
	return fleetRolloutListWith(tb, n, corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:2026.08.05-1"}}})
}

// fleetRolloutListWith is fleetRolloutList with each Rollout's pod spec.
func fleetRolloutListWith(tb testing.TB, n int, spec corev1.PodSpec) []byte {
	tb.Helper()
	at := metav1.NewTime(time.Date(2026, 8, 11, 3, 12, 30, 0, time.UTC))
	later := metav1.NewTime(at.Add(40 * time.Second))
	w := func(v int32) *int32 { return &v }
	fields := &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:replicas":{},"f:strategy":{"f:canary":{"f:steps":{}}},"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`)}
	items := make([]v1alpha1.Rollout, n)
	for i := range items {
		name := fmt.Sprintf("app-%04d", i)
		items[i] = v1alpha1.Rollout{
			TypeMeta: metav1.TypeMeta{APIVersion: "argoproj.io/v1alpha1", Kind: "Rollout"},
			ObjectMeta: metav1.ObjectMeta{
				Name: name, Namespace: fmt.Sprintf("team-%02d", i%40), UID: "3f0c2d4e-8c1a-4c55-9d0e-6a9b7f1e2a10",
				ResourceVersion: fmt.Sprint(100000 + i), Generation: 9, CreationTimestamp: at,
				Labels:      map[string]string{"app": name, "team": "payments"},
				Annotations: map[string]string{"rollout.argoproj.io/revision": "7"},
				ManagedFields: []metav1.ManagedFieldsEntry{
					{Manager: "argocd-controller", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "argoproj.io/v1alpha1", Time: &at, FieldsType: "FieldsV1", FieldsV1: fields},
					{Manager: "rollouts-controller", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "argoproj.io/v1alpha1", Time: &later, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{".":{},"f:phase":{}}}`)}, Subresource: "status"},
				},
			},
			Spec: v1alpha1.RolloutSpec{
				Replicas: w(10),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
					Spec:       spec,
				},
				Strategy: v1alpha1.RolloutStrategy{Canary: &v1alpha1.CanaryStrategy{
					CanaryService: name + "-canary", StableService: name + "-stable",
					Steps: []v1alpha1.CanaryStep{{SetWeight: w(20)}, {Pause: &v1alpha1.RolloutPause{}}, {SetWeight: w(50)}, {Pause: &v1alpha1.RolloutPause{Duration: &intstr.IntOrString{Type: intstr.String, StrVal: "10m"}}}},
				}},
			},
			Status: v1alpha1.RolloutStatus{
				Phase: v1alpha1.RolloutPhasePaused, Message: "CanaryPauseStep", Replicas: 12, UpdatedReplicas: 2, ReadyReplicas: 12, AvailableReplicas: 12,
				CurrentPodHash: "5f6c8d7b9a", StableRS: "6d8f7c9b5d", CurrentStepIndex: w(1), ObservedGeneration: "9",
				PauseConditions: []v1alpha1.PauseCondition{{Reason: v1alpha1.PauseReasonCanaryPauseStep, StartTime: later}},
				ControllerPause: true,
				Conditions: []v1alpha1.RolloutCondition{
					{Type: v1alpha1.RolloutProgressing, Status: corev1.ConditionTrue, Reason: "RolloutPaused", Message: "Rollout is paused", LastUpdateTime: later, LastTransitionTime: later},
					{Type: v1alpha1.RolloutAvailable, Status: corev1.ConditionTrue, Reason: "AvailableReason", Message: "Rollout has minimum availability", LastUpdateTime: at, LastTransitionTime: at},
					{Type: v1alpha1.RolloutPaused, Status: corev1.ConditionTrue, Reason: "RolloutPaused", Message: "Rollout is paused", LastUpdateTime: later, LastTransitionTime: later},
					{Type: v1alpha1.RolloutHealthy, Status: corev1.ConditionFalse, Reason: "RolloutHealthy", Message: "Rollout does not have updated replicas", LastUpdateTime: later, LastTransitionTime: later},
				},
			},
		}
		applied, err := json.Marshal(map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
			"metadata": map[string]any{"name": name, "namespace": items[i].Namespace, "labels": items[i].Labels}, "spec": items[i].Spec})
		if err != nil {
			tb.Fatal(err)
		}
		items[i].Annotations[corev1.LastAppliedConfigAnnotation] = string(applied) + "\n"
	}
	body, err := json.Marshal(map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "RolloutList", "metadata": map[string]string{"resourceVersion": "200000"}, "items": items})
	if err != nil {
		tb.Fatal(err)
	}
	return body
}

// TestFleetRolloutListDecodes: the benchmark's list decodes to what was
// written, times included (the decoders' own agreement on times is
// internal/fastjson's test).
func TestFleetRolloutListDecodes(t *testing.T) {
	items, _, err := decodeJSONList[v1alpha1.Rollout](bytes.NewReader(fleetRolloutList(t, 3)), fastjson.CaseSensitiveReadFleet)
	if err != nil || len(items) != 3 {
		t.Fatalf("%d items, %v", len(items), err)
	}
	ro := items[2]
	if ro.Name != "app-0002" || len(ro.Status.Conditions) != 4 || ro.Status.PauseConditions[0].StartTime.Unix() != time.Date(2026, 8, 11, 3, 13, 10, 0, time.UTC).Unix() ||
		ro.Status.Conditions[1].LastUpdateTime.Unix() != ro.CreationTimestamp.Unix() || ro.CreationTimestamp.IsZero() {
		t.Fatalf("decoded otherwise: %+v", ro)
	}
	if ro.Annotations["rollout.argoproj.io/revision"] != "7" {
		t.Errorf("annotations %v", ro.Annotations)
	}
}

// productionPodSpec is a pod spec as production Rollouts carry them: an
// application container with its environment, resources, three probes, a
// preStop hook and mounts, a log shipper beside it, volumes, anti-affinity,
// a toleration and a spread constraint.
func productionPodSpec() corev1.PodSpec {
	var env []corev1.EnvVar
	for i := range 25 {
		env = append(env, corev1.EnvVar{Name: fmt.Sprintf("APP_SETTING_%02d", i), Value: fmt.Sprintf("value-%d-of-the-setting", i)})
	}
	env = append(env, corev1.EnvVar{Name: "DB_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "password"}}})
	probe := func(path string) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("http")}}, PeriodSeconds: 5, FailureThreshold: 3, TimeoutSeconds: 2}
	}
	res := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")},
		Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}
	grace, yes := int64(45), true
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "app"}}
	return corev1.PodSpec{
		ServiceAccountName: "app", TerminationGracePeriodSeconds: &grace,
		Containers: []corev1.Container{{
			Name: "app", Image: "registry.example/app:2026.08.05-1", Env: env, Resources: res,
			Ports:          []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}, {Name: "metrics", ContainerPort: 9090}},
			ReadinessProbe: probe("/ready"), LivenessProbe: probe("/live"), StartupProbe: probe("/started"),
			Lifecycle:       &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sleep", "15"}}}},
			VolumeMounts:    []corev1.VolumeMount{{Name: "config", MountPath: "/etc/app"}, {Name: "secrets", MountPath: "/etc/secrets", ReadOnly: true}, {Name: "tmp", MountPath: "/tmp"}},
			SecurityContext: &corev1.SecurityContext{RunAsNonRoot: &yes, ReadOnlyRootFilesystem: &yes},
		}, {Name: "log-shipper", Image: "registry.example/fluent-bit:3.1", Resources: res, VolumeMounts: []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}}}},
		Volumes: []corev1.Volume{
			{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}}}},
			{Name: "secrets", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "app-secrets"}}},
			{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
			{Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname", LabelSelector: selector}}}}},
		Tolerations:               []corev1.Toleration{{Key: "dedicated", Operator: "Equal", Value: "payments", Effect: "NoSchedule"}},
		TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: "ScheduleAnyway", LabelSelector: selector}},
	}
}

// BenchmarkFleetRollouts decodes a page of 1,000 Rollouts as a scan reads
// it from the API server (JSON: the Rollout has no protobuf), whole and,
// as a scan does, without what it does not read (managedFields, the
// last-applied-configuration annotation, all of the pod spec but the
// containers' names and images); with a pod spec of one container and
// its image, and with a production one.
func BenchmarkFleetRollouts(b *testing.B) {
	for _, spec := range []struct {
		name string
		body []byte
	}{{"minimal-template", fleetRolloutList(b, 1000)}, {"production-template", fleetRolloutListWith(b, 1000, productionPodSpec())}} {
		for _, c := range []struct {
			name string
			read func(io.Reader, any) error
		}{{"all", fastjson.CaseSensitiveRead}, {"fleet", fastjson.CaseSensitiveReadFleet}} {
			b.Run(spec.name+"/"+c.name, func(b *testing.B) {
				b.SetBytes(int64(len(spec.body)))
				b.ReportAllocs()
				for b.Loop() {
					if _, _, err := decodeJSONList[v1alpha1.Rollout](bytes.NewReader(spec.body), c.read); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
