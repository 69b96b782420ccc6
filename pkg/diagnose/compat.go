package diagnose

import (
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/podcheck"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// The names below are kept for callers (pkg/cli, pkg/render, pkg/lint, the
// e2e suite); new code uses pkg/rules and pkg/podcheck.

// Severity is rules.Severity.
type Severity = rules.Severity

// Severities.
const (
	Info     = rules.Info
	Warning  = rules.Warning
	Critical = rules.Critical
)

// ParseSeverity is rules.ParseSeverity.
func ParseSeverity(s string) (Severity, error) { return rules.ParseSeverity(s) }

// Finding is rules.Finding.
type Finding = rules.Finding

// Evidence is rules.Evidence.
type Evidence = rules.Evidence

// Rule is rules.Rule.
type Rule = rules.Rule

// Scope is rules.Scope.
type Scope = rules.Scope

// Scopes.
const (
	Live   = rules.Live
	Static = rules.Static
)

// Rules is rules.All: every rule, both areas, in ID order.
func Rules() []*Rule { return rules.All() }

// RuleByID is rules.ByID.
func RuleByID(id string) (*Rule, bool) { return rules.ByID(id) }

// ReportAPIVersion is rules.ReportAPIVersion.
const ReportAPIVersion = rules.ReportAPIVersion

// PodReport is podcheck.Report.
type PodReport = podcheck.Report

// PodOptions is podcheck.Options.
type PodOptions = podcheck.Options

// ServiceRow is podcheck.ServiceRow.
type ServiceRow = podcheck.ServiceRow

// GraceInput is podcheck.GraceInput.
type GraceInput = podcheck.GraceInput

// RunPods is podcheck.Run.
func RunPods(w *snapshot.Workload, cv model.ControllerVersion, opt PodOptions) *PodReport {
	return podcheck.Run(w, cv, opt)
}
