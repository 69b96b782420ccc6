package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// timeBin measures each run's peak RSS (GNU time, Debian package "time").
const timeBin = "/usr/bin/time"

// A case is one question an engineer asks, answered by each tool.
type benchCase struct {
	name         string
	rd, official []string // arguments; official is empty when the plugin has no such command
	// baseline names the case whose rolloutdoctor median this one is
	// compared with when there is no official command (diagnose -f against
	// the live diagnose of the same Rollout).
	baseline string
	// kubeconfig, when set, is the one rolloutdoctor runs with (the
	// multi-context case's).
	kubeconfig string
	// target is the ratio the issue sets (default ≤ 1.0×).
	target string
}

// contexts is how many kube contexts the multi-cluster case scans.
const contexts = 3

// multiContext writes a kubeconfig whose contexts lab-1 … lab-N all name the
// lab's API server. One machine of 2 cores cannot host several API servers
// each with a reconciled fleet of 1,000 Rollouts, and if it could they would
// share the same cores as one: the case measures the scan's parallelism
// over N contexts (N times the reads, served by the one API server) against
// one scan, which is the cost an engineer sees (the slowest cluster's time,
// not the sum).
func multiContext(kubeconfig, path string) (string, error) {
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		return "", err
	}
	cur := cfg.Contexts[cfg.CurrentContext]
	if cur == nil {
		return "", fmt.Errorf("%s has no current context", kubeconfig)
	}
	var names []string
	for i := 1; i <= contexts; i++ {
		n := fmt.Sprintf("lab-%d", i)
		c := *cur
		cfg.Contexts[n] = &c
		names = append(names, n)
	}
	return strings.Join(names, ","), clientcmd.WriteToFile(*cfg, path)
}

func cases(c *config, snapshotFile, multiKubeconfig, multiContexts string) []benchCase {
	scan := fmt.Sprintf("`scan -A` vs `list rollouts -A`, %s Rollouts / %s pods", thousands(c.fleet+2), thousands(c.fleet*fleetPods+c.bigPods+smallPods))
	return []benchCase{
		{name: fmt.Sprintf("diagnose vs `get rollout`, %d pods", smallPods),
			rd: []string{"diagnose", "small", "-n", benchNS}, official: []string{"get", "rollout", "small", "-n", benchNS}},
		{name: fmt.Sprintf("diagnose vs `get rollout`, %s pods", thousands(c.bigPods)),
			rd: []string{"diagnose", "big", "-n", benchNS}, official: []string{"get", "rollout", "big", "-n", benchNS}},
		{name: scan, rd: []string{"scan", "-A"}, official: []string{"list", "rollouts", "-A"}, target: "≤ 1.5×"},
		{name: fmt.Sprintf("`diagnose -f` of the %s-pod snapshot vs the live diagnose", thousands(c.bigPods)),
			rd: []string{"diagnose", "-f", snapshotFile}, baseline: fmt.Sprintf("diagnose vs `get rollout`, %s pods", thousands(c.bigPods))},
		{name: fmt.Sprintf("`scan -A --contexts` of %d contexts (each the lab's API server) vs one `scan -A`", contexts),
			rd: []string{"scan", "-A", "--contexts", multiContexts}, baseline: scan, kubeconfig: multiKubeconfig, target: "≤ 1.5×"},
	}
}

// sample is one run of one tool.
type sample struct {
	wall, cpu time.Duration
	rssKiB    int64
}

type result struct {
	c                  benchCase
	rd, official       []sample
	rdReqs, officialRq int64
	profileTop         []string
}

type results struct {
	cases          []*result
	loadBefore     string
	loadAfter      string
	when           time.Time
	cpus           int
	goVersion      string
	requestsStable bool
}

func measure(ctx context.Context, c *config, l *lab) (*results, error) {
	if err := os.MkdirAll(c.profiles, 0o755); err != nil {
		return nil, err
	}
	snap := filepath.Join(c.profiles, "big-snapshot.yaml")
	out, err := exec.Command(c.rd, "snapshot", "big", "-n", benchNS, "--kubeconfig", c.kubeconfig).Output()
	if err != nil {
		return nil, fmt.Errorf("snapshot of the large Rollout: %w", err)
	}
	if err := os.WriteFile(snap, out, 0o644); err != nil {
		return nil, err
	}
	multiKubeconfig := filepath.Join(filepath.Dir(c.kubeconfig), "contexts-kubeconfig")
	multiContexts, err := multiContext(c.kubeconfig, multiKubeconfig)
	if err != nil {
		return nil, err
	}
	proxy, err := startCounter(l.cfg, filepath.Join(filepath.Dir(c.kubeconfig), "counted-kubeconfig"))
	if err != nil {
		return nil, err
	}
	defer proxy.close()

	res := &results{when: time.Now().UTC(), cpus: runtime.NumCPU(), goVersion: runtime.Version(), loadBefore: loadavg()}
	byName := map[string]*result{}
	for _, bc := range cases(c, snap, multiKubeconfig, multiContexts) {
		r := &result{c: bc}
		kubeconfig := c.kubeconfig
		if bc.kubeconfig != "" {
			kubeconfig = bc.kubeconfig
		}
		step("%s: %d runs each, interleaved", bc.name, c.runs)
		// one warm-up each (disk caches, the API server's watch cache)
		if _, err := c.runTool(ctx, c.rd, bc.rd, kubeconfig); err != nil {
			return nil, err
		}
		if len(bc.official) > 0 {
			if _, err := c.runTool(ctx, c.plugin, bc.official, c.kubeconfig); err != nil {
				return nil, err
			}
		}
		for i := 0; i < c.runs; i++ {
			s, err := c.runTool(ctx, c.rd, bc.rd, kubeconfig)
			if err != nil {
				return nil, err
			}
			r.rd = append(r.rd, s)
			if len(bc.official) > 0 {
				s, err := c.runTool(ctx, c.plugin, bc.official, c.kubeconfig)
				if err != nil {
					return nil, err
				}
				r.official = append(r.official, s)
			}
		}
		if bc.baseline == "" { // offline runs make no requests
			// Warm first: the counted kubeconfig names another server, so
			// its first run fills the discovery cache (as kubectl's first
			// run against a cluster does).
			if _, err := c.runTool(ctx, c.rd, bc.rd, proxy.kubeconfig); err != nil {
				return nil, err
			}
			if r.rdReqs, err = proxy.count(func() error { _, err := c.runTool(ctx, c.rd, bc.rd, proxy.kubeconfig); return err }); err != nil {
				return nil, err
			}
			if len(bc.official) > 0 {
				if _, err := c.runTool(ctx, c.plugin, bc.official, proxy.kubeconfig); err != nil {
					return nil, err
				}
				if r.officialRq, err = proxy.count(func() error {
					_, err := c.runTool(ctx, c.plugin, bc.official, proxy.kubeconfig)
					return err
				}); err != nil {
					return nil, err
				}
			}
		}
		prof := filepath.Join(c.profiles, slug(bc.rd)+".cpu.pprof")
		args := append(append([]string{}, bc.rd...), "--profile", "cpu", "--profile-output", prof)
		if _, err := c.runTool(ctx, c.rd, args, kubeconfig); err != nil {
			return nil, err
		}
		heap := filepath.Join(c.profiles, slug(bc.rd)+".heap.pprof")
		args = append(append([]string{}, bc.rd...), "--profile", "heap", "--profile-output", heap)
		if _, err := c.runTool(ctx, c.rd, args, kubeconfig); err != nil {
			return nil, err
		}
		r.profileTop = pprofTop(c.rd, prof)
		res.cases = append(res.cases, r)
		byName[bc.name] = r
	}
	res.loadAfter = loadavg()
	for _, r := range res.cases {
		if r.c.baseline != "" {
			r.official = byName[r.c.baseline].rd
		}
	}
	// The request count must not grow with the pods (24 vs many).
	res.requestsStable = res.cases[0].rdReqs == res.cases[1].rdReqs
	if !res.requestsStable {
		return res, fmt.Errorf("diagnose made %d requests at %d pods and %d at %d pods: the count must not depend on the pods",
			res.cases[0].rdReqs, smallPods, res.cases[1].rdReqs, c.bigPods)
	}
	return res, nil
}

// runTool runs one command to completion and measures it. Exit status 1 is
// rolloutdoctor's "findings at or above --fail-on", not a failure.
func (c *config) runTool(ctx context.Context, bin string, args []string, kubeconfig string) (sample, error) {
	if len(args) > 1 && args[1] == "-f" {
		kubeconfig = "" // offline
	}
	full := append([]string{}, args...)
	if kubeconfig != "" {
		full = append(full, "--kubeconfig", kubeconfig)
	}
	// Peak RSS through /usr/bin/time, which forks the tool from its own
	// small process: a child started from this process inherits its
	// high-water mark (the kernel counts the memory the child shared with
	// its parent until exec), so the rusage seen here reported this
	// process's size for every tool.
	rss, err := os.CreateTemp("", "bench-rss-")
	if err != nil {
		return sample{}, err
	}
	rss.Close()
	defer os.Remove(rss.Name())
	cmd := exec.CommandContext(ctx, timeBin, append([]string{"-f", "%M", "-o", rss.Name(), bin}, full...)...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	if err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || bin == c.plugin {
			return sample{}, fmt.Errorf("%s %s: %v: %s", filepath.Base(bin), strings.Join(full, " "), err, strings.TrimSpace(stderr.String()))
		}
	}
	s := sample{wall: wall}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		s.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()) // the tool's: time's own is negligible
	}
	b, err := os.ReadFile(rss.Name())
	if err != nil {
		return sample{}, err
	}
	lines := strings.Fields(string(b))
	if len(lines) == 0 {
		return sample{}, fmt.Errorf("/usr/bin/time wrote no peak RSS for %s", filepath.Base(bin))
	}
	if _, err := fmt.Sscan(lines[len(lines)-1], &s.rssKiB); err != nil {
		return sample{}, fmt.Errorf("/usr/bin/time's peak RSS %q: %w", lines[len(lines)-1], err)
	}
	return s, nil
}

// counter is a plain-HTTP proxy on 127.0.0.1 in front of the API server
// that counts requests; kubeconfig points at it.
type counter struct {
	n          atomic.Int64
	srv        *http.Server
	kubeconfig string
}

func startCounter(cfg *rest.Config, kubeconfig string) (*counter, error) {
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	c := &counter{kubeconfig: kubeconfig}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = rt
	rp.FlushInterval = -1 // watches stream
	c.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.n.Add(1)
		rp.ServeHTTP(w, r)
	})}
	go c.srv.Serve(ln)
	kc := clientcmdapi.NewConfig()
	kc.Clusters["counted"] = &clientcmdapi.Cluster{Server: "http://" + ln.Addr().String()}
	kc.AuthInfos["counted"] = &clientcmdapi.AuthInfo{}
	kc.Contexts["counted"] = &clientcmdapi.Context{Cluster: "counted", AuthInfo: "counted"}
	kc.CurrentContext = "counted"
	if err := clientcmd.WriteToFile(*kc, kubeconfig); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *counter) count(f func() error) (int64, error) {
	before := c.n.Load()
	err := f()
	return c.n.Load() - before, err
}

func (c *counter) close() { c.srv.Close() }

func pprofTop(bin, prof string) []string {
	out, err := exec.Command("go", "tool", "pprof", "-top", "-cum", "-nodecount", "60", bin, prof).Output()
	if err != nil {
		return []string{"(go tool pprof failed: " + err.Error() + ")"}
	}
	// The cumulative entries that are this program's or a library's work,
	// not the runtime's or cobra's frames around them.
	var top []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || !strings.HasSuffix(f[4], "%") {
			continue
		}
		fn := strings.Join(f[5:], " ")
		if strings.HasPrefix(fn, "runtime.") || strings.HasPrefix(fn, "internal/") || strings.Contains(fn, "cobra.") ||
			strings.HasPrefix(fn, "main.") || strings.Contains(fn, "pkg/cli.") || strings.Contains(fn, "par.Do") || strings.HasPrefix(fn, "reflect.") {
			continue
		}
		if len(fn) > 110 {
			fn = fn[:110] + "…"
		}
		top = append(top, fmt.Sprintf("%s %s", f[4], fn))
		if len(top) == 6 {
			break
		}
	}
	return top
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func slug(args []string) string {
	var parts []string
	for _, a := range args {
		if strings.Contains(a, "/") {
			a = "snapshot"
		}
		parts = append(parts, strings.Trim(a, "-"))
	}
	return strings.Join(parts, "-")
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func median(ss []sample, f func(sample) float64) float64 {
	if len(ss) == 0 {
		return 0
	}
	v := make([]float64, len(ss))
	for i, s := range ss {
		v[i] = f(s)
	}
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func wallS(s sample) float64 { return s.wall.Seconds() }
func cpuS(s sample) float64  { return s.cpu.Seconds() }
func rssMiB(s sample) float64 {
	return float64(s.rssKiB) / 1024
}

func (res *results) markdown(c *config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s on %d CPUs with %s; load average %s before and %s after. rolloutdoctor against kubectl-argo-rollouts %s (built from the argo-rollouts module), controller %s, Kubernetes from test/lab/versions.env; %d interleaved runs each after one warm-up, medians.\n\n",
		res.when.Format("2006-01-02 15:04 UTC"), res.cpus, res.goVersion, res.loadBefore, res.loadAfter, c.pluginVersion, c.controllerVersion, c.runs)
	b.WriteString("| case | rolloutdoctor | other | ratio (target) | requests |\n|---|---|---|---|---|\n")
	for _, r := range res.cases {
		target := r.c.target
		if target == "" {
			target = "≤ 1.0×"
		}
		rw, ow := median(r.rd, wallS), median(r.official, wallS)
		ratio := "—"
		if ow > 0 {
			ratio = fmt.Sprintf("%.2f× (%s)", rw/ow, target)
		}
		reqs := "—"
		if r.rdReqs > 0 {
			reqs = fmt.Sprint(r.rdReqs)
			if r.officialRq > 0 {
				reqs += fmt.Sprintf(" vs %d", r.officialRq)
			}
		}
		fmt.Fprintf(&b, "| %s | %.2f s, %.2f s CPU, %.0f MiB | %.2f s, %.2f s CPU, %.0f MiB | %s | %s |\n", r.c.name,
			rw, median(r.rd, cpuS), median(r.rd, rssMiB), ow, median(r.official, cpuS), median(r.official, rssMiB), ratio, reqs)
	}
	// The directory is the run's own (-profiles), not something a reader of
	// the docs can open: say where a run puts them.
	b.WriteString("\nWhere rolloutdoctor's CPU goes (cumulative share of the profile, `go tool pprof -top -cum`; a run writes each case's CPU and heap profiles to its `-profiles` directory):\n\n")
	for _, r := range res.cases {
		fmt.Fprintf(&b, "- %s: %s\n", r.c.name, strings.Join(r.profileTop, "; "))
	}
	return b.String()
}

const (
	beginMark = "<!-- bench:begin (written by make bench) -->"
	endMark   = "<!-- bench:end -->"
)

// writeSection replaces the text between the bench markers of path.
func writeSection(path, table string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(b)
	i, j := strings.Index(s, beginMark), strings.Index(s, endMark)
	if i < 0 || j < i {
		return fmt.Errorf("%s has no %q … %q section", path, beginMark, endMark)
	}
	s = s[:i+len(beginMark)] + "\n" + table + s[j:]
	return os.WriteFile(path, []byte(s), 0o644)
}
