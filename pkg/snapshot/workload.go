package snapshot

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/rolloutdoctor/rolloutdoctor/internal/par"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Workload kinds the pod checks understand.
const (
	KindRollout    = "Rollout"
	KindDeployment = "Deployment"
)

// RolloutHashLabel is the label the Rollout controller adds to pods and to
// the canary/stable Service selectors.
const RolloutHashLabel = "rollouts-pod-template-hash"

// Istio's mesh configuration: the ConfigMap istiod reads, and its key.
const (
	IstioNamespace    = "istio-system"
	IstioMeshConfig   = "istio"
	IstioMeshDataKey  = "mesh"
	ALBGateLabel      = "elbv2.k8s.aws/pod-readiness-gate-inject"
	ALBGateCondPrefix = "target-health.elbv2.k8s.aws/"
)

// Workload is a pod-bearing object and its traffic path: what the pod
// checks read. Its objects may be shared with other workloads of the same
// snapshot: read them, never modify them. It is the same for a Rollout and a Deployment, so every
// pod check works for both.
type Workload struct {
	Kind      string
	Namespace string
	Name      string
	// Template is the pod template new pods are created from (for a Rollout
	// with workloadRef, the referenced Deployment's).
	Template corev1.PodTemplateSpec
	Replicas int32
	// Strategy is "RollingUpdate", "Recreate", "canary", "canary+traffic"
	// (traffic-routed canary: the canary is added on top of the stable) or
	// "blueGreen".
	Strategy string
	// MaxSurge and MaxUnavailable as declared (nil: the default, 25%).
	MaxSurge, MaxUnavailable *intstr.IntOrString
	// PreviewReplicas is blueGreen's previewReplicaCount (nil: replicas).
	PreviewReplicas *int32
	// Rollout is set when Kind is Rollout.
	Rollout *v1alpha1.Rollout
	// Ref is the Deployment a Rollout's spec.workloadRef names, when the
	// snapshot holds it (its template is Template).
	Ref *appsv1.Deployment

	ReplicaSets []*appsv1.ReplicaSet
	Pods        []*corev1.Pod
	// ExperimentPods are the pods of the Rollout's Experiments (an
	// experiment step's), by name. They carry the Rollout's labels (all but
	// the hash), so a Service that selects its pods by app label sends them
	// requests too; the Rollout's counts and the pod checks leave them out.
	ExperimentPods []*corev1.Pod
	// Services select the workload's pods (or are named by the Rollout).
	Services       []*corev1.Service
	EndpointSlices map[string][]*discoveryv1.EndpointSlice // by Service name
	// Ingresses send traffic to one of Services.
	Ingresses []*networkingv1.Ingress
	PDBs      []*policyv1.PodDisruptionBudget
	// Nodes holds every node the snapshot has (all of them when the
	// template's anti-affinity needs a count of schedulable nodes).
	Nodes        map[string]*corev1.Node
	NodeLeases   map[string]*coordinationv1.Lease
	NamespaceObj *corev1.Namespace
	// MeshConfig is istio-system/istio, when read.
	MeshConfig *corev1.ConfigMap
	// Router is a Rollout's traffic router objects, Events and the
	// controller's plugin config (nil for a Deployment).
	Router *Router

	// Now is the snapshot's "now" (see View.Now).
	Now time.Time
	// Gaps are what could not be read.
	Gaps []Gap
	// SlicesRead is true when EndpointSlices were read (a live snapshot with
	// no gap for them, or a file that holds some): only then does the
	// absence of endpoints mean something.
	SlicesRead bool
	// PDBsRead is true when the absence of a PodDisruptionBudget means
	// something: a file (its PDBs are whatever it holds) or a gather for this
	// workload that read them. A fleet scan does not read PDBs.
	PDBsRead bool
	// ServicesRead is true when a Service the owner names and the snapshot
	// does not hold does not exist: a gather for this workload listed its
	// namespace's Services without a gap. A fleet scan reads no Services,
	// a list can be refused, and a file holds what its author put in it.
	ServicesRead bool
	// Offline is true for files without a snapshot header (rendered
	// manifests, kubectl get output): absence means "not in the input".
	Offline bool

	// refs are the names a Rollout's spec refers to, found once per
	// workload (zero for a Deployment).
	refs Refs
}

// Obj names the workload for evidence: "Rollout shop/checkout-api".
func (w *Workload) Obj() string { return w.Kind + " " + w.Namespace + "/" + w.Name }

// Live reports whether the snapshot holds running state (pods or
// ReplicaSets), as opposed to rendered manifests only.
func (w *Workload) Live() bool { return len(w.Pods) > 0 || len(w.ReplicaSets) > 0 }

// ServiceSelects reports whether a Service's selector picks pods with these
// labels. The Rollout controller adds its hash label to the canary and stable
// Services' selectors; the template does not carry it, so it is ignored.
func ServiceSelects(svc *corev1.Service, podLabels map[string]string) bool {
	if len(svc.Spec.Selector) == 0 {
		return false
	}
	for k, v := range svc.Spec.Selector {
		if k == RolloutHashLabel {
			continue
		}
		if podLabels[k] != v {
			return false
		}
	}
	return true
}

// IngressServices lists the Service names an Ingress sends traffic to.
func IngressServices(ing *networkingv1.Ingress) []string {
	var out []string
	if b := ing.Spec.DefaultBackend; b != nil && b.Service != nil {
		out = append(out, b.Service.Name)
	}
	for _, r := range ing.Spec.Rules {
		if r.HTTP == nil {
			continue
		}
		for _, p := range r.HTTP.Paths {
			if p.Backend.Service != nil {
				out = append(out, p.Backend.Service.Name)
			}
		}
	}
	return out
}

// FindWorkload finds a Rollout or Deployment by kind and name (kind "" tries
// Rollout, then Deployment; name "" takes the header's target, or the only
// one, and names them all when there are several).
func (s *Snapshot) FindWorkload(kind, namespace, name string) (*Workload, error) {
	if name == "" && s.Header.TargetName == "" {
		return s.onlyWorkload(kind, namespace)
	}
	if kind == "" || kind == KindRollout {
		ro, err := s.FindRollout(namespace, name)
		if err == nil {
			return s.RolloutWorkload(ro)
		}
		if kind == KindRollout {
			return nil, err
		}
	}
	found := s.deployments(namespace, name)
	switch {
	case len(found) == 0 && name == "":
		return nil, fmt.Errorf("the input holds no Rollout or Deployment")
	case len(found) == 0:
		return nil, fmt.Errorf("no Rollout or Deployment %q in the input", name)
	case len(found) > 1:
		return nil, fmt.Errorf("the input holds %s: name the one to check", countNames(nil, found))
	}
	return s.deploymentWorkload(found[0])
}

// onlyWorkload is the one workload of the kind ("" any) in the input: a
// single Rollout wins over Deployments (they may be its workloadRef);
// otherwise a single Deployment. When there are several, the error names
// them all.
func (s *Snapshot) onlyWorkload(kind, namespace string) (*Workload, error) {
	var ros []*v1alpha1.Rollout
	if kind == "" || kind == KindRollout {
		all, err := s.Rollouts()
		if err != nil {
			return nil, err
		}
		for _, ro := range all {
			if namespace == "" || ro.Namespace == namespace || ro.Namespace == "" {
				ros = append(ros, ro)
			}
		}
	}
	var deps []*unstructured.Unstructured
	if kind == "" || kind == KindDeployment {
		deps = s.deployments(namespace, "")
	}
	switch {
	case len(ros) == 1:
		return s.RolloutWorkload(ros[0])
	case len(ros) == 0 && len(deps) == 1:
		return s.deploymentWorkload(deps[0])
	case len(ros) == 0 && len(deps) == 0 && kind == KindRollout:
		return nil, fmt.Errorf("the input holds no Rollout (kind Rollout, apiVersion argoproj.io/v1alpha1)")
	case len(ros) == 0 && len(deps) == 0 && kind == KindDeployment:
		return nil, fmt.Errorf("the input holds no Deployment")
	case len(ros) == 0 && len(deps) == 0:
		return nil, fmt.Errorf("the input holds no Rollout or Deployment")
	}
	hint := ""
	if kind == "" {
		hint = " (NAME, rollout/NAME or deployment/NAME)"
	}
	return nil, fmt.Errorf("the input holds %s: name the one to check%s", countNames(ros, deps), hint)
}

// deployments are the Deployments of that name ("" any but the
// argo-rollouts controller's) in the namespace ("" any).
func (s *Snapshot) deployments(namespace, name string) []*unstructured.Unstructured {
	var found []*unstructured.Unstructured
	for _, u := range s.byGroupKind("apps", "Deployment") {
		if IsControllerDeployment(u) && name == "" {
			continue
		}
		if (name == "" || u.GetName() == name) && (namespace == "" || u.GetNamespace() == namespace || u.GetNamespace() == "") {
			found = append(found, u)
		}
	}
	return found
}

func (s *Snapshot) deploymentWorkload(u *unstructured.Unstructured) (*Workload, error) {
	d := &appsv1.Deployment{}
	if err := convert(u, d); err != nil {
		return nil, err
	}
	return s.DeploymentWorkload(d)
}

// countNames words workloads for an error: "2 Rollouts (shop/a, shop/b)
// and 1 Deployment (shop/web)".
func countNames(ros []*v1alpha1.Rollout, deps []*unstructured.Unstructured) string {
	var parts []string
	if len(ros) > 0 {
		names := make([]string, 0, len(ros))
		for _, ro := range ros {
			names = append(names, qualified(ro.Namespace, ro.Name))
		}
		parts = append(parts, plural(len(ros), "Rollout")+" ("+strings.Join(names, ", ")+")")
	}
	if len(deps) > 0 {
		names := make([]string, 0, len(deps))
		for _, d := range deps {
			names = append(names, qualified(d.GetNamespace(), d.GetName()))
		}
		parts = append(parts, plural(len(deps), "Deployment")+" ("+strings.Join(names, ", ")+")")
	}
	return strings.Join(parts, " and ")
}

func qualified(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// DeploymentWorkload builds the workload view of a Deployment.
func (s *Snapshot) DeploymentWorkload(d *appsv1.Deployment) (*Workload, error) {
	w := &Workload{Kind: KindDeployment, Namespace: d.Namespace, Name: d.Name, Template: d.Spec.Template, Replicas: 1}
	if d.Spec.Replicas != nil {
		w.Replicas = *d.Spec.Replicas
	}
	w.Strategy = string(appsv1.RollingUpdateDeploymentStrategyType)
	if d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
		w.Strategy = string(appsv1.RecreateDeploymentStrategyType)
	}
	if ru := d.Spec.Strategy.RollingUpdate; ru != nil {
		w.MaxSurge, w.MaxUnavailable = ru.MaxSurge, ru.MaxUnavailable
	}
	return w, s.fill(w, "Deployment", d.Name, string(d.UID), nil)
}

// RolloutWorkload builds the workload view of a Rollout.
func (s *Snapshot) RolloutWorkload(ro *v1alpha1.Rollout) (*Workload, error) {
	w := &Workload{Kind: KindRollout, Namespace: ro.Namespace, Name: ro.Name, Template: ro.Spec.Template, Replicas: 1, Rollout: ro}
	if ro.Spec.Replicas != nil {
		w.Replicas = *ro.Spec.Replicas
	}
	if ref := ro.Spec.WorkloadRef; ref != nil && ref.Kind == "Deployment" {
		if u := s.idx().named("apps", "Deployment", ro.Namespace, ref.Name); u != nil {
			d, err := typedOf[appsv1.Deployment](s, u)
			if err != nil {
				return nil, err
			}
			w.Ref, w.Template = d, d.Spec.Template
		}
	}
	switch c, b := ro.Spec.Strategy.Canary, ro.Spec.Strategy.BlueGreen; {
	case c != nil && c.TrafficRouting != nil:
		w.Strategy = "canary+traffic"
	case c != nil:
		w.Strategy = "canary"
		w.MaxSurge, w.MaxUnavailable = c.MaxSurge, c.MaxUnavailable
	case b != nil:
		w.Strategy = "blueGreen"
		w.MaxUnavailable, w.PreviewReplicas = b.MaxUnavailable, b.PreviewReplicaCount
	}
	w.refs = ReferencedNames(ro) // once: fill, routerOf and View read it
	if err := s.fill(w, "Rollout", ro.Name, string(ro.UID), w.refs.Services); err != nil {
		return nil, err
	}
	r, err := s.routerOf(ro, s.idx(), w.refs)
	if err != nil {
		return nil, err
	}
	w.Router = r
	return w, nil
}

// fill collects the workload's ReplicaSets, pods and traffic path from the
// snapshot. named are Services the owner names explicitly.
func (s *Snapshot) fill(w *Workload, ownerKind, ownerName, uid string, named map[string]bool) error {
	ns := w.Namespace
	w.Now = s.Now()
	w.Gaps = s.Header.Gaps
	w.Offline = s.Header.Offline
	_, gap := s.HasGap("endpointslices.discovery.k8s.io")
	// A gathered snapshot always holds the slices of the Services it kept;
	// a hand-written file with neither slices nor pods says nothing about them.
	single := s.Header.TargetKind == KindRollout || s.Header.TargetKind == KindDeployment // not a fleet scan
	live := !s.Header.Offline && single && !gap && len(s.byGroupKind("", "Pod")) > 0
	w.SlicesRead = len(s.byGroupKind("discovery.k8s.io", "EndpointSlice")) > 0 || live
	_, pdbGap := s.HasGap("poddisruptionbudgets.policy")
	w.PDBsRead = s.Header.Offline || single && !pdbGap || len(s.byGroupKind("policy", "PodDisruptionBudget")) > 0
	w.ServicesRead = s.Header.ListedWhole("services", ns)
	w.EndpointSlices = map[string][]*discoveryv1.EndpointSlice{}
	w.Nodes = map[string]*corev1.Node{}
	w.NodeLeases = map[string]*coordinationv1.Lease{}
	ix := s.idx()
	if err := s.fillPods(w, ix, ownerKind, ownerName, uid); err != nil {
		return err
	}
	if ownerKind == KindRollout {
		if err := s.fillExperimentPods(w, ix, ownerName); err != nil {
			return err
		}
	}
	if err := s.fillServices(w, ix, named); err != nil {
		return err
	}
	for _, u := range ix.candidatePDBs(ns, w.Template.Labels) {
		pdb, err := typedOf[policyv1.PodDisruptionBudget](s, u)
		if err != nil {
			return err
		}
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(w.Template.Labels)) {
			continue
		}
		w.PDBs = append(w.PDBs, pdb)
	}
	sort.SliceStable(w.PDBs, func(i, j int) bool { return w.PDBs[i].Name < w.PDBs[j].Name })
	return s.fillCluster(w, ix)
}

// fillExperimentPods collects the pods of the Rollout's Experiments. The
// experiment controller names each template's ReplicaSet
// <experiment>-<template> on every version, and before v1.9 gives it only
// the hash label, so a list by the Rollout's selector does not find it:
// the pods, which keep the template's labels, are found by that name.
func (s *Snapshot) fillExperimentPods(w *Workload, ix *index, rollout string) error {
	for _, u := range in(ix.owned, w.Namespace, KindRollout+"/"+rollout) {
		if u.GetKind() != "Experiment" {
			continue
		}
		ex, err := typedOf[v1alpha1.Experiment](s, u)
		if err != nil {
			return err
		}
		for _, t := range ex.Spec.Templates {
			for _, u := range in(ix.owned, w.Namespace, "ReplicaSet/"+ex.Name+"-"+t.Name) {
				if u.GetKind() != "Pod" {
					continue
				}
				p, err := typedOf[corev1.Pod](s, u)
				if err != nil {
					return err
				}
				w.ExperimentPods = append(w.ExperimentPods, p)
			}
		}
	}
	sort.SliceStable(w.ExperimentPods, func(i, j int) bool { return w.ExperimentPods[i].Name < w.ExperimentPods[j].Name })
	return nil
}

// fillPods collects the ReplicaSets the owner owns (by UID when both have
// one, else by name), oldest first, and their pods, by name.
func (s *Snapshot) fillPods(w *Workload, ix *index, ownerKind, ownerName, uid string) error {
	for _, u := range in(ix.owned, w.Namespace, ownerKind+"/"+ownerName) {
		if u.GetKind() != "ReplicaSet" || !ownedBy(u.GetOwnerReferences(), ownerKind, ownerName, uid) {
			continue
		}
		rs, err := typedOf[appsv1.ReplicaSet](s, u)
		if err != nil {
			return err
		}
		w.ReplicaSets = append(w.ReplicaSets, rs)
		var owned []*unstructured.Unstructured
		for _, p := range in(ix.owned, w.Namespace, "ReplicaSet/"+rs.Name) {
			if p.GetKind() == "Pod" && (p.GetNamespace() == rs.Namespace || p.GetNamespace() == "") {
				owned = append(owned, p)
			}
		}
		// Converted on every core: a file's 2,000 pods are maps to convert
		// (a live read brings them typed, and this finds them done).
		pods := make([]*corev1.Pod, len(owned))
		errs := make([]error, len(owned))
		par.Do(len(owned), func(i int) { pods[i], errs[i] = typedOf[corev1.Pod](s, owned[i]) })
		for i := range pods {
			if errs[i] != nil {
				return errs[i]
			}
			w.Pods = append(w.Pods, pods[i])
		}
	}
	// Oldest first; the name breaks ties within a second, so the order does
	// not depend on the input's.
	sort.SliceStable(w.ReplicaSets, func(i, j int) bool {
		a, b := w.ReplicaSets[i], w.ReplicaSets[j]
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Name < b.Name
	})
	sort.SliceStable(w.Pods, func(i, j int) bool { return w.Pods[i].Name < w.Pods[j].Name })
	return nil
}

// fillServices collects the Services that select the pods or that the
// owner names, their EndpointSlices and the Ingresses in front of them.
func (s *Snapshot) fillServices(w *Workload, ix *index, named map[string]bool) error {
	seen := map[*unstructured.Unstructured]bool{}
	add := func(u *unstructured.Unstructured, force bool) error {
		if u == nil || seen[u] {
			return nil
		}
		svc, err := typedOf[corev1.Service](s, u)
		if err != nil {
			return err
		}
		if force || ServiceSelects(svc, w.Template.Labels) {
			seen[u] = true
			w.Services = append(w.Services, svc)
		}
		return nil
	}
	for _, u := range ix.candidateServices(w.Namespace, w.Template.Labels) {
		if err := add(u, false); err != nil {
			return err
		}
	}
	for _, name := range sortedNames(named) {
		if err := add(ix.named("", "Service", w.Namespace, name), true); err != nil {
			return err
		}
	}
	sort.SliceStable(w.Services, func(i, j int) bool { return w.Services[i].Name < w.Services[j].Name })
	ings := map[*unstructured.Unstructured]bool{}
	for _, svc := range w.Services {
		for _, u := range in(ix.slices, w.Namespace, svc.Name) {
			es, err := typedOf[discoveryv1.EndpointSlice](s, u)
			if err != nil {
				return err
			}
			w.EndpointSlices[svc.Name] = append(w.EndpointSlices[svc.Name], es)
		}
		for _, u := range in(ix.ingresses, w.Namespace, svc.Name) {
			if ings[u] {
				continue
			}
			ings[u] = true
			ing, err := typedOf[networkingv1.Ingress](s, u)
			if err != nil {
				return err
			}
			w.Ingresses = append(w.Ingresses, ing)
		}
	}
	sort.SliceStable(w.Ingresses, func(i, j int) bool { return w.Ingresses[i].Name < w.Ingresses[j].Name })
	return nil
}

// fillCluster adds the nodes and node Leases (all the snapshot holds: the
// pod checks count schedulable nodes), the namespace and Istio's mesh
// ConfigMap.
func (s *Snapshot) fillCluster(w *Workload, ix *index) error {
	for _, u := range s.byGroupKind("", "Node") {
		n, err := typedOf[corev1.Node](s, u)
		if err != nil {
			return err
		}
		w.Nodes[n.Name] = n
	}
	for _, u := range s.byGroupKind("coordination.k8s.io", "Lease") {
		if u.GetNamespace() == corev1.NamespaceNodeLease {
			l, err := typedOf[coordinationv1.Lease](s, u)
			if err != nil {
				return err
			}
			w.NodeLeases[l.Name] = l
		}
	}
	if u := ix.byName[nameKey{"", "Namespace", "", w.Namespace}]; u != nil {
		n, err := typedOf[corev1.Namespace](s, u)
		if err != nil {
			return err
		}
		w.NamespaceObj = n
	}
	if u := ix.byName[nameKey{"", "ConfigMap", IstioNamespace, IstioMeshConfig}]; u != nil {
		cm, err := typedOf[corev1.ConfigMap](s, u)
		if err != nil {
			return err
		}
		w.MeshConfig = cm
	}
	return nil
}

func sortedNames(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// PodHash is the pod's ReplicaSet hash label (Rollout or Deployment).
func PodHash(p *corev1.Pod) string {
	if h := p.Labels[RolloutHashLabel]; h != "" {
		return h
	}
	return p.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
}

// ReplicaSetOf names the pod's owning ReplicaSet.
func ReplicaSetOf(p *corev1.Pod) string {
	for _, or := range p.OwnerReferences {
		if or.Kind == "ReplicaSet" {
			return or.Name
		}
	}
	return ""
}

// ParseWorkloadArg splits "deployment/web", "rollout/web" or "web" into a
// kind and a name. An unknown kind is an error.
func ParseWorkloadArg(arg string) (kind, name string, err error) {
	i := strings.Index(arg, "/")
	if i < 0 {
		return "", arg, nil
	}
	switch strings.ToLower(arg[:i]) {
	case "rollout", "rollouts", "ro", "rollout.argoproj.io", "rollouts.argoproj.io":
		kind = KindRollout
	case "deployment", "deployments", "deploy", "deployment.apps", "deployments.apps":
		kind = KindDeployment
	default:
		return "", "", fmt.Errorf("%q: pods checks a Rollout or a Deployment (rollout/NAME, deployment/NAME)", arg)
	}
	if arg[i+1:] == "" {
		return "", "", fmt.Errorf("%q: missing name", arg)
	}
	return kind, arg[i+1:], nil
}

// CrashLooping lists the pods of ReplicaSet hash whose containers have
// restarted and now wait in CrashLoopBackOff or are not ready, with their
// restarts: each return counts as progress to the controller (RD152).
func (w *Workload) CrashLooping(hash string) (pods []*corev1.Pod, restarts int32) {
	if w == nil {
		return nil, 0
	}
	for _, p := range w.Pods {
		if hash == "" || p.Labels[v1alpha1.DefaultRolloutUniqueLabelKey] != hash {
			continue
		}
		var n int32
		looping := false
		for _, cs := range p.Status.ContainerStatuses {
			n += cs.RestartCount
			if cs.RestartCount > 0 && (cs.State.Waiting != nil && cs.State.Waiting.Reason == "CrashLoopBackOff" || cs.LastTerminationState.Terminated != nil) {
				looping = true
			}
		}
		if looping {
			pods = append(pods, p)
			restarts += n
		}
	}
	return pods, restarts
}
