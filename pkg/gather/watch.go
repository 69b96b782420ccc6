package gather

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
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
	// OnError is told about a watch that could not be started; the others
	// go on.
	OnError func(error)
}

// Watch calls fn once, then again on every change of the Rollout, its
// ReplicaSets or its pods (what a diagnosis reads most), and every Resync,
// until ctx ends (it returns nil) or fn returns an error (it returns it).
func Watch(ctx context.Context, dc dynamic.Interface, namespace, name string, opt WatchOptions, fn func() error) error {
	if opt.Settle <= 0 {
		opt.Settle = 250 * time.Millisecond
	}
	if opt.Resync <= 0 {
		opt.Resync = 30 * time.Second
	}
	if err := fn(); err != nil {
		return err
	}
	changed := watchRollout(ctx, dc, namespace, name, opt.OnError)
	tick := time.NewTicker(opt.Resync)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(opt.Settle):
			}
		case <-tick.C:
		}
		if err := fn(); err != nil {
			return err
		}
	}
}

// watchRollout starts the watches and returns a channel that holds at most
// one pending change: events that arrive while one is pending are merged.
func watchRollout(ctx context.Context, dc dynamic.Interface, namespace, name string, onError func(error)) <-chan struct{} {
	changed := make(chan struct{}, 1)
	start := func(w watch.Interface, err error) {
		if err != nil {
			if onError != nil {
				onError(err)
			}
			return
		}
		go forward(ctx, w, changed)
	}
	ri := dc.Resource(GVRRollout).Namespace(namespace)
	start(ri.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name}))
	if u, err := ri.Get(ctx, name, metav1.GetOptions{}); err == nil {
		// The same selector the gather lists by, matchExpressions included.
		lo := metav1.ListOptions{LabelSelector: rolloutSelector(u)}
		start(dc.Resource(GVRReplicaSet).Namespace(namespace).Watch(ctx, lo))
		start(dc.Resource(GVRPod).Namespace(namespace).Watch(ctx, lo))
	}
	return changed
}

// forward turns a watch's events into pending-change signals until the
// watch or ctx ends.
func forward(ctx context.Context, w watch.Interface, changed chan<- struct{}) {
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-w.ResultChan():
			if !ok {
				return
			}
			select {
			case changed <- struct{}{}:
			default:
			}
		}
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
