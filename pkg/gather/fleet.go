package gather

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// FleetOptions scope a fleet read.
type FleetOptions struct {
	// Namespace limits the read to one namespace; "" means all namespaces.
	Namespace string
	// Selector is a label selector on the Rollouts.
	Selector    string
	ToolVersion string
	Context     string
	Server      string
	// Timeout is the connection's per-request bound, for messages.
	Timeout time.Duration
	// Progress, if set, is told what is being read (for a terminal).
	Progress func(what string, n int)
	// Kube reads ReplicaSets as protobuf (see Options.Kube); nil reads
	// them through the dynamic client.
	Kube *Typed
}

// FleetResult is the fleet snapshot and what reading it cost.
type FleetResult struct {
	Snapshot *snapshot.Snapshot
	// Requests is the number of API requests made (pages included).
	Requests int
}

// Fleet reads every Rollout in scope with a handful of paginated LIST calls
// and never a request per Rollout: the Rollouts, the ReplicaSets the
// controller labels (rollouts-pod-template-hash), HPAs and KEDA
// ScaledObjects, the argo-rollouts controller Deployments, and the
// Experiments when a Rollout has an experiment step. Pods are not
// read: ReplicaSet status carries the availability the model needs, and a
// fleet may have tens of thousands of pods. Read as protobuf (opt.Kube),
// the ReplicaSets keep of their pod template only its metadata and its
// containers' names and images (see unmarshalFleetReplicaSet): a snapshot
// of a fleet is for a scan, not for writing out as a diagnose's is.
func Fleet(ctx context.Context, dc dynamic.Interface, opt FleetOptions) (*FleetResult, error) {
	var requests atomic.Int64
	c := &collector{}
	list := func(gvr schema.GroupVersionResource, kind, ns string, lo metav1.ListOptions) ([]*unstructured.Unstructured, error) {
		// Pages of 5,000 as for one Rollout: each page is a round trip
		// after the last, and 500 made 1,000 Rollouts' ReplicaSets four.
		out, err := listPages(ctx, dc, gvr, ns, lo, func(n int) {
			requests.Add(1)
			if opt.Progress != nil {
				opt.Progress(kind, n)
			}
		})
		if err != nil {
			requests.Add(1) // the failed page
			return nil, err
		}
		for _, u := range out {
			setGVK(u, gvr, kind)
		}
		return out, nil
	}
	type job struct {
		gvr      schema.GroupVersionResource
		kind, ns string
		lo       metav1.ListOptions
	}
	jobs := []job{
		{GVRHPA, "HorizontalPodAutoscaler", opt.Namespace, metav1.ListOptions{}},
		{GVRScaledObject, "ScaledObject", opt.Namespace, metav1.ListOptions{}},
	}
	// Everything at once: nothing here depends on the Rollouts read (the
	// ReplicaSets are found by the controller's label).
	done := make(chan struct{}, len(jobs)+2)
	for _, j := range jobs {
		go func() {
			defer func() { done <- struct{}{} }()
			objs, err := list(j.gvr, j.kind, j.ns, j.lo)
			if err != nil {
				c.gap(j.gvr, j.ns, "", err)
				return
			}
			c.listedIn(j.gvr, j.ns)
			c.add(objs...)
		}()
	}
	// The controller Deployments, typed as the analysis reads them.
	var controllers typedSet[appsv1.Deployment]
	go func() {
		defer func() { done <- struct{}{} }()
		var err error
		controllers, err = readControllers(ctx, dc, opt.Kube, func(n int) {
			requests.Add(1)
			if opt.Progress != nil {
				opt.Progress("Deployment", n)
			}
		})
		if err != nil {
			requests.Add(1) // the failed page
			c.gap(GVRDeployment, "", "", err)
		}
	}()
	// The ReplicaSets (twice the Rollouts, or ten times with a full
	// revision history) as protobuf straight into structs, as a diagnose
	// reads pods, less their pod templates' bodies.
	var rss typedSet[appsv1.ReplicaSet]
	var rsErr error
	go func() {
		defer func() { done <- struct{}{} }()
		page := func(n int) {
			requests.Add(1)
			if opt.Progress != nil {
				opt.Progress("ReplicaSet", n)
			}
		}
		rss, rsErr = readReplicaSets(ctx, dc, opt.Kube, opt.Namespace, metav1.ListOptions{LabelSelector: "rollouts-pod-template-hash"}, unmarshalFleetReplicaSet, page)
		if rsErr != nil {
			requests.Add(1) // the failed page
			c.gap(GVRReplicaSet, opt.Namespace, "", rsErr)
			return
		}
		// Every ReplicaSet of a Rollout carries the label.
		c.listedIn(GVRReplicaSet, opt.Namespace)
	}()
	ros, err := readRollouts(ctx, dc, opt.Kube, opt.Namespace, metav1.ListOptions{LabelSelector: opt.Selector}, func(n int) {
		requests.Add(1)
		if opt.Progress != nil {
			opt.Progress("Rollout", n)
		}
	})
	if err == nil && anyExperiments(ros) {
		// As a diagnose reads them, only when a Rollout has an experiment
		// step: a list after the Rollouts', while the ReplicaSets are still
		// being read. Only the Experiments of Rollouts are kept.
		if exs, err := list(GVRExperiment, "Experiment", opt.Namespace, metav1.ListOptions{}); err != nil {
			c.gap(GVRExperiment, opt.Namespace, "", err)
		} else {
			c.listedIn(GVRExperiment, opt.Namespace)
			for _, ex := range exs {
				if slices.ContainsFunc(ex.GetOwnerReferences(), func(o metav1.OwnerReference) bool { return o.Kind == "Rollout" }) {
					c.add(ex)
				}
			}
		}
	}
	for range len(jobs) + 2 {
		<-done
	}
	if err != nil {
		return nil, listError(err, Options{Namespace: opt.Namespace, Context: opt.Context, Server: opt.Server, Timeout: opt.Timeout, Kube: opt.Kube})
	}
	c.add(ros.objs...)
	h := snapshot.Header{TargetKind: "Fleet", TargetNamespace: opt.Namespace, TakenAt: time.Now().UTC().Truncate(time.Second),
		Context: opt.Context, Server: opt.Server, ToolVersion: opt.ToolVersion, Gaps: c.gaps, Listed: c.listedResources(opt.Namespace)}
	if opt.Namespace == "" {
		h.TargetName = "all namespaces"
	}
	c.add(rss.objs...)
	c.add(controllers.objs...)
	typed := map[*unstructured.Unstructured]snapshot.Decoded{}
	rss.decoded(typed)
	controllers.decoded(typed)
	ros.decoded(typed)
	return &FleetResult{Snapshot: snapshot.NewTyped(h, c.objs, typed), Requests: int(requests.Load())}, nil
}

// anyExperiments: a Rollout read has an experiment step (hasExperiments).
// One read through the dynamic client (no typed client) is decoded here.
func anyExperiments(ros typedSet[v1alpha1.Rollout]) bool {
	for i, u := range ros.objs {
		t := ros.typed[i]
		if t == nil {
			t = &v1alpha1.Rollout{}
			if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, t) != nil {
				continue // not a Rollout the scan can read either
			}
		}
		if hasExperiments(t) {
			return true
		}
	}
	return false
}

// String describes the scope for messages.
func (o FleetOptions) String() string {
	s := "all namespaces"
	if o.Namespace != "" {
		s = "namespace " + o.Namespace
	}
	if o.Selector != "" {
		s += fmt.Sprintf(" (selector %s)", o.Selector)
	}
	return s
}
