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
