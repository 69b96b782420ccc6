package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/escape"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/gather"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/render"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// DiagnoseOptions holds the diagnose command's inputs.
type DiagnoseOptions struct {
	CommonOptions
	// Name is the Rollout's name ("" with -f and a single Rollout in it).
	Name  string
	Watch bool
	// history keeps what successive reads of --watch showed.
	history *diagnose.History
	// Analysis shows every AnalysisRun metric and measurement in the human
	// view (-o json and yaml always carry them).
	Analysis bool
	// At is the moment of a record (-f) to diagnose ("" its end).
	At string
	// ControllerLogs is when the controller's log is read: auto (when the
	// Rollout needs explaining), always or never.
	ControllerLogs string
}

// NewDiagnoseOptions makes the diagnose command's options with their
// defaults.
func NewDiagnoseOptions(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *DiagnoseOptions {
	o := &DiagnoseOptions{CommonOptions: newCommon(flags, streams, "json", "yaml", "markdown")}
	// An incident tool's exit code separates "something is on fire" from
	// hygiene: warnings (a missing PDB, no preStop) are on most Rollouts.
	o.FailOn = "critical"
	o.ControllerLogs = "auto"
	return o
}

func newDiagnoseCommand(o *DiagnoseOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "diagnose [rollout/]NAME | -f FILE",
		Short: "Where a live Rollout really is, what the controller will do next, and what is wrong",
		Example: `  kubectl rolloutdoctor diagnose checkout-api -n shop
  kubectl rolloutdoctor diagnose rollout/checkout-api --context prod -o json
  kubectl rolloutdoctor diagnose -f incident.yaml
  kubectl rolloutdoctor diagnose -f incident.rec --at 03:14:10   # a moment of a record
  kubectl rolloutdoctor diagnose checkout-api -o markdown        # an incident card
  kubectl rolloutdoctor diagnose checkout-api --watch`,
		Args:              usageArgs(cobra.MaximumNArgs(1)),
		ValidArgsFunction: o.completeRollouts,
		RunE:              runE(o),
	}
	o.addFilenameFlag(cmd, "diagnose the snapshot or kubectl get -o yaml output in `FILE` instead of the cluster (- for stdin)")
	o.addOutputFlags(cmd, "output format: json, yaml, or markdown (an incident card to paste into a channel or an issue) (default: human)")
	o.addFailOnFlag(cmd, "exit 1 when a finding is at least this severe: info, warning, critical or none (critical: something is on fire now; warnings are hygiene)")
	o.addControllerFlags(cmd, usageControllerVersion, true)
	cmd.Flags().BoolVarP(&o.Watch, "watch", "w", false, "re-diagnose on every change of the Rollout, its ReplicaSets and pods, until Ctrl-C")
	addAtFlag(cmd, &o.At)
	cmd.Flags().StringVar(&o.ControllerLogs, "controller-logs", o.ControllerLogs, "read the log of the controller pods that reconcile the Rollout (get on pods/log in their namespace; one bounded request per pod: the newest lines of the current revision, at most 1h and 2 MiB): auto (only when there is something to explain: aborted, progress deadline, InvalidSpec, a controller Warning event, a step stuck for 10 minutes; never during --watch), always, or never")
	cmd.Flags().BoolVar(&o.Analysis, "analysis", false, "show every metric of every AnalysisRun with every measurement it keeps (default: the worst metric whole, the newest measurements)")
	return cmd
}

// Complete takes the Rollout's name and resolves the namespace and --fail-on.
func (o *DiagnoseOptions) Complete(args []string) error {
	if len(args) == 1 {
		name, err := rolloutArg(args[0])
		if err != nil {
			return err
		}
		o.Name = name
	}
	if err := o.completeNamespace(); err != nil {
		return err
	}
	return o.completeFailOn()
}

// rolloutArg accepts NAME or rollout/NAME (and kubectl's other spellings
// of the resource).
func rolloutArg(arg string) (string, error) {
	i := strings.Index(arg, "/")
	if i < 0 {
		return arg, nil
	}
	switch strings.ToLower(arg[:i]) {
	case "rollout", "rollouts", "ro", "rollouts.argoproj.io", "rollout.argoproj.io":
		return arg[i+1:], nil
	}
	return "", usageErrorf("%q is not a Rollout: use NAME or rollout/NAME", arg)
}

// Validate checks the flags and that there is something to diagnose.
func (o *DiagnoseOptions) Validate() error {
	if err := o.validate(); err != nil {
		return err
	}
	if o.Filename == "" && o.Name == "" {
		return &ExitCodeError{Code: ExitUsage, Err: errors.New("name a Rollout (kubectl rolloutdoctor diagnose NAME) or give -f FILE")}
	}
	if o.Watch && o.Filename != "" {
		return &ExitCodeError{Code: ExitUsage, Err: errors.New("--watch needs a cluster, not -f")}
	}
	if err := validateControllerLogs(o.ControllerLogs); err != nil {
		return err
	}
	return validateAt(o.At, o.Filename)
}

// Run diagnoses once, or on every change with --watch.
func (o *DiagnoseOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	var conn *gather.Connection
	if o.Filename == "" {
		var err error
		if conn, err = o.cluster(); err != nil {
			return err
		}
	}
	if o.Watch {
		return o.watch(ctx, conn)
	}
	d, err := o.report(ctx, conn)
	if err != nil {
		return err
	}
	if err := o.printReport(d); err != nil {
		return err
	}
	return o.failed(d.rep.Worst())
}

func (o *DiagnoseOptions) printReport(d *diagnosis) error {
	if o.Output == "markdown" {
		return render.Card(o.streams.Out, d.rep, d.plan, render.CardOptions{Command: "diagnose", PlanError: d.planErr})
	}
	return o.print(d.rep, func(w io.Writer, s render.Styles) error {
		return render.Human(w, d.rep, s, render.HumanOptions{Analysis: o.Analysis})
	})
}

// report reads the snapshot (the file, or the cluster through conn) and
// diagnoses it.
func (o *DiagnoseOptions) report(ctx context.Context, conn *gather.Connection) (*diagnosis, error) {
	var (
		snap   *snapshot.Snapshot
		source string
		err    error
	)
	switch {
	case conn == nil && o.At != "":
		snap, source, err = readFileAt(o.Filename, o.At, o.streams.In)
	case conn == nil:
		snap, source, err = o.readFile()
	default:
		opt := conn.Options
		opt.Namespace, opt.Name = o.Namespace, o.Name
		snap, err = gather.Rollout(ctx, conn.Dynamic, opt)
		source = "cluster " + opt.Context
	}
	if err != nil {
		return nil, failure(err)
	}
	view, err := rolloutView(snap, o.Namespace, o.Name)
	if err != nil {
		return nil, err
	}
	if conn != nil && !(o.ControllerLogs == "auto" && o.Watch) {
		// auto never reads it while watching: a redraw on every change
		// would read the log each time.
		addControllerLog(ctx, conn, snap, view, o.ControllerLogs, o.ControllerVersion)
	}
	return diagnoseView(view, o.ControllerVersion, source, o.history)
}

func validateControllerLogs(mode string) error {
	switch mode {
	case "auto", "always", "never":
		return nil
	}
	return usageErrorf("--controller-logs %q: use auto, always or never", mode)
}

// addControllerLog adds the controller's log about the Rollout to the
// snapshot's header, and to the view of it, when mode asks for it: always,
// or auto when the Rollout needs explaining (diagnose.WantsControllerLog,
// which reads only the view: a healthy Rollout costs no request more). A
// log that cannot be read is a line in the report, never a failure.
func addControllerLog(ctx context.Context, conn *gather.Connection, snap *snapshot.Snapshot, view *snapshot.View, mode, versionFlag string) {
	if mode == "never" || conn == nil {
		return
	}
	ro := view.Rollout
	want, why := diagnose.WantsControllerLog(view)
	if mode == "always" {
		want, why = true, "--controller-logs=always"
	}
	if !want {
		return
	}
	var l *snapshot.ControllerLog
	if len(view.Controllers) == 0 && versionFlag != "" {
		l = &snapshot.ControllerLog{Reason: why,
			Gap: "--controller-version skips reading the controller Deployment, so its pods are not known: diagnose without it to read the log"}
	} else {
		l = gather.ControllerLog(ctx, conn.Options.Kube, gather.LogRequest{
			Namespace: ro.Namespace, Name: ro.Name, Controllers: view.Controllers,
			Since: diagnose.RevisionStart(view), Now: view.Now, Reason: why,
		})
	}
	snap.Header.ControllerLog, view.Header.ControllerLog = l, l
}

// diagnosis is a report with the escape plan its findings' "escape now"
// comes from (nil, with planErr, when none could be planned).
type diagnosis struct {
	rep     *diagnose.Report
	plan    *escape.Plan
	planErr error
}

// rolloutView finds the Rollout in a snapshot and views it.
func rolloutView(snap *snapshot.Snapshot, ns, name string) (*snapshot.View, error) {
	ro, err := snap.FindRollout(ns, name)
	if err != nil {
		return nil, &ExitCodeError{Code: ExitError, Err: err}
	}
	view, err := snap.View(ro)
	if err != nil {
		return nil, &ExitCodeError{Code: ExitError, Err: fmt.Errorf("reading the snapshot: %w", err)}
	}
	return view, nil
}

// diagnoseView diagnoses a Rollout's view (with what a --watch saw before,
// hist, when there is one).
func diagnoseView(view *snapshot.View, versionFlag, source string, hist *diagnose.History) (*diagnosis, error) {
	gap := ""
	for _, g := range view.Header.Gaps {
		if g.Resource == "deployments.apps" {
			gap = g.String()
		}
	}
	cv, err := model.DetectVersionFor(versionFlag, view, gap)
	if err != nil {
		return nil, &ExitCodeError{Code: ExitUsage, Err: err}
	}
	d := &diagnosis{rep: diagnose.Run(view, cv, diagnose.Options{Source: source, History: hist})}
	// The way out a finding names comes from the same plan escape prints.
	d.plan, d.planErr = escape.Build(escape.Input{View: view, Controller: cv})
	if d.planErr == nil {
		escape.Annotate(d.rep, d.plan)
	}
	return d, nil
}

// watch redraws the diagnosis on every change until Ctrl-C. A read that
// fails for a cause a retry may cure (the network, an overloaded API
// server) is said on stderr in one line and retried with backoff; after
// the retry budget without a successful read, or on any other failure,
// the watch ends with the error (exit 2). stdout only ever gets reports.
func (o *DiagnoseOptions) watch(ctx context.Context, conn *gather.Connection) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	clear, _ := render.UseColor(o.Color, o.streams.Out)
	// Successive reads show what one cannot: writers of the same fields
	// taking turns (RD160, RD135 with the count and the window).
	o.history = diagnose.NewHistory()
	draw := func() error {
		d, err := o.report(ctx, conn)
		if err != nil || ctx.Err() != nil {
			return err
		}
		render.Redraw(o.streams.Out, clear, o.human(), time.Now())
		return o.printReport(d)
	}
	opt := o.net.watch
	opt.Watcher, opt.StartTimeout = conn.Watcher, conn.Options.Timeout
	opt.OnRetry = func(err error, wait, left time.Duration) {
		fmt.Fprintf(o.streams.ErrOut, "error: %v (retrying in %s, giving up in %s)\n", err, roundDuration(wait), roundDuration(left))
	}
	opt.OnError = func(err error) { fmt.Fprintf(o.streams.ErrOut, "warning: %v\n", err) }
	opt.OnEvent = func(u *unstructured.Unstructured) { o.history.ObserveEvent(u, time.Now()) }
	return failure(gather.Watch(ctx, conn.Dynamic, o.Namespace, o.Name, opt, draw))
}

// roundDuration is a wait as a person reads it: whole seconds from a
// second up, milliseconds below.
func roundDuration(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(time.Second)
	}
	return d.Round(time.Millisecond)
}
