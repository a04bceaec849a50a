package supervisor

import (
	"syscall"
	"time"
)

// startBackoff is the pause before the next start after n children in a
// row ended before they answered (a missing module, a bad argv, a full
// disk): a quarter of a second, doubling, at most 4 s. Without it, six
// starts failed within a second and the restarts stopped before anything
// passing could pass; with it, the five restarts jupyter-guard allows take
// about 8 s, well within the 60 s a frontend waits for a kernel. A kernel
// that died after it answered is started again at once: someone is
// waiting for it.
func startBackoff(n int) time.Duration {
	if n <= 0 {
		return 0
	}
	return min(250*time.Millisecond<<min(n-1, 4), 4*time.Second)
}

// waitToRestart waits out startBackoff before the next start, still
// answering a shutdown or a TERM (it reports that the proxy should stop)
// and starting at once on a restart asked for.
func (s *Supervisor) waitToRestart() (stop bool) {
	s.mu.Lock()
	d := startBackoff(s.unready)
	if s.gaveUp != nil {
		d = 0 // no start comes: waitAfterGivingUp waits
	}
	s.mu.Unlock()
	if d == 0 {
		return false
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case <-timer.C:
			return false
		case sd := <-s.shutdown:
			s.finishShutdown(nil, sd)
			return true
		case <-s.actions: // a restart asked for: the start it means comes now
			return false
		case sig := <-s.signals:
			if sig == syscall.SIGTERM || sig == syscall.SIGHUP {
				return true
			}
		}
	}
}
