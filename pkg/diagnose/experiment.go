package diagnose

import (
	"fmt"
	"strings"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// ExperimentView is one Experiment of the current revision, as an experiment
// step created it: what it runs, since when, and when it ends.
type ExperimentView struct {
	Name    string `json:"name"`
	Phase   string `json:"phase"`
	Message string `json:"message,omitempty"`
	// Current: the Rollout's status.canary.currentExperiment names it.
	Current bool `json:"current,omitempty"`
	// Duration is spec.duration ("" when unset: the Experiment ends only
	// when its required analyses succeed, or when it is cancelled).
	Duration string `json:"duration,omitempty"`
	// AvailableAt is when every template's pods were first available, the
	// start of the duration; EndsAt is AvailableAt + Duration.
	AvailableAt *time.Time `json:"availableAt,omitempty"`
	EndsAt      *time.Time `json:"endsAt,omitempty"`
	// ProgressDeadline is spec.progressDeadlineSeconds or the default 600:
	// how long a template may take to have all its pods available.
	ProgressDeadline int32 `json:"progressDeadlineSeconds"`
	// ProgressDeadlineDefault: the Experiment sets none; ProgressDeadline
	// is the controller's default.
	ProgressDeadlineDefault bool                 `json:"progressDeadlineDefault,omitempty"`
	Templates               []ExperimentTemplate `json:"templates"`
	Analyses                []ExperimentAnalysis `json:"analyses,omitempty"`
}

// ExperimentTemplate is one template's pods as the Experiment's status
// counts them.
type ExperimentTemplate struct {
	Name      string `json:"name"`
	Replicas  int32  `json:"replicas"`
	Available int32  `json:"available"`
	Status    string `json:"status,omitempty"`
	Message   string `json:"message,omitempty"`
}

// ExperimentAnalysis is one analysis the Experiment runs.
type ExperimentAnalysis struct {
	Name     string `json:"name"`
	Run      string `json:"analysisRun,omitempty"`
	Phase    string `json:"phase,omitempty"`
	Message  string `json:"message,omitempty"`
	Required bool   `json:"requiredForCompletion,omitempty"`
}

// Ended: the Experiment reached a phase it does not leave.
func (e ExperimentView) Ended() bool {
	return v1alpha1.AnalysisPhase(e.Phase).Completed()
}

// experimentProgressDeadline is the controller's default
// progressDeadlineSeconds for an Experiment (the Rollout's default too).
const experimentProgressDeadline = 600

// experiments are the Experiments of the Rollout's current revision (its
// pod-template-hash), oldest first: the one its experiment step runs now,
// and any earlier one of the same revision that a retry replaced.
func experiments(v *snapshot.View) []ExperimentView {
	ro := v.Rollout
	var out []ExperimentView
	for _, ex := range v.Experiments {
		current := ex.Name == ro.Status.Canary.CurrentExperiment
		if !current && (ro.Status.CurrentPodHash == "" || ex.Labels[v1alpha1.DefaultRolloutUniqueLabelKey] != ro.Status.CurrentPodHash) {
			continue
		}
		e := ExperimentView{Name: ex.Name, Phase: string(ex.Status.Phase), Message: ex.Status.Message, Current: current,
			Duration: string(ex.Spec.Duration), ProgressDeadline: experimentProgressDeadline}
		if e.Phase == "" {
			e.Phase = string(v1alpha1.AnalysisPhasePending)
		}
		e.ProgressDeadlineDefault = ex.Spec.ProgressDeadlineSeconds == nil
		if !e.ProgressDeadlineDefault {
			e.ProgressDeadline = *ex.Spec.ProgressDeadlineSeconds
		}
		if at := ex.Status.AvailableAt; at != nil {
			t := at.Time
			e.AvailableAt = &t
			if d, err := ex.Spec.Duration.Duration(); err == nil && ex.Spec.Duration != "" {
				end := t.Add(d)
				e.EndsAt = &end
			}
		}
		for _, t := range ex.Spec.Templates {
			tv := ExperimentTemplate{Name: t.Name, Replicas: 1}
			if t.Replicas != nil {
				tv.Replicas = *t.Replicas
			}
			for _, ts := range ex.Status.TemplateStatuses {
				if ts.Name == t.Name {
					tv.Available, tv.Status, tv.Message = ts.AvailableReplicas, string(ts.Status), ts.Message
				}
			}
			e.Templates = append(e.Templates, tv)
		}
		for _, a := range ex.Spec.Analyses {
			av := ExperimentAnalysis{Name: a.Name, Required: a.RequiredForCompletion}
			for _, as := range ex.Status.AnalysisRuns {
				if as.Name == a.Name {
					av.Run, av.Phase, av.Message = as.AnalysisRun, string(as.Phase), as.Message
				}
			}
			e.Analyses = append(e.Analyses, av)
		}
		out = append(out, e)
	}
	return out
}

// checkExperiment (RD163): the current step is an experiment step. It says
// which Experiment holds the Rollout, what it waits for and when it ends,
// or why it never will by itself. Whether it can end by itself is read from
// the step (the Experiment copies its duration and analyses), so a scan,
// which reads no Experiments, says it too.
func checkExperiment(c *Context, r *rules.Rule) []rules.Finding {
	idx := c.Analysis.Inputs.Index0()
	steps := c.Analysis.Inputs.Steps
	if c.ro.Status.Abort || c.ro.Status.PromoteFull || idx < 0 || int(idx) >= len(steps) || steps[idx].Experiment == nil {
		return nil
	}
	spec := steps[idx].Experiment
	step := fmt.Sprintf("step %d (experiment)", idx)
	ex := stepExperiment(c.experiments)
	f := r.NewFinding("")
	f.Cites = c.cites("rc.experiment-step-done", "ux.duration-from-available", "xc.template-deadline", "rx.experiment-abort")
	var msg string
	switch {
	case ex != nil:
		obj := "Experiment " + c.ro.Namespace + "/" + ex.Name
		f.Evidence = []rules.Evidence{ev(obj, "status.phase", ex.Phase)}
		msg = fmt.Sprintf("%s waits for Experiment %s (%s): the step completes only when it is Successful", step, ex.Name, ex.Phase)
		switch {
		case ex.Phase == string(v1alpha1.AnalysisPhaseInconclusive):
			msg += "; it ended Inconclusive, so the Rollout is paused (InconclusiveExperiment) until someone promotes it"
			f.Cites = append(f.Cites, c.cites("rx.experiment-inconclusive")...)
		case ex.Ended():
			msg += "; it has ended " + ex.Phase
		case ex.EndsAt != nil:
			left := ex.EndsAt.Sub(c.View.Now).Round(time.Second)
			when := fmt.Sprintf("in %s", left)
			if left <= 0 {
				when = fmt.Sprintf("%s ago: it completes on the experiment controller's next pass", -left)
			}
			msg += fmt.Sprintf("; its %s runs from %s, when every template's pods were available: ends %s (%s)", ex.Duration, ex.AvailableAt.UTC().Format(time.RFC3339), ex.EndsAt.UTC().Format(time.RFC3339), when)
			f.Evidence = append(f.Evidence, ev(obj, "status.availableAt", ex.AvailableAt.UTC().Format(time.RFC3339)), ev(obj, "spec.duration", ex.Duration))
		case ex.Duration != "":
			deadline := "progressDeadlineSeconds"
			if ex.ProgressDeadlineDefault {
				deadline += ", the default"
				f.Cites = append(f.Cites, c.cites("df.experiment-progress-deadline", "df.progress-deadline-600")...)
			}
			msg += fmt.Sprintf("; its %s starts once every template's pods are available (%s); a template whose pods make no progress for %ds (%s) fails the Experiment and aborts the Rollout", ex.Duration, templateCounts(ex.Templates), ex.ProgressDeadline, deadline)
		}
	case c.View.Header.ListedWhole("experiments.argoproj.io", c.ro.Namespace):
		msg = step + " has no Experiment of the current revision yet: the controller creates it on its next pass once a stable ReplicaSet exists, and the step completes when it is Successful"
	default:
		msg = step + " holds the Rollout until its Experiment is Successful; " + c.experimentsUnread()
	}
	if (ex == nil || !ex.Ended()) && spec.Duration == "" {
		if !ExperimentEnds(spec) {
			// RD219 warns of the step itself, here and in lint.
			msg += "; the step sets no duration and no analysis requiredForCompletion, so the Experiment never completes by itself: the Rollout stays at this step until someone promotes it (RD219)"
		} else {
			var required []string
			for _, a := range spec.Analyses {
				if a.RequiredForCompletion {
					required = append(required, a.Name)
				}
			}
			msg += "; the step sets no duration: the Experiment ends when its analyses required for completion (" + strings.Join(required, ", ") + ") succeed"
		}
	}
	f.Message = msg
	return []rules.Finding{f}
}

// stepExperiment is the Experiment the step waits for: the one the status
// names, else the newest still running, else the newest (they are oldest
// first).
func stepExperiment(exs []ExperimentView) *ExperimentView {
	var running, newest *ExperimentView
	for i := range exs {
		e := &exs[i]
		if e.Current {
			return e
		}
		newest = e
		if !e.Ended() {
			running = e
		}
	}
	if running != nil {
		return running
	}
	return newest
}

// experimentsUnread says why the Experiment is not known.
func (c *Context) experimentsUnread() string {
	h := c.View.Header
	if g, ok := h.ListGap("experiments.argoproj.io", c.ro.Namespace); ok {
		return fmt.Sprintf("its Experiment was not read (%s)", g)
	}
	if h.Offline {
		return "no Experiment of the current revision is in the input (add `kubectl get experiments -n " + c.ro.Namespace + " -o yaml` to it)"
	}
	live := "kubectl rolloutdoctor diagnose " + c.ro.Name + " -n " + c.ro.Namespace
	if h.TargetKind == snapshot.KindRollout && len(h.Listed) > 0 {
		// A read of this Rollout that names what it listed lists
		// Experiments when the Rollout has the step (a record from
		// its start, unless it could not); so it had none when the
		// read began, and Experiments were not listed.
		return "its Experiment was not read: the Rollout had no experiment step when this read began, and the read did not list Experiments; " + live + " reads it"
	}
	return "its Experiment was not read here (" + live + " reads it)"
}

func templateCounts(ts []ExperimentTemplate) string {
	var parts []string
	for _, t := range ts {
		parts = append(parts, fmt.Sprintf("%s %d/%d", t.Name, t.Available, t.Replicas))
	}
	return strings.Join(parts, ", ")
}

// ExperimentEnds: the step's Experiment can complete by itself — it has a
// duration, or an analysis whose success completes it.
func ExperimentEnds(e *v1alpha1.RolloutExperimentStep) bool {
	if e.Duration != "" {
		return true
	}
	for _, a := range e.Analyses {
		if a.RequiredForCompletion {
			return true
		}
	}
	return false
}

// checkExperimentNeverEnds (RD219): an experiment step whose Experiment
// cannot complete by itself holds every update at that step until a person
// promotes it.
func checkExperimentNeverEnds(c *Context, r *rules.Rule) []rules.Finding {
	cs := c.canary()
	if cs == nil {
		return nil
	}
	var out []rules.Finding
	for i, st := range cs.Steps {
		if st.Experiment == nil || ExperimentEnds(st.Experiment) {
			continue
		}
		f := r.NewFinding(fmt.Sprintf("steps[%d] is an experiment without a duration and without an analysis requiredForCompletion: its Experiment never completes by itself, so every update waits at step %d until someone promotes it", i, i))
		f.Evidence = []rules.Evidence{ev(c.obj(), fmt.Sprintf("spec.strategy.canary.steps[%d].experiment.duration", i), "(unset)")}
		f.Cites = c.cites("rc.experiment-step-done", "ux.duration-from-available")
		out = append(out, f)
	}
	return out
}
