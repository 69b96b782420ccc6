// Package escape plans the ways out of a Rollout's current state: for each of
// promote --full, undo, retry, abort, plain promote, skip to the end of the
// steps, and waiting, it predicts with the controller model (the canary's or
// the blue-green one) what the controller will do, gives a verdict, cites the controller and CLI source
// for the version, and builds the exact requests kubectl-argo-rollouts would
// send (with the Rollout's resourceVersion as a precondition). Planning is
// pure; sending the requests is Apply's job (apply.go).
package escape

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// Action is a way out. The names are what --do accepts.
type Action string

// Actions, in the order they are listed.
const (
	PromoteFull Action = "promote-full"
	Undo        Action = "undo"
	Retry       Action = "retry"
	Abort       Action = "abort"
	Promote     Action = "promote"
	Skip        Action = "skip"
	Wait        Action = "wait"
)

// Actions lists every action in display order.
var Actions = []Action{PromoteFull, Undo, Retry, Abort, Promote, Skip, Wait}

// Verdict rates an action in the current state.
type Verdict string

// Verdicts, best first.
const (
	Safe          Verdict = "safe"
	SafeWithCost  Verdict = "safe-with-cost"
	NoEffect      Verdict = "no-effect"
	Harmful       Verdict = "harmful"
	NotApplicable Verdict = "not-applicable"
)

func (v Verdict) rank() int {
	return map[Verdict]int{Safe: 0, SafeWithCost: 1, NoEffect: 2, Harmful: 3, NotApplicable: 4}[v]
}

// PlanAPIVersion versions the JSON/YAML document.
const PlanAPIVersion = "rolloutdoctor.io/v1alpha1"

// Plan is every way out of one Rollout's state, with one recommendation.
type Plan struct {
	APIVersion      string                  `json:"apiVersion"`
	Kind            string                  `json:"kind"`
	Namespace       string                  `json:"namespace"`
	Name            string                  `json:"name"`
	ResourceVersion string                  `json:"resourceVersion"`
	Controller      model.ControllerVersion `json:"controller"`
	Now             Effect                  `json:"ifNothingIsDone"`
	Options         []Option                `json:"options"`
	Recommended     Action                  `json:"recommended"`
	Reason          string                  `json:"reason"`
	// AllHarmful is set when no way out is better than harmful: Recommended
	// is then the least harmful, and Reason says so in those words.
	AllHarmful bool `json:"allHarmful,omitempty"`
	// ReasonCites back what Reason says of the controller beyond the
	// options' own citations.
	ReasonCites []upstream.Cite `json:"reasonCites,omitempty"`
	GitOps      *GitOps         `json:"gitops,omitempty"`
	// ControllerNotRunning: every controller Deployment that reconciles
	// the Rollout has no available pod, so no way out takes effect (and
	// nothing of "if nothing is done" happens) until one runs.
	ControllerNotRunning bool `json:"controllerNotRunning,omitempty"`
	// Deadline, when the update waits on pods with the progress deadline's
	// clock running and progressDeadlineAbort set, says when the controller
	// aborts it if they do not turn ready: "if nothing is done" assumes
	// they do.
	Deadline *DeadlineNote `json:"progressDeadline,omitempty"`
	// Hung names the stable's pods that have not been Ready for minutes
	// while ways out wait on them: the "if … never turn Ready" stops are
	// then what to expect, and deleting them comes first.
	Hung *HungNote `json:"hungPods,omitempty"`
	// Restart is a restart (spec.restartAt) not yet done, as diagnose
	// reports it: no way out ends it (an update does not mark it done),
	// and while it cannot go on (RD173) only its own fix moves it.
	Restart *RestartNote `json:"restart,omitempty"`
	// Refused names the ReplicaSets whose new pods the API server refuses
	// (RD185): every way out is judged with their missing pods missing.
	Refused *RefusedNote `json:"podsRefused,omitempty"`
}

// RefusedNote is diagnose's RD185 in a plan: which ReplicaSets cannot
// create their pods, why, and the fix.
type RefusedNote struct {
	ReplicaSets []string `json:"replicaSets"`
	Text        string   `json:"text"`
	Fix         string   `json:"fix"`
}

// refusedReason puts the refusal's fix into the recommendation: first,
// when waiting is what the controller would do well by itself once the
// pods come (the refusal is then all that holds it); else beside the way
// out, which does not wait on them.
func refusedReason(p *Plan, base model.Inputs, names map[string]string, stable, canary string) {
	free := base.Clone()
	for _, r := range free.All {
		r.Capped = false
	}
	e := effectOf(free, names)
	wait, _ := p.Option(Wait)
	if v, why := rate(Wait, e, e, free, stable, canary, "", ""); wait.Effect.refusedEnd != "" && (v == Safe && !base.Abort || base.Abort && wait.Effect.DeadlineAbortEnds && !e.FinalAbort && e.Phase == "Healthy") {
		p.Recommended = Wait
		p.Reason = fmt.Sprintf("first let the pods be created (RD185): %s; then nothing needs an escape: %s", strings.TrimSuffix(p.Refused.Fix, "."), why)
		return
	}
	p.Reason += "; apart from that, the API server refuses new pods (RD185): " + p.Refused.Fix
}

// capRefused marks in base the ReplicaSets whose pods the API server
// refuses, so that no way out counts on their missing pods, and returns
// the plan's note on them (nil without any).
func capRefused(v *snapshot.View, base model.Inputs) *RefusedNote {
	refused := diagnose.Refused(v.ReplicaSets)
	if len(refused) == 0 {
		return nil
	}
	n := &RefusedNote{}
	var parts []string
	for _, x := range refused {
		for _, r := range base.All {
			if r.Name == x.RS.Name {
				r.Capped = true
			}
		}
		n.ReplicaSets = append(n.ReplicaSets, x.RS.Name)
		parts = append(parts, fmt.Sprintf("%s cannot create %d of its pods (%s)", x.RS.Name, x.Missing, x.Message))
		if n.Fix == "" {
			n.Fix = diagnose.RefusalFix(x.Message, x.RS.Namespace)
		}
	}
	n.Text = strings.Join(parts, "; ") + " (RD185): every way out below assumes the missing pods do not come until that is fixed"
	return n
}

// RestartNote is diagnose's RD172 or RD173 on the pending restart.
type RestartNote struct {
	Rule    string          `json:"rule"`
	Stalled bool            `json:"stalled"`
	Text    string          `json:"text"`
	Fix     string          `json:"fix,omitempty"`
	Cites   []upstream.Cite `json:"cites,omitempty"`
}

// restartNote reads the restart as diagnose does and, when it cannot go
// on, adds its fix to the reason — unless the hung-pod note already puts
// the same delete first.
func restartNote(p *Plan, v *snapshot.View, cv model.ControllerVersion) {
	f := diagnose.RestartFinding(v, cv)
	if f == nil {
		return
	}
	n := &RestartNote{Rule: f.ID, Stalled: f.ID == "RD173", Text: f.Message, Cites: append(f.Cites, upstream.At("sy.update-keeps-restart", cv.Assumed))}
	if n.Stalled {
		n.Fix = f.Remediation
		if h := p.Hung; h == nil || !strings.Contains(f.Remediation, h.Pods[0]) {
			p.Reason += "; apart from that, the restart (spec.restartAt) cannot go on (RD173): " + f.Remediation
		}
	}
	p.Restart = n
}

// HungNote is the stable's hung pods a canary's scaling waits on, which
// ways out stop on them, and the delete that lets it go on.
type HungNote struct {
	Pods []string `json:"pods"`
	// Since is when the first of them stopped being Ready.
	Since time.Time `json:"since"`
	Text  string    `json:"text"`
	// Fix is the delete: the ReplicaSet replaces the pod, and once the
	// new one is Ready the availability the controller waits for is there.
	Fix string `json:"fix"`
}

// DeadlineNote is the progress deadline's part of "if nothing is done".
type DeadlineNote struct {
	Due   time.Time       `json:"due"`
	Text  string          `json:"text"`
	Cites []upstream.Cite `json:"cites"`
}

// Option is one action with its predicted effect and the requests it sends.
type Option struct {
	Action  Action  `json:"action"`
	Verdict Verdict `json:"verdict"`
	Why     string  `json:"why"`
	// Command is the kubectl-argo-rollouts command that sends the same requests.
	Command  string          `json:"command,omitempty"`
	Effect   Effect          `json:"effect"`
	Requests []Request       `json:"requests,omitempty"`
	Cites    []upstream.Cite `json:"cites,omitempty"`
	// Analysis says what the action does to the Rollout's AnalysisRuns:
	// which it starts again, cancels, skips or leaves running.
	Analysis string `json:"analysis,omitempty"`
	// TargetRevision is undo's target; TargetStep is skip's.
	TargetRevision string `json:"targetRevision,omitempty"`
	TargetStep     *int32 `json:"targetStep,omitempty"`
	// Note says where the option departs from the plain command of the
	// same name (undo to the stable revision instead of the second-highest).
	Note string `json:"note,omitempty"`
}

// Request is one API write, exactly as kubectl-argo-rollouts sends it, plus
// the resourceVersion precondition Apply adds.
type Request struct {
	// Subresource is "status" or "" (the main resource).
	Subresource string `json:"subresource,omitempty"`
	// PatchType is "merge" or "json".
	PatchType string          `json:"patchType"`
	Body      json.RawMessage `json:"body"`
	// Fallback is sent to the main resource instead when the status
	// subresource is not served (NotFound), as the CLI does.
	Fallback json.RawMessage `json:"fallbackBody,omitempty"`
	// Kind and Name say which object is patched (undo of a Rollout with a
	// workloadRef patches the referenced Deployment).
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// PodCounts are the canary's and the stable's ReplicaSet sizes at one
// moment, named as the action finds them (the stable is the one before
// any promotion), and the older ReplicaSets' together: a Service that
// selects the Rollout's pods sends their ready pods requests too.
// Promoted: the action leaves the stable as the update's ReplicaSet (undo
// to it, or a Rollout already promoted), so there is no canary to size.
type PodCounts struct {
	Canary   int32 `json:"canary"`
	Stable   int32 `json:"stable"`
	Older    int32 `json:"older,omitempty"`
	Promoted bool  `json:"promoted,omitempty"`
}

// Effect is what the controller will do after the action, pass by pass,
// while the ReplicaSets become available.
type Effect struct {
	Summary string `json:"summary"`
	// Serving lists who carries the canary weight, in order.
	Serving []Serving `json:"serving,omitempty"`
	// Pods, without trafficRouting, are the sizes the canary and the
	// stable go through, in order (requests follow ready pods).
	Pods []PodCounts `json:"pods,omitempty"`
	// IfNeverReady, without trafficRouting, is where the controller stops
	// instead when the canary's missing pods never turn Ready (the reason
	// to abort, often), when that differs: the sizes above assume they do.
	IfNeverReady string `json:"ifNeverReady,omitempty"`
	// Exposure is the worst moment the canary carries more traffic than its
	// available pods can take, if any.
	Exposure *Exposure `json:"exposure,omitempty"`
	// StableExposure, with trafficRouting, is the worst moment the stable
	// carries more of the traffic than its available pods can take, if any:
	// without dynamicStableScale only while its pods are missing, with it
	// also because it is sized for its share.
	StableExposure *Shortage `json:"stableExposure,omitempty"`
	// After the first pass.
	FirstWeight int32 `json:"firstWeight"`
	StepIndex   int32 `json:"stepIndex"`
	Abort       bool  `json:"abort"`
	// When the simulation settles.
	FinalWeight int32  `json:"finalWeight"`
	FinalStable string `json:"finalStable,omitempty"`
	FinalAbort  bool   `json:"finalAbort"`
	FinalIndex  int32  `json:"finalStepIndex"`
	Phase       string `json:"phase"`
	// ErrorLoop: the controller's passes end in errors (subset-only gate).
	ErrorLoop bool `json:"errorLoop,omitempty"`
	// NeverHealthy: minPodsPerReplicaSet above replicas on a controller that
	// does not cap it — updatedReplicas never equals replicas, so the
	// Rollout ends Degraded (ProgressDeadlineExceeded) and stays there.
	NeverHealthy bool `json:"neverHealthy,omitempty"`
	// PauseEnds: a pause step with a duration on the way ends by itself.
	PauseEnds bool `json:"pauseEnds,omitempty"`
	// DeadlineAbortEnds: a rollback within the window that the progress
	// deadline keeps aborting goes on by itself once the aborted canary
	// is scaled down (model.Step.DeadlineAbortEnded).
	DeadlineAbortEnds bool `json:"deadlineAbortEnds,omitempty"`
	// DeadlineWeight is the weight an abort that meets a scale (RD184)
	// leaves on the aborted canary through the pass that scales it to 0 at
	// its abort scale-down deadline: that pass writes no weight, so the
	// weight goes to pods being deleted until the next pass moves it back.
	DeadlineWeight int32 `json:"deadlineWeight,omitempty"`
	// HeldAt is the step the simulation ends at when it completes on what
	// the simulation does not run (an Experiment, an AnalysisRun): the
	// Rollout stays there, Progressing, until that completes.
	HeldAt string `json:"heldAt,omitempty"`
	// WaitsForPerson: that step never completes by itself (an experiment
	// without a duration or an analysis requiredForCompletion).
	WaitsForPerson bool `json:"waitsForPerson,omitempty"`
	Passes         int  `json:"passes"`
	// heldFacts back HeldAt.
	heldFacts []upstream.Key
	// lasting, for blue-green, is the active Service's shortage once
	// everything that can start has: pods that do not come back (hung).
	lasting *Exposure
	// refusedEnd names the ReplicaSet whose pods the API server refuses
	// (RD185) that the simulation ends short of them, if any: what it
	// waits for does not come until the cause is fixed.
	refusedEnd string
	// stableEnd is the stable's shortage where the simulation settles:
	// only a what-if whose hung pods stay leaves one.
	stableEnd *Shortage
	// stableHarm is the stable's shortage held against the way out: one
	// that lasts (its hung pods), or one it adds to the present's.
	stableHarm *Shortage
	// endShort is the ReplicaSet the simulation ends short of pods, and by
	// how many (a what-if whose hung pods stay).
	endShort rsShort
}

// rsShort is a ReplicaSet short of available pods.
type rsShort struct {
	rs string
	by int32
}

// Shortage is traffic beyond the stable's capacity: its share of the
// traffic, its available pods and the pods that share needs.
type Shortage struct {
	Weight int32  `json:"weight"`
	OnPods int32  `json:"onPods"`
	Needs  int32  `json:"needs"`
	Stable string `json:"stable"`
	// Aborted: the share includes the canary weight because, after an
	// abort, the canary Service selects the stable's pods — most of the
	// time: each pass points it back at the canary for a moment (#3078;
	// the lab, every version: on the stable 64–83% of 15 s).
	Aborted bool `json:"viaAbortedCanaryService,omitempty"`
}

// stableShort is the stable's shortage when it carries share of in's
// traffic on avail pods, or nil when they can take it.
func stableShort(in model.Inputs, name string, share, avail int32) *Shortage {
	need := model.WeightToReplicas(in.Replicas, share, in.MaxWeight)
	if share <= 0 || name == "" || avail >= need {
		return nil
	}
	return &Shortage{Weight: share, OnPods: avail, Needs: need, Stable: name}
}

// load is the pods a shortage's share needs over the pods it has.
func (s *Shortage) load() float64 {
	return float64(s.Needs) / math.Max(float64(s.OnPods), 0.5)
}

func (s *Shortage) String() string {
	if s.Aborted {
		return fmt.Sprintf("up to %d%% of traffic on the stable %s's %d available %s (that share needs %d; after the abort the canary Service selects them too, flipping back to the canary on each pass: argo-rollouts #3078)", s.Weight, s.Stable, s.OnPods, verbN("pod", "pods", int(s.OnPods)), s.Needs)
	}
	return fmt.Sprintf("%d%% of traffic on the stable %s's %d available %s (that share needs %d)", s.Weight, s.Stable, s.OnPods, verbN("pod", "pods", int(s.OnPods)), s.Needs)
}

// stableAfter is the stable's shortage after step s with weight w on the
// canary destination. The stable takes the rest of the traffic, or all of
// it once the canary destination selects its pods too: a promotion, or an
// undo to the stable — without dynamicStableScale the canary Service
// follows the update to the stable's pods ungated (sv.canary-svc-target);
// with it the Service stays until the stable is full
// (sv.dss-rollback-keeps-canary-svc).
func stableAfter(in model.Inputs, s model.Step, w int32) *Shortage {
	name, avail, share := s.StableName, s.StableAvailable, in.MaxWeight-w
	if s.Pass.Promotes && s.StableHash == s.CanaryHash {
		// The stable after the pass is the promoted ReplicaSet.
		name, avail = s.CanaryName, s.CanaryAvailable
	}
	aborted := w > 0 && s.Abort && !s.Pass.Promotes && s.CarrierName == name && s.CanaryName != name
	if s.Pass.Promotes || s.CarrierName == name || !in.DSS && s.CanaryName != "" && s.CanaryName == name {
		share = in.MaxWeight
	}
	x := stableShort(in, name, share, avail)
	if x != nil {
		x.Aborted = aborted
	}
	return x
}

// citedKey finds k among cs.
func citedKey(cs []upstream.Cite, k upstream.Key) (upstream.Cite, bool) {
	for _, c := range cs {
		if c.Key == k {
			return c, true
		}
	}
	return upstream.Cite{}, false
}

// noteStable keeps the stable's shortage after step s with weight w on the
// canary destination when it is the worst so far (trafficRouting only: the
// rest of the traffic goes to the stable's available pods).
func (e *Effect) noteStable(in model.Inputs, s model.Step, w int32) {
	if !in.TrafficRouted {
		return
	}
	if x := stableAfter(in, s, w); x != nil && (e.StableExposure == nil || x.load() > e.StableExposure.load()) {
		e.StableExposure = x
	}
}

// stableNow is the stable's shortage in the state read, if any.
func stableNow(in model.Inputs) *Shortage {
	share, ok := in.StableShare()
	if !ok {
		return nil
	}
	return stableShort(in, in.Stable.Name, share, in.Stable.Available)
}

// stableHarmOf is the stable's shortage that counts against an effect:
// one that lasts, or one worse than the stable has now — a shortage that
// is there whatever is done is no way out's doing.
func stableHarmOf(e Effect, lasting, now *Shortage) *Shortage {
	if lasting != nil {
		return lasting
	}
	if x := e.StableExposure; x != nil && (now == nil || x.load() > now.load()) {
		return x
	}
	return nil
}

// Serving is one stretch of passes with the same canary weight.
type Serving struct {
	Weight int32  `json:"weight"`
	Canary string `json:"canary,omitempty"`
	Stable string `json:"stable,omitempty"`
	// From and To are the canary's available pods during the stretch.
	From     int32 `json:"fromAvailable"`
	To       int32 `json:"toAvailable"`
	Of       int32 `json:"of"`
	Promotes bool  `json:"promotes,omitempty"`
}

// Exposure is traffic beyond the canary's capacity.
type Exposure struct {
	Weight   int32  `json:"weight"`
	OnPods   int32  `json:"onPods"`
	Replicas int32  `json:"replicas"`
	Canary   string `json:"canary"`
}

// Input is what planning needs besides the view.
type Input struct {
	View       *snapshot.View
	Controller model.ControllerVersion
	// ToRevision selects undo's target (0: the stable during an update, else the second-highest, as the CLI).
	ToRevision int64
	// ToStep is skip's target (nil: the end of the steps).
	ToStep *int32
}

const maxPasses = 400

// Build plans every action for the view's Rollout.
func Build(in Input) (*Plan, error) {
	v := in.View
	ro := v.Rollout
	ver := in.Controller.Assumed
	base := model.FromView(v, ver)
	if len(base.Invalid) > 0 {
		// No verb of the controller acts on a Rollout it does not reconcile.
		return nil, fmt.Errorf("rollout %s/%s has a spec the controller rejects (InvalidSpec: %s): it does nothing until the spec is fixed, so no way out applies — fix the field and apply again (kubectl rolloutdoctor diagnose shows every rejected value)", ro.Namespace, ro.Name, base.Invalid[0])
	}
	if g, ok := v.ReplicaSetsUnread(); ok {
		// Every way out is judged by the pods each ReplicaSet holds: from
		// none read, undo would have no revision to go to and waiting would
		// look safe. Refuse rather than plan from an empty list.
		return nil, fmt.Errorf("rollout %s/%s: no way out can be planned without its ReplicaSets, which were not read (%s): %s", ro.Namespace, ro.Name, g, g.Fix())
	}
	refused := capRefused(v, base)
	if base.BG != nil {
		p := &Plan{APIVersion: PlanAPIVersion, Kind: "EscapePlan", Namespace: ro.Namespace, Name: ro.Name,
			ResourceVersion: ro.ResourceVersion, Controller: in.Controller}
		buildBlueGreen(in, base, p)
		if p.Refused = refused; refused != nil {
			p.Reason += "; apart from that, the API server refuses new pods (RD185): " + refused.Fix
		}
		p.Deadline = deadlineNote(ro, base, v)
		p.GitOps = detectGitOps(v, ver)
		p.ControllerNotRunning = snapshot.NoneRunning(v.Controllers)
		restartNote(p, v, in.Controller)
		return p, nil
	}
	if ro.Spec.Strategy.Canary == nil {
		return nil, fmt.Errorf("rollout %s/%s has no canary or blueGreen strategy: no way out can be planned", ro.Namespace, ro.Name)
	}
	if i := base.Index0(); i < 0 {
		// The controller never writes a negative index, and from one the
		// model cannot say where any action leads: refuse rather than guess.
		return nil, fmt.Errorf("rollout %s/%s has status.currentStepIndex %d, which the controller never writes: no way out can be predicted from it (check who edited the status: kubectl get rollout %s -n %s --show-managed-fields -o yaml)", ro.Namespace, ro.Name, i, ro.Name, ro.Namespace)
	}
	p := &Plan{APIVersion: PlanAPIVersion, Kind: "EscapePlan", Namespace: ro.Namespace, Name: ro.Name,
		ResourceVersion: ro.ResourceVersion, Controller: in.Controller}
	names := rsNames(v.ReplicaSets)
	wait := effectOf(base, names)
	wait.IfNeverReady = neverReady(base, base, names, wait)
	// The stable's hung pods do not come back by themselves (new ones of
	// its revision do): a way out that leaves the stable short of them
	// carrying its share keeps the shortage for as long as they hang.
	var stableHung int32
	if _, inPlay := base.StableShare(); inPlay && base.Stable.Spec > base.Stable.Available {
		stableHung = min(int32(len(diagnose.HungPods(v, base.Stable.Hash))), base.Stable.Spec-base.Stable.Available)
	}
	// stuck sets e's stable harm, and where the watch may see it end:
	// the stable short of its hung pods, unless a scale-down removed them.
	now := stableNow(base)
	stuck := func(e *Effect, after model.Inputs) {
		var x Effect
		if stableHung > 0 {
			x = effectOf(stuckCopy(after, base.Stable.Name, stableHung), names)
			e.endShort = x.endShort
		}
		e.stableHarm = stableHarmOf(*e, x.stableEnd, now)
	}
	stuck(&wait, base)
	p.Now = wait
	p.Deadline = deadlineNote(ro, base, v)
	cite := func(keys ...upstream.Key) []upstream.Cite {
		out := make([]upstream.Cite, 0, len(keys))
		for _, k := range keys {
			out = append(out, upstream.At(k, ver))
		}
		return out
	}
	stable := ""
	if base.Stable != nil {
		stable = base.Stable.Name
	}
	canary := ""
	if base.New != nil {
		canary = base.New.Name
	}
	an := readAnalysis(v, base)
	for _, a := range Actions {
		o := Option{Action: a}
		after, applicable, why := apply(a, base, ro, v, in, &o)
		// A scaling event that lasts: the controller only syncs replicas
		// whatever else the way out writes.
		var replicasOnly []upstream.Key
		if r := after.ScaledWhileHalted(); r != nil && applicable && why == "" && a != Wait {
			why, replicasOnly = haltedScale(after, r), []upstream.Key{"se.compare-annotation", "se.replicas-only", "se.halt-skips-sync"}
		} else if r := after.AbortMeetsScale(); r != nil && applicable && why == "" && a != Wait {
			why = fmt.Sprintf("the controller reconciles no traffic until %s's abort scale-down: every pass only syncs replicas while it was last sized for %d (spec.replicas %d) — end that first: %s (RD184)", r.Name, *r.Desired, after.Replicas, r.SyncCountCommand(ro.Namespace, after.Replicas))
			replicasOnly = []upstream.Key{"se.compare-annotation", "se.replicas-only", "rs.abort-delay-returns"}
		}
		switch {
		case !applicable:
			o.Verdict, o.Why = NotApplicable, why
			o.Requests = nil
		default:
			o.Effect = effectOf(after, names)
			o.Effect.IfNeverReady = neverReady(after, base, names, o.Effect)
			stuck(&o.Effect, after)
			o.Verdict, o.Why = judge(a, o.Effect, wait, base, stable, canary, why, o.TargetRevision)
		}
		switch a {
		case Abort:
			o.Cites = cite("cli.abort-patch", "cli.abort-status-subresource", "cli.abort-fallback", "rc.abort-idx", "tr.branch-aborted", "rc.every-pass-remove-abort")
		case Retry:
			o.Cites = cite("cli.retry-patch", "cli.retry-status-subresource")
		case Promote:
			o.Cites = cite("cli.promote-patch", "cli.promote-clear-pause", "cli.promote-status-first", "rc.abort-idx")
			if o.Note != "" && ro.Spec.Paused {
				o.Cites = append(o.Cites, cite("rc.spec-paused-no-step", "pa.no-conditions-no-controller-pause", "pa.indefinite-needs-promote")...)
			}
			if inconclusiveStep(ro) {
				o.Cites = append(o.Cites, cite("cli.promote-inconclusive-step", "an.rerun-after-inconclusive")...)
			}
		case PromoteFull:
			o.Cites = cite("cli.promote-full-patch", "cli.promote-full-guard", "cli.promote-full-unpause", "tr.branch-promote-full", "tr.promote-full-keep-weight", "sy.full-promote-gate")
		case Undo:
			o.Cites = cite("cli.undo-patch", "cli.undo-second-highest", "cli.undo-skip-equal", "rc.rollback-to-stable-skip", "rc.reset-path-window", "sy.reset-remove-abort")
		case Skip:
			o.Cites = cite("cli.skip-all-steps", "tr.reverse-loop", "tr.max-weight-at-end")
		case Wait:
			o.Cites = cite("tr.reverse-loop", "sy.full-promote-gate")
		}
		o.Cites = append(o.Cites, cite(o.Effect.heldFacts...)...)
		o.Cites = append(o.Cites, cite(replicasOnly...)...)
		if o.Effect.PauseEnds {
			// The effect runs past a timed pause, as the controller does once its duration has passed.
			o.Cites = append(o.Cites, cite("pa.duration-ends", "rc.spec-paused-no-step")...)
		}
		if o.Effect.DeadlineAbortEnds {
			// The effect runs past the deadline's abort in the window.
			o.Cites = append(o.Cites, cite("sy.deadline-abort-again", "rs.abort-delay-deadline-passed", "co.updated-change-is-progress", "rc.every-pass-remove-abort")...)
		}
		if o.Effect.DeadlineWeight > 0 {
			// The effect runs past the aborted canary's scale-down deadline (RD184).
			o.Cites = append(o.Cites, cite("se.replicas-only", "rs.abort-delay-needs-stable-full", "rs.abort-delay-deadline-passed", "sy.scale-sets-annotation")...)
		}
		if len(o.Effect.Pods) > 0 {
			// Sizes without trafficRouting: the closest counts, one
			// ReplicaSet a pass, the stable first.
			o.Cites = append(o.Cites, cite("bc.counts", "bc.stable-first")...)
		}
		if o.Action == Wait && base.Abort && base.DSS && o.Effect.IfNeverReady == "" && o.Effect.FinalWeight > 0 {
			// The abort's own weight stays above 0 (RD155, RD176).
			o.Cites = append(o.Cites, cite("tr.abort-weight-formula", "uc.desired-canary-weight-abort-dss")...)
		}
		switch {
		case o.Effect.IfNeverReady != "" && base.TrafficRouted && base.DSS:
			o.Cites = append(o.Cites, cite("tr.abort-weight-formula")...)
			if !upstream.At("uc.desired-canary-weight-abort-dss", ver).Absent {
				o.Cites = append(o.Cites, cite("uc.desired-canary-weight-abort-dss")...)
			}
			if strings.Contains(o.Effect.IfNeverReady, "reads Healthy") {
				o.Cites = append(o.Cites, cite("tr.branch-rollback-to-stable", "sv.dss-rollback-keeps-canary-svc", "rc.status-available-all", "ru.phase-available")...)
			}
		case o.Effect.IfNeverReady != "" && base.TrafficRouted:
			o.Cites = append(o.Cites, cite("tr.stable-check-call", "tr.stable-check-def")...)
			if strings.Contains(o.Effect.IfNeverReady, "reads Healthy") {
				// The Services move first and are not gated: the
				// canary Service selects the update's (the stable's) pods.
				o.Cites = append(o.Cites, cite("rc.status-available-all", "ru.phase-available", "rc.service-before-traffic", "sv.canary-svc-target")...)
			}
		case o.Effect.IfNeverReady != "":
			o.Cites = append(o.Cites, cite("bc.others-down")...)
		}
		if x := o.Effect.stableHarm; x != nil {
			// Why the stable keeps or gets the share: an undo's or an
			// abort's canary Service on its pods, the availability check
			// holding the weight, or dynamicStableScale's abort weight and
			// sizing.
			var keys []upstream.Key
			switch {
			case base.DSS:
				keys = append(keys, "tr.abort-weight-formula", "uc.desired-canary-weight-abort-dss")
			case a == Undo:
				keys = append(keys, "rc.service-before-traffic", "sv.canary-svc-target")
			case base.ServiceRouted && (a == Abort || base.Abort && a == Wait):
				keys = append(keys, "tr.abort-canary-svc-to-stable")
			}
			if !base.DSS {
				keys = append(keys, "tr.stable-check-call", "tr.stable-check-def")
			}
			for _, k := range keys {
				if _, dup := citedKey(o.Cites, k); !dup && !upstream.At(k, ver).Absent {
					o.Cites = append(o.Cites, cite(k)...)
				}
			}
		}
		if o.Effect.NeverHealthy {
			// The canary sized to minPods above replicas; Healthy needs them equal.
			o.Cites = append(o.Cites, cite("uc.check-min-max", "uc.min-cap-replicas", "co.healthy-updated")...)
		}
		withAnalysis(&o, noteAnalysis(a, an, base, &o, ver), wait, ver)
		p.Options = append(p.Options, o)
	}
	p.Hung = hungNote(v, base, p.Options, wait.stableHarm)
	p.Recommended, p.Reason = recommend(p.Options, base, p.Hung != nil)
	if w, _ := p.Option(Wait); p.Recommended == Wait && w.Verdict == Harmful {
		p.AllHarmful = true
		p.Recommended, p.Reason = leastHarmful(p.Options, base, v)
		if o, _ := p.Option(p.Recommended); base.TrafficRouted && o.Effect.Exposure != nil {
			// The out-of-band option rests on the controller writing its
			// computed weight on every pass.
			p.ReasonCites = cite("tr.set-weight-call")
		}
	}
	switch h := p.Hung; {
	case h != nil && wait.stableHarm != nil && stableHung > 0:
		// The delete alone ends the stable's shortage; a way out that
		// ends it too also decides the release.
		or := "or"
		if p.AllHarmful {
			or = "until then,"
		}
		p.Reason = fmt.Sprintf("first %s; that alone ends the stable's shortage — %s %s", h.Fix, or, p.Reason)
	case h != nil:
		// Every way out that scales waits on them too: the delete comes
		// first, whichever way out is then taken.
		p.Reason = fmt.Sprintf("first %s; then %s", h.Fix, p.Reason)
	}
	if r := base.AbortMeetsScale(); r != nil {
		// No way out moves traffic before the scaling event ends; the
		// annotation ends it at once (RD184).
		p.Reason = fmt.Sprintf("first end the scaling event that holds the abort: %s (the next pass moves the traffic back); then %s", r.SyncCountCommand(ro.Namespace, base.Replicas), p.Reason)
		p.ReasonCites = append(p.ReasonCites, cite("se.compare-annotation", "se.replicas-only", "rs.abort-delay-returns")...)
	}
	if p.Refused = refused; refused != nil {
		refusedReason(p, base, names, stable, canary)
	}
	p.GitOps = detectGitOps(v, ver)
	p.ControllerNotRunning = snapshot.NoneRunning(v.Controllers)
	restartNote(p, v, in.Controller)
	return p, nil
}

// Option returns the plan's option for an action.
func (p *Plan) Option(a Action) (*Option, bool) {
	for i := range p.Options {
		if p.Options[i].Action == a {
			return &p.Options[i], true
		}
	}
	return nil, false
}

// ParseAction accepts the --do names and the CLI spellings ("promote --full").
func ParseAction(s string) (Action, error) {
	s = strings.TrimSpace(strings.ToLower(s))
	switch s {
	case "promote --full", "promote-full", "full", "promotefull":
		return PromoteFull, nil
	case "skip-all-steps", "promote --skip-all-steps":
		return Skip, nil
	}
	for _, a := range Actions {
		if string(a) == s {
			return a, nil
		}
	}
	names := make([]string, len(Actions))
	for i, a := range Actions {
		names[i] = string(a)
	}
	return "", fmt.Errorf("unknown action %q: one of %s", s, strings.Join(names, ", "))
}

// merge is a merge patch of the Rollout; fallback is the body the CLI sends
// to the main resource when the status subresource is not found ("" for none).
func merge(sub, body, name, fallback string) Request {
	r := Request{Subresource: sub, PatchType: "merge", Body: json.RawMessage(body), Kind: "Rollout", Name: name}
	if fallback != "" {
		r.Fallback = json.RawMessage(fallback)
	}
	return r
}

// apply changes the model inputs as the action's requests would, and fills
// the option's requests and command. It reports whether the action applies.
func apply(a Action, base model.Inputs, ro *v1alpha1.Rollout, v *snapshot.View, in Input, o *Option) (model.Inputs, bool, string) {
	after := base
	n := int32(len(base.Steps))
	idx := base.Index0()
	name := ro.Name
	o.Command = "kubectl argo rollouts " + string(a) + " " + name + " -n " + ro.Namespace
	switch a {
	case Wait:
		o.Command = ""
		return after, true, ""
	case Abort, Retry:
		if done, applies, why := abortRetry(a, name, base.Abort, o); done {
			return after, applies, why
		}
		after.Abort = a == Abort
	case PromoteFull:
		return applyPromoteFull(after, ro, o)
	case Promote:
		return applyPromote(after, ro, o, n, idx)
	case Skip:
		return applySkip(after, ro, in, o, n, idx)
	case Undo:
		return applyUndo(after, ro, v, in, o)
	}
	return after, true, ""
}

// haltedScale says why a way out that leaves the halt in place does
// nothing (argo-rollouts #4261, RD182): with a scale pending, every pass
// only syncs replicas (se.replicas-only), which the halt skips.
func haltedScale(in model.Inputs, r *model.RS) string {
	halt, end := "spec.paused is true", "unpause it or promote (which unpauses)"
	if !in.Paused {
		halt, end = "an InconclusiveAnalysis pause holds it", "promote"
	}
	return fmt.Sprintf("the controller acts on nothing while %s with a scale pending (spec.replicas %d, %s last sized for %d): every pass only syncs replicas, which the halt skips — %s first", halt, in.Replicas, r.Name, *r.Desired, end)
}

// applyPromoteFull: the status patch (and on v1.9+ the unpause) of
// `promote --full`; nothing when the current revision is already stable.
func applyPromoteFull(after model.Inputs, ro *v1alpha1.Rollout, o *Option) (model.Inputs, bool, string) {
	name := ro.Name
	o.Command = "kubectl argo rollouts promote " + name + " -n " + ro.Namespace + " --full"
	unpause := !upstream.At("cli.promote-full-unpause", after.Version).Absent
	var reqs []Request
	if ro.Status.CurrentPodHash != ro.Status.StableRS {
		unified := `{"status":{"promoteFull":true}}`
		if unpause {
			unified = `{"spec":{"paused":false},"status":{"promoteFull":true}}`
		}
		reqs = append(reqs, merge("status", `{"status":{"promoteFull":true}}`, name, unified))
	}
	if unpause && ro.Spec.Paused {
		reqs = append(reqs, merge("", `{"spec":{"paused":false}}`, name, ""))
		after.Paused = false
	}
	o.Requests = reqs
	if ro.Status.CurrentPodHash == ro.Status.StableRS {
		return after, false, "the current revision is already the stable one: kubectl sends no promoteFull patch"
	}
	after.PromoteFull = true
	return after, true, ""
}

// inconclusiveStep: the canary's current step run is Inconclusive, the
// case in which `promote` skips the analysis step.
func inconclusiveStep(ro *v1alpha1.Rollout) bool {
	r := ro.Status.Canary.CurrentStepAnalysisRunStatus
	return ro.Spec.Strategy.Canary != nil && r != nil && r.Status == v1alpha1.AnalysisPhaseInconclusive
}

// applyPromote: clear the pause conditions (or bump the step index) and
// unpause, as `promote` does.
func applyPromote(after model.Inputs, ro *v1alpha1.Rollout, o *Option, n, idx int32) (model.Inputs, bool, string) {
	name := ro.Name
	var status, spec string
	unified := `{"spec":{"paused":false},"status":{"pauseConditions":null}}`
	switch {
	case inconclusiveStep(ro) && len(ro.Status.PauseConditions) > 0 && ro.Status.ControllerPause:
		// Paused by an Inconclusive step run: the CLI also clears
		// controllerPause and moves past the analysis step. Clearing the
		// pause conditions alone would make the controller start a new run
		// of the same analysis (an.rerun-after-inconclusive).
		next := idx
		if next < n {
			next++
		}
		status = fmt.Sprintf(`{"status":{"pauseConditions":null, "controllerPause":false, "currentStepIndex":%d}}`, next)
	case len(ro.Status.PauseConditions) > 0:
		status = `{"status":{"pauseConditions":null}}`
	case n > 0:
		next := idx
		if next < n {
			next++
		}
		status = fmt.Sprintf(`{"status":{"pauseConditions":null, "currentStepIndex":%d}}`, next)
		unified = fmt.Sprintf(`{"spec":{"paused":false},"status":{"pauseConditions":null, "currentStepIndex":%d}}`, next)
	}
	if ro.Spec.Paused {
		spec = `{"spec":{"paused":false}}`
		after.Paused = false
	}
	// Every case clears status.pauseConditions: an InconclusiveAnalysis
	// pause no longer halts the scaling.
	after.Inconclusive = false
	if status != "" {
		o.Requests = append(o.Requests, merge("status", status, name, unified))
	}
	if spec != "" {
		o.Requests = append(o.Requests, merge("", spec, name, ""))
	}
	if n == 0 || idx >= n {
		if len(ro.Status.PauseConditions) == 0 && !ro.Spec.Paused {
			return after, true, "no step is left to promote"
		}
	}
	// Clearing pause conditions lets the controller complete the pause
	// step; the CLI's own index bump does the same for other steps.
	if idx < n {
		i := idx + 1
		after.Index = &i
	}
	if ro.Spec.Paused && len(ro.Status.PauseConditions) > 0 && idx < n && ro.Spec.Strategy.Canary != nil && ro.Spec.Strategy.Canary.Steps[idx].Pause != nil {
		// Under spec.paused the status patch goes first: the controller,
		// its steps still held, writes the status without controllerPause
		// before the spec patch unpauses it, and the pause step then
		// pauses again instead of completing (the lab, every modeled
		// version: e2e basic-paused-promote).
		after.Index = &idx
		o.Note = fmt.Sprintf("under spec.paused this clears the manual pause, but step %d (a pause) starts again: the CLI clears the pause conditions before it unpauses, and the controller, still paused in between, drops controllerPause — promote once more to end the step", idx)
	}
	return after, true, ""
}

// applySkip: jump to --to-step, or to the end of the steps as
// `promote --skip-all-steps` does.
func applySkip(after model.Inputs, ro *v1alpha1.Rollout, in Input, o *Option, n, idx int32) (model.Inputs, bool, string) {
	name := ro.Name
	o.Command = "kubectl argo rollouts promote " + name + " -n " + ro.Namespace + " --skip-all-steps"
	if n == 0 {
		return after, false, "the Rollout has no steps"
	}
	to := n
	if in.ToStep != nil {
		to = *in.ToStep
		if to < 0 || to > n {
			return after, false, fmt.Sprintf("step %d is outside 0..%d", to, n)
		}
		o.Command = ""
		o.TargetStep = &to
	}
	body := fmt.Sprintf(`{"status":{"currentStepIndex":%d}}`, to)
	o.Requests = []Request{merge("status", body, name, body)}
	if to == idx {
		return after, true, fmt.Sprintf("the Rollout is already at step %d", to)
	}
	after.Index = &to
	return after, true, ""
}

// applyUndo: restore the target revision's template (minus its hash label)
// on the Rollout or its workloadRef'd Deployment.
func applyUndo(after model.Inputs, ro *v1alpha1.Rollout, v *snapshot.View, in Input, o *Option) (model.Inputs, bool, string) {
	name := ro.Name
	target, err := undoTarget(v.ReplicaSets, in.ToRevision)
	if err != nil {
		return after, false, err.Error()
	}
	if in.ToRevision == 0 {
		if st := stableUndoTarget(ro, v.ReplicaSets, target); st != nil {
			o.Note = fmt.Sprintf("back to the stable revision %s (%s): a plain `kubectl argo rollouts undo` would take the second-highest, revision %s (%s), and start an update to it instead",
				revisionOf(st), st.Name, revisionOf(target), target.Name)
			target = st
		}
	}
	o.TargetRevision = revisionOf(target)
	if in.ToRevision != 0 || o.Note != "" {
		o.Command += " --to-revision " + o.TargetRevision
	}
	tmpl := target.Spec.Template.DeepCopy()
	delete(tmpl.Labels, v1alpha1.DefaultRolloutUniqueLabelKey)
	body, _ := json.Marshal([]interface{}{map[string]interface{}{"op": "replace", "path": "/spec/template", "value": tmpl}})
	req := Request{PatchType: "json", Body: body, Kind: "Rollout", Name: name}
	if ref := ro.Spec.WorkloadRef; ref != nil {
		req.Kind, req.Name = ref.Kind, ref.Name
	}
	o.Requests = []Request{req}
	current := ro.Spec.Template
	if v.WorkloadRef != nil {
		current = v.WorkloadRef.Spec.Template
	}
	if equalIgnoreHash(current, target.Spec.Template) {
		return after, true, fmt.Sprintf("the template already equals revision %s: kubectl skips the rollback", o.TargetRevision)
	}
	after.Unobserved = true
	after.New = nil
	for _, r := range after.All {
		if r.Name == target.Name {
			after.New = r
		}
	}
	return after, true, ""
}

// undoOffStable: undo's target is another revision than the stable one, so
// it starts an update to it even when the simulation ends before that
// revision is promoted (at a pause, or short of pods).
func undoOffStable(base model.Inputs, targetRev string) bool {
	return base.Stable != nil && targetRev != "" && base.Stable.Revision != targetRev
}

func revisionOf(rs *appsv1.ReplicaSet) string { return rs.Annotations["rollout.argoproj.io/revision"] }

// stableUndoTarget is the stable ReplicaSet when an update is under way
// (the current template is not the stable one) and the second-highest
// revision, plain undo's target, is a third revision: a canary replaced
// mid-rollout, or an aborted update after an earlier one. Whoever reaches
// for undo then wants production's revision back; undo to the stable skips
// the steps (rc.rollback-to-stable-skip), while undo to the third one starts
// an update to it. nil when plain undo already targets the stable.
func stableUndoTarget(ro *v1alpha1.Rollout, rss []*appsv1.ReplicaSet, second *appsv1.ReplicaSet) *appsv1.ReplicaSet {
	stable := ro.Status.StableRS
	if stable == "" || stable == ro.Status.CurrentPodHash || second.Labels[v1alpha1.DefaultRolloutUniqueLabelKey] == stable {
		return nil
	}
	for _, rs := range rss {
		if rs.Labels[v1alpha1.DefaultRolloutUniqueLabelKey] == stable && revisionOf(rs) != "" {
			return rs
		}
	}
	return nil
}

// undoTarget is the ReplicaSet undo restores: --to-revision, or the one with
// the second-highest revision (which may not be the stable one).
func undoTarget(rss []*appsv1.ReplicaSet, to int64) (*appsv1.ReplicaSet, error) {
	type rev struct {
		n  int64
		rs *appsv1.ReplicaSet
	}
	var revs []rev
	for _, rs := range rss {
		n, err := strconv.ParseInt(rs.Annotations["rollout.argoproj.io/revision"], 10, 64)
		if err != nil {
			continue
		}
		if to != 0 && n == to {
			return rs, nil
		}
		revs = append(revs, rev{n, rs})
	}
	if to != 0 {
		return nil, fmt.Errorf("revision %d is not in the Rollout's history", to)
	}
	sort.Slice(revs, func(i, j int) bool { return revs[i].n > revs[j].n })
	if len(revs) < 2 {
		return nil, fmt.Errorf("no earlier revision to undo to")
	}
	return revs[1].rs, nil
}

func equalIgnoreHash(a, b corev1.PodTemplateSpec) bool {
	a, b = *a.DeepCopy(), *b.DeepCopy()
	delete(a.Labels, v1alpha1.DefaultRolloutUniqueLabelKey)
	delete(b.Labels, v1alpha1.DefaultRolloutUniqueLabelKey)
	return equality.Semantic.DeepEqual(a, b)
}

func rsNames(rss []*appsv1.ReplicaSet) map[string]string {
	out := map[string]string{}
	for _, rs := range rss {
		out[rs.Labels[v1alpha1.DefaultRolloutUniqueLabelKey]] = rs.Name
	}
	return out
}

// effectOf simulates the controller from in and summarises it.
func effectOf(in model.Inputs, names map[string]string) Effect {
	steps := model.Simulate(in, maxPasses)
	e := Effect{Passes: len(steps)}
	if len(steps) == 0 {
		return e
	}
	first, last := steps[0], steps[len(steps)-1]
	e.FirstWeight, e.StepIndex, e.Abort = first.Pass.Traffic, first.Index, first.Abort
	e.FinalWeight, e.FinalAbort, e.FinalIndex = last.Pass.Traffic, last.Abort, last.Index
	e.FinalStable = names[last.StableHash]
	if e.FinalStable == "" {
		e.FinalStable = last.StableHash
	}
	errs := 0
	for _, s := range steps[max(0, len(steps)-3):] {
		if s.Pass.Errored {
			errs++
		}
	}
	e.ErrorLoop = errs == min(3, len(steps)) && last.Pass.Errored
	if !in.TrafficRouted && in.New != nil && in.Stable != nil {
		e.Pods = basicPods(in, steps)
	}
	applied := in.Traffic()
	for _, s := range steps {
		e.PauseEnds = e.PauseEnds || s.PauseEnded
		if s.AbortDelayEnded {
			e.DeadlineWeight = s.Pass.Traffic
		}
		e.DeadlineAbortEnds = e.DeadlineAbortEnds || s.DeadlineAbortEnded
		if s.Pass.Reset {
			// A reset pass only rewrites status; the weight stays where it
			// was — but the Services move (an undo's canary Service to the
			// stable's pods, on the lab's v1.7.2 and v1.10.2 at once).
			e.noteStable(in, s, applied)
			continue
		}
		w := s.Pass.Traffic // what the router applies: the status weight once a pass writes it
		applied = w
		who, avail := s.CarrierName, s.CarrierAvailable
		if w == 0 && s.CanaryName != "" {
			// No weight lands anywhere: the stretch names the canary.
			who, avail = s.CanaryName, s.CanaryAvailable
		}
		if n := len(e.Serving); n > 0 && e.Serving[n-1].Weight == w && e.Serving[n-1].Canary == who {
			cur := &e.Serving[n-1]
			cur.To, cur.Promotes = avail, cur.Promotes || s.Pass.Promotes
		} else {
			e.Serving = append(e.Serving, Serving{Weight: w, Canary: who, Stable: s.StableName, From: avail, To: avail, Of: in.Replicas, Promotes: s.Pass.Promotes})
		}
		e.noteStable(in, s, w)
		if in.TrafficRouted && w > 0 && !s.Pass.Promotes && s.CarrierName != "" && s.CarrierName != s.StableName {
			need := model.WeightToReplicas(in.Replicas, w, in.MaxWeight)
			if s.CarrierAvailable < need {
				x := &Exposure{Weight: w, OnPods: s.CarrierAvailable, Replicas: in.Replicas, Canary: s.CarrierName}
				if e.Exposure == nil || worse(x, e.Exposure) {
					e.Exposure = x
				}
			}
		}
	}
	if n := len(e.Serving); in.TrafficRouted && n > 0 {
		e.stableEnd = stableAfter(in, last, e.Serving[n-1].Weight)
	}
	if spec, ok := last.Specs[last.StableName]; ok && spec > last.StableAvailable {
		e.endShort = rsShort{rs: last.StableName, by: spec - last.StableAvailable}
	}
	for _, r := range in.All {
		if r.Capped && last.Specs[r.Name] > r.Replicas {
			e.refusedEnd = r.Name
		}
	}
	switch {
	case e.FinalAbort:
		e.Phase = "Degraded"
	case last.StableHash != "" && last.StableHash == last.CanaryHash && last.CanarySpec >= in.Replicas && last.Available >= last.CanarySpec && (in.TrafficRouted || last.Others == 0):
		// As the controller's phase (ru.phase-available,
		// rc.status-available-all): the update's pods
		// all there, every available pod counted against them — an older
		// ReplicaSet's too, so one hung stable pod does not hold Healthy
		// while the old canary still has a ready one.
		e.Phase = "Healthy"
	case e.FinalIndex >= 0 && int(e.FinalIndex) < len(in.Steps) && in.Steps[e.FinalIndex].Pause != nil:
		e.Phase = "Paused"
	default:
		e.Phase = "Progressing"
	}
	if model.NeverHealthy(in) && !e.FinalAbort {
		e.NeverHealthy, e.Phase = true, "Degraded (ProgressDeadlineExceeded)"
	}
	if in.Paused && !e.FinalAbort && !e.NeverHealthy {
		// spec.paused: the controller's phase says Paused, whatever the
		// step, until someone clears it.
		e.Phase = "Paused"
	}
	e.HeldAt, e.WaitsForPerson, e.heldFacts = heldAt(in, e)
	e.Summary = summarize(e, in)
	return e
}

// heldAt says where the simulation's end holds the Rollout on what the
// simulation does not do — a person's promote, an Experiment, an
// AnalysisRun — with the facts behind it, and whether waiting alone never
// ends it. "" when nothing holds it there.
func heldAt(in model.Inputs, e Effect) (string, bool, []upstream.Key) {
	i := e.FinalIndex
	var st v1alpha1.CanaryStep
	if i >= 0 && int(i) < len(in.Steps) {
		st = in.Steps[i]
	}
	switch {
	case e.Phase == "Paused" && in.Paused:
		where := fmt.Sprintf("step %d", i)
		if i >= int32(len(in.Steps)) {
			where = "the end of its steps"
		}
		return where + " while spec.paused is set (a manual pause: no ReplicaSet is scaled), until someone clears it (plain promote does)", true,
			[]upstream.Key{"rc.spec-paused-no-step", "cx.halt-user-paused"}
	case e.Phase == "Paused" && st.Pause != nil && st.Pause.Duration == nil:
		return fmt.Sprintf("step %d (pause, no duration) until someone promotes it", i), true,
			[]upstream.Key{"pa.indefinite-needs-promote", "sy.indefinite-step-no-deadline"}
	case e.Phase == "Progressing" && st.Experiment != nil:
		// Held, without a progress deadline, until the Experiment
		// completes.
		held := fmt.Sprintf("step %d (experiment) until its Experiment is Successful", i)
		facts := []upstream.Key{"rc.experiment-step-done", "sy.indefinite-step-no-deadline"}
		if diagnose.ExperimentEnds(st.Experiment) {
			return held, false, facts
		}
		return held + ", which it never is by itself (no duration, no analysis requiredForCompletion): someone must promote", true, facts
	case e.Phase == "Progressing" && st.Analysis != nil:
		return fmt.Sprintf("step %d (analysis) until its AnalysisRun is Successful", i), false,
			[]upstream.Key{"an.step-waits-successful", "sy.indefinite-step-no-deadline"}
	}
	return "", false, nil
}

// basicPods are the sizes the canary, the stable and the older ReplicaSets
// go through without trafficRouting, requests following ready pods; for a
// promoted stable only when an older ReplicaSet still has pods to lose.
func basicPods(in model.Inputs, steps []model.Step) []PodCounts {
	promoted := in.New.Name == in.Stable.Name
	at := func(spec func(*model.RS) int32) PodCounts {
		c := PodCounts{Stable: spec(in.Stable), Promoted: promoted}
		if !promoted {
			c.Canary = spec(in.New)
		}
		for _, r := range in.All {
			if r.Name != in.New.Name && r.Name != in.Stable.Name {
				c.Older += spec(r)
			}
		}
		return c
	}
	out := []PodCounts{at(func(r *model.RS) int32 { return r.Spec })}
	for _, s := range steps {
		if c := at(func(r *model.RS) int32 { return s.Specs[r.Name] }); c != out[len(out)-1] {
			out = append(out, c)
		}
	}
	if promoted && out[0].Older == 0 {
		return nil
	}
	return out
}

// neverReady is the what-if for a canary without trafficRouting whose
// pods are not all available: the simulation lets pods become available,
// but missing pods that never turn Ready hold the controller where
// maxSurge and maxUnavailable leave it (an older revision's pods then keep
// their share of the requests, since the controller scales those down
// only as other pods become available). The missing pods may be any
// ReplicaSet's: the canary's, or the stable's, which hold an abort and an
// undo to the stable where a promotion, scaling the stable down, does not
// wait on them. "" when that ends where e does.
func neverReady(after, base model.Inputs, names map[string]string, e Effect) string {
	if base.New == nil || base.Stable == nil || len(e.Pods) == 0 && (!base.TrafficRouted || len(e.Serving) == 0) {
		return ""
	}
	short := map[string]int32{}
	var parts []string
	var missing int32
	for _, r := range base.All {
		// With trafficRouting only the stable's: its available pods gate
		// every weight; the canary's missing pods are the exposure the
		// verdicts already weigh.
		if r.Spec > r.Available && (!base.TrafficRouted || r.Name == base.Stable.Name && r.Name != base.New.Name) {
			n := r.Spec - r.Available
			short[r.Name] = n
			missing += n
			pods := "pods"
			if n == 1 {
				pods = "pod"
			}
			parts = append(parts, fmt.Sprintf("%s's %d missing %s", r.Name, n, pods))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	stuck := after.Clone()
	for _, r := range stuck.All {
		if n, ok := short[r.Name]; ok {
			// The update's revision may not start at all (every pod it
			// creates stays unready); the stable's, which ran, has
			// hung pods, and new ones of it turn Ready.
			r.Stuck, r.Hung = true, n
			if r.Name == base.New.Name && base.New.Name != base.Stable.Name {
				r.Hung = 0
			}
		}
	}
	x := effectOf(stuck, names)
	verb := "never turn"
	if missing == 1 {
		verb = "never turns"
	}
	if base.TrafficRouted {
		return weightStops(x, e, base, strings.Join(parts, " and ")+" "+verb)
	}
	if len(x.Pods) == 0 || x.Pods[len(x.Pods)-1] == e.Pods[len(e.Pods)-1] {
		return ""
	}
	// The sizes where it stops, in the summary's own words.
	who, sizes := PodSizes(x.Pods[len(x.Pods)-1:])
	at := who + " " + sizes
	msg := fmt.Sprintf("if %s %s Ready, scaling stops at %s: maxSurge %d and maxUnavailable %d leave no room", strings.Join(parts, " and "), verb, at, base.MaxSurge, base.MaxUnavailable)
	switch last := x.Pods[len(x.Pods)-1]; {
	case last.Older > 0 && last.Promoted:
		msg += ", and the other ReplicaSets' ready pods keep taking requests"
	case last.Older > 0:
		msg += ", and the older revisions' ready pods keep taking requests"
	}
	return msg
}

// weightStops is neverReady's what-if with trafficRouting: where the
// weight stays when the missing pods never turn Ready, if not where e
// ends. A short stable holds every weight its available pods cannot
// carry on versions with the stable availability check (the lab, v1.10.2:
// one hung stable pod kept 20% on an aborted canary); the caller passes
// only the stable's missing pods.
func weightStops(x, e Effect, base model.Inputs, what string) string {
	if len(x.Serving) == 0 {
		return ""
	}
	xl, el := x.Serving[len(x.Serving)-1], e.Serving[len(e.Serving)-1]
	if xl.Weight == el.Weight && xl.Canary == el.Canary && x.FinalStable == e.FinalStable && x.HeldAt == e.HeldAt {
		return ""
	}
	msg := fmt.Sprintf("if %s Ready, the weight stays at %d%% on %s", what, xl.Weight, xl.Canary)
	if xl.Weight == 0 {
		msg = fmt.Sprintf("if %s Ready, all traffic stays on stable %s, and the Rollout ends %s", what, xl.Stable, x.Phase)
	} else if xl.Canary == xl.Stable {
		// After an abort the canary Service selects the stable's pods
		// (tr.abort-canary-svc-to-stable): the weight is the router's only.
		msg = fmt.Sprintf("if %s Ready, the router keeps %d%% on the canary Service, which the abort points at the stable %s's pods (each pass points it back at the canary for a moment: argo-rollouts #3078), so nearly all traffic is on them", what, xl.Weight, xl.Stable)
	}
	if x.Phase == "Healthy" && xl.Weight > 0 && base.DSS {
		// With dynamicStableScale the rollback keeps the canary
		// destination on the revision it left, weight by stable
		// availability (the lab, v1.7.2 and v1.10.2: Healthy, 80/20,
		// the canary Service on the aborted canary's pods).
		msg = fmt.Sprintf("if %s Ready, the Rollout reads Healthy while the router keeps %d%% on the canary Service, which still selects %s's pods: that share of requests goes to the revision undo left, until the stable has every pod available", what, xl.Weight, xl.Canary)
	} else if x.Phase == "Healthy" && xl.Weight > 0 {
		// Promoted (an undo to the stable): the controller points the
		// canary Service at the stable's pods, which it does not gate,
		// so requests reach them; only the router keeps the old weight
		// (the lab, v1.10.2: Healthy, 80/20, both Services on the stable).
		msg = fmt.Sprintf("if %s Ready, the router keeps %d%% on the canary Service, which by then selects the stable %s's pods too: every request reaches them, but the Rollout reads Healthy with the router not put back to 0%%", what, xl.Weight, x.FinalStable)
	}
	if x.HeldAt != "" && x.HeldAt != e.HeldAt {
		msg += ", held at " + x.HeldAt
	}
	switch {
	case xl.Weight <= el.Weight || x.Phase == "Healthy":
	case base.DSS && base.Stable.Spec > base.Stable.Available:
		// The abort's own weight (tr.abort-weight-formula): the lab,
		// v1.7.2 and v1.10.2, kept 20% with 4 of 5 stable pods.
		msg += ": with dynamicStableScale an aborted canary keeps the share the stable's available pods cannot take"
	case base.Stable.Spec > base.Stable.Available:
		msg += ": the controller writes no weight that leaves the stable more traffic than its available pods carry"
	}
	return msg
}

// hungNote is the plan's word on hung pods (diagnose.HungPods) of the
// stable, whose missing pods an "if … never turn Ready" stop waits on, or
// nil when none has hung or no way out stops on them.
func hungNote(v *snapshot.View, base model.Inputs, opts []Option, short *Shortage) *HungNote {
	var stops, goes []string
	for _, o := range opts {
		if o.Verdict == NotApplicable || o.Verdict == NoEffect {
			continue
		}
		name := string(o.Action)
		if o.Action == Wait {
			name = "doing nothing"
		}
		if o.Effect.IfNeverReady != "" && o.Action == Wait {
			stops = append([]string{name}, stops...)
		} else if o.Effect.IfNeverReady != "" {
			stops = append(stops, name)
		} else if o.Action != Wait {
			goes = append(goes, name)
		}
	}
	if len(stops) == 0 && short == nil {
		return nil
	}
	// The stable's only: its revision ran, so a pod of it that hangs is
	// that pod, and a new one turns Ready; a canary's may be its revision
	// failing, where a new pod hangs too (undo is the way out there).
	var hung []*corev1.Pod
	if r := base.Stable; r != nil && r.Spec > r.Available {
		hung = diagnose.HungPods(v, r.Hash)
	}
	if len(hung) == 0 {
		return nil
	}
	h := newHungNote(v, hung)
	it := map[bool]string{true: "it", false: "them"}[len(hung) == 1]
	if short != nil {
		h.Text += fmt.Sprintf(": doing nothing leaves %s until %s replaced", short, map[bool]string{true: "it is", false: "they are"}[len(hung) == 1])
		if len(stops) == 0 {
			return h
		}
		h.Text += "; and"
	} else {
		h.Text += ":"
	}
	h.Text += fmt.Sprintf(" every \"if … never turns Ready\" stop in this plan is what to expect, not a what-if: %s %s on %s",
		andList(stops), verbN("stops", "stop", len(stops)), it)
	if len(goes) > 0 {
		h.Text += fmt.Sprintf("; %s %s not", andList(goes), verbN("does", "do", len(goes)))
	}
	return h
}

// newHungNote names hung pods, since when the first of them has not been
// Ready, and the delete that replaces them; Text is that much, for the
// caller to say what waits on them.
func newHungNote(v *snapshot.View, hung []*corev1.Pod) *HungNote {
	h := &HungNote{}
	for _, p := range hung {
		h.Pods = append(h.Pods, p.Name)
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && (h.Since.IsZero() || c.LastTransitionTime.Time.Before(h.Since)) {
				h.Since = c.LastTransitionTime.Time
			}
		}
	}
	if h.Since.IsZero() {
		h.Since = hung[0].CreationTimestamp.Time
	}
	has, them, its, pods := "has", "it", "its", "pod"
	if len(hung) > 1 {
		has, them, its, pods = "have", "them", "their", "pods"
	}
	h.Text = fmt.Sprintf("%s %s not been Ready since %s (%s ago)", strings.Join(h.Pods, ", "), has, h.Since.UTC().Format(time.RFC3339), snapshot.Since(v.Now, h.Since).Round(time.Second))
	h.Fix = fmt.Sprintf("delete the hung %s (`kubectl delete pod -n %s %s`): %s ReplicaSet replaces %s, and the controller goes on once the new %s Ready", pods, hung[0].Namespace, strings.Join(h.Pods, " "), its, them, verbN("pod is", "pods are", len(hung)))
	return h
}

// missingWho names the missing pods an "if … never turn Ready" stop
// waits on: the canary's, when only the canary is short.
func missingWho(base model.Inputs) string {
	for _, r := range base.All {
		if r.Spec > r.Available && (r.Name != base.New.Name || base.New.Name == base.Stable.Name) {
			return "the missing pods"
		}
	}
	return "the canary's missing pods"
}

func andList(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

func verbN(one, many string, n int) string {
	if n == 1 {
		return one
	}
	return many
}

// deadlineNote is the progress deadline's abort on an update that waits
// for pods (model.ProgressClock, with progressDeadlineAbort), or nil: the
// one thing the controller does by itself if they never turn ready (without
// the abort the Rollout only turns Degraded, which diagnose's RD170 says).
// Not said where a known bug keeps the deadline from firing: the Istio
// subset-only gate (#4626, on some versions; not said on any) and
// crash-looping pods (#3765).
func deadlineNote(ro *v1alpha1.Rollout, in model.Inputs, v *snapshot.View) *DeadlineNote {
	clock, runs := model.ProgressClock(ro, in)
	if !runs || !clock.Abort || in.New.Available >= in.New.Spec || in.SubsetOnly {
		return nil
	}
	if pods, _ := v.Workload.CrashLooping(in.New.Hash); len(pods) > 0 {
		return nil
	}
	missing := in.New.Spec - in.New.Available
	pods := fmt.Sprintf("%d missing pods do", missing)
	if missing == 1 {
		pods = "missing pod does"
	}
	when := fmt.Sprintf("by %s (in %s; progressDeadlineSeconds %d without progress)", clock.Due.UTC().Format(time.RFC3339), clock.Due.Sub(v.Now).Round(time.Second), clock.Seconds)
	if !clock.Due.After(v.Now) {
		when = fmt.Sprintf("by %s (%s ago; the controller's pass for it is due)", clock.Due.UTC().Format(time.RFC3339), v.Now.Sub(clock.Due).Round(time.Second))
	}
	return &DeadlineNote{Due: clock.Due,
		Text: fmt.Sprintf("if %s's %s not turn ready %s, the update is ProgressDeadlineExceeded and the controller aborts it (progressDeadlineAbort): %s",
			in.New.Name, pods, when, model.DeadlineAbortEffect(in)),
		Cites: deadlineCites(clock, in.Version)}
}

// deadlineCites are the deadline note's citations: the clock, the
// requeue and the abort; within the rollback window also why the abort
// does not last.
func deadlineCites(clock model.Deadline, ver upstream.Version) []upstream.Cite {
	keys := []upstream.Key{"co.timed-out-from-update", "sy.requeue-at-deadline", "sy.deadline-abort"}
	if clock.Window {
		keys = append(keys, "co.updated-change-is-progress", "rc.every-pass-remove-abort")
	}
	out := make([]upstream.Cite, 0, len(keys))
	for _, k := range keys {
		out = append(out, upstream.At(k, ver))
	}
	return out
}

// PodSizes names the sizes of ps and writes them in order, as the
// summaries do: "canary/stable", with "/older revisions" (or, once the
// stable is the update's, "/other ReplicaSets") when such a ReplicaSet
// has pods, and "2/4 → 2/3 → …".
func PodSizes(ps []PodCounts) (who, sizes string) {
	if len(ps) == 0 {
		return "", ""
	}
	older := false
	for _, c := range ps {
		older = older || c.Older > 0
	}
	var names []string
	if !ps[0].Promoted {
		names = append(names, "canary")
	}
	names = append(names, "stable")
	switch {
	case older && ps[0].Promoted:
		// After undo the canary left is one of them: not older.
		names = append(names, "other ReplicaSets")
	case older:
		names = append(names, "older revisions")
	}
	var each []string
	for _, c := range ps {
		var n []string
		if !c.Promoted {
			n = append(n, fmt.Sprint(c.Canary))
		}
		n = append(n, fmt.Sprint(c.Stable))
		if older {
			n = append(n, fmt.Sprint(c.Older))
		}
		each = append(each, strings.Join(n, "/"))
	}
	return strings.Join(names, "/"), strings.Join(each, " → ")
}

// moves: on the way to where it ends, the controller changes a weight or,
// without trafficRouting, a ReplicaSet's size.
func (e Effect) moves(base model.Inputs) bool {
	if len(e.Pods) > 1 || len(e.Serving) > 1 {
		return true
	}
	return base.TrafficRouted && len(e.Serving) == 1 && e.Serving[0].Weight != base.Traffic()
}

// worse: more weight per available pod.
func worse(a, b *Exposure) bool {
	return int64(a.Weight)*int64(b.OnPods+1) > int64(b.Weight)*int64(a.OnPods+1)
}

func summarize(e Effect, in model.Inputs) string {
	var parts []string
	for _, s := range e.Serving {
		if !in.TrafficRouted {
			break
		}
		who := s.Canary
		if who == "" {
			who = "no canary"
		}
		span := fmt.Sprintf("%d/%d", s.From, s.Of)
		if s.To != s.From {
			span = fmt.Sprintf("%d→%d/%d", s.From, s.To, s.Of)
		}
		part := fmt.Sprintf("%d%% on %s (%s available)", s.Weight, who, span)
		if s.Weight > 0 && s.Canary == s.Stable && !s.Promotes {
			// The canary Service selects the stable's pods (an abort).
			part = fmt.Sprintf("nearly all traffic on stable %s (%s available; the router's %d%% goes through the canary Service, which flips back to the canary for a moment on each pass)", s.Stable, span, s.Weight)
		}
		if s.Weight == 0 && s.Stable != "" {
			part = fmt.Sprintf("all traffic on stable %s", s.Stable)
			if s.Canary != "" && s.Canary != s.Stable {
				part += fmt.Sprintf(" (canary %s at %s)", s.Canary, span)
			}
		}
		if s.Promotes {
			part += ", promoted"
		}
		parts = append(parts, part)
	}
	out := strings.Join(parts, " → ")
	if len(e.Pods) > 0 {
		who, sizes := PodSizes(e.Pods)
		out = "no traffic routing, requests follow ready pods: " + who + " " + sizes
	} else if out == "" {
		out = "no traffic routing: replicas follow the steps"
	}
	if e.ErrorLoop {
		out += "; then every pass errors (subset-only gate) and the weight stays"
	}
	out += fmt.Sprintf("; ends %s with stable %s", e.Phase, e.FinalStable)
	if e.HeldAt != "" {
		out += ", held at " + e.HeldAt
	}
	if e.NeverHealthy {
		out += fmt.Sprintf(" — minPodsPerReplicaSet %d > replicas %d: the Healthy condition never becomes True, the progress deadline passes and the Rollout stays Degraded", *in.MinPods, in.Replicas)
	}
	return out
}

// judge rates a way out by its effect e against doing nothing (wait).
func judge(a Action, e, wait Effect, base model.Inputs, stable, canary, why, targetRev string) (Verdict, string) {
	v, why := rate(a, e, wait, base, stable, canary, why, targetRev)
	if a != Wait && wait.stableHarm != nil && e.stableHarm == nil && (v == Safe || v == SafeWithCost) {
		// Doing nothing keeps the stable short; this way out does not.
		why = "it ends the stable's shortage; " + why
	}
	return v, why
}

func rate(a Action, e, wait Effect, base model.Inputs, stable, canary, why, targetRev string) (Verdict, string) {
	if why != "" && a != Wait {
		return NoEffect, why
	}
	exposed := func(x *Exposure) string {
		return fmt.Sprintf("%d%% of traffic on %d of %d pods of %s", x.Weight, x.OnPods, x.Replicas, x.Canary)
	}
	if a == Wait {
		switch {
		case e.Exposure != nil:
			return Harmful, "doing nothing leaves " + exposed(e.Exposure)
		case e.stableHarm != nil:
			return Harmful, "doing nothing leaves " + e.stableHarm.String()
		case e.ErrorLoop:
			return Harmful, "doing nothing leaves the controller failing every pass"
		case base.Abort && e.DeadlineAbortEnds && !e.FinalAbort && e.refusedEnd != "":
			return SafeWithCost, fmt.Sprintf("the progress deadline's abort ends by itself once %s is scaled down, and the rollback within the window starts over, but it does not finish while the API server refuses %s's missing pods (RD185): %s", canary, e.refusedEnd, e.Summary)
		case base.Abort && e.DeadlineAbortEnds && !e.FinalAbort:
			return SafeWithCost, fmt.Sprintf("the progress deadline's abort ends by itself once %s is scaled down, and the rollback within the window starts over (the deadline aborts it again if its pods do not come): %s", canary, e.Summary)
		case base.Abort && e.IfNeverReady != "" && base.TrafficRouted:
			// The abort's weight waits on the stable's missing pods.
			return Safe, "the Rollout stays aborted: traffic goes back to the stable as its missing pods turn available (below), and spec.template still names the aborted revision"
		case base.Abort && e.DeadlineWeight > 0 && base.TrafficRouted:
			// RD184 before v1.10: the weight stays until the deadline,
			// and is left on the canary through the pass that removes it.
			until := fmt.Sprintf("the stable has all %d pods available and the canary's abort scale-down deadline (abortScaleDownDelaySeconds later) has passed", base.Replicas)
			if d := base.New.ScaleDownDeadline; d != "" {
				until = "the canary's abort scale-down deadline (" + d + ") has passed"
			}
			return SafeWithCost, fmt.Sprintf("the Rollout stays aborted with %d%% of traffic still on the aborted %s until %s; the pass that then scales %s to 0 writes no weight, so for a moment %d%% goes to pods being deleted, until the next pass moves it to the stable; spec.template still names the aborted revision", e.DeadlineWeight, canary, until, canary, e.DeadlineWeight)
		case base.Abort && e.FinalWeight > 0 && base.TrafficRouted:
			// The abort does not bring the weight to 0 by itself
			// (dynamicStableScale holding it: RD155, RD176).
			return SafeWithCost, fmt.Sprintf("the Rollout stays aborted with %d%% of traffic still on the aborted %s, and spec.template still names it: %s", e.FinalWeight, canary, e.Summary)
		case base.Abort:
			return Safe, "the Rollout stays aborted: traffic on the stable, but spec.template still names the aborted revision"
		case e.NeverHealthy:
			return SafeWithCost, "traffic is served, but the Rollout never becomes Healthy: " + e.Summary
		case e.refusedEnd != "":
			return SafeWithCost, fmt.Sprintf("the Rollout does not finish while the API server refuses %s's missing pods (RD185): %s", e.refusedEnd, e.Summary)
		case e.WaitsForPerson && e.moves(base):
			return Safe, "the controller finishes the current step, then nothing moves by itself: " + e.Summary
		case e.WaitsForPerson:
			return Safe, "traffic stays as it is and nothing moves by itself: " + e.Summary
		}
		return Safe, "the controller converges by itself: " + e.Summary
	}
	if sameOutcome(e, wait) {
		switch {
		case e.Exposure != nil:
			return NoEffect, "it changes nothing that matters: " + exposed(e.Exposure) + " stays"
		case e.stableHarm != nil:
			return NoEffect, "it changes nothing that matters: " + e.stableHarm.String() + " stays"
		}
		return NoEffect, "the controller ends where it would without it: " + e.Summary
	}
	if e.Exposure != nil {
		return Harmful, "it puts or keeps " + exposed(e.Exposure)
	}
	if e.stableHarm != nil {
		return Harmful, "it puts or keeps " + e.stableHarm.String()
	}
	if e.ErrorLoop {
		return Harmful, "the controller then fails every pass and the weight is stuck"
	}
	switch {
	case a == Retry:
		return SafeWithCost, "traffic follows availability, but it re-releases the aborted revision " + canary + " from step 0"
	case a == PromoteFull && e.FinalStable == canary && base.Abort:
		return SafeWithCost, "capacity-safe, but it promotes the aborted revision " + canary
	case a == Promote:
		// Plain promote ends the current step only: the steps after it
		// still run (the simulation lets timed pauses end), and this one
		// promotes because nothing after it holds.
		if e.FinalStable == canary && canary != stable {
			msg := "capacity-safe; it ends the current step and the steps after it run to the end"
			if e.PauseEnds {
				msg += " (a timed pause on the way ends by itself)"
			}
			return SafeWithCost, msg + ", which promotes " + canary
		}
	case a == PromoteFull || a == Skip:
		if e.FinalStable == canary && canary != stable {
			return SafeWithCost, "capacity-safe, but it skips the remaining steps and analysis and promotes " + canary
		}
	case a == Undo && (e.FinalStable != stable || undoOffStable(base, targetRev)):
		return SafeWithCost, fmt.Sprintf("it deploys revision %s, which is not the stable revision", targetRev)
	case a == Undo && model.RollbackWindow(base).WithinWindow:
		// Undo here takes back the rollback itself.
		return SafeWithCost, fmt.Sprintf("all traffic returns to the stable %s at once, but that is the revision the rollback was moving away from: whatever made you roll back is live on 100%% again", stable)
	case a == Abort && e.FinalAbort:
		return SafeWithCost, "traffic returns to the stable " + stable + ", but the Rollout stays aborted until its spec changes"
	case a == Abort:
		return SafeWithCost, "traffic returns to the stable " + stable + " while the canary comes up, then the controller clears the abort and goes on: " + e.Summary
	}
	return Safe, e.Summary
}

func sameOutcome(a, b Effect) bool {
	if a.FirstWeight != b.FirstWeight || a.FinalWeight != b.FinalWeight || a.FinalStable != b.FinalStable ||
		a.FinalAbort != b.FinalAbort || a.FinalIndex != b.FinalIndex || len(a.Serving) != len(b.Serving) {
		return false
	}
	for i := range a.Serving {
		if a.Serving[i].Weight != b.Serving[i].Weight || a.Serving[i].Canary != b.Serving[i].Canary {
			return false
		}
	}
	return true
}

// preference breaks ties between equally rated actions: leave to the stable
// revision first, then stop the rollout, then finish it, then the rest.
var preference = []Action{Undo, Abort, PromoteFull, Retry, Skip, Promote, Wait}

func recommend(opts []Option, base model.Inputs, hung bool) (Action, string) {
	byAction := map[Action]Option{}
	for _, o := range opts {
		byAction[o.Action] = o
	}
	wait := byAction[Wait]
	if wait.Verdict == Safe && !base.Abort {
		why := "nothing needs an escape: " + wait.Why
		for _, a := range preference {
			// Waiting rests on the missing pods turning Ready; say
			// which way out does not (undo from a canary's, a
			// promotion from a stable's or an active Service's).
			u := byAction[a]
			if a == Wait || hung || wait.Effect.IfNeverReady == "" || u.Effect.IfNeverReady != "" || u.Verdict.rank() > SafeWithCost.rank() {
				continue
			}
			why += fmt.Sprintf("; if %s never turn Ready, %s is the way out that does not wait on them", missingWho(base), a)
			if u.Verdict == SafeWithCost {
				why += ", at a cost: " + u.Why
			}
			break
		}
		return Wait, why
	}
	best := Wait
	// With hung pods a way out that stops on them (IfNeverReady) ends
	// there: at the same verdict, one that does not comes first.
	stops := func(a Action) int {
		if hung && byAction[a].Effect.IfNeverReady != "" {
			return 1
		}
		return 0
	}
	for _, a := range preference { // the first of the best-rated, in preference order
		ra, rb := byAction[a].Verdict.rank(), byAction[best].Verdict.rank()
		if ra < rb || ra == rb && (best == Wait || stops(a) < stops(best)) {
			best = a
		}
	}
	o := byAction[best]
	if o.Verdict == Harmful || o.Verdict == NotApplicable || o.Verdict == NoEffect {
		return Wait, "no action improves on waiting: " + wait.Why
	}
	return best, fmt.Sprintf("%s (%s): %s", best, o.Verdict, o.Why)
}

// abortRetry fills the request of abort (status.abort true) or retry
// (false) as the CLI patches it, for either strategy. done is set when the
// patch changes nothing, with the option's applies and why.
func abortRetry(a Action, name string, aborted bool, o *Option) (done, applies bool, why string) {
	if a == Abort {
		o.Requests = []Request{merge("status", `{"status":{"abort":true}}`, name, `{"status":{"abort":true}}`)}
		if aborted {
			return true, true, "already aborted: the patch changes nothing"
		}
		return false, false, ""
	}
	o.Requests = []Request{merge("status", `{"status":{"abort":false}}`, name, `{"status":{"abort":false}}`)}
	if !aborted {
		return true, false, "the Rollout is not aborted: retry only clears status.abort"
	}
	return false, false, ""
}
