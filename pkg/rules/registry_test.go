package rules

import (
	"strings"
	"testing"
)

type ctx struct{ calls []string }

func check(id string) Check[ctx] {
	return func(c *ctx, r *Rule) []Finding {
		c.calls = append(c.calls, id)
		return []Finding{r.NewFinding(id + " fired")}
	}
}

const twoRules = `
- id: RD902
  name: second-rule
  title: The second
  severity: warning
  scope: static
  why: Because.
  remedy: Fix it.
- id: RD901
  name: first-rule
  title: The first
  severity: critical
  scope: live
  why: >-
    Folded
    prose.
  remedy: Fix it.
  escape: undo
  facts: [tr.reverse-loop]
  sources: [incidents.md#rollback-within-the-window, 'https://github.com/argoproj/argo-rollouts/issues/3941']
`

func TestNewSetReadsProseAndRunsInIDOrder(t *testing.T) {
	s, err := newSet(AreaPods, []byte(twoRules), map[string]Check[ctx]{"RD901": check("RD901"), "RD902": check("RD902")})
	if err != nil {
		t.Fatal(err)
	}
	rs := s.Rules()
	if len(rs) != 2 || rs[0].ID != "RD901" || rs[0].Area != AreaPods || rs[0].Why != "Folded prose." || rs[0].Severity != Critical ||
		rs[0].Scope != Live || rs[0].Escape != "undo" || len(rs[0].Facts) != 1 || len(rs[0].Sources) != 2 || rs[0].Sources[0] != "incidents.md#rollback-within-the-window" {
		t.Fatalf("%+v", rs)
	}
	c := &ctx{}
	fs := s.Run(c, func(r *Rule) bool { return false })
	if strings.Join(c.calls, ",") != "RD901,RD902" || len(fs) != 2 || fs[0].Remediation != "Fix it." || fs[0].Escape != "undo" {
		t.Fatalf("calls %v findings %+v", c.calls, fs)
	}
	c = &ctx{}
	s.Run(c, func(r *Rule) bool { return r.Scope == Live })
	if strings.Join(c.calls, ",") != "RD902" {
		t.Fatalf("skip: calls %v", c.calls)
	}
}

// TestRegistrationFailsLoudly: every way prose and checks can disagree is an
// error, and Register turns it into a panic.
func TestRegistrationFailsLoudly(t *testing.T) {
	both := map[string]Check[ctx]{"RD901": check("RD901"), "RD902": check("RD902")}
	for _, tc := range []struct {
		name, prose string
		checks      map[string]Check[ctx]
		want        string
	}{
		{"prose without a check", twoRules, map[string]Check[ctx]{"RD901": check("RD901")}, "RD902 second-rule has prose but no check"},
		{"check without prose", twoRules, map[string]Check[ctx]{"RD901": check("RD901"), "RD902": check("RD902"), "RD903": check("RD903")}, "RD903 has a check but no prose"},
		{"duplicate ID", twoRules + strings.Replace(twoRules[:strings.Index(twoRules, "- id: RD901")], "second-rule", "third-rule", 1), both, "RD902: ID already used"},
		{"duplicate name", strings.Replace(twoRules, "first-rule", "second-rule", 1), both, "name second-rule already used"},
		{"unknown field", strings.Replace(twoRules, "  escape: undo", "  escpae: undo", 1), both, `field escpae not found`},
		{"area is not prose", strings.Replace(twoRules, "  escape: undo", "  area: pods", 1), both, `field area not found`},
		{"repeated field", strings.Replace(twoRules, "  escape: undo", "  escape: undo\n  escape: retry", 1), both, "escape"},
		{"unknown severity", strings.Replace(twoRules, "severity: warning", "severity: major", 1), both, `unknown severity "major"`},
		{"no severity", strings.Replace(twoRules, "severity: warning", "severity: none", 1), both, "RD902: no severity"},
		{"bad scope", strings.Replace(twoRules, "scope: static", "scope: offline", 1), both, `scope "offline"`},
		{"no why", strings.Replace(twoRules, "why: Because.", "why: ''", 1), both, "RD902: no why"},
		{"bad ID", strings.Replace(twoRules, "RD902", "RD9002", 1), map[string]Check[ctx]{"RD901": check("RD901"), "RD9002": check("RD9002")}, `id "RD9002"`},
		{"bad name", strings.Replace(twoRules, "second-rule", "Second rule", 1), both, "not kebab-case"},
		{"empty", "", nil, "no rule"},
		{"source users cannot open", strings.Replace(twoRules, "[incidents.md#rollback-within-the-window,", "[seed 000 §1,", 1), both, `RD901: source "seed 000 §1" is neither`},
		{"source with a path", strings.Replace(twoRules, "[incidents.md#", "[docs/incidents.md#", 1), both, `source "docs/incidents.md#rollback-within-the-window"`},
		{"plain http source", strings.Replace(twoRules, "'https://", "'http://", 1), both, `source "http://github.com`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newSet(AreaRollout, []byte(tc.prose), tc.checks)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			defer func() {
				if p := recover(); p == nil || !strings.Contains(p.(string), tc.want) {
					t.Fatalf("Register did not panic with %q: %v", tc.want, p)
				}
			}()
			Register(AreaRollout, []byte(tc.prose), tc.checks)
		})
	}
}

// TestIDsAreUniqueAcrossAreas: a second area cannot reuse an ID or a name.
func TestIDsAreUniqueAcrossAreas(t *testing.T) {
	g := &registry{}
	first, err := newSet(AreaRollout, []byte(twoRules), map[string]Check[ctx]{"RD901": check("RD901"), "RD902": check("RD902")})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.add(first.rules); err != nil {
		t.Fatal(err)
	}
	other := strings.NewReplacer("RD902", "RD903", "second-rule", "third-rule").Replace(twoRules)
	second, err := newSet(AreaPods, []byte(other), map[string]Check[ctx]{"RD901": check("RD901"), "RD903": check("RD903")})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.add(second.rules); err == nil || !strings.Contains(err.Error(), "RD901: ID already used by RD901 first-rule (rollout rules)") {
		t.Fatalf("got %v", err)
	}
	if r, ok := g.byID("FIRST-RULE"); !ok || r.ID != "RD901" {
		t.Fatalf("byID by name: %v %v", r, ok)
	}
	if r, ok := g.byID("rd902"); !ok || r.Name != "second-rule" {
		t.Fatalf("byID by lower-case ID: %v %v", r, ok)
	}
	if _, ok := g.byID("RD999"); ok {
		t.Fatal("found RD999")
	}
}

func TestSeverity(t *testing.T) {
	for _, s := range []Severity{Info, Warning, Critical} {
		b, err := s.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var back Severity
		if err := back.UnmarshalJSON(b); err != nil || back != s {
			t.Errorf("%s: %s → %v %v", s, b, back, err)
		}
	}
	if s, err := ParseSeverity("none"); s != 0 || err != nil {
		t.Errorf("none: %v %v", s, err)
	}
	if _, err := ParseSeverity("major"); err == nil {
		t.Error("major parsed")
	}
	fs := []Finding{{ID: "RD2", Severity: Info}, {ID: "RD3", Severity: Critical, Message: "a"}, {ID: "RD1", Severity: Info}, {ID: "RD3", Severity: Critical, Message: "b"}}
	Sort(fs)
	var got []string
	for _, f := range fs {
		got = append(got, f.ID+f.Message)
	}
	if strings.Join(got, ",") != "RD3a,RD3b,RD1,RD2" || Worst(fs) != Critical || Worst(nil) != 0 {
		t.Errorf("sorted %v, worst %s", got, Worst(fs))
	}
}
