//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/gather"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// The pods scenario runs on three kwok nodes of its own (labelled and
// tainted so no other scenario's pods land there), with Deployments: it
// needs no Argo Rollouts controller, only the real scheduler, Deployment,
// EndpointSlice and node lifecycle controllers.
const podsNodes = 3

func podsNode(i int) string { return fmt.Sprintf("pods-e2e-%d", i) }

const podsWorld = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {rolloutdoctor.io/pods-e2e: "true"}
      tolerations: [{key: rolloutdoctor.io/pods-e2e, operator: Exists, effect: NoSchedule}]
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - topologyKey: kubernetes.io/hostname
            labelSelector: {matchLabels: {app: web}}
      terminationGracePeriodSeconds: 30
      containers:
      - name: app
        image: registry.example/web:1
        ports: [{name: http, containerPort: 8080}]
        readinessProbe: {httpGet: {path: /ready, port: http}}
        livenessProbe: {httpGet: {path: /live, port: http}}
        lifecycle: {preStop: {sleep: {seconds: 5}}}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  type: NodePort
  selector: {app: web}
  ports: [{port: 80, targetPort: http}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  annotations: {alb.ingress.kubernetes.io/target-type: ip, alb.ingress.kubernetes.io/scheme: internet-facing}
spec:
  ingressClassName: alb
  rules:
  - http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec:
  minAvailable: 3
  selector: {matchLabels: {app: web}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: solo}
spec:
  replicas: 1
  selector: {matchLabels: {app: solo}}
  template:
    metadata: {labels: {app: solo}}
    spec:
      nodeSelector: {kubernetes.io/hostname: pods-e2e-1}
      tolerations: [{key: rolloutdoctor.io/pods-e2e, operator: Exists, effect: NoSchedule}]
      terminationGracePeriodSeconds: 30
      containers:
      - name: app
        image: registry.example/solo:1
        ports: [{name: http, containerPort: 8080}]
        readinessProbe: {httpGet: {path: /ready, port: http}}
        livenessProbe: {httpGet: {path: /live, port: http}}
        lifecycle: {preStop: {sleep: {seconds: 5}}}
---
apiVersion: v1
kind: Service
metadata: {name: solo}
spec:
  selector: {app: solo}
  ports: [{port: 80, targetPort: http}]
`

// pods runs `kubectl rolloutdoctor pods … -o json` on the lab.
func (h *harness) pods(args ...string) *diagnose.PodReport {
	h.t.Helper()
	out, code := h.runCode(append(append([]string{"pods"}, args...), "-o", "json")...)
	if code != 0 && code != 1 {
		h.t.Fatalf("pods %s: exit %d\n%s", strings.Join(args, " "), code, out)
	}
	rep := &diagnose.PodReport{}
	if err := json.Unmarshal([]byte(out), rep); err != nil {
		h.t.Fatalf("pods %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return rep
}

// podsInProcess gathers and checks the Rollout's pods with the library, as
// the pods command does, without starting a process.
func (h *harness) podsInProcess(name string) (*diagnose.PodReport, error) {
	snap, err := gather.Rollout(h.ctx, dyn, gather.Options{Namespace: h.ns, Name: name, SkipController: true})
	if err != nil {
		return nil, err
	}
	w, err := snap.FindWorkload(snapshot.KindRollout, h.ns, name)
	if err != nil {
		return nil, err
	}
	return diagnose.RunPods(w, model.ControllerVersion{}, diagnose.PodOptions{}), nil
}

func podFinding(r *diagnose.PodReport, id string) *diagnose.Finding {
	for i := range r.Findings {
		if r.Findings[i].ID == id {
			return &r.Findings[i]
		}
	}
	return nil
}

func podIDs(r *diagnose.PodReport) string {
	var ids []string
	for _, f := range r.Findings {
		ids = append(ids, f.ID)
	}
	return strings.Join(ids, ",")
}

func serviceRow(r *diagnose.PodReport, name string) diagnose.ServiceRow {
	for _, s := range r.Services {
		if s.Name == name {
			return s
		}
	}
	return diagnose.ServiceRow{}
}

// TestPods proves the pod checks against a real control plane: the ALB,
// NodePort, PDB and anti-affinity findings on real objects; the update
// deadlock RD309 predicts, with the real scheduler refusing the surge pod;
// and a node whose heartbeat stops — pods still Ready while its Lease ages
// (RD322), then the node lifecycle controller marking them not Ready and the
// EndpointSlice controller emptying the Service (RD324).
func TestPods(t *testing.T) {
	if f := os.Getenv("E2E_SCENARIOS"); f != "" && !strings.Contains(","+f+",", ",pods,") {
		t.Skip("E2E_SCENARIOS excludes pods")
	}
	// Beside TestControllers: its nodes are tainted, so no scenario's pods
	// land there, and its Deployments run on those nodes only.
	t.Parallel()
	h := newHarness(t, "kubernetes", "pods")
	// pods-e2e-1's "kubelet" is a kwok process of its own: killing it is the
	// node losing power. The lab's kwok runs the other two.
	kubelet := startKwok(t, podsNode(1))
	var nodes strings.Builder
	for i := 1; i <= podsNodes; i++ {
		y, err := os.ReadFile(labDir + "/manifests/node.yaml")
		if err != nil {
			t.Fatal(err)
		}
		n := strings.ReplaceAll(string(y), "NAME", podsNode(i))
		if i == 1 {
			n = strings.Replace(n, "kwok.x-k8s.io/node: fake", "kwok.x-k8s.io/node: own-kwok", 1)
		}
		n = strings.Replace(n, "    rolloutdoctor.io/lab: \"true\"", "    rolloutdoctor.io/lab: \"true\"\n    rolloutdoctor.io/pods-e2e: \"true\"", 1)
		n = strings.Replace(n, "status:", "spec:\n  taints: [{key: rolloutdoctor.io/pods-e2e, value: \"true\", effect: NoSchedule}]\nstatus:", 1)
		nodes.WriteString(n + "\n---\n")
	}
	h.kubectlIn(nodes.String(), "apply", "-f", "-")
	t.Cleanup(func() {
		for i := 1; i <= podsNodes; i++ {
			exec.Command("kubectl", "--kubeconfig", kubeconfig, "delete", "node", podsNode(i), "--wait=false").Run()
		}
	})
	h.waitFor("the pods nodes Ready", 60*time.Second, func() bool {
		out := h.kubectl("get", "nodes", "-l", "rolloutdoctor.io/pods-e2e=true", "--no-headers")
		return strings.Count(out, " Ready ") == podsNodes
	})
	h.apply(podsWorld)
	h.waitFor("web: 3 ready endpoints, solo: 1", 90*time.Second, func() bool {
		r := h.pods("deployment/web")
		s := h.pods("deployment/solo")
		return serviceRow(r, "web").Ready == 3 && serviceRow(s, "solo").Ready == 1
	})

	// 1. Static and live findings on real objects.
	r := h.pods("deployment/web")
	for _, id := range []string{"RD306", "RD308", "RD309", "RD311"} {
		if podFinding(r, id) == nil {
			t.Errorf("deployment/web: %s missing; findings %s", id, podIDs(r))
		}
	}
	for _, id := range []string{"RD322", "RD323", "RD324"} {
		if f := podFinding(r, id); f != nil {
			t.Errorf("deployment/web on a healthy lab: %s fired: %s", id, f.Message)
		}
	}
	// The same report offline, from a snapshot of the Deployment.
	snapOut, code := h.runCode("snapshot", "deployment/web")
	file := filepath.Join(t.TempDir(), "web.yaml")
	if err := os.WriteFile(file, []byte(snapOut), 0o644); code != 0 || err != nil {
		t.Fatalf("snapshot deployment/web: exit %d %v\n%s", code, err, snapOut)
	}
	if off := h.pods("-f", file); podIDs(off) != podIDs(r) {
		t.Errorf("pods -f snapshot: findings %s, live %s", podIDs(off), podIDs(r))
	}
	rd309 := podFinding(r, "RD309")
	h.record("pods: findings on real objects", "RD306 (ALB ip, namespace unlabelled), RD308 (NodePort, Cluster), RD309 (3 replicas, 3 domains, maxUnavailable 0), RD311 (minAvailable 3)",
		fmt.Sprintf("findings %s; Service web %d ready endpoints (EndpointSlice controller)", podIDs(r), serviceRow(r, "web").Ready))

	// 2. RD309's deadlock, for real: change the template; the surge pod
	// cannot schedule and no old pod is removed.
	h.kubectl("-n", h.ns, "patch", "deployment", "web", "-p", `{"spec":{"template":{"metadata":{"annotations":{"rolloutdoctor.io/rev":"2"}}}}}`)
	var pending string
	h.waitFor("an unschedulable surge pod", 60*time.Second, func() bool {
		out := h.kubectl("-n", h.ns, "get", "pods", "-l", "app=web", "-o",
			`jsonpath={range .items[*]}{.metadata.name}{" "}{.status.conditions[?(@.type=="PodScheduled")].reason}{"\n"}{end}`)
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) == 2 && f[1] == "Unschedulable" {
				pending = f[0]
				return true
			}
		}
		return false
	})
	time.Sleep(10 * time.Second)
	r = h.pods("deployment/web")
	ready := 0
	for _, p := range r.Pods {
		if p.Ready {
			ready++
		}
	}
	updated := h.kubectl("-n", h.ns, "get", "deployment", "web", "-o", "jsonpath={.status.updatedReplicas}/{.status.readyReplicas}")
	f := podFinding(r, "RD309")
	ev := ""
	if f != nil {
		for _, e := range f.Evidence {
			ev += e.Field + "=" + e.Value + "; "
		}
	}
	h.record("pods: anti-affinity update deadlock (RD309)", "before the update: "+msgOf(rd309),
		fmt.Sprintf("after a template change: %s Unschedulable, %d old pods still Ready 10 s later, updated/ready %s", pending, ready, updated))
	if f == nil || !strings.Contains(ev, pending) || ready != 3 || !strings.HasPrefix(updated, "1/") {
		t.Errorf("deadlock: RD309 %v (evidence %s), %d ready, updated/ready %s, pending %s", f != nil, ev, ready, updated, pending)
	}

	// 3. pods-e2e-1 loses power: its kwok dies, its Lease is no longer
	// renewed, and the node and its pods still read Ready.
	if err := kubelet.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	var stale *diagnose.PodReport
	h.waitFor("RD322 on solo while its pod still reads Ready", 70*time.Second, func() bool {
		s := h.pods("deployment/solo")
		if podFinding(s, "RD322") != nil && len(s.Pods) == 1 && s.Pods[0].Ready && s.Pods[0].NodeReady == "True" {
			stale = s
			return true
		}
		return false
	})
	tStale := time.Since(stopped).Round(time.Second)
	staleSvc := serviceRow(stale, "solo")
	if staleSvc.Ready != 1 {
		t.Errorf("while the node is silent the EndpointSlice still holds the pod as ready: got %d ready", staleSvc.Ready)
	}
	// 4. The node lifecycle controller marks the node Unknown and the pod
	// not Ready; the EndpointSlice controller then marks the endpoint not ready.
	var dead *diagnose.PodReport
	h.waitFor("the node lifecycle controller to mark solo's pod not Ready and the Service empty", 150*time.Second, func() bool {
		s := h.pods("deployment/solo")
		if len(s.Pods) == 1 && !s.Pods[0].Ready && s.Pods[0].NodeReady != "True" && podFinding(s, "RD324") != nil {
			dead = s
			return true
		}
		return false
	})
	tDead := time.Since(stopped).Round(time.Second)
	if podFinding(dead, "RD322") != nil {
		t.Errorf("RD322 still fires once the pod is not Ready: %s", podFinding(dead, "RD322").Message)
	}
	h.record("pods: a node stops reporting (kwok heartbeat stopped)",
		"RD322 while pod and node still read Ready and the endpoint is ready; RD324 once the node lifecycle controller acts",
		fmt.Sprintf("RD322 at +%s (%s); node %s, pod not Ready, Service solo 0 ready endpoints and RD324 at +%s", tStale, msgOf(podFinding(stale, "RD322")), dead.Pods[0].NodeReady, tDead))
}

// startKwok runs a kwok that manages one node only, with the lab's stages
// and Lease duration; the test kills it to stop that node's heartbeat.
func startKwok(t *testing.T, node string) *exec.Cmd {
	t.Helper()
	bins, _ := filepath.Glob(filepath.Join(labDir, "bin", "kwok-v*"))
	stages, _ := filepath.Glob(filepath.Join(labDir, "bin", "kwok-stages-v*", "*.yaml"))
	var bin string
	for _, b := range bins {
		if !strings.Contains(b, "stages") {
			bin = b
		}
	}
	if bin == "" || len(stages) == 0 {
		t.Fatal("kwok is not built: run make lab-build")
	}
	args := []string{"--kubeconfig", kubeconfig, "--manage-single-node", node, "--node-ip", "127.0.0.1",
		"--cidr", "10.245.0.0/16", "--node-lease-duration-seconds", "40"}
	for _, s := range stages {
		args = append(args, "-c", s)
	}
	cmd := exec.Command(bin, args...)
	log, err := os.Create(filepath.Join(t.TempDir(), "kwok.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		log.Close()
	})
	return cmd
}

func derefWeight(w *int32) int32 {
	if w == nil {
		return 0
	}
	return *w
}

func msgOf(f *diagnose.Finding) string {
	if f == nil {
		return "(not raised)"
	}
	return f.ID + ": " + f.Message
}
