package model

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// VersionSource says how the controller version was established.
type VersionSource string

// Version sources.
const (
	SourceFlag       VersionSource = "flag"       // --controller-version
	SourceImageTag   VersionSource = "image-tag"  // the controller Deployment's image tag
	SourceLabel      VersionSource = "label"      // app.kubernetes.io/version on the Deployment
	SourceUnknown    VersionSource = "unknown"    // nothing found: the newest modeled version is assumed
	SourceAmbiguous  VersionSource = "ambiguous"  // several controllers with different versions
	SourceUnreadable VersionSource = "unreadable" // a tag we could not parse (digest, "latest")
)

// ControllerVersion is the controller version the analysis assumes, and why.
type ControllerVersion struct {
	// Detected is what was found ("v1.8.1", "latest", "sha256:…"), empty if nothing.
	Detected string `json:"detected,omitempty"`
	// Assumed is the modeled version whose behaviour is used.
	Assumed upstream.Version `json:"assumed"`
	Source  VersionSource    `json:"source"`
	// Exact is true when Detected is itself a modeled version.
	Exact bool `json:"exact"`
	// Note explains an approximation or an unknown.
	Note string `json:"note,omitempty"`
	// From names the Deployment the version was read from.
	From string `json:"from,omitempty"`
}

// Known reports whether the version was established (exactly or by mapping
// a real release onto a modeled one), as opposed to assumed blindly.
func (c ControllerVersion) Known() bool {
	return c.Source == SourceFlag || c.Source == SourceImageTag || c.Source == SourceLabel
}

var semverRe = regexp.MustCompile(`^v?(\d+)\.(\d+)\.(\d+)`)

type semver struct{ major, minor, patch int }

// semvers memoizes parseSemver: a fleet scan asks for the same few
// versions (the modeled ones, the clusters' controllers) thousands of times.
var semvers sync.Map // string → parsed

type parsed struct {
	v  semver
	ok bool
}

func parseSemver(s string) (semver, bool) {
	if p, ok := semvers.Load(s); ok {
		return p.(parsed).v, p.(parsed).ok
	}
	var p parsed
	if m := semverRe.FindStringSubmatch(strings.TrimSpace(s)); m != nil {
		a, _ := strconv.Atoi(m[1])
		b, _ := strconv.Atoi(m[2])
		c, _ := strconv.Atoi(m[3])
		p = parsed{semver{a, b, c}, true}
	}
	if len(s) <= 64 { // a version, not arbitrary input, is worth keeping
		semvers.Store(s, p)
	}
	return p.v, p.ok
}

func (s semver) less(o semver) bool {
	if s.major != o.major {
		return s.major < o.major
	}
	if s.minor != o.minor {
		return s.minor < o.minor
	}
	return s.patch < o.patch
}

// Nearest maps a release onto the modeled version whose behaviour it shares:
// the newest modeled release of the same minor not newer than it, else the
// oldest modeled release of that minor, else the nearest modeled minor. The
// note says how close the mapping is.
func Nearest(release string) (upstream.Version, bool, string, error) {
	sv, ok := parseSemver(release)
	if !ok {
		return "", false, "", fmt.Errorf("%q is not a version like v1.8.2", release)
	}
	var sameMinor []upstream.Version
	for _, m := range upstream.Modeled {
		ms, _ := parseSemver(string(m))
		if ms == sv {
			return m, true, "", nil
		}
		if ms.major == sv.major && ms.minor == sv.minor {
			sameMinor = append(sameMinor, m)
		}
	}
	if len(sameMinor) > 0 {
		best := sameMinor[0]
		for _, m := range sameMinor {
			ms, _ := parseSemver(string(m))
			if !sv.less(ms) {
				best = m
			}
		}
		return best, false, fmt.Sprintf("v%d.%d.%d is not modeled; behaving as %s, the nearest modeled release of v%d.%d (patch releases can differ: v1.8.2 and v1.8.3 do)", sv.major, sv.minor, sv.patch, best, sv.major, sv.minor), nil
	}
	oldest, _ := parseSemver(string(upstream.Modeled[0]))
	newest, _ := parseSemver(string(upstream.Newest()))
	if sv.less(oldest) {
		return upstream.Modeled[0], false, fmt.Sprintf("v%d.%d.%d is older than every modeled release; behaving as %s, which may differ", sv.major, sv.minor, sv.patch, upstream.Modeled[0]), nil
	}
	if newest.less(sv) {
		return upstream.Newest(), false, fmt.Sprintf("v%d.%d.%d is newer than every modeled release; behaving as %s (the logic read up to that release is unchanged through it, not beyond)", sv.major, sv.minor, sv.patch, upstream.Newest()), nil
	}
	return upstream.Newest(), false, fmt.Sprintf("v%d.%d.%d is not modeled", sv.major, sv.minor, sv.patch), nil
}

// DetectVersionFor decides the controller version of the Rollout in the
// view: the flag wins, then the controller Deployments that reconcile it
// (View.Controllers). When controllers run but none reconciles it (another
// --instance-id, or --namespaced elsewhere) the version is unknown, with a
// note that says so rather than one picked from a controller that does not
// own it. gap is the failed read of the controller Deployments, if any.
func DetectVersionFor(flag string, v *snapshot.View, gap string) (ControllerVersion, error) {
	if flag == "" && len(v.Controllers) == 0 && len(v.OtherControllers) > 0 {
		note := snapshot.NoOwnerNote(v.Rollout, v.OtherControllers)
		if gap != "" {
			note += "; some controller Deployments could not be read (" + gap + ")"
		}
		return ControllerVersion{Assumed: upstream.Newest(), Source: SourceUnknown,
			Note: note + "; assuming " + string(upstream.Newest()) + " and showing where other versions differ (set --controller-version to be exact)"}, nil
	}
	return DetectVersion(flag, v.Controllers, gap)
}

// DetectVersion decides the controller version: the flag wins, then the
// controller Deployments given (those that reconcile the Rollout).
func DetectVersion(flag string, controllers []*appsv1.Deployment, gap string) (ControllerVersion, error) {
	if flag != "" {
		v, exact, note, err := Nearest(flag)
		if err != nil {
			return ControllerVersion{}, fmt.Errorf("--controller-version: %w (modeled: %s)", err, modeledList())
		}
		return ControllerVersion{Detected: flag, Assumed: v, Source: SourceFlag, Exact: exact, Note: note}, nil
	}
	type found struct{ tag, from string }
	var all []found
	for _, d := range controllers {
		tag := controllerTag(d)
		from := d.Namespace + "/" + d.Name
		if tag == "" {
			tag = d.Labels["app.kubernetes.io/version"]
		}
		all = append(all, found{tag, from})
	}
	distinct := map[string]bool{}
	for _, f := range all {
		distinct[f.tag] = true
	}
	switch {
	case len(all) == 0:
		note := "no argo-rollouts controller Deployment was found"
		if gap != "" {
			note = "the controller Deployment could not be read (" + gap + ")"
		}
		return ControllerVersion{Assumed: upstream.Newest(), Source: SourceUnknown,
			Note: note + "; assuming " + string(upstream.Newest()) + " and showing where other versions differ (set --controller-version to be exact)"}, nil
	case len(distinct) > 1:
		var parts []string
		for _, f := range all {
			parts = append(parts, f.from+"="+f.tag)
		}
		return ControllerVersion{Assumed: upstream.Newest(), Source: SourceAmbiguous,
			Note: "several controllers run (" + strings.Join(parts, ", ") + "); assuming " + string(upstream.Newest()) + " and showing where versions differ (set --controller-version to the one that owns this Rollout)"}, nil
	}
	f := all[0]
	v, exact, note, err := Nearest(f.tag)
	if err != nil {
		return ControllerVersion{Detected: f.tag, From: f.from, Assumed: upstream.Newest(), Source: SourceUnreadable,
			Note: fmt.Sprintf("controller image tag %q gives no version; assuming %s and showing where versions differ (set --controller-version)", f.tag, upstream.Newest())}, nil
	}
	src := SourceImageTag
	if controllerTag(controllersByName(controllers, f.from)) == "" {
		src = SourceLabel
	}
	return ControllerVersion{Detected: f.tag, From: f.from, Assumed: v, Source: src, Exact: exact, Note: note}, nil
}

func controllersByName(ds []*appsv1.Deployment, from string) *appsv1.Deployment {
	for _, d := range ds {
		if d.Namespace+"/"+d.Name == from {
			return d
		}
	}
	return nil
}

// controllerTag returns the tag of the argo-rollouts container image.
func controllerTag(d *appsv1.Deployment) string {
	if d == nil {
		return ""
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		img := c.Image
		if !strings.Contains(img, "argo-rollouts") && c.Name != "argo-rollouts" {
			continue
		}
		if i := strings.Index(img, "@"); i >= 0 {
			// a digest pins the image but names no version
			if j := strings.LastIndex(img[:i], ":"); j > strings.LastIndex(img[:i], "/") {
				return img[j+1 : i]
			}
			return img[i+1:]
		}
		if j := strings.LastIndex(img, ":"); j > strings.LastIndex(img, "/") {
			return img[j+1:]
		}
		return "latest"
	}
	return ""
}

func modeledList() string {
	var s []string
	for _, v := range upstream.Modeled {
		s = append(s, string(v))
	}
	return strings.Join(s, ", ")
}
