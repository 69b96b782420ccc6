// Command bench measures rolloutdoctor side by side with the official
// kubectl-argo-rollouts plugin, on the same objects in the project's lab
// (test/lab): a real kube-apiserver and etcd, kwok nodes, and the real Argo
// Rollouts controller reconciling every Rollout, so that statuses,
// ReplicaSets and pods are what a cluster holds, not bare manifests.
//
//	make bench          # the full form: 1,000 Rollouts / 20,000 pods, 10 runs each
//	make bench-short    # the CI form: 100 Rollouts / 2,000 pods, 3 runs each
//
// Runs are interleaved (rolloutdoctor, plugin, rolloutdoctor, …) so that a
// change in the machine's load hits both; each figure is the median. Peak
// memory is the process's maximum RSS (rusage). Requests are counted by a
// proxy in front of the API server, in separate runs (the timed runs talk to
// the API server directly). CPU profiles of each rolloutdoctor case go to
// -profiles. The full form writes its table into docs/performance.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

type config struct {
	root, labDir, stateDir string
	kubeconfig, rd, plugin string
	pluginVersion          string
	controllerVersion      string
	portBase               int
	fleet, bigPods         int
	nodes                  int
	runs                   int
	profiles               string
	write                  string
	keep                   bool
	reuse                  string
	short                  bool
	toolEnv                []string
	rdBin                  string
	links                  []linkProfile
}

func main() {
	var c config
	flag.BoolVar(&c.short, "short", false, "the CI form: a 100-Rollout fleet, 3 runs per case, nothing written to docs")
	flag.IntVar(&c.fleet, "fleet", 1000, "Rollouts in the fleet (20 pods each) that scan reads")
	flag.IntVar(&c.bigPods, "big", 2000, "pods of the large Rollout")
	flag.IntVar(&c.runs, "runs", 10, "runs of each tool per case")
	flag.StringVar(&c.profiles, "profiles", "bench-out", "directory for the CPU and heap profiles of each case")
	flag.StringVar(&c.write, "write", "", "markdown file whose bench section gets the table (the full form: docs/performance.md)")
	flag.BoolVar(&c.keep, "keep", false, "leave the lab running afterwards (stop it with LAB_STATE=… test/lab/down.sh)")
	flag.StringVar(&c.reuse, "lab", "", "measure on the lab that an earlier -keep run left in this state directory (same -fleet and -big), instead of starting and populating one")
	flag.StringVar(&c.rdBin, "rd", "", "measure this kubectl-rolloutdoctor binary instead of building the checkout's, for an A/B of two commits on one lab (-lab)")
	toolEnv := flag.String("tool-env", "", "KEY=VALUE pairs (comma-separated) added to rolloutdoctor's environment only, for an A/B of a runtime setting (-tool-env GOGC=200)")
	links := flag.String("links", "2ms/1000Mbit,30ms/200Mbit,100ms/100Mbit", "network paths (RTT/BANDWIDTH, comma-separated) over which the multi-cluster scan is measured as well as on loopback: a cluster in the same region, one in a neighbouring region, one on another continent or behind a VPN")
	flag.Parse()
	var err error
	if c.links, err = parseLinks(*links); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	if *toolEnv != "" {
		c.toolEnv = strings.Split(*toolEnv, ",")
	}
	if c.short {
		c.fleet, c.runs = min(c.fleet, 100), min(c.runs, 3)
	}
	if err := run(&c); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(c *config) error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	if c.root, err = moduleRoot(wd); err != nil {
		return err
	}
	c.labDir = filepath.Join(c.root, "test/lab")
	env, err := readEnv(filepath.Join(c.labDir, "versions.env"))
	if err != nil {
		return err
	}
	c.pluginVersion = env["PLUGIN_VERSION"]
	vs := strings.Fields(env["CONTROLLER_VERSIONS"])
	c.controllerVersion = vs[len(vs)-1] // the newest, as the plugin's version
	c.portBase = 19000
	if v := os.Getenv("BENCH_PORT_BASE"); v != "" {
		if _, err := fmt.Sscan(v, &c.portBase); err != nil || c.portBase < 1024 || c.portBase+10259 >= 32768 {
			return fmt.Errorf("BENCH_PORT_BASE=%q: want a number from 1024 to 22508", v)
		}
	}
	if _, err := os.Stat(timeBin); err != nil {
		return fmt.Errorf("%s is needed to measure peak memory (Debian/Ubuntu: apt-get install time)", timeBin)
	}
	tmp, err := os.MkdirTemp("", "rolloutdoctor-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	switch {
	case c.reuse != "":
		c.stateDir = c.reuse
	case c.keep:
		// Not under tmp: the lab's etcd keeps its data there after we exit.
		if c.stateDir, err = os.MkdirTemp("", "rolloutdoctor-bench-lab-"); err != nil {
			return err
		}
	default:
		c.stateDir = filepath.Join(tmp, "lab")
	}
	c.kubeconfig = filepath.Join(c.stateDir, "kubeconfig")

	step("building the lab's binaries and the official plugin %s", c.pluginVersion)
	parts := []string{"etcd", "kube", "kwok", c.controllerVersion, "plugin"}
	if c.reuse != "" {
		parts = []string{"plugin"}
	}
	build := c.labScript("build.sh", parts...)
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("test/lab/build.sh: %w", err)
	}
	c.plugin = filepath.Join(c.labDir, "bin", "kubectl-argo-rollouts-"+c.pluginVersion)
	if c.rdBin != "" {
		if c.rd, err = filepath.Abs(c.rdBin); err != nil {
			return err
		}
	} else {
		c.rd = filepath.Join(tmp, "kubectl-rolloutdoctor")
		gb := exec.Command("go", "build", "-o", c.rd, "./cmd/kubectl-rolloutdoctor")
		gb.Dir, gb.Stdout, gb.Stderr = c.root, os.Stderr, os.Stderr
		if err := gb.Run(); err != nil {
			return fmt.Errorf("building rolloutdoctor: %w", err)
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	l, err := c.startLab(ctx)
	if err != nil {
		return err
	}
	if c.keep && c.reuse == "" {
		defer fmt.Fprintf(os.Stderr, "bench: the lab keeps running: LAB_STATE=%s %s/down.sh stops it; -lab %s measures on it again\n", c.stateDir, c.labDir, c.stateDir)
	} else if c.reuse == "" {
		defer c.labScript("down.sh").Run()
	}
	res, err := measure(ctx, c, l)
	if res == nil {
		return err
	}
	table := res.markdown(c)
	fmt.Println(table)
	if err != nil {
		return err
	}
	if c.write != "" && !c.short {
		return writeSection(c.write, table)
	}
	return nil
}

// startLab starts the lab and populates it, or with -lab checks that the
// lab left there holds the populated fleet.
func (c *config) startLab(ctx context.Context) (*lab, error) {
	if c.reuse != "" {
		step("measuring on the lab in %s", c.reuse)
		l, err := newLab(c)
		if err != nil {
			return nil, fmt.Errorf("-lab %s: %w", c.reuse, err)
		}
		if done, total, _, err := l.progress(ctx, "Paused"); err != nil || done != total {
			return nil, fmt.Errorf("-lab %s: %d of %d Rollouts are paused with all pods available (%v): start a new lab with -keep, with the same -fleet and -big", c.reuse, done, total, err)
		}
		return l, nil
	}
	// The large Rollout (and the small one) on the first node, the fleet's
	// 20 pods per Rollout (25 during the update) on the others, with room.
	c.nodes = 1 + max(3, (c.fleet*25+2999)/3000)
	step("starting the lab: %d kwok nodes, controller %s", c.nodes, c.controllerVersion)
	up := c.labScript("up.sh")
	up.Env = append(up.Env, "LAB_CONTROLLER="+c.controllerVersion, fmt.Sprintf("LAB_NODES=%d", c.nodes),
		fmt.Sprintf("LAB_NODE_PODS=%d", max(3000, c.bigPods*2+100)),
		// The fleet is created at once; at its default 40 requests/s the
		// controller takes many minutes to reconcile 1,000 Rollouts.
		"LAB_CONTROLLER_ARGS=--qps 1000 --burst 2000 --rollout-threads 20")
	if out, err := up.CombinedOutput(); err != nil {
		c.labScript("down.sh").Run()
		return nil, fmt.Errorf("test/lab/up.sh: %w\n%s", err, out)
	}
	l, err := newLab(c)
	if err == nil {
		err = l.populate(ctx)
	}
	if err != nil && !c.keep {
		c.labScript("down.sh").Run()
	}
	return l, err
}

func step(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "bench: %s %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// labScript runs a lab script against this run's state directory and ports.
func (c *config) labScript(script string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(c.labDir, script), args...)
	port := func(name string, offset int) string { return fmt.Sprintf("%s=%d", name, c.portBase+offset) }
	cmd.Env = append(os.Environ(), "LAB_STATE="+c.stateDir,
		port("LAB_ETCD_PORT", 2379), port("LAB_ETCD_PEER_PORT", 2380), port("LAB_APISERVER_PORT", 6443),
		port("LAB_KCM_PORT", 10257), port("LAB_SCHEDULER_PORT", 10259), port("LAB_KUBELET_PORT", 10250),
		port("LAB_CONTROLLER_METRICS_PORT", 8090), port("LAB_CONTROLLER_HEALTHZ_PORT", 8080))
	return cmd
}

func moduleRoot(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s: run from the repository", dir)
		}
	}
}

// readEnv reads the KEY=VALUE lines of versions.env.
func readEnv(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok && !strings.HasPrefix(k, "#") {
			m[k] = strings.Trim(v, `"`)
		}
	}
	return m, nil
}
