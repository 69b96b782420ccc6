package timeline

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// A change becomes an entry when it changes what a person follows during
// an incident: the spec, the revision and step, the weight, the abort and
// pause flags, the phase and the conditions. The controller rewrites the
// status many times a second with nothing of that changed (observed
// generation, ready counts, update times); those writes become no entry.

// describeRollout says what changed from prev to cur, and the entry kind
// that fits best ("" when nothing a person follows changed).
func describeRollout(prev, cur *unstructured.Unstructured) (EntryKind, string) {
	if prev == nil {
		return "", ""
	}
	a, err1 := snapshot.TypedRollout(prev)
	b, err2 := snapshot.TypedRollout(cur)
	if err1 != nil || err2 != nil {
		return "", ""
	}
	var parts []string
	kind := EntryKind("")
	set := func(k EntryKind) {
		// The first salient kind names the entry.
		if kind == "" || kind == KindStatus || kind == KindCondition {
			kind = k
		}
	}
	if !reflect.DeepEqual(a.Spec.Template, b.Spec.Template) {
		if ia, ib := imagesOf(prev), imagesOf(cur); ia != ib {
			parts = append(parts, "pod template image "+ia+" → "+ib)
		} else {
			parts = append(parts, "pod template changed")
		}
		set(KindSpec)
	}
	if ra, rb := replicas(a), replicas(b); ra != rb {
		parts = append(parts, fmt.Sprintf("spec.replicas %d → %d", ra, rb))
		set(KindSpec)
	}
	if a.Spec.Paused != b.Spec.Paused {
		parts = append(parts, fmt.Sprintf("spec.paused %v → %v", a.Spec.Paused, b.Spec.Paused))
		set(KindPause)
	}
	if !reflect.DeepEqual(a.Spec.Strategy, b.Spec.Strategy) {
		parts = append(parts, "strategy changed")
		set(KindSpec)
	}
	if !reflect.DeepEqual(a.Spec.RestartAt, b.Spec.RestartAt) && b.Spec.RestartAt != nil {
		parts = append(parts, "restart requested")
		set(KindSpec)
	}
	as, bs := a.Status, b.Status
	if as.CurrentPodHash != bs.CurrentPodHash && bs.CurrentPodHash != "" {
		parts = append(parts, "revision "+orNone(as.CurrentPodHash)+" → "+bs.CurrentPodHash)
		set(KindRevision)
	}
	if as.StableRS != bs.StableRS && bs.StableRS != "" {
		parts = append(parts, "stable "+orNone(as.StableRS)+" → "+bs.StableRS)
		set(KindRevision)
	}
	if ia, ib := stepOf(as), stepOf(bs); ia != ib {
		s := "step " + ia + " → " + ib
		if b.Spec.Strategy.Canary != nil && bs.CurrentStepIndex != nil {
			if i := int(*bs.CurrentStepIndex); i >= 0 && i < len(b.Spec.Strategy.Canary.Steps) {
				s += " (" + model.StepString(b.Spec.Strategy.Canary.Steps[i]) + ")"
			}
		}
		parts = append(parts, s)
		set(KindStatus)
	}
	if wa, wb := weightOf(as), weightOf(bs); wa != wb {
		parts = append(parts, "weight "+wa+" → "+wb)
		set(KindWeight)
	}
	if as.Abort != bs.Abort {
		if bs.Abort {
			parts = append(parts, "aborted")
		} else {
			parts = append(parts, "abort cleared")
		}
		set(KindAbort)
	}
	if as.PromoteFull != bs.PromoteFull && bs.PromoteFull {
		parts = append(parts, "full promotion requested")
		set(KindStatus)
	}
	if pa, pb := pauses(as), pauses(bs); pa != pb {
		switch {
		case pb == "":
			parts = append(parts, "pause ended ("+pa+")")
		default:
			parts = append(parts, "paused ("+pb+")")
		}
		set(KindPause)
	}
	if as.ControllerPause != bs.ControllerPause {
		parts = append(parts, fmt.Sprintf("controllerPause %v → %v", as.ControllerPause, bs.ControllerPause))
		set(KindPause)
	}
	if as.Phase != bs.Phase {
		s := fmt.Sprintf("phase %s → %s", orNone(string(as.Phase)), bs.Phase)
		if bs.Message != "" {
			s += " (" + bs.Message + ")"
		}
		parts = append(parts, s)
		set(KindStatus)
	}
	for _, c := range conditionChanges(as.Conditions, bs.Conditions) {
		parts = append(parts, c)
		set(KindCondition)
	}
	return kind, strings.Join(parts, "; ")
}

func replicas(ro *v1alpha1.Rollout) int32 {
	if ro.Spec.Replicas == nil {
		return 1
	}
	return *ro.Spec.Replicas
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func stepOf(s v1alpha1.RolloutStatus) string {
	if s.CurrentStepIndex == nil {
		return "none"
	}
	return fmt.Sprint(*s.CurrentStepIndex)
}

func weightOf(s v1alpha1.RolloutStatus) string {
	if s.Canary.Weights == nil {
		return "none"
	}
	return fmt.Sprintf("%d%%", s.Canary.Weights.Canary.Weight)
}

func pauses(s v1alpha1.RolloutStatus) string {
	var out []string
	for _, p := range s.PauseConditions {
		out = append(out, string(p.Reason))
	}
	return strings.Join(out, ", ")
}

// conditionChanges lists the conditions whose status or reason changed.
func conditionChanges(a, b []v1alpha1.RolloutCondition) []string {
	before := map[v1alpha1.RolloutConditionType]v1alpha1.RolloutCondition{}
	for _, c := range a {
		before[c.Type] = c
	}
	var out []string
	for _, c := range b {
		p, ok := before[c.Type]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s %s (%s)", c.Type, c.Status, c.Reason))
		case p.Status != c.Status || p.Reason != c.Reason:
			out = append(out, fmt.Sprintf("%s %s (%s) → %s (%s)", c.Type, p.Status, p.Reason, c.Status, c.Reason))
		}
	}
	sort.Strings(out)
	return out
}

// describeReplicaSet says what changed in a ReplicaSet a person follows:
// its creation and its size (availability is the series).
func describeReplicaSet(typ snapshot.ChangeType, prev, cur *unstructured.Unstructured) (EntryKind, string) {
	switch {
	case typ == snapshot.ChangeAdded:
		r := rsInfo(cur)
		s := "created"
		if r.Revision != "" {
			s += " (revision " + r.Revision + ")"
		}
		if len(r.Images) > 0 {
			s += ", image " + strings.Join(r.Images, ", ")
		}
		return KindRevision, s
	case typ == snapshot.ChangeDeleted:
		return KindRevision, "deleted"
	case prev == nil:
		return "", ""
	}
	a, _, _ := unstructured.NestedInt64(prev.Object, "spec", "replicas")
	b, _, _ := unstructured.NestedInt64(cur.Object, "spec", "replicas")
	if a != b {
		return KindScale, fmt.Sprintf("scaled %d → %d", a, b)
	}
	return "", ""
}

// describeService says which pods a Service selects now.
func describeService(prev, cur *unstructured.Unstructured) (EntryKind, string) {
	if prev == nil {
		return "", ""
	}
	a, _, _ := unstructured.NestedString(prev.Object, "spec", "selector", v1alpha1.DefaultRolloutUniqueLabelKey)
	b, _, _ := unstructured.NestedString(cur.Object, "spec", "selector", v1alpha1.DefaultRolloutUniqueLabelKey)
	if a == b {
		return "", ""
	}
	return KindTraffic, "selects pods of " + orNone(b) + " (was " + orNone(a) + ")"
}

// describeRun says what changed in an AnalysisRun: started, its phase, and
// each new measurement.
func describeRun(typ snapshot.ChangeType, prev, cur *unstructured.Unstructured) []Entry {
	b := &v1alpha1.AnalysisRun{}
	if snapshot.Convert(cur, b) != nil {
		return nil
	}
	var out []Entry
	if typ == snapshot.ChangeAdded {
		out = append(out, Entry{Kind: KindAnalysis, Message: "started"})
	}
	a := &v1alpha1.AnalysisRun{}
	if prev != nil && snapshot.Convert(prev, a) != nil {
		return out
	}
	if prev != nil && a.Status.Phase != b.Status.Phase {
		msg := fmt.Sprintf("phase %s → %s", orNone(string(a.Status.Phase)), b.Status.Phase)
		if b.Status.Message != "" {
			msg += " (" + b.Status.Message + ")"
		}
		out = append(out, Entry{Kind: KindAnalysis, Message: msg, Warning: b.Status.Phase.Completed() && b.Status.Phase != v1alpha1.AnalysisPhaseSuccessful})
	}
	seen := map[string]int{}
	for _, m := range a.Status.MetricResults {
		seen[m.Name] = len(m.Measurements)
	}
	for _, m := range b.Status.MetricResults {
		for i := seen[m.Name]; i < len(m.Measurements); i++ {
			ms := m.Measurements[i]
			msg := fmt.Sprintf("metric %s measured %s", m.Name, ms.Phase)
			if ms.Value != "" {
				msg += " (value " + ms.Value + ")"
			}
			if ms.Message != "" {
				msg += ": " + ms.Message
			}
			e := Entry{Kind: KindAnalysis, Message: msg, Warning: ms.Phase == v1alpha1.AnalysisPhaseFailed || ms.Phase == v1alpha1.AnalysisPhaseError}
			if ms.FinishedAt != nil {
				e.At = ms.FinishedAt.Time.UTC()
			} else if ms.StartedAt != nil {
				e.At = ms.StartedAt.Time.UTC()
			}
			out = append(out, e)
		}
	}
	return out
}
