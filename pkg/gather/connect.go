package gather

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Connection is one connection to the cluster a kubeconfig names: the
// dynamic client every read (and escape's writes) go through, the REST
// mapper for the served versions of optional APIs, and the gather options
// that describe the cluster in a snapshot's header.
type Connection struct {
	Dynamic dynamic.Interface
	// Mapper is discovery-backed and lazy: it asks the API server only when
	// an optional API (Istio, Gateway API, KEDA …) is first resolved. Nil
	// means the versions in this package's GVR variables.
	Mapper meta.RESTMapper
	// Options carries Context, Server and Mapper; callers add what to read.
	Options Options
}

// ConfigError says the kubeconfig gives no usable client configuration.
// Nothing was sent to a cluster.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string {
	return fmt.Sprintf("no usable kubeconfig: %v (use --kubeconfig or --context)", e.Err)
}

// Unwrap exposes the cause, for errors.As.
func (e *ConfigError) Unwrap() error { return e.Err }

// Connect builds the one cluster connection a command needs from kubectl's
// flags (--kubeconfig, --context, --server, --as …). tune adjusts the REST
// config before the client is made: a fleet scan raises the client-side
// rate limit, shell completion shortens the timeout. Connect sends no
// request; the first read does.
func Connect(flags *genericclioptions.ConfigFlags, tune ...func(*rest.Config)) (*Connection, error) {
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	for _, t := range tune {
		t(cfg)
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	c := &Connection{Dynamic: dc}
	raw, _ := flags.ToRawKubeConfigLoader().RawConfig()
	c.Options = Options{Context: raw.CurrentContext, Server: cfg.Host}
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
