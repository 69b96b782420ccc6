// Package fleet ranks every Rollout in scope by risk from one cheap read of
// the cluster (pkg/gather's Fleet: a few paginated LIST calls, never a
// request per Rollout). It knows nothing of cobra or of terminals: the CLI's
// scan command and library users call Scan the same way.
package fleet

import (
	"context"
	"fmt"
	"sort"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/rolloutdoctor/rolloutdoctor/internal/par"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/gather"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// Row is one Rollout in a fleet scan.
type Row struct {
	// Cluster is the kube context the Rollout was read through, in a scan
	// over several clusters.
	Cluster   string `json:"cluster,omitempty"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Strategy is canary or blueGreen; Router the traffic router ("" for
	// none).
	Strategy string `json:"strategy"`
	Router   string `json:"router,omitempty"`
	// Waiting says what a person must do when the Rollout is paused and
	// only a person resumes it ("promote: pause step 3 has no duration").
	Waiting string `json:"waitingForAPerson,omitempty"`
	// Worst is the highest finding severity ("" when none).
	Worst      string   `json:"worst,omitempty"`
	Top        string   `json:"topFinding,omitempty"`
	FindingIDs []string `json:"findings"`
	Phase      string   `json:"phase"`
	// Step is "index/count" for a canary, "blueGreen STATE" for a
	// blue-green Rollout.
	Step        string `json:"step"`
	Aborted     bool   `json:"aborted"`
	Weight      *int32 `json:"canaryWeight,omitempty"`
	CanaryAvail int32  `json:"canaryAvailable"`
	Needed      int32  `json:"podsTheWeightNeeds"`
	Replicas    int32  `json:"replicas"`
	// PodShare: a canary without trafficRouting, mid-update — its share of
	// the ready pods, which is its share of the requests.
	PodShare   *diagnose.PodShare `json:"podShare,omitempty"`
	Controller string             `json:"controller"`
	// ControllerAssumed: the version was not read from the controller
	// (none found, several disagreeing, a tag that is not a version): it is
	// the one assumed, and the cluster's summary says why.
	ControllerAssumed bool `json:"controllerAssumed,omitempty"`
	// ReplicaSetsUnread: the Rollout's ReplicaSets could not be read (the
	// report's gaps say why), so canaryAvailable is not known and only the
	// findings that need no ReplicaSets are listed.
	ReplicaSetsUnread bool `json:"replicaSetsUnread,omitempty"`
	severity          diagnose.Severity
	// uid is the Rollout's: the same Rollout read through two contexts
	// of one cluster is listed once (ScanClusters).
	uid types.UID
	// How the controller version was found, for a cluster's summary.
	controllerSource, controllerFrom string
	// ratio is pods the weight needs per available canary pod: the
	// tie-breaker between rows of the same severity.
	ratio float64
}

// Severity is the row's worst finding severity (0 when none).
func (r Row) Severity() diagnose.Severity { return r.severity }

// Report is the result of a fleet scan, riskiest Rollout first.
type Report struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Scope      string         `json:"scope"`
	Requests   int            `json:"apiRequests"`
	Rollouts   int            `json:"rollouts"`
	Gaps       []snapshot.Gap `json:"gaps,omitempty"`
	Rows       []Row          `json:"rows"`
}

// Worst is the highest severity over every row (0 when none).
func (r *Report) Worst() diagnose.Severity {
	var w diagnose.Severity
	for _, row := range r.Rows {
		if row.severity > w {
			w = row.severity
		}
	}
	return w
}

// Scan reads the fleet and diagnoses every Rollout from that one read.
// versionFlag is --controller-version ("" reads it from the controller
// Deployments the read found).
func Scan(ctx context.Context, dc dynamic.Interface, opt gather.FleetOptions, versionFlag string) (*Report, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	res, err := gather.Fleet(ctx, dc, opt)
	if err != nil {
		return nil, err
	}
	rep, err := scanSnapshot(res.Snapshot, versionFlag)
	if err != nil {
		return nil, err
	}
	rep.Scope, rep.Requests = opt.String(), res.Requests
	return rep, nil
}

// scanSnapshot diagnoses every Rollout of a fleet snapshot and ranks them.
// The diagnoses run on every core: each is pure over its namespace's part of
// the snapshot, and after the read they were one core's work while the
// others waited (a quarter of a one-cluster scan's CPU).
func scanSnapshot(snap *snapshot.Snapshot, versionFlag string) (*Report, error) {
	rep := &Report{APIVersion: diagnose.ReportAPIVersion, Kind: "FleetScan", Gaps: snap.Header.Gaps}
	gap := ""
	for _, g := range snap.Header.Gaps {
		if g.Resource == "deployments.apps" {
			gap = g.String()
		}
	}
	type item struct {
		ns *snapshot.Snapshot
		ro *v1alpha1.Rollout
	}
	var items []item
	for _, nsSnap := range byNamespace(snap) {
		ros, err := nsSnap.Rollouts()
		if err != nil {
			return nil, err
		}
		for _, ro := range ros {
			items = append(items, item{nsSnap, ro})
		}
	}
	rows := make([]Row, len(items))
	errs := make([]error, len(items))
	par.Do(len(items), func(i int) { rows[i], errs[i] = scanRollout(items[i].ns, items[i].ro, versionFlag, gap) })
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	rep.Rollouts, rep.Rows = len(items), rows
	rank(rep.Rows)
	return rep, nil
}

// scanRollout diagnoses one Rollout for its row; an error is one that ends
// the scan (a Rollout that cannot be viewed gets a row saying so).
func scanRollout(nsSnap *snapshot.Snapshot, ro *v1alpha1.Rollout, versionFlag, gap string) (Row, error) {
	v, err := nsSnap.View(ro)
	if err != nil {
		return Row{Namespace: ro.Namespace, Name: ro.Name, Top: "unreadable: " + err.Error(), FindingIDs: []string{}, uid: ro.UID}, nil
	}
	cv, err := model.DetectVersionFor(versionFlag, v, gap)
	if err != nil {
		return Row{}, err
	}
	row := rowOf(diagnose.Run(v, cv, diagnose.Options{Source: "scan", NoPods: true}))
	row.Waiting, row.uid = waitingFor(ro), ro.UID
	return row, nil
}

// byNamespace splits the fleet snapshot into one snapshot per namespace,
// in namespace order, so that a Rollout's view sees only its namespace's
// objects; the controller Deployments are cluster-wide and go into each.
func byNamespace(snap *snapshot.Snapshot) []*snapshot.Snapshot {
	return snap.ByNamespace(func(o *unstructured.Unstructured) bool { return o.GetKind() == "Deployment" })
}

// rank sorts riskiest first: by severity, then by how far the canary's
// available pods fall short of what its weight needs, then by name.
func rank(rows []Row) {
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.severity != b.severity {
			return a.severity > b.severity
		}
		if a.ratio != b.ratio {
			return a.ratio > b.ratio
		}
		if a.Cluster != b.Cluster {
			return a.Cluster < b.Cluster
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
}

func rowOf(d *diagnose.Report) Row {
	r := Row{Namespace: d.Namespace, Name: d.Name, Phase: d.State.Phase, Aborted: d.State.Aborted,
		Step: fmt.Sprintf("%d/%d", d.State.StepIndex, d.State.StepCount), Replicas: d.State.Replicas,
		Controller: string(d.Controller.Assumed), FindingIDs: []string{}, Strategy: d.State.Strategy,
		controllerSource: string(d.Controller.Source), controllerFrom: d.Controller.From,
		ControllerAssumed: !d.Controller.Known()}
	for _, f := range d.Findings {
		r.FindingIDs = append(r.FindingIDs, f.ID)
		if f.Severity > r.severity {
			r.severity, r.Top = f.Severity, f.ID+" "+f.Message
		}
	}
	if r.severity > 0 {
		r.Worst = r.severity.String()
	}
	// A blue-green Rollout has no steps: its state says where it stands
	// ("blueGreen paused", "blueGreen old-scale-down-delay").
	if d.Model != nil && d.Model.BlueGreen != nil {
		r.Step = "blueGreen " + string(d.Model.BlueGreen.State)
	}
	if d.ReplicaSetsUnread != nil {
		r.ReplicaSetsUnread = true
		if d.State.Strategy == "blueGreen" {
			r.Step = "blueGreen ?" // its state is the ReplicaSets'
		}
	}
	r.PodShare = d.PodShare
	if t := d.Traffic; t != nil {
		if t.Router != "none" {
			r.Router = t.Router
		}
		w := t.CanaryWeight
		r.Weight, r.CanaryAvail = &w, t.CanaryAvailable
		r.Needed = model.WeightToReplicas(d.State.Replicas, w, t.MaxWeight)
		if w > 0 && d.ReplicaSetsUnread == nil {
			r.ratio = float64(r.Needed) / float64(r.CanaryAvail+1)
		}
	}
	return r
}

// waitingFor says what a person must do when the Rollout is paused and
// nothing but a person resumes it: an indefinite pause step, a blue-green
// pause without auto-promotion, an Inconclusive analysis, spec.paused.
// Timed pauses end by themselves and are not listed (upstream #4344 asks
// for exactly this list).
func waitingFor(ro *v1alpha1.Rollout) string {
	if ro.Status.Abort {
		return ""
	}
	if ro.Spec.Paused {
		// The official plugin has no resume verb: plain promote clears
		// spec.paused (promote.go's unpause patch).
		return "promote: spec.paused is set (a manual pause; plain kubectl argo rollouts promote clears it)"
	}
	for _, pc := range ro.Status.PauseConditions {
		switch pc.Reason {
		case v1alpha1.PauseReasonInconclusiveAnalysis:
			return "promote or abort: an AnalysisRun was Inconclusive"
		case v1alpha1.PauseReasonInconclusiveExperiment:
			return "promote or abort: an Experiment was Inconclusive"
		case v1alpha1.PauseReasonCanaryPauseStep:
			c := ro.Spec.Strategy.Canary
			if c == nil || ro.Status.CurrentStepIndex == nil {
				continue
			}
			i := *ro.Status.CurrentStepIndex
			if int(i) < len(c.Steps) && c.Steps[i].Pause != nil && c.Steps[i].Pause.Duration == nil {
				return fmt.Sprintf("promote: pause step %d has no duration", i)
			}
		case v1alpha1.PauseReasonBlueGreenPause:
			bg := ro.Spec.Strategy.BlueGreen
			if bg != nil && (bg.AutoPromotionSeconds == 0 || (bg.AutoPromotionEnabled != nil && !*bg.AutoPromotionEnabled)) {
				return "promote: blue-green waits before switching the active Service"
			}
		}
	}
	if c := ro.Spec.Strategy.Canary; c != nil && ro.Status.CurrentStepIndex != nil {
		// An experiment step with neither a duration nor an analysis
		// required for completion never ends by itself (RD163).
		if i := *ro.Status.CurrentStepIndex; int(i) < len(c.Steps) && c.Steps[i].Experiment != nil && !diagnose.ExperimentEnds(c.Steps[i].Experiment) {
			return fmt.Sprintf("promote: experiment step %d has no duration and no analysis required for completion", i)
		}
	}
	return ""
}
