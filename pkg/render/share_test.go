package render

import (
	"slices"
	"strings"
	"testing"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/escape"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/fleet"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/router"
)

// A canary without trafficRouting: its share of the ready pods, in the
// diagnosis and in the scan's weight column.
func TestPodShareViews(t *testing.T) {
	p := &diagnose.PodShare{CanaryReady: 1, OtherReady: 3, Percent: 25, SetWeight: 25, StepCanary: 1, StepStable: 3,
		CanarySpec: 1, StableSpec: 3, NextCanary: 1, NextStable: 3, MaxSurge: 1, MaxUnavailable: 0}
	var b strings.Builder
	humanPodShare(&b, &diagnose.Report{PodShare: p}, NewStyles(&b, false))
	if !strings.Contains(b.String(), "  canary 1 of 4 ready pods ← 25% of requests   (setWeight 25%: the controller sizes canary 1, stable 3 → 25%)\n") ||
		strings.Contains(b.String(), "next pass") {
		t.Errorf("diagnose:\n%s", b.String())
	}
	// On the way to a step's sizes: the next pass's move.
	moving := *p
	moving.SetWeight, moving.StepCanary, moving.StepStable, moving.NextStable = 70, 4, 2, 2
	b.Reset()
	humanPodShare(&b, &diagnose.Report{PodShare: &moving}, NewStyles(&b, false))
	if !strings.Contains(b.String(), "(setWeight 70%: the controller sizes canary 4, stable 2 → 66%)") ||
		!strings.Contains(b.String(), "  next pass: stable 3 → 2   (one ReplicaSet a pass, the stable first; maxSurge 1, maxUnavailable 0)\n") {
		t.Errorf("diagnose on the way:\n%s", b.String())
	}
	b.Reset()
	named := *p
	named.StableService, named.CanaryService = "web-stable", "web-canary"
	humanPodShare(&b, &diagnose.Report{PodShare: &named}, NewStyles(&b, false))
	if !strings.Contains(b.String(), "  but the controller points stable Service web-stable only the stable's, canary Service web-canary only the canary's pods: requests sent to those go by Service, not by pod count\n") {
		t.Errorf("diagnose with the Rollout's Services:\n%s", b.String())
	}
	if cells := rowCells(fleet.Row{PodShare: p}); !slices.Contains(cells, "pods 1/4 (25%)") {
		t.Errorf("scan row %q", cells)
	}
	if cells := rowCells(fleet.Row{PodShare: p, ReplicaSetsUnread: true}); slices.Contains(cells, "pods 1/4 (25%)") {
		t.Errorf("a row without its ReplicaSets shows a pod share: %q", cells)
	}
}

// A cluster whose controller does not run says so in its line.
func TestMultiScanControllerNotRunning(t *testing.T) {
	rep := &fleet.MultiReport{Clusters: []fleet.Cluster{{Context: "prod", Rollouts: 2,
		Controllers: []fleet.ControllerSeen{{Version: "v1.9.3", Source: "image-tag", From: "argo-rollouts/argo-rollouts", Rollouts: 2, NotRunning: true}}}}}
	var b strings.Builder
	if err := MultiScan(&b, rep, NewStyles(&b, false)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "controller v1.9.3 (image-tag argo-rollouts/argo-rollouts; 2) NOT RUNNING (RD166)") {
		t.Errorf("cluster line:\n%s", b.String())
	}
}

// The plan's header says when the controller does not run.
func TestPlanControllerNotRunningLine(t *testing.T) {
	var b strings.Builder
	if err := Plan(&b, &escape.Plan{Namespace: "shop", Name: "app", ControllerNotRunning: true}, NewStyles(&b, false)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "the controller that reconciles this Rollout is not running (RD166): nothing below happens, and no way out takes effect, until it does") {
		t.Errorf("plan:\n%s", b.String())
	}
}

// The incident card's traffic line: a header route to the canary beside
// the weights, and a basic canary's pod share.
func TestCardTrafficManagedRouteAndPodShare(t *testing.T) {
	rep := &diagnose.Report{Traffic: &diagnose.Traffic{CanaryWeight: 10, StableWeight: 90, MaxWeight: 100,
		Objects: &router.State{ManagedRoutes: []router.ManagedRoute{{Name: "by-header", CanaryWeight: 100, RouteTotal: 100}, {Name: "mirror", Mirror: true, CanaryWeight: 10}}}}}
	if got := cardTraffic(rep); !strings.HasSuffix(got, " · header route `by-header` → canary, whatever the weight") || strings.Contains(got, "mirror") {
		t.Errorf("card traffic %q", got)
	}
	rep = &diagnose.Report{PodShare: &diagnose.PodShare{CanaryReady: 1, OtherReady: 3, Percent: 25}}
	if got := cardTraffic(rep); got != "canary **25%** of ready pods (1/4; no trafficRouting)" {
		t.Errorf("card traffic %q", got)
	}
}

// An older revision's ready pods and the next pass's move for them, or why
// nothing moves.
func TestPodShareOlderRevisionView(t *testing.T) {
	p := &diagnose.PodShare{CanaryReady: 0, OtherReady: 5, OlderReady: 1, Percent: 0, SetWeight: 30, StepCanary: 2, StepStable: 4,
		CanarySpec: 1, StableSpec: 4, NextCanary: 1, NextStable: 4, MaxSurge: 1, MaxUnavailable: 0,
		Waits: "nothing scales until another pod is available: 6 pods exist and maxSurge 1 allows no more; 5 are available and maxUnavailable 0 allows no fewer"}
	var b strings.Builder
	humanPodShare(&b, &diagnose.Report{PodShare: p}, NewStyles(&b, false))
	if !strings.Contains(b.String(), "  older revisions 1 of 5 ready pods ← 20% of requests (replaced mid-rollout: the controller scales them down before it scales the canary or stable down)\n") ||
		!strings.Contains(b.String(), "  next pass: nothing scales until another pod is available: 6 pods exist and maxSurge 1 allows no more; 5 are available and maxUnavailable 0 allows no fewer\n") {
		t.Errorf("diagnose, stalled:\n%s", b.String())
	}
	moving := *p
	moving.Waits, moving.OlderMoves = "", []diagnose.RSMove{{Name: "app-5998b8ffff", Revision: "2", From: 1, To: 0}}
	b.Reset()
	humanPodShare(&b, &diagnose.Report{PodShare: &moving}, NewStyles(&b, false))
	if !strings.Contains(b.String(), "  next pass: app-5998b8ffff (rev 2) 1 → 0   (one ReplicaSet a pass, the stable first; maxSurge 1, maxUnavailable 0)\n") {
		t.Errorf("diagnose, the older revision going down:\n%s", b.String())
	}
}

// The plan says once where scaling stops if the canary's pods never turn
// Ready, and for each way out that stops there too, in a few words.
func TestPlanIfNeverReady(t *testing.T) {
	never := "if app-c's 1 missing pod never turns Ready, scaling stops at canary/stable/older revisions 1/4/1: maxSurge 1 and maxUnavailable 0 leave no room"
	p := &escape.Plan{Namespace: "shop", Name: "app", Now: escape.Effect{Summary: "now", IfNeverReady: never}, Options: []escape.Option{
		{Action: escape.Abort, Verdict: escape.SafeWithCost, Why: "why", Effect: escape.Effect{Summary: "abort", IfNeverReady: never}},
		{Action: escape.Undo, Verdict: escape.Safe, Why: "undo"},
		{Action: escape.Wait, Verdict: escape.Safe, Why: "wait", Effect: escape.Effect{Summary: "now", IfNeverReady: never}},
	}}
	var b strings.Builder
	if err := Plan(&b, p, NewStyles(&b, false)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Count(out, never) != 1 || strings.Count(out, "if app-c's 1 missing pod never turns Ready, it stops where doing nothing does (above)") != 1 {
		t.Errorf("plan:\n%s", out)
	}
}

// The hung-pod note and a pending restart are shown under "if nothing is
// done" — the restart as a warning once it cannot go on, saying no way out
// ends it — and in the incident card, the delete first.
func TestPlanHungPodAndRestart(t *testing.T) {
	never := "if app-s's 1 missing pod never turns Ready, the weight stays at 20% on app-c"
	p := &escape.Plan{Namespace: "shop", Name: "app", Now: escape.Effect{Summary: "now"},
		Hung:    &escape.HungNote{Pods: []string{"app-s-1"}, Text: "app-s-1 has not been Ready since …", Fix: "delete the hung pod (`kubectl delete pod -n shop app-s-1`)"},
		Restart: &escape.RestartNote{Rule: "RD173", Stalled: true, Text: "the restart requested at … cannot go on", Fix: "Delete it yourself"},
		Options: []escape.Option{
			{Action: escape.Abort, Verdict: escape.SafeWithCost, Why: "why", Effect: escape.Effect{Summary: "abort", IfNeverReady: never}},
			{Action: escape.Wait, Verdict: escape.Safe, Why: "wait", Effect: escape.Effect{Summary: "now"}},
		}, Recommended: escape.Wait, Reason: "first delete …"}
	var b strings.Builder
	if err := Plan(&b, p, NewStyles(&b, false)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "  app-s-1 has not been Ready since …\n") || !strings.Contains(out, "  restart: RD173 the restart requested at … cannot go on; no way out below ends it\n") ||
		!strings.Contains(out, "       "+never+"\n") {
		t.Errorf("plan:\n%s", out)
	}
	var c strings.Builder
	cardWayOut(&c, &diagnose.Report{}, p, CardOptions{})
	if card := c.String(); !strings.HasPrefix(card, "- first: delete the hung pod (`kubectl delete pod -n shop app-s-1`)") || !strings.Contains(card, "- restart: the restart requested at … cannot go on — Delete it yourself") {
		t.Errorf("card:\n%s", card)
	}
}
