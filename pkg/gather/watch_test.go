package gather

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"
)

func TestWatchRedrawsOnChangeAndKeepsMatchExpressions(t *testing.T) {
	dc := fakeClient(t, exampleObjects(t)...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ro, err := dc.Resource(GVRRollout).Namespace("shop").Get(ctx, "checkout-api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A selector with an expression: dropping it would watch pods of other
	// workloads that share the labels.
	unstructured.SetNestedSlice(ro.Object, []interface{}{map[string]interface{}{"key": "track", "operator": "NotIn", "values": []interface{}{"shadow"}}}, "spec", "selector", "matchExpressions")
	if err := dc.Tracker().Update(GVRRollout, ro, "shop"); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	selectors, fields := map[string]string{}, map[string]string{}
	dc.PrependWatchReactor("*", func(a k8stesting.Action) (bool, watch.Interface, error) {
		mu.Lock()
		defer mu.Unlock()
		r := a.(k8stesting.WatchActionImpl).GetWatchRestrictions()
		selectors[a.GetResource().Resource] = r.Labels.String()
		fields[a.GetResource().Resource] = r.Fields.String()
		return false, nil, nil
	})
	vsGVR := GVRVirtualService
	calls := 0
	var events []string
	onEvent := func(u *unstructured.Unstructured) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, u.GetKind()+"/"+u.GetAnnotations()["touched"])
	}
	err = Watch(ctx, dc, "shop", "checkout-api", WatchOptions{Settle: time.Millisecond, OnEvent: onEvent}, func() error {
		calls++
		switch calls {
		case 1:
			// The watches start after the first call: change the Rollout
			// once they are there.
			go func() {
				for {
					mu.Lock()
					n := len(selectors)
					mu.Unlock()
					if n == 4 || ctx.Err() != nil {
						break
					}
					time.Sleep(10 * time.Millisecond)
				}
				u := ro.DeepCopy()
				u.SetAnnotations(map[string]string{"touched": "yes"})
				dc.Tracker().Update(GVRRollout, u, "shop")
			}()
		case 2:
			// A write of the VirtualService alone (a sync re-applying
			// Git's weights) is a change too.
			go func() {
				vs, err := dc.Resource(vsGVR).Namespace("shop").Get(ctx, "checkout-api", metav1.GetOptions{})
				if err != nil {
					t.Errorf("the example's VirtualService: %v", err)
					cancel()
					return
				}
				vs.SetAnnotations(map[string]string{"touched": "yes"})
				dc.Tracker().Update(vsGVR, vs, "shop")
			}()
		case 3:
			cancel()
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("err %v after %d calls: want one call at the start, one after the Rollout's change and one after the VirtualService's", err, calls)
	}
	mu.Lock()
	got := strings.Join(events, " ")
	mu.Unlock()
	if !strings.Contains(got, "Rollout/yes") || !strings.Contains(got, "VirtualService/yes") {
		t.Errorf("OnEvent was given %q: want the Rollout's and the VirtualService's writes", got)
	}
	if f := fields["virtualservices"]; f != "metadata.name=checkout-api" {
		t.Errorf("virtualservices watched with field selector %q, want the one the Rollout names", f)
	}
	for _, r := range []string{"replicasets", "pods"} {
		if s := selectors[r]; s == "" || !strings.Contains(s, "track notin (shadow)") {
			t.Errorf("%s watched with selector %q: want the Rollout's matchExpressions", r, s)
		}
	}
}

func TestRolloutNames(t *testing.T) {
	dc := fakeClient(t, exampleObjects(t)...)
	names, err := RolloutNames(context.Background(), dc, "shop")
	if err != nil || len(names) != 1 || names[0] != "checkout-api" {
		t.Fatalf("names %v, err %v", names, err)
	}
}

// A read that fails for a retryable cause is retried with doubling backoff
// up to the cap; a successful read resets the backoff and the budget; the
// watch gives up with the last error once reads have failed for GiveUp.
func TestWatchRetriesWithBackoffAndGivesUp(t *testing.T) {
	refused := &Error{Retryable: true, Msg: "cannot reach the API server at https://h: connection refused: check"}
	for _, tc := range []struct {
		name string
		// results of the calls in order (nil: success); after the last,
		// every call fails with refused.
		results []error
		waits   []time.Duration // OnRetry's waits, up to the first 6
		err     string
		minTime time.Duration
	}{
		{name: "never reachable", waits: []time.Duration{10, 20, 40, 40, 40, 40},
			err: "no successful read for 1s, giving up: cannot reach the API server at https://h: connection refused: check", minTime: 1000},
		{name: "a success resets", results: []error{refused, refused, refused, nil},
			waits: []time.Duration{10, 20, 40, 10, 20, 40}, err: "no successful read for 1s", minTime: 1000},
		{name: "not retryable", results: []error{&Error{Msg: `rollout "x" not found in namespace "shop" (check -n/--namespace)`}},
			err: `rollout "x" not found in namespace "shop"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dc := fakeClient(t, exampleObjects(t)...)
			var waits []time.Duration
			calls := 0
			start := time.Now()
			err := Watch(context.Background(), dc, "shop", "checkout-api", WatchOptions{
				Settle: time.Millisecond, Resync: time.Millisecond, Restart: time.Hour,
				Backoff: 10 * time.Millisecond, MaxBackoff: 40 * time.Millisecond, GiveUp: time.Second,
				OnRetry: func(_ error, wait, left time.Duration) {
					if left <= 0 || left > time.Second {
						t.Errorf("left %s, want within the budget", left)
					}
					waits = append(waits, wait)
				},
			}, func() error {
				calls++
				if calls <= len(tc.results) {
					return tc.results[calls-1]
				}
				return refused
			})
			took := time.Since(start)
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Fatalf("err %v, want %q", err, tc.err)
			}
			// The upper bound only catches a retry loop that does not give
			// up; a loaded machine stretches the 1 s budget's last wait.
			if took < tc.minTime*time.Millisecond || took > 30*time.Second {
				t.Errorf("gave up after %s, want about %dms", took, tc.minTime)
			}
			if len(waits) > 6 {
				waits = waits[:6]
			}
			var want []time.Duration
			for _, w := range tc.waits {
				want = append(want, w*time.Millisecond)
			}
			if fmt.Sprint(waits) != fmt.Sprint(want) {
				t.Errorf("waits %v, want %v", waits, want)
			}
		})
	}
}

// Watches that end (a dropped connection, the server's watch timeout) are
// a change, and are started again after the next successful read, also
// when one ends while the others are still being opened (the ReplicaSet
// watch is slow to start here: that read found the set busy).
func TestWatchRestartsEndedWatches(t *testing.T) {
	dc := fakeClient(t, exampleObjects(t)...)
	dc.PrependWatchReactor("replicasets", func(k8stesting.Action) (bool, watch.Interface, error) {
		time.Sleep(50 * time.Millisecond)
		return false, nil, nil // then the fake's own watch
	})
	var mu sync.Mutex
	var started []*watch.FakeWatcher
	dc.PrependWatchReactor("rollouts", func(k8stesting.Action) (bool, watch.Interface, error) {
		w := watch.NewFake()
		mu.Lock()
		started = append(started, w)
		mu.Unlock()
		return true, w, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	calls := 0
	err := Watch(ctx, dc, "shop", "checkout-api", WatchOptions{Settle: time.Millisecond, Resync: time.Hour, Restart: time.Millisecond}, func() error {
		calls++
		call := calls
		go func() {
			// Wait for this round's Rollout watch, then end it: the next
			// read must start it again.
			for ctx.Err() == nil {
				mu.Lock()
				n := len(started)
				mu.Unlock()
				if n >= call {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			if call == 3 {
				cancel()
				return
			}
			mu.Lock()
			started[len(started)-1].Stop()
			mu.Unlock()
		}()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(started) < 3 {
		t.Fatalf("the Rollout watch was started %d times, ended twice; want it started again each time", len(started))
	}
}
