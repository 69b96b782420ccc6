package cli

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"

	"github.com/spf13/cobra"
)

// profileFlags are kubectl's --profile and --profile-output: a pprof
// profile of one run, so that a slow diagnose on a user's cluster can be
// looked at where it happened (go tool pprof FILE), and the benchmark keeps
// the profiles of each case (hack/bench).
type profileFlags struct {
	name, output string
	file         *os.File
}

func addProfileFlags(root *cobra.Command) *profileFlags {
	p := &profileFlags{}
	root.PersistentFlags().StringVar(&p.name, "profile", "none", "Name of profile to capture. One of (none|cpu|heap|goroutine|threadcreate|block|mutex)")
	root.PersistentFlags().StringVar(&p.output, "profile-output", "profile.pprof", "Name of the file to write the profile to")
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		finalizer.Do(func() { cobra.OnFinalize(stopActive) })
		active = p
		return p.start()
	}
	return p
}

// cobra runs its finalizers after every command, also one that failed
// (findings exit 1 is an error to cobra, and that is the run one most often
// wants to profile); a PersistentPostRun would be skipped then.
var (
	finalizer sync.Once
	active    *profileFlags
)

func stopActive() {
	if p := active; p != nil {
		active = nil
		if err := p.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "error: writing the profile:", err)
		}
	}
}

func (p *profileFlags) start() error {
	switch p.name {
	case "none":
		return nil
	case "cpu":
		f, err := os.Create(p.output)
		if err != nil {
			return usageErrorf("--profile-output: %v", err)
		}
		p.file = f
		return pprof.StartCPUProfile(f)
	case "block":
		runtime.SetBlockProfileRate(1)
	case "mutex":
		runtime.SetMutexProfileFraction(1)
	default:
		if pprof.Lookup(p.name) == nil {
			return usageErrorf("--profile %q: one of none, cpu, heap, goroutine, threadcreate, block, mutex", p.name)
		}
	}
	return nil
}

// stop writes the profile.
func (p *profileFlags) stop() error {
	switch p.name {
	case "none":
		return nil
	case "cpu":
		if p.file == nil {
			return nil
		}
		pprof.StopCPUProfile()
		err := p.file.Close()
		p.file = nil
		return err
	}
	prof := pprof.Lookup(p.name)
	if prof == nil {
		return nil
	}
	if p.name == "heap" {
		runtime.GC() // the live heap at the end of the run, as kubectl writes it
	}
	f, err := os.Create(p.output)
	if err != nil {
		return fmt.Errorf("--profile-output: %w", err)
	}
	if err := prof.WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
