package diagnose

import (
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// load returns the example's objects, letting a case edit the Rollout first.
func diagnoseExample(t *testing.T, ver upstream.Version, edit func(ro *unstructured.Unstructured)) *Report {
	t.Helper()
	f, err := os.Open("../../examples/incident-rollback-window.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	located, hdr, err := snapshot.Decode("example", f)
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	for _, l := range located {
		if l.Object.GetKind() == "Rollout" && edit != nil {
			edit(l.Object)
		}
		objs = append(objs, l.Object)
	}
	s := snapshot.New(*hdr, objs)
	ro, err := s.FindRollout("", "")
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.View(ro)
	if err != nil {
		t.Fatal(err)
	}
	return Run(v, model.ControllerVersion{Assumed: ver, Source: model.SourceFlag, Exact: true}, Options{})
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

func TestRulesFireAndStayQuiet(t *testing.T) {
	canary := []string{"spec", "strategy", "canary"}
	p := func(extra ...string) []string { return append(append([]string{}, canary...), extra...) }
	cases := []struct {
		name  string
		id    string
		edit  func(*unstructured.Unstructured)
		fires bool
	}{
		{"incident: final 100", "RD201", nil, true},
		{"fixed steps", "RD201", set(p("steps"), []interface{}{map[string]interface{}{"setWeight": int64(5)}, map[string]interface{}{"pause": map[string]interface{}{"duration": "10s"}}}), false},
		{"no rollbackWindow", "RD201", func(u *unstructured.Unstructured) { unstructured.RemoveNestedField(u.Object, "spec", "rollbackWindow") }, false},
		{"fixed steps vs KEDA 360", "RD202", set(p("steps"), []interface{}{map[string]interface{}{"setWeight": int64(5)}}), true},
		{"incident: over capacity", "RD101", nil, true},
		{"incident: within window", "RD103", nil, true},
		{"not aborted", "RD104", nil, false},
		{"aborted", "RD104", set([]string{"status", "abort"}, true), true},
		{"abort not acted on", "RD112", func(u *unstructured.Unstructured) {
			set([]string{"status", "abort"}, true)(u)
			unstructured.RemoveNestedField(u.Object, "spec", "rollbackWindow")
		}, true},
		{"abort acted on", "RD112", func(u *unstructured.Unstructured) {
			set([]string{"status", "abort"}, true)(u)
			set([]string{"status", "phase"}, "Degraded")(u)
			unstructured.RemoveNestedField(u.Object, "spec", "rollbackWindow")
		}, false},
		{"abort within the window (cleared by the controller)", "RD112", set([]string{"status", "abort"}, true), false},
		{"minPods 30 > replicas 20", "RD203", set(p("minPodsPerReplicaSet"), int64(30)), true},
		{"minPods 2", "RD203", nil, false},
		{"dss", "RD204", set(p("dynamicStableScale"), true), true},
		{"abort delay 0", "RD205", set(p("abortScaleDownDelaySeconds"), int64(0)), true},
		{"abort delay 30", "RD205", set(p("abortScaleDownDelaySeconds"), int64(30)), false},
		{"rpt pods", "RD206", set(p("replicaProgressThreshold"), map[string]interface{}{"type": "Pods", "value": int64(2)}), true},
		{"maxTrafficWeight with istio", "RD207", set(p("trafficRouting", "maxTrafficWeight"), int64(1000)), true},
		{"paused", "RD106", set([]string{"spec", "paused"}, true), true},
		{"router agrees", "RD107", nil, false},
		{"router disagrees", "RD107", set([]string{"status", "canary", "weights", "canary", "weight"}, int64(5)), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := diagnoseExample(t, "v1.8.2", c.edit)
			if has(r, c.id) != c.fires {
				t.Fatalf("%s fires=%v, want %v; findings: %+v", c.id, has(r, c.id), c.fires, r.Findings)
			}
		})
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

func TestRegistryWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rules() {
		if r.ID == "" || r.Name == "" || r.Title == "" || r.Why == "" || r.Remedy == "" || r.check == nil || r.Severity == 0 {
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
