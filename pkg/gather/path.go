package gather

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// More resources read for the traffic path.
var (
	GVRConfigMap = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// ListKinds names the list kind of every resource gather reads, as a dynamic
// client needs it to decode a list (tests give it to client-go's fake).
func ListKinds() map[schema.GroupVersionResource]string {
	return map[schema.GroupVersionResource]string{
		GVRRollout: "RolloutList", GVRAnalysisRun: "AnalysisRunList", GVRExperiment: "ExperimentList", GVRReplicaSet: "ReplicaSetList",
		GVRDeployment: "DeploymentList", GVRPod: "PodList", GVRService: "ServiceList", GVRNode: "NodeList",
		GVRNamespace: "NamespaceList", GVREvent: "EventList", GVREndpointSlice: "EndpointSliceList",
		GVRIngress: "IngressList", GVRHPA: "HorizontalPodAutoscalerList", GVRPDB: "PodDisruptionBudgetList",
		GVRLease: "LeaseList", GVRConfigMap: "ConfigMapList", GVRVirtualService: "VirtualServiceList",
		GVRDestRule: "DestinationRuleList", GVRTrafficSplit: "TrafficSplitList", GVRHTTPRoute: "HTTPRouteList",
		GVRScaledObject: "ScaledObjectList", GVRAnalysisTemplate: "AnalysisTemplateList",
		GVRClusterAnalysisTemplate: "ClusterAnalysisTemplateList",
		GVRScaledObject:            "ScaledObjectList", GVRTraefikService: "TraefikServiceList", GVRTraefikServiceLegacy: "TraefikServiceList",
		GVRApisixRoute: "ApisixRouteList", GVRMapping: "MappingList", GVRAmbassadorMapping: "AmbassadorMappingList", GVRAppMeshService: "VirtualServiceList",
		GVRAppMeshRouter: "VirtualRouterList", GVRAppMeshNode: "VirtualNodeList", GVRGRPCRoute: "GRPCRouteList",
		GVRTCPRoute: "TCPRouteList", GVRTLSRoute: "TLSRouteList",
	}
}

// reader issues reads concurrently; what it reads goes into the collector,
// what fails becomes a gap. Wait on wg before using the results.
type reader struct {
	ctx    context.Context
	dc     dynamic.Interface
	kube   *Typed // nil: everything through dc
	c      *collector
	mapper meta.RESTMapper
	wg     sync.WaitGroup
}

// list reads every page and keeps what keep accepts (nil keeps all).
func (r *reader) list(def schema.GroupVersionResource, kind, ns string, lo metav1.ListOptions, keep func(*unstructured.Unstructured) bool) {
	r.fetch(def, kind, ns, lo, func(list []*unstructured.Unstructured) {
		for _, u := range list {
			if keep == nil || keep(u) {
				r.c.add(u)
			}
		}
	})
}

// listInto reads every page into *into without keeping anything: the caller
// filters after wg.Wait, when it knows what to keep.
func (r *reader) listInto(def schema.GroupVersionResource, kind, ns string, lo metav1.ListOptions, into *[]*unstructured.Unstructured) {
	r.fetch(def, kind, ns, lo, func(list []*unstructured.Unstructured) { *into = list })
}

// fetch lists in the background and hands the result to done; a failure
// becomes a gap.
func (r *reader) fetch(def schema.GroupVersionResource, kind, ns string, lo metav1.ListOptions, done func([]*unstructured.Unstructured)) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		g := resolve(r.mapper, def)
		list, err := listAll(r.ctx, r.dc, g, ns, lo)
		if err != nil {
			r.c.gap(g, ns, "", err)
			return
		}
		r.c.listedIn(g, ns)
		for _, u := range list {
			setGVK(u, g, kind)
		}
		done(list)
	}()
}

func (r *reader) get(def schema.GroupVersionResource, kind, ns, name string) {
	r.getIf(def, kind, ns, name, true)
}

// getIf reads one object; with gapOnMissing false a NotFound is not a gap
// (the object is optional, like Istio's mesh ConfigMap).
func (r *reader) getIf(def schema.GroupVersionResource, kind, ns, name string, gapOnMissing bool) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		g := resolve(r.mapper, def)
		var ri dynamic.ResourceInterface = r.dc.Resource(g)
		if ns != "" {
			ri = r.dc.Resource(g).Namespace(ns)
		}
		o, err := ri.Get(r.ctx, name, metav1.GetOptions{})
		if err != nil {
			if gapOnMissing || !apierrors.IsNotFound(err) {
				r.c.gap(g, ns, name, err)
			}
			return
		}
		setGVK(o, g, kind)
		r.c.add(o)
	}()
}

// trafficPath reads what sits between clients and the pods: the Services in
// the namespace that select them (one LIST), their EndpointSlices (one LIST
// of the namespace, filtered here), the Ingresses routing to them (one LIST),
// PDBs, the Namespace, and the Nodes and their Leases; after the pods are
// known, Istio's mesh config. Nodes and Leases are read in the first wave
// and kept once the pods say which matter: waiting for the pods first put a
// second round trip after the largest read.
type trafficPath struct {
	ns                      string
	labels                  map[string]string
	namedSvc, namedIng      map[string]bool
	svcs, slices, ingresses []*unstructured.Unstructured
	nodes, leases           deferredList
}

// deferredList is a LIST whose result, or failure, is kept only if it turns
// out to matter (a Rollout with no pods reads no nodes, and a node list it
// may not read is then no gap).
type deferredList struct {
	gvr  schema.GroupVersionResource
	ns   string
	objs []*unstructured.Unstructured
	err  error
}

// listDeferred reads every page in the background into d.
func (r *reader) listDeferred(def schema.GroupVersionResource, kind, ns string, d *deferredList) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		d.gvr, d.ns = resolve(r.mapper, def), ns
		d.objs, d.err = listAll(r.ctx, r.dc, d.gvr, ns, metav1.ListOptions{})
		for _, u := range d.objs {
			setGVK(u, d.gvr, kind)
		}
	}()
}

// keep adds what keep accepts, or the failure as a gap.
func (d *deferredList) keep(c *collector, keep func(*unstructured.Unstructured) bool) {
	if d.err != nil {
		c.gap(d.gvr, d.ns, "", d.err)
		return
	}
	c.listedIn(d.gvr, d.ns)
	for _, u := range d.objs {
		if keep(u) {
			c.add(u)
		}
	}
}

func startPath(r *reader, ns string, podLabels map[string]string, namedSvc, namedIng map[string]bool) *trafficPath {
	p := &trafficPath{ns: ns, labels: podLabels, namedSvc: namedSvc, namedIng: namedIng}
	r.listInto(GVRService, "Service", ns, metav1.ListOptions{}, &p.svcs)
	r.listInto(GVREndpointSlice, "EndpointSlice", ns, metav1.ListOptions{}, &p.slices)
	r.listInto(GVRIngress, "Ingress", ns, metav1.ListOptions{}, &p.ingresses)
	r.list(GVRPDB, "PodDisruptionBudget", ns, metav1.ListOptions{}, nil)
	r.get(GVRNamespace, "Namespace", "", ns)
	r.listDeferred(GVRNode, "Node", "", &p.nodes)
	r.listDeferred(GVRLease, "Lease", corev1.NamespaceNodeLease, &p.leases)
	return p
}

// finish keeps the path objects that matter, once the first wave is in, and
// starts the second wave (Istio's mesh config, when the pods are in the mesh). The caller waits on r.wg again.
func (p *trafficPath) finish(r *reader, tmpl *corev1.PodTemplateSpec, pods []*corev1.Pod) {
	kept := map[string]bool{}
	for _, u := range p.svcs {
		svc := &corev1.Service{}
		if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, svc) != nil {
			continue
		}
		if p.namedSvc[svc.Name] || snapshot.ServiceSelects(svc, p.labels) {
			kept[svc.Name] = true
			r.c.add(u)
		}
	}
	for _, u := range p.slices {
		if kept[u.GetLabels()["kubernetes.io/service-name"]] {
			r.c.add(u)
		}
	}
	for _, u := range p.ingresses {
		keep := p.namedIng[u.GetName()]
		ing := &networkingv1.Ingress{}
		if !keep && runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, ing) == nil {
			for _, n := range snapshot.IngressServices(ing) {
				keep = keep || kept[n]
			}
		}
		if keep {
			if !p.namedIng[u.GetName()] {
				u.SetManagedFields(nil) // only the router's own Ingresses need them
			}
			r.c.add(u)
		}
	}

	nodes := map[string]bool{}
	istio := tmpl.Annotations["sidecar.istio.io/inject"] == "true" || tmpl.Labels["sidecar.istio.io/inject"] == "true"
	for _, pod := range pods {
		if pod == nil {
			continue
		}
		if pod.Spec.NodeName != "" {
			nodes[pod.Spec.NodeName] = true
		}
		for _, c := range pod.Spec.Containers {
			istio = istio || c.Name == "istio-proxy"
		}
		for _, c := range pod.Spec.InitContainers {
			istio = istio || c.Name == "istio-proxy"
		}
	}
	// All nodes only when required anti-affinity needs a count of schedulable
	// ones; otherwise the nodes the pods run on. One LIST either way.
	allNodes := hasRequiredAntiAffinity(tmpl)
	if len(nodes) > 0 || allNodes {
		p.nodes.keep(r.c, func(u *unstructured.Unstructured) bool { return allNodes || nodes[u.GetName()] })
		// A dead kubelet stops renewing its Lease tens of seconds before the
		// node lifecycle controller marks anything: the Lease age is the
		// earliest signal of pods that only look Ready.
		p.leases.keep(r.c, func(u *unstructured.Unstructured) bool { return nodes[u.GetName()] })
	}
	if istio {
		r.getIf(GVRConfigMap, "ConfigMap", snapshot.IstioNamespace, snapshot.IstioMeshConfig, false)
	}
}

func hasRequiredAntiAffinity(t *corev1.PodTemplateSpec) bool {
	a := t.Spec.Affinity
	return a != nil && a.PodAntiAffinity != nil && len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0
}

// Deployment reads one Deployment's pods and traffic path, for the pods
// checks: the same reads as for a Rollout, minus the Argo objects.
func Deployment(ctx context.Context, dc dynamic.Interface, opt Options) (*snapshot.Snapshot, error) {
	c := &collector{}
	u, err := dc.Resource(GVRDeployment).Namespace(opt.Namespace).Get(ctx, opt.Name, metav1.GetOptions{})
	if err != nil {
		return nil, deploymentError(err, opt)
	}
	setGVK(u, GVRDeployment, "Deployment")
	c.add(u)
	d := &appsv1.Deployment{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, d); err != nil {
		return nil, &Error{Msg: fmt.Sprintf("deployment %q: cannot decode: %v", opt.Name, err)}
	}
	ns := d.Namespace
	selector := selectorString(d.Spec.Selector)
	rd := &reader{ctx: ctx, dc: dc, kube: opt.Kube, c: c, mapper: opt.Mapper}
	var pods typedSet[corev1.Pod]
	var rss typedSet[appsv1.ReplicaSet]
	rd.listReplicaSets(ns, selector, ownsReplicaSet("Deployment", d.Name), &rss)
	rd.listPods(ns, selector, &pods)
	path := startPath(rd, ns, d.Spec.Template.Labels, nil, nil)
	rd.wg.Wait()
	c.add(pods.objs...)
	c.add(rss.objs...)
	path.finish(rd, &d.Spec.Template, pods.typed)
	rd.wg.Wait()
	typed := map[*unstructured.Unstructured]snapshot.Decoded{}
	pods.decoded(typed)
	rss.decoded(typed)
	return snapshot.NewTyped(opt.header("Deployment", ns, d.Name, c), c.objs, typed), nil
}

func deploymentError(err error, opt Options) error {
	switch {
	case apierrors.IsNotFound(err):
		return &Error{Absent: true, Msg: fmt.Sprintf("deployment %q not found in namespace %q (check -n/--namespace, or name a Rollout)", opt.Name, opt.Namespace)}
	case apierrors.IsForbidden(err):
		return &Error{Msg: fmt.Sprintf("not allowed to get deployment %q in namespace %q%s: grant get/list on deployments.apps (see docs/rbac.yaml)", opt.Name, opt.Namespace, ForbiddenAs(err))}
	}
	return readError(err, opt, fmt.Sprintf("reading deployment %q in namespace %q", opt.Name, opt.Namespace))
}
