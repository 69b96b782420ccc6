package gather

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
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
// (a server that accepts the connection and never answers); plugin names
// the kubeconfig's credential plugin when the wait is for it (a login?).
// Call it before the first read. A Connection made by FromClient never
// calls fn.
func (c *Connection) OnWaiting(after time.Duration, fn func(plugin string)) {
	if c.monitor != nil {
		c.monitor.onWaiting(after, fn)
	}
}

// ConfigError says the kubeconfig gives no usable client configuration.
// Nothing was sent to a cluster.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string {
	return fmt.Sprintf("no usable kubeconfig: %v (use --kubeconfig or --context)", e.Err)
}

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
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	// client-go's default limit (5 requests/s, bursts of 10) is made for
	// controllers that run for days; a one-shot read of ~16 requests spent
	// over a second queueing behind it. This limit still bounds what any
	// command can send an API server.
	cfg.QPS, cfg.Burst = ReadQPS, ReadBurst
	for _, t := range tune {
		t(cfg)
	}
	// One limiter for every client made from cfg (each would otherwise get
	// its own bucket), so the bound holds for the command as a whole.
	if cfg.RateLimiter == nil && cfg.QPS > 0 {
		cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(cfg.QPS, cfg.Burst)
	}
	m := newMonitor(cfg.Host)
	if e := cfg.ExecProvider; e != nil {
		m.plugin = &credentialPlugin{command: e.Command, installHint: strings.TrimSpace(firstLine(e.InstallHint))}
	}
	cfg.Wrap(m.wrap)
	// One HTTP client for the dynamic and the typed clients, so that they
	// share its connection too.
	hc, err := m.httpClient(cfg)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	dc, err := dynamic.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	// Built-in kinds as protobuf: the API server encodes and this process
	// decodes them several times faster than JSON, straight into structs
	// (see Options.Kube).
	kube, err := newTyped(cfg, hc)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	wcfg := rest.CopyConfig(cfg)
	wcfg.Timeout = 0 // watches are long-running; Watch bounds their start
	whc, err := m.httpClient(wcfg)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	wdc, err := dynamic.NewForConfigAndClient(wcfg, whc)
	if err != nil {
		return nil, &ConfigError{Err: err}
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
	if ctx := raw.Contexts[name]; ctx != nil && !set(flags.ClusterName) && raw.Clusters[ctx.Cluster] == nil {
		return &NoClusterError{
			Reason: fmt.Sprintf("context %s names cluster %q, which the kubeconfig does not have (%s)", name, ctx.Cluster, kubeconfigFiles(files, explicit, env)),
			Fix:    fmt.Sprintf("fix the context (kubectl config set-context %s --cluster=NAME; clusters: %s) or pass another --context", name, clusterNames(raw)),
		}
	}
	return nil
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
