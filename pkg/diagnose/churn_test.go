package diagnose

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/router"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// TestHistoryAlternations: fake sequences of reads, each a last writer at
// a resourceVersion and a time; a fight is three alternations or more
// within the window.
func TestHistoryAlternations(t *testing.T) {
	type read struct {
		at      int // seconds from the start
		manager string
		rv      string
	}
	seq := func(spec string, every int) []read {
		var out []read
		for i, m := range strings.Fields(spec) {
			out = append(out, read{i * every, m, fmt.Sprint(i + 1)})
		}
		return out
	}
	cases := []struct {
		name  string
		reads []read
		want  int // alternations reported; 0: no fight
	}{
		{"A B A B within 15 s", seq("A B A B", 5), 3},
		{"A B A: two alternations are an undo and a redo", seq("A B A", 5), 0},
		{"A A B B A A B: repeated writes of one writer are no turn", seq("A A B B A A B", 5), 3},
		{"A B A B A B over 2.5 min: at most two turns in any minute", seq("A B A B A B", 30), 0},
		{"one writer rewriting", seq("A A A A A", 5), 0},
		{"the same resourceVersion read again is one read", []read{{0, "A", "1"}, {5, "B", "2"}, {10, "B", "2"}, {15, "A", "3"}, {20, "A", "3"}}, 0},
		{"reads without a writer are skipped", []read{{0, "A", "1"}, {5, "", "2"}, {10, "B", "3"}, {15, "A", "4"}, {20, "B", "5"}}, 3},
	}
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := NewHistory()
			var ch *Churn
			for _, r := range c.reads {
				ch = h.Observe("VirtualService shop/app", Turn{At: start.Add(time.Duration(r.at) * time.Second), Manager: r.manager, ResourceVersion: r.rv})
			}
			got := 0
			if ch != nil {
				got = ch.Alternations
			}
			if got != c.want {
				t.Fatalf("alternations %d, want %d (%+v)", got, c.want, ch)
			}
			if ch != nil && (len(ch.Managers) != 2 || ch.Managers[0] != "A" || ch.Managers[1] != "B") {
				t.Errorf("managers %v, want [A B]", ch.Managers)
			}
		})
	}
}

// vsWrittenBy is the Istio VirtualService of the router table at canary
// weight w, last written (spec.http) by manager at t, at resourceVersion rv.
func vsWrittenBy(w int, manager string, t time.Time, rv int) string {
	return fmt.Sprintf(`apiVersion: networking.istio.io/v1beta1
kind: VirtualService
metadata:
  name: app
  namespace: shop
  resourceVersion: "%d"
  managedFields:
  - {manager: %s, operation: Update, apiVersion: networking.istio.io/v1beta1, time: "%s", fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:http": {}}}}
spec: {http: [{name: primary, route: [{destination: {host: app-stable}, weight: %d}, {destination: {host: app-canary}, weight: %d}]}]}
`, rv, manager, t.UTC().Format(time.RFC3339), 100-w, w)
}

// watchRead diagnoses one read of a --watch at time at with history h.
func watchRead(t *testing.T, ver upstream.Version, at time.Time, h *History, docs []string) *Report {
	t.Helper()
	objs := exampletest.Docs(t, docs...)
	hd := snapshot.Header{TargetKind: snapshot.KindRollout, TargetNamespace: "shop", TargetName: "app", TakenAt: at}
	cv := model.ControllerVersion{Assumed: ver, Source: model.SourceFlag, Exact: true}
	return Run(exampletest.ViewOf(t, snapshot.New(hd, objs)), cv, Options{History: h})
}

func msgOf(r *Report, id string) string {
	for _, f := range r.Findings {
		if f.ID == id {
			return f.Message
		}
	}
	return ""
}

// TestWatchSeesRouterFight: a sync re-applies the VirtualService with
// Git's weight 0 and the controller writes its 20 back, four times 5 s
// apart. Each read alone shows one owner of spec.http; on a read where the
// controller wrote last RD135 has nothing to say, but the watch's History
// has seen them take turns: RD135 fires with the count, the weights and
// Argo CD's ignoreDifferences for the VirtualService's weights.
func TestWatchSeesRouterFight(t *testing.T) {
	const istio = `        istio: {virtualService: {name: app}}`
	for _, ver := range upstream.Modeled {
		t.Run(string(ver), func(t *testing.T) {
			h := NewHistory()
			var last *Report
			for i := 0; i < 5; i++ {
				at := routerNow.Add(time.Duration(5*i) * time.Second)
				manager, w := "argocd-controller", 0
				if i%2 == 1 {
					manager, w = "rollouts-controller", 20
				}
				last = watchRead(t, ver, at.Add(time.Second), h, world(istio, 20, vsWrittenBy(w, manager, at, 100+i)))
				if i < 3 && strings.Contains(msgOf(last, "RD135"), "fought over") {
					t.Fatalf("read %d: a fight after %d alternations: %s", i, i, msgOf(last, "RD135"))
				}
			}
			// The last read: argocd-controller wrote last (A B A B A: 4 turns).
			msg := msgOf(last, "RD135")
			saysAll(t, "RD135", msg,
				"VirtualService shop/app's weights (spec.http[primary].route) are being fought over: argocd-controller and rollouts-controller took turns 4 times in 20s",
				"canary weight at the full reads 0 → 20 → 0 → 20 → 0",
				"it sends canary 0 now, the status says 20",
				"promote and abort are fought the same way",
				"spec.ignoreDifferences: [{group: networking.istio.io, kind: VirtualService, name: app, jqPathExpressions: [.spec.http[].route[].weight]}] and spec.syncPolicy.syncOptions: [RespectIgnoreDifferences=true]")
			if len(last.Churn) != 1 || last.Churn[0].Alternations != 4 {
				t.Errorf("report churn %+v, want one object with 4 alternations", last.Churn)
			}
			// The same read without the watch's reads before it: the
			// single read sees argocd-controller's write after the
			// controller's last (RD135 without a count), not the turns.
			one := watchRead(t, ver, routerNow.Add(21*time.Second), nil, world(istio, 20, vsWrittenBy(0, "argocd-controller", routerNow.Add(20*time.Second), 104)))
			if m := msgOf(one, "RD135"); strings.Contains(m, "fought over") || len(one.Churn) != 0 {
				t.Errorf("a single read reports turns: %q", m)
			}
			// A read where the controller wrote last: quiet alone, the
			// fight with the History.
			ctl := watchRead(t, ver, routerNow.Add(26*time.Second), nil, world(istio, 20, vsWrittenBy(20, "rollouts-controller", routerNow.Add(25*time.Second), 105)))
			if m := msgOf(ctl, "RD135"); m != "" {
				t.Errorf("RD135 on a single read where the controller wrote last: %q", m)
			}
			withH := watchRead(t, ver, routerNow.Add(26*time.Second), h, world(istio, 20, vsWrittenBy(20, "rollouts-controller", routerNow.Add(25*time.Second), 105)))
			if m := msgOf(withH, "RD135"); !strings.Contains(m, "took turns 5 times") || !strings.Contains(m, "last written by rollouts-controller") {
				t.Errorf("RD135 with the watch's reads: %q", m)
			}
		})
	}
}

// rolloutWrittenBy is the router table's Rollout at generation gen and
// resourceVersion rv, its spec last written by manager at t (one owner:
// an update or a forced apply took the fields from the other), with
// Flux's labels.
func rolloutWrittenBy(manager string, t time.Time, gen, rv int) string {
	ro := routerRollout(`        istio: {virtualService: {name: app}}`, 20, "")
	ro = strings.Replace(ro, "metadata: {name: app, namespace: shop, uid: ro-uid, generation: 2}", fmt.Sprintf(`metadata:
  name: app
  namespace: shop
  uid: ro-uid
  generation: %d
  resourceVersion: "%d"
  labels: {kustomize.toolkit.fluxcd.io/name: apps, kustomize.toolkit.fluxcd.io/namespace: flux-system}
  managedFields:
  - {manager: %s, operation: Apply, apiVersion: argoproj.io/v1alpha1, time: "%s", fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:template": {}}}}`, gen, rv, manager, t.UTC().Format(time.RFC3339)), 1)
	return strings.Replace(ro, `observedGeneration: "2"`, fmt.Sprintf(`observedGeneration: "%d"`, gen), 1)
}

// TestWatchSeesSpecFight: Flux's forced apply and deploy-bot take the
// template from each other; each read shows one owner and the ReplicaSets
// no history yet, so a single read has no fight; the watch's reads do.
func TestWatchSeesSpecFight(t *testing.T) {
	h := NewHistory()
	var last *Report
	for i := 0; i < 4; i++ {
		at := routerNow.Add(time.Duration(10*i) * time.Second)
		manager := "kustomize-controller"
		if i%2 == 1 {
			manager = "deploy-bot"
		}
		docs := append([]string{rolloutWrittenBy(manager, at, 3+i, 200+i)}, routerWorld(2, 10)...)
		last = watchRead(t, "v1.10.2", at.Add(time.Second), h, docs)
		if i == 0 {
			if m := msgOf(last, "RD160"); m != "" {
				t.Fatalf("RD160 on one read: %s", m)
			}
		}
	}
	msg := msgOf(last, "RD160")
	saysAll(t, "RD160", msg,
		"the Rollout's spec is being fought over: kustomize-controller and deploy-bot took turns 3 times in 30s",
		"4 spec generations in that time",
		"Kustomization flux-system/apps (kustomize-controller) puts Git's spec back",
		"`flux suspend kustomization apps -n flux-system`")
	// The same last read alone: one owner, no history of returns.
	alone := watchRead(t, "v1.10.2", routerNow.Add(31*time.Second), nil, append([]string{rolloutWrittenBy("deploy-bot", routerNow.Add(30*time.Second), 6, 203)}, routerWorld(2, 10)...))
	if m := msgOf(alone, "RD160"); m != "" {
		t.Errorf("RD160 on a single read: %s", m)
	}
}

// TestRouterFixPerKind: the ignoreDifferences entry names the weights'
// path for each router kind; Flux gets the per-object annotation.
func TestRouterFixPerKind(t *testing.T) {
	cases := []struct {
		kind, apiVersion, field, manager, want string
	}{
		{"VirtualService", "networking.istio.io/v1beta1", "spec.http[primary].route", "argocd-controller", "group: networking.istio.io, kind: VirtualService, name: x, jqPathExpressions: [.spec.http[].route[].weight]"},
		{"TrafficSplit", "split.smi-spec.io/v1alpha1", "spec.backends", "argocd-controller", "jqPathExpressions: [.spec.backends[].weight]"},
		{"Ingress", "networking.k8s.io/v1", "metadata.annotations[nginx.ingress.kubernetes.io/canary-weight]", "argocd-controller", "group: networking.k8s.io, kind: Ingress, name: x, jsonPointers: [/metadata/annotations/nginx.ingress.kubernetes.io~1canary-weight]"},
		{"VirtualService", "networking.istio.io/v1beta1", "spec.http[primary].route", "kustomize-controller", "annotate VirtualService shop/x in Git with kustomize.toolkit.fluxcd.io/ssa: IfNotPresent"},
	}
	for _, c := range cases {
		o := routerObject(c.kind, c.apiVersion, c.field)
		if got := RouterFix(o, c.manager, ""); !strings.Contains(got, c.want) {
			t.Errorf("%s by %s: %q lacks %q", c.kind, c.manager, got, c.want)
		}
	}
}

func routerObject(kind, apiVersion, field string) router.Object {
	return router.Object{Kind: kind, APIVersion: apiVersion, Namespace: "shop", Name: "x", Field: field}
}

// TestHistoryFromWatchEvents: the sync's write and the controller's answer
// land in the same second, so managedFields times tie; the owner of the
// VirtualService's http routes at each resourceVersion still tells who
// wrote it, and the events a watch delivers make the turns.
func TestHistoryFromWatchEvents(t *testing.T) {
	vs := func(owner string, rv int) *unstructured.Unstructured {
		m := map[string]interface{}{}
		other := "argocd-controller"
		if owner == other {
			other = "rollouts-controller"
		}
		doc := fmt.Sprintf(`apiVersion: networking.istio.io/v1beta1
kind: VirtualService
metadata:
  name: app
  namespace: shop
  resourceVersion: "%d"
  managedFields:
  - {manager: %s, operation: Update, apiVersion: networking.istio.io/v1beta1, time: "2026-03-01T12:00:00Z", fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:annotations": {}}}}
  - {manager: %s, operation: Update, apiVersion: networking.istio.io/v1beta1, time: "2026-03-01T12:00:00Z", fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:http": {}}}}
spec: {http: []}
`, rv, other, owner)
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		return &unstructured.Unstructured{Object: m}
	}
	h := NewHistory()
	at := routerNow
	for i, owner := range []string{"argocd-controller", "rollouts-controller", "argocd-controller", "rollouts-controller"} {
		h.ObserveEvent(vs(owner, 10+i), at.Add(time.Duration(i)*time.Second))
	}
	ch := h.Observe("VirtualService shop/app", Turn{At: at.Add(5 * time.Second), Manager: "rollouts-controller", ResourceVersion: "13"})
	if ch == nil || ch.Alternations != 3 || strings.Join(ch.Managers, ",") != "argocd-controller,rollouts-controller" {
		t.Fatalf("want 3 turns of argocd-controller and rollouts-controller, got %+v", ch)
	}
}

// saysAll fails the test for each part the finding's message lacks.
func saysAll(t *testing.T, id, msg string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("%s %q lacks %q", id, msg, p)
		}
	}
}

// specVersion is a Rollout at resourceVersion rv as the API server keeps
// its managedFields after a fight over the image: argocd-controller's
// Apply owns the template, and whoever set the image last owns that leaf
// (a write takes the fields it changes from the other managers). Every
// entry carries the same second, as within a fast fight.
func specVersion(t *testing.T, rv int, imageOwner string) *unstructured.Unstructured {
	t.Helper()
	const ts = "2026-03-01T12:00:00Z"
	container := `"k:{\"name\":\"app\"}": {".": {}, "f:name": {}, "f:ports": {}%s}`
	argo := fmt.Sprintf(container, "")
	bot := ""
	if imageOwner == "argocd-controller" {
		argo = fmt.Sprintf(container, `, "f:image": {}`)
	} else {
		bot = fmt.Sprintf(`
  - {manager: deploy-bot, operation: Update, apiVersion: argoproj.io/v1alpha1, time: %q, fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {"f:image": {}}}}}}}}`, ts)
	}
	doc := fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: app
  namespace: shop
  generation: %d
  resourceVersion: "%d"
  managedFields:
  - {manager: argocd-controller, operation: Apply, apiVersion: argoproj.io/v1alpha1, time: %q, fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:replicas": {}, "f:template": {"f:spec": {"f:containers": {%s}}}}}}%s
  - {manager: rollouts-controller, operation: Update, apiVersion: argoproj.io/v1alpha1, time: %q, fieldsType: FieldsV1, fieldsV1: {"f:status": {"f:phase": {}}}, subresource: status}
`, rv, rv, ts, argo, bot, ts)
	m := map[string]interface{}{}
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

// TestHistorySpecFightWithinOneSecond: four template writes in one second,
// with the controller's status writes between them. managedFields order
// puts the Apply entry first whatever the time, so the newest entry by
// time is argocd-controller at every version; the fields each write took
// say who wrote, and the status writes do not hand the turn back.
func TestHistorySpecFightWithinOneSecond(t *testing.T) {
	h := NewHistory()
	at := routerNow
	rv := 100
	for _, owner := range []string{"argocd-controller", "deploy-bot", "argocd-controller", "deploy-bot", "argocd-controller"} {
		rv++
		h.ObserveEvent(specVersion(t, rv, owner), at)
		rv++ // the controller answers: a status write, the spec writers unchanged
		h.ObserveEvent(specVersion(t, rv, owner), at)
		at = at.Add(200 * time.Millisecond)
	}
	var writers []string
	for _, turn := range h.objs["Rollout shop/app"] {
		writers = append(writers, turn.Manager)
	}
	if got, want := strings.Join(writers, ","), "argocd-controller,argocd-controller,deploy-bot,deploy-bot,argocd-controller,argocd-controller,deploy-bot,deploy-bot,argocd-controller,argocd-controller"; got != want {
		t.Errorf("writers by version:\n got %s\nwant %s", got, want)
	}
	ch := h.churn("Rollout shop/app", h.objs["Rollout shop/app"])
	if ch == nil || ch.Alternations != 4 || strings.Join(ch.Managers, ",") != "argocd-controller,deploy-bot" {
		t.Fatalf("want 4 turns of argocd-controller and deploy-bot, got %+v (turns %+v)", ch, h.objs["Rollout shop/app"])
	}
	// A full read that comes back after the watch delivered newer versions
	// is not a turn: its writer was deploy-bot, and counting it again
	// after argocd-controller's write would make a turn that never was.
	stale := specVersion(t, 108, "deploy-bot")
	before := len(h.objs["Rollout shop/app"])
	h.observeSpec("Rollout shop/app", Turn{At: at, ResourceVersion: "108"}, snapshot.SpecWriters(stale.GetManagedFields()))
	if n := len(h.objs["Rollout shop/app"]); n != before {
		t.Errorf("a read of resourceVersion 108 after 110 added a turn (%d → %d)", before, n)
	}
}

func TestNewerVersion(t *testing.T) {
	for _, tc := range []struct {
		rv, seen string
		want     bool
	}{
		{"10", "", true}, {"10", "10", false}, {"9", "10", false}, {"10", "9", true},
		{"100", "99", true}, {"99", "100", false},
		{"abc", "abd", true}, {"abc", "abc", false}, // not etcd revisions: only told apart
	} {
		if got := newerVersion(tc.rv, tc.seen); got != tc.want {
			t.Errorf("newerVersion(%q, %q) = %v, want %v", tc.rv, tc.seen, got, tc.want)
		}
	}
}
