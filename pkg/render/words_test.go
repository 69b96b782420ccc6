package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
)

// The human view says the next pass's branch, the holding gates and the
// controller version's source in words; JSON keeps the tags.
func TestHumanSaysTagsInWords(t *testing.T) {
	rep := &diagnose.Report{Namespace: "shop", Name: "checkout-api",
		Controller: model.ControllerVersion{Detected: "v1.9.1", Assumed: "v1.9.3", Source: model.SourceImageTag, From: "argo-rollouts/argo-rollouts"},
		State:      diagnose.State{Strategy: "canary", Replicas: 10, StepIndex: 1, StepCount: 3},
		Traffic: &diagnose.Traffic{Router: "istio (host)", MaxWeight: 100, CanaryWeight: 10, StableWeight: 90,
			NextWeight: 10, NextBranch: string(model.BranchReverseLoop), NextWhy: "canary 1/10 available is not at its desired count",
			Held:      []string{"stable-availability (weight-skipped)"},
			HeldGates: []model.Gate{{Name: model.GateStableAvailability, Holds: true, Effect: model.EffectWeightSkipped}}},
	}
	var b bytes.Buffer
	if err := Human(&b, rep, NewStyles(&b, false), HumanOptions{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"controller v1.9.3 (read from the image tag v1.9.1 of argo-rollouts/argo-rollouts)",
		"next pass: canary 10% — walks back to the last setWeight  held by the stable availability check: the weight is not written\n",
		"    canary 1/10 available is not at its desired count\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("human output lacks %q:\n%s", want, out)
		}
	}
	for _, tag := range []string{"image-tag", "not-at-desired-reverse-loop", "stable-availability", "weight-skipped", "["} {
		if strings.Contains(out, tag) {
			t.Errorf("human output shows the tag %q:\n%s", tag, out)
		}
	}
	j, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{`"source":"image-tag"`, `"nextBranch":"not-at-desired-reverse-loop"`, `"heldBy":["stable-availability (weight-skipped)"]`} {
		if !bytes.Contains(j, []byte(tag)) {
			t.Errorf("JSON lacks %s: %s", tag, j)
		}
	}
	if bytes.Contains(j, []byte("HeldGates")) || bytes.Contains(j, []byte("the weight is not written")) {
		t.Errorf("JSON carries the human words: %s", j)
	}
}

// A gate that holds while the weight already stands (a promoted Rollout
// short of stable pods) is said as such, not as a weight held back.
func TestIdleGateInWords(t *testing.T) {
	rep := &diagnose.Report{Namespace: "shop", Name: "checkout-api",
		Controller: model.ControllerVersion{Assumed: "v1.10.2", Source: model.SourceFlag},
		State:      diagnose.State{Strategy: "canary", Replicas: 5, StepIndex: 2, StepCount: 2},
		Traffic: &diagnose.Traffic{Router: "istio (host)", MaxWeight: 100, StableWeight: 100, NextBranch: string(model.BranchFullyPromoted),
			HeldGates: []model.Gate{{Name: model.GateStableAvailability, Holds: true, Effect: model.EffectWeightSkipped, Idle: true}}},
	}
	var b bytes.Buffer
	if err := Human(&b, rep, NewStyles(&b, false), HumanOptions{}); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "held by the stable availability check: the router is not written, but the weight already stands\n") || strings.Contains(out, "the weight is not written") {
		t.Errorf("human output:\n%s", out)
	}
}

func TestControllerSourceInWords(t *testing.T) {
	from := "argo-rollouts/argo-rollouts"
	for _, tc := range []struct {
		cv   model.ControllerVersion
		want string
	}{
		{model.ControllerVersion{Detected: "v1.8.2", Assumed: "v1.8.2", Source: model.SourceFlag}, "set by --controller-version"},
		{model.ControllerVersion{Detected: "v1.8.1", Assumed: "v1.8.2", Source: model.SourceFlag}, "set by --controller-version v1.8.1"},
		{model.ControllerVersion{Detected: "v1.8.2", Assumed: "v1.8.2", Source: model.SourceImageTag, From: from}, "read from the image tag of " + from},
		{model.ControllerVersion{Detected: "v1.10.2", Assumed: "v1.10.2", Source: model.SourceLabel, From: from}, "read from the app.kubernetes.io/version label of " + from},
		{model.ControllerVersion{Assumed: "v1.10.2", Source: model.SourceUnknown}, "assumed: no controller found"},
		{model.ControllerVersion{Assumed: "v1.10.2", Source: model.SourceAmbiguous}, "assumed: controllers of several versions run"},
		{model.ControllerVersion{Detected: "latest", Assumed: "v1.10.2", Source: model.SourceUnreadable, From: from}, "assumed: the image tag is not a version (latest on " + from + ")"},
	} {
		if got := controllerSource(tc.cv); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.cv.Source, got, tc.want)
		}
	}
}
