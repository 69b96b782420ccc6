package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/gather"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/render"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// completionTimeout bounds shell completion: a slow cluster must not hang
// the user's Tab key.
const completionTimeout = 5 * time.Second

// Flag help shared by several commands.
const (
	usageColor               = "colour: auto, always or never (NO_COLOR honoured)"
	usageControllerVersion   = "Argo Rollouts controller version to model (default: read from the controller Deployment's image)"
	usageControllerNamespace = "namespace to look for the argo-rollouts controller Deployment in first"
)

// connectFunc opens the cluster connection; tests replace it with a fake.
type connectFunc func(*genericclioptions.ConfigFlags, ...func(*rest.Config)) (*gather.Connection, error)

// CommonOptions holds the flags several commands share and what they
// resolve to. Each command embeds one, registers only the flags it has, and
// names the output formats it accepts besides human; the one validation
// and the one printer below then serve every command alike.
type CommonOptions struct {
	// The shared flags, as given.
	Filename            string
	Output              string
	Color               string
	FailOn              string
	ControllerVersion   string
	ControllerNamespace string

	// Namespace is -n, else the kubeconfig's; "" with -f and no -n (the
	// file's Rollout is found by name alone).
	Namespace string

	formats []string
	// offline is true for a command that can read -f FILE instead of a
	// cluster: its connection errors say so.
	offline bool
	failOn  diagnose.Severity
	flags   *genericclioptions.ConfigFlags
	streams genericiooptions.IOStreams
	connect connectFunc
	net     netSettings
}

// newCommon makes the shared options of a command that prints the given
// document formats (json, yaml, sarif) besides human text; flags is nil for
// a command that never reads a cluster.
func newCommon(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, formats ...string) CommonOptions {
	return CommonOptions{Color: "auto", ControllerNamespace: "argo-rollouts", formats: formats,
		flags: flags, streams: streams, connect: gather.Connect, net: defaultNet()}
}

// addFilenameFlag registers -f; the command can then work offline.
func (o *CommonOptions) addFilenameFlag(cmd *cobra.Command, usage string) {
	o.offline = true
	cmd.Flags().StringVarP(&o.Filename, "filename", "f", o.Filename, usage)
}

// addOutputFlags registers -o and --color.
func (o *CommonOptions) addOutputFlags(cmd *cobra.Command, usage string) {
	cmd.Flags().StringVarP(&o.Output, "output", "o", o.Output, usage)
	cmd.Flags().StringVar(&o.Color, "color", o.Color, usageColor)
}

func (o *CommonOptions) addFailOnFlag(cmd *cobra.Command, usage string) {
	cmd.Flags().StringVar(&o.FailOn, "fail-on", o.FailOn, usage)
}

// addControllerFlags registers --controller-version and, with a cluster,
// --controller-namespace.
func (o *CommonOptions) addControllerFlags(cmd *cobra.Command, versionUsage string, namespace bool) {
	cmd.Flags().StringVar(&o.ControllerVersion, "controller-version", o.ControllerVersion, versionUsage)
	if namespace {
		cmd.Flags().StringVar(&o.ControllerNamespace, "controller-namespace", o.ControllerNamespace, usageControllerNamespace)
	}
}

// completeNamespace resolves the namespace from -n or the kubeconfig. With
// -f and no -n it is "": the kubeconfig's namespace says nothing about a
// file, and a kubeconfig that cannot be read does not matter then.
func (o *CommonOptions) completeNamespace() error {
	ns, explicit, err := o.flags.ToRawKubeConfigLoader().Namespace()
	switch {
	case err != nil && o.Filename == "" && o.contextTypo(err) != nil:
		return o.contextTypo(err)
	case err != nil && o.Filename == "":
		return &ExitCodeError{Code: ExitError, Err: fmt.Errorf("reading kubeconfig: %w", err)}
	}
	if o.Filename != "" && !explicit {
		ns = ""
	}
	o.Namespace = ns
	return nil
}

// completeRolloutName takes a [rollout/]NAME argument, if given, into name
// and resolves the namespace: the Complete of every command about one
// Rollout.
func (o *CommonOptions) completeRolloutName(args []string, name *string) error {
	if len(args) == 1 {
		n, err := rolloutArg(args[0])
		if err != nil {
			return err
		}
		*name = n
	}
	return o.completeNamespace()
}

// contextTypo is the usage error for a --context the kubeconfig does not
// have (a bad flag, not a broken kubeconfig), nil for any other error.
func (o *CommonOptions) contextTypo(err error) error {
	if o.flags == nil || o.flags.Context == nil || *o.flags.Context == "" {
		return nil
	}
	// Namespace() and ToRESTConfig() word it differently.
	if !clientcmd.IsContextNotFound(err) && !strings.Contains(err.Error(), fmt.Sprintf("context %q does not exist", *o.flags.Context)) {
		return nil
	}
	names := []string{}
	if raw, err := o.flags.ToRawKubeConfigLoader().RawConfig(); err == nil {
		for n := range raw.Contexts {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return usageErrorf("--context %q is not in the kubeconfig (it has: %s)", *o.flags.Context, strings.Join(names, ", "))
}

// completeFailOn parses --fail-on, for the commands that have it.
func (o *CommonOptions) completeFailOn() error {
	if o.FailOn == "" {
		return nil
	}
	sev, err := diagnose.ParseSeverity(o.FailOn)
	if err != nil {
		return usageErrorf("--fail-on: %w", err)
	}
	o.failOn = sev
	return nil
}

// validate checks the shared flags: the output format against the
// command's own list, --color, --controller-version and --request-timeout
// (before anything is read, so a typo is a usage error, not a failed
// diagnosis).
func (o *CommonOptions) validate() error {
	if err := o.validateTimeout(); err != nil {
		return err
	}
	if !o.human() && !o.document() {
		return usageErrorf("--output must be %s, not %q", orList(o.formats), o.Output)
	}
	if _, err := render.UseColor(o.Color, o.streams.Out); err != nil {
		return &ExitCodeError{Code: ExitUsage, Err: err}
	}
	if o.ControllerVersion != "" {
		if _, err := model.DetectVersion(o.ControllerVersion, nil, ""); err != nil {
			return &ExitCodeError{Code: ExitUsage, Err: err}
		}
	}
	return nil
}

// validateTimeout checks --request-timeout as client-go will parse it, for
// a command that reads the cluster (client-go would call a bad value a
// broken kubeconfig).
func (o *CommonOptions) validateTimeout() error {
	if o.flags == nil || o.flags.Timeout == nil || o.Filename != "" {
		return nil
	}
	d, err := clientcmd.ParseTimeout(*o.flags.Timeout)
	if err != nil || d < 0 {
		return usageErrorf("--request-timeout %q is not a duration: use e.g. 30s or 2m (0 waits forever)", *o.flags.Timeout)
	}
	return nil
}

// human is true for the default output, text for a person.
func (o *CommonOptions) human() bool { return o.Output == "" || o.Output == "human" }

// document is true when -o names a document format this command accepts.
func (o *CommonOptions) document() bool {
	for _, f := range o.formats {
		if o.Output == f {
			return true
		}
	}
	return false
}

// orList words a list of formats: "json or yaml", "json, yaml or sarif".
func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// sarifDocument is a report that has a SARIF form (lint's).
type sarifDocument interface{ SARIF(toolVersion string) any }

// print writes v to stdout in the chosen format: a JSON or YAML document,
// SARIF when v has that form, else human text through the command's
// renderer with the shared styles.
func (o *CommonOptions) print(v any, human func(io.Writer, render.Styles) error) error {
	// Buffered: a table of 3,000 rows was thousands of write calls, a
	// tenth of a multi-cluster scan's CPU. Whatever was rendered before an
	// error is still written.
	w := bufio.NewWriterSize(o.streams.Out, 64<<10)
	err := o.render(w, v, human)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return err
}

func (o *CommonOptions) render(w io.Writer, v any, human func(io.Writer, render.Styles) error) error {
	switch o.Output {
	case "json":
		return render.JSON(w, v)
	case "yaml":
		return render.YAML(w, v)
	case "sarif":
		s, ok := v.(sarifDocument)
		if !ok {
			return fmt.Errorf("%T has no SARIF form", v)
		}
		return render.JSON(w, s.SARIF(Version))
	}
	return human(w, o.styles())
}

// styles are the shared styles for stdout, coloured per --color.
func (o *CommonOptions) styles() render.Styles {
	color, _ := render.UseColor(o.Color, o.streams.Out)
	return render.NewStyles(o.streams.Out, color)
}

// failed is the exit for a report whose worst finding is worst: 1 when it
// is at or above --fail-on.
func (o *CommonOptions) failed(worst diagnose.Severity) error {
	if o.failOn > 0 && worst >= o.failOn {
		return &ExitCodeError{Code: ExitFindings}
	}
	return nil
}

// cluster opens the one cluster connection of a run. A command that takes
// -f says so in the error, since it could have worked offline. When a
// request goes unanswered for a few seconds, one line on stderr says what
// the command is waiting for (stdout may carry a document).
func (o *CommonOptions) cluster(tune ...func(*rest.Config)) (*gather.Connection, error) {
	c, err := o.connect(o.flags, tune...)
	if err != nil {
		var ce *gather.ConfigError
		var nc *gather.NoClusterError
		switch {
		case o.contextTypo(err) != nil:
			return nil, o.contextTypo(err)
		case errors.As(err, &nc) && o.offline:
			err = fmt.Errorf("%s: %s, or use -f FILE to work offline", nc.Reason, nc.Fix)
		case errors.As(err, &ce) && o.offline:
			err = fmt.Errorf("%s: %s, or use -f FILE to work offline", ce.Reason, ce.Fix)
		}
		return nil, &ExitCodeError{Code: ExitError, Err: err}
	}
	c.Options.ToolVersion = Version
	c.Options.ControllerNamespace = o.ControllerNamespace
	c.Options.SkipController = o.ControllerVersion != ""
	opt := c.Options
	c.OnWaiting(o.net.waitNotice, func(w gather.Waiting) { fmt.Fprintln(o.streams.ErrOut, waitingLine(opt, w)) })
	return c, nil
}

// waitingLine is what a command says while the API server does not
// answer, while nothing has answered the attempt to connect to it (a VPN
// not up?), or while the kubeconfig's credential plugin has not returned
// (it may be waiting for a login in a browser) or its auth provider is
// refreshing its token.
func waitingLine(opt gather.Options, w gather.Waiting) string {
	cred := w.Cred
	bound := ""
	if opt.Timeout > 0 {
		bound = "; giving up after " + opt.Timeout.String()
	}
	of := ""
	if opt.Context != "" {
		of = " of context " + opt.Context
	}
	switch {
	case cred == nil && w.LookingUp:
		return fmt.Sprintf("waiting for the host name of %s to resolve (the DNS server has not answered: one reached only over a VPN?) … (Ctrl-C to stop%s)", opt.APIServer(), bound)
	case cred == nil && w.Connecting && w.Proxy != "":
		return fmt.Sprintf("waiting for a connection to the proxy %s on the way to %s: nothing has answered yet … (Ctrl-C to stop%s)", w.Proxy, opt.APIServer(), bound)
	case cred == nil && w.Tunnel:
		return fmt.Sprintf("waiting for the proxy %s to open a tunnel to %s: it took the connection and has not answered yet … (Ctrl-C to stop%s)", w.Proxy, opt.APIServer(), bound)
	case cred == nil && w.Connecting:
		return fmt.Sprintf("waiting for a connection to %s: nothing has answered yet (a private endpoint needs its VPN) … (Ctrl-C to stop%s)", opt.APIServer(), bound)
	case cred == nil:
	case cred.Provider != "":
		at := ""
		if cred.Issuer != "" {
			at = " at " + cred.Issuer
		}
		return fmt.Sprintf("waiting for the %s auth provider%s to refresh its token%s … (Ctrl-C to stop%s)", cred.Provider, of, at, bound)
	default:
		return fmt.Sprintf("waiting for the credential plugin %q%s (a login?) … (Ctrl-C to stop%s)", cred.Plugin, of, bound)
	}
	return fmt.Sprintf("waiting for %s … (Ctrl-C to stop%s)", opt.APIServer(), bound)
}

// readFile reads the -f snapshot (or stdin for -).
func (o *CommonOptions) readFile() (*snapshot.Snapshot, string, error) {
	return readSnapshotFile(o.Filename, o.streams.In)
}

func readSnapshotFile(name string, stdin io.Reader) (*snapshot.Snapshot, string, error) {
	var r io.Reader = stdin
	display := "stdin"
	if name != "-" {
		f, err := snapshot.OpenInput(name)
		if err != nil {
			return nil, "", &ExitCodeError{Code: ExitError, Err: err}
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

// isTerminal is true when v is a terminal (the real stdin/stdout/stderr of
// an interactive session, never a buffer in tests).
func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// usageErrorf is a bad-flags-or-arguments error (exit 3).
func usageErrorf(format string, a ...any) error {
	return &ExitCodeError{Code: ExitUsage, Err: fmt.Errorf(format, a...)}
}

// failure marks a library error as "the tool could not do its job" (exit
// 2), keeping a code the error already carries.
func failure(err error) error {
	if err == nil {
		return nil
	}
	var ec *ExitCodeError
	if errors.As(err, &ec) {
		return err
	}
	return &ExitCodeError{Code: ExitError, Err: err}
}

// runner is what every command's options provide, kubectl style.
type runner interface {
	Complete(args []string) error
	Validate() error
	Run(ctx context.Context) error
}

// runE is the only thing a cobra command does: Complete, Validate, Run.
func runE(o runner) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		if err := o.Complete(args); err != nil {
			return err
		}
		if err := o.Validate(); err != nil {
			return err
		}
		return o.Run(c.Context())
	}
}

// usageArgs makes cobra's argument-count errors usage errors (exit 3) that
// point to the command's help, like bad flags.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if err := check(c, args); err != nil {
			return usageErrorf("%w (see %s --help)", err, c.CommandPath())
		}
		return nil
	}
}

// completeRollouts completes a NAME argument with the Rollouts of the
// current context and namespace (or -n/--context on the command line). It
// never fails loudly: without a cluster there is simply nothing to offer.
func (o *CommonOptions) completeRollouts(_ *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	conn, err := o.connect(o.flags, func(c *rest.Config) { c.Timeout = completionTimeout })
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ns, _, err := o.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
	defer cancel()
	names, err := gather.RolloutNames(ctx, conn.Dynamic, ns)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
