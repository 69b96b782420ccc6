package gather

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/http/httpproxy"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
)

// proxyRoute is the HTTP or SOCKS proxy a connection's requests go
// through, and where that setting comes from.
type proxyRoute struct {
	url  string // the proxy's URL, its password redacted
	from string // "proxy-url" (the kubeconfig's) or the variable's name
	host string // the proxy's host, to tell a local tunnel
}

// routeOf finds the proxy client-go will use for cfg's server: the
// kubeconfig's proxy-url when it has one, else HTTPS_PROXY / HTTP_PROXY
// less NO_PROXY, as client-go's transport reads them (through
// utilnet.NewProxierWithNoProxyCIDR, so CIDRs in NO_PROXY count). getenv
// reads the environment (a parameter for tests: net/http caches what it
// read first). Nil when the requests go straight to the server.
func routeOf(cfg *rest.Config, getenv func(string) string) *proxyRoute {
	u, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return nil
	}
	from := "proxy-url"
	proxy := cfg.Proxy
	if proxy == nil {
		httpName, httpURL := firstSet(getenv, "HTTP_PROXY", "http_proxy")
		httpsName, httpsURL := firstSet(getenv, "HTTPS_PROXY", "https_proxy")
		_, noProxy := firstSet(getenv, "NO_PROXY", "no_proxy")
		fn := (&httpproxy.Config{HTTPProxy: httpURL, HTTPSProxy: httpsURL, NoProxy: noProxy}).ProxyFunc()
		proxy = utilnet.NewProxierWithNoProxyCIDR(func(req *http.Request) (*url.URL, error) { return fn(req.URL) })
		from = httpName
		if u.Scheme == "https" {
			from = httpsName
		}
	}
	p, err := proxy(&http.Request{URL: u, Header: http.Header{}})
	if err != nil || p == nil {
		return nil
	}
	return &proxyRoute{url: p.Redacted(), from: from, host: p.Hostname()}
}

// firstSet is the first of the variables names that is set, and its
// value; the first name and "" when none is.
func firstSet(getenv func(string) string, names ...string) (name, value string) {
	for _, n := range names {
		if v := getenv(n); v != "" {
			return n, v
		}
	}
	return names[0], ""
}

// failure turns a round trip's error into a ProxyError when the proxy
// did not carry the request: it could not be reached, or it answered the
// tunnel's CONNECT with something other than 200. Anything else (the API
// server's own answer, its certificate) is returned as it is.
func (r *proxyRoute) failure(err error, server string) error {
	var pe *ProxyError
	if errors.As(err, &pe) {
		return err
	}
	var op *net.OpError
	if errors.As(err, &op) {
		switch {
		case op.Op == "proxyconnect": // net/http: dialling the proxy or its TLS
			return r.unreached(server, op.Err)
		case strings.HasPrefix(op.Op, "socks "): // reached, but it opened no connection
			return &ProxyError{Proxy: r.url, From: r.from, Server: server, Reached: true, Status: oneLine(op.Err), Err: err}
		}
	}
	// net/http returns a CONNECT's status text alone ("Forbidden") when
	// the proxy refused the tunnel.
	msg := err.Error()
	for code := 300; code < 600; code++ {
		if t := http.StatusText(code); t != "" && msg == t {
			return &ProxyError{Proxy: r.url, From: r.from, Server: server, Reached: true, Code: code, Status: fmt.Sprintf("%d %s", code, t), Err: err}
		}
	}
	return err
}

// silent is the ProxyError of a request to server that timed out while
// the proxy, connected, had not opened the tunnel: the proxy cannot reach
// the server (a private endpoint, a firewall between them) and does not
// say so.
func (r *proxyRoute) silent(server string, err error) *ProxyError {
	return &ProxyError{Proxy: r.url, From: r.from, Server: server, Silent: true, Err: err}
}

// unreached is the ProxyError of a request to server that did not get
// through to the proxy itself, for err.
func (r *proxyRoute) unreached(server string, err error) *ProxyError {
	return &ProxyError{Proxy: r.url, From: r.from, Server: server, local: isLoopback(r.host), Err: err}
}

// String is the proxy's URL and where it is set, as messages name it.
func (r *proxyRoute) String() string { return r.url + " (" + settingName(r.from) + ")" }

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ProxyError is a request that the HTTP or SOCKS proxy between this
// machine and the API server did not carry: the proxy could not be
// reached (Reached false), or it refused to open the connection to the
// server. Nothing reached the API server.
type ProxyError struct {
	// Proxy is the proxy's URL (password redacted); From where it is set:
	// "proxy-url" for the kubeconfig's cluster entry, else the environment
	// variable's name (HTTPS_PROXY …). Server is the API server's URL.
	Proxy, From, Server string
	// Reached is true when the proxy answered but opened no connection;
	// Status is its answer ("407 Proxy Authentication Required", or a
	// SOCKS reply), Code the HTTP status (0 for SOCKS).
	Reached bool
	Status  string
	Code    int
	// Silent: the proxy took the connection but had not answered the
	// request for a tunnel when the request's time was up.
	Silent bool
	Err    error

	local bool // the proxy is on this machine (a tunnel)
}

func (e *ProxyError) Error() string {
	if e.Silent {
		return fmt.Sprintf("proxy %s: no tunnel opened: %v", e.Proxy, e.Err)
	}
	if e.Reached {
		return fmt.Sprintf("proxy %s: %s", e.Proxy, e.Status)
	}
	return fmt.Sprintf("proxy %s: %v", e.Proxy, e.Err)
}

func (e *ProxyError) Unwrap() error { return e.Err }

// retryable is true when a later try may get through: the proxy was down
// or could not reach the server, not a refusal.
func (e *ProxyError) retryable() bool { return !e.Reached || e.Code >= 500 || e.Code == 0 }

// describe words the error in one line; context names the kubeconfig
// context ("" when unknown), timeout is the request's bound.
func (e *ProxyError) describe(context string, timeout time.Duration) string {
	server := "the API server"
	if e.Server != "" {
		server += " at " + e.Server
	}
	if context != "" {
		server += fmt.Sprintf(" (context %s)", context)
	}
	proxy := fmt.Sprintf("the proxy %s (%s)", e.Proxy, settingName(e.From))
	setting := "the proxy settings (HTTPS_PROXY, NO_PROXY)"
	if e.From == "proxy-url" {
		setting = "the cluster's proxy-url in the kubeconfig"
	}
	// What may also be at fault when the environment names the proxy.
	noProxy := ""
	if e.From != "proxy-url" {
		noProxy = "add the server's host to NO_PROXY if it is reachable without the proxy"
	}
	if e.Silent {
		fix := "check that the cluster is up and that the proxy may reach it (a private endpoint, a firewall between them), or raise --request-timeout"
		if noProxy != "" {
			fix += "; " + noProxy
		}
		return fmt.Sprintf("%s took the connection but had not opened one to %s%s: %s", proxy, server, withinBound(timeout), fix)
	}
	if !e.Reached {
		fix := "check " + setting + " and that the proxy is up"
		if e.local {
			fix = "nothing answers there: start the tunnel or local proxy it names (ssh -D, a bastion or VPN client), or fix " + setting
		}
		return fmt.Sprintf("cannot reach %s on the way to %s: %s: %s", proxy, server, dialCause(e.Err), fix)
	}
	var fix string
	switch {
	case e.Code == http.StatusProxyAuthRequired:
		fix = "the proxy wants credentials: log in to it, or give them in its URL (http://USER:PASSWORD@host:port)"
	case e.Code == http.StatusForbidden:
		fix = "the proxy does not let this machine reach that address: ask for it to be allowed"
	case e.Code == 0: // a SOCKS reply
		fix = "check that the cluster is up and that the proxy may reach it"
	case e.Code >= 500:
		fix = "the proxy could not reach the API server: check that the cluster is up and reachable from the proxy"
	default:
		fix = "check " + setting
	}
	if noProxy != "" {
		fix += ", or " + noProxy
	}
	return fmt.Sprintf("%s did not open a connection to %s: it answered %s: %s", proxy, server, e.Status, fix)
}

// settingName says where a proxy is set: from, the kubeconfig's
// proxy-url or an environment variable's name.
func settingName(from string) string {
	if from == "proxy-url" {
		return "the kubeconfig's proxy-url"
	}
	return "from " + from
}

// dialCause says in a few words why a connection could not be made.
func dialCause(err error) string {
	if err == nil {
		return "no connection"
	}
	var nc *NotConnectedError
	if errors.As(err, &nc) {
		return nc.cause("", false)
	}
	var de *net.DNSError
	if errors.As(err, &de) && de.IsTimeout {
		return "its host name could not be looked up (the DNS server " + orUnknown(de.Server) + " did not answer: one reached only over a VPN?)"
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "connection refused"):
		return "connection refused"
	case strings.Contains(msg, "no such host"):
		return "its host name does not resolve"
	case strings.Contains(msg, "network is unreachable"), strings.Contains(msg, "no route to host"):
		return "no route to it"
	case isTimeout(err):
		return "it did not answer"
	case strings.Contains(msg, "x509:"), strings.Contains(msg, "tls: failed to verify"):
		return "its certificate is not trusted (" + x509Reason(msg) + ")"
	}
	return oneLine(err)
}
