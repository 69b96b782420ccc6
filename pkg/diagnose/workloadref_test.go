package diagnose

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// refTo makes the example's Rollout take its template from Deployment
// checkout-api (workloadRef with scaleDown), which runs replicas pods, ready
// of them ready and updated of them on the Deployment's current template.
func refTo(scaleDown string, replicas, ready, updated int64) (func(*unstructured.Unstructured), func(*example)) {
	edit := func(ro *unstructured.Unstructured) {
		ref := map[string]interface{}{"apiVersion": "apps/v1", "kind": "Deployment", "name": "checkout-api"}
		if scaleDown != "" {
			ref["scaleDown"] = scaleDown
		}
		_ = unstructured.SetNestedMap(ro.Object, ref, "spec", "workloadRef")
	}
	more := func(e *example) {
		var tmpl map[string]interface{}
		for _, o := range e.objs {
			if o.GetKind() == "Rollout" {
				tmpl, _, _ = unstructured.NestedMap(o.Object, "spec", "template")
			}
		}
		d := &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]interface{}{"name": "checkout-api", "namespace": "shop"},
			"spec":     map[string]interface{}{"replicas": replicas, "template": tmpl, "selector": map[string]interface{}{"matchLabels": map[string]interface{}{"app": "checkout-api"}}},
			"status":   map[string]interface{}{"replicas": replicas, "readyReplicas": ready, "updatedReplicas": updated},
		}}
		e.objs = append(e.objs, d)
	}
	return edit, more
}

// offline reads the example as lint does: manifests, no live state.
func offline(more func(*example)) func(*example) {
	return func(e *example) {
		more(e)
		h := *e.header
		h.Offline = true
		e.header = &h
	}
}

var workloadRefCases = func() []rolloutCase {
	c := func(name string, fires bool, says string, scaleDown string, replicas, ready, updated int64) rolloutCase {
		edit, more := refTo(scaleDown, replicas, ready, updated)
		return rolloutCase{name: name, id: "RD168", edit: edit, more: more, fires: fires, says: says}
	}
	return []rolloutCase{
		c("the Deployment at 0", false, "", "", 0, 0, 0),
		c("the Deployment keeps 3 pods of the old template", true,
			"Deployment shop/checkout-api, which spec.workloadRef names, runs pods of its own (spec.replicas 3, 3 ready): they take requests from any Service that selects the app's labels, and the Deployment rolls them to each template change at once, outside the canary's steps; workloadRef.scaleDown never, the default: the controller never scales it",
			"", 3, 3, 0),
		c("3 pods already on the update's template, mid-update", true,
			"— now 3 of its pods already run the update's template (status.updatedReplicas) while the canary is at step",
			"never", 3, 3, 3),
		c("scaleDown onsuccess after the migration", true,
			"workloadRef.scaleDown onsuccess no longer scales it: the controller does so only at revision 1, and the Rollout is at revision 7",
			"onsuccess", 2, 2, 0),
	}
}()

// The manifests' side (lint): the Deployment's replicas field.
var workloadRefStaticCases = func() []rolloutCase {
	c := func(name string, fires bool, says string, scaleDown string, replicas int64) rolloutCase {
		edit, more := refTo(scaleDown, replicas, 0, 0)
		return rolloutCase{name: name, id: "RD220", edit: edit, more: offline(more), fires: fires, says: says}
	}
	return []rolloutCase{
		c("replicas 0 in the manifest", false, "", "", 0),
		c("replicas 3 in the manifest", true, "the manifest of Deployment shop/checkout-api, which spec.workloadRef names, sets replicas 3: every apply or sync gives it pods of its own, which the deployment controller rolls to each template change at once, outside the canary's steps", "", 3),
		c("replicas 2 with scaleDown progressively", true, "; workloadRef.scaleDown progressively scales it down only while the Rollout is at revision 1, so a sync after the first update scales it back up for good", "progressively", 2),
	}
}()

func TestWorkloadRefDeploymentReplicas(t *testing.T) {
	for _, c := range workloadRefStaticCases {
		r := diagnoseEdited(t, "v1.10.2", c.edit, c.more)
		f := findingOf(r, "RD220")
		if (f != nil) != c.fires || f != nil && (!strings.Contains(f.Message, c.says) || f.Subject != "Deployment shop/checkout-api") {
			t.Errorf("%s: RD220 %+v, want fires=%v saying %q about Deployment shop/checkout-api", c.name, f, c.fires, c.says)
		}
		if has(r, "RD168") {
			t.Errorf("%s: RD168 (live) fires on manifests", c.name)
		}
	}
	// Live, RD168 reports the pods; RD220 stays quiet.
	edit, more := refTo("", 3, 3, 0)
	if r := diagnoseEdited(t, "v1.10.2", edit, more); has(r, "RD220") || !has(r, "RD168") {
		t.Errorf("live: RD220 %v, RD168 %v; want only RD168", has(r, "RD220"), has(r, "RD168"))
	}
}

func TestWorkloadRefDeploymentPods(t *testing.T) {
	for _, ver := range upstream.Modeled {
		for _, c := range workloadRefCases {
			r := diagnoseEdited(t, ver, c.edit, c.more)
			f := findingOf(r, "RD168")
			if (f != nil) != c.fires {
				t.Errorf("%s %s: RD168 fires=%v, want %v", ver, c.name, f != nil, c.fires)
				continue
			}
			if f == nil {
				continue
			}
			if !strings.Contains(f.Message, c.says) {
				t.Errorf("%s %s: RD168 %q, want it to contain %q", ver, c.name, f.Message, c.says)
			}
			if crit := strings.Contains(c.says, "already run"); crit != (f.Severity == rules.Critical) {
				t.Errorf("%s %s: RD168 is %s", ver, c.name, f.Severity)
			}
			if _, ok := cited(*f, "wr.onsuccess-rev1"); !ok {
				t.Errorf("%s %s: RD168 does not cite wr.onsuccess-rev1", ver, c.name)
			}
		}
	}
	// The migration: revision 1 with scaleDown progressively, the controller
	// scales the Deployment down itself.
	edit, more := refTo("progressively", 3, 3, 3)
	r := diagnoseEdited(t, "v1.10.2", edit, func(e *example) {
		more(e)
		for _, o := range e.objs {
			if o.GetKind() == "ReplicaSet" && o.GetName() == "checkout-api-5f6c8d7b9a" {
				_ = unstructured.SetNestedField(o.Object, "1", "metadata", "annotations", "rollout.argoproj.io/revision")
			}
		}
	})
	if has(r, "RD168") {
		t.Errorf("RD168 fires during the migration (revision 1, scaleDown progressively)")
	}
}
