package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/timeline"
)

var incidentRecord = exampletest.Path(exampletest.IncidentRecord)

// The timeline of a record as JSON names the worst moment; diagnose --at
// that moment reports RD101 with that moment's counts, and escape --at
// plans from the same state.
func TestTimelineThenDiagnoseAtTheWorstMoment(t *testing.T) {
	out, errOut, code := runCLI(t, "", "timeline", "-f", incidentRecord, "-o", "json")
	if code != ExitOK {
		t.Fatalf("timeline: exit %d: %s", code, errOut)
	}
	var tl timeline.Timeline
	if err := json.Unmarshal([]byte(out), &tl); err != nil {
		t.Fatalf("timeline -o json: %v", err)
	}
	if tl.Kind != "Timeline" || tl.APIVersion != "rolloutdoctor.io/v1alpha1" || len(tl.Series) == 0 {
		t.Fatalf("not a timeline document: %s %s, %d points", tl.APIVersion, tl.Kind, len(tl.Series))
	}
	w, ok := tl.Worst()
	if !ok {
		t.Fatal("no worst moment")
	}
	c, _ := w.Count(w.Canary)
	at := w.At.Format("2006-01-02T15:04:05.999999999Z07:00")
	out, errOut, code = runCLI(t, "", "diagnose", "-f", incidentRecord, "--at", at, "-o", "json")
	if code != ExitFindings {
		t.Fatalf("diagnose --at %s: exit %d: %s", at, code, errOut)
	}
	var rep diagnose.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	var rd101 *diagnose.Finding
	for i := range rep.Findings {
		if rep.Findings[i].ID == "RD101" {
			rd101 = &rep.Findings[i]
		}
	}
	want := "100% of traffic on 1 of 20 pods"
	if c.Available != 1 || rd101 == nil || !strings.HasPrefix(rd101.Message, want) || !rep.TakenAt.Equal(w.At) {
		t.Fatalf("diagnose --at the worst moment (canary %d available): RD101 %+v, taken at %s; want %q at %s", c.Available, rd101, rep.TakenAt, want, w.At)
	}
	// The same moment as a time of day, and as an offset.
	for _, at := range []string{w.At.Format("15:04:05.000000000"), "+" + w.At.Sub(tl.From).String()} {
		out, errOut, code = runCLI(t, "", "diagnose", "-f", incidentRecord, "--at", at, "--color", "never")
		if code != ExitFindings || !strings.Contains(out, "RD101 "+want) {
			t.Errorf("diagnose --at %s: exit %d: %s%s", at, code, errOut, out)
		}
	}
	out, errOut, code = runCLI(t, "", "escape", "-f", incidentRecord, "--at", at, "-o", "json")
	if code != ExitOK || !strings.Contains(out, `"recommended": "undo"`) {
		t.Errorf("escape --at: exit %d: %s\n%s", code, errOut, out)
	}
	// Without --at, a record reads as its last moment: the incident is over.
	out, _, _ = runCLI(t, "", "diagnose", "-f", incidentRecord, "--color", "never")
	if strings.Contains(out, "RD101") || !strings.Contains(out, "phase     Healthy") {
		t.Errorf("diagnose of the record's end:\n%s", out)
	}
}

func TestAtNeedsARecordAndAMomentInIt(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"diagnose", "app", "--at", "03:00:00"}, "--at replays a moment of a record: give the record with -f FILE"},
		{[]string{"diagnose", "-f", example, "--at", "03:00:00"}, "--at needs a record"},
		{[]string{"diagnose", "-f", incidentRecord, "--at", "22:00:00"}, "is outside the record, which runs from 2026-11-30T23:19:40.573328856Z"},
		{[]string{"escape", "-f", incidentRecord, "--at", "soon"}, "not a time: use 03:14:10"},
		{[]string{"diagnose", "-f", incidentRecord, "--at", "+1y"}, "an offset is a duration"},
	} {
		_, errOut, code := runCLI(t, "", tc.args...)
		if code != ExitUsage || !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("%v: exit %d, %q; want exit 3 and one line with %q", tc.args, code, errOut, tc.want)
		}
	}
}

// timeline --html writes the report next to the terminal view; timeline
// of a snapshot (one moment) tells what it holds.
func TestTimelineHTMLAndSnapshotInput(t *testing.T) {
	page := filepath.Join(t.TempDir(), "report.html")
	_, errOut, code := runCLI(t, "", "timeline", "-f", incidentRecord, "--html", page, "--color", "never")
	data, err := os.ReadFile(page)
	if code != ExitOK || err != nil || !strings.Contains(string(data), `<svg id="chart"`) {
		t.Fatalf("timeline --html: exit %d (%s), %v", code, errOut, err)
	}
	out, errOut, code := runCLI(t, "", "timeline", "-f", example, "--color", "never")
	if code != ExitOK || !strings.Contains(out, "what the cluster still holds") || !strings.Contains(out, "RD101") {
		t.Errorf("timeline of a snapshot: exit %d: %s\n%s", code, errOut, out)
	}
	_, errOut, code = runCLI(t, "", "timeline")
	if code != ExitUsage || !strings.Contains(errOut, "name a Rollout") {
		t.Errorf("timeline without a Rollout: exit %d %q", code, errOut)
	}
}

// record refuses to overwrite a file and needs a name and a file.
func TestRecordFlags(t *testing.T) {
	existing := filepath.Join(t.TempDir(), "old.rec")
	os.WriteFile(existing, []byte("earlier incident"), 0o644)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"record", "-o", "x.rec"}, ExitUsage, "name a Rollout"},
		{[]string{"record", "app"}, ExitUsage, "give the file to record into: -o FILE"},
		{[]string{"record", "app", "-o", existing, "--server", "https://127.0.0.1:1", "--insecure-skip-tls-verify"}, ExitError, "exists: record into another file"},
	} {
		_, errOut, code := runCLI(t, "", tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}
	if data, _ := os.ReadFile(existing); string(data) != "earlier incident" {
		t.Errorf("the earlier record was overwritten")
	}
}

// An unreachable cluster is one line and exit 2, and leaves no file.
func TestRecordUnreachable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "x.rec")
	_, errOut, code := runCLI(t, "", "record", "app", "-n", "shop", "-o", file, "--server", "https://127.0.0.1:1", "--insecure-skip-tls-verify", "--request-timeout", "2s")
	if code != ExitError || !strings.Contains(errOut, "cannot reach the API server at https://127.0.0.1:1") || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(file); err == nil {
		t.Errorf("a record of nothing was left at %s", file)
	}
}
