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

// The lab states of an Istio canary of 5 with dynamicStableScale and one
// stable pod hung, on v1.7.2 and v1.10.2: after an undo both read Healthy
// with the router at 80/20 and the canary Service on the aborted canary.
var dssCases = []labCase{
	{name: "undone, the stable pod hung (lab v1.10.2)", file: exampletest.LabDSSUndoneStableHung, ver: "v1.10.2", fires: true, sev: rules.Critical,
		says: "the Rollout reads Healthy, but 20% of traffic still goes to app-84454fffb5 (revision 2), the revision it rolled back from: with dynamicStableScale the controller moves weight off it only as the stable app-6d7d6d5fd8's pods become available (4 of 5 now), and the canary Service selects its pods until then; app-6d7d6d5fd8-8vxzt has not been Ready for minutes, so it does not end by itself",
		do:   "`kubectl delete pod -n e10-2 app-6d7d6d5fd8-8vxzt`"},
	{name: "undone, the stable pod hung (lab v1.7.2)", file: exampletest.LabDSSUndoneStableHung17, ver: "v1.7.2", fires: true, sev: rules.Critical,
		says: "the Rollout reads Healthy, but 20% of traffic still goes to app-6787f8d5c (revision 2)", do: "`kubectl delete pod -n f7-2 app-66c7799588-cdmhs`"},
	{name: "undone, the stable pod unready a minute: it may still start", file: exampletest.LabDSSUndoneStableHung, ver: "v1.10.2", fires: true, sev: rules.Warning,
		edit: func(v *snapshot.View) { v.Now = v.Now.Add(-3 * time.Minute) },
		says: "(4 of 5 now), and the canary Service selects its pods until then", do: "Wait for app-6d7d6d5fd8-8vxzt to turn Ready"},
	{name: "paused at 20% (lab v1.7.2)", file: exampletest.LabDSSPausedStableHung17, ver: "v1.7.2"},
	{name: "aborted, not undone", file: exampletest.LabDSSAbortedStableHung, ver: "v1.10.2"},
	{name: "undone without dynamicStableScale", file: exampletest.LabDSSUndoneStableHung, ver: "v1.10.2",
		edit: func(v *snapshot.View) { v.Rollout.Spec.Strategy.Canary.DynamicStableScale = false }},
	{name: "undone, the stable complete", file: exampletest.LabDSSUndoneStableHung17, ver: "v1.7.2",
		edit: func(v *snapshot.View) {
			for _, rs := range v.ReplicaSets {
				if rs.Status.Replicas == 5 {
					rs.Status.AvailableReplicas, rs.Status.ReadyReplicas = 5, 5
				}
			}
		}},
}

func TestDynamicRollbackHoldsWeight(t *testing.T) {
	checkLabCases(t, "RD175", dssCases, func(c labCase, _ *Report, f *rules.Finding) {
		for _, k := range []upstream.Key{"tr.branch-rollback-to-stable", "tr.abort-weight-formula", "sv.dss-rollback-keeps-canary-svc", "ru.phase-available"} {
			if _, ok := cited(*f, k); !ok {
				t.Errorf("%s: RD175 does not cite %s", c.name, k)
			}
		}
	})
}

// Aborted with dynamicStableScale and a hung stable pod, both versions kept
// 20% on the canary (the lab): the abort's weight is the share the stable's
// available pods cannot take, which RD104 says — v1.7.2 has no stable
// availability check to blame, and v1.10.2 sizes the stable for the weight.
func TestAbortHeldByDynamicStableScale(t *testing.T) {
	for _, c := range []struct {
		file string
		ver  upstream.Version
		says string
	}{
		{exampletest.LabDSSAbortedStableHung17, "v1.7.2", "aborted, but traffic is not back on stable: 20% still goes to the canary: with dynamicStableScale an abort moves weight off the canary only as the stable's pods become available (4 of 5 now); the index"},
		{exampletest.LabDSSAbortedStableHung, "v1.10.2", "aborted, but traffic is not back on stable: 20% still goes to the canary: with dynamicStableScale an abort moves weight off the canary only as the stable's pods become available (3 of 5 now), and the stable is sized for that weight, 4 pods, until those it has are available; the index"},
	} {
		r := Run(exampletest.View(t, c.file), model.ControllerVersion{Assumed: c.ver, Source: model.SourceFlag, Exact: true}, Options{})
		f := findingOf(r, "RD104")
		if f == nil || !strings.HasPrefix(f.Message, c.says) {
			t.Errorf("%s: RD104 %+v\nwant %q", c.ver, f, c.says)
			continue
		}
		if _, ok := cited(*f, "tr.abort-weight-formula"); !ok {
			t.Errorf("%s: RD104 does not cite the abort weight", c.ver)
		}
		_, sized := cited(*f, "uc.desired-canary-weight-abort-dss")
		if sized != (c.ver == "v1.10.2") {
			t.Errorf("%s: RD104 cites the stable's sizing: %v", c.ver, sized)
		}
		seen := map[upstream.Cite]bool{}
		for _, ci := range f.Cites {
			if seen[ci] {
				t.Errorf("%s: RD104 cites %v twice", c.ver, ci)
			}
			seen[ci] = true
		}
	}
}

// The lab (v1.10.2, #4973): aborted at 0%, spec.replicas raised to 6 with
// three stable pods hung, the aborted canary sized 2 again with both pods
// available. RD177 says so on v1.10.2; v1.8.3's source has no such sizing.
func TestAbortedCanaryRescaled(t *testing.T) {
	for ver, fires := range map[upstream.Version]bool{"v1.10.2": true, "v1.9.3": true, "v1.8.3": false} {
		r := Run(exampletest.View(t, exampletest.LabDSSAbortedRescaled), model.ControllerVersion{Assumed: ver, Source: model.SourceFlag, Exact: true}, Options{})
		f := findingOf(r, "RD177")
		if (f != nil) != fires {
			t.Errorf("%s: RD177 %+v, want %v", ver, f, fires)
			continue
		}
		if f != nil && !strings.Contains(f.Message, "the stable app-6d7d6d5fd8 has 3 of 6 available and the aborted canary app-84454fffb5 is sized 2 (2 available)") {
			t.Errorf("%s: RD177 %s", ver, f.Message)
		}
	}
}
