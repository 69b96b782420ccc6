package escape

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/gather"
)

// This file is the only code in rolloutdoctor that writes to a cluster.

var (
	gvrRollout    = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}
	gvrDeployment = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

// ApplyOptions tune Apply.
type ApplyOptions struct {
	// DryRunServer sends the requests with dryRun=All: the API server
	// validates and admits them, and persists nothing.
	DryRunServer bool
	// WorkloadResourceVersion is the precondition for an undo that patches
	// the workloadRef'd Deployment instead of the Rollout.
	WorkloadResourceVersion string
}

// Sent is one request as it went out.
type Sent struct {
	Request
	Body            json.RawMessage `json:"sentBody"`
	FellBack        bool            `json:"fellBackToMainResource,omitempty"`
	ResourceVersion string          `json:"resourceVersionAfter,omitempty"`
	// Generation is the object's metadata.generation after the request:
	// a later request of the same action may be retried against a newer
	// resourceVersion only while it is unchanged (see Apply).
	Generation int64 `json:"generationAfter,omitempty"`
	// Retried: the first try met a resourceVersion the controller's own
	// status write had moved on; the spec was as this action left it.
	Retried bool `json:"retriedAfterStatusWrite,omitempty"`
}

// ApplyError explains a failed write in one line and says whether anything
// was written before it.
type ApplyError struct {
	Msg string
	// Unknown: the connection failed mid-request; the write may or may not
	// have happened.
	Unknown bool
	// Conflict: the API server refused the write because the object changed
	// since it was read (409); this request wrote nothing.
	Conflict bool
	// Partial lists the requests that did succeed before the failure.
	Partial []Sent
}

func (e *ApplyError) Error() string { return e.Msg }

// WithPrecondition returns body with the resourceVersion precondition: in a
// merge patch, metadata.resourceVersion; in a JSON patch, a leading
// replace of /metadata/resourceVersion. Either makes the API server refuse
// the write with 409 Conflict if the object changed since it was read.
func WithPrecondition(patchType string, body json.RawMessage, rv string) (json.RawMessage, error) {
	if rv == "" {
		return body, nil
	}
	switch patchType {
	case "merge":
		var m map[string]interface{}
		if err := json.Unmarshal(body, &m); err != nil {
			return nil, err
		}
		md, _ := m["metadata"].(map[string]interface{})
		if md == nil {
			md = map[string]interface{}{}
		}
		md["resourceVersion"] = rv
		m["metadata"] = md
		return json.Marshal(m)
	case "json":
		var ops []interface{}
		if err := json.Unmarshal(body, &ops); err != nil {
			return nil, err
		}
		ops = append([]interface{}{map[string]interface{}{"op": "replace", "path": "/metadata/resourceVersion", "value": rv}}, ops...)
		return json.Marshal(ops)
	}
	return nil, fmt.Errorf("unknown patch type %q", patchType)
}

// Apply sends an option's requests in order, each with the resourceVersion
// precondition (the plan's for the first request, the previous response's
// after that). It never retries a write. A status request whose subresource
// is not served falls back to its unified body on the main resource, as the
// CLI does, and then the CLI's separate spec request is not sent.
func Apply(ctx context.Context, dc dynamic.Interface, p *Plan, o *Option, opt ApplyOptions) ([]Sent, error) {
	var sent []Sent
	rv := p.ResourceVersion
	fellBack := false
	for _, r := range o.Requests {
		if fellBack && r.Subresource == "" && r.Kind == "Rollout" {
			continue // the unified fallback body already carried it
		}
		gvr, precond := gvrRollout, rv
		if r.Kind == "Deployment" {
			gvr, precond = gvrDeployment, opt.WorkloadResourceVersion
		} else if r.Kind != "Rollout" {
			return sent, &ApplyError{Msg: fmt.Sprintf("undo of a %s workloadRef is not supported: patch %s/%s yourself", r.Kind, r.Kind, r.Name), Partial: sent}
		}
		s, err := send(ctx, dc, gvr, p.Namespace, r, r.Body, r.Subresource, precond, opt.DryRunServer)
		if err != nil && apierrors.IsConflict(err) && r.Kind == "Rollout" && len(sent) > 0 && sent[len(sent)-1].Kind == "Rollout" {
			// A later request of the action (promote's spec patch after its
			// status patch): the controller reconciles what the earlier one
			// wrote and writes the status in between. That is no change
			// underneath: retry once against the newer resourceVersion when
			// the spec (generation) is as the earlier request left it.
			if cur, gerr := dc.Resource(gvr).Namespace(p.Namespace).Get(ctx, r.Name, metav1.GetOptions{}); gerr == nil && cur.GetGeneration() == sent[len(sent)-1].Generation {
				s, err = send(ctx, dc, gvr, p.Namespace, r, r.Body, r.Subresource, cur.GetResourceVersion(), opt.DryRunServer)
				s.Retried = true
			}
		}
		if err != nil && apierrors.IsNotFound(err) && r.Subresource == "status" && len(r.Fallback) > 0 {
			s, err = send(ctx, dc, gvr, p.Namespace, r, r.Fallback, "", precond, opt.DryRunServer)
			s.FellBack, fellBack = true, err == nil
		}
		if err != nil {
			return sent, describe(err, p, o, r, sent)
		}
		if r.Kind == "Rollout" && s.ResourceVersion != "" && !opt.DryRunServer {
			rv = s.ResourceVersion
		}
		sent = append(sent, s)
	}
	return sent, nil
}

func send(ctx context.Context, dc dynamic.Interface, gvr schema.GroupVersionResource, ns string, r Request, body json.RawMessage, sub, rv string, dry bool) (Sent, error) {
	s := Sent{Request: r}
	b, err := WithPrecondition(r.PatchType, body, rv)
	if err != nil {
		return s, err
	}
	s.Body = b
	pt := types.MergePatchType
	if r.PatchType == "json" {
		pt = types.JSONPatchType
	}
	po := metav1.PatchOptions{}
	if dry {
		po.DryRun = []string{metav1.DryRunAll}
	}
	var subs []string
	if sub != "" {
		subs = []string{sub}
	}
	u, err := dc.Resource(gvr).Namespace(ns).Patch(ctx, r.Name, pt, b, po, subs...)
	if err != nil {
		return s, err
	}
	s.ResourceVersion, s.Generation = u.GetResourceVersion(), u.GetGeneration()
	return s, nil
}

func describe(err error, p *Plan, o *Option, r Request, sent []Sent) error {
	target := fmt.Sprintf("%s %s/%s", strings.ToLower(r.Kind), p.Namespace, r.Name)
	if r.Subresource != "" {
		target += " (" + r.Subresource + ")"
	}
	partial := ""
	if len(sent) > 0 {
		partial = fmt.Sprintf(" — %d earlier request(s) of %s were applied; check the Rollout before doing anything else", len(sent), o.Action)
	}
	check := fmt.Sprintf("kubectl rolloutdoctor diagnose %s -n %s", p.Name, p.Namespace)
	switch {
	case apierrors.IsConflict(err):
		msg := fmt.Sprintf("%s changed since it was read (resourceVersion %s): nothing was written by this request; re-run to plan against its current state%s", target, p.ResourceVersion, partial)
		return &ApplyError{Msg: msg, Partial: sent, Conflict: true}
	case apierrors.IsForbidden(err):
		return &ApplyError{Msg: fmt.Sprintf("not allowed to patch %s%s: grant patch on rollouts and rollouts/status (see docs/rbac.yaml)%s", target, gather.ForbiddenAs(err), partial), Partial: sent}
	case apierrors.IsNotFound(err):
		return &ApplyError{Msg: fmt.Sprintf("%s no longer exists%s", target, partial), Partial: sent}
	case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
		return &ApplyError{Msg: fmt.Sprintf("the API server rejected the patch of %s: %s%s", target, firstLine(err), partial), Partial: sent}
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return &ApplyError{Msg: fmt.Sprintf("patching %s: %s%s", target, firstLine(err), partial), Partial: sent}
	}
	// Not an answer from the API server: the connection failed. The write
	// may have been applied; never retry blindly.
	return &ApplyError{Unknown: true, Partial: sent, Msg: fmt.Sprintf(
		"the connection failed while patching %s (%s): the outcome is UNKNOWN — do not re-run blindly; check with `%s` or `kubectl get rollout %s -n %s -o yaml`",
		target, firstLine(err), check, p.Name, p.Namespace)}
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
