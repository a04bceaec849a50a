package ledger

import (
	"cmp"
	"maps"
	"slices"
	"time"
)

// Ledger holds the last Capacity cells.
type Ledger struct {
	counted  Figure
	capacity int
	cells    []*Cell // oldest first
	// open are the cells that have not ended (requested, running or
	// finishing), oldest first: what each message and sample looks at,
	// a few cells rather than the whole history.
	open []*Cell
	// last is the latest measurement of the kernel, taken in or between
	// cells, at lastAt; seen says there is one.
	last   Memory
	lastAt time.Time
	seen   bool
	// acts counts the actions of every cell ever recorded, by kind: the
	// cells themselves are dropped past capacity.
	acts map[string]int
	// history is every measurement of the last minutes, for the picture.
	history history
}

// Capacity is how many cells a ledger keeps by default: enough for a long
// session's story, bounded so a notebook run in a loop cannot grow it.
const Capacity = 300

// New returns an empty ledger that computes growth on figure counted and
// keeps at most capacity cells (Capacity if capacity <= 0).
func New(counted Figure, capacity int) *Ledger {
	if capacity <= 0 {
		capacity = Capacity
	}
	return &Ledger{counted: counted, capacity: capacity, acts: map[string]int{}}
}

// SetCounted changes the figure growth is counted on, for cells measured
// from now on (a new kernel may sit under a different limit).
func (l *Ledger) SetCounted(f Figure) { l.counted = f }

// Request records an execute_request: header is its raw header, code its
// source (only the first line is kept).
func (l *Ledger) Request(id string, header []byte, code string, at time.Time) {
	c := l.add(id) // a request is new: its id is not looked for
	c.header = slices.Clone(header)
	c.Code = firstLine(code)
	c.Requested = at
}

// Start marks the cell running in kernel (a pid) as of at. Its Start is
// the kernel's latest measurement, if there is one: the end of the cell
// before, or the kernel's first. The first measurement after the start
// comes too late for a cell that grows at once. Its rate is taken from the
// time of that measurement: growth between cells is spread over the idle
// time instead of being read as a burst. But while the cell before still
// waits for its end measurement (cells queued back to back, as Run All
// sends them), the latest one predates that cell's growth: this cell then
// starts where that one ends, at the next measurement.
func (l *Ledger) Start(id string, kernel int, at time.Time) {
	c := l.cell(id)
	if c.State == Done || c.State == Lost { // a second busy for a cell that ended
		l.open = append(l.open, c)
	}
	c.State, c.Started, c.Kernel = Running, at, kernel
	if l.seen && !l.Finishing() {
		c.observe(l.last, l.lastAt, l.counted)
	}
}

// Finishing tells whether a cell waits for its end measurement.
func (l *Ledger) Finishing() bool {
	for _, c := range l.open {
		if c.State == Finishing {
			return true
		}
	}
	return false
}

// Last is the kernel's latest measurement and when it was taken; ok is
// false before the first (and after the kernel was lost).
func (l *Ledger) Last() (m Memory, at time.Time, ok bool) {
	return l.last, l.lastAt, l.seen
}

// Count records the execution count the kernel gave the cell.
func (l *Ledger) Count(id string, n int) {
	l.cell(id).ExecutionCount = n
}

// Finish marks the cell finished as of at; the next Observe gives its End.
// A cell never seen starting is finished at once without measurements.
func (l *Ledger) Finish(id string, at time.Time) {
	c := l.find(id)
	if c == nil || c.State != Running {
		return // idle for a request that never ran here (or twice)
	}
	c.State, c.Finished = Finishing, at
}

// Observe records a measurement taken at at for every running cell, and
// ends every finishing one with it, if it was taken after the cell
// finished: a measurement that was under way then comes too early. It
// returns the cells it ended.
func (l *Ledger) Observe(m Memory, at time.Time) (ended []*Cell) {
	l.last, l.lastAt, l.seen = m, at, true
	l.history.add(m, at)
	for _, c := range l.open {
		switch c.State {
		case Running:
			c.observe(m, at, l.counted)
		case Finishing:
			c.observe(m, at, l.counted)
			if !at.Before(c.Finished) {
				c.End, c.State = m, Done
				ended = append(ended, c)
			}
		}
	}
	if len(ended) > 0 {
		l.prune()
	}
	return ended
}

// prune drops the cells that ended from open.
func (l *Ledger) prune() {
	l.open = slices.DeleteFunc(l.open, func(c *Cell) bool { return c.State == Done || c.State == Lost })
}

// Act appends an action to a cell.
func (l *Ledger) Act(id string, a Action) {
	if c := l.find(id); c != nil {
		c.Actions = append(c.Actions, a)
		l.acts[a.Kind]++
	}
}

// Acts is how many actions of each kind Act recorded since New.
func (l *Ledger) Acts() map[string]int { return maps.Clone(l.acts) }

// Lose ends every cell that has not finished: its kernel is gone, and so is
// its latest measurement.
func (l *Ledger) Lose() {
	l.seen = false
	for _, c := range l.open {
		c.State = Lost
	}
	l.open = l.open[:0]
}

// Current is the running cell that started last: with subshells several
// can run at once, and the newest is the one to speak to.
func (l *Ledger) Current() (*Cell, bool) {
	var cur *Cell
	for _, c := range l.open {
		if c.State == Running && (cur == nil || !c.Started.Before(cur.Started)) {
			cur = c
		}
	}
	return cur, cur != nil
}

// Get returns a copy of one cell.
func (l *Ledger) Get(id string) (Cell, bool) {
	c := l.find(id)
	if c == nil {
		return Cell{}, false
	}
	return c.snapshot(), true
}

// Cells returns copies of the cells, oldest first.
func (l *Ledger) Cells() []Cell {
	out := make([]Cell, len(l.cells))
	for i, c := range l.cells {
		out[i] = c.snapshot()
	}
	return out
}

// Top returns the finished cells of kernel that grew the most, largest
// first, at most n: the cells to blame when the kernel runs out of memory.
func (l *Ledger) Top(n int, kernel int) []Cell {
	var grew []*Cell
	for _, c := range l.cells {
		if c.State == Done && c.Kernel == kernel && c.Growth > 0 {
			grew = append(grew, c)
		}
	}
	slices.SortStableFunc(grew, func(a, b *Cell) int { return cmp.Compare(b.Growth, a.Growth) })
	out := make([]Cell, 0, min(n, len(grew)))
	for _, c := range grew[:min(n, len(grew))] {
		out = append(out, c.snapshot())
	}
	return out
}

// find is the cell of the execute request id, if the ledger keeps it. The
// request's own record is the proxy's; the ledger is the cells' history,
// and what it is asked about is nearly always a cell that has not ended,
// one of a few: those are looked at first.
func (l *Ledger) find(id string) *Cell {
	for _, cells := range [][]*Cell{l.open, l.cells} {
		for i := len(cells) - 1; i >= 0; i-- {
			if cells[i].MsgID == id {
				return cells[i]
			}
		}
	}
	return nil
}

// cell finds or adds the cell id.
func (l *Ledger) cell(id string) *Cell {
	if c := l.find(id); c != nil {
		return c
	}
	return l.add(id)
}

// add adds the cell id, evicting the oldest when full.
func (l *Ledger) add(id string) *Cell {
	if len(l.cells) >= l.capacity {
		l.evict()
	}
	c := &Cell{MsgID: id, State: Requested}
	l.cells = append(l.cells, c)
	l.open = append(l.open, c)
	return c
}

// evict drops the oldest cell that has ended, or the oldest of all if none
// has (requests that never ran pile up only if the kernel never answers).
func (l *Ledger) evict() {
	i := slices.IndexFunc(l.cells, func(c *Cell) bool { return c.State == Done || c.State == Lost })
	if i < 0 {
		i = 0
	}
	c := l.cells[i]
	l.cells = slices.Delete(l.cells, i, i+1)
	if j := slices.Index(l.open, c); j >= 0 {
		l.open = slices.Delete(l.open, j, j+1)
	}
}

// snapshot copies a cell so callers cannot race with later updates.
func (c *Cell) snapshot() Cell {
	s := *c
	s.Actions = slices.Clone(c.Actions)
	return s
}
