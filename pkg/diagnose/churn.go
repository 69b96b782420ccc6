package diagnose

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/router"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// History is what successive reads of one Rollout showed (diagnose
// --watch): for the Rollout and each of its router objects, who had last
// written the contested fields at each read that saw the object changed.
// A fight that one read cannot show — two writers taking the same fields
// from each other, each write removing the other's managedFields entry —
// shows here as the last writer alternating from read to read. A History
// is fed by Run (Options.History) and safe for one watch at a time.
type History struct {
	// Window is how far back alternations count (default 1 minute).
	Window time.Duration
	// Min is how many alternations within Window make a fight (default 3:
	// A→B→A→B, each writer undoing the other at least once more after
	// the first change).
	Min int

	mu   sync.Mutex
	objs map[string][]Turn
	// newest is the newest resourceVersion seen of each object: a read
	// that comes back after a watch event of a newer version (or the same
	// one) adds nothing.
	newest map[string]string
	// writers and writer are the Rollout's spec writers at that version
	// and the one whose write it was.
	writers map[string][]snapshot.FieldWriter
	writer  map[string]string
}

// Turn is one read that saw an object at a new resourceVersion.
type Turn struct {
	At              time.Time `json:"at"`
	Manager         string    `json:"manager"`
	ResourceVersion string    `json:"resourceVersion"`
	// Generation is the Rollout's metadata.generation (0 for router objects).
	Generation int64 `json:"generation,omitempty"`
	// Canary is a router object's canary weight at that read.
	Canary *int64 `json:"canary,omitempty"`
}

// Churn is a fight seen over a watch window: the writers of one object's
// contested fields alternating between reads.
type Churn struct {
	Object string `json:"object"`
	// Managers are the writers that alternated, in order of first turn.
	Managers []string `json:"managers"`
	// Alternations counts reads whose last writer differed from the read
	// before, within Window.
	Alternations int `json:"alternations"`
	// Span is the time from the first to the last turn counted.
	Span   time.Duration `json:"span"`
	Window time.Duration `json:"window"`
	// Generations counts the Rollout's spec generations seen in the window
	// (each a spec write: restarting the controller's work).
	Generations int `json:"generations,omitempty"`
	// Weights are a router object's canary weights at each turn counted.
	Weights []int64 `json:"weights,omitempty"`
}

// NewHistory is a History with the default window and threshold.
func NewHistory() *History { return &History{Window: time.Minute, Min: 3} }

func (h *History) defaults() {
	if h.Window <= 0 {
		h.Window = time.Minute
	}
	if h.Min <= 0 {
		h.Min = 3
	}
}

// Observe adds one read of object: a new turn when its resourceVersion
// changed since the last one seen, and returns the fight its turns within
// the window make (nil when none). manager "" (no managedFields entry for
// the fields) is not a turn. Turns older than the window are forgotten.
func (h *History) Observe(object string, t Turn) *Churn {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.observe(object, t, nil, false)
}

// observeSpec is Observe for one version of a Rollout: the turn's manager
// is the writer of that version among its spec writers ws (newest first).
func (h *History) observeSpec(object string, t Turn, ws []snapshot.FieldWriter) *Churn {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.observe(object, t, ws, true)
}

func (h *History) observe(object string, t Turn, ws []snapshot.FieldWriter, spec bool) *Churn {
	h.defaults()
	if h.objs == nil {
		h.objs = map[string][]Turn{}
		h.newest = map[string]string{}
		h.writers = map[string][]snapshot.FieldWriter{}
		h.writer = map[string]string{}
	}
	ts := h.objs[object]
	if !newerVersion(t.ResourceVersion, h.newest[object]) {
		return h.churn(object, ts)
	}
	h.newest[object] = t.ResourceVersion
	if spec {
		t.Manager = specWriter(h.writers[object], h.writer[object], ws)
		h.writers[object], h.writer[object] = ws, t.Manager
	}
	if t.Manager != "" && (len(ts) == 0 || ts[len(ts)-1].ResourceVersion != t.ResourceVersion) {
		ts = append(ts, t)
	}
	cut := 0
	for cut < len(ts)-1 && t.At.Sub(ts[cut].At) > h.Window {
		cut++
	}
	ts = ts[cut:]
	h.objs[object] = ts
	return h.churn(object, ts)
}

// newerVersion reports whether resourceVersion rv is newer than seen.
// resourceVersions are opaque by the API conventions, but an etcd-backed
// API server's are its etcd revision, a decimal integer without leading
// zeros, and upstream has since made comparing them supported
// (k8s.io/apimachinery v0.36.1, pkg/util/resourceversion/resourceversion.go:45).
// Anything else is only told apart by being different.
func newerVersion(rv, seen string) bool {
	if seen == "" || rv == seen {
		return seen == ""
	}
	if !decimal(rv) || !decimal(seen) {
		return true
	}
	if len(rv) != len(seen) {
		return len(rv) > len(seen)
	}
	return rv > seen
}

func decimal(s string) bool {
	if s == "" || s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// specWriter is the manager (not the controller) whose write made the
// Rollout version whose spec writers are ws, newest first, given the
// writers and the writer at the version seen before it (none at the
// first). managedFields times are whole seconds: a GitOps sync that puts
// the template back within a second of a deploy ties with it on time,
// and then managedFields order, not time, decides the newest. But a write
// takes the fields it changes from every other manager (the API server's
// structured-merge-diff v6.3.0, merge/update.go:146), so the writer is the
// one that is new, has a later time, or owns more fields than before. When
// none does (the controller's own write, a status write), it is the writer
// before; at the first version, the newest by time.
func specWriter(prev []snapshot.FieldWriter, before string, ws []snapshot.FieldWriter) string {
	was := make(map[string]snapshot.FieldWriter, len(prev))
	for _, w := range prev {
		was[w.Manager+"/"+w.Operation] = w
	}
	newest, stays := "", false
	for _, w := range ws {
		if isController(w.Manager) {
			continue
		}
		if newest == "" {
			newest = w.Manager
		}
		stays = stays || w.Manager == before
		b, ok := was[w.Manager+"/"+w.Operation]
		if !ok || w.Time.After(b.Time) || w.Owned > b.Owned {
			return w.Manager
		}
	}
	if stays {
		return before
	}
	return newest
}

// churn counts the alternations of ts (oldest first).
func (h *History) churn(object string, ts []Turn) *Churn {
	c := &Churn{Object: object, Window: h.Window}
	seen := map[string]bool{}
	gens := map[int64]bool{}
	first := -1
	for i, t := range ts {
		if !seen[t.Manager] {
			seen[t.Manager] = true
			c.Managers = append(c.Managers, t.Manager)
		}
		if t.Generation > 0 {
			gens[t.Generation] = true
		}
		if i > 0 && t.Manager != ts[i-1].Manager {
			c.Alternations++
			if first < 0 {
				first = i - 1
			}
		}
	}
	if c.Alternations < h.Min || len(c.Managers) < 2 {
		return nil
	}
	c.Span = ts[len(ts)-1].At.Sub(ts[first].At)
	c.Generations = len(gens)
	for _, t := range ts[first:] {
		if t.Canary != nil {
			c.Weights = append(c.Weights, *t.Canary)
		}
	}
	return c
}

// Says is "argocd-controller and rollouts-controller took turns 4 times in
// 12s (what the watch saw within 1m0s)".
func (c *Churn) Says() string {
	return fmt.Sprintf("%s took turns %d times in %s (what the watch saw within %s)",
		joinAnd(c.Managers), c.Alternations, c.Span.Round(time.Second), c.Window)
}

func joinAnd(s []string) string {
	if len(s) <= 1 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// ObserveEvent adds one object a watch delivered at time at: the Rollout
// (its newest spec writer other than the controller, its generation) or a
// router object (the last writer of its weights, router.WeightWriter).
// Watch events carry every resourceVersion, also a sync's write the
// controller answers within the same second, which the next full read no
// longer shows.
func (h *History) ObserveEvent(u *unstructured.Unstructured, at time.Time) {
	t := Turn{At: at, ResourceVersion: u.GetResourceVersion()}
	key := u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
	if u.GetKind() == "Rollout" {
		t.Generation = u.GetGeneration()
		h.observeSpec(key, t, snapshot.SpecWriters(u.GetManagedFields()))
		return
	}
	if w := router.WeightWriter(u); w != nil {
		t.Manager = w.Manager
	}
	h.Observe(key, t)
}

// observeHistory records this read in the watch's History and keeps the
// fights it shows for RD160 (the Rollout) and RD135 (router objects).
func (c *Context) observeHistory(h *History) {
	if h == nil {
		return
	}
	c.churn = map[string]*Churn{}
	ro := c.ro
	if ch := h.observeSpec(c.obj(), Turn{At: c.View.Now, ResourceVersion: ro.ResourceVersion, Generation: ro.Generation}, c.View.SpecWriters); ch != nil {
		c.churn[c.obj()] = ch
	}
	for _, o := range c.routerObjects() {
		t := Turn{At: c.View.Now, ResourceVersion: o.ResourceVersion, Canary: o.Canary}
		if o.Writer != nil {
			t.Manager = o.Writer.Manager
		}
		if ch := h.Observe(o.Ref(), t); ch != nil && !allController(ch.Managers) {
			c.churn[o.Ref()] = ch
		}
	}
}

func allController(ms []string) bool {
	for _, m := range ms {
		if !isController(m) {
			return false
		}
	}
	return true
}

// GitOpsTool names the GitOps tool a field manager is ("" for none).
func GitOpsTool(m string) string {
	switch {
	case strings.HasPrefix(m, "argocd"):
		return "Argo CD"
	case m == "kustomize-controller" || m == "helm-controller":
		return "Flux"
	}
	return ""
}

// routerIgnore is, per router object kind, the Argo CD ignoreDifferences
// entry that leaves its weights to the controller: the jq path for the
// weights inside the spec, or the annotation's JSON pointer.
func routerIgnore(o router.Object) string {
	group := o.APIVersion
	if i := strings.Index(group, "/"); i >= 0 {
		group = group[:i]
	}
	if group == "v1" {
		group = ""
	}
	var path string
	switch {
	case o.Kind == "VirtualService" && strings.HasPrefix(o.APIVersion, "networking.istio.io"):
		// As the Argo Rollouts Istio docs ("Integrating with GitOps") write it.
		path = "jqPathExpressions: [.spec.http[].route[].weight]"
	case o.Kind == "TrafficSplit":
		path = "jqPathExpressions: [.spec.backends[].weight]"
	case o.Kind == "TraefikService":
		path = "jqPathExpressions: [.spec.weighted.services[].weight]"
	case strings.HasPrefix(o.Field, "metadata.annotations[") && strings.HasSuffix(o.Field, "]"):
		key := strings.TrimSuffix(strings.TrimPrefix(o.Field, "metadata.annotations["), "]")
		path = "jsonPointers: [/metadata/annotations/" + strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1") + "]"
	default:
		path = "jsonPointers: [/" + strings.ReplaceAll(strings.Split(o.Field, "[")[0], ".", "/") + "]"
	}
	return fmt.Sprintf("spec.ignoreDifferences: [{group: %s, kind: %s, name: %s, %s}] and spec.syncPolicy.syncOptions: [RespectIgnoreDifferences=true]",
		group, o.Kind, o.Name, path)
}

// RouterFix is what stops the GitOps tool that writes manager from putting
// Git's weights back on router object o: Argo CD's ignoreDifferences for
// the weights, or for Flux (which cannot ignore one field) the object's
// kustomize.toolkit.fluxcd.io/ssa: IfNotPresent annotation in Git, or a
// suspension while the incident lasts. mark is the Rollout's own Flux
// owner, when known, for the suspend command.
func RouterFix(o router.Object, manager string, flux string) string {
	if GitOpsTool(manager) == "Flux" {
		s := "annotate " + o.Ref() + " in Git with kustomize.toolkit.fluxcd.io/ssa: IfNotPresent (Flux creates it, then leaves it to the controller)"
		if flux != "" {
			s += ", or `" + flux + "` while the incident lasts"
		}
		return s
	}
	return routerIgnore(o)
}

// fluxSuspend is the suspend command for the Rollout's Flux owner ("" when
// Flux does not mark it).
func (c *Context) fluxSuspend() string {
	g := c.View.GitOps
	if g == nil || g.Mark.Tool != "Flux" {
		return ""
	}
	cmd := "flux suspend " + strings.ToLower(g.Mark.Kind) + " " + g.Mark.Name
	if g.Mark.Namespace != "" {
		cmd += " -n " + g.Mark.Namespace
	}
	return cmd
}

// routerChurn is RD135's finding for a fight the watch saw on a router
// object: the writers alternating, the weights each read found, and who
// wrote last.
func routerChurn(c *Context, r *rules.Rule, o router.Object, ch *Churn) rules.Finding {
	var other string
	for _, m := range ch.Managers {
		if !isController(m) {
			other = m
			break
		}
	}
	ws := make([]string, len(ch.Weights))
	for i, w := range ch.Weights {
		ws[i] = fmt.Sprint(w)
	}
	msg := fmt.Sprintf("%s's weights (%s) are being fought over: %s", o.Ref(), o.Field, ch.Says())
	if len(ws) > 1 {
		msg += "; canary weight at the full reads " + strings.Join(ws, " → ")
	}
	if o.Writer != nil {
		msg += fmt.Sprintf("; last written by %s at %s", o.Writer.Manager, o.Writer.Time.UTC().Format(time.RFC3339))
	}
	if st := c.ro.Status.Canary.Weights; st != nil && o.Canary != nil {
		msg += fmt.Sprintf("; it sends canary %d now, the status says %d", *o.Canary, st.Canary.Weight)
	}
	if tool := GitOpsTool(other); tool != "" {
		msg += fmt.Sprintf("; %s (%s) puts Git's weights back after every write of the controller, which writes its own back on its next pass: promote and abort are fought the same way; stop the sync writing the weights: %s", other, tool, RouterFix(o, other, c.fluxSuspend()))
	} else {
		msg += fmt.Sprintf("; %s keeps writing the weights the controller manages: stop it, and change the weights only through the Rollout (promote, abort, setWeight steps)", other)
	}
	f := r.NewFinding(msg)
	f.Evidence = []rules.Evidence{ev(o.Ref(), "last writer of "+o.Field+" at successive reads", ch.Says())}
	f.Cites = append(o.Cites, c.vsRequeue(o)...)
	return f
}

// vsRequeue cites, for an Istio VirtualService, the controller's informer
// that answers every write of it with a pass.
func (c *Context) vsRequeue(o router.Object) []upstream.Cite {
	if o.Kind != "VirtualService" || !strings.HasPrefix(o.APIVersion, "networking.istio.io") {
		return nil
	}
	return c.cites("is.vs-change-requeues")
}

// sortedChurn lists the fights of this read by object.
func (c *Context) sortedChurn() []*Churn {
	if len(c.churn) == 0 {
		return nil
	}
	out := make([]*Churn, 0, len(c.churn))
	for _, ch := range c.churn {
		out = append(out, ch)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Object < out[j].Object })
	return out
}
