package gather

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	k8stesting "k8s.io/client-go/testing"

	"github.com/rolloutdoctor/rolloutdoctor/internal/nettest"
)

// Each network failure is one line that names the API server and says
// what to check, and is retryable exactly when a later try may not fail.
func TestNetErrorWording(t *testing.T) {
	opt := Options{Server: "https://10.0.0.1:6443", Context: "prod", Timeout: 30 * time.Second}
	get := func(err error) error {
		return &url.Error{Op: "Get", URL: "https://10.0.0.1:6443/apis/argoproj.io/v1alpha1/namespaces/shop/rollouts/x", Err: err}
	}
	for _, tc := range []struct {
		name      string
		err       error
		says      string
		retryable bool
	}{
		{"refused", get(errors.New("dial tcp 10.0.0.1:6443: connect: connection refused")),
			"cannot reach the API server at https://10.0.0.1:6443 (context prod): connection refused: check that the cluster is up and reachable from here (VPN, proxy, --context)", true},
		{"timeout", get(context.DeadlineExceeded),
			"the API server at https://10.0.0.1:6443 (context prod) did not answer within 30s: check that the cluster is up and reachable from here (VPN, proxy, --context), or raise --request-timeout", true},
		{"client timeout", get(errors.New("net/http: request canceled (Client.Timeout exceeded while awaiting headers)")),
			"did not answer within 30s", true},
		{"tls handshake", get(&handshakeTimeout{after: 10 * time.Second, err: errors.New("net/http: TLS handshake timeout")}),
			"the API server at https://10.0.0.1:6443 (context prod) did not complete the TLS handshake within 10s: check", true},
		{"dns", get(errors.New("dial tcp: lookup k8s.corp on 127.0.0.53:53: no such host")),
			"cannot reach the API server at https://10.0.0.1:6443 (context prod): its host name does not resolve: check --context, the VPN and DNS", true},
		{"dns timeout", get(&net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "i/o timeout", Name: "k8s.corp", Server: "10.8.0.1:53", IsTimeout: true}}),
			"cannot reach the API server at https://10.0.0.1:6443 (context prod): its host name could not be looked up (the DNS server 10.8.0.1:53 did not answer: one reached only over a VPN?): check --context, the VPN and DNS", true},
		{"no connection", get(&NotConnectedError{Server: "https://10.0.0.1:6443", Err: context.Canceled}),
			"cannot reach the API server at https://10.0.0.1:6443 (context prod): nothing answered the attempt to connect within 30s (a private endpoint without its VPN, a firewall that drops it, or an address the cluster left): check", true},
		{"no lookup", get(&NotConnectedError{Server: "https://10.0.0.1:6443", LookingUp: true, Err: context.DeadlineExceeded}),
			"cannot reach the API server at https://10.0.0.1:6443 (context prod): its host name was not resolved within 30s (a DNS server that does not answer", true},
		{"reset", get(errors.New("read tcp 127.0.0.1:5->10.0.0.1:6443: read: connection reset by peer")),
			"the connection to the API server at https://10.0.0.1:6443 (context prod) broke: check", true},
		{"overloaded", apierrors.NewServiceUnavailable("apiserver is shutting down"),
			"the API server at https://10.0.0.1:6443 (context prod) failed the request: apiserver is shutting down (the API server is overloaded or restarting; try again)", true},
		{"401", apierrors.NewUnauthorized("token expired"),
			"the API server at https://10.0.0.1:6443 (context prod) rejected the credentials (401): refresh your kubeconfig login", false},
		{"x509", get(errors.New("tls: failed to verify certificate: x509: certificate signed by unknown authority")),
			"presented a certificate the kubeconfig does not trust (x509: certificate signed by unknown authority): check --context and the kubeconfig's certificate-authority", false},
		{"html page", get(&NotAPIServerError{Server: "https://10.0.0.1:6443", URL: "https://sso.corp/login", Status: 200, ContentType: "text/html", Title: "Sign in"}),
			`the server at https://10.0.0.1:6443 (context prod) is not a Kubernetes API server: it redirected to https://sso.corp/login, which answered 200 with an HTML page (title "Sign in", Content-Type text/html): check the kubeconfig's server and proxy settings`, false},
		// What net/http keeps of a request its Client.Timeout ended while
		// the credential plugin ran, and a plugin run in the TLS handshake.
		{"plugin wait flattened", get(errors.New(`credential plugin "aws": ` + pluginWaitText + ` (context deadline exceeded) (Client.Timeout exceeded while awaiting headers)`)),
			`the credential plugin "aws" of context prod did not return within 30s (is it waiting for a login?): run ` + "`kubectl --context prod get --raw /version`", false},
		{"plugin in handshake", get(errors.New("remote error: tls: getting credentials: exec: executable kubelogin failed with exit code 1")),
			`the credential plugin "kubelogin" of context prod failed (exit code 1;`, false},
		{"other content", errors.New("serializer for text/plain doesn't exist"),
			"the server at https://10.0.0.1:6443 is not a Kubernetes API server: it answered with Content-Type text/plain: check the kubeconfig's server and proxy settings", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := readError(tc.err, opt, `reading rollout "x" in namespace "shop"`)
			if !strings.Contains(err.Error(), tc.says) || strings.Contains(err.Error(), "\n") {
				t.Errorf("got  %q\nwant one line with %q", err, tc.says)
			}
			if IsRetryable(err) != tc.retryable {
				t.Errorf("retryable %v, want %v", IsRetryable(err), tc.retryable)
			}
		})
	}
	// Ctrl-C is not a network failure: it keeps the plain wording.
	if err := readError(get(context.Canceled), opt, `reading rollout "x" in namespace "shop"`); !strings.HasPrefix(err.Error(), `reading rollout "x" in namespace "shop": `) || IsRetryable(err) {
		t.Errorf("cancelled: %q", err)
	}
	// Without a server (a library caller's own client) the words still hold.
	if err := readError(get(context.DeadlineExceeded), Options{}, "x"); !strings.HasPrefix(err.Error(), "the API server did not answer: check") {
		t.Errorf("no server: %q", err)
	}
}

// A fleet read names its scope, never a Rollout called "(all)" or the
// namespace "".
func TestFleetErrorsNameTheScope(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "argoproj.io", Resource: "rollouts"}, "", errors.New("no"))
	for _, tc := range []struct {
		ns   string
		err  error
		want string
	}{
		{"", forbidden, "not allowed to list Rollouts in all namespaces: grant list on rollouts.argoproj.io cluster-wide (see docs/rbac.yaml), or scan one namespace with -n NAMESPACE"},
		{"shop", forbidden, `not allowed to list Rollouts in namespace "shop": grant list on rollouts.argoproj.io (see docs/rbac.yaml)`},
		// As the API server's RBAC says it: who was refused is named.
		{"", apierrors.NewForbidden(schema.GroupResource{Group: "argoproj.io", Resource: "rollouts"}, "", errors.New(`User "system:serviceaccount:ci:scanner" cannot list resource "rollouts" in API group "argoproj.io" at the cluster scope`)),
			`not allowed to list Rollouts in all namespaces as "system:serviceaccount:ci:scanner": grant list on rollouts.argoproj.io cluster-wide`},
		{"shop", apierrors.NewForbidden(schema.GroupResource{Group: "argoproj.io", Resource: "rollouts"}, "", errors.New(`User "system:anonymous" cannot list resource "rollouts" in API group "argoproj.io" in the namespace "shop"`)),
			`not allowed to list Rollouts in namespace "shop" as system:anonymous (the API server took no credentials from the request: check the context's user entry, or log in again): grant list`},
		{"", apierrors.NewBadRequest("bad selector"), "listing Rollouts in all namespaces: bad selector"},
		{"shop", apierrors.NewBadRequest("bad selector"), `listing Rollouts in namespace "shop": bad selector`},
		{"", apierrors.NewNotFound(schema.GroupResource{Group: "argoproj.io", Resource: "rollouts"}, ""), "the cluster does not serve rollouts.argoproj.io"},
		{"", &url.Error{Op: "Get", URL: "https://h", Err: context.DeadlineExceeded}, "the API server at https://h (context c) did not answer within 5s"},
	} {
		dc := fakeClient(t, exampleObjects(t)...)
		dc.PrependReactor("list", "rollouts", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, tc.err })
		_, err := Fleet(context.Background(), dc, FleetOptions{Namespace: tc.ns, Server: "https://h", Context: "c", Timeout: 5 * time.Second})
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), `"(all)"`) || strings.Contains(err.Error(), `""`) {
			t.Errorf("namespace %q, %v: got %v, want %q", tc.ns, tc.err, err, tc.want)
		}
		if _, err := RolloutNames(context.Background(), dc, tc.ns); err == nil || strings.Contains(err.Error(), `"(all)"`) {
			t.Errorf("RolloutNames in %q: %v", tc.ns, err)
		}
	}
}

func TestHTMLTitle(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"<html><head><title>Corp SSO</title></head>", "Corp SSO"},
		{"<HTML><TITLE lang=en>\n  Access &amp; denied \n</TITLE>", "Access & denied"},
		{"<html><body>no title</body>", ""},
		{"<title>unclosed", ""},
		{"<title>" + strings.Repeat("x", 200) + "</title>", strings.Repeat("x", 79) + "…"},
	} {
		if got := htmlTitle([]byte(tc.body)); got != tc.want {
			t.Errorf("htmlTitle(%.40q) = %q, want %q", tc.body, got, tc.want)
		}
	}
}

func connectTo(t *testing.T, server, timeout string) *Connection {
	t.Helper()
	return connectKubeconfig(t, nettest.Kubeconfig(t, server), timeout)
}

// connectKubeconfig connects with the kubeconfig at path and the request
// timeout given, as the command's flags would.
func connectKubeconfig(t *testing.T, path, timeout string) *Connection {
	t.Helper()
	flags := NewConfigFlags()
	flags.KubeConfig, flags.Timeout = &path, &timeout
	conn, err := Connect(flags)
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

// Against real listeners: a server that never answers is bounded by the
// request timeout and said once after the wait threshold, and one that
// never even takes the connection is told apart from it; a web page is
// not a Kubernetes API server, whatever its status; a slow but real
// server is waited for without a word.
func TestConnectHostileServers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		server  func(testing.TB) string
		says    string
		waiting int32
		// notice is the waiting-notice threshold (default 300ms); the slow
		// server's case leaves a wide margin, so load on the machine does
		// not turn its 150 ms into a notice.
		notice time.Duration
	}{
		{"hang", nettest.Hang, "did not answer within 600ms", 1, 0},
		{"refused", nettest.Refused, "connection refused", 0, 0},
		{"drops", nettest.Blackhole, "cannot reach the API server at https://", 1, 0},
		{"drops, said", nettest.Blackhole, "(context lab): nothing answered the attempt to connect within 600ms (a private endpoint without its VPN", 1, 0},
		{"login page", func(t testing.TB) string {
			return nettest.Page(t, 200, "text/html; charset=utf-8", "<html><title>Corp SSO</title></html>", 0)
		}, `is not a Kubernetes API server: it answered 200 with an HTML page (title "Corp SSO", Content-Type text/html; charset=utf-8)`, 0, 0},
		{"proxy 403", func(t testing.TB) string {
			return nettest.Page(t, 403, "text/html", "<html><title>Access denied</title></html>", 0)
		}, `is not a Kubernetes API server: it answered 403 with an HTML page (title "Access denied"`, 0, 0},
		{"slow", func(t testing.TB) string { return nettest.NotFound(t, 150*time.Millisecond) }, `rollout "x" not found in namespace "shop"`, 0, 3 * time.Second},
		{"login redirect", func(t testing.TB) string {
			return nettest.Redirect(t, 302, "https://sso.example/login?next=/apis", "text/html; charset=utf-8")
		}, `is not a Kubernetes API server: it answered 302 with an HTML page redirecting to https://sso.example/login (title "Moved"`, 0, 0},
		{"redirect to a page", func(t testing.TB) string {
			page := nettest.Page(t, 200, "text/html", "<title>Portal</title>", 0)
			return nettest.Redirect(t, 307, page+"/portal", "")
		}, `, which answered 200 with an HTML page (title "Portal", Content-Type text/html)`, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := tc.server(t)
			timeout := 600 * time.Millisecond
			if tc.notice > 0 {
				timeout = 2 * tc.notice
			}
			conn := connectTo(t, url, timeout.String())
			if conn.Options.Timeout != timeout || conn.Options.Context != "lab" || conn.Options.Server != url {
				t.Fatalf("options %+v", conn.Options)
			}
			var waiting atomic.Int32
			notice := tc.notice
			if notice == 0 {
				notice = 300 * time.Millisecond
			}
			var connecting atomic.Bool
			conn.OnWaiting(notice, func(w Waiting) { waiting.Add(1); connecting.Store(w.Connecting) })
			opt := conn.Options
			opt.Namespace, opt.Name, opt.SkipController = "shop", "x", true
			start := time.Now()
			// Two reads: the waiting notice is said once per connection.
			for range 2 {
				_, err := Rollout(context.Background(), conn.Dynamic, opt)
				if err == nil || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), url) && tc.name != "slow" {
					t.Fatalf("err %v, want it to name %s and say %q", err, url, tc.says)
				}
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %s: not bounded by the 600ms request timeout", took)
			}
			if n := waiting.Load(); n != tc.waiting {
				t.Errorf("waiting notice said %d times, want %d", n, tc.waiting)
			}
			// Waiting for a connection that nothing answers is told apart
			// from waiting for a server that took it.
			if connecting.Load() != strings.HasPrefix(tc.name, "drops") {
				t.Errorf("the waiting notice said connecting %t", connecting.Load())
			}
		})
	}
}

// The tool's flags bound every request by default; --request-timeout 0
// removes the bound, as in kubectl.
func TestDefaultRequestTimeout(t *testing.T) {
	flags := NewConfigFlags()
	path := nettest.Kubeconfig(t, nettest.Refused(t))
	flags.KubeConfig = &path
	conn, err := Connect(flags)
	if err != nil || conn.Options.Timeout != DefaultRequestTimeout {
		t.Fatalf("default timeout %v, err %v; want %s", conn.Options.Timeout, err, DefaultRequestTimeout)
	}
	if conn.Watcher == nil || conn.Watcher == conn.Dynamic {
		t.Errorf("watches need their own client without the request timeout")
	}
	zero := "0"
	flags = NewConfigFlags()
	flags.KubeConfig, flags.Timeout = &path, &zero
	if conn, err := Connect(flags); err != nil || conn.Options.Timeout != 0 {
		t.Fatalf("--request-timeout 0: %v, err %v", conn.Options.Timeout, err)
	}
}

// Nothing names a cluster: said before anything is sent, with where the
// kubeconfig was looked for, instead of a refused localhost:8080.
func TestCheckKubeconfig(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)
	noContext := filepath.Join(dir, "no-context")
	os.WriteFile(noContext, []byte("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://h'}}]\ncontexts: [{name: prod, context: {cluster: c}}, {name: dev, context: {cluster: c}}]\n"), 0o600)
	good := nettest.Kubeconfig(t, "https://h")
	dangling := filepath.Join(dir, "dangling")
	os.WriteFile(dangling, []byte("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://h'}}]\ncontexts: [{name: prod, context: {cluster: gone}}, {name: dev, context: {cluster: c}}]\ncurrent-context: prod\n"), 0o600)
	noServer := filepath.Join(dir, "no-server")
	os.WriteFile(noServer, []byte("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://h'}}, {name: half, cluster: {certificate-authority-data: ''}}]\ncontexts: [{name: prod, context: {cluster: half}}, {name: dev, context: {cluster: c}}]\ncurrent-context: prod\n"), 0o600)
	missing := filepath.Join(dir, "nope")
	for _, tc := range []struct {
		name       string
		kubeconfig string // $KUBECONFIG
		flag       string // --kubeconfig
		server     string
		context    string
		master     string
		inCluster  bool
		want       string // "" for no error
	}{
		{name: "missing file", kubeconfig: missing,
			want: "no kubeconfig found (KUBECONFIG=" + missing + ", which does not exist; no in-cluster service account either): point KUBECONFIG or --kubeconfig at a kubeconfig (or give --server)"},
		{name: "empty file", kubeconfig: empty, want: "no kubeconfig found (KUBECONFIG=" + empty + ", which holds no cluster;"},
		{name: "two files", kubeconfig: missing + string(filepath.ListSeparator) + empty,
			want: "no kubeconfig found (KUBECONFIG=" + missing + string(filepath.ListSeparator) + empty + ": " + missing + " does not exist, " + empty + " holds no cluster;"},
		{name: "empty --kubeconfig", kubeconfig: missing, flag: empty, want: "no kubeconfig found (--kubeconfig " + empty + ", which holds no cluster;"},
		{name: "no current context", kubeconfig: noContext,
			want: "the kubeconfig names no current context (KUBECONFIG=" + noContext + "): pass --context NAME (it has: dev, prod) or run kubectl config use-context NAME"},
		{name: "no current context, --context", kubeconfig: noContext, context: "prod"},
		{name: "in a pod", kubeconfig: missing, inCluster: true},
		{name: "--server", kubeconfig: missing, server: "https://h"},
		{name: "KUBERNETES_MASTER", kubeconfig: missing, master: "https://h"},
		{name: "a kubeconfig", kubeconfig: good},
		{name: "context without its cluster", kubeconfig: dangling,
			want: `context prod names cluster "gone", which the kubeconfig does not have (KUBECONFIG=` + dangling + `): fix the context (kubectl config set-context prod --cluster=NAME; clusters: c) or pass another --context`},
		{name: "another context", kubeconfig: dangling, context: "dev"},
		{name: "--server over it", kubeconfig: dangling, server: "https://h"},
		{name: "cluster without a server", kubeconfig: noServer,
			want: `cluster "half" of context prod has no server address (KUBECONFIG=` + noServer + `): set it (kubectl config set-cluster half --server=https://HOST:PORT), re-run the login that wrote it, or pass another --context`},
		{name: "its other context", kubeconfig: noServer, context: "dev"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", tc.kubeconfig)
			env := map[string]string{"KUBECONFIG": tc.kubeconfig, "KUBERNETES_MASTER": tc.master}
			flags := NewConfigFlags()
			flags.KubeConfig, flags.APIServer, flags.Context = &tc.flag, &tc.server, &tc.context
			err := checkKubeconfig(flags, func(k string) string { return env[k] }, func() bool { return tc.inCluster })
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("unexpected %v", err)
			case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
				t.Errorf("got  %v\nwant %s…", err, tc.want)
			}
		})
	}
	// Without KUBECONFIG client-go reads ~/.kube/config.
	if got, want := kubeconfigWhere([]string{"/home/sre/.kube/config"}, false, ""), "/home/sre/.kube/config does not exist, and KUBECONFIG is not set"; got != want {
		t.Errorf("default path: %q, want %q", got, want)
	}
	// Connect says the same, before any request.
	t.Setenv("KUBECONFIG", missing)
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	_, err := Connect(genericclioptions.NewConfigFlags(true))
	var nc *NoClusterError
	if !errors.As(err, &nc) {
		t.Fatalf("Connect without a kubeconfig: %v", err)
	}
}

// A context whose own entries client-go cannot use is named, in one line
// (client-go's words for a removed auth provider span three), with where
// to look; a kubeconfig that does not load at all blames no context.
func TestConfigError(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config")
	os.WriteFile(path, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://10.0.0.1:6443"}}]
users:
- {name: cert, user: {client-certificate: /nonexistent/c.crt, client-key: /nonexistent/c.key}}
- {name: gke, user: {auth-provider: {name: gcp, config: {}}}}
contexts:
- {name: cert, context: {cluster: c, user: cert}}
- {name: gke, context: {cluster: c, user: gke}}
current-context: cert
`), 0o600)
	for _, tc := range []struct{ context, says string }{
		{"", "context cert is not usable: invalid configuration: [unable to read client-cert /nonexistent/c.crt for cert due to open /nonexistent/c.crt: no such file or directory"},
	} {
		flags := NewConfigFlags()
		flags.KubeConfig, flags.Context = &path, &tc.context
		_, err := Connect(flags)
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), tc.says) || strings.Contains(err.Error(), "\n") {
			t.Errorf("context %q: got %q, want one line starting %q", tc.context, err, tc.says)
			continue
		}
		name := tc.context
		if name == "" {
			name = "cert"
		}
		if want := "fix its entries in the kubeconfig (kubectl config view --minify --context " + name + ") or use another context"; !strings.HasSuffix(err.Error(), want) {
			t.Errorf("context %q: %v: want the fix %q", tc.context, err, want)
		}
	}
	// The auth providers client-go removed: what to run instead.
	for _, tc := range []struct{ provider, says string }{
		{"gcp", `user "old" of context old logs in with the gcp auth provider, which client-go and kubectl removed in Kubernetes 1.26: install gke-gcloud-auth-plugin (gcloud components install gke-gcloud-auth-plugin) and run gcloud container clusters get-credentials again`},
		{"azure", `user "old" of context old logs in with the azure auth provider, which client-go and kubectl removed in Kubernetes 1.26: install kubelogin and convert the kubeconfig to it (kubelogin convert-kubeconfig; https://github.com/Azure/kubelogin)`},
		{"oidc", ""}, // still there: client-go's to use
	} {
		path := filepath.Join(dir, tc.provider)
		os.WriteFile(path, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://10.0.0.1:6443"}}]
users: [{name: old, user: {auth-provider: {name: `+tc.provider+`, config: {}}}}]
contexts: [{name: old, context: {cluster: c, user: old}}]
current-context: old
`), 0o600)
		flags := NewConfigFlags()
		flags.KubeConfig = &path
		err := checkKubeconfig(flags, func(string) string { return "" }, func() bool { return false })
		var ce *ConfigError
		if tc.says == "" && err != nil || tc.says != "" && (!errors.As(err, &ce) || !strings.HasPrefix(err.Error(), tc.says)) {
			t.Errorf("%s: got %v\nwant %q", tc.provider, err, tc.says)
		}
	}
	if got := configError(errors.New("error loading config file \"x\": yaml: bad"), "").Error(); got != `no usable kubeconfig: error loading config file "x": yaml: bad: fix it, or use --kubeconfig or --context` {
		t.Errorf("kubeconfig-wide: %q", got)
	}
}

// A burst of reads at the start (a diagnose's first wave) shares one TLS
// connection with an API server that speaks HTTP/2, instead of a handshake
// each; one that does not still answers every read; and a first read that
// cannot connect does not hold the others.
func TestOneHandshakePerBurst(t *testing.T) {
	const reads = 12
	read := func(t *testing.T, url string) []error {
		t.Helper()
		return burst(connectKubeconfig(t, nettest.InsecureKubeconfig(t, url), "5s"), reads)
	}
	serve := func(t *testing.T, http2 bool) (string, *atomic.Int32) {
		var conns atomic.Int32
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"apiVersion":"argoproj.io/v1alpha1","kind":"Rollout","metadata":{"name":%q,"namespace":"shop"}}`, path.Base(r.URL.Path))
		}))
		srv.EnableHTTP2 = http2
		// Without HTTP/2 the client dials for requests that an earlier
		// connection then serves; the server logs those as handshakes cut
		// short when it closes.
		srv.Config.ErrorLog = log.New(io.Discard, "", 0)
		srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				conns.Add(1)
			}
		}
		srv.StartTLS()
		t.Cleanup(srv.Close)
		return srv.URL, &conns
	}
	for _, tc := range []struct {
		name     string
		http2    bool
		min, max int32
	}{
		{"http2", true, 1, 1},
		{"http1.1", false, 1, reads},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, conns := serve(t, tc.http2)
			for i, err := range read(t, url) {
				if err != nil {
					t.Errorf("read %d: %v", i, err)
				}
			}
			if n := conns.Load(); n < tc.min || n > tc.max {
				t.Errorf("%d connections for %d reads, want %d to %d", n, reads, tc.min, tc.max)
			}
		})
	}
	t.Run("refused", func(t *testing.T) {
		start := time.Now()
		for i, err := range read(t, strings.Replace(nettest.Refused(t), "http:", "https:", 1)) {
			if err == nil || !strings.Contains(err.Error(), "refused") {
				t.Errorf("read %d: %v, want connection refused", i, err)
			}
		}
		if took := time.Since(start); took > 4*time.Second {
			t.Errorf("took %s: the reads behind the first waited for more than its failure", took)
		}
	})
}

// net/http keeps only the text of a transport's error when its
// Client.Timeout fires as the request fails; the connection's monitor
// gives the typed error back, and only for that text.
func TestRestoreFlattened(t *testing.T) {
	m := newMonitor("https://10.0.0.1:6443")
	typed := &NotConnectedError{Server: m.server, Err: context.DeadlineExceeded}
	m.flattened = map[string]error{typed.Error(): typed}
	flat := &url.Error{Op: "Get", URL: m.server + "/apis", Err: errors.New(typed.Error() + " (Client.Timeout exceeded while awaiting headers)")}
	if got := m.restore(flat); got != typed {
		t.Errorf("restore(%v) = %v, want the typed error", flat, got)
	}
	other := &url.Error{Op: "Get", URL: m.server + "/apis", Err: errors.New("read: connection reset by peer")}
	if got := m.restore(other); got != error(other) {
		t.Errorf("restore(%v) = %v, want it unchanged", other, got)
	}
	var none *monitor
	if got := none.restore(flat); got != error(flat) {
		t.Errorf("no monitor: %v", got)
	}
}
