package gather

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/rolloutdoctor/rolloutdoctor/internal/nettest"
)

// A proxy between this machine and the API server (the kubeconfig's
// proxy-url here; HTTPS_PROXY in TestProxyRoute) that does not carry the
// request is named as the cause, with what to do about it; one that does
// carry it is invisible.
func TestProxyFailures(t *testing.T) {
	apiServer := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(404)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"details":{"name":"x","group":"argoproj.io","kind":"rollouts"},"message":"rollouts.argoproj.io \"x\" not found"}`)
	}))
	defer apiServer.Close()
	for _, tc := range []struct {
		name      string
		proxy     func(*testing.T) string
		says      string
		retryable bool
	}{
		{"proxy down", func(t *testing.T) string { return nettest.Refused(t) }, "on the way to the API server at " + apiServer.URL + " (context lab): connection refused: nothing answers there: start the tunnel or local proxy it names (ssh -D, a bastion or VPN client), or fix the cluster's proxy-url in the kubeconfig", true},
		{"407", func(t *testing.T) string { return nettest.ConnectProxy(t, 407) },
			"(the kubeconfig's proxy-url) did not open a connection to the API server at " + apiServer.URL + " (context lab): it answered 407 Proxy Authentication Required: the proxy wants credentials", false},
		{"403", func(t *testing.T) string { return nettest.ConnectProxy(t, 403) },
			"it answered 403 Forbidden: the proxy does not let this machine reach that address: ask for it to be allowed", false},
		{"502", func(t *testing.T) string { return nettest.ConnectProxy(t, 502) },
			"it answered 502 Bad Gateway: the proxy could not reach the API server", true},
		{"SOCKS refused", func(t *testing.T) string { return nettest.SOCKSRefusing(t) }, "did not open a connection to the API server at " + apiServer.URL + " (context lab): it answered ", true},
		{"tunnel", func(t *testing.T) string { return nettest.ConnectProxy(t, 200) }, `rollout "x" not found in namespace "shop"`, false},
		{"proxy silent", func(t *testing.T) string { return nettest.ConnectProxy(t, 0) },
			"(the kubeconfig's proxy-url) took the connection but had not opened one to the API server at " + apiServer.URL + " (context lab) within 1s: check that the cluster is up and that the proxy may reach it", true},
		{"SOCKS silent", func(t *testing.T) string { return nettest.SOCKSSilent(t) },
			"(the kubeconfig's proxy-url) took the connection but had not opened one to the API server at " + apiServer.URL + " (context lab) within 1s: check that the cluster is up and that the proxy may reach it", true},
		{"proxy drops", func(t *testing.T) string { return "http://" + strings.TrimPrefix(nettest.Blackhole(t), "https://") },
			"on the way to the API server at " + apiServer.URL + " (context lab): nothing answered the attempt to connect: nothing answers there: start the tunnel", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proxy := tc.proxy(t)
			path := filepath.Join(t.TempDir(), "config")
			os.WriteFile(path, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, insecure-skip-tls-verify: true, proxy-url: %q}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: lab, context: {cluster: c, user: u, namespace: shop}}]
current-context: lab
`, apiServer.URL, proxy)), 0o600)
			timeout := "5s"
			if tc.name == "proxy drops" || strings.HasSuffix(tc.name, "silent") {
				timeout = "1s" // the time it waits for nothing
			}
			conn := connectKubeconfig(t, path, timeout)
			var waited atomic.Value
			conn.OnWaiting(300*time.Millisecond, func(w Waiting) { waited.Store(w) })
			opt := conn.Options
			opt.Namespace, opt.Name, opt.SkipController = "shop", "x", true
			_, err := Rollout(context.Background(), conn.Dynamic, opt)
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("got  %v\nwant it to say %q", err, tc.says)
			}
			// Waiting for a tunnel is told apart from waiting for the server.
			if w, _ := waited.Load().(Waiting); strings.HasSuffix(tc.name, "silent") && (!w.Tunnel || !strings.HasPrefix(w.Proxy, proxy)) {
				t.Errorf("the waiting notice: %+v, want the tunnel through %s", w, proxy)
			}
			if tc.name != "tunnel" {
				if !strings.Contains(err.Error(), proxy) {
					t.Errorf("%v: does not name the proxy %s", err, proxy)
				}
				if IsRetryable(err) != tc.retryable {
					t.Errorf("retryable %t, want %t", IsRetryable(err), tc.retryable)
				}
			}
		})
	}
}

// routeOf finds the proxy as client-go's transport will: the kubeconfig's
// proxy-url first, else the environment less NO_PROXY (CIDRs included),
// and says which setting it came from.
func TestProxyRoute(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	kubeconfigProxy := func(r *http.Request) (*url.URL, error) { return url.Parse("socks5://127.0.0.1:1080") }
	for _, tc := range []struct {
		name   string
		cfg    rest.Config
		getenv func(string) string
		want   string // "" for no proxy, else "URL from"
	}{
		{"none", rest.Config{Host: "https://10.1.2.3:6443"}, env(), ""},
		{"HTTPS_PROXY", rest.Config{Host: "https://10.1.2.3:6443"}, env("HTTPS_PROXY", "http://u:secret@proxy.corp:3128"), "http://u:xxxxx@proxy.corp:3128 HTTPS_PROXY"},
		{"https_proxy", rest.Config{Host: "https://api.prod.example:6443"}, env("https_proxy", "http://proxy.corp:3128"), "http://proxy.corp:3128 https_proxy"},
		{"HTTP_PROXY for http", rest.Config{Host: "http://10.1.2.3:8080"}, env("HTTP_PROXY", "http://proxy.corp:3128", "HTTPS_PROXY", "http://other:1"), "http://proxy.corp:3128 HTTP_PROXY"},
		{"NO_PROXY CIDR", rest.Config{Host: "https://10.1.2.3:6443"}, env("HTTPS_PROXY", "http://proxy.corp:3128", "NO_PROXY", "10.0.0.0/8"), ""},
		{"NO_PROXY domain", rest.Config{Host: "https://api.prod.example:6443"}, env("HTTPS_PROXY", "http://proxy.corp:3128", "NO_PROXY", ".example"), ""},
		{"proxy-url first", rest.Config{Host: "https://10.1.2.3:6443", Proxy: kubeconfigProxy}, env("HTTPS_PROXY", "http://proxy.corp:3128"), "socks5://127.0.0.1:1080 proxy-url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := routeOf(&tc.cfg, tc.getenv)
			got := ""
			if r != nil {
				got = r.url + " " + r.from
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
