package diagnose

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// AnalysisRun forensics: the runs of the current revision as the analysis
// controller recorded them, with each metric's provider, query, conditions,
// measurements and the counts the controller compares with its limits.

// ShownMeasurements is how many of a metric's newest measurements a short
// view and a finding's message show; the report carries all the run keeps.
const ShownMeasurements = 3

// Masked stands for the value of an argument that comes from a Secret.
const Masked = "*****"

// AnalysisRunView is one AnalysisRun, summarised for the report.
type AnalysisRunView struct {
	Name string `json:"name"`
	// ResourceVersion is the version of the run the report read.
	ResourceVersion string `json:"resourceVersion,omitempty"`
	// Type is the run's rollout-type label: Step, Background,
	// PrePromotion, PostPromotion (empty when the label is missing).
	Type string `json:"type,omitempty"`
	// Step is the step-index label of a step run.
	Step *int32 `json:"step,omitempty"`
	// Role says why the run is shown: "current" (named in the Rollout's
	// status), "caused the abort", or "current revision".
	Role       string     `json:"role"`
	Phase      string     `json:"phase"`
	Message    string     `json:"message,omitempty"`
	Terminated bool       `json:"terminated,omitempty"` // spec.terminate
	StartedAt  *time.Time `json:"startedAt,omitempty"`
	// DecidedBy is the metric whose phase is the run's (the worst non-dryRun
	// metric), when the run ended Failed, Error or Inconclusive.
	DecidedBy string `json:"decidedBy,omitempty"`
	// DecidingLimit is the comparison that decided that metric, in the
	// controller's words: "failed (2) > failureLimit (1)".
	DecidingLimit string `json:"decidingLimit,omitempty"`
	// ResultsOverwritten: the run's phase and message name a metric and a
	// limit its metric results no longer show. The analysis controller
	// patches only what changed since the copy of the run it started from,
	// so a reconcile from an older copy replaced the results written with
	// the decision (the lab saw it on a loaded machine); DecidedBy and
	// DecidingLimit then come from the run's message.
	ResultsOverwritten bool         `json:"resultsOverwritten,omitempty"`
	Metrics            []MetricView `json:"metrics"`
	// CausedAbort: this run's phase is what aborted the Rollout.
	CausedAbort bool `json:"causedAbort,omitempty"`

	run *v1alpha1.AnalysisRun
}

// MetricView is one metric of a run: its spec with the arguments resolved
// as the analysis controller resolves them (Secret values masked) and its
// result.
type MetricView struct {
	Name     string `json:"name"`
	Provider string `json:"provider"`
	// Query is the provider's query or URL with {{args.NAME}} replaced by
	// the run's spec.args (a Secret's value as *****).
	Query string `json:"query,omitempty"`
	// Unresolved lists placeholders no argument resolves.
	Unresolved       []string `json:"unresolved,omitempty"`
	SuccessCondition string   `json:"successCondition,omitempty"`
	FailureCondition string   `json:"failureCondition,omitempty"`
	DryRun           bool     `json:"dryRun,omitempty"`
	Phase            string   `json:"phase"`
	Message          string   `json:"message,omitempty"`
	// Count is the non-error measurements taken (what spec count limits).
	Count        int32 `json:"count"`
	Successful   int32 `json:"successful"`
	Failed       int32 `json:"failed"`
	Inconclusive int32 `json:"inconclusive"`
	Error        int32 `json:"error"`
	// Limits are failureLimit, inconclusiveLimit and consecutiveErrorLimit
	// against their counters; the metric fails when a counter is greater.
	Limits []Limit `json:"limits"`
	// DecidedBy is the limit that set the metric's phase, if one did.
	DecidedBy string `json:"decidedBy,omitempty"`
	// Measurements are every measurement the run keeps, oldest first (the
	// controller keeps the newest 10 per metric unless
	// measurementRetention says otherwise).
	Measurements []MeasurementView `json:"measurements,omitempty"`
	// Dropped counts the measurements the counters saw that the run no
	// longer keeps.
	Dropped int `json:"droppedMeasurements,omitempty"`
}

// Limit is one limit against the counter it bounds.
type Limit struct {
	Name    string `json:"name"`    // failureLimit, inconclusiveLimit, consecutiveErrorLimit
	Counter string `json:"counter"` // failed, inconclusive, consecutiveErrors
	Count   int32  `json:"count"`
	Limit   int32  `json:"limit"`
	// Default: the metric does not set it; Limit is the controller's default.
	Default bool `json:"default,omitempty"`
	// Disabled: failureLimit -1 (from v1.8.2) turns the failure check off.
	Disabled bool `json:"disabled,omitempty"`
	// Exceeded: Count > Limit, the controller's strict comparison.
	Exceeded bool `json:"exceeded"`
}

// StatusField is the metric result's field that holds Count: the
// controller's message says "consecutiveErrors", but the status field is
// consecutiveError (v1alpha1.MetricResult).
func (l Limit) StatusField() string {
	if l.Counter == "consecutiveErrors" {
		return "consecutiveError"
	}
	return l.Counter
}

// ControllerWords is the exceeded comparison as the controller's run
// message words it: "failed (2) > failureLimit (1)".
func (l Limit) ControllerWords() string {
	return fmt.Sprintf("%s (%d) > %s (%d)", l.Counter, l.Count, l.Name, l.Limit)
}

// String says the comparison as the controller's message words it.
func (l Limit) String() string {
	def := ""
	if l.Default {
		def = ", the default"
	}
	if l.Disabled {
		return fmt.Sprintf("%s (%d) — %s %d disables it", l.Counter, l.Count, l.Name, l.Limit)
	}
	op := "≤"
	if l.Exceeded {
		op = ">"
	}
	return fmt.Sprintf("%s (%d) %s %s (%d%s)", l.Counter, l.Count, op, l.Name, l.Limit, def)
}

// MeasurementView is one measurement.
type MeasurementView struct {
	Phase   string     `json:"phase"`
	Value   string     `json:"value,omitempty"`
	Message string     `json:"message,omitempty"`
	At      *time.Time `json:"at,omitempty"` // finishedAt, else startedAt
}

// analysisRuns picks the runs worth showing — those named in the Rollout's
// status and every run of its current revision (by the
// rollouts-pod-template-hash label) — and marks the one that aborted it.
func analysisRuns(v *snapshot.View, a model.Analysis) []AnalysisRunView {
	ro := v.Rollout
	named := map[string]bool{}
	for _, s := range []*v1alpha1.RolloutAnalysisRunStatus{ro.Status.Canary.CurrentStepAnalysisRunStatus, ro.Status.Canary.CurrentBackgroundAnalysisRunStatus} {
		if s != nil {
			named[s.Name] = true
		}
	}
	bg := ro.Status.BlueGreen
	for _, s := range []*v1alpha1.RolloutAnalysisRunStatus{bg.PrePromotionAnalysisRunStatus, bg.PostPromotionAnalysisRunStatus} {
		if s != nil {
			named[s.Name] = true
		}
	}
	hash := ro.Status.CurrentPodHash
	if hash == "" && a.Inputs.New != nil {
		hash = a.Inputs.New.Hash
	}
	var out []AnalysisRunView
	for _, run := range v.AnalysisRuns {
		role := ""
		switch {
		case named[run.Name]:
			role = "current"
		case hash != "" && run.Labels[v1alpha1.DefaultRolloutUniqueLabelKey] == hash:
			role = "current revision"
		default:
			continue
		}
		out = append(out, runView(run, role, a.Version))
	}
	if ro.Status.Abort {
		cause := -1
		for i := range out {
			p := out[i].Phase
			if p != string(v1alpha1.AnalysisPhaseFailed) && p != string(v1alpha1.AnalysisPhaseError) {
				continue
			}
			if out[i].Message != "" && strings.Contains(ro.Status.Message, out[i].Message) {
				cause = i
				break
			}
			cause = i // else the newest Failed or Error run
		}
		if cause >= 0 {
			out[cause].CausedAbort = true
			out[cause].Role = "caused the abort"
		}
	}
	return out
}

func runView(run *v1alpha1.AnalysisRun, role string, ver upstream.Version) AnalysisRunView {
	rv := AnalysisRunView{Name: run.Name, ResourceVersion: run.ResourceVersion, Type: run.Labels[v1alpha1.RolloutTypeLabel], Role: role,
		Phase: string(run.Status.Phase), Message: run.Status.Message, Terminated: run.Spec.Terminate, run: run}
	if rv.Phase == "" {
		rv.Phase = "not yet reconciled"
	}
	if s, ok := run.Labels[v1alpha1.RolloutCanaryStepIndexLabel]; ok {
		if n, err := strconv.Atoi(s); err == nil {
			i := int32(n)
			rv.Step = &i
		}
	}
	if run.Status.StartedAt != nil {
		t := run.Status.StartedAt.UTC()
		rv.StartedAt = &t
	}
	args := map[string]*v1alpha1.Argument{}
	for i := range run.Spec.Args {
		args[run.Spec.Args[i].Name] = &run.Spec.Args[i]
	}
	dry := dryRunNames(run)
	results := map[string]*v1alpha1.MetricResult{}
	for i := range run.Status.MetricResults {
		results[run.Status.MetricResults[i].Name] = &run.Status.MetricResults[i]
	}
	for _, m := range run.Spec.Metrics {
		mv := metricView(m, results[m.Name], args, ver)
		mv.DryRun = dry[m.Name] || (results[m.Name] != nil && results[m.Name].DryRun)
		rv.Metrics = append(rv.Metrics, mv)
	}
	switch run.Status.Phase {
	case v1alpha1.AnalysisPhaseFailed, v1alpha1.AnalysisPhaseError, v1alpha1.AnalysisPhaseInconclusive:
		for _, m := range rv.Metrics {
			if !m.DryRun && m.Phase == rv.Phase {
				rv.DecidedBy = m.Name
				if l, ok := m.decidingLimit(); ok {
					rv.DecidingLimit = l.ControllerWords()
				}
				break
			}
		}
		if rv.DecidedBy != "" {
			break
		}
		// No metric reads the run's phase: its message still says which
		// metric and limit decided it.
		if mm := decidedMessage.FindStringSubmatch(run.Status.Message); mm != nil && mm[2] == rv.Phase {
			for _, m := range rv.Metrics {
				if m.Name == mm[1] && !m.DryRun {
					rv.DecidedBy, rv.DecidingLimit, rv.ResultsOverwritten = mm[1], mm[3], true
				}
			}
		}
	}
	return rv
}

// decidedMessage reads a run's message as the analysis controller words
// it: the metric, the phase it was assessed and the limit exceeded.
var decidedMessage = regexp.MustCompile(`^Metric "([^"]+)" assessed (\w+) due to ((?:failed|inconclusive|consecutiveErrors) \(\d+\) > (?:failureLimit|inconclusiveLimit|consecutiveErrorLimit) \(-?\d+\))`)

// dryRunNames are the metrics the run's dryRun rules match: Go regular
// expressions matched unanchored, as the controller does.
func dryRunNames(run *v1alpha1.AnalysisRun) map[string]bool {
	out := map[string]bool{}
	for _, d := range run.Spec.DryRun {
		re, err := regexp.Compile(d.MetricName)
		if err != nil {
			continue // the controller's MatchString fails too: it matches nothing
		}
		for _, m := range run.Spec.Metrics {
			if re.MatchString(m.Name) {
				out[m.Name] = true
			}
		}
	}
	return out
}

var placeholder = regexp.MustCompile(`{{[^{}]*}}`)

// resolve replaces {{args.NAME}} as the analysis controller does, with a
// Secret's value masked; it returns the placeholders nothing resolves.
func resolve(s string, args map[string]*v1alpha1.Argument) (string, []string) {
	var unresolved []string
	out := placeholder.ReplaceAllStringFunc(s, func(tag string) string {
		key := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(tag, "{{"), "}}"))
		name, ok := strings.CutPrefix(key, "args.")
		a := args[name]
		switch {
		case !ok || a == nil:
		case a.ValueFrom != nil && a.ValueFrom.SecretKeyRef != nil:
			return Masked
		case a.Value != nil:
			return *a.Value
		}
		unresolved = append(unresolved, tag)
		return tag
	})
	return out, unresolved
}

func provider(p v1alpha1.MetricProvider) (name, query string) {
	switch {
	case p.Prometheus != nil:
		return "prometheus", p.Prometheus.Query
	case p.Web != nil:
		m := string(p.Web.Method)
		if m == "" {
			m = "GET"
		}
		return "web", m + " " + p.Web.URL
	case p.Datadog != nil:
		if p.Datadog.Query != "" {
			return "datadog", p.Datadog.Query
		}
		var keys []string
		for k := range p.Datadog.Queries {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var qs []string
		for _, k := range keys {
			qs = append(qs, k+": "+p.Datadog.Queries[k])
		}
		return "datadog", strings.Join(qs, "; ")
	case p.NewRelic != nil:
		return "newRelic", p.NewRelic.Query
	case p.Wavefront != nil:
		return "wavefront", p.Wavefront.Query
	case p.Graphite != nil:
		return "graphite", p.Graphite.Query
	case p.Influxdb != nil:
		return "influxdb", p.Influxdb.Query
	case p.SkyWalking != nil:
		return "skywalking", p.SkyWalking.Query
	case p.Job != nil:
		return "job", ""
	case p.Kayenta != nil:
		return "kayenta", ""
	case p.CloudWatch != nil:
		return "cloudWatch", ""
	case len(p.Plugin) > 0:
		var keys []string
		for k := range p.Plugin {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return "plugin " + strings.Join(keys, ","), ""
	}
	return "none", ""
}

// limitValue reads an int-or-string limit as the controller does (after
// resolving arguments; a string that is not a number reads as 0).
func limitValue(l *intstr.IntOrString, args map[string]*v1alpha1.Argument, def int32) (int32, bool) {
	if l == nil {
		return def, true
	}
	if l.Type == intstr.Int {
		return l.IntVal, false
	}
	s, _ := resolve(l.StrVal, args)
	n, _ := strconv.Atoi(strings.TrimSpace(s))
	return int32(n), false
}

func metricView(m v1alpha1.Metric, r *v1alpha1.MetricResult, args map[string]*v1alpha1.Argument, ver upstream.Version) MetricView {
	mv := MetricView{Name: m.Name, Phase: string(v1alpha1.AnalysisPhasePending)}
	var q string
	mv.Provider, q = provider(m.Provider)
	mv.Query, mv.Unresolved = resolve(q, args)
	mv.SuccessCondition, _ = resolve(m.SuccessCondition, args)
	mv.FailureCondition, _ = resolve(m.FailureCondition, args)
	if r == nil {
		r = &v1alpha1.MetricResult{}
	} else {
		mv.Phase, mv.Message = string(r.Phase), r.Message
	}
	mv.Count, mv.Successful, mv.Failed, mv.Inconclusive, mv.Error = r.Count, r.Successful, r.Failed, r.Inconclusive, r.Error
	fl, fdef := limitValue(m.FailureLimit, args, 0)
	il, idef := limitValue(m.InconclusiveLimit, args, 0)
	cl, cdef := limitValue(m.ConsecutiveErrorLimit, args, 4) // df.consecutive-error-limit
	fail := Limit{Name: "failureLimit", Counter: "failed", Count: r.Failed, Limit: fl, Default: fdef}
	if fl < 0 && !upstream.At("ar.failure-limit-disabled", ver).Absent {
		fail.Disabled = true
	} else {
		fail.Exceeded = r.Failed > fl
	}
	inc := Limit{Name: "inconclusiveLimit", Counter: "inconclusive", Count: r.Inconclusive, Limit: il, Default: idef, Exceeded: r.Inconclusive > il}
	cons := Limit{Name: "consecutiveErrorLimit", Counter: "consecutiveErrors", Count: r.ConsecutiveError, Limit: cl, Default: cdef, Exceeded: r.ConsecutiveError > cl}
	mv.Limits = []Limit{fail, inc, cons}
	// The controller checks them in this order and the last one exceeded
	// sets the phase.
	want := map[string]v1alpha1.AnalysisPhase{"failureLimit": v1alpha1.AnalysisPhaseFailed, "inconclusiveLimit": v1alpha1.AnalysisPhaseInconclusive, "consecutiveErrorLimit": v1alpha1.AnalysisPhaseError}
	for _, l := range mv.Limits {
		if l.Exceeded && r.Phase == want[l.Name] {
			mv.DecidedBy = l.Name
		}
	}
	if n := int(r.Successful+r.Failed+r.Inconclusive+r.Error) - len(r.Measurements); n > 0 {
		mv.Dropped = n
	}
	for _, x := range r.Measurements {
		mm := MeasurementView{Phase: string(x.Phase), Value: x.Value, Message: x.Message}
		switch {
		case x.FinishedAt != nil:
			t := x.FinishedAt.UTC()
			mm.At = &t
		case x.StartedAt != nil:
			t := x.StartedAt.UTC()
			mm.At = &t
		}
		mv.Measurements = append(mv.Measurements, mm)
	}
	return mv
}

// decidingLimit is the limit that set the metric's phase, if any.
func (m MetricView) decidingLimit() (Limit, bool) {
	for _, l := range m.Limits {
		if l.Name == m.DecidedBy {
			return l, true
		}
	}
	return Limit{}, false
}

func (m MetricView) limit(name string) Limit {
	for _, l := range m.Limits {
		if l.Name == name {
			return l
		}
	}
	return Limit{}
}

// Shown is the newest ShownMeasurements measurements, oldest first: what
// the human report lists.
func (m MetricView) Shown() []MeasurementView {
	return m.Measurements[max(0, len(m.Measurements)-ShownMeasurements):]
}

// last is the newest measurement kept, if any.
func (m MetricView) last() (MeasurementView, bool) {
	if len(m.Measurements) == 0 {
		return MeasurementView{}, false
	}
	return m.Measurements[len(m.Measurements)-1], true
}

// emptyValue: a measurement that brought no data (an empty vector, no value).
func emptyValue(v string) bool {
	switch strings.TrimSpace(v) {
	case "", "[]", "null", "<nil>", "NaN", "[NaN]":
		return true
	}
	return false
}

var simpleCondition = regexp.MustCompile(`^\s*result(?:\[0\])?\s*(>=|<=|>|<|==)\s*(-?[0-9.]+(?:[eE]-?[0-9]+)?)\s*$`)

// firstNumber reads a measurement value: 0.91 or [0.91, …].
func firstNumber(v string) (float64, bool) {
	v = strings.TrimSpace(v)
	v = strings.TrimPrefix(v, "[")
	if i := strings.IndexAny(v, ",]"); i >= 0 {
		v = v[:i]
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	return f, err == nil && !math.IsNaN(f)
}

// miss says by how much a value missed a condition of the form
// "result[0] >= 0.95": for the success condition how far it fell short, for
// the failure condition how far past the threshold it was. Empty when the
// condition is not that simple or the value not a number.
func miss(cond, value string) string {
	m := simpleCondition.FindStringSubmatch(cond)
	if m == nil {
		return ""
	}
	t, err := strconv.ParseFloat(m[2], 64)
	v, ok := firstNumber(value)
	if err != nil || !ok {
		return ""
	}
	d := math.Abs(v - t)
	return strconv.FormatFloat(d, 'g', 4, 64)
}

// typeWords names a run's type in words.
func (r AnalysisRunView) typeWords() string {
	switch r.Type {
	case v1alpha1.RolloutTypeStepLabel:
		if r.Step != nil {
			return fmt.Sprintf("step %d", *r.Step)
		}
		return "step"
	case v1alpha1.RolloutTypeBackgroundRunLabel:
		return "background"
	case v1alpha1.RolloutTypePrePromotionLabel:
		return "pre-promotion"
	case v1alpha1.RolloutTypePostPromotionLabel:
		return "post-promotion"
	}
	return "analysis"
}

// Words is the run's name with its type, for messages.
func (r AnalysisRunView) Words() string {
	return fmt.Sprintf("AnalysisRun %s (%s)", r.Name, r.typeWords())
}

// TypeWords names the run's type in words (step 2, background, …).
func (r AnalysisRunView) TypeWords() string { return r.typeWords() }

// argsError: the run ended in Error on its spec, before measuring.
func (r AnalysisRunView) argsError() bool {
	return r.Phase == string(v1alpha1.AnalysisPhaseError) &&
		(strings.HasPrefix(r.Message, "Unable to resolve metric arguments") || strings.HasPrefix(r.Message, "Analysis spec invalid"))
}
