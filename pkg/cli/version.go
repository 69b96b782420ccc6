package cli

import (
	"context"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// VersionOptions holds the version command's inputs (none but the streams).
type VersionOptions struct {
	streams genericiooptions.IOStreams
}

// NewVersionOptions makes the version command's options.
func NewVersionOptions(streams genericiooptions.IOStreams) *VersionOptions {
	return &VersionOptions{streams: streams}
}

func newVersionCommand(o *VersionOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and the controller versions the model covers",
		Args:  usageArgs(cobra.NoArgs),
		RunE:  runE(o),
	}
}

// Complete has nothing to fill.
func (o *VersionOptions) Complete([]string) error { return nil }

// Validate has nothing to check.
func (o *VersionOptions) Validate() error { return nil }

// Run prints the build and the modeled controller versions.
func (o *VersionOptions) Run(context.Context) error {
	fmt.Fprintf(o.streams.Out, "rolloutdoctor %s (commit %s, %s)\n", Version, Commit, runtime.Version())
	fmt.Fprintf(o.streams.Out, "models Argo Rollouts controller:")
	for _, v := range upstream.Modeled {
		fmt.Fprintf(o.streams.Out, " %s", v)
	}
	fmt.Fprintln(o.streams.Out)
	return nil
}
