package diagnose

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules/rulestest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// bgEdit changes one object of the blue-green example, by kind and name.
type bgEdit struct {
	kind, name string
	edit       func(*unstructured.Unstructured)
}

func diagnoseBG(t *testing.T, ver upstream.Version, edits ...bgEdit) *Report {
	t.Helper()
	objs, hdr := exampletest.Decode(t, exampletest.BlueGreen)
	applyBG(objs, edits)
	cv := model.ControllerVersion{Assumed: ver, Source: model.SourceFlag, Exact: true}
	return Run(exampletest.ViewOf(t, snapshot.New(*hdr, objs)), cv, Options{})
}

// applyBG applies each edit to the objects of its kind and name.
func applyBG(objs []*unstructured.Unstructured, edits []bgEdit) {
	for _, o := range objs {
		for _, e := range edits {
			if o.GetKind() == e.kind && (e.name == "" || o.GetName() == e.name) {
				e.edit(o)
			}
		}
	}
}

func ro(e func(*unstructured.Unstructured)) bgEdit { return bgEdit{"Rollout", "checkout-web", e} }

var (
	activeSvc  = "checkout-web-active"
	previewSvc = "checkout-web-preview"
	oldHash    = "7d9f8c6b5"
	newHash    = "5c6d7e8f9"
)

// switched: the active Service already on the new revision (post-promotion
// analysis running), the new ReplicaSet at 4.
func switched(newAvail int64) []bgEdit {
	return []bgEdit{
		ro(both(set([]string{"status", "blueGreen", "activeSelector"}, newHash), remove("status", "pauseConditions"), set([]string{"status", "controllerPause"}, false),
			set([]string{"spec", "strategy", "blueGreen", "postPromotionAnalysis"}, map[string]interface{}{"templates": []interface{}{map[string]interface{}{"templateName": "smoke"}}}),
			remove("spec", "strategy", "blueGreen", "previewReplicaCount"))),
		{"Service", activeSvc, set([]string{"spec", "selector", "rollouts-pod-template-hash"}, newHash)},
		{"ReplicaSet", "checkout-web-" + newHash, both(set([]string{"spec", "replicas"}, int64(4)), set([]string{"status", "availableReplicas"}, newAvail), set([]string{"status", "readyReplicas"}, newAvail))},
	}
}

type bgCase struct {
	name  string
	id    string
	edits []bgEdit
	fires bool
	says  string // a substring of the finding's message
}

var bgCases = []bgCase{
	{name: "example: active on the stable with 4 ready endpoints", id: "RD114"},
	{name: "active Service without the hash", id: "RD114", fires: true, edits: []bgEdit{{"Service", activeSvc, remove("spec", "selector", "rollouts-pod-template-hash")}},
		says: "has no rollouts-pod-template-hash in its selector"},
	{name: "active Service on a hash no ReplicaSet has", id: "RD114", fires: true, edits: []bgEdit{{"Service", activeSvc, set([]string{"spec", "selector", "rollouts-pod-template-hash"}, "0000000")}},
		says: "which no ReplicaSet of the Rollout has"},
	{name: "active Service gone (the namespace's Services were read)", id: "RD114", fires: true, edits: []bgEdit{{"Service", activeSvc, set([]string{"metadata", "name"}, "renamed")}},
		says: "the active Service checkout-web-active does not exist"},
	{name: "active Service with no ready endpoint", id: "RD114", fires: true, edits: []bgEdit{{"EndpointSlice", "checkout-web-active-6hq2x", set([]string{"endpoints"}, []interface{}{})}},
		says: "has no ready endpoint"},
	{name: "the Rollout scaled to 0: a warning with the cause", id: "RD114", fires: true, edits: []bgEdit{{"EndpointSlice", "checkout-web-active-6hq2x", set([]string{"endpoints"}, []interface{}{})},
		ro(set([]string{"spec", "replicas"}, int64(0)))}, says: "the Rollout is scaled to 0 (spec.replicas 0)"},
	{name: "blue-green: the stable ReplicaSet gone (no ReplicaSet carries status.stableRS)", id: "RD169", fires: true,
		edits: []bgEdit{{"ReplicaSet", "checkout-web-7d9f8c6b5", set([]string{"metadata", "labels", "rollouts-pod-template-hash"}, "0000000")}},
		says:  `promotes checkout-web-5c6d7e8f9 (revision 4, 2/4 available) at once as an "Initial deploy" — the pause before promotion and the pre-promotion analysis are skipped`},
	{name: "example: preview 2/2 at previewReplicaCount", id: "RD115"},
	{name: "preview on a ReplicaSet with 1 of 2 ready", id: "RD115", fires: true, edits: []bgEdit{{"ReplicaSet", "checkout-web-" + newHash, set([]string{"status", "availableReplicas"}, int64(1))},
		{"EndpointSlice", "checkout-web-preview-9dk4m", func(u *unstructured.Unstructured) {
			eps, _, _ := unstructured.NestedSlice(u.Object, "endpoints")
			_ = unstructured.SetNestedSlice(u.Object, eps[:1], "endpoints")
		}}}, says: "with 1 of the 2 pods it is sized to ready"},
	{name: "example: promotion at 4 pods, active has 4", id: "RD116"},
	{name: "spec.replicas lowered to 3 while the active serves 4", id: "RD116", fires: true, edits: []bgEdit{ro(set([]string{"spec", "replicas"}, int64(3)))},
		says: "from 4 ready endpoints to checkout-web-5c6d7e8f9's 3 pods"},
	{name: "example: checkpoint not set", id: "RD117"},
	{name: "checkpoint leaked: new revision at 4 without a pre-promotion run", id: "RD117", fires: true,
		edits: []bgEdit{ro(both(set([]string{"status", "blueGreen", "scaleUpPreviewCheckPoint"}, true), remove("status", "pauseConditions"), set([]string{"status", "controllerPause"}, false),
			set([]string{"spec", "strategy", "blueGreen", "prePromotionAnalysis"}, map[string]interface{}{"templates": []interface{}{map[string]interface{}{"templateName": "smoke"}}}))),
			{"ReplicaSet", "checkout-web-" + newHash, both(set([]string{"spec", "replicas"}, int64(4)), set([]string{"status", "availableReplicas"}, int64(4)))}},
		says: "scaleUpPreviewCheckPoint was carried over from the previous revision"},
	{name: "switched, not aborted", id: "RD118", edits: switched(1)},
	{name: "aborted after the switch with the new ReplicaSet 1/4", id: "RD118", fires: true,
		edits: append(switched(1), ro(set([]string{"status", "abort"}, true))), says: "the active Service still selects the aborted checkout-web-5c6d7e8f9 (1/4 available)"},
	{name: "aborted before the switch: the active stays on the stable", id: "RD118", edits: []bgEdit{ro(set([]string{"status", "abort"}, true))}},
	{name: "example: scaleDownDelaySeconds unset", id: "RD209"},
	{name: "scaleDownDelaySeconds 0", id: "RD209", fires: true, edits: []bgEdit{ro(set([]string{"spec", "strategy", "blueGreen", "scaleDownDelaySeconds"}, int64(0)))}},
	{name: "example: scaleDownDelaySeconds unset (30)", id: "RD210"},
	{name: "scaleDownDelaySeconds 10", id: "RD210", fires: true, edits: []bgEdit{ro(set([]string{"spec", "strategy", "blueGreen", "scaleDownDelaySeconds"}, int64(10)))},
		says: "scaleDownDelaySeconds: 10: the previous ReplicaSet is scaled down 10 s after the active Service switches"},
	{name: "scaleDownDelaySeconds 30", id: "RD210", edits: []bgEdit{ro(set([]string{"spec", "strategy", "blueGreen", "scaleDownDelaySeconds"}, int64(30)))}},
	{name: "scaleDownDelaySeconds 0 is RD209's", id: "RD210", edits: []bgEdit{ro(set([]string{"spec", "strategy", "blueGreen", "scaleDownDelaySeconds"}, int64(0)))}},
}

func TestBlueGreenRules(t *testing.T) {
	for _, c := range bgCases {
		for _, ver := range upstream.Modeled {
			t.Run(c.id+"/"+c.name+"/"+string(ver), func(t *testing.T) {
				r := diagnoseBG(t, ver, c.edits...)
				if has(r, c.id) != c.fires {
					t.Fatalf("%s fires=%v, want %v; findings: %+v", c.id, has(r, c.id), c.fires, r.Findings)
				}
				for _, f := range r.Findings {
					rulestest.NoInternalRefs(t, f.ID+" message", f.Message)
					if f.ID == c.id && c.says != "" && !strings.Contains(f.Message, c.says) {
						t.Errorf("%s says\n  %s\nwant it to contain\n  %s", c.id, f.Message, c.says)
					}
				}
			})
		}
	}
}

// Canary-only rules stay quiet on blue-green, and the report shows no
// steps and labels ReplicaSets by what the Services select.
func TestBlueGreenReport(t *testing.T) {
	r := diagnoseBG(t, "v1.9.3")
	for _, f := range r.Findings {
		switch f.ID {
		case "RD101", "RD102", "RD103", "RD107", "RD108", "RD201", "RD202", "RD203", "RD204", "RD205", "RD206", "RD207", "RD208":
			t.Errorf("canary rule %s fires on blue-green: %s", f.ID, f.Message)
		}
	}
	roles := map[string]string{}
	for _, s := range r.Sets {
		roles[s.Name] = s.Role
	}
	want := map[string]string{"checkout-web-" + newHash: "preview", "checkout-web-" + oldHash: "active", "checkout-web-68b4f7d9c": "old"}
	for k, v := range want {
		if roles[k] != v {
			t.Errorf("%s role %q, want %q", k, roles[k], v)
		}
	}
	if r.Model.BlueGreen == nil || r.Model.BlueGreen.State != model.BGPaused {
		t.Fatalf("no blue-green analysis: %+v", r.Model.BlueGreen)
	}
}

// TestBlueGreenServicesUnread: Services that were not read (a fleet scan
// reads none) or could not be (a refused list) are not Services that do
// not exist, nor Services without a hash. Neither RD114 nor any other
// rule judges them, the model takes their selectors from what the status
// records the controller set (not an update fast-tracked by a hash-less
// active Service), and the ReplicaSets keep their roles.
func TestBlueGreenServicesUnread(t *testing.T) {
	for _, how := range []string{"a refused list", "a fleet scan"} {
		objs, hdr := exampletest.Decode(t, exampletest.BlueGreen)
		var kept []*unstructured.Unstructured
		for _, o := range objs {
			if o.GetKind() != "Service" && o.GetKind() != "EndpointSlice" {
				kept = append(kept, o)
			}
		}
		h := *hdr
		if how == "a fleet scan" {
			h = fleetHeader(h)
		} else {
			h.Gaps = append(h.Gaps, snapshot.Gap{Resource: "services", Namespace: hdr.TargetNamespace, Reason: snapshot.GapForbidden, Message: "services is forbidden"})
		}
		cv := model.ControllerVersion{Assumed: "v1.10.2", Source: model.SourceFlag, Exact: true}
		r := Run(exampletest.ViewOf(t, snapshot.New(h, kept)), cv, Options{NoPods: how == "a fleet scan"})
		for _, f := range r.Findings {
			if f.Severity >= Warning && f.ID != "RD110" {
				t.Errorf("%s: %s %s: %s", how, f.Severity, f.ID, f.Message)
			}
		}
		if has(r, "RD110") != (how == "a refused list") {
			t.Errorf("%s: RD110 fires %v", how, has(r, "RD110"))
		}
		bg := r.Model.BlueGreen
		if bg == nil || bg.State != model.BGPaused || !bg.Active.Unread || bg.Active.Hash != oldHash || !bg.Preview.Unread || bg.Preview.Hash != newHash || bg.ActiveRS != "checkout-web-"+oldHash {
			t.Fatalf("%s: blue-green %+v", how, bg)
		}
		roles := map[string]string{}
		for _, s := range r.Sets {
			roles[s.Name] = s.Role
		}
		if roles["checkout-web-"+oldHash] != "active" || roles["checkout-web-"+newHash] != "preview" {
			t.Errorf("%s: roles %v", how, roles)
		}
	}
}

// A blue-green pause with autoPromotionSeconds under spec.paused: the
// deadline runs out but no selector changes while spec.paused is set, and
// it promotes once spec.paused is false (the lab, v1.7.2 and v1.10.2).
// RD106 said "autoPromotionEnabled false", which was not set.
func TestBlueGreenAutoPromotionUnderManualPause(t *testing.T) {
	r := diagnoseBG(t, "v1.10.2", ro(both(remove("spec", "strategy", "blueGreen", "autoPromotionEnabled"),
		set([]string{"spec", "strategy", "blueGreen", "autoPromotionSeconds"}, int64(20)), set([]string{"spec", "paused"}, true))))
	f := finding(t, r, "RD106")
	want := "BlueGreenPause since 2026-11-20T14:22:05Z"
	for _, w := range []string{want, "its autoPromotionSeconds 20 ran out at 2026-11-20T14:22:25Z but spec.paused holds the switch: it promotes once spec.paused is false"} {
		if !strings.Contains(f.Message, w) {
			t.Errorf("RD106 says\n  %s\nwant it to contain\n  %s", f.Message, w)
		}
	}
	if strings.Contains(f.Message, "autoPromotionEnabled false") {
		t.Errorf("RD106 says autoPromotionEnabled is false: %s", f.Message)
	}
	if _, ok := cited(f, "bg.halt-paused"); !ok {
		t.Errorf("RD106 does not cite the manual pause's hold: %+v", f.Cites)
	}
}
