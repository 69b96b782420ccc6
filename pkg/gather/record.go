package gather

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// RecordOptions tune Record.
type RecordOptions struct {
	Options
	// Watcher is the client the watches use (Connection.Watcher, without
	// the per-request timeout that would cut each stream); nil uses dc.
	Watcher dynamic.Interface
	// Settle ends the record once the Rollout, having been seen not
	// Healthy, is Healthy and nothing of it (the Rollout, its ReplicaSets,
	// runs and traffic objects) has changed for Settle. 0: only ctx ends
	// it.
	Settle time.Duration
	// Backoff is the wait before retrying a list or watch that failed for a
	// retryable cause, doubling up to MaxBackoff. Defaults 1s and 30s.
	Backoff, MaxBackoff time.Duration
	// GiveUp is how long the Rollout's own stream may fail to come back
	// before the record ends with an error. Default 2m.
	GiveUp time.Duration
	// PageSize is the LIST page size (default 500): a page of pods is
	// written out before the next is read, which bounds memory.
	PageSize int64
	// OnNotice is told, in one line each, what a person watching the
	// record should know: a stream re-listed after a gap, a stream lost.
	OnNotice func(string)
	// OnStart is told the record's header once it is written: the Rollout
	// was read and the recording runs.
	OnStart func(snapshot.Header)
	// clock is the receive time of each change (tests replace it).
	clock func() time.Time
}

func (o *RecordOptions) defaults() {
	if o.Backoff <= 0 {
		o.Backoff = time.Second
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 30 * time.Second
	}
	if o.GiveUp <= 0 {
		o.GiveUp = 2 * time.Minute
	}
	if o.PageSize <= 0 {
		o.PageSize = 500
	}
	if o.clock == nil {
		o.clock = time.Now
	}
	if o.OnNotice == nil {
		o.OnNotice = func(string) {}
	}
}

// RecordResult says how a record ended.
type RecordResult struct {
	// Reason is why it ended, as written in its last line.
	Reason string
	// Changes is how many changes were written; Gaps how many stretches a
	// stream lost (each written as a gap).
	Changes, Gaps int
}

// Record watches one Rollout and everything a diagnosis of it reads, and
// writes every change to out as a record file (snapshot.ReadRecording): the
// Rollout's full snapshot when it starts, then — by LIST and WATCH of the
// Rollout, its ReplicaSets, pods, AnalysisRuns and Events, and the Services,
// EndpointSlices and traffic objects it names — every change with the
// apiserver's resourceVersion and the local time it arrived. It ends when
// ctx ends, when the Rollout has settled (RecordOptions.Settle), or when
// the Rollout is deleted.
//
// A watch that ends (the server's watch timeout, a dropped connection) is
// resumed from the last resourceVersion it delivered, which loses nothing;
// one the server can no longer resume (410 Gone: the revision was
// compacted) is listed again, and the stretch between is written as a gap,
// with the deletions the list reveals. A stream that cannot be read at all
// is a gap in the header (as in a snapshot), and one lost for good an open
// gap. Memory stays bounded by a page of objects: nothing is kept but each
// object's name and resourceVersion.
func Record(ctx context.Context, dc dynamic.Interface, opt RecordOptions, out io.Writer) (*RecordResult, error) {
	opt.defaults()
	if opt.Watcher == nil {
		opt.Watcher = dc
	}
	base, err := Rollout(ctx, dc, opt.Options)
	if err != nil {
		return nil, err
	}
	ro, err := base.FindRollout(opt.Namespace, opt.Name)
	if err != nil {
		return nil, &Error{Msg: err.Error()}
	}
	streams := historyStreams(ro, opt.Mapper, true)
	h := base.Header
	h.TakenAt = opt.clock().UTC()
	// What cannot be read at all is said once, in the header, as a
	// snapshot says it: a LIST of one object per stream finds out.
	var probeMu sync.Mutex
	var wg sync.WaitGroup
	readable := make([]bool, len(streams))
	for i := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := streams[i]
			lo := s.lo
			lo.Limit = 1
			_, err := dc.Resource(s.gvr).Namespace(ro.Namespace).List(ctx, lo)
			if err == nil {
				readable[i] = true
				return
			}
			if s.kind == "Experiment" && !hasExperiments(ro) {
				// Watched in case a step is added; a diagnose of this
				// Rollout would not read them, so not a gap either.
				return
			}
			c := &collector{}
			c.gap(s.gvr, ro.Namespace, "", err)
			probeMu.Lock()
			h.Gaps = append(h.Gaps, c.gaps...)
			probeMu.Unlock()
		}()
	}
	wg.Wait()
	for i, s := range streams {
		// The read at the start lists Experiments only for a Rollout
		// with the step; the stream lists them whole from now on.
		if readable[i] && s.kind == "Experiment" && !slices.Contains(h.Listed, s.resource) {
			h.Listed = append(slices.Clone(h.Listed), s.resource)
			slices.Sort(h.Listed)
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	rw, err := snapshot.NewRecordWriter(out, h)
	if err != nil {
		return nil, &Error{Msg: "writing the record: " + err.Error()}
	}
	if opt.OnStart != nil {
		opt.OnStart(h)
	}
	r := &recorder{opt: opt, rw: rw, ns: ro.Namespace, name: ro.Name, dc: dc, start: h.TakenAt}
	// The snapshot's objects of kinds no stream covers (nodes, PDBs, the
	// controller Deployment…) are the record's static context; the
	// streams' own lists follow and, for the same object, replace it.
	covered := map[string]bool{}
	for _, s := range streams {
		if s.keep == nil || s.kind == "ReplicaSet" || s.kind == "AnalysisRun" || s.kind == "Event" || s.kind == "Rollout" {
			covered[s.gvr.Group+"/"+s.kind] = true
		}
	}
	// Only those are copied: the snapshot's pods are its largest part.
	for _, o := range base.ObjectsOf(func(group, kind string) bool { return !covered[group+"/"+kind] }) {
		if err := r.write(snapshot.ChangeListed, "snapshot", h.TakenAt, o); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.stop = cancel
	r.settled = newSettle(opt.Settle, opt.clock)
	var streamsDone sync.WaitGroup
	for i, s := range streams {
		if !readable[i] {
			continue
		}
		streamsDone.Add(1)
		go func() {
			defer streamsDone.Done()
			r.run(ctx, s)
		}()
	}
	if opt.Settle > 0 {
		go r.watchSettle(ctx)
	}
	streamsDone.Wait()
	return r.finish()
}

// recorder is one record in progress.
type recorder struct {
	opt   RecordOptions
	rw    *snapshot.RecordWriter
	dc    dynamic.Interface
	ns    string
	name  string
	start time.Time
	stop  context.CancelFunc

	mu      sync.Mutex
	changes int
	gaps    int
	reason  string
	err     error
	// lost holds, for each stream whose watch is down, since when.
	lost    map[string]time.Time
	settled *settle
}

func (r *recorder) write(t snapshot.ChangeType, resource string, at time.Time, u *unstructured.Unstructured) error {
	if err := r.rw.WriteObject(t, resource, at, u); err != nil {
		return r.fail(&Error{Msg: "writing the record: " + err.Error()})
	}
	r.mu.Lock()
	r.changes++
	r.mu.Unlock()
	return nil
}

func (r *recorder) writeChange(c snapshot.Change) error {
	if err := r.rw.Write(c); err != nil {
		return r.fail(&Error{Msg: "writing the record: " + err.Error()})
	}
	r.mu.Lock()
	switch c.Type {
	case snapshot.ChangeGap:
		r.gaps++
	case snapshot.ChangeListed:
		r.changes++
	}
	r.mu.Unlock()
	return nil
}

// end stops the record with a reason (the first one given wins).
func (r *recorder) end(reason string) {
	r.mu.Lock()
	if r.reason == "" {
		r.reason = reason
	}
	r.mu.Unlock()
	r.stop()
}

// fail stops the record with an error.
func (r *recorder) fail(err error) error {
	r.mu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.mu.Unlock()
	r.stop()
	return err
}

// finish writes an open gap for every stream whose watch was down when the
// record stopped, then the end line.
func (r *recorder) finish() (*RecordResult, error) {
	now := r.opt.clock().UTC()
	r.mu.Lock()
	reason, err, lost := r.reason, r.err, r.lost
	r.mu.Unlock()
	for _, res := range sortedKeysTime(lost) {
		since := lost[res]
		r.writeChange(snapshot.Change{Type: snapshot.ChangeGap, ReceivedAt: now, Resource: res, Since: &since, Open: true,
			Reason: "the watch was down when the record ended"})
	}
	switch {
	case reason != "":
	case err != nil:
		reason = "error: " + err.Error()
	default:
		reason = "interrupted"
	}
	if werr := r.rw.Write(snapshot.Change{Type: snapshot.ChangeEnd, ReceivedAt: now, Reason: reason}); werr != nil && err == nil {
		err = &Error{Msg: "writing the record: " + werr.Error()}
	}
	r.mu.Lock()
	res := &RecordResult{Reason: reason, Changes: r.changes, Gaps: r.gaps}
	r.mu.Unlock()
	return res, err
}

func (r *recorder) setLost(resource string, since time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lost == nil {
		r.lost = map[string]time.Time{}
	}
	if since.IsZero() {
		delete(r.lost, resource)
	} else if _, ok := r.lost[resource]; !ok {
		r.lost[resource] = since
	}
}

// run lists and watches one stream until ctx ends.
func (r *recorder) run(ctx context.Context, s stream) {
	// known is what the record holds of the stream: name → resourceVersion.
	known := map[string]string{}
	rv := ""
	relist, first := true, true
	var lostAt time.Time // when the stream stopped being complete
	backoff := r.opt.Backoff
	var failingSince time.Time
	retry := func(err error) bool {
		// A cause a retry may cure waits and tries again; the Rollout's own
		// stream gives up after GiveUp, the others keep trying (their gap
		// grows, and is written when they come back or the record ends).
		now := r.opt.clock()
		if failingSince.IsZero() {
			failingSince = now
		}
		if s.kind == "Rollout" && now.Sub(failingSince) > r.opt.GiveUp {
			r.fail(&Error{Msg: fmt.Sprintf("no successful read of rollout %q for %s, giving up: %v", r.name, r.opt.GiveUp, err)})
			return false
		}
		wait := backoff
		backoff = min(2*backoff, r.opt.MaxBackoff)
		r.opt.OnNotice(fmt.Sprintf("%s: %v (retrying in %s)", s.resource, oneLine(err), wait))
		select {
		case <-ctx.Done():
			return false
		case <-time.After(wait):
			return true
		}
	}
	for ctx.Err() == nil {
		if relist {
			listRV, err := r.list(ctx, s, known, first, lostAt)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				if r.lostForGood(s, err, &lostAt) || !retry(err) {
					return
				}
				continue
			}
			rv, relist, first, lostAt = listRV, false, false, time.Time{}
			r.setLost(s.resource, time.Time{})
			failingSince, backoff = time.Time{}, r.opt.Backoff
		}
		lo := s.lo
		lo.ResourceVersion, lo.AllowWatchBookmarks = rv, true
		w, err := r.opt.Watcher.Resource(s.gvr).Namespace(r.ns).Watch(ctx, lo)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if lostAt.IsZero() {
				lostAt = r.opt.clock().UTC()
				r.setLost(s.resource, lostAt)
			}
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				relist = true
				continue
			}
			if r.lostForGood(s, err, &lostAt) || !retry(err) {
				return
			}
			continue
		}
		// Watching again from rv replays every change since: nothing lost.
		if !lostAt.IsZero() {
			lostAt = time.Time{}
			r.setLost(s.resource, time.Time{})
		}
		failingSince, backoff = time.Time{}, r.opt.Backoff
		watched := r.opt.clock().UTC()
		gone := r.forward(ctx, s, w, known, &rv, &watched)
		w.Stop()
		if ctx.Err() != nil {
			return
		}
		// A watch that ends was complete until then; one the server
		// cannot go on with (410 in the stream) only up to what it last
		// delivered.
		lostAt = r.opt.clock().UTC()
		if gone {
			relist, lostAt = true, watched
		}
		r.setLost(s.resource, lostAt)
	}
}

// lostForGood handles a failure no retry cures (forbidden, the API no
// longer served…): the stream is written off with an open gap, or for the
// Rollout's own stream the record ends. It reports whether it was one.
func (r *recorder) lostForGood(s stream, err error, lostAt *time.Time) bool {
	if ge := readError(err, r.opt.Options, "watching "+s.resource); IsRetryable(ge) {
		return false
	}
	msg := readError(err, r.opt.Options, "reading "+s.resource).Error()
	if s.kind == "Rollout" {
		if apierrors.IsNotFound(err) {
			r.end("the Rollout was deleted")
			return true
		}
		r.fail(&Error{Msg: msg})
		return true
	}
	since := *lostAt
	if since.IsZero() {
		since = r.opt.clock().UTC()
	}
	r.writeChange(snapshot.Change{Type: snapshot.ChangeGap, ReceivedAt: r.opt.clock().UTC(), Resource: s.resource, Since: &since, Open: true, Reason: msg + ": not recorded from here on"})
	r.opt.OnNotice(fmt.Sprintf("%s: %s: not recorded from here on", s.resource, msg))
	r.setLost(s.resource, time.Time{})
	return true
}

// list writes a LIST of the stream page by page and returns its
// resourceVersion. A re-list (not first) is preceded by a gap since lostAt
// and writes only what changed: deletions the lost watch would have
// delivered, and objects at a new resourceVersion.
func (r *recorder) list(ctx context.Context, s stream, known map[string]string, first bool, lostAt time.Time) (string, error) {
	lo := s.lo
	lo.Limit = r.opt.PageSize
	seen := map[string]bool{}
	listRV := ""
	gapWritten := false
	for {
		l, err := r.dc.Resource(s.gvr).Namespace(r.ns).List(ctx, lo)
		if err != nil {
			return "", err
		}
		at := r.opt.clock().UTC()
		if listRV == "" {
			listRV = l.GetResourceVersion()
		}
		if !first && !gapWritten {
			since := lostAt
			if since.IsZero() {
				since = at
			}
			if err := r.writeChange(snapshot.Change{Type: snapshot.ChangeGap, ReceivedAt: at, Resource: s.resource, ResourceVersion: listRV, Since: &since,
				Reason: "the watch could not be resumed (its resourceVersion was compacted): listed again; changes in between are not in the record"}); err != nil {
				return "", err
			}
			r.opt.OnNotice(fmt.Sprintf("%s: the watch could not be resumed: listed again, the changes since %s are a gap in the record", s.resource, since.Format("15:04:05")))
			gapWritten = true
		}
		for i := range l.Items {
			u := &l.Items[i]
			s.prepare(u)
			if s.keep != nil && !s.keep(u) {
				continue
			}
			seen[u.GetName()] = true
			if v, ok := known[u.GetName()]; ok && v == u.GetResourceVersion() {
				continue // unchanged since the record last had it
			}
			known[u.GetName()] = u.GetResourceVersion()
			raw, err := json.Marshal(u.Object)
			if err != nil {
				return "", r.fail(&Error{Msg: fmt.Sprintf("encoding %s %s: %v", s.kind, u.GetName(), err)})
			}
			// The list's resourceVersion says from which revision on the
			// stream is complete.
			if err := r.writeChange(snapshot.Change{Type: snapshot.ChangeListed, ReceivedAt: at, Resource: s.resource, ResourceVersion: listRV, Object: raw}); err != nil {
				return "", err
			}
			r.observe(s, watch.Modified, u)
		}
		if l.GetContinue() == "" {
			break
		}
		lo.Continue = l.GetContinue()
	}
	for name := range known {
		if seen[name] {
			continue
		}
		delete(known, name)
		ref := &snapshot.ObjectRef{APIVersion: s.gvr.GroupVersion().String(), Kind: s.kind, Namespace: r.ns, Name: name}
		if err := r.writeChange(snapshot.Change{Type: snapshot.ChangeDeleted, ReceivedAt: r.opt.clock().UTC(), Resource: s.resource, ResourceVersion: listRV, Ref: ref}); err != nil {
			return "", err
		}
		if s.kind == "Rollout" {
			r.end("the Rollout was deleted")
		}
	}
	return listRV, nil
}

// forward writes a watch's events until it ends, and when it last
// delivered one; gone is true when the server said it cannot go on from
// the resourceVersion (410).
func (r *recorder) forward(ctx context.Context, s stream, w watch.Interface, known map[string]string, rv *string, delivered *time.Time) (gone bool) {
	for {
		select {
		case <-ctx.Done():
			return false
		case ev, ok := <-w.ResultChan():
			if !ok {
				return false
			}
			if ev.Type != watch.Error {
				*delivered = r.opt.clock().UTC()
			}
			switch ev.Type {
			case watch.Error:
				st := apierrors.FromObject(ev.Object)
				if apierrors.IsResourceExpired(st) || apierrors.IsGone(st) {
					return true
				}
				r.opt.OnNotice(fmt.Sprintf("%s: the watch ended: %v", s.resource, oneLine(st)))
				return false
			case watch.Bookmark:
				if u, ok := ev.Object.(*unstructured.Unstructured); ok {
					*rv = u.GetResourceVersion()
				}
				continue
			}
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			*rv = u.GetResourceVersion()
			s.prepare(u)
			if s.keep != nil && !s.keep(u) {
				continue
			}
			t := snapshot.ChangeModified
			switch ev.Type {
			case watch.Added:
				t = snapshot.ChangeAdded
				known[u.GetName()] = u.GetResourceVersion()
			case watch.Deleted:
				t = snapshot.ChangeDeleted
				delete(known, u.GetName())
			default:
				known[u.GetName()] = u.GetResourceVersion()
			}
			if r.write(t, s.resource, r.opt.clock().UTC(), u) != nil {
				return false
			}
			r.observe(s, ev.Type, u)
		}
	}
}

// observe follows what ends a record: the Rollout deleted, or settled.
func (r *recorder) observe(s stream, t watch.EventType, u *unstructured.Unstructured) {
	switch s.kind {
	case "Rollout":
		if t == watch.Deleted {
			r.end("the Rollout was deleted")
			return
		}
		phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
		r.settled.rollout(phase == string(v1alpha1.RolloutPhaseHealthy))
	case "Pod", "Event", "EndpointSlice":
		// They move while the Rollout holds still (an Event's count, a
		// pod's probe): the Rollout and its ReplicaSets say when it moves.
	default:
		r.settled.changed()
	}
}

// watchSettle ends the record once the Rollout has settled.
func (r *recorder) watchSettle(ctx context.Context) {
	tick := time.NewTicker(min(r.opt.Settle/4+time.Millisecond, time.Second))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if r.settled.done() {
				r.end(fmt.Sprintf("settled: Healthy with no change for %s", r.opt.Settle))
				return
			}
		}
	}
}

// settle decides when a Rollout has settled: Healthy, having been seen
// otherwise during the record (a Rollout Healthy from the start is
// recorded until something happens to it), and unchanged for a while.
type settle struct {
	mu                    sync.Mutex
	quiet                 time.Duration
	clock                 func() time.Time
	healthy, sawUnhealthy bool
	last                  time.Time
}

func newSettle(quiet time.Duration, clock func() time.Time) *settle {
	return &settle{quiet: quiet, clock: clock, last: clock()}
}

func (s *settle) rollout(healthy bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.healthy = healthy
	if !healthy {
		s.sawUnhealthy = true
	}
	s.last = s.clock()
}

func (s *settle) changed() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last = s.clock()
}

func (s *settle) done() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.quiet > 0 && s.healthy && s.sawUnhealthy && s.clock().Sub(s.last) >= s.quiet
}

func sortedKeysTime(m map[string]time.Time) []string {
	keys := make(map[string]bool, len(m))
	for k := range m {
		keys[k] = true
	}
	return sortedKeys(keys)
}
