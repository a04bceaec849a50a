package guard

import (
	"github.com/jupyter-guard/jupyter-guard/guard/decide"
	"github.com/jupyter-guard/jupyter-guard/guard/ledger"
	"github.com/jupyter-guard/jupyter-guard/guard/proctree"
	"github.com/jupyter-guard/jupyter-guard/guard/sampler"
	"github.com/jupyter-guard/jupyter-guard/guard/units"
)

// stoppedText is the notice for decision d in cell id with the figures of
// the stopped tree. The sample that decided was taken before the freeze,
// and in between the cell grew, and may have mapped its next block, whose
// fill an interrupt lets finish: whether the kernel survives the user's
// choice depends on the tree as it stopped. The sample's processes are
// read again (their statm, microseconds each) and what they added is added
// to the sample's figure. It reports false if the cell is gone or the
// processes cannot be read; the notice then keeps the sample's figures.
// On the loop.
func (g *Guard) stoppedText(s sampler.Sample, id string, d decide.Decision) (string, bool) {
	r := proctree.NewRSSReader()
	now, err := r.Sum(s.Pids)
	r.Close()
	if err != nil {
		g.log.Printf("memory guard: measure the paused kernel: %v", err)
		return "", false
	}
	c, ok := g.ledger.Get(id)
	if !ok {
		return "", false
	}
	used := c.Last().Of(g.budget.Figure) + now.RSS - min(now.RSS, s.Tree)
	inFlight := c.InFlightAt(ledger.Memory{Tree: now.RSS, Unfilled: now.Unfilled})
	f := g.facts(&c, used, inFlight, d)
	g.log.Printf("memory guard: stopped at %s with %s still to fill; %s short of finishing it",
		units.FormatBytes(used), units.FormatBytes(inFlight), units.FormatBytes(f.Short))
	return text(d.Act, f), true
}
