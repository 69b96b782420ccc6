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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/gather"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/render"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// DiagnoseOptions holds the diagnose command's inputs.
type DiagnoseOptions struct {
	flags   *genericclioptions.ConfigFlags
	streams genericiooptions.IOStreams

	Name                string
	Namespace           string
	Filename            string
	Output              string
	Color               string
	FailOn              string
	Watch               bool
	ControllerVersion   string
	ControllerNamespace string

	failOn diagnose.Severity
}

func newDiagnoseCmd(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &DiagnoseOptions{flags: flags, streams: streams}
	cmd := &cobra.Command{
		Use:   "diagnose [rollout/]NAME | -f FILE",
		Short: "Where a live Rollout really is, what the controller will do next, and what is wrong",
		Example: `  kubectl rolloutdoctor diagnose checkout-api -n shop
  kubectl rolloutdoctor diagnose rollout/checkout-api --context prod -o json
  kubectl rolloutdoctor diagnose -f incident.yaml
  kubectl rolloutdoctor diagnose checkout-api --watch`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Complete(args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(c.Context())
		},
	}
	o.addFlags(cmd)
	cmd.ValidArgsFunction = completeRollouts(flags)
	cmd.Flags().BoolVarP(&o.Watch, "watch", "w", false, "re-diagnose on every change of the Rollout, its ReplicaSets and pods, until Ctrl-C")
	return cmd
}

func (o *DiagnoseOptions) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&o.Filename, "filename", "f", "", "diagnose a snapshot or `kubectl get -o yaml` output instead of the cluster (- for stdin)")
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "output format: json or yaml (default: human)")
	cmd.Flags().StringVar(&o.Color, "color", "auto", "colour: auto, always or never (NO_COLOR honoured)")
	cmd.Flags().StringVar(&o.FailOn, "fail-on", "warning", "exit 1 when a finding is at least this severe: info, warning, critical or none")
	cmd.Flags().StringVar(&o.ControllerVersion, "controller-version", "", "Argo Rollouts controller version to model (default: read from the controller Deployment's image)")
	cmd.Flags().StringVar(&o.ControllerNamespace, "controller-namespace", "argo-rollouts", "namespace to look for the argo-rollouts controller Deployment in first")
}

// Complete fills derived fields.
func (o *DiagnoseOptions) Complete(args []string) error {
	if len(args) == 1 {
		name := args[0]
		if i := strings.Index(name, "/"); i >= 0 {
			kind := strings.ToLower(name[:i])
			if kind != "rollout" && kind != "rollouts" && kind != "ro" && kind != "rollouts.argoproj.io" && kind != "rollout.argoproj.io" {
				return &ExitCodeError{Code: ExitUsage, Err: fmt.Errorf("%q is not a Rollout: use NAME or rollout/NAME", name)}
			}
			name = name[i+1:]
		}
		o.Name = name
	}
	ns, explicit, err := o.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil && o.Filename == "" {
		return &ExitCodeError{Code: ExitError, Err: fmt.Errorf("reading kubeconfig: %w", err)}
	}
	if o.Filename != "" && !explicit {
		ns = ""
	}
	o.Namespace = ns
	o.failOn, err = diagnose.ParseSeverity(o.FailOn)
	if err != nil {
		return &ExitCodeError{Code: ExitUsage, Err: fmt.Errorf("--fail-on: %w", err)}
	}
	return nil
}

// Validate checks flag combinations.
func (o *DiagnoseOptions) Validate() error {
	switch o.Output {
	case "", "json", "yaml", "human":
	default:
		return &ExitCodeError{Code: ExitUsage, Err: fmt.Errorf("--output must be json or yaml, not %q", o.Output)}
	}
	if o.Filename == "" && o.Name == "" {
		return &ExitCodeError{Code: ExitUsage, Err: errors.New("name a Rollout (kubectl rolloutdoctor diagnose NAME) or give -f FILE")}
	}
	if o.Watch && o.Filename != "" {
		return &ExitCodeError{Code: ExitUsage, Err: errors.New("--watch needs a cluster, not -f")}
	}
	if _, err := render.UseColor(o.Color, o.streams.Out); err != nil {
		return &ExitCodeError{Code: ExitUsage, Err: err}
	}
	return nil
}

// Run diagnoses once, or on every change with --watch.
func (o *DiagnoseOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if !o.Watch {
		rep, err := o.report(ctx)
		if err != nil {
			return err
		}
		if err := o.print(rep); err != nil {
			return err
		}
		if o.failOn > 0 && rep.Worst() >= o.failOn {
			return &ExitCodeError{Code: ExitFindings}
		}
		return nil
	}
	return o.watch(ctx)
}

func (o *DiagnoseOptions) print(rep *diagnose.Report) error {
	switch o.Output {
	case "json":
		return render.JSON(o.streams.Out, rep)
	case "yaml":
		return render.YAML(o.streams.Out, rep)
	}
	color, _ := render.UseColor(o.Color, o.streams.Out)
	return render.Human(o.streams.Out, rep, render.NewStyles(o.streams.Out, color))
}

// report takes a snapshot (file or cluster) and diagnoses it.
func (o *DiagnoseOptions) report(ctx context.Context) (*diagnose.Report, error) {
	snap, source, err := o.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return diagnoseSnapshot(snap, o.Namespace, o.Name, o.ControllerVersion, source)
}

func diagnoseSnapshot(snap *snapshot.Snapshot, ns, name, versionFlag, source string) (*diagnose.Report, error) {
	ro, err := snap.FindRollout(ns, name)
	if err != nil {
		return nil, &ExitCodeError{Code: ExitError, Err: err}
	}
	view, err := snap.View(ro)
	if err != nil {
		return nil, &ExitCodeError{Code: ExitError, Err: fmt.Errorf("reading the snapshot: %w", err)}
	}
	gap := ""
	for _, g := range snap.Header.Gaps {
		if g.Resource == "deployments.apps" {
			gap = g.String()
		}
	}
	cv, err := model.DetectVersionFor(versionFlag, view, gap)
	if err != nil {
		return nil, &ExitCodeError{Code: ExitUsage, Err: err}
	}
	return diagnose.Run(view, cv, diagnose.Options{Source: source}), nil
}

func (o *DiagnoseOptions) snapshot(ctx context.Context) (*snapshot.Snapshot, string, error) {
	if o.Filename != "" {
		return readSnapshotFile(o.Filename, o.streams.In)
	}
	return clusterSnapshot(ctx, o.flags, o.Namespace, o.Name, o.ControllerNamespace, o.ControllerVersion != "")
}

func readSnapshotFile(name string, stdin io.Reader) (*snapshot.Snapshot, string, error) {
	var r io.Reader = stdin
	display := "stdin"
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, "", &ExitCodeError{Code: ExitError, Err: fmt.Errorf("cannot open %s: %w", name, errors.Unwrap(err))}
		}
		defer f.Close()
		r, display = f, name
	}
	snap, err := snapshot.Read(display, r)
	if err != nil {
		return nil, "", &ExitCodeError{Code: ExitError, Err: fmt.Errorf("%w (fix the YAML, or re-run `kubectl rolloutdoctor snapshot`)", err)}
	}
	return snap, "file " + display, nil
}

// connect builds a dynamic client for the kubeconfig's cluster and the
// gather options that describe it (context, server, a discovery-backed
// mapper for the served versions of optional APIs).
func connect(flags *genericclioptions.ConfigFlags) (dynamic.Interface, gather.Options, error) {
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, gather.Options{}, &ExitCodeError{Code: ExitError, Err: fmt.Errorf("no usable kubeconfig: %w (use --kubeconfig or --context, or -f FILE to work offline)", err)}
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, gather.Options{}, &ExitCodeError{Code: ExitError, Err: err}
	}
	raw, _ := flags.ToRawKubeConfigLoader().RawConfig()
	opt := gather.Options{Context: raw.CurrentContext, Server: cfg.Host, ToolVersion: Version}
	if flags.Context != nil && *flags.Context != "" {
		opt.Context = *flags.Context
	}
	if disc, err := flags.ToDiscoveryClient(); err == nil {
		opt.Mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	}
	return dc, opt, nil
}

func clusterSnapshot(ctx context.Context, flags *genericclioptions.ConfigFlags, ns, name, controllerNS string, skipController bool) (*snapshot.Snapshot, string, error) {
	dc, opt, err := connect(flags)
	if err != nil {
		return nil, "", err
	}
	opt.Namespace, opt.Name, opt.ControllerNamespace, opt.SkipController = ns, name, controllerNS, skipController
	snap, err := gather.Rollout(ctx, dc, opt)
	if err != nil {
		return nil, "", &ExitCodeError{Code: ExitError, Err: err}
	}
	return snap, "cluster " + opt.Context, nil
}

// watch re-diagnoses whenever the Rollout, its ReplicaSets or pods change.
func (o *DiagnoseOptions) watch(ctx context.Context) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := o.flags.ToRESTConfig()
	if err != nil {
		return &ExitCodeError{Code: ExitError, Err: err}
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return &ExitCodeError{Code: ExitError, Err: err}
	}
	changed := make(chan struct{}, 1)
	startWatch := func(w watch.Interface, err error) {
		if err != nil {
			fmt.Fprintf(o.streams.ErrOut, "watch: %v\n", err)
			return
		}
		go func() {
			defer w.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case _, ok := <-w.ResultChan():
					if !ok {
						return
					}
					select {
					case changed <- struct{}{}:
					default:
					}
				}
			}
		}()
	}
	draw := func() error {
		rep, err := o.report(ctx)
		if ctx.Err() != nil {
			return nil
		}
		color, _ := render.UseColor(o.Color, o.streams.Out)
		if color {
			fmt.Fprint(o.streams.Out, "\033[H\033[2J")
		} else if o.Output == "" {
			fmt.Fprintf(o.streams.Out, "--- %s\n", time.Now().UTC().Format(time.RFC3339))
		}
		if err != nil {
			fmt.Fprintf(o.streams.ErrOut, "error: %v\n", err)
			return nil
		}
		return o.print(rep)
	}
	if err := draw(); err != nil {
		return err
	}
	// Watch what the diagnosis reads most: the Rollout, its ReplicaSets and pods.
	ri := dc.Resource(gather.GVRRollout).Namespace(o.Namespace)
	startWatch(ri.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + o.Name}))
	if u, err := ri.Get(ctx, o.Name, metav1.GetOptions{}); err == nil {
		sel, _, _ := unstructured.NestedMap(u.Object, "spec", "selector")
		ls := labelSelectorString(sel)
		startWatch(dc.Resource(gather.GVRReplicaSet).Namespace(o.Namespace).Watch(ctx, metav1.ListOptions{LabelSelector: ls}))
		startWatch(dc.Resource(gather.GVRPod).Namespace(o.Namespace).Watch(ctx, metav1.ListOptions{LabelSelector: ls}))
	}
	tick := time.NewTicker(30 * time.Second) // also redraw as ages and pauses move on
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
			time.Sleep(250 * time.Millisecond) // coalesce bursts of events
		case <-tick.C:
		}
		if err := draw(); err != nil {
			return err
		}
	}
}

func labelSelectorString(sel map[string]interface{}) string {
	ml, _ := sel["matchLabels"].(map[string]interface{})
	var parts []string
	for k, v := range ml {
		parts = append(parts, fmt.Sprintf("%s=%v", k, v))
	}
	return strings.Join(parts, ",")
}
