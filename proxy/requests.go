package proxy

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jupyter-guard/jupyter-guard/proxy/wire"
)

// Request is the one record of a request to the kernel, a frontend's or
// the proxy's own: made when the request is verified, ended once the
// kernel has both answered it and gone idle on it, or when the kernel is
// gone (Detach hands back what was left). The supervisor, the guard's
// ledger and the death path read it; none keeps a table of its own.
type Request struct {
	Channel wire.Channel
	Idents  [][]byte // the frontend's, to answer it when the kernel does not echo them
	Header  []byte   // raw header frame: the parent of any reply
	MsgID   string
	MsgType string
	Kind    wire.Kind
	Seq     uint64 // arrival order: a kernel runs execute requests in this order
	// Cell is what the request's cell was; nil unless an execute_request.
	Cell *Cell

	own chan *wire.Message // the proxy's own request: its reply goes here

	// Under the registry's lock.
	answered bool
	state    execState
}

type execState uint8

const (
	notAnnounced execState = iota
	busy
	idle
)

// ReplyType is the msg_type of the reply to r ("execute_reply").
func (r *Request) ReplyType() string { return wire.ReplyType(r.MsgType) }

// Cell is what an execute request carries beyond the message, filled in
// by the hooks on the goroutines that read its messages. The zero Cell is
// ready to use.
type Cell struct {
	Code  string    // set by FromFrontend, before anyone else sees the record
	Asked time.Time // when the request came
	count atomic.Int64
	erred atomic.Bool

	mu      sync.Mutex
	replied chan struct{}            // see Replied; made on first use
	looked  bool                     // replied is closed
	notes   map[string]chan struct{} // by kind; closed when posted, nil once taken
}

// Count is the execution count from the cell's execute_input; 0 until then.
func (c *Cell) Count() int     { return int(c.count.Load()) }
func (c *Cell) SetCount(n int) { c.count.Store(int64(n)) }

// Erred says an error output came for the cell.
func (c *Cell) Erred() bool { return c.erred.Load() }
func (c *Cell) SetErred()   { c.erred.Store(true) }

// Replied is closed once the kernel's reply has been through
// Hooks.FromKernel, or the proxy answered the cell itself: the idle, read
// on iopub apart from the reply on shell, may wait for what that started.
func (c *Cell) Replied() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.repliedLocked()
}

func (c *Cell) repliedLocked() chan struct{} {
	if c.replied == nil {
		c.replied = make(chan struct{})
	}
	return c.replied
}

// ReplyLooked closes Replied; the proxy calls it.
func (c *Cell) ReplyLooked() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.looked {
		close(c.repliedLocked())
		c.looked = true
	}
}

// Note registers a note of kind under the cell and returns the channel to
// close once it is posted; false if one of that kind was registered already.
func (c *Cell) Note(kind string) (posted chan struct{}, first bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, noted := c.notes[kind]; noted {
		return nil, false
	}
	if c.notes == nil {
		c.notes = map[string]chan struct{}{}
	}
	posted = make(chan struct{})
	c.notes[kind] = posted
	return posted, true
}

// TakeNotes returns the notes registered and not taken yet.
func (c *Cell) TakeNotes() (posted []chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for kind, done := range c.notes {
		if done != nil {
			posted = append(posted, done)
			c.notes[kind] = nil // taken, and still once per kind
		}
	}
	return posted
}

// newRequest makes the record of a verified request m, not registered yet.
func newRequest(ch wire.Channel, m *wire.Message, h wire.Header) *Request {
	r := &Request{Channel: ch, Idents: cloneFrames(m.Idents), Header: clone(m.Header), MsgID: h.MsgID, MsgType: h.MsgType, Kind: h.Kind}
	if h.Kind == wire.ExecuteRequest {
		r.Cell = &Cell{Asked: time.Now()}
	}
	return r
}

// registry holds the records of the requests in flight, by msg_id.
type registry struct {
	mu   sync.Mutex
	byID map[string]*Request
	seq  uint64
}

// maxRecords bounds the registry against a kernel that answers but never
// says idle: past it, the oldest answered records go.
const maxRecords = 4096

func newRegistry() *registry { return &registry{byID: map[string]*Request{}} }

// add registers r, unless it has no msg_id or gets no reply.
func (g *registry) add(r *Request) (registered bool) {
	if r.MsgID == "" || !r.Kind.Replied() {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.seq++
	r.Seq = g.seq
	g.byID[r.MsgID] = r
	if len(g.byID) > maxRecords {
		g.evict()
	}
	return true
}

func (g *registry) evict() {
	answered := make([]*Request, 0, len(g.byID))
	for _, r := range g.byID {
		if r.answered {
			answered = append(answered, r)
		}
	}
	slices.SortFunc(answered, bySeq)
	for _, r := range answered[:len(answered)/2] {
		delete(g.byID, r.MsgID)
	}
}

// reply marks the request parentID answered and returns it; first says
// the reply is the first it got (the proxy may have answered it already).
func (g *registry) reply(parentID string) (r *Request, first bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	r = g.byID[parentID]
	if r == nil {
		return nil, false
	}
	first = !r.answered
	r.answered = true
	if r.state == idle || r.own != nil {
		delete(g.byID, parentID)
	}
	return r, first
}

// status records the kernel's busy or idle on parent (raw: its header
// frame) and returns the request's record. A busy for a message that gets
// no reply (comm_msg) makes one, so a death can still say idle for it.
func (g *registry) status(parent wire.Header, raw []byte, state string) *Request {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.byID[parent.MsgID]
	switch {
	case r == nil && state == "busy" && parent.MsgID != "":
		g.seq++
		r = &Request{Header: clone(raw), MsgID: parent.MsgID, MsgType: parent.MsgType, Kind: parent.Kind, Seq: g.seq, answered: true}
		g.byID[r.MsgID] = r
		fallthrough
	case r != nil && state == "busy":
		r.state = busy
	case r != nil && state == "idle":
		r.state = idle
		if r.answered {
			delete(g.byID, r.MsgID)
		}
	}
	return r
}

// get is the record of parentID, if it is in flight.
func (g *registry) get(parentID string) *Request {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.byID[parentID]
}

// unanswered is the request msgID if it waits for its reply.
func (g *registry) unanswered(msgID string) (*Request, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.byID[msgID]
	return r, r != nil && !r.answered
}

// end drops r, which the proxy answers itself.
func (g *registry) end(r *Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	r.answered = true
	delete(g.byID, r.MsgID)
}

// drain empties the registry, returning the frontends' requests that wait
// for a reply and those the kernel left busy, each in arrival order; the
// proxy's own are dropped: what the old kernel did not answer, it never will.
func (g *registry) drain() (pending, busyLeft []*Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, r := range g.byID {
		if r.own != nil {
			continue
		}
		if !r.answered {
			pending = append(pending, r)
		}
		if r.state == busy {
			busyLeft = append(busyLeft, r)
		}
	}
	slices.SortFunc(pending, bySeq)
	slices.SortFunc(busyLeft, bySeq)
	clear(g.byID)
	return pending, busyLeft
}

func bySeq(a, b *Request) int { return cmp.Compare(a.Seq, b.Seq) }

// The frames of a received message are never reused, but copies keep
// the record from pinning a large message in memory through a sub-slice.
func clone(b []byte) []byte { return append([]byte(nil), b...) }

func cloneFrames(fs [][]byte) [][]byte {
	out := make([][]byte, len(fs))
	for i, f := range fs {
		out[i] = clone(f)
	}
	return out
}

// cellWaiting reports whether an execute request waits for its reply.
func (g *registry) cellWaiting() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, r := range g.byID {
		if r.Kind == wire.ExecuteRequest && !r.answered {
			return true
		}
	}
	return false
}
