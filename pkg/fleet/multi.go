package fleet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/gather"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// A scan over many clusters: each kube context is read on its own (its own
// credentials, rate limit and timeout), a bounded number at once, and the
// rows are ranked together with the cluster as a column. A cluster that
// cannot be read is a section with its error; it never hides the others.

// Target is one cluster to scan.
type Target struct {
	// Context is the kube context's name, as the rows show it.
	Context string
	// Connect makes the cluster's client and scope. It is called in the
	// cluster's own goroutine: an exec credential plugin that hangs holds
	// only its cluster.
	Connect func(ctx context.Context) (dynamic.Interface, gather.FleetOptions, error)
	// Reach, if set, tries to open a connection to the cluster (its API
	// server, or the proxy on the way) and says in an error why it could
	// not. When there are more clusters than are read at once, every
	// cluster is reached first, all at once, and one that cannot be is
	// reported without waiting for a turn: a kubeconfig full of clusters
	// behind a VPN that is down costs one --request-timeout, not one per
	// Concurrency of them. With no more clusters than that, it is not
	// called: they all start at once anyway.
	Reach func(ctx context.Context) error
	// SameAs names an earlier target that reads exactly what this one
	// would: the same cluster with the same credentials and namespaces,
	// under another context name (an alias, as `aws eks update-kubeconfig
	// --alias` adds). This one is then not read, and says so.
	SameAs string
}

// Cluster is one cluster's section of a multi-cluster scan.
type Cluster struct {
	Context string `json:"context"`
	Server  string `json:"server,omitempty"`
	// Error says what could not be read and why; the cluster has no rows.
	Error string `json:"error,omitempty"`
	// Retryable: a later try may read it (the network, an overloaded or
	// slow API server), as opposed to credentials, permissions or a
	// kubeconfig to fix first. A scheduled scan may try such a cluster
	// again before it pages anyone.
	Retryable bool `json:"retryable,omitempty"`
	Rollouts  int  `json:"rollouts"`
	Requests  int  `json:"apiRequests"`
	// Controllers are the controller versions the Rollouts were modeled
	// with and how each was found.
	Controllers []ControllerSeen `json:"controllers,omitempty"`
	ByStrategy  map[string]int   `json:"byStrategy,omitempty"`
	ByRouter    map[string]int   `json:"byRouter,omitempty"`
	// Waiting counts the Rollouts paused until a person acts.
	Waiting int `json:"waitingForAPerson"`
	// Worst is the highest finding severity in the cluster ("" for none).
	Worst   string         `json:"worst,omitempty"`
	Gaps    []snapshot.Gap `json:"gaps,omitempty"`
	Seconds float64        `json:"seconds"`
	// SameAs names the context this cluster's Rollouts are listed under
	// when this context reaches the same cluster: its Rollouts were read
	// through both (the same UIDs), and each is listed once.
	SameAs string `json:"sameClusterAs,omitempty"`
	// ListedElsewhere counts this context's Rollouts that are listed under
	// another context that read them too (SameAs, or rarely several).
	ListedElsewhere int `json:"rolloutsListedElsewhere,omitempty"`
	// NotReadAgain: this context has the same cluster, credentials and
	// namespaces as SameAs, so it was not read a second time.
	NotReadAgain bool `json:"notReadAgain,omitempty"`
	// NotInstalled: the cluster does not serve rollouts.argoproj.io (the
	// Argo Rollouts CRDs are not installed), so it has no Rollouts. That
	// was read, not a failure to read: --all-contexts takes every cluster
	// of the kubeconfig, and many may not run Argo Rollouts at all.
	NotInstalled bool `json:"notInstalled,omitempty"`
	worst        diagnose.Severity
	// login: its credential plugin failed or did not return, without the
	// terminal (gather.Error's Login).
	login bool
}

// ControllerSeen is one controller version in a cluster and how it was
// established.
type ControllerSeen struct {
	Version  string `json:"version"`
	Source   string `json:"source"`
	From     string `json:"from,omitempty"`
	Rollouts int    `json:"rollouts"`
	// NotRunning: the controller Deployment has no available pod (RD166).
	NotRunning bool `json:"notRunning,omitempty"`
}

// MultiReport is a scan over several clusters, riskiest Rollout first.
type MultiReport struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Clusters   []Cluster `json:"clusters"`
	Rows       []Row     `json:"rows"`
	// Interrupted: the scan was stopped (Ctrl-C) before every cluster
	// answered; those clusters say so in their Error.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Worst is the highest severity over every row of every cluster.
func (r *MultiReport) Worst() diagnose.Severity {
	var w diagnose.Severity
	for _, c := range r.Clusters {
		if c.worst > w {
			w = c.worst
		}
	}
	return w
}

// Unread lists the clusters that could not be read.
func (r *MultiReport) Unread() []string {
	var out []string
	for _, c := range r.Clusters {
		if c.Error != "" {
			out = append(out, c.Context)
		}
	}
	return out
}

// PluginFailed lists the clusters not read because their exec credential
// plugin failed or did not return without the terminal: given it, the
// plugin may prompt and log in.
func (r *MultiReport) PluginFailed() []string {
	var out []string
	for _, c := range r.Clusters {
		if c.login {
			out = append(out, c.Context)
		}
	}
	return out
}

// Again puts the sections of clusters read a second time (after their
// credential plugin logged in on the terminal) in place of their first,
// and ranks their Rollouts with the others. A Rollout that another
// context listed already stays under it.
func (r *MultiReport) Again(again *MultiReport) {
	owner := map[types.UID]string{}
	for _, row := range r.Rows {
		if row.uid != "" {
			owner[row.uid] = row.Cluster
		}
	}
	for _, c := range again.Clusters {
		i := slices.IndexFunc(r.Clusters, func(o Cluster) bool { return o.Context == c.Context })
		if i < 0 {
			continue
		}
		shared := map[string]int{}
		for _, row := range again.Rows {
			if row.Cluster != c.Context {
				continue
			}
			if o, ok := owner[row.uid]; ok && row.uid != "" {
				shared[o]++
				continue
			}
			r.Rows = append(r.Rows, row)
			if row.uid != "" {
				owner[row.uid] = row.Cluster
			}
		}
		best := ""
		for o, n := range shared {
			if best == "" || n > shared[best] || n == shared[best] && o < best {
				best = o
			}
			c.ListedElsewhere += n
		}
		if best != "" {
			c.SameAs = best
		}
		r.Clusters[i] = c
	}
	r.Interrupted = r.Interrupted || again.Interrupted
	rank(r.Rows)
}

// interruptedBeforeTurn is the section of a cluster Ctrl-C stopped before
// it was read.
const interruptedBeforeTurn = "not read: interrupted before its turn"

// maxReaching bounds the connections opened at once to reach clusters:
// a file descriptor each, and macOS gives a process 256 by default.
const maxReaching = 64

// MultiOptions tune a multi-cluster scan.
type MultiOptions struct {
	// Concurrency bounds the clusters read at once (default 8).
	Concurrency int
	// Timeout bounds each cluster's whole read (0: none).
	Timeout time.Duration
	// VersionFlag is --controller-version, for every cluster.
	VersionFlag string
	// Done, if set, is called as each cluster finishes (for a progress line),
	// with the clusters still outstanding.
	Done func(finished Cluster, outstanding []string)
}

// ScanClusters reads every target, at most opt.Concurrency at once, and
// ranks all their Rollouts together. It returns when every cluster has
// answered, failed or timed out, or ctx is cancelled: then the clusters not
// read say so and the report is Interrupted.
func ScanClusters(ctx context.Context, targets []Target, opt MultiOptions) *MultiReport {
	n := opt.Concurrency
	if n <= 0 {
		n = 8
	}
	rep := &MultiReport{APIVersion: diagnose.ReportAPIVersion, Kind: "MultiClusterScan", Clusters: make([]Cluster, len(targets)), Rows: []Row{}}
	rows := make([][]Row, len(targets))
	var mu sync.Mutex
	outstanding := map[string]bool{}
	for _, t := range targets {
		outstanding[t.Context] = true
	}
	sem := make(chan struct{}, n)
	toRead := 0
	for _, t := range targets {
		if t.SameAs == "" {
			toRead++
		}
	}
	queued := toRead > n
	reaching := make(chan struct{}, maxReaching)
	var wg sync.WaitGroup
	finished := func(c Cluster) {
		mu.Lock()
		defer mu.Unlock()
		delete(outstanding, c.Context)
		left := make([]string, 0, len(outstanding))
		for k := range outstanding {
			left = append(left, k)
		}
		sort.Strings(left)
		if opt.Done != nil {
			opt.Done(c, left)
		}
	}
	for i, t := range targets {
		if t.SameAs != "" {
			rep.Clusters[i] = Cluster{Context: t.Context, SameAs: t.SameAs, NotReadAgain: true}
			finished(rep.Clusters[i])
			continue
		}
		wg.Add(1)
		go func(i int, t Target) {
			defer wg.Done()
			if queued && t.Reach != nil {
				if c, ok := reach(ctx, t, opt, reaching); !ok {
					rep.Clusters[i] = c
					finished(c)
					return
				}
			}
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-ctx.Done():
				rep.Clusters[i] = Cluster{Context: t.Context, Error: interruptedBeforeTurn}
				return
			}
			c, r := scanOne(ctx, t, opt)
			rep.Clusters[i], rows[i] = c, r
			finished(c)
		}(i, t)
	}
	wg.Wait()
	rep.Interrupted = ctx.Err() != nil
	listOnce(rep.Clusters, rows)
	for _, r := range rows {
		rep.Rows = append(rep.Rows, r...)
	}
	rank(rep.Rows)
	return rep
}

// listOnce keeps each Rollout in one cluster's rows when two contexts reach
// the same cluster: with --all-contexts that is common (a cluster under
// its generated name and an alias; an admin and a read-only user), and
// listing its Rollouts twice would double what waits for a person. A UID
// is unique within a cluster and, being random, across clusters, so a UID
// read through two contexts is one Rollout, whatever the server URLs say
// (behind a shared proxy, different clusters have one URL). The context
// that read the most keeps the rows (an all-namespaces context over a
// namespaced one), then the first in the list; the others say where their
// Rollouts are listed.
func listOnce(clusters []Cluster, rows [][]Row) {
	order := make([]int, 0, len(rows))
	for i := range rows {
		if len(rows[i]) > 0 {
			order = append(order, i)
		}
	}
	if len(order) < 2 {
		return
	}
	sort.SliceStable(order, func(a, b int) bool { return len(rows[order[a]]) > len(rows[order[b]]) })
	owner := map[types.UID]int{}
	for _, i := range order {
		kept := rows[i][:0]
		shared := map[int]int{}
		for _, r := range rows[i] {
			if r.uid != "" {
				if o, ok := owner[r.uid]; ok && o != i {
					shared[o]++
					continue
				}
				owner[r.uid] = i
			}
			kept = append(kept, r)
		}
		rows[i] = kept
		best := -1
		for o, n := range shared {
			if best < 0 || n > shared[best] || n == shared[best] && o < best {
				best = o
			}
			clusters[i].ListedElsewhere += n
		}
		if best >= 0 {
			clusters[i].SameAs = clusters[best].Context
		}
	}
}

// reach is t.Reach within the cluster's timeout, at most cap(slots) at
// once; false with the cluster's section when it could not be reached.
func reach(ctx context.Context, t Target, opt MultiOptions, slots chan struct{}) (Cluster, bool) {
	start := time.Now()
	select {
	case slots <- struct{}{}:
		defer func() { <-slots }()
	case <-ctx.Done():
		return Cluster{Context: t.Context, Error: interruptedBeforeTurn}, false
	}
	if opt.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opt.Timeout)
		defer cancel()
	}
	err := t.Reach(ctx)
	switch {
	case err == nil:
		return Cluster{}, true
	case errors.Is(ctx.Err(), context.Canceled):
		return Cluster{Context: t.Context, Error: interruptedBeforeTurn}, false
	}
	return Cluster{Context: t.Context, Error: clusterError(ctx, err, opt.Timeout), Retryable: retryable(ctx, err),
		Seconds: time.Since(start).Round(time.Millisecond).Seconds()}, false
}

// scanOne reads one cluster within its timeout.
func scanOne(ctx context.Context, t Target, opt MultiOptions) (Cluster, []Row) {
	start := time.Now()
	c := Cluster{Context: t.Context}
	if opt.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opt.Timeout)
		defer cancel()
	}
	done := func() { c.Seconds = time.Since(start).Round(time.Millisecond).Seconds() }
	dc, fo, err := t.Connect(ctx)
	if err == nil {
		c.Server = fo.Server
		var res *gather.FleetResult
		res, err = gather.Fleet(ctx, dc, fo)
		var ge *gather.Error
		if errors.As(err, &ge) && ge.Absent { // a LIST is absent only when its API is not served
			c.NotInstalled = true
			done()
			return c, nil
		}
		if err == nil {
			var rep *Report
			rep, err = scanSnapshot(res.Snapshot, opt.VersionFlag)
			if err == nil {
				rep.Requests = res.Requests
				summarise(&c, rep, res.Snapshot)
				for i := range rep.Rows {
					rep.Rows[i].Cluster = t.Context
				}
				done()
				return c, rep.Rows
			}
		}
	}
	c.Error, c.Retryable = clusterError(ctx, err, opt.Timeout), retryable(ctx, err)
	var ge *gather.Error
	c.login = errors.As(err, &ge) && ge.Login && !errors.Is(ctx.Err(), context.Canceled)
	done()
	return c, nil
}

// clusterError is the one line a cluster's section shows: what could not
// be read and why, with the cause the context gives when it ended the read
// (unless the error already says what waited that long).
func clusterError(ctx context.Context, err error, timeout time.Duration) string {
	switch msg := firstLine(err); {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) && strings.Contains(msg, "within "+timeout.String()):
		return msg
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Sprintf("not read within %s (--request-timeout): %s", timeout, msg)
	case errors.Is(ctx.Err(), context.Canceled):
		return "not read: interrupted while reading"
	}
	return firstLine(err)
}

// retryable is true when a later read of the cluster may succeed: as the
// read's error says (gather.Error's Retryable: a credential plugin that
// waits for a login is not, though it too ran out of time), or, for an
// error the read did not word, when the cluster's time ran out.
func retryable(ctx context.Context, err error) bool {
	var ge *gather.Error
	if errors.As(err, &ge) {
		return ge.Retryable
	}
	return errors.Is(ctx.Err(), context.DeadlineExceeded)
}

func firstLine(err error) string {
	if err == nil {
		return "unknown error"
	}
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// summarise fills a cluster's section from its scan.
func summarise(c *Cluster, rep *Report, snap *snapshot.Snapshot) {
	c.Rollouts, c.Requests, c.Gaps = rep.Rollouts, rep.Requests, snap.Header.Gaps
	c.ByStrategy, c.ByRouter = map[string]int{}, map[string]int{}
	seen := map[string]*ControllerSeen{}
	for _, r := range rep.Rows {
		if r.Strategy != "" {
			c.ByStrategy[r.Strategy]++
		}
		router := r.Router
		if router == "" {
			router = "none"
		}
		c.ByRouter[router]++
		if r.Waiting != "" {
			c.Waiting++
		}
		if r.severity > c.worst {
			c.worst = r.severity
		}
		key := r.Controller + "|" + r.controllerSource + "|" + r.controllerFrom
		down := slices.Contains(r.FindingIDs, "RD166")
		if s, ok := seen[key]; ok {
			s.Rollouts++
			s.NotRunning = s.NotRunning || down
			continue
		}
		seen[key] = &ControllerSeen{Version: r.Controller, Source: r.controllerSource, From: r.controllerFrom, Rollouts: 1, NotRunning: down}
	}
	for _, s := range seen {
		c.Controllers = append(c.Controllers, *s)
	}
	sort.Slice(c.Controllers, func(i, j int) bool {
		a, b := c.Controllers[i], c.Controllers[j]
		if a.Rollouts != b.Rollouts {
			return a.Rollouts > b.Rollouts
		}
		return a.Version+a.Source < b.Version+b.Source
	})
	if c.worst > 0 {
		c.Worst = c.worst.String()
	}
}
