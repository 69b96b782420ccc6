package cli

import (
	"bytes"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	dynfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/gather"
)

// A reader role without ReplicaSets: the incident example with their reads
// refused. Before, scan showed the canary's weight "on 0/20", diagnose said
// "no canary pod is available" and "there is no stable ReplicaSet", and
// escape recommended waiting as safe (undo "not applicable: no earlier
// revision"). Now each says what it did not read and claims nothing from it.
func TestUnreadReplicaSetsEveryCommand(t *testing.T) {
	fc := forbidding(t, "replicasets")
	out, stderr, code := runOn(t, fc, "scan")
	if code != ExitOK || !strings.Contains(out, "100% on ?/20 (needs 20)") || !strings.Contains(out, "gap: could not read replicasets.apps in shop: Forbidden") || strings.Contains(out, "RD101") {
		t.Errorf("scan: exit %d, stderr %q\n%s", code, stderr, out)
	}
	out, _, _ = runOn(t, fc, "diagnose")
	for _, want := range []string{"stable ?/? available ← 0%   canary ?/? available ← 100%\n", "next pass: not known: the ReplicaSets were not read\n",
		"not read: replicasets.apps in shop: Forbidden", "not known: grant list on replicasets.apps (docs/rbac.yaml)"} {
		if !strings.Contains(out, want) {
			t.Errorf("diagnose does not say %q:\n%s", want, out)
		}
	}
	for _, not := range []string{"no canary pod is available", "no stable ReplicaSet", "RD101", "RD108", "escape now"} {
		if strings.Contains(out, not) {
			t.Errorf("diagnose says %q from ReplicaSets it did not read:\n%s", not, out)
		}
	}
	out, stderr, code = runEscape(t, fc, false, "")
	if code != ExitError || out != "" || !strings.Contains(stderr, "rollout shop/checkout-api: no way out can be planned without its ReplicaSets, which were not read (replicasets.apps in shop: Forbidden") {
		t.Errorf("escape: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

// timeline with the ReplicaSets or the Events refused: before, its worst
// moment read "canary 100% on 0 of the 20 available pods it needs" and its
// completeness told how far back ReplicaSets and Events reach, as if read.
func TestTimelineUnread(t *testing.T) {
	out, _, _ := runOn(t, forbidding(t, "replicasets"), "timeline")
	if strings.Contains(out, "Worst moment") || !strings.Contains(out, "  revisions: not read: replicasets.apps in shop: Forbidden") {
		t.Errorf("timeline without ReplicaSets:\n%s", out)
	}
	out, _, _ = runOn(t, forbidding(t, "events"), "timeline")
	if !strings.Contains(out, "  events: not read: events in shop: Forbidden") || !strings.Contains(out, "Worst moment") {
		t.Errorf("timeline without Events:\n%s", out)
	}
}

// An Istio VirtualService the reader may not get: neither its weights nor
// whether it exists are known. Before, diagnose printed it as "spec.http:
// no weights".
func TestUnreadRouterObject(t *testing.T) {
	out, _, _ := runOn(t, forbidding(t, "virtualservices"), "diagnose")
	if !strings.Contains(out, "router VirtualService shop/checkout-api not read (RD110 says why): its weights are not known\n") ||
		strings.Contains(out, "no weights") || strings.Contains(out, "does not exist") || !strings.Contains(out, "could not read virtualservices.networking.istio.io checkout-api in shop: Forbidden") {
		t.Errorf("diagnose:\n%s", out)
	}
}

// forbidding is the incident example whose API refuses every get and list
// of resource.
func forbidding(t *testing.T, resource string) *fakeCluster {
	return refusing(newFakeCluster(t), resource)
}

// refusing makes fc's API refuse every get and list of resource.
func refusing(fc *fakeCluster, resource string) *fakeCluster {
	for _, verb := range []string{"list", "get"} {
		fc.dc.PrependReactor(verb, resource, func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: resource}, "", nil)
		})
	}
	return fc
}

// runOn runs scan, or diagnose or timeline of the example's Rollout, in
// its namespace.
func runOn(t *testing.T, fc *fakeCluster, cmd string, args ...string) (string, string, int) {
	name := fc.rollout
	if name == "" {
		name = "checkout-api"
	}
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	ns := "shop"
	flags := genericclioptions.NewConfigFlags(true)
	flags.Namespace = &ns
	streams := genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: errOut}
	switch cmd {
	case "scan":
		o := NewScanOptions(flags, streams)
		o.connect = fc.connect
		return execute(t, newScanCommand(o), out, errOut, append(args, "--color", "never"))
	case "timeline":
		o := NewTimelineOptions(flags, streams)
		o.connect = fc.connect
		return execute(t, newTimelineCommand(o), out, errOut, append(args, name, "--color", "never"))
	}
	o := NewDiagnoseOptions(flags, streams)
	o.connect = fc.connect
	return execute(t, newDiagnoseCommand(o), out, errOut, append(args, name, "--color", "never"))
}

// With the controller Deployments refused, a row's controller version is
// the one assumed, and the table says so: before, it read like one found.
func TestScanSaysWhenTheVersionIsAssumed(t *testing.T) {
	out, _, _ := runOn(t, newFakeCluster(t), "scan")
	if strings.Contains(out, "(assumed)") || !strings.Contains(out, " v1.8.2 ") {
		t.Fatalf("scan with the controller read:\n%s", out)
	}
	out, _, _ = runOn(t, forbidding(t, "deployments"), "scan")
	if !strings.Contains(out, " (assumed) ") || !strings.Contains(out, "gap: could not read deployments.apps: Forbidden") {
		t.Errorf("scan without the controller Deployments:\n%s", out)
	}
}

// A blue-green Rollout whose Services the reader may not list. Before,
// diagnose printed "active Service checkout-web-active — not found" and
// RD114 (critical) said it does not exist and that the controller rejects
// the Rollout; the model took the unread Service for one without a hash.
// scan, which reads no Services at all, said the same of every blue-green
// Rollout.
func TestUnreadServicesBlueGreen(t *testing.T) {
	objs := exampletest.Objects(t, exampletest.BlueGreen, nil)
	fc := refusing(&fakeCluster{dc: dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), gather.ListKinds(), objs...), rollout: "checkout-web"}, "services")
	text, stderr, _ := runOn(t, fc, "diagnose")
	for _, want := range []string{
		"active   Service checkout-web-active — not read; the controller last pointed it at checkout-web-7d9f8c6b5 (status.blueGreen)\n",
		"preview  Service checkout-web-preview — not read; the controller last pointed it at checkout-web-5c6d7e8f9 (status.blueGreen)\n",
		"could not read services in shop: Forbidden",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("diagnose does not say %q (stderr %q):\n%s", want, stderr, text)
		}
	}
	for _, not := range []string{"— not found", "does not exist", "RD114", "every ReplicaSet"} {
		if strings.Contains(text, not) {
			t.Errorf("diagnose says %q of Services it did not read:\n%s", not, text)
		}
	}
}
