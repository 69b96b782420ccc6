package gather

import (
	"bytes"
	"context"
	"fmt"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
)

// world is the bundled incident plus n pods of the Rollout spread over 50
// nodes (half on each ReplicaSet), and those nodes.
func world(t testing.TB, n int) []runtime.Object {
	objs := exampleObjects(t)
	hashes := []string{"5f6c8d7b9a", "7c9d4f6b8e"}
	nodes := 50
	for i := 0; i < nodes; i++ {
		objs = append(objs, &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "v1", "kind": "Node",
			"metadata": map[string]interface{}{"name": fmt.Sprintf("node-%d", i)},
			"status": map[string]interface{}{"conditions": []interface{}{
				map[string]interface{}{"type": "Ready", "status": "True"},
			}},
		}})
	}
	for i := 0; i < n; i++ {
		h := hashes[i%2]
		objs = append(objs, &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]interface{}{
				"name": fmt.Sprintf("checkout-api-%s-%05d", h, i), "namespace": "shop",
				"labels": map[string]interface{}{"app": "checkout-api", "rollouts-pod-template-hash": h},
			},
			"spec": map[string]interface{}{"nodeName": fmt.Sprintf("node-%d", i%nodes),
				"containers": []interface{}{map[string]interface{}{"name": "app", "image": "registry.example/checkout-api"}}},
			"status": map[string]interface{}{"phase": "Running", "conditions": []interface{}{
				map[string]interface{}{"type": "Ready", "status": "True"},
			}},
		}})
	}
	return objs
}

// countedDiagnose gathers and diagnoses the example Rollout once and
// returns the number of API requests it made.
func countedDiagnose(tb testing.TB, objs []runtime.Object) (int64, *diagnose.Report) {
	dc := fakeClient(tb, objs...)
	var n atomic.Int64
	dc.PrependReactor("*", "*", func(k8stesting.Action) (bool, runtime.Object, error) {
		n.Add(1)
		return false, nil, nil
	})
	snap, err := Rollout(context.Background(), dc, Options{Namespace: "shop", Name: "checkout-api"})
	if err != nil {
		tb.Fatal(err)
	}
	ro, err := snap.FindRollout("shop", "checkout-api")
	if err != nil {
		tb.Fatal(err)
	}
	v, err := snap.View(ro)
	if err != nil {
		tb.Fatal(err)
	}
	cv, err := model.DetectVersionFor("", v, "")
	if err != nil {
		tb.Fatal(err)
	}
	return n.Load(), diagnose.Run(v, cv, diagnose.Options{})
}

// TestRequestsDoNotGrowWithPods pins the gatherer's request budget: the same
// number of API requests for 20 pods and for 2,000 pods on 50 nodes.
func TestRequestsDoNotGrowWithPods(t *testing.T) {
	small, rep := countedDiagnose(t, world(t, 20))
	large, rep2 := countedDiagnose(t, world(t, 2000))
	if small != large {
		t.Fatalf("requests: %d with 20 pods, %d with 2000 pods; the count must not depend on pods", small, large)
	}
	// Rollout, ReplicaSets, pods, Services, EndpointSlices, VirtualService,
	// AnalysisRuns, HPAs, ScaledObjects, PDBs, Namespace, Events, controller
	// Deployment, Nodes: 14 for this Istio host-mode Rollout; the pod checks
	// add Ingresses (ALB target mode, readiness gates) and node Leases
	// (readiness that stopped updating): 16.
	if large > 16 {
		t.Fatalf("%d requests; the budget for an Istio Rollout is 16", large)
	}
	if rep.Controller.Assumed == "" || len(rep2.Findings) == 0 {
		t.Fatalf("diagnosis incomplete: version %q, %d findings", rep.Model.Version, len(rep2.Findings))
	}
}

// BenchmarkDiagnose reports time and API requests per diagnose run (gather
// through a fake dynamic client, then the model and the rules).
func BenchmarkDiagnose(b *testing.B) {
	for _, pods := range []int{20, 2000} {
		b.Run(fmt.Sprintf("pods=%d", pods), func(b *testing.B) {
			objs := world(b, pods)
			var reqs int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				reqs, _ = countedDiagnose(b, objs)
			}
			b.ReportMetric(float64(reqs), "requests/op")
		})
	}
}

// managedFieldsOf is what the API server returns for an object written by
// n managers, each owning most of its spec (a Rollout applied by a GitOps
// tool, patched by people and the controller: 1–2 KB an entry in practice).
func managedFieldsOf(n int) []metav1.ManagedFieldsEntry {
	raw := []byte(`{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}},"f:labels":{".":{},"f:app":{}}},` +
		`"f:spec":{".":{},"f:replicas":{},"f:revisionHistoryLimit":{},"f:selector":{},"f:strategy":{".":{},"f:canary":{".":{},"f:canaryService":{},"f:stableService":{},"f:steps":{},"f:trafficRouting":{".":{},"f:istio":{".":{},"f:virtualService":{".":{},"f:name":{},"f:routes":{}}}}}},` +
		`"f:template":{".":{},"f:metadata":{".":{},"f:labels":{".":{},"f:app":{}}},"f:spec":{".":{},"f:containers":{".":{},"k:{\"name\":\"app\"}":{".":{},"f:image":{},"f:name":{},"f:ports":{},"f:readinessProbe":{},"f:resources":{}}}}}}}`)
	out := make([]metav1.ManagedFieldsEntry, n)
	for i := range out {
		t := metav1.Now()
		out[i] = metav1.ManagedFieldsEntry{Manager: fmt.Sprintf("writer-%d", i), Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "argoproj.io/v1alpha1",
			Time: &t, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: raw}}
	}
	return out
}

// BenchmarkManagedFields is the memory cost of keeping the managedFields
// of the Rollout and its VirtualService (RD160) on the 2,000-pod diagnose,
// every object carrying 4 managers' entries as the API server returns
// them: kept (as diagnose does) against dropped like every other kind's.
func BenchmarkManagedFields(b *testing.B) {
	for _, keep := range []bool{false, true} {
		b.Run(fmt.Sprintf("kept=%v", keep), func(b *testing.B) {
			objs := world(b, 2000)
			for _, o := range objs {
				if u, ok := o.(*unstructured.Unstructured); ok {
					u.SetManagedFields(managedFieldsOf(4))
				} else if m, ok := o.(metav1.Object); ok {
					m.SetManagedFields(managedFieldsOf(4))
				}
			}
			saved := keepManagedFields
			if !keep {
				keepManagedFields = map[string]bool{}
			}
			defer func() { keepManagedFields = saved }()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				countedDiagnose(b, objs)
			}
		})
	}
}

// TestGitOpsOwnerIsOneRequest: a Rollout with Argo CD's tracking-id costs
// one GET more (its Application, read as data), whatever its pods; its
// managedFields are kept so that who writes its spec can be read.
func TestGitOpsOwnerIsOneRequest(t *testing.T) {
	plain, _ := countedDiagnose(t, world(t, 20))
	objs := world(t, 20)
	for _, o := range objs {
		if u, ok := o.(*unstructured.Unstructured); ok && u.GetKind() == "Rollout" {
			u.SetAnnotations(map[string]string{"argocd.argoproj.io/tracking-id": "shop:argoproj.io/Rollout:shop/checkout-api"})
			u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "argocd-controller", Operation: metav1.ManagedFieldsOperationApply,
				FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:template":{}}}`)}}})
		}
	}
	objs = append(objs, &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]interface{}{"name": "shop", "namespace": "argocd"},
		"spec":     map[string]interface{}{"syncPolicy": map[string]interface{}{"automated": map[string]interface{}{"selfHeal": true}}},
	}})
	tracked, rep := countedDiagnose(t, objs)
	if tracked != plain+1 {
		t.Errorf("%d requests with a tracked Rollout, %d without: want one more", tracked, plain)
	}
	found := false
	for _, f := range rep.Findings {
		found = found || f.ID == "RD161" && strings.Contains(f.Message, "selfHeal")
	}
	if !found {
		t.Errorf("the Application was not read as data (no RD161 with selfHeal): %+v", rep.Findings)
	}
}

// countingWriter counts what a record writes, and its lines.
type countingWriter struct{ bytes, lines atomic.Int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.bytes.Add(int64(len(p)))
	w.lines.Add(int64(bytes.Count(p, []byte("\n"))))
	return len(p), nil
}

// BenchmarkRecord records the example Rollout with n pods while its pods
// change `changes` times, and reports the recorder's peak heap above what
// the fake API server holds (sampled every 5 ms), and what it wrote. The
// recorder keeps only each object's name and resourceVersion, and writes
// a page of a list before reading the next: its peak must not grow with
// the changes, only a little with the pods.
func BenchmarkRecord(b *testing.B) {
	for _, tc := range []struct{ pods, changes int }{{20, 200}, {2000, 2000}, {2000, 10000}} {
		b.Run(fmt.Sprintf("pods=%d/changes=%d", tc.pods, tc.changes), func(b *testing.B) {
			objs := world(b, tc.pods)
			var peak uint64
			var written int64
			for i := 0; i < b.N; i++ {
				dc := fakeClient(b, objs...)
				pods, err := dc.Resource(GVRPod).Namespace("shop").List(context.Background(), metav1.ListOptions{})
				if err != nil {
					b.Fatal(err)
				}
				goruntime.GC()
				var ms goruntime.MemStats
				goruntime.ReadMemStats(&ms)
				base := ms.HeapInuse
				// The fake API server does not replay a watch from its
				// resourceVersion: the changes start once the pods' watch is.
				watching := make(chan struct{})
				var once sync.Once
				dc.PrependWatchReactor("pods", func(k8stesting.Action) (bool, watch.Interface, error) {
					once.Do(func() { close(watching) })
					return false, nil, nil
				})
				out := &countingWriter{}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() {
					defer close(done)
					if _, err := Record(ctx, dc, RecordOptions{Options: Options{Namespace: "shop", Name: "checkout-api"}}, out); err != nil {
						b.Error(err)
					}
				}()
				stop := make(chan struct{})
				sampled := make(chan uint64)
				go func() {
					var top uint64
					t := time.NewTicker(5 * time.Millisecond)
					defer t.Stop()
					for {
						select {
						case <-stop:
							sampled <- top
							return
						case <-t.C:
							goruntime.ReadMemStats(&ms)
							if ms.HeapInuse > base && ms.HeapInuse-base > top {
								top = ms.HeapInuse - base
							}
						}
					}
				}()
				// Change pods in batches the fake watch can buffer (it
				// holds 100 events), each written before the next.
				waitQuiet := func() {
					last := int64(-1)
					for n := out.lines.Load(); n != last; n = out.lines.Load() {
						last = n
						time.Sleep(20 * time.Millisecond)
					}
				}
				select {
				case <-watching:
				case <-time.After(time.Minute):
					b.Fatal("the pods were never watched")
				}
				waitQuiet()
				batch := out.lines.Load()
				for c := 0; c < tc.changes; c++ {
					p := pods.Items[c%len(pods.Items)].DeepCopy()
					p.SetAnnotations(map[string]string{"change": fmt.Sprint(c)})
					if err := dc.Tracker().Update(GVRPod, p, "shop"); err != nil {
						b.Fatal(err)
					}
					if c%50 == 49 {
						want := batch + 50
						batch = want
						for end := time.Now().Add(time.Minute); out.lines.Load() < want; time.Sleep(time.Millisecond) {
							if time.Now().After(end) {
								b.Fatalf("change %d: the record has %d lines, want %d", c, out.lines.Load(), want)
							}
						}
					}
				}
				waitQuiet()
				cancel()
				<-done
				close(stop)
				peak = max(peak, <-sampled)
				written = out.bytes.Load()
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(written)/(1<<20), "written-MiB")
		})
	}
}
