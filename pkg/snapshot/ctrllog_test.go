package snapshot

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testdata/ctrllog holds the log of each modeled controller version in
// both formats (--logformat text, the default, and json) as `kubectl logs`
// returned it in the lab: three invalid Rollouts per controller — app-ID
// and other-ID in namespace capture, app-ID in capture2 — so that a filter
// by name or by namespace alone would take lines of the others.
func TestParseControllerLogPerVersionAndFormat(t *testing.T) {
	for _, v := range []string{"v1.7.2", "v1.8.2", "v1.8.3", "v1.9.3", "v1.10.2"} {
		for _, format := range []string{"text", "json"} {
			t.Run(format+"-"+v, func(t *testing.T) {
				data, err := os.ReadFile(filepath.Join("testdata/ctrllog", format+"-"+v+".log"))
				if err != nil {
					t.Fatal(err)
				}
				id := format + "-" + strings.ReplaceAll(v, ".", "-")
				name := "app-" + id
				// The lines about capture/app-ID, counted by their fields'
				// text: `namespace=capture rollout=app-ID` or the JSON pair.
				nsField, roField := "namespace=capture ", "rollout="+name
				if format == "json" {
					nsField, roField = `"namespace":"capture"`, `"rollout":"`+name+`"`
				}
				want, wantErrors := 0, 0
				for _, l := range strings.Split(string(data), "\n") {
					if strings.Contains(l, nsField) && (strings.Contains(l, roField+" ") || strings.HasSuffix(l, roField) || format == "json" && strings.Contains(l, roField)) {
						want++
						if strings.Contains(l, "level=error") || strings.Contains(l, `"level":"error"`) {
							wantErrors++
						}
					}
				}
				if want == 0 || wantErrors == 0 {
					t.Fatalf("the capture has no lines (or no error lines) about capture/%s: %d, %d", name, want, wantErrors)
				}
				lines, got := ParseControllerLog(data, "capture", name)
				if got != format {
					t.Errorf("format %q, want %q", got, format)
				}
				if len(lines) != want {
					t.Errorf("%d lines about capture/%s, want %d", len(lines), name, want)
				}
				errors := 0
				for _, l := range lines {
					if l.Level == "error" {
						errors++
						if !strings.Contains(l.Msg, "nosuch-stable") && !strings.Contains(l.Msg, "newRolloutContext returned nil") {
							t.Errorf("error line without the cause: %q", l.Msg)
						}
					}
					if l.Time.IsZero() || l.Time.Year() != 2026 {
						t.Errorf("line without its time: %+v", l)
					}
					if strings.Contains(l.Msg, "other-"+id) || strings.Contains(l.Msg, "capture2") {
						t.Errorf("a line about another Rollout: %q", l.Msg)
					}
				}
				if errors != wantErrors {
					t.Errorf("%d error lines, want %d", errors, wantErrors)
				}
				// The same name in the other namespace is another Rollout.
				other, _ := ParseControllerLog(data, "capture2", name)
				if len(other) == 0 {
					t.Errorf("capture2/%s: no lines", name)
				}
			})
		}
	}
}

func TestParseControllerLogLines(t *testing.T) {
	for _, c := range []struct {
		name, line, level, msg string
		keep                   bool
	}{
		{"quoted value with escapes", `time="2026-12-01T01:43:15Z" level=error msg="rollout syncHandler error: virtualservices.networking.istio.io \"app\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'p' denied request: no" namespace=shop rollout=app`,
			"error", `rollout syncHandler error: virtualservices.networking.istio.io "app" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'p' denied request: no`, true},
		{"bare values, fields in any order", `rollout=app level=warning namespace=shop time="2026-12-01T01:43:15Z" msg=conflict`, "warning", "conflict", true},
		{"json with a non-string field", `{"generation":3,"level":"error","msg":"x","namespace":"shop","rollout":"app","time":"2026-12-01T01:43:15Z"}`, "error", "x", true},
		{"another rollout", `time="2026-12-01T01:43:15Z" level=error msg=x namespace=shop rollout=app2`, "", "", false},
		{"another namespace", `time="2026-12-01T01:43:15Z" level=error msg=x namespace=shop2 rollout=app`, "", "", false},
		{"klog line", `E1201 01:43:15.123456   1 reflector.go:1] namespace=shop rollout=app`, "", "", false},
		{"a flag warning", `Flag --metricsport has been deprecated, use --metricsPort instead`, "", "", false},
		{"unterminated quote", `time="2026-12-01T01:43:15Z" level=error namespace=shop rollout=app msg="cut`, "", "", false},
		{"broken json", `{"level":"error","namespace":"shop","rollout":"app"`, "", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			lines, _ := ParseControllerLog([]byte("\n"+c.line+"\n\n"), "shop", "app")
			if !c.keep {
				if len(lines) != 0 {
					t.Errorf("kept %+v", lines)
				}
				return
			}
			if len(lines) != 1 || lines[0].Level != c.level || lines[0].Msg != c.msg || !lines[0].Time.Equal(time.Date(2026, 12, 1, 1, 43, 15, 0, time.UTC)) {
				t.Errorf("got %+v, want level %s msg %q", lines, c.level, c.msg)
			}
		})
	}
}

func TestParseControllerLogLongLine(t *testing.T) {
	long := strings.Repeat("x", 200*1024)
	data := fmt.Sprintf("time=\"2026-12-01T01:43:15Z\" level=error msg=%s namespace=shop rollout=app\n", long)
	lines, _ := ParseControllerLog([]byte(data), "shop", "app")
	if len(lines) != 1 || len(lines[0].Msg) != len(long) {
		t.Errorf("a 200 KiB line: %d lines", len(lines))
	}
}

// The event recorder's line for an Event carries its reason (event_reason),
// in either format; other lines carry none.
func TestControllerLogEventReason(t *testing.T) {
	text := `time="2026-12-06T16:44:09Z" level=warning msg="Rollout aborted update to revision 2" event_reason=RolloutAborted namespace=odd rollout=ab` + "\n" +
		`time="2026-12-06T16:44:10Z" level=error msg="rollout syncHandler error: boom" namespace=odd rollout=ab` + "\n"
	json := `{"event_reason":"RolloutAborted","level":"warning","msg":"Rollout aborted update to revision 2","namespace":"odd","rollout":"ab","time":"2026-12-06T16:44:09Z"}` + "\n" +
		`{"level":"error","msg":"rollout syncHandler error: boom","namespace":"odd","rollout":"ab","time":"2026-12-06T16:44:10Z"}` + "\n"
	for _, in := range []string{text, json} {
		lines, _ := ParseControllerLog([]byte(in), "odd", "ab")
		if len(lines) != 2 || lines[0].EventReason != "RolloutAborted" || lines[1].EventReason != "" {
			t.Errorf("%+v", lines)
		}
	}
}
