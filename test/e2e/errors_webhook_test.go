//go:build e2e

package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func init() {
	scenarios = append(scenarios, scenario{"controller-errors-webhook", webhookError})
}

// webhookName is the name the webhook has in its configuration, which the
// API server puts in its denial: Istio's validating webhook's.
const webhookName = "validation.istio.io"

// webhookError: a real validating admission webhook — an HTTPS server this
// test runs on 127.0.0.1 with a CA it generates, called by the lab's API
// server through a ValidatingWebhookConfiguration scoped to the scenario's
// namespace — denies the controller's weight change on the VirtualService
// as Istio's validation webhook denies a configuration it finds invalid.
// The controller reports it as a TrafficRoutingError Warning Event; RD159
// must name the webhook, not an admission policy or RBAC.
func webhookError(t *testing.T, h *harness) {
	spec := rolloutSpec{replicas: 2, steps: "[{setWeight: 50}, {pause: {}}]", mode: hostMode}
	o := h.observe(isCanaryDest(hostMode))
	h.apply(h.trafficObjects(hostMode))
	h.apply(h.rolloutYAML(spec, "a"))
	h.healthy(o, 2, 90*time.Second)

	wh := h.webhookServer(noSplits)
	// A server-side dry run of a split is denied once the API server calls
	// the webhook.
	h.registerWebhook(wh, `{"spec":{"http":[{"name":"primary","route":[{"destination":{"host":"app-stable"},"weight":90},{"destination":{"host":"app-canary"},"weight":10}]}]}}`)
	before := wh.denied()

	h.setImage("b")
	h.checkError("an admission webhook (a server of the test's) rejects the 50% weight on the VirtualService", "TrafficRoutingError", "RD159",
		"an admission webhook rejects the controller's write ("+webhookName+")")
	if wh.denied() <= before {
		t.Errorf("the webhook server denied no request of the controller's (%d denials, %d by the dry run)", wh.denied(), before)
	}
	// One class: neither RBAC (it answers 403 too) nor an admission policy.
	rep := h.diagnose("app")
	if got := messages(rep, "RD159"); len(got) != 1 {
		t.Errorf("RD159 gives %d findings for the webhook's denials, want one:\n%s", len(got), strings.Join(got, "\n"))
	}

	// The webhook's server goes away, its configuration stays: the API
	// server cannot call it and, failurePolicy Fail, refuses the write.
	wh.stop()
	// client-go's event recorder rate-limits the Events of one object (a
	// burst of 25, then one every 5 minutes: tools/record/events_cache.go
	// in every client-go the versions pin), and by now the Rollout has had
	// its denials' and its update's: in the
	// lab v1.7.2–v1.8.3 often had no Event left for this error within a
	// minute. The controller's log has every retry (RD162).
	if h.warningSeen("TrafficRoutingError", "failed calling webhook", 60*time.Second) {
		h.checkErrorMsg("the webhook's server stops answering (failurePolicy Fail)", "TrafficRoutingError", "failed calling webhook", "RD159",
			"the API server cannot call an admission webhook that must answer (failurePolicy Fail), so it refuses the controller's write ("+webhookName+")")
		return
	}
	h.checkLog("the webhook's server stops answering (failurePolicy Fail), no Event left for it", "webhook-unreachable", "failed calling webhook", "("+webhookName+")")
}

// kubectlErr runs kubectl and returns its output and error without failing
// the test.
func (h *harness) kubectlErr(args ...string) (string, error) {
	out, err := exec.Command("kubectl", append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput()
	return string(out), err
}

// registerWebhook registers wh as validating updates of VirtualServices in
// the scenario's namespace (failurePolicy Fail) under Istio's webhook name,
// removes the configuration when the test ends, and waits until the API
// server calls it: until a server-side dry run of the merge patch denied,
// which wh must deny, is denied by it.
func (h *harness) registerWebhook(wh *webhook, denied string) {
	h.t.Helper()
	cfg := "e2e-webhook-" + h.ns
	h.kubectlIn(fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: %[1]s}
webhooks:
- name: %[2]s
  clientConfig: {url: "%[3]s/validate", caBundle: %[4]s}
  rules: [{apiGroups: [networking.istio.io], apiVersions: ["*"], operations: [UPDATE], resources: [virtualservices]}]
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: %[5]s}}
  failurePolicy: Fail
  sideEffects: None
  admissionReviewVersions: [v1]
  timeoutSeconds: 5
`, cfg, webhookName, wh.url, base64.StdEncoding.EncodeToString(wh.caPEM), h.ns), "apply", "-f", "-")
	// Registered after the server's Cleanup, so it runs first: the
	// configuration goes before the server it points at.
	h.t.Cleanup(func() { h.kubectl("delete", "validatingwebhookconfiguration", cfg, "--ignore-not-found") })
	// The API server reads webhook configurations from an informer.
	h.waitFor("the API server calling the webhook", 30*time.Second, func() bool {
		out, err := h.kubectlErr("-n", h.ns, "patch", "virtualservice", "app", "--type=merge", "--dry-run=server", "-p", denied)
		return err != nil && strings.Contains(out, `admission webhook "`+webhookName+`" denied the request`)
	})
}

// webhook is a validating admission webhook served over HTTPS on 127.0.0.1
// with a certificate of its own CA.
type webhook struct {
	url   string
	caPEM []byte
	stop  func() // closes the server and its connections
	// check is the webhook's rule: the reason it denies the VirtualService
	// of a request in namespace ns, or "" to allow it.
	check func(ns string, vs *virtualService) string
	mu    sync.Mutex
	deny  int // requests denied
	// lastDenied is the destinations and weights of the last denied
	// VirtualService, route by route.
	lastDenied string
}

// last is the destinations and weights of the last VirtualService denied.
func (w *webhook) last() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastDenied
}

func (w *webhook) denied() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.deny
}

// webhookServer starts the webhook with its rule; it stops with the test.
func (h *harness) webhookServer(check func(ns string, vs *virtualService) string) *webhook {
	h.t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		h.t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "rolloutdoctor-e2e-webhook-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		h.t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		h.t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		h.t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		h.t.Fatalf("webhook server: %v", err)
	}
	w := &webhook{check: check, url: "https://" + ln.Addr().String(), caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})}
	srv := &http.Server{Handler: http.HandlerFunc(w.serve), ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS12}}
	go srv.ServeTLS(ln, "", "")
	w.stop = func() { srv.Close() }
	h.t.Cleanup(w.stop)
	return w
}

// virtualService is what the webhooks read of a VirtualService.
type virtualService struct {
	Spec struct {
		HTTP []struct {
			Name  string `json:"name"`
			Route []struct {
				Destination struct {
					Host   string `json:"host"`
					Subset string `json:"subset"`
				} `json:"destination"`
				Weight int `json:"weight"`
			} `json:"route"`
		} `json:"http"`
	} `json:"spec"`
}

// noSplits denies a VirtualService that splits traffic (a destination
// weight other than 0 and 100), in the words Istio's webhook uses for a
// configuration it rejects.
func noSplits(ns string, vs *virtualService) string {
	for _, h := range vs.Spec.HTTP {
		for _, d := range h.Route {
			if d.Weight != 0 && d.Weight != 100 {
				return fmt.Sprintf("configuration is invalid: http route %q: weight %d to %s: traffic splits are not allowed in namespace %s",
					h.Name, d.Weight, d.Destination.Host, ns)
			}
		}
	}
	return ""
}

// serve answers an AdmissionReview: denied (403, the check's message) when
// the object is a VirtualService the check rejects, allowed otherwise.
func (w *webhook) serve(rw http.ResponseWriter, r *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(rw, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	var vs virtualService
	if err := json.Unmarshal(review.Request.Object.Raw, &vs); err == nil {
		if msg := w.check(review.Request.Namespace, &vs); msg != "" {
			resp.Allowed = false
			resp.Result = &metav1.Status{Code: http.StatusForbidden, Message: msg}
		}
	}
	if !resp.Allowed {
		var dests []string
		for _, h := range vs.Spec.HTTP {
			for _, d := range h.Route {
				dests = append(dests, fmt.Sprintf("%s%s %d", d.Destination.Host, map[bool]string{true: "/" + d.Destination.Subset}[d.Destination.Subset != ""], d.Weight))
			}
		}
		w.mu.Lock()
		w.deny++
		w.lastDenied = strings.Join(dests, ", ")
		w.mu.Unlock()
	}
	review.Response = resp
	review.Request = nil
	rw.Header().Set("Content-Type", "application/json")
	json.NewEncoder(rw).Encode(&review)
}
