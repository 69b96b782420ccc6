package gather

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/flowcontrol"
)

// Connection is one connection to the cluster a kubeconfig names: the
// dynamic client every read (and escape's writes) go through, the REST
// mapper for the served versions of optional APIs, and the gather options
// that describe the cluster in a snapshot's header.
type Connection struct {
	Dynamic dynamic.Interface
	// Watcher is the client for long-running watches: the same cluster and
	// credentials without the per-request timeout, which would cut every
	// watch stream after it. Nil means Dynamic.
	Watcher dynamic.Interface
	// Mapper is discovery-backed and lazy: it asks the API server only when
	// an optional API (Istio, Gateway API, KEDA …) is first resolved. Nil
	// means the versions in this package's GVR variables.
	Mapper meta.RESTMapper
	// Options carries Context, Server, Timeout and Mapper; callers add what
	// to read.
	Options Options
	// Config is the REST config the clients were made from (rate limit,
	// timeout); read it, do not change it.
	Config *rest.Config

	monitor *monitor
}

// OnWaiting arranges for fn to be called once, the first time a request
// has waited `after` with no answer from the API server since it was sent
// (a server that accepts the connection and never answers), with what it
// waits for: the kubeconfig's credential plugin or auth provider (a
// login, a token refresh), a connection that nothing has answered yet, or
// the server. Call it before the first read. A Connection made by
// FromClient never calls fn.
func (c *Connection) OnWaiting(after time.Duration, fn func(Waiting)) {
	if c.monitor != nil {
		c.monitor.onWaiting(after, fn)
	}
}

// ConfigError says the kubeconfig gives no usable client configuration.
// Nothing was sent to a cluster.
type ConfigError struct {
	Err error
	// Reason says what is wrong, in one line (client-go's words, some of
	// which span lines); Fix what to do about it.
	Reason, Fix string
}

// configError words err, ToRESTConfig's, for the context named (""
// when the kubeconfig itself could not be read: then no context is at
// fault). A context's own entries at fault (a client certificate file
// that is gone, an auth provider client-go removed, a server URL that
// does not parse) are what most such errors are.
func configError(err error, context string) *ConfigError {
	cause := strings.Join(strings.Fields(err.Error()), " ")
	if context == "" {
		return &ConfigError{Err: err, Reason: "no usable kubeconfig: " + cause, Fix: "fix it, or use --kubeconfig or --context"}
	}
	return &ConfigError{Err: err, Reason: fmt.Sprintf("context %s is not usable: %s", context, cause),
		Fix: fmt.Sprintf("fix its entries in the kubeconfig (kubectl config view --minify --context %s) or use another context", context)}
}

func (e *ConfigError) Error() string { return e.Reason + ": " + e.Fix }

// Unwrap exposes the cause, for errors.As.
func (e *ConfigError) Unwrap() error { return e.Err }

// NoClusterError says that nothing names a cluster: no kubeconfig (or an
// empty one, or one without a current context) and no in-cluster service
// account. client-go would then try http://localhost:8080 and report a
// refused connection; nothing was sent.
type NoClusterError struct {
	// Reason says what is missing and where it was looked for; Fix what to
	// do about it.
	Reason, Fix string
}

func (e *NoClusterError) Error() string { return e.Reason + ": " + e.Fix }

// ReadQPS and ReadBurst are the client-side rate limit of every command:
// high enough that a diagnose's reads all go out at once, bounded so that a
// fleet scan of many pages cannot flood an API server.
const (
	ReadQPS   = 50
	ReadBurst = 100
)

// NewConfigFlags are kubectl's connection flags with this tool's default
// request timeout (DefaultRequestTimeout instead of kubectl's 0 = none).
func NewConfigFlags() *genericclioptions.ConfigFlags {
	f := genericclioptions.NewConfigFlags(true)
	timeout := DefaultRequestTimeout.String()
	f.Timeout = &timeout
	return f
}

// Connect builds the one cluster connection a command needs from kubectl's
// flags (--kubeconfig, --context, --server, --as, --request-timeout …).
// tune adjusts the REST config before the client is made: a fleet scan
// raises the client-side rate limit, shell completion shortens the
// timeout. Connect sends no request; the first read does. When nothing
// names a cluster it says so (NoClusterError) instead of letting
// client-go fall back to localhost:8080.
func Connect(flags *genericclioptions.ConfigFlags, tune ...func(*rest.Config)) (*Connection, error) {
	if err := checkKubeconfig(flags, os.Getenv, inCluster); err != nil {
		return nil, err
	}
	// What client-go refuses to make a client of is the kubeconfig's.
	unusable := func(err error) (*Connection, error) { return nil, configError(err, contextAtFault(flags)) }
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return unusable(err)
	}
	// client-go's default limit (5 requests/s, bursts of 10) is made for
	// controllers that run for days; a one-shot read of ~16 requests spent
	// over a second queueing behind it. This limit still bounds what any
	// command can send an API server.
	cfg.QPS, cfg.Burst = ReadQPS, ReadBurst
	// The plugin as the kubeconfig names it, before a scan has it relayed.
	var plugin string
	if cfg.ExecProvider != nil {
		plugin = cfg.ExecProvider.Command
	}
	for _, t := range tune {
		t(cfg)
	}
	// One limiter for every client made from cfg (each would otherwise get
	// its own bucket), so the bound holds for the command as a whole.
	if cfg.RateLimiter == nil && cfg.QPS > 0 {
		cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(cfg.QPS, cfg.Burst)
	}
	m := newMonitor(cfg.Host)
	switch e, a := cfg.ExecProvider, cfg.AuthProvider; {
	case e != nil:
		m.cred = &Credentials{Plugin: plugin, InstallHint: strings.TrimSpace(firstLine(e.InstallHint))}
		if out, id, ok := relayedOutput(e); ok {
			m.cred.printed = func() []string { return out.printedBy(id) }
		}
	case a != nil:
		// oidc refreshes its token at the issuer with a client of its own,
		// without a deadline.
		m.cred = &Credentials{Provider: a.Name, Issuer: a.Config["idp-issuer-url"]}
	}
	m.proxy = routeOf(cfg, os.Getenv)
	cfg.Wrap(m.wrap)
	// One HTTP client for the dynamic and the typed clients, so that they
	// share its connection too.
	hc, err := m.httpClient(cfg)
	if err != nil {
		return unusable(err)
	}
	dc, err := dynamic.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return unusable(err)
	}
	// Built-in kinds as protobuf: the API server encodes and this process
	// decodes them several times faster than JSON, straight into structs
	// (see Options.Kube).
	kube, err := newTyped(cfg, hc)
	if err != nil {
		return unusable(err)
	}
	kube.m = m
	wcfg := rest.CopyConfig(cfg)
	wcfg.Timeout = 0 // watches are long-running; Watch bounds their start
	whc, err := m.httpClient(wcfg)
	if err != nil {
		return unusable(err)
	}
	wdc, err := dynamic.NewForConfigAndClient(wcfg, whc)
	if err != nil {
		return unusable(err)
	}
	c := &Connection{Dynamic: dc, Watcher: wdc, Config: cfg, monitor: m}
	raw, _ := flags.ToRawKubeConfigLoader().RawConfig()
	c.Options = Options{Context: raw.CurrentContext, Server: cfg.Host, Timeout: cfg.Timeout, Kube: kube}
	if flags.Context != nil && *flags.Context != "" {
		c.Options.Context = *flags.Context
	}
	if disc, err := flags.ToDiscoveryClient(); err == nil {
		c.Mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
		c.Options.Mapper = c.Mapper
	}
	return c, nil
}

// contextAtFault names the context whose entries ToRESTConfig read: ""
// when the kubeconfig itself does not load (its YAML, a file in
// KUBECONFIG), when no context is at fault.
func contextAtFault(flags *genericclioptions.ConfigFlags) string {
	raw, err := flags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return ""
	}
	if set(flags.Context) {
		return *flags.Context
	}
	return raw.CurrentContext
}

// FromClient wraps a client that is already made (a library user's own, or
// a fake in tests) as a Connection that uses the default API versions.
func FromClient(dc dynamic.Interface) *Connection {
	return &Connection{Dynamic: dc}
}

// inCluster is true when a pod's service account is there to connect with
// (what client-go's loader falls back to when no kubeconfig names a
// cluster).
func inCluster() bool {
	_, err := rest.InClusterConfig()
	return err == nil
}

// checkKubeconfig finds out, before anything is sent, whether anything
// names a cluster: a --server flag, a kubeconfig with a current context
// (or --context), or an in-cluster service account. It follows client-go's
// loading rules: --kubeconfig, else the files in $KUBECONFIG, else
// ~/.kube/config. An unreadable or broken kubeconfig is left to
// ToRESTConfig, whose error says what is wrong with it.
func checkKubeconfig(flags *genericclioptions.ConfigFlags, getenv func(string) string, inCluster func() bool) error {
	if set(flags.APIServer) || getenv("KUBERNETES_MASTER") != "" {
		return nil
	}
	loader := flags.ToRawKubeConfigLoader()
	raw, err := loader.RawConfig()
	if err != nil {
		return nil
	}
	files := loader.ConfigAccess().GetLoadingPrecedence()
	explicit, env := set(flags.KubeConfig), getenv("KUBECONFIG")
	switch {
	case clientcmdapi.IsConfigEmpty(&raw):
		if inCluster() {
			return nil
		}
		return &NoClusterError{
			Reason: fmt.Sprintf("no kubeconfig found (%s; no in-cluster service account either)", kubeconfigWhere(files, explicit, env)),
			Fix:    "point KUBECONFIG or --kubeconfig at a kubeconfig (or give --server)",
		}
	case raw.CurrentContext == "" && !set(flags.Context) && !set(flags.ClusterName):
		return &NoClusterError{
			Reason: fmt.Sprintf("the kubeconfig names no current context (%s)", kubeconfigFiles(files, explicit, env)),
			Fix:    fmt.Sprintf("pass --context NAME (it has: %s) or run kubectl config use-context NAME", contextNames(raw)),
		}
	}
	// A context whose cluster entry is gone (deleted with kubectl config
	// delete-cluster, or in a kubeconfig file no longer in KUBECONFIG):
	// client-go would fall back to localhost:8080 and report it refused.
	name := raw.CurrentContext
	if set(flags.Context) {
		name = *flags.Context
	}
	ctx := raw.Contexts[name]
	if ctx == nil {
		return nil
	}
	if err := removedAuthProvider(raw, name, ctx.AuthInfo, flags); err != nil {
		return err
	}
	cluster := ctx.Cluster
	if set(flags.ClusterName) {
		cluster = *flags.ClusterName
	}
	switch c := raw.Clusters[cluster]; {
	case c == nil && !set(flags.ClusterName):
		return &NoClusterError{
			Reason: fmt.Sprintf("context %s names cluster %q, which the kubeconfig does not have (%s)", name, cluster, kubeconfigFiles(files, explicit, env)),
			Fix:    fmt.Sprintf("fix the context (kubectl config set-context %s --cluster=NAME; clusters: %s) or pass another --context", name, clusterNames(raw)),
		}
	case c != nil && c.Server == "":
		// Half-written by a script or a failed login; client-go would use
		// localhost:8080 here too.
		return &NoClusterError{
			Reason: fmt.Sprintf("cluster %q of context %s has no server address (%s)", cluster, name, kubeconfigFiles(files, explicit, env)),
			Fix:    fmt.Sprintf("set it (kubectl config set-cluster %s --server=https://HOST:PORT), re-run the login that wrote it, or pass another --context", cluster),
		}
	}
	return nil
}

// removedAuthProvider says so when the context's user still logs in with
// the gcp or azure auth provider, which client-go removed in Kubernetes
// 1.26 (kubeconfigs written before then by gcloud or az still have it):
// client-go's own error spans three lines, and a binary that does not
// link its stubs says only "no Auth Provider found".
func removedAuthProvider(raw clientcmdapi.Config, context, user string, flags *genericclioptions.ConfigFlags) error {
	if set(flags.AuthInfoName) {
		user = *flags.AuthInfoName
	}
	u := raw.AuthInfos[user]
	if u == nil || u.AuthProvider == nil {
		return nil
	}
	var fix string
	switch u.AuthProvider.Name {
	case "gcp":
		fix = "install gke-gcloud-auth-plugin (gcloud components install gke-gcloud-auth-plugin) and run gcloud container clusters get-credentials again, which writes an exec entry instead (https://cloud.google.com/kubernetes-engine/docs/deprecations/auth-plugin)"
	case "azure":
		fix = "install kubelogin and convert the kubeconfig to it (kubelogin convert-kubeconfig; https://github.com/Azure/kubelogin)"
	default:
		return nil
	}
	reason := fmt.Sprintf("user %q of context %s logs in with the %s auth provider, which client-go and kubectl removed in Kubernetes 1.26", user, context, u.AuthProvider.Name)
	return &ConfigError{Err: errors.New(reason), Reason: reason, Fix: fix}
}

// clusterNames lists the kubeconfig's clusters for a message.
func clusterNames(raw clientcmdapi.Config) string {
	names := make([]string, 0, len(raw.Clusters))
	for n := range raw.Clusters {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func set(p *string) bool { return p != nil && *p != "" }

// kubeconfigWhere says where the kubeconfig was looked for and what was
// found there, in the loading rules' order.
func kubeconfigWhere(files []string, explicit bool, env string) string {
	switch {
	case len(files) == 0:
		return "KUBECONFIG is not set and there is no home directory"
	case explicit:
		return fmt.Sprintf("--kubeconfig %s, which %s", files[0], fileState(files[0]))
	case env != "" && len(files) == 1:
		return fmt.Sprintf("KUBECONFIG=%s, which %s", env, fileState(files[0]))
	case env != "":
		states := make([]string, 0, len(files))
		for _, f := range files {
			states = append(states, f+" "+fileState(f))
		}
		return fmt.Sprintf("KUBECONFIG=%s: %s", env, strings.Join(states, ", "))
	}
	return fmt.Sprintf("%s %s, and KUBECONFIG is not set", files[0], fileState(files[0]))
}

// kubeconfigFiles names the kubeconfig files read.
func kubeconfigFiles(files []string, explicit bool, env string) string {
	switch {
	case explicit:
		return "--kubeconfig " + strings.Join(files, "")
	case env != "":
		return "KUBECONFIG=" + env
	}
	return strings.Join(files, ", ")
}

func fileState(path string) string {
	st, err := os.Stat(path)
	switch {
	case err != nil && os.IsNotExist(err):
		return "does not exist"
	case err != nil:
		return "cannot be read"
	case st.IsDir():
		return "is a directory"
	}
	return "holds no cluster"
}

func contextNames(raw clientcmdapi.Config) string {
	names := make([]string, 0, len(raw.Contexts))
	for n := range raw.Contexts {
		names = append(names, n)
	}
	if len(names) == 0 {
		return "none"
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// Authenticate sends one request that needs the connection's credentials
// (GET /version): an exec credential plugin runs, or a cached credential
// is used. refused is true when no credential came of it: the plugin
// failed or did not return, or the API server refused the credential
// (401). A scan logs in contexts whose plugin prompts this way, one at a
// time, before their clusters are read at once with the credential it
// cached.
func Authenticate(ctx context.Context, c *Connection) (refused bool, err error) {
	d, err := discovery.NewDiscoveryClientForConfig(c.Config)
	if err != nil {
		return false, err
	}
	_, err = d.RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	if err == nil {
		return false, nil
	}
	var cpe *CredentialPluginError
	// client-go's own words for a plugin that failed, when the request
	// did not pass through the monitor's classification.
	refused = errors.As(err, &cpe) || apierrors.IsUnauthorized(err) || strings.Contains(err.Error(), "getting credentials: ")
	return refused, err
}
