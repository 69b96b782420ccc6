package cli

import (
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
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

// A multi-cluster scan runs the contexts' credential plugins at once, so
// none gets the terminal; a context without a plugin is left as it is.
func TestNoPluginStdin(t *testing.T) {
	cfg := &rest.Config{ExecProvider: &clientcmdapi.ExecConfig{Command: "kubelogin", InteractiveMode: clientcmdapi.IfAvailableExecInteractiveMode}}
	noPluginStdin(cfg)
	if !cfg.ExecProvider.StdinUnavailable || cfg.ExecProvider.StdinUnavailableMessage == "" {
		t.Errorf("exec config %+v: want stdin unavailable, with the reason", cfg.ExecProvider)
	}
	plain := &rest.Config{BearerToken: "t"}
	noPluginStdin(plain)
	if plain.ExecProvider != nil {
		t.Errorf("a config without a plugin got one")
	}
}
