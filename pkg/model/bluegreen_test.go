package model

import (
	"strings"
	"testing"
	"time"

	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// The blue-green model's tables: a Rollout of 4 replicas whose stable "a"
// (created first) serves the active Service, and a new revision "b".
// Expected values are written from the controller's code paths (cited in
// pkg/upstream), never computed by the model.

var bgNow = time.Date(2026, 11, 20, 14, 0, 0, 0, time.UTC)

func bgRS(name, hash string, created time.Time, spec, avail int32) *RS {
	d := int32(4)
	return &RS{Name: name, Hash: hash, Revision: map[string]string{"a": "3", "b": "4", "z": "2"}[hash], Created: created, Spec: spec, Replicas: spec, Ready: avail, Available: avail, Desired: &d}
}

// bgState: stable a 4/4 active, new b at spec/avail, preview on b.
func bgState(v upstream.Version, bSpec, bAvail int32) Inputs {
	a := bgRS("web-a", "a", bgNow.Add(-48*time.Hour), 4, 4)
	b := bgRS("web-b", "b", bgNow.Add(-10*time.Minute), bSpec, bAvail)
	return Inputs{Version: v, Replicas: 4, MaxWeight: 100, StableHash: "a", CurrentPodHash: "b", New: b, Stable: a, All: []*RS{a, b},
		BG: &BlueGreen{Name: "web", Namespace: "shop", AutoPromotionEnabled: true, ScaleDownDelay: 30, AbortDelay: 30, HasPreview: true, Now: bgNow, StatusActive: "a",
			Active:  ServiceView{Name: "web-active", Found: true, HasHash: true, Hash: "a", Ready: 4, SlicesRead: true},
			Preview: ServiceView{Name: "web-preview", Found: true, HasHash: true, Hash: "b", Ready: bAvail, SlicesRead: true}}}
}

func i32p(v int32) *int32 { return &v }

func firstSwitch(steps []BGStep) (int, *BGStep) {
	for i := range steps {
		if steps[i].Pass.Switched {
			return i, &steps[i]
		}
	}
	return -1, nil
}

func TestBlueGreenPausedWaitsForPromote(t *testing.T) {
	for _, ver := range upstream.Modeled {
		in := bgState(ver, 4, 4)
		in.BG.AutoPromotionEnabled = false
		start := bgNow.Add(-5 * time.Minute)
		in.BG.PauseStart, in.BG.ControllerPause = &start, true
		a := AnalyzeBlueGreen(in)
		if a.State != BGPaused || !strings.Contains(a.Act, "kubectl argo rollouts promote web -n shop") {
			t.Errorf("%s: state %s, act %q", ver, a.State, a.Act)
		}
		if _, s := firstSwitch(a.Steps); s != nil {
			t.Errorf("%s: switched without a promote", ver)
		}
		// promote: the CLI clears the pause conditions, controllerPause stays.
		in.BG.PauseStart = nil
		p := EvaluateBG(in)
		if !p.Switched || !p.Promotes || p.PromoteWhy != "Completed blue-green update" {
			t.Errorf("%s: after promote: switched %v promotes %v (%s)", ver, p.Switched, p.Promotes, p.PromoteWhy)
		}
	}
}

func TestBlueGreenAutoPromotionCountdown(t *testing.T) {
	for _, ver := range upstream.Modeled {
		in := bgState(ver, 4, 4)
		in.BG.AutoPromotionSeconds = 600
		start := bgNow.Add(-4 * time.Minute)
		in.BG.PauseStart, in.BG.ControllerPause = &start, true
		a := AnalyzeBlueGreen(in)
		want := start.Add(10 * time.Minute)
		if a.State != BGPaused || a.AutoPromoteAt == nil || !a.AutoPromoteAt.Equal(want) {
			t.Fatalf("%s: state %s, auto-promote at %v, want %v", ver, a.State, a.AutoPromoteAt, want)
		}
		_, s := firstSwitch(a.Steps)
		if s == nil || s.Now.Before(want) {
			t.Fatalf("%s: switch %+v, want one at %v", ver, s, want)
		}
		found := false
		for _, e := range a.Forecast {
			if strings.Contains(e.What, "active Service switches to web-b") && e.At != nil && e.At.Equal(want) && strings.Contains(e.When, "in 6m0s") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: forecast has no switch at %v: %+v", ver, want, a.Forecast)
		}
	}
}

func TestBlueGreenPreviewReplicaCountSizing(t *testing.T) {
	for _, ver := range upstream.Modeled {
		in := bgState(ver, 2, 2)
		in.BG.PreviewReplicaCount = i32p(2)
		if got := NewRSTarget(in); got != 2 {
			t.Errorf("%s: paused-less preview before the checkpoint sized %d, want 2", ver, got)
		}
		// autoPromotion (no pause): the checkpoint is set once 2/2 are
		// available, then the new ReplicaSet goes to 4 and the switch follows.
		steps := SimulateBG(in, 50)
		if !steps[0].Pass.CheckPoint || steps[0].Pass.Switched {
			t.Errorf("%s: first pass checkpoint %v switched %v", ver, steps[0].Pass.CheckPoint, steps[0].Pass.Switched)
		}
		i, s := firstSwitch(steps)
		if s == nil || i < 2 {
			t.Fatalf("%s: switch at pass %d", ver, i)
		}
		if steps[1].Pass.NewTarget != 4 {
			t.Errorf("%s: second pass sizes the new ReplicaSet %d, want 4", ver, steps[1].Pass.NewTarget)
		}
		// promote --full ignores previewReplicaCount at once.
		in.PromoteFull = true
		if got := NewRSTarget(in); got != 4 {
			t.Errorf("%s: promoteFull sizes %d, want 4", ver, got)
		}
	}
}

// The active Service lost its hash (a GitOps re-apply): the controller marks
// the new, unavailable revision stable at once and the old one is scaled
// down after the delay — in every version (#4750).
func TestBlueGreenActiveWithoutHash(t *testing.T) {
	for _, ver := range upstream.Modeled {
		in := bgState(ver, 4, 1)
		in.BG.Active.HasHash, in.BG.Active.Hash, in.BG.StatusActive = false, "", ""
		p := EvaluateBG(in)
		if !p.Promotes || p.PromoteWhy != "Initial deploy" || p.Switched {
			t.Errorf("%s: promotes %v (%s), switched %v", ver, p.Promotes, p.PromoteWhy, p.Switched)
		}
		a := AnalyzeBlueGreen(in)
		scaled := false
		for _, e := range a.Forecast {
			if e.What == "web-a is scaled from 4 to 0" {
				scaled = true
			}
		}
		if !scaled {
			t.Errorf("%s: the old stable is not scaled down (%d events)", ver, len(a.Forecast))
		}
	}
}

// #4728: a revision that inherited scaleUpPreviewCheckPoint is sized to
// replicas, its pre-promotion analysis never starts, the switch never comes.
func TestBlueGreenLeakedCheckpoint(t *testing.T) {
	for _, ver := range upstream.Modeled {
		in := bgState(ver, 4, 4)
		in.BG.PreviewReplicaCount, in.BG.CheckPoint, in.BG.PrePromotion = i32p(1), true, true
		a := AnalyzeBlueGreen(in)
		if a.State != BGStuckCheckpoint {
			t.Errorf("%s: state %s (%s)", ver, a.State, a.StateWhy)
		}
		if _, s := firstSwitch(a.Steps); s != nil {
			t.Errorf("%s: switched", ver)
		}
		// A new template keeps the leaked checkpoint through the reset.
		in.CurrentPodHash = "a"
		if p := EvaluateBG(in); !p.Reset || !p.CheckPoint {
			t.Errorf("%s: reset %v checkpoint %v, want the checkpoint kept", ver, p.Reset, p.CheckPoint)
		}
	}
}

// Abort after the switch while the new ReplicaSet is unavailable: the
// active Service stays on it and it is scaled to 0 after the abort delay.
func TestBlueGreenAbortAfterSwitchHeld(t *testing.T) {
	for _, ver := range upstream.Modeled {
		in := bgState(ver, 4, 1)
		in.BG.Active.Hash, in.BG.StatusActive, in.Abort = "b", "b", true
		in.New.Stuck = true // the revision was aborted because its pods fail
		p := EvaluateBG(in)
		if !p.HeldBack || p.Reverted || p.ActiveHash != "b" {
			t.Errorf("%s: held %v reverted %v active %s", ver, p.HeldBack, p.Reverted, p.ActiveHash)
		}
		if p.Deadlines["web-b"] != bgNow.Add(30*time.Second).Format(time.RFC3339) {
			t.Errorf("%s: abort deadline %q", ver, p.Deadlines["web-b"])
		}
		steps := SimulateBG(in, 50)
		last := steps[len(steps)-1].After
		if last.New.Spec != 0 || !last.BG.Active.HasHash || last.BG.Active.Hash != "b" {
			t.Errorf("%s: ends with web-b at %d, active %s", ver, last.New.Spec, last.BG.Active.Hash)
		}
	}
}

// The version differences, one row each.
func TestBlueGreenVersionDifferences(t *testing.T) {
	old := []upstream.Version{"v1.7.2", "v1.8.2", "v1.8.3", "v1.9.3"}
	isOld := func(v upstream.Version) bool {
		for _, o := range old {
			if o == v {
				return true
			}
		}
		return false
	}
	for _, ver := range upstream.Modeled {
		// Retry within abortScaleDownDelaySeconds: up to v1.9 the deadline
		// in memory fast-tracks the aborted revision; v1.10 pauses again.
		in := bgState(ver, 4, 4)
		in.BG.AutoPromotionEnabled = false
		in.New.ScaleDownDeadline = bgNow.Add(20 * time.Second).Format(time.RFC3339)
		p := EvaluateBG(in) // after retry: abort false
		if isOld(ver) != (p.Switched && p.Promotes) || isOld(ver) == p.PauseAdded {
			t.Errorf("%s retry within the abort delay: switched %v promotes %v pause %v", ver, p.Switched, p.Promotes, p.PauseAdded)
		}

		// Rollback within rollbackWindow with a manual promotion (#3304):
		// never switches up to v1.9, fast rollback on v1.10.
		in = bgState(ver, 4, 4)
		in.BG.AutoPromotionEnabled, in.WindowRevision = false, 3
		in.New.Created = in.Stable.Created.Add(-time.Hour)
		_, s := firstSwitch(SimulateBG(in, 50))
		if isOld(ver) != (s == nil) {
			t.Errorf("%s rollback within the window: switch %v", ver, s != nil)
		}
		a := AnalyzeBlueGreen(in)
		if isOld(ver) != (len(a.Notes) > 0 && strings.Contains(a.Notes[0], "#3304")) {
			t.Errorf("%s: notes %v", ver, a.Notes)
		}

		// Abort delay: the stable has more available than replicas; up to
		// v1.9 the deadline needs exactly replicas, v1.10 at least.
		in = bgState(ver, 4, 4)
		in.Abort, in.Stable.Available = true, 5
		_, has := EvaluateBG(in).Deadlines["web-b"]
		if isOld(ver) == has {
			t.Errorf("%s: abort deadline with stable 5/4: %v", ver, has)
		}

		// v1.7.2 only: a long BlueGreenPause hits the progress deadline.
		in = bgState(ver, 4, 4)
		in.BG.AutoPromotionEnabled = false
		start := bgNow.Add(-time.Hour)
		in.BG.PauseStart, in.BG.ControllerPause = &start, true
		a = AnalyzeBlueGreen(in)
		if (ver == "v1.7.2") != (len(a.Notes) > 0 && strings.Contains(a.Notes[0], "#3843")) {
			t.Errorf("%s: pause notes %v", ver, a.Notes)
		}
	}
}

func TestBlueGreenScaleDownDelay(t *testing.T) {
	for _, ver := range upstream.Modeled {
		// Promoted: a is the old stable with a deadline 20 s ahead.
		in := bgState(ver, 4, 4)
		in.StableHash, in.Stable = "b", in.New
		in.BG.Active.Hash, in.BG.StatusActive = "b", "b"
		in.All[0].ScaleDownDeadline = bgNow.Add(20 * time.Second).Format(time.RFC3339)
		a := AnalyzeBlueGreen(in)
		if a.State != BGScaleDownDelay || len(a.Old) != 1 || a.Old[0].Left != 20*time.Second || !strings.Contains(a.Old[0].Meaning, "fast rollback") {
			t.Fatalf("%s: state %s old %+v", ver, a.State, a.Old)
		}
		found := false
		for _, e := range a.Forecast {
			if e.What == "web-a is scaled from 4 to 0" && e.At != nil && e.At.Equal(bgNow.Add(20*time.Second)) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no scale-down at the deadline: %+v", ver, a.Forecast)
		}
		// scaleDownDelaySeconds 0: no deadline, never scaled down.
		in.All[0].ScaleDownDeadline = ""
		in.BG.ScaleDownDelay, in.BG.ScaleDownDelaySet = 0, true
		for _, s := range SimulateBG(in, 50) {
			if tgt, ok := s.Pass.Targets["web-a"]; ok && tgt == 0 {
				t.Errorf("%s: scaleDownDelaySeconds 0 scaled web-a down", ver)
			}
		}
	}
}

// The bundled example: paused before promotion with previewReplicaCount 2.
func TestBlueGreenExample(t *testing.T) {
	v := exampletest.View(t, exampletest.BlueGreen)
	for _, ver := range upstream.Modeled {
		a := Analyze(v, ver).BlueGreen
		if a == nil || a.State != BGPaused || a.ActiveRS != "checkout-web-7d9f8c6b5" || a.PreviewRS != "checkout-web-5c6d7e8f9" ||
			a.Active.Ready != 4 || a.Preview.Ready != 2 || a.NewTarget != 2 || a.Waits != "stays paused until someone promotes it" {
			t.Errorf("%s: %+v", ver, a)
		}
	}
}

// The first revision: the controller's first pass marks it stable ("Initial
// deploy", sync.go: bg.promote-no-hash-initial) while the active Service
// still has no hash selector and status.blueGreen.activeSelector is empty.
// That is still the initial deploy, not a healthy Rollout: the active
// Service is pointed at it once it is saturated (bg.active-gate). Seen in
// the lab (test/e2e bg-initial) on every version.
func TestBlueGreenInitialBeforeActivePointed(t *testing.T) {
	for _, ver := range upstream.Modeled {
		a := bgRS("web-a", "a", bgNow.Add(-time.Minute), 4, 1)
		in := Inputs{Version: ver, Replicas: 4, MaxWeight: 100, StableHash: "a", CurrentPodHash: "a", New: a, Stable: a, All: []*RS{a},
			BG: &BlueGreen{Name: "web", Namespace: "shop", ScaleDownDelay: 10, AbortDelay: 10, HasPreview: true, Now: bgNow, PreviewReplicaCount: i32p(2),
				Active:  ServiceView{Name: "web-active", Found: true},
				Preview: ServiceView{Name: "web-preview", Found: true, HasHash: true, Hash: "a"}}}
		an := AnalyzeBlueGreen(in)
		if an.State != BGInitial {
			t.Errorf("%s: state %s (%s), want %s", ver, an.State, an.StateWhy, BGInitial)
		}
		var whats []string
		for _, e := range an.Forecast {
			whats = append(whats, e.What)
		}
		if w := strings.Join(whats, "; "); w != "the active Service, which has no hash selector, is pointed at web-a (4/4 available)" {
			t.Errorf("%s: forecast %q", ver, w)
		}
	}
}

// Undo within scaleDownDelaySeconds with previewReplicaCount 2 of 4 and
// autoPromotionEnabled false. After the undo's reset pass the old A is the
// new ReplicaSet, with its 4 pods and an unexpired deadline. The next pass
// sizes it to previewReplicaCount (utils/replicaset/replicaset.go:
// ur.bluegreen-preview-count, the checkpoint being reset) and removes its
// deadline (rollout/replicaset.go: bg.new-deadline-removed); ReadyForPause
// needs exactly 2 available (bg.ready-for-pause), so the pause is not
// reconciled in that pass, and from the next one on the deadline is gone:
// no fast rollback, the Rollout pauses and the active Service stays on B.
// The forecast must name the 4→2 scale-down (the lab's bg-undo-within-delay
// showed it on v1.8.2 and v1.10.2 while the forecast left it out), and the
// scale-down list must not promise a fast rollback before the undo.
func TestBlueGreenUndoWithinDelayPreviewCount(t *testing.T) {
	for _, ver := range upstream.Modeled {
		dl := bgNow.Add(15 * time.Second).Format(time.RFC3339)
		a := bgRS("web-a", "a", bgNow.Add(-10*time.Minute), 4, 4)
		b := bgRS("web-b", "b", bgNow.Add(-5*time.Minute), 4, 4)
		a.ScaleDownDeadline = dl
		bg := func() *BlueGreen {
			return &BlueGreen{Name: "web", Namespace: "shop", ScaleDownDelay: 20, ScaleDownDelaySet: true, AbortDelay: 10, HasPreview: true, Now: bgNow,
				PreviewReplicaCount: i32p(2), StatusActive: "b",
				Active:  ServiceView{Name: "web-active", Found: true, HasHash: true, Hash: "b"},
				Preview: ServiceView{Name: "web-preview", Found: true, HasHash: true, Hash: "b"}}
		}
		before := Inputs{Version: ver, Replicas: 4, MaxWeight: 100, StableHash: "b", CurrentPodHash: "b", New: b, Stable: b, All: []*RS{a, b}, BG: bg()}
		an := AnalyzeBlueGreen(before)
		if len(an.Old) != 1 || strings.Contains(an.Old[0].Meaning, "is a fast rollback") || !strings.Contains(an.Old[0].Meaning, "not a fast rollback") {
			t.Errorf("%s: scale-downs %+v", ver, an.Old)
		}
		after := Inputs{Version: ver, Replicas: 4, MaxWeight: 100, StableHash: "b", CurrentPodHash: "a", New: a, Stable: b, All: []*RS{a, b}, BG: bg()}
		after.BG.AutoPromotionEnabled = false
		after.BG.Preview.Hash = "a"
		an = AnalyzeBlueGreen(after)
		var whats []string
		for _, e := range an.Forecast {
			whats = append(whats, e.What)
		}
		w := strings.Join(whats, "; ")
		if !strings.HasPrefix(w, "web-a is scaled from 4 to 2") || !strings.Contains(w, "the Rollout pauses") || strings.Contains(w, "switches") {
			t.Errorf("%s: forecast %q", ver, w)
		}
		if an.Waits != "stays paused until someone promotes it" {
			t.Errorf("%s: waits %q", ver, an.Waits)
		}
	}
}
