package supervisor

import (
	"time"

	"github.com/jupyter-guard/jupyter-guard/proxy"
)

// replyGrace is how long after a cell's idle its execute_reply may still
// come: the two travel on different sockets, each read by its own
// goroutine, so the idle can be forwarded first.
const replyGrace = 2 * time.Second

// awaitReply answers the execute request r itself if the kernel went
// idle on it without replying, after an interrupt reached the kernel while
// the cell was asked for or ran. ipykernel catches a KeyboardInterrupt that
// lands after the cell's code has returned but before its reply is sent
// ("KeyboardInterrupt caught in kernel") and never sends that reply: the
// guard's interrupt at a cell's very end did so in 1 of 25 headless runs
// beside two busy CPUs, and JupyterLab, nbclient and guardctl run then
// wait for the reply for ever. It does not block: it is called on the
// forwarding path.
func (s *Supervisor) awaitReply(r *proxy.Request) {
	s.mu.Lock()
	in := s.interrupted
	s.mu.Unlock()
	if in.at.Before(r.Cell.Asked) {
		return // no interrupt since it was asked
	}
	time.AfterFunc(replyGrace, func() {
		if _, ok := s.proxy.Unanswered(r.MsgID); !ok {
			return
		}
		count := r.Cell.Count()
		s.cfg.Log.Printf("the kernel went idle without answering cell [%d] after an interrupt reached it as the cell ended; jupyter-guard answers it", count)
		rep := &report{Ename: "KeyboardInterrupt", Evalue: "the kernel dropped this cell's reply",
			Traceback: []string{"jupyter-guard: the interrupt reached the kernel as this cell was ending, and the kernel " +
				"went idle without answering it: the cell's code may have run to its end, and what it printed is above. " +
				"The kernel and its variables are kept; jupyter-guard answers for it so that nothing waits for ever."}}
		// Its idle came already, and the kernel may have begun the next
		// cell: no status of its own (fail's), which would say idle over it.
		s.answer(r, rep, count)
	})
}
