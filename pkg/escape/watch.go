package escape

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/gather"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
)

// Observation is the Rollout as one read of the watch saw it: the fields
// compared with the prediction's end state.
type Observation struct {
	At time.Time
	// Routed is true when the Rollout routes traffic by weight; the
	// weight and availability fields are meaningful only then.
	Routed          bool
	CanaryWeight    int32
	CanaryAvailable int32
	StableAvailable int32
	StepIndex       int32
	StepCount       int
	Phase           string
	Aborted         bool
	// Stable is the stable ReplicaSet's name.
	Stable string
	// Settled is true when every ReplicaSet has as many available pods as
	// it wants.
	Settled bool
	// ShortRS names the ReplicaSet short of available pods, and ShortBy
	// by how many, when it is the only one.
	ShortRS string
	ShortBy int32
}

// same compares what a person watching sees: a change of time, or of
// Settled alone, is not news.
func (o Observation) same(p Observation) bool {
	o.At, o.Settled, o.ShortRS, o.ShortBy = p.At, p.Settled, p.ShortRS, p.ShortBy
	return o == p
}

// Reached says whether the Rollout is where the effect predicts it ends.
func (o Observation) Reached(want Effect) bool {
	if o.Stable != want.FinalStable || o.Aborted != want.FinalAbort || o.Phase != want.Phase {
		return false
	}
	if o.Routed && o.CanaryWeight != want.FinalWeight {
		return false
	}
	// A prediction with a hung pod ends with its ReplicaSet short of it.
	if x := want.lasting; x != nil && o.ShortRS == x.Canary && o.ShortBy == x.Replicas-x.OnPods {
		return true
	}
	if x := want.endShort; x.rs != "" && o.ShortRS == x.rs && o.ShortBy == x.by {
		return true
	}
	return o.Settled
}

// WatchOptions tune WatchOutcome.
type WatchOptions struct {
	// Timeout ends the watch without the outcome.
	Timeout time.Duration
	// Interval is how often the Rollout is read again (default 2s).
	Interval time.Duration
	// Now is the clock (time.Now if nil).
	Now func() time.Time
	// OnChange, if set, is told every observation that differs from the
	// one before, the first included.
	OnChange func(Observation)
}

// Outcome is how a watch ended.
type Outcome struct {
	// Reached is true when the Rollout reached the predicted end state,
	// false when the timeout passed first.
	Reached bool
	Last    Observation
}

// WatchOutcome re-reads the Rollout of an applied plan until what the
// controller did matches the option's predicted end state, or the timeout
// passes. It returns an error only when the Rollout could not be read or
// ctx ended.
func WatchOutcome(ctx context.Context, dc dynamic.Interface, p *Plan, o *Option, opt WatchOptions) (*Outcome, error) {
	now := opt.Now
	if now == nil {
		now = time.Now
	}
	if opt.Interval <= 0 {
		opt.Interval = 2 * time.Second // never a busy loop against the API server
	}
	deadline := now().Add(opt.Timeout)
	var last *Observation
	for {
		obs, err := observe(ctx, dc, p)
		if err != nil {
			return nil, err
		}
		obs.At = now()
		if (last == nil || !obs.same(*last)) && opt.OnChange != nil {
			opt.OnChange(obs)
		}
		last = &obs
		if obs.Reached(o.Effect) {
			return &Outcome{Reached: true, Last: obs}, nil
		}
		if now().After(deadline) {
			return &Outcome{Last: obs}, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(opt.Interval):
		}
	}
}

// observe reads the Rollout's world and diagnoses it with the plan's
// controller version: the same view of state and traffic that diagnose
// shows.
func observe(ctx context.Context, dc dynamic.Interface, p *Plan) (Observation, error) {
	snap, err := gather.Rollout(ctx, dc, gather.Options{Namespace: p.Namespace, Name: p.Name, SkipController: true})
	if err != nil {
		return Observation{}, fmt.Errorf("watching: %w (the action was applied; check with kubectl rolloutdoctor diagnose %s -n %s)", err, p.Name, p.Namespace)
	}
	ro, err := snap.FindRollout(p.Namespace, p.Name)
	if err != nil {
		return Observation{}, err
	}
	view, err := snap.View(ro)
	if err != nil {
		return Observation{}, fmt.Errorf("reading the snapshot: %w", err)
	}
	cv, err := model.DetectVersion(string(p.Controller.Assumed), view.Controllers, "")
	if err != nil {
		return Observation{}, err
	}
	return observation(diagnose.Run(view, cv, diagnose.Options{Source: "cluster"})), nil
}

func observation(rep *diagnose.Report) Observation {
	o := Observation{StepIndex: rep.State.StepIndex, StepCount: rep.State.StepCount, Phase: rep.State.Phase, Aborted: rep.State.Aborted, Settled: true}
	for _, s := range rep.Sets {
		if s.Hash == rep.State.StableHash {
			o.Stable = s.Name
		}
		if s.Spec != s.Available {
			if o.Settled && s.Spec > s.Available {
				o.ShortRS, o.ShortBy = s.Name, s.Spec-s.Available
			} else {
				o.ShortRS, o.ShortBy = "", 0
			}
			o.Settled = false
		}
	}
	if t := rep.Traffic; t != nil {
		o.Routed, o.CanaryWeight, o.CanaryAvailable, o.StableAvailable = true, t.CanaryWeight, t.CanaryAvailable, t.StableAvailable
	}
	return o
}
