package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

var (
	gvrRollout = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}
	gvrService = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	gvrNS      = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// The objects measured: in namespace bench, Rollouts "small" (24 pods) and
// "big" (-big pods), each behind a Service; the fleet, -fleet Rollouts of
// 20 pods in 20 namespaces. Every Rollout is created, reconciled to
// Healthy by the controller, then given a new image, so that it pauses at
// its first step with two ReplicaSets — the state on-call engineers look at.
const (
	benchNS   = "bench"
	fleetNSs  = 20
	fleetPods = 20
	smallPods = 24
)

type lab struct {
	cfg *rest.Config
	dc  dynamic.Interface
	c   *config
}

func newLab(c *config) (*lab, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 2000, 4000
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &lab{cfg: cfg, dc: dc, c: c}, nil
}

type target struct{ ns, name string }

func (l *lab) targets() []target {
	ts := []target{{benchNS, "small"}, {benchNS, "big"}}
	for i := 0; i < l.c.fleet; i++ {
		ts = append(ts, target{fmt.Sprintf("fleet-%02d", i%fleetNSs), fmt.Sprintf("svc-%04d", i)})
	}
	return ts
}

func (l *lab) replicas(t target) int {
	switch {
	case t.ns != benchNS:
		return fleetPods
	case t.name == "small":
		return smallPods
	}
	return l.c.bigPods
}

// populate creates everything and waits until the controller has reconciled
// it twice: Healthy on image a, then paused at the first step on image b
// with every pod available.
func (l *lab) populate(ctx context.Context) error {
	step("creating %d Rollouts (%d pods)", len(l.targets()), l.c.fleet*fleetPods+l.c.bigPods+smallPods)
	nss := []string{benchNS}
	for i := 0; i < fleetNSs && i < l.c.fleet; i++ {
		nss = append(nss, fmt.Sprintf("fleet-%02d", i))
	}
	for _, ns := range nss {
		if err := l.create(ctx, gvrNS, "", map[string]interface{}{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]interface{}{"name": ns}}); err != nil {
			return err
		}
	}
	err := l.each(ctx, func(t target) error {
		if t.ns == benchNS {
			svc := map[string]interface{}{"apiVersion": "v1", "kind": "Service",
				"metadata": map[string]interface{}{"name": t.name, "namespace": t.ns},
				"spec": map[string]interface{}{"selector": map[string]interface{}{"app": t.name},
					"ports": []interface{}{map[string]interface{}{"port": int64(80), "targetPort": int64(8080)}}}}
			if err := l.create(ctx, gvrService, t.ns, svc); err != nil {
				return err
			}
		}
		return l.create(ctx, gvrRollout, t.ns, rollout(t, l.replicas(t), l.node(t)))
	})
	if err != nil {
		return err
	}
	if err := l.waitAll(ctx, "Healthy", time.Hour); err != nil {
		return err
	}
	step("new image on every Rollout")
	err = l.each(ctx, func(t target) error {
		patch := `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:b"}]}}}}`
		_, err := l.dc.Resource(gvrRollout).Namespace(t.ns).Patch(ctx, t.name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		return err
	})
	if err != nil {
		return err
	}
	return l.waitAll(ctx, "Paused", time.Hour)
}

// node is the kwok node a Rollout's pods are bound to: the large Rollout
// alone on the first, the others spread over the rest. Binding in the
// template skips the scheduler, which on 2 shared cores placed 20,000 pods
// in over an hour; the pods are what they would be once scheduled.
func (l *lab) node(t target) string {
	if t.ns == benchNS {
		return "lab-node-1"
	}
	var i int
	fmt.Sscanf(t.name, "svc-%d", &i)
	return fmt.Sprintf("lab-node-%d", 2+i%(l.c.nodes-1))
}

// rollout is a canary Rollout as a team would write one (probes, a
// preStop, two steps) and as kubectl apply and Argo CD's default sync
// create it: with the manifest in the last-applied-configuration
// annotation, which scan and `list rollouts` read with the rest.
func rollout(t target, replicas int, node string) map[string]interface{} {
	ro := manifest(t, replicas, node)
	applied, err := json.Marshal(ro)
	if err != nil {
		panic(err) // maps of strings and numbers
	}
	ro["metadata"].(map[string]interface{})["annotations"] = map[string]interface{}{
		"kubectl.kubernetes.io/last-applied-configuration": string(applied) + "\n"}
	return ro
}

// manifest is the Rollout as its team writes it.
func manifest(t target, replicas int, node string) map[string]interface{} {
	labels := map[string]interface{}{"app": t.name}
	return map[string]interface{}{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
		"metadata": map[string]interface{}{"name": t.name, "namespace": t.ns},
		"spec": map[string]interface{}{
			"replicas": int64(replicas), "revisionHistoryLimit": int64(2),
			"selector": map[string]interface{}{"matchLabels": labels},
			"template": map[string]interface{}{
				"metadata": map[string]interface{}{"labels": labels, "annotations": map[string]interface{}{
					// kwok: ready 1–2 s after start, so that 20,000 pods settle in minutes
					"pod-ready.stage.kwok.x-k8s.io/delay": "1s", "pod-ready.stage.kwok.x-k8s.io/jitter-delay": "1s"}},
				"spec": map[string]interface{}{
					"terminationGracePeriodSeconds": int64(40),
					"nodeName":                      node,
					"containers": []interface{}{map[string]interface{}{
						"name": "app", "image": "registry.example/app:a",
						"ports":          []interface{}{map[string]interface{}{"containerPort": int64(8080)}},
						"readinessProbe": map[string]interface{}{"httpGet": map[string]interface{}{"path": "/ready", "port": int64(8080)}, "periodSeconds": int64(5)},
						"lifecycle":      map[string]interface{}{"preStop": map[string]interface{}{"sleep": map[string]interface{}{"seconds": int64(10)}}},
						"resources":      map[string]interface{}{"requests": map[string]interface{}{"cpu": "10m", "memory": "16Mi"}},
					}},
				},
			},
			"strategy": map[string]interface{}{"canary": map[string]interface{}{
				"steps": []interface{}{map[string]interface{}{"setWeight": int64(25)}, map[string]interface{}{"pause": map[string]interface{}{}}}}},
		},
	}
}

func (l *lab) create(ctx context.Context, gvr schema.GroupVersionResource, ns string, obj map[string]interface{}) error {
	var ri dynamic.ResourceInterface = l.dc.Resource(gvr)
	if ns != "" {
		ri = l.dc.Resource(gvr).Namespace(ns)
	}
	_, err := ri.Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating %s %s/%v: %w", gvr.Resource, ns, obj["metadata"].(map[string]interface{})["name"], err)
	}
	return nil
}

// each runs f for every target, 32 at a time.
func (l *lab) each(ctx context.Context, f func(target) error) error {
	ts := l.targets()
	jobs := make(chan target)
	errs := make(chan error, len(ts))
	var wg sync.WaitGroup
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range jobs {
				if err := f(t); err != nil {
					errs <- err
				}
			}
		}()
	}
	for _, t := range ts {
		select {
		case jobs <- t:
		case <-ctx.Done():
		}
	}
	close(jobs)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	return ctx.Err()
}

// waitAll waits until every Rollout is in phase with all its pods
// available, and the controller has seen its latest spec. It gives up when
// no Rollout got there for stall (a machine shared with other work makes
// the pace, not the count, the signal), or after timeout in all.
func (l *lab) waitAll(ctx context.Context, phase string, timeout time.Duration) error {
	// 10 minutes: after the new image, 5,500 new pods are created and
	// readied by kwok before any Rollout's status moves, and on a loaded
	// 2-core machine that took over 5 (2026-12-02: the first Rollout
	// paused 5 min 14 s after the last status change).
	const stall = 10 * time.Minute
	deadline := time.Now().Add(timeout)
	best, progressed := -1, time.Now()
	last := time.Time{}
	// Progress is any change in how far the Rollouts are, not only in how
	// many are done: after a new image every Rollout moves at once, and on a
	// loaded machine none may finish for minutes while all of them advance.
	prevPace := ""
	for {
		done, want, pace, err := l.progress(ctx, phase)
		if err != nil {
			return err
		}
		if done == want {
			step("all %d Rollouts %s", done, phase)
			return nil
		}
		if time.Since(last) > 20*time.Second {
			step("%d of %d Rollouts %s", done, want, phase)
			last = time.Now()
		}
		if done > best || pace != prevPace {
			best, progressed = max(best, done), time.Now()
		}
		prevPace = pace
		if time.Now().After(deadline) || time.Since(progressed) > stall {
			return fmt.Errorf("only %d of %d Rollouts are %s with all pods available (none more for %s; load average %s)", done, want, phase, time.Since(progressed).Round(time.Second), loadavg())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

// progress counts the Rollouts that are in phase with all their pods
// available and their latest spec observed, out of all targets; pace
// describes how far each one is, to tell a slow lab from a stuck one.
func (l *lab) progress(ctx context.Context, phase string) (done, total int, pace string, err error) {
	want := map[target]int{}
	for _, t := range l.targets() {
		want[t] = l.replicas(t)
	}
	list, err := l.dc.Resource(gvrRollout).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, len(want), "", err
	}
	var sb strings.Builder
	for _, u := range list.Items {
		t := target{u.GetNamespace(), u.GetName()}
		n, ok := want[t]
		if !ok {
			continue
		}
		p, _, _ := unstructured.NestedString(u.Object, "status", "phase")
		avail, _, _ := unstructured.NestedInt64(u.Object, "status", "availableReplicas")
		observed, _, _ := unstructured.NestedString(u.Object, "status", "observedGeneration")
		updated, _, _ := unstructured.NestedInt64(u.Object, "status", "updatedReplicas")
		fmt.Fprintf(&sb, "%s/%s:%s:%d:%d:%s;", t.ns, t.name, p, avail, updated, observed)
		if p == phase && int(avail) == n && observed == fmt.Sprint(u.GetGeneration()) {
			done++
		}
	}
	return done, len(want), sb.String(), nil
}
