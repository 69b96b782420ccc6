package gather

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// logServer is an API server that answers what ControllerLog asks: the
// controller pods by label selector and each pod's log, bounded by
// tailLines and limitBytes as the kubelet bounds it. It records every
// request.
type logServer struct {
	mu        sync.Mutex
	requests  []string
	query     []url.Values
	pods      []corev1.Pod
	log       []byte
	forbidLog bool
	forbidPod bool
}

func (s *logServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.Method+" "+r.URL.Path)
	s.query = append(s.query, r.URL.Query())
	s.mu.Unlock()
	forbid := func(res string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"%s is forbidden: User \"u\" cannot get resource \"%s\" in API group \"\" in the namespace \"argo-rollouts\""}`, res, res)
	}
	switch {
	case r.URL.Path == "/api/v1/namespaces/argo-rollouts/pods":
		if s.forbidPod {
			forbid("pods")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}, Items: s.pods})
	case strings.HasSuffix(r.URL.Path, "/log"):
		if s.forbidLog {
			forbid("pods/log")
			return
		}
		data := s.log
		if t := r.URL.Query().Get("tailLines"); t != "" {
			n, _ := strconv.Atoi(t)
			lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
			if len(lines) > n {
				data = []byte(strings.Join(lines[len(lines)-n:], ""))
			}
		}
		if l := r.URL.Query().Get("limitBytes"); l != "" {
			n, _ := strconv.Atoi(l)
			if len(data) > n {
				data = data[:n]
			}
		}
		w.Write(data)
	default:
		http.NotFound(w, r)
	}
}

func logController() *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "argo-rollouts", Namespace: "argo-rollouts"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "argo-rollouts"}},
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
				{Name: "sidecar", Image: "proxy:1"}, {Name: "argo-rollouts", Image: "quay.io/argoproj/argo-rollouts:v1.10.2"}}}},
		},
	}
}

func logPod(name string, phase corev1.PodPhase) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "argo-rollouts", CreationTimestamp: metav1.Now()}, Status: corev1.PodStatus{Phase: phase}}
}

func startLogServer(t *testing.T, s *logServer) *Typed {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	kube, err := NewTyped(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return kube
}

func readCapture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("../snapshot/testdata/ctrllog/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestControllerLogReadsTheRolloutsLines(t *testing.T) {
	now := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			s := &logServer{pods: []corev1.Pod{logPod("argo-rollouts-a", corev1.PodRunning), logPod("argo-rollouts-old", corev1.PodFailed)},
				log: readCapture(t, format+"-v1.10.2.log")}
			kube := startLogServer(t, s)
			name := "app-" + format + "-v1-10-2"
			l := ControllerLog(context.Background(), kube, LogRequest{Namespace: "capture", Name: name,
				Controllers: []*appsv1.Deployment{logController()}, Since: now.Add(-10 * time.Minute), Now: now, Reason: "test"})
			if l.Gap != "" || len(l.Sources) != 1 || l.Sources[0].Pod != "argo-rollouts-a" || l.Sources[0].Container != "argo-rollouts" || l.Sources[0].Format != format {
				t.Fatalf("read %+v", l)
			}
			if len(l.Lines) == 0 {
				t.Fatal("no lines")
			}
			for _, ln := range l.Lines {
				if ln.Pod != "argo-rollouts-a" {
					t.Errorf("line without its pod: %+v", ln)
				}
			}
			// One LIST, one log GET: the failed pod is not read.
			if len(s.requests) != 2 {
				t.Errorf("requests %v", s.requests)
			}
			q := s.query[1]
			if q.Get("container") != "argo-rollouts" || q.Get("limitBytes") != strconv.Itoa(LogLimitBytes) || q.Get("tailLines") != strconv.Itoa(LogTailLines) ||
				q.Get("sinceTime") != now.Add(-10*time.Minute).Format(time.RFC3339) {
				t.Errorf("log query %v", q)
			}
			if s.query[0].Get("labelSelector") != "app.kubernetes.io/name=argo-rollouts" {
				t.Errorf("pods listed by %v", s.query[0])
			}
		})
	}
}

func TestControllerLogBounds(t *testing.T) {
	now := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	// Lines of 400 bytes: the newest LogTailLines of them are more than
	// LogLimitBytes, so both bounds apply.
	line := `time="2026-12-01T01:59:00Z" level=error msg="rollout syncHandler error: ` + strings.Repeat("x", 300) + `" namespace=shop rollout=app` + "\n"
	var pods []corev1.Pod
	for i := 0; i < 6; i++ {
		pods = append(pods, logPod(fmt.Sprintf("argo-rollouts-%d", i), corev1.PodRunning))
	}
	s := &logServer{pods: pods, log: []byte(strings.Repeat(line, 3*LogLimitBytes/len(line)))}
	kube := startLogServer(t, s)
	// A window older than LogMaxAge starts LogMaxAge ago.
	l := ControllerLog(context.Background(), kube, LogRequest{Namespace: "shop", Name: "app",
		Controllers: []*appsv1.Deployment{logController()}, Since: now.Add(-5 * time.Hour), Now: now})
	if !l.Since.Equal(now.Add(-LogMaxAge)) {
		t.Errorf("since %s, want %s", l.Since, now.Add(-LogMaxAge))
	}
	if got := s.query[1].Get("sinceTime"); got != now.Add(-LogMaxAge).Format(time.RFC3339) {
		t.Errorf("sinceTime %s", got)
	}
	// At most logMaxPods pods are read, each once, however many run.
	if len(s.requests) != 1+logMaxPods || len(l.Sources) != logMaxPods {
		t.Errorf("%d requests for 6 pods: %v", len(s.requests), s.requests)
	}
	for _, src := range l.Sources {
		if !src.Truncated || src.Bytes != LogLimitBytes {
			t.Errorf("source %+v: want truncated at most %d bytes", src, LogLimitBytes)
		}
	}
	if len(l.Lines) > logMaxPods*LogTailLines {
		t.Errorf("%d lines kept", len(l.Lines))
	}
}

func TestControllerLogGaps(t *testing.T) {
	now := time.Now()
	req := LogRequest{Namespace: "shop", Name: "app", Controllers: []*appsv1.Deployment{logController()}, Now: now}
	for _, c := range []struct {
		name string
		s    *logServer
		req  func(LogRequest) LogRequest
		says string
	}{
		{"pods/log forbidden", &logServer{pods: []corev1.Pod{logPod("p", corev1.PodRunning)}, forbidLog: true}, nil,
			`cannot get resource "pods/log" in API group "" in the namespace "argo-rollouts"; grant get on pods/log in namespace argo-rollouts (pod p)`},
		{"pods forbidden", &logServer{forbidPod: true}, nil, "grant list on pods in namespace argo-rollouts"},
		{"no controller pod", &logServer{}, nil, "no running pod of Deployment argo-rollouts/argo-rollouts (0 pod(s) found)"},
		{"only a pending pod", &logServer{pods: []corev1.Pod{logPod("p", corev1.PodPending)}}, nil, "no running pod of Deployment argo-rollouts/argo-rollouts (1 pod(s) found)"},
		{"no controller Deployment", &logServer{}, func(r LogRequest) LogRequest { r.Controllers = nil; return r }, "no controller Deployment that reconciles this Rollout was found"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := req
			if c.req != nil {
				r = c.req(r)
			}
			l := ControllerLog(context.Background(), startLogServer(t, c.s), r)
			if !strings.Contains(l.Gap, c.says) || len(l.Lines) != 0 {
				t.Errorf("gap %q, want %q", l.Gap, c.says)
			}
			if !strings.HasPrefix(l.String(), "could not read the controller's log: ") {
				t.Errorf("String() %q", l.String())
			}
		})
	}
}
