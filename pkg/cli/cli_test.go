package cli

import (
	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"
	"k8s.io/klog/v2"

	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/explain"
)

func runCLI(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	in := bytes.NewBufferString(stdin)
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	root := NewRoot(genericiooptions.IOStreams{In: in, Out: out, ErrOut: errOut})
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), errOut.String() + errString(err), Code(err)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

var example = exampletest.Path(exampletest.Incident)

func TestDiagnoseExampleHuman(t *testing.T) {
	out, errOut, code := runCLI(t, "", "diagnose", "-f", example, "--color", "never")
	if code != ExitFindings {
		t.Fatalf("exit %d, want %d (critical findings); stderr %s", code, ExitFindings, errOut)
	}
	for _, want := range []string{
		"stable 20/20 available ← 0%   canary 2/20 available ← 100%",
		"RD101 100% of traffic on 2 of 20 pods",
		"RD201", "RD103",
		"controller v1.8.2 (read from the image tag of argo-rollouts/argo-rollouts)",
		"next pass: canary 100% — walks back to the last setWeight",
		"argo-rollouts v1.8.2 rollout/trafficrouting.go:247",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("ANSI escapes with --color never")
	}
}

func TestDiagnoseJSONIsVersionedAndStable(t *testing.T) {
	out1, _, _ := runCLI(t, "", "diagnose", "-f", example, "-o", "json")
	data, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	out2, _, _ := runCLI(t, string(data), "diagnose", "-f", "-", "-o", "json")
	var a, b map[string]interface{}
	if err := json.Unmarshal([]byte(out1), &a); err != nil {
		t.Fatalf("json: %v\n%s", err, out1)
	}
	if err := json.Unmarshal([]byte(out2), &b); err != nil {
		t.Fatal(err)
	}
	if a["apiVersion"] != "rolloutdoctor.io/v1alpha1" || a["kind"] != "Diagnosis" {
		t.Fatalf("not a versioned document: %v %v", a["apiVersion"], a["kind"])
	}
	delete(a, "source")
	delete(b, "source")
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if !bytes.Equal(ja, jb) {
		t.Fatalf("file and stdin give different reports")
	}
	tr := a["traffic"].(map[string]interface{})
	if tr["nextWeight"].(float64) != 100 || tr["canaryAvailable"].(float64) != 2 {
		t.Fatalf("traffic = %v", tr)
	}
}

func TestFailOnAndVersionOverride(t *testing.T) {
	_, _, code := runCLI(t, "", "diagnose", "-f", example, "--fail-on", "none", "-o", "json")
	if code != ExitOK {
		t.Fatalf("--fail-on none: exit %d", code)
	}
	out, _, _ := runCLI(t, "", "diagnose", "-f", example, "--controller-version", "v1.9.1", "-o", "json")
	var rep struct {
		Controller struct {
			Assumed string `json:"assumed"`
			Source  string `json:"source"`
			Exact   bool   `json:"exact"`
		} `json:"controller"`
		Findings []struct{ ID string } `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Controller.Assumed != "v1.9.3" || rep.Controller.Source != "flag" || rep.Controller.Exact {
		t.Fatalf("controller = %+v, want v1.9.3 from flag, not exact", rep.Controller)
	}
	found := false
	for _, f := range rep.Findings {
		found = found || f.ID == "RD109"
	}
	if !found {
		t.Fatalf("approximate version not reported (RD109): %+v", rep.Findings)
	}
}

func TestBadInputIsOneLineError(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("apiVersion: v1\nkind: List\nitems:\n  - [unclosed\n"), 0o644)
	cases := map[string][]string{
		"malformed":   {"diagnose", "-f", bad},
		"missing":     {"diagnose", "-f", filepath.Join(dir, "nope.yaml")},
		"no rollout":  {"diagnose", "-f", "-"},
		"bad output":  {"diagnose", "-f", example, "-o", "xml"},
		"bad fail-on": {"diagnose", "-f", example, "--fail-on", "loud"},
		"unknown id":  {"explain", "RD999"},
	}
	for name, args := range cases {
		stdin := ""
		if name == "no rollout" {
			stdin = "apiVersion: v1\nkind: Service\nmetadata:\n  name: x\n"
		}
		_, errOut, code := runCLI(t, stdin, args...)
		if code < 2 {
			t.Errorf("%s: exit %d, want ≥ 2", name, code)
		}
		if strings.Count(strings.TrimSpace(errOut), "\n") > 0 || errOut == "" {
			t.Errorf("%s: want one line, got %q", name, errOut)
		}
	}
}

func TestRulesDocIsCurrent(t *testing.T) {
	var b bytes.Buffer
	if err := explain.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile("../../docs/rules.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, b.Bytes()) {
		t.Fatal("docs/rules.md is stale: run `make docs`")
	}
}

func TestExplainLongForm(t *testing.T) {
	out, _, code := runCLI(t, "", "explain", "RD201")
	if code != 0 || !strings.Contains(out, "argo-rollouts v1.7.2 rollout/trafficrouting.go:219") || !strings.Contains(out, "argo-rollouts v1.10.2 rollout/trafficrouting.go:252") {
		t.Fatalf("explain RD201 lacks per-version citations:\n%s", out)
	}
}

var update = flag.Bool("update", false, "rewrite golden files (then read every changed line before committing)")

// TestGoldenHuman compares the human output for the bundled incident with
// golden files that were read line by line: any change to wording, order or
// numbers shows up in review.
func TestGoldenHuman(t *testing.T) {
	lintArgs := []string{"lint", "-f", "../lint/testdata/rendered", "--config", "../lint/testdata/config.yaml", "--color", "never"}
	for name, tc := range map[string]struct {
		args []string
		code int // findings are exit 1; lint's broken.yaml makes it 2
	}{
		"diagnose-example":        {[]string{"diagnose", "-f", example, "--color", "never"}, ExitFindings},
		"escape-example":          {[]string{"escape", "-f", example, "--color", "never"}, ExitOK},
		"diagnose-analysis":       {[]string{"diagnose", "-f", exampletest.Path(exampletest.AnalysisAbort), "--color", "never"}, ExitFindings},
		"diagnose-analysis-full":  {[]string{"diagnose", "-f", exampletest.Path(exampletest.AnalysisAbort), "--color", "never", "--analysis"}, ExitFindings},
		"diagnose-controller-log": {[]string{"diagnose", "-f", "testdata/incident-controller-log.yaml", "--color", "never"}, ExitFindings},
		"diagnose-bluegreen":      {[]string{"diagnose", "-f", exampletest.Path(exampletest.BlueGreen), "--color", "never"}, ExitOK},
		"escape-bluegreen":        {[]string{"escape", "-f", exampletest.Path(exampletest.BlueGreen), "--color", "never"}, ExitOK},
		"diagnose-card":           {[]string{"diagnose", "-f", example, "-o", "markdown"}, ExitFindings},
		"escape-card":             {[]string{"escape", "-f", example, "-o", "markdown"}, ExitOK},
		"diagnose-card-analysis":  {[]string{"diagnose", "-f", exampletest.Path(exampletest.AnalysisAbort), "-o", "markdown"}, ExitFindings},
		"escape-card-bluegreen":   {[]string{"escape", "-f", exampletest.Path(exampletest.BlueGreen), "-o", "markdown"}, ExitOK},
		"timeline-record":         {[]string{"timeline", "-f", exampletest.Path(exampletest.IncidentRecord), "--color", "never"}, ExitOK},
		"timeline-history":        {[]string{"timeline", "-f", "../timeline/testdata/history.json", "--color", "never"}, ExitOK},
		"lint-human":              {lintArgs, ExitError},
		"lint-json":               {append(append([]string{}, lintArgs...), "-o", "json"), ExitError},
		"lint-sarif":              {append(append([]string{}, lintArgs...), "-o", "sarif"), ExitError},
		"pods-example":            {[]string{"pods", "deployment/web", "-f", exampletest.Path(exampletest.PodsWeb), "--p99", "40s", "--lb-interval", "2s", "--lb-fall", "2", "--color", "never"}, ExitFindings},
		"pods-rollout":            {[]string{"pods", "-f", example, "--color", "never"}, ExitOK}, // warnings only: hygiene, not an exit 1
	} {
		out, errOut, code := runCLI(t, "", tc.args...)
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d (stderr %q)", name, code, tc.code, errOut)
		}
		path := filepath.Join("testdata", name+".golden")
		if *update {
			if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if out != string(want) {
			t.Errorf("%s differs from %s (stderr %q); if intended, run go test ./pkg/cli -run Golden -update and review the diff\ngot:\n%s", name, path, errOut, out)
		}
	}
}

func TestSeveralRolloutsNeedAName(t *testing.T) {
	two := "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: a, namespace: x}\nspec: {strategy: {canary: {}}}\n---\n" +
		"apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: b, namespace: x}\nspec: {strategy: {canary: {}}}\n"
	_, errOut, code := runCLI(t, two, "diagnose", "-f", "-")
	if code != ExitError || !strings.Contains(errOut, "a") || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
		t.Fatalf("exit %d, stderr %q: want one line naming the choices", code, errOut)
	}
	out, _, code := runCLI(t, two, "diagnose", "b", "-f", "-", "-o", "json")
	if code > 1 || !strings.Contains(out, `"name": "b"`) {
		t.Fatalf("naming one of them: exit %d\n%s", code, out)
	}
}

func TestUnreachableCluster(t *testing.T) {
	_, errOut, code := runCLI(t, "", "diagnose", "checkout-api", "-n", "shop", "--server", "https://127.0.0.1:1", "--insecure-skip-tls-verify", "--request-timeout", "2s")
	if code != ExitError || !strings.Contains(errOut, "cannot reach the API server at https://127.0.0.1:1") || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

func TestLintExitCodesAndStdin(t *testing.T) {
	// A syntax error in one file: the others are linted, exit 2, stderr names file:line.
	out, errOut, code := runCLI(t, "", "lint", "-f", "../lint/testdata/rendered", "--color", "never")
	if code != ExitError || !strings.Contains(errOut, "broken.yaml:11:") || !strings.Contains(out, "RD201") {
		t.Fatalf("exit %d, stderr %q\n%s", code, errOut, out)
	}
	// Clean input on stdin: exit 0; findings: exit 1; --fail-on none: 0.
	clean, err := os.ReadFile("../lint/testdata/rendered/batch.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runCLI(t, string(clean), "lint", "-f", "-", "--controller-version", "v1.10.2"); code != ExitOK {
		t.Fatalf("clean input: exit %d %s", code, errOut)
	}
	if _, _, code := runCLI(t, string(clean), "lint", "-f", "-", "--controller-version", "v1.8.2", "--fail-on", "info"); code != ExitOK {
		t.Fatalf("annotation-suppressed RD203 must not count: exit %d", code)
	}
	checkout, _ := os.ReadFile("../lint/testdata/rendered/checkout.yaml")
	if _, _, code := runCLI(t, string(checkout), "lint", "-f", "-"); code != ExitFindings {
		t.Fatalf("critical finding: exit %d, want 1", code)
	}
	if _, _, code := runCLI(t, string(checkout), "lint", "-f", "-", "--fail-on", "none"); code != ExitOK {
		t.Fatalf("--fail-on none: exit %d", code)
	}
	if _, errOut, code := runCLI(t, "", "lint"); code != ExitUsage || !strings.Contains(errOut, "-f FILE") {
		t.Fatalf("no input: exit %d %q", code, errOut)
	}
}

func TestPodsCommand(t *testing.T) {
	web := exampletest.Path(exampletest.PodsWeb)
	out, _, code := runCLI(t, "", "pods", "-f", web, "-o", "json")
	if code != ExitFindings || !strings.Contains(out, `"kind": "PodCheck"`) || !strings.Contains(out, `"id": "RD322"`) || !strings.Contains(out, `"workloadKind": "Deployment"`) {
		t.Fatalf("pods -f (the header names the Deployment): exit %d\n%s", code, out)
	}
	// A name that is not in the file; a kind pods does not check; flags that
	// make no sense alone; an unreachable cluster: one line each.
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"pods", "nosuch", "-f", web}, ExitError, `no Rollout or Deployment "nosuch"`},
		{[]string{"pods", "statefulset/db", "-f", web}, ExitUsage, "checks a Rollout or a Deployment"},
		{[]string{"pods", "deployment/web", "-f", web, "--lb-interval", "2s"}, ExitUsage, "--lb-interval and --lb-fall together"},
		{[]string{"pods", "deployment/web", "-f", web, "--p99", "-3s"}, ExitUsage, "must not be negative"},
		{[]string{"pods", "web", "-n", "shop", "--server", "https://127.0.0.1:1", "--insecure-skip-tls-verify", "--request-timeout", "2s"}, ExitError, "cannot reach the API server at https://127.0.0.1:1"},
	} {
		_, errOut, code := runCLI(t, "", tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.says) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d saying %q in one line", tc.args, code, errOut, tc.code, tc.says)
		}
	}
	// The grace calculator's numbers reach the JSON.
	out, _, _ = runCLI(t, "", "pods", "deployment/web", "-f", web, "-o", "json", "--p99", "40s", "--lb-interval", "2s", "--lb-fall", "2")
	if !strings.Contains(out, `"terminationGracePeriodSeconds": 83`) || !strings.Contains(out, `"drainTimeoutSeconds": 48`) {
		t.Errorf("grace calculator missing from JSON:\n%s", out)
	}
}

// lint on input with nothing to lint fails (exit 2, one line saying so)
// unless --allow-empty; so does every other command on an empty -f.
func TestLintEmptyInput(t *testing.T) {
	_, errOut, code := runCLI(t, "", "lint", "-f", "-")
	if code != ExitError || !strings.Contains(errOut, "nothing was linted") || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
		t.Errorf("empty stdin: exit %d, stderr %q", code, errOut)
	}
	if _, errOut, code := runCLI(t, "", "lint", "-f", "-", "--allow-empty"); code != ExitOK {
		t.Errorf("--allow-empty: exit %d, stderr %q", code, errOut)
	}
}

// kubectl's -v works: client-go logs each request with its status and time
// from -v=6.
func TestVerbosityFlag(t *testing.T) {
	root := NewRoot(genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}})
	if root.PersistentFlags().Lookup("v") == nil || root.PersistentFlags().Lookup("vmodule") == nil {
		t.Fatal("-v and --vmodule are missing")
	}
	if err := root.PersistentFlags().Set("v", "6"); err != nil {
		t.Fatal(err)
	}
	defer root.PersistentFlags().Set("v", "0")
	if !klog.V(6).Enabled() {
		t.Fatal("-v=6 does not reach klog")
	}
}

// TestCardsKeepToChatMarkdown checks what makes a card paste well into a
// chat tool as into an issue: no headings, tables or HTML, a code block
// only around a command, and every link to a cited line of the modeled
// controller version at its release tag.
func TestCardsKeepToChatMarkdown(t *testing.T) {
	link := regexp.MustCompile(`\]\((https://[^)]*)\)`)
	cited := regexp.MustCompile(`^https://github\.com/argoproj/argo-rollouts/blob/(v[0-9.]+)/[a-z0-9_/.-]+\.go#L[0-9]+$`)
	for _, args := range [][]string{
		{"diagnose", "-f", example, "-o", "markdown"},
		{"escape", "-f", example, "-o", "markdown"},
		{"diagnose", "-f", exampletest.Path(exampletest.BlueGreen), "-o", "markdown"},
	} {
		out, errOut, code := runCLI(t, "", args...)
		if code > ExitFindings {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		ver := regexp.MustCompile(`controller (v[0-9.]+) \(`).FindStringSubmatch(out)
		if ver == nil {
			t.Fatalf("%v: the card names no controller version:\n%s", args, out)
		}
		inBlock := false
		for _, line := range strings.Split(out, "\n") {
			trim := strings.TrimSpace(line)
			switch {
			case strings.HasPrefix(trim, "```"):
				inBlock = !inBlock
			case inBlock && !strings.HasPrefix(trim, "kubectl argo rollouts "):
				t.Errorf("%v: a code block holds %q, not a command", args, trim)
			case strings.HasPrefix(trim, "#"), strings.HasPrefix(trim, "|"), strings.Contains(trim, "</"):
				t.Errorf("%v: %q is a heading, a table or HTML", args, trim)
			}
		}
		links := link.FindAllStringSubmatch(out, -1)
		if len(links) == 0 {
			t.Errorf("%v: no citation links:\n%s", args, out)
		}
		for _, l := range links {
			m := cited.FindStringSubmatch(l[1])
			if m == nil || m[1] != ver[1] {
				t.Errorf("%v: link %s is not a line of argo-rollouts %s", args, l[1], ver[1])
			}
		}
	}
}
