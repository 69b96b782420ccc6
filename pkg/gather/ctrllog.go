package gather

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// Bounds of a controller log read: each pod's log is one request for the
// newest LogTailLines lines since the window's start, at most LogLimitBytes
// of them, the window at most LogMaxAge long.
const (
	LogLimitBytes = 2 << 20
	LogTailLines  = 10000
	LogMaxAge     = time.Hour
	// logMaxPods bounds the pods read: a controller Deployment runs one or
	// two (the leader reconciles; the others log nothing about a Rollout).
	logMaxPods = 3
)

// LogRequest says whose log to read for which Rollout.
type LogRequest struct {
	Namespace, Name string
	// Controllers are the controller Deployments that reconcile the Rollout
	// (snapshot.OwningControllers).
	Controllers []*appsv1.Deployment
	// Since is when the window starts (the current revision's start); it is
	// moved to Now-LogMaxAge when older or unknown.
	Since  time.Time
	Now    time.Time
	Reason string
}

// ControllerLog reads the container log of the pods of the controller
// Deployments that reconcile the Rollout — one LIST of each Deployment's
// pods, one bounded pods/log GET per running pod — and keeps the lines
// about the Rollout. What cannot be read is the result's Gap (a line that
// says what to grant or check), never an error: the diagnosis goes on
// without the log.
func ControllerLog(ctx context.Context, kube *Typed, req LogRequest) *snapshot.ControllerLog {
	now := req.Now
	if now.IsZero() {
		now = time.Now()
	}
	since := req.Since
	if since.IsZero() || since.Before(now.Add(-LogMaxAge)) {
		since = now.Add(-LogMaxAge)
	}
	out := &snapshot.ControllerLog{Reason: req.Reason, Since: since.UTC().Truncate(time.Second), TailLines: LogTailLines, LimitBytes: LogLimitBytes}
	if kube == nil {
		out.Gap = "no typed client (internal error)"
		return out
	}
	if len(req.Controllers) == 0 {
		out.Gap = "no controller Deployment that reconciles this Rollout was found (see the controller version note)"
		return out
	}
	var gaps []string
	read := 0
	for _, d := range req.Controllers {
		sel := selectorString(d.Spec.Selector)
		if sel == "" {
			gaps = append(gaps, fmt.Sprintf("Deployment %s/%s has no selector to find its pods by", d.Namespace, d.Name))
			continue
		}
		pods, err := listAllTyped(ctx, kube, nsPath("/api/v1", d.Namespace, "pods"), metav1.ListOptions{LabelSelector: sel}, nil,
			func(p *corev1.Pod) { p.ManagedFields = nil }, nil)
		if err != nil {
			gaps = append(gaps, logReadGap(err, "list", "pods", d.Namespace))
			continue
		}
		running := runningPods(pods)
		if len(running) == 0 {
			gaps = append(gaps, fmt.Sprintf("no running pod of Deployment %s/%s (%d pod(s) found)", d.Namespace, d.Name, len(pods)))
			continue
		}
		container := controllerContainer(d)
		for _, p := range running {
			if read >= logMaxPods {
				break
			}
			read++
			src, lines, err := readPodLog(ctx, kube, p, container, since, req.Namespace, req.Name)
			if err != nil {
				gaps = append(gaps, logReadGap(err, "get", "pods/log", p.Namespace)+" (pod "+p.Name+")")
				continue
			}
			out.Sources = append(out.Sources, src)
			out.Lines = append(out.Lines, lines...)
		}
	}
	sort.SliceStable(out.Lines, func(i, j int) bool { return out.Lines[i].Time.Before(out.Lines[j].Time) })
	if len(out.Sources) == 0 && len(gaps) > 0 {
		out.Gap = strings.Join(gaps, "; ")
	}
	return out
}

// runningPods are the pods whose containers run, newest first.
func runningPods(pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[j].CreationTimestamp.Before(&out[i].CreationTimestamp) })
	return out
}

// controllerContainer is the container that runs the controller: the one
// named argo-rollouts (the manifests' and the Helm chart's), else the one
// whose image is argo-rollouts, else the first.
func controllerContainer(d *appsv1.Deployment) string {
	cs := d.Spec.Template.Spec.Containers
	for _, c := range cs {
		if c.Name == "argo-rollouts" {
			return c.Name
		}
	}
	for _, c := range cs {
		if strings.Contains(c.Image, "argo-rollouts") {
			return c.Name
		}
	}
	if len(cs) > 0 {
		return cs[0].Name
	}
	return ""
}

func readPodLog(ctx context.Context, kube *Typed, p *corev1.Pod, container string, since time.Time, ns, name string) (snapshot.LogSource, []snapshot.LogLine, error) {
	src := snapshot.LogSource{Namespace: p.Namespace, Pod: p.Name, Container: container}
	tail, limit := int64(LogTailLines), int64(LogLimitBytes)
	req := kube.rc.Get().AbsPath("/api/v1/namespaces", p.Namespace, "pods", p.Name, "log").
		Param("sinceTime", since.UTC().Format(time.RFC3339)).
		Param("tailLines", strconv.FormatInt(tail, 10)).Param("limitBytes", strconv.FormatInt(limit, 10))
	if container != "" {
		req = req.Param("container", container)
	}
	rc, err := req.Stream(ctx)
	if err != nil {
		return src, nil, err
	}
	defer rc.Close()
	// The server bounds the body; so does the reader, in case it does not.
	data, err := io.ReadAll(io.LimitReader(rc, limit))
	if err != nil {
		return src, nil, err
	}
	src.Bytes = len(data)
	src.Truncated = int64(len(data)) >= limit || int64(bytes.Count(data, []byte{'\n'})) >= tail
	lines, format := snapshot.ParseControllerLog(data, ns, name)
	for i := range lines {
		lines[i].Pod = p.Name
	}
	src.Format, src.Lines = format, len(lines)
	return src, lines, nil
}

// logReadGap words a failed read of the controller's pods or their log.
func logReadGap(err error, verb, resource, ns string) string {
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Sprintf("%s; grant %s on %s in namespace %s", oneLine(err), verb, resource, ns)
	case apierrors.IsNotFound(err):
		return oneLine(err) + "; the pod is gone: diagnose again"
	}
	return oneLine(err)
}
