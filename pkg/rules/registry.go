package rules

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Check is one rule's check: it reads the area's context C and returns the
// rule's findings (none when the rule does not fire).
type Check[C any] func(c *C, r *Rule) []Finding

// Set is one area's rules with their checks, as Register returns it.
type Set[C any] struct {
	rules []*Rule // ID order
	// checks[i] is rules[i]'s check: Run calls every one for each Rollout
	// of a fleet, where a lookup by ID was a tenth of the analysis.
	checks []Check[C]
}

// Rules returns the set's rules in ID order.
func (s *Set[C]) Rules() []*Rule { return append([]*Rule(nil), s.rules...) }

// Run runs every check of the set on ctx in ID order, except those of the
// rules skip reports, and returns their findings unsorted.
func (s *Set[C]) Run(ctx *C, skip func(*Rule) bool) []Finding {
	out := []Finding{}
	for i, r := range s.rules {
		if skip != nil && skip(r) {
			continue
		}
		out = append(out, s.checks[i](ctx, r)...)
	}
	return out
}

// Register adds an area's rules to the registry: prose is its rules.yaml (a
// list of rules, decoded strictly: an unknown or repeated field is an error)
// and checks its check functions by rule ID. It panics — at package
// initialisation, so every test run catches it — on malformed prose, a rule
// without a check, a check without a rule, or an ID or name already taken.
func Register[C any](area Area, prose []byte, checks map[string]Check[C]) *Set[C] {
	s, err := newSet(area, prose, checks)
	if err == nil {
		err = registered.add(s.rules)
	}
	if err != nil {
		panic(fmt.Sprintf("rules: registering the %s rules: %v", area, err))
	}
	return s
}

// All returns every registered rule in ID order.
func All() []*Rule {
	out := append([]*Rule(nil), registered.rules...)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// ByID finds a rule by ID or name, in any case.
func ByID(id string) (*Rule, bool) { return registered.byID(id) }

// registry is the list Register adds to; a type of its own so tests can fill
// one apart from the real one.
type registry struct{ rules []*Rule }

// registered is the registry. Register is called while packages initialise,
// before anything reads it, so it needs no lock.
var registered registry

func (g *registry) byID(id string) (*Rule, bool) {
	for _, r := range g.rules {
		if strings.EqualFold(r.ID, id) || strings.EqualFold(r.Name, id) {
			return r, true
		}
	}
	return nil, false
}

// add appends rules whose IDs and names no registered rule uses.
func (g *registry) add(rs []*Rule) error {
	for _, r := range rs {
		if old, ok := g.byID(r.ID); ok {
			return fmt.Errorf("%s: ID already used by %s %s (%s rules)", r.ID, old.ID, old.Name, old.Area)
		}
		if old, ok := g.byID(r.Name); ok {
			return fmt.Errorf("%s: name %s already used by %s (%s rules)", r.ID, r.Name, old.ID, old.Area)
		}
	}
	g.rules = append(g.rules, rs...)
	return nil
}

// newSet decodes prose and pairs each rule with its check.
func newSet[C any](area Area, prose []byte, checks map[string]Check[C]) (*Set[C], error) {
	if area != AreaRollout && area != AreaPods {
		return nil, fmt.Errorf("unknown area %q", area)
	}
	rs, err := decode(prose)
	if err != nil {
		return nil, err
	}
	s := &Set[C]{}
	seen := &registry{}
	for _, r := range rs {
		if err := seen.add([]*Rule{r}); err != nil {
			return nil, err
		}
		if checks[r.ID] == nil {
			return nil, fmt.Errorf("%s %s has prose but no check", r.ID, r.Name)
		}
		r.Area = area
		s.rules = append(s.rules, r)
	}
	for id := range checks {
		if !slices.ContainsFunc(s.rules, func(r *Rule) bool { return r.ID == id }) {
			return nil, fmt.Errorf("%s has a check but no prose", id)
		}
	}
	sort.Slice(s.rules, func(i, j int) bool { return s.rules[i].ID < s.rules[j].ID })
	for _, r := range s.rules {
		s.checks = append(s.checks, checks[r.ID])
	}
	return s, nil
}

var (
	idRE   = regexp.MustCompile(`^RD[0-9]{3}$`)
	nameRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	// sourceRE is what a source may be: a project document relative to
	// docs/, with or without an anchor (incidents.md#grace-period-budget), or
	// a public https URL. pkg/explain's tests check the document and its
	// anchor exist.
	sourceRE = regexp.MustCompile(`^([a-z0-9-]+\.md(#[a-z0-9_-]+)?|https://[^\s]+)$`)
)

// decode reads a rules.yaml strictly and checks every entry is complete.
func decode(prose []byte) ([]*Rule, error) {
	// yaml.v3 straight into the structs, strictly (unknown fields and
	// repeated keys are errors): through JSON, as sigs.k8s.io/yaml reads,
	// this was a quarter of a small diagnose's start-up.
	var rs []*Rule
	dec := yaml.NewDecoder(bytes.NewReader(prose))
	dec.KnownFields(true)
	if err := dec.Decode(&rs); err != nil && err != io.EOF {
		return nil, fmt.Errorf("rules.yaml: %w", err)
	}
	if len(rs) == 0 {
		return nil, fmt.Errorf("rules.yaml holds no rule")
	}
	for i, r := range rs {
		if r == nil {
			return nil, fmt.Errorf("rules.yaml entry %d is empty", i+1)
		}
		var missing []string
		for field, empty := range map[string]bool{"title": r.Title == "", "severity": r.Severity == 0, "why": r.Why == "", "remedy": r.Remedy == ""} {
			if empty {
				missing = append(missing, field)
			}
		}
		sort.Strings(missing)
		switch {
		case !idRE.MatchString(r.ID):
			return nil, fmt.Errorf("rules.yaml entry %d: id %q is not RD and three digits", i+1, r.ID)
		case !nameRE.MatchString(r.Name):
			return nil, fmt.Errorf("%s: name %q is not kebab-case", r.ID, r.Name)
		case r.Scope != Live && r.Scope != Static:
			return nil, fmt.Errorf("%s: scope %q is neither live nor static", r.ID, r.Scope)
		case r.WithoutReplicaSets && r.Scope != Live:
			return nil, fmt.Errorf("%s: withoutReplicaSets on a %s rule: only live rules are held back when the ReplicaSets were not read", r.ID, r.Scope)
		case len(missing) > 0:
			return nil, fmt.Errorf("%s: no %s", r.ID, strings.Join(missing, ", "))
		}
		for _, src := range r.Sources {
			if !sourceRE.MatchString(src) {
				return nil, fmt.Errorf("%s: source %q is neither a page of docs/ (incidents.md#anchor) nor an https URL", r.ID, src)
			}
		}
	}
	return rs, nil
}
