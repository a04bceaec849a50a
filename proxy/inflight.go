package proxy

import (
	"sort"
	"sync"

	"github.com/jupyter-guard/jupyter-guard/proxy/wire"
)

// Request is a frontend request the kernel has not answered yet.
type Request struct {
	Channel wire.Channel
	Idents  [][]byte
	Header  []byte // raw header frame: the parent of any reply
	MsgID   string
	MsgType string
	Kind    wire.Kind
	Seq     uint64 // arrival order: a kernel runs execute requests in this order
}

// ReplyType is the msg_type of the reply to r ("execute_reply").
func (r Request) ReplyType() string { return wire.ReplyType(r.MsgType) }

// inflight tracks unanswered requests and the requests the kernel has
// announced as busy, so that a kernel death can close every one of them.
type inflight struct {
	mu      sync.Mutex
	pending map[string]Request
	busy    map[string][]byte // msg_id → raw header of the busy request
	seq     uint64
}

func newInflight() *inflight {
	return &inflight{pending: map[string]Request{}, busy: map[string][]byte{}}
}

func (f *inflight) add(ch wire.Channel, m *wire.Message, h wire.Header) {
	if h.MsgID == "" || !h.Kind.Replied() {
		return
	}
	r := NewRequest(ch, m, h)
	f.mu.Lock()
	f.seq++
	r.Seq = f.seq
	f.pending[h.MsgID] = r
	f.mu.Unlock()
}

// answered ends the request parentID and returns it, if it was pending.
func (f *inflight) answered(parentID string) (Request, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.pending[parentID]
	delete(f.pending, parentID)
	return r, ok
}

// get is the request parentID, if it is still pending.
func (f *inflight) get(parentID string) (Request, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.pending[parentID]
	return r, ok
}

func (f *inflight) status(parentID string, parent []byte, state string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch state {
	case "busy":
		f.busy[parentID] = clone(parent)
	case "idle":
		delete(f.busy, parentID)
	}
}

// drain empties the tracker, returning what was pending and the parent
// headers of requests left busy.
func (f *inflight) drain() (pending []Request, busy [][]byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.pending {
		pending = append(pending, r)
	}
	sort.Slice(pending, func(i, j int) bool { return pending[i].Seq < pending[j].Seq })
	for _, h := range f.busy {
		busy = append(busy, h)
	}
	f.pending = map[string]Request{}
	f.busy = map[string][]byte{}
	return pending, busy
}

// The frames of a received message are never reused, but copies keep
// the tracker from pinning a large message in memory through a sub-slice.
func clone(b []byte) []byte { return append([]byte(nil), b...) }

func cloneFrames(fs [][]byte) [][]byte {
	out := make([][]byte, len(fs))
	for i, f := range fs {
		out[i] = clone(f)
	}
	return out
}

// NewRequest describes a request as the proxy tracks it.
func NewRequest(ch wire.Channel, m *wire.Message, h wire.Header) Request {
	return Request{Channel: ch, Idents: cloneFrames(m.Idents), Header: clone(m.Header), MsgID: h.MsgID, MsgType: h.MsgType, Kind: h.Kind}
}
