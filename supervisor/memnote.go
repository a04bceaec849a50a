package supervisor

import (
	"github.com/jupyter-guard/jupyter-guard/guard/memerr"
	"github.com/jupyter-guard/jupyter-guard/guard/notice"
)

// checkMemoryError starts the note under cell id (request header parent)
// if e is an allocation that failed at the guard's ceiling: how much was
// asked and left, that the kernel lives on, and what to change.
func (s *Supervisor) checkMemoryError(id string, parent []byte, e cellError) {
	found, ok := memerr.Find(e.Ename, e.Evalue, e.Traceback)
	if !ok {
		return
	}
	s.postNote(id, "memory", parent, func() (string, bool) {
		r, ok := s.guard.Refusal(found)
		if !ok {
			return "", false
		}
		return notice.Refused(r), true
	})
}
