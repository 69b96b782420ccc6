package diagnose

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// withoutStable drops the example's stable ReplicaSet (revision 6), as
// `kubectl delete rs` does.
func withoutStable(ex *example) {
	var kept []*unstructured.Unstructured
	for _, o := range ex.objs {
		if o.GetKind() != "ReplicaSet" || o.GetName() != "checkout-api-6d8f7c9b5d" {
			kept = append(kept, o)
		}
	}
	ex.objs = kept
}

// initialDeployEvent adds the controller's event for revision rev promoted
// as an initial deploy.
func initialDeployEvent(rev string) func(*example) {
	return func(ex *example) {
		ex.objs = append(ex.objs, &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "v1", "kind": "Event",
			"metadata":       map[string]interface{}{"name": "checkout-api.initial", "namespace": "shop"},
			"involvedObject": map[string]interface{}{"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "name": "checkout-api", "namespace": "shop"},
			"reason":         "RolloutCompleted", "type": "Normal", "count": int64(1),
			"message":        "Rollout completed update to revision " + rev + " (5f6c8d7b9a): Initial deploy",
			"firstTimestamp": "2026-08-11T03:10:00Z", "lastTimestamp": "2026-08-11T03:10:00Z",
		}})
	}
}

var stableMissingCases = []struct {
	name  string
	more  func(*example)
	fires bool
	sev   rules.Severity
	says  string
}{
	{name: "example: the stable ReplicaSet is there"},
	{name: "the stable ReplicaSet deleted: the next pass promotes", more: withoutStable, fires: true, sev: rules.Critical,
		says: `status.stableRS names pod-template-hash 6d8f7c9b5d, but no ReplicaSet of the Rollout carries it (deleted?): on its next pass the controller has no stable and promotes checkout-api-5f6c8d7b9a (revision 7, 2/20 available) at once as an "Initial deploy" — the remaining steps and analysis are skipped, and it is sized to all 20 replicas`},
	{name: "afterwards: revision 7 promoted as an initial deploy", more: initialDeployEvent("7"), fires: true, sev: rules.Warning,
		says: `revision 7 (5f6c8d7b9a) was promoted at 2026-08-11T03:10:00Z (2m41s ago) as an "Initial deploy", without its remaining steps, analysis or availability gate`},
	{name: "revision 1's initial deploy is the first deploy", more: initialDeployEvent("1")},
}

func TestStableMissing(t *testing.T) {
	for _, ver := range upstream.Modeled {
		for _, c := range stableMissingCases {
			r := diagnoseEdited(t, ver, nil, c.more)
			f := findingOf(r, "RD169")
			if (f != nil) != c.fires {
				t.Errorf("%s %s: RD169 fires=%v, want %v; findings %v", ver, c.name, f != nil, c.fires, findingIDs(r))
				continue
			}
			if f == nil {
				continue
			}
			if f.Severity != c.sev || !strings.Contains(f.Message, c.says) {
				t.Errorf("%s %s: RD169 %s\n  %s\nwant %s and\n  %s", ver, c.name, f.Severity, f.Message, c.sev, c.says)
			}
			for _, k := range []upstream.Key{"uc.stable-rs-by-hash", "sy.initial-deploy-no-stable"} {
				if _, ok := cited(*f, k); !ok {
					t.Errorf("%s %s: RD169 does not cite %s", ver, c.name, k)
				}
			}
			if c.sev == rules.Critical && (r.Traffic == nil || !strings.Contains(r.Traffic.NextPromotes, "checkout-api-5f6c8d7b9a becomes stable on this pass (Initial deploy)")) {
				t.Errorf("%s %s: the next pass does not say it promotes: %+v", ver, c.name, r.Traffic)
			}
		}
	}
}
