package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
)

// The traffic line counts pods as the ReplicaSet table does (the set's own
// size), and says what the weight needs when the pods fall short of it.
func TestTrafficLineUsesReplicaSetCounts(t *testing.T) {
	rep := &diagnose.Report{Namespace: "shop", Name: "a",
		State: diagnose.State{Strategy: "canary", Replicas: 5, StepCount: 2},
		Traffic: &diagnose.Traffic{Router: "istio (host)", MaxWeight: 100, CanaryWeight: 20, StableWeight: 80,
			CanaryAvailable: 1, CanarySpec: 1, StableAvailable: 2, StableSpec: 5},
		Sets: []diagnose.ReplicaSetView{{Role: "stable", RS: model.RS{Name: "a-1", Available: 2, Spec: 5}}, {Role: "canary", RS: model.RS{Name: "a-2", Available: 1, Spec: 1}}},
	}
	var b bytes.Buffer
	if err := Human(&b, rep, NewStyles(&b, false), HumanOptions{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "stable 2/5 available ← 80% (needs 4 of 5)   canary 1/1 available ← 20%\n") {
		t.Errorf("traffic line:\n%s", out)
	}
	if !strings.Contains(out, "1/1 available") || strings.Contains(out, "1/5 available") {
		t.Errorf("the traffic line and the ReplicaSet table disagree:\n%s", out)
	}
}

// "Findings none" is never printed above a pod finding of the same report.
func TestNoFindingsNoneAboveAPodCritical(t *testing.T) {
	rep := &diagnose.Report{Namespace: "shop", Name: "a", State: diagnose.State{Strategy: "canary", Replicas: 3},
		Findings: []rules.Finding{{ID: "RD322", Severity: rules.Critical, Message: "1 pod reports Ready on a node that stopped reporting"}}}
	var b bytes.Buffer
	if err := Human(&b, rep, NewStyles(&b, false), HumanOptions{}); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.Contains(out, "  none\n") || !strings.Contains(out, "RD322") {
		t.Errorf("output:\n%s", out)
	}
}
