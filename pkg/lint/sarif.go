package lint

import (
	"strings"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
)

// SARIF 2.1.0, the subset code-scanning tools read: the rules with their
// metadata, results with file/line/column, and in-source suppressions.

// SARIFSchema is the schema URI written into the log.
const SARIFSchema = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool        sarifTool         `json:"tool"`
	Results     []sarifResult     `json:"results"`
	Invocations []sarifInvocation `json:"invocations,omitempty"`
	Properties  map[string]any    `json:"properties,omitempty"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifText struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown,omitempty"`
}

type sarifRule struct {
	ID                   string         `json:"id"`
	Name                 string         `json:"name"`
	ShortDescription     sarifText      `json:"shortDescription"`
	FullDescription      sarifText      `json:"fullDescription"`
	Help                 sarifText      `json:"help"`
	HelpURI              string         `json:"helpUri"`
	DefaultConfiguration map[string]any `json:"defaultConfiguration"`
	Properties           map[string]any `json:"properties,omitempty"`
}

type sarifResult struct {
	RuleID       string             `json:"ruleId"`
	RuleIndex    int                `json:"ruleIndex"`
	Level        string             `json:"level"`
	Message      sarifText          `json:"message"`
	Locations    []sarifLocation    `json:"locations,omitempty"`
	Suppressions []sarifSuppression `json:"suppressions,omitempty"`
	Properties   map[string]any     `json:"properties,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical  `json:"physicalLocation"`
	LogicalLocations []sarifLogical `json:"logicalLocations,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifactLocation `json:"artifactLocation"`
	Region           *sarifRegion          `json:"region,omitempty"`
}

type sarifArtifactLocation struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn"`
}

type sarifLogical struct {
	Name               string `json:"name"`
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

type sarifSuppression struct {
	Kind          string `json:"kind"`
	Justification string `json:"justification,omitempty"`
}

type sarifInvocation struct {
	ExecutionSuccessful        bool                `json:"executionSuccessful"`
	ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications,omitempty"`
}

type sarifNotification struct {
	Level     string          `json:"level"`
	Message   sarifText       `json:"message"`
	Locations []sarifLocation `json:"locations,omitempty"`
}

func sarifLevel(s diagnose.Severity) string {
	switch s {
	case diagnose.Critical:
		return "error"
	case diagnose.Warning:
		return "warning"
	}
	return "note"
}

// SARIF converts the report into a SARIF 2.1.0 log. Every registered static
// rule is listed (so code-scanning UIs can describe a rule that stopped
// firing); suppressed findings are results with an inSource or external
// suppression.
func (r *Report) SARIF(toolVersion string) any {
	const docs = "https://github.com/rolloutdoctor/rolloutdoctor/blob/main/docs/rules.md#"
	run := sarifRun{Tool: sarifTool{Driver: sarifDriver{Name: "rolloutdoctor", Version: toolVersion,
		InformationURI: "https://github.com/rolloutdoctor/rolloutdoctor"}}, Results: []sarifResult{}}
	index := map[string]int{}
	for _, rule := range diagnose.Rules() {
		if rule.Scope != diagnose.Static {
			continue
		}
		index[rule.ID] = len(run.Tool.Driver.Rules)
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{
			ID: rule.ID, Name: rule.Name,
			ShortDescription:     sarifText{Text: rule.Title},
			FullDescription:      sarifText{Text: rule.Why},
			Help:                 sarifText{Text: rule.Remedy, Markdown: rule.Remedy},
			HelpURI:              docs + strings.ToLower(rule.ID),
			DefaultConfiguration: map[string]any{"level": sarifLevel(rule.Severity)},
			Properties:           map[string]any{"tags": []string{"argo-rollouts", "kubernetes", "reliability"}},
		})
	}
	result := func(f Finding) sarifResult {
		res := sarifResult{RuleID: f.ID, RuleIndex: index[f.ID], Level: sarifLevel(f.Severity), Message: sarifText{Text: f.Message}}
		if f.File != "" {
			loc := sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifactLocation{URI: uri(f.File)}}}
			if f.Line > 0 {
				loc.PhysicalLocation.Region = &sarifRegion{StartLine: f.Line, StartColumn: 1}
			}
			loc.LogicalLocations = []sarifLogical{{Name: f.Object, FullyQualifiedName: f.Object, Kind: "object"}}
			res.Locations = []sarifLocation{loc}
		}
		if len(f.Versions) > 0 {
			res.Properties = map[string]any{"otherControllerVersions": f.Versions}
		}
		return res
	}
	for _, f := range r.Findings {
		run.Results = append(run.Results, result(f))
	}
	for _, s := range r.Suppressed {
		res := result(s.Finding)
		kind := "inSource"
		if s.By != "annotation" {
			kind = "external"
		}
		res.Suppressions = []sarifSuppression{{Kind: kind, Justification: s.Reason}}
		run.Results = append(run.Results, res)
	}
	inv := sarifInvocation{ExecutionSuccessful: len(r.Errors) == 0}
	for _, e := range r.Errors {
		n := sarifNotification{Level: "error", Message: sarifText{Text: e.Message}}
		if e.File != "" {
			loc := sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifactLocation{URI: uri(e.File)}}}
			if e.Line > 0 {
				loc.PhysicalLocation.Region = &sarifRegion{StartLine: e.Line, StartColumn: 1}
			}
			n.Locations = []sarifLocation{loc}
		}
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, n)
	}
	run.Invocations = []sarifInvocation{inv}
	run.Properties = map[string]any{"assumedControllerVersion": string(r.Controller.Assumed)}
	return sarifLog{Schema: SARIFSchema, Version: "2.1.0", Runs: []sarifRun{run}}
}

// uri turns a path into a relative URI reference ("-" is stdin).
func uri(p string) string {
	if p == "-" {
		return "stdin"
	}
	p = strings.TrimPrefix(p, "./")
	return strings.ReplaceAll(p, "\\", "/")
}
