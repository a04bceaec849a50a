package sampler

import "time"

// NextLook is when the loop will wake by itself, as it last said.
func (s *Sampler) NextLook() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next
}
