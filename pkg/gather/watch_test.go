package gather

import (
	"context"
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
	selectors := map[string]string{}
	dc.PrependWatchReactor("*", func(a k8stesting.Action) (bool, watch.Interface, error) {
		mu.Lock()
		defer mu.Unlock()
		selectors[a.GetResource().Resource] = a.(k8stesting.WatchActionImpl).GetWatchRestrictions().Labels.String()
		return false, nil, nil
	})
	calls := 0
	err = Watch(ctx, dc, "shop", "checkout-api", WatchOptions{Settle: time.Millisecond}, func() error {
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
					if n == 3 || ctx.Err() != nil {
						break
					}
					time.Sleep(10 * time.Millisecond)
				}
				u := ro.DeepCopy()
				u.SetAnnotations(map[string]string{"touched": "yes"})
				dc.Tracker().Update(GVRRollout, u, "shop")
			}()
		case 2:
			cancel()
		}
		return nil
	})
	if err != nil || calls != 2 {
		t.Fatalf("err %v after %d calls: want one call at the start and one after the change", err, calls)
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
