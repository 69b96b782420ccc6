package escape

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// Escape from a blue-green state: the same verbs, requests and guarantees
// as for a canary, rated with the blue-green model. The effect says which
// ReplicaSet the active Service selects, with how many pods, and what is
// scaled down when.

func buildBlueGreen(in Input, base model.Inputs, p *Plan) {
	v := in.View
	ro := v.Rollout
	ver := in.Controller.Assumed
	cite := func(keys ...upstream.Key) []upstream.Cite {
		out := make([]upstream.Cite, 0, len(keys))
		for _, k := range keys {
			out = append(out, upstream.At(k, ver))
		}
		return out
	}
	// A hung pod of the ReplicaSet the active Service selects does not
	// come back by itself (pods it starts later do): the model keeps it
	// missing, so a way out that leaves the Service there keeps the
	// shortage, and one that moves the Service ends it.
	var hung []*corev1.Pod
	if r := activeOf(base); r != nil && r.Available < base.Replicas {
		if hung = diagnose.HungPods(v, r.Hash); len(hung) > 0 {
			base = base.Clone()
			r = activeOf(base)
			r.Stuck, r.Hung = true, min(int32(len(hung)), r.Spec-r.Available)
		}
	}
	wait := bgEffect(base)
	if len(hung) == 0 {
		wait.IfNeverReady = bgNeverReady(base, base, wait)
	}
	p.Now = wait
	stable := ""
	if base.Stable != nil {
		stable = base.Stable.Name
	}
	an := readAnalysis(v, base)
	for _, a := range Actions {
		o := Option{Action: a}
		after, applicable, why := bgApply(a, base, ro, in, &o)
		switch {
		case !applicable:
			o.Verdict, o.Why = NotApplicable, why
			o.Requests = nil
		default:
			o.Effect = bgEffect(after)
			if len(hung) == 0 {
				o.Effect.IfNeverReady = bgNeverReady(after, base, o.Effect)
			}
			o.Verdict, o.Why = bgJudge(a, o.Effect, wait, base, after, stable, why, o.TargetRevision)
		}
		switch a {
		case Abort:
			o.Cites = cite("cli.abort-patch", "cli.abort-status-subresource", "cli.abort-fallback", "bg.active-abort-to-stable", "bg.active-gate", "rs.abort-delay-needs-stable-full")
		case Retry:
			o.Cites = cite("cli.retry-patch", "cli.retry-status-subresource", "bg.retry-deadline-fast-track", "bg.promote-fast-rollback")
		case Promote:
			o.Cites = cite("cli.promote-clear-pause", "cli.promote-status-first", "bg.pause-manual-promote", "bg.active-after-pause", "bg.checkpoint-full-size")
			if lostPromote(base, o.Effect) {
				o.Cites = append(o.Cites, cite("bg.ready-for-pause", "pa.no-conditions-no-controller-pause", "bg.pause-add")...)
			}
		case PromoteFull:
			o.Cites = cite("cli.promote-full-patch", "cli.promote-full-guard", "cli.promote-full-unpause", "bg.fast-track-promote-full", "bg.preview-count-promote-full", "an.cancel-on-window")
		case Undo:
			o.Cites = cite("cli.undo-patch", "cli.undo-second-highest", "cli.undo-skip-equal", "bg.preview-switch", "bg.fast-track-rollback", "bg.promote-fast-rollback")
		case Skip:
			o.Cites = cite("bg.cli-skip-rejected")
		case Wait:
			o.Cites = cite("bg.active-gate", "bg.active-after-pause", "bg.scale-down-keep")
		}
		if o.Effect.IfNeverReady != "" {
			// Where the active Service stays: it switches only to a
			// ReplicaSet with all its pods available, saturated.
			o.Cites = append(o.Cites, cite("bg.active-gate", "bg.saturated")...)
		}
		withAnalysis(&o, noteAnalysis(a, an, base, &o, ver), wait, ver)
		p.Options = append(p.Options, o)
	}
	p.Recommended, p.Reason = recommend(p.Options, base, false)
	if w, _ := p.Option(Wait); p.Recommended == Wait && w.Verdict == Harmful {
		p.AllHarmful = true
		p.Recommended, p.Reason = leastHarmful(p.Options, base, v)
	}
	if len(hung) == 0 {
		return
	}
	// The hung pod keeps the active Service short until it is replaced
	// or a promotion moves the Service: the delete ends it without
	// deciding the release, so it comes first.
	r := activeOf(base)
	p.Hung = newHungNote(v, hung)
	p.Hung.Text += fmt.Sprintf(": the active Service has %d of %d pods of %s available until %s replaced or a promotion moves the Service to another ReplicaSet", r.Available, base.Replicas, r.Name, map[bool]string{true: "it is", false: "they are"}[len(hung) == 1])
	if o, _ := p.Option(p.Recommended); o != nil && o.Effect.lasting == nil && p.Recommended != Wait {
		// A promotion ends it too, but releases the new revision.
		p.Reason = fmt.Sprintf("first %s; that alone ends the shortage — or, if %s is ready for release, %s", p.Hung.Fix, o.Effect.FinalStable, p.Reason)
		return
	}
	p.Reason = fmt.Sprintf("first %s; then %s", p.Hung.Fix, p.Reason)
}

// bgNeverReady is where the active Service stays, after a way out that
// leads to after (with effect e), if the missing pods of the ReplicaSet it
// selects now — or else of the update's ReplicaSet, which it switches to
// only once that is fully available — never turn Ready, when the model has
// them turning Ready ("" when none is missing or it changes nothing).
func bgNeverReady(after, base model.Inputs, e Effect) string {
	r := activeOf(base)
	if r != nil && r.Available < base.Replicas && !r.Stuck {
		n := base.Replicas - r.Available
		x := bgEffect(stuckCopy(after, r.Name, n)).lasting
		if x == nil || x.Canary != r.Name {
			return ""
		}
		return fmt.Sprintf("if %s's %d missing %s never %s Ready, the active Service stays on %d of %d of its pods", r.Name, n, verbN("pod", "pods", int(n)), verbN("turns", "turn", int(n)), x.OnPods, x.Replicas)
	}
	u := base.New
	if u == nil || r == nil || u.Name == r.Name || u.Available >= u.Spec || u.Stuck || len(e.Serving) == 0 {
		return ""
	}
	n := u.Spec - u.Available
	x := bgEffect(stuckCopy(after, u.Name, n))
	if len(x.Serving) == 0 {
		return ""
	}
	xl, el := x.Serving[len(x.Serving)-1], e.Serving[len(e.Serving)-1]
	if xl.Canary == el.Canary && x.Phase == e.Phase {
		return ""
	}
	return fmt.Sprintf("if %s's %d missing %s never %s Ready, the active Service stays on %s (ends %s): it switches to %s only once all of its pods are available", u.Name, n, verbN("pod", "pods", int(n)), verbN("turns", "turn", int(n)), xl.Canary, x.Phase, u.Name)
}

// stuckCopy is after with the ReplicaSet name's n missing pods never
// turning Ready (pods it starts later do).
func stuckCopy(after model.Inputs, name string, n int32) model.Inputs {
	stuck := after.Clone()
	for _, s := range stuck.All {
		if s.Name == name {
			s.Stuck, s.Hung = true, min(n, max(0, s.Spec-s.Available))
		}
	}
	return stuck
}

// bgApply changes the model inputs as the action's requests would, and
// fills the option's requests and command.
func bgApply(a Action, base model.Inputs, ro *v1alpha1.Rollout, in Input, o *Option) (model.Inputs, bool, string) {
	after := base.Clone()
	name := ro.Name
	o.Command = "kubectl argo rollouts " + string(a) + " " + name + " -n " + ro.Namespace
	switch a {
	case Wait:
		o.Command = ""
		return after, true, ""
	case Skip:
		o.Command = ""
		return after, false, "kubectl argo rollouts refuses --skip-all-steps on a blue-green Rollout: it has no steps"
	case Abort, Retry:
		if done, applies, why := abortRetry(a, name, base.Abort, o); done {
			return after, applies, why
		}
		after.Abort = a == Abort
		if a == Retry && model.AtLeast(base.Version, 1, 9) && !isFailedPhase(after.BG.PostPhase) {
			// From v1.9 a new pre-promotion run is created after a retry.
			after.BG.PrePhase = ""
		}
	case PromoteFull:
		x, ok, why := applyPromoteFull(after, ro, o)
		if ok && !upstream.At("cli.promote-full-unpause", base.Version).Absent {
			x.BG.SpecPaused = false
		}
		return x, ok, why
	case Promote:
		applyPromote(after, ro, o, 0, 0)
		if len(ro.Status.PauseConditions) == 0 && !ro.Spec.Paused {
			return after, true, "no pause condition and no manual pause: kubectl sends nothing for a blue-green Rollout (it still prints \"promoted\")"
		}
		after.BG.PauseStart, after.BG.Inconclusive, after.BG.SpecPaused = nil, false, false
	case Undo:
		return applyUndo(after, ro, in.View, in, o)
	}
	return after, true, ""
}

func isFailedPhase(p string) bool { return p == "Failed" || p == "Error" }

// bgEffect replays the controller from in and summarises who the active
// Service sends production traffic to.
func bgEffect(in model.Inputs) Effect {
	steps := model.SimulateBG(in, maxPasses)
	e := Effect{Passes: len(steps)}
	if len(steps) == 0 {
		return e
	}
	last := steps[len(steps)-1]
	fin := last.After
	e.FinalAbort, e.Abort = fin.Abort, steps[0].Abort
	e.FinalStable = rsName(fin, fin.StableHash)
	for _, s := range steps {
		who, of := s.Active, in.Replicas
		if s.NoHash {
			who = "every ReplicaSet"
		} else if who == "" {
			who = "no ReplicaSet"
		}
		avail := s.ActiveAvailable
		if n := len(e.Serving); n > 0 && e.Serving[n-1].Canary == who {
			cur := &e.Serving[n-1]
			cur.To, cur.Promotes = avail, cur.Promotes || s.Pass.Promotes
		} else {
			e.Serving = append(e.Serving, Serving{Weight: 100, Canary: who, Stable: rsName(s.After, s.StableHash), From: avail, To: avail, Of: of, Promotes: s.Pass.Promotes})
		}
		if !s.NoHash && s.Active != "" && avail < in.Replicas {
			x := &Exposure{Weight: 100, OnPods: avail, Replicas: in.Replicas, Canary: s.Active}
			if e.Exposure == nil || worse(x, e.Exposure) {
				e.Exposure = x
			}
		}
		if !s.NoHash && s.Active == "" && !s.Pass.Errored {
			x := &Exposure{Weight: 100, OnPods: 0, Replicas: in.Replicas, Canary: "no ReplicaSet"}
			e.Exposure = x
		}
	}
	// The settled world after the last pass: the ReplicaSet controller
	// starts what is missing, but a stuck ReplicaSet's hung pods stay.
	ex := model.TickAll(fin)
	for i := 0; i < 64; i++ {
		nx := model.TickAll(ex)
		if r, s := activeOf(ex), activeOf(nx); r == nil || s.Available == r.Available {
			break
		}
		ex = nx
	}
	if r := activeOf(ex); r != nil && r.Available < in.Replicas {
		x := &Exposure{Weight: 100, OnPods: r.Available, Replicas: in.Replicas, Canary: r.Name}
		if !fin.Abort && (e.Exposure == nil || worse(x, e.Exposure)) {
			e.Exposure = x
		}
		e.lasting = x
	}
	switch {
	case fin.Abort:
		e.Phase = "Degraded"
	case fin.BG.SpecPaused || fin.BG.PauseStart != nil || fin.BG.Inconclusive:
		e.Phase = "Paused"
	case fin.New != nil && fin.StableHash == fin.New.Hash && fin.BG.Active.HasHash && fin.BG.Active.Hash == fin.New.Hash && fin.New.Available >= in.Replicas:
		e.Phase = "Healthy"
	default:
		e.Phase = "Progressing"
	}
	e.Summary = bgSummary(in, steps, e)
	return e
}

func activeOf(in model.Inputs) *model.RS {
	if in.BG == nil || !in.BG.Active.HasHash {
		return nil
	}
	for _, r := range in.All {
		if r.Hash == in.BG.Active.Hash {
			return r
		}
	}
	return nil
}

func rsName(in model.Inputs, h string) string {
	for _, r := range in.All {
		if h != "" && r.Hash == h {
			return r.Name
		}
	}
	return h
}

func bgSummary(in model.Inputs, steps []model.BGStep, e Effect) string {
	var parts []string
	first := e.Serving[0]
	parts = append(parts, fmt.Sprintf("the active Service is on %s (%d/%d available)", first.Canary, first.From, first.Of))
	for _, ev := range model.BGEvents(in, steps) {
		if strings.HasPrefix(ev.What, "the preview Service") {
			continue // every new template does it; the active Service is what serves
		}
		parts = append(parts, ev.When+": "+ev.What)
	}
	out := strings.Join(parts, "; ")
	if w := model.WaitsFor(steps[len(steps)-1].After); w != "" {
		out += "; then " + w
	}
	return out + fmt.Sprintf("; ends %s with stable %s", e.Phase, e.FinalStable)
}

func bgJudge(a Action, e, wait Effect, base, after model.Inputs, stable, why, targetRev string) (Verdict, string) {
	if why != "" && a != Wait {
		return NoEffect, why
	}
	exposed := func(x *Exposure) string {
		if x.Canary == "no ReplicaSet" {
			return "the active Service selecting no ReplicaSet"
		}
		return fmt.Sprintf("the active Service on %s with %d of %d pods available", x.Canary, x.OnPods, x.Replicas)
	}
	newName := ""
	if base.New != nil {
		newName = base.New.Name
	}
	// A shortage the active Service has now is no action's doing: it
	// counts against one that keeps it or adds to it, not one under
	// which it ends (a promotion away from a hung pod, pods starting).
	var now *Exposure
	if r := activeOf(base); r != nil && r.Available < base.Replicas {
		now = &Exposure{Weight: 100, OnPods: r.Available, Replicas: base.Replicas, Canary: r.Name}
	}
	harms := e.Exposure != nil && (e.lasting != nil || now == nil || e.Exposure.Canary != now.Canary || e.Exposure.OnPods < now.OnPods)
	if a == Wait {
		switch {
		case harms:
			return Harmful, "doing nothing leaves " + exposed(e.Exposure)
		case base.Abort:
			return Safe, "the Rollout stays aborted: production on " + e.Serving[len(e.Serving)-1].Canary + ", but spec.template still names the aborted revision"
		}
		if base.Replicas == 0 {
			return Safe, "nothing is served while the Rollout is scaled to 0 (spec.replicas 0), and nothing changes that: " + e.Summary
		}
		return Safe, "production stays served: " + e.Summary
	}
	if a == Promote && lostPromote(base, e) {
		return NoEffect, fmt.Sprintf("a promotion now is lost: %s has %d of its %d preview pods available, so the controller cannot complete the pause; it drops status.controllerPause and pauses again (BlueGreenPause) once they are available — promote then, or promote --full, which does not wait for the pause", base.New.Name, base.New.Available, base.New.Spec)
	}
	if sameOutcome(e, wait) && e.Phase == wait.Phase {
		if harms {
			return NoEffect, "it changes nothing that matters: " + exposed(e.Exposure) + " stays"
		}
		return NoEffect, "the controller ends where it would without it: " + e.Summary
	}
	if harms {
		return Harmful, "it puts or keeps " + exposed(e.Exposure)
	}
	v, why := bgRate(a, e, base, after, stable, newName, targetRev)
	if e.Exposure != nil && wait.lasting != nil {
		// Waiting keeps the shortage; this way out ends it.
		last := e.Serving[len(e.Serving)-1]
		ends := fmt.Sprintf("it ends the shortage: the active Service stays on %s with %d of %d pods available until %s takes over", e.Exposure.Canary, e.Exposure.OnPods, e.Exposure.Replicas, last.Canary)
		if why == e.Summary { // the prediction shows the rest
			return v, fmt.Sprintf("%s, and it ends %s with stable %s", ends, e.Phase, e.FinalStable)
		}
		why = ends + "; " + why
	}
	return v, why
}

// lostPromote: paused before promotion while the update's ReplicaSet is
// short of its preview pods, a promote clears the pause condition, the
// passes that cannot pause yet write no controllerPause, and the pause is
// added again once the pods are there (the lab, v1.7.2 and v1.10.2: a
// preview pod hung, promote, Progressing; the pod deleted, Paused again).
func lostPromote(base model.Inputs, e Effect) bool {
	return base.BG != nil && base.BG.PauseStart != nil && base.New != nil && base.New.Available < base.New.Spec && e.Phase == "Paused"
}

// bgRate rates a way out that puts no shortage of its own on the active
// Service: its cost, if any.
func bgRate(a Action, e Effect, base, after model.Inputs, stable, newName, targetRev string) (Verdict, string) {
	switch {
	case a == Retry && after.BG != nil && e.FinalStable == newName && newName != stable && !upstream.At("bg.retry-deadline-fast-track", base.Version).Absent && base.New.ScaleDownDeadline != "":
		return SafeWithCost, fmt.Sprintf("it re-releases the aborted %s and, on %s within its abort scale-down deadline, promotes it without pause or analysis", newName, base.Version)
	case a == Retry:
		return SafeWithCost, "it re-releases the aborted revision " + newName + ": " + e.Summary
	case a == PromoteFull && (base.Abort || base.BG.PrePromotion || base.BG.PostPromotion) && e.FinalStable == newName:
		return SafeWithCost, "capacity-safe, but it promotes " + newName + " without pre- or post-promotion analysis" + map[bool]string{true: " although it was aborted", false: ""}[base.Abort]
	case a == Undo && e.FinalStable != stable:
		return SafeWithCost, fmt.Sprintf("it deploys revision %s, which is not the stable revision", targetRev)
	case a == Undo && (newName == "" || newName == stable):
		// Fully promoted: undo deploys an older revision, and ending with
		// the stable unchanged means that revision never takes over (with
		// rollbackWindow and previewReplicaCount it stays short of pods).
		return SafeWithCost, fmt.Sprintf("production stays on the stable %s, but revision %s, which undo deploys, does not take over: %s", stable, targetRev, e.Summary)
	case a == Undo && undoOffStable(base, targetRev):
		return SafeWithCost, fmt.Sprintf("it deploys revision %s, which is not the stable revision: %s", targetRev, e.Summary)
	case a == Undo:
		return Safe, fmt.Sprintf("production stays on the stable %s; the new revision %s is dropped: %s", stable, newName, e.Summary)
	case a == Abort && e.FinalAbort:
		return SafeWithCost, "production on the stable " + stable + ", the aborted " + newName + " is scaled down after abortScaleDownDelaySeconds, and the Rollout stays aborted until its spec changes"
	}
	return Safe, e.Summary
}
