package diagnose

import (
	"strings"
	"testing"
	"time"

	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

func later(v *snapshot.View) { v.Now = v.Now.Add(3 * time.Minute) }

// The lab's Istio canaries of 5 at 20% with the stable at 3 available
// pods (v1.7.2 and v1.10.2), and states around them where the stable's
// pods carry their share.
var stableLoadCases = []labCase{
	{name: "paused at 20%, two of 5 stable pods unready a minute (v1.7.2)", file: exampletest.LabIstioPausedStableShort17, ver: "v1.7.2", fires: true, sev: rules.Warning,
		says: "80% of traffic on the stable app-55594bfb's 3 available pods: that share needs 4 of 5", do: "Wait for app-55594bfb-2lvl2 app-55594bfb-jst4d to turn Ready"},
	{name: "paused at 20%, two of 5 stable pods hung (v1.10.2)", file: exampletest.LabIstioPausedStableShort, ver: "v1.10.2", edit: later, fires: true, sev: rules.Critical,
		says: "80% of traffic on the stable app-757dcfcc6d's 3 available pods: that share needs 4 of 5; app-757dcfcc6d-fdmj2 app-757dcfcc6d-hblcc have not been Ready for minutes, so it does not end by itself",
		do:   "`kubectl delete pod -n nw-v1102 app-757dcfcc6d-fdmj2 app-757dcfcc6d-hblcc`"},
	{name: "dynamicStableScale paused at 20%, one of 4 stable pods hung (v1.10.2)", file: exampletest.LabDSSPausedStableHung, ver: "v1.10.2", edit: later, fires: true, sev: rules.Critical,
		says: "that share needs 4 of 5 (dynamicStableScale sized it for that share, 4 pods); app-757dcfcc6d-cbxbg has not been Ready", do: "`kubectl delete pod -n dw-v1102 app-757dcfcc6d-cbxbg`"},
	{name: "dynamicStableScale aborted, the stable sized for 80% (v1.10.2)", file: exampletest.LabDSSAbortedStableHung, ver: "v1.10.2", edit: later, fires: true, sev: rules.Critical,
		says: "80% of traffic on the stable app-6d7d6d5fd8's 3 available pods"},
	{name: "undone, the router at 20% with the canary Service on the stable (v1.10.2)", file: exampletest.LabIstioUndoneStableShort, ver: "v1.10.2", fires: true, sev: rules.Critical,
		says: "100% of traffic on the stable app-757dcfcc6d's 3 available pods: that share needs 5 of 5 (the router still sends 20% to the canary Service, which already selects the stable's pods)"},
	{name: "dynamicStableScale aborted, the stable scaled back to 5 (v1.7.2)", file: exampletest.LabDSSAbortedStableHung17, ver: "v1.7.2", edit: later},
	{name: "dynamicStableScale undone, 80% on 4 of 5 (v1.10.2)", file: exampletest.LabDSSUndoneStableHung, ver: "v1.10.2", edit: later},
	{name: "paused at 20%, one of 5 stable pods hung: 4 carry 80%", file: exampletest.LabIstioStableHung, ver: "v1.10.2", edit: later},
	{name: "paused at 20%, a hung pod's replacement Ready: 4 carry 80%", file: exampletest.LabIstioPausedStableShort, ver: "v1.10.2", edit: func(v *snapshot.View) {
		later(v)
		for _, rs := range v.ReplicaSets {
			if rs.Name == "app-757dcfcc6d" {
				rs.Status.AvailableReplicas, rs.Status.ReadyReplicas = 4, 4
			}
		}
	}},
}

func TestStableOverCapacity(t *testing.T) {
	checkLabCases(t, "RD178", stableLoadCases, func(c labCase, r *Report, f *rules.Finding) {
		if _, ok := cited(*f, "tr.stable-check-call"); !ok {
			t.Errorf("%s: RD178 does not cite tr.stable-check-call", c.name)
		}
		if _, ok := cited(*f, "sv.canary-svc-target"); ok != strings.HasPrefix(f.Message, "100%") {
			t.Errorf("%s: RD178 cites the canary Service's switch: %v", c.name, ok)
		}
		// Pods that ran and went unready are the stable losing pods, not
		// #3372's weight moved onto pods it never had.
		if findingOf(r, "RD156") != nil {
			t.Errorf("%s: RD156 blames the controller for pods the stable lost", c.name)
		}
	})
}

// labCase is a lab fixture, edited, diagnosed on a version: whether rule
// fires, at which severity, saying and fixing what.
type labCase struct {
	name, file string
	ver        upstream.Version
	edit       func(*snapshot.View)
	fires      bool
	sev        rules.Severity
	says, do   string
}

// checkLabCases runs the cases for rule id; more checks each finding.
func checkLabCases(t *testing.T, id string, cases []labCase, more func(labCase, *Report, *rules.Finding)) {
	t.Helper()
	for _, c := range cases {
		v := exampletest.View(t, c.file)
		if c.edit != nil {
			c.edit(v)
		}
		r := Run(v, model.ControllerVersion{Assumed: c.ver, Source: model.SourceFlag, Exact: true}, Options{})
		f := findingOf(r, id)
		if (f != nil) != c.fires {
			t.Errorf("%s: %s %+v, want fires=%v", c.name, id, f, c.fires)
			continue
		}
		if f == nil {
			continue
		}
		if f.Severity != c.sev || !strings.Contains(f.Message, c.says) || !strings.Contains(f.Remediation, c.do) {
			t.Errorf("%s: %s %s %q\nfix %q\nwant %s, %q, %q", c.name, id, f.Severity, f.Message, f.Remediation, c.sev, c.says, c.do)
		}
		more(c, r, f)
	}
}

// The lab's ALB canary that adopted ping-pong with new Services (#5006,
// v1.10.2): pong, the stable one, selects the canary's pod too.
var pingPongCases = []struct {
	name  string
	ver   upstream.Version
	edit  func(*snapshot.View)
	fires bool
}{
	{name: "ping-pong adopted, pong (stable) without a hash, paused at 25% (lab v1.10.2)", ver: "v1.10.2", fires: true},
	{name: "the same on v1.7.2, which has the same code", ver: "v1.7.2", fires: true},
	{name: "pong patched to the stable's hash", ver: "v1.10.2", edit: func(v *snapshot.View) {
		for _, s := range v.Workload.Services {
			if s.Name == "app-pong" {
				s.Spec.Selector = map[string]string{"app": "app", "rollouts-pod-template-hash": v.Rollout.Status.StableRS}
			}
		}
	}},
	{name: "after a promotion: ping the stable one, on the stable's hash, pong on the canary's", ver: "v1.10.2", edit: func(v *snapshot.View) {
		v.Rollout.Status.Canary.StablePingPong = "ping"
		for _, s := range v.Workload.Services {
			switch s.Name {
			case "app-ping":
				s.Spec.Selector = map[string]string{"app": "app", "rollouts-pod-template-hash": v.Rollout.Status.StableRS}
			case "app-pong":
				s.Spec.Selector = map[string]string{"app": "app", "rollouts-pod-template-hash": v.Rollout.Status.CurrentPodHash}
			}
		}
	}},
	{name: "the canary scaled down after an abort", ver: "v1.10.2", edit: func(v *snapshot.View) {
		for _, rs := range v.ReplicaSets {
			if rs.Name != "app-"+v.Rollout.Status.StableRS {
				rs.Status.AvailableReplicas, rs.Status.ReadyReplicas = 0, 0
			}
		}
	}},
}

func TestPingPongStableSelector(t *testing.T) {
	for _, c := range pingPongCases {
		v := exampletest.View(t, exampletest.LabPingPongAdopted)
		if c.edit != nil {
			c.edit(v)
		}
		r := Run(v, model.ControllerVersion{Assumed: c.ver, Source: model.SourceFlag, Exact: true}, Options{})
		f := findingOf(r, "RD179")
		if (f != nil) != c.fires {
			t.Errorf("%s: RD179 %+v, want fires=%v", c.name, f, c.fires)
			continue
		}
		if f == nil {
			continue
		}
		for _, want := range []string{
			`ping-pong: Service app-pong, the stable one (status.canary.stablePingPong ""), selects the canary app-5c6547567c's pods (selector {app=app}, not the stable's rollouts-pod-template-hash)`,
			"the router's 75% for the stable reaches the canary's 1 available pod as well as the stable's 4: the canary takes about 40%, not 25%",
			`kubectl patch service app-pong -n pr-v1102 --type merge -p '{"spec":{"selector":{"rollouts-pod-template-hash":"8674898df6"}}}'`,
		} {
			if !strings.Contains(f.Message, want) {
				t.Errorf("%s: RD179 %q\nwant %q", c.name, f.Message, want)
			}
		}
		for _, k := range []upstream.Key{"pp.stable-is-ping", "pp.canary-service-new", "sv.no-name-no-target"} {
			if _, ok := cited(*f, k); !ok {
				t.Errorf("%s: RD179 does not cite %s", c.name, k)
			}
		}
	}
}
