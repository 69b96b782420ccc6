package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/gather"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/render"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// ScanRow is one Rollout in a fleet scan.
type ScanRow struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Worst is the highest finding severity ("" when none).
	Worst       string   `json:"worst,omitempty"`
	Top         string   `json:"topFinding,omitempty"`
	FindingIDs  []string `json:"findings"`
	Phase       string   `json:"phase"`
	Step        string   `json:"step"`
	Aborted     bool     `json:"aborted"`
	Weight      *int32   `json:"canaryWeight,omitempty"`
	CanaryAvail int32    `json:"canaryAvailable"`
	Needed      int32    `json:"podsTheWeightNeeds"`
	Replicas    int32    `json:"replicas"`
	Controller  string   `json:"controller"`
	severity    diagnose.Severity
	ratio       float64
}

// ScanReport is the result of a fleet scan.
type ScanReport struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Scope      string         `json:"scope"`
	Requests   int            `json:"apiRequests"`
	Rollouts   int            `json:"rollouts"`
	Gaps       []snapshot.Gap `json:"gaps,omitempty"`
	Rows       []ScanRow      `json:"rows"`
}

func newScanCmd(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var (
		all                    bool
		selector, output       string
		color, version, failOn string
	)
	cmd := &cobra.Command{
		Use:   "scan [-A | -n NS] [-l SELECTOR]",
		Short: "Every Rollout in scope, one row each, ranked by risk (a few LIST calls, no per-Rollout requests)",
		Example: `  kubectl rolloutdoctor scan -A
  kubectl rolloutdoctor scan -n shop -o json
  kubectl rolloutdoctor scan -A -l team=payments`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			switch output {
			case "", "human", "json", "yaml":
			default:
				return &ExitCodeError{Code: ExitUsage, Err: fmt.Errorf("--output must be json or yaml, not %q", output)}
			}
			fail, err := diagnose.ParseSeverity(failOn)
			if err != nil {
				return &ExitCodeError{Code: ExitUsage, Err: fmt.Errorf("--fail-on: %w", err)}
			}
			ns := ""
			if !all {
				if ns, _, err = flags.ToRawKubeConfigLoader().Namespace(); err != nil {
					return &ExitCodeError{Code: ExitError, Err: fmt.Errorf("reading kubeconfig: %w", err)}
				}
			}
			cfg, err := flags.ToRESTConfig()
			if err != nil {
				return &ExitCodeError{Code: ExitError, Err: fmt.Errorf("no usable kubeconfig: %w (use --kubeconfig or --context)", err)}
			}
			cfg.QPS, cfg.Burst = 50, 100
			dc, err := dynamic.NewForConfig(cfg)
			if err != nil {
				return &ExitCodeError{Code: ExitError, Err: err}
			}
			opt := gather.FleetOptions{Namespace: ns, Selector: selector, ToolVersion: Version, Server: cfg.Host}
			if f, ok := streams.ErrOut.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
				opt.Progress = func(what string, n int) {
					fmt.Fprintf(streams.ErrOut, "\rreading %ss: %d    ", strings.ToLower(what), n)
				}
			}
			rep, err := Scan(c.Context(), dc, opt, version)
			if opt.Progress != nil {
				fmt.Fprint(streams.ErrOut, "\r\033[K")
			}
			if err != nil {
				return err
			}
			switch output {
			case "json":
				err = render.JSON(streams.Out, rep)
			case "yaml":
				err = render.YAML(streams.Out, rep)
			default:
				useColor, _ := render.UseColor(color, streams.Out)
				err = humanScan(streams.Out, rep, render.NewStyles(streams.Out, useColor))
			}
			if err != nil {
				return err
			}
			for _, r := range rep.Rows {
				if fail > 0 && r.severity >= fail {
					return &ExitCodeError{Code: ExitFindings}
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "scan every namespace")
	cmd.Flags().StringVarP(&selector, "selector", "l", "", "label selector on the Rollouts")
	cmd.Flags().StringVarP(&output, "output", "o", "", "json or yaml (default: a table)")
	cmd.Flags().StringVar(&color, "color", "auto", "colour: auto, always or never (NO_COLOR honoured)")
	cmd.Flags().StringVar(&version, "controller-version", "", "controller version to model (default: from the controller Deployment's image)")
	cmd.Flags().StringVar(&failOn, "fail-on", "none", "exit 1 when some Rollout has a finding at least this severe")
	return cmd
}

// Scan reads the fleet and diagnoses every Rollout from that one read.
func Scan(ctx context.Context, dc dynamic.Interface, opt gather.FleetOptions, versionFlag string) (*ScanReport, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	res, err := gather.Fleet(ctx, dc, opt)
	if err != nil {
		return nil, &ExitCodeError{Code: ExitError, Err: err}
	}
	snap := res.Snapshot
	rep := &ScanReport{APIVersion: diagnose.ReportAPIVersion, Kind: "FleetScan", Scope: opt.String(), Requests: res.Requests, Gaps: snap.Header.Gaps, Rows: []ScanRow{}}
	gap := ""
	for _, g := range snap.Header.Gaps {
		if g.Resource == "deployments.apps" {
			gap = g.String()
		}
	}
	// Controllers are cluster-wide objects for every namespace's view.
	var shared []*unstructured.Unstructured
	byNS := map[string][]*unstructured.Unstructured{}
	for _, o := range snap.Objects() {
		if o.GetKind() == "Deployment" {
			shared = append(shared, o)
			continue
		}
		byNS[o.GetNamespace()] = append(byNS[o.GetNamespace()], o)
	}
	nss := make([]string, 0, len(byNS))
	for n := range byNS {
		nss = append(nss, n)
	}
	sort.Strings(nss)
	for _, n := range nss {
		h := snap.Header
		nsSnap := snapshot.New(h, append(byNS[n], shared...))
		ros, err := nsSnap.Rollouts()
		if err != nil {
			return nil, &ExitCodeError{Code: ExitError, Err: err}
		}
		for _, ro := range ros {
			rep.Rollouts++
			v, err := nsSnap.View(ro)
			if err != nil {
				rep.Rows = append(rep.Rows, ScanRow{Namespace: ro.Namespace, Name: ro.Name, Top: "unreadable: " + err.Error(), FindingIDs: []string{}})
				continue
			}
			cv, err := model.DetectVersionFor(versionFlag, v, gap)
			if err != nil {
				return nil, &ExitCodeError{Code: ExitUsage, Err: err}
			}
			d := diagnose.Run(v, cv, diagnose.Options{Source: "scan", NoPods: true})
			rep.Rows = append(rep.Rows, scanRow(d))
		}
	}
	sort.SliceStable(rep.Rows, func(i, j int) bool {
		a, b := rep.Rows[i], rep.Rows[j]
		if a.severity != b.severity {
			return a.severity > b.severity
		}
		if a.ratio != b.ratio {
			return a.ratio > b.ratio
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return rep, nil
}

func scanRow(d *diagnose.Report) ScanRow {
	r := ScanRow{Namespace: d.Namespace, Name: d.Name, Phase: d.State.Phase, Aborted: d.State.Aborted,
		Step: fmt.Sprintf("%d/%d", d.State.StepIndex, d.State.StepCount), Replicas: d.State.Replicas,
		Controller: string(d.Controller.Assumed), FindingIDs: []string{}}
	for _, f := range d.Findings {
		r.FindingIDs = append(r.FindingIDs, f.ID)
		if f.Severity > r.severity {
			r.severity, r.Top = f.Severity, f.ID+" "+f.Message
		}
	}
	if r.severity > 0 {
		r.Worst = r.severity.String()
	}
	if t := d.Traffic; t != nil {
		w := t.CanaryWeight
		r.Weight, r.CanaryAvail = &w, t.CanaryAvailable
		r.Needed = model.WeightToReplicas(d.State.Replicas, w, t.MaxWeight)
		if w > 0 {
			r.ratio = float64(r.Needed) / float64(r.CanaryAvail+1)
		}
	}
	return r
}

// humanScan prints one row per Rollout, riskiest first.
func humanScan(w io.Writer, rep *ScanReport, s render.Styles) error {
	fmt.Fprintf(w, "%s %s: %d Rollout(s), %d API request(s)\n\n", s.Title.Render("rolloutdoctor scan"), rep.Scope, rep.Rollouts, rep.Requests)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tROLLOUT\tWORST\tPHASE\tSTEP\tWEIGHT vs CANARY\tCONTROLLER\tTOP FINDING")
	for _, r := range rep.Rows {
		worst := "-"
		if r.Worst != "" {
			worst = strings.ToUpper(r.Worst)
		}
		weight := "-"
		if r.Weight != nil {
			weight = fmt.Sprintf("%d%% on %d/%d (needs %d)", *r.Weight, r.CanaryAvail, r.Replicas, r.Needed)
		}
		phase := r.Phase
		if r.Aborted {
			phase += " (aborted)"
		}
		top := r.Top
		if len(top) > 90 {
			top = top[:87] + "..."
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Namespace, r.Name, worst, phase, r.Step, weight, r.Controller, top)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, g := range rep.Gaps {
		fmt.Fprintf(w, "%s could not read %s\n", s.Warn.Render("gap:"), g.String())
	}
	return nil
}
