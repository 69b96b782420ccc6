package router

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

var taken = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// rollout is a canary Rollout "app" in namespace "shop" with the given
// trafficRouting (YAML, indented under it) and status canary weight.
func rollout(routing string, weight int) string {
	return `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: app, namespace: shop, uid: ro-uid}
spec:
  replicas: 10
  selector: {matchLabels: {app: app}}
  template: {metadata: {labels: {app: app}}, spec: {containers: [{name: app, image: app:2}]}}
  strategy:
    canary:
      canaryService: app-canary
      stableService: app-stable
      steps: [{setWeight: 20}, {pause: {}}]
      trafficRouting:
` + routing + `
status:
  stableRS: aaa
  currentPodHash: bbb
  currentStepIndex: 1
  canary:
    weights:
      canary: {weight: ` + itoa(weight) + `, podTemplateHash: bbb, serviceName: app-canary}
      stable: {weight: ` + itoa(100-weight) + `, podTemplateHash: aaa, serviceName: app-stable}
`
}

func itoa(i int) string { b, _ := yaml.Marshal(i); return strings.TrimSpace(string(b)) }

// owner is the controller owner reference to the Rollout.
const owner = `ownerReferences: [{apiVersion: argoproj.io/v1alpha1, kind: Rollout, name: app, uid: ro-uid, controller: true}]`

// read builds a live snapshot of one Rollout from YAML documents and reads
// its router at version v.
func read(t *testing.T, v upstream.Version, flags Flags, docs ...string) *State {
	t.Helper()
	return readSnap(t, v, flags, snapshot.Header{TargetKind: snapshot.KindRollout, TargetNamespace: "shop", TargetName: "app", TakenAt: taken}, docs...)
}

func readSnap(t *testing.T, v upstream.Version, flags Flags, h snapshot.Header, docs ...string) *State {
	t.Helper()
	objs := exampletest.Docs(t, docs...)
	s := snapshot.New(h, objs)
	ro, err := s.FindRollout("shop", "app")
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.RolloutWorkload(ro)
	if err != nil {
		t.Fatal(err)
	}
	return Read(w.Rollout, w.Router, v, flags)
}

func canaryIngress(weight, total string, extra string) string {
	ann := `nginx.ingress.kubernetes.io/canary: "true"
    nginx.ingress.kubernetes.io/canary-weight: "` + weight + `"`
	if total != "" {
		ann += `
    nginx.ingress.kubernetes.io/canary-weight-total: "` + total + `"`
	}
	return `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: app-web-canary
  namespace: shop
  ` + owner + `
  annotations:
    ` + ann + extra + `
spec:
  rules: [{host: web, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: app-canary, port: {number: 80}}}}]}}]
`
}

const stableIngress = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: shop}
spec:
  rules: [{host: web, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: app-stable, port: {number: 80}}}}]}}]
`

const nginxRouting = `        nginx: {stableIngress: web}`

func only(t *testing.T, s *State) Object {
	t.Helper()
	if s == nil || len(s.Objects) != 1 {
		t.Fatalf("want one router object, got %+v", s)
	}
	return s.Objects[0]
}

func share(t *testing.T, s *State) int32 {
	t.Helper()
	if s.Canary == nil {
		t.Fatalf("no canary share in %+v", s)
	}
	return *s.Canary
}

func TestNginx(t *testing.T) {
	for _, v := range upstream.Modeled {
		t.Run(string(v), func(t *testing.T) {
			s := read(t, v, Flags{}, rollout(nginxRouting, 20), stableIngress, canaryIngress("20", "", ""))
			o := only(t, s)
			if o.Name != "app-web-canary" || o.Missing || o.NotOwned || *o.Canary != 20 || o.Total != 100 || o.ExpectedTotal != 100 || share(t, s) != 20 {
				t.Fatalf("canary Ingress read as %+v", o)
			}
			if *o.Stable != 80 || *o.ExpectedStable != 80 {
				t.Errorf("stable %d, expected %d; want 80 (the rest of 100)", *o.Stable, *o.ExpectedStable)
			}
			// The merge of existing annotations arrived in v1.8: the cite is
			// absent before, present from then on.
			keep := false
			for _, c := range o.Cites {
				if c.Key == "ng.keep-annotations" {
					keep = !c.Absent
				}
			}
			if keep != (v != "v1.7.2") {
				t.Errorf("ng.keep-annotations present=%v at %s", keep, v)
			}
		})
	}
}

func TestNginxWeightTotal(t *testing.T) {
	max1000 := `        maxTrafficWeight: 1000
` + nginxRouting
	// maxTrafficWeight 1000 and the total the controller writes: share 200 of 1000.
	s := read(t, "v1.10.2", Flags{}, rollout(max1000, 200), stableIngress, canaryIngress("200", "1000", ""))
	if o := only(t, s); o.Total != 1000 || o.ExpectedTotal != 1000 || share(t, s) != 200 {
		t.Fatalf("weight-total 1000: %+v share %d", o, share(t, s))
	}
	// A total left at 100 (someone removed it): 200 of 100 is everything.
	s = read(t, "v1.10.2", Flags{}, rollout(max1000, 200), stableIngress, canaryIngress("200", "", ""))
	if o := only(t, s); o.Total != 100 || o.ExpectedTotal != 1000 || share(t, s) != 2000 {
		t.Fatalf("weight-total absent with maxTrafficWeight 1000: %+v", o)
	}
	// A total set without maxTrafficWeight (additional annotation): 20 of 1000 is 2%.
	s = read(t, "v1.10.2", Flags{}, rollout(nginxRouting, 20), stableIngress, canaryIngress("20", "1000", ""))
	if o := only(t, s); o.Total != 1000 || o.ExpectedTotal != 100 || share(t, s) != 2 {
		t.Fatalf("weight-total 1000 without maxTrafficWeight: %+v", o)
	}
}

func TestNginxMissingNotOwnedAndOffline(t *testing.T) {
	s := read(t, "v1.9.3", Flags{}, rollout(nginxRouting, 0), stableIngress)
	if o := only(t, s); !o.Missing || s.Canary != nil {
		t.Fatalf("a live read without the canary Ingress: %+v", o)
	}
	// A file holds whatever it holds: absence says nothing.
	s = readSnap(t, "v1.9.3", Flags{}, snapshot.Header{Offline: true}, rollout(nginxRouting, 0), stableIngress)
	if o := only(t, s); o.Missing {
		t.Fatalf("a file without the canary Ingress reads as missing: %+v", o)
	}
	// A gather whose Ingress list failed: not missing either.
	h := snapshot.Header{TargetKind: snapshot.KindRollout, TakenAt: taken, Gaps: []snapshot.Gap{{Resource: "ingresses.networking.k8s.io", Reason: snapshot.GapForbidden}}}
	if o := only(t, readSnap(t, "v1.9.3", Flags{}, h, rollout(nginxRouting, 0), stableIngress)); o.Missing {
		t.Fatalf("a forbidden Ingress list reads as missing: %+v", o)
	}
	notOwned := strings.Replace(canaryIngress("20", "", ""), owner, "", 1)
	if o := only(t, read(t, "v1.9.3", Flags{}, rollout(nginxRouting, 20), stableIngress, notOwned)); !o.NotOwned {
		t.Fatalf("a canary Ingress without the owner reference: %+v", o)
	}
	// No stable Ingress: noted with the line that fails.
	o := only(t, read(t, "v1.9.3", Flags{}, rollout(nginxRouting, 20), canaryIngress("20", "", "")))
	if len(o.Notes) == 0 || !strings.Contains(o.Notes[0], "stable Ingress web does not exist") {
		t.Fatalf("notes %q", o.Notes)
	}
}

func TestWriterFromManagedFields(t *testing.T) {
	mf := `
  managedFields:
  - manager: rollouts-controller
    operation: Update
    time: "2026-03-01T11:50:00Z"
    fieldsType: FieldsV1
    fieldsV1: {"f:metadata":{"f:annotations":{"f:nginx.ingress.kubernetes.io/canary":{},"f:nginx.ingress.kubernetes.io/canary-weight":{}}}}
  - manager: kubectl-edit
    operation: Update
    time: "2026-03-01T11:55:00Z"
    fieldsType: FieldsV1
    fieldsV1: {"f:metadata":{"f:annotations":{"f:nginx.ingress.kubernetes.io/canary-weight":{}}}}`
	ing := strings.Replace(canaryIngress("50", "", ""), "  annotations:", mf[1:]+"\n  annotations:", 1)
	o := only(t, read(t, "v1.10.2", Flags{}, rollout(nginxRouting, 20), stableIngress, ing))
	if o.Writer == nil || o.Writer.Manager != "kubectl-edit" || o.Writer.Controller || !o.Writer.Time.Equal(taken.Add(-5*time.Minute)) {
		t.Fatalf("writer %+v", o.Writer)
	}
	if o.ControllerWrote == nil || !o.ControllerWrote.Equal(taken.Add(-10*time.Minute)) {
		t.Fatalf("controller wrote %v", o.ControllerWrote)
	}
	// The controller's write alone: it is the writer.
	ing = strings.Replace(canaryIngress("20", "", ""), "  annotations:", strings.SplitN(mf[1:], "  - manager: kubectl-edit", 2)[0]+"  annotations:", 1)
	o = only(t, read(t, "v1.10.2", Flags{}, rollout(nginxRouting, 20), stableIngress, ing))
	if o.Writer == nil || !o.Writer.Controller {
		t.Fatalf("writer %+v", o.Writer)
	}
}

func albIngress(action string) string {
	return `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: shop
  annotations:
    alb.ingress.kubernetes.io/actions.app-root: '` + action + `'
spec:
  rules: [{http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: app-root, port: {name: use-annotation}}}}]}}]
`
}

func TestALB(t *testing.T) {
	routing := `        alb: {ingress: web, rootService: app-root, servicePort: 80}`
	act := `{"Type":"forward","ForwardConfig":{"TargetGroups":[{"ServiceName":"app-canary","ServicePort":"80","Weight":30},{"ServiceName":"app-stable","ServicePort":"80","Weight":70}],"TargetGroupStickinessConfig":{"Enabled":true,"DurationSeconds":300}}}`
	for _, v := range upstream.Modeled {
		s := read(t, v, Flags{}, rollout(routing, 30), albIngress(act))
		o := only(t, s)
		if *o.Canary != 30 || *o.Stable != 70 || o.Total != 100 || o.Stickiness != 300 || share(t, s) != 30 || o.Field != "metadata.annotations[alb.ingress.kubernetes.io/actions.app-root]" {
			t.Fatalf("%s: %+v", v, o)
		}
		if s.Verify != nil {
			t.Fatalf("verification reported without the flag")
		}
	}
	// The status says 30, the action 10: the share is what the action says.
	act10 := strings.Replace(strings.Replace(act, `"Weight":30`, `"Weight":10`, 1), `"Weight":70`, `"Weight":90`, 1)
	if s := read(t, "v1.8.2", Flags{}, rollout(routing, 30), albIngress(act10)); share(t, s) != 10 || !s.Differs(30) || s.Differs(10) {
		t.Fatalf("action at 10 with status 30: share %d", share(t, s))
	}
	s := read(t, "v1.8.2", Flags{VerifyALB: true, VerifyFlag: "--aws-verify-target-group"}, rollout(routing, 30), albIngress(act))
	if s.Verify == nil || s.Verify.Flag != "--aws-verify-target-group" {
		t.Fatalf("verify %+v", s.Verify)
	}
	// No action annotation: noted, no share.
	noAct := strings.Replace(albIngress(act), "alb.ingress.kubernetes.io/actions.app-root", "other", 1)
	if s := read(t, "v1.8.2", Flags{}, rollout(routing, 30), noAct); s.Canary != nil || len(only(t, s).Notes) == 0 {
		t.Fatalf("no action: %+v", only(t, s))
	}
}

func TestALBPingPong(t *testing.T) {
	routing := `        alb: {ingress: web, rootService: app-root, servicePort: 80}`
	ro := strings.Replace(rollout(routing, 25), "      canaryService: app-canary\n      stableService: app-stable\n", "      pingPong: {pingService: app-ping, pongService: app-pong}\n", 1)
	act := `{"Type":"forward","ForwardConfig":{"TargetGroups":[{"ServiceName":"app-pong","ServicePort":"80","Weight":25},{"ServiceName":"app-ping","ServicePort":"80","Weight":75}]}}`
	// stablePingPong ping: pong is the canary.
	s := read(t, "v1.10.2", Flags{}, strings.Replace(ro, "  canary:\n    weights:", "  canary:\n    stablePingPong: ping\n    weights:", 1), albIngress(act))
	o := only(t, s)
	if *o.Canary != 25 || o.Backends[0].Role != RoleCanary || o.Backends[1].Role != RoleStable {
		t.Fatalf("ping stable: %+v", o)
	}
	// No stablePingPong yet (or pong): pong is the stable, ping the canary.
	s = read(t, "v1.10.2", Flags{}, ro, albIngress(act))
	if o := only(t, s); *o.Canary != 75 || o.Backends[1].Role != RoleCanary {
		t.Fatalf("pong stable: %+v", o)
	}
}

func TestSMI(t *testing.T) {
	routing := `        smi: {}`
	ts := func(w1, w2 string, own bool) string {
		o := ""
		if own {
			o = "\n  " + owner
		}
		return `apiVersion: split.smi-spec.io/v1alpha1
kind: TrafficSplit
metadata:
  name: app
  namespace: shop` + o + `
spec:
  service: app-stable
  backends: [{service: app-canary, weight: ` + w1 + `}, {service: app-stable, weight: ` + w2 + `}]
`
	}
	for _, v := range upstream.Modeled {
		// Named after the Rollout when trafficSplitName is empty; v1alpha1
		// weights are Quantities the API server may keep as strings.
		s := read(t, v, Flags{}, rollout(routing, 5), ts(`"5"`, "95", true))
		if o := only(t, s); o.Name != "app" || *o.Canary != 5 || *o.Stable != 95 || o.Total != 100 || o.NotOwned || len(o.Notes) != 0 {
			t.Fatalf("%s: %+v", v, o)
		}
	}
	if o := only(t, read(t, "v1.7.2", Flags{}, rollout(routing, 5), ts("5", "95", false))); !o.NotOwned {
		t.Fatalf("TrafficSplit without owner: %+v", o)
	}
	if o := only(t, read(t, "v1.7.2", Flags{}, rollout(routing, 5))); !o.Missing {
		t.Fatalf("no TrafficSplit: %+v", o)
	}
}

func traefikService(group string, extra string) string {
	return `apiVersion: ` + group + `/v1alpha1
kind: TraefikService
metadata: {name: app-weighted, namespace: shop}
spec:
  weighted:
    services: [{name: app-canary, port: 80, weight: 20}, {name: app-stable, port: 80, weight: 80}` + extra + `]
`
}

func TestTraefikGroupPerVersion(t *testing.T) {
	routing := `        traefik: {weightedTraefikServiceName: app-weighted}`
	for _, v := range upstream.Modeled {
		want, other := snapshot.GroupTraefikLegacy, snapshot.GroupTraefik
		if v == "v1.10.2" {
			want, other = other, want
		}
		s := read(t, v, Flags{}, rollout(routing, 20), traefikService(want, ""))
		if o := only(t, s); *o.Canary != 20 || o.Total != 100 || !strings.HasPrefix(o.APIVersion, want+"/") {
			t.Fatalf("%s: %+v", v, o)
		}
		// Only the other group's object: missing, and noted.
		o := only(t, read(t, v, Flags{}, rollout(routing, 20), traefikService(other, "")))
		if !o.Missing || len(o.Notes) == 0 || !strings.Contains(o.Notes[0], "writes "+want) {
			t.Fatalf("%s with only %s: %+v", v, other, o)
		}
	}
	// --traefik-api-group wins over the version's default.
	s := read(t, "v1.10.2", Flags{TraefikGroup: snapshot.GroupTraefikLegacy}, rollout(routing, 20), traefikService(snapshot.GroupTraefikLegacy, ""))
	if o := only(t, s); o.Missing || *o.Canary != 20 {
		t.Fatalf("flagged group: %+v", o)
	}
	// A third service keeps its weight: the canary's 20 is a share of 130.
	s = read(t, "v1.10.2", Flags{}, rollout(routing, 20), traefikService(snapshot.GroupTraefik, ", {name: other, port: 80, weight: 30}"))
	if o := only(t, s); o.Total != 130 || share(t, s) != 15 {
		t.Fatalf("third service: %+v share %d", o, share(t, s))
	}
}

func TestApisix(t *testing.T) {
	routing := `        apisix: {route: {name: app-route}}`
	ar := `apiVersion: apisix.apache.org/v2
kind: ApisixRoute
metadata: {name: app-route, namespace: shop}
spec:
  http:
  - name: app-route
    backends: [{serviceName: app-canary, servicePort: 80, weight: 40}, {serviceName: app-stable, servicePort: 80, weight: 60}]
  - name: other
    backends: [{serviceName: x, servicePort: 80}]
`
	for _, v := range upstream.Modeled {
		s := read(t, v, Flags{}, rollout(routing, 40), ar)
		if o := only(t, s); *o.Canary != 40 || o.Total != 100 || o.Field != "spec.http[app-route].backends" {
			t.Fatalf("%s: %+v", v, o)
		}
	}
	routing = `        apisix: {route: {name: app-route, rules: [missing]}}`
	if o := only(t, read(t, "v1.9.3", Flags{}, rollout(routing, 40), ar)); len(o.Notes) == 0 || o.Canary != nil {
		t.Fatalf("a rule the route lacks: %+v", o)
	}
}

func TestAmbassador(t *testing.T) {
	routing := `        ambassador: {mappings: [app]}`
	base := `apiVersion: getambassador.io/v2
kind: Mapping
metadata: {name: app, namespace: shop}
spec: {prefix: /, service: app-stable}
`
	canary := `apiVersion: getambassador.io/v2
kind: Mapping
metadata: {name: app-canary, namespace: shop}
spec: {prefix: /, service: app-canary, weight: 25}
`
	for _, v := range upstream.Modeled {
		s := read(t, v, Flags{}, rollout(routing, 25), base, canary)
		if o := only(t, s); *o.Canary != 25 || o.Total != 100 || share(t, s) != 25 || len(o.Notes) != 0 {
			t.Fatalf("%s: %+v", v, o)
		}
	}
	// At 0 the controller deletes the canary Mapping: absence is weight 0.
	s := read(t, "v1.8.3", Flags{}, rollout(routing, 0), base)
	if o := only(t, s); o.Missing || *o.Canary != 0 || share(t, s) != 0 {
		t.Fatalf("no canary Mapping: %+v", o)
	}
	// A base Mapping with a weight is refused by the controller.
	weighted := strings.Replace(base, "service: app-stable}", "service: app-stable, weight: 10}", 1)
	if o := only(t, read(t, "v1.8.3", Flags{}, rollout(routing, 0), weighted)); len(o.Notes) == 0 || !strings.Contains(o.Notes[0], "sets weight 10") {
		t.Fatalf("weighted base: %+v", o.Notes)
	}
}

func TestAppMesh(t *testing.T) {
	routing := `        appMesh:
          virtualService: {name: app-vs, routes: [primary]}
          virtualNodeGroup: {canaryVirtualNodeRef: {name: app-canary-vn}, stableVirtualNodeRef: {name: app-stable-vn}}`
	vs := `apiVersion: appmesh.k8s.aws/v1beta2
kind: VirtualService
metadata: {name: app-vs, namespace: shop}
spec: {provider: {virtualRouter: {virtualRouterRef: {name: app-vr}}}}
`
	vr := `apiVersion: appmesh.k8s.aws/v1beta2
kind: VirtualRouter
metadata: {name: app-vr, namespace: shop}
spec:
  routes:
  - name: primary
    httpRoute:
      action: {weightedTargets: [{virtualNodeRef: {name: app-canary-vn}, weight: 10}, {virtualNodeRef: {name: app-stable-vn}, weight: 90}]}
  - name: other
    httpRoute:
      action: {weightedTargets: [{virtualNodeRef: {name: app-canary-vn}, weight: 50}, {virtualNodeRef: {name: app-stable-vn}, weight: 50}]}
`
	for _, v := range upstream.Modeled {
		s := read(t, v, Flags{}, rollout(routing, 10), vs, vr)
		if o := only(t, s); *o.Canary != 10 || o.Total != 100 || o.Name != "app-vr" {
			t.Fatalf("%s: %+v", v, o)
		}
	}
	// Without the VirtualRouter: missing.
	if o := only(t, read(t, "v1.10.2", Flags{}, rollout(routing, 10), vs)); !o.Missing || o.Kind != "VirtualRouter" {
		t.Fatalf("no VirtualRouter: %+v", o)
	}
}

func TestGatewayPlugin(t *testing.T) {
	routing := `        plugins:
          argoproj-labs/gatewayAPI: {httpRoute: app-route}`
	route := `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app-route, namespace: shop}
spec:
  rules:
  - backendRefs: [{name: app-canary, port: 80, weight: 30}, {name: app-stable, port: 80, weight: 70}]
  - backendRefs: [{name: unrelated, port: 80}]
status:
  parents:
  - parentRef: {name: gw}
    conditions:
    - {type: Accepted, status: "True", reason: Accepted}
    - {type: ResolvedRefs, status: "False", reason: BackendNotFound, message: "Service app-canary not found"}
`
	cm := `apiVersion: v1
kind: ConfigMap
metadata: {name: argo-rollouts-config, namespace: argo-rollouts}
data:
  trafficRouterPlugins: |
    - name: argoproj-labs/gatewayAPI
      location: https://example/plugin
`
	for _, v := range upstream.Modeled {
		s := read(t, v, Flags{}, rollout(routing, 30), route, cm)
		o := only(t, s)
		if *o.Canary != 30 || o.Total != 100 || len(o.Conditions) != 2 || o.Conditions[1].Status != "False" {
			t.Fatalf("%s: %+v", v, o)
		}
		if len(s.Plugins) != 1 || !s.Plugins[0].Known || !s.Plugins[0].Configured || s.Router != "plugin argoproj-labs/gatewayAPI" {
			t.Fatalf("%s plugins %+v router %q", v, s.Plugins, s.Router)
		}
	}
	// A backendRef without a weight weighs 1; a plugin the ConfigMap lacks.
	noWeight := strings.Replace(route, ", weight: 70", "", 1)
	other := strings.Replace(cm, "argoproj-labs/gatewayAPI", "other/plugin", 1)
	s := read(t, "v1.9.3", Flags{}, rollout(routing, 30), noWeight, other)
	if o := only(t, s); *o.Stable != 1 || o.Total != 31 {
		t.Fatalf("default weight: %+v", o)
	}
	if !s.Plugins[0].Known || s.Plugins[0].Configured {
		t.Fatalf("unconfigured plugin read as %+v", s.Plugins[0])
	}
	// Without the ConfigMap nothing is known about the plugin.
	if s := read(t, "v1.9.3", Flags{}, rollout(routing, 30), route); s.Plugins[0].Known {
		t.Fatalf("plugin known without its ConfigMap: %+v", s.Plugins[0])
	}
}

func TestIstio(t *testing.T) {
	routing := `        istio: {virtualService: {name: app, routes: [primary]}}`
	vs := `apiVersion: networking.istio.io/v1beta1
kind: VirtualService
metadata: {name: app, namespace: shop}
spec:
  http:
  - name: primary
    route: [{destination: {host: app-stable}, weight: 95}, {destination: {host: app-canary}, weight: 5}]
  - name: ignored
    route: [{destination: {host: app-stable}, weight: 50}, {destination: {host: app-canary}, weight: 50}]
`
	s := read(t, "v1.10.2", Flags{}, rollout(routing, 20), vs)
	if o := only(t, s); *o.Canary != 5 || *o.Stable != 95 || *o.ExpectedStable != 80 || share(t, s) != 5 {
		t.Fatalf("%+v", o)
	}
}

func TestFlagsOf(t *testing.T) {
	d := &appsv1.Deployment{}
	d.Spec.Template.Spec.Containers = []corev1.Container{{Args: []string{"--aws-verify-target-group", "--traefik-api-group", "traefik.io", "--traffic-split-api-version=v1alpha3", "--ambassador-api-version=x.getambassador.io/v3alpha1"}}}
	f := FlagsOf([]*appsv1.Deployment{d})
	if !f.VerifyALB || f.VerifyFlag != "--aws-verify-target-group" || f.TraefikGroup != "traefik.io" || f.TrafficSplitAPI != "v1alpha3" || f.AmbassadorVersion != "x.getambassador.io/v3alpha1" {
		t.Fatalf("%+v", f)
	}
	d.Spec.Template.Spec.Containers[0].Args = []string{"--alb-verify-weight=false"}
	if f := FlagsOf([]*appsv1.Deployment{d}); f.VerifyALB {
		t.Fatalf("--alb-verify-weight=false read as on")
	}
	if f := FlagsOf(nil); f != (Flags{}) {
		t.Fatalf("no controller: %+v", f)
	}
}

func TestEvents(t *testing.T) {
	ev := func(reason, msg string, at time.Time, count int) string {
		return `apiVersion: v1
kind: Event
metadata: {name: e-` + strings.ToLower(reason) + `-` + itoa(at.Second()) + `, namespace: shop}
involvedObject: {kind: Rollout, name: app, namespace: shop}
reason: ` + reason + `
type: Warning
message: "` + msg + `"
count: ` + itoa(count) + `
lastTimestamp: "` + at.Format(time.RFC3339) + `"
`
	}
	s := read(t, "v1.10.2", Flags{}, rollout(nginxRouting, 20), stableIngress, canaryIngress("20", "", ""),
		ev("TrafficRoutingError", "old", taken.Add(-time.Minute), 2),
		ev("TrafficRoutingError", "new", taken.Add(-10*time.Second), 1),
		ev("TrafficWeightUpdated", "Traffic weight updated from 5 to 20", taken.Add(-30*time.Second), 1),
		ev("Unrelated", "x", taken, 1))
	if len(s.Events) != 1 || s.Events[0].Message != "new" || s.Events[0].Count != 3 {
		t.Fatalf("events %+v", s.Events)
	}
	if s.WeightSetAt == nil || !s.WeightSetAt.Equal(taken.Add(-30*time.Second)) {
		t.Fatalf("weight set at %v", s.WeightSetAt)
	}
	if e := s.Latest("TargetGroupUnverified", "TrafficRoutingError"); e == nil || e.Message != "new" {
		t.Fatalf("latest %+v", e)
	}
}

func TestNoRouter(t *testing.T) {
	ro := strings.Replace(rollout("        {}", 0), "      trafficRouting:\n        {}\n", "", 1)
	if s := read(t, "v1.10.2", Flags{}, ro); s != nil {
		t.Fatalf("a Rollout without trafficRouting has router state %+v", s)
	}
}

func TestServiceWeights(t *testing.T) {
	s := read(t, "v1.10.2", Flags{}, rollout(nginxRouting, 20), stableIngress, canaryIngress("50", "", ""))
	w := s.ServiceWeights()
	if w["app-canary"] != 50 || w["app-stable"] != 50 {
		t.Fatalf("service weights %v", w)
	}
}

// A setHeaderRoute on ALB: the action and conditions annotations the
// controller writes per route, read as a managed route; an Istio header
// route and a mirror route read from the VirtualService.
func TestManagedRoutes(t *testing.T) {
	routing := `        managedRoutes: [{name: by-header}]
        alb: {ingress: web, rootService: app-root, servicePort: 80}`
	act := `{"Type":"forward","ForwardConfig":{"TargetGroups":[{"ServiceName":"app-canary","ServicePort":"80","Weight":80},{"ServiceName":"app-stable","ServicePort":"80","Weight":20}]}}`
	ing := strings.Replace(albIngress(act), "  annotations:\n", `  annotations:
    alb.ingress.kubernetes.io/actions.by-header: '{"Type":"forward","ForwardConfig":{"TargetGroups":[{"ServiceName":"app-canary","ServicePort":"80","Weight":100}]}}'
    alb.ingress.kubernetes.io/conditions.by-header: '[{"field":"http-header","httpHeaderConfig":{"httpHeaderName":"x-canary","values":["yes","true"]}}]'
`, 1)
	ing = strings.Replace(ing, "rules: [{http: {paths: [", "rules: [{http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: by-header, port: {name: use-annotation}}}}, ", 1)
	s := read(t, "v1.10.2", Flags{}, rollout(routing, 20), ing)
	want := ManagedRoute{Object: "Ingress shop/web", Name: "by-header", Match: "http-header x-canary=yes|true", CanaryWeight: 100, RouteTotal: 100, BeforePrimary: true}
	if len(s.ManagedRoutes) != 1 || s.ManagedRoutes[0] != want {
		t.Errorf("ALB managed routes %+v, want %+v", s.ManagedRoutes, want)
	}
	// Istio: a header route and a mirror route ahead of the weighted one.
	vs := `apiVersion: networking.istio.io/v1alpha3
kind: VirtualService
metadata: {name: app, namespace: shop}
spec:
  http:
  - name: by-header
    match: [{headers: {x-canary: {exact: "yes"}}}]
    route: [{destination: {host: app-canary}, weight: 100}]
  - name: mirror
    match: [{method: {exact: GET}}, {uri: {prefix: /api}}]
    mirror: {host: app-canary}
    mirrorPercentage: {value: 30}
    route: [{destination: {host: app-stable}, weight: 80}, {destination: {host: app-canary}, weight: 20}]
  - name: primary
    route: [{destination: {host: app-stable}, weight: 80}, {destination: {host: app-canary}, weight: 20}]
`
	s = read(t, "v1.10.2", Flags{}, rollout(`        managedRoutes: [{name: by-header}, {name: mirror}]
        istio: {virtualService: {name: app, routes: [primary]}}`, 20), vs)
	if len(s.ManagedRoutes) != 2 {
		t.Fatalf("Istio managed routes %+v", s.ManagedRoutes)
	}
	h, m := s.ManagedRoutes[0], s.ManagedRoutes[1]
	if h.Match != "headers.x-canary.exact=yes" || h.CanaryWeight != 100 || h.RouteTotal != 100 || h.Mirror || !h.BeforePrimary {
		t.Errorf("header route %+v", h)
	}
	if m.Match != "method.exact=GET or uri.prefix=/api" || !m.Mirror || m.MirrorPercent != 30 || m.CanaryWeight != 20 || m.RouteTotal != 100 {
		t.Errorf("mirror route %+v", m)
	}
	// Routes no managedRoutes entry names are not managed.
	if s := read(t, "v1.10.2", Flags{}, rollout(`        istio: {virtualService: {name: app, routes: [primary]}}`, 20), vs); len(s.ManagedRoutes) != 0 {
		t.Errorf("unmanaged routes read as managed: %+v", s.ManagedRoutes)
	}
}
