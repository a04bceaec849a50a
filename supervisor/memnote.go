package supervisor

import (
	"github.com/jupyter-guard/jupyter-guard/guard/memerr"
	"github.com/jupyter-guard/jupyter-guard/guard/notice"
	"github.com/jupyter-guard/jupyter-guard/proxy"
)

// checkMemoryError starts the note under cell r if e is an allocation that failed at the guard's ceiling: how much was
// asked and left, that the kernel lives on, and what to change.
func (s *Supervisor) checkMemoryError(r *proxy.Request, e cellError) {
	if found, ok := memerr.Find(e.Ename, e.Evalue, e.Traceback); ok {
		s.postMemoryNote(r, found)
	}
}

// checkMemoryStream is checkMemoryError for what a cell printed: bash
// running out itself, or a program a shell cell ran.
func (s *Supervisor) checkMemoryStream(r *proxy.Request, text string) {
	if found, ok := memerr.FindStream(text); ok {
		s.postMemoryNote(r, found)
	}
}

func (s *Supervisor) postMemoryNote(r *proxy.Request, found memerr.Error) {
	s.postNote(r, "memory", func() (string, bool) {
		refusal, ok := s.guard.Refusal(found)
		if !ok {
			return "", false
		}
		return notice.Refused(refusal), true
	})
}
