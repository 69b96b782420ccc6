//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
)

// The routers beyond Istio, with the real controller writing their objects:
// nginx's canary Ingress, the ALB Ingress's forward action (no AWS, so
// target-group verification stays off, as it is by default), SMI's
// TrafficSplit (which the controller creates) and Traefik's TraefikService
// (in the API group each version writes). No router runs: the lab has their
// CRDs (test/lab/manifests/router-crds.yaml) and Ingresses.

func init() {
	for _, m := range []trafficMode{nginxMode, albMode, smiMode, traefikMode} {
		scenarios = append(scenarios,
			scenario{"ramp-abort-" + modeSlug[m], func(t *testing.T, h *harness) { rampAbort(t, h, m) }},
			scenario{"incident-" + modeSlug[m], func(t *testing.T, h *harness) { incident(t, h, m, true) }},
		)
	}
}

var modeSlug = map[trafficMode]string{nginxMode: "nginx", albMode: "alb", smiMode: "smi", traefikMode: "traefik"}

var modeNames = map[trafficMode]string{hostMode: ", Istio host", subsetOnly: ", Istio subset-only",
	nginxMode: ", nginx", albMode: ", ALB", smiMode: ", SMI", traefikMode: ", Traefik"}

var (
	gvrIngress = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}
	gvrSplit   = schema.GroupVersionResource{Group: "split.smi-spec.io", Version: "v1alpha1", Resource: "trafficsplits"}
)

// albClass is the ALB ingress class of a version's controller in the lab
// (TestControllers).
func albClass(version string) string { return "alb-" + instanceID(version) }

// traefikGroup is the API group the controller of that version writes
// TraefikServices in (upstream utils/defaults: traefik.io from v1.10).
func traefikGroup(version string) string {
	if version == "v1.10.2" {
		return "traefik.io"
	}
	return "traefik.containo.us"
}

// routerWatch is the router object a scenario's samples read the canary
// weight from.
type routerWatch struct {
	gvr    schema.GroupVersionResource
	name   string
	weight func(u *unstructured.Unstructured) (int64, bool)
}

func routerGVR(r *routerWatch) schema.GroupVersionResource {
	if r == nil {
		return schema.GroupVersionResource{}
	}
	return r.gvr
}

// watchOf is the object the controller writes the canary weight into for a
// mode, and how to read it — written here from the objects' documented
// shapes, independently of pkg/router, so that the two can be compared.
func watchOf(mode trafficMode, version string) *routerWatch {
	num := func(v interface{}) (int64, bool) {
		switch n := v.(type) {
		case int64:
			return n, true
		case float64:
			return int64(n), true
		case string:
			i, err := strconv.ParseInt(n, 10, 64)
			return i, err == nil
		}
		return 0, false
	}
	switch mode {
	case nginxMode:
		return &routerWatch{gvrIngress, "app-web-canary", func(u *unstructured.Unstructured) (int64, bool) {
			return num(u.GetAnnotations()["nginx.ingress.kubernetes.io/canary-weight"])
		}}
	case albMode:
		return &routerWatch{gvrIngress, "web", func(u *unstructured.Unstructured) (int64, bool) {
			var act struct {
				ForwardConfig struct {
					TargetGroups []struct {
						ServiceName string
						Weight      int64
					}
				}
			}
			if json.Unmarshal([]byte(u.GetAnnotations()["alb.ingress.kubernetes.io/actions.app-stable"]), &act) != nil {
				return 0, false
			}
			for _, tg := range act.ForwardConfig.TargetGroups {
				if tg.ServiceName == "app-canary" {
					return tg.Weight, true
				}
			}
			return 0, false
		}}
	case smiMode:
		return &routerWatch{gvrSplit, "app", func(u *unstructured.Unstructured) (int64, bool) {
			bs, _, _ := unstructured.NestedSlice(u.Object, "spec", "backends")
			for _, b := range bs {
				bm, _ := b.(map[string]interface{})
				if bm["service"] == "app-canary" {
					return num(bm["weight"])
				}
			}
			return 0, false
		}}
	case traefikMode:
		gvr := schema.GroupVersionResource{Group: traefikGroup(version), Version: "v1alpha1", Resource: "traefikservices"}
		return &routerWatch{gvr, "app", func(u *unstructured.Unstructured) (int64, bool) {
			ss, _, _ := unstructured.NestedSlice(u.Object, "spec", "weighted", "services")
			for _, s := range ss {
				sm, _ := s.(map[string]interface{})
				if sm["name"] == "app-canary" {
					return num(sm["weight"])
				}
			}
			return 0, false
		}}
	}
	return nil
}

// observeMode watches the Rollout, its ReplicaSets and the object its
// router writes the weight into.
func (h *harness) observeMode(mode trafficMode) *observer {
	w := watchOf(mode, h.version)
	if w == nil {
		return h.observe(isCanaryDest(mode))
	}
	o := &observer{stop: make(chan struct{}), canary: func(map[string]interface{}) bool { return false }, cur: emptySample(), router: w}
	h.watch(o, gvrRS, w.gvr, gvrRollout)
	return o
}

// routerObjects are the Services and router objects of a mode ("" for
// Istio's): a stable Ingress for nginx (the controller adds its canary
// Ingress), an ALB Ingress whose rule names the stable Service's action,
// nothing for SMI (the controller creates the TrafficSplit), a TraefikService
// in the group the version writes.
func routerObjects(mode trafficMode, version string) string {
	svcs := canaryStableServices
	switch mode {
	case nginxMode:
		return svcs + `---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web}
spec:
  ingressClassName: nginx
  rules: [{host: app.example, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: app-stable, port: {number: 80}}}}]}}]
`
	case albMode:
		return svcs + `---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web}
spec:
  ingressClassName: ` + albClass(version) + `
  rules: [{http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: app-stable, port: {name: use-annotation}}}}]}}]
`
	case smiMode:
		return svcs
	case traefikMode:
		return svcs + `---
apiVersion: ` + traefikGroup(version) + `/v1alpha1
kind: TraefikService
metadata: {name: app}
spec:
  weighted:
    services: [{name: app-stable, port: 80, weight: 100}, {name: app-canary, port: 80, weight: 0}]
`
	}
	return ""
}

// routerRead compares every router weight diagnose read with the object the
// controller wrote: the write of that object at the resourceVersion the tool
// read (the observer holds every write, in etcd revision order), read by
// watchOf. It records the comparison and fails on any difference. It
// returns the weights read.
func (h *harness) routerRead(name string, o *observer, rep *diagnose.Report) string {
	h.t.Helper()
	if rep.Traffic == nil || rep.Traffic.Objects == nil || o.router == nil {
		h.t.Errorf("%s: diagnose read no router objects", name)
		return ""
	}
	var read, wrote []string
	for _, obj := range rep.Traffic.Objects.Objects {
		if obj.Name != o.router.name {
			continue
		}
		if obj.Missing || obj.Canary == nil {
			h.t.Errorf("%s: diagnose read %s as missing or without a canary weight: %+v", name, obj.Ref(), obj)
			continue
		}
		rv, _ := strconv.ParseInt(obj.ResourceVersion, 10, 64)
		w, ok := o.weightAt(rv)
		read = append(read, fmt.Sprintf("%s %d (rv %d)", obj.Kind, *obj.Canary, rv))
		if !ok {
			h.t.Errorf("%s: no write of %s at resourceVersion %d was observed", name, obj.Ref(), rv)
			continue
		}
		wrote = append(wrote, fmt.Sprintf("%d", w))
		if w != *obj.Canary {
			h.t.Errorf("%s: diagnose read canary %d from %s at rv %d; the controller wrote %d there", name, *obj.Canary, obj.Ref(), rv, w)
		}
	}
	if len(read) == 0 {
		h.t.Errorf("%s: diagnose read no %s %s", name, o.router.gvr.Resource, o.router.name)
	}
	h.record("router weight read: "+name, strings.Join(read, ", "), "written at that resourceVersion: "+strings.Join(wrote, ", "))
	return strings.Join(read, ", ")
}

// weightAt is the canary weight the watched router object had at revision rv.
func (o *observer) weightAt(rv int64) (int64, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, ev := range o.events {
		if ev.gvr == o.router.gvr && ev.u.GetName() == o.router.name && ev.rv == rv {
			return o.router.weight(ev.u)
		}
	}
	return 0, false
}

// rampAbort ramps a Rollout of 4 through setWeight 25, 50 and 75 (short
// pauses, then an indefinite one), diagnosing after each weight the router
// object takes and comparing every router weight read with the object the
// controller wrote at that revision; at the pause, pods, scan and the next
// pass predicted against the state held; then aborts it and does the same
// once the controller has settled: weight 0, the canary scaled down after
// abortScaleDownDelaySeconds.
func rampAbort(t *testing.T, h *harness, mode trafficMode) {
	spec := rolloutSpec{replicas: 4, mode: mode,
		steps: "[{setWeight: 25}, {pause: {duration: 2s}}, {setWeight: 50}, {pause: {duration: 2s}}, {setWeight: 75}, {pause: {}}]"}
	o := h.observeMode(mode)
	h.apply(h.trafficObjects(mode))
	h.apply(h.rolloutYAML(spec, "a"))
	h.healthy(o, 4, 120*time.Second)
	h.setImage("b")
	// One diagnose per weight the router object takes (a loop of them would
	// load the shared lab): each read is compared with the object at the
	// revision read, whatever moment it lands on.
	var reads []string
	name := "ramp" + modeNames[mode]
	last := int64(-1)
	deadline := time.Now().Add(240 * time.Second)
	for {
		phase, _, _, idx, _ := h.status()
		w := o.Now().CanaryWeight
		if phase == "Paused" && idx == 5 && w == 75 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ramp did not reach the pause at setWeight 75\n%s", h.dump())
		}
		if w == last {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		last = w
		rep := h.diagnose("app")
		for _, obj := range rep.Traffic.Objects.Objects {
			if obj.Name != o.router.name || obj.Canary == nil {
				continue
			}
			rv, _ := strconv.ParseInt(obj.ResourceVersion, 10, 64)
			got, ok := o.weightAt(rv)
			reads = append(reads, fmt.Sprint(*obj.Canary))
			if !ok || got != *obj.Canary {
				t.Errorf("%s: diagnose read canary %d at rv %d; the controller wrote %d (observed: %v)", name, *obj.Canary, rv, got, ok)
			}
		}
	}
	h.settled(o, 6*time.Second, 90*time.Second)
	rep := h.diagnose("app")
	h.routerRead(name+", paused at setWeight 75", o, rep)
	if rw := rep.Traffic.RouterWeight; rw != nil && (len(reads) == 0 || reads[len(reads)-1] != fmt.Sprint(*rw)) {
		reads = append(reads, fmt.Sprint(*rw))
	}
	// pods and scan, whatever the router: the canary Service's weight is the
	// router's, and the fleet row carries the Rollout's.
	pr, err := h.podsInProcess("app")
	if err != nil {
		t.Fatalf("pods: %v", err)
	}
	if w := serviceRow(pr, "app-canary").Weight; w == nil || *w != 75 {
		t.Errorf("%s: pods gives the canary Service weight %v, want 75", name, w)
	}
	scanOut, code := h.runCode("scan", "-o", "json")
	var sc struct {
		Rows []struct {
			Name   string `json:"name"`
			Weight *int32 `json:"canaryWeight"`
		} `json:"rows"`
	}
	if code != 0 || json.Unmarshal([]byte(scanOut), &sc) != nil || len(sc.Rows) != 1 || sc.Rows[0].Weight == nil || *sc.Rows[0].Weight != 75 {
		t.Errorf("%s: scan exit %d, want one row at weight 75:\n%s", name, code, scanOut)
	}
	if hasFinding(rep, "RD107") || hasFinding(rep, "RD130") || hasFinding(rep, "RD136") || hasFinding(rep, "RD139") {
		t.Errorf("%s: a router the controller wrote cleanly diagnosed with %s", name, findingIDs(rep))
	}
	h.steady(name+", paused at setWeight 75 of 4", o, rep)
	h.record(name+": router weights diagnose read through the ramp (each equal to the object at the revision read)", strings.Join(reads, " → "), weightTrace(o.Samples(), o.Now().CurrentHash))

	// Abort, as `kubectl argo rollouts abort` does, once the Rollout is quiet.
	h.kubectl("-n", h.ns, "patch", "rollout", "app", "--subresource", "status", "--type", "merge", "-p", `{"status":{"abort":true}}`)
	h.waitFor("the controller to process the abort", 90*time.Second, func() bool {
		phase, _, _, _, _ := h.status()
		return phase == "Degraded"
	})
	h.settled(o, 8*time.Second, 90*time.Second)
	rep = h.diagnose("app")
	if !hasFinding(rep, "RD104") {
		t.Errorf("%s: aborted rollout diagnosed without RD104: %s", name, findingIDs(rep))
	}
	h.routerRead(name+", aborted", o, rep)
	h.steady("abort"+modeNames[mode]+", aborted at setWeight 75 of 4", o, rep)
}
