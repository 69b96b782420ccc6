package gather

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/client-go/dynamic"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// Workload reads a Rollout's or a Deployment's world. kind is
// snapshot.KindRollout or snapshot.KindDeployment to read that kind only;
// "" reads the Rollout of that name if one exists, else the Deployment, so
// that a bare NAME works for both.
func Workload(ctx context.Context, dc dynamic.Interface, kind string, opt Options) (*snapshot.Snapshot, error) {
	if kind != snapshot.KindDeployment {
		snap, err := Rollout(ctx, dc, opt)
		if err == nil || kind == snapshot.KindRollout || !IsAbsent(err) {
			return snap, err
		}
	}
	snap, err := Deployment(ctx, dc, opt)
	if err != nil && kind == "" && IsAbsent(err) {
		return nil, &Error{Absent: true, Msg: fmt.Sprintf("no Rollout or Deployment %q in namespace %q (check -n/--namespace)", opt.Name, opt.Namespace)}
	}
	return snap, err
}

// IsAbsent tells "there is no such object, or no such API" (look for
// something else) from every other failure (report it).
func IsAbsent(err error) bool {
	var ge *Error
	return errors.As(err, &ge) && ge.Absent
}
