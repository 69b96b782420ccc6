package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// selfSigned writes a certificate for 127.0.0.1 and its key to dir.
func selfSigned(t *testing.T, dir, name string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return certFile, keyFile
}

// A remote answers a GET from the API server once and then from memory,
// with the same status, headers and bytes; other methods always go through.
func TestRemoteServesEachGetOnce(t *testing.T) {
	var hits atomic.Int64
	api := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Audit-Id", "x")
		io.WriteString(w, `{"kind":"List","path":"`+r.URL.RequestURI()+`","method":"`+r.Method+`"}`)
	}))
	defer api.Close()
	dir := t.TempDir()
	certFile, keyFile := selfSigned(t, dir, "server")
	r, err := startRemote(&rest.Config{TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, strings.TrimPrefix(api.URL, "https://"), certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	clientCert, clientKey := selfSigned(t, dir, "client")
	cc, err := tls.LoadX509KeyPair(clientCert, clientKey)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{cc}}}}
	do := func(method, path string) string {
		t.Helper()
		req, _ := http.NewRequest(method, "https://"+r.addr()+path, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || resp.Header.Get("Audit-Id") != "x" || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s %s: %d %v", method, path, resp.StatusCode, resp.Header)
		}
		return string(b)
	}
	first := do("GET", "/apis/argoproj.io/v1alpha1/rollouts?limit=5000")
	again := do("GET", "/apis/argoproj.io/v1alpha1/rollouts?limit=5000")
	if first != again || !strings.Contains(first, "rollouts?limit=5000") || hits.Load() != 1 {
		t.Fatalf("two GETs: %q then %q, %d requests to the API server; want the same body and 1", first, again, hits.Load())
	}
	do("GET", "/apis/apps/v1/replicasets")
	do("POST", "/apis/argoproj.io/v1alpha1/rollouts?limit=5000")
	do("POST", "/apis/argoproj.io/v1alpha1/rollouts?limit=5000")
	if hits.Load() != 4 {
		t.Fatalf("%d requests to the API server after another GET and two POSTs; want 4", hits.Load())
	}

	// Frozen (the lab stopped): what was recorded is still served, and
	// anything else is refused and counted, never forwarded.
	r.frozen.Store(true)
	if got := do("GET", "/apis/argoproj.io/v1alpha1/rollouts?limit=5000"); got != first {
		t.Fatalf("frozen: recorded GET answered %q; want %q", got, first)
	}
	req, _ := http.NewRequest("GET", "https://"+r.addr()+"/api/v1/pods", nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || r.misses.Load() != 1 || hits.Load() != 4 {
		t.Fatalf("frozen: unrecorded GET got %d, %d misses, %d requests to the API server; want 503, 1, 4", resp.StatusCode, r.misses.Load(), hits.Load())
	}
}
