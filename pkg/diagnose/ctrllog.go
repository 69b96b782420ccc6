package diagnose

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// ControllerLogView is the controller's log about the Rollout as the report
// carries it: what was read, the error and warning messages grouped (newest
// first, with their class and count), and every line (-o json).
type ControllerLogView struct {
	Reason  string               `json:"reason"`
	Since   time.Time            `json:"since"`
	Sources []snapshot.LogSource `json:"sources,omitempty"`
	Gap     string               `json:"gap,omitempty"`
	Errors  []LogMessage         `json:"errors,omitempty"`
	Lines   []snapshot.LogLine   `json:"lines,omitempty"`
}

// LogMessage is one distinct error or warning message of the log, with how
// often it was logged and when last.
type LogMessage struct {
	// Class is the RD159 class its text falls in: "other" for none,
	// "event" for the line that repeats an Event of no class (RD159 reads
	// the Event; its state — an abort, a failed analysis — is other rules'
	// to explain), "context" for v1.8–v1.9's bare "newRolloutContext
	// returned nil" (the cause is the line logged beside it). RD162 reports
	// neither of the last two.
	Class string    `json:"class"`
	Level string    `json:"level"`
	Msg   string    `json:"msg"`
	Count int       `json:"count"`
	Last  time.Time `json:"last"`
	// EventReason is the reason of the Event the line repeats ("" when it
	// repeats none).
	EventReason string `json:"eventReason,omitempty"`
}

// syncErrorPrefix starts the controller's line for an error that ended a
// pass (fact log.sync-error); the error follows.
const syncErrorPrefix = "rollout syncHandler error: "

// contextNilMsg is the controller's line when it cannot build a pass's
// context (fact ct.log-context-nil); from v1.10 ": " and the error follow.
const contextNilMsg = "newRolloutContext returned nil"

// logCause is the error a line reports, without the prefix of the
// controller line that reports it.
func logCause(msg string) string {
	return strings.TrimPrefix(strings.TrimPrefix(msg, syncErrorPrefix), contextNilMsg+": ")
}

// logClass is the class of an error or warning line's message, with the
// reason of the Event it repeats if any (nil when none matches).
func logClass(msg, eventReason string) *eventClass {
	t := errText{Reason: eventReason, Message: logCause(msg)}
	for i := range eventClasses {
		if eventClasses[i].match(t) {
			return &eventClasses[i]
		}
	}
	return nil
}

// isProblemLevel: logrus's error, warning (and the levels that end the
// process) are what the log section and RD162 read.
func isProblemLevel(l string) bool {
	switch l {
	case "error", "warning", "warn", "fatal", "panic":
		return true
	}
	return false
}

// controllerLogView groups the log's error and warning lines by message.
func controllerLogView(l *snapshot.ControllerLog) *ControllerLogView {
	if l == nil {
		return nil
	}
	v := &ControllerLogView{Reason: l.Reason, Since: l.Since, Sources: l.Sources, Gap: l.Gap, Lines: l.Lines}
	byMsg := map[string]*LogMessage{}
	// A message and the Event it repeats, if any, are one distinct message.
	key := func(reason, msg string) string { return reason + "\x00" + msg }
	for _, ln := range l.Lines {
		if !isProblemLevel(ln.Level) {
			continue
		}
		m := byMsg[key(ln.EventReason, ln.Msg)]
		if m == nil {
			class := "other"
			switch c := logClass(ln.Msg, ln.EventReason); {
			case c != nil:
				class = c.key
			case ln.EventReason != "":
				class = "event"
			case ln.Msg == contextNilMsg:
				class = "context"
			}
			m = &LogMessage{Class: class, Level: ln.Level, Msg: ln.Msg, EventReason: ln.EventReason}
			byMsg[key(m.EventReason, m.Msg)] = m
			v.Errors = append(v.Errors, *m)
		}
		m.Count++
		if !ln.Time.Before(m.Last) {
			m.Last = ln.Time
		}
	}
	for i := range v.Errors {
		v.Errors[i] = *byMsg[key(v.Errors[i].EventReason, v.Errors[i].Msg)]
	}
	sort.SliceStable(v.Errors, func(i, j int) bool { return v.Errors[i].Last.After(v.Errors[j].Last) })
	return v
}

// checkControllerLog (RD162) reports the controller's error and warning log
// lines about the Rollout by class, as RD159 does its Warning Events: one
// finding per class, the newest message quoted with its count.
func checkControllerLog(c *Context, r *rules.Rule) []rules.Finding {
	lv := controllerLogView(c.View.Header.ControllerLog)
	if lv == nil {
		return nil
	}
	type group struct {
		class    *eventClass
		key      string
		count    int
		last     LogMessage
		distinct int
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, m := range lv.Errors { // newest first
		if m.Class == "event" || m.Class == "context" {
			continue
		}
		g := byKey[m.Class]
		if g == nil {
			g = &group{key: m.Class, class: logClass(m.Msg, m.EventReason), last: m}
			byKey[m.Class] = g
			groups = append(groups, g)
		}
		g.count += m.Count
		g.distinct++
	}
	var out []rules.Finding
	for _, g := range groups {
		what, fix, critical := "the controller logs errors for this Rollout that match no known cause", "read them below (all lines in -o json); the controller retries every pass with backoff", false
		if g.class != nil {
			what, fix, critical = g.class.what, g.class.fix, g.class.critical
		}
		ago := snapshot.Since(c.View.Now, g.last.Last).Round(time.Second)
		msg := fmt.Sprintf("%s%s: the controller's log has %d %s line(s) about this Rollout (%d distinct), the last %s ago: %q; %s",
			what, logDetail(g.class, g.last.Msg), g.count, g.last.Level, g.distinct, ago, firstLine(g.last.Msg, 300), fix)
		f := r.NewFinding(msg)
		switch {
		case ago > staleAfter:
			f.Severity = rules.Info
			f.Message += fmt.Sprintf(" (nothing in the last %s: it may have cleared)", staleAfter)
		case critical && g.last.Level != "warning" && g.last.Level != "warn":
			f.Severity = rules.Critical
		}
		pod := ""
		if len(lv.Sources) > 0 {
			pod = lv.Sources[0].Namespace + "/" + lv.Sources[0].Pod
		}
		f.Cites = c.cites(logFacts(g.key, g.last.Msg)...)
		f.Evidence = []rules.Evidence{ev("log of pod "+pod, "msg", firstLine(g.last.Msg, 200)), ev("log of pod "+pod, "time", g.last.Last.UTC().Format(time.RFC3339))}
		out = append(out, f)
	}
	return out
}

// logFacts are the controller lines that log a message of the class: the
// line for an error that ended the pass, the InvalidSpec line, Istio's
// DestinationRule switch; and the fields that tie it to the Rollout.
func logFacts(class, msg string) []upstream.Key {
	var keys []upstream.Key
	switch {
	case strings.HasPrefix(msg, syncErrorPrefix):
		keys = append(keys, "log.sync-error")
	case strings.HasPrefix(msg, contextNilMsg):
		keys = append(keys, "ct.log-context-nil")
	}
	switch {
	case class == "invalid" && strings.Contains(msg, " is invalid: "):
		keys = append(keys, "ct.log-invalid-spec")
	case class == "dr-switch":
		keys = append(keys, "is.delay-dr-switch-log")
	}
	return append(keys, "log.rollout-fields")
}

// logDetail is detail() for a log message.
func logDetail(cl *eventClass, msg string) string {
	if cl == nil {
		return ""
	}
	return detail(&eventGroup{class: cl, latest: eventOf(logCause(msg))})
}

// WantsControllerLog says whether diagnose in --controller-logs=auto reads
// the controller's log for this Rollout, and why: only when there is
// something to explain — an abort, a progress deadline, an InvalidSpec or
// other error condition, a controller Warning Event of a known class, a spec
// the controller has not observed, or a step that has not moved for longer
// than its pause asks. A healthy or normally progressing Rollout costs no
// log read.
func WantsControllerLog(v *snapshot.View) (bool, string) {
	ro := v.Rollout
	if ro == nil {
		return false, ""
	}
	st := ro.Status
	if st.Abort {
		return true, "the Rollout is aborted"
	}
	for _, c := range st.Conditions {
		switch {
		case c.Type == v1alpha1.InvalidSpec && c.Status == "True":
			return true, "the controller reports InvalidSpec"
		case c.Type == v1alpha1.RolloutProgressing && c.Reason == "ProgressDeadlineExceeded":
			return true, "the progress deadline was exceeded"
		case c.Type == v1alpha1.RolloutReplicaFailure && c.Status == "True":
			return true, "the controller reports ReplicaFailure"
		}
	}
	if st.Phase == v1alpha1.RolloutPhaseDegraded {
		return true, "the Rollout is Degraded"
	}
	for _, g := range classifyEvents(v.Events) {
		if snapshot.Since(v.Now, g.last) <= staleAfter {
			return true, "the controller reports errors in Warning Events (" + g.class.key + ")"
		}
	}
	if ro.Generation > 0 && st.ObservedGeneration != "" && st.ObservedGeneration != fmt.Sprint(ro.Generation) {
		return true, "the controller has not observed the current spec"
	}
	if stuck, why := stuckAtStep(v); stuck {
		return true, why
	}
	return false, ""
}

// stuckFor is how long a canary may stay at one step, not paused, before
// auto reads the log: longer than a ramp of pods takes on a healthy cluster.
const stuckFor = 10 * time.Minute

// stuckAtStep: a canary mid-steps, not paused, whose Progressing condition
// has not changed for stuckFor.
func stuckAtStep(v *snapshot.View) (bool, string) {
	ro := v.Rollout
	if ro.Spec.Strategy.Canary == nil || ro.Status.CurrentStepIndex == nil || len(ro.Status.PauseConditions) > 0 || ro.Spec.Paused {
		return false, ""
	}
	if int(*ro.Status.CurrentStepIndex) >= len(ro.Spec.Strategy.Canary.Steps) {
		return false, ""
	}
	for _, c := range ro.Status.Conditions {
		if c.Type == v1alpha1.RolloutProgressing && !c.LastUpdateTime.IsZero() {
			if d := snapshot.Since(v.Now, c.LastUpdateTime.Time); d > stuckFor {
				return true, fmt.Sprintf("step %d has not moved for %s", *ro.Status.CurrentStepIndex, d.Round(time.Second))
			}
		}
	}
	return false, ""
}

// eventOf carries a log message where detail() reads an Event's.
func eventOf(msg string) *corev1.Event { return &corev1.Event{Message: msg} }

// RevisionStart is when the Rollout's current revision started: the
// creation of the ReplicaSet of status.currentPodHash (zero when unknown).
func RevisionStart(v *snapshot.View) time.Time {
	h := v.Rollout.Status.CurrentPodHash
	for _, rs := range v.ReplicaSets {
		if h != "" && rs.Labels[v1alpha1.DefaultRolloutUniqueLabelKey] == h {
			return rs.CreationTimestamp.Time
		}
	}
	return time.Time{}
}
