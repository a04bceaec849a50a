package transport

import "fmt"

// maxFrame is the largest frame a peer may announce. zmq4 allocates a
// frame's whole body as soon as it has read its size, and a size beyond
// what Go can allocate panics in zmq4's reader goroutine, which no caller
// can recover: one bad peer would take the client (guardctl run) down.
// Jupyter messages are far smaller; 4 GiB leaves room for huge buffers.
const maxFrame = 4 << 30

// frameGuard follows the ZMTP framing of what a peer sends, as zmq4 reads
// it, and refuses a frame size above maxFrame before zmq4 sees it.
type frameGuard struct {
	state int
	need  uint64 // bytes left in the greeting or body
	sizeN int    // length of the size field being read (1 or 8)
	got   int    // size bytes read so far
	size  uint64
}

func newFrameGuard() *frameGuard { return &frameGuard{state: inGreeting, need: greetingLen} }

// scan moves past p, bytes the peer sent, in order.
func (g *frameGuard) scan(p []byte) error {
	for len(p) > 0 {
		switch g.state {
		case inGreeting, inBody:
			k := min(uint64(len(p)), g.need)
			g.need -= k
			p = p[k:]
			if g.need == 0 {
				g.state = inFlags
			}
		case inFlags:
			g.sizeN, g.got, g.size = 1, 0, 0
			if p[0]&flagLong != 0 {
				g.sizeN = 8
			}
			g.state = inSize
			p = p[1:]
		case inSize:
			g.size = g.size<<8 | uint64(p[0])
			g.got++
			p = p[1:]
			if g.got < g.sizeN {
				continue
			}
			if g.size > maxFrame {
				return fmt.Errorf("peer announced a frame of %d bytes, above the %d-byte limit: connection dropped", g.size, uint64(maxFrame))
			}
			g.need, g.state = g.size, inBody
			if g.need == 0 {
				g.state = inFlags
			}
		}
	}
	return nil
}
