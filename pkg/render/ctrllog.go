package render

import (
	"fmt"
	"strings"
	"time"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
)

// logMessagesShown bounds the controller log section: the newest distinct
// error and warning messages (all lines are in -o json).
const logMessagesShown = 5

// humanControllerLog writes what the controller's log says about the
// Rollout: the pods read and since when, then the newest distinct error
// and warning messages with how often each was logged and when last; or
// the one line saying why it could not be read.
func humanControllerLog(b *strings.Builder, rep *diagnose.Report, s Styles) {
	l := rep.ControllerLog
	if l == nil {
		return
	}
	fmt.Fprintf(b, "\n%s %s\n", s.Title.Render("Controller log"), s.Dim.Render("(read because "+l.Reason+")"))
	if l.Gap != "" {
		fmt.Fprintf(b, "  could not read the controller's log: %s\n", l.Gap)
		return
	}
	pods := make([]string, len(l.Sources))
	lines := 0
	truncated := false
	for i, src := range l.Sources {
		pods[i] = src.Namespace + "/" + src.Pod
		lines += src.Lines
		truncated = truncated || src.Truncated
	}
	note := ""
	if truncated {
		note = ", the newest part of the window only"
	}
	fmt.Fprintf(b, "  %d line(s) about this Rollout in the log of %s since %s%s\n", lines, strings.Join(pods, ", "), when(l.Since), note)
	if len(l.Errors) == 0 {
		fmt.Fprintf(b, "  no error or warning lines\n")
		return
	}
	for i, m := range l.Errors {
		if i == logMessagesShown {
			fmt.Fprintf(b, "  %s\n", s.Dim.Render(fmt.Sprintf("… %d more distinct message(s) (-o json has every line)", len(l.Errors)-i)))
			break
		}
		class := m.Class
		if m.EventReason != "" && class == "event" {
			class += " " + m.EventReason
		}
		fmt.Fprintf(b, "  %-7s ×%-4d last %s  [%s] %s\n", m.Level, m.Count, m.Last.UTC().Format(time.TimeOnly), class, firstLineOf(m.Msg, 240))
	}
}

func firstLineOf(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len([]rune(s)) > n {
		return string([]rune(s)[:n]) + "…"
	}
	return s
}
