//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/rolloutdoctor/rolloutdoctor/internal/nettest"
)

// extraLab is a second (or third) lab beside the suite's: its own etcd, API
// server and one controller, on ports offset from the suite's.
type extraLab struct {
	state, kubeconfig, version string
	offset                     int
}

func (l extraLab) cmd(script string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(labDir, script), args...)
	port := func(name string, off int) string { return fmt.Sprintf("%s=%d", name, portBase+l.offset+off) }
	cmd.Env = append(os.Environ(), "LAB_STATE="+l.state, "LAB_CONTROLLER="+l.version, "LAB_NODES=2",
		port("LAB_ETCD_PORT", 2379), port("LAB_ETCD_PEER_PORT", 2380), port("LAB_APISERVER_PORT", 6443),
		port("LAB_KCM_PORT", 10257), port("LAB_SCHEDULER_PORT", 10259), port("LAB_KUBELET_PORT", 10250),
		port("LAB_CONTROLLER_METRICS_PORT", 8090), port("LAB_CONTROLLER_HEALTHZ_PORT", 8080))
	return cmd
}

func (l extraLab) kubectl(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", l.kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl (%s) %s: %v\n%s", l.version, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// apiserverPID is the lab's kube-apiserver process.
func (l extraLab) apiserverPID(t *testing.T) int {
	b, err := os.ReadFile(filepath.Join(l.state, "pids", "kube-apiserver.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

const waitingRollout = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: app
spec:
  replicas: 2
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec: {containers: [{name: app, image: "registry.example/app:IMAGE"}]}
  strategy:
    canary:
      steps:
      - setWeight: 50
      - pause: {}
`

// TestScanAcrossClusters scans three clusters and two broken contexts at
// once: the suite's lab, and two more labs each with its own controller
// version (the oldest and the newest modeled), one of which stops
// answering (its API server is frozen with SIGSTOP), plus a context whose
// credentials the API server refuses, a cluster without Argo Rollouts and
// three behind a VPN that is down. The readable clusters are read and
// ranked together — each Rollout with its cluster, the controller version
// found in each and how, the Rollout waiting for a person called out — the
// broken ones are sections with their reason, the frozen one is bounded by
// --request-timeout, and once it answers again it is read like the others.
func TestScanAcrossClusters(t *testing.T) {
	if f := os.Getenv("E2E_SCENARIOS"); f != "" && !strings.Contains(","+f+",", ",multicluster,") {
		t.Skip("not in E2E_SCENARIOS")
	}
	t.Parallel()
	oldest, newest := versions[0], versions[len(versions)-1]
	labs := []extraLab{{version: oldest, offset: 100}, {version: newest, offset: 200}}
	errs := make(chan error, len(labs))
	for i := range labs {
		labs[i].state = filepath.Join(t.TempDir(), "lab")
		labs[i].kubeconfig = filepath.Join(labs[i].state, "kubeconfig")
		l := labs[i]
		t.Cleanup(func() { l.cmd("down.sh").Run() })
		go func() {
			out, err := l.cmd("up.sh").CombinedOutput()
			if err != nil {
				err = fmt.Errorf("lab %s: %v\n%s", l.version, err, out)
			}
			errs <- err
		}()
	}
	for range labs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// A cluster without Argo Rollouts: one more API server over the oldest
	// lab's etcd, keeping its objects under a prefix of its own.
	bare := fmt.Sprintf("https://127.0.0.1:%d", portBase+labs[0].offset+6450)
	bareUp := make(chan error, 1)
	go func() {
		out, err := labs[0].cmd("apiserver.sh", "start", "bare", strings.TrimPrefix(bare, "https://127.0.0.1:"), "/bare").CombinedOutput()
		if err != nil {
			err = fmt.Errorf("the bare API server: %v\n%s", err, out)
		}
		bareUp <- err
	}()
	// A Rollout in each, updated and paused at its indefinite pause step.
	for _, l := range labs {
		l.kubectl(t, "", "create", "namespace", "fleet")
		l.kubectl(t, strings.Replace(waitingRollout, "IMAGE", "1", 1), "apply", "-n", "fleet", "-f", "-")
	}
	for _, l := range labs {
		waitJSONPath(t, l, "{.status.phase}", "Healthy")
		l.kubectl(t, strings.Replace(waitingRollout, "IMAGE", "2", 1), "apply", "-n", "fleet", "-f", "-")
	}
	for _, l := range labs {
		waitJSONPath(t, l, "{.status.pauseConditions[0].reason}", "CanaryPauseStep")
	}

	// A second identity in the oldest lab: a service account's token.
	labs[0].kubectl(t, "", "create", "serviceaccount", "scanner", "-n", "default")
	labs[0].kubectl(t, "", "create", "clusterrolebinding", "scanner", "--clusterrole=cluster-admin", "--serviceaccount=default:scanner")
	// Not refused by an authorizer that has not seen the binding yet.
	if err := waitAuthorized(labs[0].kubeconfig, "list", "rollouts.argoproj.io", "-A", "--as", "system:serviceaccount:default:scanner"); err != nil {
		t.Fatal(err)
	}
	saToken := strings.TrimSpace(labs[0].kubectl(t, "", "create", "token", "scanner", "-n", "default", "--duration=1h"))
	// Exec credential plugins, as cloud CLIs are used: one gives the
	// service account's token, one waits for a login that never comes.
	plugins := t.TempDir()
	tokenPlugin, stuckPlugin := filepath.Join(plugins, "token-login"), filepath.Join(plugins, "stuck-login")
	for path, body := range map[string]string{
		tokenPlugin: `echo 'using the token of the service account scanner' >&2
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' "$SA_TOKEN"`,
		// Not exec'd: a wrapper whose child is the plugin, which must be
		// stopped with it. What it prints is quoted in its section.
		stuckPlugin: "echo 'To sign in, open https://login.example/device and enter the code LAB-1234' >&2\nsleep 601; echo never",
	} {
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	// Corporate proxies: one that tunnels, one that wants a login, one
	// that takes the connection and never opens the tunnel.
	tunnel, proxyLogin, proxySilent := nettest.ConnectProxy(t, 200), nettest.ConnectProxy(t, 407), nettest.ConnectProxy(t, 0)

	// One kubeconfig with every context: the suite's lab, the two others,
	// the suite's server with a token it does not know, and the oldest lab
	// four more times, as a kubeconfig collects them: an alias (copies of
	// its cluster and user entries under other names), the service
	// account's context, and through each proxy (its proxy-url). Each
	// cluster is listed once.
	kc := filepath.Join(t.TempDir(), "config")
	merged := clientcmdapi.NewConfig()
	for name, path := range map[string]string{"suite": kubeconfig, "old": labs[0].kubeconfig, "new": labs[1].kubeconfig} {
		c, err := clientcmd.LoadFromFile(path)
		if err != nil {
			t.Fatal(err)
		}
		cur := c.Contexts[c.CurrentContext]
		if cur == nil {
			t.Fatalf("%s has no current context", path)
		}
		merged.Clusters[name] = c.Clusters[cur.Cluster]
		merged.AuthInfos[name] = c.AuthInfos[cur.AuthInfo]
		merged.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
		if name == "suite" {
			merged.AuthInfos["refused"] = &clientcmdapi.AuthInfo{Token: "not-a-token"}
			merged.Contexts["refused"] = &clientcmdapi.Context{Cluster: name, AuthInfo: "refused"}
			merged.AuthInfos["stuck-login"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{APIVersion: "client.authentication.k8s.io/v1",
				Command: stuckPlugin, InteractiveMode: clientcmdapi.NeverExecInteractiveMode}}
			merged.Contexts["stuck-login"] = &clientcmdapi.Context{Cluster: name, AuthInfo: "stuck-login"}
		}
		if name == "old" {
			merged.Clusters["old-alias"], merged.AuthInfos["old-alias"] = c.Clusters[cur.Cluster].DeepCopy(), c.AuthInfos[cur.AuthInfo].DeepCopy()
			merged.Contexts["old-alias"] = &clientcmdapi.Context{Cluster: "old-alias", AuthInfo: "old-alias"}
			merged.AuthInfos["old-sa"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{APIVersion: "client.authentication.k8s.io/v1",
				Command: tokenPlugin, Env: []clientcmdapi.ExecEnvVar{{Name: "SA_TOKEN", Value: saToken}}, InteractiveMode: clientcmdapi.NeverExecInteractiveMode}}
			merged.Contexts["old-sa"] = &clientcmdapi.Context{Cluster: name, AuthInfo: "old-sa"}
			for ctx, proxy := range map[string]string{"old-proxied": tunnel, "proxy-login": proxyLogin, "proxy-silent": proxySilent} {
				merged.Clusters[ctx] = c.Clusters[cur.Cluster].DeepCopy()
				merged.Clusters[ctx].ProxyURL = proxy
				merged.Contexts[ctx] = &clientcmdapi.Context{Cluster: ctx, AuthInfo: name}
			}
		}
	}
	if err := <-bareUp; err != nil {
		t.Fatal(err)
	}
	merged.Clusters["bare"] = merged.Clusters["old"].DeepCopy()
	merged.Clusters["bare"].Server = bare
	merged.Contexts["bare"] = &clientcmdapi.Context{Cluster: "bare", AuthInfo: "old"}
	// Three clusters behind a VPN that is down: nothing answers their
	// addresses. With fourteen contexts, more than the eight read at once,
	// each cluster is reached first, and these take no turn.
	// (nettest.Blackhole skips a test where the kernel resets such attempts
	// instead; this one must not be skipped for it.)
	if b, _ := os.ReadFile("/proc/sys/net/ipv4/tcp_abort_on_overflow"); strings.TrimSpace(string(b)) == "1" {
		t.Fatal("net.ipv4.tcp_abort_on_overflow is 1: the clusters that drop attempts to connect cannot be made here (sysctl -w net.ipv4.tcp_abort_on_overflow=0)")
	}
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("vpn-down-%d", i)
		merged.Clusters[name] = &clientcmdapi.Cluster{Server: nettest.Blackhole(t), InsecureSkipTLSVerify: true}
		merged.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: "t"}
		merged.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	if err := clientcmd.WriteToFile(*merged, kc); err != nil {
		t.Fatal(err)
	}

	type scanJSON struct {
		Kind     string `json:"kind"`
		Clusters []struct {
			Context         string `json:"context"`
			Error           string `json:"error"`
			Retryable       bool   `json:"retryable"`
			Rollouts        int    `json:"rollouts"`
			Waiting         int    `json:"waitingForAPerson"`
			SameAs          string `json:"sameClusterAs"`
			NotReadAgain    bool   `json:"notReadAgain"`
			NotInstalled    bool   `json:"notInstalled"`
			ListedElsewhere int    `json:"rolloutsListedElsewhere"`
			Controllers     []struct {
				Version string `json:"version"`
				Source  string `json:"source"`
			} `json:"controllers"`
		} `json:"clusters"`
		Rows []struct {
			Cluster, Namespace, Name string
			Waiting                  string `json:"waitingForAPerson"`
		} `json:"rows"`
	}
	// scanWith reads the clusters of the kubeconfig files in list (the
	// KUBECONFIG variable), or of kc when list is empty.
	scanWith := func(list string, args ...string) (scanJSON, int, string, time.Duration) {
		t.Helper()
		cmd := exec.Command(plugin, append([]string{"scan", "-A", "-o", "json"}, args...)...)
		if list == "" {
			cmd.Args = append(cmd.Args, "--kubeconfig", kc)
		} else {
			cmd.Env = append(os.Environ(), "KUBECONFIG="+list)
		}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		err := cmd.Run()
		took := time.Since(start)
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		var rep scanJSON
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
			t.Fatalf("scan %v: %v\n%s\n%s", args, err, stdout.String(), stderr.String())
		}
		return rep, code, stderr.String(), took
	}
	scan := func(args ...string) (scanJSON, int, string, time.Duration) {
		t.Helper()
		return scanWith("", args...)
	}
	check := func(rep scanJSON, name string, readable bool, version string) {
		t.Helper()
		for _, c := range rep.Clusters {
			if c.Context != name {
				continue
			}
			if readable != (c.Error == "") {
				t.Errorf("%s: error %q, want readable %v", name, c.Error, readable)
			}
			if version != "" && (len(c.Controllers) != 1 || c.Controllers[0].Version != version || c.Controllers[0].Source != "image-tag" || c.Rollouts != 1 || c.Waiting != 1) {
				t.Errorf("%s: %+v, want one Rollout waiting, controller %s from the image tag", name, c, version)
			}
			return
		}
		t.Errorf("no section for %s", name)
	}

	// The newest lab stops answering.
	pid := labs[1].apiserverPID(t)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	defer func() {
		if !resumed {
			syscall.Kill(pid, syscall.SIGCONT)
		}
	}()
	rep, code, stderr, took := scan("--all-contexts", "--request-timeout", "8s")
	if code != 2 || !strings.Contains(stderr, "8 of 14 cluster(s) could not be read (new, proxy-login, proxy-silent, refused, stuck-login, vpn-down-1, vpn-down-2, vpn-down-3)") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	// What the plugins print reaches stderr with the context that ran it.
	for _, line := range []string{"credential plugin of context old-sa: using the token of the service account scanner\n",
		"credential plugin of context stuck-login: To sign in, open https://login.example/device and enter the code LAB-1234\n"} {
		if !strings.Contains(stderr, line) {
			t.Errorf("stderr %q\nwant %q", stderr, line)
		}
	}
	check(rep, "old", true, oldest)
	check(rep, "suite", true, "")
	check(rep, "new", false, "")
	check(rep, "refused", false, "")
	check(rep, "stuck-login", false, "")
	check(rep, "old-alias", true, "")
	check(rep, "old-sa", true, "")
	check(rep, "old-proxied", true, "")
	check(rep, "proxy-login", false, "")
	for _, c := range rep.Clusters {
		if c.Context == "old-proxied" && (c.NotReadAgain || c.SameAs != "old" || c.Rollouts != 1 || c.ListedElsewhere != 1) {
			t.Errorf("old through a proxy: %+v, want its one Rollout read and listed under old", c)
		}
		if c.Context == "proxy-silent" && !strings.Contains(c.Error, "the proxy "+proxySilent+" (the kubeconfig's proxy-url) took the connection but had not opened one to the API server at ") {
			t.Errorf("the context behind a proxy that never opens the tunnel: %q", c.Error)
		}
		if c.Context == "proxy-login" && !strings.Contains(c.Error, "the proxy "+proxyLogin+" (the kubeconfig's proxy-url) did not open a connection to the API server at ") {
			t.Errorf("the context behind a proxy that wants a login: %q", c.Error)
		}
		// A scheduled scan may try again what the network or a slow server
		// kept from it, not what a person must fix first.
		if c.Error != "" && c.Retryable != map[string]bool{"new": true, "proxy-silent": true, "vpn-down-1": true, "vpn-down-2": true, "vpn-down-3": true}[c.Context] {
			t.Errorf("%s: retryable %t: %s", c.Context, c.Retryable, c.Error)
		}
		if c.Context == "bare" && (!c.NotInstalled || c.Error != "" || c.Rollouts != 0) {
			t.Errorf("the cluster without Argo Rollouts: %+v, want read, with no Rollouts and not installed", c)
		}
		if strings.HasPrefix(c.Context, "vpn-down") && !strings.Contains(c.Error, "(context "+c.Context+"): nothing answered the attempt to connect within 8s") {
			t.Errorf("the cluster behind a VPN that is down: %q", c.Error)
		}
		if c.Context == "new" && !strings.Contains(c.Error, "did not answer within 8s") && !strings.Contains(c.Error, "not read within 8s") {
			t.Errorf("the frozen cluster: %q", c.Error)
		}
		if c.Context == "refused" && !strings.Contains(strings.ToLower(c.Error), "unauthorized") && !strings.Contains(c.Error, "credentials") {
			t.Errorf("the refused context: %q", c.Error)
		}
		if c.Context == "stuck-login" && !strings.Contains(c.Error, `the credential plugin "`+stuckPlugin+`" of context stuck-login did not return within 8s (is it waiting for a login?); it printed "To sign in, open https://login.example/device and enter the code LAB-1234"`) {
			t.Errorf("the context whose plugin waits for a login: %q", c.Error)
		}
		if c.Context == "old-alias" && (!c.NotReadAgain || c.SameAs != "old" || c.Error != "") {
			t.Errorf("the alias of old: %+v, want not read again, the same as old", c)
		}
		if c.Context == "old-sa" && (c.NotReadAgain || c.SameAs != "old" || c.Rollouts != 1 || c.ListedElsewhere != 1 || c.Error != "") {
			t.Errorf("old through the service account: %+v, want its one Rollout read and listed under old", c)
		}
	}
	listed := 0
	for _, r := range rep.Rows {
		if r.Namespace == "fleet" && strings.HasPrefix(r.Cluster, "old") {
			listed++
			if r.Cluster != "old" {
				t.Errorf("the old cluster's Rollout is listed under %s, want old", r.Cluster)
			}
		}
	}
	if listed != 1 {
		t.Errorf("the old cluster's Rollout is listed %d times through its four readable contexts, want once", listed)
	}
	// Bounded by the frozen cluster's timeout, not the sum of the clusters.
	if took > 30*time.Second {
		t.Errorf("the scan took %s with an 8s bound per cluster", took)
	}
	// The plugin given up on does not outlive the scan, nor does the
	// process it started.
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range cmdlines {
		if b, _ := os.ReadFile(f); string(b) == "sleep\x00601\x00" || strings.Contains(string(b), stuckPlugin) {
			t.Errorf("the stuck plugin still runs after the scan (%s: %q)", f, b)
		}
	}
	found := false
	for _, r := range rep.Rows {
		if r.Cluster == "old" && r.Namespace == "fleet" && strings.Contains(r.Waiting, "pause step 1") {
			found = true
		}
	}
	if !found {
		t.Errorf("the paused Rollout of the old cluster is not called out as waiting: %+v", rep.Rows)
	}

	syscall.Kill(pid, syscall.SIGCONT)
	resumed = true
	rep, code, stderr, _ = scan("--contexts", "old,n*", "--fail-on", "none") // n*: new
	if code != 0 || len(rep.Rows) != 2 {
		t.Fatalf("exit %d, %d rows, stderr %q", code, len(rep.Rows), stderr)
	}
	check(rep, "old", true, oldest)
	check(rep, "new", true, newest)

	// KUBECONFIG naming several files, as a laptop collects them: a
	// context from each, and in the second file certificate paths
	// relative to that file's directory, as the Kubernetes documentation
	// says they are read (not relative to where the scan runs).
	second := filepath.Join(labs[1].state, "relative-kubeconfig")
	rel := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: lab, cluster: {server: %q, certificate-authority: pki/ca.crt}}]
users: [{name: admin, user: {client-certificate: pki/admin.crt, client-key: pki/admin.key}}]
contexts: [{name: new-files, context: {cluster: lab, user: admin}}]
`, merged.Clusters["new"].Server)
	if err := os.WriteFile(second, []byte(rel), 0o600); err != nil {
		t.Fatal(err)
	}
	rep, code, stderr, _ = scanWith(kc+string(filepath.ListSeparator)+second, "--contexts", "old,new-files", "--fail-on", "none")
	if code != 0 || len(rep.Rows) != 2 {
		t.Fatalf("KUBECONFIG of two files: exit %d, %d rows, stderr %q", code, len(rep.Rows), stderr)
	}
	check(rep, "old", true, oldest)
	check(rep, "new-files", true, newest)

	// Credential plugins that must prompt (interactiveMode Always), on a
	// terminal (script(1) gives the scan a pseudo-terminal): each logs in
	// in turn, before the clusters are read at once, and its read uses
	// that login; a failed one is not run again and its section says so.
	// Plugins that may prompt (IfAvailable) run without the terminal with
	// the others (this one then reads no password and fails); afterwards
	// each gets the terminal in turn, and one that logs in is read again.
	promptPlugin := filepath.Join(plugins, "prompt-login")
	body := `printf 'password for %s: ' "$LOGIN_NAME" >&2
read pw
[ "$pw" = open-sesame ] || { echo "wrong password" >&2; exit 1; }
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' "$SA_TOKEN"`
	if err := os.WriteFile(promptPlugin, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// login-e's plugin, without the terminal, waits for a browser login
	// that never comes (the scan gives up on it after --request-timeout);
	// on the terminal it asks for the password. The run given up on must
	// be stopped before the one on the terminal starts: one login, one run.
	waitPlugin, runLog := filepath.Join(plugins, "wait-login"), filepath.Join(t.TempDir(), "runs")
	if err := os.WriteFile(waitPlugin, []byte(fmt.Sprintf(`#!/bin/sh
echo "start $$" >> %[1]s
if [ ! -t 0 ]; then
  trap 'echo "stopped $$" >> %[1]s; exit 143' TERM
  echo 'To sign in, open https://login.example/device and enter the code LAB-9999' >&2
  sleep 600 & wait $!
fi
%[2]s
`, runLog, body)), 0o755); err != nil {
		t.Fatal(err)
	}
	logins := clientcmdapi.NewConfig()
	logins.Clusters["old"] = merged.Clusters["old"]
	for _, n := range []string{"login-a", "login-b", "login-c", "login-d", "login-e"} {
		mode, command := clientcmdapi.AlwaysExecInteractiveMode, promptPlugin
		if n > "login-b" {
			mode = clientcmdapi.IfAvailableExecInteractiveMode
		}
		if n == "login-e" {
			command = waitPlugin
		}
		logins.AuthInfos[n] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{APIVersion: "client.authentication.k8s.io/v1", Command: command,
			Env: []clientcmdapi.ExecEnvVar{{Name: "SA_TOKEN", Value: saToken}, {Name: "LOGIN_NAME", Value: n}}, InteractiveMode: mode}}
		logins.Contexts[n] = &clientcmdapi.Context{Cluster: "old", AuthInfo: n}
	}
	lkc, out := filepath.Join(t.TempDir(), "config"), filepath.Join(t.TempDir(), "scan.json")
	if err := clientcmd.WriteToFile(*logins, lkc); err != nil {
		t.Fatal(err)
	}
	tty := exec.Command("script", "-qec", fmt.Sprintf("%s scan -A --kubeconfig %s --contexts login-a,login-b,login-c,login-d,login-e --request-timeout 8s -o json > %s", plugin, lkc, out), "/dev/null")
	tty.Stdin = strings.NewReader("open-sesame\nwrong\nopen-sesame\nwrong\nopen-sesame\n")
	transcript, err := tty.CombinedOutput()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("script(1): %v", err)
		}
	}
	said := strings.ReplaceAll(string(transcript), "\r", "")
	order := []string{"2 context(s) log in with a credential plugin that needs the terminal (interactiveMode: Always): one at a time, before the clusters are read",
		"logging in to context login-a", "password for login-a:", "logging in to context login-b", "password for login-b:", "wrong password", "context login-b: the login failed",
		"3 context(s) whose credential plugin failed without the terminal (interactiveMode: IfAvailable) log in on it now, one at a time, and are read again",
		"logging in to context login-c", "password for login-c:", "logging in to context login-d", "password for login-d:", "wrong password", "context login-d: the login failed",
		"logging in to context login-e", "password for login-e:"}
	at := 0
	for _, w := range order {
		i := strings.Index(said[at:], w)
		if i < 0 {
			t.Errorf("the terminal shows %q out of order or not at all:\n%s", w, said)
			break
		}
		at += i + len(w)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var lrep scanJSON
	if err := json.Unmarshal(b, &lrep); err != nil {
		t.Fatalf("%v\n%s\n%s", err, b, said)
	}
	check(lrep, "login-a", true, "")
	for _, c := range lrep.Clusters {
		if c.Context == "login-a" && c.Rollouts != 1 {
			t.Errorf("login-a read %d Rollouts, want the old cluster's one", c.Rollouts)
		}
		if c.Context == "login-b" && !strings.Contains(c.Error, "its login on this terminal before the scan failed") {
			t.Errorf("login-b: %q, want the failed login", c.Error)
		}
		// Read again after its login: login-a listed the same Rollout.
		if c.Context == "login-c" && (c.Error != "" || c.Rollouts != 1 || c.SameAs != "login-a") {
			t.Errorf("login-c: %+v, want the old cluster's Rollout, listed under login-a", c)
		}
		if c.Context == "login-d" && !strings.Contains(c.Error, "failed without the terminal, and again on it after the other clusters were read") {
			t.Errorf("login-d: %q, want both failures", c.Error)
		}
		if c.Context == "login-e" && (c.Error != "" || c.Rollouts != 1 && c.SameAs == "") {
			t.Errorf("login-e: %+v, want it read after its login on the terminal", c)
		}
	}
	// login-e's runs: the one given up on stopped, then the one on the
	// terminal; never both at once.
	b, err = os.ReadFile(runLog)
	runs := strings.Fields(string(b))
	if err != nil || len(runs) != 6 || runs[0] != "start" || runs[2] != "stopped" || runs[3] != runs[1] || runs[4] != "start" || runs[5] == runs[1] {
		t.Errorf("login-e's plugin runs: %q (%v), want the first stopped before the second started\n%s", b, err, said)
	}
}

// waitJSONPath waits up to two minutes for the fleet Rollout's field.
func waitJSONPath(t *testing.T, l extraLab, path, want string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, _ := exec.Command("kubectl", "--kubeconfig", l.kubeconfig, "-n", "fleet", "get", "rollout", "app", "-o", "jsonpath="+path).Output()
		if strings.TrimSpace(string(out)) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("lab %s: %s is %q after 2m, want %q", l.version, path, out, want)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
