package diagnose

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

func logLine(at, level, msg string) snapshot.LogLine {
	t, err := time.Parse(time.RFC3339, at)
	if err != nil {
		panic(err)
	}
	return snapshot.LogLine{Time: t, Level: level, Msg: msg, Pod: "argo-rollouts-7d9f-abcde"}
}

func ctrlLog(lines ...snapshot.LogLine) *snapshot.ControllerLog {
	return &snapshot.ControllerLog{Reason: "test", Since: time.Date(2026, 8, 11, 2, 12, 41, 0, time.UTC),
		Sources: []snapshot.LogSource{{Namespace: "argo-rollouts", Pod: "argo-rollouts-7d9f-abcde", Container: "argo-rollouts", Lines: len(lines)}}, Lines: lines}
}

// logCases are error lines as the controller logs them (the syncHandler
// line wraps the error that ended the pass; messages as RD159's cases and
// as the controller's source words its own), each with the part of RD162's
// message that names its cause and its severity.
var logCases = []struct {
	name, level, msg, at, class, says string
	sev                               rules.Severity
}{
	{"policy", "error", syncErrorPrefix + eventMsg("policy"), "", "policy", "(ValidatingAdmissionPolicy no-split)", rules.Critical},
	{"webhook", "error", syncErrorPrefix + eventMsg("webhook"), "", "webhook", "(validation.istio.io)", rules.Critical},
	{"rbac", "error", syncErrorPrefix + eventMsg("rbac"), "", "rbac", "(system:serviceaccount:argo-rollouts:argo-rollouts may not update virtualservices.networking.istio.io)", rules.Critical},
	{"conflict", "error", syncErrorPrefix + eventMsg("conflict"), "", "conflict", "conflict with another writer", rules.Warning},
	{"destination rule switch", "info", "delaying destination rule switch: ReplicaSet checkout-api-5f6c8d7b9a not fully available", "", "", "", 0},
	{"destination rule switch error", "error", syncErrorPrefix + "delaying destination rule switch: ReplicaSet checkout-api-5f6c8d7b9a not fully available", "", "dr-switch", "holds the DestinationRule switch", rules.Warning},
	{"invalid spec", "error", `The Rollout "checkout-api" is invalid: spec.strategy.canary.stableService: Invalid value: "s": service "s" not found`, "", "invalid", "validation rejects the Rollout's spec", rules.Warning},
	{"invalid spec as v1.10 logs it from the pass's context", "error", contextNilMsg + ": spec.strategy.trafficRouting: Required value: SetCanaryScale requires TrafficRouting to be set", "", "invalid", "validation rejects the Rollout's spec", rules.Warning},
	{"unknown error", "error", syncErrorPrefix + "something new", "", "other", "match no known cause", rules.Warning},
	{"a warning line of a critical class", "warning", eventMsg("rbac"), "", "rbac", "may not update", rules.Warning},
	{"old policy denial", "error", syncErrorPrefix + eventMsg("policy"), "2026-08-11T02:00:00Z", "policy", "it may have cleared", rules.Info},
}

func TestControllerLogLines(t *testing.T) {
	for _, c := range logCases {
		t.Run(c.name, func(t *testing.T) {
			at := c.at
			if at == "" {
				at = "2026-08-11T03:12:30Z"
			}
			r := diagnoseBugCase(t, "v1.10.2", bugCase{log: ctrlLog(logLine(at, c.level, c.msg), logLine(at, "info", "Started syncing rollout"))})
			got := messages(r, "RD162")
			if c.class == "" {
				if len(got) != 0 || len(r.ControllerLog.Errors) != 0 {
					t.Errorf("an info line is no error: %v", got)
				}
				return
			}
			if len(got) != 1 || !strings.Contains(got[0].Message, c.says) || got[0].Severity != c.sev {
				t.Fatalf("RD162 %+v\nwant one saying %q at %v", got, c.says, c.sev)
			}
			// The finding cites the controller line that logs the message.
			want := map[string]bool{"log.rollout-fields": true}
			if strings.HasPrefix(c.msg, syncErrorPrefix) {
				want["log.sync-error"] = true
			}
			if strings.HasPrefix(c.msg, contextNilMsg) {
				want["ct.log-context-nil"] = true
			}
			if c.class == "invalid" && strings.Contains(c.msg, " is invalid: ") {
				want["ct.log-invalid-spec"] = true
			}
			if c.class == "dr-switch" {
				want["is.delay-dr-switch-log"] = true
			}
			for _, ci := range got[0].Cites {
				if ci.Absent || ci.Line == 0 {
					t.Errorf("cites %s absent from v1.10.2", ci.Key)
				}
				delete(want, string(ci.Key))
			}
			if len(want) > 0 {
				t.Errorf("RD162 does not cite %v: %+v", want, got[0].Cites)
			}
			if e := r.ControllerLog.Errors; len(e) != 1 || e[0].Class != c.class || e[0].Count != 1 {
				t.Errorf("log view errors %+v, want class %s", e, c.class)
			}
			if len(r.ControllerLog.Lines) != 2 {
				t.Errorf("the report keeps every line: %d", len(r.ControllerLog.Lines))
			}
		})
	}
}

// Two lines RD162 does not report, seen on the lab's controllers: v1.8–v1.9's
// bare "newRolloutContext returned nil" beside the line that says why, and
// the event recorder's repeat of a Warning Event of no class (an abort:
// RD104 explains it, and nothing is retried). Before, each was its own
// "errors … that match no known cause … the controller retries every pass"
// finding. A repeated Event of a known class is still reported.
func TestControllerLogLinesNotReported(t *testing.T) {
	at := "2026-08-11T03:12:30Z"
	echo := func(reason, level, msg string) snapshot.LogLine {
		l := logLine(at, level, msg)
		l.EventReason = reason
		return l
	}
	invalid := `The Rollout "checkout-api" is invalid: spec.strategy.canary.stableService: Invalid value: "s": service "s" not found`
	r := diagnoseBugCase(t, "v1.9.3", bugCase{log: ctrlLog(logLine(at, "error", invalid), logLine(at, "error", contextNilMsg),
		echo("RolloutAborted", "warning", "Rollout aborted update to revision 7"))})
	got := messages(r, "RD162")
	if len(got) != 1 || !strings.Contains(got[0].Message, "validation rejects the Rollout's spec") {
		t.Fatalf("RD162 %+v, want the invalid spec alone", got)
	}
	classes := map[string]string{}
	for _, e := range r.ControllerLog.Errors {
		classes[e.Msg] = e.Class
	}
	if classes[contextNilMsg] != "context" || classes["Rollout aborted update to revision 7"] != "event" || classes[invalid] != "invalid" {
		t.Errorf("log view classes %v", classes)
	}
	r = diagnoseBugCase(t, "v1.10.2", bugCase{log: ctrlLog(echo("TrafficRoutingError", "warning", eventMsg("policy")))})
	if got := messages(r, "RD162"); len(got) != 1 || !strings.Contains(got[0].Message, "(ValidatingAdmissionPolicy no-split)") {
		t.Errorf("a repeated Event of a known class: RD162 %+v", got)
	}
}

// eventMsg is the message of the named case of eventCases.
func eventMsg(name string) string {
	for _, c := range eventCases {
		if c.name == name {
			return c.msg
		}
	}
	panic("no event case " + name)
}

func messages(r *Report, id string) []rules.Finding {
	var out []rules.Finding
	for _, f := range r.Findings {
		if f.ID == id {
			out = append(out, f)
		}
	}
	return out
}

// Repeats of one message are counted, distinct messages of one class are
// one finding, the newest message quoted; the view lists them newest first.
func TestControllerLogGrouping(t *testing.T) {
	policy := syncErrorPrefix + eventMsg("policy")
	other := syncErrorPrefix + `virtualservices.networking.istio.io "app" is forbidden: ValidatingAdmissionPolicy 'other' with binding 'other' denied request: no`
	conflict := syncErrorPrefix + eventMsg("conflict")
	r := diagnoseBugCase(t, "v1.9.3", bugCase{log: ctrlLog(
		logLine("2026-08-11T03:10:00Z", "error", policy), logLine("2026-08-11T03:11:00Z", "error", policy), logLine("2026-08-11T03:12:00Z", "error", policy),
		logLine("2026-08-11T03:12:10Z", "error", conflict),
		logLine("2026-08-11T03:12:20Z", "error", other))})
	e := r.ControllerLog.Errors
	if len(e) != 3 || e[0].Msg != other || e[1].Msg != conflict || e[2].Msg != policy || e[2].Count != 3 || !e[2].Last.Equal(time.Date(2026, 8, 11, 3, 12, 0, 0, time.UTC)) {
		t.Fatalf("errors %+v", e)
	}
	got := messages(r, "RD162")
	if len(got) != 2 || !strings.Contains(got[0].Message, "4 error line(s) about this Rollout (2 distinct)") || !strings.Contains(got[0].Message, "ValidatingAdmissionPolicy other") ||
		!strings.Contains(got[1].Message, "1 error line(s)") {
		t.Errorf("RD162 %+v", got)
	}
}

func TestWantsControllerLog(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*unstructured.Unstructured)
		objs bool
		want string
	}{
		{"progressing, recent", nil, false, ""},
		{"aborted", set([]string{"status", "abort"}, true), false, "aborted"},
		{"a Warning event", nil, true, "Warning Events (policy)"},
		{"progress deadline", set([]string{"status", "conditions"}, []interface{}{map[string]interface{}{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded"}}), false, "progress deadline"},
		{"InvalidSpec", set([]string{"status", "conditions"}, []interface{}{map[string]interface{}{"type": "InvalidSpec", "status": "True", "reason": "InvalidSpec"}}), false, "InvalidSpec"},
		{"spec not observed", set([]string{"metadata", "generation"}, int64(10)), false, "not observed"},
		{"stuck at a step", both(
			set([]string{"status", "conditions"}, []interface{}{map[string]interface{}{"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated", "lastUpdateTime": "2026-08-11T02:12:41Z", "lastTransitionTime": "2026-08-11T02:12:41Z"}}),
			remove("status", "pauseConditions"), set([]string{"status", "currentStepIndex"}, int64(1))), false, "has not moved for 1h0m0s"},
		{"a step for 5 minutes", both(
			set([]string{"status", "conditions"}, []interface{}{map[string]interface{}{"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated", "lastUpdateTime": "2026-08-11T03:07:41Z", "lastTransitionTime": "2026-08-11T03:07:41Z"}}),
			remove("status", "pauseConditions"), set([]string{"status", "currentStepIndex"}, int64(1))), false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			bc := bugCase{edit: both(noWindow, set([]string{"status", "conditions"}, []interface{}{}))}
			if c.edit != nil {
				bc.edit = both(bc.edit, c.edit)
			}
			if c.objs {
				bc.objs = addObjs(warning("w", "TrafficRoutingError", eventMsg("policy"), 1, ""))
			}
			want, why := WantsControllerLog(bugView(t, bc))
			if want != (c.want != "") || !strings.Contains(why, c.want) {
				t.Errorf("WantsControllerLog = %v, %q; want %q", want, why, c.want)
			}
		})
	}
}
