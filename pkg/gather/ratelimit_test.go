package gather

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/rolloutdoctor/rolloutdoctor/internal/nettest"
)

// Every command's client is rate limited at ReadQPS with bursts of
// ReadBurst: a diagnose's ~16 reads go out at once, and however many pages
// a fleet scan reads, it cannot send an API server more than that.
func TestReadRateLimitIsBounded(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"apiVersion":"argoproj.io/v1alpha1","kind":"RolloutList","metadata":{},"items":[]}`))
	}))
	defer srv.Close()
	kc := nettest.Kubeconfig(t, srv.URL)
	flags := genericclioptions.NewConfigFlags(true)
	flags.KubeConfig = &kc
	conn, err := Connect(flags)
	if err != nil {
		t.Fatal(err)
	}
	if conn.Config.QPS != ReadQPS || conn.Config.Burst != ReadBurst {
		t.Fatalf("rate limit %v/s burst %d, want %d/s burst %d", conn.Config.QPS, conn.Config.Burst, ReadQPS, ReadBurst)
	}
	// ReadBurst requests go out at once; the next 20 wait for the limiter:
	// at least 20/ReadQPS s in all (a lower bound, not a timing target).
	const extra = 20
	start := time.Now()
	for i := 0; i < ReadBurst+extra; i++ {
		if _, err := conn.Dynamic.Resource(GVRRollout).Namespace("shop").List(context.Background(), metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if min := time.Duration(extra) * time.Second / ReadQPS; time.Since(start) < min*9/10 {
		t.Fatalf("%d requests in %s: the limiter let more than %d/s through", n.Load(), time.Since(start), ReadQPS)
	}
}
