//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/escape"
)

func init() {
	scenarios = append(scenarios, scenario{"workload-ref", workloadRefScenario})
}

// refDeploymentYAML is the Deployment a workloadRef Rollout takes its
// template from, at replicas pods of its own.
func (h *harness) refDeploymentYAML(image string, replicas int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
spec:
  replicas: %d
  selector: {matchLabels: {app: app}}
  template:
    metadata:
      labels: {app: app}%s
    spec:
      containers: [{name: app, image: "registry.example/app:%s"}]
`, replicas, podTiming, image)
}

// refRolloutYAML is a canary without trafficRouting (the basic-canary
// shape) whose template is the Deployment's.
func (h *harness) refRolloutYAML() string {
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: app
  labels: {argo-rollouts.argoproj.io/controller-instance-id: %q}
spec:
  replicas: 5
  revisionHistoryLimit: 3
  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: app}
  strategy:
    canary:
      maxSurge: 1
      maxUnavailable: 0
      steps: [{setWeight: 30}, {pause: {}}, {setWeight: 70}, {pause: {duration: 5s}}]
`, h.instanceID)
}

// severityOf is the severity of the report's finding id, or "none".
func severityOf(rep *diagnose.Report, id string) string {
	for _, f := range rep.Findings {
		if f.ID == id {
			return f.Severity.String()
		}
	}
	return "none"
}

// workloadRefScenario: a Rollout that takes its template from a Deployment
// (spec.workloadRef). An update is a change of the Deployment's template;
// escape's undo must patch the Deployment back to the stable's template,
// and the controller must then go the sizes escape predicted. A Deployment
// with pods of its own (RD168) is a warning, critical once its pods run an
// update's template while the canary waits at its step: the deployment
// controller rolls them at once.
func workloadRefScenario(t *testing.T, h *harness) {
	o := h.observe(isCanaryDest(hostMode))
	h.apply(h.refDeploymentYAML("a", 0) + "---\n" + h.refRolloutYAML())
	first := h.healthy(o, 5, 90*time.Second)
	h.apply(h.refDeploymentYAML("b", 0))
	h.atFirstPause(o)
	_, stableHash, canaryHash, _, _ := h.status()
	if stableHash != first || canaryHash == first {
		t.Fatalf("stable %s, canary %s: want the stable %s and a new canary", stableHash, canaryHash, first)
	}
	rep := h.diagnose("app")
	s := o.Now()
	held := fmt.Sprintf("canary %d, stable %d, RD168 none", s.RS[canaryHash].Spec, s.RS[stableHash].Spec)
	pred := "no pod share"
	if ps := rep.PodShare; ps != nil {
		pred = fmt.Sprintf("canary %d, stable %d, RD168 %s", ps.StepCanary, ps.StepStable, severityOf(rep, "RD168"))
	}
	h.record("workloadRef (basic canary), paused at setWeight 30 of 5, the Deployment at 0", pred, held)
	if pred != held {
		t.Errorf("diagnose at the pause: %s; the controller holds %s", pred, held)
	}
	p := h.plan()
	u, _ := p.Option(escape.Undo)
	if len(u.Requests) != 1 || u.Requests[0].Kind != "Deployment" || u.Requests[0].Name != "app" || len(u.Effect.Pods) == 0 {
		t.Fatalf("escape's undo for a workloadRef: requests %+v, effect %+v; want one patch of Deployment app and the sizes", u.Requests, u.Effect)
	}
	from := time.Now()
	h.run("escape", "app", "--do", "undo", "--yes", "--force", "--watch-timeout", "0")
	h.waitFor("undo to end", 120*time.Second, func() bool {
		phase, stable, current, _, _ := h.status()
		return phase == "Healthy" && stable == first && current == first
	})
	h.settled(o, 4*time.Second, 60*time.Second)
	got := podPairs(o.Samples(), stableHash, stableHash, from)
	image := h.kubectl("get", "deployment", "app", "-n", h.ns, "-o", "jsonpath={.spec.template.spec.containers[0].image}")
	h.record("workloadRef: escape undo patches the Deployment (stable/other sizes; the Deployment's image)",
		pairsString(u.Effect.Pods)+"; registry.example/app:a", pairsString(got)+"; "+strings.TrimSpace(image))
	if pairsString(got) != pairsString(u.Effect.Pods) || strings.TrimSpace(image) != "registry.example/app:a" {
		t.Errorf("undo: escape predicted stable/other %s; the controller went %s, the Deployment's image is %s\n%s", pairsString(u.Effect.Pods), pairsString(got), image, h.dump())
	}
	// The Deployment with pods of its own: a warning; once an update's
	// template reaches them while the canary waits, critical.
	h.apply(h.refDeploymentYAML("a", 2))
	deployReady := func(ready, updated string) func() bool {
		return func() bool {
			out := h.kubectl("get", "deployment", "app", "-n", h.ns, "-o", "jsonpath={.status.readyReplicas}/{.status.updatedReplicas}")
			return strings.TrimSpace(out) == ready+"/"+updated
		}
	}
	h.waitFor("the Deployment's own 2 pods", 60*time.Second, deployReady("2", "2"))
	sevIdle := severityOf(h.diagnose("app"), "RD168")
	h.apply(h.refDeploymentYAML("c", 2))
	h.waitFor("the pause at setWeight 30 and the Deployment's pods on the new template", 90*time.Second, func() bool {
		return h.pausedAt(1)() && deployReady("2", "2")()
	})
	rep = h.diagnose("app")
	h.record("workloadRef: the Deployment keeps 2 pods of its own (RD168 when Healthy; mid-update once they run its template)",
		"warning; critical", sevIdle+"; "+severityOf(rep, "RD168"))
	if sevIdle != "warning" || severityOf(rep, "RD168") != "critical" {
		t.Errorf("RD168: %s when Healthy, %s mid-update with the Deployment's pods on the new template; want warning, critical\n%s", sevIdle, severityOf(rep, "RD168"), h.dump())
	}
}
