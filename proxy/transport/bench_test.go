package transport

import (
	"testing"

	"github.com/go-zeromq/zmq4"
)

// benchTransports runs bench over zmq4's own tcp and ipc transports
// (io=plain) and over ours (io=buffered), named so that
// "benchstat -col /io" sets them side by side.
func benchTransports(b *testing.B, bench func(b *testing.B, scheme string)) {
	for _, network := range []string{"tcp", "ipc"} {
		b.Run("net="+network, func(b *testing.B) {
			b.Run("io=plain", func(b *testing.B) { bench(b, network) })
			b.Run("io=buffered", func(b *testing.B) { bench(b, schemes[network].buffered) })
		})
	}
}

// echo returns what router receives to its sender until router closes.
func echo(router zmq4.Socket) {
	for {
		msg, err := router.Recv()
		if err != nil {
			return
		}
		if err := router.Send(msg); err != nil {
			return
		}
	}
}

// BenchmarkRoundTrip is one Jupyter request: DEALER to ROUTER and back.
func BenchmarkRoundTrip(b *testing.B) {
	benchTransports(b, func(b *testing.B, scheme string) {
		router, dealer := routerDealer(b, scheme, "client")
		go echo(router)
		msg := jupyterMsg()
		b.ReportAllocs()
		for b.Loop() {
			if err := dealer.Send(msg); err != nil {
				b.Fatalf("send: %v", err)
			}
			if _, err := dealer.Recv(); err != nil {
				b.Fatalf("recv: %v", err)
			}
		}
	})
}

// BenchmarkThroughput1MB streams one-frame 1 MB messages DEALER to ROUTER,
// the shape of a large output or a big comm buffer.
func BenchmarkThroughput1MB(b *testing.B) {
	benchTransports(b, func(b *testing.B, scheme string) {
		router, dealer := routerDealer(b, scheme, "client")
		msg := zmq4.NewMsg(make([]byte, 1<<20))
		b.SetBytes(1 << 20)
		b.ReportAllocs()
		b.ResetTimer()
		sent := make(chan error, 1)
		go func() {
			for range b.N {
				if err := dealer.Send(msg); err != nil {
					sent <- err
					return
				}
			}
			sent <- nil
		}()
		for range b.N {
			if _, err := router.Recv(); err != nil {
				b.Fatalf("recv: %v", err)
			}
		}
		if err := <-sent; err != nil {
			b.Fatalf("send: %v", err)
		}
	})
}
