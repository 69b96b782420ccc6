package diagnose

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestIsHung: when a pod unready for a while counts as hung — after two
// minutes once it has run (restarted, crashing, or unready since after its
// container started); after ten while it may still be starting, and not
// before its probes would let a slow start turn Ready.
func TestIsHung(t *testing.T) {
	created := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	started := created.Add(30 * time.Second)
	always := corev1.ContainerRestartPolicyAlways
	// pod is never Ready since its creation, its container "app" running
	// since started unless edit says otherwise.
	pod := func(edit func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "app-1", CreationTimestamp: metav1.NewTime(created)},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}},
			Status: corev1.PodStatus{
				Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(created)}},
				ContainerStatuses: []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}}}},
			},
		}
		if edit != nil {
			edit(p)
		}
		return p
	}
	// startup allows 30 × 30 s = 15 min after the container started.
	startup := func(p *corev1.Pod) {
		p.Spec.Containers[0].StartupProbe = &corev1.Probe{FailureThreshold: 30, PeriodSeconds: 30}
	}
	crashed := func(p *corev1.Pod) {
		p.Status.ContainerStatuses[0].RestartCount = 1
	}
	for _, c := range []struct {
		name  string
		pod   *corev1.Pod
		after time.Duration // since created
		hung  bool
	}{
		{"Ready", pod(func(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionTrue }), time.Hour, false},
		{"no probe, starting for 9 min", pod(nil), 9 * time.Minute, false},
		{"no probe, starting for 11 min", pod(nil), 11 * time.Minute, true},
		{"restarted, unready 3 min", pod(crashed), 3 * time.Minute, true},
		{"restarted, unready 1 min", pod(crashed), time.Minute, false},
		// Ready once, then unready since 00:05 (after its start): it ran.
		{"unready 3 min after it ran", pod(func(p *corev1.Pod) {
			p.Status.Conditions[0].LastTransitionTime = metav1.NewTime(created.Add(5 * time.Minute))
		}), 8 * time.Minute, true},
		// 15 min 30 s: the startupProbe still has 5 min 30 s at 10 min.
		{"startupProbe of 15 min, starting for 11 min", pod(startup), 11 * time.Minute, false},
		{"startupProbe of 15 min, starting for 15 min", pod(startup), 15 * time.Minute, false},
		{"startupProbe of 15 min, starting for 16 min", pod(startup), 16 * time.Minute, true},
		// The budget runs from the container's start, which is unknown
		// while it waits to be created: ten minutes it is.
		{"startupProbe of 15 min, container not started for 11 min", pod(func(p *corev1.Pod) {
			startup(p)
			p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
		}), 11 * time.Minute, true},
		// A probe that restarted the container did its job: the pod failed.
		{"startupProbe of 15 min, restarted, unready 11 min", pod(func(p *corev1.Pod) { startup(p); crashed(p) }), 11 * time.Minute, true},
		// readiness from 12 min after the start (30 s after creation), two
		// successes 10 s apart: Ready by 12 min 50 s.
		{"readinessProbe from 12 min, at 12 min 45 s", pod(func(p *corev1.Pod) {
			p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{InitialDelaySeconds: 720, SuccessThreshold: 2}
		}), 12*time.Minute + 45*time.Second, false},
		{"readinessProbe from 12 min, at 13 min", pod(func(p *corev1.Pod) {
			p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{InitialDelaySeconds: 720, SuccessThreshold: 2}
		}), 13 * time.Minute, true},
		// Short probes leave the ten minutes as they are.
		{"startupProbe of 1 min, starting for 9 min", pod(func(p *corev1.Pod) {
			p.Spec.Containers[0].StartupProbe = &corev1.Probe{}
		}), 9 * time.Minute, false},
		// A sidecar's startupProbe of 20 min holds the pod back too.
		{"sidecar startupProbe of 20 min, at 16 min", pod(func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "proxy", RestartPolicy: &always, StartupProbe: &corev1.Probe{FailureThreshold: 40, PeriodSeconds: 30}}}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "proxy", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(created.Add(10 * time.Second))}}}}
		}), 16 * time.Minute, false},
		{"sidecar startupProbe of 20 min, at 21 min", pod(func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "proxy", RestartPolicy: &always, StartupProbe: &corev1.Probe{FailureThreshold: 40, PeriodSeconds: 30}}}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "proxy", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(created.Add(10 * time.Second))}}}}
		}), 21 * time.Minute, true},
	} {
		if got := isHung(c.pod, created.Add(c.after)); got != c.hung {
			t.Errorf("%s: hung %v, want %v", c.name, got, c.hung)
		}
	}
}
