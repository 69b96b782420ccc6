package diagnose

import (
	"strings"
	"testing"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// diagnoseAnalysis diagnoses examples/analysis-abort.yaml (a canary aborted
// by a failed step analysis) after editing its Rollout and its AnalysisRun.
func diagnoseAnalysis(t *testing.T, ver upstream.Version, ro, run func(*unstructured.Unstructured)) *Report {
	t.Helper()
	objs, hdr := exampletest.Decode(t, exampletest.AnalysisAbort)
	applyAnalysis(objs, ro, run)
	cv := model.ControllerVersion{Assumed: ver, Source: model.SourceFlag, Exact: true}
	return Run(exampletest.ViewOf(t, snapshot.New(*hdr, objs)), cv, Options{})
}

// applyAnalysis edits the Rollout with ro and the AnalysisRun with run
// (each when set).
func applyAnalysis(objs []*unstructured.Unstructured, ro, run func(*unstructured.Unstructured)) {
	for _, o := range objs {
		switch {
		case o.GetKind() == "Rollout" && ro != nil:
			ro(o)
		case o.GetKind() == "AnalysisRun" && run != nil:
			run(o)
		}
	}
}

// metricResult edits the status of one metric of the run.
func metricResult(name string, edit func(m map[string]interface{})) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		rs, _, _ := unstructured.NestedSlice(u.Object, "status", "metricResults")
		for _, r := range rs {
			if m := r.(map[string]interface{}); m["name"] == name {
				edit(m)
			}
		}
		if err := unstructured.SetNestedSlice(u.Object, rs, "status", "metricResults"); err != nil {
			panic(err)
		}
	}
}

// metricSpec edits the spec of one metric of the run.
func metricSpec(name string, edit func(m map[string]interface{})) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		ms, _, _ := unstructured.NestedSlice(u.Object, "spec", "metrics")
		for _, x := range ms {
			if m := x.(map[string]interface{}); m["name"] == name {
				edit(m)
			}
		}
		if err := unstructured.SetNestedSlice(u.Object, ms, "spec", "metrics"); err != nil {
			panic(err)
		}
	}
}

func measurement(phase, value, message, at string) interface{} {
	m := map[string]interface{}{"phase": phase, "startedAt": at, "finishedAt": at}
	if value != "" {
		m["value"] = value
	}
	if message != "" {
		m["message"] = message
	}
	return m
}

const refused = `Post "http://prometheus.monitoring:9090/api/v1/query": dial tcp 10.0.4.7:9090: connect: connection refused`

// erroring: the run still Running, success-rate with n errors in a row
// after two successes.
func erroring(n int) func(*unstructured.Unstructured) {
	return both(
		set([]string{"status", "phase"}, "Running"),
		remove("status", "message"),
		remove("status", "completedAt"),
		metricResult("success-rate", func(m map[string]interface{}) {
			ms := []interface{}{
				measurement("Successful", "[0.9912]", "", "2026-09-02T14:22:04Z"),
				measurement("Successful", "[0.9874]", "", "2026-09-02T14:23:04Z"),
			}
			for i := 0; i < n; i++ {
				ms = append(ms, measurement("Error", "", refused, "2026-09-02T14:24:05Z"))
			}
			m["phase"], m["measurements"] = "Running", ms
			m["count"], m["successful"], m["failed"], m["error"], m["consecutiveError"] = int64(2), int64(2), int64(0), int64(n), int64(n)
		}),
	)
}

// running: the Rollout at the analysis step, not aborted.
var running = both(
	set([]string{"status", "abort"}, false),
	remove("status", "abortedAt"),
	set([]string{"status", "currentStepIndex"}, int64(2)),
	set([]string{"status", "phase"}, "Progressing"),
	remove("status", "message"),
)

// terminatedWithErrors: the run was terminated (the Rollout promoted past
// the step) while success-rate had only errors.
var terminatedWithErrors = both(
	set([]string{"spec", "terminate"}, true),
	set([]string{"status", "phase"}, "Successful"),
	set([]string{"status", "message"}, "Run Terminated"),
	metricResult("success-rate", func(m map[string]interface{}) {
		m["phase"] = "Successful"
		m["measurements"] = []interface{}{
			measurement("Error", "", refused, "2026-09-02T14:22:04Z"),
			measurement("Error", "", refused, "2026-09-02T14:22:14Z"),
			measurement("Error", "", refused, "2026-09-02T14:22:24Z"),
		}
		m["count"], m["successful"], m["failed"], m["error"], m["consecutiveError"] = int64(0), int64(0), int64(0), int64(3), int64(3)
	}),
)

var inconclusivePause = both(running, set([]string{"status", "controllerPause"}, true),
	set([]string{"status", "phase"}, "Paused"),
	set([]string{"status", "pauseConditions"}, []interface{}{map[string]interface{}{"reason": "InconclusiveAnalysisRun", "startTime": "2026-09-02T14:25:07Z"}}),
	set([]string{"status", "canary", "currentStepAnalysisRunStatus", "status"}, "Inconclusive"))

var inconclusiveRun = both(
	set([]string{"status", "phase"}, "Inconclusive"),
	set([]string{"status", "message"}, `Metric "success-rate" assessed Inconclusive due to inconclusive (1) > inconclusiveLimit (0)`),
	metricSpec("success-rate", func(m map[string]interface{}) { m["failureCondition"] = "result[0] < 0.90" }),
	metricResult("success-rate", func(m map[string]interface{}) {
		m["phase"] = "Inconclusive"
		m["measurements"] = []interface{}{measurement("Inconclusive", "[0.9312]", "", "2026-09-02T14:24:05Z")}
		m["count"], m["successful"], m["failed"], m["inconclusive"] = int64(1), int64(0), int64(0), int64(1)
	}),
)

var asBackground = func(u *unstructured.Unstructured) {
	l := u.GetLabels()
	l["rollout-type"] = "Background"
	delete(l, "step-index")
	u.SetLabels(l)
}

var analysisCases = []rolloutCase{
	{name: "example: success-rate failed 2 > 1", id: "RD119", fires: true,
		says: `AnalysisRun payments-api-5b8c7d9f4-4-2 (step 2) aborted the Rollout: it ended Failed on metric "success-rate" (prometheus) because failed (2) > failureLimit (1); values [0.9874], [0.9312], [0.9178] (the last 3 of 4) against successCondition result[0] >= 0.95 (the last failed one missed it by 0.0322)`},
	{name: "not aborted", id: "RD119"},
	{name: "example: no provider error", id: "RD120"},
	{name: "3 errors in a row, limit 4 by default", id: "RD120", fires: true,
		says: `metric "success-rate" (prometheus) of AnalysisRun payments-api-5b8c7d9f4-4-2 (step 2) is erroring: 3 error(s) in a row; 2 more and the metric ends in Error (consecutiveErrors > consecutiveErrorLimit 4, the default), which ends the run in Error — the controller tries again 10 s after each error, so about 20 s after the last one if the provider keeps failing: ` + refused},
	{name: "example: the run failed on data", id: "RD121"},
	{name: "terminated with errors only", id: "RD121", fires: true,
		says: `AnalysisRun payments-api-5b8c7d9f4-4-2 (step 2) is Successful, but metric "success-rate" (prometheus) never measured a value (0 successful with data; 3 error, 0 failed, 0 inconclusive): the run was terminated before a limit was reached, and a terminated metric counts as Successful`},
	{name: "example: aborted, not paused", id: "RD122"},
	{name: "step run Inconclusive, paused", id: "RD122", fires: true,
		says: `paused: AnalysisRun payments-api-5b8c7d9f4-4-2 (step 2) is Inconclusive on metric "success-rate" (inconclusive (1) > inconclusiveLimit (0, the default)); promote counts the analysis step as passed and moves to the next step without a new measurement; abort ends the update`},
	{name: "example: dryRun metric passed", id: "RD123"},
	{name: "dryRun metric failed", id: "RD123", fires: true,
		says: `dryRun metric "latency-p99" (web) of AnalysisRun payments-api-5b8c7d9f4-4-2 (step 2) was assessed Failed (failed (1) > failureLimit (0, the default)): without dryRun the run would have ended Failed and aborted the Rollout`},
	{name: "example: the run measured", id: "RD124"},
	{name: "example: a step run", id: "RD125"},
	{name: "background run outlives the pauses", id: "RD125", fires: true,
		says: `AnalysisRun payments-api-5b8c7d9f4-4-2 (background) will be cut short: metric "success-rate" has taken 2 of 10 measurements, one every 1m, and needs about 464 s more, but the pauses left end in about 240 s (step 4: pause 5m, 240 s left); once the steps are done the Rollout promotes and the controller terminates the run, which, with no limit exceeded, reads Successful short of its 10 measurements (about 6 taken by the end of the pauses; steps that scale pods take longer than their pauses, which gives it more)`},
	{name: "background run fits the pauses", id: "RD125"},
	{name: "background run before an analysis step", id: "RD125"},
	{name: "background run cut short at the promotion", id: "RD125", fires: true,
		says: `AnalysisRun payments-api-5b8c7d9f4-4-2 (background) was terminated after 2 of 5 measurements of metric "success-rate" and reads Successful: the remaining 3 were never taken (2 successful, 0 failed, 0 inconclusive, 0 error)`},
	{name: "placeholder without an argument", id: "RD124", fires: true,
		says: `AnalysisRun payments-api-5b8c7d9f4-4-2 (step 2) ended in Error before measuring anything: Unable to resolve metric arguments: failed to resolve {{args.region}}; no argument resolves {{args.region}} in metric "success-rate"`},
}

// atPause5m: the Rollout at its last step, pause 5m, paused 60 s before
// the snapshot (14:31:20): 240 s left.
var atPause5m = both(running,
	set([]string{"status", "currentStepIndex"}, int64(4)),
	set([]string{"status", "phase"}, "Paused"),
	set([]string{"status", "controllerPause"}, true),
	set([]string{"status", "pauseConditions"}, []interface{}{map[string]interface{}{"reason": "CanaryPauseStep", "startTime": "2026-09-02T14:30:20Z"}}))

// backgroundRunning: a background run measuring success-rate (count n,
// once a minute), two measurements taken, the last at 14:31:04.
func backgroundRunning(n int64) func(*unstructured.Unstructured) {
	return both(asBackground,
		set([]string{"status", "phase"}, "Running"),
		remove("status", "message"),
		remove("status", "completedAt"),
		metricSpec("success-rate", func(m map[string]interface{}) { m["count"] = n }),
		metricResult("success-rate", func(m map[string]interface{}) {
			m["phase"] = "Running"
			m["measurements"] = []interface{}{
				measurement("Successful", "[0.9912]", "", "2026-09-02T14:30:04Z"),
				measurement("Successful", "[0.9874]", "", "2026-09-02T14:31:04Z"),
			}
			m["count"], m["successful"], m["failed"] = int64(2), int64(2), int64(0)
		}))
}

// analysisEdits are the cases' edits, by case name: the Rollout's, then the run's.
var analysisEdits = map[string][2]func(*unstructured.Unstructured){
	"background run outlives the pauses": {atPause5m, backgroundRunning(10)},
	"background run fits the pauses":     {atPause5m, backgroundRunning(5)},
	// Step 2 is the analysis step: what follows waits for it, untimed.
	"background run before an analysis step": {running, backgroundRunning(10)},
	"background run cut short at the promotion": {running, both(backgroundRunning(5), set([]string{"spec", "terminate"}, true),
		set([]string{"status", "phase"}, "Successful"), set([]string{"status", "message"}, "Run Terminated"),
		metricResult("success-rate", func(m map[string]interface{}) { m["phase"] = "Successful" }))},
	"not aborted":                           {running, nil},
	"3 errors in a row, limit 4 by default": {running, erroring(3)},
	"terminated with errors only":           {running, terminatedWithErrors},
	"step run Inconclusive, paused":         {inconclusivePause, inconclusiveRun},
	"dryRun metric failed": {nil, metricResult("latency-p99", func(m map[string]interface{}) {
		m["phase"], m["failed"], m["successful"] = "Failed", int64(1), int64(3)
		ms := m["measurements"].([]interface{})
		ms[3] = measurement("Failed", "612", "", "2026-09-02T14:25:05Z")
	})},
	"placeholder without an argument": {nil, both(
		set([]string{"status", "phase"}, "Error"),
		set([]string{"status", "message"}, "Unable to resolve metric arguments: failed to resolve {{args.region}}"),
		remove("status", "metricResults"),
		metricSpec("success-rate", func(m map[string]interface{}) {
			p := m["provider"].(map[string]interface{})["prometheus"].(map[string]interface{})
			p["query"] = `sum(rate(http_requests_total{region="{{args.region}}"}[2m]))`
		}),
	)},
}

func TestAnalysisRulesFireAndStayQuiet(t *testing.T) {
	for _, c := range analysisCases {
		for _, ver := range upstream.Modeled {
			t.Run(c.id+"/"+c.name+"/"+string(ver), func(t *testing.T) {
				e := analysisEdits[c.name]
				r := diagnoseAnalysis(t, ver, e[0], e[1])
				if has(r, c.id) != c.fires {
					t.Fatalf("%s fires=%v, want %v; findings: %+v", c.id, has(r, c.id), c.fires, r.Findings)
				}
				for _, f := range r.Findings {
					if f.ID == c.id && c.says != "" && f.Message != c.says {
						t.Errorf("%s says\n  %s\nwant\n  %s", c.id, f.Message, c.says)
					}
				}
			})
		}
	}
}

func cited(f rules.Finding, k upstream.Key) (upstream.Cite, bool) {
	for _, c := range f.Cites {
		if c.Key == k {
			return c, true
		}
	}
	return upstream.Cite{}, false
}

func finding(t *testing.T, r *Report, id string) rules.Finding {
	t.Helper()
	for _, f := range r.Findings {
		if f.ID == id {
			return f
		}
	}
	t.Fatalf("no %s in %+v", id, r.Findings)
	return rules.Finding{}
}

// The abort message names the kind of analysis from v1.9 on; RD119 cites
// that line where it exists and says it is absent before.
func TestAnalysisAbortCitesTheMessageFormatPerVersion(t *testing.T) {
	want := map[upstream.Version]int{"v1.7.2": 0, "v1.8.2": 0, "v1.8.3": 0, "v1.9.3": 435, "v1.10.2": 438}
	abortLine := map[upstream.Version]int{"v1.7.2": 399, "v1.8.2": 405, "v1.8.3": 405, "v1.9.3": 439, "v1.10.2": 442}
	for _, ver := range upstream.Modeled {
		f := finding(t, diagnoseAnalysis(t, ver, nil, nil), "RD119")
		c, ok := cited(f, "an.abort-message-prefix")
		if !ok || c.Line != want[ver] || c.Absent != (want[ver] == 0) {
			t.Errorf("%s: an.abort-message-prefix cited as %+v, want line %d", ver, c, want[ver])
		}
		if c, ok := cited(f, "an.step-abort"); !ok || c.Line != abortLine[ver] || c.File != "rollout/analysis.go" {
			t.Errorf("%s: an.step-abort cited as %+v, want rollout/analysis.go:%d", ver, c, abortLine[ver])
		}
	}
	// A background run cites the background abort.
	f := finding(t, diagnoseAnalysis(t, "v1.10.2", nil, asBackground), "RD119")
	if c, ok := cited(f, "an.background-abort"); !ok || c.Line != 384 {
		t.Errorf("background run: cites %+v", f.Cites)
	}
}

// A metric that ends in Error aborts with the error message, and the
// consecutive-error limit is named with its default.
func TestAnalysisAbortOnErrors(t *testing.T) {
	run := both(erroring(5),
		set([]string{"status", "phase"}, "Error"),
		set([]string{"status", "message"}, `Metric "success-rate" assessed Error due to consecutiveErrors (5) > consecutiveErrorLimit (4): "Error Message: `+refused+`"`),
		metricResult("success-rate", func(m map[string]interface{}) { m["phase"] = "Error" }))
	r := diagnoseAnalysis(t, "v1.8.2", nil, run)
	f := finding(t, r, "RD119")
	want := `AnalysisRun payments-api-5b8c7d9f4-4-2 (step 2) aborted the Rollout: it ended Error on metric "success-rate" (prometheus) because consecutiveErrors (5) > consecutiveErrorLimit (4, the default); last error: ` + refused
	if f.Message != want {
		t.Errorf("RD119 says\n  %s\nwant\n  %s", f.Message, want)
	}
	if _, ok := cited(f, "df.consecutive-error-limit"); !ok {
		t.Errorf("RD119 does not cite the default: %+v", f.Cites)
	}
	// The evidence names the status field as the API spells it
	// (consecutiveError), not as the controller's message words it.
	var field bool
	for _, e := range f.Evidence {
		field = field || e.Field == "status.metricResults[success-rate].consecutiveError" && e.Value == "5"
	}
	if !field {
		t.Errorf("RD119's evidence does not name status.metricResults[success-rate].consecutiveError = 5: %+v", f.Evidence)
	}
	// RD120 says the metric failed on provider errors.
	f = finding(t, r, "RD120")
	if !strings.HasPrefix(f.Message, `metric "success-rate" (prometheus) of AnalysisRun payments-api-5b8c7d9f4-4-2 (step 2) failed on provider errors: consecutiveErrors (5) > consecutiveErrorLimit (4, the default)`) {
		t.Errorf("RD120 says %s", f.Message)
	}
	// A limit of 1 leaves one more error after the first.
	r = diagnoseAnalysis(t, "v1.8.2", running, both(erroring(1), metricSpec("success-rate", func(m map[string]interface{}) { m["consecutiveErrorLimit"] = int64(1) })))
	if f := finding(t, r, "RD120"); !strings.Contains(f.Message, "1 error(s) in a row; 1 more and the metric ends in Error (consecutiveErrors > consecutiveErrorLimit 1)") {
		t.Errorf("RD120 with limit 1 says %s", f.Message)
	}
}

// promote after an Inconclusive background run re-runs the analysis; after
// an Inconclusive step run it skips the step.
func TestAnalysisInconclusiveBackground(t *testing.T) {
	ro := both(inconclusivePause, remove("status", "canary", "currentStepAnalysisRunStatus"),
		set([]string{"status", "canary", "currentBackgroundAnalysisRunStatus"}, map[string]interface{}{"name": "payments-api-5b8c7d9f4-4-2", "status": "Inconclusive"}))
	for _, ver := range upstream.Modeled {
		f := finding(t, diagnoseAnalysis(t, ver, ro, both(inconclusiveRun, asBackground)), "RD122")
		if !strings.Contains(f.Message, "(background) is Inconclusive") || !strings.Contains(f.Message, "promote clears the pause and the controller starts a new run of the same analysis") {
			t.Errorf("%s: RD122 says %s", ver, f.Message)
		}
		if _, ok := cited(f, "an.background-inconclusive-pause"); !ok {
			t.Errorf("%s: RD122 cites %+v", ver, f.Cites)
		}
	}
}

// A metric terminated before its first measurement counts as Successful.
func TestAnalysisPassedWithNoMeasurement(t *testing.T) {
	run := both(terminatedWithErrors, metricResult("success-rate", func(m map[string]interface{}) {
		delete(m, "measurements")
		m["error"], m["consecutiveError"] = int64(0), int64(0)
	}))
	f := finding(t, diagnoseAnalysis(t, "v1.10.2", running, run), "RD121")
	if !strings.Contains(f.Message, `metric "success-rate" (prometheus) never measured a value (no measurement at all): the run was terminated`) {
		t.Errorf("RD121 says %s", f.Message)
	}
	// Real data that passed: quiet.
	pass := both(set([]string{"status", "phase"}, "Successful"), metricResult("success-rate", func(m map[string]interface{}) { m["phase"] = "Successful" }))
	if r := diagnoseAnalysis(t, "v1.10.2", running, pass); has(r, "RD121") {
		t.Errorf("RD121 fires on a run whose measurements brought values")
	}
	// Successful measurements with an empty vector are no data.
	empty := both(pass, metricResult("success-rate", func(m map[string]interface{}) {
		m["measurements"] = []interface{}{measurement("Successful", "[]", "", "2026-09-02T14:22:04Z")}
		m["count"], m["successful"], m["failed"] = int64(1), int64(1), int64(0)
	}))
	if r := diagnoseAnalysis(t, "v1.10.2", running, empty); !has(r, "RD121") {
		t.Errorf("RD121 quiet on a metric that passed on an empty result")
	}
}

// failureLimit -1 disables the failure check from v1.8.2 on; v1.7.2 has no
// such exception.
func TestFailureLimitMinusOne(t *testing.T) {
	m := v1alpha1.Metric{Name: "m", FailureLimit: &intstr.IntOrString{Type: intstr.Int, IntVal: -1}}
	r := &v1alpha1.MetricResult{Name: "m", Phase: v1alpha1.AnalysisPhaseRunning, Failed: 3}
	for ver, disabled := range map[upstream.Version]bool{"v1.7.2": false, "v1.8.2": true, "v1.8.3": true, "v1.9.3": true, "v1.10.2": true} {
		l := metricView(m, r, nil, ver).limit("failureLimit")
		if l.Disabled != disabled || l.Exceeded == disabled {
			t.Errorf("%s: failureLimit -1 gives %+v, want disabled=%v", ver, l, disabled)
		}
	}
}

// Limits can be arguments; strict > decides; defaults are 0, 0 and 4.
func TestLimitsAndDefaults(t *testing.T) {
	two := "2"
	args := map[string]*v1alpha1.Argument{"limit": {Name: "limit", Value: &two}}
	m := v1alpha1.Metric{Name: "m", FailureLimit: &intstr.IntOrString{Type: intstr.String, StrVal: "{{args.limit}}"}}
	r := &v1alpha1.MetricResult{Name: "m", Phase: v1alpha1.AnalysisPhaseRunning, Failed: 2, Inconclusive: 1, ConsecutiveError: 4}
	mv := metricView(m, r, args, "v1.10.2")
	got := []string{mv.Limits[0].String(), mv.Limits[1].String(), mv.Limits[2].String()}
	want := []string{"failed (2) ≤ failureLimit (2)", "inconclusive (1) > inconclusiveLimit (0, the default)", "consecutiveErrors (4) ≤ consecutiveErrorLimit (4, the default)"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("limit %d: %q, want %q", i, got[i], want[i])
		}
	}
}

// Arguments resolve as the controller resolves them, a Secret's value masked.
func TestResolveMasksSecrets(t *testing.T) {
	v := "payments-api"
	args := map[string]*v1alpha1.Argument{
		"svc":   {Name: "svc", Value: &v},
		"token": {Name: "token", ValueFrom: &v1alpha1.ValueFrom{SecretKeyRef: &v1alpha1.SecretKeyRef{Name: "s", Key: "k"}}},
		"empty": {Name: "empty"},
	}
	got, unresolved := resolve(`q{svc="{{ args.svc }}",t="{{args.token}}",e="{{args.empty}}",x="{{args.nope}}"}`, args)
	if want := `q{svc="payments-api",t="*****",e="{{args.empty}}",x="{{args.nope}}"}`; got != want {
		t.Errorf("resolve: %s, want %s", got, want)
	}
	if strings.Join(unresolved, " ") != "{{args.empty}} {{args.nope}}" {
		t.Errorf("unresolved: %v", unresolved)
	}
}

// The example's report: the run that aborted, both metrics, the masked token.
func TestAnalysisRunsInTheReport(t *testing.T) {
	r := diagnoseAnalysis(t, "v1.9.3", nil, nil)
	if len(r.AnalysisRuns) != 1 {
		t.Fatalf("runs: %+v", r.AnalysisRuns)
	}
	run := r.AnalysisRuns[0]
	if !run.CausedAbort || run.DecidedBy != "success-rate" || run.Type != "Step" || run.Step == nil || *run.Step != 2 {
		t.Errorf("run: %+v", run)
	}
	sr, lat := run.Metrics[0], run.Metrics[1]
	// Every measurement the run keeps is in the report (4 of 4: none dropped).
	if sr.DecidedBy != "failureLimit" || sr.Dropped != 0 || len(sr.Measurements) != 4 || sr.Measurements[0].Value != "[0.9912]" || sr.Measurements[3].Value != "[0.9178]" ||
		len(sr.Shown()) != 3 || sr.Shown()[0].Value != "[0.9874]" {
		t.Errorf("success-rate: %+v", sr)
	}
	if !lat.DryRun || !strings.HasSuffix(lat.Query, "token=*****") || lat.Provider != "web" {
		t.Errorf("latency-p99: %+v", lat)
	}
	// v1.10 clears the canary's run status on abort: the run is still found
	// by its revision's hash label, and still named as the cause.
	r = diagnoseAnalysis(t, "v1.10.2", remove("status", "canary", "currentStepAnalysisRunStatus"), nil)
	if len(r.AnalysisRuns) != 1 || !r.AnalysisRuns[0].CausedAbort || !has(r, "RD119") {
		t.Errorf("without the status name: %+v", r.AnalysisRuns)
	}
	// A run of another revision is not shown.
	other := func(u *unstructured.Unstructured) {
		l := u.GetLabels()
		l["rollouts-pod-template-hash"] = "7c9d5f8b6"
		u.SetLabels(l)
	}
	if r := diagnoseAnalysis(t, "v1.9.3", remove("status", "canary", "currentStepAnalysisRunStatus"), other); len(r.AnalysisRuns) != 0 {
		t.Errorf("a run of the stable revision is shown: %+v", r.AnalysisRuns)
	}
}

func TestMiss(t *testing.T) {
	for _, c := range []struct{ cond, value, want string }{
		{"result[0] >= 0.95", "[0.9178]", "0.0322"},
		{"result < 500", "612", "112"},
		{"result[0] >= 0.95 && result[1] > 0", "[0.9]", ""},
		{"result[0] >= 0.95", "[]", ""},
	} {
		if got := miss(c.cond, c.value); got != c.want {
			t.Errorf("miss(%q, %q) = %q, want %q", c.cond, c.value, got, c.want)
		}
	}
}

// The run's phase and message say a metric and limit decided it, but its
// metric results read otherwise: the analysis controller patched results
// computed from an older copy of the run over those that decided it (the
// lab's analysis-fail scenario on v1.8.3 under a load average of 36: the
// run Failed on failed (2) > failureLimit (1), its metric Running with one
// failure, the measurement that failed it gone). The run's message is what
// still says what decided it.
func TestAnalysisResultsOverwritten(t *testing.T) {
	stale := metricResult("success-rate", func(m map[string]interface{}) {
		m["phase"] = "Running"
		m["measurements"] = []interface{}{
			measurement("Successful", "[0.9912]", "", "2026-09-02T14:22:04Z"),
			measurement("Successful", "[0.9874]", "", "2026-09-02T14:23:04Z"),
			measurement("Failed", "[0.9312]", "", "2026-09-02T14:24:05Z"),
		}
		m["count"], m["successful"], m["failed"] = int64(3), int64(2), int64(1)
	})
	for _, ver := range upstream.Modeled {
		r := diagnoseAnalysis(t, ver, nil, stale)
		run := r.AnalysisRuns[0]
		if !run.ResultsOverwritten || run.DecidedBy != "success-rate" || run.DecidingLimit != "failed (2) > failureLimit (1)" || !run.CausedAbort {
			t.Errorf("%s: run %+v", ver, run)
		}
		f := finding(t, r, "RD119")
		want := `AnalysisRun payments-api-5b8c7d9f4-4-2 (step 2) aborted the Rollout: it ended Failed on metric "success-rate" (prometheus) because failed (2) > failureLimit (1), as the run's message says — but the metric's result was written over after that decision and reads Running now (failed 1, inconclusive 0, consecutiveErrors 0)`
		if !strings.HasPrefix(f.Message, want) {
			t.Errorf("%s: RD119 says\n  %s\nwant it to start\n  %s", ver, f.Message, want)
		}
		if c, ok := cited(f, "ar.status-merge-patch"); !ok || c.File != "analysis/sync.go" || c.Line != 33 {
			t.Errorf("%s: RD119 cites %+v", ver, f.Cites)
		}
	}
	// Results that agree with the run: decided by its own counters.
	r := diagnoseAnalysis(t, "v1.9.3", nil, nil)
	if run := r.AnalysisRuns[0]; run.ResultsOverwritten || run.DecidingLimit != "failed (2) > failureLimit (1)" {
		t.Errorf("consistent run: %+v", run)
	}
}
