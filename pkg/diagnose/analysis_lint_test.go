package diagnose

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules/rulestest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// canaryWithAnalysis is a canary whose analysis is written the way the
// static analysis rules want it: a step analysis with a count, both
// conditions requiring data, a failureLimit below count; a background
// analysis from a ClusterAnalysisTemplate that measures until promotion and
// can fail well within the pauses. None of RD211–RD218 fires on it.
const canaryWithAnalysis = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: web, namespace: shop}
spec:
  replicas: 4
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: web:2}]}
  strategy:
    canary:
      analysis:
        startingStep: 1
        templates: [{templateName: error-rate, clusterScope: true}]
        args: [{name: service, value: web}]
      steps:
      - setWeight: 20
      - pause: {duration: 5m}
      - analysis:
          templates: [{templateName: success-rate}]
          args:
          - {name: service, value: web}
          - name: canary-hash
            valueFrom: {podTemplateHashValue: Latest}
      - setWeight: 50
      - pause: {duration: 10m}
---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: success-rate, namespace: shop}
spec:
  args:
  - name: service
  - name: canary-hash
  - {name: threshold, value: "0.95"}
  metrics:
  - name: success-rate
    interval: 1m
    count: 5
    failureLimit: 1
    successCondition: len(result) > 0 && !isNaN(result[0]) && result[0] >= {{args.threshold}}
    failureCondition: len(result) > 0 && result[0] < 0.90
    provider:
      prometheus:
        address: http://prometheus.monitoring:9090
        query: sum(rate(http_requests_total{service="{{args.service}}",hash="{{args.canary-hash}}",code!~"5.."}[2m])) / sum(rate(http_requests_total{service="{{args.service}}",hash="{{args.canary-hash}}"}[2m]))
---
apiVersion: argoproj.io/v1alpha1
kind: ClusterAnalysisTemplate
metadata: {name: error-rate}
spec:
  args: [{name: service}]
  metrics:
  - name: error-rate
    interval: 1m
    failureLimit: 2
    successCondition: len(result) > 0 && result[0] <= 0.01
    provider:
      prometheus:
        address: http://prometheus.monitoring:9090
        query: sum(rate(http_requests_total{service="{{args.service}}",code=~"5.."}[2m])) / sum(rate(http_requests_total{service="{{args.service}}"}[2m]))
`

// blueGreenWithAnalysis: pre- and post-promotion analysis, written well.
const blueGreenWithAnalysis = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: api, namespace: shop}
spec:
  replicas: 3
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: app, image: api:2}]}
  strategy:
    blueGreen:
      activeService: api
      previewService: api-preview
      prePromotionAnalysis:
        templates: [{templateName: smoke}]
        args: [{name: host, value: api-preview.shop.svc}]
      postPromotionAnalysis:
        templates: [{templateName: smoke}]
        args: [{name: host, value: api.shop.svc}]
---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: smoke, namespace: shop}
spec:
  args: [{name: host}]
  metrics:
  - name: smoke
    count: 3
    interval: 10s
    successCondition: result == "ok"
    provider:
      web:
        url: http://{{args.host}}/healthz
        jsonPath: "{$.status}"
`

// objEdit changes one object of a fixture before it is diagnosed.
type objEdit struct {
	kind, name string
	edit       func(*unstructured.Unstructured)
}

func on(kind, name string, edits ...func(*unstructured.Unstructured)) objEdit {
	return objEdit{kind, name, both(edits...)}
}

// drop removes an object from the fixture.
func drop(kind, name string) objEdit { return objEdit{kind: kind, name: name} }

// add puts another object (YAML) into the fixture.
func add(doc string) objEdit { return objEdit{kind: "+", name: doc} }

// staticAnalysisCase is one row of the static analysis rules' table.
type staticAnalysisCase struct {
	name    string
	id      string
	fixture string // canaryWithAnalysis (default) or blueGreenWithAnalysis
	edits   []objEdit
	ver     upstream.Version // default v1.10.2
	live    *snapshot.Header // nil: manifests, as lint reads them
	fires   bool
	sev     rules.Severity // checked when set
	says    string         // a substring of the finding's message
	subject string         // the finding's subject, checked when set
}

// diagnoseStatic diagnoses the fixture's Rollout with the static rules only,
// as lint does, after the case's edits.
func diagnoseStatic(t *testing.T, c staticAnalysisCase) *Report {
	t.Helper()
	fixture := c.fixture
	if fixture == "" {
		fixture = canaryWithAnalysis
	}
	for _, e := range c.edits {
		if e.kind == "+" {
			fixture += "---\n" + e.name
		}
	}
	located, _, err := snapshot.Decode("fixture", bytes.NewReader([]byte(fixture)))
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	for _, l := range located {
		o, keep := l.Object, true
		for _, e := range c.edits {
			if e.kind == o.GetKind() && e.name == o.GetName() {
				if e.edit == nil {
					keep = false
				} else {
					e.edit(o)
				}
			}
		}
		if keep {
			objs = append(objs, o)
		}
	}
	hdr := snapshot.Header{Offline: true}
	if c.live != nil {
		hdr = *c.live
	}
	snap := snapshot.New(hdr, objs)
	ro, err := snap.FindRollout("", "")
	if err != nil {
		t.Fatal(err)
	}
	v, err := snap.View(ro)
	if err != nil {
		t.Fatal(err)
	}
	ver := c.ver
	if ver == "" {
		ver = "v1.10.2"
	}
	return Run(v, model.ControllerVersion{Assumed: ver, Exact: true, Source: model.SourceFlag}, Options{StaticOnly: true, NoPods: true})
}

func metric(path ...string) []string {
	return append([]string{"spec", "metrics"}, path...)
}

// setMetric sets a field of the template's first metric.
func setMetric(field string, v interface{}) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		ms, _, _ := unstructured.NestedSlice(u.Object, "spec", "metrics")
		m := ms[0].(map[string]interface{})
		if v == nil {
			delete(m, field)
		} else {
			m[field] = v
		}
		if err := unstructured.SetNestedSlice(u.Object, ms, "spec", "metrics"); err != nil {
			panic(err)
		}
	}
}

// stepAnalysis edits the analysis step (steps[2]) of the canary fixture.
func stepAnalysis(field string, v interface{}) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		steps, _, _ := unstructured.NestedSlice(u.Object, "spec", "strategy", "canary", "steps")
		a := steps[2].(map[string]interface{})["analysis"].(map[string]interface{})
		a[field] = v
		if err := unstructured.SetNestedSlice(u.Object, steps, "spec", "strategy", "canary", "steps"); err != nil {
			panic(err)
		}
	}
}

var (
	successRate = func(edits ...func(*unstructured.Unstructured)) objEdit {
		return on("AnalysisTemplate", "success-rate", edits...)
	}
	errorRate = func(edits ...func(*unstructured.Unstructured)) objEdit {
		return on("ClusterAnalysisTemplate", "error-rate", edits...)
	}
	webRollout = func(edits ...func(*unstructured.Unstructured)) objEdit { return on("Rollout", "web", edits...) }
	smoke      = func(edits ...func(*unstructured.Unstructured)) objEdit {
		return on("AnalysisTemplate", "smoke", edits...)
	}
	liveHeader = func(gaps ...snapshot.Gap) *snapshot.Header {
		return &snapshot.Header{TargetKind: "Rollout", TargetNamespace: "shop", TargetName: "web", Gaps: gaps}
	}
	steps = func(s ...interface{}) func(*unstructured.Unstructured) {
		return set([]string{"spec", "strategy", "canary", "steps"}, s)
	}
	pause = func(d string) interface{} {
		return map[string]interface{}{"pause": map[string]interface{}{"duration": d}}
	}
	weight = func(w int64) interface{} { return map[string]interface{}{"setWeight": w} }
)

var staticAnalysisCases = []staticAnalysisCase{
	// RD211: a template not found or not in the input.
	{name: "both templates present", id: "RD211"},
	{name: "live: looked for and not found", id: "RD211", fires: true, sev: rules.Critical,
		edits: []objEdit{drop("AnalysisTemplate", "success-rate")},
		live:  liveHeader(snapshot.Gap{Resource: "analysistemplates.argoproj.io", Namespace: "shop", Name: "success-rate", Reason: snapshot.GapNotFound, Message: "not found"}),
		says:  "the step 2 analysis names AnalysisTemplate success-rate, which does not exist in namespace shop: the controller rejects the Rollout (InvalidSpec: AnalysisTemplate 'success-rate' not found)"},
	{name: "live snapshot that did not look (no gap)", id: "RD211", edits: []objEdit{drop("AnalysisTemplate", "success-rate")}, live: liveHeader()},
	{name: "lint: no AnalysisTemplate in the input at all", id: "RD211", fires: true, sev: rules.Info,
		edits: []objEdit{drop("AnalysisTemplate", "success-rate")},
		says:  "which is not in the input (it holds no AnalysisTemplate): make sure it exists in namespace shop"},
	{name: "lint: the input ships another AnalysisTemplate (a typo)", id: "RD211", fires: true, sev: rules.Warning,
		edits: []objEdit{webRollout(stepAnalysis("templates", []interface{}{map[string]interface{}{"templateName": "sucess-rate"}}))},
		says:  "names AnalysisTemplate sucess-rate, which is not in the input although the input has AnalysisTemplate success-rate: unless it exists in namespace shop when this is applied, the controller rejects the Rollout (InvalidSpec: AnalysisTemplate 'sucess-rate' not found) and reconciles nothing — no scaling, no step, no traffic change — until it exists (did you mean success-rate?)"},
	{name: "lint: the ClusterAnalysisTemplate ships elsewhere", id: "RD211", fires: true, sev: rules.Info,
		edits: []objEdit{drop("ClusterAnalysisTemplate", "error-rate")},
		says:  "the background analysis names ClusterAnalysisTemplate error-rate, which is not in the input (it holds no ClusterAnalysisTemplate): make sure it exists in the cluster"},
	{name: "nested: a template lists a missing one", id: "RD211", fires: true, sev: rules.Warning, subject: "AnalysisTemplate shop/success-rate",
		edits: []objEdit{successRate(set([]string{"spec", "templates"}, []interface{}{map[string]interface{}{"templateName": "latency"}}))},
		says:  "names AnalysisTemplate latency (listed in the spec.templates of AnalysisTemplate success-rate), which is not in the input"},
	{name: "nested templates resolve", id: "RD211",
		edits: []objEdit{successRate(set([]string{"spec", "templates"}, []interface{}{map[string]interface{}{"templateName": "error-rate", "clusterScope": true}}))}},
	{name: "a cycle through spec.templates", id: "RD211", fires: true, sev: rules.Critical,
		edits: []objEdit{successRate(set([]string{"spec", "templates"}, []interface{}{map[string]interface{}{"templateName": "success-rate"}}))},
		says:  "AnalysisTemplate success-rate → AnalysisTemplate success-rate: the controller follows spec.templates with no guard against a cycle"},

	// RD212: arguments and placeholders without a value.
	{name: "every argument given", id: "RD212"},
	{name: "the Rollout does not pass a required argument", id: "RD212", fires: true,
		edits: []objEdit{webRollout(stepAnalysis("args", []interface{}{map[string]interface{}{"name": "canary-hash", "valueFrom": map[string]interface{}{"podTemplateHashValue": "Latest"}}}))},
		says:  "the step 2 analysis (success-rate) needs argument service, which has no default and the Rollout does not pass: the controller rejects the Rollout (InvalidSpec: args.service was not resolved)"},
	{name: "a default satisfies the argument", id: "RD212",
		edits: []objEdit{
			webRollout(stepAnalysis("args", []interface{}{map[string]interface{}{"name": "canary-hash", "value": "x"}})),
			successRate(set([]string{"spec", "args"}, []interface{}{map[string]interface{}{"name": "service", "value": "web"}, map[string]interface{}{"name": "canary-hash"}, map[string]interface{}{"name": "threshold", "value": "0.95"}})),
		}},
	{name: "a step template's placeholder only a sibling declares", id: "RD212", fires: true, subject: "AnalysisTemplate shop/success-rate",
		edits: []objEdit{
			successRate(set([]string{"spec", "args"}, []interface{}{map[string]interface{}{"name": "service"}, map[string]interface{}{"name": "threshold", "value": "0.95"}})),
			webRollout(stepAnalysis("templates", []interface{}{map[string]interface{}{"templateName": "success-rate"}, map[string]interface{}{"templateName": "hash"}})),
			add("apiVersion: argoproj.io/v1alpha1\nkind: AnalysisTemplate\nmetadata: {name: hash, namespace: shop}\nspec:\n  args: [{name: canary-hash}]\n  metrics:\n  - name: hash-set\n    successCondition: 'true'\n    provider: {web: {url: 'http://x/{{args.canary-hash}}'}}\n"),
		},
		says: "the step 2 analysis: AnalysisTemplate shop/success-rate uses {{args.canary-hash}}, which is not one of its own args: the controller checks each step and blue-green template against the args it declares itself, whatever the Rollout passes, and rejects the Rollout (InvalidSpec: failed to resolve {{args.canary-hash}}) — it reconciles nothing until the template declares it (canary-hash is declared by another template of the analysis: declare it here too)"},
	{name: "a background placeholder nothing declares", id: "RD212", fires: true, subject: "ClusterAnalysisTemplate error-rate",
		edits: []objEdit{errorRate(setMetric("provider", map[string]interface{}{"prometheus": map[string]interface{}{"query": `rate(x{ns="{{args.namespace}}"}[1m])`}}))},
		says:  "the background analysis: ClusterAnalysisTemplate error-rate uses {{args.namespace}}, which no template of the analysis declares: the run ends in Error before it measures anything"},
	{name: "a background template's argument only a sibling's default gives", id: "RD212", fires: true,
		edits: []objEdit{
			webRollout(set([]string{"spec", "strategy", "canary", "analysis", "templates"}, []interface{}{map[string]interface{}{"templateName": "error-rate", "clusterScope": true}, map[string]interface{}{"templateName": "defaults"}}),
				set([]string{"spec", "strategy", "canary", "analysis", "args"}, []interface{}{})),
			add("apiVersion: argoproj.io/v1alpha1\nkind: AnalysisTemplate\nmetadata: {name: defaults, namespace: shop}\nspec:\n  args: [{name: service, value: web}]\n  metrics:\n  - name: up\n    interval: 1m\n    successCondition: 'len(result) > 0 && result[0] == 1'\n    provider: {prometheus: {query: 'up{service=\"{{args.service}}\"}'}}\n"),
		},
		says: "the background analysis: ClusterAnalysisTemplate error-rate declares argument service without a value, and only another template of the analysis gives it a default: the controller checks each background template's own arguments against spec.strategy.canary.analysis.args, rejects the Rollout (InvalidSpec)"},
	{name: "two templates disagree on a default", id: "RD212", fires: true,
		edits: []objEdit{
			successRate(set([]string{"spec", "args"}, []interface{}{map[string]interface{}{"name": "service"}, map[string]interface{}{"name": "canary-hash"}, map[string]interface{}{"name": "threshold", "value": "0.95"}})),
			webRollout(stepAnalysis("templates", []interface{}{map[string]interface{}{"templateName": "success-rate"}, map[string]interface{}{"templateName": "strict"}})),
			add("apiVersion: argoproj.io/v1alpha1\nkind: AnalysisTemplate\nmetadata: {name: strict, namespace: shop}\nspec:\n  args: [{name: threshold, value: '0.99'}]\n  metrics:\n  - name: strict\n    successCondition: 'true'\n    provider: {web: {url: 'http://x/'}}\n"),
		},
		says: "AnalysisTemplate shop/success-rate gives argument threshold the value \"0.95\" and AnalysisTemplate shop/strict the value \"0.99\": the controller rejects the Rollout (InvalidSpec: Argument `threshold` specified multiple times with different values)"},
	{name: "a Job's shell {{ }} is a placeholder too", id: "RD212", fires: true, fixture: blueGreenWithAnalysis,
		edits: []objEdit{smoke(setMetric("provider", map[string]interface{}{"job": map[string]interface{}{"spec": map[string]interface{}{"template": map[string]interface{}{"spec": map[string]interface{}{
			"restartPolicy": "Never", "containers": []interface{}{map[string]interface{}{"name": "c", "image": "curl", "command": []interface{}{"sh", "-c", "curl -sf http://{{args.host}}/ && echo '{{ .status }}'"}}}}}}}}))},
		says: "uses {{ .status }}, which is not one of its own args"},

	// RD213: an argument the templates do not declare.
	{name: "every argument declared", id: "RD213"},
	{name: "a typo: the template's default is used", id: "RD213", fires: true, sev: rules.Warning,
		edits: []objEdit{webRollout(stepAnalysis("args", []interface{}{
			map[string]interface{}{"name": "service", "value": "web"}, map[string]interface{}{"name": "canary-hash", "value": "x"}, map[string]interface{}{"name": "treshold", "value": "0.99"}}))},
		says: "the step 2 analysis passes argument treshold, which none of its templates (success-rate) declares: the controller drops it without a word — did you mean threshold? AnalysisTemplate shop/success-rate declares it with the default \"0.95\", which the run uses instead"},
	{name: "an unrelated extra argument", id: "RD213", fires: true, sev: rules.Info,
		edits: []objEdit{webRollout(set([]string{"spec", "strategy", "canary", "analysis", "args"}, []interface{}{
			map[string]interface{}{"name": "service", "value": "web"}, map[string]interface{}{"name": "team", "value": "shop"}}))}},
	{name: "a template not in the input may declare it", id: "RD213",
		edits: []objEdit{drop("ClusterAnalysisTemplate", "error-rate"), webRollout(set([]string{"spec", "strategy", "canary", "analysis", "args"}, []interface{}{map[string]interface{}{"name": "team", "value": "shop"}}))}},

	// RD214: conditions that pass without data.
	{name: "conditions that need data", id: "RD214"},
	{name: "only a failureCondition on result[0]: NaN passes", id: "RD214", fires: true, subject: "AnalysisTemplate shop/success-rate",
		edits: []objEdit{successRate(setMetric("successCondition", nil), setMetric("failureCondition", "result[0] < 0.90"))},
		says:  "metric success-rate of AnalysisTemplate shop/success-rate (prometheus) passes when the value is NaN (a ratio over zero requests: no traffic yet): failureCondition `result[0] < 0.90` is false there, and without a successCondition false counts as Successful (evaluated with github.com/expr-lang/expr v1.17.7, as v1.10.2 does)"},
	{name: "a guarded failureCondition passes on no series too", id: "RD214", fires: true,
		edits: []objEdit{successRate(setMetric("successCondition", nil), setMetric("failureCondition", "len(result) > 0 && result[0] < 0.90"))},
		says:  "passes when the query returns no series (an empty vector: no request matched yet), and when the value is NaN"},
	{name: "the upstream empty-array example passes on v1.7", id: "RD214", fires: true, ver: "v1.7.2",
		edits: []objEdit{successRate(setMetric("successCondition", "len(result) == 0 || result[0] >= 0.95"), setMetric("failureCondition", nil))},
		says:  "successCondition `len(result) == 0 || result[0] >= 0.95` is true there (evaluated with github.com/antonmedv/expr v1.15.5, as v1.7.2 does)"},
	{name: "a scalar query with a scalar failureCondition: NaN passes", id: "RD214", fires: true,
		edits: []objEdit{successRate(setMetric("successCondition", nil), setMetric("failureCondition", "result < 0.90"),
			setMetric("provider", map[string]interface{}{"prometheus": map[string]interface{}{"query": "scalar(sum(rate(ok[2m])) / sum(rate(all[2m])))"}}))},
		says: "passes when the value is NaN (a ratio over zero requests: no traffic yet): failureCondition `result < 0.90` is false there"},
	{name: "only a successCondition fails on NaN", id: "RD214",
		edits: []objEdit{successRate(setMetric("successCondition", "result[0] >= 0.95"), setMetric("failureCondition", nil))}},
	{name: "Datadog default(result, 0) passes on no data", id: "RD214", fires: true,
		edits: []objEdit{errorRate(setMetric("successCondition", "default(result, 0) < 0.01"), setMetric("provider", map[string]interface{}{"datadog": map[string]interface{}{"query": "sum:errors{service:web}"}}))},
		says:  "metric error-rate of ClusterAnalysisTemplate error-rate (datadog) passes when the query returns no data points (a nil result): successCondition `default(result, 0) < 0.01` is true there"},
	{name: "a dryRun metric is not judged", id: "RD214",
		edits: []objEdit{successRate(setMetric("successCondition", nil), setMetric("failureCondition", "result[0] < 0.90")), webRollout(stepAnalysis("dryRun", []interface{}{map[string]interface{}{"metricName": "success"}}))}},

	// RD215: limits count never reaches.
	{name: "failureLimit 1 of count 5", id: "RD215"},
	{name: "failureLimit equal to count", id: "RD215", fires: true, subject: "AnalysisTemplate shop/success-rate",
		edits: []objEdit{successRate(setMetric("failureLimit", int64(5)))},
		says:  "metric success-rate of AnalysisTemplate shop/success-rate has failureLimit 5 and count 5: it fails only when more than 5 of its measurements fail, and it takes 5 in all — it ends Successful even if every measurement fails"},
	{name: "count from a Rollout argument reaches the limit", id: "RD215", fires: true,
		edits: []objEdit{
			successRate(setMetric("count", "{{args.count}}"), set([]string{"spec", "args"}, []interface{}{map[string]interface{}{"name": "service"}, map[string]interface{}{"name": "canary-hash"}, map[string]interface{}{"name": "threshold", "value": "0.95"}, map[string]interface{}{"name": "count", "value": "5"}})),
			webRollout(stepAnalysis("args", []interface{}{map[string]interface{}{"name": "service", "value": "web"}, map[string]interface{}{"name": "canary-hash", "value": "x"}, map[string]interface{}{"name": "count", "value": "1"}})),
		},
		says: "has failureLimit 1 and count 1"},
	{name: "inconclusiveLimit equal to count with both conditions", id: "RD215", fires: true,
		edits: []objEdit{successRate(setMetric("inconclusiveLimit", int64(5)))},
		says:  "has inconclusiveLimit 5 and count 5: it is never Inconclusive"},
	{name: "inconclusiveLimit with one condition cannot matter", id: "RD215",
		edits: []objEdit{successRate(setMetric("inconclusiveLimit", int64(5)), setMetric("failureCondition", nil))}},
	{name: "an indefinite background metric can always fail", id: "RD215", edits: []objEdit{errorRate(setMetric("failureLimit", int64(50)))}},

	// RD216: metrics the controller rejects.
	{name: "valid metrics", id: "RD216"},
	{name: "failureLimit above count", id: "RD216", fires: true, subject: "AnalysisTemplate shop/success-rate",
		edits: []objEdit{successRate(setMetric("failureLimit", int64(6)))},
		says:  "metric success-rate of AnalysisTemplate shop/success-rate is invalid for v1.10.2: count (5) must be >= failureLimit + consecutiveSuccessLimit (6 + 0) — every run ends in Error before it measures anything (Analysis spec invalid) and aborts the Rollout"},
	{name: "failureLimit -1 on v1.7", id: "RD216", fires: true, ver: "v1.7.2",
		edits: []objEdit{successRate(setMetric("failureLimit", int64(-1)))},
		says:  "is invalid for v1.7.2: failureLimit must be >= 0 (-1)"},
	{name: "failureLimit -1 with consecutiveSuccessLimit on v1.8", id: "RD216", ver: "v1.8.2",
		edits: []objEdit{successRate(setMetric("failureLimit", int64(-1)), setMetric("consecutiveSuccessLimit", int64(3)))}},
	{name: "count 3 without interval", id: "RD216", fires: true, fixture: blueGreenWithAnalysis,
		edits: []objEdit{smoke(setMetric("interval", nil))},
		says:  "interval must be specified when count > 1"},
	{name: "an interval that is not a duration", id: "RD216", fires: true,
		edits: []objEdit{errorRate(setMetric("interval", "1 minute"))},
		says:  "invalid interval string"},
	{name: "a condition that does not compile", id: "RD216", fires: true,
		edits: []objEdit{successRate(setMetric("failureCondition", "result[0] <"))},
		says:  "has a failureCondition that does not compile with github.com/expr-lang/expr v1.17.7 (v1.10.2)"},
	{name: "a dryRun rule '*' (not a regular expression)", id: "RD216", fires: true,
		edits: []objEdit{webRollout(stepAnalysis("dryRun", []interface{}{map[string]interface{}{"metricName": "*"}}))},
		says:  `the step 2 analysis: dryRun rule "*" of Rollout shop/web is not a regular expression, so it matches no metric (for every metric, write ".*"): every run ends in Error before it measures anything`},
	{name: "a dryRun rule '.*'", id: "RD216", edits: []objEdit{webRollout(stepAnalysis("dryRun", []interface{}{map[string]interface{}{"metricName": ".*"}}))}},
	{name: "a template's measurementRetention rule that matches nothing", id: "RD216", fires: true, subject: "ClusterAnalysisTemplate error-rate",
		edits: []objEdit{errorRate(set([]string{"spec", "measurementRetention"}, []interface{}{map[string]interface{}{"metricName": "latency", "limit": int64(20)}}))},
		says:  `measurementRetention rule "latency" of ClusterAnalysisTemplate error-rate matches none of its metrics (error-rate)`},
	{name: "two templates with one metric name", id: "RD216", fires: true,
		edits: []objEdit{
			webRollout(stepAnalysis("templates", []interface{}{map[string]interface{}{"templateName": "success-rate"}, map[string]interface{}{"templateName": "error-rate", "clusterScope": true}})),
			errorRate(setMetric("name", "success-rate"), setMetric("count", int64(3))),
		},
		says: "AnalysisTemplate shop/success-rate and ClusterAnalysisTemplate error-rate each have a metric named success-rate: the controller rejects the Rollout (InvalidSpec: two metrics have the same name 'success-rate')"},

	// RD217: a gating analysis that runs indefinitely.
	{name: "step analysis with a count; background without", id: "RD217"},
	{name: "step analysis with an interval and no count", id: "RD217", fires: true, subject: "AnalysisTemplate shop/success-rate",
		edits: []objEdit{successRate(setMetric("count", nil))},
		says:  "the step 2 analysis: metric success-rate of AnalysisTemplate shop/success-rate has interval 1m and no count: it would measure until the run is terminated, so the step 2 analysis could never complete — the controller rejects the Rollout (InvalidSpec: AnalysisTemplate success-rate has metric success-rate which runs indefinitely)"},
	{name: "count from the Rollout's argument, no default (upstream #3243)", id: "RD217", fires: true,
		edits: []objEdit{
			successRate(setMetric("count", "{{args.count}}"), set([]string{"spec", "args"}, []interface{}{map[string]interface{}{"name": "service"}, map[string]interface{}{"name": "canary-hash"}, map[string]interface{}{"name": "threshold", "value": "0.95"}, map[string]interface{}{"name": "count"}})),
			webRollout(stepAnalysis("args", []interface{}{map[string]interface{}{"name": "service", "value": "web"}, map[string]interface{}{"name": "canary-hash", "value": "x"}, map[string]interface{}{"name": "count", "value": "4"}})),
		},
		says: "takes its count from {{args.count}}: the controller validates step and blue-green templates with the template's own argument defaults (the placeholder reads as 0, not the Rollout's \"4\"), so with interval 1m the metric reads as running indefinitely"},
	{name: "count from an argument with a numeric default", id: "RD217",
		edits: []objEdit{successRate(setMetric("count", "{{args.count}}"), set([]string{"spec", "args"}, []interface{}{map[string]interface{}{"name": "service"}, map[string]interface{}{"name": "canary-hash"}, map[string]interface{}{"name": "threshold", "value": "0.95"}, map[string]interface{}{"name": "count", "value": "5"}}))}},
	{name: "blue-green pre-promotion without count", id: "RD217", fires: true, fixture: blueGreenWithAnalysis,
		edits: []objEdit{smoke(setMetric("count", nil))},
		says:  "the pre-promotion analysis: metric smoke of AnalysisTemplate shop/smoke has interval 10s and no count"},

	// RD218: a background analysis and the steps it runs beside.
	{name: "background can fail within 2m of 19m of steps", id: "RD218"},
	{name: "background slower than the steps", id: "RD218", fires: true,
		edits: []objEdit{errorRate(setMetric("initialDelay", "10m"), setMetric("interval", "5m")), webRollout(steps(weight(20), pause("1m"), weight(50), pause("2m"), weight(80), pause("2m")))},
		says:  "the background analysis can fail 20m after it starts at the earliest (metric error-rate: initialDelay 10m, then failureLimit+1 = 3 failed measurements 5m apart), but the steps from step 1 on pause for 5m in all: the Rollout can be fully promoted before the analysis can fail"},
	{name: "background with a count that ends early (upstream #1666)", id: "RD218", fires: true,
		edits: []objEdit{errorRate(setMetric("count", int64(3)))},
		says:  "the background analysis has taken all its measurements 2m after it starts (metric error-rate: 3 measurements 1m apart) and then stays Successful for the rest of the update — the controller starts no other — while the steps from step 1 on pause for 19m in all: for the last 17m of the steps, usually at the highest weights, nothing is measured"},
	{name: "a background Job whose length is not known", id: "RD218",
		edits: []objEdit{errorRate(setMetric("count", int64(1)), setMetric("interval", nil), setMetric("successCondition", nil),
			setMetric("provider", map[string]interface{}{"job": map[string]interface{}{"spec": map[string]interface{}{"template": map[string]interface{}{"spec": map[string]interface{}{
				"restartPolicy": "Never", "containers": []interface{}{map[string]interface{}{"name": "c", "image": "load-test"}}}}}}}))}},
	{name: "a pause without duration waits for a person", id: "RD218",
		edits: []objEdit{errorRate(setMetric("initialDelay", "10m"), setMetric("interval", "5m")), webRollout(steps(weight(20), map[string]interface{}{"pause": map[string]interface{}{}}, weight(50)))}},
}

// TestStaticAnalysisRules runs the table: each case fires or stays quiet,
// with the severity, subject and words it names; every message is free of
// internal references.
func TestStaticAnalysisRules(t *testing.T) {
	for _, c := range staticAnalysisCases {
		t.Run(c.id+"/"+c.name, func(t *testing.T) {
			r := diagnoseStatic(t, c)
			var got []rules.Finding
			for _, f := range r.Findings {
				rulestest.NoInternalRefs(t, f.ID+" message", f.Message)
				if f.ID == c.id {
					got = append(got, f)
				}
			}
			if (len(got) > 0) != c.fires {
				t.Fatalf("%s fires=%v, want %v; findings: %+v", c.id, len(got) > 0, c.fires, r.Findings)
			}
			if !c.fires {
				return
			}
			f := got[0]
			if c.says != "" && !strings.Contains(f.Message, c.says) {
				t.Errorf("%s says\n  %s\nwant it to contain\n  %s", c.id, f.Message, c.says)
			}
			if c.sev != 0 && f.Severity != c.sev {
				t.Errorf("%s severity %s, want %s", c.id, f.Severity, c.sev)
			}
			if c.subject != "" && f.Subject != c.subject {
				t.Errorf("%s subject %q, want %q", c.id, f.Subject, c.subject)
			}
			if len(f.Cites) == 0 {
				t.Errorf("%s cites nothing", c.id)
			}
		})
	}
}

// TestStaticAnalysisGoodFixtures: the well-written fixtures raise none of
// the static analysis rules on any modeled version.
func TestStaticAnalysisGoodFixtures(t *testing.T) {
	for _, fx := range []string{canaryWithAnalysis, blueGreenWithAnalysis} {
		for _, v := range upstream.Modeled {
			r := diagnoseStatic(t, staticAnalysisCase{fixture: fx, ver: v})
			for _, f := range r.Findings {
				if f.ID >= "RD211" && f.ID <= "RD218" {
					t.Errorf("%s: %s %s", v, f.ID, f.Message)
				}
			}
		}
	}
}

// TestStaticAnalysisPerVersion: where the controller versions differ, the
// rules say what each does. failureLimit -1 is rejected before v1.8 and
// needs a consecutiveSuccessLimit after; max() over a Prometheus vector
// does not compile with the library v1.7–v1.9 use (every measurement an
// Error), and on v1.10 a NaN in the vector makes it pass.
func TestStaticAnalysisPerVersion(t *testing.T) {
	type want struct{ id, says string }
	for _, tc := range []struct {
		name  string
		edits []objEdit
		want  map[upstream.Version][]want
	}{
		{"failureLimit -1 alone", []objEdit{successRate(setMetric("failureLimit", int64(-1)))}, map[upstream.Version][]want{
			"v1.7.2":  {{"RD216", "is invalid for v1.7.2: failureLimit must be >= 0 (-1)"}},
			"v1.8.2":  {{"RD216", "is invalid for v1.8.2: failureLimit and consecutiveSuccessLimit cannot both be disabled"}},
			"v1.8.3":  {{"RD216", "is invalid for v1.8.3: failureLimit and consecutiveSuccessLimit cannot both be disabled"}},
			"v1.9.3":  {{"RD216", "is invalid for v1.9.3: failureLimit and consecutiveSuccessLimit cannot both be disabled"}},
			"v1.10.2": {{"RD216", "is invalid for v1.10.2: failureLimit and consecutiveSuccessLimit cannot both be disabled"}},
		}},
		{"failureLimit -1 with consecutiveSuccessLimit 3", []objEdit{successRate(setMetric("failureLimit", int64(-1)), setMetric("consecutiveSuccessLimit", int64(3)))}, map[upstream.Version][]want{
			"v1.7.2":  {{"RD216", "is invalid for v1.7.2: failureLimit must be >= 0 (-1)"}},
			"v1.8.2":  nil,
			"v1.8.3":  nil,
			"v1.9.3":  nil,
			"v1.10.2": nil,
		}},
		{"failureCondition max(result) > 0.10 alone", []objEdit{successRate(setMetric("successCondition", nil), setMetric("failureCondition", "max(result) > 0.10"))}, map[upstream.Version][]want{
			"v1.7.2":  {{"RD216", "has a failureCondition that does not compile with github.com/antonmedv/expr v1.15.5 (v1.7.2) for a Prometheus vector (a list, even of one series): invalid argument for max (type []float64)"}},
			"v1.8.2":  {{"RD216", "does not compile with github.com/antonmedv/expr v1.15.5 (v1.8.2)"}},
			"v1.8.3":  {{"RD216", "does not compile with github.com/antonmedv/expr v1.15.5 (v1.8.3)"}},
			"v1.9.3":  {{"RD216", "does not compile with github.com/antonmedv/expr v1.15.5 (v1.9.3)"}},
			"v1.10.2": {{"RD214", "passes when the value is NaN (a ratio over zero requests: no traffic yet): failureCondition `max(result) > 0.10` is false there"}},
		}},
	} {
		for _, v := range upstream.Modeled {
			w, ok := tc.want[v]
			if !ok {
				t.Fatalf("%s: no expectation for %s: read its analysis controller and add one", tc.name, v)
			}
			r := diagnoseStatic(t, staticAnalysisCase{edits: tc.edits, ver: v})
			got := map[string]string{}
			for _, f := range r.Findings {
				if f.ID >= "RD211" && f.ID <= "RD218" {
					got[f.ID] = f.Message
				}
			}
			if len(got) != len(w) {
				t.Errorf("%s on %s: %v, want %v", tc.name, v, got, w)
				continue
			}
			for _, x := range w {
				if !strings.Contains(got[x.id], x.says) {
					t.Errorf("%s on %s: %s says %q, want %q", tc.name, v, x.id, got[x.id], x.says)
				}
			}
		}
	}
}
