package timeline

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Who acted is read from managedFields: for every manager (the field
// manager a client names, else the first word of its user agent — the
// binary's name), the API server keeps the fields it set last and when
// (https://kubernetes.io/docs/reference/using-api/server-side-apply/#managers).
// Between two versions of an object, the manager whose entry moved is the
// author of the change; when several moved within the same second (the
// times have second precision), or none did, the author is the manager
// that owns the fields that changed.

// ActorKind sorts authors by what they are.
type ActorKind string

// Actor kinds.
const (
	// ActorController is the Argo Rollouts controller.
	ActorController ActorKind = "controller"
	// ActorKubernetes is a Kubernetes component (the ReplicaSet
	// controller, the kubelet, the EndpointSlice controller).
	ActorKubernetes ActorKind = "kubernetes"
	// ActorPerson is a person or a tool acting for one: kubectl, the
	// kubectl-argo-rollouts plugin, rolloutdoctor's escape, a GitOps
	// controller, a CI system — anything else that writes.
	ActorPerson ActorKind = "person-or-tool"
)

// Actor is who made a change.
type Actor struct {
	// Manager is the field manager as the API server recorded it.
	Manager string    `json:"manager"`
	Kind    ActorKind `json:"kind"`
	// As says what the manager is, in words ("kubectl patch").
	As string `json:"as,omitempty"`
}

// classify names a field manager.
func classify(manager string) Actor {
	a := Actor{Manager: manager, Kind: ActorPerson}
	m := strings.ToLower(manager)
	switch {
	case strings.HasPrefix(m, "rollouts-controller"), strings.HasPrefix(m, "argo-rollouts"):
		a.Kind, a.As = ActorController, "the Argo Rollouts controller"
	case strings.HasPrefix(m, "kube-controller-manager"), strings.HasPrefix(m, "kubelet"), strings.HasPrefix(m, "kube-scheduler"), strings.HasPrefix(m, "endpointslice"):
		a.Kind, a.As = ActorKubernetes, "Kubernetes ("+manager+")"
	case m == "kubectl-argo-rollouts":
		a.As = "kubectl argo rollouts"
	case m == "kubectl-rolloutdoctor":
		a.As = "kubectl rolloutdoctor escape"
	case m == "kubectl-client-side-apply":
		a.As = "kubectl apply"
	case m == "kubectl":
		a.As = "kubectl apply --server-side"
	case strings.HasPrefix(m, "kubectl-"):
		a.As = "kubectl " + strings.TrimPrefix(m, "kubectl-")
	case strings.HasPrefix(m, "argocd"):
		a.As = "Argo CD"
	case m == "helm":
		a.As = "Helm"
	case strings.Contains(m, "flux") || strings.HasPrefix(m, "kustomize-controller") || strings.HasPrefix(m, "helm-controller"):
		a.As = "Flux"
	}
	return a
}

func (a Actor) String() string {
	if a.As == "" || a.As == a.Manager {
		return a.Manager
	}
	return a.As + " (" + a.Manager + ")"
}

// entryKey identifies one managedFields entry.
func entryKey(e metav1.ManagedFieldsEntry) string {
	return e.Manager + "\x00" + string(e.Operation) + "\x00" + e.Subresource
}

// author finds who changed prev into cur (prev nil: who created cur). ok is
// false when nothing says (no managedFields, or nothing changed).
func author(prev, cur *unstructured.Unstructured) (Actor, bool) {
	curMF := cur.GetManagedFields()
	if len(curMF) == 0 {
		return Actor{}, false
	}
	if prev == nil {
		// The creator is the manager with the oldest write of the object
		// itself: a status write (the ReplicaSet controller's, in the
		// same second) cannot create it.
		var first *metav1.ManagedFieldsEntry
		for i, e := range curMF {
			if e.Subresource != "" {
				continue
			}
			if first == nil || e.Time != nil && (first.Time == nil || e.Time.Before(first.Time)) {
				first = &curMF[i]
			}
		}
		if first == nil {
			return Actor{}, false
		}
		return classify(first.Manager), true
	}
	before := map[string]metav1.ManagedFieldsEntry{}
	for _, e := range prev.GetManagedFields() {
		before[entryKey(e)] = e
	}
	var moved []metav1.ManagedFieldsEntry
	for _, e := range curMF {
		b, ok := before[entryKey(e)]
		switch {
		case !ok:
			moved = append(moved, e)
		case e.Time != nil && b.Time != nil && e.Time.After(b.Time.Time):
			moved = append(moved, e)
		case !sameFields(e, b):
			moved = append(moved, e)
		}
	}
	if len(moved) == 1 {
		return classify(moved[0].Manager), true
	}
	candidates := moved
	if len(candidates) == 0 {
		candidates = curMF
	}
	changed := changedPaths(prev.Object, cur.Object, nil)
	best, bestScore := "", 0
	var tied []string
	for _, e := range candidates {
		score := owns(e, changed)
		switch {
		case score > bestScore:
			best, bestScore, tied = e.Manager, score, nil
		case score == bestScore && score > 0 && e.Manager != best:
			tied = append(tied, e.Manager)
		}
	}
	if bestScore == 0 {
		return Actor{}, false
	}
	a := classify(best)
	if len(tied) > 0 {
		sort.Strings(tied)
		a.As = a.String() + " or " + strings.Join(tied, " or ")
	}
	return a, true
}

func sameFields(a, b metav1.ManagedFieldsEntry) bool {
	if a.FieldsV1 == nil || b.FieldsV1 == nil {
		return a.FieldsV1 == b.FieldsV1
	}
	return string(a.FieldsV1.Raw) == string(b.FieldsV1.Raw)
}

// ignoredPaths change on every write, whoever makes it.
var ignoredPaths = map[string]bool{
	"metadata.resourceVersion": true, "metadata.managedFields": true, "metadata.generation": true,
}

// changedPaths lists the paths where a and b differ, down to the leaves;
// lists are compared element by element when they have the same length
// (an element path segment is "[]"), else the whole list changed.
func changedPaths(a, b interface{}, at []string) [][]string {
	if ignoredPaths[strings.Join(at, ".")] {
		return nil
	}
	switch av := a.(type) {
	case map[string]interface{}:
		bv, ok := b.(map[string]interface{})
		if !ok {
			break
		}
		var out [][]string
		keys := map[string]bool{}
		for k := range av {
			keys[k] = true
		}
		for k := range bv {
			keys[k] = true
		}
		for k := range keys {
			out = append(out, changedPaths(av[k], bv[k], append(append([]string(nil), at...), k))...)
		}
		return out
	case []interface{}:
		bv, ok := b.([]interface{})
		if !ok || len(av) != len(bv) {
			break
		}
		var out [][]string
		for i := range av {
			out = append(out, changedPaths(av[i], bv[i], append(append([]string(nil), at...), "[]"))...)
		}
		return out
	}
	if reflect.DeepEqual(a, b) {
		return nil
	}
	return [][]string{at}
}

// owns counts the changed paths the entry's fields cover: a path the entry
// owns, or one inside a field it owns, or one that contains fields it owns
// (a list replaced whole).
func owns(e metav1.ManagedFieldsEntry, changed [][]string) int {
	if e.FieldsV1 == nil {
		return 0
	}
	var tree map[string]interface{}
	if json.Unmarshal(e.FieldsV1.Raw, &tree) != nil {
		return 0
	}
	n := 0
	for _, p := range changed {
		if ownsPath(tree, p) {
			n++
		}
	}
	return n
}

// ownsPath walks a fieldsV1 tree ("f:spec" → "f:replicas"; list elements
// as "k:{…}", "v:…" or "i:N", any of which matches a "[]" segment).
func ownsPath(tree map[string]interface{}, path []string) bool {
	if len(path) == 0 {
		return true // the change contains fields the entry owns
	}
	seg := path[0]
	for k, v := range tree {
		match := false
		switch {
		case seg == "[]":
			match = strings.HasPrefix(k, "k:") || strings.HasPrefix(k, "v:") || strings.HasPrefix(k, "i:")
		default:
			match = k == "f:"+seg
		}
		if !match {
			continue
		}
		sub, _ := v.(map[string]interface{})
		if len(sub) == 0 {
			return true // a leaf the entry owns: the change is at or inside it
		}
		if ownsPath(sub, path[1:]) {
			return true
		}
	}
	return false
}

// lastWrites is each manager's last write of an object, newest first, for
// what the cluster still holds: who last wrote which fields, and when.
func lastWrites(u *unstructured.Unstructured) []Write {
	var out []Write
	for _, e := range u.GetManagedFields() {
		w := Write{Actor: classify(e.Manager), Operation: string(e.Operation), Subresource: e.Subresource, Fields: topFields(e)}
		if e.Time != nil {
			w.At = e.Time.Time.UTC()
		}
		out = append(out, w)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.After(out[j].At) })
	return out
}

// topFields names the fields an entry owns, two levels deep ("spec.template",
// "status.abort"), which is what tells a promote from a template change.
func topFields(e metav1.ManagedFieldsEntry) []string {
	if e.FieldsV1 == nil {
		return nil
	}
	var tree map[string]interface{}
	if json.Unmarshal(e.FieldsV1.Raw, &tree) != nil {
		return nil
	}
	var out []string
	for k, v := range tree {
		if !strings.HasPrefix(k, "f:") {
			continue
		}
		top := strings.TrimPrefix(k, "f:")
		sub, _ := v.(map[string]interface{})
		n := 0
		for k2 := range sub {
			if strings.HasPrefix(k2, "f:") {
				out = append(out, top+"."+strings.TrimPrefix(k2, "f:"))
				n++
			}
		}
		if n == 0 {
			out = append(out, top)
		}
	}
	sort.Strings(out)
	return out
}

// Write is one manager's last write of an object, as managedFields keep it.
type Write struct {
	At          time.Time `json:"at,omitzero"`
	Actor       Actor     `json:"actor"`
	Operation   string    `json:"operation"`
	Subresource string    `json:"subresource,omitempty"`
	Fields      []string  `json:"fields,omitempty"`
}

func (w Write) String() string {
	sub := ""
	if w.Subresource != "" {
		sub = " (" + w.Subresource + ")"
	}
	return fmt.Sprintf("%s last wrote%s %s", w.Actor, sub, strings.Join(w.Fields, ", "))
}
