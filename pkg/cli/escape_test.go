package cli

import (
	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"

	"bytes"
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/escape"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/gather"
)

// fakeCluster serves the bundled example through a fake dynamic client and
// records every patch it receives.
type fakeCluster struct {
	dc      *dynfake.FakeDynamicClient
	patches []k8stesting.PatchAction
	// rollout is the Rollout runOn diagnoses ("" for the incident's
	// checkout-api).
	rollout string
}

func newFakeCluster(t *testing.T) *fakeCluster {
	t.Helper()
	objs := exampletest.Objects(t, exampletest.Incident, func(o *unstructured.Unstructured) {
		if o.GetKind() == "Rollout" {
			o.SetResourceVersion("4242")
		}
	})
	fc := &fakeCluster{dc: dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), gather.ListKinds(), objs...)}
	fc.dc.PrependReactor("patch", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		fc.patches = append(fc.patches, a.(k8stesting.PatchAction))
		return false, nil, nil
	})
	return fc
}

// connect hands out the fake as the command's cluster connection.
func (fc *fakeCluster) connect(*genericclioptions.ConfigFlags, ...func(*rest.Config)) (*gather.Connection, error) {
	return gather.FromClient(fc.dc), nil
}

func runEscape(t *testing.T, fc *fakeCluster, interactive bool, stdin string, args ...string) (string, string, int) {
	t.Helper()
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	streams := genericiooptions.IOStreams{In: strings.NewReader(stdin), Out: out, ErrOut: errOut}
	flags := genericclioptions.NewConfigFlags(true)
	ns := "shop"
	flags.Namespace = &ns
	o := NewEscapeOptions(flags, streams)
	o.connect = fc.connect
	o.interactive = func() bool { return interactive }
	cmd := newEscapeCommand(o)
	cmd.SetArgs(append([]string{"checkout-api", "--color", "never", "--watch-timeout", "0"}, args...))
	cmd.SetOut(out)
	cmd.SetErr(errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(context.Background())
	return out.String(), errOut.String() + errString(err), Code(err)
}

func TestEscapeNeverWritesWithoutConfirmation(t *testing.T) {
	fc := newFakeCluster(t)
	_, stderr, code := runEscape(t, fc, false, "", "--do", "undo")
	if code != ExitUsage || !strings.Contains(stderr, "nothing written") || len(fc.patches) != 0 {
		t.Fatalf("code %d, %d patches, stderr %q: want a refusal and no write", code, len(fc.patches), stderr)
	}
	// In a terminal, a wrong name cancels.
	_, stderr, code = runEscape(t, fc, true, "checkout\n", "--do", "undo")
	if code != ExitOK || !strings.Contains(stderr, "cancelled") || len(fc.patches) != 0 {
		t.Fatalf("code %d, %d patches, stderr %q: want cancelled and no write", code, len(fc.patches), stderr)
	}
	// Plan only, without --do, outside a terminal: read-only.
	out, _, code := runEscape(t, fc, false, "")
	if code != ExitOK || !strings.Contains(out, "Recommended: undo") || len(fc.patches) != 0 {
		t.Fatalf("code %d, %d patches; plan:\n%s", code, len(fc.patches), out)
	}
	// Client dry run prints the requests and sends nothing.
	out, _, code = runEscape(t, fc, false, "", "--do", "undo", "--dry-run=client")
	if code != ExitOK || !strings.Contains(out, `"path":"/metadata/resourceVersion","value":"4242"`) || len(fc.patches) != 0 {
		t.Fatalf("code %d, %d patches; dry run:\n%s", code, len(fc.patches), out)
	}
}

func TestEscapeUndoSendsPreconditionedTemplatePatch(t *testing.T) {
	fc := newFakeCluster(t)
	_, stderr, code := runEscape(t, fc, false, "", "--do", "undo", "--yes")
	if code != ExitOK || len(fc.patches) != 1 {
		t.Fatalf("code %d, %d patches, stderr %q", code, len(fc.patches), stderr)
	}
	p := fc.patches[0]
	body := string(p.GetPatch())
	if p.GetPatchType() != "application/json-patch+json" || p.GetSubresource() != "" ||
		!strings.HasPrefix(body, `[{"op":"replace","path":"/metadata/resourceVersion","value":"4242"},{"op":"replace","path":"/spec/template"`) {
		t.Fatalf("patch %s %q: %s", p.GetPatchType(), p.GetSubresource(), body)
	}
	// The restored template is revision 6's (the stable), without its hash label.
	if !strings.Contains(body, `"image":"registry.example/checkout-api:2026.08.10-3"`) || strings.Contains(body, "rollouts-pod-template-hash") {
		t.Fatalf("template patch: %s", body)
	}
}

func TestEscapeHarmfulNeedsForce(t *testing.T) {
	fc := newFakeCluster(t)
	_, stderr, code := runEscape(t, fc, false, "", "--do", "abort", "--yes")
	if code != ExitUsage || !strings.Contains(stderr, "harmful") || len(fc.patches) != 0 {
		t.Fatalf("code %d, %d patches, stderr %q", code, len(fc.patches), stderr)
	}
	_, stderr, code = runEscape(t, fc, false, "", "--do", "abort", "--yes", "--force")
	if code != ExitOK || len(fc.patches) != 1 {
		t.Fatalf("code %d, %d patches, stderr %q", code, len(fc.patches), stderr)
	}
	p := fc.patches[0]
	if p.GetSubresource() != "status" || string(p.GetPatch()) != `{"metadata":{"resourceVersion":"4242"},"status":{"abort":true}}` {
		t.Fatalf("abort patch to %q: %s", p.GetSubresource(), p.GetPatch())
	}
}

func TestEscapeConflictIsReplannedNeverBlindlyRetried(t *testing.T) {
	// The Rollout keeps changing: every write meets 409. The tool re-reads
	// and re-plans a bounded number of times, then gives up; nothing written.
	fc := newFakeCluster(t)
	attempts, gets := 0, 0
	fc.dc.PrependReactor("patch", "rollouts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		attempts++
		return true, nil, apierrors.NewConflict(schema.GroupResource{Group: "argoproj.io", Resource: "rollouts"}, "checkout-api", nil)
	})
	fc.dc.PrependReactor("get", "rollouts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		gets++
		return false, nil, nil
	})
	_, stderr, code := runEscape(t, fc, false, "", "--do", "undo", "--yes")
	if code != ExitError || !strings.Contains(stderr, "changed since it was read (resourceVersion 4242)") {
		t.Fatalf("code %d, stderr %q", code, stderr)
	}
	if attempts != 1+escape.MaxReplans || gets != 1+escape.MaxReplans {
		t.Fatalf("%d writes after %d reads: every write must follow its own fresh read, %d at most", attempts, gets, 1+escape.MaxReplans)
	}
	// A conflict once: re-planned, same requests, written.
	fc = newFakeCluster(t)
	attempts = 0
	fc.dc.PrependReactor("patch", "rollouts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		attempts++
		if attempts == 1 {
			return true, nil, apierrors.NewConflict(schema.GroupResource{Group: "argoproj.io", Resource: "rollouts"}, "checkout-api", nil)
		}
		return false, nil, nil
	})
	_, stderr, code = runEscape(t, fc, false, "", "--do", "undo", "--yes")
	if code != ExitOK || attempts != 2 || !strings.Contains(stderr, "re-planned: undo is still safe-with-cost with the same requests") {
		t.Fatalf("code %d, %d attempts, stderr %q", code, attempts, stderr)
	}
}

func TestEscapeGuidedTypedConfirmation(t *testing.T) {
	fc := newFakeCluster(t)
	out, stderr, code := runEscape(t, fc, true, "2\ncheckout-api\n")
	if code != ExitOK || len(fc.patches) != 1 || !strings.Contains(out, "Type the Rollout's name (checkout-api)") {
		t.Fatalf("code %d, %d patches, stderr %q\n%s", code, len(fc.patches), stderr, out)
	}
	if !strings.Contains(out, "PATCH rollout shop/checkout-api (json)") {
		t.Fatalf("the exact patch was not shown before confirming:\n%s", out)
	}
}
