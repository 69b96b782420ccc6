package rulestest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
)

// recorder keeps what Coverage reports instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func quiet(*struct{}, *rules.Rule) []rules.Finding { return nil }

func TestCoverageNamesWhatIsMissing(t *testing.T) {
	rules.Register(rules.AreaPods, []byte(`
- {id: RD981, name: covered, title: t, severity: info, scope: static, why: w, remedy: r}
- {id: RD982, name: only-fires, title: t, severity: info, scope: static, why: w, remedy: r}
`), map[string]rules.Check[struct{}]{"RD981": quiet, "RD982": quiet})
	rec := &recorder{TB: t}
	Coverage(rec, rules.AreaPods, []Case{
		{ID: "RD981", State: "bad", Fire: true}, {ID: "RD981", State: "good"},
		{ID: "RD982", State: "bad", Fire: true},
		{ID: "RD999", State: "nowhere"},
	})
	if len(rec.errs) != 2 || !strings.Contains(rec.errs[0], "RD999") || !strings.Contains(rec.errs[1], "RD982 only-fires has no test case where it stays quiet") {
		t.Fatalf("want 2 complaints (RD999 unknown, RD982 never quiet), got %q", rec.errs)
	}
	rec = &recorder{TB: t}
	Coverage(rec, rules.AreaRollout, nil)
	if len(rec.errs) != 1 {
		t.Fatalf("an area with no rule: %q", rec.errs)
	}
}

func TestInternalRefs(t *testing.T) {
	for _, s := range []string{"seed 003 §3-4", "Seed 003 splits", "the seed-000 incident", "seed 000's incident shape",
		"the seed incident", "a seed-incident snapshot", "(IL-0188)", "BRIEF §3", "ORACLE.md C9, §2", "ORACLE §4"} {
		if !InternalRef.MatchString(s) {
			t.Errorf("%q is not caught", s)
		}
	}
	for _, s := range []string{"their seed corpora run with make test", "pkg/model/oracle_test.go", "a brief pause",
		"incidents.md#grace-period-budget", "https://github.com/argoproj/argo-rollouts/issues/3941", "RD306 (IL mode)"} {
		if InternalRef.MatchString(s) {
			t.Errorf("%q is caught", s)
		}
	}
	rec := &recorder{TB: t}
	NoInternalRefs(rec, "README.md", "fine\nnot fine (IL-0139)\nfine")
	if len(rec.errs) != 1 || !strings.HasPrefix(rec.errs[0], "README.md:2 cites an internal document (\"IL-0\")") {
		t.Fatalf("%q", rec.errs)
	}
}
