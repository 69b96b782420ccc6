package snapshot

import (
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// index finds a workload's related objects without scanning every object of
// their kind: lint and scan build one workload per Rollout over one shared
// snapshot, and a scan per workload made them quadratic in the Rollouts of a
// namespace. It is built once per snapshot, on first use, and only read after.
type index struct {
	// owned: "namespace/OwnerKind/ownerName" → ReplicaSets and
	// AnalysisRuns; pods under "namespace/ReplicaSet/rsName".
	owned map[string][]*unstructured.Unstructured
	// services: "namespace" → "key=value" of one selector label → Services.
	// A Service selects a workload only if its whole selector matches the
	// pod labels, so indexing it under one of its labels finds it from any
	// workload it can select.
	services map[string]map[string][]*unstructured.Unstructured
	// byName: group, Kind, namespace and name → the object (Services named
	// by a Rollout, VirtualServices, Namespaces, ConfigMaps, Deployments).
	// A struct key: a lookup builds no string, and a fleet scan makes
	// several per Rollout.
	byName map[nameKey]*unstructured.Unstructured
	// slices: "namespace/service" → EndpointSlices.
	slices map[string][]*unstructured.Unstructured
	// ingresses: "namespace/service" → Ingresses with that backend.
	ingresses map[string][]*unstructured.Unstructured
	// pdbs: like services, by "namespace" then one matchLabels label;
	// those without matchLabels under "".
	pdbs map[string]map[string][]*unstructured.Unstructured
	// scalers: "namespace/Kind/name" of the scale target → HPAs and
	// ScaledObjects.
	scalers map[string][]*unstructured.Unstructured
	// controllers are the argo-rollouts controller Deployments.
	controllers []*unstructured.Unstructured
	// events: "namespace/Kind/name" of the involved object → Events.
	events map[string][]*unstructured.Unstructured
}

// nameKey names an object in index.byName.
type nameKey struct{ group, kind, namespace, name string }

func (s *Snapshot) idx() *index {
	s.idxOnce.Do(func() { s.index = buildIndex(s) })
	return s.index
}

func buildIndex(s *Snapshot) *index {
	ix := &index{
		owned:     map[string][]*unstructured.Unstructured{},
		services:  map[string]map[string][]*unstructured.Unstructured{},
		byName:    make(map[nameKey]*unstructured.Unstructured, len(s.objects)),
		slices:    map[string][]*unstructured.Unstructured{},
		ingresses: map[string][]*unstructured.Unstructured{},
		pdbs:      map[string]map[string][]*unstructured.Unstructured{},
		scalers:   map[string][]*unstructured.Unstructured{},
		events:    map[string][]*unstructured.Unstructured{},
	}
	for _, u := range s.objects {
		ns := u.GetNamespace()
		gvk := u.GroupVersionKind()
		ix.byName[nameKey{gvk.Group, gvk.Kind, ns, u.GetName()}] = u
		switch gvk.Group + "/" + gvk.Kind {
		case "apps/ReplicaSet", "/Pod", GroupArgo + "/AnalysisRun", GroupArgo + "/Experiment":
			for _, or := range u.GetOwnerReferences() {
				k := ns + "/" + or.Kind + "/" + or.Name
				ix.owned[k] = append(ix.owned[k], u)
			}
		case "/Service":
			sel, _, _ := unstructured.NestedStringMap(u.Object, "spec", "selector")
			if key, ok := selectorKey(sel); ok {
				if ix.services[ns] == nil {
					ix.services[ns] = map[string][]*unstructured.Unstructured{}
				}
				ix.services[ns][key] = append(ix.services[ns][key], u)
			}
		case "discovery.k8s.io/EndpointSlice":
			k := ns + "/" + u.GetLabels()["kubernetes.io/service-name"]
			ix.slices[k] = append(ix.slices[k], u)
		case "networking.k8s.io/Ingress":
			for _, svc := range ingressBackendNames(u) {
				k := ns + "/" + svc
				ix.ingresses[k] = append(ix.ingresses[k], u)
			}
		case "policy/PodDisruptionBudget":
			ml, _, _ := unstructured.NestedStringMap(u.Object, "spec", "selector", "matchLabels")
			key, _ := selectorKey(ml)
			if ix.pdbs[ns] == nil {
				ix.pdbs[ns] = map[string][]*unstructured.Unstructured{}
			}
			ix.pdbs[ns][key] = append(ix.pdbs[ns][key], u)
		case "autoscaling/HorizontalPodAutoscaler", GroupKEDA + "/ScaledObject":
			kind, _, _ := unstructured.NestedString(u.Object, "spec", "scaleTargetRef", "kind")
			name, _, _ := unstructured.NestedString(u.Object, "spec", "scaleTargetRef", "name")
			k := ns + "/" + kind + "/" + name
			ix.scalers[k] = append(ix.scalers[k], u)
		case "apps/Deployment":
			if IsControllerDeployment(u) {
				ix.controllers = append(ix.controllers, u)
			}
		case "/Event":
			kind, _, _ := unstructured.NestedString(u.Object, "involvedObject", "kind")
			name, _, _ := unstructured.NestedString(u.Object, "involvedObject", "name")
			k := ns + "/" + kind + "/" + name
			ix.events[k] = append(ix.events[k], u)
		}
	}
	return ix
}

// selectorKey is the label a Service is indexed under: the first of its
// selector's labels in key order, ignoring the Rollout hash label (the
// controller adds it; templates do not carry it). A selector with nothing
// else selects nothing by template labels.
func selectorKey(sel map[string]string) (string, bool) {
	keys := make([]string, 0, len(sel))
	for k := range sel {
		if k != RolloutHashLabel {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return "", false
	}
	sort.Strings(keys)
	return keys[0] + "=" + sel[keys[0]], true
}

// ingressBackendNames reads the Service names an Ingress routes to from the
// unstructured object (the index is built before anything is typed).
func ingressBackendNames(u *unstructured.Unstructured) []string {
	var out []string
	if n, ok, _ := unstructured.NestedString(u.Object, "spec", "defaultBackend", "service", "name"); ok {
		out = append(out, n)
	}
	rules, _, _ := unstructured.NestedSlice(u.Object, "spec", "rules")
	for _, r := range rules {
		rm, _ := r.(map[string]interface{})
		paths, _, _ := unstructured.NestedSlice(rm, "http", "paths")
		for _, p := range paths {
			pm, _ := p.(map[string]interface{})
			if n, ok, _ := unstructured.NestedString(pm, "backend", "service", "name"); ok {
				out = append(out, n)
			}
		}
	}
	return out
}

// byLabel returns the objects indexed under one of these labels (each object
// is indexed under one label, so there are no duplicates); extra adds those
// indexed under "" (no usable label).
func byLabel(byKey map[string][]*unstructured.Unstructured, podLabels map[string]string, extra bool) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for k, v := range podLabels {
		out = append(out, byKey[k+"="+v]...)
	}
	if extra {
		out = append(out, byKey[""]...)
	}
	return out
}

// nsKeys are the namespaces an object of namespace ns relates to: its own,
// and "" (objects of a hand-written file without a namespace).
func nsKeys(ns string) []string {
	if ns == "" {
		return []string{""}
	}
	return []string{ns, ""}
}

// candidateServices returns the Services that may select pods with these
// labels in namespace ns; ServiceSelects decides.
func (ix *index) candidateServices(ns string, podLabels map[string]string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, n := range nsKeys(ns) {
		out = append(out, byLabel(ix.services[n], podLabels, false)...)
	}
	return out
}

// candidatePDBs returns the PodDisruptionBudgets that may select pods with
// these labels in namespace ns; their selector decides.
func (ix *index) candidatePDBs(ns string, podLabels map[string]string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, n := range nsKeys(ns) {
		out = append(out, byLabel(ix.pdbs[n], podLabels, true)...)
	}
	return out
}

// in returns the entries of m under "namespace/rest" for ns and "".
func in(m map[string][]*unstructured.Unstructured, ns, rest string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, n := range nsKeys(ns) {
		out = append(out, m[n+"/"+rest]...)
	}
	return out
}

// named returns the object of a group/kind by name in namespace ns (or
// without a namespace), or nil.
func (ix *index) named(group, kind, ns, name string) *unstructured.Unstructured {
	for _, n := range nsKeys(ns) {
		if u := ix.byName[nameKey{group, kind, n, name}]; u != nil {
			return u
		}
	}
	return nil
}
