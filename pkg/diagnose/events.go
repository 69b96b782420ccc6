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
	key string
	// match reads an Event's reason and message, or a log line's message
	// (reason ""): the controller's log carries the same errors.
	match func(e errText) bool
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

// errText is an error as the controller reports it: an Event's reason and
// message, or a log line's message with no reason.
type errText struct{ Reason, Message string }

func msgHas(e errText, subs ...string) bool {
	m := strings.ToLower(e.Message)
	for _, s := range subs {
		if !strings.Contains(m, strings.ToLower(s)) {
			return false
		}
	}
	return true
}

func reasonIs(e errText, rs ...string) bool {
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
		match: func(e errText) bool { return msgHas(e, "exceeded quota") },
		what:  "a ResourceQuota in the namespace refuses what the controller creates",
		fix:   "raise the quota the message names (count/replicasets.apps, pods, or the cpu/memory requests: a canary needs room for its pods beside the stable's) or free room; the controller retries by itself"},
	{key: "webhook", critical: true,
		match: func(e errText) bool {
			return webhookRE.MatchString(e.Message) || msgHas(e, "admission webhook") || policyRE.MatchString(e.Message)
		},
		what: "an admission webhook or admission policy rejects the controller's write",
		fix:  "read the webhook's or policy's reason in the message: Istio's rejects a VirtualService whose destination weights are invalid (a total of 0, or a weight outside 0–100: see RD157), a policy engine or a ValidatingAdmissionPolicy may reject the weights, labels or annotations the controller writes; fix the object or the policy, not the Rollout"},
	{key: "rbac", critical: true,
		match: func(e errText) bool {
			return forbiddenRE.MatchString(e.Message) || msgHas(e, "cannot", "resource", "forbidden")
		},
		what: "the API server denies the controller's own ServiceAccount a request it needs",
		fix:  "grant it in the controller's ClusterRole (or Role with --namespaced) and the controller retries by itself"},
	{key: "conflict",
		match: func(e errText) bool {
			return msgHas(e, "the object has been modified") || msgHas(e, "operation cannot be fulfilled")
		},
		what: "the controller's writes conflict with another writer of the same object and are retried",
		fix:  "find who else writes it: a GitOps sync or another controller (see the GitOps findings), or a second Argo Rollouts controller without its own --instance-id; a few are normal, a steady stream is a fight"},
	{key: "plugin", critical: true,
		match: func(e errText) bool {
			return reasonIs(e, "ReconciliationError", "StepPluginTransition") && msgHas(e, "plugin") ||
				msgHas(e, "failed to get traffic router plugin") || msgHas(e, "via plugin") || msgHas(e, "plugin", "not found") || msgHas(e, "failed to download file")
		},
		what: "a traffic-router or step plugin fails: it did not start, could not be downloaded, or returned an error",
		fix:  "check the plugin's name and location in the argo-rollouts-config ConfigMap against the Rollout's plugin name, that the controller can fetch it (sha256, network, the file in the image), and the controller's log; a plugin that fails to start is retried on every pass"},
	{key: "args",
		match: func(e errText) bool {
			return msgHas(e, "was not resolved") || msgHas(e, "args.", "not") && msgHas(e, "resolve")
		},
		what: "an analysis argument has no value: the template names an argument the Rollout does not give",
		fix:  "give the argument in the Rollout's analysis args (value, or valueFrom a field or secret), or a default in the template"},
	{key: "invalid",
		match: func(e errText) bool { return msgHas(e, "Invalid value:") || msgHas(e, "The Rollout", "is invalid") },
		what:  "the controller's validation rejects the Rollout's spec and does not reconcile it (RD113 quotes its InvalidSpec condition)",
		fix:   "correct the field the message names; the controller reconciles the Rollout again once the spec passes"},
	{key: "notfound", critical: true,
		match: func(e errText) bool {
			return reasonIs(e, "VirtualServiceNotFound", "DestinationRuleNotFound", "VirtualRouterNotFound", "VirtualNodeNotFound", "LoadBalancerNotFound", "TrafficSplitNotCreated")
		},
		what: "the traffic object the Rollout names does not exist (or could not be created)",
		fix:  "create it, or correct its name in spec.strategy.canary.trafficRouting; nothing shifts traffic until it exists"},
	{key: "verify",
		match: func(e errText) bool {
			return reasonIs(e, "WeightVerifyError", "TargetGroupVerifyError", "TargetGroupUnverified")
		},
		what: "the controller could not confirm at the load balancer that the weight it set is in effect, and holds the step until it can",
		fix:  "check the AWS Load Balancer Controller and the controller's AWS credentials; the message names the target group"},
	{key: "dr-switch",
		match: func(e errText) bool { return msgHas(e, "delaying destination rule switch") },
		what:  "Istio subset routing: the controller holds the DestinationRule switch (and the weight) until every ReplicaSet with replicas is fully available",
		fix:   "make the ReplicaSet the message names fully available (its pods, its quota), or scale it to 0; until then no weight changes (see RD108 and RD150)"},
	{key: "router",
		match: func(e errText) bool { return reasonIs(e, "TrafficRoutingError") },
		what:  "the traffic router rejected or failed the weight change, so that pass ended before the status was written",
		fix:   "read the router's error in the message; the controller retries every pass, and until it succeeds no weight changes and, in a canary, the progress deadline is not evaluated"},
	{key: "replicaset",
		match: func(e errText) bool { return reasonIs(e, "ReplicaSetCreateError", "ReplicaSetUpdateError") },
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
			if !cl.match(errText{e.Reason, e.Message}) {
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
	"webhook":    "reproduced for an in-tree admission policy (e2e controller-errors): a ValidatingAdmissionPolicy denies the 50% weight on the VirtualService: TrafficRoutingError `… is forbidden: ValidatingAdmissionPolicy '…' with binding '…' denied request: …` on every version. The same denial is in the controller's log, one `rollout syncHandler error: …` line per retry (e2e controller-log, RD162: 14–20 lines on every version in two runs while the Rollout retries, read through pods/log). An admission webhook (Istio's validation.istio.io) is not: the lab runs no webhook server; table tests use Istio's message",
	"rbac":       "not reproduced: the lab's controllers run with the lab's admin credentials; a denied controller would need its own restricted identity. Table tests use the API server's `User \"…\" cannot VERB resource \"…\"` message",
	"conflict":   "not reproduced: needs another writer racing the controller on the same object inside one pass; table tests",
	"plugin":     "not reproduced: the lab has no plugin binaries; table tests",
	"args":       "not reproduced: not tried in the lab; table tests",
	"invalid":    "logged, not an Event (e2e controller-log, RD162): the VirtualService the Rollout names is missing; the controller's `The Rollout \"app\" is invalid: … Invalid value: … not found` error lines, read through pods/log, 2 on v1.7.2 and 16–33 on v1.8.2–v1.10.2 in two runs, within about 20 s, each count between what `kubectl logs` showed just before and just after",
	"notfound":   "not reproduced as an Event: a VirtualService missing when the Rollout is reconciled is an InvalidSpec condition, no Warning Event (e2e controller-errors: RD113 reports the condition on every version); VirtualServiceNotFound comes only from the Istio router's own lookup (header and mirror routes) after validation passed",
	"verify":     "not reproducible here: AWS Load Balancer Controller target groups only",
	"dr-switch":  "not reproduced: the lab's Istio scenarios use host routing; table tests use the controller's message",
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
	b.WriteString("\nGitOps: Argo CD and Flux do not run in the lab. Argo CD's Application is stored as data (test/lab installs a minimal\n")
	b.WriteString("Application CRD) and read by diagnose and escape. RD160 reproduced (e2e gitops-fight, every version): deploy-bot sets the\n")
	b.WriteString("image, a client-side `kubectl apply --field-manager=argocd-controller` of Git's Rollout (a client-side apply, Argo\n")
	b.WriteString("CD's default sync mode) puts it back, twice; only argocd-controller is left in managedFields, the ReplicaSets' revision-history shows\n")
	b.WriteString("the template going back and forth, and escape predicts an undo reverted. A forced server-side apply (Argo CD with\n")
	b.WriteString("ServerSideApply=true; Flux's kustomize-controller and helm-controller) takes the fields the same way: table tests only.\n")
	b.WriteString("Churn of resourceVersion between two reads (`diagnose --watch`) is not used yet.\n")
	return b.String()
}
