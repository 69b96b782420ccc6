package gather

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// WatchOptions tune Watch.
type WatchOptions struct {
	// Settle is how long to wait after an event before calling back, so a
	// burst (a ReplicaSet scaling, its pods starting) becomes one call.
	// Default 250ms.
	Settle time.Duration
	// Resync calls back this often even without events: ages, pause
	// timers and analysis deadlines move on by themselves. Default 30s.
	Resync time.Duration
	// Watcher is the client the watches use (Connection.Watcher, without
	// the per-request timeout that would cut each stream); nil uses dc.
	Watcher dynamic.Interface
	// StartTimeout bounds the start of each watch (the connection's request
	// timeout); 0 means none.
	StartTimeout time.Duration
	// Backoff is the wait before retrying a read that failed for a
	// retryable cause (IsRetryable); it doubles after each further failure
	// up to MaxBackoff. Defaults 1s and 30s.
	Backoff, MaxBackoff time.Duration
	// GiveUp is how long reads may keep failing, from the first failure
	// after a successful read (or from the start), before Watch returns
	// the last error. Default 2m. A successful read resets it.
	GiveUp time.Duration
	// Restart is the least time between two starts of the watches, when
	// they ended (a dropped connection, the server's watch timeout).
	// Default 5s.
	Restart time.Duration
	// OnRetry is told about each failed read that will be retried, the
	// wait before the retry, and how long until Watch gives up.
	OnRetry func(err error, wait, left time.Duration)
	// OnEvent, when set, is given every object the Rollout's and the router
	// objects' watches deliver, as it arrives (from the watches'
	// goroutines): every resourceVersion, also writes overwritten before
	// the next call of fn reads.
	OnEvent func(*unstructured.Unstructured)
	// OnError is told about a watch that could not be started (each
	// distinct message once); the others go on, and Resync still calls.
	OnError func(error)
}

func (o *WatchOptions) defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.Settle, 250*time.Millisecond)
	def(&o.Resync, 30*time.Second)
	def(&o.Backoff, time.Second)
	def(&o.MaxBackoff, 30*time.Second)
	def(&o.GiveUp, 2*time.Minute)
	def(&o.Restart, 5*time.Second)
}

// Watch calls fn once, then again on every change of the Rollout, its
// ReplicaSets or its pods (what a diagnosis reads most), and every Resync,
// until ctx ends (it returns nil) or fn returns an error that is not
// retryable (it returns it). When fn fails for a retryable cause (the
// network, an overloaded API server) it is called again after Backoff,
// doubling up to MaxBackoff, for at most GiveUp without a success; then
// Watch returns an error that says so. The watches are (re)started after
// a successful call whenever none is running.
func Watch(ctx context.Context, dc dynamic.Interface, namespace, name string, opt WatchOptions, fn func() error) error {
	opt.defaults()
	if opt.Watcher == nil {
		opt.Watcher = dc
	}
	ws := &watchSet{changed: make(chan struct{}, 1)}
	tick := time.NewTicker(opt.Resync)
	defer tick.Stop()
	var failingSince time.Time
	backoff := opt.Backoff
	for {
		err := fn()
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			if !IsRetryable(err) {
				return err
			}
			now := time.Now()
			if failingSince.IsZero() {
				failingSince = now
			}
			left := opt.GiveUp - now.Sub(failingSince)
			if left <= 0 {
				return &Error{Msg: fmt.Sprintf("no successful read for %s, giving up: %v", opt.GiveUp, err)}
			}
			wait := min(backoff, left)
			backoff = min(2*backoff, opt.MaxBackoff)
			if opt.OnRetry != nil {
				opt.OnRetry(err, wait, left)
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(wait):
			}
			continue
		}
		failingSince, backoff = time.Time{}, opt.Backoff
		ws.ensure(ctx, opt, namespace, name)
		select {
		case <-ctx.Done():
			return nil
		case <-ws.changed:
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(opt.Settle):
			}
		case <-tick.C:
		}
	}
}

// watchSet is the watches of one Rollout, its ReplicaSets and pods. Its
// changed channel holds at most one pending change: events that arrive
// while one is pending are merged. A watch that ends counts as a change,
// so that a dropped connection is noticed by the next read at once.
type watchSet struct {
	changed chan struct{}

	mu        sync.Mutex
	live      map[string]bool // by watchKinds
	starting  bool
	lastStart time.Time
	ends      int // watches that ended, ever
	lastErr   string
}

// watchKinds are what a watchSet watches: the router objects are Istio's
// VirtualServices and nginx's Ingresses the Rollout names, where a GitOps
// sync and the controller can take turns writing the weights without the
// Rollout changing (RD135's fight, seen live).
var watchKinds = []string{"rollout", "replicasets", "pods", "router"}

// ensure starts, in the background, the watches that are not running (not
// yet, or no longer: each ends on its own when the server's watch timeout
// passes or the connection drops), at most once per opt.Restart.
func (s *watchSet) ensure(ctx context.Context, opt WatchOptions, namespace, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live == nil {
		s.live = map[string]bool{}
	}
	var missing []string
	for _, k := range watchKinds {
		if !s.live[k] {
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 || s.starting || !s.lastStart.IsZero() && time.Since(s.lastStart) < opt.Restart {
		return
	}
	s.starting, s.lastStart = true, time.Now()
	ends := s.ends
	go func() {
		s.start(ctx, opt, namespace, name, missing)
		s.mu.Lock()
		s.starting = false
		// A watch that ended while this round was still opening the
		// others found ensure busy, and its change was spent on that
		// read: signal again, or nothing restarts it before the resync.
		// (One that failed to start did not end: the resync covers it.)
		ended := s.ends != ends
		s.mu.Unlock()
		if ended && ctx.Err() == nil {
			s.signal()
		}
	}()
}

// start opens the given watches (each start bounded by opt.StartTimeout).
func (s *watchSet) start(ctx context.Context, opt WatchOptions, namespace, name string, kinds []string) {
	dc := opt.Watcher
	ri := dc.Resource(GVRRollout).Namespace(namespace)
	startWatch := func(kind, what string, open func(context.Context) (watch.Interface, error)) {
		wctx, cancel, done := startContext(ctx, opt.StartTimeout)
		w, err := open(wctx)
		if !done() && err != nil {
			err = fmt.Errorf("the watch did not start within %s", opt.StartTimeout)
		}
		if err != nil {
			cancel()
			if ctx.Err() == nil {
				s.failed(opt.OnError, fmt.Errorf("watching %s: %w (redrawing every %s instead)", what, err, opt.Resync))
			}
			return
		}
		s.mu.Lock()
		s.live[kind] = true
		s.mu.Unlock()
		var onEvent func(*unstructured.Unstructured)
		if kind == "rollout" || kind == "router" {
			onEvent = opt.OnEvent
		}
		go s.forward(ctx, kind, w, cancel, onEvent)
	}
	var lo *metav1.ListOptions
	var u *unstructured.Unstructured
	for _, kind := range kinds {
		switch kind {
		case "rollout":
			startWatch(kind, fmt.Sprintf("rollout %q", name), func(c context.Context) (watch.Interface, error) {
				return ri.Watch(c, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
			})
			continue
		}
		if lo == nil {
			gctx, cancel, _ := startContext(ctx, opt.StartTimeout)
			var err error
			u, err = ri.Get(gctx, name, metav1.GetOptions{})
			cancel()
			if err != nil {
				return
			}
			// The same selector the gather lists by, matchExpressions included.
			lo = &metav1.ListOptions{LabelSelector: rolloutSelector(u)}
		}
		if kind == "router" {
			s.watchRouter(dc, u, namespace, startWatch)
			continue
		}
		gvr := GVRReplicaSet
		if kind == "pods" {
			gvr = GVRPod
		}
		startWatch(kind, "the Rollout's "+kind, func(c context.Context) (watch.Interface, error) {
			return dc.Resource(gvr).Namespace(namespace).Watch(c, *lo)
		})
	}
}

// watchRouter watches the VirtualServices and nginx Ingresses the Rollout
// u names: one watch per kind, by name when it names one, else the
// namespace's. A Rollout without them has nothing to watch here.
func (s *watchSet) watchRouter(dc dynamic.Interface, u *unstructured.Unstructured, namespace string, startWatch func(kind, what string, open func(context.Context) (watch.Interface, error))) {
	vs, ing := routerNames(u)
	if len(vs) == 0 && len(ing) == 0 {
		s.mu.Lock()
		s.live["router"] = true // nothing to watch
		s.mu.Unlock()
		return
	}
	open := func(gvr schema.GroupVersionResource, names []string) func(context.Context) (watch.Interface, error) {
		lo := metav1.ListOptions{}
		if len(names) == 1 {
			lo.FieldSelector = "metadata.name=" + names[0]
		}
		return func(c context.Context) (watch.Interface, error) {
			return dc.Resource(gvr).Namespace(namespace).Watch(c, lo)
		}
	}
	// Both kinds count as the one "router" watch: started together, and
	// either ending restarts both (a duplicate stream only adds a redraw).
	if len(vs) > 0 {
		startWatch("router", "the Rollout's VirtualServices", open(GVRVirtualService, vs))
	}
	if len(ing) > 0 {
		startWatch("router", "the Rollout's Ingresses", open(GVRIngress, ing))
	}
}

// routerNames are the Istio VirtualServices and nginx Ingresses (stable
// and canary) a Rollout names.
func routerNames(u *unstructured.Unstructured) (vs, ing []string) {
	if u == nil {
		return nil, nil
	}
	tr, _, _ := unstructured.NestedMap(u.Object, "spec", "strategy", "canary", "trafficRouting")
	if n, _, _ := unstructured.NestedString(tr, "istio", "virtualService", "name"); n != "" {
		vs = append(vs, strings.Split(n, ".")[0])
	}
	list, _, _ := unstructured.NestedSlice(tr, "istio", "virtualServices")
	for _, x := range list {
		if m, ok := x.(map[string]interface{}); ok {
			if n, _ := m["name"].(string); n != "" {
				vs = append(vs, strings.Split(n, ".")[0])
			}
		}
	}
	stables, _, _ := unstructured.NestedStringSlice(tr, "nginx", "stableIngresses")
	if n, _, _ := unstructured.NestedString(tr, "nginx", "stableIngress"); n != "" {
		stables = append(stables, n)
	}
	for _, st := range stables {
		ing = append(ing, st, snapshot.NginxCanaryIngress(u.GetName(), st))
	}
	return vs, ing
}

// startContext is a context for starting a watch: cancelled after timeout
// (when > 0) unless done is called first; done reports whether it was in
// time. The context lives on after done, for the watch's stream.
func startContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc, func() bool) {
	c, cancel := context.WithCancel(ctx)
	if timeout <= 0 {
		return c, cancel, func() bool { return true }
	}
	t := time.AfterFunc(timeout, cancel)
	return c, cancel, t.Stop
}

// failed reports a watch that could not start, each distinct message once.
func (s *watchSet) failed(onError func(error), err error) {
	s.mu.Lock()
	repeat := s.lastErr == err.Error()
	s.lastErr = err.Error()
	s.mu.Unlock()
	if onError != nil && !repeat {
		onError(err)
	}
}

// forward turns a watch's events into pending-change signals until the
// watch or ctx ends; the end of the watch is one more change. onEvent, when
// set, is given each object added or modified.
func (s *watchSet) forward(ctx context.Context, kind string, w watch.Interface, cancel context.CancelFunc, onEvent func(*unstructured.Unstructured)) {
	defer func() {
		w.Stop()
		cancel()
		s.mu.Lock()
		s.live[kind] = false
		s.ends++
		s.mu.Unlock()
		s.signal()
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			if u, isObj := ev.Object.(*unstructured.Unstructured); isObj && onEvent != nil && (ev.Type == watch.Added || ev.Type == watch.Modified) {
				onEvent(u)
			}
			s.signal()
		}
	}
}

func (s *watchSet) signal() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// rolloutSelector is a Rollout's spec.selector as a LIST/WATCH label
// selector ("" when it has none or it cannot be decoded).
func rolloutSelector(u *unstructured.Unstructured) string {
	m, found, _ := unstructured.NestedMap(u.Object, "spec", "selector")
	if !found {
		return ""
	}
	sel := &metav1.LabelSelector{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, sel); err != nil {
		return ""
	}
	return selectorString(sel)
}

// RolloutNames lists the names of the Rollouts in a namespace ("" for all
// namespaces), for shell completion.
func RolloutNames(ctx context.Context, dc dynamic.Interface, namespace string) ([]string, error) {
	list, err := listAll(ctx, dc, GVRRollout, namespace, metav1.ListOptions{})
	if err != nil {
		return nil, listError(err, Options{Namespace: namespace})
	}
	names := make([]string, 0, len(list))
	for _, u := range list {
		names = append(names, u.GetName())
	}
	return names, nil
}
