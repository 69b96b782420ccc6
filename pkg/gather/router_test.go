package gather

import (
	"context"
	"sort"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// withRouting is the bundled incident with its Rollout's trafficRouting
// replaced (YAML of the trafficRouting object) and extra objects added.
func withRouting(t *testing.T, routing string, extra ...string) []runtime.Object {
	t.Helper()
	tr := map[string]interface{}{}
	if err := yaml.Unmarshal([]byte(routing), &tr); err != nil {
		t.Fatal(err)
	}
	objs := exampletest.Objects(t, exampletest.Incident, func(u *unstructured.Unstructured) {
		if u.GetKind() == "Rollout" {
			if err := unstructured.SetNestedField(u.Object, tr, "spec", "strategy", "canary", "trafficRouting"); err != nil {
				t.Fatal(err)
			}
		}
	})
	for _, e := range extra {
		m := map[string]interface{}{}
		if err := yaml.Unmarshal([]byte(e), &m); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	return objs
}

// requests gathers the Rollout and returns the snapshot and the requests
// made, as "verb resource".
func requests(t *testing.T, objs []runtime.Object) (*snapshot.Snapshot, []string) {
	t.Helper()
	dc := fakeClient(t, objs...)
	var mu sync.Mutex
	var reqs []string
	dc.PrependReactor("*", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		reqs = append(reqs, a.GetVerb()+" "+a.GetResource().Resource+"."+a.GetResource().Group)
		return false, nil, nil
	})
	snap, err := Rollout(context.Background(), dc, Options{Namespace: "shop", Name: "checkout-api"})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(reqs)
	return snap, reqs
}

// TestRouterReads pins what each router adds to a Rollout's reads: the
// objects it names, by name, and nothing that grows with the Rollout; and
// that each object gathered keeps its managedFields (who wrote the weight).
func TestRouterReads(t *testing.T) {
	_, base := requests(t, withRouting(t, `{nginx: {stableIngress: web}}`))
	mf := `
  managedFields: [{manager: rollouts-controller, operation: Update, fieldsType: FieldsV1, fieldsV1: {"f:spec": {}}}]`
	cases := []struct {
		name, routing string
		objs          []string
		added         []string // requests beyond the nginx Rollout's (which reads nothing of its own: its Ingresses are in the namespace's list)
		kept          []string // "Kind/name" the snapshot must hold
	}{
		{"nginx", `{nginx: {stableIngress: web}}`, []string{
			"{apiVersion: networking.k8s.io/v1, kind: Ingress, metadata: {name: web, namespace: shop}, spec: {rules: [{http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: checkout-api-stable, port: {number: 80}}}}]}}]}}",
			"{apiVersion: networking.k8s.io/v1, kind: Ingress, metadata: {name: checkout-api-web-canary, namespace: shop" + strings.ReplaceAll(mf, "\n ", ",") + "}, spec: {rules: [{http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: checkout-api-canary, port: {number: 80}}}}]}}]}}",
		}, nil, []string{"Ingress/web", "Ingress/checkout-api-web-canary"}},
		{"alb", `{alb: {ingress: web, servicePort: 80}}`, []string{
			"{apiVersion: networking.k8s.io/v1, kind: Ingress, metadata: {name: web, namespace: shop}, spec: {rules: [{http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: checkout-api-stable, port: {name: use-annotation}}}}]}}]}}",
		}, nil, []string{"Ingress/web"}},
		{"smi", `{smi: {}}`, []string{
			"{apiVersion: split.smi-spec.io/v1alpha2, kind: TrafficSplit, metadata: {name: checkout-api, namespace: shop}, spec: {backends: []}}",
		}, []string{"get trafficsplits.split.smi-spec.io"}, []string{"TrafficSplit/checkout-api"}},
		{"traefik", `{traefik: {weightedTraefikServiceName: tw}}`, []string{
			"{apiVersion: traefik.io/v1alpha1, kind: TraefikService, metadata: {name: tw, namespace: shop}, spec: {weighted: {services: []}}}",
		}, []string{"get traefikservices.traefik.containo.us", "get traefikservices.traefik.io"}, []string{"TraefikService/tw"}},
		{"apisix", `{apisix: {route: {name: ar}}}`, []string{
			"{apiVersion: apisix.apache.org/v2, kind: ApisixRoute, metadata: {name: ar, namespace: shop}, spec: {http: []}}",
		}, []string{"get apisixroutes.apisix.apache.org"}, []string{"ApisixRoute/ar"}},
		{"ambassador", `{ambassador: {mappings: [m]}}`, []string{
			"{apiVersion: getambassador.io/v2, kind: Mapping, metadata: {name: m, namespace: shop}, spec: {}}",
			"{apiVersion: getambassador.io/v2, kind: Mapping, metadata: {name: m-canary, namespace: shop}, spec: {weight: 5}}",
		}, []string{"get mappings.getambassador.io", "get mappings.getambassador.io"}, []string{"Mapping/m", "Mapping/m-canary"}},
		{"appmesh", `{appMesh: {virtualService: {name: vs}, virtualNodeGroup: {canaryVirtualNodeRef: {name: c}, stableVirtualNodeRef: {name: s}}}}`, []string{
			"{apiVersion: appmesh.k8s.aws/v1beta2, kind: VirtualService, metadata: {name: vs, namespace: shop}, spec: {provider: {virtualRouter: {virtualRouterRef: {name: vr}}}}}",
			"{apiVersion: appmesh.k8s.aws/v1beta2, kind: VirtualRouter, metadata: {name: vr, namespace: shop}, spec: {routes: []}}",
			"{apiVersion: appmesh.k8s.aws/v1beta2, kind: VirtualRouter, metadata: {name: unrelated, namespace: shop}, spec: {routes: []}}",
		}, []string{"get virtualnodes.appmesh.k8s.aws", "get virtualnodes.appmesh.k8s.aws", "get virtualservices.appmesh.k8s.aws", "list virtualrouters.appmesh.k8s.aws"},
			[]string{"VirtualService/vs", "VirtualRouter/vr"}},
		{"gateway", `{plugins: {argoproj-labs/gatewayAPI: {httpRoute: hr, grpcRoutes: [{name: gr}]}}}`, []string{
			"{apiVersion: gateway.networking.k8s.io/v1, kind: HTTPRoute, metadata: {name: hr, namespace: shop}, spec: {rules: []}}",
			"{apiVersion: v1, kind: ConfigMap, metadata: {name: argo-rollouts-config, namespace: argo-rollouts}, data: {}}",
		}, []string{"get configmaps.", "get grpcroutes.gateway.networking.k8s.io", "get httproutes.gateway.networking.k8s.io"},
			[]string{"HTTPRoute/hr", "ConfigMap/argo-rollouts-config"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			snap, reqs := requests(t, withRouting(t, c.routing, c.objs...))
			if got, want := diff(reqs, base), c.added; strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("requests beyond the base: %v, want %v", got, want)
			}
			have := map[string]*unstructured.Unstructured{}
			for _, o := range snap.Objects() {
				have[o.GetKind()+"/"+o.GetName()] = o
			}
			for _, k := range c.kept {
				if have[k] == nil {
					t.Errorf("the snapshot lacks %s", k)
				}
			}
			if have["VirtualRouter/unrelated"] != nil {
				t.Errorf("kept a VirtualRouter no VirtualService names")
			}
			if c.name == "nginx" && len(have["Ingress/checkout-api-web-canary"].GetManagedFields()) == 0 {
				t.Errorf("the canary Ingress lost its managedFields")
			}
		})
	}
}

// diff is a minus b, as multisets (both sorted).
func diff(a, b []string) []string {
	left := map[string]int{}
	for _, x := range b {
		left[x]++
	}
	var out []string
	for _, x := range a {
		if left[x] > 0 {
			left[x]--
			continue
		}
		out = append(out, x)
	}
	return out
}
