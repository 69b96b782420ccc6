package cli

import (
	"context"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/fleet"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/gather"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/render"
)

// ScanOptions holds the scan command's inputs.
type ScanOptions struct {
	CommonOptions
	AllNamespaces bool
	// Selector is a label selector on the Rollouts.
	Selector string
}

// NewScanOptions makes the scan command's options with their defaults.
func NewScanOptions(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *ScanOptions {
	o := &ScanOptions{CommonOptions: newCommon(flags, streams, "json", "yaml")}
	o.FailOn = "none"
	return o
}

func newScanCommand(o *ScanOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "scan [-A | -n NS] [-l SELECTOR]",
		Short: "Every Rollout in scope, one row each, ranked by risk (a few LIST calls, no per-Rollout requests)",
		Example: `  kubectl rolloutdoctor scan -A
  kubectl rolloutdoctor scan -n shop -o json
  kubectl rolloutdoctor scan -A -l team=payments`,
		Args: usageArgs(cobra.NoArgs),
		RunE: runE(o),
	}
	cmd.Flags().BoolVarP(&o.AllNamespaces, "all-namespaces", "A", o.AllNamespaces, "scan every namespace")
	cmd.Flags().StringVarP(&o.Selector, "selector", "l", o.Selector, "label selector on the Rollouts")
	o.addOutputFlags(cmd, "json or yaml (default: a table)")
	o.addControllerFlags(cmd, "controller version to model (default: from the controller Deployment's image)", false)
	o.addFailOnFlag(cmd, "exit 1 when some Rollout has a finding at least this severe")
	return cmd
}

// Complete resolves the namespace (none with -A) and --fail-on.
func (o *ScanOptions) Complete([]string) error {
	if !o.AllNamespaces {
		if err := o.completeNamespace(); err != nil {
			return err
		}
	}
	return o.completeFailOn()
}

// Validate checks the shared flags and the selector (a bad one is a usage
// error here, not a failed read from the API server).
func (o *ScanOptions) Validate() error {
	if _, err := labels.Parse(o.Selector); err != nil {
		return usageErrorf("--selector %q: %v", o.Selector, err)
	}
	return o.validate()
}

// Run reads the fleet, ranks it and prints one row per Rollout.
func (o *ScanOptions) Run(ctx context.Context) error {
	conn, err := o.cluster()
	if err != nil {
		return err
	}
	opt := gather.FleetOptions{Namespace: o.Namespace, Selector: o.Selector, ToolVersion: Version,
		Context: conn.Options.Context, Server: conn.Options.Server, Timeout: conn.Options.Timeout, Kube: conn.Options.Kube}
	if isTerminal(o.streams.ErrOut) {
		opt.Progress = func(what string, n int) { render.Progress(o.streams.ErrOut, what, n) }
	}
	rep, err := fleet.Scan(ctx, conn.Dynamic, opt, o.ControllerVersion)
	if opt.Progress != nil {
		render.ClearProgress(o.streams.ErrOut)
	}
	if err != nil {
		return failure(err)
	}
	if err := o.print(rep, func(w io.Writer, s render.Styles) error { return render.Scan(w, rep, s) }); err != nil {
		return err
	}
	return o.failed(rep.Worst())
}
