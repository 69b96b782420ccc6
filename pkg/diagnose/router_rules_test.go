package diagnose

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules/rulestest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// The router rules' table: a canary Rollout "app" of 10 in namespace shop at
// setWeight 20 (stable app-aaa 10/10, canary app-bbb 2/2, both Services with
// ready endpoints), its trafficRouting and router objects as a case gives
// them, diagnosed as a live read at every modeled version.

var routerNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const owner = `ownerReferences: [{apiVersion: argoproj.io/v1alpha1, kind: Rollout, name: app, uid: ro-uid, controller: true}]`

func routerRollout(routing string, weight int, statusExtra string) string {
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: app, namespace: shop, uid: ro-uid, generation: 2}
spec:
  replicas: 10
  selector: {matchLabels: {app: app}}
  template: {metadata: {labels: {app: app}}, spec: {containers: [{name: app, image: "app:2", readinessProbe: {httpGet: {path: /ready, port: 80}}}]}}
  strategy:
    canary:
      canaryService: app-canary
      stableService: app-stable
      steps: [{setWeight: 20}, {pause: {}}]
      trafficRouting:
%s
status:
  observedGeneration: "2"
  phase: Paused
  stableRS: aaa
  currentPodHash: bbb
  currentStepIndex: 1
  pauseConditions: [{reason: CanaryPauseStep, startTime: "2026-03-01T11:50:00Z"}]
  canary:%s
    weights:
      canary: {weight: %d, podTemplateHash: bbb, serviceName: app-canary}
      stable: {weight: %d, podTemplateHash: aaa, serviceName: app-stable}
`, routing, statusExtra, weight, 100-weight)
}

func routerWorld(canaryEndpoints, stableEndpoints int) []string {
	rs := func(hash string, n int, created string) string {
		return fmt.Sprintf(`apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: app-%s
  namespace: shop
  creationTimestamp: "%s"
  labels: {app: app, rollouts-pod-template-hash: %s}
  annotations: {rollout.argoproj.io/revision: "1"}
  ownerReferences: [{apiVersion: argoproj.io/v1alpha1, kind: Rollout, name: app, uid: ro-uid, controller: true}]
spec: {replicas: %d, selector: {matchLabels: {app: app, rollouts-pod-template-hash: %s}}, template: {metadata: {labels: {app: app, rollouts-pod-template-hash: %s}}, spec: {containers: [{name: app, image: "app:1"}]}}}
status: {replicas: %d, readyReplicas: %d, availableReplicas: %d}
`, hash, created, hash, n, hash, hash, n, n, n)
	}
	svc := func(name, hash string) string {
		return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: %s, namespace: shop}
spec: {selector: {app: app, rollouts-pod-template-hash: %s}, ports: [{port: 80}]}
`, name, hash)
	}
	slice := func(svc string, n int) string {
		eps := []string{}
		for i := 0; i < n; i++ {
			eps = append(eps, fmt.Sprintf(`{addresses: ["10.0.%d.%d"], conditions: {ready: true}}`, len(svc), i+1))
		}
		return fmt.Sprintf(`apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: %s-x, namespace: shop, labels: {kubernetes.io/service-name: %s}}
addressType: IPv4
endpoints: [%s]
`, svc, svc, strings.Join(eps, ", "))
	}
	return []string{
		rs("aaa", 10, "2026-03-01T10:00:00Z"), rs("bbb", 2, "2026-03-01T11:40:00Z"),
		svc("app-stable", "aaa"), svc("app-canary", "bbb"),
		slice("app-stable", stableEndpoints), slice("app-canary", canaryEndpoints),
	}
}

// controllerDeployment is the controller of version ver with args.
func controllerDeployment(ver upstream.Version, args ...string) string {
	a := "[]"
	if len(args) > 0 {
		a = `["` + strings.Join(args, `", "`) + `"]`
	}
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: argo-rollouts, namespace: argo-rollouts, labels: {app.kubernetes.io/name: argo-rollouts}}
spec: {selector: {matchLabels: {app: x}}, template: {spec: {containers: [{name: argo-rollouts, image: "quay.io/argoproj/argo-rollouts:%s", args: %s}]}}}
`, ver, a)
}

func diagnoseRouter(t *testing.T, ver upstream.Version, docs []string) *Report {
	t.Helper()
	objs := exampletest.Docs(t, docs...)
	h := snapshot.Header{TargetKind: snapshot.KindRollout, TargetNamespace: "shop", TargetName: "app", TakenAt: routerNow}
	cv := model.ControllerVersion{Assumed: ver, Source: model.SourceFlag, Exact: true}
	return Run(exampletest.ViewOf(t, snapshot.New(h, objs)), cv, Options{})
}

// routerKind is one router: its trafficRouting and its objects with the
// canary at weight w.
type routerKind struct {
	name    string
	routing string
	objects func(w int) []string
}

func nginxCanary(w int, total, extra string) string {
	ann := fmt.Sprintf(`{nginx.ingress.kubernetes.io/canary: "true", nginx.ingress.kubernetes.io/canary-weight: "%d"%s}`, w, total)
	return fmt.Sprintf(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: app-web-canary
  namespace: shop
  %s
  annotations: %s%s
spec: {rules: [{http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: app-canary, port: {number: 80}}}}]}}]}
`, owner, ann, extra)
}

const nginxStable = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: shop}
spec: {rules: [{http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: app-stable, port: {number: 80}}}}]}}]}
`

func albIngress(w int, extra string) string {
	return fmt.Sprintf(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: shop
  annotations:
    alb.ingress.kubernetes.io/actions.app-stable: '{"Type":"forward","ForwardConfig":{"TargetGroups":[{"ServiceName":"app-canary","ServicePort":"80","Weight":%d},{"ServiceName":"app-stable","ServicePort":"80","Weight":%d}%s]}}'
spec: {rules: [{http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: app-stable, port: {name: use-annotation}}}}]}}]}
`, w, 100-w, extra)
}

func trafficSplit(w int, own bool) string {
	o := ""
	if own {
		o = "\n  " + owner
	}
	return fmt.Sprintf(`apiVersion: split.smi-spec.io/v1alpha1
kind: TrafficSplit
metadata:
  name: app
  namespace: shop%s
spec: {service: app-stable, backends: [{service: app-canary, weight: "%d"}, {service: app-stable, weight: "%d"}]}
`, o, w, 100-w)
}

// traefikFor is the TraefikService in the group version ver writes.
func traefikFor(ver upstream.Version, w int, extra string) string {
	g := "traefik.containo.us"
	if ver == "v1.10.2" {
		g = "traefik.io"
	}
	return fmt.Sprintf(`apiVersion: %s/v1alpha1
kind: TraefikService
metadata: {name: app-tw, namespace: shop}
spec: {weighted: {services: [{name: app-canary, port: 80, weight: %d}, {name: app-stable, port: 80, weight: %d}%s]}}
`, g, w, 100-w, extra)
}

func httpRoute(w int, accepted string) string {
	return fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app-route, namespace: shop}
spec: {rules: [{backendRefs: [{name: app-canary, port: 80, weight: %d}, {name: app-stable, port: 80, weight: %d}]}]}
status: {parents: [{parentRef: {name: gw}, conditions: [{type: Accepted, status: "%s", reason: NotAllowedByListeners, message: "no listener allows it"}, {type: ResolvedRefs, status: "True", reason: ResolvedRefs}]}]}
`, w, 100-w, accepted)
}

const pluginConfig = `apiVersion: v1
kind: ConfigMap
metadata: {name: argo-rollouts-config, namespace: argo-rollouts}
data:
  trafficRouterPlugins: |
    - name: argoproj-labs/gatewayAPI
      location: https://github.com/argoproj-labs/rollouts-plugin-trafficrouter-gatewayapi/releases/download/v0.5.0/gatewayapi-plugin-linux-amd64
`

// routerKinds are every router the controller supports, and the Gateway
// API plugin, each with its objects at a canary weight.
func routerKinds(ver upstream.Version) []routerKind {
	return []routerKind{
		{"nginx", `        nginx: {stableIngress: web}`, func(w int) []string { return []string{nginxStable, nginxCanary(w, "", "")} }},
		{"alb", `        alb: {ingress: web, servicePort: 80}`, func(w int) []string { return []string{albIngress(w, "")} }},
		{"smi", `        smi: {}`, func(w int) []string { return []string{trafficSplit(w, true)} }},
		{"traefik", `        traefik: {weightedTraefikServiceName: app-tw}`, func(w int) []string { return []string{traefikFor(ver, w, "")} }},
		{"apisix", `        apisix: {route: {name: app-route}}`, func(w int) []string {
			return []string{fmt.Sprintf(`{apiVersion: apisix.apache.org/v2, kind: ApisixRoute, metadata: {name: app-route, namespace: shop}, spec: {http: [{name: app-route, backends: [{serviceName: app-canary, servicePort: 80, weight: %d}, {serviceName: app-stable, servicePort: 80, weight: %d}]}]}}`, w, 100-w)}
		}},
		{"ambassador", `        ambassador: {mappings: [app]}`, func(w int) []string {
			return []string{`{apiVersion: getambassador.io/v2, kind: Mapping, metadata: {name: app, namespace: shop}, spec: {prefix: /, service: app-stable}}`,
				fmt.Sprintf(`{apiVersion: getambassador.io/v2, kind: Mapping, metadata: {name: app-canary, namespace: shop}, spec: {prefix: /, service: app-canary, weight: %d}}`, w)}
		}},
		{"appmesh", "        appMesh:\n          virtualService: {name: app-vs}\n          virtualNodeGroup: {canaryVirtualNodeRef: {name: app-canary-vn}, stableVirtualNodeRef: {name: app-stable-vn}}", func(w int) []string {
			return []string{`{apiVersion: appmesh.k8s.aws/v1beta2, kind: VirtualService, metadata: {name: app-vs, namespace: shop}, spec: {provider: {virtualRouter: {virtualRouterRef: {name: app-vr}}}}}`,
				fmt.Sprintf(`{apiVersion: appmesh.k8s.aws/v1beta2, kind: VirtualRouter, metadata: {name: app-vr, namespace: shop}, spec: {routes: [{name: r, httpRoute: {action: {weightedTargets: [{virtualNodeRef: {name: app-canary-vn}, weight: %d}, {virtualNodeRef: {name: app-stable-vn}, weight: %d}]}}}]}}`, w, 100-w)}
		}},
		{"istio", `        istio: {virtualService: {name: app}}`, func(w int) []string {
			return []string{fmt.Sprintf(`{apiVersion: networking.istio.io/v1beta1, kind: VirtualService, metadata: {name: app, namespace: shop}, spec: {http: [{name: primary, route: [{destination: {host: app-stable}, weight: %d}, {destination: {host: app-canary}, weight: %d}]}]}}`, 100-w, w)}
		}},
		{"gatewayAPI plugin", "        plugins:\n          argoproj-labs/gatewayAPI: {httpRoute: app-route}", func(w int) []string {
			return []string{httpRoute(w, "True"), pluginConfig}
		}},
	}
}

// routerCase is one row: a state built for a version, the rule, and whether
// it fires there.
type routerCase struct {
	name  string
	id    string
	docs  func(ver upstream.Version) []string
	fires bool
	says  string
	// severity, when set, is the finding's.
	severity rules.Severity
}

func world(routing string, weight int, objs ...string) []string {
	return append(append([]string{routerRollout(routing, weight, "")}, routerWorld(2, 10)...), objs...)
}

// routerCases holds, for every router, RD107 firing (its object at 50 while
// the status says 20) and quiet (both at 20), and the other router rules
// once each way.
func routerCases() []routerCase {
	var out []routerCase
	for _, k := range routerKinds("v1.10.2") {
		name := k.name
		out = append(out,
			routerCase{name: name + ": router agrees", id: "RD107", docs: func(v upstream.Version) []string {
				k := kindOf(v, name)
				return world(k.routing, 20, k.objects(20)...)
			}},
			routerCase{name: name + ": router at 50, status 20", id: "RD107", fires: true, says: "canary 50 / stable 50, the Rollout status says canary 20 / stable 80", docs: func(v upstream.Version) []string {
				k := kindOf(v, name)
				return world(k.routing, 20, k.objects(50)...)
			}},
		)
	}
	nginx := `        nginx: {stableIngress: web}`
	alb := `        alb: {ingress: web, servicePort: 80}`
	gw := "        plugins:\n          argoproj-labs/gatewayAPI: {httpRoute: app-route}"
	mf := func(who string, at string) string {
		return fmt.Sprintf(`
  managedFields:
  - {manager: rollouts-controller, operation: Update, time: "2026-03-01T11:50:00Z", fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:annotations": {"f:nginx.ingress.kubernetes.io/canary-weight": {}}}}}
  - {manager: %s, operation: Update, time: "%s", fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:annotations": {"f:nginx.ingress.kubernetes.io/canary-weight": {}}}}}`, who, at)
	}
	event := func(reason, msg, at string) string {
		return fmt.Sprintf(`{apiVersion: v1, kind: Event, metadata: {name: ev-%s-%s, namespace: shop}, involvedObject: {kind: Rollout, name: app, namespace: shop}, reason: %s, type: Warning, message: "%s", count: 3, lastTimestamp: "%s"}`,
			strings.ToLower(reason), strings.ReplaceAll(at[11:19], ":", ""), reason, msg, at)
	}
	out = append(out,
		routerCase{name: "nginx canary Ingress present", id: "RD130", docs: func(upstream.Version) []string { return world(nginx, 20, nginxStable, nginxCanary(20, "", "")) }},
		routerCase{name: "nginx canary Ingress deleted while the status says 20", id: "RD130", fires: true, says: "Ingress shop/app-web-canary does not exist", docs: func(upstream.Version) []string { return world(nginx, 20, nginxStable) }},
		routerCase{name: "TrafficSplit not the Rollout's", id: "RD130", fires: true, says: "does not control it", docs: func(upstream.Version) []string { return world(`        smi: {}`, 20, trafficSplit(20, false)) }},
		routerCase{name: "TraefikService missing", id: "RD130", fires: true, says: "TraefikService shop/app-tw does not exist", docs: func(upstream.Version) []string {
			return world(`        traefik: {weightedTraefikServiceName: app-tw}`, 20)
		}},
		routerCase{name: "canary Service with ready endpoints", id: "RD131", docs: func(upstream.Version) []string { return world(alb, 20, albIngress(20, "")) }},
		routerCase{name: "ALB sends 20% to a canary Service without endpoints", id: "RD131", fires: true, says: "sends 20% of its traffic to Service app-canary, which has no ready endpoints", docs: func(upstream.Version) []string {
			return append(append([]string{routerRollout(alb, 20, "")}, routerWorld(0, 10)...), albIngress(20, ""))
		}},
		routerCase{name: "the Rollout scaled to 0: a warning, not an outage", id: "RD131", fires: true, severity: rules.Warning,
			says: "sends 100% of its traffic to Service app-stable, which has no ready endpoints: those requests fail (503) — the Rollout is scaled to 0 (spec.replicas 0)", docs: func(upstream.Version) []string {
				return append(append([]string{strings.Replace(routerRollout(alb, 0, ""), "replicas: 10", "replicas: 0", 1)}, routerWorld(0, 0)...), albIngress(0, ""))
			}},
		routerCase{name: "nginx at 100 with the stable Service empty (#1820)", id: "RD131", fires: true, says: "ingress-nginx answers 503 for the whole host", docs: func(upstream.Version) []string {
			return append(append([]string{routerRollout(nginx, 100, "")}, routerWorld(10, 0)...), nginxStable, nginxCanary(100, "", ""))
		}},
		routerCase{name: "ALB verification off", id: "RD132", docs: func(v upstream.Version) []string {
			return world(alb, 20, albIngress(20, ""), controllerDeployment(v))
		}},
		routerCase{name: "ALB verification on and verified", id: "RD132", docs: func(v upstream.Version) []string {
			return append(append([]string{strings.Replace(routerRollout(alb, 20, ""), "      stable: {weight: 80", "      verified: true\n      stable: {weight: 80", 1)}, routerWorld(2, 10)...), albIngress(20, ""), controllerDeployment(v, "--aws-verify-target-group"))
		}},
		routerCase{name: "ALB verification on and unverified", id: "RD132", fires: true, says: "canary 20 is not confirmed in AWS, so the setWeight step does not complete", docs: func(v upstream.Version) []string {
			return append(append([]string{strings.Replace(routerRollout(alb, 20, ""), "      stable: {weight: 80", "      verified: false\n      stable: {weight: 80", 1)}, routerWorld(2, 10)...), albIngress(20, ""),
				controllerDeployment(v, "--aws-verify-target-group"), event("TargetGroupUnverified", "Service app-canary (TargetGroup arn) not verified: canary weight 20 not yet set (current: 0)", "2026-03-01T11:59:00Z"))
		}},
		routerCase{name: "ping-pong on two ReplicaSets", id: "RD133", docs: func(upstream.Version) []string { return pingPong("aaa", "bbb") }},
		routerCase{name: "ping-pong with both Services on the stable", id: "RD133", fires: true, says: "both select ReplicaSet hash aaa (the stable)", docs: func(upstream.Version) []string { return pingPong("aaa", "aaa") }},
		routerCase{name: "nginx total as written", id: "RD134", docs: func(upstream.Version) []string { return world(nginx, 20, nginxStable, nginxCanary(20, "", "")) }},
		routerCase{name: "nginx canary-weight-total 1000 without maxTrafficWeight", id: "RD134", fires: true, says: "canary-weight 20 of canary-weight-total 1000, the controller writes weights out of 100: the canary gets 2% of the traffic where the Rollout means 20%", docs: func(upstream.Version) []string {
			return world(nginx, 20, nginxStable, nginxCanary(20, `, nginx.ingress.kubernetes.io/canary-weight-total: "1000"`, ""))
		}},
		routerCase{name: "a third TraefikService entry at 30", id: "RD134", fires: true, says: "weights add up to 130, not 100", docs: func(v upstream.Version) []string {
			return world(`        traefik: {weightedTraefikServiceName: app-tw}`, 20, traefikFor(v, 20, ", {name: legacy, port: 80, weight: 30}"))
		}},
		routerCase{name: "the controller wrote the weight last", id: "RD135", docs: func(upstream.Version) []string {
			return world(nginx, 20, nginxStable, nginxCanary(20, "", mf("rollouts-controller", "2026-03-01T11:40:00Z")))
		}},
		routerCase{name: "kubectl-edit wrote the weight after the controller", id: "RD135", fires: true, says: "last written by kubectl-edit at 2026-03-01T11:55:00Z (5m0s ago), after the controller's last write of it at 2026-03-01T11:50:00Z", docs: func(upstream.Version) []string {
			return world(nginx, 20, nginxStable, nginxCanary(50, "", mf("kubectl-edit", "2026-03-01T11:55:00Z")))
		}},
		routerCase{name: "kubectl-patch took the weights, the controller's entry gone, after its last weight change", id: "RD135", fires: true, says: "after the controller's last weight change (TrafficWeightUpdated) at 2026-03-01T11:30:00Z", docs: func(upstream.Version) []string {
			only := strings.Replace(mf("kubectl-patch", "2026-03-01T11:45:00Z"), "  - {manager: rollouts-controller, operation: Update, time: \"2026-03-01T11:50:00Z\", fieldsType: FieldsV1, fieldsV1: {\"f:metadata\": {\"f:annotations\": {\"f:nginx.ingress.kubernetes.io/canary-weight\": {}}}}}\n", "", 1)
			return world(nginx, 20, nginxStable, nginxCanary(20, "", only),
				strings.Replace(event("TrafficWeightUpdated", "Traffic weight updated from 5 to 20", "2026-03-01T11:30:00Z"), "type: Warning", "type: Normal", 1))
		}},
		routerCase{name: "the user's initial weights, never changed by the controller", id: "RD135", docs: func(upstream.Version) []string {
			only := strings.Replace(mf("kubectl-client-side-apply", "2026-03-01T10:00:00Z"), "  - {manager: rollouts-controller, operation: Update, time: \"2026-03-01T11:50:00Z\", fieldsType: FieldsV1, fieldsV1: {\"f:metadata\": {\"f:annotations\": {\"f:nginx.ingress.kubernetes.io/canary-weight\": {}}}}}\n", "", 1)
			return world(nginx, 20, nginxStable, nginxCanary(20, "", only),
				strings.Replace(event("TrafficWeightUpdated", "Traffic weight updated from 5 to 20", "2026-03-01T11:30:00Z"), "type: Warning", "type: Normal", 1))
		}},
		routerCase{name: "an old error, weight written since", id: "RD136", docs: func(upstream.Version) []string {
			return world(nginx, 20, nginxStable, nginxCanary(20, "", ""), event("TrafficRoutingError", "error patching canary ingress", "2026-03-01T11:00:00Z"),
				strings.Replace(event("TrafficWeightUpdated", "Traffic weight updated from 5 to 20", "2026-03-01T11:30:00Z"), "type: Warning", "type: Normal", 1))
		}},
		routerCase{name: "TrafficRoutingError after the last weight change", id: "RD136", fires: true, says: "TrafficRoutingError 3× (latest 2026-03-01T11:58:00Z (2m0s ago)): failed to set weight via plugin", docs: func(upstream.Version) []string {
			return world(gw, 20, httpRoute(20, "True"), pluginConfig, event("TrafficRoutingError", "failed to set weight via plugin: httproutes forbidden", "2026-03-01T11:58:00Z"))
		}},
		routerCase{name: "one write that lost a race (409): retried, no failure to write", id: "RD136", docs: func(upstream.Version) []string {
			return world(nginx, 20, nginxStable, nginxCanary(20, "", ""), strings.Replace(event("TrafficRoutingError", `Operation cannot be fulfilled on ingresses.networking.k8s.io \"app-web-canary\": the object has been modified; please apply your changes to the latest version and try again`, "2026-03-01T11:58:00Z"), "count: 3", "count: 1", 1))
		}},
		routerCase{name: "conflicts that keep coming: another writer", id: "RD136", fires: true, says: "another writer keeps changing the object between the controller's read and its write", docs: func(upstream.Version) []string {
			return world(nginx, 20, nginxStable, nginxCanary(20, "", ""), event("TrafficRoutingError", `Operation cannot be fulfilled on ingresses.networking.k8s.io \"app-web-canary\": the object has been modified; please apply your changes to the latest version and try again`, "2026-03-01T11:58:00Z"))
		}},
		routerCase{name: "plugin configured", id: "RD137", docs: func(upstream.Version) []string { return world(gw, 20, httpRoute(20, "True"), pluginConfig) }},
		routerCase{name: "plugin not in the ConfigMap", id: "RD137", fires: true, says: "which the controller's argo-rollouts-config ConfigMap does not list", docs: func(upstream.Version) []string {
			return world(gw, 20, httpRoute(20, "True"), strings.Replace(pluginConfig, "argoproj-labs/gatewayAPI", "argoproj-labs/other", 1))
		}},
		routerCase{name: "HTTPRoute Accepted", id: "RD138", docs: func(upstream.Version) []string { return world(gw, 20, httpRoute(20, "True"), pluginConfig) }},
		routerCase{name: "HTTPRoute not Accepted", id: "RD138", fires: true, says: "HTTPRoute shop/app-route is Accepted=False for Gateway gw (NotAllowedByListeners: no listener allows it); the Gateway does not apply it", docs: func(upstream.Version) []string {
			return world(gw, 20, httpRoute(20, "False"), pluginConfig)
		}},
		routerCase{name: "ALB action listed in managed-alb-annotations", id: "RD139", docs: func(upstream.Version) []string {
			return world(alb, 20, albManaged(albIngress(20, ""), true))
		}},
		routerCase{name: "ALB action reset to the stable alone by another controller", id: "RD139", fires: true, says: "an Argo Rollouts controller that does not reconcile this Rollout reset it, and the canary gets none of the 20% the status says (last written by rollouts-controller-v1.8.2 at 2026-03-01T11:58:00Z)", docs: func(upstream.Version) []string {
			reset := strings.Replace(albManaged(albIngress(20, ""), false), `{"ServiceName":"app-canary","ServicePort":"80","Weight":20},{"ServiceName":"app-stable","ServicePort":"80","Weight":80}`, `{"ServiceName":"app-stable","ServicePort":"80","Weight":100}`, 1)
			reset = strings.Replace(reset, "  annotations:", `  managedFields: [{manager: rollouts-controller-v1.8.2, operation: Update, time: "2026-03-01T11:58:00Z", fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:annotations": {"f:alb.ingress.kubernetes.io/actions.app-stable": {}}}}}]
  annotations:`, 1)
			return world(alb, 20, reset)
		}},
		routerCase{name: "additional annotation canary-by-header", id: "RD230", docs: func(upstream.Version) []string {
			return world("        nginx: {stableIngress: web, additionalIngressAnnotations: {canary-by-header: X-Canary}}", 20, nginxStable, nginxCanary(20, "", ""))
		}},
		routerCase{name: "additional annotation canary-weight-total 1000", id: "RD230", fires: true, says: "sets nginx.ingress.kubernetes.io/canary-weight-total: 1000 without maxTrafficWeight", docs: func(upstream.Version) []string {
			return world(`        nginx: {stableIngress: web, additionalIngressAnnotations: {canary-weight-total: "1000"}}`, 20, nginxStable, nginxCanary(20, "", ""))
		}},
		routerCase{name: "stickiness 300 s", id: "RD231", docs: func(upstream.Version) []string {
			return world(`        alb: {ingress: web, servicePort: 80, stickinessConfig: {enabled: true, durationSeconds: 300}}`, 20, albIngress(20, ""))
		}},
		routerCase{name: "stickiness 0 s", id: "RD231", fires: true, says: "durationSeconds is 0, outside 1–604800", docs: func(upstream.Version) []string {
			return world(`        alb: {ingress: web, servicePort: 80, stickinessConfig: {enabled: true, durationSeconds: 0}}`, 20, albIngress(20, ""))
		}},
	)
	return out
}

// albManaged adds (or leaves out) the Rollout in the Ingress's
// managed-alb-annotations.
func albManaged(ing string, listed bool) string {
	v := `{}`
	if listed {
		v = `{"app":["alb.ingress.kubernetes.io/actions.app-stable"]}`
	}
	return strings.Replace(ing, "  annotations:\n", "  annotations:\n    rollouts.argoproj.io/managed-alb-annotations: '"+v+"'\n", 1)
}

func kindOf(v upstream.Version, name string) routerKind {
	for _, k := range routerKinds(v) {
		if k.name == name {
			return k
		}
	}
	panic(name)
}

// pingPong is an ALB ping-pong Rollout at 20 whose ping and pong Services
// select the given hashes (stablePingPong ping: ping is the stable).
func pingPong(pingHash, pongHash string) []string {
	ro := routerRollout(`        alb: {ingress: web, rootService: app-root, servicePort: 80}`, 20, "\n    stablePingPong: ping")
	ro = strings.Replace(ro, "      canaryService: app-canary\n      stableService: app-stable\n", "      pingPong: {pingService: app-ping, pongService: app-pong}\n", 1)
	svc := func(name, hash string) string {
		return fmt.Sprintf(`{apiVersion: v1, kind: Service, metadata: {name: %s, namespace: shop}, spec: {selector: {app: app, rollouts-pod-template-hash: %s}, ports: [{port: 80}]}}`, name, hash)
	}
	ing := strings.NewReplacer("actions.app-stable", "actions.app-root", `"app-canary"`, `"app-pong"`, `"app-stable"`, `"app-ping"`, "name: app-stable, port: {name", "name: app-root, port: {name").Replace(albIngress(20, ""))
	return append(append([]string{ro}, routerWorld(2, 10)...), svc("app-ping", pingHash), svc("app-pong", pongHash), ing)
}

func TestRouterRules(t *testing.T) {
	for _, c := range routerCases() {
		for _, ver := range upstream.Modeled {
			t.Run(c.id+"/"+c.name+"/"+string(ver), func(t *testing.T) {
				r := diagnoseRouter(t, ver, c.docs(ver))
				if has(r, c.id) != c.fires {
					var ids []string
					for _, f := range r.Findings {
						ids = append(ids, f.ID+": "+f.Message)
					}
					t.Fatalf("%s fires=%v, want %v; findings:\n  %s", c.id, has(r, c.id), c.fires, strings.Join(ids, "\n  "))
				}
				for _, f := range r.Findings {
					rulestest.NoInternalRefs(t, f.ID+" message", f.Message)
					if f.ID != c.id {
						continue
					}
					if c.says != "" && !strings.Contains(f.Message, c.says) {
						t.Errorf("%s says\n  %s\nwant it to contain\n  %s", c.id, f.Message, c.says)
					}
					if c.severity != 0 && f.Severity != c.severity {
						t.Errorf("%s severity %s, want %s", c.id, f.Severity, c.severity)
					}
					for _, ci := range f.Cites {
						if ci.Version != ver {
							t.Errorf("%s cites %s at %s, diagnosed at %s", c.id, ci.Key, ci.Version, ver)
						}
					}
				}
			})
		}
	}
}
