package escape

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// bgView is the blue-green example after edit (on every object).
func bgView(t *testing.T, edit func(*unstructured.Unstructured)) *snapshot.View {
	t.Helper()
	objs, hdr := exampletest.Decode(t, exampletest.BlueGreen)
	for _, o := range objs {
		if edit != nil {
			edit(o)
		}
	}
	return exampletest.ViewOf(t, snapshot.New(*hdr, objs))
}

func setf(u *unstructured.Unstructured, v interface{}, path ...string) {
	if err := unstructured.SetNestedField(u.Object, v, path...); err != nil {
		panic(err)
	}
}

type bgCell map[Action]Verdict

// TestBlueGreenEscapes rates every verb from each state, per version; the
// verdicts are read off the controller's code paths.
func TestBlueGreenEscapes(t *testing.T) {
	paused := bgCell{PromoteFull: Safe, Undo: Safe, Retry: NotApplicable, Abort: SafeWithCost, Promote: Safe, Skip: NotApplicable, Wait: Safe}
	// Aborted before the switch: production already on the stable.
	aborted := func(u *unstructured.Unstructured) {
		if u.GetKind() == "Rollout" {
			setf(u, true, "status", "abort")
			unstructured.RemoveNestedField(u.Object, "status", "pauseConditions")
			setf(u, false, "status", "controllerPause")
		}
	}
	abortedCell := bgCell{PromoteFull: SafeWithCost, Undo: Safe, Retry: SafeWithCost, Abort: NoEffect, Promote: NoEffect, Skip: NotApplicable, Wait: Safe}
	for _, ver := range upstream.Modeled {
		for name, tc := range map[string]struct {
			edit func(*unstructured.Unstructured)
			want bgCell
			rec  Action
		}{
			"paused before promotion":   {nil, paused, Wait},
			"aborted before the switch": {aborted, abortedCell, Undo},
		} {
			p, err := Build(Input{View: bgView(t, tc.edit), Controller: model.ControllerVersion{Assumed: ver, Exact: true}})
			if err != nil {
				t.Fatalf("%s %s: %v", ver, name, err)
			}
			for a, want := range tc.want {
				o, _ := p.Option(a)
				if o.Verdict != want {
					t.Errorf("%s %s: %s is %s (%s), want %s", ver, name, a, o.Verdict, o.Why, want)
				}
			}
			if p.Recommended != tc.rec {
				t.Errorf("%s %s: recommended %s (%s), want %s", ver, name, p.Recommended, p.Reason, tc.rec)
			}
		}
	}
}

// The requests are the CLI's for blue-green: promote clears the pause
// conditions; promote --full sets promoteFull and, from v1.9, unpauses.
func TestBlueGreenRequests(t *testing.T) {
	manual := func(u *unstructured.Unstructured) {
		if u.GetKind() == "Rollout" {
			setf(u, true, "spec", "paused")
		}
	}
	for _, ver := range upstream.Modeled {
		p, err := Build(Input{View: bgView(t, manual), Controller: model.ControllerVersion{Assumed: ver, Exact: true}})
		if err != nil {
			t.Fatal(err)
		}
		pr, _ := p.Option(Promote)
		if len(pr.Requests) != 2 || string(pr.Requests[0].Body) != `{"status":{"pauseConditions":null}}` || string(pr.Requests[1].Body) != `{"spec":{"paused":false}}` {
			t.Errorf("%s promote requests: %+v", ver, pr.Requests)
		}
		pf, _ := p.Option(PromoteFull)
		unpauses := len(pf.Requests) == 2 && string(pf.Requests[1].Body) == `{"spec":{"paused":false}}`
		v19 := ver == "v1.9.3" || ver == "v1.10.2"
		if unpauses != v19 {
			t.Errorf("%s promote --full unpauses: %v (requests %+v)", ver, unpauses, pf.Requests)
		}
		// Without the unpause the manual pause halts the switch: the
		// Rollout stays paused on v1.7–v1.8.
		if v19 != (pf.Effect.Phase == "Healthy") {
			t.Errorf("%s promote --full with spec.paused ends %s: %s", ver, pf.Effect.Phase, pf.Effect.Summary)
		}
		sk, _ := p.Option(Skip)
		if sk.Verdict != NotApplicable || len(sk.Requests) != 0 {
			t.Errorf("%s skip: %s %+v", ver, sk.Verdict, sk.Requests)
		}
	}
}

// Retry within the abort scale-down delay: up to v1.9 the aborted revision
// is promoted without pause (the example needs a promote); v1.10 pauses.
func TestBlueGreenRetryWithinAbortDelay(t *testing.T) {
	edit := func(u *unstructured.Unstructured) {
		switch {
		case u.GetKind() == "Rollout":
			setf(u, true, "status", "abort")
			unstructured.RemoveNestedField(u.Object, "status", "pauseConditions")
			setf(u, false, "status", "controllerPause")
			unstructured.RemoveNestedField(u.Object, "spec", "strategy", "blueGreen", "previewReplicaCount")
		case u.GetKind() == "ReplicaSet" && u.GetName() == "checkout-web-5c6d7e8f9":
			setf(u, int64(4), "spec", "replicas")
			setf(u, int64(4), "status", "availableReplicas")
			setf(u, "2026-11-20T14:31:40Z", "metadata", "annotations", "scale-down-deadline")
		}
	}
	for _, ver := range upstream.Modeled {
		p, err := Build(Input{View: bgView(t, edit), Controller: model.ControllerVersion{Assumed: ver, Exact: true}})
		if err != nil {
			t.Fatal(err)
		}
		o, _ := p.Option(Retry)
		fast := o.Effect.FinalStable == "checkout-web-5c6d7e8f9" && o.Effect.Phase == "Healthy"
		old := ver != "v1.10.2"
		if fast != old {
			t.Errorf("%s retry: %s / %s", ver, o.Why, o.Effect.Summary)
		}
		if old && !strings.Contains(o.Why, "without pause or analysis") {
			t.Errorf("%s retry why: %s", ver, o.Why)
		}
		if !old && o.Effect.Phase != "Paused" {
			t.Errorf("%s retry should pause again: %s", ver, o.Effect.Summary)
		}
	}
}

// Aborted after the switch with a failing new revision: waiting keeps the
// active Service on it until it is scaled to 0 — harmful in every version.
func TestBlueGreenAbortHeldIsHarmful(t *testing.T) {
	for _, ver := range upstream.Modeled {
		v := bgView(t, func(u *unstructured.Unstructured) {
			switch {
			case u.GetKind() == "Rollout":
				setf(u, true, "status", "abort")
				setf(u, "5c6d7e8f9", "status", "blueGreen", "activeSelector")
				unstructured.RemoveNestedField(u.Object, "status", "pauseConditions")
				unstructured.RemoveNestedField(u.Object, "spec", "strategy", "blueGreen", "previewReplicaCount")
			case u.GetKind() == "Service" && u.GetName() == "checkout-web-active":
				setf(u, "5c6d7e8f9", "spec", "selector", "rollouts-pod-template-hash")
			case u.GetKind() == "ReplicaSet" && u.GetName() == "checkout-web-5c6d7e8f9":
				setf(u, int64(4), "spec", "replicas")
				setf(u, int64(1), "status", "availableReplicas")
			}
		})
		base := model.FromView(v, ver)
		base.New.Stuck = true
		e := bgEffect(base)
		if e.Exposure == nil || e.Exposure.Canary != "checkout-web-5c6d7e8f9" || e.Exposure.OnPods != 0 {
			t.Errorf("%s: waiting: exposure %+v (%s)", ver, e.Exposure, e.Summary)
		}
	}
}

// A blue-green Rollout scaled to 0 (KEDA, an idle environment) serves
// nothing, and waiting does not change that: wait is safe but does not say
// production is served. The lab (v1.10.2) showed promote then scaling the
// preview's pods away and switching, as predicted.
func TestBlueGreenScaledToZero(t *testing.T) {
	for _, ver := range upstream.Modeled {
		v := bgView(t, func(u *unstructured.Unstructured) {
			switch {
			case u.GetKind() == "Rollout":
				setf(u, int64(0), "spec", "replicas")
			case u.GetKind() == "ReplicaSet" && u.GetName() == "checkout-web-7d9f8c6b5":
				setf(u, int64(0), "spec", "replicas")
				setf(u, int64(0), "status", "availableReplicas")
				setf(u, int64(0), "status", "readyReplicas")
				setf(u, int64(0), "status", "replicas")
			}
		})
		p := planAt(t, v, ver)
		o, _ := p.Option(Wait)
		if o.Verdict != Safe || !strings.HasPrefix(o.Why, "nothing is served while the Rollout is scaled to 0 (spec.replicas 0)") {
			t.Errorf("%s: wait is %s: %s", ver, o.Verdict, o.Why)
		}
		if o, _ := p.Option(Promote); o.Verdict != Safe || !strings.Contains(o.Why, "ends Healthy with stable checkout-web-5c6d7e8f9") {
			t.Errorf("%s: promote is %s: %s", ver, o.Verdict, o.Why)
		}
	}
}

// A blue-green update waiting for its preview pods, with
// progressDeadlineAbort: "if nothing is done" says when the controller
// aborts it, and that production stays on the stable (its active Service
// switches only at promotion). Seen so in the lab on v1.10.2.
func TestBlueGreenDeadlineAbort(t *testing.T) {
	for _, ver := range upstream.Modeled {
		v := bgView(t, func(u *unstructured.Unstructured) {
			switch {
			case u.GetKind() == "Rollout":
				setf(u, true, "spec", "progressDeadlineAbort")
				unstructured.RemoveNestedField(u.Object, "status", "pauseConditions")
				setf(u, false, "status", "controllerPause")
				_ = unstructured.SetNestedSlice(u.Object, []interface{}{map[string]interface{}{"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated",
					"lastTransitionTime": "2026-11-20T14:22:05Z", "lastUpdateTime": "2026-11-20T14:31:00Z"}}, "status", "conditions")
			case u.GetKind() == "ReplicaSet" && u.GetName() == "checkout-web-5c6d7e8f9":
				setf(u, int64(0), "status", "availableReplicas")
				setf(u, int64(0), "status", "readyReplicas")
			}
		})
		p := planAt(t, v, ver)
		if p.Deadline == nil || !strings.Contains(p.Deadline.Text, "by 2026-11-20T14:41:00Z (in 9m40s; progressDeadlineSeconds 600 without progress)") || !strings.Contains(p.Deadline.Text, "the controller aborts it (progressDeadlineAbort): production stays on the stable checkout-web-7d9f8c6b5, checkout-web-5c6d7e8f9 is scaled down") {
			t.Errorf("%s: deadline %+v", ver, p.Deadline)
		}
	}
}

// The lab's blue-green Rollout paused before promotion with one pod of the
// active ReplicaSet hung for 2m10s: the plan puts its delete first and
// does not promise, from the observed start rate, that it comes back.
func TestBlueGreenActivePodHung(t *testing.T) {
	v := exampletest.View(t, exampletest.LabBlueGreenActiveHung)
	p, err := Build(Input{View: v, Controller: model.ControllerVersion{Assumed: "v1.10.2", Exact: true}})
	if err != nil {
		t.Fatal(err)
	}
	if h := p.Hung; h == nil || !reflect.DeepEqual(h.Pods, []string{"app-7b4468f94c-gf2bf"}) || !strings.Contains(h.Text, "the active Service has 3 of 4 pods of app-7b4468f94c available until it is replaced") {
		t.Fatalf("hung note %+v", h)
	}
	if !strings.HasPrefix(p.Reason, "first delete the hung pod (`kubectl delete pod -n b10 app-7b4468f94c-gf2bf`)") || strings.Contains(p.Reason, "pods/min") {
		t.Errorf("reason: %s", p.Reason)
	}
	// The shortage is there now, whatever is done: it counts against the
	// ways out that keep the active Service on the hung pod's ReplicaSet,
	// not against a promotion, which moves the Service off it.
	for a, harmful := range map[Action]bool{Wait: true, Abort: true, Undo: true, Promote: false, PromoteFull: false} {
		o, _ := p.Option(a)
		if (o.Verdict == Harmful) != harmful {
			t.Errorf("hung: %s is %s (%s)", a, o.Verdict, o.Why)
		}
		if !harmful && !strings.HasPrefix(o.Why, "it ends the shortage: the active Service stays on app-7b4468f94c with 3 of 4 pods available until app-57d797f754 takes over, and it ends Healthy") {
			t.Errorf("hung: %s why: %s", a, o.Why)
		}
	}
	// The undo keeps the hung pod's ReplicaSet, which stays short: not
	// Healthy.
	u, _ := p.Option(Undo)
	if u.Effect.Phase != "Progressing" {
		t.Errorf("undo with the hung pod ends %s: %s", u.Effect.Phase, u.Effect.Summary)
	}
	// The watch after it ends there: the ReplicaSet short of the hung pod
	// and nothing else (the lab: undo, then app-… 3/4, Progressing).
	end := Observation{Phase: "Progressing", Stable: "app-7b4468f94c", ShortRS: "app-7b4468f94c", ShortBy: 1}
	if !end.Reached(u.Effect) {
		t.Errorf("the undo's end with the hung pod is not reached: %+v", end)
	}
	if end.ShortBy = 2; end.Reached(u.Effect) {
		t.Errorf("two pods short reached the undo's end: %+v", end)
	}
	if p.Recommended != PromoteFull || !strings.Contains(p.Reason, "; that alone ends the shortage — or, if app-57d797f754 is ready for release, promote-full (safe): it ends the shortage") {
		t.Errorf("hung: recommended %s: %s", p.Recommended, p.Reason)
	}

	v.Now = v.Now.Add(-time.Minute) // unready for 70 s: it may still be starting
	if p, _ = Build(Input{View: v, Controller: model.ControllerVersion{Assumed: "v1.10.2", Exact: true}}); p.Hung != nil || strings.Contains(p.Reason, "delete") {
		t.Errorf("70 s unready is not hung: %+v / %s", p.Hung, p.Reason)
	}
	// The pod is expected back: waiting is safe, and each way out says
	// whether it rests on that.
	const stays = "if app-7b4468f94c's 1 missing pod never turns Ready, the active Service stays on 3 of 4 of its pods"
	for a, rests := range map[Action]bool{Wait: true, Abort: true, Undo: true, Promote: false, PromoteFull: false} {
		o, _ := p.Option(a)
		if (o.Effect.IfNeverReady == stays) != rests || o.Verdict == Harmful {
			t.Errorf("starting: %s is %s (%s), if never Ready: %q", a, o.Verdict, o.Why, o.Effect.IfNeverReady)
		}
	}
	if p.Recommended != Wait || !strings.HasSuffix(p.Reason, "; if the missing pods never turn Ready, promote-full is the way out that does not wait on them") {
		t.Errorf("starting: recommended %s: %s", p.Recommended, p.Reason)
	}
}

// Paused before promotion with a preview pod missing: a promotion switches
// the active Service only once the update's ReplicaSet is fully available,
// so each way out that promotes says where the Service stays if that pod
// never turns Ready (a revision that crashes); the others do not rest on it.
func TestBlueGreenPreviewPodMissing(t *testing.T) {
	v := bgView(t, func(u *unstructured.Unstructured) {
		if u.GetKind() == "ReplicaSet" && u.GetName() == "checkout-web-5c6d7e8f9" {
			setf(u, int64(1), "status", "availableReplicas")
			setf(u, int64(1), "status", "readyReplicas")
		}
	})
	for _, ver := range upstream.Modeled {
		p, err := Build(Input{View: v, Controller: model.ControllerVersion{Assumed: ver, Exact: true}})
		if err != nil {
			t.Fatal(err)
		}
		for a, rests := range map[Action]bool{Promote: true, PromoteFull: true, Wait: false, Abort: false, Undo: false} {
			o, _ := p.Option(a)
			const stays = "if checkout-web-5c6d7e8f9's 1 missing pod never turns Ready, the active Service stays on checkout-web-"
			if strings.HasPrefix(o.Effect.IfNeverReady, stays) != rests {
				t.Errorf("%s %s: if never Ready %q (effect %s)", ver, a, o.Effect.IfNeverReady, o.Effect.Summary)
			}
			if rests && !strings.HasSuffix(o.Effect.IfNeverReady, ": it switches to checkout-web-5c6d7e8f9 only once all of its pods are available") {
				t.Errorf("%s %s: %q", ver, a, o.Effect.IfNeverReady)
			}
			if _, ok := citedKey(o.Cites, "bg.active-gate"); rests && !ok {
				t.Errorf("%s %s says where the active Service stays without citing its gate: %v", ver, a, o.Cites)
			}
		}
	}
}

// The lab (v1.7.2 and v1.10.2): paused before promotion with one of the two
// preview pods hung, a promote left the Rollout Progressing without its
// pause, and once the pod was replaced it paused again — the promotion was
// lost. escape says so, and that promote --full does not wait for the
// pause (only for the pods, which it says too).
func TestBlueGreenPromoteLostWhilePreviewShort(t *testing.T) {
	for file, ver := range map[string]upstream.Version{exampletest.LabBlueGreenPreviewShort: "v1.10.2", exampletest.LabBlueGreenPreviewShort17: "v1.7.2"} {
		p, err := Build(Input{View: exampletest.View(t, file), Controller: model.ControllerVersion{Assumed: ver, Exact: true}})
		if err != nil {
			t.Fatal(err)
		}
		pr, _ := p.Option(Promote)
		if pr.Verdict != NoEffect || !strings.HasPrefix(pr.Why, "a promotion now is lost: app-") || !strings.Contains(pr.Why, " has 1 of its 2 preview pods available") {
			t.Errorf("%s promote: %s %s", ver, pr.Verdict, pr.Why)
		}
		if _, ok := citedKey(pr.Cites, "pa.no-conditions-no-controller-pause"); !ok {
			t.Errorf("%s promote does not cite the dropped controllerPause: %v", ver, pr.Cites)
		}
		pf, _ := p.Option(PromoteFull)
		if pf.Verdict != Safe || pf.Effect.Phase != "Healthy" || !strings.Contains(pf.Effect.IfNeverReady, "only once all of its pods are available") {
			t.Errorf("%s promote --full: %s, ends %s, if never ready %q", ver, pf.Verdict, pf.Effect.Phase, pf.Effect.IfNeverReady)
		}
		if w, _ := p.Option(Wait); w.Verdict != Safe || p.Recommended != Wait {
			t.Errorf("%s: wait %s, recommended %s", ver, w.Verdict, p.Recommended)
		}
	}
}
