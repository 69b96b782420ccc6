//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
)

func init() {
	scenarios = append(scenarios, scenario{"stable-deleted", stableDeletedScenario})
}

// stableDeletedScenario: the stable ReplicaSet deleted at the first pause
// (someone cleaning up, or restarting its pods with `kubectl delete rs`).
// The controller finds the stable only by status.stableRS's hash, so it
// has none and promotes the canary at once as an "Initial deploy" (RD169).
// The prediction is diagnose's over the snapshot taken at the pause less
// that ReplicaSet (the state the controller's next pass reads); then the
// ReplicaSet is deleted and the controller's writes are compared; and
// afterwards diagnose reads the promotion from the controller's event.
func stableDeletedScenario(t *testing.T, h *harness) {
	spec := rolloutSpec{replicas: 4, steps: "[{setWeight: 20}, {pause: {}}, {setWeight: 60}, {pause: {}}]", mode: hostMode}
	o := h.observe(isCanaryDest(hostMode))
	stable, _ := h.firstPause(o, spec, 20)
	h.settled(o, 2*time.Second, 60*time.Second)
	snap := h.stdout("snapshot", "app", "-n", h.ns, "--kubeconfig", kubeconfig)
	var list struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Items      []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(snap, &list); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	kept := list.Items[:0]
	for _, it := range list.Items {
		var m struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(it, &m)
		if m.Kind == "ReplicaSet" && m.Metadata.Name == "app-"+stable {
			continue
		}
		kept = append(kept, it)
	}
	if len(kept) == len(list.Items) {
		t.Fatalf("the snapshot holds no ReplicaSet app-%s", stable)
	}
	list.Items = kept
	b, _ := json.Marshal(list)
	file := filepath.Join(t.TempDir(), "without-stable.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(plugin, "diagnose", "-f", file, "-o", "json", "--controller-version", h.version)
	var out bytes.Buffer
	cmd.Stdout = &out
	_ = cmd.Run() // exit 1: findings
	rep := &diagnose.Report{}
	if err := json.Unmarshal(out.Bytes(), rep); err != nil {
		t.Fatalf("diagnose -f: %v\n%s", err, out.String())
	}
	if sev := severityOf(rep, "RD169"); sev != "critical" {
		t.Errorf("RD169 over the snapshot less the stable ReplicaSet: %s, want critical", sev)
	}
	// "app-X becomes stable on this pass (REASON)": who and why.
	promoted, why := "", ""
	if rep.Traffic != nil {
		promoted, why, _ = strings.Cut(rep.Traffic.NextPromotes, " becomes stable on this pass (")
		why = strings.TrimSuffix(why, ")")
	}
	// The promoting pass sizes the canary for its step's weight; the
	// next, with the canary stable, for every replica: the forecast's
	// largest size is where it goes.
	grows := int32(0)
	if rep.Model != nil {
		for _, f := range rep.Model.Forecast {
			grows = max(grows, f.CanaryTarget)
		}
	}
	pred := fmt.Sprintf("%s stable (%s); canary to %d", promoted, why, grows)
	from := time.Now()
	h.kubectl("-n", h.ns, "delete", "rs", "app-"+stable, "--wait=false")
	h.waitFor("another ReplicaSet to become stable", 60*time.Second, func() bool {
		_, s, _, _, _ := h.status()
		return s != stable
	})
	h.settled(o, 3*time.Second, 60*time.Second)
	_, now, _, _, _ := h.status()
	size := int64(0)
	for _, x := range o.Samples() {
		if x.At.After(from) && x.RS[now].Spec > size {
			size = x.RS[now].Spec
		}
	}
	// The controller's reason, from its RolloutCompleted event.
	events := h.kubectl("-n", h.ns, "get", "events", "--field-selector", "reason=RolloutCompleted", "-o", "jsonpath={range .items[*]}{.message}{\"\\n\"}{end}")
	reason := ""
	for _, l := range strings.Split(events, "\n") {
		if _, r, ok := strings.Cut(l, "("+now+"): "); ok {
			reason = r
		}
	}
	obs := fmt.Sprintf("app-%s stable (%s); canary to %d", now, reason, size)
	h.record("the stable ReplicaSet deleted at the pause at setWeight 20 of 4 (diagnose over the snapshot less it: RD169 critical): who becomes stable, why, the canary's size", pred, obs)
	if pred != obs {
		t.Errorf("diagnose over the snapshot less the stable ReplicaSet: %s; the controller then: %s\n%s", pred, obs, h.dump())
	}
	after := severityOf(h.diagnose("app"), "RD169")
	h.record("the stable ReplicaSet deleted: afterwards (the controller's event)", "warning", after)
	if after != "warning" {
		t.Errorf("RD169 after the promotion: %s, want warning from the event\n%s", after, h.dump())
	}
}
