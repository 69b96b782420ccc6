// Package nettest serves hostile "API servers" on 127.0.0.1 for tests — one
// that accepts connections and never answers, a port that refuses them, a
// web page where the API should be, a proxy in the way — and writes
// kubeconfigs that point at them. Everything started stops when the test ends.
package nettest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Hang listens on 127.0.0.1 and accepts connections without ever
// answering; it returns the server's http:// URL.
func Hang(t testing.TB) string {
	t.Helper()
	ln := listen(t)
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}

// Refused is the http:// URL of a 127.0.0.1 port that nothing listens on
// (it was listened on and closed).
func Refused(t testing.TB) string {
	t.Helper()
	ln := listen(t)
	ln.Close()
	return "http://" + ln.Addr().String()
}

// Page answers every request with status, Content-Type and body (a login
// portal, a proxy's error page), after delay.
func Page(t testing.TB, status int, contentType, body string, delay time.Duration) string {
	t.Helper()
	ln := listen(t)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// Redirect answers every request with a redirect to location; with
// contentType text/html it carries a page, as a login portal's does.
func Redirect(t testing.TB, status int, location, contentType string) string {
	t.Helper()
	ln := listen(t)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", location)
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		if contentType != "" {
			fmt.Fprintf(w, "<html><head><title>Moved</title></head><a href=%q>here</a></html>", location)
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// NotFound is a Kubernetes API server's answer for a missing Rollout "x",
// after delay: a slow but real server.
func NotFound(t testing.TB, delay time.Duration) string {
	return Page(t, http.StatusNotFound, "application/json",
		`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"details":{"name":"x","group":"argoproj.io","kind":"rollouts"},"message":"rollouts.argoproj.io \"x\" not found"}`, delay)
}

// ConnectProxy is an HTTP proxy on 127.0.0.1 that answers CONNECT with
// status (407, 403, 502 …); with 200 it tunnels to the address asked for,
// as a corporate proxy does; with 0 it never answers, as a proxy that
// cannot reach the address and does not say so. It returns the proxy's
// http:// URL.
func ConnectProxy(t testing.TB, status int) string {
	t.Helper()
	return "http://" + serveEach(t, func(c net.Conn) {
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil || req.Method != http.MethodConnect {
			return
		}
		if status == 0 {
			io.Copy(io.Discard, c) // until the client gives up
			return
		}
		if status != http.StatusOK {
			fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Length: 0\r\n\r\n", status, http.StatusText(status))
			return
		}
		up, err := net.Dial("tcp", req.Host)
		if err != nil {
			return
		}
		defer up.Close()
		fmt.Fprint(c, "HTTP/1.1 200 Connection established\r\n\r\n")
		go io.Copy(up, c)
		io.Copy(c, up)
	})
}

// SOCKSRefusing is a SOCKS5 proxy on 127.0.0.1 that takes the greeting
// and answers every CONNECT with "connection refused" (reply 5); it
// returns the proxy's socks5:// URL.
func SOCKSRefusing(t testing.TB) string {
	t.Helper()
	return "socks5://" + serveEach(t, func(c net.Conn) {
		hello := make([]byte, 3) // version 5, one method: no authentication
		if _, err := io.ReadFull(c, hello); err != nil {
			return
		}
		c.Write([]byte{5, 0})
		if _, err := c.Read(make([]byte, 512)); err != nil {
			return
		}
		c.Write([]byte{5, 5, 0, 1, 0, 0, 0, 0, 0, 0})
	})
}

// SOCKSSilent is a SOCKS5 proxy on 127.0.0.1 that takes the greeting
// and the CONNECT and never answers it (an ssh -D whose far side cannot
// reach the address); it returns the proxy's socks5:// URL.
func SOCKSSilent(t testing.TB) string {
	t.Helper()
	return "socks5://" + serveEach(t, func(c net.Conn) {
		hello := make([]byte, 3)
		if _, err := io.ReadFull(c, hello); err != nil {
			return
		}
		c.Write([]byte{5, 0})
		io.Copy(io.Discard, c) // until the client gives up
	})
}

// serveEach listens on 127.0.0.1 and hands each connection to handle,
// closing it after; it returns the address.
func serveEach(t testing.TB, handle func(net.Conn)) string {
	ln := listen(t)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				handle(c)
			}()
		}
	}()
	return ln.Addr().String()
}

// Kubeconfig writes a kubeconfig whose current context "lab" (namespace
// shop) points at server, in a temporary directory, and returns its path.
func Kubeconfig(t testing.TB, server string) string {
	t.Helper()
	return kubeconfig(t, server, false)
}

// InsecureKubeconfig is Kubeconfig for a TLS test server (httptest's),
// whose certificate the kubeconfig cannot name a CA for: it skips the
// verification.
func InsecureKubeconfig(t testing.TB, server string) string {
	t.Helper()
	return kubeconfig(t, server, true)
}

func kubeconfig(t testing.TB, server string, insecure bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, insecure-skip-tls-verify: %t}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: lab, context: {cluster: c, user: u, namespace: shop}}]
current-context: lab
`, server, insecure)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func listen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}
