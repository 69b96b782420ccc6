//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
)

var gvrExperiment = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "experiments"}

func init() {
	scenarios = append(scenarios, scenario{"experiment-step", experimentStep})
}

// experimentStep: a canary whose second step is an Experiment of the
// canary's template for 10 s. While the Experiment runs, diagnose must name
// it (RD163) and give the step's end as availableAt + 10 s; the controller
// must then end the Experiment Successful and move to the next step no
// sooner than that, and within seconds of it.
func experimentStep(t *testing.T, h *harness) {
	spec := rolloutSpec{replicas: 4, mode: hostMode,
		steps: "[{setWeight: 25}, {experiment: {duration: 10s, templates: [{name: canary, specRef: canary, replicas: 1}]}}, {pause: {}}]"}
	o := h.observe(isCanaryDest(hostMode))
	h.apply(h.trafficObjects(spec.mode))
	h.apply(h.rolloutYAML(spec, "a"))
	h.healthy(o, int64(spec.replicas), 90*time.Second)
	h.setImage("b")
	var rep *diagnose.Report
	var ex diagnose.ExperimentView
	h.waitFor("diagnose to give the Experiment's end", 90*time.Second, func() bool {
		rep = h.diagnose("app")
		for _, e := range rep.Experiments {
			if e.Current && e.EndsAt != nil {
				ex = e
				return true
			}
		}
		return false
	})
	f := finding(rep, "RD163")
	if f == nil {
		t.Fatalf("no RD163 while the Experiment %s runs: %s", ex.Name, findingIDs(rep))
	}
	if !strings.Contains(f.Message, "waits for Experiment "+ex.Name) || !strings.Contains(f.Message, "ends "+ex.EndsAt.UTC().Format(time.RFC3339)) {
		t.Errorf("RD163 does not name %s and its end %s: %s", ex.Name, ex.EndsAt.UTC().Format(time.RFC3339), f.Message)
	}
	// While it runs: pods lists the Experiment's pod (its ReplicaSet is
	// the Experiment's), and a scan reads the Experiment as diagnose does.
	var exPods []string
	for _, p := range h.pods("app").Pods {
		if p.Role == "experiment" {
			exPods = append(exPods, p.Name+" ("+p.ReplicaSet+")")
		}
	}
	var sc struct {
		Rows []struct {
			Top string `json:"topFinding"`
		} `json:"rows"`
	}
	scanOut, _ := h.runCode("scan", "-o", "json")
	if err := json.Unmarshal([]byte(scanOut), &sc); err != nil || len(sc.Rows) != 1 {
		t.Fatalf("scan -o json: %v\n%s", err, scanOut)
	}
	h.record("experiment step: pods and scan while the Experiment runs", "pods lists 1 pod of "+ex.Name+"-canary as experiment; scan's RD163 names "+ex.Name,
		fmt.Sprintf("experiment pods %v; scan's top finding %q", exPods, firstOf(sc.Rows[0].Top, 120)))
	if len(exPods) != 1 || !strings.Contains(exPods[0], "("+ex.Name+"-canary)") {
		t.Errorf("pods lists the Experiment's pods as %v, want the one of %s-canary", exPods, ex.Name)
	}
	if !strings.Contains(sc.Rows[0].Top, "RD163") || !strings.Contains(sc.Rows[0].Top, "waits for Experiment "+ex.Name) {
		t.Errorf("scan's top finding does not name the Experiment %s: %q", ex.Name, sc.Rows[0].Top)
	}
	var advanced time.Time
	h.waitFor("the step after the experiment", 60*time.Second, func() bool {
		if _, _, _, idx, _ := h.status(); idx >= 2 {
			advanced = time.Now()
			return true
		}
		return false
	})
	u := h.get(gvrExperiment, ex.Name)
	phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
	// availableAt is written to the second, rounded down: the true end is
	// at or after EndsAt. The poll runs once a second.
	late := advanced.Sub(*ex.EndsAt)
	pred := fmt.Sprintf("RD163 %s: %s ends at availableAt + %s", f.Severity, ex.Name, ex.Duration)
	obs := fmt.Sprintf("Experiment %s; step 2 reached %s after the predicted end", phase, late.Round(time.Second))
	h.record("experiment step (duration 10s): when the step ends", pred, obs)
	if phase != "Successful" || late < -time.Second || late > 15*time.Second {
		t.Errorf("predicted %s; observed %s", pred, obs)
	}
}
