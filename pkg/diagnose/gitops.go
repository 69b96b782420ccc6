package diagnose

import (
	"fmt"
	"strings"
	"time"

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

func checkSpecFight(c *Context, r *rules.Rule) []rules.Finding {
	var ws []snapshot.FieldWriter
	for _, w := range c.View.SpecWriters {
		// The controller's manager is its binary's name: rollouts-controller
		// in the release images, with a suffix in some builds.
		if !controllerManagers[w.Manager] && !strings.HasPrefix(w.Manager, "rollouts-controller") {
			ws = append(ws, w)
		}
	}
	for i := 0; i < len(ws); i++ {
		for j := i + 1; j < len(ws); j++ {
			a, b := ws[i], ws[j] // a is the newer
			fields := contested(a, b)
			if len(fields) == 0 || a.Time.Sub(b.Time) > fightWindow || snapshot.Since(c.View.Now, a.Time) > fightWindow {
				continue
			}
			msg := fmt.Sprintf("two writers own the same spec fields (%s) of this Rollout and both wrote in the last %s: %s at %s, %s at %s; each overwrites the other",
				strings.Join(fields, ", "), fightWindow, a.Manager, a.Time.UTC().Format(time.RFC3339), b.Manager, b.Time.UTC().Format(time.RFC3339))
			g := c.View.GitOps
			switch {
			case gitopsManagers[a.Manager] || gitopsManagers[b.Manager]:
				other := a.Manager
				if gitopsManagers[a.Manager] {
					other = b.Manager
				}
				msg += fmt.Sprintf("; the GitOps sync puts Git's values back after every change %s makes: commit the change to Git instead, or make the sync leave those fields alone", other)
				if g != nil && g.Mark.Tool == "Flux" {
					msg += ": " + FluxFix(g.Mark)
				} else {
					msg += ": " + IgnoreDifferencesFix(c.ro.Name, c.ro.Namespace, fields)
				}
			default:
				msg += "; find the two (pipelines, operators, people with kubectl apply) and leave the fields to one"
			}
			f := r.NewFinding(msg)
			f.Evidence = []rules.Evidence{
				ev(c.obj(), "metadata.managedFields["+a.Manager+"]", a.String()),
				ev(c.obj(), "metadata.managedFields["+b.Manager+"]", b.String()),
			}
			return []rules.Finding{f}
		}
	}
	return nil
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
