// Package router reads what a Rollout's traffic router really does: the
// objects the Argo Rollouts controller writes for each router it supports
// natively (nginx's canary Ingress, the ALB Ingress's forward action, SMI's
// TrafficSplit, Traefik's TraefikService, APISIX's ApisixRoute, Ambassador's
// canary Mapping, App Mesh's VirtualRouter, Istio's VirtualService) and the
// Gateway API routes of the traffic router plugin, the weight each backend
// gets there, who last wrote it and when, and the controller's Events about
// its writes. It is pure: it reads a snapshot's workload and never the
// cluster.
package router

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// Roles of a backend.
const (
	RoleCanary = "canary"
	RoleStable = "stable"
	RoleOther  = "other"
)

// Backend is one destination of a router object and the weight it has there.
type Backend struct {
	Name   string `json:"name"`
	Role   string `json:"role"`
	Weight int64  `json:"weight"`
}

// Writer is a field manager of an object, from its managedFields: who wrote
// it last, how, and when.
type Writer struct {
	Manager   string    `json:"manager"`
	Operation string    `json:"operation,omitempty"`
	Time      time.Time `json:"time,omitempty"`
	// Controller is true when the manager is the argo-rollouts controller.
	Controller bool `json:"controller"`
}

// Condition is a Gateway API route's condition for one parent Gateway.
type Condition struct {
	Parent  string `json:"parent"`
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// Object is one router object as the snapshot has it: where the controller
// writes the weights, what they are, and who wrote them.
type Object struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	// Field is where the weights are: an annotation, or a path in the spec.
	Field    string    `json:"field"`
	Backends []Backend `json:"backends,omitempty"`
	// Canary is the canary backend's weight; nil when the object has none.
	Canary *int64 `json:"canary,omitempty"`
	// Stable is the stable backend's weight (for nginx: the total less the
	// canary, what the stable Ingress gets); nil when unknown.
	Stable *int64 `json:"stable,omitempty"`
	// Total is what the weights are shares of: nginx's canary-weight-total
	// (100 when absent), Ambassador's 100, else the sum of the backends'.
	Total int64 `json:"total"`
	// ExpectedTotal is the total the controller writes its weights against:
	// maxTrafficWeight for nginx (and plugins), 100 for the others.
	ExpectedTotal int64 `json:"expectedTotal"`
	// ExpectedStable is the stable weight the controller writes for the
	// status's canary weight (nil when it writes none).
	ExpectedStable *int64 `json:"expectedStable,omitempty"`
	// Missing: the object does not exist, and the snapshot would hold it if
	// it did (a live read without a gap).
	Missing bool `json:"missing,omitempty"`
	// Unread: the object could not be read (the report's gaps say why):
	// neither its weights nor whether it exists are known.
	Unread bool `json:"unread,omitempty"`
	// NotOwned: the object exists but the Rollout does not control it (an
	// owner reference), so the controller refuses to write it.
	NotOwned        bool   `json:"notOwned,omitempty"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
	// Writer is the last writer of the weight field (nil when managedFields
	// say nothing); ControllerWrote is the controller's last write of the
	// object, if any.
	Writer          *Writer    `json:"writer,omitempty"`
	ControllerWrote *time.Time `json:"controllerWrote,omitempty"`
	// Conditions are a Gateway API route's Accepted and ResolvedRefs
	// conditions per parent.
	Conditions []Condition `json:"conditions,omitempty"`
	// Stickiness is the ALB forward action's target-group stickiness
	// duration in seconds (0: off).
	Stickiness int64 `json:"stickinessSeconds,omitempty"`
	// Managed, for an ALB Ingress, is whether its
	// rollouts.argoproj.io/managed-alb-annotations annotation lists the
	// Rollout (nil for the other routers).
	Managed *bool    `json:"managed,omitempty"`
	Notes   []string `json:"notes,omitempty"`
	// Cites are the controller source lines that write this object, at the
	// modeled version.
	Cites []upstream.Cite `json:"cites,omitempty"`
}

// Ref names the object as evidence does: "Ingress shop/web-app-canary".
func (o Object) Ref() string {
	if o.Namespace == "" {
		return o.Kind + " " + o.Name
	}
	return o.Kind + " " + o.Namespace + "/" + o.Name
}

// Share is the canary's share of the object's traffic in the Rollout's
// weight units (0..maxWeight), rounded to the nearest; ok is false when the
// object has no canary weight.
func (o Object) Share(maxWeight int32) (int32, bool) {
	if o.Canary == nil {
		return 0, false
	}
	if o.Total <= 0 {
		return 0, true // nothing is routed by weight: the canary gets none
	}
	return int32((*o.Canary*int64(maxWeight) + o.Total/2) / o.Total), true
}

// Event is one kind of the controller's Events about router writes, with its
// newest message.
type Event struct {
	Reason  string    `json:"reason"`
	Type    string    `json:"type,omitempty"`
	Message string    `json:"message"`
	Count   int32     `json:"count"`
	Last    time.Time `json:"last"`
}

// Plugin is a traffic router plugin the Rollout names, as the controller's
// ConfigMap configures it.
type Plugin struct {
	Name string `json:"name"`
	// Configured: the ConfigMap lists it under trafficRouterPlugins;
	// Known is false when the ConfigMap could not be read.
	Configured bool   `json:"configured"`
	Known      bool   `json:"known"`
	Location   string `json:"location,omitempty"`
	// ConfigError is the plugin config in the Rollout that does not parse.
	ConfigError string `json:"configError,omitempty"`
}

// State is what the router really does for one Rollout.
type State struct {
	// Router names it: nginx, alb, smi, traefik, apisix, ambassador,
	// appmesh, istio, or plugin NAME ("none" without traffic routing).
	Router    string `json:"router"`
	MaxWeight int32  `json:"maxWeight"`
	// Live: the objects were read from the cluster for this Rollout, so a
	// missing one does not exist.
	Live    bool     `json:"live"`
	Objects []Object `json:"objects,omitempty"`
	// Canary is the canary's share of traffic the router objects really
	// give, in the Rollout's weight units: the highest among the objects when
	// they disagree (the most the canary's pods may get); nil when no object
	// says.
	Canary  *int32   `json:"canary,omitempty"`
	Plugins []Plugin `json:"plugins,omitempty"`
	// Verify is the ALB weight verification, when the controller runs it.
	Verify *Verify `json:"verify,omitempty"`
	// Events are the controller's Events about the router, one per reason.
	Events []Event `json:"events,omitempty"`
	// WeightSetAt is when the controller last recorded a new weight in the
	// status (its TrafficWeightUpdated event), when known.
	WeightSetAt *time.Time `json:"weightSetAt,omitempty"`
	// ManagedRoutes are the routes the controller added for setHeaderRoute
	// and setMirrorRoute steps (Istio VirtualServices).
	ManagedRoutes []ManagedRoute `json:"managedRoutes,omitempty"`
}

// ManagedRoute is an http route of a VirtualService named in the Rollout's
// trafficRouting.managedRoutes: the controller writes it ahead of the
// weighted routes for a setHeaderRoute step (every request it matches goes
// to its destinations, whatever the weight) or a setMirrorRoute step (a
// share of the requests it matches is copied to the canary; the answers
// come from its route).
type ManagedRoute struct {
	Object string `json:"object"` // "VirtualService NS/NAME"
	Name   string `json:"name"`
	// Match is the route's match in words, its alternatives joined by
	// " or "; empty when the route has none (it matches every request).
	Match string `json:"match,omitempty"`
	// CanaryWeight is the canary destination's weight within the route,
	// of RouteTotal (a header route: all of it).
	CanaryWeight int64 `json:"canaryWeight"`
	RouteTotal   int64 `json:"routeTotal"`
	// Mirror: the route copies MirrorPercent of its requests to the canary.
	Mirror        bool    `json:"mirror,omitempty"`
	MirrorPercent float64 `json:"mirrorPercent,omitempty"`
	// BeforePrimary: the route comes before the Rollout's weighted routes,
	// where the controller puts it, so it sees requests first.
	BeforePrimary bool `json:"beforePrimary"`
}

// Verify is the ALB target-group weight verification.
type Verify struct {
	// Verified is status.canary.weights.verified (nil: not recorded).
	Verified *bool `json:"verified,omitempty"`
	// Flag is the controller argument that turned it on.
	Flag string `json:"flag"`
}

// Flags are the controller arguments that change what the routers write.
type Flags struct {
	VerifyALB         bool
	VerifyFlag        string
	TrafficSplitAPI   string // --traffic-split-api-version
	TraefikGroup      string // --traefik-api-group
	AmbassadorVersion string // --ambassador-api-version
}

// FlagsOf reads the controller Deployments' container arguments (the first
// owning controller decides; the others run other Rollouts).
func FlagsOf(ds []*appsv1.Deployment) Flags {
	var f Flags
	if len(ds) == 0 {
		return f
	}
	for _, c := range ds[0].Spec.Template.Spec.Containers {
		args := append(append([]string{}, c.Command...), c.Args...)
		for i := 0; i < len(args); i++ {
			name, val, has := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
			if !strings.HasPrefix(args[i], "-") {
				continue
			}
			next := func() string {
				if has {
					return val
				}
				if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
					i++
					return args[i]
				}
				return ""
			}
			switch name {
			case "aws-verify-target-group", "alb-verify-weight":
				on := true
				if has {
					on, _ = strconv.ParseBool(val)
				}
				if on {
					f.VerifyALB, f.VerifyFlag = true, "--"+name
				}
			case "traffic-split-api-version":
				f.TrafficSplitAPI = next()
			case "traefik-api-group":
				f.TraefikGroup = next()
			case "ambassador-api-version":
				f.AmbassadorVersion = next()
			}
		}
	}
	return f
}

// Name is the router a Rollout's spec configures, in the words of State.Router.
func Name(ro *v1alpha1.Rollout) string {
	c := ro.Spec.Strategy.Canary
	if c == nil || c.TrafficRouting == nil {
		return "none"
	}
	tr := c.TrafficRouting
	// The controller reconciles every router configured, in this order.
	var names []string
	for _, r := range []struct {
		on   bool
		name string
	}{{tr.Istio != nil, "istio"}, {tr.Nginx != nil, "nginx"}, {tr.ALB != nil, "alb"}, {tr.SMI != nil, "smi"},
		{tr.Ambassador != nil, "ambassador"}, {tr.AppMesh != nil, "appmesh"}, {tr.Traefik != nil, "traefik"}, {tr.Apisix != nil, "apisix"}} {
		if r.on {
			names = append(names, r.name)
		}
	}
	var plugins []string
	for k := range tr.Plugins {
		plugins = append(plugins, "plugin "+k)
	}
	sort.Strings(plugins)
	names = append(names, plugins...)
	if len(names) == 0 {
		return "unknown"
	}
	return strings.Join(names, " + ")
}

// reader is one Read: the Rollout, its router objects and the version.
type reader struct {
	// managed collects the managed routes istio finds.
	managed []ManagedRoute
	ro      *v1alpha1.Rollout
	r       *snapshot.Router
	ver     upstream.Version
	flags   Flags
	maxW    int32
	// canaryW is the status's canary weight (0 without weights).
	canaryW int64
}

func (rd *reader) cites(keys ...upstream.Key) []upstream.Cite {
	out := make([]upstream.Cite, 0, len(keys))
	for _, k := range keys {
		out = append(out, upstream.At(k, rd.ver))
	}
	return out
}

// Read reads a Rollout's router, from the router objects of its workload
// (snapshot.Workload.Router), at a controller version. A Rollout without
// traffic routing has none.
func Read(ro *v1alpha1.Rollout, objs *snapshot.Router, ver upstream.Version, flags Flags) *State {
	if ro == nil {
		return nil
	}
	c := ro.Spec.Strategy.Canary
	if c == nil || c.TrafficRouting == nil {
		return nil
	}
	if !modeled(ver) {
		ver = upstream.Newest() // the citations need a modeled version
	}
	rd := &reader{ro: ro, r: objs, ver: ver, flags: flags, maxW: 100}
	if rd.r == nil {
		rd.r = &snapshot.Router{}
	}
	if m := c.TrafficRouting.MaxTrafficWeight; m != nil && *m > 0 {
		rd.maxW = *m
	}
	if st := ro.Status.Canary.Weights; st != nil {
		rd.canaryW = int64(st.Canary.Weight)
	}
	s := &State{Router: Name(ro), MaxWeight: rd.maxW, Live: rd.r.Live}
	tr := c.TrafficRouting
	if tr.Istio != nil {
		s.Objects = append(s.Objects, rd.istio()...)
	}
	if tr.Nginx != nil {
		s.Objects = append(s.Objects, rd.nginx()...)
	}
	if tr.ALB != nil {
		s.Objects = append(s.Objects, rd.alb()...)
		if flags.VerifyALB {
			s.Verify = &Verify{Flag: flags.VerifyFlag}
			if st := ro.Status.Canary.Weights; st != nil {
				s.Verify.Verified = st.Verified
			}
		}
	}
	if tr.SMI != nil {
		s.Objects = append(s.Objects, rd.smi()...)
	}
	if tr.Traefik != nil {
		s.Objects = append(s.Objects, rd.traefik()...)
	}
	if tr.Apisix != nil {
		s.Objects = append(s.Objects, rd.apisix()...)
	}
	if tr.Ambassador != nil {
		s.Objects = append(s.Objects, rd.ambassador()...)
	}
	if tr.AppMesh != nil {
		s.Objects = append(s.Objects, rd.appMesh()...)
	}
	if len(tr.Plugins) > 0 {
		s.Plugins = rd.plugins()
		s.Objects = append(s.Objects, rd.gateway()...)
	}
	for _, o := range s.Objects {
		if o.Missing || o.NotOwned || o.Unread {
			continue
		}
		if sh, ok := o.Share(rd.maxW); ok && (s.Canary == nil || sh > *s.Canary) {
			v := sh
			s.Canary = &v
		}
	}
	s.Events, s.WeightSetAt = events(rd.r.Events)
	s.ManagedRoutes = rd.managed
	return s
}

func modeled(v upstream.Version) bool {
	for _, m := range upstream.Modeled {
		if m == v {
			return true
		}
	}
	return false
}

// ServiceWeights is the weight each Service gets from the router objects, in
// the Rollout's units, the highest where objects disagree; nil when no
// object says (the caller then falls back to the status).
func (s *State) ServiceWeights() map[string]int32 {
	if s == nil {
		return nil
	}
	out := map[string]int32{}
	for _, o := range s.Objects {
		if o.Missing || o.NotOwned || o.Total <= 0 {
			continue
		}
		for _, b := range o.Backends {
			w := int32((b.Weight*int64(s.MaxWeight) + o.Total/2) / o.Total)
			if cur, ok := out[b.Name]; !ok || w > cur {
				out[b.Name] = w
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Differs reports whether the router's canary share is known and differs
// from the status's canary weight w.
func (s *State) Differs(w int32) bool {
	return s != nil && s.Canary != nil && *s.Canary != w
}

// object starts an Object for u (nil: missing).
func (rd *reader) object(kind, ns, name, field string, u *unstructured.Unstructured, groupKind string) Object {
	o := Object{Kind: kind, Namespace: ns, Name: name, Field: field, ExpectedTotal: 100}
	if u == nil {
		o.Missing, o.Unread = rd.r.Read(groupKind), rd.r.Unread(groupKind)
		return o
	}
	o.APIVersion = u.GetAPIVersion()
	o.ResourceVersion = u.GetResourceVersion()
	return o
}

// roleOf names a Service's role for the routers that write the canary and
// stable Services.
func (rd *reader) roleOf(name string) string {
	c := rd.ro.Spec.Strategy.Canary
	switch name {
	case c.CanaryService:
		return RoleCanary
	case c.StableService:
		return RoleStable
	}
	return RoleOther
}

// finish fills the canary and stable weights and the total from the
// backends, and the stable weight the controller writes for the status.
func (rd *reader) finish(o *Object, stableRest bool) {
	var total int64
	for _, b := range o.Backends {
		total += b.Weight
		w := b.Weight
		switch b.Role {
		case RoleCanary:
			if o.Canary == nil {
				o.Canary = &w
			}
		case RoleStable:
			if o.Stable == nil {
				o.Stable = &w
			}
		}
	}
	o.Total = total
	if stableRest {
		e := 100 - rd.canaryW
		o.ExpectedStable = &e
	}
}

// owned reports whether the Rollout controls u (a controller owner
// reference to it).
func (rd *reader) owned(u *unstructured.Unstructured) bool {
	for _, or := range u.GetOwnerReferences() {
		if or.Kind == "Rollout" && or.Name == rd.ro.Name && or.Controller != nil && *or.Controller &&
			(or.UID == "" || rd.ro.UID == "" || or.UID == rd.ro.UID) {
			return true
		}
	}
	return false
}

// int64Of reads a weight: a number, or a string the API server kept (an SMI
// v1alpha1 weight is a Quantity).
func int64Of(v interface{}) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case float64:
		return int64(n), true
	case int:
		return int64(n), true
	case string:
		q, err := resource.ParseQuantity(strings.TrimSpace(n))
		return q.Value(), err == nil
	}
	return 0, false
}

func ptr64(v int64) *int64 { return &v }
