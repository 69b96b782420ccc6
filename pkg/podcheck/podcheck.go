// Package podcheck checks a workload's pods along the traffic path: probes,
// termination (preStop, grace period, Istio drain), the AWS load balancer's
// readiness gate, Services and their EndpointSlices, scheduling and
// disruption budgets, and nodes that stopped reporting. It reads only the
// workload (snapshot.Workload), so it runs for Deployments as well as
// Rollouts: the pods command reports it in full, diagnose and lint add its
// findings to theirs.
//
// Each check is a function keyed by its rule ID below; what the rule says
// (title, why, remedy, sources) is data, in rules.yaml.
package podcheck

import (
	_ "embed"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// Context is what a pod check sees.
type Context struct {
	// W is the workload: template, pods, Services, EndpointSlices, nodes…
	W *snapshot.Workload
	// Version is the controller version whose code a Rollout's findings cite.
	Version upstream.Version
	// Grace holds the grace calculator's inputs (--p99, --lb-interval, …).
	Grace GraceInput
}

func (c *Context) cites(keys ...upstream.Key) []upstream.Cite {
	out := make([]upstream.Cite, 0, len(keys))
	for _, k := range keys {
		out = append(out, upstream.At(k, c.Version))
	}
	return out
}

//go:embed rules.yaml
var prose []byte

// checks are the pod rules, registered with their prose.
var checks = rules.Register(rules.AreaPods, prose, map[string]rules.Check[Context]{
	"RD301": checkReadinessMissing,
	"RD302": checkReadinessIsLiveness,
	"RD303": checkNoPreStop,
	"RD304": checkGrace,
	"RD305": checkIstioDrain,
	"RD306": checkALBGate,
	"RD307": checkALBInstance,
	"RD308": checkTrafficPolicy,
	"RD309": checkAntiAffinity,
	"RD310": checkNoPDB,
	"RD311": checkPDBBlocks,
	"RD321": checkGatesUnsatisfied,
	"RD322": checkReadyOnDeadNode,
	"RD323": checkEndpointMismatch,
	"RD324": checkNoReadyEndpoints,
	"RD325": checkEndpointShare,
	"RD326": checkStuckTerminating,
})

// Findings runs the pod checks on ctx, worst first; staticOnly leaves out
// the live ones, which need running pods.
func Findings(ctx *Context, staticOnly bool) []rules.Finding {
	out := checks.Run(ctx, func(r *rules.Rule) bool { return staticOnly && r.Scope == rules.Live })
	rules.Sort(out)
	return out
}

// ev is rules.Observed, short for the checks' many evidence lines.
func ev(object, field string, value any) rules.Evidence { return rules.Observed(object, field, value) }
