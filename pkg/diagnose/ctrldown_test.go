package diagnose

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// controllerPods sets the available pods of the example's controller
// Deployment; drop removes it.
func controllerPods(avail int64, drop bool) func(*example) {
	return func(e *example) {
		var keep []*unstructured.Unstructured
		for _, o := range e.objs {
			if o.GetKind() == "Deployment" && o.GetNamespace() == "argo-rollouts" {
				if drop {
					continue
				}
				_ = unstructured.SetNestedField(o.Object, avail, "status", "availableReplicas")
			}
			keep = append(keep, o)
		}
		e.objs = keep
	}
}

// controllerDownCases are RD166's states; rolloutCases holds them.
var controllerDownCases = []rolloutCase{
	{name: "controller with no available pod", id: "RD166", fires: true, more: controllerPods(0, false),
		says: "the controller that reconciles this Rollout is not running: Deployment argo-rollouts/argo-rollouts has no available pod (0 of 1 available); no pass runs, so nothing this report predicts happens and no escape takes effect until it does"},
	{name: "controller running", id: "RD166", more: controllerPods(1, false)},
	{name: "no controller Deployment found", id: "RD166", more: controllerPods(0, true)},
	{name: "controller Deployment without a status", id: "RD166", more: func(e *example) {
		for _, o := range e.objs {
			if o.GetKind() == "Deployment" {
				unstructured.RemoveNestedField(o.Object, "status")
			}
		}
	}},
}

func init() { rolloutCases = append(rolloutCases, controllerDownCases...) }
