package ledger

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// State is where a cell is in its life.
type State string

const (
	Requested State = "requested" // execute_request seen, not started yet
	Running   State = "running"   // busy seen
	Finishing State = "finishing" // idle seen, waiting for the end measurement
	Done      State = "done"
	Lost      State = "lost" // its kernel died or was replaced before it finished
)

// Cell is one execute_request and what it did to memory. Growth, Rate and
// Fastest are on the ledger's counted figure.
type Cell struct {
	MsgID          string `json:"msg_id"`
	ExecutionCount int    `json:"execution_count,omitzero"`
	// Code is the first line of the cell's source.
	Code   string `json:"code"`
	Kernel int    `json:"kernel_pid,omitzero"`
	State  State  `json:"state"`

	Requested time.Time `json:"requested,omitzero"`
	Started   time.Time `json:"started,omitzero"`
	Finished  time.Time `json:"finished,omitzero"`

	// Start is the first measurement after the cell started, Peak the
	// highest of each figure while it ran, End the first after it finished
	// (zero until then).
	Start Memory `json:"start"`
	Peak  Memory `json:"peak"`
	End   Memory `json:"end,omitzero"`
	// Growth is what the cell added so far (or in all, once done); negative
	// if it freed memory.
	Growth int64 `json:"growth"`
	// Rate is the recent growth in bytes per second, smoothed over about a
	// second; Fastest the steepest growth between two measurements.
	Rate    float64 `json:"rate"`
	Fastest float64 `json:"fastest"`
	// Fill is the largest fill the cell was seen finishing (see InFlight):
	// a cell that filled one array and goes on may be about to map the
	// next, and a cell stopped in it adds the rest of it when let go,
	// whatever it is told. A fill counts as finished when the next one
	// begins (see fills): a single big fill that ends the cell never
	// counts, so a cell that fits is not stopped for it.
	Fill uint64 `json:"fill,omitzero"`

	// Actions are what the guard did in the cell, in order.
	Actions []Action `json:"actions,omitempty"`

	header   []byte
	last     Memory    // the latest measurement
	anchor   Memory    // the measurement rates are taken from
	anchorAt time.Time // and its time
	measured bool
	rated    bool
	fills    fills
}

// Action is one thing the guard did in a cell: a warning, a pause, an
// interrupt, a resume.
type Action struct {
	Time time.Time `json:"time"`
	Kind string    `json:"kind"`
	Used uint64    `json:"used"`
	// Until is, for a thaw, what the cell may reach while the interrupt
	// lands: Used plus the fill in flight, which C code finishes first, or
	// a whole fill if that is more (what is left of one is measured short).
	Until uint64 `json:"until,omitzero"`
}

// Header is the raw header of the cell's execute_request: the parent of
// every message posted into the cell.
func (c *Cell) Header() []byte { return c.header }

// Name is the cell as the notebook numbers it, for logs: "[3]", or "[ ]"
// before the kernel gave it a number.
func (c *Cell) Name() string {
	if c.ExecutionCount == 0 {
		return "[ ]"
	}
	return "[" + strconv.Itoa(c.ExecutionCount) + "]"
}

// Last is the latest measurement while the cell ran.
func (c *Cell) Last() Memory { return c.last }

// InFlight is what the cell has mapped and not yet filled at its latest
// measurement (see fills): a NumPy array being filled counts its untouched
// rest, and the C code filling it sees no interrupt until it is done.
func (c *Cell) InFlight() uint64 { return c.fills.inFlight }

// InFlightAt is what would be in flight at a measurement m taken after the
// latest one, which is not recorded: the guard's look at a stopped tree.
func (c *Cell) InFlightAt(m Memory) uint64 { return c.fills.next(c.last, m).inFlight }

// rateWindow is the time constant of Rate: long enough to smooth the
// jitter of single samples, short enough to follow a cell that speeds up.
const rateWindow = time.Second

// minRateInterval is the shortest interval a rate is taken over. Samples
// can land microseconds apart (a kick right after a timed sample), and a
// cell that allocates in blocks grows at page-fault speed (10 GiB/s with
// huge pages) for a few milliseconds, then not at all: over shorter
// intervals the rate reads those bursts, not the cell's growth.
const minRateInterval = 10 * time.Millisecond

// observe records one measurement, counted on figure f.
func (c *Cell) observe(m Memory, at time.Time, f Figure) {
	if !c.measured {
		c.measured = true
		c.Start, c.Peak, c.last, c.anchor, c.anchorAt = m, m, m, m, at
		return
	}
	c.Peak = c.Peak.max(m)
	c.fills = c.fills.next(c.last, m)
	c.Fill = c.fills.largest
	c.last = m
	c.Growth = int64(m.Of(f)) - int64(c.Start.Of(f))
	if dt := at.Sub(c.anchorAt); dt >= minRateInterval {
		r := (float64(m.Of(f)) - float64(c.anchor.Of(f))) / dt.Seconds()
		// Irregular intervals: weigh each rate by the time it covers. The
		// first rate is taken whole, so a cell that grows from its start is
		// not shown growing slowly for its first second.
		alpha := 1 - math.Exp(-dt.Seconds()/rateWindow.Seconds())
		if !c.rated {
			alpha, c.rated = 1, true
		}
		c.Rate += alpha * (r - c.Rate)
		c.Fastest = max(c.Fastest, r)
		c.anchor, c.anchorAt = m, at
	}
}

// firstLine is the first non-blank line of code.
func firstLine(code string) string {
	line, _, _ := strings.Cut(strings.TrimLeft(code, " \t\r\n"), "\n")
	return strings.TrimRight(line, " \t\r")
}
