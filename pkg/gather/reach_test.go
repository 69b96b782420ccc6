package gather

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rolloutdoctor/rolloutdoctor/internal/nettest"
)

// Reach opens a connection to the first hop of a context's requests and
// words what stops it as a read would: refused at once, unanswered until
// the bound, the proxy named when it is the proxy; a context client-go
// cannot make a client of is left to the read that follows, which says
// what to fix there.
func TestReach(t *testing.T) {
	kubeconfig := func(server, proxy string) string {
		path := filepath.Join(t.TempDir(), "config")
		cluster := fmt.Sprintf("server: %q", server)
		if proxy != "" {
			cluster += fmt.Sprintf(", proxy-url: %q", proxy)
		}
		os.WriteFile(path, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {%s}}, {name: insecure-with-ca, cluster: {%s, insecure-skip-tls-verify: true, certificate-authority-data: %q}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: lab, context: {cluster: c, user: u}}, {name: dangling, context: {cluster: gone, user: u}}, {name: insecure-with-ca, context: {cluster: insecure-with-ca, user: u}}]
current-context: lab
`, cluster, cluster, base64.StdEncoding.EncodeToString([]byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")))), 0o600)
		return path
	}
	hole := nettest.Blackhole(t)
	for _, tc := range []struct {
		name, server, proxy, context, says string
	}{
		{"answers", nettest.Hang(t), "", "lab", ""},
		{"refused", nettest.Refused(t), "", "lab", "(context lab): connection refused: check that the cluster is up"},
		{"drops", hole, "", "lab", "cannot reach the API server at " + hole + " (context lab): nothing answered the attempt to connect within 500ms (a private endpoint without its VPN"},
		{"proxy down", "https://10.0.0.1:6443", nettest.Refused(t), "lab", "(the kubeconfig's proxy-url) on the way to the API server at https://10.0.0.1:6443 (context lab): connection refused"},
		{"proxy drops", "https://10.0.0.1:6443", "http://" + strings.TrimPrefix(hole, "https://"), "lab", "(the kubeconfig's proxy-url) on the way to the API server at https://10.0.0.1:6443 (context lab): nothing answered the attempt to connect"},
		{"through a proxy", "https://10.0.0.1:6443", nettest.Hang(t), "lab", ""},
		{"unusable context", nettest.Refused(t), "", "dangling", ""},
		// client-go reads this kubeconfig but makes no client of it.
		{"unusable TLS settings", "https://" + strings.TrimPrefix(nettest.Refused(t), "http://"), "", "insecure-with-ca", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			flags := NewConfigFlags()
			path := kubeconfig(tc.server, tc.proxy)
			flags.KubeConfig, flags.Context = &path, &tc.context
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			err := Reach(ctx, flags, 500*time.Millisecond)
			switch {
			case tc.says == "" && err != nil:
				t.Errorf("err %v, want none", err)
			case tc.says != "" && (err == nil || !strings.Contains(err.Error(), tc.says)):
				t.Errorf("got  %v\nwant it to say %q", err, tc.says)
			}
			if tc.proxy != "" && err != nil && !strings.Contains(err.Error(), "the proxy "+tc.proxy) {
				t.Errorf("%v: does not name the proxy", err)
			}
		})
	}
}

func TestHostPort(t *testing.T) {
	for in, want := range map[string]string{
		"https://k8s.corp":      "k8s.corp:443",
		"https://10.0.0.1:6443": "10.0.0.1:6443",
		"http://127.0.0.1":      "127.0.0.1:80",
		"socks5://127.0.0.1":    "127.0.0.1:1080",
		"https://[::1]":         "[::1]:443",
	} {
		u, _ := url.Parse(in)
		if got := hostPort(u); got != want {
			t.Errorf("hostPort(%s) = %s, want %s", in, got, want)
		}
	}
}
