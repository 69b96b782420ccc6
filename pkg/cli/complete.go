package cli

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/gather"
)

// completeRollouts completes the NAME argument with the Rollouts of the
// current context and namespace (or -n/--context on the command line). It
// never fails loudly: without a cluster there is simply nothing to offer.
func completeRollouts(flags *genericclioptions.ConfigFlags) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(_ *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		cfg, err := flags.ToRESTConfig()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		cfg.Timeout = 5 * time.Second
		ns, _, err := flags.ToRawKubeConfigLoader().Namespace()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		dc, err := dynamic.NewForConfig(cfg)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		l, err := dc.Resource(gather.GVRRollout).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, u := range l.Items {
			if strings.HasPrefix(u.GetName(), prefix) {
				out = append(out, u.GetName())
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
