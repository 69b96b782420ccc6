// Package par runs independent pieces of pure work on every core: decoding
// the documents of a large input, linting the workloads of a namespace.
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Do runs f(0) … f(n-1) on up to GOMAXPROCS goroutines and returns when all
// have returned. f must only write to its own slot of shared results.
func Do(n int, f func(int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		}()
	}
	wg.Wait()
}
