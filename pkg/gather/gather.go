// Package gather is the only code that reads the cluster. For one Rollout it
// reads the Rollout, its ReplicaSets and pods (by label selector, never a
// cluster-wide pod list), the Services that select its pods or that it names,
// their EndpointSlices, the Ingresses routing to them and the traffic objects
// it references, its AnalysisRuns and the AnalysisTemplates and
// ClusterAnalysisTemplates its analysis uses, autoscalers, PDBs, the nodes
// its pods run on and their Leases, its namespace and recent Events, and the
// argo-rollouts controller Deployment; Deployment reads the same traffic path for a
// Deployment. What cannot be read becomes a snapshot.Gap.
package gather

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// Resources read by the gatherer.
var (
	GVRRollout        = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}
	GVRAnalysisRun    = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "analysisruns"}
	GVRExperiment     = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "experiments"}
	GVRReplicaSet     = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	GVRDeployment     = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	GVRPod            = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	GVRService        = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	GVRNode           = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	GVRNamespace      = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	GVREvent          = schema.GroupVersionResource{Version: "v1", Resource: "events"}
	GVREndpointSlice  = schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}
	GVRIngress        = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}
	GVRHPA            = schema.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}
	GVRPDB            = schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}
	GVRLease          = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
	GVRVirtualService = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1beta1", Resource: "virtualservices"}
	GVRDestRule       = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1beta1", Resource: "destinationrules"}
	GVRTrafficSplit   = schema.GroupVersionResource{Group: "split.smi-spec.io", Version: "v1alpha2", Resource: "trafficsplits"}
	GVRHTTPRoute      = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}
	GVRScaledObject   = schema.GroupVersionResource{Group: "keda.sh", Version: "v1alpha1", Resource: "scaledobjects"}
	// The GitOps owners, read as data when the Rollout's marks name one.
	GVRApplication   = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"}
	GVRKustomization = schema.GroupVersionResource{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Resource: "kustomizations"}
	GVRHelmRelease   = schema.GroupVersionResource{Group: "helm.toolkit.fluxcd.io", Version: "v2", Resource: "helmreleases"}
)

// Options configure a gather.
type Options struct {
	Namespace string
	Name      string
	// ControllerNamespace, when set, is where the controller Deployment is
	// looked for first (default "argo-rollouts").
	ControllerNamespace string
	Context             string
	Server              string
	ToolVersion         string
	// Mapper resolves served versions of optional APIs (Istio v1beta1 vs v1…);
	// nil means use the defaults above.
	Mapper meta.RESTMapper
	// SkipController skips the controller Deployment lookup (the user named
	// the controller version, so it would not be used).
	SkipController bool
	// Timeout is the per-request bound of the connection (0: none), for
	// messages.
	Timeout time.Duration
	Now     func() time.Time
	// Kube, when set, reads pods and ReplicaSets as protobuf straight into
	// structs (Connect sets it): a Rollout's pods are the one read that
	// grows with its size, and decoding 2,000 of them from JSON into maps
	// and then into structs was most of a diagnose's time. Nil reads
	// everything through the dynamic client.
	Kube *Typed
}

// Error is a gather failure that stops the diagnosis (the Rollout itself
// could not be read). Its message is one line that says what to do.
type Error struct {
	Msg string
	// Absent is true when the object (or its API) does not exist, as opposed
	// to a read that failed: callers may then look for something else.
	Absent bool
	// Retryable is true when the cause is the network or an overloaded
	// API server: the same read may succeed later (--watch retries it).
	Retryable bool
	// Login is true when an exec credential plugin that is installed
	// failed or did not return: given the terminal, it may prompt and log
	// in (a multi-cluster scan runs the plugins without it, then gives it
	// to those, one at a time).
	Login bool
}

func (e *Error) Error() string { return e.Msg }

type collector struct {
	mu   sync.Mutex
	objs []*unstructured.Unstructured
	gaps []snapshot.Gap
	// listed is, per namespace ("" across namespaces or cluster-scoped),
	// the resources whose list was read whole.
	listed map[string][]string
}

// listedIn notes that gvr's list in ns was read whole (every page).
func (c *collector) listedIn(gvr schema.GroupVersionResource, ns string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.listed == nil {
		c.listed = map[string][]string{}
	}
	if r := resourceName(gvr); !slices.Contains(c.listed[ns], r) {
		c.listed[ns] = append(c.listed[ns], r)
	}
}

// listedResources is the header's Listed for a read of namespace ns: what
// was listed there, or across namespaces, sorted.
func (c *collector) listedResources(ns string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.Clone(c.listed[ns])
	if ns != "" {
		for _, r := range c.listed[""] {
			if !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	slices.Sort(out)
	return out
}

func (c *collector) add(us ...*unstructured.Unstructured) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.objs = append(c.objs, us...)
}

func (c *collector) gap(gvr schema.GroupVersionResource, ns, name string, err error) {
	if name == "" && answeredWhenAbsent[gvr.GroupResource()] && (apierrors.IsNotFound(err) || meta.IsNoMatchError(err)) {
		return
	}
	g := snapshot.Gap{Resource: resourceName(gvr), Namespace: ns, Name: name, Message: oneLine(err)}
	switch {
	case apierrors.IsForbidden(err):
		g.Reason = snapshot.GapForbidden
	case apierrors.IsNotFound(err) && name != "":
		g.Reason = snapshot.GapNotFound
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		g.Reason = snapshot.GapNotInstalled
		g.Message = "the API is not served (CRD not installed)"
	default:
		g.Reason = snapshot.GapError
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gaps = append(c.gaps, g)
}

// answeredWhenAbsent are the kinds listed only to find what acts on a
// Rollout. A cluster that does not serve one has none of them, so its list
// is answered, not missing: without KEDA there is no ScaledObject to scale
// the Rollout. As a gap it was an RD110 finding telling every cluster
// without KEDA to grant a read or install a CRD.
var answeredWhenAbsent = map[schema.GroupResource]bool{GVRScaledObject.GroupResource(): true}

func resourceName(gvr schema.GroupVersionResource) string {
	if gvr.Group == "" {
		return gvr.Resource
	}
	return gvr.Resource + "." + gvr.Group
}

func oneLine(err error) string { return firstLine(err.Error()) }

// selectorString renders a label selector for a LIST ("" selects all; an
// invalid selector was rejected by the API server when the object was made).
func selectorString(sel *metav1.LabelSelector) string {
	if sel == nil {
		return ""
	}
	if s, err := metav1.LabelSelectorAsSelector(sel); err == nil {
		return s.String()
	}
	return ""
}

// Rollout reads one Rollout's world and returns it as a snapshot.
func Rollout(ctx context.Context, dc dynamic.Interface, opt Options) (*snapshot.Snapshot, error) {
	c := &collector{}

	u, err := dc.Resource(GVRRollout).Namespace(opt.Namespace).Get(ctx, opt.Name, metav1.GetOptions{})
	if err != nil {
		return nil, rolloutError(err, opt)
	}
	setGVK(u, GVRRollout, "Rollout")
	c.add(u)
	ro := &v1alpha1.Rollout{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, ro); err != nil {
		return nil, &Error{Msg: fmt.Sprintf("rollout %q: cannot decode: %v", opt.Name, err)}
	}
	ns := ro.Namespace
	selector := selectorString(ro.Spec.Selector)

	rd := &reader{ctx: ctx, dc: dc, kube: opt.Kube, c: c, mapper: opt.Mapper}
	goList, goGet, wg := rd.list, rd.get, &rd.wg

	// Pods and ReplicaSets by the Rollout's selector, in its namespace only.
	var pods typedSet[corev1.Pod]
	var rss typedSet[appsv1.ReplicaSet]
	rd.listReplicaSets(ns, selector, ownsReplicaSet("Rollout", ro.Name), &rss)
	rd.listPods(ns, selector, &pods)

	refs := snapshot.ReferencedNames(ro)
	podLabels := ro.Spec.Template.Labels
	if len(podLabels) == 0 && ro.Spec.Selector != nil {
		podLabels = ro.Spec.Selector.MatchLabels // workloadRef: the template lives in the Deployment
	}
	path := startPath(rd, ns, podLabels, refs.Services, refs.Ingresses)
	for name := range refs.VirtualServices {
		goGet(GVRVirtualService, "VirtualService", ns, strings.Split(name, ".")[0])
	}
	for name := range refs.DestinationRules {
		goGet(GVRDestRule, "DestinationRule", ns, name)
	}
	for name := range refs.TrafficSplits {
		goGet(GVRTrafficSplit, "TrafficSplit", ns, name)
	}
	routeNS := ns
	if refs.RouteNamespace != "" {
		routeNS = refs.RouteNamespace
	}
	for name := range refs.HTTPRoutes {
		goGet(GVRHTTPRoute, "HTTPRoute", routeNS, name)
	}
	appMeshRouters := readRouter(rd, ns, refs, opt.ControllerNamespace)
	if ref := ro.Spec.WorkloadRef; ref != nil && ref.Kind == "Deployment" {
		goGet(GVRDeployment, "Deployment", ns, ref.Name)
	}
	goList(GVRAnalysisRun, "AnalysisRun", ns, metav1.ListOptions{}, ownedBy("Rollout", ro.Name))
	if hasExperiments(ro) {
		// Only a Rollout with an experiment step has Experiments: the list
		// (and the permission it needs) is spent on no other.
		goList(GVRExperiment, "Experiment", ns, metav1.ListOptions{}, ownedBy("Rollout", ro.Name))
	}
	// The GitOps tool's object that applied the Rollout: one GET, only when
	// the Rollout carries a tracking mark (Argo CD's legacy instance label is
	// too common to spend a request on). Argo CD keeps Applications in its
	// own namespace, argocd by default, unless the tracking-id names one.
	if m := snapshot.MarkOf(ro.ObjectMeta); m != nil && !m.Weak {
		owner := map[string]schema.GroupVersionResource{"Application": GVRApplication, "Kustomization": GVRKustomization, "HelmRelease": GVRHelmRelease}[m.Kind]
		ons := m.Namespace
		if ons == "" {
			ons = map[bool]string{true: "argocd", false: ns}[m.Kind == "Application"]
		}
		goGet(owner, m.Kind, ons, m.Name)
	}
	rd.analysisTemplates(ro)
	targets := func(u *unstructured.Unstructured) bool {
		k, _, _ := unstructured.NestedString(u.Object, "spec", "scaleTargetRef", "kind")
		n, _, _ := unstructured.NestedString(u.Object, "spec", "scaleTargetRef", "name")
		return k == "Rollout" && n == ro.Name
	}
	goList(GVRHPA, "HorizontalPodAutoscaler", ns, metav1.ListOptions{}, targets)
	goList(GVRScaledObject, "ScaledObject", ns, metav1.ListOptions{}, targets)
	goList(GVREvent, "Event", ns, metav1.ListOptions{FieldSelector: "involvedObject.kind=Rollout,involvedObject.name=" + ro.Name}, nil)
	if !opt.SkipController {
		wg.Add(1)
		go func() {
			defer wg.Done()
			findController(ctx, dc, c, opt.ControllerNamespace, ro)
		}()
	}
	wg.Wait()

	c.add(pods.objs...)
	c.add(rss.objs...)
	pickAppMeshRouter(c, appMeshRouters)
	path.finish(rd, podTemplate(c, ro), pods.typed)
	wg.Wait()
	typed := map[*unstructured.Unstructured]snapshot.Decoded{}
	pods.decoded(typed)
	rss.decoded(typed)
	return snapshot.NewTyped(opt.header("Rollout", ns, ro.Name, c), c.objs, typed), nil
}

// ownedBy keeps objects with an owner reference to the named owner.
// hasExperiments: the Rollout has an experiment step, or its status names
// a current Experiment (the steps may have changed since).
func hasExperiments(ro *v1alpha1.Rollout) bool {
	c := ro.Spec.Strategy.Canary
	if c == nil {
		return false
	}
	if ro.Status.Canary.CurrentExperiment != "" {
		return true
	}
	for _, s := range c.Steps {
		if s.Experiment != nil {
			return true
		}
	}
	return false
}

func ownedBy(kind, name string) func(*unstructured.Unstructured) bool {
	return func(u *unstructured.Unstructured) bool {
		for _, o := range u.GetOwnerReferences() {
			if o.Kind == kind && o.Name == name {
				return true
			}
		}
		return false
	}
}

// header describes a gather of one target, with what c listed and could
// not read.
func (o Options) header(kind, ns, name string, c *collector) snapshot.Header {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	return snapshot.Header{TargetKind: kind, TargetNamespace: ns, TargetName: name, TakenAt: now().UTC().Truncate(time.Second),
		Context: o.Context, Server: o.Server, ToolVersion: o.ToolVersion, Gaps: c.gaps, Listed: c.listedResources(ns)}
}

// podTemplate is the Rollout's pod template: its own, or that of the
// Deployment its workloadRef names (read in the first wave).
func podTemplate(c *collector, ro *v1alpha1.Rollout) *corev1.PodTemplateSpec {
	if ref := ro.Spec.WorkloadRef; ref != nil && ref.Kind == "Deployment" {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, u := range c.objs {
			if u.GetKind() == "Deployment" && u.GetName() == ref.Name && u.GetNamespace() == ro.Namespace {
				d := &appsv1.Deployment{}
				if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, d) == nil {
					return &d.Spec.Template
				}
			}
		}
	}
	return &ro.Spec.Template
}

// findController reads the controller Deployment that reconciles ro. The
// common install is one Get: Deployment argo-rollouts (or
// argo-rollouts-controller) in preferNS, when it reconciles ro. A Rollout
// labelled with an instance-id, or one the Deployment found does not
// reconcile (it runs with --instance-id or --namespaced elsewhere), lists the
// controller Deployments by label instead, so that the one that owns it is
// found among several; snapshot.OwningControllers then picks it.
func findController(ctx context.Context, dc dynamic.Interface, c *collector, preferNS string, ro *v1alpha1.Rollout) {
	if preferNS == "" {
		preferNS = "argo-rollouts"
	}
	var direct *unstructured.Unstructured
	if ro.Labels[snapshot.InstanceIDLabel] == "" {
		for _, name := range []string{"argo-rollouts", "argo-rollouts-controller"} {
			o, err := dc.Resource(GVRDeployment).Namespace(preferNS).Get(ctx, name, metav1.GetOptions{})
			if err == nil {
				setGVK(o, GVRDeployment, "Deployment")
				d := &appsv1.Deployment{}
				if runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, d) == nil && snapshot.ScopeOf(d).Owns(ro) {
					c.add(o)
					return
				}
				direct = o
				break
			}
			if apierrors.IsForbidden(err) {
				break
			}
		}
	}
	// Installed elsewhere (Helm chart in another namespace), or several
	// controllers: find them by label.
	list, err := listAll(ctx, dc, GVRDeployment, "", metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=argo-rollouts"})
	if err != nil {
		if direct != nil {
			c.add(direct) // what could be read: the version detection says it does not own ro
		}
		c.gap(GVRDeployment, "", "argo-rollouts controller", err)
		return
	}
	found := false
	for _, o := range list {
		setGVK(o, GVRDeployment, "Deployment")
		if direct != nil && o.GetNamespace() == direct.GetNamespace() && o.GetName() == direct.GetName() {
			direct = nil
		}
		if snapshot.IsControllerDeployment(o) {
			c.add(o)
			found = true
		}
	}
	if direct != nil {
		c.add(direct)
		found = true
	}
	if !found {
		c.gap(GVRDeployment, "", "argo-rollouts controller", apierrors.NewNotFound(GVRDeployment.GroupResource(), "argo-rollouts"))
	}
}

// listAll lists every page (see pages) through the dynamic client.
func listAll(ctx context.Context, dc dynamic.Interface, gvr schema.GroupVersionResource, ns string, lo metav1.ListOptions) ([]*unstructured.Unstructured, error) {
	return listPages(ctx, dc, gvr, ns, lo, nil)
}

// listPages lists with pagination; onPage, if set, is called after each page
// with the number of objects so far.
func listPages(ctx context.Context, dc dynamic.Interface, gvr schema.GroupVersionResource, ns string, lo metav1.ListOptions, onPage func(int)) ([]*unstructured.Unstructured, error) {
	var ri dynamic.ResourceInterface = dc.Resource(gvr)
	if ns != "" {
		ri = dc.Resource(gvr).Namespace(ns)
	}
	return pages(ctx, lo, func(ctx context.Context, lo metav1.ListOptions) ([]*unstructured.Unstructured, string, error) {
		l, err := ri.List(ctx, lo)
		if err != nil {
			return nil, "", err
		}
		items := make([]*unstructured.Unstructured, len(l.Items))
		for i := range l.Items {
			items[i] = &l.Items[i]
		}
		return items, l.GetContinue(), nil
	}, onPage)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// keepManagedFields are the kinds whose managedFields gather keeps.
var keepManagedFields = map[string]bool{"Rollout": true, "VirtualService": true, "DestinationRule": true}

func setGVK(u *unstructured.Unstructured, gvr schema.GroupVersionResource, kind string) {
	if u.GetKind() == "" {
		u.SetGroupVersionKind(gvr.GroupVersion().WithKind(kind))
	}
	// Lists drop managedFields we never read, to keep snapshots small. The
	// Rollout's and its routers' are kept: who writes their spec is how a
	// GitOps tool fighting the controller or a person shows (RD160), and a
	// router object's say who last wrote its weights, and when (RD135).
	// They are a few entries each, never per pod.
	if !keepManagedFields[kind] && !keepsManagedFields[gvr.Resource] {
		u.SetManagedFields(nil)
	}
}

func resolve(m meta.RESTMapper, def schema.GroupVersionResource) schema.GroupVersionResource {
	if m == nil || def.Group == "" {
		return def
	}
	gvk, err := m.KindFor(schema.GroupVersionResource{Group: def.Group, Resource: def.Resource})
	if err != nil {
		return def
	}
	mapping, err := m.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return def
	}
	return mapping.Resource
}

func rolloutError(err error, opt Options) error {
	switch {
	case notServed(err):
		return notServedError()
	case apierrors.IsNotFound(err):
		return &Error{Absent: true, Msg: fmt.Sprintf("rollout %q not found in namespace %q (check -n/--namespace)", opt.Name, opt.Namespace)}
	case apierrors.IsForbidden(err):
		return &Error{Msg: fmt.Sprintf("not allowed to get rollout %q in namespace %q%s: grant get/list on rollouts.argoproj.io (see docs/rbac.yaml)", opt.Name, opt.Namespace, ForbiddenAs(err))}
	}
	return readError(err, opt, fmt.Sprintf("reading rollout %q in namespace %q", opt.Name, opt.Namespace))
}

// notServed is true when the Rollout API itself is missing (CRDs not
// installed), as opposed to one Rollout.
func notServed(err error) bool {
	return apierrors.IsNotFound(err) && strings.Contains(err.Error(), "the server could not find the requested resource") || meta.IsNoMatchError(err)
}

func notServedError() error {
	return &Error{Absent: true, Msg: "the cluster does not serve rollouts.argoproj.io: Argo Rollouts CRDs are not installed (wrong --context?)"}
}

// ForbiddenAs is " as USER" for a 403 whose message names the user the
// API server took the request to be from ("" when it names none): with a
// context per cluster, an SSO group mapping or --as, who was refused is
// half of the fix. A request it took as system:anonymous carried no
// credentials it accepted, which is what to fix instead of RBAC.
func ForbiddenAs(err error) string {
	_, rest, ok := strings.Cut(err.Error(), `User "`)
	if !ok {
		return ""
	}
	user, _, ok := strings.Cut(rest, `" cannot `)
	if !ok || user == "" {
		return ""
	}
	if user == "system:anonymous" {
		return " as system:anonymous (the API server took no credentials from the request: check the context's user entry, or log in again)"
	}
	return fmt.Sprintf(" as %q", user)
}

// listError words a failed LIST of the Rollouts in a scope (scan, shell
// completion): "all namespaces" or namespace "shop", never a Rollout name.
func listError(err error, opt Options) error {
	scope := "all namespaces"
	if opt.Namespace != "" {
		scope = fmt.Sprintf("namespace %q", opt.Namespace)
	}
	switch {
	case notServed(err), apierrors.IsNotFound(err): // a LIST is not found only when its API is not served
		return notServedError()
	case apierrors.IsForbidden(err) && opt.Namespace == "":
		return &Error{Msg: "not allowed to list Rollouts in all namespaces" + ForbiddenAs(err) + ": grant list on rollouts.argoproj.io cluster-wide (see docs/rbac.yaml), or scan one namespace with -n NAMESPACE"}
	case apierrors.IsForbidden(err):
		return &Error{Msg: fmt.Sprintf("not allowed to list Rollouts in %s%s: grant list on rollouts.argoproj.io (see docs/rbac.yaml)", scope, ForbiddenAs(err))}
	}
	return readError(err, opt, "listing Rollouts in "+scope)
}

// readError words a failed read that is not about the object itself: the
// network, the server, the credentials (see netError); anything else is
// "doing: cause".
func readError(err error, opt Options, doing string) error {
	if opt.Kube != nil {
		err = opt.Kube.m.restore(err)
	}
	if e := netError(err, opt); e != nil {
		return e
	}
	return &Error{Msg: fmt.Sprintf("%s: %s", doing, oneLine(err))}
}

// Refresh re-reads only what moves fastest during a rollout — the Rollout
// and its ReplicaSets, two requests — and returns a new snapshot with them
// in place of the old ones, everything else kept. escape uses it to re-check
// a plan right before writing, when a full gather would take long enough
// for the controller to change the Rollout again.
func Refresh(ctx context.Context, dc dynamic.Interface, old *snapshot.Snapshot, namespace, name string) (*snapshot.Snapshot, error) {
	u, err := dc.Resource(GVRRollout).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, rolloutError(err, Options{Namespace: namespace, Name: name, Context: old.Header.Context, Server: old.Header.Server})
	}
	setGVK(u, GVRRollout, "Rollout")
	ro := &v1alpha1.Rollout{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, ro); err != nil {
		return nil, &Error{Msg: fmt.Sprintf("rollout %q: cannot decode: %v", name, err)}
	}
	selector := selectorString(ro.Spec.Selector)
	rss, err := listAll(ctx, dc, GVRReplicaSet, namespace, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, readError(err, Options{Context: old.Header.Context, Server: old.Header.Server}, fmt.Sprintf("re-reading the ReplicaSets of rollout %q in namespace %q", name, namespace))
	}
	objs := []*unstructured.Unstructured{u}
	for _, o := range old.Objects() {
		if k := o.GetKind(); k == "Rollout" && o.GetName() == name && o.GetNamespace() == namespace || k == "ReplicaSet" && o.GetNamespace() == namespace {
			continue
		}
		objs = append(objs, o)
	}
	for _, rs := range rss {
		setGVK(rs, GVRReplicaSet, "ReplicaSet")
		for _, o := range rs.GetOwnerReferences() {
			if o.Kind == "Rollout" && o.Name == name {
				objs = append(objs, rs)
				break
			}
		}
	}
	h := old.Header
	h.TakenAt = time.Now().UTC().Truncate(time.Second)
	return snapshot.New(h, objs), nil
}
