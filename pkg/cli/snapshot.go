package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

func newSnapshotCmd(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var controllerNS string
	cmd := &cobra.Command{
		Use:   "snapshot [rollout/|deployment/]NAME",
		Short: "Write everything diagnose (or pods) reads about a Rollout or Deployment as a v1 List (-f gives the same report later)",
		Example: `  kubectl rolloutdoctor snapshot checkout-api -n shop > incident.yaml
  kubectl rolloutdoctor diagnose -f incident.yaml
  kubectl rolloutdoctor snapshot deployment/web -n shop > web.yaml
  kubectl rolloutdoctor pods -f web.yaml`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeRollouts(flags),
		RunE: func(c *cobra.Command, args []string) error {
			o := &PodsOptions{DiagnoseOptions: DiagnoseOptions{flags: flags, streams: streams, FailOn: "none", ControllerNamespace: controllerNS}}
			if err := o.complete(args); err != nil {
				return err
			}
			if o.Name == "" {
				return &ExitCodeError{Code: ExitUsage, Err: errors.New("name a Rollout or a Deployment")}
			}
			snap, _, err := o.podsSnapshot(c.Context())
			if err != nil {
				return err
			}
			for _, g := range snap.Header.Gaps {
				fmt.Fprintf(streams.ErrOut, "warning: could not read %s\n", g.String())
			}
			return snap.Write(streams.Out)
		},
	}
	cmd.Flags().StringVar(&controllerNS, "controller-namespace", "argo-rollouts", "namespace to look for the argo-rollouts controller Deployment in first")
	return cmd
}
