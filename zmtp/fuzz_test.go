package zmtp

import (
	"bytes"
	"crypto/rand"
	"testing"

	"golang.org/x/crypto/nacl/box"
)

// FuzzReadMsg feeds arbitrary bytes to readMsg: whatever a peer sends, it
// must end in a message or an error, never a panic. Each message it
// returns must also survive writeMsg and a second readMsg unchanged, so
// the two agree on the framing.
func FuzzReadMsg(f *testing.F) {
	f.Add(frame(0, []byte("hello")))
	f.Add(append(frame(flagMore, nil), frame(0, nil)...))
	// The 8-byte size, short: seeds are kept small, since the fuzzer's
	// minimizing of what it finds takes longer the longer the input.
	f.Add([]byte{flagMore | flagLong, 0, 0, 0, 0, 0, 0, 0, 1, 'a', 0, 1, 'b'})
	f.Add(append(command("PING", []byte{0, 10, 'c', 't', 'x'}), frame(0, []byte("after ping"))...))
	f.Add(command("SUBSCRIBE", []byte("iopub.")))
	f.Add(append(frame(flagMore, []byte("x")), command("CANCEL", []byte("t"))...))
	f.Add(command("ERROR", []byte("\x05nope!")))
	f.Add([]byte{flagLong, 0, 0, 0, 1, 0, 0, 0, 0}) // 4 GiB: announced, never sent
	var sent bytes.Buffer
	c, w, back := readerConn(nil, nil), readerConn(nil, &sent), readerConn(nil, nil)
	f.Fuzz(func(t *testing.T, in []byte) {
		refill(c, in)
		for {
			frames, err := c.readMsg()
			if err != nil {
				return
			}
			sent.Reset()
			if err := w.writeMsg(frames); err != nil {
				t.Fatalf("writeMsg: %v", err)
			}
			got, err := refill(back, sent.Bytes()).readMsg()
			if err != nil {
				t.Fatalf("readMsg of writeMsg's %d frames: %v", len(frames), err)
			}
			if len(got) != len(frames) {
				t.Fatalf("%d frames written, %d read back", len(frames), len(got))
			}
			for i := range frames {
				if !bytes.Equal(got[i], frames[i]) {
					t.Fatalf("frame %d: wrote %q, read back %q", i, frames[i], got[i])
				}
			}
		}
	})
}

// FuzzHandshake feeds arbitrary bytes to a ROUTER's handshake, which is
// what anyone who can connect gets to send before anything is checked:
// it must end in a peer or an error, never a panic.
func FuzzHandshake(f *testing.F) {
	f.Add(append(greetingFor(3, 0, "NULL"), ready("DEALER", "me")...))
	f.Add(append(greetingFor(3, 1, "NULL"), ready("REQ", "")...))
	f.Add(append(greetingFor(3, 0, "NULL"), command("ERROR", []byte("\x04nope"))...))
	f.Add(greetingFor(2, 0, "NULL"))
	f.Add(greetingFor(3, 0, "PLAIN"))
	c := readerConn(nil, nil)
	f.Fuzz(func(t *testing.T, in []byte) {
		_, _ = refill(c, in).handshake(typeRouter, nil, nil, true)
	})
}

// FuzzCurveHandshake feeds arbitrary bytes to a CURVE server's handshake,
// which anyone who can connect reaches before proving anything. A HELLO
// our client made is among the seeds, so the fuzzer gets past it; what
// follows it (INITIATE) opens only with keys made afresh each time.
func FuzzCurveHandshake(f *testing.F) {
	keys := &Curve{}
	pub, sec, err := box.GenerateKey(rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	keys.Public, keys.Secret, keys.Server = *pub, *sec, *pub
	var hello bytes.Buffer
	// Our client's greeting and HELLO, written before it finds no WELCOME.
	_, _ = readerConn(greeting("CURVE", true), &hello).handshake(typeDealer, nil, keys, false)
	f.Add(hello.Bytes())
	f.Add(append(greetingFor(3, 0, "CURVE"), command("HELLO", make([]byte, helloLen))...))
	f.Add(append(greetingFor(3, 0, "CURVE"), command("INITIATE", make([]byte, initiateMinLen))...))
	f.Add(append(greetingFor(3, 0, "CURVE"), command("ERROR", []byte("\x04nope"))...))
	c := readerConn(nil, nil)
	f.Fuzz(func(t *testing.T, in []byte) {
		c.curve = nil
		_, _ = refill(c, in).handshake(typeRouter, nil, keys, true)
	})
}

// FuzzCurveMessage feeds arbitrary bytes to a connection past its CURVE
// handshake: it must end in messages or an error, never a panic. The seeds
// are sealed with the connection's key, so the fuzzer starts from MESSAGEs
// that open: frames, a PING inside one, and one sent twice.
func FuzzCurveMessage(f *testing.F) {
	var key [32]byte
	copy(key[:], "a key both ends of the test know")
	var sealed bytes.Buffer
	w := readerConn(nil, &sealed)
	w.curve = &curveSession{key: key, sendPrefix: nonceToServer}
	_ = w.writeMsg([][]byte{[]byte("topic"), nil, bytes.Repeat([]byte("x"), 300)})
	_ = w.writeCommand("PING", []byte("\x00\x0actx"))
	f.Add(sealed.Bytes())
	f.Add(append(sealed.Bytes(), sealed.Bytes()...))
	c := readerConn(nil, nil)
	f.Fuzz(func(t *testing.T, in []byte) {
		refill(c, in).curve = &curveSession{key: key, recvPrefix: nonceToServer}
		for {
			if _, err := c.readMsg(); err != nil {
				return
			}
		}
	})
}
