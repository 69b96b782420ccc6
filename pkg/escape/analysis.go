package escape

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// What each way out does to the Rollout's analysis: which AnalysisRuns it
// starts again (retry), cancels or skips (promote --full, skip, abort), treats
// as passed (promote on an Inconclusive step) or leaves running (wait). The
// capacity model does not simulate analysis — a run's result depends on the
// metrics — so this is said beside the predicted effect, except where the
// controller's own code decides the outcome: a retry that the controller
// undoes by aborting again at once changes nothing, and is rated so.

// analysisState is what the Rollout's spec and status say about analysis.
type analysisState struct {
	ns string
	// steps are the indexes of analysis steps at or after the current one.
	steps []int32
	// background and pre/post: the spec has that analysis.
	background, pre, post bool
	// The runs the Rollout's status names, by kind (nil: none).
	stepRun, bgRun, preRun, postRun *v1alpha1.RolloutAnalysisRunStatus
	// failed is the newest Failed or Error run of the current revision
	// (v1.10 clears the canary's run status on abort; the run stays).
	failed *v1alpha1.AnalysisRun
	// inconclusivePause: the Rollout is paused with InconclusiveAnalysisRun;
	// paused: it has any pause condition (promote then clears them rather
	// than advancing the step).
	inconclusivePause, paused bool
}

func (s analysisState) any() bool {
	return len(s.steps) > 0 || s.background || s.pre || s.post ||
		s.stepRun != nil || s.bgRun != nil || s.preRun != nil || s.postRun != nil
}

func hasTemplates(a *v1alpha1.RolloutAnalysis) bool { return a != nil && len(a.Templates) > 0 }

func readAnalysis(v *snapshot.View, base model.Inputs) analysisState {
	ro := v.Rollout
	s := analysisState{ns: ro.Namespace}
	if c := ro.Spec.Strategy.Canary; c != nil {
		for i, st := range c.Steps {
			if int32(i) >= base.Index0() && hasTemplates(st.Analysis) {
				s.steps = append(s.steps, int32(i))
			}
		}
		s.background = c.Analysis != nil && hasTemplates(&c.Analysis.RolloutAnalysis)
		s.stepRun, s.bgRun = ro.Status.Canary.CurrentStepAnalysisRunStatus, ro.Status.Canary.CurrentBackgroundAnalysisRunStatus
	}
	if b := ro.Spec.Strategy.BlueGreen; b != nil {
		s.pre, s.post = hasTemplates(b.PrePromotionAnalysis), hasTemplates(b.PostPromotionAnalysis)
		s.preRun, s.postRun = ro.Status.BlueGreen.PrePromotionAnalysisRunStatus, ro.Status.BlueGreen.PostPromotionAnalysisRunStatus
	}
	s.paused = len(ro.Status.PauseConditions) > 0 || ro.Spec.Paused
	for _, pc := range ro.Status.PauseConditions {
		if pc.Reason == v1alpha1.PauseReasonInconclusiveAnalysis {
			s.inconclusivePause = true
		}
	}
	hash := ro.Status.CurrentPodHash
	if hash == "" && base.New != nil {
		hash = base.New.Hash
	}
	runs := append([]*v1alpha1.AnalysisRun(nil), v.AnalysisRuns...)
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].CreationTimestamp.Before(&runs[j].CreationTimestamp) })
	for _, r := range runs {
		if hash != "" && r.Labels[v1alpha1.DefaultRolloutUniqueLabelKey] == hash && failedPhase(r.Status.Phase) {
			s.failed = r
		}
	}
	return s
}

func failedPhase(p v1alpha1.AnalysisPhase) bool {
	return p == v1alpha1.AnalysisPhaseFailed || p == v1alpha1.AnalysisPhaseError
}

func running(r *v1alpha1.RolloutAnalysisRunStatus) bool {
	return r != nil && !r.Status.Completed()
}

// runningNames lists the runs named in status that are still measuring.
func (s analysisState) runningNames() []string {
	var out []string
	for _, r := range []*v1alpha1.RolloutAnalysisRunStatus{s.stepRun, s.bgRun, s.preRun, s.postRun} {
		if running(r) {
			out = append(out, r.Name)
		}
	}
	return out
}

// remaining words the analysis still ahead: "steps 3 and 5, background".
func (s analysisState) remaining() string {
	var parts []string
	if len(s.steps) > 0 {
		var idx []string
		for _, i := range s.steps {
			idx = append(idx, strconv.Itoa(int(i)))
		}
		w := "step "
		if len(idx) > 1 {
			w = "steps "
		}
		parts = append(parts, w+strings.Join(idx, ", "))
	}
	if s.background {
		parts = append(parts, "the background analysis")
	}
	if s.pre {
		parts = append(parts, "pre-promotion")
	}
	if s.post {
		parts = append(parts, "post-promotion")
	}
	return strings.Join(parts, ", ")
}

// analysisNote is what one action does to analysis.
type analysisNote struct {
	text string
	keys []upstream.Key
	// reabort: the controller aborts again on its next passes, so the
	// action changes nothing (said in text).
	reabort bool
}

// noteAnalysis says what action a does to the Rollout's analysis. It says
// nothing for a Rollout without analysis or an action that does not apply.
func noteAnalysis(a Action, s analysisState, base model.Inputs, o *Option, ver upstream.Version) analysisNote {
	// An action that changes nothing does nothing to analysis either
	// (retry is judged below: whether it changes anything is the question).
	if !s.any() || o.Verdict == NotApplicable || (o.Verdict == NoEffect && a != Wait && a != Retry) {
		return analysisNote{}
	}
	fully := base.StableHash != "" && base.StableHash == base.CurrentPodHash
	terminated := func(names []string) string {
		return fmt.Sprintf("terminates %s (a terminated run reads Successful, whatever it measured)", runList(names))
	}
	switch a {
	case Wait:
		switch {
		case s.inconclusivePause:
			return analysisNote{text: "the Inconclusive AnalysisRun keeps the Rollout paused until someone promotes or aborts", keys: []upstream.Key{pauseKey(s)}}
		case running(s.stepRun):
			return analysisNote{text: fmt.Sprintf("the step waits for AnalysisRun %s: it moves on only when the run is Successful, and a Failed or Error run aborts the update", s.stepRun.Name), keys: []upstream.Key{"an.step-abort"}}
		case running(s.bgRun):
			return analysisNote{text: fmt.Sprintf("background AnalysisRun %s keeps measuring: a Failed or Error result aborts the update; it does not hold the steps", s.bgRun.Name), keys: []upstream.Key{"an.background-abort"}}
		case running(s.preRun) || running(s.postRun):
			r := s.preRun
			if !running(r) {
				r = s.postRun
			}
			return analysisNote{text: fmt.Sprintf("AnalysisRun %s keeps measuring and gates the promotion: a Failed or Error result aborts the update", r.Name), keys: []upstream.Key{"an.bluegreen-abort"}}
		}
	case PromoteFull:
		if fully {
			return analysisNote{}
		}
		text := "skips the remaining analysis"
		if r := s.remaining(); r != "" {
			text += " (" + r + ")"
		}
		keys := []upstream.Key{"an.cancel-on-window"}
		if names := s.runningNames(); len(names) > 0 {
			text = terminated(names) + " and " + text
			keys = append(keys, "ar.terminated-successful")
		}
		if base.New != nil {
			text += ": " + base.New.Name + " becomes stable without being measured"
		}
		return analysisNote{text: text, keys: keys}
	case Skip:
		if len(s.steps) == 0 && !running(s.stepRun) {
			return analysisNote{}
		}
		text, keys := "", []upstream.Key{"an.step-advance-terminates"}
		if len(s.steps) > 0 {
			text = "skips the analysis of " + s.remaining()
		}
		if running(s.stepRun) {
			text = joinClauses(text, terminated([]string{s.stepRun.Name}))
			keys = append(keys, "ar.terminated-successful")
		}
		return analysisNote{text: text, keys: keys}
	case Promote:
		switch {
		case s.inconclusivePause && s.stepRun != nil && s.stepRun.Status == v1alpha1.AnalysisPhaseInconclusive:
			return analysisNote{text: fmt.Sprintf("counts the Inconclusive analysis step (AnalysisRun %s) as passed and moves to the next step", s.stepRun.Name), keys: []upstream.Key{"cli.promote-inconclusive-step"}}
		case s.inconclusivePause:
			r := inconclusiveRun(s)
			if r == nil {
				return analysisNote{}
			}
			return analysisNote{text: fmt.Sprintf("starts a new run in place of the Inconclusive %s (named %s.1 or the next free suffix): the Rollout pauses again if it is Inconclusive too", r.Name, r.Name), keys: []upstream.Key{"an.rerun-after-inconclusive", "an.new-run-suffix"}}
		case running(s.stepRun) && !s.paused:
			return analysisNote{text: "skips the running analysis step: it " + terminated([]string{s.stepRun.Name}), keys: []upstream.Key{"an.step-advance-terminates", "ar.terminated-successful"}}
		}
		next := base.Index0() + 1
		if c := base.Steps; int(next) < len(c) && hasTemplates(c[next].Analysis) {
			return analysisNote{text: fmt.Sprintf("step %d then starts an AnalysisRun of %s, and the Rollout waits for it", next, templateNames(c[next].Analysis))}
		}
	case Abort:
		if names := s.runningNames(); len(names) > 0 {
			return analysisNote{text: terminated(names), keys: []upstream.Key{"an.cancel-on-window", "ar.terminated-successful"}}
		}
	case Retry:
		return retryNote(s, base, ver)
	case Undo:
		if o.TargetRevision != "" && base.Stable != nil && base.Stable.Revision == o.TargetRevision {
			return analysisNote{text: "back to the stable ReplicaSet: the steps and their analysis are skipped", keys: []upstream.Key{"rc.rollback-to-stable-skip"}}
		}
		if model.RollbackWindow(base).WithinWindow {
			return analysisNote{text: "a rollback within rollbackWindow: the steps and their analysis are skipped", keys: []upstream.Key{"an.cancel-on-window"}}
		}
		if r := s.remaining(); r != "" || s.background || s.pre || s.post {
			return analysisNote{text: "the reverted template is a new revision for the controller: it goes through the steps and analysis again"}
		}
	}
	return analysisNote{}
}

// retryNote: retry clears status.abort; the failed run stays as history and
// new runs measure again — except where the controller keeps the failed run
// current and aborts again at once.
func retryNote(s analysisState, base model.Inputs, ver upstream.Version) analysisNote {
	failed := ""
	if s.failed != nil {
		failed = s.failed.Name
	}
	// Blue-green, every version: after the abort the active Service is back
	// on the stable, so the post-promotion run is kept, not re-created, and
	// a Failed one aborts the update again.
	if s.postRun != nil && failedPhase(s.postRun.Status) {
		return analysisNote{reabort: true, keys: []upstream.Key{"an.bg-post-kept-after-abort", "an.bluegreen-abort"},
			text: fmt.Sprintf("the Failed post-promotion AnalysisRun %s stays current while the active Service selects the stable, and the controller aborts again on its next pass; delete it first (kubectl delete analysisrun %s -n %s) and then retry, or promote --full", s.postRun.Name, s.postRun.Name, s.ns)}
	}
	// Traffic-routed canary up to v1.9: the aborted canary keeps its
	// scale-down deadline, the first pass after the retry skips analysis
	// (keeping the failed runs) and clears abortedAt, and the next one
	// judges the failed background run — or a failed step-0 run — again.
	if !upstream.At("an.canary-retry-deadline-skip", ver).Absent && base.BG == nil && base.TrafficRouted &&
		base.New != nil && base.New.ScaleDownDeadline != "" {
		var stuck *v1alpha1.RolloutAnalysisRunStatus
		switch {
		case s.bgRun != nil && failedPhase(s.bgRun.Status):
			stuck = s.bgRun
		case s.stepRun != nil && failedPhase(s.stepRun.Status) && len(base.Steps) > 0 && hasTemplates(base.Steps[0].Analysis) && base.Index0() == 0:
			stuck = s.stepRun
		}
		if stuck != nil {
			return analysisNote{reabort: true, keys: []upstream.Key{"an.canary-retry-deadline-skip", "an.retry-new-run", "an.background-abort"},
				text: fmt.Sprintf("on %s the canary %s still carries its scale-down deadline, so the first pass after the retry keeps the failed AnalysisRun %s current, and the next pass judges it again and aborts; delete it first (kubectl delete analysisrun %s -n %s) and then retry", ver, base.New.Name, stuck.Name, stuck.Name, s.ns)}
		}
	}
	text := "the analysis measures again with new AnalysisRuns"
	if failed != "" {
		text = fmt.Sprintf("the failed AnalysisRun %s stays as history; the analysis measures again with new runs (%s.1, …)", failed, failed)
	}
	switch {
	case s.background && len(s.steps) > 0:
		text += ": the background analysis at once, each analysis step when the steps reach it again"
	case s.background:
		text += ": the background analysis at once"
	case base.BG == nil && base.Steps != nil:
		text += " when the steps reach an analysis step again"
	}
	return analysisNote{text: text, keys: []upstream.Key{"an.retry-new-run", "an.new-run-suffix"}}
}

func inconclusiveRun(s analysisState) *v1alpha1.RolloutAnalysisRunStatus {
	for _, r := range []*v1alpha1.RolloutAnalysisRunStatus{s.bgRun, s.preRun, s.postRun, s.stepRun} {
		if r != nil && r.Status == v1alpha1.AnalysisPhaseInconclusive {
			return r
		}
	}
	return nil
}

func pauseKey(s analysisState) upstream.Key {
	r := inconclusiveRun(s)
	switch {
	case r == nil || r == s.stepRun:
		return "an.step-inconclusive-pause"
	case r == s.bgRun:
		return "an.background-inconclusive-pause"
	}
	return "an.bluegreen-inconclusive-pause"
}

func templateNames(a *v1alpha1.RolloutAnalysis) string {
	var names []string
	for _, t := range a.Templates {
		names = append(names, t.TemplateName)
	}
	return strings.Join(names, ", ")
}

func runList(names []string) string {
	if len(names) == 1 {
		return "AnalysisRun " + names[0]
	}
	return "AnalysisRuns " + strings.Join(names, ", ")
}

func joinClauses(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// withAnalysis adds what the action does to analysis to the option; where
// the controller aborts again at once, the action changes nothing: it is
// rated no-effect and its effect is waiting's.
func withAnalysis(o *Option, n analysisNote, wait Effect, ver upstream.Version) {
	if n.text == "" {
		return
	}
	o.Analysis = n.text
	for _, k := range n.keys {
		o.Cites = append(o.Cites, upstream.At(k, ver))
	}
	if n.reabort {
		o.Verdict, o.Why, o.Effect = NoEffect, "the controller aborts again at once: "+n.text, wait
	}
}
