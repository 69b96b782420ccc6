package rules

import (
	"fmt"
	"sort"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// ReportAPIVersion versions the JSON/YAML documents that carry findings
// (diagnose's Diagnosis, pods' PodCheck); fields are only added within a
// version.
const ReportAPIVersion = "rolloutdoctor.io/v1alpha1"

// Evidence is one observed value a finding rests on.
type Evidence struct {
	Object string `json:"object"` // "Rollout shop/checkout-api"
	Field  string `json:"field"`  // "status.canary.weights.canary.weight"
	Value  string `json:"value"`
}

// Observed is the evidence that object's field had value.
func Observed(object, field string, value any) Evidence {
	return Evidence{Object: object, Field: field, Value: fmt.Sprint(value)}
}

// Finding is one rule firing on one object.
type Finding struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Severity    Severity        `json:"severity"`
	Message     string          `json:"message"`
	Evidence    []Evidence      `json:"evidence,omitempty"`
	Cites       []upstream.Cite `json:"cites,omitempty"`
	Remediation string          `json:"remediation"`
	Escape      string          `json:"escape,omitempty"`
	// Subject is the object the finding is about when it is not the one
	// checked (an AnalysisTemplate a Rollout's analysis uses), as "Kind
	// namespace/name" or "Kind name" for a cluster-scoped one: where the
	// fix goes, and where lint locates the finding.
	Subject string `json:"subject,omitempty"`
}

// PodCheck reports whether a finding comes from a pod check (AreaPods):
// reports list those apart, and lint runs them once for all versions.
func (f Finding) PodCheck() bool {
	r, ok := ByID(f.ID)
	return ok && r.Area == AreaPods
}

// Sort orders findings worst first, then by rule ID; findings of one rule
// keep the order their check gave them.
func Sort(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		if fs[i].Severity != fs[j].Severity {
			return fs[i].Severity > fs[j].Severity
		}
		return fs[i].ID < fs[j].ID
	})
}

// Worst is the highest severity among the findings (0 when none).
func Worst(fs []Finding) Severity {
	var w Severity
	for _, f := range fs {
		if f.Severity > w {
			w = f.Severity
		}
	}
	return w
}
