package ledger

// minFill is the least a measurement must find newly mapped to count it as
// a new fill: Python maps its own arenas (up to 1 MiB) all the time, and a
// fill smaller than this needs no room of its own.
const minFill = 4 << 20

// fills follows what a cell maps and fills, from the tree's unfilled memory
// and its RSS (proctree.Usage), one measurement after another. Between two
// measurements the tree filled at least what its RSS grew, and mapped that
// plus what its unfilled memory grew. Fills are taken to run one after the
// other, as a cell's code runs: what the tree filled went first to the
// rest of the fill before, then to the new one.
type fills struct {
	// inFlight is the unfilled rest of the fills under way.
	inFlight uint64
	// size is the size of the fill under way, as far as it can be told
	// (see sizeOf); latest is the same for the latest mapping, which may
	// have come while that fill went on.
	size, latest uint64
	// left is what was still unfilled of the fills before when the latest
	// began. Memory a library maps and never fills (NumPy's first import
	// maps some 70 MiB of OpenBLAS buffers) looks like a fill when it is
	// mapped. When the next fill begins with the latest done and what was
	// left below it not shrunk, that is such memory, and no longer counts.
	left uint64
	// credit is what the latest fill's rest may be overstated by: what
	// its look's interval filled went to the fills before it, all of which
	// may have been the new one's.
	credit uint64
	// largest is the largest fill done (see Cell.Fill).
	largest uint64
}

// next is what the fills are at measurement m, after prev.
func (f fills) next(prev, m Memory) fills {
	grew := int64(m.Unfilled) - int64(prev.Unfilled)
	filled := max(0, int64(m.Tree)-int64(prev.Tree))
	mapped := grew + filled
	if mapped < minFill {
		f.inFlight = uint64(max(0, int64(f.inFlight)+grew))
		return f
	}
	// A new fill. Under way were the rest of the latest fill and, below
	// it, what was left of the fills before (old), filled newest first:
	// the latest fill is finished, then the new one fills, and only what
	// the tree filled beyond both was the old's.
	old := min(int64(f.left), int64(f.inFlight))
	newer := int64(f.inFlight) - old
	done := min(newer, filled)
	into := min(filled-done, mapped)
	old -= min(old, filled-done-into)
	newer -= done
	if newer <= int64(f.credit) {
		newer = 0 // done: what is left is the overstatement
	}
	f.credit = uint64(done)
	size := f.size
	if newer == 0 && old > 0 && old+minFill >= int64(f.left) {
		// Left unfilled since the latest fill began: not a fill, and the
		// fill done is the latest's.
		old, size = 0, f.latest
	}
	f.latest = sizeOf(mapped, filled, into)
	rest := uint64(old + newer)
	if rest == 0 {
		// The fill before is done: one fill followed by another. A fill
		// still under way (a thread's stack mapped meanwhile) goes on.
		f.largest = max(f.largest, size)
		f.size = f.latest
	}
	f.left = rest
	f.inFlight = rest + uint64(mapped-into)
	return f
}

// sizeOf is the size of a fill that began between two looks, in which the
// tree mapped mapped and filled filled, into of it. Filling less than half
// of what was mapped, the tree mapped one fill in between, of that size:
// two or more would be all filled but the last. Otherwise it is what is
// left of the last one, less than its size by what was filled before the
// look; the looks come closer near the lines, and so does that.
func sizeOf(mapped, filled, into int64) uint64 {
	if 2*filled < mapped {
		return uint64(mapped)
	}
	return uint64(mapped - into)
}
