package cli

import (
	"context"
	"errors"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/lint"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/render"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// LintOptions holds the lint command's inputs.
type LintOptions struct {
	CommonOptions
	// Files are the -f arguments; Paths adds the positional ones.
	Files            []string
	Paths            []string
	ConfigPath       string
	DefaultNamespace string
	// AllowEmpty accepts input with no Rollout or Deployment in it (exit
	// 0); by default a gate that linted nothing fails.
	AllowEmpty bool

	controller model.ControllerVersion
	config     *lint.Config
}

// NewLintOptions makes the lint command's options with their defaults. It
// needs no cluster.
func NewLintOptions(streams genericiooptions.IOStreams) *LintOptions {
	o := &LintOptions{CommonOptions: newCommon(nil, streams, "json", "yaml", "sarif"), DefaultNamespace: "default"}
	o.FailOn = "warning"
	return o
}

func newLintCommand(o *LintOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "lint -f PATH... | PATH...",
		Short: "CI gate: the static rules over rendered manifests (helm template, kustomize build, YAML), with file:line",
		Long: `lint runs the rules that need only manifests over rendered YAML: a Rollout together with the
Services, HPAs, KEDA ScaledObjects, Ingresses, VirtualServices and AnalysisTemplates of its namespace
and the ClusterAnalysisTemplates in the same input, so cross-object rules (the safe-pods limit against
HPA/KEDA maxReplicas, the arguments and templates its analysis needs) work. A finding about a
template is located at the template. Helm replaces lists, so lint what 'helm template' renders, not
values files.

Exit codes: 0 no unsuppressed finding at or above --fail-on; 1 findings; 2 some input could not be
read or parsed (the rest is still linted and reported); 3 bad flags.

Suppress a finding on the object with the annotation rolloutdoctor.io/ignore: "RD202" (and
rolloutdoctor.io/ignore-reason), or in a config file (--config); suppressed findings are counted.`,
		Example: `  helm template charts/checkout -f values/prod.yaml | kubectl rolloutdoctor lint -f -
  kubectl rolloutdoctor lint -f rendered/ -o sarif > rolloutdoctor.sarif
  kustomize build overlays/prod | kubectl rolloutdoctor lint -f - --controller-version v1.8.2`,
		RunE: runE(o),
	}
	cmd.Flags().StringArrayVarP(&o.Files, "filename", "f", nil, "manifest file, directory (recursive *.yaml/*.yml/*.json) or - for stdin; repeatable")
	o.addOutputFlags(cmd, "json, yaml or sarif (SARIF 2.1.0 for code scanning); default human")
	o.addFailOnFlag(cmd, "exit 1 when an unsuppressed finding is at least this severe: info, warning, critical or none")
	o.addControllerFlags(cmd, "controller version the rules assume (default: the newest modeled, with notes where older ones differ)", false)
	cmd.Flags().StringVar(&o.ConfigPath, "config", "", "config file with suppressions (ignore: [{id, rollout, namespace, file, reason}])")
	cmd.Flags().StringVar(&o.DefaultNamespace, "default-namespace", o.DefaultNamespace, "namespace for objects that have none (as kubectl apply -n)")
	cmd.Flags().BoolVar(&o.AllowEmpty, "allow-empty", false, "exit 0 when the input holds no Rollout or Deployment (by default a gate that linted nothing fails with exit 2)")
	return cmd
}

// Complete gathers the paths, parses --fail-on, picks the controller
// version and loads the suppression config.
func (o *LintOptions) Complete(args []string) error {
	o.Paths = append(append([]string{}, o.Files...), args...)
	if err := o.completeFailOn(); err != nil {
		return err
	}
	// Manifests name no controller: without the flag, the newest modeled
	// version is assumed and findings note where older ones differ.
	o.controller = model.ControllerVersion{Assumed: upstream.Modeled[len(upstream.Modeled)-1], Source: model.SourceUnknown,
		Note: "no --controller-version: the newest modeled version is assumed; findings note where older versions differ"}
	if o.ControllerVersion != "" {
		cv, err := model.DetectVersion(o.ControllerVersion, nil, "")
		if err != nil {
			return &ExitCodeError{Code: ExitUsage, Err: err}
		}
		o.controller = cv
	}
	if o.ConfigPath != "" {
		cfg, err := lint.LoadConfig(o.ConfigPath)
		if err != nil {
			return &ExitCodeError{Code: ExitUsage, Err: err}
		}
		o.config = cfg
	}
	return nil
}

// Validate checks that there is input and the shared flags.
func (o *LintOptions) Validate() error {
	if len(o.Paths) == 0 {
		return &ExitCodeError{Code: ExitUsage, Err: errors.New("give manifests: -f FILE|DIR|- (repeatable)")}
	}
	return o.validate()
}

// Run lints every input it can read, prints the report, and names what it
// could not read on stderr (exit 2 then, whatever the findings).
func (o *LintOptions) Run(context.Context) error {
	docs, n, errs := lint.Load(o.Paths, o.streams.In)
	rep := lint.Run(docs, n, errs, lint.Options{Controller: o.controller, Config: o.config, Namespace: o.DefaultNamespace})
	if err := o.print(rep, func(w io.Writer, s render.Styles) error { return render.Lint(w, rep, s) }); err != nil {
		return err
	}
	render.LintErrors(o.streams.ErrOut, rep)
	if len(rep.Errors) > 0 {
		return &ExitCodeError{Code: ExitError}
	}
	if why := rep.Empty(); why != "" && !o.AllowEmpty {
		// A pipeline whose render step printed nothing would otherwise pass.
		return &ExitCodeError{Code: ExitError, Err: errors.New(why + ": nothing was linted (did helm template or kustomize print nothing?); pass --allow-empty if that is expected")}
	}
	return o.failed(rep.Worst())
}
