package escape

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/client-go/dynamic"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/gather"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// This file holds the verbs a library user calls to take a way out — plan
// from the cluster, apply with re-planning, watch for the outcome — the
// same ones the CLI's escape command calls. They read the cluster only
// through pkg/gather and write only through Apply.

// MaxReplans bounds how often a write that met 409 Conflict is re-planned
// from a fresh read and sent again.
const MaxReplans = 10

// Target names the Rollout to plan for and the choices that shape the plan.
type Target struct {
	Namespace, Name string
	// ControllerVersion is the controller version to model; "" reads it
	// from the controller Deployment in the snapshot.
	ControllerVersion string
	// ToRevision is undo's target revision (0: the stable during an update, else the second-highest).
	ToRevision int64
	// ToStep is skip's target step (nil: the end of the steps).
	ToStep *int32
}

// PlanSnapshot finds the target Rollout in a snapshot and plans every way
// out of its current state. It reads nothing: the snapshot may come from a
// file. The view is returned for the workloadRef's resourceVersion.
func PlanSnapshot(snap *snapshot.Snapshot, t Target) (*Plan, *snapshot.View, error) {
	ro, err := snap.FindRollout(t.Namespace, t.Name)
	if err != nil {
		return nil, nil, err
	}
	view, err := snap.View(ro)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the snapshot: %w", err)
	}
	cv, err := model.DetectVersionFor(t.ControllerVersion, view, controllerGap(snap))
	if err != nil {
		return nil, nil, err
	}
	p, err := Build(Input{View: view, Controller: cv, ToRevision: t.ToRevision, ToStep: t.ToStep})
	if err != nil {
		return nil, nil, err
	}
	return p, view, nil
}

// controllerGap is why the controller Deployment could not be read, if it
// could not: the version note then says so instead of "not found".
func controllerGap(snap *snapshot.Snapshot) string {
	gap := ""
	for _, g := range snap.Header.Gaps {
		if g.Resource == "deployments.apps" {
			gap = g.String()
		}
	}
	return gap
}

// Planner plans from the cluster. It keeps the last snapshot it read so
// that Replan re-reads only what moves during a rollout.
type Planner struct {
	Client dynamic.Interface
	// Gather describes the cluster (Context, Server, Mapper, ToolVersion)
	// and where the controller lives; the target fills Namespace and Name.
	Gather gather.Options
	Target Target

	last *snapshot.Snapshot
}

// Plan reads the Rollout's whole world (gather.Rollout) and plans.
func (pl *Planner) Plan(ctx context.Context) (*Plan, *snapshot.View, error) {
	opt := pl.Gather
	opt.Namespace, opt.Name = pl.Target.Namespace, pl.Target.Name
	opt.SkipController = opt.SkipController || pl.Target.ControllerVersion != ""
	snap, err := gather.Rollout(ctx, pl.Client, opt)
	if err != nil {
		return nil, nil, err
	}
	pl.last = snap
	return PlanSnapshot(snap, pl.Target)
}

// Replan re-reads only the Rollout and its ReplicaSets (gather.Refresh)
// over the last snapshot and plans again: two requests, fast enough that
// the controller rarely changes the Rollout again before the write.
func (pl *Planner) Replan(ctx context.Context) (*Plan, *snapshot.View, error) {
	if pl.last == nil {
		return pl.Plan(ctx)
	}
	snap, err := gather.Refresh(ctx, pl.Client, pl.last, pl.Target.Namespace, pl.Target.Name)
	if err != nil {
		return nil, nil, err
	}
	pl.last = snap
	return PlanSnapshot(snap, pl.Target)
}

// ChangedError says that the action's plan no longer holds for the Rollout
// as it is now; nothing was written.
type ChangedError struct {
	Action Action
	// Reason is WhatChanged's answer.
	Reason string
	// BeforeWrite is true when the re-check before the first write found
	// it (ReplanOptions.Recheck), false when a re-plan after 409 did.
	BeforeWrite bool
}

func (e *ChangedError) Error() string {
	if e.BeforeWrite {
		return fmt.Sprintf("the Rollout changed while you were deciding (%s): nothing was written; re-run to see the new plan", e.Reason)
	}
	return fmt.Sprintf("the Rollout changed since it was read and %s: nothing was written; re-run to see the new plan", e.Reason)
}

// ReplanOptions tune ApplyWithReplan.
type ReplanOptions struct {
	// DryRunServer sends the requests with dryRun=All.
	DryRunServer bool
	// Recheck re-reads and re-plans once before the first write, for a
	// write a person confirmed some time after the plan was shown.
	Recheck bool
	// OnReplan, if set, is told each re-plan after 409 that still holds:
	// the plan the write was sent from and the one it is sent from now.
	OnReplan func(from, to *Plan, o *Option)
}

// Applied is what ApplyWithReplan sent and the plan it sent it from (a
// re-plan's, when there was one): the plan to watch the outcome of.
type Applied struct {
	Sent   []Sent
	Plan   *Plan
	Option *Option
}

// ApplyWithReplan sends the action's requests, each with the resourceVersion
// of the state it was planned from. During a ramp the controller rewrites
// the Rollout's status every few hundred milliseconds, so a write planned a
// moment ago can meet 409 Conflict: nothing was written then, so it re-reads
// the Rollout and its ReplicaSets, plans again, and writes only if the
// action's verdict, requests and predicted outcome are unchanged — at most
// MaxReplans times. It never resends a write that may have been applied.
func ApplyWithReplan(ctx context.Context, pl *Planner, p *Plan, view *snapshot.View, action Action, opt ReplanOptions) (*Applied, error) {
	if opt.Recheck {
		fresh, freshView, err := pl.Replan(ctx)
		if err != nil {
			return nil, err
		}
		if reason := WhatChanged(p, fresh, action); reason != "" {
			return nil, &ChangedError{Action: action, Reason: reason, BeforeWrite: true}
		}
		p, view = fresh, freshView
	}
	o, _ := p.Option(action)
	sent, err := Apply(ctx, pl.Client, p, o, applyOptions(view, opt))
	for attempt := 1; attempt <= MaxReplans && err != nil; attempt++ {
		var ae *ApplyError
		if !errors.As(err, &ae) || !ae.Conflict || len(ae.Partial) > 0 {
			break
		}
		fresh, freshView, perr := pl.Replan(ctx)
		if perr != nil {
			return nil, perr
		}
		if reason := WhatChanged(p, fresh, action); reason != "" {
			return nil, &ChangedError{Action: action, Reason: reason}
		}
		if opt.OnReplan != nil {
			opt.OnReplan(p, fresh, o)
		}
		p, view = fresh, freshView
		o, _ = p.Option(action)
		sent, err = Apply(ctx, pl.Client, p, o, applyOptions(view, opt))
	}
	if err != nil {
		return nil, err
	}
	return &Applied{Sent: sent, Plan: p, Option: o}, nil
}

// applyOptions carries the workloadRef'd Deployment's resourceVersion, the
// precondition for an undo that patches the Deployment.
func applyOptions(view *snapshot.View, opt ReplanOptions) ApplyOptions {
	a := ApplyOptions{DryRunServer: opt.DryRunServer}
	if view != nil && view.WorkloadRef != nil {
		a.WorkloadResourceVersion = view.WorkloadRef.ResourceVersion
	}
	return a
}

// WhatChanged says why an action's plan changed between two reads ("" if
// it did not): its verdict, its requests, or where it predicts the Rollout
// ends (which ReplicaSet stable, the final weight and phase, the abort
// flag, whether there is exposure). Pod counts moving during a ramp do not
// count as a change.
func WhatChanged(before, after *Plan, action Action) string {
	oa, _ := before.Option(action)
	ob, _ := after.Option(action)
	if oa.Verdict != ob.Verdict {
		return fmt.Sprintf("%s is now %s, was %s", action, ob.Verdict, oa.Verdict)
	}
	if len(oa.Requests) != len(ob.Requests) {
		return "its requests changed"
	}
	for i := range oa.Requests {
		if string(oa.Requests[i].Body) != string(ob.Requests[i].Body) || oa.Requests[i].Subresource != ob.Requests[i].Subresource {
			return "its requests changed"
		}
	}
	ea, eb := oa.Effect, ob.Effect
	if ea.FinalStable != eb.FinalStable || ea.FinalWeight != eb.FinalWeight || ea.Phase != eb.Phase || ea.FinalAbort != eb.FinalAbort {
		return fmt.Sprintf("its predicted outcome changed (now: %s)", eb.Summary)
	}
	if (ea.Exposure == nil) != (eb.Exposure == nil) {
		return fmt.Sprintf("its predicted exposure changed (now: %s)", eb.Summary)
	}
	return ""
}

// Prepared is a request with the body it would be sent with (the
// resourceVersion precondition added): a client-side dry run.
type Prepared struct {
	Request
	SentBody string `json:"sentBody"`
}

// Prepare returns the option's requests as they would be sent, and sends
// nothing.
func Prepare(p *Plan, o *Option) ([]Prepared, error) {
	var out []Prepared
	for _, r := range o.Requests {
		b, err := WithPrecondition(r.PatchType, r.Body, p.ResourceVersion)
		if err != nil {
			return nil, err
		}
		out = append(out, Prepared{Request: r, SentBody: string(b)})
	}
	return out, nil
}
