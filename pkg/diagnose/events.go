package diagnose

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// eventClass is one kind of error the controller reports as a Warning Event
// on the Rollout, recognised by the event's reason and message (the reasons
// and message shapes are the controller's: TrafficRoutingError and the
// router-specific reasons in rollout/trafficrouting*, ReplicaSetCreateError
// in rollout/sync.go, ReconciliationError in rollout/stepplugin.go; the
// messages carry the API server's or the router's error).
type eventClass struct {
	key   string
	match func(e *corev1.Event) bool
	// what says what the events mean and fix what to do; both may use the
	// details the class's match found (see classify).
	what, fix string
	// critical: the controller cannot make progress while this lasts.
	critical bool
}

var (
	// forbiddenRE reads the API server's RBAC denial: who, which verb, which
	// resource.
	forbiddenRE = regexp.MustCompile(`User "([^"]+)" cannot (\w+) resource "([^"]+)"(?: in API group "([^"]*)")?`)
	webhookRE   = regexp.MustCompile(`admission webhook "([^"]+)" denied the request`)
	// policyRE reads an in-tree ValidatingAdmissionPolicy's denial.
	policyRE = regexp.MustCompile(`ValidatingAdmissionPolicy '([^']+)' with binding '([^']+)' denied request`)
	quotaRE  = regexp.MustCompile(`exceeded quota: ([^,]+)`)
)

func msgHas(e *corev1.Event, subs ...string) bool {
	m := strings.ToLower(e.Message)
	for _, s := range subs {
		if !strings.Contains(m, strings.ToLower(s)) {
			return false
		}
	}
	return true
}

func reasonIs(e *corev1.Event, rs ...string) bool {
	for _, r := range rs {
		if e.Reason == r {
			return true
		}
	}
	return false
}

// eventClasses are tried in order; the first that matches takes the event.
// The specific causes (a denial, a webhook, a conflict, a plugin) come
// before the reason-only classes, since a TrafficRoutingError can carry any
// of them.
var eventClasses = []eventClass{
	// A quota and an admission policy answer "is forbidden" too: they come
	// before RBAC, which needs the API server's "User … cannot …".
	{key: "quota", critical: true,
		match: func(e *corev1.Event) bool { return msgHas(e, "exceeded quota") },
		what:  "a ResourceQuota in the namespace refuses what the controller creates",
		fix:   "raise the quota the message names (count/replicasets.apps, pods, or the cpu/memory requests: a canary needs room for its pods beside the stable's) or free room; the controller retries by itself"},
	{key: "webhook", critical: true,
		match: func(e *corev1.Event) bool {
			return webhookRE.MatchString(e.Message) || msgHas(e, "admission webhook") || policyRE.MatchString(e.Message)
		},
		what: "an admission webhook or admission policy rejects the controller's write",
		fix:  "read the webhook's or policy's reason in the message: Istio's rejects a VirtualService whose destination weights are invalid (a total of 0, or a weight outside 0–100: see RD157), a policy engine or a ValidatingAdmissionPolicy may reject the weights, labels or annotations the controller writes; fix the object or the policy, not the Rollout"},
	{key: "rbac", critical: true,
		match: func(e *corev1.Event) bool {
			return forbiddenRE.MatchString(e.Message) || msgHas(e, "cannot", "resource", "forbidden")
		},
		what: "the API server denies the controller's own ServiceAccount a request it needs",
		fix:  "grant it in the controller's ClusterRole (or Role with --namespaced) and the controller retries by itself"},
	{key: "conflict",
		match: func(e *corev1.Event) bool {
			return msgHas(e, "the object has been modified") || msgHas(e, "operation cannot be fulfilled")
		},
		what: "the controller's writes conflict with another writer of the same object and are retried",
		fix:  "find who else writes it: a GitOps sync or another controller (see the GitOps findings), or a second Argo Rollouts controller without its own --instance-id; a few are normal, a steady stream is a fight"},
	{key: "plugin", critical: true,
		match: func(e *corev1.Event) bool {
			return reasonIs(e, "ReconciliationError", "StepPluginTransition") && msgHas(e, "plugin") ||
				msgHas(e, "failed to get traffic router plugin") || msgHas(e, "via plugin") || msgHas(e, "plugin", "not found") || msgHas(e, "failed to download file")
		},
		what: "a traffic-router or step plugin fails: it did not start, could not be downloaded, or returned an error",
		fix:  "check the plugin's name and location in the argo-rollouts-config ConfigMap against the Rollout's plugin name, that the controller can fetch it (sha256, network, the file in the image), and the controller's log; a plugin that fails to start is retried on every pass"},
	{key: "args",
		match: func(e *corev1.Event) bool {
			return msgHas(e, "was not resolved") || msgHas(e, "args.", "not") && msgHas(e, "resolve")
		},
		what: "an analysis argument has no value: the template names an argument the Rollout does not give",
		fix:  "give the argument in the Rollout's analysis args (value, or valueFrom a field or secret), or a default in the template"},
	{key: "notfound", critical: true,
		match: func(e *corev1.Event) bool {
			return reasonIs(e, "VirtualServiceNotFound", "DestinationRuleNotFound", "VirtualRouterNotFound", "VirtualNodeNotFound", "LoadBalancerNotFound", "TrafficSplitNotCreated")
		},
		what: "the traffic object the Rollout names does not exist (or could not be created)",
		fix:  "create it, or correct its name in spec.strategy.canary.trafficRouting; nothing shifts traffic until it exists"},
	{key: "verify",
		match: func(e *corev1.Event) bool {
			return reasonIs(e, "WeightVerifyError", "TargetGroupVerifyError", "TargetGroupUnverified")
		},
		what: "the controller could not confirm at the load balancer that the weight it set is in effect, and holds the step until it can",
		fix:  "check the AWS Load Balancer Controller and the controller's AWS credentials; the message names the target group"},
	{key: "router",
		match: func(e *corev1.Event) bool { return reasonIs(e, "TrafficRoutingError") },
		what:  "the traffic router rejected or failed the weight change, so that pass ended before the status was written",
		fix:   "read the router's error in the message; the controller retries every pass, and until it succeeds no weight changes and, in a canary, the progress deadline is not evaluated"},
	{key: "replicaset",
		match: func(e *corev1.Event) bool { return reasonIs(e, "ReplicaSetCreateError", "ReplicaSetUpdateError") },
		what:  "the controller could not create or update a ReplicaSet",
		fix:   "read the cause in the message: a ResourceQuota or LimitRange, an admission policy, or the controller's RBAC"},
}

// eventGroup is the Warning events of one class.
type eventGroup struct {
	class  *eventClass
	count  int32
	last   time.Time
	latest *corev1.Event
}

// classifyEvents groups the Rollout's Warning events by class; events of no
// class are left out (the analysis ones have their own rules).
func classifyEvents(evs []*corev1.Event) []*eventGroup {
	byKey := map[string]*eventGroup{}
	var out []*eventGroup
	for _, e := range evs {
		if e.Type != corev1.EventTypeWarning {
			continue
		}
		for i := range eventClasses {
			cl := &eventClasses[i]
			if !cl.match(e) {
				continue
			}
			g := byKey[cl.key]
			if g == nil {
				g = &eventGroup{class: cl}
				byKey[cl.key] = g
				out = append(out, g)
			}
			g.count += max(e.Count, 1)
			if t := snapshot.EventTime(e); !t.Before(g.last) {
				g.last, g.latest = t, e
			}
			break
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].last.After(out[j].last) })
	return out
}

// detail adds what the message names: the denied verb and resource, the
// webhook.
func detail(g *eventGroup) string {
	m := g.latest.Message
	switch g.class.key {
	case "rbac":
		if s := forbiddenRE.FindStringSubmatch(m); s != nil {
			res := s[3]
			if s[4] != "" {
				res += "." + s[4]
			}
			return fmt.Sprintf(" (%s may not %s %s)", s[1], s[2], res)
		}
	case "webhook":
		if s := webhookRE.FindStringSubmatch(m); s != nil {
			return " (" + s[1] + ")"
		}
		if s := policyRE.FindStringSubmatch(m); s != nil {
			return " (ValidatingAdmissionPolicy " + s[1] + ")"
		}
	case "quota":
		if s := quotaRE.FindStringSubmatch(m); s != nil {
			return " (ResourceQuota " + s[1] + ")"
		}
	}
	return ""
}

// staleAfter is how old the newest event of a class may be and still be
// taken as the controller's current state.
const staleAfter = 15 * time.Minute

func checkControllerErrors(c *Context, r *rules.Rule) []rules.Finding {
	var out []rules.Finding
	for _, g := range classifyEvents(c.View.Events) {
		ago := snapshot.Since(c.View.Now, g.last).Round(time.Second)
		msg := fmt.Sprintf("%s%s: %d Warning event(s), the last %s ago, %s: %q; %s", g.class.what, detail(g), g.count, ago, g.latest.Reason, firstLine(g.latest.Message, 300), g.class.fix)
		f := r.NewFinding(msg)
		switch {
		case ago > staleAfter:
			f.Severity = rules.Info
			f.Message += fmt.Sprintf(" (nothing in the last %s: it may have cleared)", staleAfter)
		case g.class.critical:
			f.Severity = rules.Critical
		}
		f.Evidence = []rules.Evidence{ev("Event "+g.latest.Name, "reason", g.latest.Reason), ev("Event "+g.latest.Name, "lastTimestamp", g.last.UTC().Format(time.RFC3339))}
		out = append(out, f)
	}
	return out
}

func firstLine(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// eventLab says, per class, whether the lab reproduced it on the real
// controller (docs/fidelity.md prints it; a class without a line fails
// TestEveryEventClassHasALabLine).
var eventLab = map[string]string{
	"quota":      "reproduced (e2e controller-errors-quota): a ResourceQuota of one ReplicaSet refuses the canary's: ReplicaSetCreateError `… is forbidden: exceeded quota: rs, …` on every version; RD159 names the quota, not RBAC",
	"webhook":    "reproduced for an in-tree admission policy (e2e controller-errors): a ValidatingAdmissionPolicy denies the 50% weight on the VirtualService: TrafficRoutingError `… is forbidden: ValidatingAdmissionPolicy '…' with binding '…' denied request: …` on every version. An admission webhook (Istio's validation.istio.io) is not: the lab runs no webhook server; table tests use Istio's message",
	"rbac":       "not reproduced: the lab's controllers run with the lab's admin credentials; a denied controller would need its own restricted identity. Table tests use the API server's `User \"…\" cannot VERB resource \"…\"` message",
	"conflict":   "not reproduced: needs another writer racing the controller on the same object inside one pass; table tests",
	"plugin":     "not reproduced: the lab has no plugin binaries; table tests",
	"args":       "not reproduced: not tried in the lab; table tests",
	"notfound":   "not reproduced as an Event: a VirtualService missing when the Rollout is reconciled is an InvalidSpec condition, no Warning Event (e2e controller-errors: RD113 reports the condition on every version); VirtualServiceNotFound comes only from the Istio router's own lookup (header and mirror routes) after validation passed",
	"verify":     "not reproducible here: AWS Load Balancer Controller target groups only",
	"router":     "not reproduced apart: the lab's router errors (the policy above) carry a more specific cause",
	"replicaset": "not reproduced apart: the lab's ReplicaSet error (the quota above) carries a more specific cause",
}

// EventsMarkdown is the lab's record of RD159's classes and of the GitOps
// fight, for docs/fidelity.md.
func EventsMarkdown() string {
	var b strings.Builder
	b.WriteString("\n## Controller errors (RD159) and GitOps fights (RD160, RD161)\n\n")
	b.WriteString("RD159's classes of the controller's Warning Events (pkg/diagnose/events.go), in the order they are tried:\n\n")
	b.WriteString("| class | what it means | lab |\n|---|---|---|\n")
	for _, c := range eventClasses {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", c.key, c.what, eventLab[c.key])
	}
	b.WriteString("\nGitOps: Argo CD and Flux do not run in the lab. Argo CD's Application and Flux's Kustomization are stored as data\n")
	b.WriteString("(test/lab installs minimal Application, Kustomization and HelmRelease CRDs) and read by diagnose and escape; a second\n")
	b.WriteString("writer plays the sync. Reproduced on every version (the gitops-fight sections above):\n\n")
	b.WriteString("- the spec fight, three ways: deploy-bot sets the image and the sync puts Git's back, twice — a client-side\n")
	b.WriteString("  `kubectl apply --field-manager=argocd-controller` (Argo CD's default sync; e2e gitops-fight), a forced server-side\n")
	b.WriteString("  apply as argocd-controller (Argo CD with ServerSideApply=true; gitops-fight-ssa), a forced server-side apply as\n")
	b.WriteString("  kustomize-controller with Flux's kustomize.toolkit.fluxcd.io labels (gitops-fight-flux). Each write takes the image\n")
	b.WriteString("  from the other writer, so only the sync's manager is left in managedFields; RD160 reads the ReplicaSets'\n")
	b.WriteString("  revision-history (three returns) and prints the ignoreDifferences entry or the `flux suspend` command, RD161 reads\n")
	b.WriteString("  the Application (selfHeal) or the Kustomization (interval 5m), escape predicts an undo reverted, and\n")
	b.WriteString("  `diagnose --watch` sees the two writers take turns live (three or more in a minute: RD160 with the count);\n")
	b.WriteString("- the router fight (gitops-fight-router; upstream #2463, #3854, argo-cd #9570): paused at setWeight 50, Git's\n")
	b.WriteString("  VirtualService (stable 100, Argo CD's tracking-id) re-applied every 4 s as argocd-controller; the real controller,\n")
	b.WriteString("  queued by its VirtualService informer, writes its 50 back each time (the weight alternates 0 → 50 in the watched\n")
	b.WriteString("  writes); `diagnose --watch` raises RD135 with the turns and the VirtualService's ignoreDifferences\n")
	b.WriteString("  (`jqPathExpressions: [.spec.http[].route[].weight]`), and escape says promote and abort are fought too. The\n")
	b.WriteString("  controller answers within the same second, so a single read shows the controller as the last writer: the watch\n")
	b.WriteString("  counts the writers of every resourceVersion its watches deliver. promote and abort themselves were not sent\n")
	b.WriteString("  during the fight; the prediction rests on the sync reverting every weight the controller wrote.\n\n")
	b.WriteString("Not reproduced: Flux's helm-controller (a HelmRelease's forced apply is the same write as kustomize-controller's;\n")
	b.WriteString("table tests), and router fights on nginx, ALB, SMI or Traefik objects (table tests of the ignoreDifferences per kind;\n")
	b.WriteString("the watch covers VirtualServices and nginx Ingresses).\n")
	return b.String()
}
