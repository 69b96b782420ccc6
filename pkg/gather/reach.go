package gather

import (
	"context"
	"errors"
	"net"
	"net/http/httptrace"
	"net/url"
	"os"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
)

// Reach opens one TCP connection to where the context's requests go
// first — its API server, or the proxy on the way — and closes it; it
// sends nothing and runs no credential plugin. A scan over more clusters
// than it reads at once reaches each before it waits for its turn (see
// fleet.Target), so a cluster that cannot be reached (a private endpoint
// without its VPN: the attempt is never answered) is reported without
// taking a turn from the others. The error is worded as a read's would be,
// for the context and within the bound of ctx; timeout is that bound, for
// the words. A context client-go cannot use is not Reach's to report:
// nil, and the read that follows says what is wrong with it.
func Reach(ctx context.Context, flags *genericclioptions.ConfigFlags, timeout time.Duration) error {
	if checkKubeconfig(flags, os.Getenv, inCluster) != nil {
		return nil
	}
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil
	}
	server, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return nil
	}
	// What client-go will not make a client of (a CA with insecure, a
	// certificate file gone) is the kubeconfig's to fix, whatever the
	// network says.
	if _, err := rest.TransportFor(cfg); err != nil {
		return nil
	}
	m := newMonitor(cfg.Host)
	m.proxy = routeOf(cfg, os.Getenv)
	hop := server
	if m.proxy != nil {
		if hop, err = url.Parse(m.proxy.url); err != nil {
			return nil
		}
	}
	ctx = httptrace.WithClientTrace(ctx, m.dial.trace())
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", hostPort(hop))
	if err == nil {
		conn.Close()
		return nil
	}
	if err = m.unconnected(ctx, err); m.proxy != nil && !errors.As(err, new(*ProxyError)) {
		err = m.proxy.unreached(m.server, err)
	}
	opt := Options{Server: cfg.Host, Timeout: timeout}
	if flags.Context != nil {
		opt.Context = *flags.Context
	}
	return readError(err, opt, "connecting to "+opt.APIServer())
}

// hostPort is u's host and port, the scheme's port when it names none.
func hostPort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return u.Host
	}
	port := map[string]string{"http": "80", "https": "443", "socks5": "1080", "socks5h": "1080"}[u.Scheme]
	if port == "" {
		port = "443"
	}
	return net.JoinHostPort(u.Hostname(), port)
}
