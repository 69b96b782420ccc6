package lint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
)

// lineOf is the line lint locates an object at in a fixture: the first
// line of its document (its apiVersion), found from its kind and name.
func lineOf(t *testing.T, file, kind, name string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	start := 0
	for i, l := range lines {
		if strings.HasPrefix(l, "apiVersion:") {
			start = i + 1
		}
		if strings.HasPrefix(l, "kind: "+kind) && i+1 < len(lines) && strings.Contains(lines[i+1], "name: "+name) {
			return start
		}
	}
	t.Fatalf("%s: no %s %s", file, kind, name)
	return 0
}

func lintFile(t *testing.T, file string) *Report {
	t.Helper()
	docs, n, errs := Load([]string{file}, nil)
	return Run(docs, n, errs, Options{Controller: cv("v1.10.2")})
}

func analysisFindings(r *Report) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.ID >= "RD211" && f.ID <= "RD218" {
			out = append(out, f)
		}
	}
	return out
}

// TestAnalysisGoodFixture: Rollouts of both strategies and their templates,
// a ClusterAnalysisTemplate shared by two namespaces, and no analysis
// finding.
func TestAnalysisGoodFixture(t *testing.T) {
	r := lintFile(t, "testdata/analysis/good.yaml")
	if fs := analysisFindings(r); len(fs) != 0 {
		t.Errorf("findings on the good fixture: %+v", fs)
	}
	if r.Rollouts != 3 || r.AnalysisTemplates != 3 || len(r.Errors) != 0 || len(r.Skipped) != 0 {
		t.Errorf("rollouts %d, templates %d, errors %+v, skipped %v", r.Rollouts, r.AnalysisTemplates, r.Errors, r.Skipped)
	}
	if !strings.Contains(r.Summary(), "3 AnalysisTemplate(s)") {
		t.Errorf("summary %q", r.Summary())
	}
}

// TestAnalysisFixtures: one fixture per rule; each finding is located at
// the object to edit — the Rollout, or the template the finding is about.
func TestAnalysisFixtures(t *testing.T) {
	for _, c := range []struct {
		file, id   string
		kind, name string // the object the finding is located at
		object     string // the report's object, as a prefix
		sev        diagnose.Severity
		says       string
	}{
		{"rd211-template-missing.yaml", "RD211", "Rollout", "web", "Rollout shop/web", diagnose.Warning, "names AnalysisTemplate sucess-rate, which is not in the input although the input has AnalysisTemplate success-rate"},
		{"rd211-template-missing.yaml", "RD211", "Rollout", "web", "Rollout shop/web", diagnose.Info, "names ClusterAnalysisTemplate error-rate, which is not in the input (it holds no ClusterAnalysisTemplate)"},
		{"rd212-arg-unsupplied.yaml", "RD212", "Rollout", "web", "Rollout shop/web", diagnose.Critical, "needs argument service, which has no default and the Rollout does not pass"},
		{"rd212-arg-unsupplied.yaml", "RD212", "AnalysisTemplate", "success-rate", "AnalysisTemplate shop/success-rate (used by Rollout shop/web)", diagnose.Critical, "uses {{args.namespace}}, which is not one of its own args"},
		{"rd213-arg-ignored.yaml", "RD213", "Rollout", "web", "Rollout shop/web", diagnose.Warning, "did you mean threshold?"},
		{"rd214-passes-on-no-data.yaml", "RD214", "AnalysisTemplate", "error-rate", "AnalysisTemplate shop/error-rate (used by Rollouts shop/web, shop/cart)", diagnose.Warning, "passes when the value is NaN"},
		{"rd215-limit-unreachable.yaml", "RD215", "AnalysisTemplate", "success-rate", "AnalysisTemplate shop/success-rate", diagnose.Warning, "has failureLimit 3 and count 3"},
		{"rd216-metric-invalid.yaml", "RD216", "ClusterAnalysisTemplate", "error-rate", "ClusterAnalysisTemplate error-rate (used by Rollout shop/web)", diagnose.Critical, "interval must be specified when count > 1"},
		{"rd217-runs-indefinitely.yaml", "RD217", "AnalysisTemplate", "success-rate", "AnalysisTemplate shop/success-rate", diagnose.Critical, "has interval 1m and no count"},
		{"rd218-background-window.yaml", "RD218", "Rollout", "web", "Rollout shop/web", diagnose.Warning, "can fail 10m after it starts at the earliest"},
	} {
		t.Run(c.file+"/"+c.says, func(t *testing.T) {
			file := filepath.Join("testdata/analysis", c.file)
			r := lintFile(t, file)
			line := lineOf(t, file, c.kind, c.name)
			var got *Finding
			for i, f := range r.Findings {
				if f.ID == c.id && strings.Contains(f.Message, c.says) {
					got = &r.Findings[i]
				}
			}
			if got == nil {
				t.Fatalf("no %s saying %q; findings: %+v", c.id, c.says, r.Findings)
			}
			if got.File != file || got.Line != line || !strings.HasPrefix(got.Object, c.object) || got.Severity != c.sev {
				t.Errorf("%s at %s:%d on %q (%s), want %s:%d on %q (%s)", c.id, got.File, got.Line, got.Object, got.Severity, file, line, c.object, c.sev)
			}
			if len(r.Errors) != 0 {
				t.Errorf("errors: %+v", r.Errors)
			}
			// Every modeled version raises these alike: no version notes
			// (two findings of one rule with different severities on one
			// Rollout are not told apart as a version difference).
			if len(got.Versions) != 0 {
				t.Errorf("version notes %v", got.Versions)
			}
		})
	}
}

// TestAnalysisTemplateSuppression: a finding about a template is
// suppressed by the template's own annotation, and by the Rollout's.
func TestAnalysisTemplateSuppression(t *testing.T) {
	b, err := os.ReadFile("testdata/analysis/rd215-limit-unreachable.yaml")
	if err != nil {
		t.Fatal(err)
	}
	on := func(name string) string {
		return strings.Replace(string(b), "metadata: {name: "+name+", namespace: shop}",
			"metadata: {name: "+name+", namespace: shop, annotations: {rolloutdoctor.io/ignore: RD215, rolloutdoctor.io/ignore-reason: canary judged by hand}}", 1)
	}
	for _, in := range []string{on("success-rate"), on("web")} {
		r := lintString(t, in, Options{Controller: cv("v1.10.2")})
		if len(analysisFindings(r)) != 0 || len(r.Suppressed) != 1 || r.Suppressed[0].ID != "RD215" || r.Suppressed[0].Reason != "canary judged by hand" {
			t.Errorf("findings %+v suppressed %+v", r.Findings, r.Suppressed)
		}
	}
}

// TestAnalysisTemplateThatDoesNotDecode: reported at its own file:line;
// the Rollout is still linted, and not told the template is missing.
func TestAnalysisTemplateThatDoesNotDecode(t *testing.T) {
	b, err := os.ReadFile("testdata/analysis/rd215-limit-unreachable.yaml")
	if err != nil {
		t.Fatal(err)
	}
	in := strings.Replace(string(b), "count: 3", "count: [3]", 1)
	r := lintString(t, in, Options{Controller: cv("v1.10.2")})
	if len(r.Errors) != 1 || r.Errors[0].Line != 17 || !strings.Contains(r.Errors[0].Message, "AnalysisTemplate shop/success-rate") {
		t.Fatalf("errors %+v", r.Errors)
	}
	if r.Rollouts != 1 || len(analysisFindings(r)) != 0 {
		t.Errorf("rollouts %d, analysis findings %+v", r.Rollouts, analysisFindings(r))
	}
}

// TestBlueGreenGetsRolloutRules: a blue-green Rollout gets the static
// Rollout rules, not only the pod checks (RD210 on its scale-down delay,
// RD217 on its pre-promotion analysis).
func TestBlueGreenGetsRolloutRules(t *testing.T) {
	b, err := os.ReadFile("testdata/analysis/good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	in := strings.Replace(string(b), "      previewService: api-preview\n", "      previewService: api-preview\n      scaleDownDelaySeconds: 10\n", 1)
	in = strings.Replace(in, "    count: 3\n    interval: 10s\n", "    interval: 10s\n", 1)
	r := lintString(t, in, Options{Controller: cv("v1.10.2")})
	got := map[string]bool{}
	for _, f := range r.Findings {
		got[f.ID] = true
	}
	if !got["RD210"] || !got["RD217"] {
		t.Errorf("findings %v, want RD210 and RD217", got)
	}
}
