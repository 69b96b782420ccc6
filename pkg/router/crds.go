package router

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// smi reads the TrafficSplit the controller writes.
func (rd *reader) smi() []Object {
	name := snapshot.SMITrafficSplitName(rd.ro)
	u := rd.r.Find(snapshot.GroupSMI, "TrafficSplit", name)
	o := rd.object("TrafficSplit", rd.ro.Namespace, name, "spec.backends", u, snapshot.GroupSMI+"/TrafficSplit")
	o.Cites = rd.cites("smi.default-name", "smi.backends", "smi.api-version")
	if u == nil {
		o.Cites = append(o.Cites, rd.cites("smi.create")...)
		return []Object{o}
	}
	if o.NotOwned = !rd.owned(u); o.NotOwned {
		o.Cites = append(o.Cites, rd.cites("smi.not-owned")...)
	}
	backends, _, _ := unstructured.NestedSlice(u.Object, "spec", "backends")
	for _, b := range backends {
		bm, _ := b.(map[string]interface{})
		svc, _ := bm["service"].(string)
		w, ok := int64Of(bm["weight"])
		if !ok {
			o.Notes = append(o.Notes, fmt.Sprintf("backend %s has no weight the tool can read (%v)", svc, bm["weight"]))
		}
		o.Backends = append(o.Backends, Backend{Name: svc, Role: rd.roleOf(svc), Weight: w})
	}
	rd.finish(&o, true)
	if o.Canary == nil && len(o.Backends) > 0 {
		o.Canary = ptr64(0) // the controller writes every backend: without the canary's, it gets nothing
	}
	root, _, _ := unstructured.NestedString(u.Object, "spec", "service")
	want := rd.ro.Spec.Strategy.Canary.TrafficRouting.SMI.RootService
	if want == "" {
		want = rd.ro.Spec.Strategy.Canary.StableService
	}
	if root != want {
		o.Notes = append(o.Notes, fmt.Sprintf("spec.service is %q; the controller writes %q", root, want))
	}
	if api := rd.flags.TrafficSplitAPI; api != "" && !strings.HasSuffix(o.APIVersion, "/"+api) {
		o.Notes = append(o.Notes, fmt.Sprintf("the controller writes TrafficSplit %s (--traffic-split-api-version); read as %s", api, o.APIVersion))
	}
	stamp(&o, u, fieldPath("spec", "backends")...)
	return []Object{o}
}

// traefikGroup is the API group the controller writes TraefikServices in.
func (rd *reader) traefikGroup() string {
	if rd.flags.TraefikGroup != "" {
		return rd.flags.TraefikGroup
	}
	// The default is the group the cited line of this version names.
	if f, ok := upstream.Lookup("tf.api-group"); ok {
		if l, ok := f.Loc(rd.ver); ok && strings.Contains(l.Contains, `"`+snapshot.GroupTraefik+`"`) {
			return snapshot.GroupTraefik
		}
	}
	return snapshot.GroupTraefikLegacy
}

// traefik reads the weighted TraefikService the controller writes, in the
// API group the controller version writes.
func (rd *reader) traefik() []Object {
	name := rd.ro.Spec.Strategy.Canary.TrafficRouting.Traefik.WeightedTraefikServiceName
	group := rd.traefikGroup()
	u := rd.r.Find(group, "TraefikService", name)
	o := rd.object("TraefikService", rd.ro.Namespace, name, "spec.weighted.services", u, group+"/TraefikService")
	o.Cites = rd.cites("tf.api-group", "tf.canary-weight", "tf.stable-weight")
	if u == nil {
		other := snapshot.GroupTraefikLegacy
		if group == other {
			other = snapshot.GroupTraefik
		}
		if rd.r.Find(other, "TraefikService", name) != nil {
			o.Notes = append(o.Notes, fmt.Sprintf("a TraefikService %s exists in %s; the controller (%s) writes %s", name, other, rd.ver, group))
		}
		return []Object{o}
	}
	services, found, _ := unstructured.NestedSlice(u.Object, "spec", "weighted", "services")
	if !found {
		o.Notes = append(o.Notes, "it has no spec.weighted.services: the controller fails every pass")
	}
	for _, s := range services {
		sm, _ := s.(map[string]interface{})
		n, _ := sm["name"].(string)
		w, _ := int64Of(sm["weight"])
		o.Backends = append(o.Backends, Backend{Name: n, Role: rd.roleOf(n), Weight: w})
	}
	rd.finish(&o, true)
	stamp(&o, u, fieldPath("spec", "weighted", "services")...)
	return []Object{o}
}

// apisix reads the backends of the ApisixRoute rules the controller writes.
func (rd *reader) apisix() []Object {
	route := rd.ro.Spec.Strategy.Canary.TrafficRouting.Apisix.Route
	if route == nil {
		return nil
	}
	rules := route.Rules
	if rules == nil {
		rules = []string{route.Name}
	}
	u := rd.r.Find(snapshot.GroupApisix, "ApisixRoute", route.Name)
	var out []Object
	for _, rule := range rules {
		o := rd.object("ApisixRoute", rd.ro.Namespace, route.Name, "spec.http["+rule+"].backends", u, snapshot.GroupApisix+"/ApisixRoute")
		o.Cites = rd.cites("ax.rules", "ax.canary-weight", "ax.stable-weight")
		if u == nil {
			out = append(out, o)
			continue
		}
		https, _, _ := unstructured.NestedSlice(u.Object, "spec", "http")
		found := false
		for _, h := range https {
			hm, _ := h.(map[string]interface{})
			if hm["name"] != rule {
				continue
			}
			found = true
			bs, _ := hm["backends"].([]interface{})
			for _, b := range bs {
				bm, _ := b.(map[string]interface{})
				n, _ := bm["serviceName"].(string)
				w, ok := int64Of(bm["weight"])
				if !ok {
					w = 100 // APISIX's default weight for a backend that sets none
				}
				o.Backends = append(o.Backends, Backend{Name: n, Role: rd.roleOf(n), Weight: w})
			}
		}
		if !found {
			o.Notes = append(o.Notes, fmt.Sprintf("it has no spec.http rule named %s: the controller fails every pass", rule))
		}
		rd.finish(&o, true)
		stamp(&o, u, fieldPath("spec", "http")...)
		out = append(out, o)
	}
	return out
}

// ambassador reads the canary Mapping the controller makes beside each base
// Mapping: its weight is the canary's percentage of the base's traffic.
func (rd *reader) ambassador() []Object {
	var out []Object
	group, kind := snapshot.GroupAmbassador, "Mapping"
	if strings.HasPrefix(rd.flags.AmbassadorVersion, snapshot.GroupAmbassadorX+"/") {
		group, kind = snapshot.GroupAmbassadorX, "AmbassadorMapping"
	}
	c := rd.ro.Spec.Strategy.Canary
	for _, base := range c.TrafficRouting.Ambassador.Mappings {
		name := snapshot.AmbassadorCanaryMapping(base)
		u := rd.r.Find(group, kind, name)
		o := rd.object(kind, rd.ro.Namespace, name, "spec.weight", u, group+"/"+kind)
		o.Cites = rd.cites("am.canary-name", "am.weight", "am.delete-at-zero")
		if b := rd.r.Find(group, kind, base); b != nil {
			if w, ok := int64Of(nested(b, "spec", "weight")); ok && w != 0 {
				o.Notes = append(o.Notes, fmt.Sprintf("the base Mapping %s sets weight %d: the controller refuses to make a canary Mapping from it", base, w))
				o.Cites = append(o.Cites, rd.cites("am.base-weight")...)
			}
		} else if rd.r.Read(group + "/" + kind) {
			o.Notes = append(o.Notes, fmt.Sprintf("the base Mapping %s does not exist", base))
		}
		if u == nil {
			// At weight 0 the controller deletes the canary Mapping: its
			// absence is the canary at 0, not a missing object.
			if rd.r.Read(group + "/" + kind) {
				o.Missing = false
				o.Canary, o.Total = ptr64(0), 100
				o.Backends = []Backend{{Name: c.CanaryService, Role: RoleCanary}, {Name: c.StableService, Role: RoleStable, Weight: 100}}
				o.Notes = append(o.Notes, "no canary Mapping: the canary gets no traffic through "+base)
			}
			out = append(out, o)
			continue
		}
		w, _ := int64Of(nested(u, "spec", "weight"))
		o.Canary, o.Stable, o.Total = ptr64(w), ptr64(100-w), 100
		o.Backends = []Backend{{Name: c.CanaryService, Role: RoleCanary, Weight: w}, {Name: c.StableService, Role: RoleStable, Weight: 100 - w}}
		if svc, _ := nested(u, "spec", "service").(string); svc != "" && !strings.Contains(svc, c.CanaryService) {
			o.Notes = append(o.Notes, fmt.Sprintf("it sends to %s, not the canaryService %s", svc, c.CanaryService))
		}
		stamp(&o, u, fieldPath("spec", "weight")...)
		out = append(out, o)
	}
	return out
}

// appMesh reads the weighted targets of the VirtualRouter routes the
// controller writes.
func (rd *reader) appMesh() []Object {
	am := rd.ro.Spec.Strategy.Canary.TrafficRouting.AppMesh
	if am.VirtualService == nil || am.VirtualNodeGroup == nil || am.VirtualNodeGroup.CanaryVirtualNodeRef == nil || am.VirtualNodeGroup.StableVirtualNodeRef == nil {
		return nil
	}
	vs := rd.r.Find(snapshot.GroupAppMesh, "VirtualService", am.VirtualService.Name)
	if vs == nil {
		o := rd.object("VirtualService", rd.ro.Namespace, am.VirtualService.Name, "spec.provider.virtualRouter", nil, snapshot.GroupAppMesh+"/VirtualService")
		return []Object{o}
	}
	vrName, _ := nested(vs, "spec", "provider", "virtualRouter", "virtualRouterRef", "name").(string)
	if vrName == "" {
		o := rd.object("VirtualService", rd.ro.Namespace, am.VirtualService.Name, "spec.provider.virtualRouter", vs, "")
		o.Notes = append(o.Notes, "it names no virtualRouter: the controller fails every pass")
		return []Object{o}
	}
	vr := rd.r.Find(snapshot.GroupAppMesh, snapshot.AppMeshVirtualRouter, vrName)
	filter := map[string]bool{}
	for _, r := range am.VirtualService.Routes {
		filter[r] = true
	}
	if vr == nil {
		return []Object{rd.object("VirtualRouter", rd.ro.Namespace, vrName, "spec.routes", nil, snapshot.GroupAppMesh+"/"+snapshot.AppMeshVirtualRouter)}
	}
	canaryVN, stableVN := am.VirtualNodeGroup.CanaryVirtualNodeRef.Name, am.VirtualNodeGroup.StableVirtualNodeRef.Name
	routes, _, _ := unstructured.NestedSlice(vr.Object, "spec", "routes")
	var out []Object
	for _, r := range routes {
		rm, _ := r.(map[string]interface{})
		name, _ := rm["name"].(string)
		if len(filter) > 0 && !filter[name] {
			continue
		}
		for _, typ := range []string{"httpRoute", "tcpRoute", "http2Route", "grpcRoute"} {
			rule, ok := rm[typ].(map[string]interface{})
			if !ok {
				continue
			}
			o := rd.object("VirtualRouter", vr.GetNamespace(), vrName, "spec.routes["+name+"]."+typ+".action.weightedTargets", vr, "")
			o.Cites = rd.cites("apm.routes", "apm.canary-weight", "apm.stable-weight")
			targets, _, _ := unstructured.NestedSlice(rule, "action", "weightedTargets")
			for _, t := range targets {
				tm, _ := t.(map[string]interface{})
				vn, _ := nested(&unstructured.Unstructured{Object: tm}, "virtualNodeRef", "name").(string)
				w, _ := int64Of(tm["weight"])
				role := RoleOther
				switch vn {
				case canaryVN:
					role = RoleCanary
				case stableVN:
					role = RoleStable
				}
				o.Backends = append(o.Backends, Backend{Name: vn, Role: role, Weight: w})
			}
			rd.finish(&o, true)
			stamp(&o, vr, fieldPath("spec", "routes")...)
			out = append(out, o)
			break
		}
	}
	return out
}

// istio reads the VirtualService routes the controller writes: for each
// VirtualService, the http routes it names (all when it names none) that
// hold a canary or stable destination.
func (rd *reader) istio() []Object {
	c := rd.ro.Spec.Strategy.Canary
	is := c.TrafficRouting.Istio
	hosts := map[string]string{}
	if c.CanaryService != "" {
		hosts[c.CanaryService] = RoleCanary
	}
	if c.StableService != "" {
		hosts[c.StableService] = RoleStable
	}
	subsets := map[string]string{}
	if dr := is.DestinationRule; dr != nil {
		subsets[dr.CanarySubsetName] = RoleCanary
		subsets[dr.StableSubsetName] = RoleStable
	}
	type vsRef struct {
		name   string
		routes []string
	}
	var refs []vsRef
	if is.VirtualService != nil {
		refs = append(refs, vsRef{is.VirtualService.Name, is.VirtualService.Routes})
	}
	for _, v := range is.VirtualServices {
		refs = append(refs, vsRef{v.Name, v.Routes})
	}
	var out []Object
	for _, ref := range refs {
		name := strings.Split(ref.name, ".")[0]
		u := rd.r.Find(snapshot.GroupIstio, "VirtualService", name)
		if u == nil {
			o := rd.object("VirtualService", rd.ro.Namespace, name, "spec.http", nil, snapshot.GroupIstio+"/VirtualService")
			o.Cites = rd.cites("tr.set-weight-call")
			out = append(out, o)
			continue
		}
		want := map[string]bool{}
		for _, r := range ref.routes {
			want[r] = true
		}
		routes, _, _ := unstructured.NestedSlice(u.Object, "spec", "http")
		rd.managedRoutes(u, routes, want, hosts, subsets)
		for i, rt := range routes {
			rm, _ := rt.(map[string]interface{})
			rname, _ := rm["name"].(string)
			if len(want) > 0 && !want[rname] {
				continue
			}
			dests, _ := rm["route"].([]interface{})
			label := rname
			if label == "" {
				label = fmt.Sprint(i)
			}
			o := rd.object("VirtualService", u.GetNamespace(), name, "spec.http["+label+"].route", u, "")
			o.Cites = rd.cites("tr.set-weight-call")
			for _, d := range dests {
				dm, _ := d.(map[string]interface{})
				dest, _ := dm["destination"].(map[string]interface{})
				host, _ := dest["host"].(string)
				subset, _ := dest["subset"].(string)
				role := destRole(dest, hosts, subsets)
				if role == "" {
					role = RoleOther
				}
				w, _ := int64Of(dm["weight"])
				n := host
				if subset != "" {
					n += " subset " + subset
				}
				o.Backends = append(o.Backends, Backend{Name: n, Role: role, Weight: w})
			}
			rd.finish(&o, false)
			if o.Canary == nil && o.Stable == nil {
				continue
			}
			e := int64(rd.maxW) - rd.canaryW
			o.ExpectedStable = &e
			stamp(&o, u, fieldPath("spec", "http")...)
			out = append(out, o)
		}
	}
	return out
}

// managedRoutes collects the VirtualService's http routes that the
// Rollout's trafficRouting.managedRoutes name.
func (rd *reader) managedRoutes(u *unstructured.Unstructured, routes []interface{}, primary map[string]bool, hosts, subsets map[string]string) {
	names := map[string]bool{}
	for _, m := range rd.ro.Spec.Strategy.Canary.TrafficRouting.ManagedRoutes {
		names[m.Name] = true
	}
	if len(names) == 0 {
		return
	}
	seenPrimary := false
	for _, rt := range routes {
		rm, _ := rt.(map[string]interface{})
		name, _ := rm["name"].(string)
		if primary[name] || len(primary) == 0 && !names[name] {
			seenPrimary = true
		}
		if !names[name] {
			continue
		}
		mr := ManagedRoute{Object: "VirtualService " + u.GetNamespace() + "/" + u.GetName(), Name: name, BeforePrimary: !seenPrimary}
		matches, _ := rm["match"].([]interface{})
		var alts []string
		for _, m := range matches {
			alts = append(alts, flatten("", m))
		}
		mr.Match = strings.Join(alts, " or ")
		dests, _ := rm["route"].([]interface{})
		for _, d := range dests {
			dm, _ := d.(map[string]interface{})
			dest, _ := dm["destination"].(map[string]interface{})
			w, ok := int64Of(dm["weight"])
			if !ok && len(dests) == 1 {
				w = 100 // Istio: a lone destination takes all of the route
			}
			mr.RouteTotal += w
			if destRole(dest, hosts, subsets) == RoleCanary {
				mr.CanaryWeight += w
			}
		}
		if mirror, ok := rm["mirror"].(map[string]interface{}); ok && destRole(mirror, hosts, subsets) == RoleCanary {
			mr.Mirror = true
			mr.MirrorPercent = 100 // Istio mirrors everything without a percentage
			if p, ok := nested(&unstructured.Unstructured{Object: rm}, "mirrorPercentage", "value").(float64); ok {
				mr.MirrorPercent = p
			} else if p, ok := int64Of(nested(&unstructured.Unstructured{Object: rm}, "mirrorPercentage", "value")); ok {
				mr.MirrorPercent = float64(p)
			}
		}
		rd.managed = append(rd.managed, mr)
	}
}

// destRole is the role of an Istio destination ({host, subset}): by its
// subset when the Rollout names a DestinationRule, else by its host's
// Service name; "" for neither.
func destRole(dest map[string]interface{}, hosts, subsets map[string]string) string {
	host, _ := dest["host"].(string)
	subset, _ := dest["subset"].(string)
	if subset != "" && len(subsets) > 0 {
		return subsets[subset]
	}
	return hosts[strings.Split(host, ".")[0]]
}

// flatten says a match in words: "headers.x-canary.exact=yes,
// method.exact=GET", keys in order.
func flatten(prefix string, v interface{}) string {
	m, ok := v.(map[string]interface{})
	if !ok {
		return fmt.Sprintf("%s=%v", prefix, v)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		parts = append(parts, flatten(p, m[k]))
	}
	return strings.Join(parts, ", ")
}

// nested reads a field of an object, nil when absent.
func nested(u *unstructured.Unstructured, fields ...string) interface{} {
	v, ok, err := unstructured.NestedFieldNoCopy(u.Object, fields...)
	if !ok || err != nil {
		return nil
	}
	return v
}
