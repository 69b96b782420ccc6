// Package cli wires cobra commands to the library packages. It is the only
// package that imports cobra; it never exits the process (main does).
//
// Every command has an XxxOptions struct made by NewXxxOptions, with
// Complete(args), Validate() and Run(ctx), as kubectl's own commands do: the
// cobra command only binds flags to the fields and calls those three. The
// work itself is done by cobra-free verbs (gather, diagnose, escape, fleet,
// lint) and printed by pkg/render.
package cli

import (
	"errors"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
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

// ExitCodeError carries an exit code through cobra.
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

// Unwrap exposes the cause, for errors.As.
func (e *ExitCodeError) Unwrap() error { return e.Err }

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
		return usageErrorf("%w (see %s --help)", err, c.CommandPath())
	})
	root.AddCommand(
		newDiagnoseCommand(NewDiagnoseOptions(flags, streams)),
		newPodsCommand(NewPodsOptions(flags, streams)),
		newSnapshotCommand(NewSnapshotOptions(flags, streams)),
		newEscapeCommand(NewEscapeOptions(flags, streams)),
		newLintCommand(NewLintOptions(streams)),
		newScanCommand(NewScanOptions(flags, streams)),
		newExplainCommand(NewExplainOptions(streams)),
		newVersionCommand(NewVersionOptions(streams)),
	)
	return root
}
