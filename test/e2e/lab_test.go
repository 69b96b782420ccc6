//go:build e2e

// Package e2e proves rolloutdoctor's predictions against the real Argo
// Rollouts controller, version by version, in the lab of test/lab: a real
// kube-apiserver, kube-controller-manager and scheduler, kwok nodes whose pods
// turn Ready one by one, and one rollouts-controller binary per version.
//
// Run with `make e2e` (it builds the lab first). E2E_VERSIONS restricts the
// controller versions (default: all of test/lab/versions.env).
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
)

var (
	gvrRollout = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}
	gvrRS      = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	gvrVS      = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1alpha3", Resource: "virtualservices"}
	gvrDR      = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1alpha3", Resource: "destinationrules"}
	gvrSvc     = schema.GroupVersionResource{Version: "v1", Resource: "services"}
)

func TestMain(m *testing.M) {
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
	versions = labVersions()

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
	if code == 0 && n > 0 && os.Getenv("E2E_VERSIONS") == "" && os.Getenv("E2E_SCENARIOS") == "" && !testing.Short() {
		if err := writeFidelity(filepath.Join(root, "docs/fidelity.md")); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: writing docs/fidelity.md:", err)
			return 1
		}
	}
	return code
}

// labCmd runs a lab script against this run's state and ports.
func labCmd(script string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(labDir, script), args...)
	cmd.Env = append(os.Environ(),
		"LAB_STATE="+stateDir, "LAB_CONTROLLER=none",
		"LAB_ETCD_PORT=22379", "LAB_ETCD_PEER_PORT=22380", "LAB_APISERVER_PORT=26443",
		"LAB_KCM_PORT=30257", "LAB_SCHEDULER_PORT=30259",
		"LAB_CONTROLLER_METRICS_PORT=28090", "LAB_CONTROLLER_HEALTHZ_PORT=28080")
	return cmd
}

// labVersions reads CONTROLLER_VERSIONS from versions.env, filtered by E2E_VERSIONS.
func labVersions() []string {
	f, err := os.Open(filepath.Join(labDir, "versions.env"))
	if err != nil {
		panic(err)
	}
	defer f.Close()
	var all []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CONTROLLER_VERSIONS="); ok {
			all = strings.Fields(strings.Trim(v, `"`))
		}
	}
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

// TestControllers runs every scenario against every controller version. The
// scenarios of one version run in parallel, each in its own namespace.
func TestControllers(t *testing.T) {
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			if out, err := labCmd("controller.sh", "start", v).CombinedOutput(); err != nil {
				t.Fatalf("starting controller %s: %v\n%s", v, err, out)
			}
			t.Cleanup(func() { labCmd("controller.sh", "stop").Run() })
			for _, sc := range scenarios {
				if f := os.Getenv("E2E_SCENARIOS"); f != "" && !strings.Contains(","+f+",", ","+sc.name+",") {
					continue
				}
				t.Run(sc.name, func(t *testing.T) {
					t.Parallel()
					h := newHarness(t, v, sc.name)
					sc.run(t, h)
				})
			}
		})
	}
}

// harness is one scenario's namespace, controller version and API access.
type harness struct {
	t       *testing.T
	version string
	ns      string
	ctx     context.Context
}

func newHarness(t *testing.T, version, name string) *harness {
	ns := strings.ReplaceAll(fmt.Sprintf("e2e-%s-%s", strings.ReplaceAll(version, ".", "-"), name), "_", "-")
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	t.Cleanup(cancel)
	h := &harness{t: t, version: version, ns: ns, ctx: ctx}
	h.kubectl("create", "namespace", ns)
	t.Cleanup(func() {
		exec.Command("kubectl", "--kubeconfig", kubeconfig, "delete", "namespace", ns, "--wait=false").Run()
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

// dump describes the namespace for a failure message.
func (h *harness) dump() string {
	out, _ := exec.Command("kubectl", "--kubeconfig", kubeconfig, "-n", h.ns, "get", "rollout,rs,virtualservice",
		"-o", "wide").CombinedOutput()
	msg, _ := exec.Command("kubectl", "--kubeconfig", kubeconfig, "-n", h.ns, "get", "rollout", "app",
		"-o", "jsonpath={.status.phase} {.status.message} index={.status.currentStepIndex} abort={.status.abort}").CombinedOutput()
	return string(out) + string(msg)
}

func (h *harness) get(gvr schema.GroupVersionResource, name string) *unstructured.Unstructured {
	h.t.Helper()
	u, err := dyn.Resource(gvr).Namespace(h.ns).Get(h.ctx, name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatalf("get %s %s: %v", gvr.Resource, name, err)
	}
	return u
}

// waitFor polls cond every 100 ms until it holds, failing after timeout.
func (h *harness) waitFor(what string, timeout time.Duration, cond func() bool) {
	h.t.Helper()
	end := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(end) {
			h.t.Fatalf("timed out after %s waiting for %s\n%s", timeout, what, h.dump())
		}
		time.Sleep(100 * time.Millisecond)
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
