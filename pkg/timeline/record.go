package timeline

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// EventTTL is how long the API server keeps an Event after its last
// occurrence unless the cluster says otherwise: kube-apiserver's
// --event-ttl defaults to one hour
// (https://kubernetes.io/docs/reference/command-line-tools-reference/kube-apiserver/).
const EventTTL = time.Hour

// replayed are the kinds a timeline replays: everything but what grows
// with the pods (the pod checks are not replayed at every moment).
func replayed(_, kind string) bool {
	switch kind {
	case "Pod", "EndpointSlice", "Lease", "Node":
		return false
	}
	return true
}

// routed are the kinds of the traffic path whose changes are points.
var routed = map[string]bool{"Service": true, "VirtualService": true, "DestinationRule": true, "Ingress": true, "TrafficSplit": true, "HTTPRoute": true}

// Record builds the timeline of a record at full resolution: a point at
// every change of the Rollout, its ReplicaSets, AnalysisRuns and traffic
// objects, each with the diagnosis of that moment, and an entry for every
// change a person follows, with its author.
func Record(rec *snapshot.Recording, namespace, name string, opt Options) (*Timeline, error) {
	if name == "" {
		namespace, name = rec.Header.TargetNamespace, rec.Header.TargetName
	}
	if name == "" {
		return nil, fmt.Errorf("the record names no Rollout: give its name")
	}
	t := &Timeline{APIVersion: APIVersion, Kind: "Timeline", Namespace: namespace, Name: name, Source: opt.Source,
		Resolution: FromRecord, From: rec.Start.UTC(), To: rec.Last.UTC(), Gaps: rec.Gaps}
	var (
		cv       model.ControllerVersion
		cvKnown  bool
		last     *Point
		sp       spans
		rss      = map[string]ReplicaSet{}
		events   = map[string]bool{}
		seenRoll bool
		oldest   time.Time
	)
	err := rec.Replay(replayed, func(s snapshot.ReplayStep, st *snapshot.ReplayState) error {
		switch s.Type {
		case snapshot.ChangeGap:
			t.Entries = append(t.Entries, Entry{At: s.Gap.From, Kind: KindGap, Object: s.Resource,
				Message: fmt.Sprintf("the record lost the changes of %s until %s: %s", s.Resource, s.Gap.To.UTC().Format("15:04:05.000Z"), s.Gap.Reason)})
			return nil
		case snapshot.ChangeEnd:
			t.Entries = append(t.Entries, Entry{At: s.At, Kind: KindRecord, Message: "record ended: " + s.Reason})
			return nil
		}
		u := s.Object
		if u == nil {
			u = s.Previous
		}
		if u == nil {
			return nil
		}
		kind := u.GetKind()
		if kind == "Event" {
			if s.Type == snapshot.ChangeDeleted {
				return nil // expired: what it said is already in
			}
			e, ok := eventEntry(u)
			key := fmt.Sprintf("%s/%d/%s", u.GetName(), e.Count, e.At)
			if ok && !events[key] {
				events[key] = true
				t.Entries = append(t.Entries, e)
				if oldest.IsZero() || e.At.Before(oldest) {
					oldest = e.At
				}
			}
			return nil
		}
		ours := u.GetNamespace() == namespace || namespace == ""
		switch {
		case kind == "Rollout":
			ours = ours && u.GetName() == name
		case kind == "ReplicaSet":
			ours = ours && ownedBy(u, "Rollout", name)
			if ours && s.Object != nil {
				rss[u.GetName()] = rsInfo(u)
			}
		case kind == "AnalysisRun":
			ours = ours && ownedBy(u, "Rollout", name)
		case routed[kind]:
		default:
			return nil
		}
		if !ours {
			return nil
		}
		var prevRouter *int64
		if last != nil {
			prevRouter = last.RouterWeight
		}
		p, rep, ok, err := diagnoseAt(st, namespace, name, opt, &cv, &cvKnown)
		if err != nil {
			return err
		}
		if s.Type != snapshot.ChangeListed {
			es := changeEntries(s, u)
			if routed[kind] && kind != "Service" && ok && !sameWeight(prevRouter, p.RouterWeight) {
				for i := range es {
					if es[i].Message == "routes changed" {
						es[i].Kind, es[i].Message = KindWeight, "canary weight "+pctOf(prevRouter)+" → "+pctOf(p.RouterWeight)
					}
				}
			}
			t.Entries = append(t.Entries, es...)
		}
		if !ok {
			return nil // the Rollout is not in the state (yet, or any more)
		}
		seenRoll = true
		p.At, p.ResourceVersion, p.Cause = s.At.UTC(), s.ResourceVersion, objName(u)
		if last != nil && samePoint(*last, p) {
			return nil
		}
		t.Series = append(t.Series, p)
		last = &t.Series[len(t.Series)-1]
		sp.update(p.At, p, rep)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !seenRoll {
		return nil, fmt.Errorf("rollout %q is not in the record", name)
	}
	t.Controller = cv
	t.Findings = sp.finish(t.To)
	t.ReplicaSets = sortedRS(rss)
	sortEntries(t.Entries)
	t.Entries = collapseEvents(t.Entries)
	t.Complete = recordCompleteness(rec, oldest, cv.Assumed)
	return t, nil
}

// diagnoseAt diagnoses the replay's state (ok false when the Rollout is not
// in it); the controller version is detected once, at the first state.
func diagnoseAt(st *snapshot.ReplayState, namespace, name string, opt Options, cv *model.ControllerVersion, known *bool) (Point, *diagnose.Report, bool, error) {
	snap := st.Snapshot()
	ro, err := snap.FindRollout(namespace, name)
	if err != nil {
		return Point{}, nil, false, nil
	}
	view, err := snap.View(ro)
	if err != nil {
		return Point{}, nil, false, nil
	}
	if !*known {
		if *cv, err = controllerVersion(snap, view, opt.ControllerVersion); err != nil {
			return Point{}, nil, false, err
		}
		*known = true
	}
	rep := diagnose.Run(view, *cv, diagnose.Options{NoPods: true})
	return pointOf(view, rep), rep, true, nil
}

func sameWeight(a, b *int64) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

func pctOf(w *int64) string {
	if w == nil {
		return "unknown"
	}
	return fmt.Sprintf("%d%%", *w)
}

// collapseEvents folds the Events one object got for one reason in the same
// second (a ReplicaSet creating twenty pods) into one entry.
func collapseEvents(es []Entry) []Entry {
	out := es[:0]
	more := 0
	for _, e := range es {
		if n := len(out); n > 0 && e.Kind == KindEvent && out[n-1].Kind == KindEvent && out[n-1].Object == e.Object &&
			out[n-1].At.Truncate(time.Second).Equal(e.At.Truncate(time.Second)) && reason(out[n-1].Message) == reason(e.Message) {
			out[n-1].Count += e.Count
			more++
			continue
		}
		if more > 0 {
			out[len(out)-1].Message += fmt.Sprintf(" (and %d more like it)", more)
			more = 0
		}
		out = append(out, e)
	}
	if more > 0 {
		out[len(out)-1].Message += fmt.Sprintf(" (and %d more like it)", more)
	}
	return out
}

// reason is an Event entry's reason (its message up to the colon).
func reason(msg string) string {
	if i := strings.Index(msg, ":"); i >= 0 {
		return msg[:i]
	}
	return msg
}

// changeEntries are the entries one change of the record makes, each with
// the change's author.
func changeEntries(s snapshot.ReplayStep, u *unstructured.Unstructured) []Entry {
	var es []Entry
	one := func(k EntryKind, msg string) {
		if k != "" && msg != "" {
			es = append(es, Entry{Kind: k, Message: msg})
		}
	}
	switch kind := u.GetKind(); {
	case kind == "Rollout":
		if s.Type == snapshot.ChangeDeleted {
			one(KindSpec, "deleted")
		} else {
			one(describeRollout(s.Previous, s.Object))
		}
	case kind == "ReplicaSet":
		one(describeReplicaSet(s.Type, s.Previous, s.Object))
	case kind == "Service":
		if s.Object != nil {
			one(describeService(s.Previous, s.Object))
		}
	case kind == "AnalysisRun":
		if s.Object != nil {
			es = append(es, describeRun(s.Type, s.Previous, s.Object)...)
		}
	case routed[kind]:
		if s.Object != nil && s.Previous != nil && routeChanged(s.Previous, s.Object) {
			one(KindTraffic, "routes changed")
		}
	}
	var by *Actor
	if s.Object != nil {
		if a, ok := author(s.Previous, s.Object); ok {
			by = &a
		}
	}
	for i := range es {
		if es[i].At.IsZero() {
			es[i].At = s.At.UTC()
		}
		es[i].Object, es[i].By, es[i].ResourceVersion = objName(u), by, s.ResourceVersion
	}
	return es
}

// routeChanged is true when a traffic object's spec changed (its weights
// are the series; the entry says who wrote them).
func routeChanged(a, b *unstructured.Unstructured) bool {
	sa, _, _ := unstructured.NestedFieldNoCopy(a.Object, "spec")
	sb, _, _ := unstructured.NestedFieldNoCopy(b.Object, "spec")
	return len(changedPaths(sa, sb, nil)) > 0
}

func ownedBy(u *unstructured.Unstructured, kind, name string) bool {
	for _, o := range u.GetOwnerReferences() {
		if o.Kind == kind && o.Name == name {
			return true
		}
	}
	return false
}

func sortedRS(m map[string]ReplicaSet) []ReplicaSet {
	out := make([]ReplicaSet, 0, len(m))
	for _, r := range m {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// recordCompleteness says what a record holds and from when.
func recordCompleteness(rec *snapshot.Recording, oldestEvent time.Time, ver upstream.Version) []Completeness {
	order := "in the API server's order (etcd revisions)"
	if !rec.RVOrder {
		order = "in the order they arrived (the resourceVersions are not etcd revisions)"
	}
	changes := fmt.Sprintf("every change of the Rollout, its ReplicaSets, pods, AnalysisRuns, Events and traffic objects from %s to %s, %s",
		rec.Start.UTC().Format(time.RFC3339), rec.Last.UTC().Format(time.RFC3339), order)
	if len(rec.Gaps) > 0 {
		var gs []string
		for _, g := range rec.Gaps {
			gs = append(gs, g.String())
		}
		changes += "; except the gaps: " + strings.Join(gs, "; ")
	}
	if rec.CutOff {
		changes += "; the record's last line was cut off (the recorder was stopped while writing it) and is left out"
	}
	if rec.Ended == "" {
		changes += "; the record has no end line: the recorder was killed, or is still running"
	}
	out := []Completeness{{What: "changes", From: rec.Start.UTC(), Note: changes}}
	ev := Completeness{What: "events before the record", From: rec.Start.Add(-EventTTL).UTC(),
		Note: "Events from before the record started are those the cluster still held then: the API server keeps an Event about an hour after its last occurrence (kube-apiserver --event-ttl, default 1h), so older ones may be gone"}
	if !oldestEvent.IsZero() {
		ev.Note += "; the oldest held is from " + oldestEvent.UTC().Format(time.RFC3339)
	}
	ev.Note += ". The controller's Events are not the whole story either: " + eventLimit + "; the record's changes are"
	ev.Cites = []upstream.Cite{upstream.At("rec.event-broadcaster", ver)}
	out = append(out, ev)
	for _, g := range rec.Header.Gaps {
		out = append(out, Completeness{What: g.Resource, Note: "not recorded: " + g.String()})
	}
	return out
}
