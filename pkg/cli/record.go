package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/gather"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// RecordOptions holds the record command's inputs.
type RecordOptions struct {
	CommonOptions
	Name string
	// File is where the record goes ("-": stdout).
	File string
	// Settle ends the record once the Rollout has been Healthy and
	// unchanged this long (0: only Ctrl-C ends it).
	Settle time.Duration
}

// NewRecordOptions makes the record command's options with their defaults.
func NewRecordOptions(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *RecordOptions {
	return &RecordOptions{CommonOptions: newCommon(flags, streams), Settle: 2 * time.Minute}
}

func newRecordCommand(o *RecordOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "record [rollout/]NAME -o FILE",
		Short: "Record every change of a Rollout and everything diagnose reads, for timeline and diagnose --at afterwards",
		Long: `record watches a Rollout and everything a diagnosis of it reads — its ReplicaSets, pods,
AnalysisRuns and Events, the Services and traffic objects it names — and appends every change,
with the API server's resourceVersion and the time it arrived, to FILE. The file is an input like a
snapshot: diagnose -f FILE and escape -f FILE read its last moment, --at TIME any moment, and
timeline -f FILE draws the whole history.

It ends on Ctrl-C, when the Rollout is deleted, or once the Rollout, after having been seen not
Healthy, is Healthy and unchanged for --settle. A watch that ends is resumed where it stopped; one
the API server can no longer resume is listed again and the stretch it lost is written into the
record as a gap, and said on stderr. Nothing is written to the cluster.`,
		Example: `  kubectl rolloutdoctor record checkout-api -n shop -o incident.rec
  kubectl rolloutdoctor timeline -f incident.rec --html report.html
  kubectl rolloutdoctor diagnose -f incident.rec --at 03:14:10`,
		Args:              usageArgs(cobra.MaximumNArgs(1)),
		ValidArgsFunction: o.completeRollouts,
		RunE:              runE(o),
	}
	cmd.Flags().StringVarP(&o.File, "output", "o", o.File, "write the record to `FILE` (- for stdout); an existing file is never overwritten")
	cmd.Flags().DurationVar(&o.Settle, "settle", o.Settle, "end once the Rollout, having been seen not Healthy, is Healthy and unchanged this long (0: only Ctrl-C)")
	cmd.Flags().StringVar(&o.ControllerNamespace, "controller-namespace", o.ControllerNamespace, usageControllerNamespace)
	return cmd
}

// Complete takes the Rollout's name and resolves the namespace.
func (o *RecordOptions) Complete(args []string) error {
	return o.completeRolloutName(args, &o.Name)
}

// Validate checks that there is a Rollout to record and a file to record
// it in.
func (o *RecordOptions) Validate() error {
	if err := o.validateTimeout(); err != nil {
		return err
	}
	if o.Name == "" {
		return &ExitCodeError{Code: ExitUsage, Err: errors.New("name a Rollout (kubectl rolloutdoctor record NAME -o FILE)")}
	}
	if o.File == "" {
		return &ExitCodeError{Code: ExitUsage, Err: errors.New("give the file to record into: -o FILE (- for stdout)")}
	}
	if o.Settle < 0 {
		return usageErrorf("--settle must not be negative")
	}
	return nil
}

// Run records until Ctrl-C, the Rollout settles or is deleted.
func (o *RecordOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	conn, err := o.cluster()
	if err != nil {
		return err
	}
	var out io.Writer = o.streams.Out
	display := "stdout"
	if o.File != "-" {
		// O_EXCL: a record of an earlier incident is never overwritten.
		f, err := os.OpenFile(o.File, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
		if err != nil {
			if errors.Is(err, os.ErrExist) {
				return &ExitCodeError{Code: ExitError, Err: fmt.Errorf("%s exists: record into another file (an earlier record is never overwritten)", o.File)}
			}
			return &ExitCodeError{Code: ExitError, Err: fmt.Errorf("cannot create %s: %w", o.File, unwrapPathError(err))}
		}
		defer f.Close()
		out, display = f, o.File
	}
	until := "Ctrl-C"
	if o.Settle > 0 {
		until = fmt.Sprintf("Ctrl-C, or Healthy and unchanged for %s", o.Settle)
	}
	opt := gather.RecordOptions{Options: conn.Options, Watcher: conn.Watcher, Settle: o.Settle,
		OnNotice: func(s string) { fmt.Fprintf(o.streams.ErrOut, "%s %s\n", time.Now().UTC().Format("15:04:05"), s) },
		OnStart: func(h snapshot.Header) {
			fmt.Fprintf(o.streams.ErrOut, "recording rollout %s/%s into %s until %s …\n", h.TargetNamespace, h.TargetName, display, until)
			for _, g := range h.Gaps {
				fmt.Fprintf(o.streams.ErrOut, "warning: not recorded: %s\n", g.String())
			}
		}}
	opt.Namespace, opt.Name = o.Namespace, o.Name
	res, err := gather.Record(ctx, conn.Dynamic, opt, out)
	if res != nil {
		gaps := ""
		if res.Gaps > 0 {
			gaps = fmt.Sprintf(", %d gap(s) (timeline shows them)", res.Gaps)
		}
		fmt.Fprintf(o.streams.ErrOut, "record ended (%s): %d changes%s in %s; timeline -f %s shows it\n", res.Reason, res.Changes, gaps, display, display)
	}
	if err != nil && res == nil && o.File != "-" {
		os.Remove(o.File) // nothing but perhaps a header: the Rollout could not be read
	}
	return failure(err)
}

// unwrapPathError drops the path an *os.PathError repeats.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
