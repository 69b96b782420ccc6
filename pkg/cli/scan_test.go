package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// The flags that apply to every cluster reach each context's flags; those
// that name one cluster do not.
func TestContextFlagsKeepWhatAppliesToEveryCluster(t *testing.T) {
	f := genericclioptions.NewConfigFlags(true)
	kc, timeout, server, user := "/tmp/kc", "5s", "https://one.example", "someone"
	yes := true
	f.KubeConfig, f.Timeout, f.APIServer, f.AuthInfoName, f.DisableCompression = &kc, &timeout, &server, &user, &yes
	c := contextFlags(f, "prod-eu")
	if *c.Context != "prod-eu" || *c.KubeConfig != kc || *c.Timeout != timeout || c.DisableCompression == nil || !*c.DisableCompression {
		t.Fatalf("context flags %q kubeconfig %q timeout %q disable-compression %v: want prod-eu, %s, %s, true",
			*c.Context, *c.KubeConfig, *c.Timeout, c.DisableCompression, kc, timeout)
	}
	if *c.APIServer != "" || *c.AuthInfoName != "" {
		t.Fatalf("--server %q and --user %q name one cluster and must not reach another context", *c.APIServer, *c.AuthInfoName)
	}
}

// --contexts takes names and shell patterns, and !PATTERN to leave some
// out; * crosses the slash of an EKS context name; a pattern that matches
// nothing, or is not one, is a usage error, as is an unknown name and a
// list that leaves no context.
func TestContextPatterns(t *testing.T) {
	raw := clientcmdapi.NewConfig()
	for _, n := range []string{"prod-eu", "prod-us", "staging", "arn:aws:eks:eu-west-1:1234:cluster/prod-payments", "prod-*"} {
		raw.Contexts[n] = &clientcmdapi.Context{Cluster: "c"}
	}
	for _, tc := range []struct {
		flag []string
		want string
		code int
	}{
		{[]string{"prod-??"}, "prod-eu,prod-us", 0},
		{[]string{"staging", "prod-e*", "prod-eu"}, "staging,prod-eu", 0},
		{[]string{"*prod-pay*"}, "arn:aws:eks:eu-west-1:1234:cluster/prod-payments", 0},
		// A context called prod-* is a name before it is a pattern.
		{[]string{"prod-*"}, "prod-*", 0},
		{[]string{"qa-*"}, "", ExitUsage},
		{[]string{"prod-[eu"}, "", ExitUsage},
		{[]string{"qa"}, "", ExitUsage},
		// !PATTERN leaves contexts out; exclusions alone leave them out of
		// every context.
		{[]string{"prod-??", "!prod-us"}, "prod-eu", 0},
		{[]string{"!prod-??"}, "arn:aws:eks:eu-west-1:1234:cluster/prod-payments,prod-*,staging", 0},
		{[]string{"!*prod*", "!staging"}, "", ExitUsage},
		{[]string{"!qa-*"}, "", ExitUsage},
	} {
		o := &ScanOptions{Contexts: tc.flag}
		names, err := o.contextNames(*raw)
		var ec *ExitCodeError
		if tc.code != 0 {
			if !errors.As(err, &ec) || ec.Code != tc.code {
				t.Errorf("%v: %v, want exit %d", tc.flag, err, tc.code)
			}
			continue
		}
		if err != nil || strings.Join(names, ",") != tc.want {
			t.Errorf("%v: %v, %v; want %s", tc.flag, names, err, tc.want)
		}
	}
}

// A scan over several clusters tells whose credential plugin said what:
// each line it prints on stderr is prefixed with its context, and the
// cluster's section (JSON too) quotes what the plugin said as it failed.
// Before, both plugins' complaints reached the terminal unattributed and
// each section said "what it printed is on stderr above".
func TestScanTellsWhosePluginSaidWhat(t *testing.T) {
	dir := t.TempDir()
	var users, contexts string
	for _, name := range []string{"prod-eu", "prod-us"} {
		plugin := filepath.Join(dir, name+"-login")
		script := "#!/bin/sh\necho 'Error loading SSO Token: Token for " + name + " does not exist' >&2\nexit 255\n"
		if err := os.WriteFile(plugin, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		users += fmt.Sprintf("- {name: %s, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: %q, interactiveMode: Never}}}\n", name, plugin)
		contexts += fmt.Sprintf("- {name: %s, context: {cluster: c, user: %s}}\n", name, name)
	}
	kc := filepath.Join(dir, "config")
	// Nothing listens there: the plugins fail before a request is sent.
	cfg := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"https://127.0.0.1:1\"}}]\nusers:\n" + users + "contexts:\n" + contexts
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runCLI(t, "", "scan", "--kubeconfig", kc, "--all-contexts", "-o", "json")
	if code != ExitError {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	var rep struct {
		Clusters []struct{ Context, Error string } `json:"clusters"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Clusters) != 2 {
		t.Fatalf("%v: %s", err, out)
	}
	for _, c := range rep.Clusters {
		said := fmt.Sprintf("Error loading SSO Token: Token for %s does not exist", c.Context)
		want := fmt.Sprintf(`the credential plugin %q of context %s failed (exit code 255): it printed %q: log in again`, filepath.Join(dir, c.Context+"-login"), c.Context, said)
		if !strings.Contains(c.Error, want) {
			t.Errorf("%s: %q\nwant %s…", c.Context, c.Error, want)
		}
		if line := "credential plugin of context " + c.Context + ": " + said + "\n"; strings.Count(stderr, line) != 1 {
			t.Errorf("stderr %q\nwant once %q", stderr, line)
		}
	}
}
