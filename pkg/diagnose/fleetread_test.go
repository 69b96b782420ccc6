package diagnose

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// TestAFleetReadInventsNothing: a scan reads less than a diagnose (the
// Rollouts and their ReplicaSets with only their containers' names and
// images of the pod template, HPAs, ScaledObjects, the controller
// Deployments, Experiments; no pods, Services, router objects, AnalysisRuns
// or Events).
// Reading less may leave a finding out; it must never add one. Every state
// of the rule tables (the canary incident, the blue-green pause and the
// analysis abort, each edited as the tables edit them, and the known bugs'
// states) is diagnosed both
// ways, and a finding of the fleet-shaped read that the full read does not
// give is a claim made from what was not read. Before, the blue-green rows
// all failed with RD114 ("the active Service does not exist").
func TestAFleetReadInventsNothing(t *testing.T) {
	type state struct {
		name, example string
		edit          func(objs []*unstructured.Unstructured, ex *example) []*unstructured.Unstructured
	}
	var states []state
	for _, c := range rolloutCases {
		states = append(states, state{c.id + "/" + c.name, exampletest.Incident, func(objs []*unstructured.Unstructured, ex *example) []*unstructured.Unstructured {
			editRollout(objs, c.edit)
			ex.objs = objs
			if c.more != nil {
				c.more(ex) // may add objects
			}
			return ex.objs
		}})
	}
	for _, c := range bgCases {
		states = append(states, state{c.id + "/" + c.name, exampletest.BlueGreen, func(objs []*unstructured.Unstructured, _ *example) []*unstructured.Unstructured {
			applyBG(objs, c.edits)
			return objs
		}})
	}
	for _, c := range analysisCases {
		e := analysisEdits[c.name]
		states = append(states, state{c.id + "/" + c.name, exampletest.AnalysisAbort, func(objs []*unstructured.Unstructured, _ *example) []*unstructured.Unstructured {
			applyAnalysis(objs, e[0], e[1])
			return objs
		}})
	}
	for _, c := range bugCases {
		states = append(states, state{c.id + "/" + c.name, exampletest.Incident, func(objs []*unstructured.Unstructured, ex *example) []*unstructured.Unstructured {
			return c.apply(objs, ex.header)
		}})
	}
	compared, routerDiffers := 0, 0
	for _, s := range states {
		for _, ver := range []upstream.Version{upstream.Modeled[0], upstream.Modeled[len(upstream.Modeled)-1]} {
			objs, hdr := exampletest.Decode(t, s.example)
			ex := &example{header: hdr, cv: model.ControllerVersion{Assumed: ver, Source: model.SourceFlag, Exact: true}, objs: objs}
			objs = s.edit(objs, ex)
			if ex.header.Offline {
				continue // a file says nothing of what it leaves out, read either way
			}
			full := Run(exampletest.ViewOf(t, snapshot.New(*ex.header, objs)), ex.cv, Options{NoPods: true})
			fh := fleetHeader(*ex.header)
			fleet := Run(exampletest.ViewOf(t, snapshot.New(fh, fleetShaped(objs))), ex.cv, Options{NoPods: true, Source: "scan"})
			if t := full.Traffic; t != nil && t.RouterWeight != nil && fleet.Traffic != nil && *t.RouterWeight != fleet.Traffic.CanaryWeight {
				// The router applies another weight than the status records:
				// a scan, which reads no router object, goes by the status.
				routerDiffers++
				continue
			}
			compared++
			for _, f := range fleet.Findings {
				if f.ID != "RD110" && !has(full, f.ID) {
					t.Errorf("%s (%s): a fleet read finds %s %s, which the full read does not: %s", s.name, ver, f.Severity, f.ID, f.Message)
				}
			}
		}
	}
	t.Logf("%d states compared, %d left out (the router's weight is not the status's)", compared, routerDiffers)
	if compared < 2*len(states)*9/10 {
		t.Fatalf("only %d of %d states compared", compared, 2*len(states))
	}
}

// fleetShaped is what a scan reads of objs: the Rollouts and the
// controller's ReplicaSets with only the metadata and the containers' names
// and images of their pod templates, HPAs, ScaledObjects and the controller
// Deployments.
// fleetLists are the resources gather.Fleet lists whole (the Experiments
// when a Rollout has an experiment step, as a diagnose does).
var fleetLists = map[string]bool{"replicasets.apps": true, "horizontalpodautoscalers.autoscaling": true, "scaledobjects.keda.sh": true, "experiments.argoproj.io": true}

// fleetHeader is h as a fleet read of the same namespace writes it.
func fleetHeader(h snapshot.Header) snapshot.Header {
	h.TargetKind, h.TargetName = "Fleet", ""
	h.Listed = slices.DeleteFunc(slices.Clone(h.Listed), func(r string) bool { return !fleetLists[r] })
	return h
}

func fleetShaped(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		switch o.GetKind() {
		case "Rollout", "ReplicaSet":
			if o.GetKind() == "ReplicaSet" && o.GetLabels()["rollouts-pod-template-hash"] == "" {
				continue
			}
			c := o.DeepCopy()
			cs, _, _ := unstructured.NestedSlice(c.Object, "spec", "template", "spec", "containers")
			var kept []interface{}
			for _, x := range cs {
				m, _ := x.(map[string]interface{})
				kept = append(kept, map[string]interface{}{"name": m["name"], "image": m["image"]})
			}
			if _, ok, _ := unstructured.NestedMap(c.Object, "spec", "template", "spec"); ok {
				_ = unstructured.SetNestedField(c.Object, map[string]interface{}{"containers": kept}, "spec", "template", "spec")
			}
			out = append(out, c)
		case "HorizontalPodAutoscaler", "ScaledObject", "Experiment":
			out = append(out, o.DeepCopy())
		case "Deployment":
			if snapshot.IsControllerDeployment(o) {
				out = append(out, o.DeepCopy())
			}
		}
	}
	return out
}
