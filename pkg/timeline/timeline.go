// Package timeline rebuilds what happened to a Rollout, when, and who did
// it: from a record file (every change, with the diagnosis at each moment)
// or from what the cluster still holds (Events, ReplicaSet creations and
// revisions, condition transitions, AnalysisRun measurements, pause and
// abort times, managedFields). It is pure: a recording or a snapshot in, a
// Timeline out.
package timeline

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// APIVersion versions the JSON document.
const APIVersion = "rolloutdoctor.io/v1alpha1"

// Resolution says what a timeline is built from.
type Resolution string

// Resolutions.
const (
	// FromRecord: every change the API server made while a record ran.
	FromRecord Resolution = "record"
	// FromCluster: what the cluster still holds afterwards.
	FromCluster Resolution = "cluster"
)

// Timeline is a Rollout's history: the series of traffic weight against
// available pods per ReplicaSet, what happened and who did it, and which
// findings were active when.
type Timeline struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Namespace  string     `json:"namespace"`
	Name       string     `json:"name"`
	Source     string     `json:"source"`
	Resolution Resolution `json:"resolution"`
	// From and To bound what the timeline covers.
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// Controller is the controller version the diagnoses assumed.
	Controller model.ControllerVersion `json:"controller"`
	// Complete says, per source of history, from when on it is complete
	// and what it cannot hold.
	Complete []Completeness `json:"completeness"`
	// ReplicaSets are every revision seen, oldest first.
	ReplicaSets []ReplicaSet `json:"replicaSets"`
	// Series is the state at each change, in the apiserver's order: one
	// point per write of the Rollout, its ReplicaSets, runs and traffic
	// objects (record), or per weight or scale Event (cluster).
	Series []Point `json:"series"`
	// Entries is what happened, oldest first.
	Entries []Entry `json:"entries"`
	// Findings are the stretches each finding was active.
	Findings []FindingSpan `json:"findings,omitempty"`
	// Gaps are the stretches a record lost.
	Gaps []snapshot.RecordGap `json:"gaps,omitempty"`
	// Writes is, for what the cluster holds, the last write of each
	// manager to the Rollout and the objects it names.
	Writes []ObjectWrites `json:"lastWrites,omitempty"`
}

// Completeness is how far back one source of history reaches.
type Completeness struct {
	What string `json:"what"`
	// From is the earliest moment it is complete from (zero: it keeps no
	// history, only the latest state).
	From time.Time `json:"from,omitzero"`
	Note string    `json:"note"`
	// Cites back what Note says of the controller.
	Cites []upstream.Cite `json:"cites,omitempty"`
}

// ReplicaSet is one revision of the Rollout.
type ReplicaSet struct {
	Name     string    `json:"name"`
	Hash     string    `json:"podTemplateHash"`
	Revision string    `json:"revision,omitempty"`
	Created  time.Time `json:"created"`
	Images   []string  `json:"images,omitempty"`
	// CreatedBy is the manager that created it (the controller, unless
	// someone created it by hand).
	CreatedBy string `json:"createdBy,omitempty"`
}

// Point is the state right after one change.
type Point struct {
	At time.Time `json:"at"`
	// ResourceVersion is the change's (the etcd revision of the write).
	ResourceVersion string `json:"resourceVersion,omitempty"`
	// Cause names the object whose change this is ("Rollout shop/app").
	Cause string `json:"cause,omitempty"`
	// Weight is the canary weight the Rollout's status records (what
	// diagnose reads); RouterWeight the one the router holds (nil when
	// there is none to read). Both nil when unknown.
	Weight       *int32 `json:"canaryWeight,omitempty"`
	RouterWeight *int64 `json:"routerWeight,omitempty"`
	// Canary and Stable are the hashes the weights go to.
	Canary string `json:"canaryHash,omitempty"`
	Stable string `json:"stableHash,omitempty"`
	// Replicas are each ReplicaSet's counts, by hash (nil when unknown:
	// the cluster keeps no history of availability).
	Replicas []Count `json:"replicaSets,omitempty"`
	Step     *int32  `json:"stepIndex,omitempty"`
	Phase    string  `json:"phase,omitempty"`
	Aborted  bool    `json:"aborted,omitempty"`
	Paused   bool    `json:"paused,omitempty"`
	// Findings are the IDs of the findings active at this moment
	// (Rollout findings; the pod checks are not replayed).
	Findings []string       `json:"findings,omitempty"`
	Worst    rules.Severity `json:"worst,omitempty"`
	// Needs is how many available canary pods the weight needs; Short is
	// set when the canary has fewer.
	Needs int32 `json:"needs,omitempty"`
	Short bool  `json:"short,omitempty"`
	// SizesOnly marks a point rebuilt from the controller's Events: the
	// weight and the sizes it set are known, availability is not.
	SizesOnly bool `json:"sizesOnly,omitempty"`
}

// Count is one ReplicaSet's replicas at a moment.
type Count struct {
	Hash      string `json:"podTemplateHash"`
	Spec      int32  `json:"specReplicas"`
	Available int32  `json:"availableReplicas"`
}

// Count returns the counts of hash (ok false when absent).
func (p Point) Count(hash string) (Count, bool) {
	for _, c := range p.Replicas {
		if c.Hash == hash {
			return c, true
		}
	}
	return Count{}, false
}

// EntryKind sorts entries.
type EntryKind string

// Entry kinds.
const (
	KindEvent     EntryKind = "event"
	KindRevision  EntryKind = "revision"
	KindSpec      EntryKind = "spec"
	KindStatus    EntryKind = "status"
	KindCondition EntryKind = "condition"
	KindAnalysis  EntryKind = "analysis"
	KindPause     EntryKind = "pause"
	KindAbort     EntryKind = "abort"
	KindWeight    EntryKind = "weight"
	KindScale     EntryKind = "scale"
	KindTraffic   EntryKind = "traffic"
	KindWrite     EntryKind = "write"
	KindGap       EntryKind = "gap"
	KindRecord    EntryKind = "record"
)

// Entry is one thing that happened.
type Entry struct {
	At   time.Time `json:"at"`
	Kind EntryKind `json:"kind"`
	// Object is what it happened to ("Rollout shop/app").
	Object  string `json:"object,omitempty"`
	Message string `json:"message"`
	// By is who did it, when known.
	By *Actor `json:"by,omitempty"`
	// Count is an Event's count.
	Count int32 `json:"count,omitempty"`
	// Warning marks an Event of type Warning or a failed measurement.
	Warning bool `json:"warning,omitempty"`
	// ResourceVersion is the change's, in a record.
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

// Human is true for a change made by someone other than a controller.
func (e Entry) Human() bool { return e.By != nil && e.By.Kind == ActorPerson }

// FindingSpan is a stretch one finding was active.
type FindingSpan struct {
	ID       string         `json:"id"`
	Severity rules.Severity `json:"severity"`
	From     time.Time      `json:"from"`
	To       time.Time      `json:"to"`
	// Open: still active at the end of the timeline.
	Open bool `json:"open,omitempty"`
	// Message is the finding's message when it first fired; Worst the
	// message at the worst moment of the stretch (the fewest available
	// pods under the highest weight, for a capacity finding).
	Message string `json:"message"`
	Worst   string `json:"worstMessage,omitempty"`
	// WorstAt is that moment.
	WorstAt time.Time `json:"worstAt,omitzero"`
}

// ObjectWrites is the last write of each manager to one object.
type ObjectWrites struct {
	Object string  `json:"object"`
	Writes []Write `json:"writes"`
}

// Options tune a timeline.
type Options struct {
	// Source describes the input ("record incident.rec").
	Source string
	// ControllerVersion is --controller-version ("" reads it from the
	// snapshot).
	ControllerVersion string
}

// controllerVersion detects the version as diagnose does.
func controllerVersion(snap *snapshot.Snapshot, v *snapshot.View, flag string) (model.ControllerVersion, error) {
	gap := ""
	for _, g := range snap.Header.Gaps {
		if g.Resource == "deployments.apps" {
			gap = g.String()
		}
	}
	return model.DetectVersionFor(flag, v, gap)
}

// pointOf is the state of a diagnosed view.
func pointOf(v *snapshot.View, rep *diagnose.Report) Point {
	p := Point{Phase: rep.State.Phase, Aborted: rep.State.Aborted, Paused: rep.State.Paused}
	step := rep.State.StepIndex
	if rep.State.Strategy == "canary" {
		p.Step = &step
	}
	ro := v.Rollout
	p.Stable = ro.Status.StableRS
	p.Canary = ro.Status.CurrentPodHash
	if t := rep.Traffic; t != nil {
		w := t.CanaryWeight
		p.Weight = &w
		if t.CanaryHash != "" {
			p.Canary = t.CanaryHash
		}
		if rep.State.Replicas > 0 && t.MaxWeight > 0 && w > 0 {
			p.Needs = int32((int64(w)*int64(rep.State.Replicas) + int64(t.MaxWeight) - 1) / int64(t.MaxWeight))
			// ReplicaSets not read are not a canary without pods.
			p.Short = rep.ReplicaSetsUnread == nil && t.CanaryAvailable < p.Needs
		}
	}
	// The weight the router's objects apply, as diagnose read them (any
	// router, not only Istio).
	if t := rep.Traffic; t != nil && t.RouterWeight != nil {
		cw := int64(*t.RouterWeight)
		p.RouterWeight = &cw
	}
	for _, r := range v.ReplicaSets {
		if r == nil {
			continue
		}
		c := Count{Hash: r.Labels[v1alpha1.DefaultRolloutUniqueLabelKey], Available: r.Status.AvailableReplicas}
		if r.Spec.Replicas != nil {
			c.Spec = *r.Spec.Replicas
		}
		p.Replicas = append(p.Replicas, c)
	}
	for _, f := range rep.Findings {
		if f.PodCheck() {
			continue
		}
		p.Findings = append(p.Findings, f.ID)
		if f.Severity > p.Worst {
			p.Worst = f.Severity
		}
	}
	return p
}

// samePoint is true when nothing a reader sees differs.
func samePoint(a, b Point) bool {
	return fmt.Sprint(a.Weight, a.RouterWeight, a.Canary, a.Stable, a.Replicas, a.Step, a.Phase, a.Aborted, a.Paused, a.Findings) ==
		fmt.Sprint(b.Weight, b.RouterWeight, b.Canary, b.Stable, b.Replicas, b.Step, b.Phase, b.Aborted, b.Paused, b.Findings)
}

// spans follows findings across points.
type spans struct {
	open map[string]*FindingSpan
	all  []*FindingSpan
	// worst is, per open span, the point it was worst at.
	worst map[string]Point
}

func (s *spans) update(at time.Time, p Point, rep *diagnose.Report) {
	if s.open == nil {
		s.open, s.worst = map[string]*FindingSpan{}, map[string]Point{}
	}
	active := map[string]rules.Finding{}
	for _, f := range rep.Findings {
		if !f.PodCheck() {
			if _, dup := active[f.ID]; !dup {
				active[f.ID] = f
			}
		}
	}
	for id, sp := range s.open {
		if _, ok := active[id]; !ok {
			sp.To = at
			delete(s.open, id)
		}
	}
	for id, f := range active {
		sp, ok := s.open[id]
		if !ok {
			sp = &FindingSpan{ID: id, Severity: f.Severity, From: at, Message: f.Message}
			s.open[id] = sp
			s.all = append(s.all, sp)
		}
		if f.Severity > sp.Severity {
			sp.Severity = f.Severity
		}
		if w, ok := s.worst[id]; !ok || worse(p, w) {
			s.worst[id] = p
			sp.Worst, sp.WorstAt = f.Message, at
		}
		sp.To = at
	}
}

// worse is true when p puts more weight on fewer canary pods than q.
func worse(p, q Point) bool {
	pw, qw := int32(0), int32(0)
	if p.Weight != nil {
		pw = *p.Weight
	}
	if q.Weight != nil {
		qw = *q.Weight
	}
	if pw != qw {
		return pw > qw
	}
	pa, _ := p.Count(p.Canary)
	qa, _ := q.Count(q.Canary)
	return pa.Available < qa.Available
}

func (s *spans) finish(end time.Time) []FindingSpan {
	out := make([]FindingSpan, 0, len(s.all))
	for _, sp := range s.all {
		if _, ok := s.open[sp.ID]; ok && s.open[sp.ID] == sp {
			sp.To, sp.Open = end, true
		}
		out = append(out, *sp)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].From.Equal(out[j].From) {
			return out[i].From.Before(out[j].From)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// objName is "Kind namespace/name".
func objName(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return u.GetKind() + " " + u.GetName()
	}
	return u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
}

// eventEntry is an Event as an entry at its last occurrence.
func eventEntry(u *unstructured.Unstructured) (Entry, bool) {
	e := &corev1.Event{}
	if snapshot.Convert(u, e) != nil {
		return Entry{}, false
	}
	at := snapshot.EventTime(e).UTC()
	obj := e.InvolvedObject.Kind + " " + e.InvolvedObject.Namespace + "/" + e.InvolvedObject.Name
	msg := e.Reason
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return Entry{At: at, Kind: KindEvent, Object: obj, Message: msg, Count: e.Count, Warning: e.Type == corev1.EventTypeWarning}, true
}

// sortEntries orders entries by time, keeping the order they were made in
// for equal times.
func sortEntries(es []Entry) {
	sort.SliceStable(es, func(i, j int) bool { return es[i].At.Before(es[j].At) })
}

// rsInfo describes a ReplicaSet.
func rsInfo(u *unstructured.Unstructured) ReplicaSet {
	r := ReplicaSet{Name: u.GetName(), Hash: u.GetLabels()[v1alpha1.DefaultRolloutUniqueLabelKey],
		Revision: u.GetAnnotations()["rollout.argoproj.io/revision"], Created: u.GetCreationTimestamp().Time.UTC()}
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	for _, c := range cs {
		if m, ok := c.(map[string]interface{}); ok {
			if img, ok := m["image"].(string); ok {
				r.Images = append(r.Images, img)
			}
		}
	}
	if a, ok := author(nil, u); ok {
		r.CreatedBy = a.Manager
	}
	return r
}

// imagesOf is a Rollout's template images, for a spec change in words.
func imagesOf(u *unstructured.Unstructured) string {
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	var out []string
	for _, c := range cs {
		if m, ok := c.(map[string]interface{}); ok {
			if img, ok := m["image"].(string); ok {
				out = append(out, img)
			}
		}
	}
	return strings.Join(out, ", ")
}

// Worst is the moment the most traffic sat on the fewest available canary
// pods; ok is false when the canary never had fewer than its weight needs.
func (t *Timeline) Worst() (Point, bool) {
	var best Point
	found := false
	for _, p := range t.Series {
		if !p.Short {
			continue
		}
		if !found || worse(p, best) {
			best, found = p, true
		}
	}
	return best, found
}

// Scale is the largest size any ReplicaSet had: what availability lanes
// are drawn against.
func (t *Timeline) Scale() int32 {
	var n int32
	for _, p := range t.Series {
		for _, c := range p.Replicas {
			n = max(n, c.Spec, c.Available)
		}
	}
	return n
}
