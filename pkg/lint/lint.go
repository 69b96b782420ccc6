// Package lint runs the static rules — the ones that need only manifests —
// over rendered manifests (helm template, kustomize build, plain YAML), as a
// CI gate. Each Rollout is checked together with the Services, autoscalers,
// Ingresses, VirtualServices and AnalysisTemplates of the same input (and
// every ClusterAnalysisTemplate in it), so cross-object rules (the safe-pods
// limit against HPA/KEDA maxReplicas, the arguments a Rollout passes its
// templates) work. Findings carry the file and line of the object to edit —
// the Rollout, or the template a finding is about; suppressions are counted,
// never hidden.
package lint

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutdoctor/rolloutdoctor/internal/par"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// ReportAPIVersion versions the JSON document.
const ReportAPIVersion = "rolloutdoctor.io/v1alpha1"

// Annotations that suppress findings on one object.
const (
	AnnotationIgnore       = "rolloutdoctor.io/ignore"        // "RD201,RD202" or "all"
	AnnotationIgnoreReason = "rolloutdoctor.io/ignore-reason" // why, shown with the count
)

// Finding is a diagnose finding located in the input.
type Finding struct {
	diagnose.Finding
	File   string `json:"file"`
	Line   int    `json:"line"`
	Object string `json:"object"`
	// Versions says where other modeled controller versions differ for this
	// finding ("v1.10.2: info", "v1.7.2: not raised").
	Versions []string `json:"otherVersions,omitempty"`
}

// Suppressed is a finding a suppression matched, with why.
type Suppressed struct {
	Finding
	By     string `json:"by"` // "annotation" or the config file
	Reason string `json:"reason,omitempty"`
}

// FileError is input that could not be read or parsed.
type FileError struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
	// Skipped marks a path a directory walk passed over on purpose (not an
	// error: it does not change the exit code).
	Skipped bool `json:"-"`
}

// Report is the result of a lint run.
type Report struct {
	APIVersion string                  `json:"apiVersion"`
	Kind       string                  `json:"kind"`
	Controller model.ControllerVersion `json:"controller"`
	Files      int                     `json:"files"`
	Objects    int                     `json:"objects"`
	Rollouts   int                     `json:"rollouts"`
	// Deployments counts Deployments given the pod checks.
	Deployments int `json:"deployments"`
	// AnalysisTemplates counts the AnalysisTemplates and
	// ClusterAnalysisTemplates read; they are checked with the Rollouts
	// that use them.
	AnalysisTemplates int `json:"analysisTemplates"`
	// Skipped counts objects of kinds no rule reads, by kind.
	Skipped map[string]int `json:"skipped,omitempty"`
	Errors  []FileError    `json:"errors,omitempty"`
	// SkippedFiles are paths a directory walk passed over (FIFOs, devices).
	SkippedFiles []FileError  `json:"skippedFiles,omitempty"`
	Findings     []Finding    `json:"findings"`
	Suppressed   []Suppressed `json:"suppressed,omitempty"`
}

// Worst is the highest severity among the unsuppressed findings.
func (r *Report) Worst() diagnose.Severity {
	var w diagnose.Severity
	for _, f := range r.Findings {
		if f.Severity > w {
			w = f.Severity
		}
	}
	return w
}

// Options tune a lint run.
type Options struct {
	Controller model.ControllerVersion
	Config     *Config
	// Namespace is given to namespaced objects that have none (like
	// `kubectl apply -n`); default "default".
	Namespace string
}

// kinds the static rules read; anything else is skipped and counted.
var known = map[string]bool{
	"Rollout": true, "Service": true, "HorizontalPodAutoscaler": true, "ScaledObject": true,
	"Ingress": true, "VirtualService": true, "DestinationRule": true, "TrafficSplit": true, "HTTPRoute": true,
	"Deployment": true, "PodDisruptionBudget": true, "Namespace": true,
	"AnalysisTemplate": true, "ClusterAnalysisTemplate": true,
}

// Run lints the located objects. Parse errors from loading are passed in and
// reported; they do not stop the other files from being linted.
func Run(docs []snapshot.Located, files int, errs []FileError, opt Options) *Report {
	rep := &Report{APIVersion: ReportAPIVersion, Kind: "LintReport", Controller: opt.Controller, Files: files,
		Findings: []Finding{}, Skipped: map[string]int{}}
	for _, e := range errs {
		if e.Skipped {
			rep.SkippedFiles = append(rep.SkippedFiles, e)
		} else {
			rep.Errors = append(rep.Errors, e)
		}
	}
	l := &linter{rep: rep, opt: opt, where: map[string]snapshot.Source{}, meta: map[string]metav1.ObjectMeta{}}
	byNS, order := l.partition(docs)
	for _, n := range order {
		l.namespace(byNS[n])
	}
	rep.Findings = merged(rep.Findings)
	byPlace := func(a, b Finding) bool {
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.ID < b.ID
	}
	sort.SliceStable(rep.Findings, func(i, j int) bool { return byPlace(rep.Findings[i], rep.Findings[j]) })
	sort.SliceStable(rep.Suppressed, func(i, j int) bool { return byPlace(rep.Suppressed[i].Finding, rep.Suppressed[j].Finding) })
	return rep
}

// linter is one lint run: the report it fills and where each workload and
// template was read from.
type linter struct {
	rep   *Report
	opt   Options
	where map[string]snapshot.Source // "Kind/namespace/name" → file:line
	// meta holds the templates' metadata, for their suppression
	// annotations.
	meta map[string]metav1.ObjectMeta
}

// partition counts the objects, sets aside kinds no rule reads, gives
// namespaced objects without one the default namespace, and groups the rest
// by namespace (in input order): a Rollout only ever refers to objects in its
// own namespace, so one snapshot per namespace keeps a large input linear.
// ClusterAnalysisTemplates belong to no namespace and to every one: they
// join each namespace's objects.
func (l *linter) partition(docs []snapshot.Located) (map[string][]*unstructured.Unstructured, []string) {
	ns := l.opt.Namespace
	if ns == "" {
		ns = "default"
	}
	byNS := map[string][]*unstructured.Unstructured{}
	var order []string
	var cluster []*unstructured.Unstructured
	for _, d := range docs {
		u := d.Object
		l.rep.Objects++
		kind := u.GetKind()
		if !known[kind] {
			l.rep.Skipped[kind]++
			continue
		}
		if u.GetName() == "" && u.GetGenerateName() == "" {
			// The API server refuses it, so no rule applies; and findings
			// are keyed by name.
			l.rep.Errors = append(l.rep.Errors, FileError{File: d.Source.File, Line: d.Source.Line, Message: unnamed(u)})
			continue
		}
		switch {
		case kind == "ClusterAnalysisTemplate" && u.GetNamespace() != "":
			// kubectl apply ignores a cluster-scoped object's namespace.
			u = u.DeepCopy()
			u.SetNamespace("")
		case u.GetNamespace() == "" && kind != "Namespace" && kind != "ClusterAnalysisTemplate":
			u = u.DeepCopy()
			u.SetNamespace(ns)
		}
		key := kind + "/" + u.GetNamespace() + "/" + u.GetName()
		switch kind {
		case "Rollout", "Deployment":
			l.where[key] = d.Source
		case "AnalysisTemplate", "ClusterAnalysisTemplate":
			l.rep.AnalysisTemplates++
			l.where[key] = d.Source
			l.meta[key] = metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), Annotations: u.GetAnnotations()}
			if err := l.template(u); err != nil {
				l.rep.Errors = append(l.rep.Errors, FileError{File: d.Source.File, Line: d.Source.Line, Message: err.Error()})
			}
			if kind == "ClusterAnalysisTemplate" {
				cluster = append(cluster, u)
				continue
			}
		}
		if _, ok := byNS[u.GetNamespace()]; !ok {
			order = append(order, u.GetNamespace())
		}
		byNS[u.GetNamespace()] = append(byNS[u.GetNamespace()], u)
	}
	for _, n := range order {
		byNS[n] = append(byNS[n], cluster...)
	}
	if len(l.rep.Skipped) == 0 {
		l.rep.Skipped = nil
	}
	return byNS, order
}

// template checks that a template decodes; one that does not is reported
// at its own file:line (the Rollouts that use it are still linted, without
// it).
func (l *linter) template(u *unstructured.Unstructured) error {
	if u.GetKind() == "ClusterAnalysisTemplate" {
		if err := snapshot.Convert(u, &v1alpha1.ClusterAnalysisTemplate{}); err != nil {
			// Convert names objects namespace/name; this one has none.
			return errors.New(strings.Replace(err.Error(), "ClusterAnalysisTemplate /", "ClusterAnalysisTemplate ", 1))
		}
		return nil
	}
	return snapshot.Convert(u, &v1alpha1.AnalysisTemplate{})
}

// fail records an object that could not be linted, at its file:line.
func (l *linter) fail(kind string, u *unstructured.Unstructured, err error) {
	src := l.where[kind+"/"+u.GetNamespace()+"/"+u.GetName()]
	l.rep.Errors = append(l.rep.Errors, FileError{File: src.File, Line: src.Line, Message: err.Error()})
}

// namespace lints the Rollouts and Deployments of one namespace, each on its
// own (in parallel: they only read the shared snapshot), and merges their
// results in input order. A Rollout or Deployment that does not convert (a
// wrong field type) is reported at its own file:line and the others are
// still linted.
func (l *linter) namespace(objs []*unstructured.Unstructured) {
	snap := snapshot.New(snapshot.Header{Offline: true}, objs)
	refd := map[string]bool{} // Deployments a Rollout's workloadRef names
	var rollouts, deployments []*unstructured.Unstructured
	for _, u := range objs {
		if u.GetKind() == "Rollout" {
			rollouts = append(rollouts, u)
			kind, _, _ := unstructured.NestedString(u.Object, "spec", "workloadRef", "kind")
			name, _, _ := unstructured.NestedString(u.Object, "spec", "workloadRef", "name")
			if kind == "Deployment" {
				refd[name] = true // its template is checked as the Rollout's
			}
		}
	}
	for _, u := range objs {
		if u.GetKind() == "Deployment" && !refd[u.GetName()] && !snapshot.IsControllerDeployment(u) {
			deployments = append(deployments, u)
		}
	}
	work := append(rollouts, deployments...)
	parts := make([]*Report, len(work))
	par.Do(len(work), func(i int) {
		part := &linter{rep: &Report{}, opt: l.opt, where: l.where, meta: l.meta}
		if i < len(rollouts) {
			part.rollout(snap, work[i])
		} else {
			part.deployment(snap, work[i])
		}
		parts[i] = part.rep
	})
	for _, p := range parts {
		l.rep.Rollouts += p.Rollouts
		l.rep.Deployments += p.Deployments
		l.rep.Errors = append(l.rep.Errors, p.Errors...)
		l.rep.Findings = append(l.rep.Findings, p.Findings...)
		l.rep.Suppressed = append(l.rep.Suppressed, p.Suppressed...)
	}
}

// deployment runs the static pod checks on one Deployment.
func (l *linter) deployment(snap *snapshot.Snapshot, u *unstructured.Unstructured) {
	d := &appsv1.Deployment{}
	if err := snapshot.Convert(u, d); err != nil {
		l.fail("Deployment", u, err)
		return
	}
	l.rep.Deployments++
	w, err := snap.DeploymentWorkload(d)
	if err != nil {
		l.fail("Deployment", u, err)
		return
	}
	pr := diagnose.RunPods(w, model.ControllerVersion{}, diagnose.PodOptions{StaticOnly: true})
	l.rep.add(pr.Findings, l.where["Deployment/"+d.Namespace+"/"+d.Name], "Deployment", d.ObjectMeta, l.opt.Config)
}

// rollout runs the static rules on one Rollout for the assumed controller
// version, and notes where the other modeled versions would differ.
func (l *linter) rollout(snap *snapshot.Snapshot, u *unstructured.Unstructured) {
	ro, err := snapshot.TypedRollout(u)
	if err != nil {
		l.fail("Rollout", u, err)
		return
	}
	l.rep.Rollouts++
	src := l.where["Rollout/"+ro.Namespace+"/"+ro.Name]
	v, err := snap.View(ro)
	if err != nil {
		l.rep.Errors = append(l.rep.Errors, FileError{File: src.File, Line: src.Line, Message: err.Error()})
		return
	}
	// Per other version, the severities each rule raises on each subject:
	// a rule may raise several findings of different severities on one
	// object (a template missing from the input, another merely shipped
	// elsewhere), and a finding differs only if its severity is not among
	// them.
	byVersion := map[upstream.Version]map[string]map[diagnose.Severity]bool{}
	for _, ver := range upstream.Modeled {
		if ver == l.opt.Controller.Assumed {
			continue // the run below is this version's
		}
		// The pod checks read Kubernetes objects only: the same on every
		// controller version, so they are run once, below.
		r := diagnose.Run(v, model.ControllerVersion{Assumed: ver, Exact: true, Source: model.SourceFlag}, diagnose.Options{StaticOnly: true, NoPods: true})
		m := map[string]map[diagnose.Severity]bool{}
		for _, f := range r.Findings {
			k := f.ID + "\x00" + f.Subject
			if m[k] == nil {
				m[k] = map[diagnose.Severity]bool{}
			}
			m[k][f.Severity] = true
		}
		byVersion[ver] = m
	}
	r := diagnose.Run(v, l.opt.Controller, diagnose.Options{StaticOnly: true})
	for _, f := range r.Findings {
		lf := Finding{Finding: f, File: src.File, Line: src.Line, Object: "Rollout " + ro.Namespace + "/" + ro.Name}
		meta := ro.ObjectMeta
		if f.Subject != "" {
			// A finding about a template is located where the template is:
			// that is what needs the edit. The Rollout it was raised for is
			// named beside it.
			key := subjectKey(f.Subject)
			if at, ok := l.where[key]; ok {
				lf.File, lf.Line = at.File, at.Line
			}
			lf.Object = f.Subject + " (used by Rollout " + ro.Namespace + "/" + ro.Name + ")"
			if m, ok := l.meta[key]; ok {
				if by, reason, ok := suppressed(m, lf, nil); ok {
					l.rep.Suppressed = append(l.rep.Suppressed, Suppressed{Finding: lf, By: by, Reason: reason})
					continue
				}
			}
		}
		for _, ver := range upstream.Modeled {
			if ver == l.opt.Controller.Assumed || f.PodCheck() {
				continue
			}
			switch sevs, ok := byVersion[ver][f.ID+"\x00"+f.Subject]; {
			case !ok:
				lf.Versions = append(lf.Versions, string(ver)+": not raised")
			case !sevs[f.Severity]:
				lf.Versions = append(lf.Versions, string(ver)+": "+worst(sevs).String())
			}
		}
		l.rep.keep(lf, meta, l.opt.Config)
	}
}

func worst(sevs map[diagnose.Severity]bool) diagnose.Severity {
	var w diagnose.Severity
	for s := range sevs {
		if s > w {
			w = s
		}
	}
	return w
}

// subjectKey turns a finding's subject ("AnalysisTemplate shop/x",
// "ClusterAnalysisTemplate x") into the key objects are located by.
func subjectKey(subject string) string {
	kind, rest, _ := strings.Cut(subject, " ")
	ns, name, ok := strings.Cut(rest, "/")
	if !ok {
		ns, name = "", rest
	}
	return kind + "/" + ns + "/" + name
}

// merged folds the findings one template raises for several Rollouts into
// one, naming them all: the template is edited once.
func merged(fs []Finding) []Finding {
	out := fs[:0]
	at := map[string]int{}
	for _, f := range fs {
		if f.Subject == "" {
			out = append(out, f)
			continue
		}
		k := fmt.Sprintf("%s:%d\x00%s\x00%s", f.File, f.Line, f.ID, f.Message)
		i, ok := at[k]
		if !ok {
			at[k] = len(out)
			out = append(out, f)
			continue
		}
		_, ro, _ := strings.Cut(f.Object, "(used by Rollout ")
		out[i].Object = strings.Replace(out[i].Object, "(used by Rollout ", "(used by Rollouts ", 1)
		out[i].Object = strings.TrimSuffix(out[i].Object, ")") + ", " + ro
	}
	return out
}

// add records findings on one object, located at src.
func (r *Report) add(fs []diagnose.Finding, src snapshot.Source, kind string, meta metav1.ObjectMeta, cfg *Config) {
	for _, f := range fs {
		r.keep(Finding{Finding: f, File: src.File, Line: src.Line, Object: kind + " " + meta.Namespace + "/" + meta.Name}, meta, cfg)
	}
}

// keep files a finding as reported or suppressed.
func (r *Report) keep(lf Finding, meta metav1.ObjectMeta, cfg *Config) {
	if by, reason, ok := suppressed(meta, lf, cfg); ok {
		r.Suppressed = append(r.Suppressed, Suppressed{Finding: lf, By: by, Reason: reason})
		return
	}
	r.Findings = append(r.Findings, lf)
}

// suppressed matches the object's annotations, then the config file. The
// config's rollout glob matches the workload name, Rollout or Deployment.
func suppressed(ro metav1.ObjectMeta, f Finding, cfg *Config) (by, reason string, ok bool) {
	if ids := ro.Annotations[AnnotationIgnore]; ids != "" {
		for _, id := range strings.Split(ids, ",") {
			id = strings.TrimSpace(id)
			if strings.EqualFold(id, f.ID) || strings.EqualFold(id, f.Name) || id == "all" {
				return "annotation", ro.Annotations[AnnotationIgnoreReason], true
			}
		}
	}
	if cfg == nil {
		return "", "", false
	}
	for _, ig := range cfg.Ignore {
		if !strings.EqualFold(ig.ID, f.ID) && !strings.EqualFold(ig.ID, f.Name) {
			continue
		}
		if ig.Rollout != "" {
			if m, _ := path.Match(ig.Rollout, ro.Name); !m {
				continue
			}
		}
		if ig.Namespace != "" && ig.Namespace != ro.Namespace {
			continue
		}
		if ig.File != "" {
			if m, _ := path.Match(ig.File, f.File); !m && ig.File != f.File {
				continue
			}
		}
		return cfg.Path, ig.Reason, true
	}
	return "", "", false
}

// Empty says why nothing was linted — no object at all, or none a Rollout
// or Deployment — or "" when something was.
func (r *Report) Empty() string {
	switch {
	case r.Rollouts+r.Deployments > 0:
		return ""
	case r.Objects == 0:
		return fmt.Sprintf("%d file(s) and no object in them", r.Files)
	}
	return fmt.Sprintf("%d object(s) in %d file(s), none a Rollout or Deployment", r.Objects, r.Files)
}

// Summary is one line counting what was linted and found.
func (r *Report) Summary() string {
	bySev := map[diagnose.Severity]int{}
	for _, f := range r.Findings {
		bySev[f.Severity]++
	}
	skipped := 0
	for _, n := range r.Skipped {
		skipped += n
	}
	templates := ""
	if r.AnalysisTemplates > 0 {
		templates = fmt.Sprintf(", %d AnalysisTemplate(s)", r.AnalysisTemplates)
	}
	return fmt.Sprintf("%d file(s), %d object(s), %d Rollout(s), %d Deployment(s)%s, %d skipped (kinds no rule reads), %d unreadable; %d finding(s): %d critical, %d warning, %d info; %d suppressed",
		r.Files, r.Objects, r.Rollouts, r.Deployments, templates, skipped, len(r.Errors), len(r.Findings), bySev[diagnose.Critical], bySev[diagnose.Warning], bySev[diagnose.Info], len(r.Suppressed))
}

// unnamed says why an object has no name, for an object that has none.
func unnamed(u *unstructured.Unstructured) string {
	msg := u.GetKind() + " without metadata.name: the API server refuses it"
	for k := range u.Object {
		if k != "metadata" && strings.EqualFold(k, "metadata") {
			return msg + fmt.Sprintf(" (its key %q is not metadata: field names are case-sensitive)", k)
		}
	}
	if _, ok := u.Object["metadata"]; !ok {
		return msg + " (it has no metadata)"
	}
	return msg
}
