package cli

import (
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
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
