package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"

	"github.com/rolloutdoctor/rolloutdoctor/internal/nettest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/gather"
)

// runMain runs the tool in process as main does — the root command with
// the given network settings, "error: " and the message on stderr — and
// returns stdout, stderr and the exit code.
func runMain(t *testing.T, net netSettings, args ...string) (string, string, int) {
	t.Helper()
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	root := newRoot(genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: errOut}, net)
	root.SetArgs(args)
	err := root.Execute()
	if err != nil && err.Error() != "" {
		errOut.WriteString("error: " + err.Error() + "\n")
	}
	return out.String(), errOut.String(), Code(err)
}

func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// The commands that read a cluster, as they are run against a hostile one.
var clusterCommands = [][]string{
	{"diagnose", "x"},
	{"diagnose", "x", "-o", "json"},
	{"pods", "x"},
	{"snapshot", "x"},
	{"escape", "x"},
	{"scan", "-A"},
	{"scan", "-o", "yaml"},
}

// Against a server that never answers, an address that drops the attempts
// to connect, a refused port, and a web page where the API server should
// be, every command ends in bounded time with exit 2 and one line that
// names the server and says what to check; only the silent ones get the
// one "waiting" line first, which says which wait it is. stdout stays empty
// (it carries -o json).
func TestHostileNetworksEveryCommand(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	net := netSettings{waitNotice: 100 * time.Millisecond}
	for _, tc := range []struct {
		name   string
		server func(testing.TB) string
		says   string // after the server's URL
	}{
		{"never answers", nettest.Hang, " (context lab) did not answer within 500ms: check that the cluster is up and reachable from here (VPN, proxy, --context), or raise --request-timeout"},
		{"drops the connection attempts", nettest.Blackhole, " (context lab): nothing answered the attempt to connect within 500ms (a private endpoint without its VPN, a firewall that drops it, or an address the cluster left): check that the cluster is up"},
		{"refuses", nettest.Refused, " (context lab): connection refused: check that the cluster is up and reachable from here (VPN, proxy, --context)"},
		{"login page", func(t testing.TB) string {
			return nettest.Page(t, 200, "text/html", "<!DOCTYPE html><html><head><title>Sign in – Corp SSO</title>", 0)
		}, ` (context lab) is not a Kubernetes API server: it answered 200 with an HTML page (title "Sign in – Corp SSO", Content-Type text/html): check the kubeconfig's server and proxy settings`},
		{"proxy error page", func(t testing.TB) string {
			return nettest.Page(t, 403, "text/html", "<html><title>Blocked by policy</title></html>", 0)
		}, ` (context lab) is not a Kubernetes API server: it answered 403 with an HTML page (title "Blocked by policy"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := tc.server(t)
			kc := nettest.Kubeconfig(t, url)
			for _, args := range clusterCommands {
				start := time.Now()
				stdout, stderr, code := runMain(t, net, append(args, "--kubeconfig", kc, "--request-timeout", "500ms")...)
				took := time.Since(start)
				got := lines(stderr)
				want := 1
				waiting := map[string]string{
					"never answers":                 "waiting for the API server at " + url + " (context lab) … (Ctrl-C to stop; giving up after 500ms)",
					"drops the connection attempts": "waiting for a connection to the API server at " + url + " (context lab): nothing has answered yet (a private endpoint needs its VPN) … (Ctrl-C to stop; giving up after 500ms)",
				}[tc.name]
				if waiting != "" {
					want = 2
					if len(got) > 0 && got[0] != waiting {
						t.Errorf("%v: first line %q, want the waiting line %q", args, got[0], waiting)
					}
				}
				if code != ExitError || stdout != "" || len(got) != want || !strings.Contains(got[len(got)-1], url+tc.says) || took > 5*time.Second {
					t.Errorf("%v: exit %d after %s, stdout %q, stderr:\n%s\nwant exit 2, nothing on stdout, %d line(s) ending in %q", args, code, took.Round(time.Millisecond), stdout, stderr, want, url+tc.says)
				}
			}
		})
	}
}

// Every request is bounded unless the user says otherwise; the bound is in
// --help.
func TestRequestTimeoutHasADefault(t *testing.T) {
	root := NewRoot(genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}})
	f := root.PersistentFlags().Lookup("request-timeout")
	if f == nil || f.DefValue != gather.DefaultRequestTimeout.String() {
		t.Fatalf("--request-timeout default %v, want %s", f, gather.DefaultRequestTimeout)
	}
	// 0 is kubectl's "no bound", and still waits with the waiting line.
	url := nettest.Hang(t)
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	root = newRoot(genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: errOut}, netSettings{waitNotice: 100 * time.Millisecond})
	root.SetArgs([]string{"diagnose", "x", "--kubeconfig", nettest.Kubeconfig(t, url), "--request-timeout", "0"})
	root.ExecuteContext(ctx)
	if want := "waiting for the API server at " + url + " (context lab) … (Ctrl-C to stop)\n"; !strings.HasPrefix(errOut.String(), want) {
		t.Errorf("--request-timeout 0: stderr %q, want it to start with %q", errOut.String(), want)
	}
}

// No kubeconfig, no --server and no in-cluster service account: said
// before anything is sent, naming where it looked; the commands that can
// read a file say -f works offline.
func TestNoKubeconfig(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "config")
	t.Setenv("KUBECONFIG", missing)
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	reason := "no kubeconfig found (KUBECONFIG=" + missing + ", which does not exist; no in-cluster service account either): point KUBECONFIG or --kubeconfig at a kubeconfig (or give --server)"
	for _, tc := range []struct {
		args    []string
		offline bool
	}{
		{[]string{"diagnose", "x"}, true},
		{[]string{"pods", "x"}, true},
		{[]string{"escape", "x"}, true},
		{[]string{"snapshot", "x"}, false},
		{[]string{"scan", "-A"}, false},
	} {
		want := "error: " + reason
		if tc.offline {
			want += ", or use -f FILE to work offline"
		}
		stdout, stderr, code := runMain(t, defaultNet(), tc.args...)
		if code != ExitError || stdout != "" || stderr != want+"\n" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, code, stdout, stderr, want)
		}
	}
	// -f needs no kubeconfig at all.
	if _, stderr, code := runMain(t, defaultNet(), "diagnose", "-f", example, "--fail-on", "none"); code != ExitOK {
		t.Errorf("diagnose -f without a kubeconfig: exit %d %s", code, stderr)
	}
}

// diagnose --watch against a cluster that refuses connections: each
// failure is one line on stderr with the next retry, the retries back off,
// and after the budget without a successful read it exits 2 saying so.
func TestWatchGivesUpOnARefusingCluster(t *testing.T) {
	url := nettest.Refused(t)
	net := netSettings{waitNotice: time.Second, watch: gather.WatchOptions{Backoff: 20 * time.Millisecond, MaxBackoff: 80 * time.Millisecond, GiveUp: time.Second}}
	start := time.Now()
	stdout, stderr, code := runMain(t, net, "diagnose", "x", "--watch", "--kubeconfig", nettest.Kubeconfig(t, url))
	took := time.Since(start)
	got := lines(stderr)
	refused := "cannot reach the API server at " + url + " (context lab): connection refused: check that the cluster is up and reachable from here (VPN, proxy, --context)"
	retry := regexp.MustCompile(`^error: ` + regexp.QuoteMeta(refused) + ` \(retrying in (\d+ms), giving up in (1s|\d+ms)\)$`)
	var waits []string
	for _, l := range got[:max(len(got)-1, 0)] {
		m := retry.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("not a retry line: %q", l)
			continue
		}
		waits = append(waits, m[1])
	}
	if code != ExitError || stdout != "" || len(got) < 5 || got[len(got)-1] != "error: no successful read for 1s, giving up: "+refused || took > 5*time.Second {
		t.Fatalf("exit %d after %s, stdout %q, stderr:\n%s", code, took, stdout, stderr)
	}
	if strings.Join(waits[:4], " ") != "20ms 40ms 80ms 80ms" {
		t.Errorf("waits %v: want 20ms doubling to 80ms", waits)
	}
	// A Rollout that is not there is not retried.
	url = nettest.NotFound(t, 0)
	_, stderr, code = runMain(t, net, "diagnose", "x", "--watch", "--kubeconfig", nettest.Kubeconfig(t, url))
	if code != ExitError || stderr != "error: rollout \"x\" not found in namespace \"shop\" (check -n/--namespace)\n" {
		t.Errorf("not found: exit %d, stderr %q", code, stderr)
	}
}

// A watch whose reads fail for a while and then succeed says each failure
// once and goes on drawing.
func TestWatchRecovers(t *testing.T) {
	fc := newFakeCluster(t)
	failures := 2
	fc.dc.PrependReactor("get", "rollouts", func(k8stesting.Action) (bool, runtime.Object, error) {
		if failures > 0 {
			failures--
			return true, nil, errors.New(`Get "https://10.0.0.1:6443/apis/argoproj.io/v1alpha1/namespaces/shop/rollouts/checkout-api": dial tcp 10.0.0.1:6443: connect: connection refused`)
		}
		return false, nil, nil
	})
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	flags := genericclioptions.NewConfigFlags(true)
	ns := "shop"
	flags.Namespace = &ns
	o := NewDiagnoseOptions(flags, genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: errOut})
	o.connect = func(*genericclioptions.ConfigFlags, ...func(*rest.Config)) (*gather.Connection, error) {
		return gather.FromClient(fc.dc), nil
	}
	o.net.watch = gather.WatchOptions{Backoff: 10 * time.Millisecond, GiveUp: time.Minute}
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	stdout, _, code := executeContext(t, ctx, newDiagnoseCommand(o), out, errOut, []string{"checkout-api", "--watch", "--color", "never"})
	got := lines(errOut.String())
	if code != ExitOK || len(got) != 2 || !strings.Contains(got[0], "connection refused") || !strings.HasSuffix(got[1], "(retrying in 20ms, giving up in 1m0s)") || !strings.Contains(stdout, "Rollout shop/checkout-api") {
		t.Fatalf("exit %d, stderr:\n%s\nstdout:\n%s", code, errOut, stdout)
	}
}

// Bad arguments and flags — to any command, or an unknown command — exit 3
// with one line on stderr that points to the help, and nothing on stdout.
func TestBadArgumentsExitThree(t *testing.T) {
	emptyKubeconfig(t)
	web := filepath.Join("..", "..", "examples", "pods-web.yaml")
	if _, err := os.Stat(web); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"diagnose", "a", "b"}, "accepts at most 1 arg(s), received 2 (see kubectl rolloutdoctor diagnose --help)"},
		{[]string{"pods", "a", "b"}, "(see kubectl rolloutdoctor pods --help)"},
		{[]string{"snapshot", "a", "b"}, "(see kubectl rolloutdoctor snapshot --help)"},
		{[]string{"escape", "a", "b"}, "(see kubectl rolloutdoctor escape --help)"},
		{[]string{"explain", "RD201", "RD202"}, "accepts at most 1 arg(s), received 2 (see kubectl rolloutdoctor explain --help)"},
		{[]string{"scan", "foo"}, `unknown command "foo" for "kubectl rolloutdoctor scan" (see kubectl rolloutdoctor scan --help)`},
		{[]string{"version", "now"}, `unknown command "now" for "kubectl rolloutdoctor version"`},
		{[]string{"nosuch"}, `unknown command "nosuch" for "kubectl rolloutdoctor" (see kubectl rolloutdoctor --help)`},
		{[]string{"diagnos", "x"}, `unknown command "diagnos" for "kubectl rolloutdoctor" (did you mean diagnose? see kubectl rolloutdoctor --help)`},
		{[]string{"completion", "tcsh"}, `unknown command "tcsh" for "kubectl rolloutdoctor completion" (see kubectl rolloutdoctor completion --help)`},
		{[]string{"diagnose", "x", "--nope"}, "unknown flag: --nope (see kubectl rolloutdoctor diagnose --help)"},
		{[]string{"--nope"}, "unknown flag: --nope (see kubectl rolloutdoctor --help)"},
		{[]string{"scan", "-o"}, "flag needs an argument: 'o' in -o (see kubectl rolloutdoctor scan --help)"},
		{[]string{"diagnose", "deployment/web"}, `"deployment/web" is not a Rollout: use NAME or rollout/NAME`},
		{[]string{"diagnose", "x", "--request-timeout", "soon"}, `--request-timeout "soon" is not a duration: use e.g. 30s or 2m (0 waits forever)`},
		{[]string{"snapshot", "x", "--request-timeout", "-1s"}, `--request-timeout "-1s" is not a duration`},
		{[]string{"scan", "--request-timeout", "1h1"}, `--request-timeout "1h1" is not a duration`},
		{[]string{"diagnose", "x", "--watch", "-f", example}, "--watch needs a cluster, not -f"},
		{[]string{"scan", "-A", "-l", "team in (a"}, `--selector "team in (a": `},
		{[]string{"diagnose", "x", "--kubeconfig", nettest.Kubeconfig(t, "https://h"), "--context", "prdo"}, `--context "prdo" is not in the kubeconfig (it has: lab)`},
		{[]string{"scan", "-A", "--kubeconfig", nettest.Kubeconfig(t, "https://h"), "--context", "prdo"}, `--context "prdo" is not in the kubeconfig (it has: lab)`},
		{[]string{"pods", "statefulset/db", "-f", web}, "checks a Rollout or a Deployment"},
		{[]string{"lint", "-f", example, "--fail-on", "loud"}, "--fail-on"},
	} {
		stdout, stderr, code := runMain(t, defaultNet(), tc.args...)
		if code != ExitUsage || stdout != "" || len(lines(stderr)) != 1 || !strings.Contains(stderr, tc.says) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 3 and one line with %q", tc.args, code, stdout, stderr, tc.says)
		}
	}
	// Alone, the root and completion print their help (exit 0).
	for _, args := range [][]string{nil, {"completion"}} {
		if stdout, stderr, code := runMain(t, defaultNet(), args...); code != ExitOK || !strings.Contains(stdout, "Usage:") || stderr != "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// A proxy that took the connection and has not opened the tunnel is what
// the waiting line names, not the API server.
func TestWaitingForATunnel(t *testing.T) {
	opt := gather.Options{Context: "lab", Server: "https://10.0.0.1:6443", Timeout: 30 * time.Second}
	got := waitingLine(opt, gather.Waiting{Tunnel: true, Proxy: "http://proxy.corp:3128 (from HTTPS_PROXY)"})
	want := "waiting for the proxy http://proxy.corp:3128 (from HTTPS_PROXY) to open a tunnel to the API server at https://10.0.0.1:6443 (context lab): it took the connection and has not answered yet … (Ctrl-C to stop; giving up after 30s)"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
