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
	"flag"

	"errors"
	"strings"
	"time"

	"k8s.io/klog/v2"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/gather"
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
	return newRoot(streams, defaultNet())
}

// netSettings are the bounds of a command's cluster reads that are not
// flags: when to say what it is waiting for, and how long --watch retries.
// Tests shorten them.
type netSettings struct {
	// waitNotice is how long a request goes unanswered before the
	// "waiting for the API server" line.
	waitNotice time.Duration
	// watch carries --watch's backoff and retry budget.
	watch gather.WatchOptions
}

func defaultNet() netSettings {
	return netSettings{waitNotice: gather.DefaultWaitNotice}
}

func newRoot(streams genericiooptions.IOStreams, net netSettings) *cobra.Command {
	// kubectl's flags, with a default --request-timeout (kubectl's is none).
	flags := gather.NewConfigFlags()
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
	addKlogFlags(root)
	addProfileFlags(root)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErrorf("%w (see %s --help)", err, c.CommandPath())
	})
	diagnose, pods, snapshot := NewDiagnoseOptions(flags, streams), NewPodsOptions(flags, streams), NewSnapshotOptions(flags, streams)
	escape, scan := NewEscapeOptions(flags, streams), NewScanOptions(flags, streams)
	record, timeline := NewRecordOptions(flags, streams), NewTimelineOptions(flags, streams)
	for _, c := range []*CommonOptions{&diagnose.CommonOptions, &pods.CommonOptions, &snapshot.CommonOptions, &escape.CommonOptions, &scan.CommonOptions, &record.CommonOptions, &timeline.CommonOptions} {
		c.net = net
	}
	root.AddCommand(
		newDiagnoseCommand(diagnose),
		newPodsCommand(pods),
		newSnapshotCommand(snapshot),
		newEscapeCommand(escape),
		newRecordCommand(record),
		newTimelineCommand(timeline),
		newLintCommand(NewLintOptions(streams)),
		newScanCommand(scan),
		newExplainCommand(NewExplainOptions(streams)),
		newVersionCommand(NewVersionOptions(streams)),
	)
	// cobra words an unknown subcommand itself, as an error without an exit
	// code and with its suggestions on further lines; the commands that
	// only group others check their arguments here instead.
	root.InitDefaultCompletionCmd()
	groupCommand(root)
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			groupCommand(c)
		}
	}
	return root
}

// groupCommand makes a command that only holds subcommands refuse an
// unknown one as a usage error (exit 3) on one line, with cobra's
// suggestion folded in, and print its help when called alone.
func groupCommand(c *cobra.Command) {
	c.Args = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		hint := ""
		if s := c.SuggestionsFor(args[0]); len(s) > 0 {
			hint = "did you mean " + strings.Join(s, " or ") + "? "
		}
		return usageErrorf("unknown command %q for %q (%ssee %s --help)", args[0], c.CommandPath(), hint, c.CommandPath())
	}
	c.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
}

// addKlogFlags adds kubectl's logging flags (-v, --vmodule, …): client-go
// logs every request with its status and time at -v=6, its headers at 7 and
// bodies at 8, so a user can see what the tool asks the cluster.
func addKlogFlags(root *cobra.Command) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	fs.VisitAll(func(f *flag.Flag) {
		switch f.Name {
		case "v", "vmodule":
			root.PersistentFlags().AddGoFlag(f)
		}
	})
}
