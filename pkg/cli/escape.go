package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/escape"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/gather"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/render"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// EscapeOptions holds the escape command's inputs.
type EscapeOptions struct {
	DiagnoseOptions

	Do           string
	Yes          bool
	Force        bool
	DryRun       string
	ToRevision   int64
	ToStep       int32
	WatchTimeout time.Duration
	Interval     time.Duration

	// Seams for tests: the cluster client and whether we talk to a person.
	client      func() (dynamic.Interface, error)
	last        *snapshot.Snapshot
	interactive func() bool
	now         func() time.Time
}

// maxReplans bounds how often a write that met 409 Conflict is re-planned
// from a fresh read and sent again.
const maxReplans = 10

func newEscapeCmd(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	return newEscapeCommand(&EscapeOptions{DiagnoseOptions: DiagnoseOptions{flags: flags, streams: streams, FailOn: "none"}})
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
  kubectl rolloutdoctor escape -f incident.yaml            # plan only, offline`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Complete(args); err != nil {
				return err
			}
			if err := o.validate(c); err != nil {
				return err
			}
			return o.Run(c.Context())
		},
	}
	cmd.ValidArgsFunction = completeRollouts(o.flags)
	cmd.Flags().StringVarP(&o.Filename, "filename", "f", "", "plan from a snapshot file instead of the cluster (plan only; - for stdin)")
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "output format of the plan: json or yaml (default: human)")
	cmd.Flags().StringVar(&o.Color, "color", "auto", "colour: auto, always or never (NO_COLOR honoured)")
	cmd.Flags().StringVar(&o.ControllerVersion, "controller-version", "", "Argo Rollouts controller version to model (default: read from the controller Deployment's image)")
	cmd.Flags().StringVar(&o.ControllerNamespace, "controller-namespace", "argo-rollouts", "namespace to look for the argo-rollouts controller Deployment in first")
	cmd.Flags().StringVar(&o.Do, "do", "", "take this action: promote-full, undo, retry, abort, promote, skip, wait")
	cmd.Flags().BoolVar(&o.Yes, "yes", false, "confirm the write (for scripts and runbooks)")
	cmd.Flags().BoolVar(&o.Force, "force", false, "allow an action whose verdict is harmful")
	cmd.Flags().StringVar(&o.DryRun, "dry-run", "none", "none, client (print the requests) or server (send them with dryRun=All)")
	cmd.Flags().Int64Var(&o.ToRevision, "to-revision", 0, "undo: the revision to restore (default: the second-highest, as kubectl-argo-rollouts)")
	cmd.Flags().Int32Var(&o.ToStep, "to-step", -1, "skip: the step index to jump to (default: the end of the steps)")
	cmd.Flags().DurationVar(&o.WatchTimeout, "watch-timeout", 5*time.Minute, "after applying, watch the Rollout this long for the predicted outcome (0: do not watch)")
	cmd.Flags().DurationVar(&o.Interval, "interval", 2*time.Second, "how often the watch re-reads the Rollout")
	return cmd
}

func (o *EscapeOptions) validate(c *cobra.Command) error {
	switch o.Output {
	case "", "json", "yaml", "human":
	default:
		return &ExitCodeError{Code: ExitUsage, Err: fmt.Errorf("--output must be json or yaml, not %q", o.Output)}
	}
	switch o.DryRun {
	case "none", "client", "server":
	default:
		return &ExitCodeError{Code: ExitUsage, Err: fmt.Errorf("--dry-run must be none, client or server, not %q", o.DryRun)}
	}
	if o.Filename == "" && o.Name == "" {
		return &ExitCodeError{Code: ExitUsage, Err: errors.New("name a Rollout (kubectl rolloutdoctor escape NAME) or give -f FILE")}
	}
	if o.Filename != "" && o.Do != "" && o.Do != "wait" {
		return &ExitCodeError{Code: ExitUsage, Err: errors.New("-f plans from a file: it cannot apply --do (run against the cluster)")}
	}
	if o.Do != "" {
		if _, err := escape.ParseAction(o.Do); err != nil {
			return &ExitCodeError{Code: ExitUsage, Err: fmt.Errorf("--do: %w", err)}
		}
	}
	if _, err := render.UseColor(o.Color, o.streams.Out); err != nil {
		return &ExitCodeError{Code: ExitUsage, Err: err}
	}
	return nil
}

func (o *EscapeOptions) isInteractive() bool {
	if o.interactive != nil {
		return o.interactive()
	}
	in, ok1 := o.streams.In.(*os.File)
	out, ok2 := o.streams.Out.(*os.File)
	return ok1 && ok2 && term.IsTerminal(int(in.Fd())) && term.IsTerminal(int(out.Fd()))
}

func (o *EscapeOptions) dynamic() (dynamic.Interface, error) {
	if o.client != nil {
		return o.client()
	}
	cfg, err := o.flags.ToRESTConfig()
	if err != nil {
		return nil, &ExitCodeError{Code: ExitError, Err: fmt.Errorf("no usable kubeconfig: %w (use --kubeconfig or --context)", err)}
	}
	return dynamic.NewForConfig(cfg)
}

// planNow reads the Rollout's world and plans. The view is returned for the
// watch; the snapshot is kept so that a re-check can refresh it cheaply.
func (o *EscapeOptions) planNow(ctx context.Context, dc dynamic.Interface) (*escape.Plan, *snapshot.View, error) {
	return o.planFrom(ctx, dc, nil)
}

// replan re-reads only the Rollout and its ReplicaSets over the last
// snapshot and plans again.
func (o *EscapeOptions) replan(ctx context.Context, dc dynamic.Interface) (*escape.Plan, *snapshot.View, error) {
	if o.last == nil {
		return o.planNow(ctx, dc)
	}
	snap, err := gather.Refresh(ctx, dc, o.last, o.Namespace, o.Name)
	if err != nil {
		return nil, nil, &ExitCodeError{Code: ExitError, Err: err}
	}
	return o.planFrom(ctx, dc, snap)
}

func (o *EscapeOptions) planFrom(ctx context.Context, dc dynamic.Interface, snap *snapshot.Snapshot) (*escape.Plan, *snapshot.View, error) {
	var err error
	switch {
	case snap != nil:
	case o.Filename != "":
		snap, _, err = readSnapshotFile(o.Filename, o.streams.In)
	default:
		opt := gather.Options{Namespace: o.Namespace, Name: o.Name, ControllerNamespace: o.ControllerNamespace, ToolVersion: Version, SkipController: o.ControllerVersion != ""}
		if o.client == nil {
			if disc, derr := o.flags.ToDiscoveryClient(); derr == nil {
				opt.Mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
			}
		}
		snap, err = gather.Rollout(ctx, dc, opt)
		if err != nil {
			err = &ExitCodeError{Code: ExitError, Err: err}
		}
	}
	if err != nil {
		return nil, nil, err
	}
	o.last = snap
	ro, err := snap.FindRollout(o.Namespace, o.Name)
	if err != nil {
		return nil, nil, &ExitCodeError{Code: ExitError, Err: err}
	}
	view, err := snap.View(ro)
	if err != nil {
		return nil, nil, &ExitCodeError{Code: ExitError, Err: fmt.Errorf("reading the snapshot: %w", err)}
	}
	gap := ""
	for _, g := range snap.Header.Gaps {
		if g.Resource == "deployments.apps" {
			gap = g.String()
		}
	}
	cv, err := model.DetectVersionFor(o.ControllerVersion, view, gap)
	if err != nil {
		return nil, nil, &ExitCodeError{Code: ExitUsage, Err: err}
	}
	in := escape.Input{View: view, Controller: cv, ToRevision: o.ToRevision}
	if o.ToStep >= 0 {
		s := o.ToStep
		in.ToStep = &s
	}
	p, err := escape.Build(in)
	if err != nil {
		return nil, nil, &ExitCodeError{Code: ExitError, Err: err}
	}
	return p, view, nil
}

func (o *EscapeOptions) styles() render.Styles {
	color, _ := render.UseColor(o.Color, o.streams.Out)
	return render.NewStyles(o.streams.Out, color)
}

// Run plans, then (with --do or in guided mode) confirms, applies and watches.
func (o *EscapeOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	var dc dynamic.Interface
	if o.Filename == "" {
		var err error
		if dc, err = o.dynamic(); err != nil {
			return err
		}
	}
	p, view, err := o.planNow(ctx, dc)
	if err != nil {
		return err
	}
	guided := o.Do == "" && o.Filename == "" && o.Output == "" && o.isInteractive()
	if o.Do == "" && !guided {
		return o.printPlan(p)
	}
	if err := o.printPlan(p); err != nil {
		return err
	}
	var action escape.Action
	in := bufio.NewReader(o.streams.In)
	if guided {
		a, ok, err := o.choose(in, p)
		if err != nil || !ok {
			return err
		}
		action = a
	} else {
		action, _ = escape.ParseAction(o.Do)
	}
	opt, _ := p.Option(action)
	if err := o.allowed(opt); err != nil {
		return err
	}
	if action == escape.Wait || len(opt.Requests) == 0 {
		fmt.Fprintf(o.streams.ErrOut, "%s sends nothing: %s\n", action, opt.Why)
		return nil
	}
	if o.DryRun == "client" {
		return o.printRequests(p, opt)
	}
	if o.DryRun == "none" && !o.Yes {
		if !o.isInteractive() {
			return &ExitCodeError{Code: ExitUsage, Err: fmt.Errorf("nothing written: %s changes the cluster; add --yes, or run in a terminal to confirm", action)}
		}
		if guided || o.Output == "" {
			o.showDetail(p, opt)
		}
		if !o.confirm(in, p) {
			fmt.Fprintln(o.streams.ErrOut, "cancelled: nothing was written")
			return nil
		}
		// The plan must still hold for the Rollout as it is now: re-read it
		// and re-plan; go on only if this action's requests are unchanged.
		fresh, freshView, err := o.replan(ctx, dc)
		if err != nil {
			return err
		}
		if reason := samePlan(p, fresh, action); reason != "" {
			return &ExitCodeError{Code: ExitFindings, Err: fmt.Errorf("the Rollout changed while you were deciding (%s): nothing was written; re-run to see the new plan", reason)}
		}
		p, view = fresh, freshView
		opt, _ = p.Option(action)
	}
	aopt := escape.ApplyOptions{DryRunServer: o.DryRun == "server"}
	if view.WorkloadRef != nil {
		aopt.WorkloadResourceVersion = view.WorkloadRef.ResourceVersion
	}
	sent, err := escape.Apply(ctx, dc, p, opt, aopt)
	// During a ramp the controller rewrites the Rollout's status every few
	// hundred milliseconds, so a write planned a moment ago can meet 409.
	// Nothing was written then; read the Rollout again, plan again, and
	// write only if this action's verdict and requests are unchanged — each
	// write carries the resourceVersion of the state it was planned from.
	for attempt := 1; attempt <= maxReplans && err != nil; attempt++ {
		var ae *escape.ApplyError
		if !errors.As(err, &ae) || !ae.Conflict || len(ae.Partial) > 0 {
			break
		}
		fresh, freshView, perr := o.replan(ctx, dc)
		if perr != nil {
			return perr
		}
		if reason := samePlan(p, fresh, action); reason != "" {
			return &ExitCodeError{Code: ExitError, Err: fmt.Errorf("the Rollout changed since it was read and %s: nothing was written; re-run to see the new plan", reason)}
		}
		fmt.Fprintf(o.streams.ErrOut, "the Rollout changed since it was read (resourceVersion %s → %s); re-planned: %s is still %s with the same requests\n",
			p.ResourceVersion, fresh.ResourceVersion, action, opt.Verdict)
		p, view = fresh, freshView
		opt, _ = p.Option(action)
		if view.WorkloadRef != nil {
			aopt.WorkloadResourceVersion = view.WorkloadRef.ResourceVersion
		}
		sent, err = escape.Apply(ctx, dc, p, opt, aopt)
	}
	if err != nil {
		return &ExitCodeError{Code: ExitError, Err: err}
	}
	if o.DryRun == "server" {
		fmt.Fprintf(o.streams.ErrOut, "server dry run: the API server accepted %d request(s) of %s; nothing was persisted\n", len(sent), action)
		if o.Output != "" {
			return o.emit(map[string]interface{}{"apiVersion": escape.PlanAPIVersion, "kind": "EscapeDryRun", "action": action, "sent": sent})
		}
		return nil
	}
	for _, s := range sent {
		fmt.Fprintf(o.streams.ErrOut, "applied %s: %s %s%s %s\n", action, strings.ToLower(s.Kind), s.Name, subresource(s.Subresource), string(s.Body))
	}
	if o.WatchTimeout <= 0 {
		return nil
	}
	return o.watchOutcome(ctx, dc, p, opt)
}

func subresource(s string) string {
	if s == "" {
		return ""
	}
	return "/" + s
}

func (o *EscapeOptions) emit(v interface{}) error {
	if o.Output == "yaml" {
		return render.YAML(o.streams.Out, v)
	}
	return render.JSON(o.streams.Out, v)
}

func (o *EscapeOptions) printPlan(p *escape.Plan) error {
	switch o.Output {
	case "json", "yaml":
		return o.emit(p)
	}
	return render.Plan(o.streams.Out, p, o.styles())
}

func (o *EscapeOptions) printRequests(p *escape.Plan, opt *escape.Option) error {
	type req struct {
		escape.Request
		SentBody string `json:"sentBody"`
	}
	var out []req
	for _, r := range opt.Requests {
		rv := p.ResourceVersion
		b, err := escape.WithPrecondition(r.PatchType, r.Body, rv)
		if err != nil {
			return err
		}
		out = append(out, req{Request: r, SentBody: string(b)})
	}
	if o.Output != "" {
		return o.emit(map[string]interface{}{"apiVersion": escape.PlanAPIVersion, "kind": "EscapeRequests", "action": opt.Action, "requests": out})
	}
	fmt.Fprintf(o.streams.Out, "client dry run of %s (nothing sent):\n", opt.Action)
	for _, r := range out {
		fmt.Fprintf(o.streams.Out, "  PATCH %s %s/%s%s (%s)\n    %s\n", strings.ToLower(r.Kind), p.Namespace, r.Name, subresource(r.Subresource), r.PatchType, r.SentBody)
	}
	return nil
}

// allowed refuses actions that must not run without more from the user.
func (o *EscapeOptions) allowed(opt *escape.Option) error {
	switch opt.Verdict {
	case escape.NotApplicable:
		return &ExitCodeError{Code: ExitUsage, Err: fmt.Errorf("%s does not apply here: %s", opt.Action, opt.Why)}
	case escape.Harmful:
		if !o.Force && opt.Action != escape.Wait {
			return &ExitCodeError{Code: ExitUsage, Err: fmt.Errorf("%s is harmful here (%s): nothing written; add --force to do it anyway", opt.Action, opt.Why)}
		}
	}
	return nil
}

func (o *EscapeOptions) choose(in *bufio.Reader, p *escape.Plan) (escape.Action, bool, error) {
	for {
		fmt.Fprintf(o.streams.Out, "\nChoose an action [1-%d, Enter for %s, q to quit]: ", len(p.Options), p.Recommended)
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
		fmt.Fprintf(o.streams.Out, "not an action: %q\n", line)
	}
}

func (o *EscapeOptions) showDetail(p *escape.Plan, opt *escape.Option) {
	s := o.styles()
	fmt.Fprintf(o.streams.Out, "\n%s %s — %s\n", s.Title.Render(string(opt.Action)), render.Verdict(s, opt.Verdict), opt.Why)
	fmt.Fprintf(o.streams.Out, "  predicted: %s\n", opt.Effect.Summary)
	for _, r := range opt.Requests {
		b, _ := escape.WithPrecondition(r.PatchType, r.Body, p.ResourceVersion)
		fmt.Fprintf(o.streams.Out, "  PATCH %s %s/%s%s (%s)\n    %s\n", strings.ToLower(r.Kind), p.Namespace, r.Name, subresource(r.Subresource), r.PatchType, b)
	}
	if p.GitOps != nil && opt.Action == escape.Undo {
		fmt.Fprintf(o.streams.Out, "  %s %s\n", s.Warn.Render("GitOps:"), p.GitOps.Notes[0])
	}
}

func (o *EscapeOptions) confirm(in *bufio.Reader, p *escape.Plan) bool {
	fmt.Fprintf(o.streams.Out, "Type the Rollout's name (%s) to apply, anything else to cancel: ", p.Name)
	line, _ := in.ReadString('\n')
	return strings.TrimSpace(line) == p.Name
}

// samePlan says why an action's plan changed between two reads ("" if not):
// its verdict, its requests, or where it predicts the Rollout ends (which
// ReplicaSet stable, the final weight and phase, the abort flag, the worst
// exposure). Pod counts moving during a ramp do not count as a change.
func samePlan(a, b *escape.Plan, action escape.Action) string {
	oa, _ := a.Option(action)
	ob, _ := b.Option(action)
	if oa.Verdict != ob.Verdict {
		return fmt.Sprintf("%s is now %s, was %s", action, ob.Verdict, oa.Verdict)
	}
	if len(oa.Requests) != len(ob.Requests) {
		return "its requests changed"
	}
	for i := range oa.Requests {
		if string(oa.Requests[i].Body) != string(ob.Requests[i].Body) || oa.Requests[i].Subresource != ob.Requests[i].Subresource {
			return "its requests changed"
		}
	}
	ea, eb := oa.Effect, ob.Effect
	if ea.FinalStable != eb.FinalStable || ea.FinalWeight != eb.FinalWeight || ea.Phase != eb.Phase || ea.FinalAbort != eb.FinalAbort {
		return fmt.Sprintf("its predicted outcome changed (now: %s)", eb.Summary)
	}
	if (ea.Exposure == nil) != (eb.Exposure == nil) {
		return fmt.Sprintf("its predicted exposure changed (now: %s)", eb.Summary)
	}
	return ""
}

// watchOutcome re-reads the Rollout until what the controller did matches
// the prediction's end state, or the timeout passes, printing each change.
func (o *EscapeOptions) watchOutcome(ctx context.Context, dc dynamic.Interface, p *escape.Plan, opt *escape.Option) error {
	now := time.Now
	if o.now != nil {
		now = o.now
	}
	want := opt.Effect
	deadline := now().Add(o.WatchTimeout)
	// With -o json|yaml stdout carries only the plan document.
	out := o.streams.Out
	if o.Output != "" {
		out = o.streams.ErrOut
	}
	fmt.Fprintf(out, "\nwatching for: %s\n", want.Summary)
	last := ""
	for {
		snap, err := gather.Rollout(ctx, dc, gather.Options{Namespace: p.Namespace, Name: p.Name, SkipController: true})
		if err != nil {
			return &ExitCodeError{Code: ExitError, Err: fmt.Errorf("watching: %w (the action was applied; check with kubectl rolloutdoctor diagnose %s -n %s)", err, p.Name, p.Namespace)}
		}
		rep, err := diagnoseSnapshot(snap, p.Namespace, p.Name, string(p.Controller.Assumed), "cluster")
		if err != nil {
			return err
		}
		line, stable := observedLine(rep)
		if line != last {
			fmt.Fprintf(out, "%s  %s\n", now().Format("15:04:05"), line)
			last = line
		}
		if converged(rep, stable, want) {
			fmt.Fprintf(out, "outcome: as predicted — %s\n", line)
			return nil
		}
		if now().After(deadline) {
			fmt.Fprintf(out, "outcome: not reached within %s. Predicted: %s. Observed: %s\n", o.WatchTimeout, want.Summary, line)
			return &ExitCodeError{Code: ExitFindings}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(o.Interval):
		}
	}
}

func observedLine(rep *diagnose.Report) (string, string) {
	stable := ""
	for _, s := range rep.Sets {
		if s.Hash == rep.State.StableHash {
			stable = s.Name
		}
	}
	w := ""
	if t := rep.Traffic; t != nil {
		w = fmt.Sprintf("weight %d%% canary (%d available) / stable %d available; ", t.CanaryWeight, t.CanaryAvailable, t.StableAvailable)
	}
	return fmt.Sprintf("%sstep %d/%d, phase %s, aborted %v, stable %s", w, rep.State.StepIndex, rep.State.StepCount, rep.State.Phase, rep.State.Aborted, stable), stable
}

func converged(rep *diagnose.Report, stable string, want escape.Effect) bool {
	if stable != want.FinalStable || rep.State.Aborted != want.FinalAbort || rep.State.Phase != want.Phase {
		return false
	}
	if rep.Traffic != nil && rep.Traffic.CanaryWeight != want.FinalWeight {
		return false
	}
	for _, s := range rep.Sets {
		if s.Spec != s.Available {
			return false
		}
	}
	return true
}
