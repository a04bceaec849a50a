package ledger

import "time"

// Point is one measurement of the kernel, for the picture of its memory
// over time.
type Point struct {
	At     time.Time
	Memory Memory
}

// The history keeps the measurements of the last HistorySpan, at most one
// per HistoryStep (the latest within it) and at most HistoryPoints: five
// minutes of a kernel sampled without pause (a cell running all along),
// the whole span where the sampler sleeps between cells. A sample comes
// every few milliseconds near a line: without the step, seconds would fill
// it. 600 points are two for each pixel of the panel's picture.
const (
	HistoryStep   = 500 * time.Millisecond
	HistoryPoints = 600
	HistorySpan   = 10 * time.Minute
)

// history is a bounded record of measurements, oldest first.
type history struct{ points []Point }

func (h *history) add(m Memory, at time.Time) {
	if n := len(h.points); n > 1 && at.Sub(h.points[n-2].At) < HistoryStep {
		h.points[n-1] = Point{at, m} // the latest within the step
		return
	}
	h.points = append(h.points, Point{at, m})
	drop := 0
	for drop < len(h.points) && (len(h.points)-drop > HistoryPoints || at.Sub(h.points[drop].At) > HistorySpan) {
		drop++
	}
	if drop > 0 {
		h.points = append(h.points[:0], h.points[drop:]...)
	}
}

// History is the kernel's measurements of the last HistorySpan, oldest
// first, spaced at least HistoryStep apart (but for the last two).
func (l *Ledger) History() []Point {
	return append([]Point(nil), l.history.points...)
}
