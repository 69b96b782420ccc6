package gather

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	_ "k8s.io/client-go/plugin/pkg/client/auth/oidc" // as the command links it

	"github.com/rolloutdoctor/rolloutdoctor/internal/nettest"
)

// pluginServer is a TLS API server that answers only the token the test's
// credential plugins give.
func pluginServer(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	var served atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != "Bearer from-plugin" {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401}`)
			return
		}
		fmt.Fprintf(w, `{"apiVersion":"argoproj.io/v1alpha1","kind":"Rollout","metadata":{"name":%q,"namespace":"shop"}}`, path.Base(r.URL.Path))
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.URL, &served
}

// pluginConnection connects to server as context "lab" whose user is the
// exec credential plugin body (a shell script, each run counted in the
// returned file), or command when body is "".
func pluginConnection(t *testing.T, server, body, command, hint, timeout string) (*Connection, string) {
	t.Helper()
	return pluginConnectionMode(t, server, body, command, hint, timeout, "Never")
}

// pluginConnectionMode is pluginConnection with the plugin's
// interactiveMode.
func pluginConnectionMode(t *testing.T, server, body, command, hint, timeout, mode string) (*Connection, string) {
	t.Helper()
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	if body != "" {
		command = filepath.Join(dir, "cloud-login")
		script := "#!/bin/sh\necho run >> " + runs + "\n" + body + "\n"
		if err := os.WriteFile(command, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	kc := filepath.Join(dir, "config")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users:
- name: u
  user:
    exec: {apiVersion: client.authentication.k8s.io/v1, command: %q, interactiveMode: %s, installHint: %q}
contexts: [{name: lab, context: {cluster: c, user: u, namespace: shop}}]
current-context: lab
`, server, command, mode, hint)
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return connectKubeconfig(t, kc, timeout), runs
}

// burst sends n reads at once, as a scan's lists go out.
func burst(conn *Connection, n int) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = conn.Dynamic.Resource(GVRRollout).Namespace("shop").Get(context.Background(), fmt.Sprint("ro-", i), metav1.GetOptions{})
		})
	}
	wg.Wait()
	return errs
}

func runsOf(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return strings.Count(string(b), "run\n")
}

// Exec credential plugins, as cloud CLIs and SSO tools are used from a
// kubeconfig: one that works serves a burst of reads with one run; one
// that fails, is not installed or never returns (waiting for a login) is
// said in one line that names it and says what to do, runs once for a
// burst, and is bounded by the request timeout like the network.
func TestCredentialPlugins(t *testing.T) {
	server, _ := pluginServer(t)
	opt := func(conn *Connection) Options {
		o := conn.Options
		o.Namespace, o.Name, o.SkipController = "shop", "x", true
		return o
	}
	t.Run("works", func(t *testing.T) {
		conn, runs := pluginConnection(t, server, `printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"from-plugin"}}'`, "", "", "5s")
		for i, err := range burst(conn, 8) {
			if err != nil {
				t.Errorf("read %d: %v", i, err)
			}
		}
		if n := runsOf(t, runs); n != 1 {
			t.Errorf("the plugin ran %d times for one burst, want 1", n)
		}
	})
	t.Run("fails", func(t *testing.T) {
		conn, runs := pluginConnection(t, server, "echo 'session expired: run cloud-login' >&2\nexit 3", "", "", "5s")
		for i, err := range burst(conn, 8) {
			if err == nil {
				t.Errorf("read %d: no error", i)
			}
		}
		if n := runsOf(t, runs); n != 1 {
			t.Errorf("the failing plugin ran %d times for one burst (each run writes to stderr), want 1", n)
		}
		_, err := Rollout(context.Background(), conn.Dynamic, opt(conn))
		want := `the credential plugin "` + filepath.Join(filepath.Dir(runs), "cloud-login") + `" of context lab failed (exit code 3;`
		if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("err %v, want one line starting %q", err, want)
		}
		if !mayLogIn(err) {
			t.Errorf("a plugin that failed: %#v, want Login (on the terminal it may prompt)", err)
		}
		// A later read runs it again: it may work the next time.
		conn.monitor.mu.Lock()
		conn.monitor.credHold = 0
		conn.monitor.mu.Unlock()
		if _, err := Rollout(context.Background(), conn.Dynamic, opt(conn)); err == nil || runsOf(t, runs) != 2 {
			t.Errorf("err %v after %d runs, want the plugin run once more per read", err, runsOf(t, runs))
		}
	})
	t.Run("not installed", func(t *testing.T) {
		conn, _ := pluginConnection(t, server, "", "rolloutdoctor-test-no-such-plugin", "Install it with: brew install example-login\nSee https://example.com", "5s")
		_, err := Rollout(context.Background(), conn.Dynamic, opt(conn))
		want := `the credential plugin "rolloutdoctor-test-no-such-plugin" of context lab is not installed (not found in PATH): Install it with: brew install example-login`
		if err == nil || err.Error() != want {
			t.Errorf("err %v, want %q", err, want)
		}
		if mayLogIn(err) {
			t.Error("a plugin that is not installed: Login, want none (the terminal does not install it)")
		}
	})
	t.Run("needs the terminal", func(t *testing.T) {
		conn, runs := pluginConnectionMode(t, server, "exit 0", "", "", "5s", "Always")
		_, err := Rollout(context.Background(), conn.Dynamic, opt(conn))
		want := `of context lab needs the terminal to log in (interactiveMode: Always) and standard input is not a terminal: log in first with ` + "`kubectl --context lab get --raw /version`"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err %v, want %q", err, want)
		}
		if n := runsOf(t, runs); n != 0 {
			t.Errorf("the plugin ran %d times without the terminal it needs", n)
		}
	})
	t.Run("never returns", func(t *testing.T) {
		conn, runs := pluginConnection(t, server, "exec sleep 30", "", "", "600ms")
		// As the command does at exit; left running, the plugin would
		// hold the test binary's output open for its 30 seconds.
		t.Cleanup(StopAbandonedPlugins)
		var waitingFor atomic.Value
		conn.OnWaiting(200*time.Millisecond, func(w Waiting) {
			if w.Cred != nil {
				waitingFor.Store(w.Cred.Plugin)
			}
		})
		start := time.Now()
		_, err := Rollout(context.Background(), conn.Dynamic, opt(conn))
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("took %s: the plugin was not bounded by the 600ms request timeout", took)
		}
		want := `the credential plugin "` + filepath.Join(filepath.Dir(runs), "cloud-login") + `" of context lab did not return within 600ms (is it waiting for a login?): run ` + "`kubectl --context lab get --raw /version`"
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("err %v, want %q…", err, want)
		}
		if !mayLogIn(err) {
			t.Errorf("a plugin that did not return: %#v, want Login (it may wait for a prompt)", err)
		}
		if w, _ := waitingFor.Load().(string); !strings.HasSuffix(w, "cloud-login") {
			t.Errorf("the waiting notice named %q, want the plugin", w)
		}
		if !abandoned.Load() {
			t.Error("the running plugin was not marked for stopping at exit")
		}
	})
}

// A scan's lists go out at once and all but the first wait for its
// connection: when the first is held by a plugin that never returns, each
// of them says so too. Before, the lists that waited said the API server
// "did not answer", and a scan reported that whenever its Rollout list
// was not the first out.
func TestEveryRequestNamesThePluginItWaitedFor(t *testing.T) {
	server, _ := pluginServer(t)
	conn, _ := pluginConnection(t, server, "exec sleep 30", "", "", "600ms")
	t.Cleanup(StopAbandonedPlugins)
	for i, err := range burst(conn, 6) {
		if err == nil || !strings.Contains(err.Error(), pluginWaitText) {
			t.Errorf("read %d: %v, want the plugin wait", i, err)
		}
	}
}

// A request given up on while its plugin ran is not sent when the plugin
// returns after all: a write reported as failed must stay unwritten.
func TestNothingSentAfterAPluginWait(t *testing.T) {
	server, served := pluginServer(t)
	conn, _ := pluginConnection(t, server, `sleep 1
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"from-plugin"}}'`, "", "", "300ms")
	_, err := conn.Dynamic.Resource(GVRRollout).Namespace("shop").Patch(context.Background(), "x", types.MergePatchType, []byte(`{"spec":{"paused":false}}`), metav1.PatchOptions{})
	if err == nil || !strings.Contains(err.Error(), pluginWaitText) {
		t.Fatalf("err %v, want the plugin wait", err)
	}
	time.Sleep(2 * time.Second) // the plugin returns after 1 s
	if n := served.Load(); n != 0 {
		t.Errorf("the server got %d request(s) after the command gave up", n)
	}
}

// The oidc auth provider refreshes its token at the issuer before a
// request goes out, with an HTTP client of its own without a deadline: an
// issuer that does not answer held the command past --request-timeout,
// and one that refused was reported as the API server refusing. Both are
// now the provider's, bounded like any request; one that works is left
// alone.
func TestAuthProvider(t *testing.T) {
	server, served := pluginServer(t)
	issuer := oidcIssuer(t, http.StatusOK, `{"access_token":"a","token_type":"Bearer","expires_in":3600,"id_token":"from-plugin"}`)
	connect := func(t *testing.T, issuer string) *Connection {
		kc := filepath.Join(t.TempDir(), "config")
		os.WriteFile(kc, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: u, user: {auth-provider: {name: oidc, config: {idp-issuer-url: %q, client-id: rd, refresh-token: r}}}}]
contexts: [{name: lab, context: {cluster: c, user: u, namespace: shop}}]
current-context: lab
`, server, issuer)), 0o600)
		return connectKubeconfig(t, kc, "600ms")
	}
	opt := func(conn *Connection) Options {
		o := conn.Options
		o.Namespace, o.Name, o.SkipController = "shop", "x", true
		return o
	}
	t.Run("works", func(t *testing.T) {
		conn := connect(t, issuer)
		if _, err := Rollout(context.Background(), conn.Dynamic, opt(conn)); err != nil {
			t.Fatalf("with a token from the issuer: %v", err)
		}
	})
	for _, tc := range []struct {
		name, issuer, says string
		waiting            bool
	}{
		{"issuer hangs", nettest.Hang(t), "the oidc auth provider of context lab did not get a token within 600ms (it refreshes it at ISSUER): check that its issuer ISSUER is reachable from here (VPN, proxy), or raise --request-timeout", true},
		{"issuer refuses", nettest.Refused(t), "the oidc auth provider of context lab could not get a token: cannot reach its issuer ISSUER: connection refused: check that it is reachable from here (VPN, proxy)", false},
		{"refresh token refused", oidcIssuer(t, http.StatusBadRequest, `{"error":"invalid_grant"}`), "the oidc auth provider of context lab could not get a token (it refreshes it at ISSUER): failed to refresh token: oauth2: \"invalid_grant\"", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn := connect(t, tc.issuer)
			var waiting atomic.Value
			conn.OnWaiting(200*time.Millisecond, func(w Waiting) { waiting.Store(w.Cred) })
			before := served.Load()
			start := time.Now()
			_, err := Rollout(context.Background(), conn.Dynamic, opt(conn))
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %s: not bounded by the 600ms request timeout", took)
			}
			if want := strings.ReplaceAll(tc.says, "ISSUER", tc.issuer); err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("got  %v\nwant %s…", err, want)

			}
			if served.Load() != before {
				t.Errorf("the API server was sent a request without a token")
			}
			c, _ := waiting.Load().(*Credentials)
			if tc.waiting && (c == nil || c.Provider != "oidc" || c.Issuer != tc.issuer) {
				t.Errorf("the waiting notice named %+v, want the oidc provider and its issuer", c)
			}
		})
	}
}

// oidcIssuer is an OpenID Connect issuer whose token endpoint answers
// status and body to a refresh; it returns the issuer's URL.
func oidcIssuer(t *testing.T, status int, body string) string {
	issuer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/openid-configuration":
			fmt.Fprintf(w, `{"issuer":%q,"token_endpoint":%q}`, "http://"+r.Host, "http://"+r.Host+"/token")
		case "/token":
			w.WriteHeader(status)
			fmt.Fprint(w, body)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(issuer.Close)
	return issuer.URL
}

// below walks the process table from the root down, children first; a
// process whose parent pid is stale (Windows) is left with its subtree.
func TestBelow(t *testing.T) {
	parents := map[int]int{1: 0, 100: 1, 200: 100, 201: 100, 300: 200, 301: 300, 400: 1, 500: 201, 600: 600}
	if got, want := below(parents, 100, nil), []int{200, 201, 300, 500, 301}; !slices.Equal(got, want) {
		t.Errorf("below 100: %v, want %v", got, want)
	}
	if got := below(parents, 400, nil); len(got) != 0 {
		t.Errorf("below a leaf: %v", got)
	}
	stale := func(child, parent int) bool { return child != 201 }
	if got, want := below(parents, 100, stale), []int{200, 300, 301}; !slices.Equal(got, want) {
		t.Errorf("below 100 with 201 not its child: %v, want %v", got, want)
	}
}

// A multi-cluster scan runs the contexts' credential plugins at once, so
// none gets the terminal; a context without a plugin is left as it is.
func TestNoPluginTerminal(t *testing.T) {
	cfg := &rest.Config{ExecProvider: &clientcmdapi.ExecConfig{Command: "kubelogin", InteractiveMode: clientcmdapi.IfAvailableExecInteractiveMode}}
	NoPluginTerminal(cfg)
	if !cfg.ExecProvider.StdinUnavailable || cfg.ExecProvider.StdinUnavailableMessage == "" {
		t.Errorf("exec config %+v: want stdin unavailable, with the reason", cfg.ExecProvider)
	}
	e := &CredentialPluginError{Command: "kubelogin", Err: errors.New("getting credentials: exec plugin cannot support interactive mode: standard input is unavailable: " + cfg.ExecProvider.StdinUnavailableMessage)}
	want := `the credential plugin "kubelogin" of context prod needs the terminal to log in (interactiveMode: Always) and ` + noTerminalMessage + ": log in first with `kubectl --context prod get --raw /version` in a terminal"
	if got := e.describe("prod", 0); !strings.HasPrefix(got, want) {
		t.Errorf("got  %s\nwant %s…", got, want)
	}
	plain := &rest.Config{BearerToken: "t"}
	NoPluginTerminal(plain)
	if plain.ExecProvider != nil {
		t.Errorf("a config without a plugin got one")
	}
}

// A context whose login on the terminal failed before the scan does not
// run its plugin on the terminal again, and its error says why.
func TestLoginFailedNoTerminal(t *testing.T) {
	cfg := &rest.Config{ExecProvider: &clientcmdapi.ExecConfig{Command: "sso-login", InteractiveMode: clientcmdapi.AlwaysExecInteractiveMode}}
	LoginFailedNoTerminal(cfg)
	if !cfg.ExecProvider.StdinUnavailable {
		t.Fatalf("exec config %+v: want stdin unavailable", cfg.ExecProvider)
	}
	e := &CredentialPluginError{Command: "sso-login", Err: errors.New("getting credentials: exec plugin cannot support interactive mode: standard input is unavailable: " + cfg.ExecProvider.StdinUnavailableMessage)}
	want := `the credential plugin "sso-login" of context prod needs the terminal to log in (interactiveMode: Always) and its login on this terminal before the scan failed (what it printed is above): log in first with`
	if got := e.describe("prod", 0); !strings.HasPrefix(got, want) {
		t.Errorf("got  %s\nwant %s…", got, want)
	}
}

// mayLogIn is err's Login: a login on the terminal may get past it.
func mayLogIn(err error) bool {
	var ge *Error
	return errors.As(err, &ge) && ge.Login
}
