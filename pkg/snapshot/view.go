package snapshot

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/rolloutdoctor/rolloutdoctor/internal/fastjson"
)

// Group names used to pick objects out of a snapshot.
const (
	GroupArgo    = "argoproj.io"
	GroupIstio   = "networking.istio.io"
	GroupSMI     = "split.smi-spec.io"
	GroupGateway = "gateway.networking.k8s.io"
	GroupKEDA    = "keda.sh"
)

// View is what the Rollout checks, the controller model and escape read about
// one Rollout, typed and indexed. It is built once and only read afterwards;
// its objects are shared with the snapshot: read them, never modify them.
// Its ReplicaSets and pods are the Workload's: one selection serves both the
// Rollout checks and the pod checks.
type View struct {
	Header Header
	// Now is the instant the analysis treats as "now": when the snapshot was
	// taken, so that a snapshot diagnosed later gives the same report.
	Now time.Time
	// NowInferred is set when the input says nothing of when it was taken
	// (kubectl get output): Now is then its newest timestamp, so every age
	// measured from it is a lower bound.
	NowInferred bool

	Rollout *v1alpha1.Rollout
	// WorkloadRef is the Deployment named by spec.workloadRef, if any.
	WorkloadRef *appsv1.Deployment

	ReplicaSets []*appsv1.ReplicaSet // owned by the Rollout, oldest first
	// VirtualServices are the Istio VirtualServices the Rollout names, by name.
	VirtualServices map[string]*unstructured.Unstructured
	// HPAs and ScaledObjects scale the Rollout (what an autoscaler may set).
	HPAs          []*autoscalingv2.HorizontalPodAutoscaler
	ScaledObjects []*unstructured.Unstructured
	// Controllers are the argo-rollouts controller Deployments that reconcile
	// this Rollout (OwningControllers: its instance-id label, --namespaced).
	Controllers []*appsv1.Deployment
	// OtherControllers are the controller Deployments found that do not.
	OtherControllers []*appsv1.Deployment
	// Workload is the Rollout's pods and traffic path as the pod checks see them.
	Workload *Workload
	// AnalysisRuns are the AnalysisRuns the Rollout owns (controller
	// ownerReference), oldest first.
	AnalysisRuns []*v1alpha1.AnalysisRun
	// Experiments are the Experiments the Rollout owns (its experiment
	// steps create them), oldest first; read only for a Rollout with an
	// experiment step.
	Experiments []*v1alpha1.Experiment
	// Events are the Events about the Rollout (involvedObject), oldest
	// first by the time they were last seen.
	Events []*corev1.Event
	// GitOps is the GitOps tool the Rollout's marks name, with its sync
	// settings when the owner object (Application, Kustomization,
	// HelmRelease) was read; nil when nothing marks the Rollout.
	GitOps *GitOpsOwner
	// SpecWriters are the field managers of the Rollout's spec, newest
	// first (empty when the input dropped managedFields).
	SpecWriters []FieldWriter
	// AnalysisTemplates and ClusterAnalysisTemplates are the templates the
	// Rollout's analysis uses — named by its strategy or, in turn, by
	// those templates' spec.templates — that the snapshot holds, by name.
	AnalysisTemplates        map[string]*v1alpha1.AnalysisTemplate
	ClusterAnalysisTemplates map[string]*v1alpha1.ClusterAnalysisTemplate
	// UnreadableTemplates are templates the snapshot holds that do not
	// decode, with why: neither used nor missing.
	UnreadableTemplates map[TemplateRef]string
	// TemplateNames are the names of every AnalysisTemplate of the
	// Rollout's namespace, and ClusterTemplateNames of every
	// ClusterAnalysisTemplate, the snapshot holds, used or not: they tell a
	// reference with a typo from one to a template shipped elsewhere.
	TemplateNames, ClusterTemplateNames []string
}

// ReplicaSetsUnread is the gap, if any, that kept the Rollout's ReplicaSets
// from being listed (ListGap). Such a view's ReplicaSets are not all there
// may be, and none is not "none exist": whatever reasons from them must not
// run.
func (v *View) ReplicaSetsUnread() (Gap, bool) {
	return v.Header.ListGap("replicasets.apps", v.Rollout.Namespace)
}

// Templates walks one analysis block's template references over the
// templates the view holds (see ResolveTemplates).
func (v *View) Templates(b AnalysisBlock) TemplateWalk {
	return ResolveTemplates(b.Refs(), func(r TemplateRef) (*Template, error) {
		if why, ok := v.UnreadableTemplates[r]; ok {
			return nil, fmt.Errorf("%s", why)
		}
		if r.Cluster {
			if t := v.ClusterAnalysisTemplates[r.Name]; t != nil {
				return &Template{TemplateRef: r, Meta: &t.ObjectMeta, Spec: &t.Spec}, nil
			}
			return nil, nil
		}
		if t := v.AnalysisTemplates[r.Name]; t != nil {
			return &Template{TemplateRef: r, Meta: &t.ObjectMeta, Spec: &t.Spec}, nil
		}
		return nil, nil
	})
}

func convert(u *unstructured.Unstructured, into interface{}) error { return Convert(u, into) }

// Rollouts returns the Rollouts in the snapshot.
func (s *Snapshot) Rollouts() ([]*v1alpha1.Rollout, error) {
	var out []*v1alpha1.Rollout
	for _, u := range s.byGroupKind(GroupArgo, "Rollout") {
		if ro, ok := s.decodedRollout(u); ok {
			out = append(out, ro)
			continue
		}
		ro, err := TypedRollout(u)
		if err != nil {
			return nil, err
		}
		out = append(out, ro)
	}
	return out, nil
}

// decodedRollout is the typed form a reader decoded u into (see Decoded),
// shared and read-only like every typed object of a view.
func (s *Snapshot) decodedRollout(u *unstructured.Unstructured) (*v1alpha1.Rollout, bool) {
	s.tc.mu.Lock()
	defer s.tc.mu.Unlock()
	ro, ok := s.tc.typed[u].(*v1alpha1.Rollout)
	return ro, ok
}

// FindRollout picks the target Rollout: the named one, the header's target,
// or the only Rollout in the snapshot.
func (s *Snapshot) FindRollout(namespace, name string) (*v1alpha1.Rollout, error) {
	ros, err := s.Rollouts()
	if err != nil {
		return nil, err
	}
	if name == "" && s.Header.TargetName != "" {
		namespace, name = s.Header.TargetNamespace, s.Header.TargetName
	}
	if name == "" {
		switch len(ros) {
		case 0:
			return nil, fmt.Errorf("the input holds no Rollout (kind Rollout, apiVersion argoproj.io/v1alpha1)")
		case 1:
			return ros[0], nil
		default:
			names := ""
			for i, r := range ros {
				if i > 0 {
					names += ", "
				}
				names += r.Namespace + "/" + r.Name
			}
			return nil, fmt.Errorf("the input holds %d Rollouts (%s): name the one to diagnose", len(ros), names)
		}
	}
	for _, r := range ros {
		if r.Name == name && (namespace == "" || r.Namespace == namespace || r.Namespace == "") {
			return r, nil
		}
	}
	return nil, fmt.Errorf("rollout %q not found in the input", name)
}

// View builds the typed view for one Rollout on top of its Workload (the same
// ReplicaSets, pods and Services), adding what only the Rollout checks read:
// the VirtualServices it names, its autoscalers and the controller
// Deployments.
func (s *Snapshot) View(ro *v1alpha1.Rollout) (*View, error) {
	w, err := s.RolloutWorkload(ro)
	if err != nil {
		return nil, err
	}
	v := &View{
		Header:      s.Header,
		Now:         s.Now(),
		NowInferred: s.Header.TakenAt.IsZero(),
		// Shared, as every object of a view (see View): a copy per view
		// was a tenth of a fleet scan's analysis.
		Rollout:         ro,
		WorkloadRef:     w.Ref,
		ReplicaSets:     w.ReplicaSets,
		VirtualServices: map[string]*unstructured.Unstructured{},
		Workload:        w,
	}
	ix := s.idx()
	for name := range w.refs.VirtualServices {
		if u := ix.named(GroupIstio, "VirtualService", ro.Namespace, name); u != nil {
			v.VirtualServices[name] = u
		}
	}
	for _, u := range in(ix.scalers, ro.Namespace, "Rollout/"+ro.Name) {
		switch u.GetKind() {
		case "HorizontalPodAutoscaler":
			h, err := typedOf[autoscalingv2.HorizontalPodAutoscaler](s, u)
			if err != nil {
				return nil, err
			}
			v.HPAs = append(v.HPAs, h)
		case "ScaledObject":
			v.ScaledObjects = append(v.ScaledObjects, u)
		}
	}
	var controllers []*appsv1.Deployment
	for _, u := range ix.controllers {
		d, err := typedOf[appsv1.Deployment](s, u)
		if err != nil {
			return nil, err
		}
		controllers = append(controllers, d)
	}
	v.Controllers, v.OtherControllers = OwningControllers(ro, controllers)
	for _, u := range in(ix.owned, ro.Namespace, "Rollout/"+ro.Name) {
		if u.GroupVersionKind().Group != GroupArgo || !ownedBy(u.GetOwnerReferences(), "Rollout", ro.Name, string(ro.UID)) {
			continue
		}
		switch u.GetKind() {
		case "AnalysisRun":
			ar, err := typedOf[v1alpha1.AnalysisRun](s, u)
			if err != nil {
				return nil, err
			}
			v.AnalysisRuns = append(v.AnalysisRuns, ar)
		case "Experiment":
			ex, err := typedOf[v1alpha1.Experiment](s, u)
			if err != nil {
				return nil, err
			}
			v.Experiments = append(v.Experiments, ex)
		}
	}
	for _, u := range s.byGroupKind("", "Event") {
		if u.GetNamespace() != "" && u.GetNamespace() != ro.Namespace {
			continue
		}
		kind, _, _ := unstructured.NestedString(u.Object, "involvedObject", "kind")
		name, _, _ := unstructured.NestedString(u.Object, "involvedObject", "name")
		if kind != "Rollout" || name != ro.Name {
			continue
		}
		e, err := typedOf[corev1.Event](s, u)
		if err != nil {
			return nil, err
		}
		v.Events = append(v.Events, e)
	}
	metas := []metav1.ObjectMeta{ro.ObjectMeta}
	if w.Ref != nil {
		metas = append(metas, w.Ref.ObjectMeta)
	}
	if m := MarkOf(metas...); m != nil {
		v.GitOps = &GitOpsOwner{Mark: m}
		for _, u := range s.byGroupKind(m.Group, m.Kind) {
			if u.GetName() == m.Name && (m.Namespace == "" || u.GetNamespace() == m.Namespace) {
				v.GitOps = ReadOwner(m, u)
				break
			}
		}
	}
	v.SpecWriters = SpecWriters(ro.ManagedFields)
	sort.SliceStable(v.Events, func(i, j int) bool { return EventTime(v.Events[i]).Before(EventTime(v.Events[j])) })
	v.templates(s, ix)
	sort.SliceStable(v.AnalysisRuns, func(i, j int) bool { return olderFirst(v.AnalysisRuns[i].ObjectMeta, v.AnalysisRuns[j].ObjectMeta) })
	sort.SliceStable(v.Experiments, func(i, j int) bool { return olderFirst(v.Experiments[i].ObjectMeta, v.Experiments[j].ObjectMeta) })
	return v, nil
}

// templates fills the view's AnalysisTemplates: those the Rollout's analysis
// reaches, and the names of all the snapshot holds. A template that does not
// decode is set aside with why, rather than failing the whole view: the
// Rollout's other checks do not need it.
func (v *View) templates(s *Snapshot, ix *index) {
	ro := v.Rollout
	find := func(r TemplateRef) (*Template, error) {
		if r.Cluster {
			u := ix.named(GroupArgo, "ClusterAnalysisTemplate", "", r.Name)
			if u == nil {
				return nil, nil
			}
			t, err := typedOf[v1alpha1.ClusterAnalysisTemplate](s, u)
			if err != nil {
				return nil, err
			}
			if v.ClusterAnalysisTemplates == nil {
				v.ClusterAnalysisTemplates = map[string]*v1alpha1.ClusterAnalysisTemplate{}
			}
			v.ClusterAnalysisTemplates[r.Name] = t
			return &Template{TemplateRef: r, Meta: &t.ObjectMeta, Spec: &t.Spec}, nil
		}
		u := ix.named(GroupArgo, "AnalysisTemplate", ro.Namespace, r.Name)
		if u == nil {
			return nil, nil
		}
		t, err := typedOf[v1alpha1.AnalysisTemplate](s, u)
		if err != nil {
			return nil, err
		}
		if v.AnalysisTemplates == nil {
			v.AnalysisTemplates = map[string]*v1alpha1.AnalysisTemplate{}
		}
		v.AnalysisTemplates[r.Name] = t
		return &Template{TemplateRef: r, Meta: &t.ObjectMeta, Spec: &t.Spec}, nil
	}
	for _, b := range AnalysisBlocks(ro) {
		for r, why := range ResolveTemplates(b.Refs(), find).Unreadable {
			if v.UnreadableTemplates == nil {
				v.UnreadableTemplates = map[TemplateRef]string{}
			}
			v.UnreadableTemplates[r] = why
		}
	}
	names, cluster := map[string]bool{}, map[string]bool{}
	for _, u := range s.byGroupKind(GroupArgo, "AnalysisTemplate") {
		if n := u.GetNamespace(); n == ro.Namespace || n == "" {
			names[u.GetName()] = true
		}
	}
	for _, u := range s.byGroupKind(GroupArgo, "ClusterAnalysisTemplate") {
		cluster[u.GetName()] = true
	}
	v.TemplateNames, v.ClusterTemplateNames = sortedNames(names), sortedNames(cluster)
}

// EventTime is the most recent time an event was seen.
func EventTime(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.FirstTimestamp.IsZero():
		return e.FirstTimestamp.Time
	}
	return e.CreationTimestamp.Time
}

// IsControllerDeployment recognises the Argo Rollouts controller Deployment:
// the name the install manifests and the Helm chart use, or their labels.
// It reads only metadata, so it takes a typed Deployment as well.
func IsControllerDeployment(u metav1.Object) bool {
	l := u.GetLabels()
	if l["app.kubernetes.io/name"] == "argo-rollouts" && (l["app.kubernetes.io/component"] == "" || l["app.kubernetes.io/component"] == "rollouts-controller") {
		return true
	}
	return u.GetName() == "argo-rollouts" || u.GetName() == "argo-rollouts-controller"
}

func ownedBy(refs []metav1.OwnerReference, kind, name, uid string) bool {
	for _, r := range refs {
		if r.Kind != kind || r.Name != name {
			continue
		}
		if uid == "" || r.UID == "" || string(r.UID) == uid {
			return true
		}
	}
	return false
}

// latestTimestamp is the "now" used for input without a header: the newest
// timestamp any object carries, so that the same file always gives the same
// report (ages are then relative to the newest thing the file knows about).
func latestTimestamp(s *Snapshot) time.Time {
	var t time.Time
	bump := func(x time.Time) {
		if x.After(t) {
			t = x
		}
	}
	for _, u := range s.objects {
		if p, ok := s.tc.typed[u].(*corev1.Pod); ok && s.tc.stubs[u] {
			podTimes(p, bump)
			continue
		}
		u = s.full(u)
		bump(u.GetCreationTimestamp().Time)
		for _, mf := range u.GetManagedFields() {
			if mf.Time != nil {
				bump(mf.Time.Time)
			}
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]interface{})
			for _, k := range []string{"lastUpdateTime", "lastTransitionTime", "lastHeartbeatTime"} {
				if sv, ok := m[k].(string); ok {
					if x, err := time.Parse(time.RFC3339, sv); err == nil {
						bump(x)
					}
				}
			}
		}
		if u.GetKind() == "Event" {
			for _, k := range []string{"lastTimestamp", "eventTime", "firstTimestamp"} {
				if sv, ok := u.Object[k].(string); ok {
					if x, err := time.Parse(time.RFC3339Nano, sv); err == nil {
						bump(x)
					}
				}
			}
		}
		pcs, _, _ := unstructured.NestedSlice(u.Object, "status", "pauseConditions")
		for _, pc := range pcs {
			m, _ := pc.(map[string]interface{})
			if sv, ok := m["startTime"].(string); ok {
				if x, err := time.Parse(time.RFC3339, sv); err == nil {
					bump(x)
				}
			}
		}
		for _, f := range [][]string{{"status", "startTime"}, {"status", "pauseStartTime"}, {"metadata", "deletionTimestamp"}} {
			if sv, ok, _ := unstructured.NestedString(u.Object, f...); ok {
				if x, err := time.Parse(time.RFC3339, sv); err == nil {
					bump(x)
				}
			}
		}
		if rt, ok, _ := unstructured.NestedString(u.Object, "spec", "renewTime"); ok {
			if x, err := time.Parse(time.RFC3339Nano, rt); err == nil {
				bump(x)
			}
		}
	}
	return t
}

// Convert turns an object into its typed form. When a field has the wrong
// type, the error names the field's path and the type it needs (the
// converter's own message, "unrecognized type: int32", names neither).
func Convert(u *unstructured.Unstructured, into interface{}) error {
	err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)
	if err == nil {
		return nil
	}
	if jerr := decodeJSON(u, into); jerr != nil {
		err = jerr
	}
	return fmt.Errorf("%s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
}

// decodeJSON decodes through JSON, whose errors name the field and which,
// unlike the unstructured converter, refuses numbers that overflow their
// field. Field names match case-sensitively, as the API server reads them:
// encoding/json would take "mEtadata" for metadata, and lint would judge
// an object the API server sees without a name (and could not locate its
// finding in the file).
func decodeJSON(u *unstructured.Unstructured, into interface{}) error {
	b, err := json.Marshal(u.Object)
	if err != nil {
		return err
	}
	if err = fastjson.CaseSensitive(b, into); err == nil {
		return nil
	}
	// encoding/json words the same type error with the field's path, in a
	// type this package can read.
	jerr := json.Unmarshal(b, reflect.New(reflect.TypeOf(into).Elem()).Interface())
	var te *json.UnmarshalTypeError
	if errors.As(jerr, &te) && te.Field != "" {
		return fmt.Errorf("%s: %s where %s is needed", te.Field, te.Value, te.Type)
	}
	return err
}

// TypedRollout converts one Rollout. Numbers the API server would reject
// because they overflow their field (replicas 5000000000 in an int32) are an
// error here too: the converter would wrap them silently.
func TypedRollout(u *unstructured.Unstructured) (*v1alpha1.Rollout, error) {
	ro := &v1alpha1.Rollout{}
	if err := decodeJSON(u, ro); err != nil {
		return nil, fmt.Errorf("%s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return ro, nil
}

// Since is now − t, never negative: a timestamp after the snapshot's "now"
// (clock skew, or a "now" inferred from the input) reads as no time at all.
func Since(now, t time.Time) time.Duration {
	if d := now.Sub(t); d > 0 {
		return d
	}
	return 0
}

// olderFirst orders objects by creation, then name.
func olderFirst(a, b metav1.ObjectMeta) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Name < b.Name
}
