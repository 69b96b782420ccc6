package rules

import (
	"encoding/json"
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"
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

// UnmarshalYAML reads a severity name in rules.yaml.
func (s *Severity) UnmarshalYAML(n *yaml.Node) error {
	var str string
	if err := n.Decode(&str); err != nil {
		return err
	}
	v, err := ParseSeverity(str)
	*s = v
	return err
}

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
