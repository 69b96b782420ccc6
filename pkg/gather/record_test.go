package gather

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	dynfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// syncBuffer is a record file being written while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) waitFor(t *testing.T, what string) {
	t.Helper()
	for end := time.Now().Add(time.Minute); !strings.Contains(s.String(), what); {
		if time.Now().After(end) {
			t.Fatalf("the record never held %q:\n%s", what, s.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// watching is closed once the first watch of resource is registered with
// the fake client's tracker. The fake has no resourceVersion to resume
// from: a change made before the watch exists is never sent to it, so a
// test that changes an object for a watch to see waits for this first
// (under load, the record's list and watch of the Rollout can still be
// on their way when its pods are listed).
func watching(dc *dynfake.FakeDynamicClient, resource string) <-chan struct{} {
	ch := make(chan struct{})
	var once sync.Once
	dc.PrependWatchReactor(resource, func(a k8stesting.Action) (bool, watch.Interface, error) {
		w, err := dc.Tracker().Watch(a.GetResource(), a.GetNamespace())
		if err != nil {
			return true, nil, err
		}
		once.Do(func() { close(ch) })
		return true, w, nil
	})
	return ch
}

func pod(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]interface{}{"name": name, "namespace": "shop", "labels": map[string]interface{}{"app": "checkout-api"},
			"managedFields": []interface{}{map[string]interface{}{"manager": "kubelet", "operation": "Update"}}}}}
}

// A record reads back as a record file: the Rollout's static context, each
// stream's list, the watch events, and the end; the Rollout and its
// ReplicaSets keep their managedFields (who wrote what), pods do not.
func TestRecordWritesAReadableRecord(t *testing.T) {
	dc := fakeClient(t, append(exampleObjects(t), runtime.Object(pod("p1")))...)
	out := &syncBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rollouts := watching(dc, "rollouts")
	done := make(chan *RecordResult, 1)
	go func() {
		res, err := Record(ctx, dc, RecordOptions{Options: Options{Namespace: "shop", Name: "checkout-api"}, Settle: 50 * time.Millisecond}, out)
		if err != nil {
			t.Errorf("Record: %v", err)
		}
		done <- res
	}()
	out.waitFor(t, `"resource":"pods"`)
	<-rollouts
	// The controller promotes: Healthy, after having been seen Progressing.
	ro, err := dc.Resource(GVRRollout).Namespace("shop").Get(ctx, "checkout-api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	unstructured.SetNestedField(ro.Object, "Healthy", "status", "phase")
	ro.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "rollouts-controller", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status"}})
	if _, err := dc.Resource(GVRRollout).Namespace("shop").UpdateStatus(ctx, ro, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var res *RecordResult
	select {
	case res = <-done:
	case <-ctx.Done():
		t.Fatalf("the record did not end once the Rollout was Healthy and quiet:\n%s", out.String())
	}
	if !strings.HasPrefix(res.Reason, "settled") || res.Gaps != 0 {
		t.Errorf("ended %q with %d gaps", res.Reason, res.Gaps)
	}
	rec, err := snapshot.ReadRecording("rec", strings.NewReader(out.String()))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Header.TargetName != "checkout-api" || !strings.HasPrefix(rec.Ended, "settled") {
		t.Errorf("header %+v, ended %q", rec.Header, rec.Ended)
	}
	final, err := rec.Final()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, o := range final.Objects() {
		kinds[o.GetKind()]++
		switch o.GetKind() {
		case "Rollout":
			if p, _, _ := unstructured.NestedString(o.Object, "status", "phase"); p != "Healthy" || len(o.GetManagedFields()) == 0 {
				t.Errorf("the record's last Rollout: phase %q, managedFields %v", p, o.GetManagedFields())
			}
		case "Pod":
			if len(o.GetManagedFields()) > 0 {
				t.Errorf("pod %s kept its managedFields", o.GetName())
			}
		}
	}
	for _, k := range []string{"Rollout", "ReplicaSet", "Pod", "VirtualService", "Service", "Deployment"} {
		if kinds[k] == 0 {
			t.Errorf("the record's final state has no %s (kinds %v)", k, kinds)
		}
	}
}

// A watch that drops is resumed from its resourceVersion, which loses
// nothing and writes no gap; one the server can no longer resume (410) is
// listed again, and the record says which stretch it lost and which objects
// went away meanwhile.
func TestRecordResumesAndReportsTheGapAfterAnExpiredWatch(t *testing.T) {
	dc := fakeClient(t, append(exampleObjects(t), runtime.Object(pod("p1")), runtime.Object(pod("p2")))...)
	var mu sync.Mutex
	podWatches := 0
	drop1, drop2 := make(chan struct{}), make(chan struct{})
	dropping := func(drop chan struct{}) watch.Interface {
		w := watch.NewFake()
		go func() { <-drop; w.Stop() }()
		return w
	}
	dc.PrependWatchReactor("pods", func(a k8stesting.Action) (bool, watch.Interface, error) {
		mu.Lock()
		defer mu.Unlock()
		podWatches++
		switch podWatches {
		case 1:
			return true, dropping(drop1), nil
		case 2:
			// Resumed from its resourceVersion: nothing lost.
			return true, dropping(drop2), nil
		case 3:
			// The next resume finds the resourceVersion compacted.
			return true, nil, apierrors.NewResourceExpired("too old resource version: 1 (99)")
		}
		return false, nil, nil
	})
	watches := func() int { mu.Lock(); defer mu.Unlock(); return podWatches }
	out := &syncBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var notices []string
	var nmu sync.Mutex
	done := make(chan *RecordResult, 1)
	go func() {
		res, err := Record(ctx, dc, RecordOptions{Options: Options{Namespace: "shop", Name: "checkout-api"}, Backoff: time.Millisecond,
			OnNotice: func(s string) { nmu.Lock(); notices = append(notices, s); nmu.Unlock() }}, out)
		if err != nil {
			t.Errorf("Record: %v", err)
		}
		done <- res
	}()
	out.waitFor(t, `"resource":"pods"`)
	close(drop1)
	for watches() < 2 {
		time.Sleep(5 * time.Millisecond)
	}
	if strings.Contains(out.String(), `"type":"GAP"`) {
		t.Fatalf("a watch resumed from its resourceVersion was written as a gap")
	}
	// While the pods' watch is down, p2 goes away: only the re-list can say.
	if err := dc.Resource(GVRPod).Namespace("shop").Delete(ctx, "p2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	close(drop2)
	out.waitFor(t, `"type":"GAP"`)
	out.waitFor(t, `"name":"p2"`)
	cancel()
	res := <-done
	if res.Gaps != 1 {
		t.Errorf("%d gaps, want 1", res.Gaps)
	}
	rec, err := snapshot.ReadRecording("rec", strings.NewReader(out.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Gaps) != 1 || rec.Gaps[0].Resource != "pods" || !strings.Contains(rec.Gaps[0].Reason, "listed again") || rec.Gaps[0].Open {
		t.Fatalf("gaps %+v", rec.Gaps)
	}
	final, _ := rec.Final()
	for _, o := range final.Objects() {
		if o.GetKind() == "Pod" && o.GetName() == "p2" {
			t.Errorf("p2, deleted while the watch was down, is still in the record's final state")
		}
	}
	nmu.Lock()
	defer nmu.Unlock()
	if !strings.Contains(strings.Join(notices, "\n"), "pods: the watch could not be resumed") {
		t.Errorf("the gap was not said while recording: %q", notices)
	}
	if rec.Ended != "interrupted" {
		t.Errorf("ended %q, want interrupted", rec.Ended)
	}
}

// A kind the user may not read is a gap in the record's header, as in a
// snapshot; a Rollout that does not exist is an error before anything is
// written.
func TestRecordForbiddenStreamAndMissingRollout(t *testing.T) {
	dc := fakeClient(t, exampleObjects(t)...)
	dc.PrependReactor("list", "events", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(GVREvent.GroupResource(), "", nil)
	})
	out := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for !strings.Contains(out.String(), `"resource":"replicasets.apps"`) {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	if _, err := Record(ctx, dc, RecordOptions{Options: Options{Namespace: "shop", Name: "checkout-api"}}, out); err != nil {
		t.Fatal(err)
	}
	rec, err := snapshot.ReadRecording("rec", strings.NewReader(out.String()))
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := (&snapshot.Snapshot{Header: rec.Header}).HasGap("events"); !ok || g.Reason != snapshot.GapForbidden {
		t.Errorf("header gaps %+v: want events Forbidden", rec.Header.Gaps)
	}
	var empty bytes.Buffer
	_, err = Record(context.Background(), dc, RecordOptions{Options: Options{Namespace: "shop", Name: "nope"}}, &empty)
	if err == nil || !strings.Contains(err.Error(), `rollout "nope" not found`) || empty.Len() != 0 {
		t.Errorf("a missing Rollout: %v; wrote %d bytes", err, empty.Len())
	}
}

// A Rollout deleted while it is recorded ends the record, which says so.
func TestRecordEndsWhenTheRolloutIsDeleted(t *testing.T) {
	dc := fakeClient(t, exampleObjects(t)...)
	out := &syncBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rollouts := watching(dc, "rollouts")
	done := make(chan *RecordResult, 1)
	go func() {
		res, err := Record(ctx, dc, RecordOptions{Options: Options{Namespace: "shop", Name: "checkout-api"}}, out)
		if err != nil {
			t.Errorf("Record: %v", err)
		}
		done <- res
	}()
	<-rollouts
	if err := dc.Resource(GVRRollout).Namespace("shop").Delete(ctx, "checkout-api", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-done:
		if res.Reason != "the Rollout was deleted" {
			t.Errorf("ended %q", res.Reason)
		}
	case <-ctx.Done():
		t.Fatalf("the record went on after the Rollout was deleted")
	}
	rec, err := snapshot.ReadRecording("rec", strings.NewReader(out.String()))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Ended != "the Rollout was deleted" {
		t.Errorf("the record ends with %q", rec.Ended)
	}
	if final, err := rec.Final(); err != nil {
		t.Fatal(err)
	} else if _, err := final.FindRollout("shop", "checkout-api"); err == nil {
		t.Errorf("the record's last moment still has the Rollout")
	}
}

// A watch the server cannot go on with says so in the stream (an ERROR
// event with 410): the stream is listed again and the gap starts at what
// it last delivered.
func TestRecordGapAfterAnExpiredWatchInTheStream(t *testing.T) {
	dc := fakeClient(t, append(exampleObjects(t), runtime.Object(pod("p1")))...)
	var mu sync.Mutex
	n := 0
	expire := make(chan struct{})
	dc.PrependWatchReactor("pods", func(k8stesting.Action) (bool, watch.Interface, error) {
		mu.Lock()
		defer mu.Unlock()
		n++
		if n > 1 {
			return false, nil, nil
		}
		w := watch.NewFake()
		go func() {
			<-expire
			gone := apierrors.NewResourceExpired("too old resource version: 5 (9)")
			w.Error(&gone.ErrStatus)
		}()
		return true, w, nil
	})
	out := &syncBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := Record(ctx, dc, RecordOptions{Options: Options{Namespace: "shop", Name: "checkout-api"}, Backoff: time.Millisecond}, out); err != nil {
			t.Errorf("Record: %v", err)
		}
	}()
	out.waitFor(t, `"resource":"pods"`)
	before := time.Now().UTC()
	close(expire)
	out.waitFor(t, `"type":"GAP"`)
	cancel()
	<-done
	rec, err := snapshot.ReadRecording("rec", strings.NewReader(out.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Gaps) != 1 || rec.Gaps[0].Resource != "pods" || rec.Gaps[0].From.After(before) {
		t.Errorf("gaps %+v: want one for pods, from no later than the expiry (%s)", rec.Gaps, before)
	}
}

// A record watches Experiments from its start even when the Rollout has no
// experiment step yet: a step added while it runs starts an Experiment,
// and the record holds it (and says it listed Experiments, so their
// absence before means none). Refused, they are no gap for a Rollout that
// has no such step: a diagnose of it would not read them either.
func TestRecordWatchesExperimentsBeforeTheStep(t *testing.T) {
	dc := fakeClient(t, exampleObjects(t)...)
	out := &syncBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	experiments := watching(dc, "experiments")
	done := make(chan error, 1)
	go func() {
		_, err := Record(ctx, dc, RecordOptions{Options: Options{Namespace: "shop", Name: "checkout-api"}}, out)
		done <- err
	}()
	select {
	case <-experiments:
	case <-time.After(10 * time.Second):
		t.Fatalf("the record of a Rollout without an experiment step never watched Experiments:\n%s", out.String())
	}
	ro, err := dc.Resource(GVRRollout).Namespace("shop").Get(ctx, "checkout-api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ex := &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": "argoproj.io/v1alpha1", "kind": "Experiment",
		"metadata": map[string]interface{}{"name": "checkout-api-7c9d-3-0", "namespace": "shop",
			"ownerReferences": []interface{}{map[string]interface{}{"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "name": "checkout-api", "uid": string(ro.GetUID()), "controller": true}}},
		"status": map[string]interface{}{"phase": "Running"}}}
	if _, err := dc.Resource(GVRExperiment).Namespace("shop").Create(ctx, ex, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	out.waitFor(t, `"name":"checkout-api-7c9d-3-0"`)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	rec, err := snapshot.ReadRecording("rec", strings.NewReader(out.String()))
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Header.ListedWhole("experiments.argoproj.io", "shop") {
		t.Errorf("header listed %v, gaps %+v: want experiments listed whole", rec.Header.Listed, rec.Header.Gaps)
	}
	final, err := rec.Final()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, o := range final.Objects() {
		found = found || o.GetKind() == "Experiment" && o.GetName() == "checkout-api-7c9d-3-0"
	}
	if !found {
		t.Errorf("the record's final state lacks the Experiment created while it ran:\n%s", out.String())
	}

	refused := fakeClient(t, exampleObjects(t)...)
	refused.PrependReactor("list", "experiments", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(GVRExperiment.GroupResource(), "", nil)
	})
	out = &syncBuffer{}
	ctx, cancel = context.WithCancel(context.Background())
	go func() {
		out.waitFor(t, `"resource":"replicasets.apps"`)
		cancel()
	}()
	if _, err := Record(ctx, refused, RecordOptions{Options: Options{Namespace: "shop", Name: "checkout-api"}}, out); err != nil {
		t.Fatal(err)
	}
	if rec, err = snapshot.ReadRecording("rec", strings.NewReader(out.String())); err != nil {
		t.Fatal(err)
	}
	if _, gap := rec.Header.ListGap("experiments.argoproj.io", "shop"); gap || slices.Contains(rec.Header.Listed, "experiments.argoproj.io") {
		t.Errorf("refused Experiments of a Rollout without the step: listed %v, gaps %+v; want neither", rec.Header.Listed, rec.Header.Gaps)
	}
}
