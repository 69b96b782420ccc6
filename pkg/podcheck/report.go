package podcheck

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// This file is the pods command's report: the template, each pod, each
// Service, the grace arithmetic and the findings.

// Report is the result of the pods command: the template's readiness
// and termination settings, each pod against its node and endpoints, the
// Services on the traffic path, the grace-period arithmetic, and findings.
type Report struct {
	APIVersion   string    `json:"apiVersion"`
	Kind         string    `json:"kind"`
	WorkloadKind string    `json:"workloadKind"`
	Namespace    string    `json:"namespace"`
	Name         string    `json:"name"`
	TakenAt      time.Time `json:"takenAt"`
	Source       string    `json:"source"`

	Template TemplateView    `json:"template"`
	Pods     []PodRow        `json:"pods"`
	Services []ServiceRow    `json:"services"`
	Grace    Grace           `json:"grace"`
	Findings []rules.Finding `json:"findings"`
	Gaps     []snapshot.Gap  `json:"gaps,omitempty"`
	Replicas int32           `json:"replicas"`
	Strategy string          `json:"strategy"`
	Assumed  string          `json:"controllerAssumed,omitempty"`
}

// TemplateView summarises what the pod template says about readiness and
// termination.
type TemplateView struct {
	TerminationGracePeriodSeconds int64           `json:"terminationGracePeriodSeconds"`
	GraceDefaulted                bool            `json:"graceDefaulted,omitempty"`
	Containers                    []ContainerView `json:"containers"`
	ReadinessGates                []string        `json:"readinessGates,omitempty"`
	IstioSidecar                  string          `json:"istioSidecar,omitempty"` // why we think there is one
	IstioDrain                    string          `json:"istioTerminationDrainDuration,omitempty"`
}

// ContainerView is one container's probes and preStop.
type ContainerView struct {
	Name      string `json:"name"`
	Readiness string `json:"readiness,omitempty"`
	Liveness  string `json:"liveness,omitempty"`
	PreStop   string `json:"preStop,omitempty"`
}

// PodRow is one pod as the traffic path sees it.
type PodRow struct {
	Name        string `json:"name"`
	ReplicaSet  string `json:"replicaSet,omitempty"`
	Role        string `json:"role,omitempty"` // canary / stable / experiment for a Rollout
	Node        string `json:"node,omitempty"`
	Phase       string `json:"phase"`
	Ready       bool   `json:"ready"`
	Terminating bool   `json:"terminating,omitempty"`
	NodeReady   string `json:"nodeReady,omitempty"`
	LeaseAge    string `json:"nodeLeaseAge,omitempty"`
	LeaseStale  bool   `json:"nodeLeaseStale,omitempty"` // older than half the lease duration: the kubelet missed renewals
	Endpoints   string `json:"endpoints,omitempty"`      // "svc: ready" …
	GatesUnmet  string `json:"gatesUnmet,omitempty"`
}

// ServiceRow is one Service selecting the pods.
type ServiceRow struct {
	Name                  string `json:"name"`
	Type                  string `json:"type"`
	ExternalTrafficPolicy string `json:"externalTrafficPolicy,omitempty"`
	Weight                *int32 `json:"weight,omitempty"`
	// EndpointsRead is false when the snapshot holds no EndpointSlices to count.
	EndpointsRead bool     `json:"endpointsRead"`
	Ready         int      `json:"readyEndpoints"`
	NotReady      int      `json:"notReadyEndpoints"`
	Terminating   int      `json:"terminatingEndpoints"`
	Ingresses     []string `json:"ingresses,omitempty"`
}

// Options tune a pods run.
type Options struct {
	// Source describes where the snapshot came from, for the header.
	Source string
	// StaticOnly runs only the checks that need manifests alone (lint).
	StaticOnly bool
	// Grace holds the grace calculator's inputs (--p99, --lb-interval, …).
	Grace GraceInput
}

// Run checks one workload's pods. For a Rollout, cv picks the versioned
// citations; pass the zero value for a Deployment.
func Run(w *snapshot.Workload, cv model.ControllerVersion, opt Options) *Report {
	if cv.Assumed == "" {
		cv.Assumed = upstream.Newest()
	}
	ctx := &Context{W: w, Version: cv.Assumed, Grace: opt.Grace}
	rep := &Report{APIVersion: rules.ReportAPIVersion, Kind: "PodCheck", WorkloadKind: w.Kind, Namespace: w.Namespace, Name: w.Name,
		TakenAt: w.Now, Source: opt.Source, Gaps: w.Gaps, Findings: []rules.Finding{}, Replicas: w.Replicas, Strategy: w.Strategy}
	if w.Kind == snapshot.KindRollout {
		rep.Assumed = string(cv.Assumed)
	}
	rep.Template = templateView(w)
	rep.Pods = podRows(w)
	rep.Services = serviceRows(w, cv.Assumed)
	rep.Grace = GraceFor(w, opt.Grace)
	rep.Findings = Findings(ctx, opt.StaticOnly)
	return rep
}

// Worst is the highest severity among the findings (0 when none).
func (r *Report) Worst() rules.Severity { return rules.Worst(r.Findings) }

func probeText(c *corev1.Container, p *corev1.Probe) string {
	if p == nil {
		return ""
	}
	period, failures := p.PeriodSeconds, p.FailureThreshold
	if period == 0 {
		period = 10 // the API defaults
	}
	if failures == 0 {
		failures = 3
	}
	return fmt.Sprintf("%s every %ds, fails after %d", handlerKey(c, p), period, failures)
}

func templateView(w *snapshot.Workload) TemplateView {
	spec := &w.Template.Spec
	t := TemplateView{TerminationGracePeriodSeconds: graceSeconds(spec), GraceDefaulted: spec.TerminationGracePeriodSeconds == nil}
	for _, c := range appContainers(spec) {
		cv := ContainerView{Name: c.Name, Readiness: probeText(c, c.ReadinessProbe), Liveness: probeText(c, c.LivenessProbe)}
		if s, ok, known := preStopSeconds(c); ok {
			cv.PreStop = "hook (duration unknown)"
			if known {
				cv.PreStop = secs(s) + " s"
			}
		}
		t.Containers = append(t.Containers, cv)
	}
	for _, g := range spec.ReadinessGates {
		t.ReadinessGates = append(t.ReadinessGates, string(g.ConditionType))
	}
	if on, why := istioSidecar(w); on {
		t.IstioSidecar = why
		d, from := istioDrain(w)
		t.IstioDrain = fmt.Sprintf("%s (%s)", d, from)
	}
	return t
}

func podRows(w *snapshot.Workload) []PodRow {
	eps := endpointsByPod(w)
	roles := map[string]string{}
	if ro := w.Rollout; ro != nil {
		roles[ro.Status.StableRS] = "stable"
		if h := ro.Status.CurrentPodHash; h != "" && h != ro.Status.StableRS {
			roles[h] = "canary"
		}
	}
	var out []PodRow
	// An Experiment's pods follow the Rollout's: they are not counted as
	// its pods, but a Service that selects them by app label reaches them.
	for i, p := range append(slices.Clip(w.Pods), w.ExperimentPods...) {
		role := roles[snapshot.PodHash(p)]
		if i >= len(w.Pods) {
			role = "experiment"
		}
		row := PodRow{Name: p.Name, ReplicaSet: snapshot.ReplicaSetOf(p), Role: role, Node: p.Spec.NodeName,
			Phase: string(p.Status.Phase), Ready: podReady(p), Terminating: terminating(p)}
		if n := w.Nodes[p.Spec.NodeName]; n != nil {
			st, _ := nodeReadyStatus(n)
			row.NodeReady = string(st)
		}
		if age, dur, ok := leaseAge(w, p.Spec.NodeName); ok {
			row.LeaseAge = age.Round(time.Second).String()
			row.LeaseStale = leaseStale(age, dur)
		}
		var parts []string
		for _, e := range eps[p.Name] {
			s := "not ready"
			switch {
			case e.Ready:
				s = "ready"
			case e.Terminating && e.Serving:
				s = "terminating, serving"
			case e.Terminating:
				s = "terminating"
			}
			parts = append(parts, e.Service+": "+s)
		}
		sort.Strings(parts)
		row.Endpoints = strings.Join(parts, "; ")
		var unmet []string
		for _, g := range p.Spec.ReadinessGates {
			if ok, _ := condTrue(p.Status.Conditions, g.ConditionType); !ok {
				unmet = append(unmet, string(g.ConditionType))
			}
		}
		row.GatesUnmet = strings.Join(unmet, ", ")
		out = append(out, row)
	}
	return out
}

func serviceRows(w *snapshot.Workload, ver upstream.Version) []ServiceRow {
	weights, _ := serviceWeights(w, ver)
	var out []ServiceRow
	for _, s := range w.Services {
		row := ServiceRow{Name: s.Name, Type: string(s.Spec.Type), ExternalTrafficPolicy: string(s.Spec.ExternalTrafficPolicy)}
		if row.Type == "" {
			row.Type = "ClusterIP"
		}
		if wt, ok := weights[s.Name]; ok {
			row.Weight = &wt
		}
		row.EndpointsRead = w.SlicesRead
		for _, es := range w.EndpointSlices[s.Name] {
			for _, e := range es.Endpoints {
				switch {
				case boolOr(e.Conditions.Terminating, false):
					row.Terminating++
				case boolOr(e.Conditions.Ready, true):
					row.Ready++
				default:
					row.NotReady++
				}
			}
		}
		for _, ing := range w.Ingresses {
			for _, n := range snapshot.IngressServices(ing) {
				if n == s.Name {
					row.Ingresses = append(row.Ingresses, ing.Name)
					break
				}
			}
		}
		out = append(out, row)
	}
	return out
}
