package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	k8stesting "k8s.io/client-go/testing"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/gather"
)

// okTarget is a cluster of its own: the example and copies of it, each
// Rollout with a UID no other cluster has, as in real clusters.
func okTarget(t *testing.T, name string, copies int) Target {
	dc := exampleCluster(t)
	addCopies(t, dc, copies)
	list, err := dc.Resource(gather.GVRRollout).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ro := range list.Items {
		ro.SetUID(types.UID(name + "/" + ro.GetNamespace() + "/" + ro.GetName()))
		if err := dc.Tracker().Update(gather.GVRRollout, &ro, ro.GetNamespace()); err != nil {
			t.Fatal(err)
		}
	}
	return contextOf(name, dc)
}

// contextOf is a context named name that reads cluster dc.
func contextOf(name string, dc dynamic.Interface) Target {
	return Target{Context: name, Connect: func(context.Context) (dynamic.Interface, gather.FleetOptions, error) {
		return dc, gather.FleetOptions{Context: name, Server: "https://" + name}, nil
	}}
}

// One cluster reached through two contexts (an alias with other
// credentials, a context for one namespace) is listed once, under the
// context that read the most; the others say where their Rollouts are.
// A context marked as an alias of another is not read at all.
func TestScanClustersListsACollisionOnce(t *testing.T) {
	prod := okTarget(t, "prod", 3)
	dc, _, err := prod.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Through a shared proxy another cluster may have prod's URL: only the
	// UIDs say which Rollouts are the same.
	other := okTarget(t, "other", 1)
	admin := contextOf("admin", dc)
	// team-01 holds one of prod's copies.
	team := Target{Context: "team", Connect: func(context.Context) (dynamic.Interface, gather.FleetOptions, error) {
		return dc, gather.FleetOptions{Context: "team", Namespace: "team-01", Server: "https://prod"}, nil
	}}
	alias := Target{Context: "alias", SameAs: "admin", Connect: func(context.Context) (dynamic.Interface, gather.FleetOptions, error) {
		t.Error("an alias was read")
		return nil, gather.FleetOptions{}, errors.New("read")
	}}
	var done atomic.Int32
	rep := ScanClusters(context.Background(), []Target{team, admin, alias, other, prod},
		MultiOptions{Concurrency: 3, Done: func(Cluster, []string) { done.Add(1) }})
	if done.Load() != 5 {
		t.Errorf("Done called %d times, want 5", done.Load())
	}
	if len(rep.Rows) != 4+2 {
		t.Fatalf("%d rows, want prod's 4 and other's 2", len(rep.Rows))
	}
	seen := map[string]string{}
	for _, r := range rep.Rows {
		if c, dup := seen[r.Namespace+"/"+r.Name]; dup && c != "other" && r.Cluster != "other" {
			t.Errorf("%s/%s listed under %s and %s", r.Namespace, r.Name, c, r.Cluster)
		}
		seen[r.Namespace+"/"+r.Name] = r.Cluster
		if r.Cluster != "admin" && r.Cluster != "other" {
			t.Errorf("row under %s, want admin (the first of the two that read all 4) or other", r.Cluster)
		}
	}
	byName := map[string]Cluster{}
	for _, c := range rep.Clusters {
		byName[c.Context] = c
	}
	for name, want := range map[string]Cluster{
		"team":  {Rollouts: 1, SameAs: "admin", ListedElsewhere: 1},
		"admin": {Rollouts: 4},
		"alias": {SameAs: "admin", NotReadAgain: true},
		"other": {Rollouts: 2},
		"prod":  {Rollouts: 4, SameAs: "admin", ListedElsewhere: 4},
	} {
		c := byName[name]
		if c.Rollouts != want.Rollouts || c.SameAs != want.SameAs || c.ListedElsewhere != want.ListedElsewhere || c.NotReadAgain != want.NotReadAgain || c.Error != "" {
			t.Errorf("%s: %+v, want %+v", name, c, want)
		}
	}
	if len(rep.Unread()) != 0 {
		t.Errorf("unread: %v", rep.Unread())
	}
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
	// One whose error says what it waited for is not told the timeout
	// again.
	frozen := Target{Context: "frozen", Connect: func(ctx context.Context) (dynamic.Interface, gather.FleetOptions, error) {
		<-ctx.Done()
		return nil, gather.FleetOptions{}, errors.New("the API server at https://10.0.0.8 (context frozen) did not answer within 300ms: check …")
	}}
	var done atomic.Int32
	start := time.Now()
	rep := ScanClusters(context.Background(), []Target{okTarget(t, "b-prod", 3), hung, refused, okTarget(t, "a-prod", 0), frozen},
		MultiOptions{Concurrency: 2, Timeout: 300 * time.Millisecond, Done: func(Cluster, []string) { done.Add(1) }})
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the scan took %s: the hung cluster was not bounded", took)
	}
	if done.Load() != 5 {
		t.Errorf("Done called %d times, want 5", done.Load())
	}
	byName := map[string]Cluster{}
	for _, c := range rep.Clusters {
		byName[c.Context] = c
	}
	if c := byName["hung"]; !strings.Contains(c.Error, "not read within 300ms") || !c.Retryable {
		t.Errorf("hung: %+v", c)
	}
	if c := byName["frozen"]; !strings.HasPrefix(c.Error, "the API server at https://10.0.0.8 (context frozen) did not answer within 300ms") || !c.Retryable {
		t.Errorf("frozen: %+v", c)
	}
	if c := byName["refused"]; c.Error != "the server has asked for the client to provide credentials" || c.Retryable {
		t.Errorf("refused: %+v", c)
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
	if rep.Worst() == 0 || len(rep.Unread()) != 3 || rep.Interrupted {
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
	if err := json.Unmarshal(b2, &shape); err != nil || shape.Kind != "MultiClusterScan" || len(shape.Clusters) != 5 || shape.Rows[0]["cluster"] != "a-prod" || shape.Clusters[1]["error"] == nil {
		t.Errorf("JSON: %s", b2)
	}
}

// A cluster whose credential plugin failed without the terminal is
// listed for a login; read again after it, its section and Rollouts take
// the place of its error, ranked with the others, and a Rollout another
// context listed already stays there.
func TestScanClustersAgainAfterLogin(t *testing.T) {
	prod := okTarget(t, "prod", 1)
	dc, _, err := prod.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	failing := func(name string, e error) Target {
		return Target{Context: name, Connect: func(context.Context) (dynamic.Interface, gather.FleetOptions, error) {
			return nil, gather.FleetOptions{}, e
		}}
	}
	plugin := &gather.Error{Msg: `the credential plugin "sso" of context sso failed (exit code 1)`, Login: true}
	rep := ScanClusters(context.Background(), []Target{prod, failing("sso", plugin), failing("alias", plugin),
		failing("refused", &gather.Error{Msg: "rejected the credentials (401)"})}, MultiOptions{})
	if got := rep.PluginFailed(); !slices.Equal(got, []string{"sso", "alias"}) {
		t.Fatalf("plugin failed: %v, want [sso alias] (not the refused credential)", got)
	}
	again := ScanClusters(context.Background(), []Target{okTarget(t, "sso", 0), contextOf("alias", dc)}, MultiOptions{})
	rep.Again(again)
	if len(rep.Rows) != 2+1 || rep.Rows[0].Worst != "critical" {
		t.Fatalf("rows %+v, want prod's 2 and sso's 1, critical first", rep.Rows)
	}
	byName := map[string]Cluster{}
	for _, c := range rep.Clusters {
		byName[c.Context] = c
	}
	for name, want := range map[string]Cluster{
		"prod":  {Rollouts: 2},
		"sso":   {Rollouts: 1},
		"alias": {Rollouts: 2, SameAs: "prod", ListedElsewhere: 2},
	} {
		if c := byName[name]; c.Error != "" || c.Rollouts != want.Rollouts || c.SameAs != want.SameAs || c.ListedElsewhere != want.ListedElsewhere {
			t.Errorf("%s: %+v, want %+v", name, c, want)
		}
	}
	if got := rep.Unread(); !slices.Equal(got, []string{"refused"}) || len(rep.PluginFailed()) != 0 || rep.Clusters[1].Context != "sso" {
		t.Errorf("unread %v, plugin failed %v, order %+v", got, rep.PluginFailed(), rep.Clusters)
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
	experiment := func(e v1alpha1.RolloutExperimentStep) *v1alpha1.Rollout {
		ro := &v1alpha1.Rollout{}
		ro.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{Steps: []v1alpha1.CanaryStep{{SetWeight: new(int32)}, {Experiment: &e}}}
		ro.Status.CurrentStepIndex = idx(1)
		return ro
	}
	for name, tc := range map[string]struct {
		ro   *v1alpha1.Rollout
		want string
	}{
		"indefinite pause step": {canary(&v1alpha1.RolloutPause{}, v1alpha1.PauseReasonCanaryPauseStep), "promote: pause step 1"},
		"timed pause step":      {canary(&v1alpha1.RolloutPause{Duration: &dur}, v1alpha1.PauseReasonCanaryPauseStep), ""},
		"inconclusive":          {canary(nil, v1alpha1.PauseReasonInconclusiveAnalysis), "Inconclusive"},
		"blue-green manual":     {bg(&no, 0), "blue-green waits"},
		"blue-green auto after": {bg(nil, 60), ""},
		// The official plugin has no resume verb: promote clears spec.paused.
		"spec.paused":                  {specPaused, "promote: spec.paused is set (a manual pause; plain kubectl argo rollouts promote clears it)"},
		"inconclusive experiment":      {canary(nil, v1alpha1.PauseReasonInconclusiveExperiment), "promote or abort: an Experiment was Inconclusive"},
		"experiment without an end":    {experiment(v1alpha1.RolloutExperimentStep{}), "promote: experiment step 1 has no duration and no analysis required for completion"},
		"experiment with a duration":   {experiment(v1alpha1.RolloutExperimentStep{Duration: "1h"}), ""},
		"experiment ended by analysis": {experiment(v1alpha1.RolloutExperimentStep{Analyses: []v1alpha1.RolloutExperimentStepAnalysisTemplateRef{{Name: "a", RequiredForCompletion: true}}}), ""},
		"aborted":                      {aborted, ""},
	} {
		got := waitingFor(tc.ro)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
}

// With more clusters than are read at once, every cluster is reached
// first: the ones that cannot be (their attempts to connect go
// unanswered) are reported without taking a turn, so the reachable ones
// are read while they are still being tried. Were they given turns, the
// unreachable ones would hold both and nothing would be read until they
// gave up.
func TestUnreachableClustersTakeNoTurn(t *testing.T) {
	release := make(chan struct{}) // the unreachable clusters give up
	dead := func(name string) Target {
		return Target{Context: name,
			Reach: func(ctx context.Context) error {
				select {
				case <-release:
					return errors.New("cannot reach the API server at https://" + name + ": nothing answered the attempt to connect")
				case <-ctx.Done():
					return ctx.Err()
				}
			},
			Connect: func(context.Context) (dynamic.Interface, gather.FleetOptions, error) {
				t.Errorf("%s was read after it could not be reached", name)
				return nil, gather.FleetOptions{}, errors.New("read")
			}}
	}
	var reached atomic.Int32
	live := func(name string) Target {
		c := okTarget(t, name, 0)
		c.Reach = func(context.Context) error { reached.Add(1); return nil }
		return c
	}
	targets := []Target{dead("gone-1"), dead("gone-2"), live("eu"), dead("gone-3"), live("us"), live("ap")}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	readLive := 0
	rep := ScanClusters(ctx, targets, MultiOptions{Concurrency: 2, Done: func(c Cluster, _ []string) {
		if c.Error == "" {
			if readLive++; readLive == 3 {
				close(release)
			}
		}
	}})
	if ctx.Err() != nil {
		t.Fatalf("the scan waited for the unreachable clusters before reading the others: %+v", rep.Clusters)
	}
	for _, c := range rep.Clusters {
		gone := strings.HasPrefix(c.Context, "gone")
		if gone != strings.Contains(c.Error, "nothing answered the attempt to connect") || !gone && c.Rollouts == 0 {
			t.Errorf("%s: %+v", c.Context, c)
		}
	}
	if reached.Load() != 3 {
		t.Errorf("the live clusters were reached %d times, want 3", reached.Load())
	}
	// As many clusters as turns: none is reached first.
	reached.Store(0)
	ScanClusters(context.Background(), []Target{live("eu"), live("us")}, MultiOptions{Concurrency: 2})
	if reached.Load() != 0 {
		t.Errorf("reached %d clusters that had a turn at once", reached.Load())
	}
}

// A cluster without Argo Rollouts (--all-contexts takes them all) was
// read: it has no Rollouts, says why, and is not a cluster that could not
// be read.
func TestClusterWithoutArgoRollouts(t *testing.T) {
	dc := exampleCluster(t)
	dc.PrependReactor("list", "rollouts", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(schema.GroupResource{Group: "argoproj.io", Resource: "rollouts"}, "")
	})
	rep := ScanClusters(context.Background(), []Target{okTarget(t, "prod", 0), contextOf("platform", dc)}, MultiOptions{})
	c := rep.Clusters[1]
	if c.Context != "platform" || !c.NotInstalled || c.Error != "" || c.Rollouts != 0 || len(rep.Unread()) != 0 || len(rep.Rows) != 1 {
		t.Errorf("%+v, unread %v, %d rows", c, rep.Unread(), len(rep.Rows))
	}
	b, _ := json.Marshal(rep)
	if !strings.Contains(string(b), `"context":"platform","server":"https://platform","rollouts":0,`) || !strings.Contains(string(b), `"notInstalled":true}`) || strings.Contains(string(b), `"error"`) {
		t.Errorf("JSON: %s", b)
	}
}

// A cluster whose controller has no available pod: its Rollouts carry
// RD166 and the cluster's section says the controller is not running.
func TestClusterControllerNotRunning(t *testing.T) {
	dc := exampleCluster(t)
	d, err := dc.Resource(gather.GVRDeployment).Namespace("argo-rollouts").Get(context.Background(), "argo-rollouts", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(d.Object, int64(0), "status", "availableReplicas"); err != nil {
		t.Fatal(err)
	}
	if err := dc.Tracker().Update(gather.GVRDeployment, d, "argo-rollouts"); err != nil {
		t.Fatal(err)
	}
	rep := ScanClusters(context.Background(), []Target{contextOf("down", dc), okTarget(t, "up", 0)}, MultiOptions{Concurrency: 2})
	for _, c := range rep.Clusters {
		if len(c.Controllers) != 1 || c.Controllers[0].NotRunning != (c.Context == "down") {
			t.Errorf("%s: controllers %+v", c.Context, c.Controllers)
		}
	}
	for _, r := range rep.Rows {
		if slices.Contains(r.FindingIDs, "RD166") != (r.Cluster == "down") {
			t.Errorf("%s: findings %v", r.Cluster, r.FindingIDs)
		}
	}
}
