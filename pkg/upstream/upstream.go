// Package upstream holds what rolloutdoctor knows about the Argo Rollouts
// source: the controller versions it models and, for each fact the tool
// prints about controller behaviour, the file:line in that version's source
// where the behaviour lives. The table is data only; cite_test.go opens every
// cited line in the Go module cache and fails when a citation goes stale.
package upstream

import (
	"fmt"
	"sort"
)

// Module is the upstream module whose source is cited.
const Module = "github.com/argoproj/argo-rollouts"

// Version is an Argo Rollouts release tag such as "v1.8.2".
type Version string

// Modeled lists the controller versions whose behaviour the model encodes,
// oldest first. Other releases are mapped onto one of these (see Nearest).
var Modeled = []Version{"v1.7.2", "v1.8.2", "v1.8.3", "v1.9.3", "v1.10.2"}

// Newest is the newest modeled version.
func Newest() Version { return Modeled[len(Modeled)-1] }

// Key names one fact about controller behaviour, e.g. "tr.reverse-loop".
// Keys are permanent: rules refer to them.
type Key string

// Loc is where a fact lives in one version. Line 0 means the fact is absent
// from that version: Contains must then not appear anywhere in File.
type Loc struct {
	File     string
	Line     int
	Contains string
}

// Present reports whether the fact exists in that version.
func (l Loc) Present() bool { return l.Line > 0 }

// Lines gives a fact's line in each modeled version; a line of 0 (the table
// writes it as absent) says the fact is not in that version.
type Lines map[Version]int

// absent is the line given for a version that lacks the fact. It is 0 so that
// a resolved Loc keeps meaning "absent" the way Loc documents.
const absent = 0

// Override replaces, for one version, the File or Contains that a Fact states
// once for all versions; an empty field keeps the Fact's. It exists for the
// releases where upstream worded the cited line differently (or kept it in
// another file); the line number still comes from Lines.
type Override struct {
	File     string
	Contains string
}

// Fact is one claim about controller behaviour with where it lives in each
// modeled version. The file and the text that pins the cited line are stated
// once, as the newest modeled release has them, since most facts keep both
// across releases and only move; Lines has the line in every modeled version
// and Except the older versions whose file or text differ. Use Loc to read
// the location in one version.
type Fact struct {
	Key   Key
	Claim string
	// File is relative to the module root; Contains is a short substring of
	// the cited line (for an absent version: text that must appear nowhere in
	// File).
	File     string
	Contains string
	Lines    Lines
	Except   map[Version]Override
}

// Loc resolves the fact's location in version v; ok is false when the table
// has no line for v.
func (f Fact) Loc(v Version) (l Loc, ok bool) {
	line, ok := f.Lines[v]
	if !ok {
		return Loc{}, false
	}
	l = Loc{File: f.File, Line: line, Contains: f.Contains}
	if o, ok := f.Except[v]; ok {
		if o.File != "" {
			l.File = o.File
		}
		if o.Contains != "" {
			l.Contains = o.Contains
		}
	}
	return l, true
}

// Cite is a resolved citation: a fact at one version.
type Cite struct {
	Key     Key     `json:"key"`
	Version Version `json:"version"`
	File    string  `json:"file,omitempty"`
	Line    int     `json:"line,omitempty"`
	Absent  bool    `json:"absent,omitempty"`
	Claim   string  `json:"claim"`
}

// String renders "argo-rollouts v1.8.2 rollout/trafficrouting.go:247".
func (c Cite) String() string {
	if c.Absent {
		return fmt.Sprintf("argo-rollouts %s: absent from %s", c.Version, c.File)
	}
	return fmt.Sprintf("argo-rollouts %s %s:%d", c.Version, c.File, c.Line)
}

var byKey = func() map[Key]*Fact {
	m := make(map[Key]*Fact, len(facts))
	for i := range facts {
		f := &facts[i]
		if _, dup := m[f.Key]; dup {
			panic("upstream: duplicate fact key " + string(f.Key))
		}
		m[f.Key] = f
	}
	return m
}()

// Facts returns every fact, sorted by key.
func Facts() []Fact {
	out := append([]Fact(nil), facts...)
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// Lookup returns the fact for a key.
func Lookup(k Key) (Fact, bool) {
	f, ok := byKey[k]
	if !ok {
		return Fact{}, false
	}
	return *f, true
}

// At resolves a fact at a modeled version. It panics on an unknown key or a
// version the table does not cover: both are programming errors that the
// package tests catch before release.
func At(k Key, v Version) Cite {
	if cs, ok := resolved[k]; ok {
		for i, m := range Modeled {
			if m == v {
				return cs[i]
			}
		}
	}
	return resolve(k, v)
}

func resolve(k Key, v Version) Cite {
	f, ok := byKey[k]
	if !ok {
		panic("upstream: unknown fact " + string(k))
	}
	l, ok := f.Loc(v)
	if !ok {
		panic(fmt.Sprintf("upstream: fact %s has no location for %s", k, v))
	}
	return Cite{Key: k, Version: v, File: l.File, Line: l.Line, Absent: !l.Present(), Claim: f.Claim}
}

// resolved is every fact at every modeled version (in Modeled's order),
// resolved once: a diagnosis cites dozens of facts, and a fleet scan makes
// thousands of diagnoses. A fact missing a version is left out, for At to
// panic on as before.
var resolved = func() map[Key][]Cite {
	m := make(map[Key][]Cite, len(facts))
outer:
	for i := range facts {
		f := &facts[i]
		cs := make([]Cite, len(Modeled))
		for j, v := range Modeled {
			if _, ok := f.Loc(v); !ok {
				continue outer
			}
			cs[j] = resolve(f.Key, v)
		}
		m[f.Key] = cs
	}
	return m
}()

// URL is the cited line on GitHub at the cited release tag ("" for a fact
// the version lacks): what a reader of a pasted report can open.
func (c Cite) URL() string {
	if c.Absent || c.File == "" {
		return ""
	}
	return fmt.Sprintf("https://%s/blob/%s/%s#L%d", Module, c.Version, c.File, c.Line)
}
