package snapshot

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// InstanceIDLabel is the label by which a Rollout names the controller
// instance that reconciles it. rollouts-controller --instance-id X watches
// Rollouts, AnalysisRuns and Experiments through informers filtered on
// InstanceIDLabel=X; without --instance-id the filter is "label absent"
// (cmd/rollouts-controller/main.go and utils/controller
// InstanceIDRequirement, v1.7–v1.10).
const InstanceIDLabel = v1alpha1.LabelKeyControllerInstanceID

// ControllerScope is which Rollouts a controller Deployment's command line
// makes it reconcile.
type ControllerScope struct {
	// InstanceID is the value of --instance-id ("" without the flag).
	InstanceID string
	// Namespace is the one namespace a --namespaced controller watches ("" when
	// it watches all): its --namespace flag, else a literal POD_NAMESPACE,
	// else the namespace it runs in.
	Namespace string
}

// ScopeOf reads a controller Deployment's flags as the controller parses them
// (pflag: "--flag=value" or "--flag value"; the last occurrence wins; "--"
// ends the flags) from the command and args of its argo-rollouts container.
func ScopeOf(d *appsv1.Deployment) ControllerScope {
	c := controllerContainer(d)
	if c == nil {
		return ControllerScope{}
	}
	words := append(append([]string{}, c.Command...), c.Args...)
	var s ControllerScope
	namespaced, namespace := false, ""
	for i := 0; i < len(words); i++ {
		w := words[i]
		if w == "--" {
			break
		}
		name, value, hasValue := strings.Cut(w, "=")
		next := func() string {
			if hasValue {
				return value
			}
			if i+1 < len(words) {
				i++
				return words[i]
			}
			return ""
		}
		switch {
		case name == "--instance-id":
			s.InstanceID = next()
		case name == "--namespace" || name == "-n":
			namespace = next()
		case strings.HasPrefix(w, "-n") && !strings.HasPrefix(w, "--") && len(w) > 2:
			namespace = strings.TrimPrefix(w[2:], "=") // -nNS, -n=NS
		case name == "--namespaced":
			namespaced = true
			if hasValue {
				namespaced, _ = strconv.ParseBool(value) // pflag rejects anything else at start
			}
		}
	}
	if namespaced {
		// As client-go's in-cluster config resolves it: the flag, then
		// POD_NAMESPACE, then the pod's own namespace (the service account's).
		s.Namespace = namespace
		for _, e := range c.Env {
			if s.Namespace == "" && e.Name == "POD_NAMESPACE" && e.Value != "" {
				s.Namespace = e.Value
			}
		}
		if s.Namespace == "" {
			s.Namespace = d.Namespace
		}
	}
	return s
}

// Owns reports whether a controller of this scope reconciles the Rollout.
func (s ControllerScope) Owns(ro *v1alpha1.Rollout) bool {
	if s.Namespace != "" && s.Namespace != ro.Namespace && ro.Namespace != "" {
		return false
	}
	return ro.Labels[InstanceIDLabel] == s.InstanceID
}

func (s ControllerScope) String() string {
	var parts []string
	if s.InstanceID != "" {
		parts = append(parts, "--instance-id="+s.InstanceID)
	} else {
		parts = append(parts, "no --instance-id")
	}
	if s.Namespace != "" {
		parts = append(parts, "--namespaced in "+s.Namespace)
	}
	return strings.Join(parts, ", ")
}

// OwningControllers returns, in their order, the controller Deployments that
// reconcile the Rollout: those whose --instance-id equals the Rollout's
// InstanceIDLabel (a Rollout without the label belongs to controllers without
// --instance-id), and, for a --namespaced controller, only in its namespace.
// The rest are returned as others. Several owners are possible (two installs
// that would both reconcile it); none is, when only other instances run.
func OwningControllers(ro *v1alpha1.Rollout, all []*appsv1.Deployment) (owners, others []*appsv1.Deployment) {
	for _, d := range all {
		if ScopeOf(d).Owns(ro) {
			owners = append(owners, d)
		} else {
			others = append(others, d)
		}
	}
	return owners, others
}

// NoOwnerNote says why none of the controller Deployments found reconciles
// the Rollout, naming its instance-id and what each controller watches; ""
// when there are none.
func NoOwnerNote(ro *v1alpha1.Rollout, others []*appsv1.Deployment) string {
	if len(others) == 0 {
		return ""
	}
	var found []string
	for _, d := range others {
		found = append(found, fmt.Sprintf("%s/%s (%s)", d.Namespace, d.Name, ScopeOf(d)))
	}
	sort.Strings(found)
	want := "has no " + InstanceIDLabel + " label, so only a controller without --instance-id reconciles it"
	if id := ro.Labels[InstanceIDLabel]; id != "" {
		want = fmt.Sprintf("is labelled %s=%s, so only a controller started with --instance-id=%s reconciles it", InstanceIDLabel, id, id)
	}
	return fmt.Sprintf("no controller found reconciles this Rollout: it %s, and the controllers found are %s",
		want, strings.Join(found, ", "))
}

// controllerContainer is the argo-rollouts container of a controller
// Deployment: the one named argo-rollouts or running an argo-rollouts image,
// else the only container.
func controllerContainer(d *appsv1.Deployment) *corev1.Container {
	cs := d.Spec.Template.Spec.Containers
	for i := range cs {
		if cs[i].Name == "argo-rollouts" || strings.Contains(cs[i].Image, "argo-rollouts") {
			return &cs[i]
		}
	}
	if len(cs) == 1 {
		return &cs[0]
	}
	return nil
}

// statusKnown: the deployment controller has written the Deployment's
// status (a hand-made file or an export without status says nothing of
// its pods).
func statusKnown(d *appsv1.Deployment) bool {
	return d.Status.ObservedGeneration > 0 || d.Status.Replicas > 0 || len(d.Status.Conditions) > 0
}

// NoneRunning: controller Deployments were found, each with a known status
// and no available pod — no controller reconciles the Rollout they own.
func NoneRunning(ds []*appsv1.Deployment) bool {
	if len(ds) == 0 {
		return false
	}
	for _, d := range ds {
		if d.Status.AvailableReplicas > 0 || !statusKnown(d) {
			return false
		}
	}
	return true
}
