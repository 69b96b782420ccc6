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
	// alongside, when set, is the one-cluster scan this multi-cluster case
	// is compared with, measured in the same loop, run for run, so that
	// both see the same machine (measurePair); set is their clusters.
	alongside *benchCase
	set       *clusterSet
	// fewer, when set, is the same scan of two of the clusters, measured in
	// the same loop: what the ratio is when the clusters are no more than
	// the cores (this machine's two), for reference.
	fewer *benchCase
}

// clusters is how many API servers the multi-cluster cases scan at once:
// the lab's own and two more over its etcd (test/lab/apiserver.sh), each a
// process with its own watch cache serving the same fleet, as clusters of
// the same size would.
const clusters = 3

// A clusterSet is a kubeconfig whose contexts lab-1 … lab-N each name one
// of the API servers: directly, through a link of the profile, or through
// a link to a remote in front of it (elsewhere). Its current context is
// lab-1.
type clusterSet struct {
	kubeconfig, contexts string
	link                 *linkProfile
	elsewhere            bool
	links                []*link
	remotes              []*remote
}

func (s *clusterSet) close() {
	for _, l := range s.links {
		l.close()
	}
	for _, r := range s.remotes {
		r.close()
	}
}

// what names n of the set's clusters for the benchmark's table: all of
// them (clusters), two, or the one a single scan reads.
func (s *clusterSet) what(n int) string {
	count, server, servers, cl, behind := "one", "API server", "API server's", "cluster", "behind a link"
	if n > 1 {
		count, server, servers, cl, behind = fmt.Sprint(n), "API servers", "API servers'", "clusters", "each behind its own link"
	}
	switch {
	case s.link == nil:
		return fmt.Sprintf("%s %s on this machine", count, server)
	case s.elsewhere:
		return fmt.Sprintf("%s %s elsewhere (the %s work off this machine's cores), %s of %s", count, cl, servers, behind, s.link)
	}
	return fmt.Sprintf("%s %s on this machine, %s of %s", count, server, behind, s.link)
}

// writeClusterSet writes path: base's current context's credentials, once
// per server, as contexts lab-1 … lab-N.
func writeClusterSet(base, path string, servers []string) (string, error) {
	cfg, err := clientcmd.LoadFromFile(base)
	if err != nil {
		return "", err
	}
	cur := cfg.Contexts[cfg.CurrentContext]
	if cur == nil || cfg.Clusters[cur.Cluster] == nil {
		return "", fmt.Errorf("%s has no current context", base)
	}
	var names []string
	for i, server := range servers {
		n := fmt.Sprintf("lab-%d", i+1)
		cl := *cfg.Clusters[cur.Cluster]
		cl.Server = server
		cfg.Clusters[n] = &cl
		ctx := *cur
		ctx.Cluster = n
		cfg.Contexts[n] = &ctx
		names = append(names, n)
	}
	cfg.CurrentContext = names[0]
	return strings.Join(names, ","), clientcmd.WriteToFile(*cfg, path)
}

// startClusters starts the API servers beyond the lab's own and returns
// their addresses (the lab's first) and how to stop them.
func (c *config) startClusters() ([]string, func(), error) {
	addrs := []string{fmt.Sprintf("127.0.0.1:%d", c.portBase+6443)}
	var names []string
	stop := func() {
		for _, n := range names {
			c.labScript("apiserver.sh", "stop", n).Run()
		}
	}
	for i := 2; i <= clusters; i++ {
		n, port := fmt.Sprintf("bench-%d", i), c.portBase+6442+i
		step("starting API server %s on port %d over the lab's etcd", n, port)
		cmd := c.labScript("apiserver.sh", "start", n, fmt.Sprint(port))
		if out, err := cmd.CombinedOutput(); err != nil {
			c.labScript("apiserver.sh", "stop", n).Run()
			stop()
			return nil, nil, fmt.Errorf("test/lab/apiserver.sh start %s: %w\n%s", n, err, out)
		}
		names = append(names, n)
		addrs = append(addrs, fmt.Sprintf("127.0.0.1:%d", port))
	}
	return addrs, stop, nil
}

// clusterSets writes the loopback set and, per link profile, a set whose
// servers are reached through links of that profile, and one whose
// servers are remotes behind such links.
func (c *config) clusterSets(cfg *rest.Config, addrs []string) ([]*clusterSet, error) {
	dir := filepath.Dir(c.kubeconfig)
	var servers []string
	for _, a := range addrs {
		servers = append(servers, "https://"+a)
	}
	loop := &clusterSet{kubeconfig: filepath.Join(dir, "clusters-kubeconfig")}
	var err error
	if loop.contexts, err = writeClusterSet(c.kubeconfig, loop.kubeconfig, servers); err != nil {
		return nil, err
	}
	sets := []*clusterSet{loop}
	fail := func(err error) ([]*clusterSet, error) {
		closeSets(sets)
		return nil, err
	}
	pki := filepath.Join(c.stateDir, "pki")
	for i, p := range c.links {
		for _, elsewhere := range []bool{false, true} {
			s := &clusterSet{kubeconfig: filepath.Join(dir, fmt.Sprintf("links-%d-%v-kubeconfig", i, elsewhere)), link: &c.links[i], elsewhere: elsewhere}
			sets = append(sets, s)
			servers = servers[:0]
			for _, a := range addrs {
				if elsewhere {
					r, err := startRemote(cfg, a, filepath.Join(pki, "apiserver.crt"), filepath.Join(pki, "apiserver.key"))
					if err != nil {
						return fail(err)
					}
					s.remotes = append(s.remotes, r)
					a = r.addr()
				}
				l, err := startLink(a, p)
				if err != nil {
					return fail(err)
				}
				s.links = append(s.links, l)
				servers = append(servers, "https://"+l.addr())
			}
			if s.contexts, err = writeClusterSet(c.kubeconfig, s.kubeconfig, servers); err != nil {
				return fail(err)
			}
		}
	}
	return sets, nil
}

func closeSets(sets []*clusterSet) {
	for _, s := range sets {
		s.close()
	}
}

func cases(c *config, snapshotFile string, sets []*clusterSet) []benchCase {
	scan := fmt.Sprintf("`scan -A` vs `list rollouts -A`, %s Rollouts / %s pods", thousands(c.fleet+2), thousands(c.fleet*fleetPods+c.bigPods+smallPods))
	cs := []benchCase{
		{name: fmt.Sprintf("diagnose vs `get rollout`, %d pods", smallPods),
			rd: []string{"diagnose", "small", "-n", benchNS}, official: []string{"get", "rollout", "small", "-n", benchNS}},
		{name: fmt.Sprintf("diagnose vs `get rollout`, %s pods", thousands(c.bigPods)),
			rd: []string{"diagnose", "big", "-n", benchNS}, official: []string{"get", "rollout", "big", "-n", benchNS}},
		{name: scan, rd: []string{"scan", "-A"}, official: []string{"list", "rollouts", "-A"}, target: "≤ 1.5×"},
		{name: fmt.Sprintf("`diagnose -f` of the %s-pod snapshot vs the live diagnose", thousands(c.bigPods)),
			rd: []string{"diagnose", "-f", snapshotFile}, baseline: fmt.Sprintf("diagnose vs `get rollout`, %s pods", thousands(c.bigPods))},
	}
	for _, s := range sets {
		multi := []string{"scan", "-A", "--contexts", s.contexts}
		if s.link == nil {
			cs = append(cs, benchCase{name: fmt.Sprintf("`scan -A --contexts` of %s vs one `scan -A`", s.what(clusters)),
				rd: multi, baseline: scan, kubeconfig: s.kubeconfig, target: "≤ 1.5×"})
			continue
		}
		one := benchCase{name: fmt.Sprintf("`scan -A` of %s", s.what(1)), rd: []string{"scan", "-A"}, kubeconfig: s.kubeconfig}
		bc := benchCase{name: fmt.Sprintf("`scan -A --contexts` of %s, vs one", s.what(clusters)),
			rd: multi, baseline: one.name, kubeconfig: s.kubeconfig, target: "≤ 1.5×", alongside: &one, set: s}
		if s.elsewhere {
			two := strings.Join(strings.Split(s.contexts, ",")[:2], ",")
			bc.fewer = &benchCase{name: fmt.Sprintf("`scan -A --contexts` of %s, vs one", s.what(2)),
				rd: []string{"scan", "-A", "--contexts", two}, baseline: one.name, kubeconfig: s.kubeconfig, target: "as many clusters as cores: no target"}
		}
		cs = append(cs, bc)
	}
	return cs
}

// sample is one run of one tool.
type sample struct {
	wall, cpu time.Duration
	rssKiB    int64
	// server is the CPU the lab's API servers spent during the run (all of
	// them, whichever the tool read from): on this machine it shares the
	// cores with the tool.
	server time.Duration
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
	addrs, stopClusters, err := c.startClusters()
	if err != nil {
		return nil, err
	}
	defer stopClusters()
	c.settle(ctx)
	sets, err := c.clusterSets(l.cfg, addrs)
	if err != nil {
		return nil, err
	}
	defer closeSets(sets)
	proxy, err := startCounter(l.cfg, filepath.Join(filepath.Dir(c.kubeconfig), "counted-kubeconfig"))
	if err != nil {
		return nil, err
	}
	defer proxy.close()

	res := &results{when: time.Now().UTC(), cpus: runtime.NumCPU(), goVersion: runtime.Version(), loadBefore: loadavg()}
	byName := map[string]*result{}
	for i, bc := range cases(c, snap, sets) {
		if bc.alongside != nil {
			rs, err := c.measureTogether(ctx, bc, i+1)
			if err != nil {
				return nil, err
			}
			for _, r := range rs {
				res.cases = append(res.cases, r)
				byName[r.c.name] = r
			}
			continue
		}
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
		// Offline runs make no requests; the multi-cluster sets make a
		// scan's, once per server.
		if bc.baseline == "" && bc.kubeconfig == "" {
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
		if err := c.profile(ctx, r, fmt.Sprintf("%02d-%s", i+1, slug(bc.rd)), kubeconfig); err != nil {
			return nil, err
		}
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

// profile runs r's rolloutdoctor command once more with a CPU profile and
// once with a heap profile, into the -profiles directory as name.*.pprof.
func (c *config) profile(ctx context.Context, r *result, name, kubeconfig string) error {
	prof := filepath.Join(c.profiles, name+".cpu.pprof")
	args := append(append([]string{}, r.c.rd...), "--profile", "cpu", "--profile-output", prof)
	if _, err := c.runTool(ctx, c.rd, args, kubeconfig); err != nil {
		return err
	}
	heap := filepath.Join(c.profiles, name+".heap.pprof")
	args = append(append([]string{}, r.c.rd...), "--profile", "heap", "--profile-output", heap)
	if _, err := c.runTool(ctx, c.rd, args, kubeconfig); err != nil {
		return err
	}
	r.profileTop = pprofTop(c.rd, prof)
	return nil
}

// measureTogether measures a multi-cluster case, the one-cluster scan it
// is compared with (bc.alongside) and the two-cluster scan (bc.fewer,
// when set) in one loop, rotating which goes first, so that a change in
// the machine's load between cases cannot move the ratio. It returns the
// one-cluster result first. A set of clusters elsewhere is measured with the lab stopped
// (freezeLab): after the warm-ups the remotes have recorded every answer,
// and nothing of the clusters' own upkeep runs on the measured cores.
func (c *config) measureTogether(ctx context.Context, bc benchCase, n int) (rs []*result, err error) {
	rs = []*result{{c: *bc.alongside}, {c: bc}}
	if bc.fewer != nil {
		rs = append(rs, &result{c: *bc.fewer})
	}
	step("%s: %d runs each, interleaved with one cluster's", bc.name, c.runs)
	for _, r := range rs { // warm-ups: the remotes record every answer
		if _, err := c.runTool(ctx, c.rd, r.c.rd, bc.kubeconfig); err != nil {
			return nil, err
		}
	}
	if bc.set.elsewhere {
		thaw, err := freezeLab(c.stateDir)
		if err != nil {
			return nil, err
		}
		for _, r := range bc.set.remotes {
			r.frozen.Store(true)
		}
		defer func() {
			var missed int64
			for _, r := range bc.set.remotes {
				r.frozen.Store(false)
				missed += r.misses.Swap(0)
			}
			thaw()
			if missed > 0 && err == nil {
				err = fmt.Errorf("%s: %d request(s) reached a remote that had not recorded them while the lab was stopped", bc.name, missed)
			}
			c.settle(ctx)
		}()
	}
	for i := 0; i < c.runs; i++ {
		for j := range rs {
			r := rs[(i+j)%len(rs)]
			s, err := c.runTool(ctx, c.rd, r.c.rd, bc.kubeconfig)
			if err != nil {
				return nil, err
			}
			r.rd = append(r.rd, s)
		}
	}
	for i, r := range rs {
		if err := c.profile(ctx, r, fmt.Sprintf("%02d%c-%s", n, 'a'+i, slug(r.c.rd)), bc.kubeconfig); err != nil {
			return nil, err
		}
	}
	return rs, nil
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
	if bin == c.rd {
		cmd.Env = append(cmd.Env, c.toolEnv...)
	}
	server := c.serverCPU()
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	server = c.serverCPU() - server
	if err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || bin == c.plugin {
			return sample{}, fmt.Errorf("%s %s: %v: %s", filepath.Base(bin), strings.Join(full, " "), err, strings.TrimSpace(stderr.String()))
		}
	}
	s := sample{wall: wall, server: server}
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

// settle waits until the API servers are idle: one just started fills its
// watch caches and starts its controllers for a while after it reports
// ready, on the cores the runs are measured on. Idle is under 5% of a core
// over 2 s; it gives up after 2 minutes and measures anyway.
func (c *config) settle(ctx context.Context) {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		before := c.serverCPU()
		select {
		case <-ctx.Done():
			return
		case <-time.After(2 * time.Second):
		}
		if used := c.serverCPU() - before; used < 100*time.Millisecond {
			return
		}
	}
	step("the API servers are still busy after 2 minutes; measuring anyway (load average %s)", loadavg())
}

// serverCPU is the CPU time the lab's API servers have used so far, from
// /proc (user and system, in the kernel's USER_HZ ticks of 10 ms).
func (c *config) serverCPU() time.Duration {
	files, _ := filepath.Glob(filepath.Join(c.stateDir, "pids", "kube-apiserver*.pid"))
	var total time.Duration
	for _, f := range files {
		pid, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		st, err := os.ReadFile("/proc/" + strings.TrimSpace(string(pid)) + "/stat")
		i := bytes.LastIndexByte(st, ')')
		if err != nil || i < 0 || i+2 > len(st) {
			continue
		}
		// After the command's name: state, then 10 fields, utime, stime.
		f := strings.Fields(string(st[i+2:]))
		if len(f) < 13 {
			continue
		}
		var user, sys int64
		fmt.Sscan(f[11], &user)
		fmt.Sscan(f[12], &sys)
		total += time.Duration(user+sys) * 10 * time.Millisecond
	}
	return total
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
func serverS(s sample) float64 {
	return s.server.Seconds()
}
func rssMiB(s sample) float64 {
	return float64(s.rssKiB) / 1024
}

func (res *results) markdown(c *config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s on %d CPUs with %s; load average %s before and %s after. rolloutdoctor against kubectl-argo-rollouts %s (built from the argo-rollouts module), controller %s, Kubernetes from test/lab/versions.env; %d interleaved runs each after one warm-up, medians.\n\n",
		res.when.Format("2006-01-02 15:04 UTC"), res.cpus, res.goVersion, res.loadBefore, res.loadAfter, c.pluginVersion, c.controllerVersion, c.runs)
	if len(c.toolEnv) > 0 {
		fmt.Fprintf(&b, "rolloutdoctor ran with %s in its environment.\n\n", strings.Join(c.toolEnv, " "))
	}
	if c.rdBin != "" {
		fmt.Fprintf(&b, "rolloutdoctor was the binary %s, not the checkout's.\n\n", c.rdBin)
	}
	b.WriteString("Each cell: wall time, the tool's CPU, its peak memory; then the CPU the lab's API servers spent serving it, on the same cores.")
	b.WriteString(" A multi-cluster case behind links is measured run for run with its one-cluster case (and, for clusters elsewhere, the same scan of two of the clusters); for clusters elsewhere, every process of the lab is stopped (SIGSTOP) during those runs and the remotes answer from what they recorded in the warm-ups.\n\n")
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
		cell := func(ss []sample) string {
			if len(ss) == 0 {
				return "—"
			}
			x := fmt.Sprintf("%.2f s, %.2f s CPU, %.0f MiB", median(ss, wallS), median(ss, cpuS), median(ss, rssMiB))
			if sv := median(ss, serverS); sv > 0 {
				x += fmt.Sprintf("; API servers %.2f s CPU", sv)
			}
			return x
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", r.c.name, cell(r.rd), cell(r.official), ratio, reqs)
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
