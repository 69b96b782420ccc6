package render

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/lint"
)

// Lint writes lint findings grouped by object, each under its file:line.
func Lint(w io.Writer, r *lint.Report, s Styles) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s controller %s (%s)\n", s.Title.Render("rolloutdoctor lint:"), r.Controller.Assumed, r.Controller.Source)
	if r.Controller.Note != "" {
		fmt.Fprintf(&b, "  %s\n", s.Dim.Render(r.Controller.Note))
	}
	last := ""
	for _, f := range r.Findings {
		key := fmt.Sprintf("%s:%d  %s", f.File, f.Line, f.Object)
		if key != last {
			fmt.Fprintf(&b, "\n%s\n", s.Bold.Render(key))
			last = key
		}
		fmt.Fprintf(&b, "  %s %s %s\n", Severity(s, f.Severity), s.Bold.Render(f.ID), f.Message)
		if len(f.Versions) > 0 {
			fmt.Fprintf(&b, "      %s\n", s.Dim.Render("other controller versions: "+strings.Join(f.Versions, ", ")))
		}
		if f.Remediation != "" {
			fmt.Fprintf(&b, "      fix: %s\n", f.Remediation)
		}
	}
	lintSuppressed(&b, r, s)
	if len(r.Skipped) > 0 {
		var kinds []string
		for k, n := range r.Skipped {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
		}
		sort.Strings(kinds)
		fmt.Fprintf(&b, "\n%s %s\n", s.Dim.Render("skipped kinds:"), s.Dim.Render(strings.Join(kinds, ", ")))
	}
	fmt.Fprintf(&b, "\n%s\n", r.Summary())
	_, err := io.WriteString(w, b.String())
	return err
}

// lintSuppressed lists suppressed findings with who suppressed them and
// why: they are counted, never dropped silently.
func lintSuppressed(b *strings.Builder, r *lint.Report, s Styles) {
	if len(r.Suppressed) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s\n", s.Title.Render("Suppressed"))
	for _, x := range r.Suppressed {
		reason := x.Reason
		if reason == "" {
			reason = "no reason given"
		}
		fmt.Fprintf(b, "  %s:%d %s %s (by %s: %s)\n", x.File, x.Line, x.ID, x.Object, x.By, reason)
	}
}

// LintErrors writes the inputs lint could not read, one line each as
// file:line: message (for stderr; the rest was still linted).
func LintErrors(w io.Writer, r *lint.Report) {
	for _, e := range r.Errors {
		loc := e.File
		if e.Line > 0 {
			loc = fmt.Sprintf("%s:%d", e.File, e.Line)
		}
		fmt.Fprintf(w, "error: %s: %s\n", loc, e.Message)
	}
	for _, e := range r.SkippedFiles {
		fmt.Fprintf(w, "skipped: %s: %s\n", e.File, e.Message)
	}
}
