// Package cli wires cobra commands to the library packages. It is the only
// package that imports cobra; it never exits the process (main does).
package cli

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// Build information, stamped with -ldflags -X at release time.
var (
	Version = "dev"
	Commit  = "unknown"
)

// Exit codes (documented in the README).
const (
	ExitOK       = 0 // no finding at or above --fail-on
	ExitFindings = 1 // findings at or above --fail-on
	ExitError    = 2 // the tool could not do its job (bad input, cluster unreachable, …)
	ExitUsage    = 3 // bad flags or arguments
)

// ExitError carries an exit code through cobra.
type ExitCodeError struct {
	Code int
	Err  error
}

func (e *ExitCodeError) Error() string {
	if e.Err == nil {
		return ""
	}
	return e.Err.Error()
}

// Code returns the process exit code for an error returned by Execute.
func Code(err error) int {
	if err == nil {
		return ExitOK
	}
	var ec *ExitCodeError
	if errors.As(err, &ec) {
		return ec.Code
	}
	return ExitError
}

// NewRoot builds the command tree.
func NewRoot(streams genericiooptions.IOStreams) *cobra.Command {
	flags := genericclioptions.NewConfigFlags(true)
	root := &cobra.Command{
		Use:           "kubectl-rolloutdoctor",
		Short:         "Incident response for Argo Rollouts: where a Rollout really is, and which way out is safe",
		SilenceUsage:  true,
		SilenceErrors: true,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl rolloutdoctor"},
	}
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.SetIn(streams.In)
	flags.AddFlags(root.PersistentFlags())
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &ExitCodeError{Code: ExitUsage, Err: fmt.Errorf("%w (see %s --help)", err, c.CommandPath())}
	})
	root.AddCommand(
		newDiagnoseCmd(flags, streams),
		newPodsCmd(flags, streams),
		newSnapshotCmd(flags, streams),
		newEscapeCmd(flags, streams),
		newLintCmd(streams),
		newScanCmd(flags, streams),
		newExplainCmd(streams),
		newVersionCmd(streams),
	)
	return root
}

func newVersionCmd(streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and the controller versions the model covers",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			fmt.Fprintf(streams.Out, "rolloutdoctor %s (commit %s, %s)\n", Version, Commit, runtime.Version())
			fmt.Fprintf(streams.Out, "models Argo Rollouts controller:")
			for _, v := range upstream.Modeled {
				fmt.Fprintf(streams.Out, " %s", v)
			}
			fmt.Fprintln(streams.Out)
			return nil
		},
	}
}

// Unwrap exposes the cause, for errors.As.
func (e *ExitCodeError) Unwrap() error { return e.Err }
