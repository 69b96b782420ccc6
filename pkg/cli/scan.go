package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/rolloutdoctor/rolloutdoctor/internal/heapbudget"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/fleet"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/gather"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/render"
)

// ScanOptions holds the scan command's inputs.
type ScanOptions struct {
	CommonOptions
	AllNamespaces bool
	// Selector is a label selector on the Rollouts.
	Selector string
	// Contexts are the kube contexts of a multi-cluster scan;
	// AllContexts takes every context of the kubeconfig.
	Contexts    []string
	AllContexts bool
	// Concurrency bounds the clusters read at once.
	Concurrency int

	// reach opens and closes a connection to a context's cluster (see
	// fleet.Target.Reach); a parameter for tests, as connect is.
	reach func(ctx context.Context, flags *genericclioptions.ConfigFlags, timeout time.Duration) error
}

// DefaultClusterTimeout bounds each cluster of a multi-cluster scan when
// --request-timeout is not given: one cluster that never answers must not
// hold a scheduled scan of the others for ever.
const DefaultClusterTimeout = 60 * time.Second

// NewScanOptions makes the scan command's options with their defaults.
func NewScanOptions(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *ScanOptions {
	o := &ScanOptions{CommonOptions: newCommon(flags, streams, "json", "yaml"), Concurrency: 8, reach: gather.Reach}
	o.FailOn = "none"
	return o
}

func newScanCommand(o *ScanOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "scan [-A | -n NS] [-l SELECTOR] [--contexts A,B | --all-contexts]",
		Short: "Every Rollout in scope, one row each, ranked by risk (a few LIST calls, no per-Rollout requests)",
		Example: `  kubectl rolloutdoctor scan -A
  kubectl rolloutdoctor scan -n shop -o json
  kubectl rolloutdoctor scan -A -l team=payments
  kubectl rolloutdoctor scan -A --contexts prod-eu,prod-us --fail-on critical
  kubectl rolloutdoctor scan -A --all-contexts -o json`,
		Args: usageArgs(cobra.NoArgs),
		RunE: runE(o),
	}
	cmd.Flags().BoolVarP(&o.AllNamespaces, "all-namespaces", "A", o.AllNamespaces, "scan every namespace")
	cmd.Flags().StringVarP(&o.Selector, "selector", "l", o.Selector, "label selector on the Rollouts")
	cmd.Flags().StringSliceVar(&o.Contexts, "contexts", nil, "scan these kube contexts (comma-separated; shell patterns such as 'prod-*' allowed; '!PATTERN' leaves contexts out), in parallel, ranked together; each with its own credentials (on a terminal, a plugin that must prompt logs in first, and one that may prompt and failed logs in after the others are read, one at a time)")
	cmd.Flags().BoolVar(&o.AllContexts, "all-contexts", false, "scan every context of the kubeconfig")
	cmd.Flags().IntVar(&o.Concurrency, "concurrency", o.Concurrency, "with --contexts or --all-contexts: clusters read at once (with more clusters than this, each is first dialled, all at once, and one that cannot be reached takes no turn)")
	o.addOutputFlags(cmd, "json or yaml (default: a table)")
	o.addControllerFlags(cmd, "controller version to model (default: from the controller Deployment's image)", false)
	o.addFailOnFlag(cmd, "exit 1 when some Rollout has a finding at least this severe")
	return cmd
}

// Complete resolves the namespace (none with -A) and --fail-on.
func (o *ScanOptions) Complete([]string) error {
	if o.multi() {
		// Each context has its own default namespace (read per cluster);
		// -n, when given, applies to all.
		if o.flags.Namespace != nil && *o.flags.Namespace != "" && !o.AllNamespaces {
			o.Namespace = *o.flags.Namespace
		}
		return o.completeFailOn()
	}
	if !o.AllNamespaces {
		if err := o.completeNamespace(); err != nil {
			return err
		}
	}
	return o.completeFailOn()
}

// Validate checks the shared flags and the selector (a bad one is a usage
// error here, not a failed read from the API server).
func (o *ScanOptions) Validate() error {
	if _, err := labels.Parse(o.Selector); err != nil {
		return usageErrorf("--selector %q: %v", o.Selector, err)
	}
	if o.multi() {
		switch {
		case o.AllContexts && len(o.Contexts) > 0:
			return usageErrorf("--contexts and --all-contexts: give one")
		case o.flags.Context != nil && *o.flags.Context != "":
			return usageErrorf("--context and --contexts/--all-contexts: give the clusters in one flag")
		case o.Concurrency < 1:
			return usageErrorf("--concurrency %d: at least 1", o.Concurrency)
		}
		if f := oneClusterFlag(o.flags); f != "" {
			return usageErrorf("%s names one cluster's connection or credentials, and with --contexts/--all-contexts each context's own are used: drop %s, or scan that cluster alone with it", f, f)
		}
	}
	return o.validate()
}

// oneClusterFlag is the first kube flag given that belongs to one cluster
// (where to connect, as whom): kubectl applies it to the current context,
// and a multi-cluster scan has none, so it would be ignored without a word
// (or, applied to every cluster, send one cluster's token to all).
// Impersonation, the timeout and compression apply to every cluster.
func oneClusterFlag(f *genericclioptions.ConfigFlags) string {
	for _, c := range []struct {
		flag string
		set  bool
	}{
		{"--cluster", f.ClusterName != nil && *f.ClusterName != ""},
		{"--user", f.AuthInfoName != nil && *f.AuthInfoName != ""},
		{"--server", f.APIServer != nil && *f.APIServer != ""},
		{"--tls-server-name", f.TLSServerName != nil && *f.TLSServerName != ""},
		{"--insecure-skip-tls-verify", f.Insecure != nil && *f.Insecure},
		{"--certificate-authority", f.CAFile != nil && *f.CAFile != ""},
		{"--client-certificate", f.CertFile != nil && *f.CertFile != ""},
		{"--client-key", f.KeyFile != nil && *f.KeyFile != ""},
		{"--token", f.BearerToken != nil && *f.BearerToken != ""},
		{"--username", f.Username != nil && *f.Username != ""},
		{"--password", f.Password != nil && *f.Password != ""},
	} {
		if c.set {
			return c.flag
		}
	}
	return ""
}

func (o *ScanOptions) multi() bool { return o.AllContexts || len(o.Contexts) > 0 }

// scanHeapBudget is the heap under which a scan collects no garbage.
const scanHeapBudget = 512 << 20

// Run reads the fleet, ranks it and prints one row per Rollout.
func (o *ScanOptions) Run(ctx context.Context) error {
	// The binary collects garbage at GOGC 50 for a diagnose's peak memory
	// (cmd/kubectl-rolloutdoctor). A scan's garbage is thousands of
	// Rollouts' decoding and diagnoses, from several clusters at once, and
	// what counts is how soon the table is there. Its heap is mostly the
	// fleet it keeps to the end, which every collection marks again, on
	// cores that are decoding the other clusters. So nothing is collected
	// until the heap reaches scanHeapBudget (at most half the cgroup's
	// limit), and from then on at GOGC 200 if the fleet it keeps is larger
	// than half of that (docs/performance.md has the measurements). GOGC
	// or GOMEMLIMIT, when set, still decide.
	heapbudget.FromEnvironment(scanHeapBudget, 200).Apply()
	if o.multi() {
		return o.runClusters(ctx)
	}
	conn, err := o.cluster()
	if err != nil {
		return err
	}
	opt := gather.FleetOptions{Namespace: o.Namespace, Selector: o.Selector, ToolVersion: Version,
		Context: conn.Options.Context, Server: conn.Options.Server, Timeout: conn.Options.Timeout, Kube: conn.Options.Kube}
	if isTerminal(o.streams.ErrOut) {
		opt.Progress = func(what string, n int) { render.Progress(o.streams.ErrOut, what, n) }
	}
	rep, err := fleet.Scan(ctx, conn.Dynamic, opt, o.ControllerVersion)
	if opt.Progress != nil {
		render.ClearProgress(o.streams.ErrOut)
	}
	if err != nil {
		return failure(err)
	}
	if err := o.print(rep, func(w io.Writer, s render.Styles) error { return render.Scan(w, rep, s) }); err != nil {
		return err
	}
	return o.failed(rep.Worst())
}

// runClusters scans several clusters at once and prints one ranked table,
// with a section per cluster; a cluster that cannot be read is reported in
// its section and fails the command (exit 2) after the others are printed.
func (o *ScanOptions) runClusters(ctx context.Context) error {
	raw, err := o.flags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return &ExitCodeError{Code: ExitError, Err: fmt.Errorf("reading kubeconfig: %w", err)}
	}
	names, err := o.contextNames(raw)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	timeout := DefaultClusterTimeout
	if o.flags.Timeout != nil && *o.flags.Timeout != "" && *o.flags.Timeout != "0" {
		d, err := time.ParseDuration(*o.flags.Timeout)
		if err != nil {
			if n, nerr := strconv.Atoi(*o.flags.Timeout); nerr == nil {
				d, err = time.Duration(n)*time.Second, nil
			}
		}
		if err != nil {
			return usageErrorf("--request-timeout %q: a duration such as 30s", *o.flags.Timeout)
		}
		timeout = d
	}
	mo := fleet.MultiOptions{Concurrency: o.Concurrency, Timeout: timeout, VersionFlag: o.ControllerVersion}
	errOut := o.streams.ErrOut
	// Plugins that must prompt log in first, one at a time, on this
	// terminal; their clusters are then read with that login.
	var logins map[string]login
	terminal := isTerminal(os.Stdin) && isTerminal(o.streams.In) && isTerminal(errOut)
	if interactive := mustPrompt(raw, names); len(interactive) > 0 && terminal {
		fmt.Fprintf(errOut, "%d context(s) log in with a credential plugin that needs the terminal (interactiveMode: Always): one at a time, before the clusters are read\n", len(interactive))
		logins = o.loginFirst(ctx, interactive, errOut)
	}
	// The progress line, and above it what the contexts' credential
	// plugins print, a line at a time with its context's name.
	var mu sync.Mutex
	redraw := func() {}
	progress := isTerminal(errOut)
	if progress {
		left := names
		redraw = func() { render.ClusterProgress(errOut, len(names), len(left), left) }
		redraw()
		mo.Done = func(_ fleet.Cluster, l []string) {
			mu.Lock()
			defer mu.Unlock()
			left = l
			redraw()
		}
	}
	var plugins *gather.PluginOutput
	if usesPlugins(raw, names) {
		// Without it (no Unix sockets), the plugins print on stderr as
		// client-go lets them, and their errors say so.
		plugins, _ = gather.ListenPluginOutput(func(contexts []string, line string) {
			mu.Lock()
			defer mu.Unlock()
			if progress {
				render.ClearProgress(errOut)
			}
			of := "context " + contexts[0]
			if len(contexts) > 1 {
				of = "contexts " + strings.Join(contexts, ", ")
			}
			fmt.Fprintf(errOut, "credential plugin of %s: %s\n", of, line)
			redraw()
		})
	}
	targets := make([]fleet.Target, len(names))
	for i, n := range names {
		targets[i] = o.target(n, timeout, plugins.Relay(n), logins[n])
	}
	for i, same := range o.aliases(raw, names) {
		targets[i].SameAs = same
	}
	rep := fleet.ScanClusters(ctx, targets, mo)
	// A plugin given up on and still running speaks to the terminal
	// again, until it is stopped at exit.
	plugins.Close()
	mu.Lock()
	redraw = func() {}
	if progress {
		render.ClearProgress(errOut)
	}
	mu.Unlock()
	if again := mayPrompt(raw, rep.PluginFailed()); len(again) > 0 && terminal && ctx.Err() == nil {
		// No read is left: a plugin still running is one given up on, and
		// one login gets one run.
		gather.StopGivenUpPlugins(3 * time.Second)
		o.readAgain(ctx, rep, again, timeout, mo, errOut)
	}
	if err := o.print(rep, func(w io.Writer, s render.Styles) error { return render.MultiScan(w, rep, s) }); err != nil {
		return err
	}
	if rep.Interrupted {
		return &ExitCodeError{Code: ExitError, Err: fmt.Errorf("interrupted: %d of %d cluster(s) not read (%s)", len(rep.Unread()), len(names), strings.Join(rep.Unread(), ", "))}
	}
	if u := rep.Unread(); len(u) > 0 {
		return &ExitCodeError{Code: ExitError, Err: fmt.Errorf("%d of %d cluster(s) could not be read (%s): their sections say why", len(u), len(names), strings.Join(u, ", "))}
	}
	return o.failed(rep.Worst())
}

// contextNames are --contexts as given (each must exist), less those an
// entry "!PATTERN" excludes (only exclusions: every context but those), or
// every context of the kubeconfig, sorted.
func (o *ScanOptions) contextNames(raw clientcmdapi.Config) ([]string, error) {
	all := make([]string, 0, len(raw.Contexts))
	for n := range raw.Contexts {
		all = append(all, n)
	}
	sort.Strings(all)
	if o.AllContexts {
		if len(all) == 0 {
			return nil, &ExitCodeError{Code: ExitError, Err: fmt.Errorf("the kubeconfig has no contexts: add one, or use --kubeconfig")}
		}
		return all, nil
	}
	var names []string
	seen, drop := map[string]bool{}, map[string]bool{}
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	onlyExclusions := true
	for _, n := range o.Contexts {
		if n = strings.TrimSpace(n); n != "" && !strings.HasPrefix(n, "!") {
			onlyExclusions = false
		}
	}
	if onlyExclusions {
		for _, n := range all {
			add(n)
		}
	}
	for _, n := range o.Contexts {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if pattern, ok := strings.CutPrefix(n, "!"); ok {
			matched, err := matchContexts(all, pattern)
			if err != nil {
				return nil, err
			}
			for _, c := range matched {
				drop[c] = true
			}
			continue
		}
		matched, err := matchContexts(all, n)
		if err != nil {
			return nil, err
		}
		for _, c := range matched {
			add(c)
		}
	}
	names = slices.DeleteFunc(names, func(n string) bool { return drop[n] })
	if len(names) == 0 {
		return nil, usageErrorf("--contexts: give at least one context (kubectl config get-contexts lists them)")
	}
	return names, nil
}

// matchContexts is the context named n in all (sorted), or, when there
// is none and n is a pattern (prod-*, *-eu-?), every context it matches,
// in name order; a name is taken as it is first, since a context may be
// called anything. Matching nothing is a usage error: a mistyped name
// would otherwise scan other clusters than meant, or none.
func matchContexts(all []string, n string) ([]string, error) {
	if _, ok := slices.BinarySearch(all, n); ok {
		return []string{n}, nil
	}
	if !strings.ContainsAny(n, "*?[") {
		return nil, usageErrorf("--contexts: no context %q in the kubeconfig (kubectl config get-contexts lists them)", n)
	}
	// path.Match's * stops at a slash; EKS names its contexts
	// arn:aws:eks:REGION:ACCOUNT:cluster/NAME, so here it does not.
	slashless := func(s string) string { return strings.ReplaceAll(s, "/", "\x00") }
	var matched []string
	for _, c := range all {
		ok, err := path.Match(slashless(n), slashless(c))
		if err != nil {
			return nil, usageErrorf("--contexts: %q is not a pattern (%v): use * and ? as in a shell", n, err)
		}
		if ok {
			matched = append(matched, c)
		}
	}
	if len(matched) == 0 {
		return nil, usageErrorf("--contexts: no context in the kubeconfig matches %q (kubectl config get-contexts lists them)", n)
	}
	return matched, nil
}

// aliases names, for each context, the first earlier one that reads
// exactly what it would ("" for none): the same cluster entry and user
// entry (their contents, wherever in the kubeconfig files they are and
// whatever they are called) and the same namespaces. Such a context is an
// alias, and reading it again would list every Rollout twice. Contexts
// that differ in anything (another user, a proxy, a namespace) are read,
// and a cluster reached through two of them is found by its Rollouts'
// UIDs instead (fleet.ScanClusters).
func (o *ScanOptions) aliases(raw clientcmdapi.Config, names []string) []string {
	same := make([]string, len(names))
	var firsts []contextRead // the distinct reads so far, with their first context
	var firstNames []string
	for i, n := range names {
		key, ok := o.readKey(raw, n)
		if !ok {
			continue
		}
		for j, k := range firsts {
			if reflect.DeepEqual(k, key) {
				same[i] = firstNames[j]
				break
			}
		}
		if same[i] == "" {
			firsts, firstNames = append(firsts, key), append(firstNames, n)
		}
	}
	return same
}

// contextRead is what a context's scan reads: from which server, as whom,
// in which namespaces ("" for all).
type contextRead struct {
	cluster   clientcmdapi.Cluster
	user      clientcmdapi.AuthInfo
	namespace string
}

// readKey is context name's contextRead; false when the context names a
// cluster the kubeconfig does not have (its read fails and says so).
func (o *ScanOptions) readKey(raw clientcmdapi.Config, name string) (contextRead, bool) {
	ctx := raw.Contexts[name]
	if ctx == nil || raw.Clusters[ctx.Cluster] == nil {
		return contextRead{}, false
	}
	k := contextRead{cluster: *raw.Clusters[ctx.Cluster]}
	if u := raw.AuthInfos[ctx.AuthInfo]; u != nil {
		k.user = *u
	}
	// Where an entry was loaded from is not what it says.
	k.cluster.LocationOfOrigin, k.user.LocationOfOrigin = "", ""
	switch {
	case o.AllNamespaces:
	case o.Namespace != "":
		k.namespace = o.Namespace
	case ctx.Namespace != "":
		k.namespace = ctx.Namespace
	default:
		k.namespace = "default"
	}
	return k, true
}

// login is a context's login on the terminal before the scan: the
// connection it logged in with (its credential cached in the process), or
// why it failed.
type login struct {
	conn *gather.Connection
	err  error
}

// loginTimeout bounds a login at the terminal: a person types.
const loginTimeout = 3 * time.Minute

// mustPrompt are the contexts of names whose credential plugin must prompt
// on a terminal (interactiveMode Always).
func mustPrompt(raw clientcmdapi.Config, names []string) []string {
	var out []string
	for _, n := range names {
		if c := raw.Contexts[n]; c != nil {
			if u := raw.AuthInfos[c.AuthInfo]; u != nil && u.Exec != nil && u.Exec.InteractiveMode == clientcmdapi.AlwaysExecInteractiveMode {
				out = append(out, n)
			}
		}
	}
	return out
}

// mayPrompt are the contexts of names whose credential plugin may prompt
// when it has the terminal (interactiveMode IfAvailable, the default of
// client.authentication.k8s.io/v1beta1, where it may be left out).
func mayPrompt(raw clientcmdapi.Config, names []string) []string {
	var out []string
	for _, n := range names {
		if c := raw.Contexts[n]; c != nil {
			if u := raw.AuthInfos[c.AuthInfo]; u != nil && u.Exec != nil && (u.Exec.InteractiveMode == clientcmdapi.IfAvailableExecInteractiveMode || u.Exec.InteractiveMode == "") {
				out = append(out, n)
			}
		}
	}
	return out
}

// readAgain gives the terminal, one at a time, to the credential plugins
// that failed or did not return without it (names: interactiveMode
// IfAvailable), once the other clusters are read: such a plugin prompts
// only when it has the terminal (a password, an MFA code), and kubectl
// would have given it that. Those that log in are read again, at once,
// into rep; for one whose login fails too the section says so. Only what
// failed pays for a login in turn: most of these plugins work unattended
// from a cached token, and giving each the terminal first would read the
// clusters one after another.
func (o *ScanOptions) readAgain(ctx context.Context, rep *fleet.MultiReport, names []string, timeout time.Duration, mo fleet.MultiOptions, errOut io.Writer) {
	fmt.Fprintf(errOut, "%d context(s) whose credential plugin failed without the terminal (interactiveMode: IfAvailable) log in on it now, one at a time, and are read again\n", len(names))
	logins := o.loginFirst(ctx, names, errOut)
	var targets []fleet.Target
	for _, n := range names {
		switch l, tried := logins[n]; {
		case !tried: // interrupted before its turn: its first section stands
		case l.err != nil:
			i := slices.IndexFunc(rep.Clusters, func(c fleet.Cluster) bool { return c.Context == n })
			rep.Clusters[i].Error = fmt.Sprintf("the credential plugin of context %s failed without the terminal, and again on it after the other clusters were read (what it printed is above): log in with `kubectl --context %s get --raw /version`, then run this again", n, n)
		default:
			targets = append(targets, o.target(n, timeout, nil, l))
		}
	}
	if len(targets) > 0 {
		mo.Done = nil
		rep.Again(fleet.ScanClusters(ctx, targets, mo))
	}
	// Ctrl-C at a login: the contexts not logged in keep their sections.
	rep.Interrupted = rep.Interrupted || ctx.Err() != nil
}

// loginFirst gives the terminal to each context's credential plugin in
// turn, before their clusters are read at once (when two prompt together
// they read the same keystrokes): one request each, with the plugin's
// prompt and what it prints on the terminal as it comes. client-go keeps
// the credential in the process, so the context's read uses it.
func (o *ScanOptions) loginFirst(ctx context.Context, names []string, errOut io.Writer) map[string]login {
	out := map[string]login{}
	for _, n := range names {
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintf(errOut, "logging in to context %s …\n", n)
		conn, err := o.connect(contextFlags(o.flags, n))
		refused := false
		if err == nil {
			lctx, cancel := context.WithTimeout(ctx, loginTimeout)
			refused, err = gather.Authenticate(lctx, conn)
			cancel()
		}
		switch {
		case refused:
			// The plugin failed, or its credential was refused (client-go
			// would run it again on the terminal): not run again.
			fmt.Fprintf(errOut, "context %s: the login failed; its cluster is not read\n", n)
		case err != nil && conn != nil:
			// Logged in, but the cluster did not answer: its read says
			// why, with the credential the login cached.
			err = nil
		}
		out[n] = login{conn: conn, err: err}
	}
	return out
}

// target is one context's scan: its own flags (the kubeconfig, timeout,
// compression and impersonation of the command line, the context's own
// cluster, user and default namespace), connected in the cluster's
// goroutine, and reached first when it must wait for a turn. A context
// logged in on the terminal first reads with that connection; one whose
// login failed does not run its plugin again.
func (o *ScanOptions) target(name string, timeout time.Duration, relay func(*rest.Config), in login) fleet.Target {
	reach := func(ctx context.Context) error { return o.reach(ctx, contextFlags(o.flags, name), timeout) }
	return fleet.Target{Context: name, Reach: reach, Connect: func(ctx context.Context) (dynamic.Interface, gather.FleetOptions, error) {
		f := contextFlags(o.flags, name)
		conn, err := in.conn, in.err
		switch {
		case in.conn == nil && in.err == nil:
			conn, err = o.connect(f, gather.NoPluginTerminal, relay)
		case in.err != nil:
			conn, err = o.connect(f, gather.LoginFailedNoTerminal, relay)
		}
		if err != nil {
			return nil, gather.FleetOptions{}, err
		}
		ns := ""
		if !o.AllNamespaces {
			ns = o.Namespace
			if ns == "" {
				if ns, _, err = f.ToRawKubeConfigLoader().Namespace(); err != nil {
					return nil, gather.FleetOptions{}, err
				}
			}
		}
		return conn.Dynamic, gather.FleetOptions{Namespace: ns, Selector: o.Selector, ToolVersion: Version,
			Context: name, Server: conn.Options.Server, Timeout: conn.Options.Timeout, Kube: conn.Options.Kube}, nil
	}}
}

// usesPlugins is true when a context of names authenticates with an exec
// credential plugin.
func usesPlugins(raw clientcmdapi.Config, names []string) bool {
	for _, n := range names {
		if c := raw.Contexts[n]; c != nil {
			if u := raw.AuthInfos[c.AuthInfo]; u != nil && u.Exec != nil {
				return true
			}
		}
	}
	return false
}

// contextFlags are the command line's kube flags for another context: what
// applies to every cluster is kept, what names one cluster (--cluster,
// --user, --server, credentials) is not.
func contextFlags(f *genericclioptions.ConfigFlags, name string) *genericclioptions.ConfigFlags {
	c := genericclioptions.NewConfigFlags(true)
	c.KubeConfig, c.CacheDir, c.Timeout = f.KubeConfig, f.CacheDir, f.Timeout
	c.DisableCompression = f.DisableCompression
	c.Impersonate, c.ImpersonateUID, c.ImpersonateGroup = f.Impersonate, f.ImpersonateUID, f.ImpersonateGroup
	c.Context = &name
	return c
}
