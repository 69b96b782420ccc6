package escape

import (
	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"

	"bytes"
	"reflect"
	"testing"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// FuzzBuild feeds arbitrary bytes through escape's offline path — the file
// loader, the snapshot view, the diagnosis and the plan for every modeled
// version, every action target — and requires that nothing panics (a state
// the model cannot plan from is an error) and that nothing changes the
// snapshot's Rollout: views share it rather than copy it (snapshot.View).
func FuzzBuild(f *testing.F) {
	example := exampletest.Read(f, exampletest.Incident)
	f.Add(exampletest.Read(f, exampletest.BlueGreen), int64(0), int32(-1))
	f.Add(exampletest.Read(f, exampletest.AnalysisAbort), int64(0), int32(0))
	f.Add(example, int64(0), int32(-1))
	f.Add(bytes.Replace(example, []byte("currentStepIndex: 3"), []byte("currentStepIndex: -2"), 1), int64(1), int32(0))
	f.Add(bytes.Replace(example, []byte("currentStepIndex: 3"), []byte("currentStepIndex: 99"), 1), int64(7), int32(5))
	f.Add([]byte("apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: a, namespace: b}\nspec:\n  replicas: -3\n  strategy: {canary: {steps: [{setWeight: 250}, {pause: {duration: abc}}]}}\nstatus: {currentStepIndex: 9}\n"), int64(-1), int32(-1))
	f.Add([]byte("apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: a}\nspec: {strategy: {canary: {}}}\n"), int64(0), int32(0))
	f.Fuzz(func(t *testing.T, data []byte, toRevision int64, toStep int32) {
		snap, err := snapshot.Read("fuzz", bytes.NewReader(data))
		if err != nil {
			return
		}
		rollouts, err := snap.Rollouts()
		if err != nil {
			return
		}
		for _, ro := range rollouts {
			before := ro.DeepCopy()
			v, err := snap.View(ro)
			if err != nil {
				continue
			}
			for _, ver := range upstream.Modeled {
				diagnose.Run(v, model.ControllerVersion{Assumed: ver, Source: model.SourceFlag, Exact: true}, diagnose.Options{})
				in := Input{View: v, Controller: model.ControllerVersion{Assumed: ver, Source: model.SourceFlag, Exact: true}, ToRevision: toRevision}
				if toStep >= 0 {
					in.ToStep = &toStep
				}
				p, err := Build(in)
				if err != nil {
					continue
				}
				if len(p.Options) != len(Actions) {
					t.Fatalf("%s: %d options for %d actions", ver, len(p.Options), len(Actions))
				}
			}
			if !reflect.DeepEqual(before, ro) {
				t.Fatalf("diagnosing and planning changed the snapshot's Rollout %s/%s", ro.Namespace, ro.Name)
			}
		}
	})
}
