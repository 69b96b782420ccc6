package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/gather"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/render"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// PodsOptions holds the pods command's inputs.
type PodsOptions struct {
	DiagnoseOptions
	Kind       string
	P99        time.Duration
	LBInterval time.Duration
	LBFall     int
	Margin     time.Duration
}

func newPodsCmd(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &PodsOptions{DiagnoseOptions: DiagnoseOptions{flags: flags, streams: streams}}
	cmd := &cobra.Command{
		Use:   "pods [rollout/|deployment/]NAME | -f FILE",
		Short: "Readiness and termination of a Rollout's or Deployment's pods along the traffic path, with the grace-period arithmetic",
		Example: `  kubectl rolloutdoctor pods checkout-api -n shop
  kubectl rolloutdoctor pods deployment/web -n shop
  kubectl rolloutdoctor pods checkout-api --p99 40s --lb-interval 2s --lb-fall 2
  kubectl rolloutdoctor pods -f snapshot.yaml -o json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.complete(args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.run(c.Context())
		},
	}
	o.addFlags(cmd)
	cmd.ValidArgsFunction = completeRollouts(flags)
	cmd.Flags().DurationVar(&o.P99, "p99", 0, "long-request p99 (e.g. 40s), measured from access logs or APM: DRAIN_TIMEOUT = p99 × 1.2")
	cmd.Flags().DurationVar(&o.LBInterval, "lb-interval", 0, "external load balancer health-check interval (e.g. 2s)")
	cmd.Flags().IntVar(&o.LBFall, "lb-fall", 0, "failed health checks before the load balancer marks a backend down")
	cmd.Flags().DurationVar(&o.Margin, "margin", 30*time.Second, "margin added to the grace period (kubelet SIGTERM delay, measurement error)")
	return cmd
}

func (o *PodsOptions) complete(args []string) error {
	var name string
	if len(args) == 1 {
		kind, n, err := snapshot.ParseWorkloadArg(args[0])
		if err != nil {
			return &ExitCodeError{Code: ExitUsage, Err: err}
		}
		o.Kind, name = kind, n
	}
	if err := o.DiagnoseOptions.Complete(nil); err != nil {
		return err
	}
	o.Name = name
	if o.P99 < 0 || o.LBInterval < 0 || o.LBFall < 0 || o.Margin < 0 {
		return &ExitCodeError{Code: ExitUsage, Err: errors.New("--p99, --lb-interval, --lb-fall and --margin must not be negative")}
	}
	if (o.LBInterval > 0) != (o.LBFall > 0) {
		return &ExitCodeError{Code: ExitUsage, Err: errors.New("give --lb-interval and --lb-fall together (LB_BUFFER = interval × fall)")}
	}
	return nil
}

func (o *PodsOptions) grace() diagnose.GraceInput {
	return diagnose.GraceInput{P99: o.P99, LBInterval: o.LBInterval, LBFall: o.LBFall, Margin: o.Margin}
}

func (o *PodsOptions) run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if o.Watch {
		return &ExitCodeError{Code: ExitUsage, Err: errors.New("pods has no --watch")}
	}
	snap, source, err := o.podsSnapshot(ctx)
	if err != nil {
		return err
	}
	rep, err := podsReport(snap, o.Kind, o.Namespace, o.Name, o.ControllerVersion, source, o.grace())
	if err != nil {
		return err
	}
	switch o.Output {
	case "json":
		err = render.JSON(o.streams.Out, rep)
	case "yaml":
		err = render.YAML(o.streams.Out, rep)
	default:
		color, _ := render.UseColor(o.Color, o.streams.Out)
		err = render.Pods(o.streams.Out, rep, render.NewStyles(o.streams.Out, color))
	}
	if err != nil {
		return err
	}
	if o.failOn > 0 && rep.Worst() >= o.failOn {
		return &ExitCodeError{Code: ExitFindings}
	}
	return nil
}

// podsReport finds the workload in a snapshot and checks its pods.
func podsReport(snap *snapshot.Snapshot, kind, ns, name, versionFlag, source string, g diagnose.GraceInput) (*diagnose.PodReport, error) {
	if kind == "" && name == "" && snap.Header.TargetKind != "" {
		kind = snap.Header.TargetKind
	}
	w, err := snap.FindWorkload(kind, ns, name)
	if err != nil {
		return nil, &ExitCodeError{Code: ExitError, Err: err}
	}
	var cv model.ControllerVersion
	if w.Kind == snapshot.KindRollout {
		v, err := snap.View(w.Rollout)
		if err != nil {
			return nil, &ExitCodeError{Code: ExitError, Err: fmt.Errorf("reading the snapshot: %w", err)}
		}
		if cv, err = model.DetectVersionFor(versionFlag, v, ""); err != nil {
			return nil, &ExitCodeError{Code: ExitUsage, Err: err}
		}
	}
	return diagnose.RunPods(w, cv, diagnose.PodOptions{Source: source, Grace: g}), nil
}

// podsSnapshot reads the file, or the cluster: a Rollout when asked for one
// or when one exists by that name, else a Deployment.
func (o *PodsOptions) podsSnapshot(ctx context.Context) (*snapshot.Snapshot, string, error) {
	if o.Filename != "" {
		return readSnapshotFile(o.Filename, o.streams.In)
	}
	dc, opt, err := connect(o.flags)
	if err != nil {
		return nil, "", err
	}
	opt.Namespace, opt.Name, opt.ControllerNamespace, opt.SkipController = o.Namespace, o.Name, o.ControllerNamespace, o.ControllerVersion != ""
	source := "cluster " + opt.Context
	if o.Kind != snapshot.KindDeployment {
		snap, err := gather.Rollout(ctx, dc, opt)
		if err == nil {
			return snap, source, nil
		}
		if o.Kind == snapshot.KindRollout || !absent(err) {
			return nil, "", &ExitCodeError{Code: ExitError, Err: err}
		}
	}
	snap, err := gather.Deployment(ctx, dc, opt)
	if err != nil {
		if o.Kind == "" && absent(err) {
			err = fmt.Errorf("no Rollout or Deployment %q in namespace %q (check -n/--namespace)", o.Name, o.Namespace)
		}
		return nil, "", &ExitCodeError{Code: ExitError, Err: err}
	}
	return snap, source, nil
}

// absent tells "there is no such object" (look for something else) from
// every other failure (report it).
func absent(err error) bool {
	var ge *gather.Error
	return errors.As(err, &ge) && ge.Absent
}
