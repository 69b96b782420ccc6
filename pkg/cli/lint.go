package cli

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/lint"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/render"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

func newLintCmd(streams genericiooptions.IOStreams) *cobra.Command {
	var (
		files                          []string
		output, color, failOn, version string
		configPath, namespace          string
	)
	cmd := &cobra.Command{
		Use:   "lint -f PATH... | PATH...",
		Short: "CI gate: the static rules over rendered manifests (helm template, kustomize build, YAML), with file:line",
		Long: `lint runs the rules that need only manifests over rendered YAML: a Rollout together with the
Services, HPAs, KEDA ScaledObjects, Ingresses and VirtualServices in the same input, so cross-object
rules (the safe-pods limit against HPA/KEDA maxReplicas) work. Helm replaces lists, so lint what
'helm template' renders, not values files.

Exit codes: 0 no unsuppressed finding at or above --fail-on; 1 findings; 2 some input could not be
read or parsed (the rest is still linted and reported); 3 bad flags.

Suppress a finding on the object with the annotation rolloutdoctor.io/ignore: "RD202" (and
rolloutdoctor.io/ignore-reason), or in a config file (--config); suppressed findings are counted.`,
		Example: `  helm template charts/checkout -f values/prod.yaml | kubectl rolloutdoctor lint -f -
  kubectl rolloutdoctor lint -f rendered/ -o sarif > rolloutdoctor.sarif
  kustomize build overlays/prod | kubectl rolloutdoctor lint -f - --controller-version v1.8.2`,
		RunE: func(c *cobra.Command, args []string) error {
			paths := append(append([]string{}, files...), args...)
			if len(paths) == 0 {
				return &ExitCodeError{Code: ExitUsage, Err: errors.New("give manifests: -f FILE|DIR|- (repeatable)")}
			}
			switch output {
			case "", "human", "json", "yaml", "sarif":
			default:
				return &ExitCodeError{Code: ExitUsage, Err: fmt.Errorf("--output must be json, yaml or sarif, not %q", output)}
			}
			fail, err := diagnose.ParseSeverity(failOn)
			if err != nil {
				return &ExitCodeError{Code: ExitUsage, Err: fmt.Errorf("--fail-on: %w", err)}
			}
			cv := model.ControllerVersion{Assumed: upstream.Modeled[len(upstream.Modeled)-1], Source: model.SourceUnknown,
				Note: "no --controller-version: the newest modeled version is assumed; findings note where older versions differ"}
			if version != "" {
				if cv, err = model.DetectVersion(version, nil, ""); err != nil {
					return &ExitCodeError{Code: ExitUsage, Err: err}
				}
			}
			var cfg *lint.Config
			if configPath != "" {
				if cfg, err = lint.LoadConfig(configPath); err != nil {
					return &ExitCodeError{Code: ExitUsage, Err: err}
				}
			}
			docs, n, errs := lint.Load(paths, streams.In)
			rep := lint.Run(docs, n, errs, lint.Options{Controller: cv, Config: cfg, Namespace: namespace})
			switch output {
			case "json":
				err = render.JSON(streams.Out, rep)
			case "yaml":
				err = render.YAML(streams.Out, rep)
			case "sarif":
				err = render.JSON(streams.Out, rep.SARIF(Version))
			default:
				useColor, _ := render.UseColor(color, streams.Out)
				err = humanLint(streams.Out, rep, render.NewStyles(streams.Out, useColor))
			}
			if err != nil {
				return err
			}
			for _, e := range rep.Errors {
				loc := e.File
				if e.Line > 0 {
					loc = fmt.Sprintf("%s:%d", e.File, e.Line)
				}
				fmt.Fprintf(streams.ErrOut, "error: %s: %s\n", loc, e.Message)
			}
			switch {
			case len(rep.Errors) > 0:
				return &ExitCodeError{Code: ExitError}
			case fail > 0 && rep.Worst() >= fail:
				return &ExitCodeError{Code: ExitFindings}
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVarP(&files, "filename", "f", nil, "manifest file, directory (recursive *.yaml/*.yml/*.json) or - for stdin; repeatable")
	cmd.Flags().StringVarP(&output, "output", "o", "", "json, yaml or sarif (SARIF 2.1.0 for code scanning); default human")
	cmd.Flags().StringVar(&color, "color", "auto", "colour: auto, always or never (NO_COLOR honoured)")
	cmd.Flags().StringVar(&failOn, "fail-on", "warning", "exit 1 when an unsuppressed finding is at least this severe: info, warning, critical or none")
	cmd.Flags().StringVar(&version, "controller-version", "", "controller version the rules assume (default: the newest modeled, with notes where older ones differ)")
	cmd.Flags().StringVar(&configPath, "config", "", "config file with suppressions (ignore: [{id, rollout, namespace, file, reason}])")
	cmd.Flags().StringVar(&namespace, "default-namespace", "default", "namespace for objects that have none (as kubectl apply -n)")
	return cmd
}

// humanLint prints findings grouped by object, each under its file:line.
func humanLint(w io.Writer, r *lint.Report, s render.Styles) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s controller %s (%s)\n", s.Title.Render("rolloutdoctor lint:"), r.Controller.Assumed, r.Controller.Source)
	if r.Controller.Note != "" {
		fmt.Fprintf(&b, "  %s\n", s.Dim.Render(r.Controller.Note))
	}
	last := ""
	for _, f := range r.Findings {
		key := fmt.Sprintf("%s:%d  %s", f.File, f.Line, f.Object)
		if key != last {
			fmt.Fprintf(&b, "\n%s\n", s.Bold.Render(key))
			last = key
		}
		fmt.Fprintf(&b, "  %s %s %s\n", render.Severity(s, f.Severity), s.Bold.Render(f.ID), f.Message)
		if len(f.Versions) > 0 {
			fmt.Fprintf(&b, "      %s\n", s.Dim.Render("other controller versions: "+strings.Join(f.Versions, ", ")))
		}
		if f.Remediation != "" {
			fmt.Fprintf(&b, "      fix: %s\n", f.Remediation)
		}
	}
	if len(r.Suppressed) > 0 {
		fmt.Fprintf(&b, "\n%s\n", s.Title.Render("Suppressed"))
		for _, x := range r.Suppressed {
			reason := x.Reason
			if reason == "" {
				reason = "no reason given"
			}
			fmt.Fprintf(&b, "  %s:%d %s %s (by %s: %s)\n", x.File, x.Line, x.ID, x.Object, x.By, reason)
		}
	}
	if len(r.Skipped) > 0 {
		var kinds []string
		for k, n := range r.Skipped {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
		}
		sort.Strings(kinds)
		fmt.Fprintf(&b, "\n%s %s\n", s.Dim.Render("skipped kinds:"), s.Dim.Render(strings.Join(kinds, ", ")))
	}
	fmt.Fprintf(&b, "\n%s\n", r.Summary())
	_, err := io.WriteString(w, b.String())
	return err
}
