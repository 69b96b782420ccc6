package podcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules/rulestest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// readFixture decodes one YAML file of testdata/pods.
func readFixture(t *testing.T, name string) *snapshot.Snapshot {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "pods", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := snapshot.Read(name, f)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// overlay replaces base objects by kind/namespace/name with the overlay's,
// adds new ones, and drops those the overlay marks rolloutdoctor.io/test-delete.
func overlay(t *testing.T, base, over string) *snapshot.Snapshot {
	t.Helper()
	b := readFixture(t, base)
	if over == "" {
		return b
	}
	o := readFixture(t, over)
	key := func(u *unstructured.Unstructured) string {
		return u.GetKind() + "/" + u.GetNamespace() + "/" + u.GetName()
	}
	repl := map[string]*unstructured.Unstructured{}
	for _, u := range o.Objects() {
		repl[key(u)] = u
	}
	var objs []*unstructured.Unstructured
	for _, u := range b.Objects() {
		if r, ok := repl[key(u)]; ok {
			delete(repl, key(u))
			if r.GetAnnotations()["rolloutdoctor.io/test-delete"] == "true" {
				continue
			}
			objs = append(objs, r)
			continue
		}
		objs = append(objs, u)
	}
	for _, u := range o.Objects() {
		if _, ok := repl[key(u)]; ok {
			objs = append(objs, u)
		}
	}
	return snapshot.New(b.Header, objs)
}

func podFindings(t *testing.T, s *snapshot.Snapshot, g GraceInput) *Report {
	t.Helper()
	w, err := s.FindWorkload(s.Header.TargetKind, s.Header.TargetNamespace, s.Header.TargetName)
	if err != nil {
		t.Fatal(err)
	}
	return Run(w, model.ControllerVersion{}, Options{Grace: g})
}

func ids(fs []rules.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.ID+"/"+f.Severity.String())
	}
	return out
}

func findingByID(fs []rules.Finding, id string) *rules.Finding {
	for i := range fs {
		if fs[i].ID == id {
			return &fs[i]
		}
	}
	return nil
}

// podCase is one row of the pod rules' table: rule id stays quiet on the
// good fixture base and fires on base with the overlay over (and grace), with
// severity sev and a message containing says. Each row is so both a quiet
// and a firing case of the rule.
type podCase struct {
	id, base, over string
	grace          GraceInput
	sev            rules.Severity
	says           []string
}

var p99 = GraceInput{P99: 40 * time.Second, LBInterval: 2 * time.Second, LBFall: 2, Margin: 30 * time.Second}

// podCases is the pod rules' table (TestEveryRuleHasCases keeps it complete).
var podCases = []podCase{
	{"RD301", "deployment-good.yaml", "RD301.yaml", GraceInput{}, rules.Warning, []string{"container app has no readiness probe", "502"}},
	{"RD302", "deployment-good.yaml", "RD302.yaml", GraceInput{}, rules.Warning, []string{"http :8080/healthz", "restarts pods"}},
	{"RD303", "deployment-good.yaml", "RD303.yaml", GraceInput{}, rules.Warning, []string{"behind Service web, Ingress web", "502s"}},
	{"RD304", "deployment-good.yaml", "RD304.yaml", GraceInput{}, rules.Critical, []string{"preStop sleeps 30 s", "terminationGracePeriodSeconds is 30 s"}},
	// Same template as the good fixture (grace 60, preStop 10) but with a
	// measured p99 of 40 s: DRAIN_TIMEOUT 48 s; the recommended 5 s preStop
	// would need 83 s, the current 10 s one needs 48 + 10 + 30 = 88 s.
	{"RD304", "deployment-good.yaml", "", p99, rules.Warning, []string{"60 s is 28 s short of the 88 s", "the current preStop 10 s", "after the 10 s preStop the application has 50 s"}},
	{"RD305", "deployment-good.yaml", "RD305.yaml", GraceInput{}, rules.Warning, []string{"drains for 1m30s", "terminationGracePeriodSeconds is 60 s"}},
	{"RD306", "deployment-good.yaml", "RD306.yaml", GraceInput{}, rules.Critical, []string{"lacks elbv2.k8s.aws/pod-readiness-gate-inject=enabled", "~30 s", "while all pods look Ready"}},
	{"RD307", "deployment-good.yaml", "RD307.yaml", GraceInput{}, rules.Info, []string{"instance targets", "conntrack"}},
	{"RD308", "deployment-good.yaml", "RD308.yaml", GraceInput{}, rules.Warning, []string{"NodePort with externalTrafficPolicy Cluster (default)"}},
	{"RD309", "deployment-good.yaml", "RD309.yaml", GraceInput{}, rules.Critical, []string{"3 replicas and only 3 schedulable", "maxUnavailable 25% (default) resolves to 0"}},
	{"RD310", "deployment-good.yaml", "RD310.yaml", GraceInput{}, rules.Warning, []string{"no PodDisruptionBudget selects the 3 pods"}},
	{"RD311", "deployment-good.yaml", "RD311.yaml", GraceInput{}, rules.Warning, []string{"minAvailable 3 for 3 replicas"}},
	{"RD321", "deployment-good.yaml", "RD321.yaml", GraceInput{}, rules.Warning, []string{"target-health.elbv2.k8s.aws/k8s-shop-web-0f1e2d3c4b", "stuck"}},
	{"RD322", "deployment-good.yaml", "RD322.yaml", GraceInput{}, rules.Critical, []string{"node node-2 still reads Ready", "1m0s ago", "ready endpoints"}},
	{"RD323", "deployment-good.yaml", "RD323.yaml", GraceInput{}, rules.Warning, []string{"1 Ready pod(s) are not ready endpoints"}},
	{"RD324", "deployment-good.yaml", "RD324.yaml", GraceInput{}, rules.Critical, []string{"Service web has no ready endpoints"}},
	{"RD324", "deployment-good.yaml", "RD324-zero.yaml", GraceInput{}, rules.Warning, []string{"Service web has no ready endpoints", "the Deployment is scaled to 0 (spec.replicas 0)"}},
	{"RD325", "rollout-good.yaml", "RD325.yaml", GraceInput{}, rules.Critical, []string{"50% of traffic on 1 ready endpoint", "5.0×"}},
	{"RD326", "deployment-good.yaml", "RD326.yaml", GraceInput{}, rules.Warning, []string{"1 pod is still Terminating up to 3m5s after", "1 still serving"}},
}

// cases is the table in the shape every area's reduces to.
func (tc podCase) cases() []rulestest.Case {
	return []rulestest.Case{{ID: tc.id, State: tc.base}, {ID: tc.id, State: tc.base + " + " + valueOr(tc.over, "--p99"), Fire: true}}
}

// TestPodChecks runs every pod check on a good fixture (it must not fire)
// and on the fixture its RD*.yaml overlay breaks (it must fire, with the
// severity and the words a person needs to see).
func TestPodChecks(t *testing.T) {
	for _, tc := range podCases {
		t.Run(tc.id+"/"+strings.TrimSuffix(tc.over, ".yaml"), func(t *testing.T) {
			good := podFindings(t, readFixture(t, tc.base), GraceInput{Margin: 30 * time.Second})
			if f := findingByID(good.Findings, tc.id); f != nil {
				t.Fatalf("%s fires on %s: %s", tc.id, tc.base, f.Message)
			}
			bad := podFindings(t, overlay(t, tc.base, tc.over), tc.grace)
			f := findingByID(bad.Findings, tc.id)
			if f == nil {
				t.Fatalf("%s does not fire; findings %v", tc.id, ids(bad.Findings))
			}
			if f.Severity != tc.sev {
				t.Errorf("severity %s, want %s: %s", f.Severity, tc.sev, f.Message)
			}
			for _, s := range tc.says {
				if !strings.Contains(f.Message, s) {
					t.Errorf("message lacks %q: %s", s, f.Message)
				}
			}
			if len(f.Evidence) == 0 || f.Remediation == "" {
				t.Errorf("finding without evidence or remediation: %+v", f)
			}
			for _, f := range bad.Findings {
				rulestest.NoInternalRefs(t, f.ID+" message", f.Message)
			}
		})
	}
}

// TestGoodFixturesAreClean keeps the good fixtures good: nothing fires.
func TestGoodFixturesAreClean(t *testing.T) {
	for _, name := range []string{"deployment-good.yaml", "rollout-good.yaml"} {
		rep := podFindings(t, readFixture(t, name), GraceInput{Margin: 30 * time.Second})
		if len(rep.Findings) > 0 {
			t.Errorf("%s: %v", name, ids(rep.Findings))
			for _, f := range rep.Findings {
				t.Log(f.Message)
			}
		}
	}
}

// TestEveryRuleHasCases fails for a pod rule without a firing and a quiet
// case in podCases.
func TestEveryRuleHasCases(t *testing.T) {
	var cases []rulestest.Case
	for _, tc := range podCases {
		cases = append(cases, tc.cases()...)
	}
	rulestest.Coverage(t, rules.AreaPods, cases)
}

// TestEveryPodRuleHasACase keeps the table complete as rules are added.
func TestEveryPodRuleHasACase(t *testing.T) {
	for _, r := range rules.All() {
		if r.Area != rules.AreaPods {
			continue
		}
		if _, err := os.Stat(filepath.Join("testdata", "pods", r.ID+".yaml")); err != nil {
			t.Errorf("%s has no fixture testdata/pods/%s.yaml", r.ID, r.ID)
		}
	}
}

// TestGraceCalculator checks the worked example of docs/incidents.md#grace-period-budget: p99 100 s
// (DRAIN_TIMEOUT 120 s), HAProxy inter 2 s × fall 2 padded to a 10 s buffer
// here as interval 5 s × fall 2, Envoy drain 150 s: max(120+10, 150) + 30 = 180.
func TestGraceCalculator(t *testing.T) {
	g := CalcGrace(GraceInput{P99: 100 * time.Second, LBInterval: 5 * time.Second, LBFall: 2, Margin: 30 * time.Second, IstioDrain: 150 * time.Second})
	if !g.Known || g.DrainTimeout != 120 || g.LBBuffer != 10 || g.TerminationDrain != 150 || g.GracePeriod != 180 || g.PreStop != 10 {
		t.Fatalf("%+v", g)
	}
	// Without the sidecar the drain dominates: 120 + 10 + 30.
	if g := CalcGrace(GraceInput{P99: 100 * time.Second, LBInterval: 5 * time.Second, LBFall: 2, Margin: 30 * time.Second}); g.GracePeriod != 160 {
		t.Fatalf("no sidecar: %+v", g)
	}
	// A sidecar draining less than DRAIN_TIMEOUT is raised to it.
	if g := CalcGrace(GraceInput{P99: 40 * time.Second, Margin: 30 * time.Second, IstioDrain: 5 * time.Second}); g.TerminationDrain != 48 || g.GracePeriod != 83 {
		t.Fatalf("short sidecar drain: %+v", g)
	}
	// No p99: nothing computed, and it says what to measure.
	if g := CalcGrace(GraceInput{Margin: 30 * time.Second}); g.Known || g.GracePeriod != 0 || !strings.Contains(strings.Join(g.Assumptions, " "), "p99") {
		t.Fatalf("unknown p99: %+v", g)
	}
}

func TestALBDetection(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		class *string
		ann   map[string]string
		want  bool
	}{
		{str("alb"), nil, true},
		{str("alb-internal"), nil, true},
		{str("nginx"), map[string]string{"alb.ingress.kubernetes.io/target-type": "ip"}, false}, // leftover annotations
		{nil, map[string]string{"kubernetes.io/ingress.class": "alb"}, true},
		{nil, map[string]string{"alb.ingress.kubernetes.io/scheme": "internal"}, true},
		{nil, nil, false},
	} {
		ing := &networkingv1.Ingress{}
		ing.Annotations = tc.ann
		ing.Spec.IngressClassName = tc.class
		if got := isALB(ing); got != tc.want {
			t.Errorf("class %v annotations %v: isALB %v", tc.class, tc.ann, got)
		}
	}
}

// TestIstioDrainSources: the pod annotation (YAML or JSON) wins, then the
// mesh default from istio-system/istio, then Istio's 5 s.
func TestIstioDrainSources(t *testing.T) {
	w := &snapshot.Workload{}
	if d, from := istioDrain(w); d != IstioDefaultDrain || !strings.Contains(from, "not read") {
		t.Errorf("nothing known: %s (%s)", d, from)
	}
	w.MeshConfig = &corev1.ConfigMap{Data: map[string]string{"mesh": "defaultConfig:\n  terminationDrainDuration: 20s\n"}}
	if d, from := istioDrain(w); d != 20*time.Second || !strings.Contains(from, "mesh default") {
		t.Errorf("mesh default: %s (%s)", d, from)
	}
	w.Template.Annotations = map[string]string{"proxy.istio.io/config": `{"terminationDrainDuration": "45s"}`}
	if d, from := istioDrain(w); d != 45*time.Second || !strings.Contains(from, "annotation") {
		t.Errorf("annotation: %s (%s)", d, from)
	}
}

// TestAntiAffinityBlueGreen: a blue-green update adds a whole preview (or
// previewReplicaCount pods) before any active pod goes, whatever
// maxUnavailable says, and the finding cites where the controller sizes it.
func TestAntiAffinityBlueGreen(t *testing.T) {
	y := `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: bg, namespace: shop}
spec:
  replicas: 3
  selector: {matchLabels: {app: bg}}
  template:
    metadata: {labels: {app: bg}}
    spec:
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: bg}}}
      containers: [{name: app, image: bg:1}]
  strategy: {blueGreen: {activeService: bg, maxUnavailable: 1PREVIEW}}
`
	for _, tc := range []struct{ preview, says, cite string }{
		{"", "fewer than 6 schedulable", "ur.bluegreen-preview-size"},
		{", previewReplicaCount: 1", "fewer than 4 schedulable", "ur.bluegreen-preview-count"},
	} {
		s, err := snapshot.Read("bg", strings.NewReader(strings.Replace(y, "PREVIEW", tc.preview, 1)))
		if err != nil {
			t.Fatal(err)
		}
		w, err := s.FindWorkload("Rollout", "shop", "bg")
		if err != nil {
			t.Fatal(err)
		}
		f := findingByID(Run(w, model.ControllerVersion{}, Options{}).Findings, "RD309")
		if f == nil || !strings.Contains(f.Message, tc.says) || len(f.Cites) != 1 || string(f.Cites[0].Key) != tc.cite {
			t.Errorf("preview %q: %+v", tc.preview, f)
		}
	}
}
