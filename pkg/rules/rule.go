// Package rules is the vocabulary every check shares — severities, findings,
// evidence — and the one registry of rules. Each area (the Rollout checks in
// pkg/diagnose, the pod checks in pkg/podcheck) registers its rules' prose,
// an embedded rules.yaml, together with its check functions keyed by rule ID;
// explain, docs/rules.md, lint's SARIF rule list and every finding's
// remediation read the same registry.
package rules

import (
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// Scope says what a rule needs to run.
type Scope string

// Scopes.
const (
	// Live rules need the Rollout's status and its ReplicaSets, or running pods.
	Live Scope = "live"
	// Static rules need only manifests; lint runs them too.
	Static Scope = "static"
)

// Area says what a rule looks at, and so which package checks it.
type Area string

// Areas.
const (
	// AreaRollout rules read the Rollout's steps, status and ReplicaSets
	// (pkg/diagnose).
	AreaRollout Area = "rollout"
	// AreaPods rules read the pod template, pods and traffic path; they run
	// for Deployments too, through the pods command (pkg/podcheck).
	AreaPods Area = "pods"
)

// Rule is one check's metadata, read from its area's rules.yaml. IDs and
// names are permanent: they are what users suppress and search for, so a rule
// may be reworded but never renumbered.
type Rule struct {
	ID       string   `json:"id" yaml:"id"`
	Name     string   `json:"name" yaml:"name"` // short kebab-case name, also permanent
	Title    string   `json:"title" yaml:"title"`
	Severity Severity `json:"severity" yaml:"severity"` // the usual severity; a finding may lower or raise it
	Scope    Scope    `json:"scope" yaml:"scope"`
	// Area is set by the registering package, not by rules.yaml.
	Area Area `json:"-" yaml:"-"`
	// Why is the long explanation (markdown), what to do in Remedy.
	Why    string `json:"why" yaml:"why"`
	Remedy string `json:"remedy" yaml:"remedy"`
	// Escape names the way out that applies when this fires during an incident.
	Escape string `json:"escape,omitempty" yaml:"escape,omitempty"`
	// Facts are the controller facts the rule rests on, cited per version by explain.
	Facts []upstream.Key `json:"facts,omitempty" yaml:"facts,omitempty"`
	// Sources are the incidents and documents the rule comes from, as
	// references a user can open: a page of the project's docs/, relative to
	// it (incidents.md#anchor), or a public https URL.
	Sources []string `json:"sources,omitempty" yaml:"sources,omitempty"`
	// OnInvalidSpec marks a Rollout rule that still runs when the controller
	// rejects the spec (RD113): it reads status, data gaps or the version,
	// not the rejected values the others would compute with.
	OnInvalidSpec bool `json:"onInvalidSpec,omitempty" yaml:"onInvalidSpec,omitempty"`
	// WithoutReplicaSets marks a live Rollout rule that still runs when the
	// Rollout's ReplicaSets could not be read (RBAC, a timeout): it reads
	// the Rollout's spec and status, events, AnalysisRuns, router objects,
	// data gaps or the version, and never reasons from the ReplicaSets'
	// absence or from what the model predicts with them. The other live
	// rules would take an unread list for an empty one: a Rollout with no
	// stable ReplicaSet and no available pod.
	WithoutReplicaSets bool `json:"withoutReplicaSets,omitempty" yaml:"withoutReplicaSets,omitempty"`
}

// NewFinding is a finding of this rule with its usual severity, remediation
// and escape; the check adds evidence and citations.
func (r *Rule) NewFinding(msg string) Finding {
	return Finding{ID: r.ID, Name: r.Name, Severity: r.Severity, Message: msg, Remediation: r.Remedy, Escape: r.Escape}
}
