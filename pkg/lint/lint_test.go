package lint

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

func cv(v upstream.Version) model.ControllerVersion {
	return model.ControllerVersion{Assumed: v, Exact: true, Source: model.SourceFlag}
}

func lintString(t testing.TB, yaml string, opt Options) *Report {
	docs, n, errs := Load([]string{"-"}, strings.NewReader(yaml))
	return Run(docs, n, errs, opt)
}

const minPodsOverReplicas = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: one, namespace: x}
spec:
  replicas: 1
  selector: {matchLabels: {app: one}}
  template: {metadata: {labels: {app: one}}, spec: {containers: [{name: a, image: i, readinessProbe: {httpGet: {path: /ready, port: 8080}}}]}}
  strategy:
    canary:
      minPodsPerReplicaSet: 2
      trafficRouting: {istio: {virtualService: {name: one}}}
      steps: [{setWeight: 50}]
`

func TestVersionNotes(t *testing.T) {
	r := lintString(t, minPodsOverReplicas, Options{Controller: cv("v1.10.2")})
	if len(r.Findings) != 1 || r.Findings[0].ID != "RD203" || r.Findings[0].Severity != diagnose.Info {
		t.Fatalf("findings %+v, want RD203 info on v1.10.2 (capped)", r.Findings)
	}
	notes := strings.Join(r.Findings[0].Versions, "; ")
	if !strings.Contains(notes, "v1.7.2: critical") || !strings.Contains(notes, "v1.9.3: critical") {
		t.Fatalf("version notes %q: older versions never become Healthy", notes)
	}
	r = lintString(t, minPodsOverReplicas, Options{Controller: cv("v1.8.2")})
	if r.Findings[0].Severity != diagnose.Critical || !strings.Contains(strings.Join(r.Findings[0].Versions, ";"), "v1.10.2: info") {
		t.Fatalf("v1.8.2: %+v", r.Findings[0])
	}
}

func TestSuppressionByConfigAndUnknownKinds(t *testing.T) {
	in := minPodsOverReplicas + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n"
	cfg := &Config{Path: "cfg.yaml", Ignore: []Ignore{{ID: "minpods-exceeds-replicas", Rollout: "o*", Namespace: "x", Reason: "r"}}}
	r := lintString(t, in, Options{Controller: cv("v1.8.2"), Config: cfg})
	if len(r.Findings) != 0 || len(r.Suppressed) != 1 || r.Suppressed[0].By != "cfg.yaml" || r.Suppressed[0].Reason != "r" {
		t.Fatalf("findings %+v suppressed %+v", r.Findings, r.Suppressed)
	}
	if r.Skipped["ConfigMap"] != 1 || r.Skipped["Widget"] != 1 || r.Objects != 3 {
		t.Fatalf("skipped %v objects %d", r.Skipped, r.Objects)
	}
	// A rule that does not match the namespace does not suppress.
	cfg.Ignore[0].Namespace = "y"
	if r := lintString(t, in, Options{Controller: cv("v1.8.2"), Config: cfg}); len(r.Findings) != 1 {
		t.Fatalf("namespace mismatch still suppressed: %+v", r.Suppressed)
	}
}

func TestSyntaxErrorKeepsOtherFiles(t *testing.T) {
	docs, n, errs := Load([]string{"testdata/rendered"}, nil)
	r := Run(docs, n, errs, Options{Controller: cv("v1.10.2")})
	if n != 3 || len(r.Errors) != 1 || r.Errors[0].Line == 0 || !strings.HasSuffix(r.Errors[0].File, "broken.yaml") || r.Rollouts != 3 {
		t.Fatalf("files %d errors %+v rollouts %d", n, r.Errors, r.Rollouts)
	}
}

// Field names are case-sensitive, as the API server reads them: a Rollout
// whose metadata key is misspelt has no name there and is refused, which
// lint says at its line instead of judging it as "Rollout default/a" at no
// line (found by FuzzLint); a misspelt key deeper down is not read.
func TestFieldNamesAreCaseSensitive(t *testing.T) {
	r := lintString(t, "apiVersion: v1\nkind: List\nitems:\n- apiVersion: argoproj.io/v1alpha1\n  kind: Rollout\n  mEtadata: {name: a}\n  spec: {strategy: {canary: {steps: [{setWeight: 100}]}}}\n", Options{Controller: cv("v1.9.3")})
	want := `Rollout without metadata.name: the API server refuses it (its key "mEtadata" is not metadata: field names are case-sensitive)`
	if len(r.Findings) != 0 || len(r.Errors) != 1 || r.Errors[0].Line != 4 || r.Errors[0].Message != want {
		t.Errorf("findings %+v errors %+v, want one error at line 4: %s", r.Findings, r.Errors, want)
	}
	// Replicas: 5 is not spec.replicas: the controller's default of 1 stays,
	// under minPodsPerReplicaSet 2.
	in := strings.Replace(minPodsOverReplicas, "  replicas: 1\n", "  Replicas: 5\n", 1)
	if !strings.Contains(in, "Replicas: 5") {
		t.Fatal("the fixture changed")
	}
	if r := lintString(t, in, Options{Controller: cv("v1.8.2")}); len(r.Findings) != 1 || r.Findings[0].ID != "RD203" {
		t.Errorf("findings %+v, want RD203 as for replicas 1 (a misspelt key is not read)", r.Findings)
	}
}

// FuzzLint feeds arbitrary input through the loader and the static rules:
// no panic, and every finding is located in the input.
func FuzzLint(f *testing.F) {
	f.Add([]byte(minPodsOverReplicas))
	f.Add([]byte("apiVersion: v1\nkind: List\nitems:\n- apiVersion: argoproj.io/v1alpha1\n  kind: Rollout\n  metadata: {name: a}\n  spec: {strategy: {canary: {steps: [{setWeight: 100}]}}, rollbackWindow: {revisions: 1}}\n"))
	f.Add([]byte("---\n# only a comment\n---\n{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"s\"}}"))
	for _, seed := range []string{"testdata/analysis/rd212-arg-unsupplied.yaml", "testdata/analysis/rd216-metric-invalid.yaml"} {
		if b, err := os.ReadFile(seed); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := lintString(t, string(data), Options{Controller: cv("v1.9.3")})
		for _, fd := range r.Findings {
			if fd.File != "-" || fd.Line < 1 {
				t.Fatalf("finding not located: %+v", fd)
			}
		}
		_ = r.SARIF("fuzz")
	})
}

// corpus renders n Rollouts with a Service and an HPA each, as helm template
// would, spread over 200 namespaces.
func corpus(n int) []byte { return corpusIn(n, 200) }

// corpusIn renders the corpus over nss namespaces.
func corpusIn(n, nss int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `---
# Source: app/templates/rollout.yaml
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: app-%[1]d, namespace: ns-%[2]d}
spec:
  replicas: %[3]d
  rollbackWindow: {revisions: 3}
  selector: {matchLabels: {app: app-%[1]d}}
  template: {metadata: {labels: {app: app-%[1]d}}, spec: {containers: [{name: a, image: "r/app:%[1]d"}]}}
  strategy:
    canary:
      canaryService: app-%[1]d-canary
      stableService: app-%[1]d-stable
      minPodsPerReplicaSet: 2
      trafficRouting: {istio: {virtualService: {name: app-%[1]d, routes: [primary]}}}
      steps: [{setWeight: 5}, {pause: {duration: 10s}}, {setWeight: %[4]d}]
---
apiVersion: v1
kind: Service
metadata: {name: app-%[1]d-stable, namespace: ns-%[2]d}
spec: {selector: {app: app-%[1]d}, ports: [{port: 80}]}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: app-%[1]d, namespace: ns-%[2]d}
spec:
  scaleTargetRef: {apiVersion: argoproj.io/v1alpha1, kind: Rollout, name: app-%[1]d}
  maxReplicas: %[5]d
`, i, i%nss, 2+i%40, []int{50, 100}[i%2], 10+i%300)
	}
	return b.Bytes()
}

// BenchmarkLint reports lint throughput on a generated corpus of 10,000
// Rollouts (30,000 manifests) in manifests per second: load, snapshot,
// static rules for every modeled version, and the report.
func BenchmarkLint(b *testing.B) {
	b.Run("200-namespaces", func(b *testing.B) { benchLint(b, corpusIn(10000, 200)) })
	// One namespace: every Rollout's view shares one snapshot, which made
	// lint quadratic before the snapshot computed its "now" once.
	b.Run("1-namespace", func(b *testing.B) { benchLint(b, corpusIn(10000, 1)) })
}

func benchLint(b *testing.B, data []byte) {
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	var r *Report
	for i := 0; i < b.N; i++ {
		docs, n, errs := Load([]string{"-"}, bytes.NewReader(data))
		r = Run(docs, n, errs, Options{Controller: cv("v1.10.2")})
	}
	b.StopTimer()
	if r.Rollouts != 10000 || r.Objects != 30000 {
		b.Fatalf("linted %d Rollouts, %d objects", r.Rollouts, r.Objects)
	}
	b.ReportMetric(float64(r.Objects)*float64(b.N)/b.Elapsed().Seconds(), "manifests/s")
}

// TestDeploymentsGetPodChecks: lint gives Deployments the static pod checks,
// except a Deployment a Rollout's workloadRef uses (its template is checked
// as the Rollout's).
func TestDeploymentsGetPodChecks(t *testing.T) {
	in := `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: web}}}
      containers:
      - name: app
        image: web:1
        readinessProbe: {httpGet: {path: /ready, port: 8080}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {selector: {app: web}, ports: [{port: 80}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: referenced, namespace: shop}
spec:
  replicas: 0
  selector: {matchLabels: {app: ref}}
  template:
    metadata: {labels: {app: ref}}
    spec: {containers: [{name: app, image: ref:1}]}
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: ref, namespace: shop}
spec:
  replicas: 1
  selector: {matchLabels: {app: ref}}
  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: referenced}
  strategy: {blueGreen: {activeService: ref}}
`
	r := lintString(t, in, Options{Controller: cv("v1.10.2")})
	got := map[string]bool{}
	for _, f := range r.Findings {
		got[f.Object+" "+f.ID] = true
	}
	// web: default 25% of 2 replicas rounds maxUnavailable down to 0 with
	// required anti-affinity (RD309); no preStop behind Service web (RD303);
	// no PDB for 2 replicas (RD310). The Rollout ref: the referenced
	// Deployment's template has no readiness probe (RD301), reported once.
	for _, want := range []string{"Deployment shop/web RD309", "Deployment shop/web RD303", "Deployment shop/web RD310", "Rollout shop/ref RD301"} {
		if !got[want] {
			t.Errorf("missing %s; got %v", want, got)
		}
	}
	if got["Deployment shop/referenced RD301"] || r.Deployments != 1 {
		t.Errorf("the workloadRef Deployment was linted on its own (deployments %d): %v", r.Deployments, got)
	}
}

// A Rollout with a field of the wrong type, or a number that overflows its
// field, is reported at its own file:line with the field's path; the other
// Rollouts of its namespace are still linted.
func TestWrongFieldTypes(t *testing.T) {
	good := "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: good, namespace: ns1}\nspec:\n  replicas: 20\n  rollbackWindow: {revisions: 3}\n  strategy: {canary: {steps: [{setWeight: 5}, {setWeight: 100}]}}\n"
	for bad, want := range map[string]string{
		`"abc"`:      "Rollout ns1/bad: spec.replicas: string where int32 is needed",
		"5000000000": "Rollout ns1/bad: spec.replicas: number 5000000000 where int32 is needed",
	} {
		in := good + "---\napiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: bad, namespace: ns1}\nspec:\n  replicas: " + bad + "\n"
		r := lintString(t, in, Options{Controller: cv("v1.10.2")})
		if len(r.Errors) != 1 || r.Errors[0].File != "-" || r.Errors[0].Line != 9 || r.Errors[0].Message != want {
			t.Errorf("replicas %s: errors %+v, want -:9 %q", bad, r.Errors, want)
		}
		if r.Rollouts != 1 || len(r.Findings) == 0 || r.Findings[0].Object != "Rollout ns1/good" {
			t.Errorf("replicas %s: the good Rollout was not linted: %d Rollouts, findings %+v", bad, r.Rollouts, r.Findings)
		}
	}
}

// A directory walk skips a FIFO named like a manifest (it would hang) and
// says so; skipping is not an error.
func TestLoadSkipsFIFOs(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "a-fifo.yaml"), 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ok.yaml"), []byte(minPodsOverReplicas), 0o644); err != nil {
		t.Fatal(err)
	}
	docs, n, errs := Load([]string{dir}, nil)
	r := Run(docs, n, errs, Options{Controller: cv("v1.10.2")})
	if n != 1 || len(r.Errors) != 0 || len(r.SkippedFiles) != 1 || !strings.Contains(r.SkippedFiles[0].Message, "named pipe") || r.Rollouts != 1 {
		t.Fatalf("files %d, errors %+v, skipped %+v, rollouts %d", n, r.Errors, r.SkippedFiles, r.Rollouts)
	}
}

// Input with nothing to lint says so: a CI gate that linted nothing is a
// broken pipeline.
func TestEmpty(t *testing.T) {
	for in, want := range map[string]string{
		"":                        "0 file(s) and no object in them",
		"# only a comment\n---\n": "1 file(s) and no object in them",
		"apiVersion: v1\nkind: Service\nmetadata: {name: a}\n": "1 object(s) in 1 file(s), none a Rollout or Deployment",
		minPodsOverReplicas: "",
	} {
		r := lintString(t, in, Options{Controller: cv("v1.10.2")})
		if in == "" {
			r = Run(nil, 0, nil, Options{})
		}
		if got := r.Empty(); got != want {
			t.Errorf("Empty(%q) = %q, want %q", in, got, want)
		}
	}
}

// RD220 is located at the Deployment a workloadRef names (its replicas
// field needs the edit), and names the Rollout; a Deployment at 0 is quiet.
func TestWorkloadRefDeploymentReplicasLocated(t *testing.T) {
	deploy := func(replicas string) string {
		return `apiVersion: apps/v1
kind: Deployment
metadata: {name: app, namespace: shop}
spec:` + replicas + `
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers: [{name: app, image: "app:1", readinessProbe: {httpGet: {path: /ready, port: 8080}}}]
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: app, namespace: shop}
spec:
  replicas: 5
  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: app, scaleDown: onsuccess}
  strategy: {canary: {steps: [{setWeight: 20}, {pause: {}}]}}
`
	}
	r := lintString(t, deploy(""), Options{Controller: cv("v1.10.2")})
	var got []Finding
	for _, f := range r.Findings {
		if f.ID == "RD220" {
			got = append(got, f)
		}
	}
	if len(got) != 1 || got[0].Line != 1 || got[0].Object != "Deployment shop/app (used by Rollout shop/app)" ||
		!strings.Contains(got[0].Message, "leaves replicas unset (1)") || !strings.Contains(got[0].Message, "scaleDown onsuccess") {
		t.Errorf("RD220 findings %+v, want one at line 1 about Deployment shop/app", got)
	}
	r = lintString(t, deploy("\n  replicas: 0"), Options{Controller: cv("v1.10.2")})
	for _, f := range r.Findings {
		if f.ID == "RD220" {
			t.Errorf("RD220 at replicas 0: %+v", f)
		}
	}
}

// RD221 reads the HorizontalPodAutoscaler from the same manifests as the
// Rollout (a chart renders both): memory on a routed canary without
// dynamicStableScale fires, with dynamicStableScale it does not.
func TestAutoscalerOnRoutedCanary(t *testing.T) {
	docs := func(dss string) string {
		return `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: app, namespace: shop}
spec:
  replicas: 10
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers: [{name: app, image: "app:1", readinessProbe: {httpGet: {path: /ready, port: 8080}}}]
  strategy:
    canary:` + dss + `
      canaryService: app-canary
      stableService: app-stable
      trafficRouting: {nginx: {stableIngress: app}}
      steps: [{setWeight: 20}, {pause: {}}, {setWeight: 65}, {pause: {}}]
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: app, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: argoproj.io/v1alpha1, kind: Rollout, name: app}
  minReplicas: 10
  maxReplicas: 42
  metrics:
  - type: Resource
    resource: {name: memory, target: {type: Utilization, averageUtilization: 60}}
`
	}
	find := func(r *Report) *Finding {
		for i := range r.Findings {
			if r.Findings[i].ID == "RD221" {
				return &r.Findings[i]
			}
		}
		return nil
	}
	f := find(lintString(t, docs(""), Options{Controller: cv("v1.10.2")}))
	if f == nil || !strings.Contains(f.Message, "at setWeight 65, this Rollout's largest") || !strings.Contains(f.Message, "between 61% and 90% of its target") {
		t.Errorf("RD221 on a memory HPA of a routed canary: %+v", f)
	}
	if f := find(lintString(t, docs("\n      dynamicStableScale: true"), Options{Controller: cv("v1.10.2")})); f != nil {
		t.Errorf("RD221 with dynamicStableScale: %+v", f)
	}
}
