//go:build unix

package gather

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// heard collects what PluginOutput passes on, by context.
type heard struct {
	mu    sync.Mutex
	lines map[string][]string
}

func (h *heard) add(contexts []string, line string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lines == nil {
		h.lines = map[string][]string{}
	}
	k := strings.Join(contexts, ",")
	h.lines[k] = append(h.lines[k], line)
}

func (h *heard) of(context string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.lines[context])
}

// relayedConnection connects as a multi-cluster scan does to server as
// context name, whose user is the credential plugin body (a shell script),
// relayed to out.
func relayedConnection(t *testing.T, out *PluginOutput, server, name, body, timeout string) (*Connection, string) {
	t.Helper()
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	command := filepath.Join(dir, "cloud-login")
	if err := os.WriteFile(command, []byte("#!/bin/sh\necho run >> "+runs+"\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(dir, "config")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: %q, interactiveMode: IfAvailable}}}]
contexts: [{name: %q, context: {cluster: c, user: u, namespace: shop}}]
current-context: %q
`, server, command, name, name)
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	flags := NewConfigFlags()
	flags.KubeConfig, flags.Timeout = &kc, &timeout
	conn, err := Connect(flags, NoPluginTerminal, out.Relay(name))
	if err != nil {
		t.Fatal(err)
	}
	return conn, command
}

// In a multi-cluster scan each context's credential plugin runs through
// the relay: what it prints is told per context as it comes, and the
// error of a plugin that fails or does not return quotes its last lines
// (before, "what it printed is on stderr above", among every other
// context's plugin's words). A plugin that works is unchanged: one run
// for a burst of reads, its credential used.
func TestRelayedPlugins(t *testing.T) {
	server, _ := pluginServer(t)
	var h heard
	out, err := ListenPluginOutput(h.add)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { out.Close() })
	read := func(conn *Connection) error {
		o := conn.Options
		o.Namespace, o.Name, o.SkipController = "shop", "x", true
		_, err := Rollout(context.Background(), conn.Dynamic, o)
		return err
	}

	t.Run("works", func(t *testing.T) {
		conn, command := relayedConnection(t, out, server, "works", `printf '\033[33mwarning:\033[0m\ttoken expires in 5m\n' >&2
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"from-plugin"}}'`, "5s")
		for i, err := range burst(conn, 8) {
			if err != nil {
				t.Errorf("read %d: %v", i, err)
			}
		}
		if n := runsOf(t, filepath.Join(filepath.Dir(command), "runs")); n != 1 {
			t.Errorf("the plugin ran %d times for one burst, want 1", n)
		}
		if got, want := h.of("works"), []string{"warning: token expires in 5m"}; !slices.Equal(got, want) {
			t.Errorf("heard %q, want %q", got, want)
		}
	})

	t.Run("fails", func(t *testing.T) {
		// Two contexts at once, as a scan reads them: each error quotes its
		// own plugin, the last three of its lines.
		var wg sync.WaitGroup
		errs, commands := make([]error, 2), make([]string, 2)
		for i, name := range []string{"prod-eu", "prod-us"} {
			conn, command := relayedConnection(t, out, server, name, fmt.Sprintf(`echo 'Starting login for %[1]s' >&2
echo >&2
echo 'Error loading SSO Token: Token for %[1]s does not exist' >&2
echo 'Run: cloud-login sso --profile %[1]s' >&2
exit 3`, name), "5s")
			commands[i] = command
			wg.Go(func() { errs[i] = read(conn) })
		}
		wg.Wait()
		for i, name := range []string{"prod-eu", "prod-us"} {
			want := fmt.Sprintf(`the credential plugin %q of context %s failed (exit code 3): it printed "Starting login for %s / Error loading SSO Token: Token for %s does not exist / Run: cloud-login sso --profile %s": log in again as it says (an expired SSO or cloud CLI session?), then retry`,
				commands[i], name, name, name, name)
			if errs[i] == nil || errs[i].Error() != want {
				t.Errorf("err %v\nwant %s", errs[i], want)
			}
			if got := h.of(name); len(got) != 3 {
				t.Errorf("%s: heard %q, want its three lines", name, got)
			}
		}
	})

	t.Run("fails without a word", func(t *testing.T) {
		conn, command := relayedConnection(t, out, server, "silent", "exit 4", "5s")
		want := fmt.Sprintf("the credential plugin %q of context silent failed (exit code 4) and printed nothing: run `kubectl --context silent get --raw /version` to see how it fails", command)
		if err := read(conn); err == nil || err.Error() != want {
			t.Errorf("err %v\nwant %s", err, want)
		}
	})

	t.Run("a login done while the scan waits", func(t *testing.T) {
		// The prompt reaches the terminal as it comes: whoever follows it
		// within the request's bound lets the read go on.
		done := filepath.Join(t.TempDir(), "logged-in")
		conn, _ := relayedConnection(t, out, server, "later", fmt.Sprintf(`echo 'To sign in, open https://login.example/device and enter the code LAB-5678' >&2
while [ ! -e %q ]; do sleep 0.05; done
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"from-plugin"}}'`, done), "10s")
		go func() {
			for start := time.Now(); len(h.of("later")) == 0; time.Sleep(20 * time.Millisecond) {
				if time.Since(start) > 10*time.Second {
					return // the read fails: the prompt never came
				}
			}
			os.WriteFile(done, nil, 0o600) // the person logs in
		}()
		if err := burst(conn, 1)[0]; err != nil {
			t.Errorf("err %v, want the read to go on after the login", err)
		}
	})

	t.Run("never returns", func(t *testing.T) {
		t.Cleanup(StopAbandonedPlugins)
		conn, command := relayedConnection(t, out, server, "device", `echo 'To sign in, open https://login.example/device and enter the code LAB-1234' >&2
exec sleep 30`, "1s")
		want := fmt.Sprintf(`the credential plugin %q of context device did not return within 1s (is it waiting for a login?); it printed "To sign in, open https://login.example/device and enter the code LAB-1234": do what it asks within --request-timeout (raise it), or log in first with `+"`kubectl --context device get --raw /version`", command)
		if err := read(conn); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("err %v\nwant %s…", err, want)
		}
	})
}

// Contexts that log in with the same plugin, as the AKS clusters of one
// tenant or the clusters behind one OIDC issuer do, still share its run
// (one device code, one browser tab), and what it prints is theirs.
func TestRelayedPluginShared(t *testing.T) {
	server, _ := pluginServer(t)
	var h heard
	out, err := ListenPluginOutput(h.add)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	dir := t.TempDir()
	runs, command := filepath.Join(dir, "runs"), filepath.Join(dir, "tenant-login")
	script := "#!/bin/sh\necho run >> " + runs + "\necho 'logged in to the tenant' >&2\n" +
		`printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"from-plugin"}}'` + "\n"
	if err := os.WriteFile(command, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(dir, "config")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: eu, cluster: {server: %[1]q, insecure-skip-tls-verify: true}}, {name: us, cluster: {server: %[1]q, insecure-skip-tls-verify: true}}]
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: %[2]q, interactiveMode: Never}}}]
contexts: [{name: aks-eu, context: {cluster: eu, user: u}}, {name: aks-us, context: {cluster: us, user: u}}]
`, server, command)
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var conns []*Connection
	for _, name := range []string{"aks-us", "aks-eu"} {
		flags := NewConfigFlags()
		flags.KubeConfig, flags.Context = &kc, &name
		conn, err := Connect(flags, NoPluginTerminal, out.Relay(name))
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, conn)
	}
	for _, conn := range conns {
		for i, err := range burst(conn, 4) {
			if err != nil {
				t.Errorf("%s read %d: %v", conn.Options.Context, i, err)
			}
		}
	}
	if n := runsOf(t, runs); n != 1 {
		t.Errorf("the shared plugin ran %d times, want once as without the relay", n)
	}
	if got := h.of("aks-eu,aks-us"); !slices.Equal(got, []string{"logged in to the tenant"}) {
		t.Errorf("heard %q", h.lines)
	}
	if eu, us := conns[1].monitor.cred.printed(), conns[0].monitor.cred.printed(); !slices.Equal(eu, us) || len(eu) != 1 {
		t.Errorf("kept %q for aks-eu and %q for aks-us, want the shared run's line for both", eu, us)
	}

	// A plugin given the cluster's details runs for each cluster.
	own := func(context string) string {
		c := &rest.Config{ExecProvider: &clientcmdapi.ExecConfig{Command: "sh", ProvideClusterInfo: true}}
		out.Relay(context)(c)
		return c.ExecProvider.Args[2]
	}
	if own("gke-a") == own("gke-b") {
		t.Error("a plugin given the cluster's details shares one run between clusters")
	}
}

// A plugin that cannot be found is left to client-go, which says so (and
// the error gives the installHint); a config without a plugin is left as
// it is; a nil PluginOutput relays nothing.
func TestRelayLeaves(t *testing.T) {
	out, err := ListenPluginOutput(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	missing := &rest.Config{ExecProvider: &clientcmdapi.ExecConfig{Command: "rolloutdoctor-test-no-such-plugin"}}
	out.Relay("c")(missing)
	if missing.ExecProvider.Command != "rolloutdoctor-test-no-such-plugin" || len(missing.ExecProvider.Args) != 0 {
		t.Errorf("a plugin not in PATH was relayed: %+v", missing.ExecProvider)
	}
	plain := &rest.Config{BearerToken: "t"}
	out.Relay("c")(plain)
	if plain.ExecProvider != nil {
		t.Error("a config without a plugin got one")
	}
	orig := &clientcmdapi.ExecConfig{Command: "sh", Args: []string{"-c", "true"}}
	cfg := &rest.Config{ExecProvider: orig}
	(*PluginOutput)(nil).Relay("c")(cfg)
	if cfg.ExecProvider != orig {
		t.Error("a nil PluginOutput relayed the plugin")
	}
	out.Relay("c")(cfg)
	if cfg.ExecProvider == orig || orig.Command != "sh" || cfg.ExecProvider.Args[0] != RelayArg || !slices.Equal(cfg.ExecProvider.Args[len(cfg.ExecProvider.Args)-2:], []string{"-c", "true"}) {
		t.Errorf("relayed %+v (the kubeconfig's entry %+v must stay as it was)", cfg.ExecProvider, orig)
	}
	if p, id, ok := relayedOutput(cfg.ExecProvider); !ok || p != out || !slices.Equal(out.contexts[id], []string{"c"}) {
		t.Errorf("relayedOutput: %v %q %v", p, id, ok)
	}
}

// relay runs the test binary as the relay of a shell script, plugin id
// at addr.
func relay(t *testing.T, addr, id, script string) *exec.Cmd {
	t.Helper()
	return exec.Command(os.Args[0], RelayArg, addr, id, "--", "/bin/sh", "-c", script)
}

// The relay passes the plugin's stdout, environment and exit code
// through; without the scan to speak to, the plugin's stderr is the
// relay's, as without a relay.
func TestRelayPassesThrough(t *testing.T) {
	var h heard
	out, err := ListenPluginOutput(h.add)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	id := out.register("a plugin", "c")
	cmd := relay(t, out.addr, id, `echo "credential for $KUBERNETES_EXEC_INFO"; echo 'to the scan' >&2; exit 7`)
	cmd.Env = append(os.Environ(), "KUBERNETES_EXEC_INFO={}")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 7 {
		t.Errorf("exit %v, want 7", err)
	}
	if stdout.String() != "credential for {}\n" || stderr.Len() != 0 {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
	if got := out.printedBy(id); !slices.Equal(got, []string{"to the scan"}) {
		t.Errorf("kept %q", got)
	}

	cmd = relay(t, filepath.Join(t.TempDir(), "gone"), "c", `echo 'no scan' >&2; exit 5`)
	stderr.Reset()
	cmd.Stderr = &stderr
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 5 || stderr.String() != "no scan\n" {
		t.Errorf("without the scan: exit %v, stderr %q; want 5 and the plugin's own words", err, stderr.String())
	}

	cmd = exec.Command(os.Args[0], RelayArg, out.addr, id, "--", filepath.Join(t.TempDir(), "gone"))
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 127 || len(out.printedBy(id)) != 1 || !strings.HasPrefix(out.printedBy(id)[0], "cannot start ") {
		t.Errorf("a plugin that cannot start: exit %v, kept %q", err, out.printedBy(id))
	}
}

// Stopped, as the scan stops a plugin it gave up on, the relay stops the
// plugin: no process is left that a `… | tee` would wait for.
func TestRelayStopsThePlugin(t *testing.T) {
	out, err := ListenPluginOutput(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := relay(t, out.addr, out.register("a plugin", "c"), `echo $$; exec sleep 30`)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		t.Fatalf("the plugin's pid: %q %v %v", line, err, perr)
	}
	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the relay took %s to stop", took)
	}
	if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
		t.Errorf("the plugin (pid %d) outlived its relay: %v", pid, err)
	}
}

// A plugin's line as a terminal and a JSON reader should see it, and
// lines of any length read a bounded part at a time.
func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"\x1b[1;31mError:\x1b[0m token expired\n": "Error: token expired",
		"waiting |\rwaiting /\rwaiting -\r\n":     "waiting -",
		"a\tb\x07c\x00d \xff":                     "a bcd",
		"   \r\n":                                 "",
	} {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %q, want %q", in, got, want)
		}
	}
	long := strings.Repeat("x", 100_000)
	r := bufio.NewReaderSize(strings.NewReader(long+"\nnext\n"), 16)
	if l, err := readLine(r, maxPrintedLine); err != nil || len(l) != maxPrintedLine {
		t.Errorf("a long line: %d bytes, %v", len(l), err)
	}
	if l, err := readLine(r, maxPrintedLine); err != nil || l != "next\n" {
		t.Errorf("the line after it: %q, %v", l, err)
	}
}
