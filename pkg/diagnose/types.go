// Package diagnose turns a snapshot and a controller model into findings. It
// holds the one registry of rules: each rule has a permanent ID, a severity,
// its long explanation and the controller facts it rests on; the explain
// command and docs/rules.md are generated from the same registry.
package diagnose

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// Severity orders findings. Higher is worse.
type Severity int

// Severities.
const (
	Info Severity = iota + 1
	Warning
	Critical
)

func (s Severity) String() string {
	switch s {
	case Info:
		return "info"
	case Warning:
		return "warning"
	case Critical:
		return "critical"
	}
	return "unknown"
}

// MarshalJSON writes the severity as its name.
func (s Severity) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// UnmarshalJSON reads a severity name.
func (s *Severity) UnmarshalJSON(b []byte) error {
	var str string
	if err := json.Unmarshal(b, &str); err != nil {
		return err
	}
	v, err := ParseSeverity(str)
	*s = v
	return err
}

// ParseSeverity reads "info", "warning", "critical" (and "none" as 0, which
// --fail-on uses to mean "never fail").
func ParseSeverity(s string) (Severity, error) {
	switch strings.ToLower(s) {
	case "info":
		return Info, nil
	case "warning", "warn":
		return Warning, nil
	case "critical", "crit":
		return Critical, nil
	case "none", "never":
		return 0, nil
	}
	return 0, fmt.Errorf("unknown severity %q (want info, warning, critical or none)", s)
}

// Evidence is one observed value a finding rests on.
type Evidence struct {
	Object string `json:"object"` // "Rollout shop/checkout-api"
	Field  string `json:"field"`  // "status.canary.weights.canary.weight"
	Value  string `json:"value"`
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
}

func ev(object, field string, value interface{}) Evidence {
	return Evidence{Object: object, Field: field, Value: fmt.Sprint(value)}
}
