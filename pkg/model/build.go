package model

import (
	"strconv"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/router"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// Annotation keys the controller sets on ReplicaSets.
const (
	annRevision          = "rollout.argoproj.io/revision"
	annScaleDownDeadline = "scale-down-deadline"
	annExperiment        = "experiment.argoproj.io/name"
)

// RSFrom flattens a ReplicaSet.
func RSFrom(rs *appsv1.ReplicaSet) *RS {
	if rs == nil {
		return nil
	}
	spec := int32(1)
	if rs.Spec.Replicas != nil {
		spec = *rs.Spec.Replicas
	}
	return &RS{
		Name:              rs.Name,
		Hash:              rs.Labels[v1alpha1.DefaultRolloutUniqueLabelKey],
		Revision:          rs.Annotations[annRevision],
		Created:           rs.CreationTimestamp.Time,
		Spec:              spec,
		Replicas:          rs.Status.Replicas,
		Ready:             rs.Status.ReadyReplicas,
		Available:         rs.Status.AvailableReplicas,
		Experiment:        rs.Annotations[annExperiment] != "",
		ScaleDownDeadline: rs.Annotations[annScaleDownDeadline],
		Desired:           desiredAnnotation(rs.Annotations),
	}
}

// FromView flattens a Rollout and its ReplicaSets into model inputs for a
// controller version.
func FromView(v *snapshot.View, ver upstream.Version) Inputs {
	ro := v.Rollout
	in := Inputs{Version: ver, Replicas: 1, MaxWeight: 100, Invalid: Validate(ro)}
	if len(in.Invalid) == 0 {
		in.Invalid = RejectedByController(ro)
	}
	if ro.Spec.Replicas != nil {
		in.Replicas = *ro.Spec.Replicas
	}
	in.Paused = ro.Spec.Paused
	if c := ro.Spec.Strategy.Canary; c != nil {
		in.Steps = c.Steps
		in.MinPods = c.MinPodsPerReplicaSet
		in.DSS = c.DynamicStableScale
		in.AbortDelay = c.AbortScaleDownDelaySeconds
		in.RPT = c.ReplicaProgressThreshold
		in.HasServices = c.CanaryService != "" || c.StableService != ""
		in.MaxSurge, in.MaxUnavailable = Fenceposts(c.MaxSurge, c.MaxUnavailable, in.Replicas)
		if tr := c.TrafficRouting; tr != nil {
			in.TrafficRouted = true
			if tr.MaxTrafficWeight != nil && *tr.MaxTrafficWeight > 0 {
				in.MaxWeight = *tr.MaxTrafficWeight
			}
			in.SubsetOnly = tr.Istio != nil && !in.HasServices
			in.ServiceRouted = c.CanaryService != "" && tr.AppMesh == nil && (tr.Istio == nil || tr.Istio.DestinationRule == nil)
		}
	}
	if ro.Spec.Strategy.BlueGreen != nil && ro.Spec.Strategy.Canary == nil {
		blueGreenFromView(v, &in)
	}
	if ro.Spec.RollbackWindow != nil {
		in.WindowRevision = ro.Spec.RollbackWindow.Revisions
	}
	st := ro.Status
	for _, c := range st.PauseConditions {
		in.Inconclusive = in.Inconclusive || c.Reason == v1alpha1.PauseReasonInconclusiveAnalysis
	}
	in.Index = st.CurrentStepIndex
	in.Abort = st.Abort
	for _, c := range st.Conditions {
		if c.Type == v1alpha1.RolloutProgressing && c.Reason == "ProgressDeadlineExceeded" && ro.Spec.ProgressDeadlineAbort {
			in.DeadlineAborted = true
		}
	}
	in.PromoteFull = st.PromoteFull
	in.StableHash = st.StableRS
	in.CurrentPodHash = st.CurrentPodHash
	if st.Canary.Weights != nil {
		w := *st.Canary.Weights
		in.Weights = &w
	}
	if in.TrafficRouted {
		if rs := router.Read(ro, routerObjects(v), ver, router.FlagsOf(v.Controllers)); rs != nil && rs.Canary != nil {
			w := *rs.Canary
			in.RouterWeight = &w
		}
	}
	if c := ro.Spec.Strategy.Canary; c != nil && c.CanaryService != "" && v.Workload != nil {
		for _, svc := range v.Workload.Services {
			if svc.Name == c.CanaryService {
				in.CanaryServiceHash = svc.Spec.Selector[v1alpha1.DefaultRolloutUniqueLabelKey]
			}
		}
	}
	for _, rs := range v.ReplicaSets {
		r := RSFrom(rs)
		in.All = append(in.All, r)
		if r.Hash != "" && r.Hash == st.StableRS {
			in.Stable = r
		}
		if r.Hash != "" && r.Hash == st.CurrentPodHash {
			in.New = r
		}
	}
	if obs, err := strconv.ParseInt(st.ObservedGeneration, 10, 64); err == nil && obs < ro.Generation {
		in.Unobserved = true
		// The controller will pick the ReplicaSet matching the new template;
		// without its hash function we match on the containers' images.
		if m := matchTemplate(ro.Spec.Template, v.ReplicaSets); m != nil {
			in.New = m
		}
	}
	return in
}

// routerObjects are the view's router objects (nil without a workload).
func routerObjects(v *snapshot.View) *snapshot.Router {
	if v.Workload == nil {
		return nil
	}
	return v.Workload.Router
}

// matchTemplate finds the one ReplicaSet whose containers carry exactly the
// template's images, a heuristic used only while the controller has not
// observed the latest spec.
func matchTemplate(t corev1.PodTemplateSpec, rss []*appsv1.ReplicaSet) *RS {
	want := images(t.Spec)
	var found *appsv1.ReplicaSet
	for _, rs := range rss {
		if images(rs.Spec.Template.Spec) == want {
			if found != nil {
				return nil
			}
			found = rs
		}
	}
	return RSFrom(found)
}

func images(s corev1.PodSpec) string {
	out := ""
	for _, c := range s.Containers {
		out += c.Name + "=" + c.Image + ";"
	}
	return out
}
