//go:build e2e

// Package e2e proves rolloutdoctor's predictions against the real Argo
// Rollouts controllers in the lab of test/lab: a real kube-apiserver,
// kube-controller-manager and scheduler, kwok nodes whose pods turn Ready one
// by one, and one rollouts-controller binary per version. The versions run
// side by side in one lab, each with its own --instance-id; a scenario's
// Rollout carries the instance-id label of its version, so only that
// version's controller reconciles it.
//
// Run with `make e2e` (it builds the lab first). E2E_VERSIONS restricts the
// controller versions (default: all of test/lab/versions.env); E2E_PORT_BASE
// moves the lab's ports (default 20000: etcd on 22379, the API server on
// 26443, …) so that a second suite can run beside another lab.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
)

var (
	root       string // repository root
	labDir     string // test/lab
	stateDir   string // this run's lab state
	kubeconfig string
	plugin     string // the kubectl-rolloutdoctor binary under test
	dyn        dynamic.Interface
	versions   []string
	portBase   int    // E2E_PORT_BASE
	runID      string // distinguishes this run's host-wide names (tmux sessions)
)

var (
	gvrRollout   = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}
	gvrRS        = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	gvrVS        = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1alpha3", Resource: "virtualservices"}
	gvrDR        = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1alpha3", Resource: "destinationrules"}
	gvrSvc       = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	gvrNamespace = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

func TestMain(m *testing.M) {
	flag.Parse() // the lab is sized by -parallel before m.Run
	os.Exit(run(m))
}

func run(m *testing.M) int {
	wd, _ := os.Getwd()
	root = filepath.Clean(filepath.Join(wd, "../.."))
	labDir = filepath.Join(root, "test/lab")
	tmp, err := os.MkdirTemp("", "rolloutdoctor-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer os.RemoveAll(tmp)
	stateDir = filepath.Join(tmp, "lab")
	kubeconfig = filepath.Join(stateDir, "kubeconfig")
	runID = strings.TrimPrefix(filepath.Base(tmp), "rolloutdoctor-e2e-")
	versions = labVersions()
	if portBase, err = labPortBase(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 2
	}

	plugin = filepath.Join(tmp, "kubectl-rolloutdoctor")
	build := exec.Command("go", "build", "-o", plugin, "./cmd/kubectl-rolloutdoctor")
	build.Dir, build.Stdout, build.Stderr = root, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building the plugin:", err)
		return 2
	}
	// The e2e lab uses its own state directory and ports, so it can run next
	// to a lab started with `make lab-up`.
	if out, err := labCmd("up.sh").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: lab-up failed: %v\n%s", err, out)
		labCmd("down.sh").Run()
		return 2
	}
	defer func() {
		cmd := labCmd("down.sh")
		if keep := os.Getenv("E2E_KEEP_LOGS"); keep != "" {
			cmd.Env = append(cmd.Env, "LAB_KEEP_LOGS="+keep)
		}
		cmd.Run()
	}()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	cfg.QPS, cfg.Burst = 200, 400
	dyn = dynamic.NewForConfigOrDie(cfg)
	code := m.Run()
	rowsMu.Lock()
	n := len(rows)
	rowsMu.Unlock()
	// A passing run rewrites docs/fidelity.md: whole, or, narrowed by
	// E2E_SCENARIOS or by -run, the rows it produced (a -run run once
	// rewrote the page with its two sections only, and a -run of one
	// version left its sections with that version's rows only).
	narrowed := os.Getenv("E2E_SCENARIOS") != ""
	if f := flag.Lookup("test.run"); f != nil && f.Value.String() != "" {
		narrowed = true
	}
	if code == 0 && n > 0 && os.Getenv("E2E_VERSIONS") == "" && !testing.Short() {
		if err := writeFidelity(filepath.Join(root, "docs/fidelity.md"), narrowed); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: writing docs/fidelity.md:", err)
			return 1
		}
	}
	return code
}

// labPortBase reads E2E_PORT_BASE. The lab's ports are offsets from it; the
// default, 20000, gives the ports this suite has always used, and `make
// lab-up`'s own defaults are those of 10000. Every port stays below Linux's
// ephemeral range (32768).
func labPortBase() (int, error) {
	v := os.Getenv("E2E_PORT_BASE")
	if v == "" {
		return 20000, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1024 || n+10259 >= 32768 {
		return 0, fmt.Errorf("E2E_PORT_BASE=%q: want a number from 1024 to 22508 (ports up to base+10259)", v)
	}
	return n, nil
}

// labCmd runs a lab script against this run's state and ports. The
// controllers' metrics and healthz ports are the bases here plus a slot per
// version (controller.sh).
func labCmd(script string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(labDir, script), args...)
	port := func(name string, offset int) string { return fmt.Sprintf("%s=%d", name, portBase+offset) }
	// The suite keeps two cores busy most of its run, the API server taking
	// the largest share (docs/performance.md, CI). Two settings cut that
	// work (7–15% of a narrowed run's CPU) without touching what a scenario
	// observes:
	//   - GOGC=400 for the lab's processes: the API server spent an eighth
	//     of its CPU collecting garbage, and this machine has memory to
	//     spare for a larger heap.
	//   - no legacy Endpoints controllers: every Service selector change
	//     (an aborted canary's Service flips on every pass, argo-rollouts
	//     #3078) was also an Endpoints write. Nothing in the lab reads
	//     Endpoints: the rollouts controller only for AWS target-group
	//     verification, rolloutdoctor and kube-proxy-free kwok not at all;
	//     EndpointSlices, which the pods checks read, stay.
	cmd.Env = append(os.Environ(), "GOGC=400",
		"LAB_KCM_CONTROLLERS=*,-endpoints-controller,-endpointslice-mirroring-controller",
		"LAB_STATE="+stateDir, "LAB_CONTROLLER=none", fmt.Sprintf("LAB_NODES=%d", labNodes()),
		port("LAB_ETCD_PORT", 2379), port("LAB_ETCD_PEER_PORT", 2380), port("LAB_APISERVER_PORT", 6443),
		port("LAB_KCM_PORT", 10257), port("LAB_SCHEDULER_PORT", 10259), port("LAB_KUBELET_PORT", 10250),
		port("LAB_CONTROLLER_METRICS_PORT", 8090), port("LAB_CONTROLLER_HEALTHZ_PORT", 8080))
	return cmd
}

// labNodes is how many kwok nodes the lab gets: room for every scenario that
// runs at once (-parallel) at its peak (a reverted Rollout of 20 holds both
// revisions, 40 pods), at 100 of a node's 110 pods.
func labNodes() int {
	p := 8
	if f := flag.Lookup("test.parallel"); f != nil {
		p, _ = strconv.Atoi(f.Value.String())
	}
	return max(4, (p*45+99)/100)
}

// labVar reads a variable of versions.env.
func labVar(name string) string {
	f, err := os.Open(filepath.Join(labDir, "versions.env"))
	if err != nil {
		panic(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+"="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

// labVersions reads CONTROLLER_VERSIONS from versions.env, filtered by E2E_VERSIONS.
func labVersions() []string {
	all := strings.Fields(labVar("CONTROLLER_VERSIONS"))
	want := os.Getenv("E2E_VERSIONS")
	if want == "" {
		return all
	}
	var out []string
	for _, v := range all {
		if strings.Contains(","+want+",", ","+v+",") {
			out = append(out, v)
		}
	}
	return out
}

// instanceID is the --instance-id the e2e runs a controller version with.
func instanceID(version string) string { return "e2e-" + strings.ReplaceAll(version, ".", "-") }

// TestControllers runs every scenario against every controller version. The
// versions' controllers run side by side, each with its own --instance-id,
// and every scenario of every version runs in parallel in its own namespace,
// its Rollout labelled for its version's controller (harness.rolloutYAML).
func TestControllers(t *testing.T) {
	t.Parallel() // with TestPods, which needs no Argo controller
	errs := make(chan error, len(versions))
	for _, v := range versions {
		go func() {
			// Each controller gets an ALB ingress class of its own: every
			// controller's Ingress controller resets the ALB actions of the
			// Rollouts it does not reconcile on Ingresses of its classes
			// (upstream ingress/alb.go; finding RD139), so with the default
			// class the five versions would reset each other's.
			cmd := labCmd("controller.sh", "start", v, instanceID(v))
			cmd.Env = append(cmd.Env, "LAB_CONTROLLER_ARGS=--alb-ingress-classes="+albClass(v))
			out, err := cmd.CombinedOutput()
			if err != nil {
				err = fmt.Errorf("starting controller %s: %v\n%s", v, err, out)
			}
			errs <- err
		}()
	}
	// Registered before any check, so that whatever started is stopped once
	// every scenario has finished.
	t.Cleanup(func() { labCmd("controller.sh", "stop-all").Run() })
	for range versions {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	play := func(t *testing.T, v string, sc scenario) {
		// A scenario's panic fails it, not the process: the lab and its
		// controllers are stopped as after any failure (a panic used to
		// leave them running, holding the ports of the next run).
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("panic: %v\n%s", r, debug.Stack())
			}
		}()
		h := newHarness(t, v, sc.name)
		h.instanceID = instanceID(v)
		sc.run(t, h)
	}
	// Scenario by scenario, each for every version: -parallel admits them
	// roughly in this order, so the long ones of every version start first.
	// The names read TestControllers/VERSION/SCENARIO as subtests of
	// subtests would.
	var rest sync.WaitGroup
	var late []scenario
	for _, sc := range scenarios {
		if f := os.Getenv("E2E_SCENARIOS"); f != "" && !strings.Contains(","+f+",", ","+sc.name+",") {
			continue
		}
		if afterTheRest[sc.name] {
			late = append(late, sc)
			continue
		}
		for _, v := range versions {
			t.Run(v+"/"+sc.name, func(t *testing.T) {
				// Counted here, before Parallel, while the loop runs: by the
				// time a late group waits, every scenario -run selected is
				// counted, and none it left out is.
				rest.Add(1)
				defer rest.Done()
				t.Parallel()
				play(t, v, sc)
			})
		}
	}
	if len(late) == 0 {
		return
	}
	// The timing-sensitive scenarios run once the others are done, a few at
	// a time: one group per version (TestControllers/VERSION, so that the
	// names stay TestControllers/VERSION/SCENARIO) waits, holding one
	// -parallel slot each, and only then starts its scenarios.
	slots := make(chan struct{}, lateAtOnce)
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			rest.Wait()
			for _, sc := range late {
				t.Run(sc.name, func(t *testing.T) {
					t.Parallel()
					slots <- struct{}{}
					defer func() { <-slots }()
					play(t, v, sc)
				})
			}
		})
	}
}

// afterTheRest are the scenarios that reproduce a controller bug whose
// outcome hinges on the controller's and the pods' timing: a crash-loop's
// back-off against progressDeadlineSeconds (#3765), the canary Service's
// selector flapping for abortScaleDownDelaySeconds (#3078), the stable's
// weight while its pods come back (#3372, with and without the abort), a
// rejected full promotion's Warning Event (#4424). In whole-suite runs
// (some 300 scenarios at -parallel 24, load 10 on two cores) they were the
// failures: on a slower machine crash-loop 5 of 5 versions, svc-flap 4,
// stable-underweight 1, which passed alone there 15 of 15; on a faster
// one crash-loop, svc-flap and promote-full-overweight one version each.
// The controller's passes and the pods' status updates fell seconds behind
// what the reproductions time. They run after the rest, lateAtOnce at a
// time. The progress deadline's abort against its moment (#4971's
// scenario) joins them; that scenario also spins the controllers' queues
// for seconds (the bug's re-queue loop), which the others need not share.
var afterTheRest = map[string]bool{
	"bug-crash-loop":                true,
	"bug-canary-svc-flap":           true,
	"bug-stable-underweight":        true,
	"bug-stable-abort":              true,
	"bug-promote-full-overweight":   true,
	"bug-stale-scale-down-deadline": true,
}

const lateAtOnce = 10

// harness is one scenario's namespace, controller version and API access.
type harness struct {
	t       *testing.T
	version string
	// instanceID is the --instance-id of the version's controller, which the
	// scenario's Rollout is labelled with (TestPods has none).
	instanceID string
	ns         string
	ctx        context.Context
}

func newHarness(t *testing.T, version, name string) *harness {
	ns := strings.ReplaceAll(fmt.Sprintf("e2e-%s-%s", strings.ReplaceAll(version, ".", "-"), name), "_", "-")
	// A bound on one scenario's reads: the longest (restart-stalled, the
	// hung-pod ones, which wait two minutes for a pod to count as hung)
	// take 5–6 minutes on a loaded 2-core machine, and one ran past 6.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	h := &harness{t: t, version: version, ns: ns, ctx: ctx}
	// The namespace through the test's client, not kubectl: a kubectl run
	// costs 55–85 ms of CPU, and the suite creates and deletes one
	// namespace per scenario run.
	nsObj := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]interface{}{"name": ns}}}
	if _, err := dyn.Resource(gvrNamespace).Create(ctx, nsObj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", ns, err)
	}
	t.Cleanup(func() {
		// Not waited for (kubectl delete --wait=false did the same): the
		// namespace controller empties it while the suite goes on.
		dyn.Resource(gvrNamespace).Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	return h
}

// kubectl runs kubectl against the lab and fails the test on error.
func (h *harness) kubectl(args ...string) string {
	h.t.Helper()
	return h.kubectlIn("", args...)
}

func (h *harness) kubectlIn(stdin string, args ...string) string {
	h.t.Helper()
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		h.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// bindUser binds clusterRole to user cluster-wide as binding, removes the
// binding when the test ends, and waits until the API server authorizes
// it (waitAuthorized).
func (h *harness) bindUser(binding, clusterRole, user string) {
	h.t.Helper()
	h.kubectl("create", "clusterrolebinding", binding, "--clusterrole", clusterRole, "--user", user)
	h.t.Cleanup(func() {
		exec.Command("kubectl", "--kubeconfig", kubeconfig, "delete", "clusterrolebinding", binding, "--ignore-not-found").Run()
	})
	if err := waitAuthorized(kubeconfig, "get", "rollouts.argoproj.io", "-n", h.ns, "--as", user); err != nil {
		h.t.Fatalf("%v (clusterrolebinding %s)", err, binding)
	}
}

// waitAuthorized waits, at most 30 s, until `kubectl auth can-i ARGS` on
// kubeconfig says yes: the API server's RBAC authorizer reads bindings from
// a cache, so a request made just after a binding is created can still be
// refused (seen in CI under load).
func waitAuthorized(kubeconfig string, args ...string) error {
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		out, _ := exec.Command("kubectl", append([]string{"--kubeconfig", kubeconfig, "auth", "can-i"}, args...)...).Output()
		if strings.TrimSpace(string(out)) == "yes" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the API server did not authorize `kubectl auth can-i %s` within 30s", strings.Join(args, " "))
		}
	}
}

func (h *harness) apply(yaml string) {
	h.t.Helper()
	h.kubectlIn(yaml, "apply", "-n", h.ns, "-f", "-")
}

// diagnose runs the real plugin binary on the live lab and decodes its JSON.
// Exit code 1 only means "findings"; anything else fails the test.
func (h *harness) diagnose(name string) *diagnose.Report {
	h.t.Helper()
	cmd := exec.Command(plugin, "diagnose", name, "-n", h.ns, "--kubeconfig", kubeconfig, "-o", "json")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == 1) {
		h.t.Fatalf("diagnose %s: %v\n%s", name, err, stderr.String())
	}
	rep := &diagnose.Report{}
	if err := json.Unmarshal(stdout.Bytes(), rep); err != nil {
		h.t.Fatalf("diagnose %s: decoding JSON: %v\n%s", name, err, stdout.String())
	}
	if string(rep.Controller.Assumed) != h.version || rep.Controller.Source != "image-tag" {
		h.t.Fatalf("diagnose assumed controller %s (source %s); the lab runs %s", rep.Controller.Assumed, rep.Controller.Source, h.version)
	}
	return rep
}

// dump describes the namespace for a failure message: the controller's log
// first and the objects' state last, because a CI report may keep only the
// end of a long message.
func (h *harness) dump() string {
	logTail := h.ctrlLogTail(40)
	out, _ := exec.Command("kubectl", "--kubeconfig", kubeconfig, "-n", h.ns, "get", "rollout,rs,virtualservice",
		"-o", "wide").CombinedOutput()
	msg, _ := exec.Command("kubectl", "--kubeconfig", kubeconfig, "-n", h.ns, "get", "rollout", "app",
		"-o", "jsonpath={.metadata.generation} {.status.phase} {.status.message} index={.status.currentStepIndex} abort={.status.abort} promoteFull={.status.promoteFull}").CombinedOutput()
	return logTail + "\n" + string(out) + "rollout app: generation " + string(msg)
}

// ctrlLogTail is the last n lines the version's controller logged about this
// scenario's namespace: what it did (or did not) see when a wait timed out.
func (h *harness) ctrlLogTail(n int) string {
	out, err := exec.Command("kubectl", "--kubeconfig", kubeconfig, "logs", "-n", "argo-rollouts",
		"deploy/argo-rollouts-"+h.instanceID, "--since=1h").CombinedOutput()
	if err != nil {
		return "controller log: " + strings.TrimSpace(string(out))
	}
	var mine []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, " namespace="+h.ns+" ") {
			mine = append(mine, l)
		}
	}
	if len(mine) > n {
		mine = mine[len(mine)-n:]
	}
	return fmt.Sprintf("controller log, last %d lines about %s:\n%s", len(mine), h.ns, strings.Join(mine, "\n"))
}

func (h *harness) get(gvr schema.GroupVersionResource, name string) *unstructured.Unstructured {
	h.t.Helper()
	u, err := dyn.Resource(gvr).Namespace(h.ns).Get(h.ctx, name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatalf("get %s %s: %v", gvr.Resource, name, err)
	}
	return u
}

// waitFor polls cond until it holds, failing after timeout: every 100 ms at
// first, then less often, from about 4 s on once a second. Most conditions
// GET the Rollout, a consistent read the API server takes from etcd and
// converts twice, and most waits are for a state that then holds: thirty
// scenarios polling every 100 ms for minutes made those GETs the API
// server's most frequent request (about 30 a second, at 400 ms still 37 of
// the 165 a second it served) and, at load 10, starved the pods' status
// updates that the waits were for.
func (h *harness) waitFor(what string, timeout time.Duration, cond func() bool) {
	h.t.Helper()
	end := time.Now().Add(timeout)
	every := 100 * time.Millisecond
	for !cond() {
		if time.Now().After(end) {
			// The headline again at the end: a CI report may keep only
			// the end of a long message.
			h.t.Fatalf("timed out after %s waiting for %s\n%s\n(timed out after %[1]s waiting for %[2]s)", timeout, what, h.dump())
		}
		time.Sleep(every)
		every = min(every*3/2, time.Second)
	}
}

// fidelity rows, collected by scenarios and written to docs/fidelity.md.
type row struct {
	Scenario, Version, Predicted, Observed string
}

var (
	rowsMu sync.Mutex
	rows   []row
)

// record adds a predicted-vs-observed row for the results table.
func (h *harness) record(scenario, predicted, observed string) {
	h.t.Logf("%s\n  predicted: %s\n  observed:  %s", scenario, predicted, observed)
	rowsMu.Lock()
	defer rowsMu.Unlock()
	rows = append(rows, row{Scenario: scenario, Version: h.version, Predicted: predicted, Observed: observed})
}

func (h *harness) listRS() []unstructured.Unstructured {
	h.t.Helper()
	l, err := dyn.Resource(gvrRS).Namespace(h.ns).List(h.ctx, metav1.ListOptions{})
	if err != nil {
		h.t.Fatalf("list replicasets: %v", err)
	}
	return l.Items
}
