package diagnose

import (
	"fmt"
	"strings"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// checkBasicStall (RD167): a canary without trafficRouting that the
// controller cannot scale while a ReplicaSet has pods that are not
// available. Critical once aborted: the abort cannot finish, and the pods
// the abort meant to drain keep taking requests. Which ReplicaSet is short
// decides the way out: a short canary is left behind by an undo to the
// stable; a short stable holds an abort and an undo too, but a promotion
// scales it down, its unavailable pods first.
func checkBasicStall(c *Context, r *rules.Rule) []rules.Finding {
	in := c.Analysis.Inputs
	st, ok := model.BasicStall(in, c.Analysis.Next)
	if !ok {
		return nil
	}
	promoted := in.New.Name == in.Stable.Name
	var short []string // "the stable app-x", with counts below
	var shortRS []*model.RS
	for _, x := range in.All {
		if x.Spec == 0 || x.Available >= x.Spec {
			continue
		}
		role := "the older revision"
		switch x.Name {
		case in.Stable.Name:
			role = "the stable"
		case in.New.Name:
			role = "the canary"
		}
		short = append(short, role+" "+x.Name)
		shortRS = append(shortRS, x)
	}
	if len(short) == 0 {
		return nil // pods missing beyond what the ReplicaSets report: nothing to name
	}
	// A pod of a short ReplicaSet becoming available is what frees room.
	var wait string
	if x := shortRS[0]; len(short) == 1 {
		wait = fmt.Sprintf("a pod of %s turns Ready (%d of %d available)", short[0], x.Available, x.Spec)
	} else {
		for i, x := range shortRS {
			short[i] += fmt.Sprintf(" (%d of %d available)", x.Available, x.Spec)
		}
		wait = "a pod of " + strings.Join(short, " or ") + " turns Ready"
	}
	var older []string
	var olderReady, allReady int32
	for _, x := range in.All {
		allReady += x.Ready
		if x.Name == in.New.Name || x.Name == in.Stable.Name || x.Spec == 0 {
			continue
		}
		olderReady += x.Ready
		older = append(older, fmt.Sprintf("%s (rev %s, %d ready)", x.Name, x.Revision, x.Ready))
	}
	room := fmt.Sprintf("%d pods exist (replicas %d + maxSurge %d) and %d are available (replicas %d − maxUnavailable %d)",
		st.Pods, in.Replicas, in.MaxSurge, st.Available, in.Replicas, in.MaxUnavailable)
	msg := fmt.Sprintf("nothing scales until %s: %s", wait, room)
	switch {
	case in.Abort:
		msg = fmt.Sprintf("the abort cannot finish until %s: %s, so the stable cannot grow back to %d nor the canary go to 0", wait, room, in.Replicas)
	case promoted && in.Stable.Spec < in.Replicas:
		msg = fmt.Sprintf("the stable %s cannot grow to %d nor the other ReplicaSets go to 0 until %s: %s", in.Stable.Name, in.Replicas, wait, room)
	case promoted:
		msg = fmt.Sprintf("the other ReplicaSets cannot go to 0 until %s: %s", wait, room)
	}
	if len(older) > 0 {
		what := "the older revision"
		if promoted {
			what = "the other ReplicaSet"
		}
		msg += fmt.Sprintf("; %s %s keeps taking requests", what, strings.Join(older, ", "))
		if allReady > 0 {
			msg += fmt.Sprintf(" (%d%% of the ready pods)", int64(olderReady)*100/int64(allReady))
		}
	}
	f := r.NewFinding(msg)
	if in.Abort {
		f.Severity = rules.Critical
	}
	for _, x := range shortRS {
		f.Evidence = append(f.Evidence, ev("ReplicaSet "+c.ro.Namespace+"/"+x.Name, "status.availableReplicas", fmt.Sprintf("%d (spec.replicas %d)", x.Available, x.Spec)))
	}
	f.Cites = c.cites("bc.older-first", "bc.others-min-available", "bc.others-down")
	for _, x := range shortRS {
		if x.Name == in.Stable.Name {
			f.Remediation = stallFix(c, x, promoted)
			if !promoted { // the remedy's promotion scales the stable first
				f.Cites = append(f.Cites, c.cites("bc.stable-first")...)
			}
		}
	}
	return []rules.Finding{f}
}

// stallFix is RD167's remedy when the stable is short of available pods:
// the rule's own remedy, an undo to the stable, waits on them. A hung
// pod's replacement is a new pod, which turns Ready and gives the
// availability the controller waits for, and a promotion scales the
// stable down, its unavailable pods first.
func stallFix(c *Context, stable *model.RS, promoted bool) string {
	del := missingPodsFix(c, stable, "the controller scales again")
	if promoted {
		return del + " Abort and undo do not help: each waits on the same pods."
	}
	return del + " Or promote (kubectl rolloutdoctor escape): a promotion scales the stable down, its unavailable pods first. Abort and an undo to the stable wait on them."
}

// missingPodsFix says what to do about the stable's pods that are not
// available, which the controller waits on (then is what it does once
// they are): wait for those that may still be starting, delete those that
// hung. Only a pod unready past the time a pod takes to start is named
// for deletion: deleting one that is still starting starts it over.
func missingPodsFix(c *Context, stable *model.RS, then string) string {
	var hung, starting []*corev1.Pod
	for _, p := range c.View.Workload.Pods {
		if p.Labels[v1alpha1.DefaultRolloutUniqueLabelKey] != stable.Hash || p.DeletionTimestamp != nil || podAvailable(p, c.ro.Spec.MinReadySeconds, c.View.Now) {
			continue
		}
		if isHung(p, c.View.Now) {
			hung = append(hung, p)
		} else {
			starting = append(starting, p)
		}
	}
	var del string
	switch {
	case len(hung) > 0:
		del = fmt.Sprintf("Delete the hung %s, not Ready for over two minutes (`kubectl delete pod -n %s %s`): the ReplicaSet replaces %s, and once the new %s Ready %s; then find out why %s hung (kubectl rolloutdoctor pods).",
			plural("pod", len(hung)), hung[0].Namespace, names(hung), them(len(hung)), map[bool]string{true: "pod is", false: "pods are"}[len(hung) == 1], then, map[bool]string{true: "it", false: "they"}[len(hung) == 1])
	case len(starting) > 0:
		it, does, pods := "it", "does", "pod is"
		if len(starting) > 1 {
			it, does, pods = "they", "do", "pods are"
		}
		obj := them(len(starting))
		del = fmt.Sprintf("Wait for %s to turn Ready: unready for %s, %s may still be starting. If %s never %s (a hung process, a probe that never passes again), delete %s (`kubectl delete pod -n %s %s`): the ReplicaSet replaces %s, and once the new %s Ready %s.",
			names(starting), snapshot.Since(c.View.Now, hungSince(starting[0])).Round(time.Second), it, it, does, obj, starting[0].Namespace, names(starting), obj, pods, then)
	default:
		del = fmt.Sprintf("Find out why the stable's pods are not available (kubectl rolloutdoctor pods); a pod that has hung can be deleted, and once its replacement is Ready %s.", then)
	}
	return del
}

func names(pods []*corev1.Pod) string {
	out := make([]string, 0, len(pods))
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return strings.Join(out, " ")
}
