package render

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// The section shows the newest logMessagesShown distinct messages with
// their count and time, says how many more there are, and the window; a
// log that could not be read is one line.
func TestControllerLogSection(t *testing.T) {
	at := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	var errs []diagnose.LogMessage
	for i := 0; i < 8; i++ {
		errs = append(errs, diagnose.LogMessage{Class: "other", Level: "error", Msg: fmt.Sprintf("message %d", i), Count: i + 1, Last: at.Add(-time.Duration(i) * time.Minute)})
	}
	rep := &diagnose.Report{ControllerLog: &diagnose.ControllerLogView{Reason: "the Rollout is aborted", Since: at.Add(-time.Hour),
		Sources: []snapshot.LogSource{{Namespace: "argo-rollouts", Pod: "argo-rollouts-abc", Lines: 40, Truncated: true}}, Errors: errs}}
	var b strings.Builder
	humanControllerLog(&b, rep, Styles{})
	out := b.String()
	for i := 0; i < logMessagesShown; i++ {
		if !strings.Contains(out, fmt.Sprintf("×%-4d last %s  [other] message %d\n", i+1, at.Add(-time.Duration(i)*time.Minute).Format(time.TimeOnly), i)) {
			t.Errorf("message %d missing:\n%s", i, out)
		}
	}
	if strings.Contains(out, fmt.Sprintf("message %d", logMessagesShown)) || !strings.Contains(out, fmt.Sprintf("… %d more distinct message(s)", 8-logMessagesShown)) {
		t.Errorf("not bounded:\n%s", out)
	}
	if !strings.Contains(out, "40 line(s) about this Rollout in the log of argo-rollouts/argo-rollouts-abc since 2026-12-01 01:00:00Z, the newest part of the window only") ||
		!strings.Contains(out, "(read because the Rollout is aborted)") {
		t.Errorf("no window:\n%s", out)
	}

	rep.ControllerLog = &diagnose.ControllerLogView{Reason: "the Rollout is aborted", Gap: `pods "p" is forbidden; grant get on pods/log in namespace argo-rollouts`}
	b.Reset()
	humanControllerLog(&b, rep, Styles{})
	if lines := strings.Split(strings.TrimSpace(b.String()), "\n"); len(lines) != 2 || !strings.Contains(lines[1], "could not read the controller's log: pods \"p\" is forbidden; grant get on pods/log in namespace argo-rollouts") {
		t.Errorf("gap:\n%s", b.String())
	}
	b.Reset()
	humanControllerLog(&b, &diagnose.Report{}, Styles{})
	if b.Len() != 0 {
		t.Errorf("no log read, yet a section: %q", b.String())
	}
}
