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
	// webhookCallRE reads the API server's error when it cannot call a
	// webhook whose failurePolicy is Fail.
	webhookCallRE = regexp.MustCompile(`failed calling webhook "([^"]+)"`)
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
	// before RBAC, which needs the API server's "User … cannot …". An
	// analysis argument without a value is no class: the controller reports
	// it as its InvalidSpec condition (RD113) or as an AnalysisRun in Error
	// (RD124), never in a Warning Event of its own (see argsLab).
	{key: "quota", critical: true,
		match: func(e errText) bool { return msgHas(e, "exceeded quota") },
		what:  "a ResourceQuota in the namespace refuses what the controller creates",
		fix:   "raise the quota the message names (count/replicasets.apps, pods, or the cpu/memory requests: a canary needs room for its pods beside the stable's) or free room; the controller retries by itself"},
	{key: "webhook", critical: true,
		match: func(e errText) bool { return webhookRE.MatchString(e.Message) || msgHas(e, "admission webhook") },
		what:  "an admission webhook rejects the controller's write",
		fix:   "read the webhook's reason in the message: Istio's validation.istio.io rejects a VirtualService whose destination weights are invalid (a total of 0, or a weight outside 0–100: see RD157); a policy webhook (OPA Gatekeeper, Kyverno) may reject the weights, labels or annotations the controller writes. Fix the object or the webhook's rule (`kubectl get validatingwebhookconfigurations` lists who holds that webhook), not the Rollout; the controller retries every pass"},
	{key: "webhook-unreachable", critical: true,
		match: func(e errText) bool { return webhookCallRE.MatchString(e.Message) },
		what:  "the API server cannot call an admission webhook that must answer (failurePolicy Fail), so it refuses the controller's write",
		fix:   "the webhook's server is down or unreachable (Istio's validation.istio.io is served by istiod): bring it back, or, knowing what the webhook guards, set its failurePolicy to Ignore (`kubectl get validatingwebhookconfigurations` lists who holds it); every write it intercepts fails meanwhile, not only this Rollout's, and the controller retries every pass"},
	{key: "policy", critical: true,
		match: func(e errText) bool { return policyRE.MatchString(e.Message) },
		what:  "a ValidatingAdmissionPolicy rejects the controller's write",
		fix:   "read the policy's message: change the policy's validation or its binding's matchResources so that the controller's writes pass (`kubectl get validatingadmissionpolicybinding NAME -o yaml`), or the object it rejects, not the Rollout; the controller retries every pass"},
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
	{key: "invalid",
		match: func(e errText) bool {
			return msgHas(e, "Invalid value:") || msgHas(e, "Required value:") || msgHas(e, "The Rollout", "is invalid")
		},
		what: "the controller's validation rejects the Rollout's spec and does not reconcile it (RD113 quotes its InvalidSpec condition)",
		fix:  "correct the field the message names; the controller reconciles the Rollout again once the spec passes"},
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
	case "webhook-unreachable":
		if s := webhookCallRE.FindStringSubmatch(m); s != nil {
			return " (" + s[1] + ")"
		}
	case "policy":
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
	"quota":               "reproduced (e2e controller-errors-quota): a ResourceQuota of one ReplicaSet refuses the canary's: ReplicaSetCreateError `… is forbidden: exceeded quota: rs, …` on every version; RD159 names the quota, not RBAC",
	"webhook":             "reproduced (e2e controller-errors-webhook) on " + labVersions + ": a validating admission webhook served over HTTPS by the test on 127.0.0.1 (its own CA in the caBundle, `clientConfig.url`, a namespaceSelector for the scenario's namespace), called by the lab's API server, denies the 50% weight on the VirtualService in the words of Istio's webhook: TrafficRoutingError `admission webhook \"validation.istio.io\" denied the request: configuration is invalid: …`; RD159 gives one finding, the webhook class with its name — not RBAC, not an admission policy",
	"webhook-unreachable": "reproduced (e2e controller-errors-webhook) on " + labVersions + ": the same webhook's server stopped, its configuration kept: TrafficRoutingError `Internal error occurred: failed calling webhook \"validation.istio.io\": failed to call webhook: Post \"https://127.0.0.1:…/validate?timeout=5s\": dial tcp 127.0.0.1:…: connect: connection refused`; RD159 says the webhook cannot be called, apart from its denials. client-go's event recorder rate-limits one object's Events (a burst of 25, then one every 5 minutes: tools/record/events_cache.go, the same in client-go v0.29.3 that v1.7.2 pins and v0.34.5 that v1.10.2 pins): after the denials' Events an older controller (v1.7.2 in the last run) may have none left for this error, and the log (RD162, class webhook-unreachable) is then what shows it",
	"policy":              "reproduced (e2e controller-errors) on " + labVersions + ": a ValidatingAdmissionPolicy (in-tree, CEL) denies the 50% weight on the VirtualService: TrafficRoutingError `… is forbidden: ValidatingAdmissionPolicy '…' with binding '…' denied request: …`; RD159 names the policy, not RBAC",
	"rbac":                "reproduced (e2e controller-errors-rbac) on " + labVersions + ": one more controller of the version, with an --instance-id of its own, runs as a ServiceAccount (a TokenRequest token) whose ClusterRole may get, list and watch VirtualServices but not update them; its Rollout deploys, and the update to 50% is TrafficRoutingError `virtualservices.networking.istio.io \"app\" is forbidden: User \"system:serviceaccount:…:argo-rollouts\" cannot update resource \"virtualservices\" in API group \"networking.istio.io\" …`; RD159 names the ServiceAccount, the verb and the resource",
	"conflict":            "not reproduced: needs another writer racing the controller on the same object inside one pass; table tests",
	"plugin":              "not reproduced: the lab has no plugin binaries; table tests",
	"notfound":            "not reproduced as an Event: a VirtualService missing when the Rollout is reconciled is an InvalidSpec condition, no Warning Event (e2e controller-errors: RD113 reports the condition on every version); VirtualServiceNotFound comes only from the Istio router's own lookup (header and mirror routes) after validation passed",
	"verify":              "not reproducible here: AWS Load Balancer Controller target groups only",
	"router":              "not reproduced apart: the lab's router errors (the webhook, the policy and the RBAC denial above) carry a more specific cause",
	"replicaset":          "not reproduced apart: the lab's ReplicaSet error (the quota above) carries a more specific cause",
	"invalid":             "logged, not an Event (e2e controller-log, RD162): the VirtualService the Rollout names is missing; the controller's `The Rollout \"app\" is invalid: … Invalid value: … not found` error lines, read through pods/log, 2 on v1.7.2 and 16–33 on v1.8.2–v1.10.2 in two runs, within about 20 s, each count between what `kubectl logs` showed just before and just after",
	"dr-switch":           "not reproduced: the lab's Istio scenarios use host routing; table tests use the controller's message",
}

// labVersions are the versions the lab reproduced the classes on.
const labVersions = "v1.7.2, v1.8.2, v1.8.3, v1.9.3 and v1.10.2"

// argsLab is what the lab saw of analysis arguments without a value, which
// the controller reports in no Warning Event of its own.
const argsLab = "Analysis arguments without a value are no class of RD159: the controller reports them in no Warning Event of its own. " +
	"Reproduced (e2e controller-errors-args) on " + labVersions + ": a step template's argument that neither it nor the Rollout gives a value " +
	"makes the Rollout InvalidSpec (`The Rollout \"app\" is invalid: … args.region was not resolved`) — no Event, no AnalysisRun, nothing reconciled; " +
	"RD113 quotes the condition. Given a valueFrom naming a Secret that does not exist, validation passes and the analysis controller ends the step's " +
	"run in Error before measuring (`Unable to resolve metric arguments: secrets \"region\" not found`); the Rollout's Warnings are AnalysisRunError " +
	"and RolloutAborted, and RD124 reads the run.\n"

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
	b.WriteString("\n" + argsLab)
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
