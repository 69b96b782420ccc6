package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/escape"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/render"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// EscapeOptions holds the escape command's inputs.
type EscapeOptions struct {
	CommonOptions
	Name         string
	Do           string
	Yes          bool
	Force        bool
	DryRun       string
	ToRevision   int64
	ToStep       int32
	WatchTimeout time.Duration
	Interval     time.Duration

	// At is the moment of a record (-f) to plan from ("" its end).
	At string

	// Seams for tests: whether we talk to a person, and the clock.
	interactive func() bool
	now         func() time.Time
}

// NewEscapeOptions makes the escape command's options with their defaults.
func NewEscapeOptions(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *EscapeOptions {
	o := &EscapeOptions{CommonOptions: newCommon(flags, streams, "json", "yaml", "markdown"),
		DryRun: "none", ToStep: -1, WatchTimeout: 5 * time.Minute, Interval: 2 * time.Second}
	o.interactive = func() bool { return isTerminal(o.streams.In) && isTerminal(o.streams.Out) }
	return o
}

func newEscapeCommand(o *EscapeOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "escape [rollout/]NAME",
		Short: "Which way out is safe now (promote --full, undo, retry, abort, promote, skip, wait), and a guided way to take it",
		Long: `escape plans every way out of the Rollout's current state with the controller model for the
running controller version: the verdict (safe, safe with a cost, no effect, harmful), the predicted
effect, the exact requests kubectl-argo-rollouts would send, and the controller source behind it.

In a terminal, without --do, it then lets you pick an action, shows the patch, asks you to type the
Rollout's name, applies it and watches the Rollout until it converges. Nothing is written without
--yes or that typed confirmation; harmful actions also need --force. Every write carries the
Rollout's resourceVersion, so a Rollout that changed since it was read is never patched.`,
		Example: `  kubectl rolloutdoctor escape checkout-api -n shop
  kubectl rolloutdoctor escape checkout-api --do undo --yes
  kubectl rolloutdoctor escape checkout-api --do promote-full --dry-run=server -o yaml
  kubectl rolloutdoctor escape -f incident.yaml            # plan only, offline
  kubectl rolloutdoctor escape -f incident.rec --at 03:14:10  # the ways out at a moment of a record`,
		Args:              usageArgs(cobra.MaximumNArgs(1)),
		ValidArgsFunction: o.completeRollouts,
		RunE:              runE(o),
	}
	o.addFilenameFlag(cmd, "plan from the snapshot in `FILE` instead of the cluster (plan only; - for stdin)")
	o.addOutputFlags(cmd, "output format of the plan: json, yaml, or markdown (an incident card with every way out) (default: human)")
	o.addControllerFlags(cmd, usageControllerVersion, true)
	addAtFlag(cmd, &o.At)
	f := cmd.Flags()
	f.StringVar(&o.Do, "do", o.Do, "take this action: promote-full, undo, retry, abort, promote, skip, wait")
	f.BoolVar(&o.Yes, "yes", o.Yes, "confirm the write (for scripts and runbooks)")
	f.BoolVar(&o.Force, "force", o.Force, "allow an action whose verdict is harmful")
	f.StringVar(&o.DryRun, "dry-run", o.DryRun, "none, client (print the requests) or server (send them with dryRun=All)")
	f.Int64Var(&o.ToRevision, "to-revision", o.ToRevision, "undo: the revision to restore (default: the stable while an update is under way, otherwise the second-highest, as kubectl-argo-rollouts)")
	f.Int32Var(&o.ToStep, "to-step", o.ToStep, "skip: the step index to jump to (default: the end of the steps)")
	f.DurationVar(&o.WatchTimeout, "watch-timeout", o.WatchTimeout, "after applying, watch the Rollout this long for the predicted outcome (0: do not watch)")
	f.DurationVar(&o.Interval, "interval", o.Interval, "how often the watch re-reads the Rollout")
	return cmd
}

// Complete takes the Rollout's name and resolves the namespace.
func (o *EscapeOptions) Complete(args []string) error {
	return o.completeRolloutName(args, &o.Name)
}

// Validate checks the flags and their combinations.
func (o *EscapeOptions) Validate() error {
	if err := o.validate(); err != nil {
		return err
	}
	switch o.DryRun {
	case "none", "client", "server":
	default:
		return usageErrorf("--dry-run must be none, client or server, not %q", o.DryRun)
	}
	if o.Filename == "" && o.Name == "" {
		return &ExitCodeError{Code: ExitUsage, Err: errors.New("name a Rollout (kubectl rolloutdoctor escape NAME) or give -f FILE")}
	}
	if o.Filename != "" && o.Do != "" && o.Do != "wait" {
		return &ExitCodeError{Code: ExitUsage, Err: errors.New("-f plans from a file: it cannot apply --do (run against the cluster)")}
	}
	if err := validateAt(o.At, o.Filename); err != nil {
		return err
	}
	if o.Output == "markdown" && (o.Do != "" || o.DryRun != "none") {
		return usageErrorf("-o markdown prints the plan as an incident card: it does not go with --do or --dry-run (use -o json or yaml)")
	}
	if o.Do != "" {
		if _, err := escape.ParseAction(o.Do); err != nil {
			return usageErrorf("--do: %w", err)
		}
	}
	return nil
}

// Run plans, then (with --do, or guided in a terminal) picks an action,
// confirms it, applies it and watches for the predicted outcome.
func (o *EscapeOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	pl, p, view, err := o.plan(ctx)
	if err != nil {
		return err
	}
	guided := o.Do == "" && o.Filename == "" && o.human() && o.interactive()
	if err := o.printPlan(p, view); err != nil {
		return err
	}
	if o.Do == "" && !guided {
		return nil // the plan is the answer
	}
	in := bufio.NewReader(o.streams.In)
	action, ok, err := o.pick(in, p, guided)
	if err != nil || !ok {
		return err
	}
	opt, _ := p.Option(action)
	if err := o.allowed(opt); err != nil {
		return err
	}
	if action == escape.Wait || len(opt.Requests) == 0 {
		render.SendsNothing(o.streams.ErrOut, opt)
		return nil
	}
	if o.DryRun == "client" {
		return o.printRequests(p, opt)
	}
	// Without --yes a person confirms; the plan is then re-checked against
	// the Rollout as it is after they took their time.
	recheck := o.DryRun == "none" && !o.Yes
	if recheck {
		if ok, err := o.confirm(in, p, opt, guided); err != nil || !ok {
			return err
		}
	}
	return o.apply(ctx, pl, p, view, action, recheck)
}

// plan reads the file or the cluster and plans. The planner is nil for a
// file: a plan from a file is never applied.
func (o *EscapeOptions) plan(ctx context.Context) (*escape.Planner, *escape.Plan, *snapshot.View, error) {
	t := escape.Target{Namespace: o.Namespace, Name: o.Name, ControllerVersion: o.ControllerVersion, ToRevision: o.ToRevision}
	if o.ToStep >= 0 {
		s := o.ToStep
		t.ToStep = &s
	}
	if o.Filename != "" {
		read := func() (*snapshot.Snapshot, string, error) { return o.readFile() }
		if o.At != "" {
			read = func() (*snapshot.Snapshot, string, error) { return readFileAt(o.Filename, o.At, o.streams.In) }
		}
		snap, _, err := read()
		if err != nil {
			return nil, nil, nil, err
		}
		p, view, err := escape.PlanSnapshot(snap, t)
		return nil, p, view, failure(err)
	}
	conn, err := o.cluster()
	if err != nil {
		return nil, nil, nil, err
	}
	pl := &escape.Planner{Client: conn.Dynamic, Gather: conn.Options, Target: t}
	p, view, err := pl.Plan(ctx)
	return pl, p, view, failure(err)
}

func (o *EscapeOptions) printPlan(p *escape.Plan, view *snapshot.View) error {
	if o.Output == "markdown" {
		// The card leads with the state and the worst finding, as
		// diagnose's does, then every way out.
		source := "file " + o.Filename
		if o.Filename == "" {
			source = "cluster " + view.Header.Context
		}
		rep := diagnose.Run(view, p.Controller, diagnose.Options{Source: source})
		escape.Annotate(rep, p)
		return render.Card(o.streams.Out, rep, p, render.CardOptions{Command: "escape", AllOptions: true})
	}
	return o.print(p, func(w io.Writer, s render.Styles) error { return render.Plan(w, p, s) })
}

// pick is the action to take: --do's, or the one a person chooses.
func (o *EscapeOptions) pick(in *bufio.Reader, p *escape.Plan, guided bool) (escape.Action, bool, error) {
	if guided {
		return o.choose(in, p)
	}
	a, err := escape.ParseAction(o.Do)
	return a, err == nil, err
}

// choose asks until the answer names an action (by number or name), the
// recommended one on Enter; q or end of input quits.
func (o *EscapeOptions) choose(in *bufio.Reader, p *escape.Plan) (escape.Action, bool, error) {
	for {
		render.ChoosePrompt(o.streams.Out, p)
		line, err := in.ReadString('\n')
		if err != nil && line == "" {
			if err == io.EOF {
				fmt.Fprintln(o.streams.Out)
				return "", false, nil
			}
			return "", false, err
		}
		line = strings.TrimSpace(line)
		switch {
		case line == "q" || line == "quit":
			return "", false, nil
		case line == "":
			return p.Recommended, true, nil
		}
		var n int
		if _, err := fmt.Sscanf(line, "%d", &n); err == nil && n >= 1 && n <= len(p.Options) {
			return p.Options[n-1].Action, true, nil
		}
		if a, err := escape.ParseAction(line); err == nil {
			return a, true, nil
		}
		render.NotAnAction(o.streams.Out, line)
	}
}

// allowed refuses actions that must not run without more from the user.
func (o *EscapeOptions) allowed(opt *escape.Option) error {
	switch opt.Verdict {
	case escape.NotApplicable:
		return usageErrorf("%s does not apply here: %s", opt.Action, opt.Why)
	case escape.Harmful:
		if !o.Force && opt.Action != escape.Wait {
			return usageErrorf("%s is harmful here (%s): nothing written; add --force to do it anyway", opt.Action, opt.Why)
		}
	}
	return nil
}

// confirm shows what will be sent and asks for the Rollout's name. Outside
// a terminal there is nobody to ask: nothing is written without --yes.
func (o *EscapeOptions) confirm(in *bufio.Reader, p *escape.Plan, opt *escape.Option, guided bool) (bool, error) {
	if !o.interactive() {
		return false, usageErrorf("nothing written: %s changes the cluster; add --yes, or run in a terminal to confirm", opt.Action)
	}
	if guided || o.human() {
		render.OptionDetail(o.streams.Out, p, opt, o.styles())
	}
	render.ConfirmPrompt(o.streams.Out, p)
	line, _ := in.ReadString('\n')
	if strings.TrimSpace(line) != p.Name {
		render.Cancelled(o.streams.ErrOut)
		return false, nil
	}
	return true, nil
}

// printRequests is the client-side dry run: the requests, sent nowhere.
func (o *EscapeOptions) printRequests(p *escape.Plan, opt *escape.Option) error {
	reqs, err := escape.Prepare(p, opt)
	if err != nil {
		return err
	}
	if o.document() {
		return o.print(map[string]interface{}{"apiVersion": escape.PlanAPIVersion, "kind": "EscapeRequests", "action": opt.Action, "requests": reqs}, nil)
	}
	render.Requests(o.streams.Out, p, opt.Action, reqs)
	return nil
}

// apply writes (re-planning on 409), says what was sent, and watches.
func (o *EscapeOptions) apply(ctx context.Context, pl *escape.Planner, p *escape.Plan, view *snapshot.View, action escape.Action, recheck bool) error {
	applied, err := escape.ApplyWithReplan(ctx, pl, p, view, action, escape.ReplanOptions{
		DryRunServer: o.DryRun == "server",
		Recheck:      recheck,
		OnReplan:     func(from, to *escape.Plan, opt *escape.Option) { render.Replanned(o.streams.ErrOut, from, to, opt) },
	})
	var changed *escape.ChangedError
	if errors.As(err, &changed) && changed.BeforeWrite {
		// The person approved a plan that no longer holds: like a finding,
		// not a failure of the tool.
		return &ExitCodeError{Code: ExitFindings, Err: err}
	}
	if err != nil {
		return failure(err)
	}
	if o.DryRun == "server" {
		render.ServerDryRun(o.streams.ErrOut, action, applied.Sent)
		if o.document() {
			return o.print(map[string]interface{}{"apiVersion": escape.PlanAPIVersion, "kind": "EscapeDryRun", "action": action, "sent": applied.Sent}, nil)
		}
		return nil
	}
	render.Applied(o.streams.ErrOut, action, applied.Sent)
	if p.ControllerNotRunning {
		// The patch is in place and takes effect when a controller runs;
		// say so before the watch waits for an outcome that cannot come.
		fmt.Fprintln(o.streams.ErrOut, "warning: the controller that reconciles this Rollout is not running (RD166): the change takes effect when it runs again")
	}
	if o.WatchTimeout <= 0 {
		return nil
	}
	return o.watchOutcome(ctx, pl.Client, applied)
}

// watchOutcome follows the Rollout until it reaches the predicted end
// state (exit 0) or the timeout passes (exit 1).
func (o *EscapeOptions) watchOutcome(ctx context.Context, dc dynamic.Interface, a *escape.Applied) error {
	// With -o json|yaml stdout carries only the plan document.
	out := o.streams.Out
	if o.document() {
		out = o.streams.ErrOut
	}
	want := a.Option.Effect
	render.WatchingFor(out, want)
	res, err := escape.WatchOutcome(ctx, dc, a.Plan, a.Option, escape.WatchOptions{
		Timeout: o.WatchTimeout, Interval: o.Interval, Now: o.now,
		OnChange: func(obs escape.Observation) { render.Observed(out, obs) },
	})
	if err != nil {
		return failure(err)
	}
	render.Outcome(out, res, want, o.WatchTimeout)
	if !res.Reached {
		return &ExitCodeError{Code: ExitFindings}
	}
	return nil
}
