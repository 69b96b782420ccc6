//go:build e2e

package e2e

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// rsState is what the observer keeps of a ReplicaSet.
type rsState struct {
	Spec, Available int64
	// Deadline is the scale-down-deadline annotation ("" when absent), which
	// decides when a blue-green Rollout's old ReplicaSet loses its pods.
	Deadline string
}

// sample is the observed world right after one watch event: every write the
// controller makes to the VirtualService, the ReplicaSets or the Rollout is
// seen (a watch delivers every resourceVersion), so weight changes that last
// a single reconcile are not missed.
type sample struct {
	At           time.Time
	CanaryWeight int64 // canary destination weight in the VirtualService, -1 before it is seen
	RS           map[string]rsState
	Index        int64 // status.currentStepIndex, -1 when unset
	Abort        bool
	Phase        string
	StableHash   string
	CurrentHash  string
	// Paused: the Rollout has a pause condition (a blue-green Rollout waiting
	// before promotion).
	Paused bool
	// Active and Preview are the hashes the blue-green Services' selectors
	// carry ("" without one: every ReplicaSet's pods), watched only by
	// observeBG.
	Active, Preview string
	// CanarySvc is the hash the canary Service's selector carries, watched
	// only by observeCanarySvc.
	CanarySvc string
	// Healthy is the status of the Rollout's Healthy condition ("" while
	// absent); Progressing is its Progressing condition as "Status/Reason".
	Healthy     string
	Progressing string
	// Kind is the resource whose event produced the sample, and RV that
	// object's resourceVersion: with etcd storage it is the global revision
	// of the write, so it orders writes across resources, which the arrival
	// order of separate watch streams does not.
	Kind string
	RV   int64
}

// observer records samples for one namespace until stopped.
type observer struct {
	mu     sync.Mutex
	events []event
	cur    sample
	stop   chan struct{}
	done   sync.WaitGroup
	canary func(dest map[string]interface{}) bool
	// active and preview name the blue-green Services (observeBG).
	active, preview string
	// canarySvc names the canary Service whose selector the samples carry
	// (observeCanarySvc).
	canarySvc string
	// router is the router object whose canary weight the samples carry,
	// for a router other than Istio (observeMode).
	router *routerWatch
}

// event is one watch event as it arrived.
type event struct {
	gvr schema.GroupVersionResource
	u   *unstructured.Unstructured
	at  time.Time
	rv  int64
}

func emptySample() sample { return sample{CanaryWeight: -1, Index: -1, RS: map[string]rsState{}} }

// observe starts watching the Rollout's ReplicaSets, its VirtualService and
// the Rollout itself. isCanary tells the canary destination of the route.
func (h *harness) observe(isCanary func(dest map[string]interface{}) bool) *observer {
	o := &observer{stop: make(chan struct{}), canary: isCanary, cur: emptySample()}
	h.watch(o, gvrRS, gvrVS, gvrRollout)
	return o
}

// observeBG watches a blue-green Rollout: its ReplicaSets, the Rollout, and
// the active and preview Services, whose selectors are where a blue-green
// Rollout's traffic decisions land.
func (h *harness) observeBG(active, preview string) *observer {
	o := &observer{stop: make(chan struct{}), canary: func(map[string]interface{}) bool { return false },
		cur: emptySample(), active: active, preview: preview}
	h.watch(o, gvrRS, gvrSvc, gvrRollout)
	return o
}

func (h *harness) watch(o *observer, gvrs ...schema.GroupVersionResource) {
	for _, gvr := range gvrs {
		w, err := dyn.Resource(gvr).Namespace(h.ns).Watch(h.ctx, metav1.ListOptions{})
		if err != nil {
			h.t.Fatalf("watch %s: %v", gvr.Resource, err)
		}
		o.done.Add(1)
		go func() {
			defer o.done.Done()
			defer w.Stop()
			for {
				select {
				case <-o.stop:
					return
				case ev, ok := <-w.ResultChan():
					if !ok {
						return
					}
					if u, ok := ev.Object.(*unstructured.Unstructured); ok && ev.Type != watch.Error {
						o.update(gvr, u)
					}
				}
			}
		}()
	}
	h.t.Cleanup(o.Stop)
}

func (o *observer) update(gvr schema.GroupVersionResource, u *unstructured.Unstructured) {
	rv, _ := strconv.ParseInt(u.GetResourceVersion(), 10, 64)
	ev := event{gvr: gvr, u: u, at: time.Now(), rv: rv}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.events = append(o.events, ev)
	o.cur = o.apply(o.cur, ev)
}

// apply folds one event into the state before it.
func (o *observer) apply(prev sample, ev event) sample {
	gvr, u := ev.gvr, ev.u
	s := prev
	s.RS = make(map[string]rsState, len(prev.RS))
	for k, v := range prev.RS {
		s.RS[k] = v
	}
	switch gvr {
	case gvrRS:
		hash := u.GetLabels()["rollouts-pod-template-hash"]
		spec, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		avail, _, _ := unstructured.NestedInt64(u.Object, "status", "availableReplicas")
		s.RS[hash] = rsState{Spec: spec, Available: avail, Deadline: u.GetAnnotations()["scale-down-deadline"]}
	case gvrSvc:
		sel, _, _ := unstructured.NestedStringMap(u.Object, "spec", "selector")
		switch u.GetName() {
		case o.active:
			s.Active = sel["rollouts-pod-template-hash"]
		case o.preview:
			s.Preview = sel["rollouts-pod-template-hash"]
		case o.canarySvc:
			s.CanarySvc = sel["rollouts-pod-template-hash"]
		}
	case routerGVR(o.router):
		if u.GetName() == o.router.name {
			if w, ok := o.router.weight(u); ok {
				s.CanaryWeight = w
			}
		}
	case gvrVS:
		routes, _, _ := unstructured.NestedSlice(u.Object, "spec", "http")
		for _, r := range routes {
			rm, _ := r.(map[string]interface{})
			if rm["name"] != "primary" {
				continue
			}
			dests, _ := rm["route"].([]interface{})
			for _, d := range dests {
				dm, _ := d.(map[string]interface{})
				dest, _ := dm["destination"].(map[string]interface{})
				if o.canary(dest) {
					s.CanaryWeight = toInt(dm["weight"])
				}
			}
		}
	case gvrRollout:
		if i, ok, _ := unstructured.NestedInt64(u.Object, "status", "currentStepIndex"); ok {
			s.Index = i
		} else {
			s.Index = -1
		}
		s.Abort, _, _ = unstructured.NestedBool(u.Object, "status", "abort")
		s.Phase, _, _ = unstructured.NestedString(u.Object, "status", "phase")
		s.StableHash, _, _ = unstructured.NestedString(u.Object, "status", "stableRS")
		s.CurrentHash, _, _ = unstructured.NestedString(u.Object, "status", "currentPodHash")
		pcs, _, _ := unstructured.NestedSlice(u.Object, "status", "pauseConditions")
		s.Paused = len(pcs) > 0
		s.Healthy, s.Progressing = "", ""
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			cm, _ := c.(map[string]interface{})
			st, _ := cm["status"].(string)
			switch cm["type"] {
			case "Healthy":
				s.Healthy = st
			case "Progressing":
				reason, _ := cm["reason"].(string)
				s.Progressing = st + "/" + reason
			}
		}
	}
	s.At = ev.at
	s.Kind = gvr.Resource
	s.RV = ev.rv
	return s
}

func toInt(v interface{}) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	case int:
		return int64(n)
	}
	return 0
}

// Stop ends the watches; samples stay readable.
func (o *observer) Stop() {
	select {
	case <-o.stop:
	default:
		close(o.stop)
	}
	o.done.Wait()
}

// Samples returns the observed states so far, one per write, in etcd
// revision order. Separate watch streams deliver in their own order: under
// load the VirtualService write made after a ReplicaSet's status update can
// arrive first, and a state built in arrival order would pair the new weight
// with the old availability. Each object's resourceVersion is the global
// revision of its write, so sorting by it replays the writes as they happened.
func (o *observer) Samples() []sample {
	o.mu.Lock()
	evs := append([]event(nil), o.events...)
	o.mu.Unlock()
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].rv < evs[j].rv })
	out := make([]sample, 0, len(evs))
	cur := emptySample()
	for _, ev := range evs {
		cur = o.apply(cur, ev)
		out = append(out, cur)
	}
	return out
}

// Now is the latest sample.
func (o *observer) Now() sample {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.cur
}

// weightTrace renders the distinct canary weights seen, with the canary
// ReplicaSet's available/spec at the moment each was first written:
// "0 (0/0) → 100 (1/20) → 0 (20/20)".
func weightTrace(ss []sample, canaryHash string) string {
	var parts []string
	last := int64(-2)
	for _, s := range ss {
		if s.CanaryWeight == last || s.CanaryWeight < 0 {
			continue
		}
		last = s.CanaryWeight
		rs := s.RS[canaryHash]
		parts = append(parts, fmt.Sprintf("%d (%d/%d)", s.CanaryWeight, rs.Available, rs.Spec))
	}
	return strings.Join(parts, " → ")
}
