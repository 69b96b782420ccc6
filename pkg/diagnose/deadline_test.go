package diagnose

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// progressAt sets the replaced canary's Progressing lastUpdateTime (the
// snapshot is taken at 00:34:08, the canary's pod not Ready).
func progressAt(at string) func(*unstructured.Unstructured) {
	return onKind("Rollout", "", func(u *unstructured.Unstructured) {
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			if m := c.(map[string]interface{}); m["type"] == "Progressing" {
				m["lastUpdateTime"] = at
			}
		}
		_ = unstructured.SetNestedSlice(u.Object, conds, "status", "conditions")
	})
}

// scaleDownDeadline puts a scale-down-deadline on the older revision.
func scaleDownDeadline(at string) func(*unstructured.Unstructured) {
	return onKind("ReplicaSet", stallOlder, set([]string{"metadata", "annotations", "scale-down-deadline"}, at))
}

var deadlineCases = []struct {
	name  string
	id    string
	edit  func(*unstructured.Unstructured)
	fires bool
	sev   rules.Severity
	says  string
}{
	{name: "example: 26 s without progress, a normal wait between pods", id: "RD170"},
	{name: "4 minutes without progress, no progressDeadlineAbort", id: "RD170", edit: progressAt("2026-12-07T00:30:08Z"), fires: true, sev: rules.Info,
		says: "no progress for 4m0s (progressDeadlineSeconds 600): unless a pod of app-7977f4bd87 turns ready or available, or the step moves, by 2026-12-07T00:40:08Z (in 6m0s) the update is ProgressDeadlineExceeded: the Rollout turns Degraded, and nothing else changes (progressDeadlineAbort is not set)"},
	{name: "with progressDeadlineAbort: the controller aborts", id: "RD170", fires: true, sev: rules.Warning,
		edit: both(progressAt("2026-12-07T00:30:08Z"), onKind("Rollout", "", set([]string{"spec", "progressDeadlineAbort"}, true))),
		says: "and, as progressDeadlineAbort is set, the controller aborts it: traffic back on the stable app-65bd9c766b, app-7977f4bd87 scaled down"},
	{name: "the deadline passed: the controller's queued pass is due", id: "RD170", fires: true, sev: rules.Info,
		edit: both(progressAt("2026-12-07T00:30:08Z"), onKind("Rollout", "", set([]string{"spec", "progressDeadlineSeconds"}, int64(200)))),
		says: "by 2026-12-07T00:33:28Z (40s ago: the controller put the Rollout back in its queue for then)"},
	{name: "spec.paused stops the clock", id: "RD170", edit: both(progressAt("2026-12-07T00:30:08Z"), onKind("Rollout", "", set([]string{"spec", "paused"}, true)))},
	{name: "an old ReplicaSet's scale-down still to come stops the clock", id: "RD170", edit: both(progressAt("2026-12-07T00:30:08Z"), scaleDownDeadline("2026-12-07T00:40:00Z"))},
	{name: "a stale scale-down deadline: RD171 says the deadline never fires", id: "RD170", edit: both(progressAt("2026-12-07T00:30:08Z"), scaleDownDeadline("2026-12-07T00:20:00Z"))},

	{name: "example: no scale-down deadline", id: "RD171"},
	{name: "a scale-down deadline still to come", id: "RD171", edit: both(progressAt("2026-12-07T00:30:08Z"), scaleDownDeadline("2026-12-07T00:40:00Z"))},
	{name: "a stale scale-down deadline on the older revision", id: "RD171", fires: true, sev: rules.Warning,
		edit: both(progressAt("2026-12-07T00:10:08Z"), scaleDownDeadline("2026-12-07T00:20:00Z"), onKind("Rollout", "", set([]string{"spec", "progressDeadlineAbort"}, true))),
		says: "ReplicaSet app-5998b8ffff (1 pods) still carries scale-down-deadline 2026-12-07T00:20:00Z, 14m8s past, while the update waits on app-7977f4bd87 (0/1 available, no progress for 24m0s against progressDeadlineSeconds 600)"},
}

func TestDeadlineRules(t *testing.T) {
	for _, ver := range upstream.Modeled {
		for _, c := range deadlineCases {
			r := diagnoseReplaced(t, ver, c.edit)
			f := findingOf(r, c.id)
			if (f != nil) != c.fires {
				t.Errorf("%s %s: %s fires=%v, want %v; findings %v", ver, c.name, c.id, f != nil, c.fires, findingIDs(r))
				continue
			}
			if f == nil {
				continue
			}
			if f.Severity != c.sev || !strings.Contains(f.Message, c.says) {
				t.Errorf("%s %s: %s %s\n  %s\nwant %s and\n  %s", ver, c.name, c.id, f.Severity, f.Message, c.sev, c.says)
			}
			if len(f.Cites) == 0 {
				t.Errorf("%s %s: %s cites nothing", ver, c.name, c.id)
			}
			if c.id == "RD171" && (!strings.Contains(f.Message, "progressDeadlineAbort never aborts it") || !strings.Contains(f.Message, "hundreds of times a second")) {
				t.Errorf("%s %s: RD171 does not say what it costs: %s", ver, c.name, f.Message)
			}
		}
	}
}
