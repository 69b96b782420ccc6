package snapshot

import (
	"fmt"
	"sort"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// Group names used to pick objects out of a snapshot.
const (
	GroupArgo    = "argoproj.io"
	GroupIstio   = "networking.istio.io"
	GroupSMI     = "split.smi-spec.io"
	GroupGateway = "gateway.networking.k8s.io"
	GroupKEDA    = "keda.sh"
)

// View is everything the snapshot holds about one Rollout, typed and indexed.
// It is built once and only read afterwards.
type View struct {
	Header Header
	// Now is the instant the analysis treats as "now": when the snapshot was
	// taken, so that a snapshot diagnosed later gives the same report.
	Now time.Time

	Rollout *v1alpha1.Rollout
	// WorkloadRef is the Deployment named by spec.workloadRef, if any.
	WorkloadRef *appsv1.Deployment

	ReplicaSets      []*appsv1.ReplicaSet // owned by the Rollout, oldest first
	Pods             []*corev1.Pod        // owned by those ReplicaSets
	Services         map[string]*corev1.Service
	EndpointSlices   map[string][]*discoveryv1.EndpointSlice // by Service name
	VirtualServices  map[string]*unstructured.Unstructured
	DestinationRules map[string]*unstructured.Unstructured
	Ingresses        map[string]*networkingv1.Ingress
	TrafficSplits    map[string]*unstructured.Unstructured
	HTTPRoutes       map[string]*unstructured.Unstructured
	AnalysisRuns     []*v1alpha1.AnalysisRun
	HPAs             []*autoscalingv2.HorizontalPodAutoscaler
	ScaledObjects    []*unstructured.Unstructured
	PDBs             []*policyv1.PodDisruptionBudget
	Nodes            map[string]*corev1.Node
	NodeLeases       map[string]*coordinationv1.Lease
	Namespace        *corev1.Namespace
	Events           []*corev1.Event // about the Rollout, newest last
	// Controllers are the argo-rollouts controller Deployments that reconcile
	// this Rollout (OwningControllers: its instance-id label, --namespaced).
	Controllers []*appsv1.Deployment
	// OtherControllers are the controller Deployments found that do not.
	OtherControllers []*appsv1.Deployment
	// Workload is the Rollout's pods and traffic path as the pod checks see them.
	Workload *Workload
}

func convert(u *unstructured.Unstructured, into interface{}) error {
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		return fmt.Errorf("%s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return nil
}

// Rollouts returns the Rollouts in the snapshot.
func (s *Snapshot) Rollouts() ([]*v1alpha1.Rollout, error) {
	var out []*v1alpha1.Rollout
	for _, u := range s.byGroupKind(GroupArgo, "Rollout") {
		ro := &v1alpha1.Rollout{}
		if err := convert(u, ro); err != nil {
			return nil, err
		}
		out = append(out, ro)
	}
	return out, nil
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

// View builds the typed view for one Rollout. Related objects are chosen the
// way the controller relates them: ReplicaSets by owner reference, pods by
// owner ReplicaSet, Services and traffic objects by the names in the spec.
func (s *Snapshot) View(ro *v1alpha1.Rollout) (*View, error) {
	v := &View{
		Header:           s.Header,
		Now:              s.Header.TakenAt,
		Rollout:          ro.DeepCopy(),
		Services:         map[string]*corev1.Service{},
		EndpointSlices:   map[string][]*discoveryv1.EndpointSlice{},
		VirtualServices:  map[string]*unstructured.Unstructured{},
		DestinationRules: map[string]*unstructured.Unstructured{},
		Ingresses:        map[string]*networkingv1.Ingress{},
		TrafficSplits:    map[string]*unstructured.Unstructured{},
		HTTPRoutes:       map[string]*unstructured.Unstructured{},
		Nodes:            map[string]*corev1.Node{},
		NodeLeases:       map[string]*coordinationv1.Lease{},
	}
	if v.Now.IsZero() {
		v.Now = latestTimestamp(s)
	}
	ns := ro.Namespace
	inNS := func(u *unstructured.Unstructured) bool { return u.GetNamespace() == ns || u.GetNamespace() == "" }

	// ReplicaSets: owned by this Rollout (by UID when both have one, else by name).
	rsNames := map[string]bool{}
	for _, u := range s.byGroupKind("apps", "ReplicaSet") {
		if !inNS(u) || !ownedBy(u.GetOwnerReferences(), "Rollout", ro.Name, string(ro.UID)) {
			continue
		}
		rs := &appsv1.ReplicaSet{}
		if err := convert(u, rs); err != nil {
			return nil, err
		}
		v.ReplicaSets = append(v.ReplicaSets, rs)
		rsNames[rs.Name] = true
	}
	sort.SliceStable(v.ReplicaSets, func(i, j int) bool {
		a, b := v.ReplicaSets[i], v.ReplicaSets[j]
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Name < b.Name
	})
	nodeNames := map[string]bool{}
	for _, u := range s.byGroupKind("", "Pod") {
		if !inNS(u) {
			continue
		}
		owned := false
		for _, or := range u.GetOwnerReferences() {
			if or.Kind == "ReplicaSet" && rsNames[or.Name] {
				owned = true
			}
		}
		if !owned {
			continue
		}
		p := &corev1.Pod{}
		if err := convert(u, p); err != nil {
			return nil, err
		}
		v.Pods = append(v.Pods, p)
		if p.Spec.NodeName != "" {
			nodeNames[p.Spec.NodeName] = true
		}
	}
	if ref := ro.Spec.WorkloadRef; ref != nil && ref.Kind == "Deployment" {
		for _, u := range s.byGroupKind("apps", "Deployment") {
			if inNS(u) && u.GetName() == ref.Name {
				d := &appsv1.Deployment{}
				if err := convert(u, d); err != nil {
					return nil, err
				}
				v.WorkloadRef = d
			}
		}
	}

	refs := ReferencedNames(ro)
	for _, u := range s.byGroupKind("", "Service") {
		if inNS(u) && refs.Services[u.GetName()] {
			svc := &corev1.Service{}
			if err := convert(u, svc); err != nil {
				return nil, err
			}
			v.Services[svc.Name] = svc
		}
	}
	for _, u := range s.byGroupKind("discovery.k8s.io", "EndpointSlice") {
		svc := u.GetLabels()[discoveryv1.LabelServiceName]
		if inNS(u) && refs.Services[svc] {
			es := &discoveryv1.EndpointSlice{}
			if err := convert(u, es); err != nil {
				return nil, err
			}
			v.EndpointSlices[svc] = append(v.EndpointSlices[svc], es)
		}
	}
	pickNamed := func(group, kind string, names map[string]bool, into map[string]*unstructured.Unstructured) {
		for _, u := range s.byGroupKind(group, kind) {
			if inNS(u) && names[u.GetName()] {
				into[u.GetName()] = u.DeepCopy()
			}
		}
	}
	pickNamed(GroupIstio, "VirtualService", refs.VirtualServices, v.VirtualServices)
	pickNamed(GroupIstio, "DestinationRule", refs.DestinationRules, v.DestinationRules)
	pickNamed(GroupSMI, "TrafficSplit", refs.TrafficSplits, v.TrafficSplits)
	pickNamed(GroupGateway, "HTTPRoute", refs.HTTPRoutes, v.HTTPRoutes)
	for _, u := range s.byGroupKind("networking.k8s.io", "Ingress") {
		if inNS(u) && refs.Ingresses[u.GetName()] {
			ing := &networkingv1.Ingress{}
			if err := convert(u, ing); err != nil {
				return nil, err
			}
			v.Ingresses[ing.Name] = ing
		}
	}
	for _, u := range s.byGroupKind(GroupArgo, "AnalysisRun") {
		if inNS(u) && ownedBy(u.GetOwnerReferences(), "Rollout", ro.Name, string(ro.UID)) {
			ar := &v1alpha1.AnalysisRun{}
			if err := convert(u, ar); err != nil {
				return nil, err
			}
			v.AnalysisRuns = append(v.AnalysisRuns, ar)
		}
	}
	sort.SliceStable(v.AnalysisRuns, func(i, j int) bool {
		return v.AnalysisRuns[i].CreationTimestamp.Before(&v.AnalysisRuns[j].CreationTimestamp)
	})
	for _, u := range s.byGroupKind("autoscaling", "HorizontalPodAutoscaler") {
		if !inNS(u) {
			continue
		}
		kind, _, _ := unstructured.NestedString(u.Object, "spec", "scaleTargetRef", "kind")
		name, _, _ := unstructured.NestedString(u.Object, "spec", "scaleTargetRef", "name")
		if kind != "Rollout" || name != ro.Name {
			continue
		}
		h := &autoscalingv2.HorizontalPodAutoscaler{}
		if err := convert(u, h); err != nil {
			return nil, err
		}
		v.HPAs = append(v.HPAs, h)
	}
	for _, u := range s.byGroupKind(GroupKEDA, "ScaledObject") {
		kind, _, _ := unstructured.NestedString(u.Object, "spec", "scaleTargetRef", "kind")
		name, _, _ := unstructured.NestedString(u.Object, "spec", "scaleTargetRef", "name")
		if inNS(u) && kind == "Rollout" && name == ro.Name {
			v.ScaledObjects = append(v.ScaledObjects, u.DeepCopy())
		}
	}
	for _, u := range s.byGroupKind("policy", "PodDisruptionBudget") {
		if !inNS(u) {
			continue
		}
		pdb := &policyv1.PodDisruptionBudget{}
		if err := convert(u, pdb); err != nil {
			return nil, err
		}
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || ro.Spec.Template.Labels == nil || !sel.Matches(labels.Set(ro.Spec.Template.Labels)) {
			continue
		}
		v.PDBs = append(v.PDBs, pdb)
	}
	for _, u := range s.byGroupKind("", "Node") {
		if nodeNames[u.GetName()] {
			n := &corev1.Node{}
			if err := convert(u, n); err != nil {
				return nil, err
			}
			v.Nodes[n.Name] = n
		}
	}
	for _, u := range s.byGroupKind("coordination.k8s.io", "Lease") {
		if u.GetNamespace() == corev1.NamespaceNodeLease && nodeNames[u.GetName()] {
			l := &coordinationv1.Lease{}
			if err := convert(u, l); err != nil {
				return nil, err
			}
			v.NodeLeases[l.Name] = l
		}
	}
	for _, u := range s.byGroupKind("", "Namespace") {
		if u.GetName() == ns {
			n := &corev1.Namespace{}
			if err := convert(u, n); err != nil {
				return nil, err
			}
			v.Namespace = n
		}
	}
	for _, u := range s.byGroupKind("", "Event") {
		if !inNS(u) {
			continue
		}
		kind, _, _ := unstructured.NestedString(u.Object, "involvedObject", "kind")
		name, _, _ := unstructured.NestedString(u.Object, "involvedObject", "name")
		if kind != "Rollout" || name != ro.Name {
			continue
		}
		e := &corev1.Event{}
		if err := convert(u, e); err != nil {
			return nil, err
		}
		v.Events = append(v.Events, e)
	}
	sort.SliceStable(v.Events, func(i, j int) bool { return EventTime(v.Events[i]).Before(EventTime(v.Events[j])) })
	var controllers []*appsv1.Deployment
	for _, u := range s.byGroupKind("apps", "Deployment") {
		if IsControllerDeployment(u) {
			d := &appsv1.Deployment{}
			if err := convert(u, d); err != nil {
				return nil, err
			}
			controllers = append(controllers, d)
		}
	}
	v.Controllers, v.OtherControllers = OwningControllers(ro, controllers)
	w, err := s.RolloutWorkload(ro)
	if err != nil {
		return nil, err
	}
	v.Workload = w
	return v, nil
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
func IsControllerDeployment(u *unstructured.Unstructured) bool {
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
		if rt, ok, _ := unstructured.NestedString(u.Object, "spec", "renewTime"); ok {
			if x, err := time.Parse(time.RFC3339Nano, rt); err == nil {
				bump(x)
			}
		}
	}
	return t
}
