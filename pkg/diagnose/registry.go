// Package diagnose turns a snapshot and a controller model into a report on
// one Rollout: where it is, what the controller will do next, and findings.
// It holds the Rollout checks — each a function keyed by its rule ID below,
// its prose (title, why, remedy, facts, sources) data in rules.yaml — and
// adds the pod checks' findings from pkg/podcheck.
package diagnose

import (
	_ "embed"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
)

//go:embed rules.yaml
var prose []byte

// checks are the Rollout rules, registered with their prose. IDs are
// permanent: append, never reuse. The known controller bugs' rules (RD112,
// RD150–RD158) come from the catalogue in bugs.go.
var checks = rules.Register(rules.AreaRollout, prose, bugRules(map[string]rules.Check[Context]{
	"RD101": checkCanaryOverCapacity,
	"RD102": checkCanaryOverCapacityNext,
	"RD103": checkWindow,
	"RD104": checkAborted,
	"RD105": checkProgressDeadline,
	"RD106": checkPaused,
	"RD107": checkRouterMismatch,
	"RD108": checkGates,
	"RD109": checkVersion,
	"RD110": checkGaps,
	"RD111": checkUnobserved,
	"RD201": checkFinal100,
	"RD202": checkSafePods,
	"RD203": checkMinPods,
	"RD204": checkDSS,
	"RD205": checkAbortDelayZero,
	"RD206": checkRPT,
	"RD207": checkMaxWeight,
	"RD208": checkAbortDelayResync,
	"RD113": checkInvalidSpec,
	"RD114": checkActiveBlackout,
	"RD115": checkPreviewNotReady,
	"RD116": checkCapacityCliff,
	"RD117": checkCheckpointLeak,
	"RD118": checkAbortHeld,
	"RD119": checkAnalysisAborted,
	"RD120": checkAnalysisProviderError,
	"RD121": checkAnalysisPassedWithoutData,
	"RD122": checkAnalysisInconclusive,
	"RD123": checkAnalysisDryRunWouldFail,
	"RD124": checkAnalysisArgs,
	"RD125": checkAnalysisOutlivesSteps,
	"RD209": checkScaleDownDelayZero,
	"RD210": checkScaleDownDelayShort,
	"RD159": checkControllerErrors,
	"RD160": checkSpecFight,
	"RD161": checkGitOpsOwner,
	"RD162": checkControllerLog,
	"RD163": checkExperiment,
	"RD164": checkManagedRoutes,
	"RD165": checkHPAStuck,
	"RD166": checkControllerDown,
	"RD167": checkBasicStall,
	"RD168": checkWorkloadRefPods,
	"RD169": checkStableMissing,
	"RD170": checkDeadlineDue,
	"RD172": checkRestart,
	"RD173": checkRestartStalled,
	"RD175": checkDynamicRollback,
	"RD178": checkStableOverCapacity,
	"RD185": checkPodsRefused,
	"RD211": checkTemplateMissing,
	"RD212": checkArgUnsupplied,
	"RD213": checkArgIgnored,
	"RD214": checkPassesWithoutData,
	"RD215": checkLimitUnreachable,
	"RD216": checkMetricInvalid,
	"RD217": checkRunsIndefinitely,
	"RD218": checkBackgroundWindow,
	"RD219": checkExperimentNeverEnds,
	"RD220": checkWorkloadRefReplicas,
	"RD221": checkAutoscalerOnCanary,
	"RD130": checkRouterObjectMissing,
	"RD131": checkRouterBackendNoEndpoints,
	"RD132": checkALBVerification,
	"RD133": checkPingPongOneReplicaSet,
	"RD134": checkWeightTotal,
	"RD135": checkRouterEditedElsewhere,
	"RD136": checkRouterWriteFailing,
	"RD137": checkPluginNotConfigured,
	"RD138": checkRouteNotAccepted,
	"RD139": checkALBActionReset,
	"RD230": checkNginxAnnotationWeights,
	"RD231": checkALBStickiness,
}))
