package supervisor

import (
	"github.com/jupyter-guard/jupyter-guard/guard/memerr"
	"github.com/jupyter-guard/jupyter-guard/guard/notice"
)

// checkMemoryError starts the note under cell id (request header parent)
// if e is an allocation that failed at the guard's ceiling: how much was
// asked and left, that the kernel lives on, and what to change.
func (s *Supervisor) checkMemoryError(id string, parent []byte, e cellError) {
	if found, ok := memerr.Find(e.Ename, e.Evalue, e.Traceback); ok {
		s.postMemoryNote(id, parent, found)
	}
}

// checkMemoryStream is checkMemoryError for what a cell printed: bash
// running out itself, or a program a shell cell ran.
func (s *Supervisor) checkMemoryStream(id string, parent []byte, text string) {
	if found, ok := memerr.FindStream(text); ok {
		s.postMemoryNote(id, parent, found)
	}
}

func (s *Supervisor) postMemoryNote(id string, parent []byte, found memerr.Error) {
	s.postNote(id, "memory", parent, func() (string, bool) {
		r, ok := s.guard.Refusal(found)
		if !ok {
			return "", false
		}
		return notice.Refused(r), true
	})
}
