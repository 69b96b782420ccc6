package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/gather"
)

// emptyKubeconfig points the kubeconfig at an empty file, so that the
// namespace is "default" whatever the machine running the tests has.
func emptyKubeconfig(t *testing.T) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", path)
}

// Each command says what it needs in its own words: no command borrows
// another's usage error.
func TestEachCommandHasItsOwnUsageError(t *testing.T) {
	emptyKubeconfig(t)
	for _, tc := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"diagnose"}, "name a Rollout (kubectl rolloutdoctor diagnose NAME) or give -f FILE"},
		{[]string{"pods"}, "name a Rollout or Deployment (kubectl rolloutdoctor pods NAME or pods deployment/NAME) or give -f FILE"},
		{[]string{"escape"}, "name a Rollout (kubectl rolloutdoctor escape NAME) or give -f FILE"},
		{[]string{"snapshot"}, "name a Rollout or Deployment (kubectl rolloutdoctor snapshot NAME or snapshot deployment/NAME)"},
		{[]string{"lint"}, "give manifests: -f FILE|DIR|- (repeatable)"},
		{[]string{"scan", "checkout-api"}, `unknown command "checkout-api" for "kubectl rolloutdoctor scan" (see kubectl rolloutdoctor scan --help)`},
		{[]string{"explain", "RD999"}, `no finding "RD999": run ` + "`kubectl rolloutdoctor explain`" + ` for the list`},
		{[]string{"version", "now"}, `unknown command "now" for "kubectl rolloutdoctor version" (see kubectl rolloutdoctor version --help)`},
		{[]string{"diagnose", "a", "b"}, "accepts at most 1 arg(s), received 2 (see kubectl rolloutdoctor diagnose --help)"},
		{[]string{"pods", "-f", example, "-o", "sarif"}, `--output must be json or yaml, not "sarif"`},
		{[]string{"lint", "-f", example, "-o", "xml"}, `--output must be json, yaml or sarif, not "xml"`},
		{[]string{"escape", "-f", example, "--controller-version", "latest"}, `--controller-version: "latest" is not a version like v1.8.2 (modeled: v1.7.2, v1.8.2, v1.8.3, v1.9.3, v1.10.2)`},
		{[]string{"scan", "--color", "sometimes"}, `--color must be auto, always or never, not "sometimes"`},
	} {
		out, stderr, code := runCLI(t, "", tc.args...)
		if out != "" || stderr != tc.stderr || code != ExitUsage {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d, no stdout, stderr %q", tc.args, code, out, stderr, ExitUsage, tc.stderr)
		}
	}
}

// runScan runs scan against the fake cluster.
func runScan(t *testing.T, fc *fakeCluster, args ...string) (string, string, int) {
	t.Helper()
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	o := NewScanOptions(genericclioptions.NewConfigFlags(true), genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: errOut})
	o.connect = fc.connect
	return execute(t, newScanCommand(o), out, errOut, args)
}

func execute(t *testing.T, cmd *cobra.Command, out, errOut *bytes.Buffer, args []string) (string, string, int) {
	t.Helper()
	return executeContext(t, context.Background(), cmd, out, errOut, args)
}

func executeContext(t *testing.T, ctx context.Context, cmd *cobra.Command, out, errOut *bytes.Buffer, args []string) (string, string, int) {
	t.Helper()
	cmd.SetArgs(args)
	cmd.SetOut(out)
	cmd.SetErr(errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(ctx)
	return out.String(), errOut.String() + errString(err), Code(err)
}

func TestScanCommand(t *testing.T) {
	fc := newFakeCluster(t)
	out, stderr, code := runScan(t, fc, "-A", "--color", "never")
	if code != ExitOK || stderr != "" || !strings.Contains(out, "rolloutdoctor scan all namespaces: 1 Rollout(s)") || !strings.Contains(out, "CRITICAL") {
		t.Fatalf("exit %d, stderr %q\n%s", code, stderr, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "shop") && !strings.HasSuffix(line, "...") && len(line) > 200 {
			t.Errorf("the top finding is not cut to the table: %q", line)
		}
	}
	if _, _, code := runScan(t, fc, "-A", "--fail-on", "critical"); code != ExitFindings {
		t.Fatalf("--fail-on critical: exit %d, want %d", code, ExitFindings)
	}
	out, _, _ = runScan(t, fc, "-A", "-o", "json")
	var rep struct {
		Kind string `json:"kind"`
		Rows []struct {
			Name  string `json:"name"`
			Worst string `json:"worst"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Kind != "FleetScan" || len(rep.Rows) != 1 || rep.Rows[0].Worst != "critical" {
		t.Fatalf("json %v: %s", err, out)
	}
}

func TestDiagnoseWatchDrawsUntilCancelled(t *testing.T) {
	fc := newFakeCluster(t)
	out := &frameWriter{want: "Rollout shop/checkout-api", seen: make(chan struct{})}
	errOut := &bytes.Buffer{}
	flags := genericclioptions.NewConfigFlags(true)
	ns := "shop"
	flags.Namespace = &ns
	o := NewDiagnoseOptions(flags, genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: errOut})
	o.connect = fc.connect
	// Ctrl-C (here a cancel) once the first frame is drawn, however long a
	// loaded machine takes to draw it; the deadline only stops a hang.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() {
		select {
		case <-out.seen:
			cancel()
		case <-ctx.Done():
		}
	}()
	cmd := newDiagnoseCommand(o)
	cmd.SetArgs([]string{"checkout-api", "--watch", "--color", "never"})
	cmd.SetOut(out)
	cmd.SetErr(errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(ctx)
	stdout, stderr, code := out.String(), errOut.String()+errString(err), Code(err)
	// A cancelled watch ends normally; --fail-on does not apply to a watch.
	if ctx.Err() != context.Canceled || code != ExitOK || stderr != "" || !strings.HasPrefix(stdout, "--- ") || !strings.Contains(stdout, "Rollout shop/checkout-api") || strings.Contains(stdout, "\x1b[") {
		t.Fatalf("ctx %v, exit %d, stderr %q\n%s", ctx.Err(), code, stderr, stdout)
	}
}

// frameWriter is an output that says when want has been written.
type frameWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func (w *frameWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return n, err
}

func (w *frameWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// pods on input with several workloads and no name names them all, as
// diagnose does, instead of saying there is none.
func TestPodsNamesTheWorkloadsOfAFile(t *testing.T) {
	ro := func(name string) string {
		return "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: " + name + ", namespace: shop}\nspec: {strategy: {canary: {}}}\n---\n"
	}
	dep := func(name string) string {
		return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: " + name + ", namespace: shop}\nspec: {selector: {matchLabels: {app: " + name + "}}, template: {metadata: {labels: {app: " + name + "}}}}\n---\n"
	}
	for _, tc := range []struct {
		input, args, says string
		code              int
	}{
		{ro("a") + ro("b") + dep("web"), "", `the input holds 2 Rollouts (shop/a, shop/b) and 1 Deployment (shop/web): name the one to check (NAME, rollout/NAME or deployment/NAME)`, ExitError},
		{dep("web") + dep("api"), "", `the input holds 2 Deployments (shop/api, shop/web): name the one to check (NAME, rollout/NAME or deployment/NAME)`, ExitError},
		{"apiVersion: v1\nkind: Service\nmetadata: {name: s}\n", "", "the input holds no Rollout or Deployment", ExitError},
		{ro("a") + ro("b"), "b", "", ExitOK},
		{ro("a") + dep("web"), "", "", ExitOK}, // the Rollout (the Deployment may be its workloadRef)
		{dep("web") + dep("api"), "deployment/api", "", ExitOK},
	} {
		args := []string{"pods", "-f", "-", "--fail-on", "none"}
		if tc.args != "" {
			args = append(args, tc.args)
		}
		_, stderr, code := runCLI(t, tc.input, args...)
		if code != tc.code || !strings.Contains(stderr, tc.says) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v on %d bytes: exit %d, stderr %q; want exit %d saying %q", args, len(tc.input), code, stderr, tc.code, tc.says)
		}
	}
}

// scan --contexts: each context connects with its own flags, the table
// names the cluster, a context whose connection fails is its own section
// and makes the command exit 2 after printing the others; unknown contexts
// and --context with --contexts are usage errors.
func TestScanContexts(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "config")
	cfg := `apiVersion: v1
kind: Config
clusters:
- {name: c1, cluster: {server: "https://127.0.0.1:1"}}
- {name: c2, cluster: {server: "https://127.0.0.1:2"}}
users:
- {name: u, user: {token: t}}
contexts:
- {name: prod-eu, context: {cluster: c1, user: u, namespace: shop}}
- {name: prod-us, context: {cluster: c2, user: u}}
current-context: prod-eu
`
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kc)
	fc := newFakeCluster(t)
	var reached []string
	run := func(args ...string) (string, string, int) {
		out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
		o := NewScanOptions(genericclioptions.NewConfigFlags(true), genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: errOut})
		var seen []string
		reached = nil
		o.reach = func(_ context.Context, f *genericclioptions.ConfigFlags, timeout time.Duration) error {
			reached = append(reached, *f.Context+" "+timeout.String())
			if *f.Context == "prod-us" {
				return errors.New("cannot reach the API server at https://127.0.0.1:2 (context prod-us): nothing answered the attempt to connect within 7s")
			}
			return nil
		}
		o.connect = func(f *genericclioptions.ConfigFlags, tune ...func(*rest.Config)) (*gather.Connection, error) {
			seen = append(seen, *f.Context)
			if *f.Context == "prod-us" {
				return nil, errors.New("Get \"https://127.0.0.1:2/api\": dial tcp 127.0.0.1:2: connect: connection refused")
			}
			return fc.connect(f, tune...)
		}
		return execute(t, newScanCommand(o), out, errOut, args)
	}
	out, stderr, code := run("--all-contexts", "--color", "never")
	if code != ExitError || !strings.Contains(stderr, "1 of 2 cluster(s) could not be read (prod-us)") ||
		!strings.Contains(out, "prod-us  NOT READ") || !strings.Contains(out, "connection refused") ||
		!strings.Contains(out, "prod-eu  1 Rollout(s)") || !strings.Contains(out, "CLUSTER") || !strings.Contains(out, "\nprod-eu ") {
		t.Fatalf("exit %d, stderr %q\n%s", code, stderr, out)
	}
	// The default namespace is each context's own: prod-eu's is shop.
	out, _, code = run("--contexts", "prod-eu", "-o", "json")
	var rep struct {
		Kind     string `json:"kind"`
		Clusters []struct {
			Context  string `json:"context"`
			Rollouts int    `json:"rollouts"`
		} `json:"clusters"`
		Rows []struct {
			Cluster string `json:"cluster"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != ExitOK || rep.Kind != "MultiClusterScan" || len(rep.Clusters) != 1 || rep.Clusters[0].Rollouts != 1 || rep.Rows[0].Cluster != "prod-eu" {
		t.Fatalf("exit %d, %v: %s", code, err, out)
	}
	if _, _, code := run("--contexts", "prod-eu", "--fail-on", "critical"); code != ExitFindings {
		t.Errorf("--fail-on critical across clusters: exit %d", code)
	}
	for _, args := range [][]string{{"--contexts", "nope"}, {"--contexts", "prod-eu", "--all-contexts"}, {"--all-contexts", "--concurrency", "0"}} {
		if _, stderr, code := run(args...); code != ExitUsage {
			t.Errorf("%v: exit %d (%s), want usage", args, code, stderr)
		}
	}
	// More clusters than turns: each is reached first, with its own
	// context and the bound (DefaultClusterTimeout here), and one that
	// cannot be is not read.
	out, stderr, code = run("--all-contexts", "--concurrency", "1", "--color", "never")
	if code != ExitError || strings.Join(reached, ",") != "prod-eu 1m0s,prod-us 1m0s" && strings.Join(reached, ",") != "prod-us 1m0s,prod-eu 1m0s" ||
		!strings.Contains(out, "prod-us  NOT READ cannot reach the API server at https://127.0.0.1:2 (context prod-us): nothing answered") || !strings.Contains(out, "prod-eu  1 Rollout(s)") {
		t.Errorf("exit %d, reached %v, stderr %q\n%s", code, reached, stderr, out)
	}
	if _, stderr, code := runCLI(t, "", "scan", "--contexts", "prod-eu", "--context", "prod-us"); code != ExitUsage || !strings.Contains(stderr, "give the clusters in one flag") {
		t.Errorf("--context with --contexts: exit %d (%s), want usage", code, stderr)
	}
	// A flag that names one cluster's connection or credentials is refused,
	// not ignored; impersonation applies to every cluster.
	for _, flag := range []string{"--server=https://127.0.0.1:1", "--token=t", "--user=u", "--cluster=c1", "--insecure-skip-tls-verify", "--certificate-authority=/ca.crt"} {
		name, _, _ := strings.Cut(flag, "=")
		if _, stderr, code := runCLI(t, "", "scan", "--all-contexts", flag); code != ExitUsage || !strings.Contains(stderr, name+" names one cluster") {
			t.Errorf("%s with --all-contexts: exit %d (%s), want usage", flag, code, stderr)
		}
	}
	if _, stderr, code := runCLI(t, "", "scan", "--contexts", "prod-us", "--as", "alice", "--request-timeout", "5s"); code != ExitError || !strings.Contains(stderr, "could not be read (prod-us)") {
		t.Errorf("--as with --contexts: exit %d (%s), want prod-us read and refused", code, stderr)
	}
}

// scan --all-contexts reads a cluster once per way of reading it: a
// context whose cluster and user entries say the same as an earlier one's
// (an alias under another name) is not read again; one with another user
// or proxy is read, and its Rollouts, the same UIDs, are listed once.
func TestScanReadsAnAliasOnce(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "config")
	cfg := `apiVersion: v1
kind: Config
clusters:
- {name: c1, cluster: {server: "https://127.0.0.1:1"}}
- {name: arn-c1, cluster: {server: "https://127.0.0.1:1"}}
- {name: c1-proxy, cluster: {server: "https://127.0.0.1:1", proxy-url: "http://127.0.0.1:3128"}}
users:
- {name: u, user: {token: t}}
- {name: arn-u, user: {token: t}}
- {name: ro, user: {token: r}}
contexts:
- {name: prod-eu, context: {cluster: c1, user: u, namespace: shop}}
- {name: arn-prod-eu, context: {cluster: arn-c1, user: arn-u, namespace: shop}}
- {name: prod-eu-ro, context: {cluster: c1, user: ro, namespace: shop}}
- {name: prod-eu-proxy, context: {cluster: c1-proxy, user: u, namespace: shop}}
- {name: prod-eu-team, context: {cluster: c1, user: u, namespace: team}}
current-context: prod-eu
`
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kc)
	fc := newFakeCluster(t)
	run := func(args ...string) (string, []string, int) {
		out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
		o := NewScanOptions(genericclioptions.NewConfigFlags(true), genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: errOut})
		var mu sync.Mutex
		var read []string
		o.connect = func(f *genericclioptions.ConfigFlags, tune ...func(*rest.Config)) (*gather.Connection, error) {
			mu.Lock()
			read = append(read, *f.Context)
			mu.Unlock()
			probe := &rest.Config{ExecProvider: &clientcmdapi.ExecConfig{Command: "kubelogin"}}
			for _, fn := range tune {
				fn(probe)
			}
			if !probe.ExecProvider.StdinUnavailable {
				t.Errorf("%s: a context's credential plugin would get the terminal in a multi-cluster scan", *f.Context)
			}
			return fc.connect(f, tune...)
		}
		out2, stderr, code := execute(t, newScanCommand(o), out, errOut, args)
		if code != ExitOK {
			t.Fatalf("%v: exit %d, %s", args, code, stderr)
		}
		sort.Strings(read)
		return out2, read, code
	}
	// In all namespaces, prod-eu-team reads what prod-eu reads.
	out, read, _ := run("--all-contexts", "-A", "--color", "never", "--fail-on", "none")
	if strings.Join(read, ",") != "arn-prod-eu,prod-eu-proxy,prod-eu-ro" {
		t.Errorf("read %v, want the first of the aliases, the other user and the proxy", read)
	}
	for _, want := range []string{
		"prod-eu  same cluster, credentials and namespaces as arn-prod-eu: not read again",
		"prod-eu-team  same cluster, credentials and namespaces as arn-prod-eu: not read again",
		"prod-eu-ro  1 Rollout(s)",
		"same cluster as arn-prod-eu: its Rollouts are listed there",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if n := strings.Count(out, "  shop  "); n != 1 {
		t.Errorf("the Rollout is listed %d times, want once:\n%s", n, out)
	}
	// In each context's own namespace, prod-eu-team reads team: not an alias.
	out, read, _ = run("--all-contexts", "-o", "json", "--fail-on", "none")
	if strings.Join(read, ",") != "arn-prod-eu,prod-eu-proxy,prod-eu-ro,prod-eu-team" {
		t.Errorf("read %v", read)
	}
	var rep struct {
		Clusters []struct {
			Context         string `json:"context"`
			SameAs          string `json:"sameClusterAs"`
			NotReadAgain    bool   `json:"notReadAgain"`
			ListedElsewhere int    `json:"rolloutsListedElsewhere"`
		} `json:"clusters"`
		Rows []struct{ Cluster string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Rows) != 1 || rep.Rows[0].Cluster != "arn-prod-eu" || len(rep.Clusters) != 5 {
		t.Fatalf("%v: %s", err, out)
	}
	for _, c := range rep.Clusters {
		alias := c.Context == "prod-eu"
		shared := c.Context == "prod-eu-ro" || c.Context == "prod-eu-proxy"
		if c.NotReadAgain != alias || (c.SameAs == "arn-prod-eu") != (alias || shared) || (c.ListedElsewhere == 1) != shared {
			t.Errorf("%+v", c)
		}
	}
}

// The contexts whose plugin must prompt log in first on the terminal (the
// lab's multi-cluster e2e drives that through a pseudo-terminal); here:
// which contexts those are, and that a context's read then uses its login
// — the connection it logged in with, or, when the login failed, a plugin
// that is not given the terminal again and says why.
func TestScanLoginTargets(t *testing.T) {
	raw := clientcmdapi.NewConfig()
	for name, mode := range map[string]clientcmdapi.ExecInteractiveMode{"always": clientcmdapi.AlwaysExecInteractiveMode, "if": clientcmdapi.IfAvailableExecInteractiveMode, "never": clientcmdapi.NeverExecInteractiveMode} {
		raw.AuthInfos[name] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "login", InteractiveMode: mode}}
		raw.Contexts[name] = &clientcmdapi.Context{Cluster: "c", AuthInfo: name}
	}
	raw.AuthInfos["token"] = &clientcmdapi.AuthInfo{Token: "t"}
	raw.Contexts["token"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "token"}
	// client.authentication.k8s.io/v1beta1 may leave the mode out: it is
	// IfAvailable.
	raw.AuthInfos["v1beta1"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "aws", APIVersion: "client.authentication.k8s.io/v1beta1"}}
	raw.Contexts["v1beta1"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "v1beta1"}
	all := []string{"always", "if", "never", "token", "missing", "v1beta1"}
	if got := mustPrompt(*raw, all); !slices.Equal(got, []string{"always"}) {
		t.Errorf("must prompt: %v, want [always]", got)
	}
	if got := mayPrompt(*raw, all); !slices.Equal(got, []string{"if", "v1beta1"}) {
		t.Errorf("may prompt (given the terminal after a failure): %v, want [if v1beta1]", got)
	}
	fc := newFakeCluster(t)
	o := NewScanOptions(genericclioptions.NewConfigFlags(true), genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}})
	o.AllNamespaces = true // no kubeconfig here to name a namespace
	var tunes [][]func(*rest.Config)
	o.connect = func(f *genericclioptions.ConfigFlags, tune ...func(*rest.Config)) (*gather.Connection, error) {
		tunes = append(tunes, tune)
		return fc.connect(f, tune...)
	}
	logged, err := fc.connect(genericclioptions.NewConfigFlags(true))
	if err != nil {
		t.Fatal(err)
	}
	dc, _, err := o.target("always", time.Second, nil, login{conn: logged}).Connect(context.Background())
	if err != nil || dc != logged.Dynamic || len(tunes) != 0 {
		t.Errorf("a logged-in context: client %v (err %v), %d new connection(s); want the login's client and none", dc, err, len(tunes))
	}
	if _, _, err := o.target("always", time.Second, nil, login{err: errors.New("exit code 1")}).Connect(context.Background()); err != nil || len(tunes) != 1 {
		t.Fatalf("a failed login: err %v, %d connection(s)", err, len(tunes))
	}
	cfg := &rest.Config{ExecProvider: &clientcmdapi.ExecConfig{Command: "login", InteractiveMode: clientcmdapi.AlwaysExecInteractiveMode}}
	for _, f := range tunes[0] {
		if f != nil {
			f(cfg)
		}
	}
	if !cfg.ExecProvider.StdinUnavailable || !strings.Contains(cfg.ExecProvider.StdinUnavailableMessage, "login on this terminal before the scan failed") {
		t.Errorf("a failed login's plugin: %+v, want no terminal and the reason", cfg.ExecProvider)
	}
}
