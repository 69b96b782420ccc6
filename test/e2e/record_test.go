//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/timeline"
)

// fieldManager is the field manager of the suite's own writes (kubectl
// patch --field-manager): the timeline must name it as their author.
const fieldManager = "rolloutdoctor-e2e"

// recording is `kubectl rolloutdoctor record` running in the background.
type recording struct {
	cmd    *exec.Cmd
	path   string
	stderr bytes.Buffer
	done   chan error
}

// startRecording starts the plugin's record of the scenario's Rollout and
// waits until the streams the comparison reads (the Rollout, its
// ReplicaSets, the VirtualService) are listed: the watches go on from
// those lists, so nothing written afterwards can be missed.
func (h *harness) startRecording() *recording {
	h.t.Helper()
	r := &recording{path: filepath.Join(h.t.TempDir(), "incident.rec"), done: make(chan error, 1)}
	r.cmd = exec.Command(plugin, "record", "app", "-n", h.ns, "--kubeconfig", kubeconfig, "-o", r.path, "--settle", "0")
	r.cmd.Stderr = &r.stderr
	if err := r.cmd.Start(); err != nil {
		h.t.Fatalf("starting record: %v", err)
	}
	go func() { r.done <- r.cmd.Wait() }()
	h.t.Cleanup(func() { r.cmd.Process.Kill() })
	h.waitFor("the record to list the Rollout, its ReplicaSets and the VirtualService", 30*time.Second, func() bool {
		data, _ := os.ReadFile(r.path)
		return bytes.Contains(data, []byte(`"resource":"rollouts.argoproj.io"`)) && bytes.Contains(data, []byte(`"resource":"replicasets.apps"`)) &&
			bytes.Contains(data, []byte(`"resource":"virtualservices.networking.istio.io"`))
	})
	return r
}

// stop ends the record as Ctrl-C does; it must exit 0 with the record
// closed.
func (r *recording) stop(h *harness) {
	h.t.Helper()
	r.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-r.done:
		if err != nil {
			h.t.Fatalf("record exited with %v\n%s", err, r.stderr.String())
		}
	case <-time.After(30 * time.Second):
		h.t.Fatalf("record did not end within 30 s of Ctrl-C\n%s", r.stderr.String())
	}
	if !strings.Contains(r.stderr.String(), "record ended (interrupted)") {
		h.t.Errorf("record's last words: %s", r.stderr.String())
	}
}

// listedFrom is the revision from which every stream of the record is
// complete: the highest resourceVersion of its lists.
func (r *recording) listedFrom(h *harness) int64 {
	h.t.Helper()
	f, err := os.Open(r.path)
	if err != nil {
		h.t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	var from int64
	for sc.Scan() {
		var c snapshot.Change
		if json.Unmarshal(sc.Bytes(), &c) != nil || c.Type != snapshot.ChangeListed || c.Resource == "snapshot" {
			continue
		}
		rv, _ := strconv.ParseInt(c.ResourceVersion, 10, 64)
		from = max(from, rv)
	}
	return from
}

// stdout runs the plugin and returns its stdout; exit codes 0 and 1
// (findings) are accepted.
func (h *harness) stdout(args ...string) []byte {
	h.t.Helper()
	cmd := exec.Command(plugin, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		h.t.Fatalf("kubectl-rolloutdoctor %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.Bytes()
}

// checkRecording compares the record of the incident (or its fix) with
// what the suite's own observer saw: the timeline's canary weight (the
// VirtualService's) and every ReplicaSet's size and availability equal the
// observer's at every etcd revision from the moment the record was
// complete; the revert is attributed to the suite's field manager; and the
// record replayed at its worst moment reports RD101 with that moment's
// counts. It records a fidelity row.
func (h *harness) checkRecording(name string, r *recording, o *observer, hashA string, final100 bool) {
	h.t.Helper()
	from := r.listedFrom(h)
	out := h.stdout("timeline", "-f", r.path, "-o", "json")
	var tl timeline.Timeline
	if err := json.Unmarshal(out, &tl); err != nil {
		h.t.Fatalf("timeline -o json: %v\n%s", err, out)
	}
	// The two step functions over etcd revisions, compared at every
	// revision either of them changes.
	ss := o.Samples()
	var revs []int64
	for _, s := range ss {
		if s.RV >= from {
			revs = append(revs, s.RV)
		}
	}
	for _, p := range tl.Series {
		if rv, _ := strconv.ParseInt(p.ResourceVersion, 10, 64); rv >= from {
			revs = append(revs, rv)
		}
	}
	obsAt := func(rv int64) (sample, bool) {
		var cur sample
		ok := false
		for _, s := range ss {
			if s.RV > rv {
				break
			}
			cur, ok = s, true
		}
		return cur, ok
	}
	tlAt := func(rv int64) (timeline.Point, bool) {
		var cur timeline.Point
		ok := false
		for _, p := range tl.Series {
			if x, _ := strconv.ParseInt(p.ResourceVersion, 10, 64); x > rv {
				break
			}
			cur, ok = p, true
		}
		return cur, ok
	}
	compared, diffs := 0, 0
	for _, rv := range revs {
		s, ok1 := obsAt(rv)
		p, ok2 := tlAt(rv)
		if !ok1 || !ok2 {
			continue
		}
		compared++
		if d := seriesDiff(s, p); d != "" {
			diffs++
			if diffs <= 5 {
				h.t.Errorf("at etcd revision %d the timeline differs from the observer: %s", rv, d)
			}
		}
	}
	if compared < 10 {
		h.t.Errorf("only %d revisions compared (record complete from %d, %d samples, %d points)", compared, from, len(ss), len(tl.Series))
	}
	// Who reverted the template: the suite, by its field manager.
	var revert *timeline.Entry
	for i, e := range tl.Entries {
		if e.Kind == timeline.KindSpec && strings.HasSuffix(e.Message, "registry.example/app:b → registry.example/app:a") {
			revert = &tl.Entries[i]
		}
	}
	if revert == nil || revert.By == nil || revert.By.Manager != fieldManager || !revert.Human() {
		h.t.Errorf("the revert's entry is %+v: want it by %s, a person or tool", revert, fieldManager)
	}
	// The worst moment, replayed.
	w, exposed := tl.Worst()
	replay := "no moment with the weight on too few pods"
	if exposed {
		// --at T replays every change recorded at T: where several share
		// the instant (a change is never replayed before the one recorded
		// ahead of it, so it may take that one's time), the last of them is
		// the state it shows.
		at := w
		for _, p := range tl.Series {
			if p.At.Equal(w.At) && p.Weight != nil {
				at = p
			}
		}
		c, _ := at.Count(w.Canary)
		var rep diagnose.Report
		rout := h.stdout("diagnose", "-f", r.path, "--at", w.At.Format(time.RFC3339Nano), "-o", "json")
		if err := json.Unmarshal(rout, &rep); err != nil {
			h.t.Fatalf("diagnose --at: %v\n%s", err, rout)
		}
		want := fmt.Sprintf("%d%% of traffic on %d of 20 pods", *at.Weight, c.Available)
		rd101 := ""
		for _, f := range rep.Findings {
			if f.ID == "RD101" {
				rd101 = f.Message
			}
		}
		replay = fmt.Sprintf("worst %s at revision %s: diagnose --at: RD101 %q", want, w.ResourceVersion, rd101)
		if !strings.HasPrefix(rd101, want) || w.Canary != hashA {
			h.t.Errorf("diagnose --at the worst moment (%s on %s): RD101 %q, want %q on %s", w.At.Format(time.RFC3339Nano), w.Canary, rd101, want, hashA)
		}
	}
	if exposed != final100 {
		h.t.Errorf("the timeline's worst moment exists: %v; the incident (final setWeight 100) should have one and the fix none", exposed)
	}
	h.record(name+": record and timeline",
		"timeline equal to the observer at every etcd revision; the revert by "+fieldManager+"; "+map[bool]string{true: "RD101 replayed at the worst moment", false: "no moment on too few pods"}[final100],
		fmt.Sprintf("%d revisions compared, %d differ; revert by %s; %s", compared, diffs, byOf(revert), replay))
}

func byOf(e *timeline.Entry) string {
	if e == nil || e.By == nil {
		return "nobody"
	}
	return e.By.Manager
}

// seriesDiff compares the observer's state with the timeline's: the canary
// weight the VirtualService holds, and every ReplicaSet's size and
// availability ("" when equal).
func seriesDiff(s sample, p timeline.Point) string {
	var d []string
	if p.RouterWeight == nil || *p.RouterWeight != s.CanaryWeight {
		w := "none"
		if p.RouterWeight != nil {
			w = fmt.Sprint(*p.RouterWeight)
		}
		d = append(d, fmt.Sprintf("weight %d observed, %s in the timeline", s.CanaryWeight, w))
	}
	hashes := map[string]bool{}
	for h := range s.RS {
		hashes[h] = true
	}
	for _, c := range p.Replicas {
		hashes[c.Hash] = true
	}
	for h := range hashes {
		obs := s.RS[h]
		c, _ := p.Count(h)
		if int64(c.Spec) != obs.Spec || int64(c.Available) != obs.Available {
			d = append(d, fmt.Sprintf("ReplicaSet %s %d/%d observed, %d/%d in the timeline", h, obs.Available, obs.Spec, c.Available, c.Spec))
		}
	}
	return strings.Join(d, "; ")
}
