package diagnose

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// restartSlow is how long a pod may stay unready before RD173 counts it as
// holding the restart (hung) rather than on its way: pods that start slowly
// (a JVM, a cache to warm) take a minute or two, a readiness probe that
// flaps comes back within its failure threshold, and the controller itself
// looks again every 30 s.
const restartSlow = 2 * time.Minute

// restartOverdue is how long a restart may be outstanding before scan,
// which reads no pods, warns about it: a restart evicts a few pods a
// minute even in large Rollouts.
const restartOverdue = 10 * time.Minute

// restart is where a restart requested through spec.restartAt
// (`kubectl argo rollouts restart`) stands, worked out as the controller's
// pod restarter does on its next pass: which pods predate restartAt, how
// many it may evict at a time, and how many it can now.
type restart struct {
	at        time.Time
	scheduled bool // restartAt is still ahead
	// unread: the pods were not read (a fleet scan lists none), so nothing
	// below is known but the ReplicaSets' total.
	unread bool
	pods   int // the Rollout's pods
	// old are the pods created before restartAt and not being deleted, in
	// name order; evicting are those already being deleted.
	old, evicting []*corev1.Pod
	// oldDown and newDown are the pods, not being deleted, the controller
	// does not count available: created before restartAt, and at or after.
	oldDown, newDown []*corev1.Pod
	available        int32
	replicas, total  int32 // spec.replicas; the ReplicaSets' spec.replicas summed
	maxUnavailable   int32
	budget           int32 // pods evicted at a time: max(maxUnavailable, 1)
	keep             int32 // max(replicas, total) - budget: evictions stop at this many available
	can              int32 // available - keep: what the next pass may evict
}

// restartOf returns the restart the Rollout waits on, if any: spec.restartAt
// set and not yet recorded in status.restartedAt (ok is false without
// one). Without the pods to count, only unread is set.
func restartOf(c *Context) (restart, bool) {
	if c.restart == nil {
		s, ok := readRestart(c)
		c.restart = &restartMemo{s, ok}
	}
	return c.restart.s, c.restart.ok
}

// restartMemo is restartOf's answer, worked out once for RD172–RD174.
type restartMemo struct {
	s  restart
	ok bool
}

func readRestart(c *Context) (restart, bool) {
	ro := c.ro
	at := ro.Spec.RestartAt
	if at == nil || ro.Status.RestartedAt != nil && ro.Status.RestartedAt.Equal(at) {
		return restart{}, false
	}
	w := c.View.Workload
	if w == nil {
		return restart{}, false
	}
	s := restart{at: at.Time, scheduled: !c.View.Now.After(at.Time), pods: len(w.Pods), replicas: c.Analysis.Inputs.Replicas}
	for _, rs := range c.View.ReplicaSets {
		if rs.Spec.Replicas != nil {
			s.total += *rs.Spec.Replicas
		}
	}
	// As the restart resolves it (ur.max-unavailable): the canary's
	// fenceposts, which the model has; a blue-green percentage.
	s.maxUnavailable = c.Analysis.Inputs.MaxUnavailable
	if bg := ro.Spec.Strategy.BlueGreen; bg != nil {
		s.maxUnavailable = model.BlueGreenMaxUnavailable(bg.MaxUnavailable, s.replicas)
	}
	s.budget = max(s.maxUnavailable, 1)
	s.keep = max(s.replicas, s.total) - s.budget
	if s.pods == 0 && s.total > 0 && !c.View.Header.ListedWhole("pods", ro.Namespace) {
		s.unread = true // a scan, a refused list, a file without pods
		return s, true
	}
	for _, p := range w.Pods {
		old := p.CreationTimestamp.Time.Before(s.at)
		switch {
		case p.DeletionTimestamp != nil:
			if old {
				s.evicting = append(s.evicting, p)
			}
		case podAvailable(p, ro.Spec.MinReadySeconds, c.View.Now):
			s.available++
			if old {
				s.old = append(s.old, p)
			}
		case old:
			s.old = append(s.old, p)
			s.oldDown = append(s.oldDown, p)
		default:
			s.newDown = append(s.newDown, p)
		}
	}
	s.can = s.available - s.keep
	return s, true
}

// podAvailable is the kubelet-side availability the restart counts: Ready,
// for at least minReadySeconds.
func podAvailable(p *corev1.Pod, minReady int32, now time.Time) bool {
	for _, c := range p.Status.Conditions {
		if c.Type != corev1.PodReady || c.Status != corev1.ConditionTrue {
			continue
		}
		return minReady == 0 || !c.LastTransitionTime.IsZero() && c.LastTransitionTime.Add(time.Duration(minReady)*time.Second).Before(now)
	}
	return false
}

// blockingPDB is a PodDisruptionBudget of the workload's (snapshot.Workload
// keeps those that select its pods) that allows no disruption now: the
// eviction API refuses to evict a Ready pod it covers (429).
func blockingPDB(pdbs []*policyv1.PodDisruptionBudget) *policyv1.PodDisruptionBudget {
	for _, b := range pdbs {
		if b.Status.ObservedGeneration > 0 && b.Status.DisruptionsAllowed == 0 {
			return b
		}
	}
	return nil
}

func podNames(pods []*corev1.Pod, most int) string {
	var names []string
	for i, p := range pods {
		if i == most {
			names = append(names, fmt.Sprintf("%d more", len(pods)-most))
			break
		}
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}

// stall says why the restart cannot evict a pod now and will not by
// itself, what to do, and the evidence; why is "" while it is on its way.
func (s restart) stall(c *Context) (why, do string, evidence []rules.Evidence) {
	if s.scheduled || s.unread || len(s.old) == 0 {
		return "", "", nil
	}
	if s.can <= 0 {
		// Pods on their way (an evicted pod's replacement, a pod starting
		// or not ready for long) give the allowance back when they turn
		// available; only what stays unavailable holds the restart.
		var hungOld, hungNew []*corev1.Pod
		coming := s.can + int32(len(s.evicting))
		for _, p := range append(append([]*corev1.Pod{}, s.oldDown...), s.newDown...) {
			if !isHung(p, c.View.Now) {
				coming++
			} else if p.CreationTimestamp.Time.Before(s.at) {
				hungOld = append(hungOld, p)
			} else {
				hungNew = append(hungNew, p)
			}
		}
		if coming > 0 {
			return "", "", nil
		}
		counts := fmt.Sprintf("%d of %d pods are available and the controller evicts only while more than %d are (the larger of spec.replicas %d and the %d its ReplicaSets ask for, less %d at a time)", s.available, s.pods, s.keep, s.replicas, s.total, s.budget)
		switch {
		case len(hungOld) > 0:
			d := hungOld
			verb := "has not been available since %s and predates"
			if len(d) > 1 {
				verb = "have not been available, the first since %s, and predate"
			}
			verb = fmt.Sprintf(verb, c.ago(hungSince(d[0])))
			return fmt.Sprintf("%s %s spec.restartAt, so %s: it never evicts %s, the %s the restart was meant to replace, and waits for %s to turn available", podNames(d, 3), verb, counts, them(len(d)), plural("pod", len(d)), them(len(d))),
				restartDelete(d),
				[]rules.Evidence{ev("Pod "+d[0].Namespace+"/"+d[0].Name, "status.conditions[Ready]", readyStatus(d[0]))}
		case len(hungNew) > 0:
			p := hungNew[0]
			verb := "has not been available since %s"
			if len(hungNew) > 1 {
				verb = "have not been available, the first since %s"
			}
			verb = fmt.Sprintf(verb, c.ago(hungSince(p)))
			return fmt.Sprintf("%s %s, so %s: the restart waits for %s", podNames(hungNew, 3), verb, counts, them(len(hungNew))),
				fmt.Sprintf("Find out why %s does not turn ready (`kubectl describe pod -n %s %s`): the restart goes on once it is available, or once its revision is aborted or replaced.", p.Name, p.Namespace, p.Name),
				[]rules.Evidence{ev("Pod "+p.Namespace+"/"+p.Name, "status.conditions[Ready]", readyStatus(p))}
		case s.replicas > s.total:
			return "", "", nil // the ReplicaSets are yet to be scaled up to spec.replicas
		default:
			return fmt.Sprintf("%s; %d pods exist for the %d its ReplicaSets ask for", counts, s.pods, s.total),
				"Find out why the ReplicaSets cannot create their pods (`kubectl describe rs`: a ResourceQuota, an admission webhook); the restart goes on once they exist and are available.",
				[]rules.Evidence{ev("ReplicaSets of "+c.obj(), "spec.replicas (sum)", s.total)}
		}
	}
	if len(s.evicting) > 0 || len(s.oldDown)+len(s.newDown) > 0 {
		return "", "", nil
	}
	if b := blockingPDB(c.View.Workload.PDBs); b != nil {
		return fmt.Sprintf("PodDisruptionBudget %s allows no disruption (status.disruptionsAllowed 0, %d of %d pods healthy): the API refuses each eviction (429 Too Many Requests), and the controller logs \"Cannot evict pod as it would violate the pod's disruption budget.\" and tries again 30 s later, for as long as the budget allows none", b.Name, b.Status.CurrentHealthy, b.Status.ExpectedPods),
			fmt.Sprintf("Let PodDisruptionBudget %s allow one disruption (maxUnavailable 1) while the restart runs; the controller's next try, within 30 s, goes on.", b.Name),
			[]rules.Evidence{ev("PodDisruptionBudget "+b.Namespace+"/"+b.Name, "status.disruptionsAllowed", b.Status.DisruptionsAllowed)}
	}
	return "", "", nil
}

// restartDelete is RD173's remedy for hung pods that predate the restart.
func restartDelete(hung []*corev1.Pod) string {
	if len(hung) == 1 {
		return fmt.Sprintf("Delete it yourself (`kubectl delete pod -n %s %s`): its ReplicaSet replaces it, and the restart goes on with the others. Then find out why it hung (its events and logs).", hung[0].Namespace, hung[0].Name)
	}
	return fmt.Sprintf("Delete them yourself (`kubectl delete pod -n %s %s`): their ReplicaSets replace them, and the restart goes on with the others. Then find out why they hung (their events and logs).", hung[0].Namespace, names(hung))
}

// unreadySince is when the pod was last seen turning unready (its Ready
// condition's last transition), or its creation when it never was Ready.
// down is false for a Ready pod that only waits out minReadySeconds: it
// turns available by itself.
func unreadySince(p *corev1.Pod) (since time.Time, down bool) {
	for _, c := range p.Status.Conditions {
		if c.Type != corev1.PodReady {
			continue
		}
		if c.Status == corev1.ConditionTrue {
			return time.Time{}, false
		}
		if !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time, true
		}
	}
	return p.CreationTimestamp.Time, true
}

// startSlow is how long a pod with no sign that it ever ran Ready or
// failed may stay unready before it counts as hung: as far as anything
// shows it is still starting (an image pull, an init container, a JVM
// warming a cache), and deleting it would start it over.
const startSlow = 10 * time.Minute

// isHung: the pod has not been Ready for longer than a pod takes to start
// (restartSlow), or, while nothing shows it ever ran Ready or failed, for
// longer than a slow start (startSlow) and past the time its probes give
// its running containers to start (probesAllow). A Ready pod waiting out
// minReadySeconds is not.
func isHung(p *corev1.Pod, now time.Time) bool {
	since, down := unreadySince(p)
	if !down {
		return false
	}
	if !stillStarting(p, since) {
		return snapshot.Since(now, since) > restartSlow
	}
	return snapshot.Since(now, since) > startSlow && !now.Before(probesAllow(p))
}

// probesAllow is the latest time the probes of p's running containers let
// them turn Ready without a restart: a startupProbe holds readiness back
// until it succeeds and gets initialDelaySeconds + failureThreshold ×
// periodSeconds before the kubelet restarts the container; readiness is
// probed from the readinessProbe's initialDelaySeconds, successThreshold
// times periodSeconds apart. An application whose startupProbe allows a
// quarter of an hour is not hung at ten minutes, and deleting it would
// start it over. Sidecars (init containers that keep running) count: the
// pod is not Ready before they are. Zero when no running container has a
// probe.
func probesAllow(p *corev1.Pod) time.Time {
	containers := append([]corev1.Container{}, p.Spec.Containers...)
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			containers = append(containers, c)
		}
	}
	statuses := append(append([]corev1.ContainerStatus{}, p.Status.ContainerStatuses...), p.Status.InitContainerStatuses...)
	var latest time.Time
	for _, c := range containers {
		var started time.Time
		for _, st := range statuses {
			if st.Name == c.Name && st.State.Running != nil {
				started = st.State.Running.StartedAt.Time
			}
		}
		if started.IsZero() || c.StartupProbe == nil && c.ReadinessProbe == nil {
			continue
		}
		var ready time.Duration
		if sp := c.StartupProbe; sp != nil {
			ready = seconds(sp.InitialDelaySeconds, 0) + time.Duration(orDefault(sp.FailureThreshold, 3))*seconds(sp.PeriodSeconds, 10)
		}
		if rp := c.ReadinessProbe; rp != nil {
			ready = max(ready, seconds(rp.InitialDelaySeconds, 0)) + time.Duration(orDefault(rp.SuccessThreshold, 1))*seconds(rp.PeriodSeconds, 10)
		}
		if t := started.Add(ready); t.After(latest) {
			latest = t
		}
	}
	return latest
}

// seconds is a probe's field in seconds, def when unset (0), as the API
// server defaults it.
func seconds(v, def int32) time.Duration {
	return time.Duration(orDefault(v, def)) * time.Second
}

func orDefault(v, def int32) int32 {
	if v <= 0 {
		return def
	}
	return v
}

// stillStarting: no container of the pod has restarted, terminated or
// waits in a crash back-off, and none started before the pod turned
// unready (a pod that turned unready after its container started was
// Ready before: it hung).
func stillStarting(p *corev1.Pod, unreadySince time.Time) bool {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.RestartCount > 0 || cs.State.Terminated != nil || cs.State.Waiting != nil && cs.State.Waiting.Reason == "CrashLoopBackOff" {
			return false
		}
		if r := cs.State.Running; r != nil && unreadySince.After(r.StartedAt.Time.Add(time.Second)) {
			return false
		}
	}
	return true
}

// hungSince is when a hung pod (down, by unreadySince) went unready.
func hungSince(p *corev1.Pod) time.Time {
	since, _ := unreadySince(p)
	return since
}

func readyStatus(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return string(c.Status)
		}
	}
	return "absent"
}

func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// restartUntil says what the Rollout shows until the restart is done: the
// phase the controller gives a restarting Rollout, when that is what it
// reads (a paused or degraded Rollout reads that instead).
func restartUntil(c *Context) string {
	if c.ro.Status.Message == "rollout is restarting" {
		return "the Rollout reads Progressing (rollout is restarting) until status.restartedAt is set, when no pod is older"
	}
	return "status.restartedAt is set when no pod is older"
}

// evidence is what both restart rules show.
func (s restart) evidence(c *Context) []rules.Evidence {
	out := []rules.Evidence{ev(c.obj(), "spec.restartAt", s.at.UTC().Format(time.RFC3339))}
	if ra := c.ro.Status.RestartedAt; ra != nil {
		out = append(out, ev(c.obj(), "status.restartedAt", ra.UTC().Format(time.RFC3339)))
	} else {
		out = append(out, ev(c.obj(), "status.restartedAt", "unset"))
	}
	return out
}

// checkRestart (RD172): a restart is scheduled or under way. The on-call
// engineer who ran `kubectl argo rollouts restart` needs to know that it
// evicts pods a few at a time, how many are left, and what it waits for;
// the Rollout reads Progressing all along. RD173 speaks instead when it
// cannot go on.
func checkRestart(c *Context, r *rules.Rule) []rules.Finding {
	s, ok := restartOf(c)
	if !ok {
		return nil
	}
	var msg string
	switch {
	case s.scheduled && c.View.NowInferred:
		msg = fmt.Sprintf("a restart is requested for %s (spec.restartAt), later than any other time in the input, which does not say when it was taken: if that time has come, the controller is evicting every pod created before it, %d at a time", s.at.UTC().Format(time.RFC3339), s.budget)
	case s.scheduled:
		msg = fmt.Sprintf("a restart is scheduled for %s (spec.restartAt, in %s): then the controller evicts every pod created before it, %d at a time", s.at.UTC().Format(time.RFC3339), s.at.Sub(c.View.Now).Round(time.Second), s.budget)
	case s.unread:
		msg = fmt.Sprintf("a restart (spec.restartAt) requested %s is not done (status.restartedAt does not equal it); the pods were not read here, so what it waits for is not known: `kubectl rolloutdoctor diagnose %s -n %s` reads them", c.ago(s.at), c.ro.Name, c.ro.Namespace)
	case len(s.old) == 0 && len(s.evicting) == 0:
		return nil // every pod is newer: the next pass records the restart as done
	default:
		if why, _, _ := s.stall(c); why != "" {
			return nil // RD173
		}
		msg = fmt.Sprintf("a restart (spec.restartAt) is under way since %s: %d of %d pods predate it; the controller evicts %d at a time while more than %d pods are available, and looks again every 30 s", c.ago(s.at), len(s.old)+len(s.evicting), s.pods, s.budget, s.keep)
		switch {
		case len(s.evicting) > 0:
			msg += fmt.Sprintf("; being evicted: %s", podNames(s.evicting, 3))
		case s.can <= 0 && len(s.newDown)+len(s.oldDown) == 0:
			msg += fmt.Sprintf("; it waits until more than %d pods are available", s.keep)
		case s.can <= 0:
			msg += fmt.Sprintf("; it waits for %s to turn available", podNames(append(append([]*corev1.Pod{}, s.newDown...), s.oldDown...), 3))
		default:
			msg += fmt.Sprintf("; its next pass may evict %d", min(int(s.can), len(s.old)))
		}
		msg += "; " + restartUntil(c)
	}
	f := r.NewFinding(msg)
	if s.unread && !s.scheduled && snapshot.Since(c.View.Now, s.at) > restartOverdue {
		// A fleet view cannot tell a slow restart from a stalled one; one
		// outstanding this long is worth a look.
		f.Severity = rules.Warning
	}
	f.Evidence = s.evidence(c)
	f.Cites = c.cites("ur.restart-due", "rt.older-only", "ur.max-unavailable", "rt.concurrent", "rt.min-available", "rt.can-restart", "rt.recheck-30s", "rt.done", "ru.phase-restarting")
	switch {
	case s.scheduled:
		f.Cites = c.cites("ur.restart-due", "rt.restart-scheduled", "rt.older-only", "rt.concurrent")
	case s.unread:
		f.Cites = c.cites("ur.restart-due", "rt.done", "ru.phase-restarting")
	}
	return []rules.Finding{f}
}

// checkRestartStalled (RD173): the restart cannot evict a pod and nothing
// it does will change that. The usual cause is the pod someone wanted
// restarted: unready, it uses up the allowance of unavailable pods, and the
// controller evicts only within that allowance — so a restart never touches
// the one pod it was run for, and the Rollout reads Progressing until
// someone acts. A PodDisruptionBudget that allows no disruption refuses
// every eviction the same way.
func checkRestartStalled(c *Context, r *rules.Rule) []rules.Finding {
	s, ok := restartOf(c)
	if !ok {
		return nil
	}
	why, do, evidence := s.stall(c)
	if why == "" {
		return nil
	}
	f := r.NewFinding(fmt.Sprintf("the restart requested at %s cannot go on: %s; %d of %d pods still predate it; %s", c.ago(s.at), why, len(s.old), s.pods, restartUntil(c)))
	f.Remediation = do
	f.Evidence = append(s.evidence(c), evidence...)
	f.Evidence = append(f.Evidence, ev(c.obj(), "maxUnavailable (resolved)", s.maxUnavailable))
	f.Cites = c.cites("rt.available-pods", "rt.total-replicas", "ur.max-unavailable", "rt.concurrent", "rt.min-available", "rt.can-restart", "rt.no-allowance-skips", "rt.recheck-30s", "ru.phase-restarting")
	if strings.HasPrefix(why, "PodDisruptionBudget") { // the allowance is not what holds it
		f.Cites = c.cites("rt.pdb-refused", "rt.recheck-30s", "ru.phase-restarting")
	}
	return []rules.Finding{f}
}

// HungPods are the pods of the ReplicaSet with the given pod-template-hash
// that are not being deleted and have not been Ready for longer than a pod
// takes to start (restartSlow), oldest first by that time: nothing the
// controller does makes them Ready, and while they count as unavailable
// they hold whatever waits on availability (a restart, a canary's scaling
// within maxSurge and maxUnavailable). A Ready pod that waits out
// minReadySeconds is not hung.
func HungPods(v *snapshot.View, hash string) []*corev1.Pod {
	if v.Workload == nil || hash == "" {
		return nil
	}
	var out []*corev1.Pod
	for _, p := range v.Workload.Pods {
		if p.DeletionTimestamp != nil || p.Labels[v1alpha1.DefaultRolloutUniqueLabelKey] != hash {
			continue
		}
		if isHung(p, v.Now) {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return hungSince(out[i]).Before(hungSince(out[j])) })
	return out
}

// RestartFinding is diagnose's word on a restart the Rollout waits on —
// RD173 when it cannot go on, else RD172 — or nil without one: escape's
// plan shows it beside the ways out, which neither end nor wait out a
// restart (an update does not mark it done: sy.update-keeps-restart).
func RestartFinding(v *snapshot.View, cv model.ControllerVersion) *rules.Finding {
	if v == nil || v.Rollout == nil || v.Rollout.Spec.RestartAt == nil {
		return nil
	}
	c := &Context{View: v, Version: cv, Analysis: model.Analyze(v, cv.Assumed), ro: v.Rollout}
	for _, x := range []struct {
		id    string
		check func(*Context, *rules.Rule) []rules.Finding
	}{{"RD173", checkRestartStalled}, {"RD172", checkRestart}} {
		r, ok := rules.ByID(x.id)
		if !ok {
			continue
		}
		if fs := x.check(c, r); len(fs) > 0 {
			return &fs[0]
		}
	}
	return nil
}
