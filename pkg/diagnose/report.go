package diagnose

import (
	"fmt"
	"strings"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/podcheck"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/router"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// Report is the result of diagnose: one document, rendered as human text,
// JSON or YAML.
type Report struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Namespace  string    `json:"namespace"`
	Name       string    `json:"name"`
	TakenAt    time.Time `json:"takenAt"`
	// TimeInferred: the input did not say when it was taken; TakenAt is its
	// newest timestamp and ages are lower bounds.
	TimeInferred bool   `json:"timeInferred,omitempty"`
	Source       string `json:"source"` // "cluster <context>" or "file <name>"

	Controller model.ControllerVersion `json:"controller"`
	// VersionDifferences lists where other modeled versions would predict
	// differently; filled when the version is not known exactly.
	VersionDifferences []string `json:"versionDifferences,omitempty"`

	State   State    `json:"state"`
	Traffic *Traffic `json:"traffic,omitempty"`
	// PodShare is how requests split for a canary without trafficRouting
	// while an update is under way (nil otherwise).
	PodShare *PodShare        `json:"podShare,omitempty"`
	Sets     []ReplicaSetView `json:"replicaSets"`
	// AnalysisRuns are the runs of the current revision and the one that
	// aborted it, metric by metric.
	AnalysisRuns []AnalysisRunView `json:"analysisRuns,omitempty"`
	// Experiments are the current revision's Experiments, created by its
	// experiment steps.
	Experiments []ExperimentView `json:"experiments,omitempty"`
	// Churn is the fights diagnose --watch saw over its reads: writers of
	// the same fields alternating (empty outside --watch).
	Churn    []*Churn        `json:"churn,omitempty"`
	Findings []rules.Finding `json:"findings"`
	Gaps     []snapshot.Gap  `json:"gaps,omitempty"`
	// ReplicaSetsUnread is the gap that kept the Rollout's ReplicaSets from
	// being read (nil when they were read). Then the ReplicaSet table, the
	// model and the version differences are left out, the traffic's
	// availability and next pass and state.rollbackWithinWindow are not
	// known (zero and false), and only the rules that need no ReplicaSets
	// ran.
	ReplicaSetsUnread *snapshot.Gap `json:"replicaSetsUnread,omitempty"`
	// ControllerLog is the controller's log about the Rollout, when it was
	// read (--controller-logs).
	ControllerLog *ControllerLogView `json:"controllerLog,omitempty"`
	Model         *model.Analysis    `json:"model,omitempty"`
}

// State is the Rollout's own status, summarised.
type State struct {
	Phase        string `json:"phase"`
	Message      string `json:"message,omitempty"`
	Strategy     string `json:"strategy"`
	Replicas     int32  `json:"replicas"`
	StepIndex    int32  `json:"stepIndex"`
	StepCount    int    `json:"stepCount"`
	CurrentStep  string `json:"currentStep,omitempty"`
	Aborted      bool   `json:"aborted"`
	Paused       bool   `json:"paused"`
	PromoteFull  bool   `json:"promoteFull,omitempty"`
	RollbackBack bool   `json:"rollbackWithinWindow"`
	StableHash   string `json:"stableHash,omitempty"`
	CurrentHash  string `json:"currentHash,omitempty"`
}

// Traffic is where traffic is and where the controller will put it next.
type Traffic struct {
	Router          string `json:"router"`
	CanaryWeight    int32  `json:"canaryWeight"`
	StableWeight    int32  `json:"stableWeight"`
	MaxWeight       int32  `json:"maxWeight"`
	CanaryAvailable int32  `json:"canaryAvailable"`
	StableAvailable int32  `json:"stableAvailable"`
	// CanarySpec and StableSpec are the ReplicaSets' spec.replicas: the same
	// counts as the ReplicaSet table.
	CanarySpec int32  `json:"canarySpecReplicas"`
	StableSpec int32  `json:"stableSpecReplicas"`
	CanaryHash string `json:"canaryHash,omitempty"`
	NextWeight int32  `json:"nextWeight"`
	NextBranch string `json:"nextBranch"`
	// NextPromotes, when set, says that the next pass also makes the
	// canary stable, and why (the controller's reason).
	NextPromotes string   `json:"nextPromotes,omitempty"`
	NextWhy      string   `json:"nextWhy"`
	Held         []string `json:"heldBy,omitempty"`
	// RouterWeight is the canary weight the router's objects really apply
	// (nil when they were not read); Objects is what they say, object by
	// object, with who wrote them and the controller code that does.
	RouterWeight *int32        `json:"routerWeight,omitempty"`
	Objects      *router.State `json:"routerState,omitempty"`
	// HeldGates are the gates in Held, for the human view (which says them
	// in words).
	HeldGates []model.Gate `json:"-"`
}

// PodShare is a canary's share of the requests without trafficRouting: the
// steps' setWeight only sizes the ReplicaSets, and a Service that selects
// the pods of both (the usual one, by the app's labels) spreads requests
// over every ready pod, whichever ReplicaSet it belongs to.
type PodShare struct {
	CanaryReady int32 `json:"canaryReady"`
	// OtherReady are ready pods of every other ReplicaSet: the stable's and
	// an older one's still scaling down.
	OtherReady int32 `json:"otherReady"`
	// OlderReady are the ready pods, among OtherReady, of ReplicaSets that
	// are neither the canary nor the stable (a revision the canary
	// replaced mid-rollout): they take requests until scaled down.
	OlderReady int32 `json:"olderReady,omitempty"`
	// Percent is the canary's share of the ready pods, rounded down.
	Percent int32 `json:"percent"`
	// SetWeight is the share the steps size the canary for now (the last
	// setWeight at or before the current step; the maximum after the last).
	SetWeight int32 `json:"setWeight"`
	// StableService and CanaryService are the Services the Rollout names:
	// the controller points each at one ReplicaSet's pods even without
	// trafficRouting, so what reaches them is not shared by pod count.
	StableService string `json:"stableService,omitempty"`
	CanaryService string `json:"canaryService,omitempty"`
	// StepCanary and StepStable are the pod counts the controller takes
	// the canary and stable to for SetWeight (the closest to it, of
	// replicas pods or one more when maxSurge allows).
	StepCanary int32 `json:"stepCanary"`
	StepStable int32 `json:"stepStable"`
	// CanarySpec and StableSpec are the ReplicaSets' sizes now; NextCanary
	// and NextStable what the controller's next pass scales them to (one
	// of them a pass, the stable first, within maxSurge and
	// maxUnavailable).
	CanarySpec int32 `json:"canarySpec"`
	StableSpec int32 `json:"stableSpec"`
	NextCanary int32 `json:"nextCanary"`
	NextStable int32 `json:"nextStable"`
	// OlderMoves are the older ReplicaSets the next pass scales down.
	OlderMoves []RSMove `json:"olderMoves,omitempty"`
	// Waits says why the next pass scales nothing while the step's sizes
	// are not reached: maxSurge allows no more pods and maxUnavailable no
	// fewer available ones, so it waits for a pod to become available.
	Waits string `json:"waits,omitempty"`
	// MaxSurge and MaxUnavailable resolved against replicas.
	MaxSurge       int32           `json:"maxSurge"`
	MaxUnavailable int32           `json:"maxUnavailable"`
	Cites          []upstream.Cite `json:"cites,omitempty"`
}

// RSMove is a ReplicaSet the next pass scales.
type RSMove struct {
	Name     string `json:"name"`
	Revision string `json:"revision,omitempty"`
	From     int32  `json:"from"`
	To       int32  `json:"to"`
}

// ReplicaSetView is one ReplicaSet row.
type ReplicaSetView struct {
	// Role is canary, stable, old; for blue-green what the Services select:
	// active, preview, active+preview, stable (the stable selected by no
	// Service), old.
	Role string `json:"role"`
	model.RS
}

// Options tune a diagnosis.
type Options struct {
	// Source describes where the snapshot came from, for the header.
	Source string
	// StaticOnly runs only the rules that need manifests alone (lint).
	StaticOnly bool
	// Pods holds the grace calculator's inputs for the pod checks.
	Pods podcheck.GraceInput
	// NoPods skips the pod checks: scan reads no pods or Services, and a
	// fleet view ranks Rollout state, not template hygiene.
	NoPods bool
	// History, when set (diagnose --watch), is given this read and keeps
	// the reads before it: writers alternating between reads make RD160
	// (the Rollout) and RD135 (router objects) fire live.
	History *History
}

// Run diagnoses one Rollout view. It is pure: same view, same version, same report.
func Run(v *snapshot.View, cv model.ControllerVersion, opt Options) *Report {
	a := model.Analyze(v, cv.Assumed)
	ctx := &Context{View: v, Version: cv, Analysis: a, ro: v.Rollout, runs: analysisRuns(v, a), experiments: experiments(v)}
	var objs *snapshot.Router
	if v.Workload != nil {
		objs = v.Workload.Router
	}
	ctx.Router = router.Read(v.Rollout, objs, cv.Assumed, router.FlagsOf(v.Controllers))
	ctx.observeHistory(opt.History)
	rep := &Report{
		APIVersion: rules.ReportAPIVersion, Kind: "Diagnosis",
		Namespace: v.Rollout.Namespace, Name: v.Rollout.Name,
		TakenAt: v.Now, TimeInferred: v.NowInferred, Source: opt.Source, Controller: cv,
		Gaps: v.Header.Gaps, Model: &a, ControllerLog: controllerLogView(v.Header.ControllerLog),
	}
	if !cv.Known() || !cv.Exact {
		rep.VersionDifferences = model.Differences(v, cv.Assumed)
	}
	rep.State = state(v.Rollout, a)
	rep.Sets = sets(a.Inputs)
	rep.AnalysisRuns = ctx.runs
	rep.Experiments = ctx.experiments
	rep.Churn = ctx.sortedChurn()
	if a.BlueGreen != nil {
		rep.Sets = bgSets(a.Inputs)
	}
	rep.PodShare = podShare(v, a)
	if a.Inputs.TrafficRouted {
		rep.Traffic = traffic(v.Rollout, a)
		rep.Traffic.Objects = ctx.Router
		if ctx.Router != nil {
			rep.Traffic.Router = ctx.Router.Router
			if c := ctx.Router.Canary; c != nil {
				w := *c
				rep.Traffic.RouterWeight = &w
			}
		}
		if r := rep.Traffic.Router; r == "istio" {
			rep.Traffic.Router = routerName(v.Rollout)
		}
	}
	if g, ok := v.ReplicaSetsUnread(); ok {
		// What the model says rests on the ReplicaSets: none of it is
		// shown, rather than predictions for a Rollout without any.
		rep.ReplicaSetsUnread = &g
		rep.Sets, rep.Model, rep.VersionDifferences, rep.State.RollbackBack = nil, nil, nil, false
		if rep.Traffic != nil {
			t := rep.Traffic
			t.CanaryAvailable, t.StableAvailable, t.CanarySpec, t.StableSpec = 0, 0, 0, 0
			t.NextWeight, t.NextBranch, t.NextWhy, t.NextPromotes, t.Held, t.HeldGates = 0, "", "", "", nil, nil
		}
	}
	invalid := len(a.Inputs.Invalid) > 0
	rep.Findings = checks.Run(ctx, func(r *rules.Rule) bool {
		// A spec the controller rejects is not acted on: rules that reason
		// from its values would compute with numbers the controller never
		// uses. Only RD113 and the rules about state and data remain.
		if invalid && !r.OnInvalidSpec {
			return true
		}
		// ReplicaSets that could not be read are not ReplicaSets that do
		// not exist: no rule may reason from their absence.
		if rep.ReplicaSetsUnread != nil && r.Scope == rules.Live && !r.WithoutReplicaSets {
			return true
		}
		// An offline file has no record of what could not be read.
		return r.Scope == rules.Live && (opt.StaticOnly || v.Header.Offline && r.ID == "RD110")
	})
	if v.Workload != nil && !opt.NoPods {
		pods := &podcheck.Context{W: v.Workload, Version: cv.Assumed, Grace: opt.Pods}
		// A Service RD131 reports from the router's side is not reported
		// again by the pods check.
		dup := routerBackendServices(rep.Findings)
		for _, f := range podcheck.Findings(pods, opt.StaticOnly) {
			if f.ID == "RD324" && len(f.Evidence) > 0 && dup[f.Evidence[0].Object[strings.LastIndex(f.Evidence[0].Object, "/")+1:]] {
				continue
			}
			rep.Findings = append(rep.Findings, f)
		}
	}
	rules.Sort(rep.Findings)
	return rep
}

// Worst is the highest severity among the findings (0 when none).
func (r *Report) Worst() rules.Severity { return rules.Worst(r.Findings) }

func state(ro *v1alpha1.Rollout, a model.Analysis) State {
	in := a.Inputs
	s := State{
		Phase: string(ro.Status.Phase), Message: ro.Status.Message, Replicas: in.Replicas,
		StepIndex: in.Index0(), StepCount: len(in.Steps), Aborted: ro.Status.Abort,
		Paused: ro.Spec.Paused || len(ro.Status.PauseConditions) > 0, PromoteFull: ro.Status.PromoteFull,
		RollbackBack: a.Window.WithinWindow, StableHash: ro.Status.StableRS, CurrentHash: ro.Status.CurrentPodHash,
	}
	switch {
	case ro.Spec.Strategy.Canary != nil:
		s.Strategy = "canary"
	case ro.Spec.Strategy.BlueGreen != nil:
		s.Strategy = "blueGreen"
	default:
		s.Strategy = "no strategy"
	}
	if s.Phase == "" {
		s.Phase = "Unknown"
	}
	if s.StepIndex < 0 {
		s.CurrentStep = "invalid (negative index)"
	} else if int(s.StepIndex) < len(in.Steps) {
		s.CurrentStep = model.StepString(in.Steps[s.StepIndex])
	} else if int(s.StepIndex) > len(in.Steps) {
		s.CurrentStep = fmt.Sprintf("past the end of the %d steps: the controller treats every step as done", len(in.Steps))
	} else if len(in.Steps) > 0 {
		s.CurrentStep = "after the last step"
	}
	return s
}

func sets(in model.Inputs) []ReplicaSetView {
	var out []ReplicaSetView
	for i := len(in.All) - 1; i >= 0; i-- {
		r := in.All[i]
		role := "old"
		isNew := in.New != nil && r.Name == in.New.Name
		isStable := in.Stable != nil && r.Name == in.Stable.Name
		switch {
		case isNew && isStable:
			role = "stable"
		case isNew:
			role = "canary"
		case isStable:
			role = "stable"
		}
		if role == "old" && r.Spec == 0 && r.Available == 0 && len(out) >= 4 {
			continue // keep the table short: old, empty ReplicaSets beyond a few
		}
		out = append(out, ReplicaSetView{Role: role, RS: *r})
	}
	return out
}

func traffic(ro *v1alpha1.Rollout, a model.Analysis) *Traffic {
	in := a.Inputs
	t := &Traffic{Router: routerName(ro), MaxWeight: in.MaxWeight, StableWeight: in.MaxWeight}
	if in.Weights != nil {
		t.CanaryWeight, t.StableWeight = in.Weights.Canary.Weight, in.Weights.Stable.Weight
		t.CanaryHash = in.Weights.Canary.PodTemplateHash
	}
	for _, r := range in.All {
		if t.CanaryHash != "" && r.Hash == t.CanaryHash {
			t.CanaryAvailable, t.CanarySpec = r.Available, r.Spec
		}
	}
	if t.CanaryHash == "" && in.New != nil {
		t.CanaryAvailable, t.CanarySpec = in.New.Available, in.New.Spec
	}
	if in.Stable != nil {
		t.StableAvailable, t.StableSpec = in.Stable.Available, in.Stable.Spec
	}
	t.NextWeight, t.NextBranch, t.NextWhy = a.Next.Weight, string(a.Next.Decision.Branch), a.Next.Decision.Why
	if a.Next.Promotes && in.New != nil && in.StableHash != in.CurrentPodHash {
		t.NextPromotes = fmt.Sprintf("%s becomes stable on this pass (%s)", in.New.Name, a.Next.PromoteWhy)
	}
	if len(in.Invalid) > 0 {
		t.NextBranch, t.NextWhy = "invalid-spec", a.Next.IndexWhy
	}
	for _, g := range a.Next.Gates {
		if g.Holds {
			t.Held = append(t.Held, fmt.Sprintf("%s (%s)", g.Name, g.Effect))
			t.HeldGates = append(t.HeldGates, g)
		}
	}
	return t
}

func routerName(ro *v1alpha1.Rollout) string {
	c := ro.Spec.Strategy.Canary
	if c == nil || c.TrafficRouting == nil {
		return "none"
	}
	tr := c.TrafficRouting
	switch {
	case tr.Istio != nil:
		if c.CanaryService == "" && c.StableService == "" {
			return "istio (subset-only)"
		}
		if tr.Istio.DestinationRule != nil {
			return "istio (subset + services)"
		}
		return "istio (host)"
	case tr.Nginx != nil:
		return "nginx"
	case tr.ALB != nil:
		return "alb"
	case tr.SMI != nil:
		return "smi"
	case tr.Traefik != nil:
		return "traefik"
	case tr.Ambassador != nil:
		return "ambassador"
	case tr.AppMesh != nil:
		return "appmesh"
	case tr.Apisix != nil:
		return "apisix"
	case len(tr.Plugins) > 0:
		for k := range tr.Plugins {
			return "plugin " + k
		}
	}
	return "unknown"
}

// bgSets labels a blue-green Rollout's ReplicaSets by what its Services
// actually select (for a Service not read, what the status records the
// controller set on it).
func bgSets(in model.Inputs) []ReplicaSetView {
	var out []ReplicaSetView
	bg := in.BG
	for i := len(in.All) - 1; i >= 0; i-- {
		r := in.All[i]
		var roles []string
		if (bg.Active.Found || bg.Active.Unread) && bg.Active.HasHash && bg.Active.Hash == r.Hash {
			roles = append(roles, "active")
		}
		if (bg.Preview.Found || bg.Preview.Unread) && bg.Preview.HasHash && bg.Preview.Hash == r.Hash {
			roles = append(roles, "preview")
		}
		role := strings.Join(roles, "+")
		if role == "" {
			role = "old"
			if r.Hash != "" && r.Hash == in.StableHash {
				role = "stable"
			}
		}
		if role == "old" && r.Spec == 0 && r.Available == 0 && len(out) >= 4 {
			continue
		}
		out = append(out, ReplicaSetView{Role: role, RS: *r})
	}
	return out
}

// podShare is the canary's share of ready pods for a canary without
// trafficRouting, while its ReplicaSet is not the stable one. A running
// Experiment's pods count too: its templates keep the pod template's
// labels, pod-template-hash included, so the same Services select them.
func podShare(v *snapshot.View, a model.Analysis) *PodShare {
	in := a.Inputs
	ro := v.Rollout
	if ro.Spec.Strategy.Canary == nil || in.TrafficRouted || in.New == nil || in.Stable != nil && in.New.Name == in.Stable.Name || in.Unobserved {
		return nil
	}
	c := ro.Spec.Strategy.Canary
	p := &PodShare{CanaryReady: in.New.Ready, SetWeight: model.CurrentSetWeight(in), StableService: c.StableService, CanaryService: c.CanaryService,
		CanarySpec: in.New.Spec, NextCanary: a.Next.CanaryTarget, MaxSurge: in.MaxSurge, MaxUnavailable: in.MaxUnavailable}
	p.StepCanary, p.StepStable = model.BasicStepCounts(in)
	if in.Stable != nil {
		p.StableSpec, p.NextStable = in.Stable.Spec, a.Next.StableTarget
	}
	p.Cites = []upstream.Cite{upstream.At("bc.counts", in.Version), upstream.At("bc.stable-first", in.Version)}
	if c.StableService != "" || c.CanaryService != "" {
		p.Cites = append(p.Cites, upstream.At("sv.stable-svc-target", in.Version), upstream.At("sv.canary-svc-target", in.Version))
	}
	for _, r := range in.All {
		if r.Name == in.New.Name {
			continue
		}
		p.OtherReady += r.Ready
		if in.Stable == nil || r.Name != in.Stable.Name {
			p.OlderReady += r.Ready
			if to, ok := a.Next.OtherTargets[r.Name]; ok && to != r.Spec {
				p.OlderMoves = append(p.OlderMoves, RSMove{Name: r.Name, Revision: r.Revision, From: r.Spec, To: to})
			}
		}
	}
	if len(p.OlderMoves) > 0 {
		p.Cites = append(p.Cites, upstream.At("bc.others-down", in.Version))
	}
	switch {
	case model.BasicSized(in):
	case in.Paused:
		p.Waits = "nothing scales while spec.paused is set (a manual pause: plain promote clears it)"
		p.Cites = append(p.Cites, upstream.At("cx.halt-user-paused", in.Version))
	case in.Inconclusive:
		p.Waits = "nothing scales while the InconclusiveAnalysis pause holds (promote or abort ends it)"
		p.Cites = append(p.Cites, upstream.At("cx.halt-inconclusive", in.Version))
	}
	if st, ok := model.BasicStall(in, a.Next); ok {
		p.Waits = fmt.Sprintf("nothing scales until another pod is available: %d pods exist and maxSurge %d allows no more; %d are available and maxUnavailable %d allows no fewer",
			st.Pods, in.MaxSurge, st.Available, in.MaxUnavailable)
		p.Cites = append(p.Cites, upstream.At("bc.older-first", in.Version), upstream.At("bc.others-min-available", in.Version))
	}
	for _, ex := range v.Experiments {
		if ex.Status.Phase.Completed() {
			continue // its ReplicaSets are scaled down
		}
		for _, t := range ex.Spec.Templates {
			var ready int32
			for _, ts := range ex.Status.TemplateStatuses {
				if ts.Name == t.Name {
					ready = ts.ReadyReplicas
				}
			}
			if t.Template.Labels[v1alpha1.DefaultRolloutUniqueLabelKey] == in.New.Hash {
				p.CanaryReady += ready
			} else {
				p.OtherReady += ready
			}
		}
	}
	if total := p.CanaryReady + p.OtherReady; total > 0 {
		p.Percent = int32(int64(p.CanaryReady) * 100 / int64(total))
	}
	return p
}
