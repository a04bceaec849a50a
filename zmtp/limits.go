package zmtp

import (
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Bounds before trust. Anyone on the machine can connect to a kernel's
// tcp ports; only a holder of the connection file's key can sign a message.
// ZMTP knows nothing of the key: the socket's owner does, and tells a
// Router so through its handler's verdict (VerifyingHandler). So each
// connection a bound socket accepts is, in turn:
//
//   - unproven: it has shown nothing yet. It holds one of the socket's
//     peer slots (Limits.perSocket), and the oldest unproven one is closed
//     when a newcomer needs a slot (libzmq has no such cap; its peers cost
//     it no memory it shares with a kernel). One still unproven proofTime
//     after it connected is closed, unless it is among the keepUnproven
//     unproven peers that connected first: jupyter_client's KernelManager
//     (jupyter_server's too) keeps a control connection without an
//     identity that sends nothing until it shuts the kernel down, for the
//     kernel's whole life. (libzmq's ZMQ_HANDSHAKE_IVL, 30 s by default,
//     bounds only the handshake; so does handshakeTimeout here.) What it
//     sends is held within a small budget (below).
//   - proven: it has done what only a frontend does. On a Router that is a
//     verified message, its own or its identity's on another of the
//     kernel's Routers (jupyter_client's shell, control and stdin share one
//     identity, and control and stdin may stay silent for hours); on a Pub a
//     subscription, on an Echo a ping: those need no key, so anyone can
//     prove them, and hold a slot until they leave. A socket full of proven
//     peers refuses newcomers instead of closing one.
//   - trusted with memory: it has sent a verified message itself. Its
//     frames are then read whole however large (a 300 MiB comm upload), as
//     the kernel's are.
//
// Values a real frontend never meets: jupyter_server holds one connection
// per channel for each browser tab showing a notebook on this kernel (plus
// a short-lived pair for its kernel_info nudge), so a socket sees a
// handful, tens with many tabs or collaborators, never 256; and it proves
// each at once (the nudge's kernel_info_request, the subscription, the
// first ping of jupyter_client's heartbeat) in milliseconds, never 30 s,
// but for the KernelManager's silent control connection, one per manager
// of the kernel, and clients whose control identity is not their shell's.
const (
	// maxPeersPerSocket is the most connections one socket holds, when
	// the descriptor limit allows as many (see NewLimits).
	maxPeersPerSocket = 256
	// proofTime is how long a connection may stay unproven, and
	// keepUnproven how many per socket may stay longer: those that
	// connected first.
	proofTime    = 30 * time.Second
	keepUnproven = 32
	// freeBytes is what an untrusted connection's message (or command) may
	// hold of its own: a kernel_info_request is about 600 bytes, a
	// subscription or a ping a few.
	freeBytes = 4 << 10
	// maxUnverified is the most one message may hold on a Router before its
	// connection is trusted: the first message of a frontend is a
	// kernel_info_request; a script's first execute_request with a long
	// cell still fits. What it holds beyond freeBytes comes from the pool.
	maxUnverified = 4 << 20
	// unverifiedPool is what the untrusted connections of a proxy's sockets
	// hold beyond freeBytes together. When it is in use, a message that
	// needs more of it ends its connection.
	unverifiedPool = 16 << 20
	// acceptedReadBuffer is an accepted connection's read buffer: a
	// frontend's requests are small, a large frame is read into its own
	// buffer past it, and thousands of idle peers must not hold 64 KiB each.
	acceptedReadBuffer = 4 << 10
)

// Limits are shared by the sockets one proxy binds: what their peers may
// hold before they show the key, in descriptors and in memory.
type Limits struct {
	perSocket    int
	proofTime    time.Duration
	keepUnproven int
	pool         pool

	// Identities, across the sockets, that a verified message came with,
	// counted by their live connections that sent one; and the live
	// connections that registered each identity on a Router, to prove when
	// one of them is verified.
	mu     sync.Mutex
	keyed  map[string]int
	owners map[string][]*admitted
}

// NewLimits sizes the bounds for sockets bound sockets. Of the descriptors
// this process has left (Go raises the soft RLIMIT_NOFILE to the hard one
// at start, and gives children back the original), peers get at most half,
// and each socket at most maxPeersPerSocket: the other half stays the
// guard's own, for its sampler's per-process files, the freezer, the
// control socket and whatever the kernel's tree needs measured.
func NewLimits(sockets int) *Limits {
	l := &Limits{proofTime: proofTime, keepUnproven: keepUnproven, keyed: map[string]int{}, owners: map[string][]*admitted{}}
	l.perSocket = max(1, min(maxPeersPerSocket, descriptorsLeft()/2/max(1, sockets)))
	l.pool.free.Store(unverifiedPool)
	return l
}

// PeersPerSocket is how many connections each socket holds at most.
func (l *Limits) PeersPerSocket() int { return l.perSocket }

// WithLimits has a bound socket share l with the others given it. Without
// it a socket has limits of its own.
func WithLimits(l *Limits) Option { return func(o *options) { o.limits = l } }

// descriptorsLeft is how many more descriptors this process may open.
func descriptorsLeft() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 1024
	}
	open := 64 // if /proc cannot say
	if d, err := os.ReadDir("/proc/self/fd"); err == nil {
		open = len(d)
	}
	return max(0, int(min(rl.Cur, 1<<24))-open)
}

// pool is bytes that untrusted connections draw on together.
type pool struct{ free atomic.Int64 }

func (p *pool) take(n int) bool {
	for {
		f := p.free.Load()
		if f < int64(n) {
			return false
		}
		if p.free.CompareAndSwap(f, f-int64(n)) {
			return true
		}
	}
}

func (p *pool) give(n int) { p.free.Add(int64(n)) }

// Held is how much of the pool is in use: for tests.
func (l *Limits) Held() int { return unverifiedPool - int(l.pool.free.Load()) }

// registered notes a connection that took identity id on a Router, and
// reports whether id is already verified on another.
func (l *Limits) registered(id string, a *admitted) (keyed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.owners[id] = append(l.owners[id], a)
	return l.keyed[id] > 0
}

// unregistered forgets a's registration of id, and its verification if
// it had one.
func (l *Limits) unregistered(id string, a *admitted, verified bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	owners := l.owners[id]
	for i, o := range owners {
		if o == a {
			owners = append(owners[:i], owners[i+1:]...)
			break
		}
	}
	if len(owners) == 0 {
		delete(l.owners, id)
	} else {
		l.owners[id] = owners
	}
	if verified {
		if l.keyed[id]--; l.keyed[id] <= 0 {
			delete(l.keyed, id)
		}
	}
}

// verified counts a connection of id that sent a verified message, and
// proves the connections with that identity on the other Routers.
func (l *Limits) verified(id string) {
	l.mu.Lock()
	l.keyed[id]++
	owners := append([]*admitted(nil), l.owners[id]...)
	l.mu.Unlock()
	for _, a := range owners {
		a.prove()
	}
}
