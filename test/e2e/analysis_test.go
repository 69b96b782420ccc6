//go:build e2e

package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/escape"
)

// The analysis scenarios (issue 17): real AnalysisRuns, measured by each
// version's analysis controller with the `web` metric provider against a
// small HTTP server the scenario runs on 127.0.0.1 (the controllers are
// local processes) and whose answers it decides: a value in a JSON body, a
// status code, a delay past the metric's timeout. At each decisive moment
// the plugin's diagnosis (`diagnose -o json`, its analysisRuns section) is
// compared with the AnalysisRun the controller wrote — the run's phase and
// message, each metric's phase, counters and measurements, and the limit
// that decided it, which the controller names in the run's message — and
// its findings with what the controller then does to the Rollout.

func init() {
	// The erroring run takes the longest (five errors, 10 s apart): first.
	scenarios = append(scenarios,
		scenario{"analysis-error", analysisError},
		scenario{"analysis-outlives-step", analysisOutlivesStep},
		scenario{"analysis-pass", analysisPass},
		scenario{"analysis-fail", analysisFail},
		scenario{"analysis-inconclusive", func(t *testing.T, h *harness) { analysisInconclusive(t, h, false) }},
		scenario{"analysis-inconclusive-escape", func(t *testing.T, h *harness) { analysisInconclusive(t, h, true) }},
		scenario{"analysis-step-indefinite", analysisStepIndefinite},
	)
}

var gvrAR = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "analysisruns"}

// errorRetryLab is the analysis controller's wait after an Error
// measurement in every version (analysis/analysis.go
// DefaultErrorRetryInterval), checked against the runs' timestamps.
const errorRetryLab = 10 * time.Second

// reply is one answer of the metric server.
type reply struct {
	status int
	body   string
	// delay holds the answer back; past the metric's timeoutSeconds the
	// controller's client gives up and the measurement is an Error.
	delay time.Duration
}

func value(v string) reply { return reply{status: http.StatusOK, body: `{"value": ` + v + `}`} }

// hit is one request the metric server received.
type hit struct {
	at  time.Time
	uri string // path and query, as the controller sent them
}

// metricServer answers the web provider's requests on 127.0.0.1: the n-th
// request (from 1) gets answer(n).
type metricServer struct {
	url string
	// runs are the namespace's AnalysisRuns as the watch delivered them.
	runs *runVersions
	// hash is the pod-template-hash of the revision under analysis.
	hash   string
	answer func(n int) reply
	mu     sync.Mutex
	hits   []hit
}

// metricServer starts a server for the scenario; it stops with the test.
func (h *harness) metricServer(answer func(n int) reply) *metricServer {
	h.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		h.t.Fatalf("metric server: %v", err)
	}
	s := &metricServer{url: "http://" + ln.Addr().String(), answer: answer, runs: h.watchRuns()}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	// Close, not Shutdown: v1.7.2–v1.9.3 never close a web metric's
	// response body, so their connections never go idle.
	h.t.Cleanup(func() { srv.Close() })
	return s
}

func (s *metricServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits = append(s.hits, hit{at: time.Now(), uri: r.URL.RequestURI()})
	n := len(s.hits)
	s.mu.Unlock()
	a := s.answer(n)
	if a.delay > 0 {
		select {
		case <-time.After(a.delay):
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	io.WriteString(w, a.body)
}

func (s *metricServer) Hits() []hit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]hit(nil), s.hits...)
}

// record records a row for docs/fidelity.md with what changes from run to
// run — the server's port, the revision's hash — written as PORT and B.
func (s *metricServer) record(h *harness, scenario, predicted, observed string) {
	r := strings.NewReplacer(s.url, "http://127.0.0.1:PORT", "app-"+s.hash, "app-B", "hash="+s.hash, "hash=B")
	h.record(scenario, r.Replace(predicted), r.Replace(observed))
}

// webMetric is the one metric of a scenario's AnalysisTemplate.
type webMetric struct {
	interval string
	count    int // 0: unset
	success  string
	failure  string
	// extra is further metric fields, one per line, at the metric's indent.
	extra   string
	timeout int // timeoutSeconds
}

// metricName is the name of every scenario's metric.
const metricName = "success-rate"

// analysisArgs are what the Rollout passes to the template: a literal and
// the new ReplicaSet's pod-template-hash, both substituted into the URL.
const analysisArgs = `[{name: service, value: checkout}, {name: hash, valueFrom: {podTemplateHashValue: Latest}}]`

// templateYAML is the AnalysisTemplate "check", labelled for the harness's
// controller (its template informer lists only its instance's objects).
func (h *harness) templateYAML(s *metricServer, m webMetric) string {
	timeout := m.timeout
	if timeout == 0 {
		timeout = 5
	}
	fields := fmt.Sprintf("\n    interval: %s", m.interval)
	if m.count > 0 {
		fields += fmt.Sprintf("\n    count: %d", m.count)
	}
	if m.success != "" {
		fields += fmt.Sprintf("\n    successCondition: %q", m.success)
	}
	if m.failure != "" {
		fields += fmt.Sprintf("\n    failureCondition: %q", m.failure)
	}
	for _, l := range strings.Split(strings.TrimSpace(m.extra), "\n") {
		if l != "" {
			fields += "\n    " + strings.TrimSpace(l)
		}
	}
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata:
  name: check
  labels: {argo-rollouts.argoproj.io/controller-instance-id: %q}
spec:
  args:
  - name: service
  - name: hash
  metrics:
  - name: %s%s
    provider:
      web:
        url: %q
        jsonPath: "{$.value}"
        timeoutSeconds: %d
`, h.instanceID, metricName, fields, s.url+"/{{args.service}}?hash={{args.hash}}", timeout)
}

// analysisPods: pods start 1–3 s after creation and turn Ready 1–3 s
// later; these scenarios are about the analysis, not the ramp.
const analysisPods = `
      annotations:
        pod-create.stage.kwok.x-k8s.io/delay: "1s"
        pod-create.stage.kwok.x-k8s.io/jitter-delay: "3s"
        pod-ready.stage.kwok.x-k8s.io/delay: "1s"
        pod-ready.stage.kwok.x-k8s.io/jitter-delay: "3s"`

// stepAnalysis: 50% of 2 pods, the analysis step, then an indefinite pause
// at which the Rollout holds once the analysis has passed.
const stepAnalysis = `[{setWeight: 50}, {analysis: {templates: [{templateName: check}], args: ` + analysisArgs + `}}, {pause: {}}]`

// analysisRolloutYAML is a basic canary of 2 pods (no traffic router: the
// weight is the pods' share) with the given steps and, if background is
// set, a background analysis block.
func (h *harness) analysisRolloutYAML(image, steps string, background bool) string {
	bg := ""
	if background {
		bg = "\n      analysis: {templates: [{templateName: check}], args: " + analysisArgs + "}"
	}
	return h.plainCanaryYAML(2, analysisPods, image, bg, steps)
}

// analysisUpdate deploys revision A (no analysis runs on an initial
// deploy), waits until it is Healthy and updates to B, whose analysis the
// scenario then watches. It returns B's pod-template-hash.
func (h *harness) analysisUpdate(s *metricServer, m webMetric, steps string, background bool) string {
	h.t.Helper()
	h.apply(h.templateYAML(s, m))
	h.apply(h.analysisRolloutYAML("a", steps, background))
	h.revisionAHealthy()
	if n := len(s.Hits()); n != 0 {
		h.t.Fatalf("the initial deploy measured %d times; no analysis runs on an initial deploy", n)
	}
	h.setImage("b")
	h.waitFor("the update to B", 30*time.Second, func() bool {
		_, stable, current, _, _ := h.status()
		s.hash = current
		return current != "" && current != stable
	})
	return s.hash
}

// run reads one AnalysisRun as the controller wrote it.
func (h *harness) analysisRun(name string) *v1alpha1.AnalysisRun {
	h.t.Helper()
	return toRun(h.t, h.get(gvrAR, name))
}

func toRun(t *testing.T, u *unstructured.Unstructured) *v1alpha1.AnalysisRun {
	t.Helper()
	ar := &v1alpha1.AnalysisRun{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, ar); err != nil {
		t.Fatalf("decoding AnalysisRun %s: %v", u.GetName(), err)
	}
	return ar
}

// runs lists the namespace's AnalysisRuns, oldest first.
func (h *harness) runs() []*v1alpha1.AnalysisRun {
	h.t.Helper()
	l, err := dyn.Resource(gvrAR).Namespace(h.ns).List(h.ctx, metav1.ListOptions{})
	if err != nil {
		h.t.Fatalf("list analysisruns: %v", err)
	}
	var out []*v1alpha1.AnalysisRun
	for i := range l.Items {
		out = append(out, toRun(h.t, &l.Items[i]))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreationTimestamp.Before(&out[j].CreationTimestamp) })
	return out
}

// waitRun waits for a run of the rollout-type typ for which cond holds,
// reading the runs' latest versions from the watch (no request to the API
// server per poll: 35 scenarios poll at once).
func (s *metricServer) waitRun(h *harness, what, typ string, timeout time.Duration, cond func(*v1alpha1.AnalysisRun) bool) *v1alpha1.AnalysisRun {
	h.t.Helper()
	var found *v1alpha1.AnalysisRun
	h.waitFor(what, timeout, func() bool {
		for _, ar := range s.runs.latest() {
			if ar.Labels[v1alpha1.RolloutTypeLabel] == typ && cond(ar) {
				found = ar
				return true
			}
		}
		return false
	})
	return found
}

// metricResult is the run's result for the scenario's metric (empty before
// the first measurement).
func metricResult(ar *v1alpha1.AnalysisRun) v1alpha1.MetricResult {
	for _, r := range ar.Status.MetricResults {
		if r.Name == metricName {
			return r
		}
	}
	return v1alpha1.MetricResult{}
}

// runVersions keeps every version of the namespace's AnalysisRuns that the
// watch delivered, by resourceVersion (with etcd, every write has its own).
type runVersions struct {
	mu   sync.Mutex
	byRV map[string]*v1alpha1.AnalysisRun
	last map[string]*v1alpha1.AnalysisRun // by name
}

// latest is each run's newest version delivered.
func (r *runVersions) latest() []*v1alpha1.AnalysisRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*v1alpha1.AnalysisRun, 0, len(r.last))
	for _, ar := range r.last {
		out = append(out, ar)
	}
	return out
}

func (r *runVersions) at(rv string) *v1alpha1.AnalysisRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byRV[rv]
}

// watchRuns watches the namespace's AnalysisRuns until the test ends.
func (h *harness) watchRuns() *runVersions {
	h.t.Helper()
	r := &runVersions{byRV: map[string]*v1alpha1.AnalysisRun{}, last: map[string]*v1alpha1.AnalysisRun{}}
	w, err := dyn.Resource(gvrAR).Namespace(h.ns).Watch(h.ctx, metav1.ListOptions{})
	if err != nil {
		h.t.Fatalf("watch analysisruns: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok || ev.Type == watch.Error {
				continue
			}
			ar := &v1alpha1.AnalysisRun{}
			if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, ar) == nil {
				r.mu.Lock()
				r.byRV[ar.ResourceVersion] = ar
				if ev.Type == watch.Deleted {
					delete(r.last, ar.Name)
				} else {
					r.last[ar.Name] = ar
				}
				r.mu.Unlock()
			}
		}
	}()
	h.t.Cleanup(func() { w.Stop(); <-done })
	return r
}

// diagnoseRun runs diagnose and returns its report, its view of the
// AnalysisRun name and that run at the very version the plugin read (the
// watch holds every version), so the comparison does not depend on the
// run holding still while a loaded machine runs the plugin.
func (s *metricServer) diagnoseRun(h *harness, name string) (*diagnose.Report, *v1alpha1.AnalysisRun, diagnose.AnalysisRunView) {
	h.t.Helper()
	rep := h.diagnose("app")
	var v *diagnose.AnalysisRunView
	var shown []string
	for i := range rep.AnalysisRuns {
		shown = append(shown, rep.AnalysisRuns[i].Name)
		if rep.AnalysisRuns[i].Name == name {
			v = &rep.AnalysisRuns[i]
		}
	}
	if v == nil {
		h.t.Fatalf("diagnose does not show AnalysisRun %s (it shows %v)", name, shown)
	}
	var ar *v1alpha1.AnalysisRun
	h.waitFor(fmt.Sprintf("the watch to deliver AnalysisRun %s at resourceVersion %s", name, v.ResourceVersion), 30*time.Second, func() bool {
		ar = s.runs.at(v.ResourceVersion)
		return ar != nil
	})
	if ar.Name != name {
		h.t.Fatalf("resourceVersion %s is AnalysisRun %s, not %s", v.ResourceVersion, ar.Name, name)
	}
	return rep, ar, *v
}

// runFacts is what is compared of a run, built from the AnalysisRun the
// controller wrote (observed) and from diagnose's view of it (predicted)
// alike.
type runFacts struct {
	Phase, Message string
	Terminated     bool
	// Decided is "metric: failed (2) > failureLimit (1)": for the run, what
	// its message names; for diagnose, its decidedBy and decidingLimit.
	Decided string
	// Overwritten: the run is decided but no metric reads its phase.
	Overwritten bool
	Metrics     []metricFacts
}

type metricFacts struct {
	Name, Phase, Message                                             string
	Count, Successful, Failed, Inconclusive, Error, ConsecutiveError int64
	// Measurements: "Phase value [message] @time", oldest first.
	Measurements []string
}

func (m metricFacts) String() string {
	s := fmt.Sprintf("%s %s (count %d: %d successful, %d failed, %d inconclusive; %d error, %d in a row)",
		m.Name, m.Phase, m.Count, m.Successful, m.Failed, m.Inconclusive, m.Error, m.ConsecutiveError)
	if m.Message != "" {
		s += " message " + strconv.Quote(m.Message)
	}
	return s
}

func (f runFacts) String() string {
	s := "run " + f.Phase
	if f.Terminated {
		s += " (terminated)"
	}
	if f.Decided != "" {
		s += ", decided by " + f.Decided
	}
	if f.Overwritten {
		s += " (its metric results written over after the decision)"
	}
	for _, m := range f.Metrics {
		s += "; " + m.String() + ": " + strings.Join(valuesOf(m), ", ")
	}
	return s
}

// valuesOf is each measurement as "Phase value" (the message left out),
// a run of equal ones as "Phase value ×n".
func valuesOf(m metricFacts) []string {
	var out []string
	var last string
	n := 0
	flush := func() {
		switch {
		case n == 1:
			out = append(out, last)
		case n > 1:
			out = append(out, fmt.Sprintf("%s ×%d", last, n))
		}
	}
	for _, x := range m.Measurements {
		p := strings.SplitN(x, " @", 2)[0]
		if i := strings.Index(p, " ["); i >= 0 {
			p = p[:i]
		}
		if p != last {
			flush()
			last, n = p, 0
		}
		n++
	}
	flush()
	return out
}

func measurementFact(phase, value, message string, at *time.Time) string {
	s := phase
	if value != "" {
		s += " " + value
	}
	if message != "" {
		s += " [" + message + "]"
	}
	if at != nil {
		s += " @" + at.UTC().Format(time.RFC3339)
	}
	return s
}

// reDecided reads the metric and the limit that decided a run from its
// message, as the analysis controller words it.
var reDecided = regexp.MustCompile(`^Metric "([^"]+)" assessed \w+ due to ((?:failed|inconclusive|consecutiveErrors) \(\d+\) > (?:failureLimit|inconclusiveLimit|consecutiveErrorLimit) \(-?\d+\))`)

func observedFacts(ar *v1alpha1.AnalysisRun) runFacts {
	f := runFacts{Phase: string(ar.Status.Phase), Message: ar.Status.Message, Terminated: ar.Spec.Terminate}
	if f.Phase == "" {
		f.Phase = "not yet reconciled"
	}
	if m := reDecided.FindStringSubmatch(ar.Status.Message); m != nil {
		f.Decided = m[1] + ": " + m[2]
	}
	// A decided run whose metrics no longer read its phase: its results
	// were written over after the decision.
	switch ar.Status.Phase {
	case v1alpha1.AnalysisPhaseFailed, v1alpha1.AnalysisPhaseError, v1alpha1.AnalysisPhaseInconclusive:
		f.Overwritten = true
		for _, r := range ar.Status.MetricResults {
			if r.Phase == ar.Status.Phase && !r.DryRun {
				f.Overwritten = false
			}
		}
	}
	for _, spec := range ar.Spec.Metrics {
		mf := metricFacts{Name: spec.Name, Phase: string(v1alpha1.AnalysisPhasePending)}
		for _, r := range ar.Status.MetricResults {
			if r.Name != spec.Name {
				continue
			}
			mf.Phase, mf.Message = string(r.Phase), r.Message
			mf.Count, mf.Successful, mf.Failed, mf.Inconclusive = int64(r.Count), int64(r.Successful), int64(r.Failed), int64(r.Inconclusive)
			mf.Error, mf.ConsecutiveError = int64(r.Error), int64(r.ConsecutiveError)
			for _, x := range r.Measurements {
				var at *time.Time
				switch {
				case x.FinishedAt != nil:
					at = &x.FinishedAt.Time
				case x.StartedAt != nil:
					at = &x.StartedAt.Time
				}
				mf.Measurements = append(mf.Measurements, measurementFact(string(x.Phase), x.Value, x.Message, at))
			}
		}
		f.Metrics = append(f.Metrics, mf)
	}
	return f
}

func predictedFacts(v diagnose.AnalysisRunView) runFacts {
	f := runFacts{Phase: v.Phase, Message: v.Message, Terminated: v.Terminated, Overwritten: v.ResultsOverwritten}
	if v.DecidedBy != "" {
		f.Decided = v.DecidedBy + ": " + v.DecidingLimit
	}
	for _, m := range v.Metrics {
		mf := metricFacts{Name: m.Name, Phase: m.Phase, Message: m.Message,
			Count: int64(m.Count), Successful: int64(m.Successful), Failed: int64(m.Failed), Inconclusive: int64(m.Inconclusive), Error: int64(m.Error)}
		for _, l := range m.Limits {
			if l.Name == "consecutiveErrorLimit" {
				mf.ConsecutiveError = int64(l.Count)
			}
		}
		for _, x := range m.Measurements {
			mf.Measurements = append(mf.Measurements, measurementFact(x.Phase, x.Value, x.Message, x.At))
		}
		f.Metrics = append(f.Metrics, mf)
	}
	return f
}

// compareRun reports every difference between diagnose's view of a run and
// the run: phase, message, termination, the deciding limit, and for each
// metric its phase, message, counters and every measurement the run keeps.
func compareRun(t *testing.T, what string, v diagnose.AnalysisRunView, ar *v1alpha1.AnalysisRun) {
	t.Helper()
	p, o := predictedFacts(v), observedFacts(ar)
	var diffs []string
	if p.Phase != o.Phase || p.Message != o.Message || p.Terminated != o.Terminated {
		diffs = append(diffs, fmt.Sprintf("run: diagnose %s %q terminated=%v; controller %s %q terminated=%v", p.Phase, p.Message, p.Terminated, o.Phase, o.Message, o.Terminated))
	}
	if p.Decided != o.Decided {
		diffs = append(diffs, fmt.Sprintf("decided by: diagnose %q; the run's message %q", p.Decided, o.Decided))
	}
	if p.Overwritten != o.Overwritten {
		diffs = append(diffs, fmt.Sprintf("results written over after the decision: diagnose %v; the run %v", p.Overwritten, o.Overwritten))
	}
	if len(p.Metrics) != len(o.Metrics) {
		diffs = append(diffs, fmt.Sprintf("diagnose shows %d metrics, the run has %d", len(p.Metrics), len(o.Metrics)))
	}
	for i := 0; i < len(p.Metrics) && i < len(o.Metrics); i++ {
		pm, om := p.Metrics[i], o.Metrics[i]
		if pm.String() != om.String() {
			diffs = append(diffs, fmt.Sprintf("metric: diagnose %s; controller %s", pm, om))
		}
		if strings.Join(pm.Measurements, "\n") != strings.Join(om.Measurements, "\n") {
			diffs = append(diffs, fmt.Sprintf("measurements of %s: diagnose\n    %s\n  controller\n    %s", pm.Name,
				strings.Join(pm.Measurements, "\n    "), strings.Join(om.Measurements, "\n    ")))
		}
	}
	if len(diffs) > 0 {
		t.Errorf("%s: diagnose's view of AnalysisRun %s differs from the run:\n  %s", what, ar.Name, strings.Join(diffs, "\n  "))
	}
}

// checkRequests compares the requests the server received with the
// measurements the run took (its counters): at least one request each, and
// none after the run completed (completedAt is in whole seconds). More
// requests than measurements are measurements taken again: a reconcile
// that starts from an older copy of the run (its informer behind the
// controller's own last write, seen in the lab under a load average of
// 27) takes the last measurement again; the note says how many.
func checkRequests(t *testing.T, s *metricServer, ar *v1alpha1.AnalysisRun) (note string) {
	t.Helper()
	time.Sleep(3 * time.Second) // a request still to come would come now
	r := metricResult(ar)
	taken := int(r.Count + r.Error)
	hits := s.Hits()
	if len(hits) < taken {
		t.Errorf("the server was asked %d times; the run counts %d measurements", len(hits), taken)
	}
	if ar.Status.CompletedAt != nil {
		for i, x := range hits {
			if x.at.After(ar.Status.CompletedAt.Add(time.Second)) {
				t.Errorf("request %d came at %s, after the run completed at %s", i+1, x.at.UTC().Format(time.RFC3339Nano), ar.Status.CompletedAt.UTC().Format(time.RFC3339))
			}
		}
	}
	if n := len(hits) - taken; n > 0 {
		return fmt.Sprintf("; %d request(s) more than measurements (taken again from an older copy of the run)", n)
	}
	return ""
}

func finding(r *diagnose.Report, id string) *diagnose.Finding {
	for i := range r.Findings {
		if r.Findings[i].ID == id {
			return &r.Findings[i]
		}
	}
	return nil
}

// abortMessage is the Rollout's status.message after an analysis abort, as
// each version's source builds it: "RolloutAborted: Rollout aborted update
// to revision N: " and, from v1.9, the kind of analysis before the run's
// message (rollout/analysis.go, pause.go, conditions.go).
func abortMessage(version string, revision int, kind, runMessage string) string {
	var major, minor int
	fmt.Sscanf(version, "v%d.%d", &major, &minor)
	msg := runMessage
	if major > 1 || minor >= 9 {
		msg = kind + " analysis phase error/failed"
		if runMessage != "" {
			msg += ": " + runMessage
		}
	}
	return fmt.Sprintf("RolloutAborted: Rollout aborted update to revision %d: %s", revision, msg)
}

// rolloutMessage is the Rollout's status.message.
func (h *harness) rolloutMessage() string {
	msg, _, _ := unstructured.NestedString(h.get(gvrRollout, "app").Object, "status", "message")
	return msg
}

// checkURL compares the request the controller sent with diagnose's query
// (its URL with the arguments substituted).
func checkURL(t *testing.T, s *metricServer, v diagnose.AnalysisRunView, hashB string) {
	t.Helper()
	hits := s.Hits()
	if len(hits) == 0 || len(v.Metrics) == 0 {
		t.Errorf("no request to compare with diagnose's query")
		return
	}
	want := "/checkout?hash=" + hashB
	if hits[0].uri != want {
		t.Errorf("the controller requested %s, want %s", hits[0].uri, want)
	}
	if q := "GET " + s.url + hits[0].uri; v.Metrics[0].Query != q {
		t.Errorf("diagnose's query %q; the controller requested %q", v.Metrics[0].Query, q)
	}
}

// analysisPass: a step analysis that passes (3 measurements 2 s apart, each
// above the threshold): diagnosed while it runs and once it is done, and
// the Rollout moves past the analysis step to the pause after it.
func analysisPass(t *testing.T, h *harness) {
	vals := []string{"0.97", "0.99", "0.98"}
	s := h.metricServer(func(n int) reply { return value(vals[(n-1)%len(vals)]) })
	hashB := h.analysisUpdate(s, webMetric{interval: "2s", count: 3, success: "result >= 0.95"}, stepAnalysis, false)
	ar := s.waitRun(h, "the step run's first measurement", v1alpha1.RolloutTypeStepLabel, 60*time.Second, func(ar *v1alpha1.AnalysisRun) bool {
		return len(metricResult(ar).Measurements) > 0
	})
	rep, mid, v := s.diagnoseRun(h, ar.Name)
	compareRun(t, "while it runs", v, mid)
	checkURL(t, s, v, hashB)
	if mid.Status.Phase == v1alpha1.AnalysisPhaseRunning && v.Role != "current" {
		t.Errorf("the running step run is shown as %q, want current (the Rollout's status names it)", v.Role)
	}
	midFacts := predictedFacts(v).String()
	midIDs := findingIDs(rep)

	h.waitFor("the Rollout past the analysis step, paused at step 2", 60*time.Second, func() bool {
		phase, _, _, idx, _ := h.status()
		return idx == 2 && phase == "Paused"
	})
	rep, done, v := s.diagnoseRun(h, ar.Name)
	compareRun(t, "once passed", v, done)
	if done.Status.Phase != v1alpha1.AnalysisPhaseSuccessful || metricResult(done).Count != 3 {
		t.Errorf("the run is %s with %d measurements; want Successful with 3", done.Status.Phase, metricResult(done).Count)
	}
	for _, id := range []string{"RD119", "RD120", "RD121", "RD122", "RD125"} {
		if hasFinding(rep, id) || strings.Contains(","+midIDs+",", ","+id+",") {
			t.Errorf("a passing analysis raised %s: %s / %s", id, midIDs, findingIDs(rep))
		}
	}
	note := checkRequests(t, s, done)
	s.record(h, "analysis: a passing step analysis (web, count 3, interval 2 s)",
		fmt.Sprintf("while it ran: %s; findings %q — once done: %s; findings %q", midFacts, midIDs, predictedFacts(v), findingIDs(rep)),
		fmt.Sprintf("%s; the Rollout moved past the analysis step to the pause at step 2%s", observedFacts(done), note))
}

// analysisFail: a step analysis whose second and third values miss the
// threshold with failureLimit 1: failed (2) > failureLimit (1) fails the
// run and the run aborts the Rollout. Once, on v1.8.3 under a load average
// of 36, the controller then wrote results from an older copy of the run
// over those that failed it: the run Failed, its metric Running with one
// failure; diagnose must then say so (resultsOverwritten, RD119).
func analysisFail(t *testing.T, h *harness) {
	// Every answer after the first fails, so a measurement taken again
	// (checkRequests) fails the metric all the same.
	vals := []string{"0.97", "0.62", "0.41", "0.33"}
	s := h.metricServer(func(n int) reply { return value(vals[min(n, len(vals))-1]) })
	// 2 s apart: the answers go by request, and a reconcile that starts
	// from an older copy of the run (the informer a second behind, under a
	// load average of 36) takes a measurement again.
	h.analysisUpdate(s, webMetric{interval: "2s", count: 4, success: "result >= 0.95", extra: "failureLimit: 1"}, stepAnalysis, false)
	h.waitFor("the abort", 90*time.Second, func() bool {
		_, _, _, _, abort := h.status()
		return abort && strings.HasPrefix(h.rolloutMessage(), "RolloutAborted")
	})
	ar := s.waitRun(h, "the Failed step run", v1alpha1.RolloutTypeStepLabel, 10*time.Second, func(ar *v1alpha1.AnalysisRun) bool {
		return ar.Status.Phase == v1alpha1.AnalysisPhaseFailed
	})
	rep, ar, v := s.diagnoseRun(h, ar.Name)
	compareRun(t, "after the abort", v, ar)
	const wantRun = `Metric "success-rate" assessed Failed due to failed (2) > failureLimit (1)`
	if ar.Status.Message != wantRun {
		t.Errorf("the run's message is %q, want %q", ar.Status.Message, wantRun)
	}
	if !v.CausedAbort {
		t.Errorf("diagnose does not mark %s as the run that aborted the Rollout (role %q)", v.Name, v.Role)
	}
	msg := h.rolloutMessage()
	if want := abortMessage(h.version, 2, "Step-based", ar.Status.Message); msg != want {
		t.Errorf("the Rollout's message is %q; from the %s source: %q", msg, h.version, want)
	}
	f := finding(rep, "RD119")
	switch {
	case f == nil:
		t.Errorf("no RD119 for the failed analysis: %s", findingIDs(rep))
	default:
		want := []string{`"success-rate"`, "failed (2) > failureLimit (1)", "result >= 0.95"}
		if observedFacts(ar).Overwritten {
			want = append(want, "was written over after that decision")
		}
		for _, x := range metricResult(ar).Measurements {
			want = append(want, x.Value)
		}
		for _, w := range want {
			if !strings.Contains(f.Message, w) {
				t.Errorf("RD119 does not say %q: %s", w, f.Message)
			}
		}
		seen := false
		for _, e := range f.Evidence {
			seen = seen || e.Field == "status.message" && e.Value == msg
		}
		if !seen {
			t.Errorf("RD119's evidence does not carry the Rollout's message %q: %+v", msg, f.Evidence)
		}
	}
	note := checkRequests(t, s, ar)
	s.record(h, "analysis: a failing step analysis aborts the Rollout (web, failureLimit 1)",
		fmt.Sprintf("%s; %s", predictedFacts(v), msgOf(f)),
		fmt.Sprintf("%s; Rollout message %q%s", observedFacts(ar), msg, note))
}

// analysisError: every request errors — HTTP 500, then a delay past the
// metric's 1 s timeout, alternately. Errors are retried 10 s apart, do not
// count towards count, and the fifth in a row (consecutiveErrorLimit 4 by
// default) ends the metric and the run in Error, which aborts the Rollout.
// Diagnosed after the second error: RD120 says how many more errors end
// the metric, which is then counted.
func analysisError(t *testing.T, h *harness) {
	s := h.metricServer(func(n int) reply {
		if n%2 == 1 {
			return reply{status: http.StatusInternalServerError, body: `{"error": "boom"}`}
		}
		return reply{status: http.StatusOK, body: `{"value": 0.99}`, delay: 3 * time.Second}
	})
	h.analysisUpdate(s, webMetric{interval: "1s", count: 3, success: "result >= 0.95", timeout: 1}, stepAnalysis, false)
	ar := s.waitRun(h, "two errors in a row", v1alpha1.RolloutTypeStepLabel, 60*time.Second, func(ar *v1alpha1.AnalysisRun) bool {
		return metricResult(ar).ConsecutiveError == 2
	})
	rep, mid, v := s.diagnoseRun(h, ar.Name)
	compareRun(t, "after two errors", v, mid)
	f := finding(rep, "RD120")
	left := -1
	if f == nil {
		t.Errorf("no RD120 while the provider errors: %s", findingIDs(rep))
	} else if m := regexp.MustCompile(`(\d+) error\(s\) in a row; (\d+) more`).FindStringSubmatch(f.Message); m == nil {
		t.Errorf("RD120 does not say how many errors are left: %s", f.Message)
	} else {
		left, _ = strconv.Atoi(m[2])
	}
	midErrors := int64(metricResult(mid).Error)
	var midLast time.Time
	if ms := metricResult(mid).Measurements; len(ms) > 0 && ms[len(ms)-1].FinishedAt != nil {
		midLast = ms[len(ms)-1].FinishedAt.Time
	}
	midFacts := predictedFacts(v).String()

	h.waitFor("the abort", 120*time.Second, func() bool {
		_, _, _, _, abort := h.status()
		return abort && strings.HasPrefix(h.rolloutMessage(), "RolloutAborted")
	})
	rep, ar, v = s.diagnoseRun(h, ar.Name)
	compareRun(t, "after the abort", v, ar)
	r := metricResult(ar)
	if ar.Status.Phase != v1alpha1.AnalysisPhaseError || r.ConsecutiveError != 5 || r.Error != 5 || r.Count != 0 {
		t.Errorf("the run is %s with %d errors (%d in a row) and count %d; want Error after 5 in a row, count 0", ar.Status.Phase, r.Error, r.ConsecutiveError, r.Count)
	}
	if left >= 0 && int64(r.Error)-midErrors != int64(left) {
		t.Errorf("RD120 said %d more errors end the metric; it took %d", left, int64(r.Error)-midErrors)
	}
	// Errors are retried 10 s after the last one finished, whatever the
	// metric's interval (1 s). The times are whole seconds, so the gap
	// read from them is never below the real one's 10.
	var gaps []string
	for i := 1; i < len(r.Measurements); i++ {
		prev, cur := r.Measurements[i-1], r.Measurements[i]
		if prev.FinishedAt == nil || cur.StartedAt == nil {
			continue
		}
		gap := cur.StartedAt.Sub(prev.FinishedAt.Time)
		gaps = append(gaps, fmt.Sprintf("%.0f", gap.Seconds()))
		if gap < errorRetryLab {
			t.Errorf("measurement %d started %s after the error before it finished; errors are retried after 10 s", i+1, gap)
		}
	}
	lastTook := ""
	// RD120's "about N s after the last one": each retry comes 10 s after
	// the error before it finished, never sooner.
	if last := r.Measurements[len(r.Measurements)-1]; left > 0 && last.FinishedAt != nil && !midLast.IsZero() {
		took := last.FinishedAt.Sub(midLast)
		if took < time.Duration(left)*errorRetryLab {
			t.Errorf("the metric ended in Error %s after the last error RD120 saw; %d retries 10 s apart take at least %s", took, left, time.Duration(left)*errorRetryLab)
		}
		lastTook = fmt.Sprintf(", the last %d ending %.0f s after the last error the diagnosis saw", left, took.Seconds())
	}
	note := checkRequests(t, s, ar)
	msg := h.rolloutMessage()
	if want := abortMessage(h.version, 2, "Step-based", ar.Status.Message); msg != want {
		t.Errorf("the Rollout's message is %q; from the %s source: %q", msg, h.version, want)
	}
	f2 := finding(rep, "RD119")
	if f2 == nil {
		t.Errorf("no RD119 for the errored analysis: %s", findingIDs(rep))
	} else {
		for _, w := range []string{"consecutiveErrors (5) > consecutiveErrorLimit (4, the default)", "last error: received non 2xx response code: 500"} {
			if !strings.Contains(f2.Message, w) {
				t.Errorf("RD119 does not say %q: %s", w, f2.Message)
			}
		}
	}
	s.record(h, "analysis: an erroring provider (HTTP 500 and timeouts) aborts after the fifth error in a row",
		fmt.Sprintf("after 2 errors: %s; %s — after the abort: %s", midFacts, msgOf(f), msgOf(f2)),
		fmt.Sprintf("%d more errors ended it (%d in all), each %s s after the one before%s; %s; Rollout message %q%s",
			int64(r.Error)-midErrors, r.Error, strings.Join(gaps, ", "), lastTook, observedFacts(ar), msg, note))
}

// analysisInconclusive: a value between the failure and the success
// threshold is Inconclusive, and inconclusive (1) > inconclusiveLimit (0)
// ends the step run Inconclusive, which pauses the Rollout. RD122 says
// what promote does then — moves past the step without a new measurement —
// and promote is taken: with the official kubectl-argo-rollouts binary, or
// (viaEscape) with `escape --do promote`, whose predicted effect is
// compared too.
func analysisInconclusive(t *testing.T, h *harness, viaEscape bool) {
	s := h.metricServer(func(int) reply { return value("0.80") })
	h.analysisUpdate(s, webMetric{interval: "1s", count: 2, success: "result >= 0.95", failure: "result < 0.5"}, stepAnalysis, false)
	h.waitFor("the InconclusiveAnalysisRun pause", 90*time.Second, func() bool {
		u := h.get(gvrRollout, "app")
		pcs, _, _ := unstructured.NestedSlice(u.Object, "status", "pauseConditions")
		for _, pc := range pcs {
			if m, _ := pc.(map[string]interface{}); m["reason"] == string(v1alpha1.PauseReasonInconclusiveAnalysis) {
				return true
			}
		}
		return false
	})
	ar := s.waitRun(h, "the Inconclusive step run", v1alpha1.RolloutTypeStepLabel, 10*time.Second, func(ar *v1alpha1.AnalysisRun) bool {
		return ar.Status.Phase == v1alpha1.AnalysisPhaseInconclusive
	})
	rep, ar, v := s.diagnoseRun(h, ar.Name)
	compareRun(t, "paused", v, ar)
	const skips = "promote counts the analysis step as passed and moves to the next step without a new measurement"
	f := finding(rep, "RD122")
	if f == nil || !strings.Contains(f.Message, skips) {
		t.Errorf("RD122 does not say that promote skips the step: %s", msgOf(f))
	}
	runsBefore, hitsBefore := len(h.runs()), len(s.Hits())
	_, _, _, idxBefore, _ := h.status()

	how := ""
	var opt *escape.Option
	if viaEscape {
		p := h.plan()
		var ok bool
		if opt, ok = p.Option(escape.Promote); !ok {
			t.Fatalf("escape offers no promote")
		}
		out, code := h.runCode("escape", "app", "--do", "promote", "--yes", "--force", "--color", "never", "--watch-timeout", "60s", "--interval", "1s")
		how = "escape --do promote"
		if code != 0 || !strings.Contains(out, "outcome: as predicted") {
			t.Errorf("escape --do promote: the plugin's watch did not report the predicted outcome (exit %d):\n%s", code, out)
		}
	} else {
		v := labVar("PLUGIN_VERSION")
		bin := filepath.Join(labDir, "bin", "kubectl-argo-rollouts-"+v)
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("the official plugin %s is missing: run test/lab/build.sh plugin (%v)", v, err)
		}
		cmd := exec.Command(bin, "promote", "app", "-n", h.ns, "--kubeconfig", kubeconfig)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kubectl-argo-rollouts %s promote: %v\n%s", v, err, out)
		}
		how = "kubectl argo rollouts promote (" + v + ")"
	}
	// The step after the analysis is an indefinite pause: the Rollout
	// holds there, or, if the promote re-ran the analysis, pauses again on
	// a new Inconclusive run at the analysis step.
	var idx int64
	var phase string
	h.waitFor("the Rollout to settle after promote", 60*time.Second, func() bool {
		phase, _, _, idx, _ = h.status()
		return phase == "Paused" && (idx != idxBefore || len(s.runs.latest()) > runsBefore)
	})
	time.Sleep(3 * time.Second) // a new run, had one been created, measures within a second
	phase, _, _, idx, _ = h.status()
	runsAfter, hitsAfter := len(h.runs()), len(s.Hits())
	after := h.analysisRun(ar.Name)
	obs := fmt.Sprintf("after %s: step %d → %d, phase %s, %d new AnalysisRun(s), %d new measurement(s); the Inconclusive run stays %s",
		how, idxBefore, idx, phase, runsAfter-runsBefore, hitsAfter-hitsBefore, after.Status.Phase)
	if idx != idxBefore+1 || runsAfter != runsBefore || hitsAfter != hitsBefore || after.Status.Phase != v1alpha1.AnalysisPhaseInconclusive {
		t.Errorf("RD122 says promote moves past the analysis step without a new measurement; observed %s", obs)
	}
	pred := msgOf(f)
	if viaEscape {
		pred = fmt.Sprintf("escape promote: %s, step %d, phase %s — %s", opt.Verdict, opt.Effect.FinalIndex, opt.Effect.Phase, pred)
		if int64(opt.Effect.FinalIndex) != idx || opt.Effect.Phase != phase {
			t.Errorf("escape predicted step %d, phase %s after promote; observed %s", opt.Effect.FinalIndex, opt.Effect.Phase, obs)
		}
	}
	name := "analysis: an Inconclusive step analysis pauses the Rollout; promote"
	if viaEscape {
		name += " with escape"
	}
	s.record(h, name, fmt.Sprintf("%s; %s", predictedFacts(v), pred), fmt.Sprintf("%s; %s", observedFacts(ar), obs))
}

// analysisOutlivesStep: a background analysis of 60 measurements 2 s apart
// (2 min) beside steps that end after a 20 s pause. RD125 says, during the
// pause, that the Rollout promotes first; the controller then terminates
// the run at the promotion, and a terminated run that exceeded no limit is
// Successful with fewer measurements than its count. The margins are for
// a loaded machine: at count 15 and a 10 s pause, a run under a load
// average of 30 finished before the promotion, and the diagnosis came after
// it.
func analysisOutlivesStep(t *testing.T, h *harness) {
	s := h.metricServer(func(int) reply { return value("0.99") })
	const count, pause = 60, 20 * time.Second
	hashB := h.analysisUpdate(s, webMetric{interval: "2s", count: count, success: "result >= 0.95"},
		fmt.Sprintf("[{setWeight: 50}, {pause: {duration: %s}}]", pause), true)
	var pauseStart time.Time
	h.waitFor("the pause step", 60*time.Second, func() bool {
		u := h.get(gvrRollout, "app")
		pcs, _, _ := unstructured.NestedSlice(u.Object, "status", "pauseConditions")
		for _, pc := range pcs {
			if m, _ := pc.(map[string]interface{}); m["reason"] == string(v1alpha1.PauseReasonCanaryPauseStep) {
				at, _ := m["startTime"].(string)
				pauseStart, _ = time.Parse(time.RFC3339, at)
				return true
			}
		}
		return false
	})
	ar := s.waitRun(h, "the background run", v1alpha1.RolloutTypeBackgroundRunLabel, 30*time.Second, func(ar *v1alpha1.AnalysisRun) bool {
		return len(metricResult(ar).Measurements) > 0
	})
	rep, mid, v := s.diagnoseRun(h, ar.Name)
	if rep.State.StepIndex != 1 || mid.Status.Phase != v1alpha1.AnalysisPhaseRunning {
		t.Fatalf("diagnosed after the pause (step %d, run %s): nothing to predict", rep.State.StepIndex, mid.Status.Phase)
	}
	compareRun(t, "during the pause", v, mid)
	checkURL(t, s, v, hashB)
	f := finding(rep, "RD125")
	atLeast := -1
	if f == nil || !strings.Contains(f.Message, "will be cut short") {
		t.Errorf("no RD125 for a background run that outlives the steps: %s (%s)", findingIDs(rep), msgOf(f))
	} else if m := regexp.MustCompile(`about (\d+) taken by the end of the pauses`).FindStringSubmatch(f.Message); m == nil {
		t.Errorf("RD125 does not say how many measurements the pauses leave time for: %s", f.Message)
	} else {
		atLeast, _ = strconv.Atoi(m[1])
	}
	midFacts := predictedFacts(v).String()

	h.waitFor("the promotion", 120*time.Second, func() bool {
		phase, stable, _, _, _ := h.status()
		return phase == "Healthy" && stable == hashB
	})
	ar = s.waitRun(h, "the background run to end", v1alpha1.RolloutTypeBackgroundRunLabel, 30*time.Second, func(ar *v1alpha1.AnalysisRun) bool {
		return ar.Status.Phase.Completed()
	})
	rep, done, v := s.diagnoseRun(h, ar.Name)
	compareRun(t, "after the promotion", v, done)
	r := metricResult(done)
	if done.Status.Phase != v1alpha1.AnalysisPhaseSuccessful || !done.Spec.Terminate || r.Count >= count {
		t.Errorf("the run is %s (terminated %v) with %d of %d measurements; want Successful, terminated before its count", done.Status.Phase, done.Spec.Terminate, r.Count, count)
	}
	// The promotion comes no sooner than the pauses end: the run has taken
	// at least what RD125 said fits in them — one fewer, since each
	// measurement comes a little after its interval.
	if atLeast >= 0 && int(r.Count) < atLeast-1 {
		t.Errorf("the run took %d measurements before it was terminated; RD125 said about %d fit in the pauses left", r.Count, atLeast)
	}
	// Terminated by the promotion, so not before the pause ended (both
	// times in whole seconds).
	pauseEnd := pauseStart.Add(pause)
	if done.Status.CompletedAt == nil || done.Status.CompletedAt.Time.Before(pauseEnd.Add(-time.Second)) {
		t.Errorf("the run completed at %v, before the pause ended at %s", done.Status.CompletedAt, pauseEnd.UTC().Format(time.RFC3339))
	}
	f2 := finding(rep, "RD125")
	if f2 == nil || !strings.Contains(f2.Message, fmt.Sprintf("was terminated after %d of %d measurements", r.Count, count)) {
		t.Errorf("no RD125 for the background run terminated at %d of %d measurements: %s (%s)", r.Count, count, findingIDs(rep), msgOf(f2))
	}
	s.record(h, fmt.Sprintf("analysis: a background run that outlives the steps (count %d, interval 2 s, pause %s)", count, pause),
		fmt.Sprintf("during the pause: %s; %s — after the promotion: %s", midFacts, msgOf(f), msgOf(f2)),
		fmt.Sprintf("%s, completed %s after the pause ended", observedFacts(done), done.Status.CompletedAt.Sub(pauseEnd).Round(time.Second)))
}

// analysisStepIndefinite: a step analysis whose metric has an interval and
// no count would run indefinitely; the controller's validation of the
// Rollout's references rejects it (InvalidSpec) and reconciles nothing —
// no new ReplicaSet, no AnalysisRun. The plugin does not read
// AnalysisTemplates: what it knows is the condition the controller wrote.
func analysisStepIndefinite(t *testing.T, h *harness) {
	s := h.metricServer(func(int) reply { return value("0.99") })
	h.apply(h.templateYAML(s, webMetric{interval: "1s", success: "result >= 0.95"}))
	// Revision A has no analysis step, so it deploys.
	h.apply(h.analysisRolloutYAML("a", "[{setWeight: 50}, {pause: {}}]", false))
	h.revisionAHealthy()
	h.apply(h.analysisRolloutYAML("b", stepAnalysis, false))
	var msg string
	h.waitFor("the InvalidSpec condition", 30*time.Second, func() bool {
		u := h.get(gvrRollout, "app")
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]interface{}); m["type"] == "InvalidSpec" && m["status"] == "True" {
				msg, _ = m["message"].(string)
				return true
			}
		}
		return false
	})
	if !strings.Contains(msg, "runs indefinitely") {
		t.Errorf("the InvalidSpec condition says %q; want the indefinite metric", msg)
	}
	rep := h.diagnose("app")
	f := finding(rep, "RD113")
	if f == nil || !strings.Contains(f.Message, strconv.Quote(msg)) {
		t.Errorf("diagnose does not report the controller's InvalidSpec %q: %s (RD113: %s)", msg, findingIDs(rep), msgOf(f))
	}
	// The next pass changes nothing: the controller does not reconcile it.
	if rep.Model == nil || !rep.Model.Next.Errored || !strings.Contains(rep.Model.Next.IndexWhy, "rejects the spec") {
		t.Errorf("diagnose predicts a pass of the controller on a Rollout it rejects: %+v", rep.Model)
	}
	// Held: no new ReplicaSet, no AnalysisRun, nothing measured.
	time.Sleep(10 * time.Second)
	rss, runs, hits := len(h.listRS()), len(h.runs()), len(s.Hits())
	phase, _, _, _, _ := h.status()
	obs := fmt.Sprintf("InvalidSpec %q; phase %s; held 10 s with %d ReplicaSet(s), %d AnalysisRun(s), %d measurement(s)", msg, phase, rss, runs, hits)
	if rss != 1 || runs != 0 || hits != 0 {
		t.Errorf("the controller reconciled an invalid Rollout: %s", obs)
	}
	s.record(h, "analysis: a step analysis with no count (runs indefinitely) is rejected", msgOf(f), obs)
}
