package gather

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// The traffic routers' objects beyond Istio, SMI and the Gateway API's
// HTTPRoute (gather.go). Versions are the ones the controller uses by
// default; resolve picks what the cluster serves.
var (
	GVRTraefikService       = schema.GroupVersionResource{Group: snapshot.GroupTraefik, Version: "v1alpha1", Resource: "traefikservices"}
	GVRTraefikServiceLegacy = schema.GroupVersionResource{Group: snapshot.GroupTraefikLegacy, Version: "v1alpha1", Resource: "traefikservices"}
	GVRApisixRoute          = schema.GroupVersionResource{Group: snapshot.GroupApisix, Version: "v2", Resource: "apisixroutes"}
	GVRMapping              = schema.GroupVersionResource{Group: snapshot.GroupAmbassador, Version: "v2", Resource: "mappings"}
	GVRAmbassadorMapping    = schema.GroupVersionResource{Group: snapshot.GroupAmbassadorX, Version: "v3alpha1", Resource: "ambassadormappings"}
	GVRAppMeshService       = schema.GroupVersionResource{Group: snapshot.GroupAppMesh, Version: "v1beta2", Resource: "virtualservices"}
	GVRAppMeshRouter        = schema.GroupVersionResource{Group: snapshot.GroupAppMesh, Version: "v1beta2", Resource: "virtualrouters"}
	GVRAppMeshNode          = schema.GroupVersionResource{Group: snapshot.GroupAppMesh, Version: "v1beta2", Resource: "virtualnodes"}
	GVRGRPCRoute            = schema.GroupVersionResource{Group: snapshot.GroupGateway, Version: "v1", Resource: "grpcroutes"}
	GVRTCPRoute             = schema.GroupVersionResource{Group: snapshot.GroupGateway, Version: "v1alpha2", Resource: "tcproutes"}
	GVRTLSRoute             = schema.GroupVersionResource{Group: snapshot.GroupGateway, Version: "v1alpha2", Resource: "tlsroutes"}
)

// keepsManagedFields are the resources whose managedFields a gather keeps:
// the router objects, where they say who last wrote a weight and when.
// Everything else drops them (setGVK).
var keepsManagedFields = map[string]bool{
	"ingresses": true, "virtualservices": true, "trafficsplits": true, "traefikservices": true,
	"apisixroutes": true, "mappings": true, "ambassadormappings": true, "virtualrouters": true, "httproutes": true,
	"grpcroutes": true, "tcproutes": true, "tlsroutes": true,
}

// served reports whether the cluster serves a resource; without a mapper
// (tests, offline) nothing is known and every candidate is tried.
func served(m meta.RESTMapper, gvr schema.GroupVersionResource) bool {
	if m == nil {
		return true
	}
	_, err := m.KindFor(schema.GroupVersionResource{Group: gvr.Group, Resource: gvr.Resource})
	return err == nil
}

// readRouter starts the reads of the router objects a Rollout's spec names
// beyond those gather.go reads: one request per object (a LIST of the
// namespace for App Mesh's VirtualRouter, whose name only its VirtualService
// knows), and none at all for a Rollout without such a router. A router
// object that does not exist is no gap: whether the controller should have
// made it is the analysis's question (snapshot.Router.Read). The reads
// return with rd.wg; pickAppMeshRouter keeps the VirtualRouter afterwards.
func readRouter(rd *reader, ns string, refs snapshot.Refs, controllerNS string) *[]*unstructured.Unstructured {
	opt := func(def schema.GroupVersionResource, kind, ns, name string) { rd.getIf(def, kind, ns, name, false) }
	for name := range refs.TraefikServices {
		// v1.10 writes traefik.io, older versions traefik.containo.us (unless
		// --traefik-api-group says otherwise): read what the cluster serves,
		// both when it serves both (Traefik v2.10+ installs both).
		legacy, current := served(rd.mapper, GVRTraefikServiceLegacy), served(rd.mapper, GVRTraefikService)
		if current || !legacy {
			opt(GVRTraefikService, "TraefikService", ns, name)
		}
		if legacy {
			opt(GVRTraefikServiceLegacy, "TraefikService", ns, name)
		}
	}
	for name := range refs.ApisixRoutes {
		opt(GVRApisixRoute, "ApisixRoute", ns, name)
	}
	for name := range refs.Mappings {
		opt(GVRMapping, "Mapping", ns, name)
		// --ambassador-api-version x.getambassador.io/… makes the controller
		// write AmbassadorMappings instead: read them where served.
		if rd.mapper != nil && served(rd.mapper, GVRAmbassadorMapping) {
			opt(GVRAmbassadorMapping, "AmbassadorMapping", ns, name)
		}
	}
	for name := range refs.AppMeshServices {
		opt(GVRAppMeshService, "VirtualService", ns, name)
	}
	for name := range refs.AppMeshNodes {
		opt(GVRAppMeshNode, "VirtualNode", ns, name)
	}
	var routers *[]*unstructured.Unstructured
	if len(refs.AppMeshServices) > 0 {
		routers = new([]*unstructured.Unstructured)
		rd.listInto(GVRAppMeshRouter, snapshot.AppMeshVirtualRouter, ns, metav1.ListOptions{}, routers)
	}
	routeNS := ns
	if refs.RouteNamespace != "" {
		routeNS = refs.RouteNamespace
	}
	for name := range refs.GRPCRoutes {
		opt(GVRGRPCRoute, "GRPCRoute", routeNS, name)
	}
	for name := range refs.TCPRoutes {
		opt(GVRTCPRoute, "TCPRoute", routeNS, name)
	}
	for name := range refs.TLSRoutes {
		opt(GVRTLSRoute, "TLSRoute", routeNS, name)
	}
	if len(refs.Plugins) > 0 {
		// Which plugins the controller loads, and from where.
		if controllerNS == "" {
			controllerNS = snapshot.ControllerNamespace
		}
		rd.get(GVRConfigMap, "ConfigMap", controllerNS, snapshot.ControllerConfigMap)
	}
	return routers
}

// pickAppMeshRouter keeps, of the VirtualRouters listed, the ones the App
// Mesh VirtualServices read name.
func pickAppMeshRouter(c *collector, routers *[]*unstructured.Unstructured) {
	if routers == nil {
		return
	}
	c.mu.Lock()
	want := map[string]bool{}
	for _, u := range c.objs {
		if u.GetKind() == "VirtualService" && strings.HasPrefix(u.GetAPIVersion(), snapshot.GroupAppMesh+"/") {
			n, _, _ := unstructured.NestedString(u.Object, "spec", "provider", "virtualRouter", "virtualRouterRef", "name")
			want[n] = true
		}
	}
	c.mu.Unlock()
	for _, u := range *routers {
		if want[u.GetName()] {
			c.add(u)
		}
	}
}
