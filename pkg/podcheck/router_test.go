package podcheck

import (
	"strings"
	"testing"
	"time"

	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// The weight the pods checks give a Service is the router's, whatever the
// router: here nginx's canary Ingress sends the canary 30% while the status
// still says 0, and the canary Service has no ready endpoints.
func TestServiceWeightsFollowTheRouter(t *testing.T) {
	docs := []string{`apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: app, namespace: shop, uid: u1}
spec:
  replicas: 4
  selector: {matchLabels: {app: app}}
  template: {metadata: {labels: {app: app}}, spec: {containers: [{name: app, image: app:1}]}}
  strategy: {canary: {canaryService: app-canary, stableService: app-stable, trafficRouting: {nginx: {stableIngress: web}}, steps: [{setWeight: 30}]}}
status:
  canary: {weights: {canary: {weight: 0, podTemplateHash: b}, stable: {weight: 100, podTemplateHash: a}}}`,
		`{apiVersion: v1, kind: Service, metadata: {name: app-canary, namespace: shop}, spec: {selector: {app: app, rollouts-pod-template-hash: b}, ports: [{port: 80}]}}`,
		`{apiVersion: v1, kind: Service, metadata: {name: app-stable, namespace: shop}, spec: {selector: {app: app, rollouts-pod-template-hash: a}, ports: [{port: 80}]}}`,
		`{apiVersion: discovery.k8s.io/v1, kind: EndpointSlice, metadata: {name: c, namespace: shop, labels: {kubernetes.io/service-name: app-canary}}, addressType: IPv4, endpoints: []}`,
		`{apiVersion: discovery.k8s.io/v1, kind: EndpointSlice, metadata: {name: s, namespace: shop, labels: {kubernetes.io/service-name: app-stable}}, addressType: IPv4, endpoints: [{addresses: [10.0.0.1], conditions: {ready: true}}]}`,
		`{apiVersion: networking.k8s.io/v1, kind: Ingress, metadata: {name: web, namespace: shop}, spec: {rules: [{http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: app-stable, port: {number: 80}}}}]}}]}}`,
	}
	canary := `{apiVersion: networking.k8s.io/v1, kind: Ingress, metadata: {name: app-web-canary, namespace: shop, ownerReferences: [{apiVersion: argoproj.io/v1alpha1, kind: Rollout, name: app, uid: u1, controller: true}], annotations: {nginx.ingress.kubernetes.io/canary: "true", nginx.ingress.kubernetes.io/canary-weight: "30"}}, spec: {rules: [{http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: app-canary, port: {number: 80}}}}]}}]}}`
	run := func(docs []string) *Report {
		return Run(rolloutApp(t, docs), model.ControllerVersion{Assumed: "v1.9.3"}, Options{})
	}
	// The status alone: 0% on an empty canary Service is no finding.
	if f := findingByID(run(docs).Findings, "RD324"); f != nil {
		t.Fatalf("RD324 at the status's 0%%: %s", f.Message)
	}
	rep := run(append(docs, canary))
	f := findingByID(rep.Findings, "RD324")
	if f == nil || !strings.Contains(f.Message, "Service app-canary carries 30% of traffic and has no ready endpoints") {
		t.Fatalf("RD324 with the canary Ingress at 30: %+v", f)
	}
	for _, s := range rep.Services {
		if s.Name == "app-canary" && (s.Weight == nil || *s.Weight != 30) {
			t.Errorf("the canary Service's row weight is %v, want the router's 30", s.Weight)
		}
	}
}

// rolloutApp is the workload of Rollout shop/app among docs, read as a
// diagnose of it.
func rolloutApp(t *testing.T, docs []string) *snapshot.Workload {
	t.Helper()
	s := snapshot.New(snapshot.Header{TargetKind: snapshot.KindRollout, TakenAt: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}, exampletest.Docs(t, docs...))
	w, err := s.FindWorkload(snapshot.KindRollout, "shop", "app")
	if err != nil {
		t.Fatal(err)
	}
	return w
}
