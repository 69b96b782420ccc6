package diagnose

import (
	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"

	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules/rulestest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// example is the rollback-incident snapshot (examples/incident-rollback-window.yaml)
// as a case changes it before diagnosing.
type example struct {
	header *snapshot.Header
	cv     model.ControllerVersion
	objs   []*unstructured.Unstructured
}

// diagnoseExample diagnoses the example, letting a case edit the Rollout first.
func diagnoseExample(t *testing.T, ver upstream.Version, edit func(ro *unstructured.Unstructured)) *Report {
	t.Helper()
	return diagnoseEdited(t, ver, edit, nil)
}

// diagnoseEdited diagnoses the example after edit (on the Rollout) and more
// (on the header and the controller version).
func diagnoseEdited(t *testing.T, ver upstream.Version, edit func(ro *unstructured.Unstructured), more func(*example)) *Report {
	t.Helper()
	objs, hdr := exampletest.Decode(t, exampletest.Incident)
	editRollout(objs, edit)
	ex := &example{header: hdr, cv: model.ControllerVersion{Assumed: ver, Source: model.SourceFlag, Exact: true}, objs: objs}
	if more != nil {
		more(ex)
	}
	return Run(exampletest.ViewOf(t, snapshot.New(*ex.header, ex.objs)), ex.cv, Options{})
}

// editRollout applies edit (when set) to the Rollout among objs.
func editRollout(objs []*unstructured.Unstructured, edit func(*unstructured.Unstructured)) {
	for _, o := range objs {
		if o.GetKind() == "Rollout" && edit != nil {
			edit(o)
		}
	}
}

// findingOf is r's (last) finding id, or nil.
func findingOf(r *Report, id string) *rules.Finding {
	var f *rules.Finding
	for i := range r.Findings {
		if r.Findings[i].ID == id {
			f = &r.Findings[i]
		}
	}
	return f
}

func has(r *Report, id string) bool {
	for _, f := range r.Findings {
		if f.ID == id {
			return true
		}
	}
	return false
}

func set(path []string, v interface{}) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		if err := unstructured.SetNestedField(u.Object, v, path...); err != nil {
			panic(err)
		}
	}
}

func remove(path ...string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) { unstructured.RemoveNestedField(u.Object, path...) }
}

func both(edits ...func(*unstructured.Unstructured)) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		for _, e := range edits {
			e(u)
		}
	}
}

// rolloutCase is one row of the Rollout rules' table: a state made from the
// rollback-incident example and whether rule id fires on it (with says, the
// finding's exact message, when set).
type rolloutCase struct {
	name  string
	id    string
	edit  func(*unstructured.Unstructured) // on the Rollout
	more  func(*example)                   // on the header or the controller version
	fires bool
	says  string
}

var canaryPath = []string{"spec", "strategy", "canary"}

func canaryField(extra ...string) []string {
	return append(append([]string{}, canaryPath...), extra...)
}

// vsWeights sets the example's VirtualService route to stable/canary.
func vsWeights(stable, canary int64) func(*example) {
	return func(e *example) {
		for _, o := range e.objs {
			if o.GetKind() != "VirtualService" {
				continue
			}
			routes, _, _ := unstructured.NestedSlice(o.Object, "spec", "http")
			for _, r := range routes {
				dests, _ := r.(map[string]interface{})["route"].([]interface{})
				for _, d := range dests {
					dm := d.(map[string]interface{})
					host, _, _ := unstructured.NestedString(dm, "destination", "host")
					if strings.Contains(host, "canary") {
						dm["weight"] = canary
					} else {
						dm["weight"] = stable
					}
				}
			}
			_ = unstructured.SetNestedSlice(o.Object, routes, "spec", "http")
		}
	}
}

// progressing replaces the Progressing condition.
func progressing(reason, message string) func(*unstructured.Unstructured) {
	return set([]string{"status", "conditions"}, []interface{}{
		map[string]interface{}{"type": "Progressing", "status": "False", "reason": reason, "message": message,
			"lastTransitionTime": "2026-08-11T03:02:30Z", "lastUpdateTime": "2026-08-11T03:12:30Z"},
	})
}

// rolloutCases is the Rollout rules' table: every rule of the area has a row
// that fires and one that does not (TestEveryRuleHasCases).
var rolloutCases = []rolloutCase{
	{name: "incident: over capacity", id: "RD101", fires: true},
	{name: "canary weight 5 on 2 pods", id: "RD101", edit: set([]string{"status", "canary", "weights", "canary", "weight"}, int64(5)), more: vsWeights(95, 5)},
	// The router, not the status, says what the canary carries.
	{name: "status 5, the VirtualService at 100", id: "RD101", edit: set([]string{"status", "canary", "weights", "canary", "weight"}, int64(5)), fires: true,
		says: "100% of traffic on 2 of 20 pods: canary checkout-api-5f6c8d7b9a has 2 available, the weight needs 20"},
	{name: "incident: 100% already set", id: "RD102"},
	{name: "weight 5 now, 100 on the next pass", id: "RD102", edit: set([]string{"status", "canary", "weights", "canary", "weight"}, int64(5)), fires: true},
	{name: "incident: within window", id: "RD103", fires: true},
	{name: "no rollbackWindow", id: "RD103", edit: remove("spec", "rollbackWindow")},
	{name: "not aborted", id: "RD104"},
	{name: "aborted", id: "RD104", edit: set([]string{"status", "abort"}, true), fires: true},
	{name: "progressing", id: "RD105"},
	{name: "progress deadline exceeded", id: "RD105", edit: progressing("ProgressDeadlineExceeded", `ReplicaSet "checkout-api-5f6c8d7b9a" has timed out progressing.`), fires: true,
		says: `progress deadline exceeded since 2026-08-11T03:02:30Z: ReplicaSet "checkout-api-5f6c8d7b9a" has timed out progressing. (clears by itself when progress resumes)`},
	{name: "paused", id: "RD106", edit: set([]string{"spec", "paused"}, true), fires: true},
	{name: "not paused", id: "RD106"},
	{name: "router agrees", id: "RD107"},
	{name: "router disagrees", id: "RD107", edit: set([]string{"status", "canary", "weights", "canary", "weight"}, int64(5)), fires: true},
	{name: "canary and stable Services: no subset gate", id: "RD108"},
	{name: "Istio subset-only with the canary 2/20 available", id: "RD108", edit: both(remove(canaryField("canaryService")...), remove(canaryField("stableService")...)), fires: true,
		says: `Istio subset-only mode: ReplicaSet checkout-api-5f6c8d7b9a is 2/20 available, so UpdateHash errors ("delaying destination rule switch") before the weight is written; the pass ends there`},
	{name: "stable 20 available for 40 replicas at step 0", id: "RD108", fires: true,
		edit: both(remove("spec", "rollbackWindow"), set([]string{"spec", "replicas"}, int64(40)), set([]string{"status", "currentStepIndex"}, int64(0))),
		says: "stable checkout-api-6d8f7c9b5d has 20 available, fewer than the 40 that 100% of traffic needs: the weight change is skipped silently"},
	{name: "version given exactly", id: "RD109"},
	{name: "version assumed", id: "RD109", more: func(e *example) { e.cv = model.ControllerVersion{Assumed: "v1.8.2", Source: model.SourceUnknown} }, fires: true,
		says: "controller version approximated as v1.8.2"},
	{name: "everything read", id: "RD110"},
	{name: "VirtualServices not readable", id: "RD110", more: func(e *example) {
		e.header.Gaps = []snapshot.Gap{{Resource: "virtualservices.networking.istio.io", Namespace: "shop", Reason: snapshot.GapForbidden, Message: "virtualservices.networking.istio.io is forbidden"}}
	}, fires: true, says: "could not read virtualservices.networking.istio.io in shop: Forbidden (virtualservices.networking.istio.io is forbidden)"},
	{name: "generation observed", id: "RD111"},
	{name: "generation 10 not yet observed", id: "RD111", edit: func(u *unstructured.Unstructured) { u.SetGeneration(10) }, fires: true,
		says: "the controller last observed generation 9, the spec is at generation 10; its next pass resets the status (index → 3)"},
	{name: "abort not acted on", id: "RD112", edit: both(set([]string{"status", "abort"}, true), remove("spec", "rollbackWindow")), fires: true},
	{name: "abort acted on", id: "RD112", edit: both(set([]string{"status", "abort"}, true), set([]string{"status", "phase"}, "Degraded"), remove("spec", "rollbackWindow"))},
	{name: "abort within the window (cleared by the controller)", id: "RD112", edit: set([]string{"status", "abort"}, true)},
	{name: "incident: final 100", id: "RD201", fires: true},
	{name: "fixed steps", id: "RD201", edit: set(canaryField("steps"), []interface{}{map[string]interface{}{"setWeight": int64(5)}, map[string]interface{}{"pause": map[string]interface{}{"duration": "10s"}}})},
	{name: "no rollbackWindow", id: "RD201", edit: remove("spec", "rollbackWindow")},
	{name: "fixed steps vs KEDA 360", id: "RD202", edit: set(canaryField("steps"), []interface{}{map[string]interface{}{"setWeight": int64(5)}}), fires: true},
	{name: "incident: last rung 100 (RD201's)", id: "RD202"},
	{name: "minPods 30 > replicas 20", id: "RD203", edit: set(canaryField("minPodsPerReplicaSet"), int64(30)), fires: true},
	{name: "minPods 2", id: "RD203"},
	{name: "dss", id: "RD204", edit: set(canaryField("dynamicStableScale"), true), fires: true},
	{name: "no dss", id: "RD204"},
	{name: "abort delay 0", id: "RD205", edit: set(canaryField("abortScaleDownDelaySeconds"), int64(0)), fires: true},
	{name: "abort delay 30", id: "RD205", edit: set(canaryField("abortScaleDownDelaySeconds"), int64(30))},
	{name: "rpt pods", id: "RD206", edit: set(canaryField("replicaProgressThreshold"), map[string]interface{}{"type": "Pods", "value": int64(2)}), fires: true},
	{name: "rpt percent", id: "RD206", edit: set(canaryField("replicaProgressThreshold"), map[string]interface{}{"type": "Percent", "value": int64(90)})},
	{name: "maxTrafficWeight with istio", id: "RD207", edit: set(canaryField("trafficRouting", "maxTrafficWeight"), int64(1000)), fires: true},
	{name: "no maxTrafficWeight", id: "RD207"},
	{name: "abort delay 1000 s", id: "RD208", edit: set(canaryField("abortScaleDownDelaySeconds"), int64(1000)), fires: true},
	{name: "abort delay 900 s", id: "RD208", edit: set(canaryField("abortScaleDownDelaySeconds"), int64(900))},
	{name: "a valid spec", id: "RD113"},
	// A rejected spec is not computed with: the final-100 rule stays quiet
	// on a Rollout the controller does not reconcile.
	{name: "incident shape with negative replicas", id: "RD201", edit: set([]string{"spec", "replicas"}, int64(-3))},
	{name: "negative replicas, setWeight 250, pause abc", id: "RD113", fires: true,
		edit: both(set([]string{"spec", "replicas"}, int64(-3)),
			set(canaryField("steps"), []interface{}{
				map[string]interface{}{"setWeight": int64(250)},
				map[string]interface{}{"pause": map[string]interface{}{"duration": "abc"}},
			})),
		says: `the controller rejects this spec (InvalidSpec) and will not scale, shift traffic or move steps until it is fixed: spec.replicas -3: must not be negative; spec.strategy.canary.steps[0].setWeight 250: must be between 0 and 100; spec.strategy.canary.steps[1].pause.duration "abc": is not a duration (a number of seconds, or 30s, 5m, 1h): the controller reads it as -1 and rejects it`},
	// The controller also validates what the Rollout references, which a
	// snapshot does not hold: its InvalidSpec condition is its word (the
	// lab's analysis-step-indefinite scenario wrote this one).
	{name: "InvalidSpec written by the controller", id: "RD113", fires: true,
		edit: set([]string{"status", "conditions"}, []interface{}{map[string]interface{}{"type": "InvalidSpec", "status": "True", "reason": "InvalidSpec",
			"message": `The Rollout "checkout-api" is invalid: spec.strategy.canary.steps[1].analysis.templates: Invalid value: "check": AnalysisTemplate check has metric success-rate which runs indefinitely. Invalid value for count: <nil>`}}),
		says: `the controller rejects this spec (InvalidSpec) and will not scale, shift traffic or move steps until it is fixed: status.conditions[InvalidSpec] "The Rollout \"checkout-api\" is invalid: spec.strategy.canary.steps[1].analysis.templates: Invalid value: \"check\": AnalysisTemplate check has metric success-rate which runs indefinitely. Invalid value for count: <nil>": the controller's own validation, which also checks the objects the Rollout references, rejects the spec`},
	{name: "InvalidSpec condition False", id: "RD113",
		edit: set([]string{"status", "conditions"}, []interface{}{map[string]interface{}{"type": "InvalidSpec", "status": "False", "reason": "InvalidSpec", "message": "old"}})},
	// The lab's controller (every version) on a Rollout whose VirtualService
	// does not exist: the spec alone looks valid, the condition says why not.
	{name: "the controller's InvalidSpec condition", id: "RD113", fires: true,
		edit: set([]string{"status", "conditions"}, []interface{}{map[string]interface{}{"type": "InvalidSpec", "status": "True", "reason": "InvalidSpec",
			"message": `The Rollout "app" is invalid: spec.strategy.canary.trafficRouting.istio.virtualService.name: Invalid value: "app": virtualservices.networking.istio.io "app" not found`}})},
	{name: "no spec at all", id: "RD113", fires: true, edit: remove("spec"),
		says: "the controller rejects this spec (InvalidSpec) and will not scale, shift traffic or move steps until it is fixed: spec.selector absent: is required (unless spec.workloadRef is set); spec.strategy absent: needs canary or blueGreen"},
}

// TestEveryRuleHasCases fails for a Rollout rule without a firing and a
// quiet case in rolloutCases.
func TestEveryRuleHasCases(t *testing.T) {
	var cases []rulestest.Case
	for _, c := range rolloutCases {
		cases = append(cases, rulestest.Case{ID: c.id, State: c.name, Fire: c.fires})
	}
	for _, c := range bgCases {
		cases = append(cases, rulestest.Case{ID: c.id, State: c.name, Fire: c.fires})
	}
	for _, c := range analysisCases {
		cases = append(cases, rulestest.Case{ID: c.id, State: c.name, Fire: c.fires})
	}
	for _, c := range bugCases {
		cases = append(cases, rulestest.Case{ID: c.id, State: c.name, Fire: len(c.fires) > 0})
	}
	for _, c := range staticAnalysisCases {
		cases = append(cases, rulestest.Case{ID: c.id, State: c.name, Fire: c.fires})
	}
	for _, c := range routerCases() {
		cases = append(cases, rulestest.Case{ID: c.id, State: c.name, Fire: c.fires})
	}
	for _, c := range append(workloadRefCases, workloadRefStaticCases...) {
		cases = append(cases, rulestest.Case{ID: c.id, State: c.name, Fire: c.fires})
	}
	for _, c := range stallCases {
		cases = append(cases, rulestest.Case{ID: "RD167", State: c.name, Fire: c.fires})
	}
	for _, c := range stableMissingCases {
		cases = append(cases, rulestest.Case{ID: "RD169", State: c.name, Fire: c.fires})
	}
	for _, c := range deadlineCases {
		cases = append(cases, rulestest.Case{ID: c.id, State: c.name, Fire: c.fires})
	}
	for _, c := range restartCases {
		cases = append(cases, rulestest.Case{ID: c.id, State: c.name, Fire: c.fires})
	}
	for _, c := range dssCases {
		cases = append(cases, rulestest.Case{ID: "RD175", State: c.name, Fire: c.fires})
	}
	for _, c := range stableLoadCases {
		cases = append(cases, rulestest.Case{ID: "RD178", State: c.name, Fire: c.fires})
	}
	for _, c := range refusedCases {
		cases = append(cases, rulestest.Case{ID: "RD185", State: c.name, Fire: c.fires})
	}
	for _, c := range pingPongCases {
		cases = append(cases, rulestest.Case{ID: "RD179", State: c.name, Fire: c.fires})
	}
	rulestest.Coverage(t, rules.AreaRollout, cases)
}

func TestRulesFireAndStayQuiet(t *testing.T) {
	for _, c := range rolloutCases {
		t.Run(c.id+"/"+c.name, func(t *testing.T) {
			r := diagnoseEdited(t, "v1.8.2", c.edit, c.more)
			if has(r, c.id) != c.fires {
				t.Fatalf("%s fires=%v, want %v; findings: %+v", c.id, has(r, c.id), c.fires, r.Findings)
			}
			for _, f := range r.Findings {
				rulestest.NoInternalRefs(t, f.ID+" message", f.Message)
			}
			if c.says == "" {
				return
			}
			for _, f := range r.Findings {
				if f.ID == c.id && f.Message != c.says {
					t.Errorf("%s says\n  %s\nwant\n  %s", c.id, f.Message, c.says)
				}
			}
		})
	}
}

// RD203 says per version what the controller does with a canary sized
// above replicas, as the lab showed (e2e minpods-over-replicas): before
// v1.9 it is never promoted (the gate wants available == replicas); v1.9
// promotes it (available >= replicas); both then pass the progress
// deadline; v1.10 caps minPods (info).
func TestMinPodsSaysWhatEachVersionDoes(t *testing.T) {
	edit := set(canaryField("minPodsPerReplicaSet"), int64(30))
	want := map[upstream.Version]string{
		"v1.7.2":  "v1.7.2 does not promote it either (promotion needs exactly 20 available), so after the last step the update holds until progressDeadlineSeconds pass, then the Rollout stays Degraded (ProgressDeadlineExceeded)",
		"v1.8.2":  "v1.8.2 does not promote it either",
		"v1.8.3":  "v1.8.3 does not promote it either",
		"v1.9.3":  "v1.9.3 promotes it with 30 pods for 20 replicas (the phase reads Healthy) until progressDeadlineSeconds pass, then the Rollout stays Degraded (ProgressDeadlineExceeded)",
		"v1.10.2": "v1.10.2 caps it at 20",
	}
	for _, ver := range upstream.Modeled {
		w, ok := want[ver]
		if !ok {
			t.Fatalf("%s: no expectation: read its promotion gate and add one", ver)
		}
		var msg string
		for _, f := range diagnoseExample(t, ver, edit).Findings {
			if f.ID == "RD203" {
				msg = f.Message
			}
		}
		if !strings.Contains(msg, w) {
			t.Errorf("%s: RD203 says %q, want it to say %q", ver, msg, w)
		}
	}
}

func TestRPTIsInfoBeforeV19(t *testing.T) {
	edit := set([]string{"spec", "strategy", "canary", "replicaProgressThreshold"}, map[string]interface{}{"type": "Pods", "value": int64(2)})
	for ver, want := range map[upstream.Version]Severity{"v1.8.2": Info, "v1.9.3": Critical} {
		r := diagnoseExample(t, ver, edit)
		for _, f := range r.Findings {
			if f.ID == "RD206" && f.Severity != want {
				t.Errorf("%s: RD206 severity %s, want %s", ver, f.Severity, want)
			}
		}
	}
}

// TestRegistryWellFormed checks both areas' rules. Every rule has a check:
// rules.Register refuses prose without one, and sets the area it registers.
func TestRegistryWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range rules.All() {
		if r.ID == "" || r.Name == "" || r.Title == "" || r.Why == "" || r.Remedy == "" || r.Area == "" || r.Severity == 0 {
			t.Errorf("rule %s is incomplete", r.ID)
		}
		if seen[r.ID] || seen[r.Name] {
			t.Errorf("duplicate rule %s/%s", r.ID, r.Name)
		}
		seen[r.ID], seen[r.Name] = true, true
		for _, k := range r.Facts {
			if _, ok := upstream.Lookup(k); !ok {
				t.Errorf("rule %s cites unknown fact %s", r.ID, k)
			}
		}
	}
}

// ReplicaSets that could not be read are not ReplicaSets that do not exist.
// The incident example with its ReplicaSets' LIST refused (a reader role
// without replicasets, as gather records it): diagnose must not say the
// canary has no available pod (RD101's "on 0 of 20"), that there is no
// stable ReplicaSet (RD108), or anything else the model would predict from
// an empty list; the static rules, the gap and the status's weight remain.
func TestUnreadReplicaSetsAreNotAbsentOnes(t *testing.T) {
	objs, hdr := exampletest.Decode(t, exampletest.Incident)
	cv := model.ControllerVersion{Assumed: "v1.8.2", Source: model.SourceFlag, Exact: true}
	read := Run(exampletest.ViewOf(t, snapshot.New(*hdr, objs)), cv, Options{})
	if !has(read, "RD101") || len(read.Sets) == 0 || read.ReplicaSetsUnread != nil {
		t.Fatalf("read: RD101 %v, %d ReplicaSets, unread %v: the example no longer shows the case", has(read, "RD101"), len(read.Sets), read.ReplicaSetsUnread)
	}
	var kept []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() != "ReplicaSet" {
			kept = append(kept, o)
		}
	}
	h := *hdr
	h.Gaps = append(h.Gaps, snapshot.Gap{Resource: "replicasets.apps", Namespace: "shop", Reason: snapshot.GapForbidden,
		Message: `replicasets.apps is forbidden: User "reader" cannot list resource "replicasets" in API group "apps" in the namespace "shop"`})
	rep := Run(exampletest.ViewOf(t, snapshot.New(h, kept)), cv, Options{})
	if g := rep.ReplicaSetsUnread; g == nil || g.Reason != snapshot.GapForbidden || g.Namespace != "shop" {
		t.Fatalf("replicaSetsUnread %+v", g)
	}
	for _, f := range rep.Findings {
		r, ok := rules.ByID(f.ID)
		if ok && r.Area == rules.AreaRollout && r.Scope == rules.Live && !r.WithoutReplicaSets {
			t.Errorf("%s (it needs the ReplicaSets) ran without them: %s", f.ID, f.Message)
		}
	}
	if !has(rep, "RD201") || !has(rep, "RD110") {
		t.Errorf("findings %v: want the static RD201 and the gap's RD110 still", findingIDs(rep))
	}
	if tr := rep.Traffic; len(rep.Sets) != 0 || rep.Model != nil || tr == nil || tr.CanaryWeight != 100 || tr.CanaryAvailable != 0 || tr.NextBranch != "" || len(tr.Held) != 0 {
		t.Errorf("ReplicaSets %v, model %v, traffic %+v: want none, none, the status's weight and nothing predicted", rep.Sets, rep.Model != nil, rep.Traffic)
	}
	// The same objects without the gap (a file that holds no ReplicaSets)
	// are a Rollout without ReplicaSets, and are diagnosed as one.
	if none := Run(exampletest.ViewOf(t, snapshot.New(*hdr, kept)), cv, Options{}); none.ReplicaSetsUnread != nil || !has(none, "RD108") {
		t.Errorf("no ReplicaSets and no gap: unread %v, findings %v: want RD108", none.ReplicaSetsUnread, findingIDs(none))
	}
}

func findingIDs(r *Report) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, f.ID)
	}
	return out
}

// A timed pause step whose time is up completes at the controller's next
// pass, unless spec.paused is set: then no step completes (canary.go's
// completedCurrentCanaryStep), and RD106 must not say the pause "ends" at a
// time already past.
func TestPausedTimedStepUnderManualPause(t *testing.T) {
	at := func(start string, paused bool) func(*unstructured.Unstructured) {
		return both(
			set([]string{"status", "currentStepIndex"}, int64(1)), // pause: {duration: 10s}
			set([]string{"status", "pauseConditions"}, []interface{}{map[string]interface{}{"reason": "CanaryPauseStep", "startTime": start}}),
			set([]string{"spec", "paused"}, paused))
	}
	for _, c := range []struct {
		start  string
		paused bool
		want   string
		cites  []upstream.Key
	}{
		{"2020-01-01T00:00:00Z", true, "its 10s ran out at 2020-01-01T00:00:10Z but spec.paused holds the step: it completes as soon as spec.paused is false", []upstream.Key{"rc.spec-paused-no-step", "pa.duration-ends"}},
		{"2099-01-01T00:00:00Z", true, "its 10s run out at 2099-01-01T00:00:10Z; while spec.paused is set the step does not complete even then", []upstream.Key{"rc.spec-paused-no-step", "pa.duration-ends"}},
		{"2020-01-01T00:00:00Z", false, "its 10s ran out at 2020-01-01T00:00:10Z: the controller moves on at its next pass", []upstream.Key{"pa.duration-ends"}},
		{"2099-01-01T00:00:00Z", false, "CanaryPauseStep since 2099-01-01T00:00:00Z", []upstream.Key{"pa.duration-ends"}},
	} {
		f := finding(t, diagnoseExample(t, "v1.10.2", at(c.start, c.paused)), "RD106")
		if !strings.Contains(f.Message, c.want) {
			t.Errorf("start %s, spec.paused %v: RD106 says\n  %s\nwant it to contain\n  %s", c.start, c.paused, f.Message, c.want)
		}
		if !c.paused && !strings.Contains(c.want, "ran out") && !strings.Contains(f.Message, ", ends 2099-01-01T00:00:10Z") {
			t.Errorf("a pause still running says when it ends: %s", f.Message)
		}
		for _, k := range c.cites {
			if _, ok := cited(f, k); !ok {
				t.Errorf("start %s, spec.paused %v: RD106 does not cite %s: %+v", c.start, c.paused, k, f.Cites)
			}
		}
	}
}
