package timeline

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// Cluster builds the timeline the cluster can still tell of a Rollout (a
// snapshot read by gather.History): when each ReplicaSet was created, the
// last transition of each condition, pause and abort times, AnalysisRun
// measurements, the Events still held, and each manager's last write. The
// series has a point per weight or scale Event the controller wrote (the
// sizes it set; availability is not kept) and the state now, diagnosed.
func Cluster(snap *snapshot.Snapshot, namespace, name string, opt Options) (*Timeline, error) {
	ro, err := snap.FindRollout(namespace, name)
	if err != nil {
		return nil, err
	}
	view, err := snap.View(ro)
	if err != nil {
		return nil, fmt.Errorf("reading the snapshot: %w", err)
	}
	cv, err := controllerVersion(snap, view, opt.ControllerVersion)
	if err != nil {
		return nil, err
	}
	now := snap.Now().UTC()
	rep := diagnose.Run(view, cv, diagnose.Options{NoPods: true})
	t := &Timeline{APIVersion: APIVersion, Kind: "Timeline", Namespace: ro.Namespace, Name: ro.Name, Source: opt.Source,
		Resolution: FromCluster, To: now, Controller: cv}
	var events []*corev1.Event
	var rsObjs []*unstructured.Unstructured
	for _, u := range snap.Objects() {
		switch u.GetKind() {
		case "Event":
			e := &corev1.Event{}
			if snapshot.Convert(u, e) == nil {
				events = append(events, e)
				if en, ok := eventEntry(u); ok {
					t.Entries = append(t.Entries, en)
				}
			}
		case "ReplicaSet":
			if ownedBy(u, "Rollout", ro.Name) && u.GetNamespace() == ro.Namespace {
				rsObjs = append(rsObjs, u)
				r := rsInfo(u)
				t.ReplicaSets = append(t.ReplicaSets, r)
				msg := "created"
				if len(r.Images) > 0 {
					msg += ", image " + strings.Join(r.Images, ", ")
				}
				if r.Revision != "" {
					// The annotation moves when a revision comes back.
					msg += "; revision " + r.Revision + " now"
				}
				e := Entry{At: r.Created, Kind: KindRevision, Object: objName(u), Message: msg}
				if a, ok := author(nil, u); ok {
					e.By = &a
				}
				t.Entries = append(t.Entries, e)
			}
		case "AnalysisRun":
			if ownedBy(u, "Rollout", ro.Name) {
				t.Entries = append(t.Entries, runEntries(u)...)
			}
		}
		if w := lastWrites(u); len(w) > 0 && writesMatter(u, ro) {
			t.Writes = append(t.Writes, ObjectWrites{Object: objName(u), Writes: w})
			for _, x := range w {
				if x.Actor.Kind == ActorPerson && !x.At.IsZero() {
					a := x.Actor
					t.Entries = append(t.Entries, Entry{At: x.At, Kind: KindWrite, Object: objName(u), By: &a,
						Message: "last write (" + writeWhat(x) + ")"})
				}
			}
		}
	}
	t.Entries = append(t.Entries, rolloutEntries(ro)...)
	sort.Slice(t.ReplicaSets, func(i, j int) bool { return t.ReplicaSets[i].Created.Before(t.ReplicaSets[j].Created) })
	sortEntries(t.Entries)
	t.Entries = collapseEvents(t.Entries)
	t.Series = eventSeries(events, ro, t.ReplicaSets)
	p := pointOf(view, rep)
	p.At, p.ResourceVersion, p.Cause = now, ro.ResourceVersion, "now"
	t.Series = append(t.Series, p)
	var sp spans
	sp.update(now, p, rep)
	t.Findings = sp.finish(now)
	t.From = now
	for _, e := range t.Entries {
		if !e.At.IsZero() && e.At.Before(t.From) {
			t.From = e.At
		}
	}
	if len(t.Series) > 0 && t.Series[0].At.Before(t.From) {
		t.From = t.Series[0].At
	}
	t.Complete = clusterCompleteness(now, events, t.ReplicaSets, cv.Assumed)
	// A source whose list failed says so instead of how far it reaches.
	for i, c := range t.Complete {
		if res, ok := listedSource[c.What]; ok {
			if g, unread := snap.Header.ListGap(res, ro.Namespace); unread {
				t.Complete[i] = Completeness{What: c.What, Note: "not read: " + g.String()}
			}
		}
	}
	return t, nil
}

// writesMatter picks the objects whose managers' last writes a person asks
// about: the Rollout and the objects it names (not Events, runs or the
// controller's own Deployment).
func writesMatter(u *unstructured.Unstructured, ro *v1alpha1.Rollout) bool {
	switch u.GetKind() {
	case "Rollout":
		return u.GetName() == ro.Name
	case "ReplicaSet", "Service", "VirtualService", "DestinationRule", "Ingress", "TrafficSplit", "HTTPRoute":
		return u.GetNamespace() == ro.Namespace
	}
	return false
}

// writeWhat names a write by the fields it owns, and the kubectl argo
// rollouts verb those fields mean when they are its.
func writeWhat(w Write) string {
	fields := strings.Join(w.Fields, ", ")
	if w.Subresource != "" {
		fields = w.Subresource + ": " + fields
	}
	if w.Actor.Manager != "kubectl-argo-rollouts" {
		return fields
	}
	var verbs []string
	for _, f := range w.Fields {
		switch f {
		case "status.abort":
			verbs = append(verbs, "abort or retry")
		case "status.promoteFull":
			verbs = append(verbs, "promote --full")
		case "status.pauseConditions", "spec.paused", "status.controllerPause":
			verbs = append(verbs, "promote or pause")
		case "spec.template":
			verbs = append(verbs, "undo or set image")
		case "spec.restartAt":
			verbs = append(verbs, "restart")
		}
	}
	if len(verbs) == 0 {
		return fields
	}
	return fields + "; as " + strings.Join(dedupe(verbs), ", ") + " sets them"
}

func dedupe(ss []string) []string {
	seen := map[string]bool{}
	out := ss[:0]
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// rolloutEntries are the times the Rollout's status keeps: the last
// transition of each condition, when each pause began, when it aborted.
func rolloutEntries(ro *v1alpha1.Rollout) []Entry {
	obj := "Rollout " + ro.Namespace + "/" + ro.Name
	var out []Entry
	for _, c := range ro.Status.Conditions {
		if c.LastTransitionTime.IsZero() {
			continue
		}
		msg := fmt.Sprintf("%s %s (%s)", c.Type, c.Status, c.Reason)
		if c.Message != "" {
			msg += ": " + c.Message
		}
		out = append(out, Entry{At: c.LastTransitionTime.Time.UTC(), Kind: KindCondition, Object: obj, Message: msg,
			Warning: c.Status == corev1.ConditionFalse && (c.Type == v1alpha1.RolloutProgressing || c.Type == v1alpha1.RolloutHealthy)})
	}
	for _, p := range ro.Status.PauseConditions {
		out = append(out, Entry{At: p.StartTime.Time.UTC(), Kind: KindPause, Object: obj, Message: "paused (" + string(p.Reason) + ")"})
	}
	if a := ro.Status.AbortedAt; a != nil {
		msg := "aborted"
		if ro.Status.Message != "" {
			msg += ": " + ro.Status.Message
		}
		out = append(out, Entry{At: a.Time.UTC(), Kind: KindAbort, Object: obj, Message: msg, Warning: true})
	}
	return out
}

// runEntries are an AnalysisRun's times: started, each measurement, done.
func runEntries(u *unstructured.Unstructured) []Entry {
	ar := &v1alpha1.AnalysisRun{}
	if snapshot.Convert(u, ar) != nil {
		return nil
	}
	obj := objName(u)
	out := []Entry{{At: ar.CreationTimestamp.Time.UTC(), Kind: KindAnalysis, Object: obj, Message: "started"}}
	for _, m := range ar.Status.MetricResults {
		for _, ms := range m.Measurements {
			e := Entry{Kind: KindAnalysis, Object: obj, Message: fmt.Sprintf("metric %s measured %s", m.Name, ms.Phase),
				Warning: ms.Phase == v1alpha1.AnalysisPhaseFailed || ms.Phase == v1alpha1.AnalysisPhaseError}
			if ms.Value != "" {
				e.Message += " (value " + ms.Value + ")"
			}
			if ms.Message != "" {
				e.Message += ": " + ms.Message
			}
			switch {
			case ms.FinishedAt != nil:
				e.At = ms.FinishedAt.Time.UTC()
			case ms.StartedAt != nil:
				e.At = ms.StartedAt.Time.UTC()
			default:
				continue
			}
			out = append(out, e)
		}
	}
	if ar.Status.CompletedAt != nil {
		msg := "completed " + string(ar.Status.Phase)
		if ar.Status.Message != "" {
			msg += ": " + ar.Status.Message
		}
		out = append(out, Entry{At: ar.Status.CompletedAt.Time.UTC(), Kind: KindAnalysis, Object: obj, Message: msg,
			Warning: ar.Status.Phase != v1alpha1.AnalysisPhaseSuccessful})
	}
	return out
}

var (
	// trafficWeightRe reads the controller's TrafficWeightUpdated message
	// ("Traffic weight updated from 5 to 100", "… updated to 0").
	trafficWeightRe = regexp.MustCompile(`(?:from \d+ )?to (\d+)`)
	// scalingRe reads its ScalingReplicaSet message ("Scaled up
	// ReplicaSet app-5f6c (revision 7) from 0 to 20").
	scalingRe = regexp.MustCompile(`ReplicaSet (\S+) \(revision \d+\) from \d+ to (\d+)`)
)

// eventSeries is the weights and sizes the controller's Events tell, in
// time order: what the cluster keeps of the series (availability is not
// kept, so those points carry sizes only).
func eventSeries(events []*corev1.Event, ro *v1alpha1.Rollout, rss []ReplicaSet) []Point {
	hashOf := map[string]string{}
	for _, r := range rss {
		hashOf[r.Name] = r.Hash
	}
	type change struct {
		at     time.Time
		weight *int32
		hash   string
		spec   int32
	}
	var cs []change
	for _, e := range events {
		if e.InvolvedObject.Kind != "Rollout" || e.InvolvedObject.Name != ro.Name {
			continue
		}
		times := []time.Time{snapshot.EventTime(e)}
		if !e.FirstTimestamp.IsZero() && !e.FirstTimestamp.Time.Equal(times[0]) {
			times = append(times, e.FirstTimestamp.Time)
		}
		switch e.Reason {
		case "TrafficWeightUpdated":
			m := trafficWeightRe.FindStringSubmatch(e.Message)
			if m == nil {
				continue
			}
			n, err := strconv.ParseInt(m[1], 10, 32)
			if err != nil {
				continue
			}
			w := int32(n)
			for _, at := range times {
				cs = append(cs, change{at: at, weight: &w})
			}
		case "ScalingReplicaSet":
			m := scalingRe.FindStringSubmatch(e.Message)
			if m == nil || hashOf[m[1]] == "" {
				continue
			}
			n, err := strconv.ParseInt(m[2], 10, 32)
			if err != nil {
				continue
			}
			for _, at := range times {
				cs = append(cs, change{at: at, hash: hashOf[m[1]], spec: int32(n)})
			}
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].at.Before(cs[j].at) })
	var out []Point
	var weight *int32
	specs := map[string]int32{}
	for _, c := range cs {
		if c.weight != nil {
			weight = c.weight
		} else {
			specs[c.hash] = c.spec
		}
		p := Point{At: c.at.UTC(), Cause: "Event", Weight: weight, SizesOnly: true}
		for _, r := range rss {
			if s, ok := specs[r.Hash]; ok {
				p.Replicas = append(p.Replicas, Count{Hash: r.Hash, Spec: s})
			}
		}
		out = append(out, p)
	}
	return out
}

// listedSource is the resource each listed source of clusterCompleteness
// is read from.
var listedSource = map[string]string{"events": "events", "revisions": "replicasets.apps"}

// clusterCompleteness says how far back each source reaches.
func clusterCompleteness(now time.Time, events []*corev1.Event, rss []ReplicaSet, ver upstream.Version) []Completeness {
	ev := Completeness{What: "events", From: now.Add(-EventTTL),
		Note: "the API server keeps an Event about an hour after its last occurrence (kube-apiserver --event-ttl, default 1h): none older than that is left"}
	var oldest time.Time
	for _, e := range events {
		if t := snapshot.EventTime(e); oldest.IsZero() || t.Before(oldest) {
			oldest = t
		}
	}
	if !oldest.IsZero() {
		ev.Note += "; the oldest held is from " + oldest.UTC().Format(time.RFC3339)
	}
	ev.Note += ". Even within the hour they are not the whole story: " + eventLimit
	ev.Cites = []upstream.Cite{upstream.At("rec.event-broadcaster", ver)}
	out := []Completeness{ev}
	rs := Completeness{What: "revisions", Note: "the ReplicaSets the controller has not deleted (revisionHistoryLimit, default 10): each one's creation time and revision"}
	if len(rss) > 0 {
		rs.From = rss[0].Created
	}
	out = append(out,
		rs,
		Completeness{What: "conditions", Note: "only the last transition of each condition of the Rollout"},
		Completeness{What: "who acted", Note: "only each field manager's last write of each object (managedFields), not every write"},
		Completeness{What: "availability", Note: "not kept: the cluster holds only the current counts, and the series before now carries the sizes the controller's Events set. `kubectl rolloutdoctor record` keeps every change"},
	)
	return out
}

// eventLimit is the controller's Event rate limit in words (fact
// rec.event-broadcaster).
const eventLimit = "the controller sends at most 25 Events about one Rollout and then one every 5 minutes (client-go's event spam filter), so a second rollout soon after a first may leave none"
