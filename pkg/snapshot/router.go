package snapshot

import (
	"sort"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// API groups of the traffic routers' objects.
const (
	GroupNetworking      = "networking.k8s.io"
	GroupTraefik         = "traefik.io"
	GroupTraefikLegacy   = "traefik.containo.us"
	GroupApisix          = "apisix.apache.org"
	GroupAmbassador      = "getambassador.io"
	GroupAmbassadorX     = "x.getambassador.io"
	GroupAppMesh         = "appmesh.k8s.aws"
	ControllerConfigMap  = "argo-rollouts-config"
	ControllerNamespace  = "argo-rollouts"
	AppMeshVirtualRouter = "VirtualRouter"
)

// RouterResources are the resources (plural.group) whose objects a Rollout's
// traffic router reads or writes, by the kind the snapshot holds them as.
var RouterResources = map[string]string{
	GroupNetworking + "/Ingress":              "ingresses." + GroupNetworking,
	GroupIstio + "/VirtualService":            "virtualservices." + GroupIstio,
	GroupSMI + "/TrafficSplit":                "trafficsplits." + GroupSMI,
	GroupTraefik + "/TraefikService":          "traefikservices." + GroupTraefik,
	GroupTraefikLegacy + "/TraefikService":    "traefikservices." + GroupTraefikLegacy,
	GroupApisix + "/ApisixRoute":              "apisixroutes." + GroupApisix,
	GroupAmbassador + "/Mapping":              "mappings." + GroupAmbassador,
	GroupAmbassadorX + "/AmbassadorMapping":   "ambassadormappings." + GroupAmbassadorX,
	GroupAppMesh + "/VirtualService":          "virtualservices." + GroupAppMesh,
	GroupAppMesh + "/" + AppMeshVirtualRouter: "virtualrouters." + GroupAppMesh,
	GroupAppMesh + "/VirtualNode":             "virtualnodes." + GroupAppMesh,
	GroupGateway + "/HTTPRoute":               "httproutes." + GroupGateway,
	GroupGateway + "/GRPCRoute":               "grpcroutes." + GroupGateway,
	GroupGateway + "/TCPRoute":                "tcproutes." + GroupGateway,
	GroupGateway + "/TLSRoute":                "tlsroutes." + GroupGateway,
}

// Router is what the snapshot holds about a Rollout's traffic router: the
// objects its spec names or the controller writes for it, the Rollout's
// Events (where the controller reports a write that failed) and the
// controller's ConfigMap (the traffic router plugins it loads). Shared and
// read-only, like every object of a view.
type Router struct {
	// Objects are the router objects found, sorted by group, kind and name.
	Objects []*unstructured.Unstructured
	// Events are the Rollout's Events, oldest first.
	Events []*corev1.Event
	// Config is the controller's argo-rollouts-config ConfigMap, when read.
	Config *corev1.ConfigMap
	// Live is true for a gather of this one Rollout from a cluster: only
	// then does the absence of an object say that it does not exist (see
	// Read). A file or a fleet scan holds whatever it holds.
	Live bool
	// Gaps are the resources (plural.group) that could not be read.
	Gaps map[string]bool
	// Controllers are the controller Deployments that reconcile the Rollout
	// (their arguments change what some routers write).
	Controllers []*appsv1.Deployment
}

// Read reports whether the absence of an object of this kind
// ("group/Kind") from Objects means it does not exist in the cluster.
func (r *Router) Read(groupKind string) bool {
	res, ok := RouterResources[groupKind]
	return r != nil && r.Live && ok && !r.Gaps[res]
}

// Unread reports whether objects of this kind ("group/Kind") could not be
// read: one absent from Objects may exist all the same.
func (r *Router) Unread(groupKind string) bool {
	res, ok := RouterResources[groupKind]
	return r != nil && ok && r.Gaps[res]
}

// Find returns the router object of that group, kind and name, or nil.
func (r *Router) Find(group, kind, name string) *unstructured.Unstructured {
	if r == nil {
		return nil
	}
	for _, u := range r.Objects {
		if u.GroupVersionKind().Group == group && u.GetKind() == kind && u.GetName() == name {
			return u
		}
	}
	return nil
}

// routerOf collects a Rollout's router objects out of the snapshot.
func (s *Snapshot) routerOf(ro *v1alpha1.Rollout, ix *index, refs Refs) (*Router, error) {
	r := &Router{Gaps: map[string]bool{}}
	r.Live = !s.Header.Offline && s.Header.TargetKind == KindRollout
	for _, g := range s.Header.Gaps {
		r.Gaps[g.Resource] = true
	}
	ns := ro.Namespace
	seen := map[*unstructured.Unstructured]bool{}
	add := func(u *unstructured.Unstructured) {
		if u != nil && !seen[u] {
			seen[u] = true
			r.Objects = append(r.Objects, u)
		}
	}
	named := func(group, kind, ns string, names map[string]bool) {
		for n := range names {
			add(ix.named(group, kind, ns, n))
		}
	}
	named(GroupNetworking, "Ingress", ns, refs.Ingresses)
	for n := range refs.VirtualServices {
		add(ix.named(GroupIstio, "VirtualService", ns, strings.Split(n, ".")[0])) // "name.namespace" as Istio allows
	}
	named(GroupSMI, "TrafficSplit", ns, refs.TrafficSplits)
	named(GroupTraefik, "TraefikService", ns, refs.TraefikServices)
	named(GroupTraefikLegacy, "TraefikService", ns, refs.TraefikServices)
	named(GroupApisix, "ApisixRoute", ns, refs.ApisixRoutes)
	named(GroupAmbassador, "Mapping", ns, refs.Mappings)
	named(GroupAmbassadorX, "AmbassadorMapping", ns, refs.Mappings)
	named(GroupAppMesh, "VirtualService", ns, refs.AppMeshServices)
	named(GroupAppMesh, "VirtualNode", ns, refs.AppMeshNodes)
	routeNS := ns
	if refs.RouteNamespace != "" {
		routeNS = refs.RouteNamespace
	}
	named(GroupGateway, "HTTPRoute", routeNS, refs.HTTPRoutes)
	named(GroupGateway, "GRPCRoute", routeNS, refs.GRPCRoutes)
	named(GroupGateway, "TCPRoute", routeNS, refs.TCPRoutes)
	named(GroupGateway, "TLSRoute", routeNS, refs.TLSRoutes)
	// The App Mesh VirtualRouter is the one the VirtualService names.
	for n := range refs.AppMeshServices {
		vs := ix.named(GroupAppMesh, "VirtualService", ns, n)
		if vs == nil {
			continue
		}
		vr, _, _ := unstructured.NestedString(vs.Object, "spec", "provider", "virtualRouter", "virtualRouterRef", "name")
		vrNS, _, _ := unstructured.NestedString(vs.Object, "spec", "provider", "virtualRouter", "virtualRouterRef", "namespace")
		if vrNS == "" {
			vrNS = ns
		}
		add(ix.named(GroupAppMesh, AppMeshVirtualRouter, vrNS, vr))
	}
	sort.SliceStable(r.Objects, func(i, j int) bool { return objKey(r.Objects[i]) < objKey(r.Objects[j]) })
	for _, u := range in(ix.events, ns, "Rollout/"+ro.Name) {
		e, err := typedOf[corev1.Event](s, u)
		if err != nil {
			return nil, err
		}
		r.Events = append(r.Events, e)
	}
	sort.SliceStable(r.Events, func(i, j int) bool { return EventTime(r.Events[i]).Before(EventTime(r.Events[j])) })
	var controllers []*appsv1.Deployment
	for _, u := range ix.controllers {
		d, err := typedOf[appsv1.Deployment](s, u)
		if err != nil {
			return nil, err
		}
		controllers = append(controllers, d)
	}
	r.Controllers, _ = OwningControllers(ro, controllers)
	if len(refs.Plugins) > 0 {
		cmNS := ControllerNamespace
		if len(r.Controllers) > 0 {
			cmNS = r.Controllers[0].Namespace
		}
		for _, u := range s.byGroupKind("", "ConfigMap") {
			if u.GetName() == ControllerConfigMap && (u.GetNamespace() == cmNS || u.GetNamespace() == "") {
				cm, err := typedOf[corev1.ConfigMap](s, u)
				if err != nil {
					return nil, err
				}
				r.Config = cm
			}
		}
	}
	return r, nil
}
