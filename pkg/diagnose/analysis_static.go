package diagnose

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// The AnalysisTemplates a Rollout's analysis uses, read together with the
// Rollout the way its controller reads them before a release: which
// templates its analysis blocks reach, the arguments each run would get,
// and each metric with those arguments resolved. The static analysis rules
// (RD211–RD218, in analysis_lint.go) read this; lint runs them on manifests
// and diagnose on the templates a snapshot holds.

// analysisUse is one analysis block of the Rollout with the templates it
// reaches.
type analysisUse struct {
	snapshot.AnalysisBlock
	snapshot.TemplateWalk
}

// analysisUses walks every analysis block once per diagnosis.
func (c *Context) analysisUses() []analysisUse {
	if c.uses == nil {
		c.uses = []analysisUse{}
		for _, b := range snapshot.AnalysisBlocks(c.ro) {
			c.uses = append(c.uses, analysisUse{AnalysisBlock: b, TemplateWalk: c.View.Templates(b)})
		}
	}
	return c.uses
}

// complete: every template the block names was found and decodes, so the
// run's arguments and metrics are known in full.
func (u analysisUse) complete() bool {
	return len(u.Missing) == 0 && len(u.Unreadable) == 0 && len(u.Cycles) == 0
}

// words names the block for messages: "the step 2 analysis".
func (u analysisUse) words() string { return blockWords(u.AnalysisBlock) }

func blockWords(b snapshot.AnalysisBlock) string {
	switch b.Type {
	case v1alpha1.RolloutTypeStepLabel:
		return fmt.Sprintf("the step %d analysis", b.Step)
	case v1alpha1.RolloutTypeBackgroundRunLabel:
		return "the background analysis"
	case v1alpha1.RolloutTypePrePromotionLabel:
		return "the pre-promotion analysis"
	}
	return "the post-promotion analysis"
}

// abortFact is the fact for "a Failed or Error run of this block aborts the
// Rollout".
func (u analysisUse) abortFact() upstream.Key {
	switch u.Type {
	case v1alpha1.RolloutTypeStepLabel:
		return "an.step-abort"
	case v1alpha1.RolloutTypeBackgroundRunLabel:
		return "an.background-abort"
	}
	return "an.bluegreen-abort"
}

// templateNames lists the block's templates for messages.
func (u analysisUse) templateNames() string {
	var names []string
	for _, r := range u.Refs() {
		names = append(names, r.Name)
	}
	return strings.Join(names, ", ")
}

// runArg is one argument as the block's run would get it.
type runArg struct {
	Name string
	// Declared by (first) template, nil for an argument only the Rollout
	// passes.
	By *snapshot.Template
	// Value is the argument's literal value when it is known before the
	// run: the Rollout's value, else the template's default. Known is false
	// for values the controller computes (a pod-template hash, a field of
	// the Rollout) or reads (a Secret).
	Value string
	Known bool
	// Secret: the value comes from a Secret (the template's valueFrom).
	Secret bool
	// FromRollout: the Rollout passes it.
	FromRollout bool
	// Unset: no template value or valueFrom and nothing from the Rollout.
	Unset bool
}

// argConflict is two templates giving one argument different values.
type argConflict struct {
	Name       string
	A, B       *snapshot.Template
	AVal, BVal string
}

// runArgs merges the block's arguments as the controller builds the run's:
// the templates' args flattened in the controller's order (a value wins over
// none, two different values are a conflict), then the Rollout's args over
// those of the same name; a Rollout arg no template declares is dropped
// (returned apart).
func (u analysisUse) runArgs() (args []*runArg, dropped []v1alpha1.AnalysisRunArgument, conflict *argConflict) {
	byName := map[string]*runArg{}
	for _, t := range u.Used {
		for _, a := range t.Spec.Args {
			prev := byName[a.Name]
			if prev != nil {
				if prev.Known && a.Value != nil && prev.Value != *a.Value && conflict == nil {
					conflict = &argConflict{Name: a.Name, A: prev.By, B: t, AVal: prev.Value, BVal: *a.Value}
				}
				if !prev.Known {
					// The controller keeps a value once one template gave it
					// and otherwise takes the later template's argument whole.
					*prev = *templateArg(t, a)
				}
				continue
			}
			ra := templateArg(t, a)
			byName[a.Name] = ra
			args = append(args, ra)
		}
	}
	for _, a := range u.Analysis.Args {
		ra := byName[a.Name]
		if ra == nil {
			dropped = append(dropped, a)
			continue
		}
		ra.FromRollout, ra.Unset, ra.Secret = true, false, false
		ra.Value, ra.Known = a.Value, a.ValueFrom == nil || a.ValueFrom.PodTemplateHashValue == nil && a.ValueFrom.FieldRef == nil
	}
	return args, dropped, conflict
}

func templateArg(t *snapshot.Template, a v1alpha1.Argument) *runArg {
	ra := &runArg{Name: a.Name, By: t}
	switch {
	case a.Value != nil:
		ra.Value, ra.Known = *a.Value, true
	case a.ValueFrom != nil && a.ValueFrom.SecretKeyRef != nil:
		ra.Secret = true
	case a.ValueFrom != nil:
	default:
		ra.Unset = true
	}
	return ra
}

// known is the arguments whose values are known, by name.
func known(args []*runArg) map[string]string {
	m := map[string]string{}
	for _, a := range args {
		if a.Known {
			m[a.Name] = a.Value
		}
	}
	return m
}

// tags returns every {{...}} placeholder in s, as the controller's template
// engine cuts them (an opening {{ without a closing }} is returned as
// "{{..." with unclosed set).
func tags(s string) (out []string, unclosed bool) {
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			return out, false
		}
		s = s[i+2:]
		j := strings.Index(s, "}}")
		if j < 0 {
			return out, true
		}
		out = append(out, s[:j])
		s = s[j+2:]
	}
}

// metricTags are the placeholders of a metric as the controller sees them:
// the metric serialised to JSON, where every {{...}} is one.
func metricTags(m v1alpha1.Metric) ([]string, bool) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, false
	}
	return tags(string(b))
}

// argName is the argument a tag names ("args.x" → "x"), if it names one.
func argName(tag string) (string, bool) {
	return strings.CutPrefix(strings.TrimSpace(tag), "args.")
}

// substitute replaces the placeholders of s from vals; ok is false when one
// is not known.
func substitute(s string, vals map[string]string) (string, bool) {
	ok := true
	out := placeholder.ReplaceAllStringFunc(s, func(tag string) string {
		name, isArg := argName(strings.TrimSuffix(strings.TrimPrefix(tag, "{{"), "}}"))
		v, have := vals[name]
		if !isArg || !have {
			ok = false
			return tag
		}
		return v
	})
	return out, ok
}

// resolved is one metric with the arguments it would run with substituted
// where they are known.
type resolved struct {
	Metric   v1alpha1.Metric
	Index    int // in its template's spec.metrics
	Template *snapshot.Template
	// Count is the effective count (1 without count and interval);
	// Indefinite when it has an interval and no count. CountSet: count > 0
	// as the controller's validation reads it.
	Count      int
	CountSet   bool
	Indefinite bool
	// FailureLimit (default 0), InconclusiveLimit (default 0),
	// ConsecutiveSuccessLimit (default 0).
	FailureLimit, InconclusiveLimit, ConsecutiveSuccessLimit int
	ConsecutiveErrorLimit                                    int
	ConsecutiveErrorLimitSet                                 bool
	// Interval and InitialDelay as parsed (0 when unset); their Err when
	// they do not parse.
	Interval, InitialDelay       time.Duration
	IntervalErr, InitialDelayErr error
	SuccessCondition             string
	FailureCondition             string
	// Numbers is false when a count, limit or duration comes from an
	// argument whose value is not known: those fields are then not read.
	Numbers bool
	// Conditions is false when a condition has such an argument.
	Conditions bool
	DryRun     bool
}

// field is the metric's path in its template.
func (r resolved) field(name string) string {
	return fmt.Sprintf("spec.metrics[%d].%s", r.Index, name)
}

// intValue reads an int-or-string as the controller does after resolving
// placeholders (a string that is not a number reads as 0).
func intValue(v *intstr.IntOrString, vals map[string]string, def int) (int, bool) {
	if v == nil {
		return def, true
	}
	if v.Type == intstr.Int {
		return int(v.IntVal), true
	}
	s, ok := substitute(v.StrVal, vals)
	n, _ := strconv.Atoi(s)
	return n, ok
}

func durationValue(d v1alpha1.DurationString, vals map[string]string) (time.Duration, error, bool) {
	if d == "" {
		return 0, nil, true
	}
	s, ok := substitute(string(d), vals)
	if !ok {
		return 0, nil, false
	}
	v, err := time.ParseDuration(s)
	return v, err, true
}

// resolveMetric reads a metric with the argument values vals.
func resolveMetric(t *snapshot.Template, i int, m v1alpha1.Metric, vals map[string]string) resolved {
	r := resolved{Metric: m, Index: i, Template: t, Numbers: true, Conditions: true}
	var ok bool
	count, okc := intValue(m.Count, vals, 0)
	r.FailureLimit, ok = intValue(m.FailureLimit, vals, 0)
	r.Numbers = r.Numbers && ok && okc
	r.InconclusiveLimit, ok = intValue(m.InconclusiveLimit, vals, 0)
	r.Numbers = r.Numbers && ok
	r.ConsecutiveSuccessLimit, ok = intValue(m.ConsecutiveSuccessLimit, vals, 0)
	r.Numbers = r.Numbers && ok
	r.ConsecutiveErrorLimit, ok = intValue(m.ConsecutiveErrorLimit, vals, 4) // df.consecutive-error-limit
	r.ConsecutiveErrorLimitSet = m.ConsecutiveErrorLimit != nil
	r.Numbers = r.Numbers && ok
	r.Interval, r.IntervalErr, ok = durationValue(m.Interval, vals)
	r.Numbers = r.Numbers && ok
	r.InitialDelay, r.InitialDelayErr, ok = durationValue(m.InitialDelay, vals)
	r.Numbers = r.Numbers && ok
	r.CountSet = count > 0
	switch {
	case count > 0:
		r.Count = count
	case m.Interval == "":
		r.Count = 1 // ar.effective-count
	default:
		r.Indefinite = true
	}
	r.SuccessCondition, ok = substitute(m.SuccessCondition, vals)
	r.Conditions = ok
	r.FailureCondition, ok = substitute(m.FailureCondition, vals)
	r.Conditions = r.Conditions && ok
	return r
}

// metrics resolves every metric of the block's templates with the run's
// arguments, marking the dryRun ones (the Rollout's and the templates'
// dryRun rules: unanchored regular expressions on the metric name).
func (u analysisUse) metrics(args []*runArg) []resolved {
	vals := known(args)
	rules := append([]v1alpha1.DryRun(nil), u.Analysis.DryRun...)
	for _, t := range u.Used {
		rules = append(rules, t.Spec.DryRun...)
	}
	var out []resolved
	for _, t := range u.Used {
		for i, m := range t.Spec.Metrics {
			r := resolveMetric(t, i, m, vals)
			for _, d := range rules {
				if ok, err := regexp.MatchString(d.MetricName, m.Name); err == nil && ok {
					r.DryRun = true
				}
			}
			out = append(out, r)
		}
	}
	return out
}

// validationValues are the argument values the Rollout controller's
// validation resolves one step or blue-green template's metrics with: the
// template's own defaults, "dummy-value" for every other argument — not the
// Rollout's values (rv.placeholder-value).
func validationValues(t *snapshot.Template) map[string]string {
	vals := map[string]string{}
	for _, a := range t.Spec.Args {
		if a.Value != nil && a.ValueFrom == nil {
			vals[a.Name] = *a.Value
		} else {
			vals[a.Name] = "dummy-value"
		}
	}
	return vals
}

// minRunTime is the least time a count-bounded metric takes to reach its
// count: initialDelay, then a measurement every interval
// (ar.initial-delay, ar.interval-wait, ar.count-stops).
func (r resolved) minRunTime() time.Duration {
	return r.InitialDelay + time.Duration(r.Count-1)*r.Interval
}

// earliestFailure is the least time after the run starts at which the
// metric can fail: failureLimit+1 failed measurements; ok is false when it
// cannot fail (failure check disabled, or the limit not reachable).
func (r resolved) earliestFailure() (time.Duration, bool) {
	if r.FailureLimit < 0 || !r.Indefinite && r.FailureLimit >= r.Count {
		return 0, false
	}
	return r.InitialDelay + time.Duration(r.FailureLimit)*r.Interval, true
}

func fmtDur(d time.Duration) string {
	switch {
	case d == 0:
		return "0s"
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0 && d >= time.Minute:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}

// closest is the name among names nearest to n (a typo: the same once
// case, dashes and underscores are ignored, or within two edits), if any.
func closest(n string, names []string) string {
	norm := func(s string) string {
		return strings.NewReplacer("-", "", "_", "", ".", "").Replace(strings.ToLower(s))
	}
	best, bestD := "", 3
	for _, c := range names {
		if c == n {
			continue
		}
		if norm(c) == norm(n) {
			return c
		}
		if d := editDistance(n, c); d < bestD && len(n) > 3 {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// probe is a value a provider hands the conditions when there is no data.
type probe struct {
	words string
	value any
}

// noDataProbes are the values a metric's provider passes to its conditions
// when there is nothing to measure, for the providers whose no-data value
// is known: Prometheus's empty vector (no series: no requests matched) and
// NaN (a ratio over zero requests), as a vector or a scalar query
// (pr.vector-values, pr.scalar-value); Datadog's nil (dd.no-data-nil).
func noDataProbes(p v1alpha1.MetricProvider) []probe {
	nan := math.NaN()
	switch {
	case p.Prometheus != nil && scalarQuery(p.Prometheus):
		return []probe{{"the value is NaN (a ratio over zero requests: no traffic yet)", nan}}
	case p.Prometheus != nil:
		return []probe{
			{"the query returns no series (an empty vector: no request matched yet)", []float64{}},
			{"the value is NaN (a ratio over zero requests: no traffic yet)", []float64{nan}},
		}
	case p.Datadog != nil:
		var none *float64
		return []probe{{"the query returns no data points (a nil result)", none}}
	}
	return nil
}

// scalarQuery: a PromQL instant query returns a scalar only when it is one
// (scalar(...), a number); anything else is a vector, which the controller
// hands over as a list (pr.vector-values), and a range query a matrix,
// flattened into a list too.
func scalarQuery(p *v1alpha1.PrometheusMetric) bool {
	if p.RangeQuery != nil {
		return false
	}
	q := strings.TrimSpace(p.Query)
	if _, err := strconv.ParseFloat(q, 64); err == nil {
		return true
	}
	return strings.HasPrefix(q, "scalar(") && strings.HasSuffix(q, ")")
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
