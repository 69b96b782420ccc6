//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"sync"
	"syscall"
	"testing"

	"k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	gvrPod = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	gvrNS  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// fleet creates, once, 1,000 Rollouts in 20 namespaces, each with two
// ReplicaSets and 20 pods (20,000 pods), as the controller would leave them.
// No controller runs; pods are never scheduled (schedulerName none), so
// nothing else churns while scan is measured.
var fleetOnce sync.Once

func makeFleet(b *testing.B) {
	ctx := context.Background()
	create := func(gvr schema.GroupVersionResource, ns string, obj map[string]interface{}) *unstructured.Unstructured {
		u, err := dyn.Resource(gvr).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
		if err != nil && !errors.IsAlreadyExists(err) {
			b.Fatalf("create %s in %s: %v", gvr.Resource, ns, err)
		}
		return u
	}
	for n := 0; n < 20; n++ {
		create(gvrNS, "", map[string]interface{}{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]interface{}{"name": fmt.Sprintf("fleet-%02d", n)}})
	}
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				ns, name := fmt.Sprintf("fleet-%02d", i%20), fmt.Sprintf("svc-%04d", i)
				labels := map[string]interface{}{"app": name}
				ro := create(gvrRollout, ns, map[string]interface{}{
					"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
					"metadata": map[string]interface{}{"name": name},
					"spec": map[string]interface{}{
						"replicas": int64(20), "selector": map[string]interface{}{"matchLabels": labels},
						"template": map[string]interface{}{"metadata": map[string]interface{}{"labels": labels},
							"spec": map[string]interface{}{"containers": []interface{}{map[string]interface{}{"name": "a", "image": "r/a:1"}}}},
						"strategy": map[string]interface{}{"canary": map[string]interface{}{
							"steps": []interface{}{map[string]interface{}{"setWeight": int64(10)}, map[string]interface{}{"pause": map[string]interface{}{}}}}},
					},
				})
				for _, hash := range []string{"aaaa" + fmt.Sprint(i), "bbbb" + fmt.Sprint(i)} {
					l := map[string]interface{}{"app": name, "rollouts-pod-template-hash": hash}
					create(gvrRS, ns, map[string]interface{}{
						"apiVersion": "apps/v1", "kind": "ReplicaSet",
						"metadata": map[string]interface{}{"name": name + "-" + hash, "labels": l,
							"ownerReferences": []interface{}{map[string]interface{}{"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "name": name, "uid": string(ro.GetUID()), "controller": true}}},
						"spec": map[string]interface{}{"replicas": int64(0), "selector": map[string]interface{}{"matchLabels": l},
							"template": map[string]interface{}{"metadata": map[string]interface{}{"labels": l},
								"spec": map[string]interface{}{"containers": []interface{}{map[string]interface{}{"name": "a", "image": "r/a:1"}}}}},
					})
					for p := 0; p < 10; p++ {
						create(gvrPod, ns, map[string]interface{}{
							"apiVersion": "v1", "kind": "Pod",
							"metadata": map[string]interface{}{"name": fmt.Sprintf("%s-%s-%d", name, hash, p), "labels": l},
							"spec":     map[string]interface{}{"schedulerName": "none", "containers": []interface{}{map[string]interface{}{"name": "a", "image": "r/a:1"}}},
						})
					}
				}
			}
		}()
	}
	for i := 0; i < 1000; i++ {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
}

// BenchmarkScanFleet runs the real binary's `scan -A -o json` against the
// lab API server holding 1,000 Rollouts and 20,000 pods, and reports the API
// requests it made and its peak RSS (targets: ≤ 15 requests, < 3 s, < 300 MiB).
//
//	go test -tags e2e -run '^$' -bench ScanFleet -benchtime 3x ./test/e2e/
func BenchmarkScanFleet(b *testing.B) {
	fleetOnce.Do(func() { makeFleet(b) })
	var requests, rollouts int
	var maxRSS int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(plugin, "scan", "-A", "-o", "json", "--kubeconfig", kubeconfig)
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("scan: %v", err)
		}
		var rep struct {
			Requests int `json:"apiRequests"`
			Rollouts int `json:"rollouts"`
		}
		if err := json.Unmarshal(out, &rep); err != nil {
			b.Fatal(err)
		}
		requests, rollouts = rep.Requests, rep.Rollouts
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > maxRSS {
			maxRSS = ru.Maxrss
		}
	}
	b.StopTimer()
	if rollouts < 1000 {
		b.Fatalf("scan saw %d Rollouts", rollouts)
	}
	b.ReportMetric(float64(requests), "requests/op")
	b.ReportMetric(float64(maxRSS)/1024, "peak-RSS-MiB")
	b.ReportMetric(float64(rollouts), "rollouts")
}
