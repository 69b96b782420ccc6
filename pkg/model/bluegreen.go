package model

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// The blue-green model: what the controller does on a reconcile of a
// blue-green Rollout (rollout/bluegreen.go, rollout/service.go and the
// replica and promotion code it calls), per version, and a replay of its
// passes over time while the ReplicaSets come up and deadlines pass.

// BlueGreen is what the blue-green decisions read beyond Inputs' common
// fields (Replicas, Abort, PromoteFull, StableHash, CurrentPodHash, New,
// Stable, All, WindowRevision, Unobserved).
type BlueGreen struct {
	// Name and Namespace are the Rollout's, for the commands the model names.
	Name                 string `json:"-"`
	Namespace            string `json:"-"`
	PreviewReplicaCount  *int32 `json:"previewReplicaCount,omitempty"`
	AutoPromotionEnabled bool   `json:"autoPromotionEnabled"`
	AutoPromotionSeconds int32  `json:"autoPromotionSeconds,omitempty"`
	// ScaleDownDelay is scaleDownDelaySeconds (30 when unset).
	ScaleDownDelay    int32 `json:"scaleDownDelaySeconds"`
	ScaleDownDelaySet bool  `json:"-"`
	// RevisionLimit is scaleDownDelayRevisionLimit (nil: unlimited).
	RevisionLimit *int32 `json:"scaleDownDelayRevisionLimit,omitempty"`
	// AbortDelay is abortScaleDownDelaySeconds (30 when unset; 0: never).
	AbortDelay    int32 `json:"abortScaleDownDelaySeconds"`
	PrePromotion  bool  `json:"prePromotionAnalysis,omitempty"`
	PostPromotion bool  `json:"postPromotionAnalysis,omitempty"`
	SpecPaused    bool  `json:"specPaused,omitempty"`
	HasPreview    bool  `json:"hasPreviewService"`

	ControllerPause bool `json:"controllerPause,omitempty"`
	// PauseStart is the BlueGreenPause condition's startTime (nil: none).
	PauseStart   *time.Time `json:"pauseStart,omitempty"`
	Inconclusive bool       `json:"inconclusiveAnalysis,omitempty"`
	CheckPoint   bool       `json:"scaleUpPreviewCheckPoint,omitempty"`
	// PrePhase and PostPhase are the current AnalysisRuns' phases as
	// status.blueGreen records them ("" when there is none).
	PrePhase  string `json:"prePromotionAnalysisPhase,omitempty"`
	PostPhase string `json:"postPromotionAnalysisPhase,omitempty"`
	// StatusActive is status.blueGreen.activeSelector (what the controller
	// last recorded); Active and Preview are the live Services.
	StatusActive string      `json:"statusActiveSelector,omitempty"`
	Active       ServiceView `json:"activeService"`
	Preview      ServiceView `json:"previewService"`
	Now          time.Time   `json:"now"`
}

// ServiceView is one blue-green Service as it stands: the hash its
// selector carries and what its EndpointSlices hold.
type ServiceView struct {
	Name  string `json:"name"`
	Found bool   `json:"found"`
	// HasHash is false when the selector has no rollouts-pod-template-hash:
	// it then selects the pods of every ReplicaSet.
	HasHash bool   `json:"hasHash"`
	Hash    string `json:"hash,omitempty"`
	// Ready and NotReady count the endpoints of its EndpointSlices;
	// SlicesRead says whether they were read at all.
	Ready      int32 `json:"readyEndpoints"`
	NotReady   int32 `json:"notReadyEndpoints"`
	SlicesRead bool  `json:"slicesRead"`
	// Unread: the Service was not read (a fleet scan reads none) or could
	// not be (the report's gaps say why), so whether it exists is not known.
	// HasHash and Hash are then the selector the controller last recorded
	// setting on it (status.blueGreen.activeSelector, previewSelector): an
	// unread Service is not one without a hash, which would make every
	// update look fast-tracked.
	Unread bool `json:"unread,omitempty"`
}

func (s ServiceView) clone() ServiceView { return s }

// selects reports whether the Service sends traffic to the ReplicaSet.
func (s ServiceView) selects(r *RS) bool {
	return r != nil && s.Found && (!s.HasHash || s.Hash == r.Hash)
}

// Analysis phases the status records.
const (
	phaseSuccessful = string(v1alpha1.AnalysisPhaseSuccessful)
	phaseFailed     = string(v1alpha1.AnalysisPhaseFailed)
	phaseError      = string(v1alpha1.AnalysisPhaseError)
)

const annDesired = "rollout.argoproj.io/desired-replicas"

// blueGreenFromView fills in.BG from the Rollout and its Services.
func blueGreenFromView(v *snapshot.View, in *Inputs) {
	ro := v.Rollout
	s := ro.Spec.Strategy.BlueGreen
	bg := &BlueGreen{Name: ro.Name, Namespace: ro.Namespace, AutoPromotionEnabled: true, ScaleDownDelay: 30, AbortDelay: 30, Now: v.Now,
		PreviewReplicaCount: s.PreviewReplicaCount, AutoPromotionSeconds: s.AutoPromotionSeconds,
		RevisionLimit: s.ScaleDownDelayRevisionLimit, SpecPaused: ro.Spec.Paused, HasPreview: s.PreviewService != "",
		PrePromotion:    s.PrePromotionAnalysis != nil && len(s.PrePromotionAnalysis.Templates) > 0,
		PostPromotion:   s.PostPromotionAnalysis != nil && len(s.PostPromotionAnalysis.Templates) > 0,
		ControllerPause: ro.Status.ControllerPause, CheckPoint: ro.Status.BlueGreen.ScaleUpPreviewCheckPoint,
		StatusActive: ro.Status.BlueGreen.ActiveSelector}
	if s.AutoPromotionEnabled != nil {
		bg.AutoPromotionEnabled = *s.AutoPromotionEnabled
	}
	if s.ScaleDownDelaySeconds != nil {
		bg.ScaleDownDelay, bg.ScaleDownDelaySet = *s.ScaleDownDelaySeconds, true
	}
	if s.AbortScaleDownDelaySeconds != nil {
		bg.AbortDelay = *s.AbortScaleDownDelaySeconds
	}
	for _, pc := range ro.Status.PauseConditions {
		switch pc.Reason {
		case v1alpha1.PauseReasonBlueGreenPause:
			t := pc.StartTime.Time
			bg.PauseStart = &t
		case v1alpha1.PauseReasonInconclusiveAnalysis:
			bg.Inconclusive = true
		}
	}
	if r := ro.Status.BlueGreen.PrePromotionAnalysisRunStatus; r != nil {
		bg.PrePhase = string(r.Status)
	}
	if r := ro.Status.BlueGreen.PostPromotionAnalysisRunStatus; r != nil {
		bg.PostPhase = string(r.Status)
	}
	bg.Active = serviceView(v, s.ActiveService, ro.Status.BlueGreen.ActiveSelector)
	bg.Preview = serviceView(v, s.PreviewService, ro.Status.BlueGreen.PreviewSelector)
	in.BG = bg
}

// serviceView is the Service name as the snapshot holds it; recorded is the
// selector hash the status says the controller set on it, what stands in
// for a Service that was not read.
func serviceView(v *snapshot.View, name, recorded string) ServiceView {
	sv := ServiceView{Name: name}
	if name == "" || v.Workload == nil {
		return sv
	}
	var svc *corev1.Service
	for _, s := range v.Workload.Services {
		if s.Name == name {
			svc = s
		}
	}
	if svc == nil {
		if !v.Workload.ServicesRead {
			sv.Unread = true
			sv.Hash, sv.HasHash = recorded, recorded != ""
		}
		return sv
	}
	sv.Found = true
	sv.Hash, sv.HasHash = svc.Spec.Selector[v1alpha1.DefaultRolloutUniqueLabelKey]
	sv.SlicesRead = v.Workload.SlicesRead
	seen := map[string]bool{}
	for _, es := range v.Workload.EndpointSlices[name] {
		for _, e := range es.Endpoints {
			if len(e.Addresses) == 0 || seen[e.Addresses[0]] {
				continue
			}
			seen[e.Addresses[0]] = true
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				sv.Ready++
			} else {
				sv.NotReady++
			}
		}
	}
	return sv
}

func desiredAnnotation(a map[string]string) *int32 {
	n, err := strconv.ParseInt(a[annDesired], 10, 32)
	if err != nil {
		return nil
	}
	d := int32(n)
	return &d
}

// --- the controller's blue-green predicates ---

func (in Inputs) bgHalted() bool { return in.BG.SpecPaused || in.BG.Inconclusive }

func (in Inputs) bgPaused() bool {
	return in.BG.SpecPaused || in.BG.PauseStart != nil || in.BG.Inconclusive
}

// activeRS is the ReplicaSet the live active Service selects by hash.
func (in Inputs) activeRS() *RS {
	if !in.BG.Active.HasHash {
		return nil
	}
	for _, r := range in.All {
		if r.Hash == in.BG.Active.Hash {
			return r
		}
	}
	return nil
}

// statusActiveRS is the ReplicaSet status.blueGreen.activeSelector names,
// which NewRSNewReplicas reads.
func (in Inputs) statusActiveRS() *RS {
	if in.BG.StatusActive == "" {
		return nil
	}
	for _, r := range in.All {
		if r.Hash == in.BG.StatusActive {
			return r
		}
	}
	return nil
}

// NewRSTarget mirrors NewRSNewReplicas for blue-green.
func NewRSTarget(in Inputs) int32 {
	bg := in.BG
	if bg.PreviewReplicaCount == nil || in.New == nil {
		return in.Replicas
	}
	if a := in.statusActiveRS(); a == nil || a.Name == in.New.Name {
		return in.Replicas
	}
	if in.PromoteFull {
		return in.Replicas
	}
	if in.New.Hash != in.CurrentPodHash {
		return *bg.PreviewReplicaCount
	}
	notPaused := !bg.SpecPaused && bg.PauseStart == nil && !bg.Inconclusive
	if notPaused && bg.CheckPoint {
		return in.Replicas
	}
	return *bg.PreviewReplicaCount
}

// readyForPause mirrors ReadyForPause.
func readyForPause(in Inputs) bool {
	if in.New == nil {
		return false
	}
	n := NewRSTarget(in)
	return in.New.Spec == n && in.New.Available == n
}

// saturated mirrors IsSaturated.
func saturated(in Inputs, r *RS) bool {
	return r != nil && r.Desired != nil && r.Spec == in.Replicas && *r.Desired == in.Replicas && r.Available == in.Replicas
}

// switchReady is the active Service's gate: ReadyForPause and saturated.
func switchReady(in Inputs) bool { return readyForPause(in) && saturated(in, in.New) }

func (in Inputs) needsPause() bool {
	return !in.BG.AutoPromotionEnabled || in.BG.AutoPromotionSeconds > 0
}

func (in Inputs) preDone() bool { return !in.BG.PrePromotion || in.BG.PrePhase == phaseSuccessful }

// isRollback mirrors isRollback (v1.10): the new ReplicaSet is the stable
// one or older than it.
func (in Inputs) isRollback() bool {
	if in.New == nil || in.Stable == nil {
		return false
	}
	return in.New.Hash == in.StableHash || in.New.Created.Before(in.Stable.Created)
}

func deadlinePassed(d string, now time.Time) bool {
	t, err := time.Parse(time.RFC3339, d)
	return err != nil || !t.After(now)
}

// fastRollback is the version's fast-rollback test: up to v1.9 any
// scale-down-deadline on the new ReplicaSet; from v1.10 isFastRollback.
// withinDelay is whether the new ReplicaSet carried an unexpired deadline
// when the pass began.
func (in Inputs) fastRollback(deadline string) bool {
	if in.New == nil {
		return false
	}
	if in.present("bg.retry-deadline-fast-track") {
		return deadline != ""
	}
	if !in.isRollback() {
		return false
	}
	within := deadline != "" && !deadlinePassed(deadline, in.BG.Now)
	return RollbackWindow(in).WithinWindow || within || in.New.Hash == in.StableHash
}

func (in Inputs) fastTracked(deadline string) bool {
	bg := in.BG
	return in.fastRollback(deadline) || in.PromoteFull || !bg.Active.HasHash || (in.New != nil && bg.Active.Hash == in.New.Hash)
}

// completedPause mirrors CompletedBlueGreenPause (added: a pause added in
// this pass).
func (in Inputs) completedPause(added bool) bool {
	bg := in.BG
	switch {
	case added:
		return false
	case bg.CheckPoint:
		return true
	case !in.needsPause():
		return true
	case bg.AutoPromotionEnabled:
		// The controller requeues itself at the deadline and finds it passed.
		return bg.PauseStart != nil && !bg.Now.Before(bg.PauseStart.Add(time.Duration(bg.AutoPromotionSeconds)*time.Second))
	}
	return bg.ControllerPause && bg.PauseStart == nil
}

// BGPass is the prediction for one reconcile of a blue-green Rollout.
type BGPass struct {
	// Reset: the controller has not seen the current template; this pass
	// only points the preview Service at the new ReplicaSet and resets the
	// status.
	Reset   bool `json:"resetPass,omitempty"`
	Errored bool `json:"errored,omitempty"`
	// ActiveHash and PreviewHash are what the Services select afterwards
	// (ActiveHasHash false: no hash, every ReplicaSet's pods).
	ActiveHash    string `json:"activeHash,omitempty"`
	ActiveHasHash bool   `json:"activeHasHash"`
	PreviewHash   string `json:"previewHash,omitempty"`
	Switched      bool   `json:"switchedActive,omitempty"`
	Reverted      bool   `json:"revertedActive,omitempty"`
	// HeldBack: aborted, but the active Service still selects the aborted
	// ReplicaSet and the gate keeps it there.
	HeldBack     bool              `json:"abortHeldBack,omitempty"`
	NewTarget    int32             `json:"newTarget"`
	StableTarget int32             `json:"stableTarget"`
	Targets      map[string]int32  `json:"targets,omitempty"`   // by ReplicaSet name, every one the pass scales
	Deadlines    map[string]string `json:"deadlines,omitempty"` // scale-down-deadline annotations after the pass ("" removed)
	PauseAdded   bool              `json:"pauseAdded,omitempty"`
	PauseRemoved bool              `json:"pauseRemoved,omitempty"`
	CheckPoint   bool              `json:"scaleUpPreviewCheckPoint,omitempty"`
	Promotes     bool              `json:"promotes,omitempty"`
	PromoteWhy   string            `json:"promoteWhy,omitempty"`
	AbortCleared bool              `json:"abortCleared,omitempty"`
	// Aborts: a failed pre- or post-promotion analysis aborts the update.
	Aborts bool            `json:"aborts,omitempty"`
	Why    string          `json:"why,omitempty"`
	Cites  []upstream.Cite `json:"cites,omitempty"`
}

// EvaluateBG predicts the controller's next reconcile of a blue-green
// Rollout, in its order: preview Service, (a new template ends the pass)
// scale-down deadlines, stable, new and old ReplicaSets, the pause, the
// active Service, then status and promotion.
func EvaluateBG(in Inputs) BGPass {
	bg := in.BG
	p := BGPass{ActiveHash: bg.Active.Hash, ActiveHasHash: bg.Active.HasHash, PreviewHash: bg.Preview.Hash,
		Targets: map[string]int32{}, Deadlines: map[string]string{}}
	if len(in.Invalid) > 0 {
		p.Errored = true
		p.Why = fmt.Sprintf("the controller rejects the spec (InvalidSpec: %s) and does not reconcile this Rollout", in.Invalid[0])
		p.Cites = in.cites("ct.invalid-spec", in.Invalid[0].Fact)
		return p
	}
	if in.New == nil {
		p.Why = "no ReplicaSet matches the current template yet: the controller creates it at 0 pods"
		return p
	}
	halted := in.bgHalted()
	if bg.HasPreview && !halted {
		p.PreviewHash = in.New.Hash
	}
	if in.Unobserved || (in.CurrentPodHash != "" && in.CurrentPodHash != in.New.Hash) {
		p.Reset = true
		p.Why = "a new pod template: the preview Service follows the new ReplicaSet and the status is reset; nothing is scaled or switched on this pass"
		p.Cites = in.cites("bg.preview-switch", "bg.checkpoint-leak")
		p.AbortCleared = in.Abort
		// The checkpoint is recomputed from the status before the reset.
		p.CheckPoint = bg.CheckPoint
		if why := in.bgPromoteReason(p, in.New.ScaleDownDeadline, false); why != "" {
			p.Promotes, p.PromoteWhy = true, why
		}
		return p
	}
	deadline := in.New.ScaleDownDeadline // as the pass sees it (in memory)
	aborted := in.Abort && !in.fullyPromoted()
	delayAbort := aborted && in.Stable != nil && bg.AbortDelay != 0
	// removeScaleDownDeadlines
	if in.Stable != nil && in.Stable.ScaleDownDeadline != "" {
		p.Deadlines[in.Stable.Name] = ""
	}
	if !delayAbort && in.New.ScaleDownDeadline != "" && (in.Stable == nil || in.New.Name != in.Stable.Name) {
		p.Deadlines[in.New.Name] = ""
	}
	// stable at spec.replicas
	p.StableTarget = rsSpec(in.Stable)
	if in.Stable != nil && in.Stable.Name != in.New.Name {
		p.StableTarget = in.Replicas
		p.Targets[in.Stable.Name] = in.Replicas
	}
	// new ReplicaSet
	p.NewTarget = NewRSTarget(in)
	if delayAbort {
		p.NewTarget = in.New.Spec
		switch {
		case in.New.ScaleDownDeadline != "" && deadlinePassed(in.New.ScaleDownDeadline, bg.Now):
			p.NewTarget = 0
		case in.New.ScaleDownDeadline != "":
		case in.abortStableReady():
			p.Deadlines[in.New.Name] = bg.Now.Add(time.Duration(bg.AbortDelay) * time.Second).UTC().Format(time.RFC3339)
		}
	}
	p.Targets[in.New.Name] = p.NewTarget
	// old ReplicaSets
	in.scaleDownOthers(&p)
	// pause
	ready := readyForPause(in)
	added := false
	if !in.Abort && ready && !halted {
		switch {
		case in.fastTracked(deadline) || (in.BG.Active.HasHash && in.BG.Active.Hash == in.New.Hash) || bg.CheckPoint || !in.needsPause():
			p.PauseRemoved = bg.PauseStart != nil
		case !in.preDone():
		case bg.PauseStart != nil:
			p.PauseRemoved = in.completedPause(false)
		case !bg.ControllerPause:
			p.PauseAdded, added = true, true
		}
	}
	// active Service
	if !halted && switchReady(in) {
		target := bg.Active.Hash
		if in.fastTracked(deadline) || (in.completedPause(added) && in.preDone()) {
			target = in.New.Hash
		}
		if in.Abort {
			target = in.StableHash
		}
		p.ActiveHash, p.ActiveHasHash = target, true
		p.Switched = target == in.New.Hash && (!bg.Active.HasHash || bg.Active.Hash != target)
		p.Reverted = in.Abort && bg.Active.HasHash && bg.Active.Hash != target
	} else if in.Abort && bg.Active.HasHash && bg.Active.Hash == in.New.Hash && in.New.Hash != in.StableHash {
		p.HeldBack = true
	}
	// status
	if !in.Abort && !in.PromoteFull && !in.fastRollback(deadline) && (isFailed(bg.PrePhase) || isFailed(bg.PostPhase)) {
		p.Aborts, aborted = true, true
	}
	if in.PromoteFull || RollbackWindow(in).WithinWindow {
		p.AbortCleared = in.Abort
		if bg.PauseStart != nil {
			p.PauseRemoved = true
		}
		p.PauseAdded = false
	}
	if why := in.bgPromoteReason(p, deadline, aborted && !p.AbortCleared); why != "" {
		p.Promotes, p.PromoteWhy = true, why
		p.AbortCleared = in.Abort
		return p
	}
	p.CheckPoint = in.checkPointAfter(added)
	return p
}

// abortStableReady: the stable has spec.replicas available (exactly up to
// v1.9, at least from v1.10), so the aborted ReplicaSet gets its deadline.
func (in Inputs) abortStableReady() bool {
	if in.Stable == nil {
		return false
	}
	if sv, _ := parseSemver(string(in.Version)); !sv.less(semver{1, 10, 0}) {
		return in.Stable.Available >= in.Replicas
	}
	return in.Stable.Available == in.Replicas
}

// bgPromoteReason mirrors shouldFullPromote for blue-green, on the status
// the pass writes (the active selector after its switch).
func (in Inputs) bgPromoteReason(p BGPass, deadline string, aborted bool) string {
	if in.Stable == nil {
		return "Initial deploy"
	}
	if !p.ActiveHasHash || p.ActiveHash == "" {
		return "Initial deploy"
	}
	if p.ActiveHash != in.New.Hash || in.StableHash == in.New.Hash {
		return ""
	}
	if in.PromoteFull {
		return "Full promotion requested"
	}
	if in.present("bg.retry-deadline-fast-track") {
		if RollbackWindow(in).WithinWindow {
			return "Rollback within window"
		}
	} else if in.fastRollback(deadline) {
		if RollbackWindow(in).WithinWindow {
			return "Rollback within window"
		}
		return "Fast rollback"
	}
	if aborted {
		return ""
	}
	if in.BG.PostPromotion {
		if in.present("bg.retry-deadline-fast-track") && deadline != "" {
			return fmt.Sprintf("Rollback to '%s' within scaleDownDelay", in.New.Name)
		}
		if in.BG.PostPhase != phaseSuccessful {
			return ""
		}
	}
	return "Completed blue-green update"
}

// checkPointAfter mirrors calculateScaleUpPreviewCheckPoint.
func (in Inputs) checkPointAfter(added bool) bool {
	bg := in.BG
	if bg.PreviewReplicaCount == nil {
		return false
	}
	if bg.CheckPoint {
		return true
	}
	if !in.preDone() || !in.completedPause(added) {
		return false
	}
	return in.New.Available == *bg.PreviewReplicaCount
}

// referenced mirrors isReplicaSetReferenced for blue-green.
func (in Inputs) referenced(r *RS) bool {
	bg := in.BG
	return r.Hash == in.StableHash || r.Hash == in.CurrentPodHash || r.Hash == bg.StatusActive ||
		(bg.Active.HasHash && r.Hash == bg.Active.Hash) || (bg.Preview.HasHash && r.Hash == bg.Preview.Hash)
}

// scaleDownOthers mirrors scaleDownOldReplicaSetsForBlueGreen.
func (in Inputs) scaleDownOthers(p *BGPass) {
	bg := in.BG
	if bg.Inconclusive {
		return
	}
	if bg.PostPromotion && !bg.ScaleDownDelaySet && bg.PostPhase != phaseSuccessful && in.New != nil && in.New.Hash != in.StableHash {
		return
	}
	var others []*RS
	for _, r := range in.All {
		if r.Name == in.New.Name || (in.Stable != nil && r.Name == in.Stable.Name) {
			continue
		}
		others = append(others, r)
	}
	sort.SliceStable(others, func(i, j int) bool { return revision(others[i]) > revision(others[j]) })
	limit := int32(1 << 30)
	if bg.RevisionLimit != nil {
		limit = *bg.RevisionLimit
	}
	var annotated int32
	for _, r := range others {
		if in.referenced(r) || r.Spec == 0 {
			continue
		}
		target := int32(0)
		switch {
		case r.ScaleDownDeadline == "":
			if annotated < limit {
				annotated++
				target = r.Spec
				if bg.ScaleDownDelay != 0 {
					p.Deadlines[r.Name] = bg.Now.Add(time.Duration(bg.ScaleDownDelay) * time.Second).UTC().Format(time.RFC3339)
				}
			}
		default:
			annotated++
			if annotated <= limit && !deadlinePassed(r.ScaleDownDeadline, bg.Now) {
				target = in.Replicas
			}
		}
		if target != r.Spec {
			p.Targets[r.Name] = target
			if target == 0 && r.ScaleDownDeadline != "" {
				p.Deadlines[r.Name] = ""
			}
		}
	}
}

func revision(r *RS) int64 {
	n, _ := strconv.ParseInt(r.Revision, 10, 64)
	return n
}

// ApplyBG returns the inputs as they stand after a pass.
func ApplyBG(in Inputs, p BGPass) Inputs {
	out := in.clone()
	bg := *in.BG
	out.BG = &bg
	if p.Errored || out.New == nil {
		return out
	}
	bg.Active.HasHash, bg.Active.Hash = p.ActiveHasHash, p.ActiveHash
	bg.Preview.Hash = p.PreviewHash
	if bg.HasPreview && p.PreviewHash != "" {
		bg.Preview.HasHash = true
	}
	bg.StatusActive = p.ActiveHash
	for _, r := range out.All {
		if t, ok := p.Targets[r.Name]; ok {
			r.Spec = t
			d := in.Replicas
			r.Desired = &d
		}
		if d, ok := p.Deadlines[r.Name]; ok {
			r.ScaleDownDeadline = d
		}
	}
	if p.Reset {
		out.Unobserved = false
		out.CurrentPodHash = out.New.Hash
		out.Abort, out.PromoteFull = false, false
		bg.PauseStart, bg.ControllerPause = nil, false
		bg.PrePhase, bg.PostPhase = "", ""
	}
	out.CurrentPodHash = out.New.Hash
	if p.PauseAdded {
		t := bg.Now
		bg.PauseStart, bg.ControllerPause = &t, true
	}
	if p.PauseRemoved {
		bg.PauseStart = nil
	}
	if !p.PauseAdded && bg.PauseStart == nil {
		bg.ControllerPause = false
	}
	if p.AbortCleared {
		out.Abort = false
	}
	if p.Aborts {
		out.Abort = true
	}
	if out.Abort {
		// An aborted Rollout's pause conditions are not carried over.
		bg.PauseStart, bg.ControllerPause = nil, false
	}
	bg.CheckPoint = p.CheckPoint
	if p.Promotes {
		out.StableHash = out.New.Hash
		out.Stable = out.New
		out.PromoteFull = false
		bg.CheckPoint = false
		bg.PauseStart, bg.ControllerPause = nil, false
	}
	if out.Abort && out.fullyPromoted() {
		out.Abort = false // removed from a fully promoted Rollout
	}
	return out
}

// BGEvent is one predicted change: the controller switches a Service,
// pauses, promotes, or scales a ReplicaSet, at a time or when enough pods
// are available.
type BGEvent struct {
	// At is set when the event waits for a clock (a deadline, the
	// auto-promotion time); When says it in words either way.
	At    *time.Time      `json:"at,omitempty"`
	When  string          `json:"when"`
	What  string          `json:"what"`
	Cites []upstream.Cite `json:"cites,omitempty"`
}

// BGStep is one simulated pass and the world it left.
type BGStep struct {
	Pass BGPass `json:"pass"`
	Now  time.Time
	// Active is the ReplicaSet the active Service selects after the pass
	// ("" none or every one), ActiveAvailable its available pods when the
	// pass ran; NoHash: the active Service selects every ReplicaSet.
	Active          string `json:"active,omitempty"`
	ActiveAvailable int32  `json:"activeAvailable"`
	NoHash          bool   `json:"activeNoHash,omitempty"`
	Abort           bool   `json:"abort"`
	StableHash      string `json:"stableHash,omitempty"`
	Paused          bool   `json:"paused,omitempty"`
	After           Inputs `json:"-"`
}

// SimulateBG runs the controller forward from in, pass after pass: between
// passes the ReplicaSet controller moves every ReplicaSet one pod (or
// 1/48 of it) toward its spec; when nothing moves, the clock jumps to the
// next deadline the controller waits for (the auto-promotion time, a
// scale-down deadline). Analysis runs and manual pauses never finish by
// themselves here.
func SimulateBG(in Inputs, max int) []BGStep {
	var out []BGStep
	cur := in.clone()
	bgc := *in.BG
	cur.BG = &bgc
	for i := 0; i < max; i++ {
		wasMoving := movingUnstuck(cur)
		p := EvaluateBG(cur)
		next := ApplyBG(cur, p)
		s := BGStep{Pass: p, Now: cur.BG.Now, Abort: next.Abort, StableHash: next.StableHash, Paused: next.bgPaused(), After: next}
		if !p.ActiveHasHash {
			s.NoHash = true
		}
		for _, r := range cur.All {
			if p.ActiveHasHash && r.Hash == p.ActiveHash {
				s.Active, s.ActiveAvailable = r.Name, r.Available
			}
		}
		out = append(out, s)
		if p.Errored {
			break
		}
		changed := p.Reset || (p.Promotes && next.StableHash != cur.StableHash) || p.Switched || p.Reverted || p.PauseAdded || p.PauseRemoved || p.AbortCleared || len(p.Deadlines) > 0 || movingBG(cur, next)
		cur = tickAll(next)
		if !changed && !wasMoving && !movingUnstuck(cur) {
			// This pass saw a settled world and changed nothing: only a
			// clock can move the controller now.
			t, ok := nextDeadline(cur)
			if !ok {
				break
			}
			cur.BG.Now = t
		}
	}
	return out
}

func movingBG(a, b Inputs) bool {
	for i := range a.All {
		if a.All[i].Spec != b.All[i].Spec {
			return true
		}
	}
	return a.CheckPoint() != b.CheckPoint() || a.BG.ControllerPause != b.BG.ControllerPause
}

// movingUnstuck: some ReplicaSet that can still move is not at its spec.
func movingUnstuck(in Inputs) bool {
	for _, r := range in.All {
		if r.Capped && r.Spec > r.Replicas {
			if r.Available < r.Replicas {
				return true
			}
			continue
		}
		if r.Replicas != r.Spec || r.Available > r.Spec || (r.Available < r.Spec && !r.Stuck) {
			return true
		}
	}
	return false
}

// CheckPoint is status.blueGreen.scaleUpPreviewCheckPoint.
func (in Inputs) CheckPoint() bool { return in.BG != nil && in.BG.CheckPoint }

// nextDeadline is the earliest time after now that the controller waits
// for: the end of an auto-promotion countdown or a scale-down deadline.
func nextDeadline(in Inputs) (time.Time, bool) {
	var best time.Time
	consider := func(t time.Time) {
		if t.After(in.BG.Now) && (best.IsZero() || t.Before(best)) {
			best = t
		}
	}
	bg := in.BG
	if bg.PauseStart != nil && bg.AutoPromotionEnabled && bg.AutoPromotionSeconds > 0 && !bg.SpecPaused {
		consider(bg.PauseStart.Add(time.Duration(bg.AutoPromotionSeconds) * time.Second))
	}
	for _, r := range in.All {
		if r.ScaleDownDeadline == "" || r.Spec == 0 {
			continue
		}
		if t, err := time.Parse(time.RFC3339, r.ScaleDownDeadline); err == nil {
			consider(t)
		}
	}
	return best, !best.IsZero()
}

func isFailed(phase string) bool { return phase == phaseFailed || phase == phaseError }

// Clone returns a deep copy of the inputs, free to change.
func (in Inputs) Clone() Inputs { return in.clone() }

// TickAll is the ReplicaSet controller between two passes: every
// ReplicaSet one step closer to its spec.
func TickAll(in Inputs) Inputs { return tickAll(in) }

// AtLeast reports whether the modeled version is major.minor or newer.
func AtLeast(v upstream.Version, major, minor int) bool {
	sv, ok := parseSemver(string(v))
	return ok && !sv.less(semver{major, minor, 0})
}
