package gather

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
)

// DefaultRequestTimeout bounds each API request when --request-timeout is
// not given (kubectl's default is 0, no bound: a server that accepts the
// connection and never answers would hold the command forever).
// --request-timeout overrides it; --request-timeout 0 removes the bound.
const DefaultRequestTimeout = 30 * time.Second

// DefaultWaitNotice is how long a request may go without an answer before
// the command says what it is waiting for.
const DefaultWaitNotice = 3 * time.Second

// maxPeek is how much of a non-Kubernetes answer is read to find its
// <title>.
const maxPeek = 64 << 10

// monitor sits in the transport of a connection's clients. It notices
// requests that go unanswered (for the "waiting for the API server" line)
// and answers that no Kubernetes API server gives (an HTML page from a
// login portal or a proxy), which it turns into a NotAPIServerError
// before client-go tries to decode them.
type monitor struct {
	server string // the kubeconfig's server URL, for messages

	// handshake is the transport's TLS handshake timeout (client-go's 10s),
	// for messages.
	handshake time.Duration

	// first is the connection's first request over TLS; ready is closed
	// once it has a connection (or has failed).
	first atomic.Bool
	// firstSent is whether the first request got past the credential
	// layer to the network (nil until it is in it).
	firstSent atomic.Pointer[atomic.Bool]
	ready     chan struct{}
	readyOnce sync.Once

	// cred is the kubeconfig's exec credential plugin or auth provider
	// (nil: none).
	cred *Credentials
	// proxy is the proxy the requests go through (nil: none).
	proxy *proxyRoute
	// dial is how far the connection attempts got (see unconnected);
	// flattened holds the errors unconnected made, by their text (see
	// restore): one or two per connection.
	dial      dialProgress
	flattened map[string]error

	mu       sync.Mutex
	answered time.Time // when the last response arrived
	after    time.Duration
	notify   func(Waiting)
	once     sync.Once
	// credErr is the credential plugin's last failure, at credAt (see
	// credentialFailure).
	credErr  error
	credAt   time.Time
	credHold time.Duration
}

// Credentials is the kubeconfig's credential layer, which runs before a
// request is sent: an exec credential plugin or an auth provider.
type Credentials struct {
	// Plugin is the exec plugin's command, InstallHint the first line of
	// its installHint.
	Plugin, InstallHint string
	// Provider is the auth provider's name (oidc), Issuer where it
	// refreshes its token.
	Provider, Issuer string
	// printed, when the plugin is relayed (a multi-cluster scan), is what
	// its last run printed on stderr.
	printed func() []string
}

func newMonitor(server string) *monitor {
	return &monitor{server: server, ready: make(chan struct{}), credHold: time.Second}
}

// reachedKey marks a request's context with whether the request got past
// client-go's credential layer to the network (wireTransport sets it).
type reachedKey struct{}

// connected holds a request back while the connection's first request
// over TLS is getting a connection, and returns the request to send.
//
// net/http dials once per request that finds no connection, and only
// learns that the server speaks HTTP/2 (so that one connection serves
// them all) when the first TLS handshake is done: a scan, whose five
// lists go out at once, opened five TLS connections to each API server,
// each a full handshake (with a client certificate, an RSA signature) on
// both sides, then dropped all but one. Held back until the first has its
// connection, the others go out over it as HTTP/2 streams; they would
// have waited as long for handshakes of their own. A server without
// HTTP/2 gets a connection per request as before, the rest one handshake
// later. Plain HTTP is let through: it has no handshake to wait for.
//
// first is true for the request the others wait for.
func (m *monitor) connected(req *http.Request) (_ *http.Request, opened func(), first bool, _ error) {
	trace := m.dial.trace()
	if req.URL.Scheme != "https" {
		return req.WithContext(httptrace.WithClientTrace(req.Context(), trace)), func() {}, false, nil
	}
	if m.first.CompareAndSwap(false, true) {
		open := func() { m.readyOnce.Do(func() { close(m.ready) }) }
		trace.GotConn = func(httptrace.GotConnInfo) { open() }
		return req.WithContext(httptrace.WithClientTrace(req.Context(), trace)), open, true, nil
	}
	select {
	case <-m.ready:
		return req.WithContext(httptrace.WithClientTrace(req.Context(), trace)), func() {}, false, nil
	case <-req.Context().Done():
		// It waited for the first request: what held that one holds it.
		if sent := m.firstSent.Load(); m.cred != nil && (sent == nil || !sent.Load()) {
			return nil, nil, false, m.credError(&pluginWait{err: req.Context().Err()})
		}
		return nil, nil, false, m.unconnected(req.Context(), req.Context().Err())
	}
}

// dialProgress is how far a connection's attempts to connect got: a
// request that times out before it has a connection did not wait for an
// answer, and what it waited for instead (a host name lookup, or a TCP
// connection that nothing answers) is what the engineer must fix.
//
// secure is whether a TLS handshake began: through a proxy, a connection
// made without one is still waiting for the proxy to open the tunnel.
type dialProgress struct {
	lookup, looked, tried, made, secure atomic.Bool
}

// tunnelling is true when a connection to the proxy was made and nothing
// began over it yet: the proxy has not opened the tunnel it was asked for.
func (d *dialProgress) tunnelling() bool { return d.made.Load() && !d.secure.Load() }

// tunnelPending is true when the requests wait for the proxy on the way
// to open the tunnel to the API server.
func (m *monitor) tunnelPending() bool {
	return m.proxy != nil && strings.HasPrefix(m.server, "https://") && m.dial.tunnelling()
}

// Waiting is what a request that has had no answer for a while waits for
// (see Connection.OnWaiting): the credential layer, a connection, or, when
// neither, the API server's answer.
type Waiting struct {
	// Cred names the kubeconfig's credential plugin or auth provider when
	// the request is still in it (a login, a token refresh).
	Cred *Credentials
	// Connecting: no connection has been made yet, to the API server or
	// to Proxy (its URL and where it is set) on the way; LookingUp: the
	// host name has not resolved yet.
	Connecting, LookingUp bool
	// Tunnel: connected to Proxy, which has not yet opened the tunnel to
	// the API server.
	Tunnel bool
	Proxy  string
}

// waiting is what the attempts to connect so far leave to wait for.
func (d *dialProgress) waiting() Waiting {
	switch {
	case d.made.Load():
		return Waiting{}
	case d.lookup.Load() && !d.looked.Load():
		return Waiting{Connecting: true, LookingUp: true}
	case d.tried.Load():
		return Waiting{Connecting: true}
	}
	return Waiting{}
}

func (d *dialProgress) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		DNSStart:          func(httptrace.DNSStartInfo) { d.lookup.Store(true) },
		DNSDone:           func(httptrace.DNSDoneInfo) { d.looked.Store(true) },
		ConnectStart:      func(string, string) { d.tried.Store(true) },
		TLSHandshakeStart: func() { d.secure.Store(true) },
		ConnectDone: func(_, _ string, err error) {
			if err == nil {
				d.made.Store(true)
			}
		},
	}
}

// unconnected is err, the failure of a request whose context is ctx, as a
// NotConnectedError when the request timed out and no TCP connection was
// ever made to the first hop (the API server, or the proxy on the way,
// which is then a ProxyError): "did not answer" would send the engineer to
// look at a server that never heard from us. (When the http.Client's
// Timeout, which client-go sets with the context's, fires first, net/http
// says only "context canceled" or "request canceled while waiting for
// connection": the deadline tells.)
func (m *monitor) unconnected(ctx context.Context, err error) error {
	if err == nil || !isTimeout(err) && !pastDeadline(ctx) {
		return err
	}
	w := m.dial.waiting()
	switch {
	case m.tunnelPending():
		// An HTTP proxy that has not answered the CONNECT, or a SOCKS
		// proxy its request (an https:// proxy's own handshake counts
		// as begun, and is left to the other cases).
		err = m.proxy.silent(m.server, err)
	case !w.Connecting: // connected once, still in the credential layer, or never sent
		return err
	case m.proxy != nil:
		err = m.proxy.unreached(m.server, &NotConnectedError{Server: m.proxy.url, LookingUp: w.LookingUp, Err: err})
	default:
		err = &NotConnectedError{Server: m.server, LookingUp: w.LookingUp, Err: err}
	}
	m.keep(err)
	return err
}

// keep remembers err by its text, for restore.
func (m *monitor) keep(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.flattened == nil {
		m.flattened = map[string]error{}
	}
	m.flattened[err.Error()] = err
}

// pastDeadline is true when ctx has a deadline and it has passed.
func pastDeadline(ctx context.Context) bool {
	dl, ok := ctx.Deadline()
	return ok && !time.Now().Before(dl)
}

// restore is err with the error unconnected (or a relayed credential
// plugin's failure, see keep) made for it, when net/http kept only its
// text: the request's context and the http.Client's
// Timeout (client-go sets both to --request-timeout) end together, and
// when the client's timer has fired by the time the transport returns,
// net/http replaces the error with a string of it plus "(Client.Timeout
// exceeded while awaiting headers)".
func (m *monitor) restore(err error) error {
	if m == nil || err == nil {
		return err
	}
	if errors.As(err, new(*ProxyError)) || errors.As(err, new(*NotConnectedError)) || errors.As(err, new(*CredentialPluginError)) {
		return err
	}
	msg := err.Error()
	m.mu.Lock()
	defer m.mu.Unlock()
	for text, typed := range m.flattened {
		if strings.Contains(msg, text) {
			return typed
		}
	}
	return err
}

// NotConnectedError is a read that timed out before any TCP connection to
// the API server was made: its host name was still being looked up, or
// nothing answered the attempts to connect — a private endpoint without
// its VPN, a firewall that drops the packets, an address where the
// cluster no longer is. (A refused connection fails at once, as itself.)
type NotConnectedError struct {
	// Server is where the connection was for: the API server's URL, or
	// the proxy's on the way (inside a ProxyError).
	Server string
	// LookingUp is true when the time went on the host name lookup.
	LookingUp bool
	// Err is what net/http said (a deadline, or a cancellation by the
	// client's timer).
	Err error
}

// Error is the same for every request of a connection that failed the
// same way, whatever net/http said of each (see monitor.restore).
func (e *NotConnectedError) Error() string {
	if e.LookingUp {
		return "timed out looking up the host name of " + e.Server
	}
	return "timed out connecting to " + e.Server
}

func (e *NotConnectedError) Unwrap() error { return e.Err }
func (e *NotConnectedError) Timeout() bool { return true }

// cause says in a few words what the time went on, "within" the bound;
// likely says what usually causes it at an API server's address.
func (e *NotConnectedError) cause(within string, likely bool) string {
	if e.LookingUp {
		s := "its host name was not resolved" + within
		if likely {
			s += " (a DNS server that does not answer: one reached only over a VPN?)"
		}
		return s
	}
	s := "nothing answered the attempt to connect" + within
	if likely {
		s += " (a private endpoint without its VPN, a firewall that drops it, or an address the cluster left)"
	}
	return s
}

// credentialFailure is the credential plugin's failure when it failed
// within credHold: the requests of the same burst return it instead of
// running the plugin again (client-go runs it once per waiting request,
// each run writing its complaint to stderr). Later requests run it as
// usual: a plugin may fail once and work the next time (escape and
// record run for minutes).
func (m *monitor) credentialFailure() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.credErr != nil && time.Since(m.credAt) < m.credHold {
		return m.credErr
	}
	return nil
}

// onWaiting arranges for fn to be called once, the first time a request
// has gone after without any answer from the server since it was sent,
// with what the request is waiting for.
func (m *monitor) onWaiting(after time.Duration, fn func(Waiting)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.after, m.notify = after, fn
}

// wrap is the rest.Config transport wrapper: it sits under client-go's
// credential layer, next to the network.
func (m *monitor) wrap(rt http.RoundTripper) http.RoundTripper {
	if t, ok := rt.(*http.Transport); ok {
		m.mu.Lock()
		m.handshake = t.TLSHandshakeTimeout
		m.mu.Unlock()
	}
	return &wireTransport{rt: rt}
}

// httpClient is cfg's HTTP client (cfg has wrap in its transport), with
// the monitor around its whole transport, client-go's credential layer
// included: an exec credential plugin runs in that layer, where client-go
// gives it no deadline (see monitorTransport.send).
func (m *monitor) httpClient(cfg *rest.Config) (*http.Client, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	hc.Transport = &monitorTransport{m: m, rt: hc.Transport}
	return hc, nil
}

// wireTransport marks each request that reaches the network.
type wireTransport struct{ rt http.RoundTripper }

func (t *wireTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if r, ok := req.Context().Value(reachedKey{}).(*atomic.Bool); ok {
		r.Store(true)
	}
	return t.rt.RoundTrip(req)
}

// WrappedRoundTripper lets client-go reach the transport underneath.
func (t *wireTransport) WrappedRoundTripper() http.RoundTripper { return t.rt }

// arm starts the waiting timer of a request sent at start; the returned
// func stops it, or waits for the notice when it is being given (so that
// the notice is written before anything the request's caller writes).
func (m *monitor) arm(start time.Time, reached *atomic.Bool) func() {
	m.mu.Lock()
	after, notify := m.after, m.notify
	m.mu.Unlock()
	if notify == nil || after <= 0 {
		return func() {}
	}
	fired := make(chan struct{})
	t := time.AfterFunc(after, func() {
		defer close(fired)
		m.mu.Lock()
		quiet := !m.answered.After(start)
		m.mu.Unlock()
		if quiet {
			w := m.dial.waiting()
			switch {
			case m.cred != nil && !reached.Load():
				w = Waiting{Cred: m.cred}
			case w.Connecting && m.proxy != nil:
				w.Proxy = m.proxy.String()
			case m.tunnelPending():
				w = Waiting{Tunnel: true, Proxy: m.proxy.String()}
			}
			m.once.Do(func() { notify(w) })
		}
	})
	return func() {
		if !t.Stop() {
			<-fired
		}
	}
}

func (m *monitor) answer() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.answered = time.Now()
}

type monitorTransport struct {
	m  *monitor
	rt http.RoundTripper
}

func (t *monitorTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req, opened, first, err := t.m.connected(req)
	if err != nil {
		return nil, err
	}
	if err := t.m.credentialFailure(); err != nil {
		opened()
		return nil, err
	}
	reached := new(atomic.Bool)
	if first {
		t.m.firstSent.Store(reached)
	}
	req = req.WithContext(context.WithValue(req.Context(), reachedKey{}, reached))
	stop := t.m.arm(time.Now(), reached)
	resp, err := t.send(req, reached)
	stop()
	if err != nil && t.m.cred != nil && !reached.Load() {
		// Nothing was sent: the credential plugin (or auth provider) failed
		// or did not return.
		err = t.m.credError(err)
		if !errors.Is(err, context.Canceled) {
			t.m.mu.Lock()
			t.m.credErr, t.m.credAt = err, time.Now()
			t.m.mu.Unlock()
		}
	}
	opened() // a request that failed before it had a connection lets the others try
	if resp == nil {
		err = t.m.unconnected(req.Context(), err)
		if err != nil && t.m.proxy != nil {
			err = t.m.proxy.failure(err, t.m.server)
		}
		if err != nil && strings.Contains(err.Error(), "TLS handshake timeout") {
			t.m.mu.Lock()
			err = &handshakeTimeout{after: t.m.handshake, err: err}
			t.m.mu.Unlock()
		}
		return resp, err
	}
	t.m.answer()
	if !isHTML(resp.Header.Get("Content-Type")) {
		return resp, err
	}
	// No Kubernetes API server answers with a web page: say so instead of
	// "serializer for text/html doesn't exist" (or, for a 403 from a
	// proxy, "grant get on rollouts").
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxPeek))
	e := &NotAPIServerError{Server: t.m.server, URL: shortURL(req.URL), Status: resp.StatusCode,
		ContentType: resp.Header.Get("Content-Type"), Title: htmlTitle(body)}
	if loc, err := resp.Location(); err == nil && resp.StatusCode/100 == 3 {
		e.Location = shortURL(loc)
	}
	return nil, e
}

// send is the request's round trip, bounded by its context even while a
// credential plugin runs (or an auth provider refreshes its token).
// client-go runs the plugin without a deadline (exec.Command, not
// CommandContext) before anything is sent, so a plugin that waits for a
// login nobody completes held every command, and a multi-cluster scan,
// past --request-timeout and Ctrl-C; the oidc provider's refresh has no
// deadline either. Once the context
// ends, a request that reached the network returns by itself (net/http
// watches the context); one still in the plugin is left to it, and the
// response it may yet get is closed. Nothing is sent after it is left:
// its context has ended, and net/http sends no request whose context has
// (so an escape write reported as failed stays unwritten).
func (t *monitorTransport) send(req *http.Request, reached *atomic.Bool) (*http.Response, error) {
	if t.m.cred == nil {
		return t.rt.RoundTrip(req)
	}
	type result struct {
		resp *http.Response
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := t.rt.RoundTrip(req)
		done <- result{resp, err}
	}()
	select {
	case r := <-done:
		return r.resp, r.err
	case <-req.Context().Done():
	}
	if reached.Load() {
		r := <-done
		return r.resp, r.err
	}
	abandoned.Store(true)
	go func() {
		if r := <-done; r.resp != nil {
			r.resp.Body.Close()
		}
	}()
	return nil, &pluginWait{err: req.Context().Err()}
}

// WrappedRoundTripper lets client-go reach the transport underneath (to
// cancel a request that timed out).
func (t *monitorTransport) WrappedRoundTripper() http.RoundTripper { return t.rt }

// CredentialPluginError is a request that never reached the API server
// because the kubeconfig's exec credential plugin failed, is not
// installed, or did not return in time — or its auth provider (Provider
// set, Command not) could not get a token.
type CredentialPluginError struct {
	Command, InstallHint string
	Provider, Issuer     string
	Err                  error
	// Relayed says that what the plugin printed on stderr was kept
	// (PluginOutput, in a multi-cluster scan); Printed is its last lines.
	Relayed bool
	Printed []string
}

// Error names the plugin: when the request's deadline ends it, net/http
// keeps only this text of it (its Client.Timeout error is a string).
func (e *CredentialPluginError) Error() string {
	if e.Provider != "" && e.Issuer != "" {
		return fmt.Sprintf("auth provider %q at %s: %v", e.Provider, e.Issuer, e.Err)
	}
	if e.Provider != "" {
		return fmt.Sprintf("auth provider %q: %v", e.Provider, e.Err)
	}
	return fmt.Sprintf("credential plugin %q: %v", e.Command, e.Err)
}
func (e *CredentialPluginError) Unwrap() error { return e.Err }

// credError is err, a request's failure in the credential layer, as the
// CredentialPluginError of the connection's plugin or auth provider.
func (m *monitor) credError(err error) *CredentialPluginError {
	c := m.cred
	e := &CredentialPluginError{Command: c.Plugin, InstallHint: c.InstallHint, Provider: c.Provider, Issuer: c.Issuer, Err: err}
	if c.printed != nil {
		e.Relayed, e.Printed = true, c.printed()
		// What it printed is not in the error's text, which is all
		// net/http keeps when its timer ends the request.
		m.keep(e)
	}
	return e
}

// pluginWait is a request whose context ended while the credential
// plugin was still running.
type pluginWait struct{ err error }

func (e *pluginWait) Error() string { return pluginWaitText + " (" + e.err.Error() + ")" }
func (e *pluginWait) Unwrap() error { return e.err }

const pluginWaitText = "had not returned when the request's time was up"

// pluginWaitIn finds, in the text of an error that net/http flattened,
// the credential plugin or auth provider a request was still waiting for.
func pluginWaitIn(msg string) (*CredentialPluginError, bool) {
	for _, pre := range []string{`credential plugin "`, `auth provider "`} {
		i := strings.Index(msg, pre)
		if i < 0 {
			continue
		}
		rest := msg[i+len(pre):]
		j := strings.Index(rest, ": "+pluginWaitText)
		if j < 0 {
			continue
		}
		// `NAME"`, or `NAME" at ISSUER` for an auth provider.
		name, issuer, _ := strings.Cut(rest[:j], `" at `)
		name = strings.TrimSuffix(name, `"`)
		e := &CredentialPluginError{Command: name, Err: &pluginWait{err: context.DeadlineExceeded}}
		if pre == `auth provider "` {
			e.Command, e.Provider, e.Issuer = "", name, issuer
		}
		return e, true
	}
	return nil, false
}

// describe is the error's one line: what happened to the plugin and what
// to do, for the context named.
func (e *CredentialPluginError) describe(context string, timeout time.Duration) string {
	if e.Provider != "" {
		return e.describeProvider(context, timeout)
	}
	of := fmt.Sprintf("the credential plugin %q", e.Command)
	if context != "" {
		of += " of context " + context
	}
	// What shows the plugin's own prompt or complaint.
	run := "kubectl get --raw /version"
	if context != "" {
		run = "kubectl --context " + context + " get --raw /version"
	}
	msg := e.Err.Error()
	var wait *pluginWait
	switch {
	case errors.As(e.Err, &wait):
		within := withinBound(timeout)
		if said := e.said(); said != "" {
			// Its prompt was on the terminal as it came: a login finished
			// within the bound lets the scan go on.
			return fmt.Sprintf("%s did not return%s (is it waiting for a login?); it printed %s: do what it asks within --request-timeout (raise it), or log in first with `%s`", of, within, said, run)
		}
		return fmt.Sprintf("%s did not return%s (is it waiting for a login?): run `%s` to see what it asks, or raise --request-timeout", of, within, run)
	case strings.Contains(msg, "exec: executable") && strings.Contains(msg, "not found"):
		fix := "install it, or fix users[].user.exec.command in the kubeconfig"
		if e.InstallHint != "" {
			fix = e.InstallHint
		}
		return fmt.Sprintf("%s is not installed (not found in PATH): %s", of, fix)
	case strings.Contains(msg, "cannot support interactive mode"):
		why := "standard input is not a terminal"
		for _, m := range []string{noTerminalMessage, loginFailedMessage} {
			if strings.Contains(msg, m) {
				why = m
			}
		}
		return fmt.Sprintf("%s needs the terminal to log in (interactiveMode: Always) and %s: log in first with `%s` in a terminal, then run this again", of, why, run)
	case strings.Contains(msg, "failed with exit code"):
		code := strings.TrimSpace(msg[strings.LastIndex(msg, "exit code")+len("exit code"):])
		fix := "log in again as it says (an expired SSO or cloud CLI session?), then retry"
		switch said := e.said(); {
		case said != "":
			return fmt.Sprintf("%s failed (exit code %s): it printed %s: %s", of, code, said, fix)
		case e.Relayed:
			return fmt.Sprintf("%s failed (exit code %s) and printed nothing: run `%s` to see how it fails", of, code, run)
		}
		return fmt.Sprintf("%s failed (exit code %s; what it printed is on stderr above): %s", of, code, fix)
	}
	if said := e.said(); said != "" {
		return fmt.Sprintf("%s: %s; it printed %s", of, oneLine(e.Err), said)
	}
	return fmt.Sprintf("%s: %s", of, oneLine(e.Err))
}

// mayLogIn is true for an exec plugin that ran and failed or did not
// return: on the terminal it may prompt and get past what stopped it. Not
// for one that is not installed, nor for an auth provider (it refreshes
// at its issuer and prompts for nothing).
func (e *CredentialPluginError) mayLogIn() bool {
	msg := e.Err.Error()
	return e.Provider == "" && e.Command != "" && !(strings.Contains(msg, "exec: executable") && strings.Contains(msg, "not found"))
}

// said quotes what the relayed plugin printed: its last lines, joined.
func (e *CredentialPluginError) said() string {
	if len(e.Printed) == 0 {
		return ""
	}
	return strconv.Quote(strings.Join(e.Printed, " / "))
}

// describeProvider is describe for an auth provider (oidc): it refreshes
// its token at the issuer before the request goes out, with an HTTP
// client of its own that has no deadline, and a failure there is not the
// API server's.
func (e *CredentialPluginError) describeProvider(context string, timeout time.Duration) string {
	of := fmt.Sprintf("the %s auth provider", e.Provider)
	if context != "" {
		of += " of context " + context
	}
	at, issuer := "", "its issuer"
	if e.Issuer != "" {
		at, issuer = " (it refreshes it at "+e.Issuer+")", "its issuer "+e.Issuer
	}
	var wait *pluginWait
	if errors.As(e.Err, &wait) {
		within := withinBound(timeout)
		return fmt.Sprintf("%s did not get a token%s%s: check that %s is reachable from here (VPN, proxy), or raise --request-timeout", of, within, at, issuer)
	}
	cause, fix := oneLine(e.Err), "log in again for a new refresh token (the old one expired or was revoked?)"
	switch d := dialCause(e.Err); {
	case d == cause:
	case strings.HasPrefix(d, "its certificate"):
		at, cause, fix = "", "cannot reach "+issuer+": "+d, "check idp-certificate-authority in the kubeconfig's auth-provider config"
	default:
		at, cause, fix = "", "cannot reach "+issuer+": "+d, "check that it is reachable from here (VPN, proxy)"
	}
	return fmt.Sprintf("%s could not get a token%s: %s: %s", of, at, cause, fix)
}

// withinBound is " within d" for a message, or "" when there is no bound.
func withinBound(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return " within " + d.String()
}

// handshakeTimeout is a TLS handshake that did not finish within the
// transport's bound.
type handshakeTimeout struct {
	after time.Duration
	err   error
}

func (e *handshakeTimeout) Error() string { return e.err.Error() }
func (e *handshakeTimeout) Unwrap() error { return e.err }
func (e *handshakeTimeout) Timeout() bool { return true }

// bound is the transport's handshake bound (0 when e is nil or it is not
// known).
func (e *handshakeTimeout) bound() time.Duration {
	if e == nil {
		return 0
	}
	return e.after
}

// firstLine is s up to its first line break.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// NoPluginTerminal keeps the terminal from cfg's exec credential plugin:
// a scan over several clusters runs theirs at once, one per context, and
// two that prompt would read the same keystrokes. client-go then runs a
// plugin whose interactiveMode is IfAvailable without stdin (a browser or
// device-code login still works) and refuses one that is Always, which
// the error then says.
func NoPluginTerminal(cfg *rest.Config) {
	if cfg.ExecProvider != nil {
		cfg.ExecProvider.StdinUnavailable = true
		cfg.ExecProvider.StdinUnavailableMessage = noTerminalMessage
	}
}

const noTerminalMessage = "a scan over several clusters gives no credential plugin the terminal"

// LoginFailedNoTerminal is NoPluginTerminal for a context whose plugin was
// given the terminal to log in before a scan's clusters were read at once,
// and failed: it is not run on the terminal again, and its error says so.
func LoginFailedNoTerminal(cfg *rest.Config) {
	if cfg.ExecProvider != nil {
		cfg.ExecProvider.StdinUnavailable = true
		cfg.ExecProvider.StdinUnavailableMessage = loginFailedMessage
	}
}

const loginFailedMessage = "its login on this terminal before the scan failed (what it printed is above)"

func isHTML(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "text/html" || mt == "application/xhtml+xml")
}

// shortURL is scheme://host/path, without the query.
func shortURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

// htmlTitle is the page's <title>, on one line and at most 80 characters
// ("" when there is none).
func htmlTitle(body []byte) string {
	lower := bytes.ToLower(body)
	i := bytes.Index(lower, []byte("<title"))
	if i < 0 {
		return ""
	}
	j := bytes.IndexByte(lower[i:], '>')
	if j < 0 {
		return ""
	}
	start := i + j + 1
	end := bytes.Index(lower[start:], []byte("</title"))
	if end < 0 {
		return ""
	}
	title := strings.Join(strings.Fields(html.UnescapeString(string(body[start:start+end]))), " ")
	if r := []rune(title); len(r) > 80 {
		title = string(r[:79]) + "…"
	}
	return title
}

// NotAPIServerError says the server the kubeconfig names answered with
// something no Kubernetes API server sends: a web page (a login portal, a
// corporate proxy, a load balancer's error page).
type NotAPIServerError struct {
	// Server is the kubeconfig's server URL; URL is what answered (they
	// differ after a redirect).
	Server      string
	URL         string
	Status      int
	ContentType string
	Title       string
	// Location is where a redirect with a web page pointed (a login
	// portal), "" for any other status.
	Location string
}

func (e *NotAPIServerError) Error() string { return e.describe("") }

// describe words the error; context names the kubeconfig context ("" when
// unknown).
func (e *NotAPIServerError) describe(context string) string {
	where := "the server at " + e.Server
	if e.Server == "" {
		where = "the server"
	}
	if context != "" {
		where += fmt.Sprintf(" (context %s)", context)
	}
	what := fmt.Sprintf("it answered %d with an HTML page", e.Status)
	switch {
	case e.Location != "":
		what = fmt.Sprintf("it answered %d with an HTML page redirecting to %s", e.Status, e.Location)
	case e.URL != "" && e.Server != "" && !sameHost(e.URL, e.Server):
		what = fmt.Sprintf("it redirected to %s, which answered %d with an HTML page", e.URL, e.Status)
	}
	page := "Content-Type " + e.ContentType
	if e.Title != "" {
		page = fmt.Sprintf("title %q, %s", e.Title, page)
	}
	return fmt.Sprintf("%s is not a Kubernetes API server: %s (%s): check the kubeconfig's server and proxy settings (clusters[].cluster.server, proxy-url, HTTPS_PROXY/NO_PROXY) or --context",
		where, what, page)
}

func sameHost(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && strings.EqualFold(ua.Host, ub.Host)
}

// APIServer names the API server of a read for messages: "the API server
// at https://host:6443 (context prod)".
func (o Options) APIServer() string {
	s := "the API server"
	if o.Server != "" {
		s += " at " + o.Server
	}
	if o.Context != "" {
		s += fmt.Sprintf(" (context %s)", o.Context)
	}
	return s
}

// netError words a failed request whose cause is the connection or the
// server rather than the object read: one line that says what to check.
// It returns nil for anything else. Errors a retry may cure (the network,
// an overloaded server) are marked Retryable.
func netError(err error, o Options) *Error {
	var nas *NotAPIServerError
	if errors.As(err, &nas) {
		return &Error{Msg: nas.describe(o.Context)}
	}
	var pe *ProxyError
	if errors.As(err, &pe) {
		return &Error{Retryable: pe.retryable(), Msg: pe.describe(o.Context, o.Timeout)}
	}
	var cpe *CredentialPluginError
	if errors.As(err, &cpe) {
		if errors.Is(err, context.Canceled) {
			return nil // Ctrl-C
		}
		return &Error{Msg: cpe.describe(o.Context, o.Timeout), Login: cpe.mayLogIn()}
	}
	if cpe, ok := pluginWaitIn(err.Error()); ok {
		return &Error{Msg: cpe.describe(o.Context, o.Timeout), Login: cpe.mayLogIn()}
	}
	// A plugin that gives a client certificate runs during the TLS
	// handshake, past the point monitorTransport can tell: client-go's
	// words are all there is.
	if _, rest, ok := strings.Cut(err.Error(), "getting credentials: exec: executable "); ok {
		cmd, _, _ := strings.Cut(rest, " ")
		cpe = &CredentialPluginError{Command: cmd, Err: errors.New(firstLine(rest))}
		return &Error{Msg: cpe.describe(o.Context, o.Timeout), Login: cpe.mayLogIn()}
	}
	if apierrors.IsUnauthorized(err) {
		return &Error{Msg: fmt.Sprintf("%s rejected the credentials (401): refresh your kubeconfig login (or check --context, --user)", o.APIServer())}
	}
	msg := err.Error()
	reachable := "check that the cluster is up and reachable from here (VPN, proxy, --context)"
	var nc *NotConnectedError
	if errors.As(err, &nc) { // a timeout, whatever net/http's words for it
		within := withinBound(o.Timeout)
		return &Error{Retryable: true, Msg: fmt.Sprintf("cannot reach %s: %s: %s, or raise --request-timeout", o.APIServer(), nc.cause(within, true), reachable)}
	}
	switch {
	case errors.Is(err, context.Canceled) || strings.Contains(msg, "context canceled"):
		return nil // Ctrl-C, not the network
	case strings.Contains(msg, "TLS handshake timeout"):
		var ht *handshakeTimeout
		errors.As(err, &ht) // nil when net/http's words are all there is
		within := withinBound(ht.bound())
		return &Error{Retryable: true, Msg: fmt.Sprintf("%s did not complete the TLS handshake%s: %s", o.APIServer(), within, reachable)}
	case isTimeout(err):
		within := withinBound(o.Timeout)
		var de *net.DNSError
		if errors.As(err, &de) { // the resolver's own timeout, before the request's
			return &Error{Retryable: true, Msg: fmt.Sprintf("cannot reach %s: %s: check --context, the VPN and DNS", o.APIServer(), dialCause(err))}
		}
		return &Error{Retryable: true, Msg: fmt.Sprintf("%s did not answer%s: %s, or raise --request-timeout", o.APIServer(), within, reachable)}
	case strings.Contains(msg, "connection refused"), strings.Contains(msg, "no such host"),
		strings.Contains(msg, "network is unreachable"), strings.Contains(msg, "no route to host"):
		cause, fix := dialCause(err), reachable
		if strings.Contains(msg, "no such host") {
			fix = "check --context, the VPN and DNS"
		}
		return &Error{Retryable: true, Msg: fmt.Sprintf("cannot reach %s: %s: %s", o.APIServer(), cause, fix)}
	case strings.Contains(msg, "connection reset"), strings.Contains(msg, "broken pipe"), strings.HasSuffix(msg, "EOF"):
		return &Error{Retryable: true, Msg: fmt.Sprintf("the connection to %s broke: %s", o.APIServer(), reachable)}
	case strings.Contains(msg, "x509:"), strings.Contains(msg, "tls: failed to verify"):
		return &Error{Msg: fmt.Sprintf("%s presented a certificate the kubeconfig does not trust (%s): check --context and the kubeconfig's certificate-authority (a TLS-inspecting proxy?)", o.APIServer(), x509Reason(msg))}
	case strings.Contains(msg, "serializer for ") && strings.Contains(msg, "doesn't exist"):
		ct := between(msg, "serializer for ", " doesn't exist")
		return &Error{Msg: fmt.Sprintf("the server at %s is not a Kubernetes API server: it answered with Content-Type %s: check the kubeconfig's server and proxy settings (clusters[].cluster.server, proxy-url, HTTPS_PROXY/NO_PROXY) or --context", orUnknown(o.Server), ct)}
	case apierrors.IsServerTimeout(err), apierrors.IsTimeout(err), apierrors.IsTooManyRequests(err),
		apierrors.IsServiceUnavailable(err), apierrors.IsInternalError(err), apierrors.IsUnexpectedServerError(err):
		return &Error{Retryable: true, Msg: fmt.Sprintf("%s failed the request: %s (the API server is overloaded or restarting; try again)", o.APIServer(), oneLine(err))}
	}
	return nil
}

func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	if errors.As(err, &te) && te.Timeout() {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "deadline exceeded") || strings.Contains(msg, "Client.Timeout exceeded")
}

// x509Reason is the part of a certificate error after "x509: ".
func x509Reason(msg string) string {
	if i := strings.LastIndex(msg, "x509: "); i >= 0 {
		return oneLine(errors.New(msg[i:]))
	}
	return "tls: failed to verify certificate"
}

func between(s, from, to string) string {
	i := strings.Index(s, from)
	if i < 0 {
		return ""
	}
	s = s[i+len(from):]
	if j := strings.Index(s, to); j >= 0 {
		s = s[:j]
	}
	return s
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

// IsRetryable is true for a read error that a later try may not have: the
// network or an overloaded server, not a missing object or a refusal.
func IsRetryable(err error) bool {
	var ge *Error
	return errors.As(err, &ge) && ge.Retryable
}
