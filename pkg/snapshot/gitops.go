package snapshot

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// GitOps groups: the objects that say a GitOps tool manages a Rollout.
const (
	GroupArgoCD        = "argoproj.io" // Application shares the Rollouts group
	GroupFluxKustomize = "kustomize.toolkit.fluxcd.io"
	GroupFluxHelm      = "helm.toolkit.fluxcd.io"
)

// GitOpsMark is what an object's own labels and annotations say about the
// GitOps tool that applied it.
type GitOpsMark struct {
	Tool      string // "Argo CD" or "Flux"
	Kind      string // Application, Kustomization or HelmRelease
	Group     string
	Namespace string // where the owner object lives ("" when the mark does not say)
	Name      string
	Evidence  string
	// Weak is set for Argo CD's legacy instance label, which Helm and
	// other tools set too.
	Weak bool
}

// Owner is "Application argocd/shop".
func (m *GitOpsMark) Owner() string {
	if m.Namespace == "" {
		return m.Kind + " " + m.Name
	}
	return m.Kind + " " + m.Namespace + "/" + m.Name
}

// MarkOf reads the GitOps marks of the given objects, first found wins:
// Argo CD's tracking-id annotation ("app:group/Kind:ns/name", the app
// written "namespace_name" for Applications outside Argo CD's namespace),
// Flux's kustomize and helm toolkit labels, then Argo CD's legacy instance
// label (only when Helm does not claim the object).
func MarkOf(metas ...metav1.ObjectMeta) *GitOpsMark {
	var weak *GitOpsMark
	for _, m := range metas {
		if id := m.Annotations["argocd.argoproj.io/tracking-id"]; id != "" {
			app := strings.SplitN(id, ":", 2)[0]
			ns := ""
			if i := strings.Index(app, "_"); i > 0 {
				ns, app = app[:i], app[i+1:]
			}
			return &GitOpsMark{Tool: "Argo CD", Kind: "Application", Group: GroupArgoCD, Namespace: ns, Name: app, Evidence: "annotation argocd.argoproj.io/tracking-id=" + id}
		}
		if n := m.Labels["kustomize.toolkit.fluxcd.io/name"]; n != "" {
			return &GitOpsMark{Tool: "Flux", Kind: "Kustomization", Group: GroupFluxKustomize, Namespace: m.Labels["kustomize.toolkit.fluxcd.io/namespace"], Name: n, Evidence: "label kustomize.toolkit.fluxcd.io/name=" + n}
		}
		if n := m.Labels["helm.toolkit.fluxcd.io/name"]; n != "" {
			return &GitOpsMark{Tool: "Flux", Kind: "HelmRelease", Group: GroupFluxHelm, Namespace: m.Labels["helm.toolkit.fluxcd.io/namespace"], Name: n, Evidence: "label helm.toolkit.fluxcd.io/name=" + n}
		}
		if n := m.Labels["app.kubernetes.io/instance"]; n != "" && m.Labels["app.kubernetes.io/managed-by"] != "Helm" && weak == nil {
			weak = &GitOpsMark{Tool: "Argo CD", Kind: "Application", Group: GroupArgoCD, Name: n, Weak: true,
				Evidence: "label app.kubernetes.io/instance=" + n + " (Argo CD label tracking, or another tool using the same label)"}
		}
	}
	return weak
}

// IgnoreRule is one entry of an Argo CD Application's ignoreDifferences.
type IgnoreRule struct {
	Group, Kind, Name, Namespace string
	JSONPointers                 []string
	JQPathExpressions            []string
}

// GitOpsOwner is what the owner object (an Argo CD Application, a Flux
// Kustomization or HelmRelease, read as data) says about how it syncs.
type GitOpsOwner struct {
	Mark *GitOpsMark
	// AutoSync: Argo CD's syncPolicy.automated; for Flux, not suspended.
	AutoSync bool
	// SelfHeal: Argo CD reverts changes made in the cluster; Flux always
	// does on its interval while not suspended.
	SelfHeal bool
	// Interval is Flux's reconcile interval ("" for Argo CD).
	Interval string
	// SyncStatus is Argo CD's status.sync.status (Synced, OutOfSync) or
	// Flux's Ready condition status.
	SyncStatus string
	Ignore     []IgnoreRule
	// RespectIgnore: the Application syncs with RespectIgnoreDifferences=true,
	// so a sync also leaves ignored fields alone.
	RespectIgnore bool
}

// ReadOwner reads the sync settings of an owner object.
func ReadOwner(mark *GitOpsMark, u *unstructured.Unstructured) *GitOpsOwner {
	o := &GitOpsOwner{Mark: mark}
	switch u.GetKind() {
	case "Application":
		auto, ok, _ := unstructured.NestedMap(u.Object, "spec", "syncPolicy", "automated")
		o.AutoSync = ok && auto != nil
		if en, found, _ := unstructured.NestedBool(u.Object, "spec", "syncPolicy", "automated", "enabled"); found && !en {
			o.AutoSync = false // Argo CD 3.x can switch automation off in place
		}
		o.SelfHeal, _, _ = unstructured.NestedBool(u.Object, "spec", "syncPolicy", "automated", "selfHeal")
		o.SelfHeal = o.SelfHeal && o.AutoSync
		o.SyncStatus, _, _ = unstructured.NestedString(u.Object, "status", "sync", "status")
		opts, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "syncPolicy", "syncOptions")
		for _, s := range opts {
			if s == "RespectIgnoreDifferences=true" {
				o.RespectIgnore = true
			}
		}
		ids, _, _ := unstructured.NestedSlice(u.Object, "spec", "ignoreDifferences")
		for _, x := range ids {
			m, _ := x.(map[string]interface{})
			r := IgnoreRule{}
			r.Group, _ = m["group"].(string)
			r.Kind, _ = m["kind"].(string)
			r.Name, _ = m["name"].(string)
			r.Namespace, _ = m["namespace"].(string)
			ps, _ := m["jsonPointers"].([]interface{})
			for _, p := range ps {
				if s, ok := p.(string); ok {
					r.JSONPointers = append(r.JSONPointers, s)
				}
			}
			jq, _ := m["jqPathExpressions"].([]interface{})
			for _, p := range jq {
				if s, ok := p.(string); ok {
					r.JQPathExpressions = append(r.JQPathExpressions, s)
				}
			}
			o.Ignore = append(o.Ignore, r)
		}
	default: // Flux
		susp, _, _ := unstructured.NestedBool(u.Object, "spec", "suspend")
		o.AutoSync, o.SelfHeal = !susp, !susp
		o.Interval, _, _ = unstructured.NestedString(u.Object, "spec", "interval")
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]interface{})
			if m["type"] == "Ready" {
				o.SyncStatus, _ = m["status"].(string)
			}
		}
	}
	return o
}

// Ignores reports whether the Application's ignoreDifferences already
// cover pointer of a Rollout named name in namespace ns.
func (o *GitOpsOwner) Ignores(name, ns, pointer string) bool {
	for _, r := range o.Ignore {
		if r.Kind != "Rollout" || r.Group != "" && r.Group != "argoproj.io" || r.Name != "" && r.Name != name || r.Namespace != "" && r.Namespace != ns {
			continue
		}
		for _, p := range r.JSONPointers {
			if p == pointer || strings.HasPrefix(pointer, p+"/") {
				return true
			}
		}
	}
	return false
}

// IgnoresWeights reports whether the Application's ignoreDifferences cover
// the traffic weights of a router object (group, kind, name in ns): a jq
// path expression or JSON pointer that names a weight, or a pointer to the
// whole spec, its http routes or the annotations (nginx, ALB).
func (o *GitOpsOwner) IgnoresWeights(group, kind, name, ns string) bool {
	for _, r := range o.Ignore {
		if r.Kind != kind || r.Group != group || r.Name != "" && r.Name != name || r.Namespace != "" && r.Namespace != ns {
			continue
		}
		for _, p := range r.JQPathExpressions {
			if strings.Contains(p, "weight") {
				return true
			}
		}
		for _, p := range r.JSONPointers {
			if strings.Contains(p, "weight") || p == "/spec" || p == "/spec/http" || p == "/metadata/annotations" {
				return true
			}
		}
	}
	return false
}

// FieldWriter is one field manager of an object's spec, from its
// managedFields.
type FieldWriter struct {
	Manager   string    `json:"manager"`
	Operation string    `json:"operation"`
	Time      time.Time `json:"time"`
	// Fields are the top-level spec fields it owns (template, replicas…).
	Fields []string `json:"fields"`
	// Owned counts every field and list entry it owns under spec. A write
	// that takes fields from another manager grows it: managedFields times
	// are whole seconds, so two writers within one second tie on Time, and
	// Owned tells which one wrote (diagnose.History).
	Owned int `json:"-"`
}

// SpecWriters lists the managers that own fields under spec, newest first.
// Status writes (subresource status) are left out: they are the
// controller's and the escape commands', not a fight over the declared spec.
func SpecWriters(mfs []metav1.ManagedFieldsEntry) []FieldWriter {
	var out []FieldWriter
	for _, mf := range mfs {
		if mf.Subresource != "" || mf.FieldsV1 == nil {
			continue
		}
		var fields map[string]interface{}
		if err := json.Unmarshal(mf.FieldsV1.Raw, &fields); err != nil {
			continue
		}
		spec, _ := fields["f:spec"].(map[string]interface{})
		if len(spec) == 0 {
			continue
		}
		w := FieldWriter{Manager: mf.Manager, Operation: string(mf.Operation)}
		if mf.Time != nil {
			w.Time = mf.Time.Time
		}
		for k := range spec {
			if strings.HasPrefix(k, "f:") {
				w.Fields = append(w.Fields, strings.TrimPrefix(k, "f:"))
			}
		}
		w.Owned = countFields(spec)
		sort.Strings(w.Fields)
		out = append(out, w)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.After(out[j].Time) })
	return out
}

// countFields counts the keys of a FieldsV1 set, nested ones included
// ("." marks a list entry or map that is owned itself and counts too).
func countFields(set map[string]interface{}) int {
	n := 0
	for _, v := range set {
		n++
		if sub, ok := v.(map[string]interface{}); ok {
			n += countFields(sub)
		}
	}
	return n
}

// String is "argocd-controller (Apply, template, replicas)".
func (w FieldWriter) String() string {
	return fmt.Sprintf("%s (%s: %s)", w.Manager, w.Operation, strings.Join(w.Fields, ", "))
}
