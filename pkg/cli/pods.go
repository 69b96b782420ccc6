package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	CommonOptions
	// Kind is snapshot.KindRollout or KindDeployment when the argument
	// said so; "" means a Rollout if one exists, else a Deployment.
	Kind string
	Name string
	// The grace-period calculator's measurements.
	P99        time.Duration
	LBInterval time.Duration
	LBFall     int
	Margin     time.Duration
}

// NewPodsOptions makes the pods command's options with their defaults.
func NewPodsOptions(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *PodsOptions {
	o := &PodsOptions{CommonOptions: newCommon(flags, streams, "json", "yaml"), Margin: 30 * time.Second}
	// As diagnose: exit 1 means a critical finding, not hygiene.
	o.FailOn = "critical"
	return o
}

func newPodsCommand(o *PodsOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pods [rollout/|deployment/]NAME | -f FILE",
		Short: "Readiness and termination of a Rollout's or Deployment's pods along the traffic path, with the grace-period arithmetic",
		Example: `  kubectl rolloutdoctor pods checkout-api -n shop
  kubectl rolloutdoctor pods deployment/web -n shop
  kubectl rolloutdoctor pods checkout-api --p99 40s --lb-interval 2s --lb-fall 2
  kubectl rolloutdoctor pods -f snapshot.yaml -o json`,
		Args:              usageArgs(cobra.MaximumNArgs(1)),
		ValidArgsFunction: o.completeRollouts,
		RunE:              runE(o),
	}
	o.addFilenameFlag(cmd, "check the pods in the snapshot or kubectl get -o yaml output in `FILE` instead of the cluster (- for stdin)")
	o.addOutputFlags(cmd, "output format: json or yaml (default: human)")
	o.addFailOnFlag(cmd, "exit 1 when a finding is at least this severe: info, warning, critical or none (critical: something is on fire now; warnings are hygiene)")
	o.addControllerFlags(cmd, usageControllerVersion, true)
	cmd.Flags().DurationVar(&o.P99, "p99", o.P99, "long-request p99 (e.g. 40s), measured from access logs or APM: DRAIN_TIMEOUT = p99 × 1.2")
	cmd.Flags().DurationVar(&o.LBInterval, "lb-interval", o.LBInterval, "external load balancer health-check interval (e.g. 2s)")
	cmd.Flags().IntVar(&o.LBFall, "lb-fall", o.LBFall, "failed health checks before the load balancer marks a backend down")
	cmd.Flags().DurationVar(&o.Margin, "margin", o.Margin, "margin added to the grace period (kubelet SIGTERM delay, measurement error)")
	return cmd
}

// Complete takes the workload argument and resolves the namespace and
// --fail-on.
func (o *PodsOptions) Complete(args []string) error {
	if len(args) == 1 {
		kind, name, err := snapshot.ParseWorkloadArg(args[0])
		if err != nil {
			return &ExitCodeError{Code: ExitUsage, Err: err}
		}
		o.Kind, o.Name = kind, name
	}
	if err := o.completeNamespace(); err != nil {
		return err
	}
	return o.completeFailOn()
}

// Validate checks the calculator's inputs, the shared flags, and that
// there is something to check.
func (o *PodsOptions) Validate() error {
	if o.P99 < 0 || o.LBInterval < 0 || o.LBFall < 0 || o.Margin < 0 {
		return &ExitCodeError{Code: ExitUsage, Err: errors.New("--p99, --lb-interval, --lb-fall and --margin must not be negative")}
	}
	if (o.LBInterval > 0) != (o.LBFall > 0) {
		return &ExitCodeError{Code: ExitUsage, Err: errors.New("give --lb-interval and --lb-fall together (LB_BUFFER = interval × fall)")}
	}
	if err := o.validate(); err != nil {
		return err
	}
	if o.Filename == "" && o.Name == "" {
		return &ExitCodeError{Code: ExitUsage, Err: errors.New("name a Rollout or Deployment (kubectl rolloutdoctor pods NAME or pods deployment/NAME) or give -f FILE")}
	}
	return nil
}

// Run checks the workload's pods and prints the report.
func (o *PodsOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	snap, source, err := o.snapshot(ctx)
	if err != nil {
		return err
	}
	rep, err := podsReport(snap, o.Kind, o.Namespace, o.Name, o.ControllerVersion, source, o.grace())
	if err != nil {
		return err
	}
	if err := o.print(rep, func(w io.Writer, s render.Styles) error { return render.Pods(w, rep, s) }); err != nil {
		return err
	}
	return o.failed(rep.Worst())
}

func (o *PodsOptions) grace() diagnose.GraceInput {
	return diagnose.GraceInput{P99: o.P99, LBInterval: o.LBInterval, LBFall: o.LBFall, Margin: o.Margin}
}

// snapshot reads the file, or the workload from the cluster.
func (o *PodsOptions) snapshot(ctx context.Context) (*snapshot.Snapshot, string, error) {
	if o.Filename != "" {
		return o.readFile()
	}
	snap, source, _, err := workloadSnapshot(ctx, &o.CommonOptions, o.Kind, o.Name)
	return snap, source, err
}

// workloadSnapshot reads a Rollout's or Deployment's world from the
// cluster (pods and snapshot share it).
func workloadSnapshot(ctx context.Context, o *CommonOptions, kind, name string) (*snapshot.Snapshot, string, *gather.Connection, error) {
	conn, err := o.cluster()
	if err != nil {
		return nil, "", nil, err
	}
	opt := conn.Options
	opt.Namespace, opt.Name = o.Namespace, name
	snap, err := gather.Workload(ctx, conn.Dynamic, kind, opt)
	if err != nil {
		return nil, "", nil, failure(err)
	}
	return snap, "cluster " + opt.Context, conn, nil
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
