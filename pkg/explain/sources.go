package explain

import (
	"regexp"
	"strings"
)

// DocsURL is where the project's docs/ directory is published. A rule's
// sources name the project's pages relative to docs/ (incidents.md#anchor):
// docs/rules.md sits beside them and links them as they are, while the text of
// `explain ID`, read in a terminal by someone who installed the binary and has
// no checkout, prints them as links under DocsURL.
const DocsURL = "https://github.com/rolloutdoctor/rolloutdoctor/blob/main/docs/"

// docTitles are the headings of the docs sections rules cite: the link text
// in docs/rules.md and the label in `explain ID`. TestSourcesResolve checks
// every entry against the heading its anchor names, and every docs source of
// every rule has one.
var docTitles = map[string]string{
	"fidelity.md#known-controller-bugs":                              "Known controller bugs",
	"incidents.md#rollback-within-the-window":                        "Rollback within the window",
	"incidents.md#the-fix-drop-the-final-setweight-100":              "The fix: drop the final setWeight 100",
	"incidents.md#what-does-not-help":                                "What does not help",
	"incidents.md#replicaprogressthreshold-of-type-pods":             "replicaProgressThreshold of type Pods",
	"incidents.md#aborted-rollouts-and-the-ways-out":                 "Aborted rollouts and the ways out",
	"incidents.md#minpodsperreplicaset-above-replicas":               "minPodsPerReplicaSet above replicas",
	"incidents.md#dynamicstablescale-and-the-abort-scale-down-delay": "dynamicStableScale and the abort scale-down delay",
	"incidents.md#controller-gates-that-hold-a-weight":               "Controller gates that hold a weight",
	"incidents.md#pod-termination-without-a-prestop-delay":           "Pod termination without a preStop delay",
	"incidents.md#grace-period-budget":                               "Grace period budget",
	"incidents.md#alb-target-modes-and-the-readiness-gate":           "ALB target modes and the readiness gate",
	"incidents.md#externaltrafficpolicy-cluster":                     "externalTrafficPolicy Cluster",
	"incidents.md#readiness-equal-to-liveness":                       "Readiness equal to liveness",
	"incidents.md#required-anti-affinity-deadlock":                   "Required anti-affinity deadlock",
	"incidents.md#poddisruptionbudgets-that-block":                   "PodDisruptionBudgets that block",
	"incidents.md#pods-stuck-terminating":                            "Pods stuck Terminating",
	"incidents.md#ready-pods-on-a-dead-node":                         "Ready pods on a dead node",
	"incidents.md#endpointslices-versus-pod-readiness":               "EndpointSlices versus pod readiness",
	"incidents.md#weight-versus-ready-endpoints":                     "Weight versus ready endpoints",
}

// isURL tells a public URL from a page of docs/ (pkg/rules admits only
// https URLs and docs pages).
func isURL(src string) bool { return strings.HasPrefix(src, "https://") }

// docTitle is the heading a docs source names, or the source itself.
func docTitle(src string) string {
	if t, ok := docTitles[src]; ok {
		return t
	}
	return src
}

// githubRef matches an issue or pull request URL on GitHub.
var githubRef = regexp.MustCompile(`^https://github\.com/([^/]+/[^/]+)/(?:issues|pull)/([0-9]+)$`)

// textSource is one source in `explain ID`: a docs page as its heading and
// absolute link, a URL as it is.
func textSource(src string) string {
	if isURL(src) {
		return src
	}
	return docTitle(src) + ": " + DocsURL + src
}

// markdownSource is one source in docs/rules.md: a docs page as a relative
// link with its heading as text, a GitHub issue or PR as owner/repo#N, any
// other URL as an autolink.
func markdownSource(src string) string {
	if !isURL(src) {
		return "[" + docTitle(src) + "](" + src + ")"
	}
	if m := githubRef.FindStringSubmatch(src); m != nil {
		return "[" + m[1] + "#" + m[2] + "](" + src + ")"
	}
	return "<" + src + ">"
}
