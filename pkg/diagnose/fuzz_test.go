package diagnose

import (
	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"

	"bytes"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/podcheck"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// FuzzDiagnoseFile feeds arbitrary bytes through the whole offline path —
// the file loader, the snapshot view, the model for every modeled version and
// the rules — and requires that nothing panics: bad input is an error.
func FuzzDiagnoseFile(f *testing.F) {
	f.Add(exampletest.Read(f, exampletest.Incident))
	f.Add([]byte("apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: a, namespace: b}\nspec:\n  replicas: -3\n  strategy: {canary: {steps: [{setWeight: 250}, {setWeight: -1}]}}\nstatus: {currentStepIndex: 9}\n"))
	f.Add([]byte("apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: a}\nspec: {strategy: {canary: {minPodsPerReplicaSet: 0, trafficRouting: {maxTrafficWeight: 0}}}}\nstatus: {currentStepIndex: -1}\n"))
	f.Add([]byte("---\n---\nkind: List\nitems: [1, 2]\n"))
	f.Add(exampletest.Read(f, exampletest.PodsWeb))
	f.Add([]byte(restartNoHeader))
	f.Fuzz(func(t *testing.T, data []byte) {
		located, hdr, err := snapshot.Decode("fuzz", bytes.NewReader(data))
		if err != nil {
			return
		}
		h := snapshot.Header{}
		if hdr != nil {
			h = *hdr
		}
		objs := make([]*unstructured.Unstructured, 0, len(located))
		for _, l := range located {
			objs = append(objs, l.Object)
		}
		snap := snapshot.New(h, objs)
		// The pod checks, on whatever workload the input holds.
		if w, err := snap.FindWorkload("", "", ""); err == nil {
			_ = podcheck.Run(w, model.ControllerVersion{}, podcheck.Options{Grace: podcheck.GraceInput{P99: 40 * time.Second, LBInterval: 2 * time.Second, LBFall: 2, Margin: 30 * time.Second}}).Worst()
		}
		rollouts, err := snap.Rollouts()
		if err != nil {
			return
		}
		for _, ro := range rollouts {
			v, err := snap.View(ro)
			if err != nil {
				continue
			}
			for _, ver := range upstream.Modeled {
				cv := model.ControllerVersion{Assumed: ver, Source: model.SourceFlag, Exact: true}
				rep := Run(v, cv, Options{})
				_ = rep.Worst()
			}
		}
	})
}
