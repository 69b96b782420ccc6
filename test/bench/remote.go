package main

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"

	"k8s.io/client-go/rest"
)

// A remote stands for an API server on a machine of its own. On this
// machine the lab's API servers take a third of a scan's CPU from the same
// two cores the scan runs on (0.17 s of 0.4 s for 1,000 Rollouts), which a
// cluster elsewhere would spend on its own cores. A remote answers a
// request the first time from the real API server and from then on with
// the same bytes from memory: the work of serving them is done once, as if
// elsewhere, while the client still does all of its own — the TLS
// handshake with its client certificate, the request, the decoding. It
// terminates TLS with the lab's serving certificate (same CA, same
// address), so the client cannot tell it from the API server.
//
// Only the benchmark's fleet is read through it, and the fleet does not
// change while it is measured (every Rollout is paused); the first run of
// each case is a warm-up that fills it.
type remote struct {
	ln    net.Listener
	srv   *http.Server
	base  *url.URL
	rt    http.RoundTripper
	mu    sync.Mutex
	cache map[string]*recorded
	// frozen: the lab is stopped (freezeLab), so a request not recorded
	// is answered 503 and counted in misses rather than forwarded.
	frozen atomic.Bool
	misses atomic.Int64
}

type recorded struct {
	status int
	header http.Header
	body   []byte
}

// startRemote serves on a free port of 127.0.0.1 for the API server at
// target (host:port), reaching it with cfg's credentials.
func startRemote(cfg *rest.Config, target, certFile, keyFile string) (*remote, error) {
	c := rest.CopyConfig(cfg)
	c.Host = "https://" + target
	rt, err := rest.TransportFor(c)
	if err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &remote{ln: ln, base: &url.URL{Scheme: "https", Host: target}, rt: rt, cache: map[string]*recorded{}}
	// The client proves its certificate as it would to the API server
	// (the signature is the client's CPU); who it is does not matter here.
	tc := &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAnyClientCert, NextProtos: []string{"h2", "http/1.1"}}
	r.srv = &http.Server{Handler: r, TLSConfig: tc}
	go r.srv.Serve(tls.NewListener(ln, tc))
	return r, nil
}

func (r *remote) addr() string { return r.ln.Addr().String() }

func (r *remote) close() { r.srv.Close() }

func (r *remote) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	key := req.Method + " " + req.URL.RequestURI() + " " + req.Header.Get("Accept") + " " + req.Header.Get("Accept-Encoding")
	r.mu.Lock()
	rec := r.cache[key]
	r.mu.Unlock()
	if rec == nil && r.frozen.Load() {
		r.misses.Add(1)
		http.Error(w, "bench remote: "+key+" was not recorded before the lab was stopped", http.StatusServiceUnavailable)
		return
	}
	if rec == nil {
		var err error
		if rec, err = r.forward(req); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		if req.Method == http.MethodGet && rec.status == http.StatusOK {
			r.mu.Lock()
			r.cache[key] = rec
			r.mu.Unlock()
		}
	}
	for k, vs := range rec.header {
		w.Header()[k] = vs
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(rec.body)))
	w.WriteHeader(rec.status)
	w.Write(rec.body)
}

// forward sends the request to the API server as it came (its
// Accept-Encoding included, so a compressed answer stays compressed).
func (r *remote) forward(req *http.Request) (*recorded, error) {
	out := req.Clone(req.Context())
	out.URL.Scheme, out.URL.Host, out.Host, out.RequestURI = r.base.Scheme, r.base.Host, "", ""
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	out.Body = io.NopCloser(bytes.NewReader(body))
	resp, err := r.rt.RoundTrip(out)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	h := resp.Header.Clone()
	for _, hop := range []string{"Connection", "Transfer-Encoding", "Content-Length", "Keep-Alive"} {
		h.Del(hop)
	}
	return &recorded{status: resp.StatusCode, header: h, body: b}, nil
}
