package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/gather"
)

func okTarget(t *testing.T, name string, copies int) Target {
	dc := exampleCluster(t)
	addCopies(t, dc, copies)
	return Target{Context: name, Connect: func(context.Context) (dynamic.Interface, gather.FleetOptions, error) {
		return dc, gather.FleetOptions{Context: name, Server: "https://" + name}, nil
	}}
}

// One table across clusters: the riskiest Rollout of every cluster first,
// each row naming its cluster; a refused and a hung cluster are sections
// with their errors and hide nothing; the hung one is bounded by the
// timeout, so the scan takes about the slowest bound, not the sum.
func TestScanClustersPartialFailure(t *testing.T) {
	hung := Target{Context: "hung", Connect: func(ctx context.Context) (dynamic.Interface, gather.FleetOptions, error) {
		<-ctx.Done()
		return nil, gather.FleetOptions{}, errors.New("dial tcp 10.0.0.9:6443: i/o timeout")
	}}
	refused := Target{Context: "refused", Connect: func(context.Context) (dynamic.Interface, gather.FleetOptions, error) {
		return nil, gather.FleetOptions{}, errors.New("the server has asked for the client to provide credentials\nmore detail")
	}}
	var done atomic.Int32
	start := time.Now()
	rep := ScanClusters(context.Background(), []Target{okTarget(t, "b-prod", 3), hung, refused, okTarget(t, "a-prod", 0)},
		MultiOptions{Concurrency: 2, Timeout: 300 * time.Millisecond, Done: func(Cluster, []string) { done.Add(1) }})
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the scan took %s: the hung cluster was not bounded", took)
	}
	if done.Load() != 4 {
		t.Errorf("Done called %d times, want 4", done.Load())
	}
	byName := map[string]Cluster{}
	for _, c := range rep.Clusters {
		byName[c.Context] = c
	}
	if c := byName["hung"]; !strings.Contains(c.Error, "not read within 300ms") {
		t.Errorf("hung: %+v", c)
	}
	if c := byName["refused"]; c.Error != "the server has asked for the client to provide credentials" {
		t.Errorf("refused: %q", c.Error)
	}
	a, b := byName["a-prod"], byName["b-prod"]
	if a.Error != "" || a.Rollouts != 1 || b.Rollouts != 4 || a.Server != "https://a-prod" || a.ByStrategy["canary"] != 1 || len(a.Controllers) == 0 {
		t.Fatalf("clusters: %+v / %+v", a, b)
	}
	if len(rep.Rows) != 5 {
		t.Fatalf("%d rows, want 5", len(rep.Rows))
	}
	// Both incident Rollouts are critical: they lead, a-prod's first (the
	// cluster breaks the tie); the healthy copies follow.
	if rep.Rows[0].Cluster != "a-prod" || rep.Rows[1].Cluster != "b-prod" || rep.Rows[0].Worst != "critical" || rep.Rows[1].Name != "checkout-api" {
		t.Errorf("order: %+v, %+v", rep.Rows[0], rep.Rows[1])
	}
	if rep.Worst() == 0 || len(rep.Unread()) != 2 || rep.Interrupted {
		t.Errorf("worst %v, unread %v, interrupted %v", rep.Worst(), rep.Unread(), rep.Interrupted)
	}
	b2, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var shape struct {
		Kind     string
		Clusters []map[string]interface{}
		Rows     []map[string]interface{}
	}
	if err := json.Unmarshal(b2, &shape); err != nil || shape.Kind != "MultiClusterScan" || len(shape.Clusters) != 4 || shape.Rows[0]["cluster"] != "a-prod" || shape.Clusters[1]["error"] == nil {
		t.Errorf("JSON: %s", b2)
	}
}

// Ctrl-C: clusters still outstanding say they were not read, and the
// report is marked interrupted; what was read is kept.
func TestScanClustersInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	slow := Target{Context: "slow", Connect: func(ctx context.Context) (dynamic.Interface, gather.FleetOptions, error) {
		cancel()
		<-ctx.Done()
		return nil, gather.FleetOptions{}, ctx.Err()
	}}
	rep := ScanClusters(ctx, []Target{okTarget(t, "fast", 0), slow}, MultiOptions{Concurrency: 1})
	if !rep.Interrupted {
		t.Fatal("not interrupted")
	}
	for _, c := range rep.Clusters {
		if c.Context == "slow" && !strings.HasPrefix(c.Error, "not read: interrupted") {
			t.Errorf("slow: %q", c.Error)
		}
	}
}

func TestWaitingForAPerson(t *testing.T) {
	idx := func(i int32) *int32 { return &i }
	dur := intstr.FromString("30s")
	no := false
	canary := func(pause *v1alpha1.RolloutPause, reason v1alpha1.PauseReason) *v1alpha1.Rollout {
		ro := &v1alpha1.Rollout{}
		ro.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{Steps: []v1alpha1.CanaryStep{{SetWeight: new(int32)}, {Pause: pause}}}
		ro.Status.CurrentStepIndex = idx(1)
		ro.Status.PauseConditions = []v1alpha1.PauseCondition{{Reason: reason}}
		return ro
	}
	bg := func(auto *bool, secs int32) *v1alpha1.Rollout {
		ro := &v1alpha1.Rollout{}
		ro.Spec.Strategy.BlueGreen = &v1alpha1.BlueGreenStrategy{AutoPromotionEnabled: auto, AutoPromotionSeconds: secs}
		ro.Status.PauseConditions = []v1alpha1.PauseCondition{{Reason: v1alpha1.PauseReasonBlueGreenPause}}
		return ro
	}
	aborted := canary(&v1alpha1.RolloutPause{}, v1alpha1.PauseReasonCanaryPauseStep)
	aborted.Status.Abort = true
	specPaused := &v1alpha1.Rollout{}
	specPaused.Spec.Paused = true
	for name, tc := range map[string]struct {
		ro   *v1alpha1.Rollout
		want string
	}{
		"indefinite pause step": {canary(&v1alpha1.RolloutPause{}, v1alpha1.PauseReasonCanaryPauseStep), "promote: pause step 1"},
		"timed pause step":      {canary(&v1alpha1.RolloutPause{Duration: &dur}, v1alpha1.PauseReasonCanaryPauseStep), ""},
		"inconclusive":          {canary(nil, v1alpha1.PauseReasonInconclusiveAnalysis), "Inconclusive"},
		"blue-green manual":     {bg(&no, 0), "blue-green waits"},
		"blue-green auto after": {bg(nil, 60), ""},
		"spec.paused":           {specPaused, "spec.paused"},
		"aborted":               {aborted, ""},
	} {
		got := waitingFor(tc.ro)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
}
