package diagnose

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// atExperimentStep puts the example at step 1, an experiment step running
// the canary's template; duration "" leaves it unset, and required adds an
// analysis marked requiredForCompletion.
func atExperimentStep(duration string, required bool) func(*unstructured.Unstructured) {
	ex := map[string]interface{}{"templates": []interface{}{map[string]interface{}{"name": "canary", "specRef": "canary"}}}
	if duration != "" {
		ex["duration"] = duration
	}
	if required {
		ex["analyses"] = []interface{}{map[string]interface{}{"name": "smoke", "templateName": "smoke", "requiredForCompletion": true}}
	}
	return both(
		set(canaryField("steps"), []interface{}{
			map[string]interface{}{"setWeight": int64(5)},
			map[string]interface{}{"experiment": ex},
			map[string]interface{}{"setWeight": int64(100)},
		}),
		set([]string{"status", "currentStepIndex"}, int64(1)))
}

// withExperiment adds the step's Experiment, owned by the Rollout and of
// its current revision (5f6c8d7b9a), in phase with status.availableAt
// (unset when "").
func withExperiment(phase, availableAt string) func(*example) {
	return func(e *example) {
		status := map[string]interface{}{"phase": phase,
			"templateStatuses": []interface{}{map[string]interface{}{"name": "canary", "replicas": int64(1), "availableReplicas": int64(0), "status": "Progressing"}}}
		if availableAt != "" {
			status["availableAt"] = availableAt
			status["templateStatuses"] = []interface{}{map[string]interface{}{"name": "canary", "replicas": int64(1), "readyReplicas": int64(1), "availableReplicas": int64(1), "status": "Running"}}
		}
		e.objs = append(e.objs, &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "argoproj.io/v1alpha1", "kind": "Experiment",
			"metadata": map[string]interface{}{"name": "checkout-api-5f6c8d7b9a-7-1", "namespace": "shop",
				"creationTimestamp": "2026-08-10T22:06:00Z",
				"labels":            map[string]interface{}{"rollouts-pod-template-hash": "5f6c8d7b9a"},
				"ownerReferences": []interface{}{map[string]interface{}{"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "name": "checkout-api",
					"uid": "3f0c2d4e-8c1a-4c55-9d0e-6a9b7f1e2a10", "controller": true}}},
			"spec": map[string]interface{}{"duration": "1h", "templates": []interface{}{map[string]interface{}{"name": "canary", "replicas": int64(1),
				"selector": map[string]interface{}{"matchLabels": map[string]interface{}{"app": "checkout-api"}},
				// specRef canary: the canary's template, with its hash.
				"template": map[string]interface{}{"metadata": map[string]interface{}{"labels": map[string]interface{}{"app": "checkout-api", "rollouts-pod-template-hash": "5f6c8d7b9a"}},
					"spec": map[string]interface{}{"containers": []interface{}{map[string]interface{}{"name": "app", "image": "registry.example/checkout-api:7"}}}}}}},
			"status": status,
		}})
	}
}

// readByDiagnose makes the example a diagnose of this Rollout from the
// cluster that listed Experiments: one it does not hold does not exist.
func readByDiagnose(e *example) {
	e.header.Offline = false
	e.header.TargetKind = snapshot.KindRollout
	e.header.Listed = append(slices.Clone(e.header.Listed), "experiments.argoproj.io")
}

// experimentCases are RD163's states; rolloutCases holds them, so the rule
// table's tests and the fleet-read property test run them.
var experimentCases = []rolloutCase{
	{name: "experiment running, duration from availableAt", id: "RD163", fires: true, edit: atExperimentStep("1h", false), more: withExperiment("Running", "2026-08-10T22:06:30Z")},
	{name: "experiment step, Experiment not yet created", id: "RD163", fires: true, edit: atExperimentStep("1h", false), more: readByDiagnose,
		says: "step 1 (experiment) has no Experiment of the current revision yet: the controller creates it on its next pass once a stable ReplicaSet exists, and the step completes when it is Successful"},
	// A read that did not list them: a record begun before the Rollout had
	// the step, or a snapshot an older rolloutdoctor wrote.
	{name: "experiment step, a record begun before it", id: "RD163", fires: true, edit: atExperimentStep("1h", false),
		says: "step 1 (experiment) holds the Rollout until its Experiment is Successful; its Experiment was not read: the Rollout had no experiment step when this read began, and the read did not list Experiments; kubectl rolloutdoctor diagnose checkout-api -n shop reads it"},
	{name: "experiment step, a snapshot that names nothing listed", id: "RD163", fires: true, edit: atExperimentStep("1h", false), more: func(e *example) { e.header.Listed = nil },
		says: "step 1 (experiment) holds the Rollout until its Experiment is Successful; its Experiment was not read here (kubectl rolloutdoctor diagnose checkout-api -n shop reads it)"},
	{name: "experiment step without duration or required analysis", id: "RD163", fires: true, edit: atExperimentStep("", false), more: func(e *example) { e.header.Offline = true },
		says: "step 1 (experiment) holds the Rollout until its Experiment is Successful; no Experiment of the current revision is in the input (add `kubectl get experiments -n shop -o yaml` to it); the step sets no duration and no analysis requiredForCompletion, so the Experiment never completes by itself: the Rollout stays at this step until someone promotes it (RD219)"},
	{name: "experiment step ended by a required analysis", id: "RD163", fires: true, edit: atExperimentStep("", true), more: withExperiment("Pending", "")},
	{name: "experiment step of an aborted Rollout", id: "RD163", edit: both(atExperimentStep("1h", false), set([]string{"status", "abort"}, true))},
	{name: "not at an experiment step", id: "RD163"},
	{name: "experiment step without duration or required analysis", id: "RD219", fires: true, edit: atExperimentStep("", false),
		says: "steps[1] is an experiment without a duration and without an analysis requiredForCompletion: its Experiment never completes by itself, so every update waits at step 1 until someone promotes it"},
	{name: "experiment step with a duration", id: "RD219", edit: atExperimentStep("1h", false)},
	{name: "experiment step ended by a required analysis", id: "RD219", edit: atExperimentStep("", true)},
}

func init() { rolloutCases = append(rolloutCases, experimentCases...) }

// RD163 says when the step can end: from availableAt and the duration; from
// the templates' pods while they are not all available; from the required
// analyses without a duration; never by itself with neither (a warning).
func TestExperimentStep(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*unstructured.Unstructured)
		more func(*example)
		sev  rules.Severity
		want []string
	}{
		{"running", atExperimentStep("1h", false), withExperiment("Running", "2026-08-10T22:06:30Z"), rules.Info,
			[]string{"step 1 (experiment) waits for Experiment checkout-api-5f6c8d7b9a-7-1 (Running): the step completes only when it is Successful; its 1h runs from 2026-08-10T22:06:30Z, when every template's pods were available: ends 2026-08-10T23:06:30Z"}},
		{"pods not yet available", atExperimentStep("1h", false), withExperiment("Pending", ""), rules.Info,
			[]string{"its 1h starts once every template's pods are available (canary 0/1); a template whose pods make no progress for 600s (progressDeadlineSeconds, the default) fails the Experiment and aborts the Rollout"}},
		{"required analysis", atExperimentStep("", true), withExperiment("Running", "2026-08-10T22:06:30Z"), rules.Info,
			[]string{"the step sets no duration: the Experiment ends when its analyses required for completion (smoke) succeed"}},
		{"never ends", atExperimentStep("", false), func(e *example) { withExperiment("Running", "2026-08-10T22:06:30Z")(e); readByDiagnose(e) }, rules.Info,
			[]string{"waits for Experiment checkout-api-5f6c8d7b9a-7-1 (Running)", "never completes by itself: the Rollout stays at this step until someone promotes it"}},
		{"inconclusive", atExperimentStep("1h", false), withExperiment("Inconclusive", "2026-08-10T22:06:30Z"), rules.Info,
			[]string{"it ended Inconclusive, so the Rollout is paused (InconclusiveExperiment) until someone promotes it"}},
	} {
		r := diagnoseEdited(t, "v1.10.2", c.edit, c.more)
		f := finding(t, r, "RD163")
		for _, w := range c.want {
			if !strings.Contains(f.Message, w) {
				t.Errorf("%s: RD163 says\n  %s\nwant it to contain\n  %s", c.name, f.Message, w)
			}
		}
		if f.Severity != c.sev {
			t.Errorf("%s: RD163 is %s, want %s", c.name, f.Severity, c.sev)
		}
		if _, ok := cited(f, "rc.experiment-step-done"); !ok {
			t.Errorf("%s: RD163 does not cite the step's completion: %+v", c.name, f.Cites)
		}
		if len(r.Experiments) != 1 || r.Experiments[0].Name != "checkout-api-5f6c8d7b9a-7-1" {
			t.Errorf("%s: the report's experiments are %+v", c.name, r.Experiments)
		}
	}
	// The default deadline is the controller's, cited.
	f := finding(t, diagnoseEdited(t, "v1.10.2", atExperimentStep("1h", false), withExperiment("Pending", "")), "RD163")
	for _, k := range []upstream.Key{"df.experiment-progress-deadline", "df.progress-deadline-600"} {
		if _, ok := cited(f, k); !ok {
			t.Errorf("RD163 does not cite %s: %+v", k, f.Cites)
		}
	}
}

// Without trafficRouting a canary's share of the requests is its share of
// the ready pods, a running Experiment's included (they carry the canary's
// labels); with a router there is no pod share, the weight is the router's.
func TestPodShareWithoutARouter(t *testing.T) {
	basic := both(remove(canaryField("trafficRouting")...), remove(canaryField("canaryService")...), remove(canaryField("stableService")...),
		set([]string{"status", "currentStepIndex"}, int64(1))) // after setWeight 5
	r := diagnoseExample(t, "v1.10.2", basic)
	// The example's canary has 2 ready pods, the stable 20.
	if p := r.PodShare; p == nil || p.CanaryReady != 2 || p.OtherReady != 20 || p.Percent != 9 || p.SetWeight != 5 {
		t.Errorf("pod share %+v, want 2 canary of 22 ready (9%%), setWeight 5", p)
	}
	// An Experiment of the canary's template with one ready pod.
	r = diagnoseEdited(t, "v1.10.2", both(basic, atExperimentStep("1h", false)), func(e *example) {
		withExperiment("Running", "2026-08-10T22:06:30Z")(e)
		ex := e.objs[len(e.objs)-1]
		tmpl := []string{"spec", "templates"}
		ts, _, _ := unstructured.NestedSlice(ex.Object, tmpl...)
		ts[0].(map[string]interface{})["template"].(map[string]interface{})["metadata"] = map[string]interface{}{"labels": map[string]interface{}{"app": "checkout-api", "rollouts-pod-template-hash": "5f6c8d7b9a"}}
		_ = unstructured.SetNestedSlice(ex.Object, ts, tmpl...)
		st, _, _ := unstructured.NestedSlice(ex.Object, "status", "templateStatuses")
		st[0].(map[string]interface{})["readyReplicas"] = int64(1)
		_ = unstructured.SetNestedSlice(ex.Object, st, "status", "templateStatuses")
	})
	if p := r.PodShare; p == nil || p.CanaryReady != 3 || p.OtherReady != 20 {
		t.Errorf("pod share with the Experiment's pod %+v, want 3 canary of 23 ready", p)
	}
	// With the Services the Rollout names the controller points each at one
	// ReplicaSet: the share holds only for a Service that selects both.
	r = diagnoseExample(t, "v1.10.2", both(remove(canaryField("trafficRouting")...), set([]string{"status", "currentStepIndex"}, int64(1))))
	if p := r.PodShare; p == nil || p.StableService != "checkout-api-stable" || p.CanaryService != "checkout-api-canary" || len(p.Cites) != 4 {
		t.Errorf("pod share with the Rollout's Services %+v", p)
	}
	if r := diagnoseExample(t, "v1.10.2", nil); r.PodShare != nil {
		t.Errorf("a traffic-routed canary has a pod share: %+v", r.PodShare)
	}
}

// The step's Experiment is the one the status names, whatever else of the
// revision is running; else the newest running one.
func TestStepExperiment(t *testing.T) {
	exs := []ExperimentView{{Name: "a", Phase: "Running", Current: true}, {Name: "b", Phase: "Running"}, {Name: "c", Phase: "Successful"}}
	if e := stepExperiment(exs); e.Name != "a" {
		t.Errorf("picked %s, want the current a", e.Name)
	}
	exs[0].Current = false
	if e := stepExperiment(exs); e.Name != "b" {
		t.Errorf("picked %s, want the newest running b", e.Name)
	}
	if e := stepExperiment(exs[2:]); e.Name != "c" {
		t.Errorf("picked %s, want c", e.Name)
	}
	if e := stepExperiment(nil); e != nil {
		t.Errorf("picked %+v from none", e)
	}
}

// A scan lists Experiments when a Rollout has an experiment step, so its
// RD163 and its pod share say what diagnose says: the same Experiment and
// end, and the running Experiment's ready pods counted with the canary's.
func TestScanSaysWhatDiagnoseSaysOfExperiments(t *testing.T) {
	noRouting := func(ro *unstructured.Unstructured) {
		atExperimentStep("1h", false)(ro)
		unstructured.RemoveNestedField(ro.Object, "spec", "strategy", "canary", "trafficRouting")
	}
	for _, c := range []struct {
		name string
		edit func(*unstructured.Unstructured)
	}{
		{"with trafficRouting", atExperimentStep("1h", false)},
		{"without trafficRouting", noRouting},
	} {
		objs, hdr := exampletest.Decode(t, exampletest.Incident)
		editRollout(objs, c.edit)
		ex := &example{header: hdr, objs: objs}
		withExperiment("Running", "2026-08-10T22:06:30Z")(ex)
		readByDiagnose(ex)
		cv := model.ControllerVersion{Assumed: "v1.10.2", Source: model.SourceFlag, Exact: true}
		full := Run(exampletest.ViewOf(t, snapshot.New(*ex.header, ex.objs)), cv, Options{NoPods: true})
		fleet := Run(exampletest.ViewOf(t, snapshot.New(fleetHeader(*ex.header), fleetShaped(ex.objs))), cv, Options{NoPods: true, Source: "scan"})
		d, s := finding(t, full, "RD163"), finding(t, fleet, "RD163")
		if d.Message != s.Message || !strings.Contains(s.Message, "waits for Experiment checkout-api-5f6c8d7b9a-7-1") {
			t.Errorf("%s: RD163\n  diagnose: %s\n  scan:     %s", c.name, d.Message, s.Message)
		}
		if !reflect.DeepEqual(full.PodShare, fleet.PodShare) {
			t.Errorf("%s: pod share: diagnose %+v, scan %+v", c.name, full.PodShare, fleet.PodShare)
		}
		// The example's canary has 2 ready pods, the Experiment's template
		// (the canary's) 1 more, and the stable 20.
		if want := c.name == "without trafficRouting"; (full.PodShare != nil) != want || want && (full.PodShare.CanaryReady != 3 || full.PodShare.OtherReady != 20) {
			t.Errorf("%s: pod share %+v", c.name, full.PodShare)
		}
	}
}
