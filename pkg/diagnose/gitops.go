package diagnose

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// GitOps managers: the field managers Argo CD and Flux write with.
var gitopsManagers = map[string]bool{
	"argocd-controller": true, "argocd-application-controller": true, "argocd-server": true,
	"kustomize-controller": true, "helm-controller": true,
}

// controllerManagers are the Argo Rollouts controller's and its plugin's
// own writes of the spec (spec.paused on promote): part of a rollout, not a
// fight.
var controllerManagers = map[string]bool{"rollouts-controller": true, "argo-rollouts": true, "kubectl-argo-rollouts": true}

// fightWindow is how close together two writers' last writes must be to
// count as a fight going on now.
const fightWindow = 10 * time.Minute

// contested returns the spec fields that both writers own.
func contested(a, b snapshot.FieldWriter) []string {
	in := map[string]bool{}
	for _, f := range a.Fields {
		in[f] = true
	}
	var out []string
	for _, f := range b.Fields {
		if in[f] {
			out = append(out, f)
		}
	}
	return out
}

// IgnoreDifferencesFix is the Application change that makes Argo CD leave
// the given spec fields of the Rollout alone, in diffs and in syncs.
func IgnoreDifferencesFix(name, ns string, fields []string) string {
	ps := make([]string, len(fields))
	for i, f := range fields {
		ps[i] = "/spec/" + f
	}
	return fmt.Sprintf("spec.ignoreDifferences: [{group: argoproj.io, kind: Rollout, name: %s, namespace: %s, jsonPointers: [%s]}] and spec.syncPolicy.syncOptions: [RespectIgnoreDifferences=true]",
		name, ns, strings.Join(ps, ", "))
}

// FluxFix is how to make Flux stop overwriting the Rollout: its per-object
// annotation in Git, or a suspension while the incident lasts.
func FluxFix(m *snapshot.GitOpsMark) string {
	cmd := "flux suspend " + strings.ToLower(m.Kind) + " " + m.Name
	if m.Namespace != "" {
		cmd += " -n " + m.Namespace
	}
	return "`" + cmd + "` while the incident lasts (`flux resume` after), or annotate the Rollout in Git with kustomize.toolkit.fluxcd.io/ssa: IfNotPresent so Flux no longer overwrites it"
}

// isController is the Argo Rollouts controller's own manager: its binary's
// name, rollouts-controller in the release images, with a suffix in some
// builds; or the kubectl plugin's.
func isController(m string) bool {
	return controllerManagers[m] || strings.HasPrefix(m, "rollouts-controller")
}

// templateTurn is one revision of the Rollout and the pod template (the
// ReplicaSet's pod-template-hash) that served it.
type templateTurn struct {
	Revision int64
	Hash     string
}

// templateTimeline is the Rollout's revisions, oldest first, each with the
// template that served it, from its ReplicaSets' rollout.argoproj.io/revision
// and revision-history annotations: when the template goes back to one an
// existing ReplicaSet has, the controller gives that ReplicaSet the next
// revision and keeps the ones it served before in its history. It is what a
// fight leaves in a single read even after a forced apply or an Update took
// the other writer's fields (and so its managedFields entry) away. Revisions
// of ReplicaSets already deleted (revisionHistoryLimit) are missing.
func templateTimeline(rss []*appsv1.ReplicaSet) []templateTurn {
	seen := map[int64]bool{}
	var out []templateTurn
	add := func(rev string, hash string) {
		n, err := strconv.ParseInt(strings.TrimSpace(rev), 10, 64)
		if err != nil || n <= 0 || seen[n] {
			return
		}
		seen[n] = true
		out = append(out, templateTurn{n, hash})
	}
	for _, rs := range rss {
		hash := rs.Labels["rollouts-pod-template-hash"]
		if hash == "" {
			hash = rs.Name
		}
		add(rs.Annotations["rollout.argoproj.io/revision"], hash)
		for _, h := range strings.Split(rs.Annotations["rollout.argoproj.io/revision-history"], ",") {
			add(h, hash)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Revision < out[j].Revision })
	return out
}

// returns counts the revisions that went back to a template an earlier
// revision had, and writes the timeline as "a1b2c3 (1) → d4e5f6 (2) → …".
func returns(tl []templateTurn) (n int, text string) {
	had := map[string]bool{}
	parts := make([]string, len(tl))
	for i, t := range tl {
		if had[t.Hash] {
			n++
		}
		had[t.Hash] = true
		parts[i] = fmt.Sprintf("%s (%d)", t.Hash, t.Revision)
	}
	return n, strings.Join(parts, " → ")
}

// minReturns is how many returns to an earlier template make a fight: one
// is an undo or a rollback, two can be a rollback and the same version
// deployed again (A→B→A→B, an incident handled by hand); three is the
// template going back and forth (A→B→A→B→A), as a sync that heals drift
// does after every change.
const minReturns = 3

func checkSpecFight(c *Context, r *rules.Rule) []rules.Finding {
	var ws []snapshot.FieldWriter
	for _, w := range c.View.SpecWriters {
		if !isController(w.Manager) {
			ws = append(ws, w)
		}
	}
	if ch := c.churn[c.obj()]; ch != nil {
		return []rules.Finding{specChurn(c, r, ch)}
	}
	if f, ok := managersFight(c, r, ws); ok {
		return []rules.Finding{f}
	}
	if f, ok := templateFlips(c, r, ws); ok {
		return []rules.Finding{f}
	}
	return nil
}

// gitopsFix is what stops a GitOps tool from writing the given spec fields.
func gitopsFix(c *Context, fields []string) string {
	if g := c.View.GitOps; g != nil && g.Mark.Tool == "Flux" {
		return FluxFix(g.Mark)
	}
	return IgnoreDifferencesFix(c.ro.Name, c.ro.Namespace, fields)
}

// gitopsWriter says whether manager m is one Argo CD or Flux writes with.
func gitopsWriter(m string) bool { return gitopsManagers[m] }

// managersFight: a writer other than the controller changed spec fields
// the GitOps tool's manager owns, after the tool's last write and recently:
// the cluster now differs from Git there, and a sync that heals drift puts
// Git's values back. Two ordinary writers (kubectl apply, then set image)
// each owning part of spec.template are no fight; nor is a GitOps write
// after the other's (the tool left the other's fields alone: not in Git, or
// ignored). A fight already overwritten shows in the ReplicaSets instead
// (templateFlips): an update or a forced apply takes the fields it writes
// from the other manager.
func managersFight(c *Context, r *rules.Rule, ws []snapshot.FieldWriter) (rules.Finding, bool) {
	g := c.View.GitOps
	if g != nil && !g.AutoSync && (g.SyncStatus != "" || len(g.Ignore) > 0) {
		return rules.Finding{}, false // read, and it does not sync by itself (RD161)
	}
	for _, o := range ws { // newest first
		if gitopsWriter(o.Manager) || snapshot.Since(c.View.Now, o.Time) > fightWindow {
			continue
		}
		for _, s := range ws {
			fields := contested(o, s)
			if !gitopsWriter(s.Manager) || !o.Time.After(s.Time) || len(fields) == 0 {
				continue
			}
			msg := fmt.Sprintf("%s changed spec fields the GitOps sync writes (%s) at %s, after the sync's last write (%s at %s): the cluster differs from Git there, and a sync that heals drift puts Git's values back — each overwrites the other until one stops; commit the change to Git instead, or make the sync leave those fields alone: %s",
				o.Manager, strings.Join(fields, ", "), o.Time.UTC().Format(time.RFC3339), s.Manager, s.Time.UTC().Format(time.RFC3339), gitopsFix(c, fields))
			f := r.NewFinding(msg)
			f.Evidence = []rules.Evidence{
				ev(c.obj(), "metadata.managedFields["+o.Manager+"]", o.String()),
				ev(c.obj(), "metadata.managedFields["+s.Manager+"]", s.String()),
			}
			return f, true
		}
	}
	return rules.Finding{}, false
}

// templateFlips: the ReplicaSets' revision history shows the pod template
// going back to an earlier one at least minReturns times, the latest write of the
// spec recent. A forced server-side apply (Argo CD with ServerSideApply,
// Flux) or a client-side apply's Update of the same fields (Argo CD's
// default sync) takes the contested fields from the other writer, so
// managedFields show one owner after each round; the ReplicaSets keep the
// history.
func templateFlips(c *Context, r *rules.Rule, ws []snapshot.FieldWriter) (rules.Finding, bool) {
	tl := templateTimeline(c.View.ReplicaSets)
	n, text := returns(tl)
	if n < minReturns {
		return rules.Finding{}, false
	}
	// The newest return must be recent: the newest spec write (any manager
	// but the controller's) within the window. Without managedFields (a
	// file saved without them) the time is not known and the history is
	// reported as it is.
	var last *snapshot.FieldWriter
	for i := range ws {
		if has := slices.Contains(ws[i].Fields, "template"); has && (last == nil || ws[i].Time.After(last.Time)) {
			last = &ws[i]
		}
	}
	if len(c.View.SpecWriters) > 0 {
		newest := time.Time{}
		for _, w := range ws {
			if w.Time.After(newest) {
				newest = w.Time
			}
		}
		if newest.IsZero() || snapshot.Since(c.View.Now, newest) > fightWindow {
			return rules.Finding{}, false
		}
	}
	msg := fmt.Sprintf("the pod template went back to an earlier one %d times (revisions by template, from the ReplicaSets' revision-history: %s): two writers keep setting different templates, and every change restarts or aborts the update",
		n, text)
	g := c.View.GitOps
	gitops := last != nil && gitopsWriter(last.Manager) || g != nil && g.AutoSync
	var others []string
	for _, w := range ws {
		if last == nil || w.Manager != last.Manager {
			others = append(others, w.Manager)
		}
	}
	if last != nil {
		msg += fmt.Sprintf("; the last template write was %s's (%s) at %s", last.Manager, last.Operation, last.Time.UTC().Format(time.RFC3339))
	}
	switch {
	case len(others) > 0:
		msg += "; other writers of the spec: " + strings.Join(others, ", ")
	case last != nil:
		msg += "; the other writer no longer shows in managedFields: a forced server-side apply or an update of the same fields takes them from it"
	}
	if gitops {
		owner := "the GitOps sync"
		if g != nil {
			owner = g.Mark.Owner()
		}
		msg += fmt.Sprintf("; %s puts Git's template back after every change made in the cluster: commit the change to Git instead, or make the sync leave the template alone: %s", owner, gitopsFix(c, []string{"template"}))
	} else {
		msg += "; find the writers (pipelines, operators, people with kubectl apply or undo) and leave the template to one"
	}
	f := r.NewFinding(msg)
	for _, rs := range c.View.ReplicaSets {
		if h := rs.Annotations["rollout.argoproj.io/revision-history"]; h != "" {
			f.Evidence = append(f.Evidence, ev("ReplicaSet "+rs.Namespace+"/"+rs.Name, "metadata.annotations[rollout.argoproj.io/revision-history]",
				"revision "+rs.Annotations["rollout.argoproj.io/revision"]+", before "+h))
		}
	}
	if last != nil {
		f.Evidence = append(f.Evidence, ev(c.obj(), "metadata.managedFields["+last.Manager+"]", last.String()))
	}
	f.Cites = c.cites("sy.existing-rs-new-revision", "ua.revision-history-append")
	return f, true
}

func checkGitOpsOwner(c *Context, r *rules.Rule) []rules.Finding {
	g := c.View.GitOps
	if g == nil || g.Mark.Weak {
		return nil
	}
	var msg string
	ignored := g.Ignores(c.ro.Name, c.ro.Namespace, "/spec/template")
	switch {
	case g.Mark.Tool == "Flux":
		msg = fmt.Sprintf("Flux applies this Rollout (%s", g.Mark.Owner())
		if g.Interval != "" {
			msg += ", every " + g.Interval
		}
		if !g.AutoSync {
			msg += ", suspended): nothing is reverted while it stays suspended"
		} else {
			msg += "): a spec change made in the cluster (undo, set image, edit) is reverted at its next reconciliation; commit it to Git, or " + FluxFix(g.Mark)
		}
	case !g.AutoSync:
		msg = fmt.Sprintf("Argo CD %s manages this Rollout without automated sync: a change made in the cluster shows as OutOfSync and lasts until someone syncs", g.Mark.Owner())
	case g.SelfHeal && !ignored:
		msg = fmt.Sprintf("Argo CD %s syncs this Rollout automatically with selfHeal: a spec change made in the cluster (undo, set image, edit) is reverted within seconds; commit it to Git instead, or first set %s",
			g.Mark.Owner(), IgnoreDifferencesFix(c.ro.Name, c.ro.Namespace, []string{"template"}))
	case g.SelfHeal:
		msg = fmt.Sprintf("Argo CD %s syncs this Rollout with selfHeal, and ignoreDifferences already leaves spec.template alone", g.Mark.Owner())
		if !g.RespectIgnore {
			msg += ", but without RespectIgnoreDifferences=true the next sync of anything else still writes Git's template back"
		}
	default:
		msg = fmt.Sprintf("Argo CD %s syncs this Rollout automatically without selfHeal: a change made in the cluster stays until the next change in Git is synced, which puts Git's values back", g.Mark.Owner())
	}
	if g.SyncStatus != "" {
		msg += fmt.Sprintf(" (sync status %s)", g.SyncStatus)
	}
	msg += "; status actions (abort, retry, promote) are not in Git and are left alone"
	f := r.NewFinding(msg)
	f.Evidence = []rules.Evidence{ev(c.obj(), "gitops mark", g.Mark.Evidence)}
	if g.SelfHeal && !ignored && g.Mark.Tool != "Flux" {
		f.Severity = rules.Warning
	}
	return []rules.Finding{f}
}

// specChurn: the watch saw the Rollout's spec writers alternate between
// reads (History): the fight live, with the count and the window, before
// the ReplicaSets' history has three returns.
func specChurn(c *Context, r *rules.Rule, ch *Churn) rules.Finding {
	msg := fmt.Sprintf("the Rollout's spec is being fought over: %s, %d spec generations in that time", ch.Says(), ch.Generations)
	var sync string
	for _, m := range ch.Managers {
		if gitopsWriter(m) {
			sync = m
		}
	}
	if g := c.View.GitOps; sync != "" || g != nil && g.AutoSync {
		owner := sync
		if g != nil {
			owner = g.Mark.Owner()
			if sync != "" {
				owner += " (" + sync + ")"
			}
		}
		msg += fmt.Sprintf("; %s puts Git's spec back after every change made in the cluster, and every change restarts or aborts the update: commit the change to Git instead, or make the sync leave the template alone: %s", owner, gitopsFix(c, []string{"template"}))
	} else {
		msg += "; find the writers (pipelines, operators, people with kubectl apply or undo) and leave the spec to one"
	}
	f := r.NewFinding(msg)
	f.Evidence = []rules.Evidence{ev(c.obj(), "last spec writer at successive reads", ch.Says())}
	f.Cites = c.cites("sy.existing-rs-new-revision")
	return f
}
