package diagnose

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// The static analysis rules, RD211–RD218: a Rollout's analysis read
// together with the AnalysisTemplates it uses, before a release. Each says
// what the controller will do with the spec — reject the Rollout, end every
// run in Error, or let a run pass without checking anything. Findings that
// depend on where a template is used name the block (the step 2 analysis,
// the background analysis); those about a template's metric alone do not,
// so that a template used by several blocks or Rollouts says it once.

// findings collects a check's findings once each: one template used by
// several blocks, or several steps, says the same thing once.
type findings struct {
	out  []rules.Finding
	seen map[string]bool
}

func (fs *findings) add(f rules.Finding) {
	if fs.seen == nil {
		fs.seen = map[string]bool{}
	}
	k := f.Subject + "\x00" + f.Message
	if fs.seen[k] {
		return
	}
	fs.seen[k] = true
	fs.out = append(fs.out, f)
}

// templateObject names a referenced template as reports do; namespaced
// templates live in the Rollout's namespace (rv.nested-templates).
func (c *Context) templateObject(r snapshot.TemplateRef) string {
	if r.Cluster {
		return r.String()
	}
	return r.Kind() + " " + c.ro.Namespace + "/" + r.Name
}

// templateGap is the gap gather recorded for a referenced template it
// looked for and did not find.
func (c *Context) templateGap(r snapshot.TemplateRef) (snapshot.Gap, bool) {
	res := "analysistemplates.argoproj.io"
	if r.Cluster {
		res = "clusteranalysistemplates.argoproj.io"
	}
	for _, g := range c.View.Header.Gaps {
		if g.Resource == res && g.Name == r.Name && g.Reason == snapshot.GapNotFound {
			return g, true
		}
	}
	return snapshot.Gap{}, false
}

// checkTemplateMissing: RD211. A template the analysis names that does not
// exist makes the controller reject the Rollout. What "does not exist"
// means depends on the input: a snapshot that looked for it (gather records
// a NotFound gap) knows; a set of manifests only knows it does not hold it.
// A ClusterAnalysisTemplate usually ships with a platform chart and a
// shared AnalysisTemplate with another release, so a template merely absent
// from manifests is a warning only when the input evidently ships templates
// of that kind — it holds others, so a typo or a forgotten file is likely —
// and information otherwise, which lint's default --fail-on warning lets
// pass. A cycle through spec.templates is critical wherever it is seen.
func checkTemplateMissing(c *Context, r *rules.Rule) []rules.Finding {
	var fs findings
	type missing struct {
		snapshot.MissingTemplate
		blocks []string
	}
	var order []string
	byKey := map[string]*missing{}
	for _, u := range c.analysisUses() {
		for _, m := range u.Missing {
			k := fmt.Sprint(m.TemplateRef, m.Via)
			if byKey[k] == nil {
				byKey[k] = &missing{MissingTemplate: m}
				order = append(order, k)
			}
			if b := u.words(); !slices.Contains(byKey[k].blocks, b) {
				byKey[k].blocks = append(byKey[k].blocks, b)
			}
		}
		for _, cyc := range u.Cycles {
			var chain []string
			for _, t := range cyc {
				chain = append(chain, t.String())
			}
			f := r.NewFinding(fmt.Sprintf("%s: %s: the controller follows spec.templates with no guard against a cycle, so its lookup of this Rollout's templates recurses without end — expect the controller process to die of a stack overflow when it reconciles the Rollout, taking every Rollout it manages with it",
				u.words(), strings.Join(chain, " → ")))
			f.Severity = rules.Critical
			closing := cyc[len(cyc)-2]
			f.Subject = c.templateObject(closing)
			f.Evidence = []rules.Evidence{ev(f.Subject, "spec.templates", cyc[len(cyc)-1].Name)}
			f.Cites = c.cites("rv.nested-templates")
			fs.add(f)
		}
	}
	for _, k := range order {
		m := byKey[k]
		what := m.String()
		where := "in namespace " + c.ro.Namespace
		names := c.View.TemplateNames
		if m.Cluster {
			where, names = "in the cluster", c.View.ClusterTemplateNames
		}
		subject, field := c.obj(), ""
		if len(m.Via) > 0 {
			parent := m.Via[len(m.Via)-1]
			what += fmt.Sprintf(" (listed in the spec.templates of %s)", parent)
			subject, field = c.templateObject(parent), fmt.Sprintf("spec.templates[%d].templateName", m.Index)
		} else {
			for _, u := range c.analysisUses() {
				if blockWords(u.AnalysisBlock) == m.blocks[0] {
					field = fmt.Sprintf("%s.templates[%d].templateName", u.Field, m.Index)
				}
			}
		}
		rejects := fmt.Sprintf("the controller rejects the Rollout (InvalidSpec: %s '%s' not found) and reconciles nothing — no scaling, no step, no traffic change — until it exists", m.Kind(), m.Name)
		var f rules.Finding
		switch _, looked := c.templateGap(m.TemplateRef); {
		case looked:
			f = r.NewFinding(fmt.Sprintf("%s %s %s, which does not exist %s: %s", joinWords(m.blocks), names3(len(m.blocks)), what, where, rejects))
		case !c.View.Header.Offline:
			// A snapshot that did not look for it (or could not read it:
			// RD110 reports that) does not say it is missing.
			continue
		case len(names) > 0:
			f = r.NewFinding(fmt.Sprintf("%s %s %s, which is not in the input although the input has %s %s: unless it exists %s when this is applied, %s",
				joinWords(m.blocks), names3(len(m.blocks)), what, pluralKind(m.Kind(), len(names)), strings.Join(names, ", "), where, rejects))
			f.Severity = rules.Warning
			if near := closest(m.Name, names); near != "" {
				f.Message += fmt.Sprintf(" (did you mean %s?)", near)
			}
		default:
			f = r.NewFinding(fmt.Sprintf("%s %s %s, which is not in the input (it holds no %s): make sure it exists %s before this is applied — otherwise %s",
				joinWords(m.blocks), names3(len(m.blocks)), what, m.Kind(), where, rejects))
			f.Severity = rules.Info
		}
		f.Subject = subjectOf(c, subject)
		f.Evidence = []rules.Evidence{ev(subject, field, m.Name)}
		fact := upstream.Key("rv.template-not-found")
		if m.Cluster {
			fact = "rv.cluster-template-not-found"
		}
		f.Cites = c.cites(fact, "ct.invalid-spec")
		fs.add(f)
	}
	return fs.out
}

// names3 is "names" for one block, "name" for several.
func names3(n int) string {
	if n == 1 {
		return "names"
	}
	return "name"
}

// subjectOf is "" for the Rollout itself (findings are about it by default).
func subjectOf(c *Context, object string) string {
	if object == c.obj() {
		return ""
	}
	return object
}

func pluralKind(kind string, n int) string {
	if n == 1 {
		return kind
	}
	return kind + "s"
}

func joinWords(ws []string) string {
	switch len(ws) {
	case 0:
		return ""
	case 1:
		return ws[0]
	}
	return strings.Join(ws[:len(ws)-1], ", ") + " and " + ws[len(ws)-1]
}

// checkArgUnsupplied: RD212. Arguments and placeholders nothing gives a
// value: the controller's own validation rejects the Rollout for most; a
// background template's placeholder is only found when its run starts.
func checkArgUnsupplied(c *Context, r *rules.Rule) []rules.Finding {
	var fs findings
	for _, u := range c.analysisUses() {
		args, _, conflict := u.runArgs()
		if conflict != nil {
			f := r.NewFinding(fmt.Sprintf("%s: %s gives argument %s the value %q and %s the value %q: the controller rejects the Rollout (InvalidSpec: Argument `%s` specified multiple times with different values) and reconciles nothing until they agree",
				u.words(), conflict.A.Object(), conflict.Name, conflict.AVal, conflict.B.Object(), conflict.BVal, conflict.Name))
			f.Evidence = []rules.Evidence{ev(conflict.A.Object(), "spec.args["+conflict.Name+"].value", conflict.AVal), ev(conflict.B.Object(), "spec.args["+conflict.Name+"].value", conflict.BVal)}
			f.Cites = c.cites("rv.build-run", "ag.arg-conflict", "ct.invalid-spec")
			fs.add(f)
		}
		var unset []string
		var evs []rules.Evidence
		for _, a := range args {
			if a.Unset {
				unset = append(unset, a.Name)
				evs = append(evs, ev(a.By.Object(), "spec.args["+a.Name+"]", "no value, no valueFrom"))
			}
		}
		if len(unset) > 0 {
			f := r.NewFinding(fmt.Sprintf("%s (%s) needs %s %s, which %s no default and the Rollout does not pass: the controller rejects the Rollout (InvalidSpec: args.%s was not resolved) and reconciles nothing — no scaling, no step, no traffic change — until %s.args gives %s",
				u.words(), u.templateNames(), plural("argument", len(unset)), strings.Join(unset, ", "), hasHave(len(unset)), unset[0], u.Field, itThem(len(unset))))
			f.Evidence = append([]rules.Evidence{ev(c.obj(), u.Field+".args", argNames(u.Analysis.Args))}, evs...)
			f.Cites = c.cites("rv.build-run", "ag.args-not-resolved", "ct.invalid-spec")
			fs.add(f)
		}
		if !u.Gates() && len(unset) == 0 && conflict == nil {
			c.backgroundArgsPerTemplate(r, u, &fs)
		}
		c.unresolvedPlaceholders(r, u, args, &fs)
	}
	return fs.out
}

// backgroundArgsPerTemplate adds the arguments a background template
// declares without a value that the Rollout does not pass by name: the
// controller's validation asks each background template for them on its
// own, so a default another template gives does not do (the merged
// arguments passed the check above).
func (c *Context) backgroundArgsPerTemplate(r *rules.Rule, u analysisUse, fs *findings) {
	passed := map[string]bool{}
	for _, a := range u.Analysis.Args {
		passed[a.Name] = true
	}
	for _, t := range u.Used {
		var need []string
		for _, a := range t.Spec.Args {
			if a.Value == nil && a.ValueFrom == nil && !passed[a.Name] {
				need = append(need, a.Name)
			}
		}
		if len(need) == 0 {
			continue
		}
		f := r.NewFinding(fmt.Sprintf("%s: %s declares %s %s without a value, and only another template of the analysis gives %s a default: the controller checks each background template's own arguments against spec.strategy.canary.analysis.args, rejects the Rollout (InvalidSpec) and reconciles nothing until the Rollout passes %s",
			u.words(), t.Object(), plural("argument", len(need)), strings.Join(need, ", "), itThem(len(need)), itThem(len(need))))
		f.Evidence = []rules.Evidence{ev(c.obj(), u.Field+".args", argNames(u.Analysis.Args)), ev(t.Object(), "spec.args", strings.Join(need, ", "))}
		f.Cites = c.cites("rv.background-args-per-template", "ct.invalid-spec")
		fs.add(f)
	}
}

// unresolvedPlaceholders adds the {{...}} placeholders of the block's
// metrics that no argument resolves. Step and blue-green templates are
// validated one by one against their own args (rv.placeholders-per-
// template); a background template only when its run resolves its metrics
// with the run's merged args (ar.resolve-args), which needs every template.
func (c *Context) unresolvedPlaceholders(r *rules.Rule, u analysisUse, args []*runArg, fs *findings) {
	declared := map[string]bool{}
	for _, a := range args {
		declared[a.Name] = true
	}
	if !u.Gates() && !u.complete() {
		return
	}
	for _, t := range u.Used {
		own := map[string]bool{}
		for _, a := range t.Spec.Args {
			own[a.Name] = true
		}
		var bad []string
		var evs []rules.Evidence
		elsewhere := map[string]bool{}
		for i, m := range t.Spec.Metrics {
			ts, unclosed := metricTags(m)
			for _, tag := range ts {
				name, isArg := argName(tag)
				ok := isArg && declared[name]
				if u.Gates() {
					ok = isArg && own[name]
					if isArg && !own[name] && declared[name] {
						elsewhere[name] = true
					}
				}
				if !ok && !slices.Contains(bad, "{{"+tag+"}}") {
					bad = append(bad, "{{"+tag+"}}")
					evs = append(evs, ev(t.Object(), fmt.Sprintf("spec.metrics[%d] (%s)", i, m.Name), "{{"+tag+"}}"))
				}
			}
			if unclosed && !slices.Contains(bad, "an unclosed {{") {
				bad = append(bad, "an unclosed {{")
				evs = append(evs, ev(t.Object(), fmt.Sprintf("spec.metrics[%d] (%s)", i, m.Name), "{{ without }}"))
			}
		}
		if len(bad) == 0 {
			continue
		}
		var msg string
		if u.Gates() {
			msg = fmt.Sprintf("%s: %s uses %s, which %s not %s of its own args: the controller checks each step and blue-green template against the args it declares itself, whatever the Rollout passes, and rejects the Rollout (InvalidSpec: failed to resolve %s) — it reconciles nothing until the template declares %s",
				u.words(), t.Object(), strings.Join(bad, ", "), isAre(len(bad)), oneOf(len(bad)), bad[0], itThem(len(bad)))
			if len(elsewhere) > 0 {
				msg += fmt.Sprintf(" (%s %s declared by another template of the analysis: declare %s here too)", strings.Join(sortedKeys(elsewhere), ", "), isAre(len(elsewhere)), itThem(len(elsewhere)))
			}
		} else {
			msg = fmt.Sprintf("%s: %s uses %s, which no template of the analysis declares: the run ends in Error before it measures anything (Unable to resolve metric arguments: failed to resolve %s), and that aborts the Rollout at every update, as soon as the background analysis starts",
				u.words(), t.Object(), strings.Join(bad, ", "), bad[0])
		}
		f := r.NewFinding(msg)
		f.Subject, f.Evidence = t.Object(), evs
		if u.Gates() {
			f.Cites = c.cites("rv.not-background", "rv.placeholders-per-template", "tp.unresolved-tag", "ct.invalid-spec")
		} else {
			f.Cites = c.cites("ar.resolve-args", "tp.unresolved-tag", "ar.args-error", u.abortFact())
		}
		fs.add(f)
	}
}

func argNames(args []v1alpha1.AnalysisRunArgument) string {
	if len(args) == 0 {
		return "none"
	}
	var out []string
	for _, a := range args {
		out = append(out, a.Name)
	}
	return strings.Join(out, ", ")
}

func plural(word string, n int) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func hasHave(n int) string {
	if n == 1 {
		return "has"
	}
	return "have"
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

func itThem(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

func oneOf(n int) string {
	if n == 1 {
		return "one"
	}
	return "any"
}

// checkArgIgnored: RD213. A Rollout arg no template declares is dropped
// (ag.undeclared-dropped): harmless by itself, but usually a typo, and then
// the argument meant keeps its template default.
func checkArgIgnored(c *Context, r *rules.Rule) []rules.Finding {
	var fs findings
	for _, u := range c.analysisUses() {
		if !u.complete() {
			continue // a template not seen may declare it
		}
		args, dropped, _ := u.runArgs()
		var names []string
		for _, a := range args {
			names = append(names, a.Name)
		}
		for _, d := range dropped {
			msg := fmt.Sprintf("%s passes argument %s, which none of its templates (%s) declares: the controller drops it without a word", u.words(), d.Name, u.templateNames())
			sev := rules.Info
			if near := closest(d.Name, names); near != "" {
				for _, a := range args {
					if a.Name != near || a.FromRollout {
						continue
					}
					switch {
					case a.Known:
						msg += fmt.Sprintf(" — did you mean %s? %s declares it with the default %q, which the run uses instead", near, a.By.Object(), a.Value)
						sev = rules.Warning
					default:
						msg += fmt.Sprintf(" — did you mean %s, which %s declares?", near, a.By.Object())
					}
				}
			}
			f := r.NewFinding(msg)
			f.Severity = sev
			f.Evidence = []rules.Evidence{ev(c.obj(), u.Field+".args", d.Name)}
			f.Cites = c.cites("ag.undeclared-dropped")
			fs.add(f)
		}
	}
	return fs.out
}

// checkPassesWithoutData: RD214. A metric whose conditions make a
// measurement without data Successful: the conditions are evaluated with
// the controller's own expression library on the values its provider
// hands over when nothing was measured.
func checkPassesWithoutData(c *Context, r *rules.Rule) []rules.Finding {
	var fs findings
	ver := c.Version.Assumed
	for _, u := range c.analysisUses() {
		args, _, _ := u.runArgs()
		for _, m := range u.metrics(args) {
			if m.DryRun || !m.Conditions {
				continue
			}
			var passes []string
			for _, p := range noDataProbes(m.Metric.Provider) {
				if ph, err := model.MeasurementPhase(ver, m.SuccessCondition, m.FailureCondition, p.value); err == nil && ph == v1alpha1.AnalysisPhaseSuccessful {
					passes = append(passes, p.words)
				}
			}
			if len(passes) == 0 {
				continue
			}
			var why string
			switch {
			case m.SuccessCondition == "" && m.FailureCondition == "":
				why = "it has no condition, and a measurement without one is Successful"
			case m.SuccessCondition == "":
				why = fmt.Sprintf("failureCondition `%s` is false there, and without a successCondition false counts as Successful", m.FailureCondition)
			case m.FailureCondition == "":
				why = fmt.Sprintf("successCondition `%s` is true there", m.SuccessCondition)
			default:
				why = fmt.Sprintf("successCondition `%s` is true and failureCondition `%s` false there", m.SuccessCondition, m.FailureCondition)
			}
			prov, _ := provider(m.Metric.Provider)
			f := r.NewFinding(fmt.Sprintf("metric %s of %s (%s) passes when %s: %s (evaluated with %s, as %s does) — a canary that has not served a request yet, or a query whose labels match nothing, passes it",
				m.Metric.Name, m.Template.Object(), prov, strings.Join(passes, ", and when "), why, model.ConditionLibrary(ver), ver))
			f.Subject = m.Template.Object()
			f.Evidence = []rules.Evidence{ev(f.Subject, m.field("successCondition"), quoteOr(m.Metric.SuccessCondition)), ev(f.Subject, m.field("failureCondition"), quoteOr(m.Metric.FailureCondition))}
			keys := []upstream.Key{"ev.env", "ev.only-failure", "ev.only-success", "ev.inconclusive", "ev.eval-error"}
			switch {
			case m.Metric.Provider.Prometheus != nil:
				keys = append(keys, "pr.vector-values", "pr.scalar-value")
			case m.Metric.Provider.Datadog != nil:
				keys = append(keys, "dd.no-data-nil")
			}
			f.Cites = c.cites(append(keys, "ev.expr-lang", "ev.antonmedv-expr")...)
			fs.add(f)
		}
	}
	return fs.out
}

func quoteOr(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// canBeInconclusive: a measurement can be Inconclusive only with both
// conditions (neither true), or from a provider that judges by itself
// (Kayenta's marginal score).
func canBeInconclusive(m v1alpha1.Metric) bool {
	return m.SuccessCondition != "" && m.FailureCondition != "" || m.Provider.Kayenta != nil
}

// checkLimitUnreachable: RD215. A limit the metric's count can never exceed
// turns the metric into a pass whatever it measures. consecutiveErrorLimit
// is not one of them: errors do not use up count (ar.error-not-counted), so
// any number of them can come in a row.
func checkLimitUnreachable(c *Context, r *rules.Rule) []rules.Finding {
	var fs findings
	for _, u := range c.analysisUses() {
		args, _, _ := u.runArgs()
		for _, m := range u.metrics(args) {
			if m.DryRun || !m.Numbers || m.Indefinite {
				continue
			}
			count := fmt.Sprintf("count %d", m.Count)
			if !m.CountSet {
				count = "no count (one measurement)"
			}
			invalid := func(limit int) bool { return m.CountSet && m.Count < limit } // RD216's
			if m.FailureLimit >= 0 && m.FailureLimit >= m.Count && !invalid(m.FailureLimit+max(m.ConsecutiveSuccessLimit, 0)) {
				f := r.NewFinding(fmt.Sprintf("metric %s of %s has failureLimit %d and %s: it fails only when more than %d of its measurements fail, and it takes %d in all — it ends Successful even if every measurement fails",
					m.Metric.Name, m.Template.Object(), m.FailureLimit, count, m.FailureLimit, m.Count))
				f.Subject = m.Template.Object()
				f.Evidence = []rules.Evidence{ev(f.Subject, m.field("failureLimit"), m.FailureLimit), ev(f.Subject, m.field("count"), countString(m.Metric))}
				f.Cites = c.cites("ar.failure-limit", "ar.effective-count", "ar.count-reached")
				fs.add(f)
			}
			if m.InconclusiveLimit >= m.Count && canBeInconclusive(m.Metric) && !invalid(m.InconclusiveLimit) {
				f := r.NewFinding(fmt.Sprintf("metric %s of %s has inconclusiveLimit %d and %s: it is never Inconclusive — a run whose every measurement is inconclusive (neither condition true) ends Successful instead of pausing for a person",
					m.Metric.Name, m.Template.Object(), m.InconclusiveLimit, count))
				f.Subject = m.Template.Object()
				f.Evidence = []rules.Evidence{ev(f.Subject, m.field("inconclusiveLimit"), m.InconclusiveLimit), ev(f.Subject, m.field("count"), countString(m.Metric))}
				f.Cites = c.cites("ar.inconclusive-limit", "ev.inconclusive", "ar.effective-count", "ar.count-reached")
				fs.add(f)
			}
		}
	}
	return fs.out
}

// metricProblems is what the analysis controller's metric validation of
// release v rejects in m (am.*), each with its fact, in the order v checks.
func metricProblems(m resolved, v upstream.Version) (problems []string, keys []upstream.Key) {
	add := func(k upstream.Key, format string, a ...any) {
		problems = append(problems, fmt.Sprintf(format, a...))
		keys = append(keys, k)
	}
	count := 0
	if m.CountSet {
		count = m.Count
	}
	newRules := !upstream.At("am.limits-both-disabled", v).Absent // v1.8+: -1, consecutiveSuccessLimit
	csl := m.ConsecutiveSuccessLimit
	if !newRules {
		csl = 0 // the field does not exist before v1.8
	}
	limits := func() {
		if newRules {
			if csl < 0 {
				add("am.consecutive-success-limit-negative", "consecutiveSuccessLimit must be >= 0")
			}
			if m.FailureLimit < -1 {
				add("am.failure-limit-negative", "failureLimit must be >= 0, or -1 to be disabled")
			}
			if csl == 0 && m.FailureLimit == -1 {
				add("am.limits-both-disabled", "failureLimit and consecutiveSuccessLimit cannot both be disabled")
			}
		} else if m.FailureLimit < 0 {
			add("am.failure-limit-negative", "failureLimit must be >= 0 (%d)", m.FailureLimit)
		}
		if m.InconclusiveLimit < 0 {
			add("am.inconclusive-limit-negative", "inconclusiveLimit must be >= 0")
		}
		if m.ConsecutiveErrorLimitSet && m.ConsecutiveErrorLimit < 0 {
			add("am.consecutive-error-limit-negative", "consecutiveErrorLimit must be >= 0")
		}
	}
	if newRules {
		limits()
	}
	if count > 0 {
		switch {
		case !newRules && count < m.FailureLimit:
			add("am.count-failure-limit", "count must be >= failureLimit (%d < %d)", count, m.FailureLimit)
		case newRules && csl >= 0 && m.FailureLimit >= 0 && count < m.FailureLimit+csl:
			add("am.count-failure-limit", "count (%d) must be >= failureLimit + consecutiveSuccessLimit (%d + %d)", count, m.FailureLimit, csl)
		case newRules && csl >= 0 && m.FailureLimit < 0 && count < csl:
			add("am.count-failure-limit", "count must be >= consecutiveSuccessLimit (%d < %d)", count, csl)
		}
		if count < m.InconclusiveLimit {
			add("am.count-inconclusive-limit", "count must be >= inconclusiveLimit (%d < %d)", count, m.InconclusiveLimit)
		}
	}
	if count > 1 && m.Metric.Interval == "" {
		add("am.interval-required", "interval must be specified when count > 1")
	}
	if m.IntervalErr != nil {
		add("am.interval-parse", "invalid interval string: %v", m.IntervalErr)
	}
	if m.InitialDelayErr != nil {
		add("am.initial-delay-parse", "invalid startDelay string: %v", m.InitialDelayErr)
	}
	if !newRules {
		limits()
	}
	switch n := providerCount(m.Metric.Provider); {
	case n == 0:
		add("am.no-provider", "no provider specified")
	case n > 1:
		add("am.multiple-providers", "multiple providers specified")
	}
	return problems, keys
}

func providerCount(p v1alpha1.MetricProvider) int {
	n := len(p.Plugin)
	for _, set := range []bool{p.Prometheus != nil, p.Job != nil, p.Web != nil, p.Wavefront != nil, p.Kayenta != nil, p.Datadog != nil,
		p.NewRelic != nil, p.CloudWatch != nil, p.Graphite != nil, p.Influxdb != nil, p.SkyWalking != nil} {
		if set {
			n++
		}
	}
	return n
}

// checkMetricInvalid: RD216. Metrics the controller refuses: two of one
// name in an analysis (the Rollout is rejected), a metric its analysis
// controller does not accept (every run ends in Error at once and aborts
// the Rollout), and a condition that does not compile (every measurement
// errors, and the run ends in Error after consecutiveErrorLimit+1).
func checkMetricInvalid(c *Context, r *rules.Rule) []rules.Finding {
	var fs findings
	ver := c.Version.Assumed
	for _, u := range c.analysisUses() {
		owners := map[string][]string{}
		var names []string
		for _, t := range u.Used {
			for _, m := range t.Spec.Metrics {
				if len(owners[m.Name]) == 0 {
					names = append(names, m.Name)
				}
				owners[m.Name] = append(owners[m.Name], t.Object())
			}
		}
		for _, n := range names {
			if len(owners[n]) < 2 {
				continue
			}
			f := r.NewFinding(fmt.Sprintf("%s: %s each have a metric named %s: the controller rejects the Rollout (InvalidSpec: two metrics have the same name '%s') and reconciles nothing until the names differ",
				u.words(), joinWords(owners[n]), n, n))
			f.Evidence = []rules.Evidence{ev(c.obj(), u.Field+".templates", u.templateNames())}
			f.Cites = c.cites("rv.build-run", "ag.duplicate-metric", "ct.invalid-spec")
			fs.add(f)
		}
		c.unmatchedRules(r, u, &fs)
		args, _, _ := u.runArgs()
		for _, m := range u.metrics(args) {
			obj := m.Template.Object()
			if m.Numbers {
				if problems, keys := metricProblems(m, ver); len(problems) > 0 {
					f := r.NewFinding(fmt.Sprintf("metric %s of %s is invalid for %s: %s — every run ends in Error before it measures anything (Analysis spec invalid) and aborts the Rollout",
						m.Metric.Name, obj, ver, strings.Join(problems, "; ")))
					f.Subject = obj
					f.Evidence = []rules.Evidence{ev(obj, fmt.Sprintf("spec.metrics[%d]", m.Index), m.Metric.Name)}
					f.Cites = c.cites(append(append([]upstream.Key{"ar.validate-metrics"}, keys...), u.abortFact())...)
					fs.add(f)
				}
			}
			if !m.Conditions {
				continue
			}
			for _, cond := range []struct{ name, expr string }{{"successCondition", m.SuccessCondition}, {"failureCondition", m.FailureCondition}} {
				if cond.expr == "" {
					continue
				}
				if err, what := compileError(ver, cond.expr, m.Metric.Provider); err != nil {
					f := r.NewFinding(fmt.Sprintf("metric %s of %s has a %s that does not compile with %s (%s)%s: %s — every measurement is an Error, and after consecutiveErrorLimit (%d) more in a row the run ends in Error and aborts the Rollout",
						m.Metric.Name, obj, cond.name, model.ConditionLibrary(ver), ver, what, oneLineErr(err), m.ConsecutiveErrorLimit))
					f.Subject = obj
					f.Evidence = []rules.Evidence{ev(obj, m.field(cond.name), cond.expr)}
					f.Cites = c.cites("ev.compile-typed", "ev.eval-error", "ar.consecutive-error-limit", "ev.expr-lang", "ev.antonmedv-expr", u.abortFact())
					fs.add(f)
				}
			}
		}
	}
	return fs.out
}

// unmatchedRules adds the block's dryRun and measurementRetention rules —
// the Rollout's and its templates' — that match none of the run's metrics:
// the analysis controller ends such a run in Error before it measures
// (ar.dryrun-rule-matches-nothing). A rule is an unanchored regular
// expression; "*", which the API's comment calls a wildcard, is not one.
func (c *Context) unmatchedRules(r *rules.Rule, u analysisUse, fs *findings) {
	if !u.complete() {
		return // a template not seen may have the metric
	}
	var names []string
	for _, t := range u.Used {
		for _, m := range t.Spec.Metrics {
			names = append(names, m.Name)
		}
	}
	type rule struct {
		kind, expr, object, field string
	}
	var rs []rule
	for i, d := range u.Analysis.DryRun {
		rs = append(rs, rule{"dryRun", d.MetricName, c.obj(), fmt.Sprintf("%s.dryRun[%d].metricName", u.Field, i)})
	}
	for i, m := range u.Analysis.MeasurementRetention {
		rs = append(rs, rule{"measurementRetention", m.MetricName, c.obj(), fmt.Sprintf("%s.measurementRetention[%d].metricName", u.Field, i)})
	}
	for _, t := range u.Used {
		for i, d := range t.Spec.DryRun {
			rs = append(rs, rule{"dryRun", d.MetricName, t.Object(), fmt.Sprintf("spec.dryRun[%d].metricName", i)})
		}
		for i, m := range t.Spec.MeasurementRetention {
			rs = append(rs, rule{"measurementRetention", m.MetricName, t.Object(), fmt.Sprintf("spec.measurementRetention[%d].metricName", i)})
		}
	}
	for _, x := range rs {
		re, err := regexp.Compile(x.expr)
		matched := false
		for _, n := range names {
			if err == nil && re.MatchString(n) {
				matched = true
			}
		}
		if matched {
			continue
		}
		why := "matches none of its metrics (" + strings.Join(names, ", ") + ")"
		if err != nil {
			why = "is not a regular expression, so it matches no metric"
			if x.expr == "*" {
				why += " (for every metric, write \".*\")"
			}
		}
		msg := fmt.Sprintf("%s: %s rule %q of %s %s: every run ends in Error before it measures anything (Analysis spec invalid: %s[i]: Rule didn't match any metric name(s)) and aborts the Rollout",
			u.words(), x.kind, x.expr, x.object, why, x.kind)
		f := r.NewFinding(msg)
		f.Subject = subjectOf(c, x.object)
		f.Evidence = []rules.Evidence{ev(x.object, x.field, x.expr)}
		fact := upstream.Key("ar.dryrun-rule-matches-nothing")
		if x.kind == "measurementRetention" {
			fact = "ar.retention-rule-matches-nothing"
		}
		f.Cites = c.cites(fact, u.abortFact())
		fs.add(f)
	}
}

// compileError is why a condition fails to compile for every value the
// metric's provider hands over, and which values those are: the controller
// compiles against the measured value's type, so a Prometheus condition
// must compile for a list (or a number, for a scalar query), a Datadog one
// for a number; for other providers only what fails for any value is
// known.
func compileError(v upstream.Version, cond string, p v1alpha1.MetricProvider) (error, string) {
	var samples []any
	what := ""
	switch {
	case p.Prometheus != nil && scalarQuery(p.Prometheus):
		samples, what = []any{float64(0)}, " for a Prometheus scalar"
	case p.Prometheus != nil:
		samples, what = []any{[]float64{0}}, " for a Prometheus vector (a list, even of one series)"
	case p.Datadog != nil:
		samples, what = []any{float64(0)}, " for a Datadog value"
	default:
		return model.CompileCondition(v, cond), ""
	}
	var first error
	for _, x := range samples {
		err := model.CompileConditionFor(v, cond, x)
		if err == nil {
			return nil, ""
		}
		if first == nil {
			first = err
		}
	}
	return first, what
}

func oneLineErr(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// checkRunsIndefinitely: RD217. A step or blue-green analysis must end for
// its step or promotion to go on; the controller's validation rejects a
// template whose metric has an interval and no count. It reads count with
// the template's own argument defaults, never the Rollout's values, so a
// count taken from an argument without a default is rejected too.
func checkRunsIndefinitely(c *Context, r *rules.Rule) []rules.Finding {
	var fs findings
	for _, u := range c.analysisUses() {
		if !u.Gates() {
			continue
		}
		for _, t := range u.Used {
			vals := validationValues(t)
			for i, m := range t.Spec.Metrics {
				count, _ := intValue(m.Count, vals, 0)
				if count != 0 || m.Interval == "" {
					continue
				}
				rejects := fmt.Sprintf("the controller rejects the Rollout (InvalidSpec: %s %s has metric %s which runs indefinitely) and reconciles nothing until it is fixed", t.Kind(), t.Name, m.Name)
				var msg string
				if m.Count == nil || m.Count.Type == intstr.Int {
					none := "no count"
					if m.Count != nil {
						none = "count 0, which reads as none"
					}
					msg = fmt.Sprintf("%s: metric %s of %s has interval %s and %s: it would measure until the run is terminated, so %s could never complete — %s",
						u.words(), m.Name, t.Object(), m.Interval, none, u.words(), rejects)
				} else {
					from := "the placeholder reads as 0"
					if name, ok := argName(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(m.Count.StrVal), "{{"), "}}")); ok {
						if d, has := vals[name]; has && d != "dummy-value" {
							from = fmt.Sprintf("the template's default %q", d)
						}
						for _, a := range u.Analysis.Args {
							if a.Name == name {
								from += fmt.Sprintf(", not the Rollout's %q", a.Value)
							}
						}
					}
					msg = fmt.Sprintf("%s: metric %s of %s takes its count from %s: the controller validates step and blue-green templates with the template's own argument defaults (%s), so with interval %s the metric reads as running indefinitely — %s",
						u.words(), m.Name, t.Object(), m.Count.StrVal, from, m.Interval, rejects)
				}
				f := r.NewFinding(msg)
				f.Subject = t.Object()
				f.Evidence = []rules.Evidence{ev(t.Object(), fmt.Sprintf("spec.metrics[%d].interval", i), m.Interval), ev(t.Object(), fmt.Sprintf("spec.metrics[%d].count", i), countString(m))}
				f.Cites = c.cites("ar.effective-count", "rv.not-background", "rv.placeholder-value", "rv.runs-indefinitely", "ct.invalid-spec", "an.step-waits-successful")
				fs.add(f)
			}
		}
	}
	return fs.out
}

func countString(m v1alpha1.Metric) string {
	if m.Count == nil {
		return "(none)"
	}
	return m.Count.String()
}

// stepsTime is the least time the canary steps take — their timed pauses
// and analysis steps, nothing for the rest (scaling takes what it takes) —
// and false when one of them has no bound the spec says (a pause without a
// duration waits for a person; an experiment without a duration; an
// analysis whose numbers come from arguments not known).
func (c *Context) stepsTime(steps []v1alpha1.CanaryStep, from int) (time.Duration, bool) {
	var total time.Duration
	for i, s := range steps {
		switch {
		case s.Pause != nil:
			if s.Pause.Duration == nil {
				return 0, false
			}
			d := s.Pause.DurationSeconds()
			if d < 0 {
				return 0, false
			}
			total += time.Duration(d) * time.Second
		case s.Analysis != nil:
			d, ok := c.stepAnalysisTime(from + i)
			if !ok {
				return 0, false
			}
			total += d
		case s.Experiment != nil:
			if s.Experiment.Duration == "" {
				return 0, false
			}
			d, err := s.Experiment.Duration.Duration()
			if err != nil {
				return 0, false
			}
			total += d
		}
	}
	return total, true
}

// stepAnalysisTime is the least time the analysis step at index takes: its
// slowest metric's count at its interval (an.step-waits-successful).
func (c *Context) stepAnalysisTime(index int) (time.Duration, bool) {
	for _, u := range c.analysisUses() {
		if u.Type != v1alpha1.RolloutTypeStepLabel || u.Step != index {
			continue
		}
		if !u.complete() {
			return 0, false
		}
		args, _, _ := u.runArgs()
		var longest time.Duration
		for _, m := range u.metrics(args) {
			if !m.Numbers || m.Indefinite {
				return 0, false
			}
			longest = max(longest, m.minRunTime())
		}
		return longest, true
	}
	return 0, true // no templates: the step is skipped
}

// quickMeasurement: the provider measures within one request (a query, a
// web call), not by waiting on work of unknown length (a Job, a Kayenta
// judgement, a plugin).
func quickMeasurement(p v1alpha1.MetricProvider) bool {
	return p.Job == nil && p.Kayenta == nil && len(p.Plugin) == 0
}

// checkBackgroundWindow: RD218. A background analysis guards only while
// it measures: it does not hold the steps (the Rollout is promoted when
// they end, and the run is terminated then, reading Successful), and once
// its count is reached the run stays Successful for the rest of the update.
func checkBackgroundWindow(c *Context, r *rules.Rule) []rules.Finding {
	var fs findings
	canary := c.canary()
	if canary == nil || canary.Analysis == nil {
		return nil
	}
	for _, u := range c.analysisUses() {
		if u.Type != v1alpha1.RolloutTypeBackgroundRunLabel || !u.complete() || len(u.Used) == 0 {
			continue
		}
		start := 0
		if canary.Analysis.StartingStep != nil {
			start = int(*canary.Analysis.StartingStep)
		}
		if start > len(canary.Steps) {
			continue
		}
		steps, ok := c.stepsTime(canary.Steps[start:], start)
		if !ok {
			continue
		}
		args, _, _ := u.runArgs()
		ms := u.metrics(args)
		var first *resolved
		var firstAt time.Duration
		bounded := true
		var end, longestInterval time.Duration
		var last *resolved
		for i := range ms {
			m := &ms[i]
			if !m.Numbers || m.IntervalErr != nil || m.InitialDelayErr != nil {
				bounded, first = false, nil
				break
			}
			if m.Indefinite || !quickMeasurement(m.Metric.Provider) {
				// A Job or Kayenta measurement lasts as long as the work
				// it waits for: when the run ends is not known.
				bounded = false
			} else if t := m.minRunTime(); t >= end {
				end, last = t, m
			}
			longestInterval = max(longestInterval, m.Interval)
			if m.DryRun {
				continue
			}
			if at, ok := m.earliestFailure(); ok && (first == nil || at < firstAt) {
				first, firstAt = m, at
			}
		}
		from := "the steps"
		if start > 0 {
			from = fmt.Sprintf("the steps from step %d on", start)
		}
		pauses := fmt.Sprintf("%s pause for %s in all", from, fmtDur(steps))
		if steps == 0 {
			pauses = from + " have no timed pause"
		}
		if first != nil && firstAt > steps {
			f := r.NewFinding(fmt.Sprintf("%s can fail %s after it starts at the earliest (metric %s: initialDelay %s, then failureLimit+1 = %d failed measurements %s apart), but %s: the Rollout can be fully promoted before the analysis can fail, and the controller then terminates the run, which reads Successful",
				u.words(), fmtDur(firstAt), first.Metric.Name, fmtDur(first.InitialDelay), first.FailureLimit+1, fmtDur(first.Interval), pauses))
			f.Evidence = []rules.Evidence{ev(first.Template.Object(), first.field("interval"), quoteOr(string(first.Metric.Interval))), ev(first.Template.Object(), first.field("failureLimit"), first.FailureLimit), ev(c.obj(), "spec.strategy.canary.steps", fmt.Sprintf("%d steps from step %d", len(canary.Steps)-start, start))}
			f.Cites = c.cites("an.starting-step", "ar.initial-delay", "ar.interval-wait", "ar.failure-limit", "an.background-until-promoted", "ar.terminated-successful")
			fs.add(f)
			continue
		}
		if bounded && last != nil && end < steps && steps-end >= longestInterval {
			schedule := fmt.Sprintf("%d measurements %s apart", last.Count, fmtDur(last.Interval))
			if last.Count == 1 {
				schedule = "a single measurement"
			}
			if last.InitialDelay > 0 {
				schedule += " after initialDelay " + fmtDur(last.InitialDelay)
			}
			when := fmt.Sprintf("%s after it starts", fmtDur(end))
			if end == 0 {
				when = "as soon as it starts"
			}
			f := r.NewFinding(fmt.Sprintf("%s has taken all its measurements %s (metric %s: %s) and then stays Successful for the rest of the update — the controller starts no other — while %s: for the last %s of the steps, usually at the highest weights, nothing is measured",
				u.words(), when, last.Metric.Name, schedule, pauses, fmtDur(steps-end)))
			f.Evidence = []rules.Evidence{ev(last.Template.Object(), last.field("count"), last.Count), ev(last.Template.Object(), last.field("interval"), quoteOr(string(last.Metric.Interval))), ev(c.obj(), "spec.strategy.canary.steps", fmt.Sprintf("%d steps from step %d", len(canary.Steps)-start, start))}
			f.Cites = c.cites("an.starting-step", "ar.count-stops", "ar.count-reached", "an.completed-run-kept")
			fs.add(f)
		}
	}
	return fs.out
}
