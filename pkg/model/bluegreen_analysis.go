package model

import (
	"fmt"
	"strings"
	"time"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// BGState names where a blue-green update stands. The values are stable
// tags for JSON consumers; the human view says StateWhy instead.
type BGState string

// Blue-green states.
const (
	BGInvalid         BGState = "invalid-spec"
	BGNewTemplate     BGState = "new-template"
	BGInitial         BGState = "initial-deploy"
	BGScalingUp       BGState = "scaling-up"
	BGPreAnalysis     BGState = "pre-promotion-analysis"
	BGAnalysisFailed  BGState = "analysis-failed"
	BGPaused          BGState = "paused"
	BGManualPause     BGState = "manually-paused"
	BGInconclusive    BGState = "inconclusive-analysis"
	BGSwitchPending   BGState = "switch-pending"
	BGPostAnalysis    BGState = "post-promotion-analysis"
	BGPromoting       BGState = "promoting"
	BGScaleDownDelay  BGState = "old-scale-down-delay"
	BGAborted         BGState = "aborted"
	BGHealthy         BGState = "healthy"
	BGStuckCheckpoint BGState = "checkpoint-stuck"
)

// OldRS is an old ReplicaSet waiting for its scale-down.
type OldRS struct {
	Name     string        `json:"name"`
	Pods     int32         `json:"specReplicas"`
	Deadline string        `json:"scaleDownDeadline,omitempty"`
	Left     time.Duration `json:"left"`
	// Aborted is the aborted new ReplicaSet (abortScaleDownDelaySeconds),
	// not an old one.
	Aborted bool `json:"aborted,omitempty"`
	// Meaning says what the deadline means for undo, abort and retry.
	Meaning string `json:"meaning,omitempty"`
}

// BlueGreenAnalysis is the model's view of a blue-green Rollout.
type BlueGreenAnalysis struct {
	State    BGState `json:"state"`
	StateWhy string  `json:"stateWhy"`
	// Act says who must act for the update to go on ("" nobody).
	Act       string      `json:"act,omitempty"`
	Active    ServiceView `json:"activeService"`
	Preview   ServiceView `json:"previewService"`
	ActiveRS  string      `json:"activeReplicaSet,omitempty"`
	PreviewRS string      `json:"previewReplicaSet,omitempty"`
	// NewTarget is the size the controller wants for the new ReplicaSet
	// now; Sizing says previewReplicaCount before and after promotion.
	NewTarget     int32      `json:"newTarget"`
	Sizing        string     `json:"sizing,omitempty"`
	AutoPromoteAt *time.Time `json:"autoPromoteAt,omitempty"`
	Old           []OldRS    `json:"scaleDowns,omitempty"`
	Next          BGPass     `json:"nextPass"`
	Forecast      []BGEvent  `json:"forecast,omitempty"`
	// Waits says what the forecast ends waiting for, if not a settled
	// Rollout (a person, an analysis run).
	Waits string          `json:"waits,omitempty"`
	Notes []string        `json:"notes,omitempty"`
	Cites []upstream.Cite `json:"cites,omitempty"`
	Steps []BGStep        `json:"-"`
}

func rsNameByHash(in Inputs, h string) string {
	for _, r := range in.All {
		if r.Hash == h && h != "" {
			return r.Name
		}
	}
	return ""
}

func short(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	return d.Round(time.Second).String()
}

// AnalyzeBlueGreen classifies the state, predicts the next pass and replays
// the controller forward.
func AnalyzeBlueGreen(in Inputs) *BlueGreenAnalysis {
	bg := in.BG
	a := &BlueGreenAnalysis{Active: bg.Active, Preview: bg.Preview, NewTarget: NewRSTarget(in)}
	if bg.Active.HasHash {
		a.ActiveRS = rsNameByHash(in, bg.Active.Hash)
	}
	if bg.Preview.HasHash {
		a.PreviewRS = rsNameByHash(in, bg.Preview.Hash)
	}
	if c := bg.PreviewReplicaCount; c != nil {
		a.Sizing = fmt.Sprintf("previewReplicaCount %d: the new ReplicaSet runs %d pods until the promotion is under way, then %d before the active Service switches (the stable stays at %d)", *c, *c, in.Replicas, in.Replicas)
	}
	a.Next = EvaluateBG(in)
	a.classify(in)
	if a.State == BGInvalid {
		return a
	}
	a.Steps = SimulateBG(in, 400)
	a.forecast(in)
	a.notes(in)
	return a
}

func (a *BlueGreenAnalysis) classify(in Inputs) {
	bg := in.BG
	now := bg.Now
	for _, r := range in.All {
		if r.ScaleDownDeadline == "" || r.Spec == 0 {
			continue
		}
		t, err := time.Parse(time.RFC3339, r.ScaleDownDeadline)
		left := time.Duration(0)
		if err == nil {
			left = t.Sub(now)
		}
		o := OldRS{Name: r.Name, Pods: r.Spec, Deadline: r.ScaleDownDeadline, Left: left, Aborted: in.New != nil && r.Name == in.New.Name}
		switch {
		case o.Aborted && in.present("bg.retry-deadline-fast-track"):
			o.Meaning = fmt.Sprintf("until then a retry on %s fast-tracks it (no pause, no analysis: it goes live as soon as it is fully available); afterwards it is scaled to 0 and a retry starts it from scratch", in.Version)
		case o.Aborted:
			o.Meaning = "afterwards it is scaled to 0; a retry starts it again with its pause and analysis"
		case left > 0 && bg.PreviewReplicaCount != nil && *bg.PreviewReplicaCount < in.Replicas:
			// The undo's first full pass sizes it to previewReplicaCount
			// (not yet ReadyForPause: more pods available than wanted) and
			// removes its deadline, so the next pass no longer sees a
			// rollback within the scale-down delay.
			o.Meaning = fmt.Sprintf("until then it keeps its pods, but with previewReplicaCount %d an undo to it is not a fast rollback: the controller's first pass scales it to %d and removes its deadline, so it is promoted like any update (pause, analysis); afterwards it has no pods", *bg.PreviewReplicaCount, *bg.PreviewReplicaCount)
			a.Cites = append(a.Cites, in.cites("bg.new-deadline-removed", "ur.bluegreen-preview-count", "bg.ready-for-pause")...)
		case left > 0:
			o.Meaning = "until then undo to it is a fast rollback (no pause, no analysis: the active Service switches back once it is fully available); afterwards it has no pods and undo is a full blue-green update"
		}
		a.Old = append(a.Old, o)
	}
	newName := ""
	if in.New != nil {
		newName = in.New.Name
	}
	promote := "kubectl argo rollouts promote " + bg.Name + " -n " + bg.Namespace + " "
	switch {
	case len(in.Invalid) > 0:
		a.State, a.StateWhy = BGInvalid, "the controller rejects the spec and does nothing"
	case in.New == nil || a.Next.Reset:
		a.State, a.StateWhy = BGNewTemplate, "a new revision the controller has not reconciled yet: its next pass points the preview Service at it and resets the status"
	case in.Abort && !in.fullyPromoted():
		a.State = BGAborted
		a.StateWhy = "aborted: the active Service goes back to the stable " + stableName(in) + "; the preview keeps the aborted " + newName
		if a.Next.HeldBack || (bg.Active.HasHash && bg.Active.Hash == in.New.Hash && !switchReady(in)) {
			a.StateWhy = fmt.Sprintf("aborted, but the active Service still selects the aborted %s (%d/%d available): the controller moves it back only when that ReplicaSet is fully available again", newName, in.New.Available, in.Replicas)
		}
		a.Act = "a person: retry, promote --full, or undo to leave the aborted state"
	case in.Stable == nil || in.StableHash == "" || (in.fullyPromoted() && bg.StatusActive == "" && !bg.Active.HasHash):
		// The first pass marks the first revision stable before the active
		// Service selects it ("Initial deploy"): until the controller has
		// pointed the active Service at it, it is still the initial deploy.
		a.State, a.StateWhy = BGInitial, fmt.Sprintf("initial deploy: %s is stable at once and the active Service follows it when it is fully available (%d/%d)", newName, in.New.Available, in.Replicas)
	case in.fullyPromoted():
		a.State, a.StateWhy = BGHealthy, "fully promoted: the active Service selects the stable "+in.Stable.Name
		for _, o := range a.Old {
			if !o.Aborted {
				a.State = BGScaleDownDelay
				a.StateWhy = fmt.Sprintf("promoted; the previous ReplicaSet %s keeps %d pods until its scale-down deadline %s (%s left) — selected by no Service, kept for a fast rollback", o.Name, o.Pods, o.Deadline, short(o.Left))
				break
			}
		}
	case bg.SpecPaused:
		a.State, a.StateWhy = BGManualPause, "manually paused (spec.paused): neither Service changes until it is unpaused"
		a.Act = "a person: " + promote + "(clears spec.paused)"
	case bg.Inconclusive:
		a.State, a.StateWhy = BGInconclusive, "paused on an inconclusive analysis: neither Service changes and no old ReplicaSet is scaled down until promoted"
		a.Act = "a person: " + promote + "or abort"
	case bg.Active.HasHash && bg.Active.Hash == in.New.Hash:
		switch {
		case bg.PostPromotion && bg.PostPhase != phaseSuccessful && !a.Next.Promotes:
			a.State = BGPostAnalysis
			a.StateWhy = fmt.Sprintf("switched: the active Service selects %s; post-promotion analysis must succeed before it becomes stable — the previous stable %s keeps its %d pods, selected by no Service", newName, stableName(in), rsSpec(in.Stable))
			if isFailed(bg.PostPhase) {
				a.State, a.StateWhy = BGAnalysisFailed, "post-promotion analysis "+bg.PostPhase+": the controller aborts the update on its next pass"
			}
		default:
			a.State, a.StateWhy = BGPromoting, "switched: the active Service selects "+newName+"; it becomes stable on the next pass"
		}
	case bg.CheckPoint && bg.PreviewReplicaCount != nil && *bg.PreviewReplicaCount < in.Replicas && bg.PrePromotion && bg.PrePhase == "" && in.New.Spec == in.Replicas && !bg.SpecPaused && bg.PauseStart == nil:
		a.State = BGStuckCheckpoint
		a.StateWhy = fmt.Sprintf("scaleUpPreviewCheckPoint was carried over from the previous revision: %s was sized to %d instead of previewReplicaCount %d, so pre-promotion analysis never starts and the active Service never switches", newName, in.New.Spec, *bg.PreviewReplicaCount)
		a.Act = "a person: pause then promote (the workaround reported upstream), or promote --full"
	case bg.PauseStart != nil:
		a.State = BGPaused
		a.StateWhy = "paused before promotion (BlueGreenPause since " + bg.PauseStart.UTC().Format(time.RFC3339) + ")"
		if bg.AutoPromotionEnabled && bg.AutoPromotionSeconds > 0 {
			t := bg.PauseStart.Add(time.Duration(bg.AutoPromotionSeconds) * time.Second)
			a.AutoPromoteAt = &t
			a.StateWhy += fmt.Sprintf(": auto-promotes at %s (%s left, autoPromotionSeconds %d)", t.UTC().Format(time.RFC3339), short(t.Sub(now)), bg.AutoPromotionSeconds)
			a.Act = "nobody: the controller promotes by itself at " + t.UTC().Format(time.RFC3339) + "; " + promote + "does it now"
		} else {
			a.StateWhy += ": autoPromotionEnabled is false, it waits for a person"
			a.Act = "a person: " + promote + "switches the active Service to " + newName
			if c := bg.PreviewReplicaCount; c != nil && *c < in.Replicas {
				a.Act += fmt.Sprintf(" once it is scaled from %d to %d and all %d are available", *c, in.Replicas, in.Replicas)
			}
		}
	case bg.PrePromotion && bg.PrePhase != phaseSuccessful && readyForPause(in):
		a.State, a.StateWhy = BGPreAnalysis, fmt.Sprintf("pre-promotion analysis %s on %s: the pause and the switch wait for it to succeed", strings.ToLower(orDefault(bg.PrePhase, "not started yet")), newName)
		if isFailed(bg.PrePhase) {
			a.State, a.StateWhy = BGAnalysisFailed, "pre-promotion analysis "+bg.PrePhase+": the controller aborts the update on its next pass"
		}
	case !readyForPause(in):
		a.State = BGScalingUp
		a.StateWhy = fmt.Sprintf("the new revision %s is coming up: %d/%d available", newName, in.New.Available, a.NewTarget)
	case !saturated(in, in.New):
		a.State = BGScalingUp
		a.StateWhy = fmt.Sprintf("the new revision %s is ready at previewReplicaCount (%d/%d); it is scaled to %d before the active Service switches", newName, in.New.Available, a.NewTarget, in.Replicas)
	default:
		a.State, a.StateWhy = BGSwitchPending, fmt.Sprintf("%s is ready: the active Service switches to it on the next pass that finds it saturated", newName)
	}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func stableName(in Inputs) string {
	if in.Stable == nil {
		return "(none)"
	}
	return in.Stable.Name
}

// forecast turns the replay into events.
func (a *BlueGreenAnalysis) forecast(in Inputs) {
	a.Forecast = BGEvents(in, a.Steps)
	if len(a.Steps) > 0 {
		a.Waits = waitsFor(a.Steps[len(a.Steps)-1].After)
	}
}

// BGEvents describes a replay (SimulateBG from in) as events.
func BGEvents(in Inputs, steps []BGStep) []BGEvent {
	var out []BGEvent
	base := in.BG.Now
	// Deadlines the input already holds are exact times; those the replay
	// writes are a delay after the pass that writes them.
	known := map[time.Time]bool{}
	if t, ok := nextDeadline(in); ok {
		known[t] = true
	}
	for _, r := range in.All {
		if t, err := time.Parse(time.RFC3339, r.ScaleDownDeadline); err == nil {
			known[t] = true
		}
	}
	newName := ""
	if in.New != nil {
		newName = in.New.Name
	}
	cur := in
	for i, s := range steps {
		p := s.Pass
		when := "on the next pass"
		var at *time.Time
		switch {
		case s.Now.After(base) && known[s.Now]:
			t := s.Now
			at = &t
			when = fmt.Sprintf("at %s (in %s)", t.UTC().Format(time.RFC3339), short(t.Sub(base)))
		case s.Now.After(base):
			when = short(s.Now.Sub(base)) + " later"
		case i > 0 && cur.New != nil && (cur.New.Available < cur.New.Spec || cur.New.Available < in.Replicas):
			when = fmt.Sprintf("when %s has %d/%d available", cur.New.Name, cur.New.Available, in.Replicas)
		case i > 0:
			when = "then"
		}
		add := func(what string, keys ...upstream.Key) {
			out = append(out, BGEvent{At: at, When: when, What: what, Cites: in.cites(keys...)})
		}
		if p.Errored {
			break
		}
		if p.Reset {
			add("the preview Service selects "+newName+" (0 pods ready yet) and the status is reset", "bg.preview-switch")
		}
		if p.Aborts {
			add("the failed analysis aborts the update", "bg.promote-aborted")
		}
		if p.PauseAdded {
			what := "the Rollout pauses (BlueGreenPause)"
			if in.BG.AutoPromotionEnabled && in.BG.AutoPromotionSeconds > 0 {
				what += fmt.Sprintf("; it auto-promotes %d s later", in.BG.AutoPromotionSeconds)
			} else {
				what += " until someone promotes it"
			}
			add(what, "bg.pause-add", "bg.needs-pause")
		}
		if p.Switched {
			what := fmt.Sprintf("the active Service switches to %s (%d/%d available)", newName, cur.New.Available, in.Replicas)
			if !cur.BG.Active.HasHash {
				what = fmt.Sprintf("the active Service, which has no hash selector, is pointed at %s (%d/%d available)", newName, cur.New.Available, in.Replicas)
			}
			add(what, "bg.active-gate", "bg.active-after-pause")
		}
		if p.Reverted {
			add("the active Service goes back to the stable "+stableName(cur), "bg.active-abort-to-stable")
		}
		if p.Promotes && s.After.StableHash != cur.StableHash {
			add(fmt.Sprintf("%s becomes stable (%s)", newName, p.PromoteWhy), "bg.promote-needs-active")
		}
		for _, r := range cur.All {
			if d, ok := p.Deadlines[r.Name]; ok && d != "" {
				delay := in.BG.ScaleDownDelay
				key := upstream.Key("bg.scale-down-deadline-add")
				if cur.New != nil && r.Name == cur.New.Name {
					delay, key = in.BG.AbortDelay, "rs.abort-delay-needs-stable-full"
				}
				add(fmt.Sprintf("%s gets a scale-down-deadline %d s ahead and keeps its %d pods until then", r.Name, delay, r.Spec), key)
			}
			if t, ok := p.Targets[r.Name]; ok && t == 0 && r.Spec > 0 {
				add(fmt.Sprintf("%s is scaled from %d to 0", r.Name, r.Spec), "bg.scale-down-keep")
			}
			if t, ok := p.Targets[r.Name]; ok && t > 0 && t < r.Spec && !p.Reset {
				// A rollback target that still had its pods is sized
				// down to previewReplicaCount.
				add(fmt.Sprintf("%s is scaled from %d to %d", r.Name, r.Spec, t), "ur.bluegreen-preview-count")
			}
			if t, ok := p.Targets[r.Name]; ok && t > r.Spec && t > 0 && !p.Reset {
				if cur.New != nil && r.Name == cur.New.Name {
					add(fmt.Sprintf("%s is scaled from %d to %d", r.Name, r.Spec, t), "bg.checkpoint-full-size", "bg.preview-count-promote-full")
				} else {
					add(fmt.Sprintf("%s is scaled from %d to %d: an old ReplicaSet is kept at spec.replicas until its scale-down deadline", r.Name, r.Spec, t), "bg.scale-down-keep")
				}
			}
		}
		cur = tickAll(s.After)
	}
	return out
}

// WaitsFor says what the Rollout waits for once the replay stops ("" when
// it has settled).
func WaitsFor(in Inputs) string { return waitsFor(in) }

// waitsFor says what a replay that stopped is waiting for.
func waitsFor(in Inputs) string {
	bg := in.BG
	switch {
	case in.Abort:
		return "stays aborted until someone acts (retry, promote --full, undo)"
	case bg.SpecPaused:
		return "stays paused until spec.paused is cleared (promote)"
	case bg.Inconclusive:
		return "stays paused on the inconclusive analysis until promoted or aborted"
	case bg.PauseStart != nil && !(bg.AutoPromotionEnabled && bg.AutoPromotionSeconds > 0):
		return "stays paused until someone promotes it"
	case in.New != nil && bg.Active.HasHash && bg.Active.Hash == in.New.Hash && in.StableHash != in.New.Hash && bg.PostPromotion:
		return "waits for post-promotion analysis to succeed before " + in.New.Name + " becomes stable"
	case in.New != nil && bg.PrePromotion && !in.preDone() && !(bg.Active.HasHash && bg.Active.Hash == in.New.Hash):
		return "waits for pre-promotion analysis to succeed"
	case in.New != nil && !switchReady(in) && in.StableHash != in.New.Hash:
		return fmt.Sprintf("waits: %s is sized %d and the switch needs it saturated at %d", in.New.Name, in.New.Spec, in.Replicas)
	}
	return ""
}

// notes are the version differences that matter in this state.
func (a *BlueGreenAnalysis) notes(in Inputs) {
	bg := in.BG
	win := RollbackWindow(in)
	if win.WithinWindow && in.present("bg.retry-deadline-fast-track") && (in.needsPause() || bg.PrePromotion) {
		a.Notes = append(a.Notes, fmt.Sprintf("rollback within rollbackWindow on %s: the pause is not skipped — it is re-added and cleared on every pass (or pre-promotion analysis is never created), so the active Service never switches (upstream issue #3304; v1.10 fast-tracks it)", in.Version))
		a.Cites = append(a.Cites, in.cites("bg.window-clears-pause", "bg.pause-added-this-pass")...)
	}
	if in.Abort && in.New != nil && in.New.ScaleDownDeadline != "" && !deadlinePassed(in.New.ScaleDownDeadline, bg.Now) && in.present("bg.retry-deadline-fast-track") {
		a.Notes = append(a.Notes, fmt.Sprintf("on %s a retry before %s (the abort scale-down deadline) fast-tracks %s: no pause and no analysis, the active Service switches and it becomes stable as soon as it is fully available", in.Version, in.New.ScaleDownDeadline, in.New.Name))
		a.Cites = append(a.Cites, in.cites("bg.retry-deadline-fast-track", "bg.promote-fast-rollback")...)
	}
	if bg.PauseStart != nil && !in.present("bg.pause-no-deadline") {
		a.Notes = append(a.Notes, fmt.Sprintf("on %s a BlueGreenPause longer than progressDeadlineSeconds turns the Rollout Degraded (ProgressDeadlineExceeded) while it waits (upstream issue #3843; fixed in v1.8)", in.Version))
		a.Cites = append(a.Cites, in.cites("bg.pause-no-deadline")...)
	}
}

// bgDifferences says how another version's blue-green prediction differs
// from the assumed one ("" when it does not).
func bgDifferences(base, other *BlueGreenAnalysis) string {
	var d []string
	if other.State != base.State {
		d = append(d, fmt.Sprintf("state %s instead of %s", other.State, base.State))
	}
	bw, ow := make([]string, 0, len(base.Forecast)), make([]string, 0, len(other.Forecast))
	for _, e := range base.Forecast {
		bw = append(bw, e.What)
	}
	for _, e := range other.Forecast {
		ow = append(ow, e.What)
	}
	if strings.Join(bw, "|") != strings.Join(ow, "|") || base.Waits != other.Waits {
		s := strings.Join(ow, "; then ")
		if other.Waits != "" {
			s += "; then " + other.Waits
		}
		if s == "" {
			s = "nothing changes"
		}
		d = append(d, "forecast: "+s)
	}
	if strings.Join(other.Notes, "|") != strings.Join(base.Notes, "|") {
		d = append(d, other.Notes...)
	}
	return strings.Join(d, "; ")
}
