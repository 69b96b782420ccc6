// Package rulestest holds what the rule tests of every area share: the shape
// their tables reduce to, the check that the tables cover the registry, and
// the check that text users read cites nothing they cannot open.
package rulestest

import (
	"regexp"
	"strings"
	"testing"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
)

// Case is one row of an area's rule table: a rule, the state its check runs
// on, and whether it must fire there.
type Case struct {
	ID    string
	State string
	Fire  bool
}

// Coverage fails t for every registered rule of area that lacks a case where
// it fires or a case where it stays quiet, and for a case that names no rule
// of area. The area's table test asserts the cases; this asserts the table.
func Coverage(t testing.TB, area rules.Area, cases []Case) {
	t.Helper()
	fire, quiet := map[string]bool{}, map[string]bool{}
	for _, c := range cases {
		if r, ok := rules.ByID(c.ID); !ok || r.ID != c.ID || r.Area != area {
			t.Errorf("case %q names %s, which is not a %s rule", c.State, c.ID, area)
		}
		if c.Fire {
			fire[c.ID] = true
		} else {
			quiet[c.ID] = true
		}
	}
	n := 0
	for _, r := range rules.All() {
		if r.Area != area {
			continue
		}
		n++
		if !fire[r.ID] {
			t.Errorf("%s %s has no test case where it fires", r.ID, r.Name)
		}
		if !quiet[r.ID] {
			t.Errorf("%s %s has no test case where it stays quiet", r.ID, r.Name)
		}
	}
	if n == 0 {
		t.Errorf("no %s rule is registered", area)
	}
}

// InternalRef matches a citation of a document users do not have: the
// project's internal incident write-ups ("seed 003 §3-4", "seed-000", "the
// seed incident"), incident log entries ("IL-0188"), the brief and the
// oracle notes. What users read cites docs/incidents.md or public URLs
// instead. ("seed corpora", the fuzzing term, does not match.)
var InternalRef = regexp.MustCompile(`(?i:seed)[ -]?[0-9]|(?i:seed)[ -]incident|IL-[0-9]|BRIEF|ORACLE`)

// NoInternalRefs fails t for each line of text that cites an internal
// document; where names the text (a file, a rule field, a finding).
func NoInternalRefs(t testing.TB, where, text string) {
	t.Helper()
	for i, line := range strings.Split(text, "\n") {
		if m := InternalRef.FindString(line); m != "" {
			t.Errorf("%s:%d cites an internal document (%q): %s", where, i+1, m, strings.TrimSpace(line))
		}
	}
}
