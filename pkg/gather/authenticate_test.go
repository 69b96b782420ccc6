package gather

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Authenticate says whether a credential came of the login: refused for a
// 401, not for an answer or a cluster that does not answer (its read then
// says why, with the credential the login cached).
func TestAuthenticate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		code    int
		refused bool
		err     bool
	}{
		{"an answer", http.StatusOK, false, false},
		{"the credential refused", http.StatusUnauthorized, true, true},
		{"a server error", http.StatusServiceUnavailable, false, true},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/version" {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(tc.code)
			w.Write([]byte(`{"major":"1","minor":"33"}`))
		}))
		refused, err := Authenticate(context.Background(), &Connection{Config: &rest.Config{Host: srv.URL}})
		srv.Close()
		if refused != tc.refused || (err != nil) != tc.err {
			t.Errorf("%s: refused %v, err %v; want refused %v, error %v", tc.name, refused, err, tc.refused, tc.err)
		}
	}
	// Nothing listens: not refused.
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	if refused, err := Authenticate(context.Background(), &Connection{Config: &rest.Config{Host: url}}); refused || err == nil {
		t.Errorf("a cluster that does not answer: refused %v, err %v; want an error, not refused", refused, err)
	}
}

// A credential plugin that fails (a wrong password at its prompt) is a
// refused login: the scan does not run it on the terminal again.
func TestAuthenticatePluginFails(t *testing.T) {
	plugin := filepath.Join(t.TempDir(), "login")
	if err := os.WriteFile(plugin, []byte("#!/bin/sh\necho 'wrong password' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	cfg := &rest.Config{Host: srv.URL, ExecProvider: &clientcmdapi.ExecConfig{APIVersion: "client.authentication.k8s.io/v1", Command: plugin, InteractiveMode: clientcmdapi.NeverExecInteractiveMode}}
	if refused, err := Authenticate(context.Background(), &Connection{Config: cfg}); !refused || err == nil {
		t.Errorf("a failing plugin: refused %v, err %v; want refused", refused, err)
	}
}
