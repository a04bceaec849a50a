package proxy

import (
	"strconv"
	"testing"

	"github.com/jupyter-guard/jupyter-guard/proxy/wire"
)

func header(id string, k wire.Kind, msgType string) wire.Header {
	return wire.Header{MsgID: id, MsgType: msgType, Kind: k}
}

func request(id string) *Request {
	return &Request{MsgID: id, MsgType: "execute_request", Kind: wire.ExecuteRequest, Cell: &Cell{}}
}

// A record lives until the kernel has both answered the request and gone
// idle on it, in either order; the proxy's own answer counts as one.
func TestARecordEndsWithItsReplyAndItsIdle(t *testing.T) {
	g := newRegistry()
	a, b := request("a"), request("b")
	g.add(a)
	g.add(b)
	exec := func(id string) wire.Header { return header(id, wire.ExecuteRequest, "execute_request") }

	g.status(exec("a"), nil, "busy")
	if r, first := g.reply("a"); r != a || !first {
		t.Fatalf("reply: %v %v", r, first)
	}
	if g.get("a") != a {
		t.Fatal("a record ended at its reply, before its idle")
	}
	if r := g.status(exec("a"), nil, "idle"); r != a || g.get("a") != nil {
		t.Fatal("a record outlived its reply and its idle")
	}

	g.status(exec("b"), nil, "busy")
	g.status(exec("b"), nil, "idle") // the idle read before the reply
	if _, ok := g.unanswered("b"); !ok {
		t.Fatal("a request idle before its reply is not waiting for it")
	}
	if _, first := g.reply("b"); !first || g.get("b") != nil {
		t.Fatal("a record outlived its idle and its reply")
	}
	if _, first := g.reply("b"); first {
		t.Fatal("a second reply counted as the first")
	}
}

// What a dead kernel leaves: the requests it did not answer, and those it
// left busy, a comm message among them, in arrival order.
func TestDrainGivesWhatTheKernelLeft(t *testing.T) {
	g := newRegistry()
	for i := range 3 {
		g.add(request(strconv.Itoa(i)))
	}
	g.add(&Request{MsgID: "own", Kind: wire.KernelInfoRequest, own: make(chan *wire.Message, 1)})
	g.status(header("0", wire.ExecuteRequest, "execute_request"), nil, "busy")
	g.reply("0")
	g.status(header("1", wire.ExecuteRequest, "execute_request"), nil, "busy")
	g.status(header("comm", wire.CommMsg, "comm_msg"), []byte(`{"msg_id":"comm"}`), "busy")

	pending, busy := g.drain()
	ids := func(rs []*Request) (s string) {
		for _, r := range rs {
			s += r.MsgID + " "
		}
		return s
	}
	if got := ids(pending); got != "1 2 " {
		t.Errorf("pending %q, want 1 and 2", got)
	}
	if got := ids(busy); got != "0 1 comm " {
		t.Errorf("busy %q, want 0, 1 and the comm message", got)
	}
	if g.get("2") != nil || g.get("own") != nil {
		t.Error("drain left records behind")
	}
}

// A kernel that answers but never says idle cannot grow the registry.
func TestTheRegistryIsBounded(t *testing.T) {
	g := newRegistry()
	for i := range 3 * maxRecords {
		id := strconv.Itoa(i)
		g.add(request(id))
		g.reply(id)
	}
	if n := len(g.byID); n > maxRecords {
		t.Fatalf("%d records, more than %d", n, maxRecords)
	}
}
