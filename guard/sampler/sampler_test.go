package sampler_test

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/jupyter-guard/jupyter-guard/guard/cgroup"
	"github.com/jupyter-guard/jupyter-guard/guard/cgroup/cgrouptest"
	"github.com/jupyter-guard/jupyter-guard/guard/ledger"
	"github.com/jupyter-guard/jupyter-guard/guard/proctree"
	"github.com/jupyter-guard/jupyter-guard/guard/sampler"
	"github.com/jupyter-guard/jupyter-guard/guard/sampler/growtest"
)

const mib = 1 << 20

// handOver is a Handler that passes samples to the test and takes its
// answer: how long to wait, and what to arm.
type handOver struct {
	samples  chan sampler.Sample
	answers  chan func(*sampler.Sampler) time.Duration
	answered chan struct{}
	s        *sampler.Sampler
}

func start(t *testing.T, opts sampler.Options) *handOver {
	h := &handOver{samples: make(chan sampler.Sample), answers: make(chan func(*sampler.Sampler) time.Duration),
		answered: make(chan struct{})}
	h.s = sampler.New(opts, func(s sampler.Sample) time.Duration {
		h.samples <- s
		wait := (<-h.answers)(h.s)
		h.answered <- struct{}{}
		return wait
	})
	t.Cleanup(h.s.Close)
	return h
}

// next takes the next sample and answers it with answer, in the sampler's
// goroutine as a Handler would.
func (h *handOver) next(answer func(*sampler.Sampler) time.Duration) sampler.Sample {
	s := <-h.samples
	h.answers <- answer
	<-h.answered
	return s
}

func idle(*sampler.Sampler) time.Duration { return 0 }

func TestSampleMeasuresTheTree(t *testing.T) {
	p := growtest.Start(t, nil)
	p.Send(t, "grow 64 0 64")
	p.Expect(t, "done")
	p.Send(t, "spin 2")
	p.Expect(t, "done")
	group, err := cgroup.Discover(p.Pid)
	if err != nil {
		t.Logf("no cgroup: %v", err)
		group = nil
	}

	h := start(t, sampler.Options{})
	h.s.Attach(p.Pid, group, ledger.Tree)
	h.s.Kick()
	s := h.next(idle)

	tree, err := proctree.Descendants(p.Pid)
	if err != nil {
		t.Fatal(err)
	}
	again := proctree.NewRSSReader()
	defer again.Close()
	u, err := again.Sum(tree)
	if err != nil {
		t.Fatal(err)
	}
	rss := u.RSS
	if s.Root != p.Pid || !slices.Equal(s.Pids, tree) || s.Woken != sampler.Kicked {
		t.Errorf("sample of %d: pids %v woken %v; the tree is %v", s.Root, s.Pids, s.Woken, tree)
	}
	// Busy children touch no memory: the tree's RSS barely moves between
	// the two readings.
	if diff := max(s.Tree, rss) - min(s.Tree, rss); s.Tree < 64*mib || diff > 8*mib {
		t.Errorf("tree RSS %d MiB, measured again %d MiB", s.Tree/mib, rss/mib)
	}
	if group != nil && (!s.HasCgroup || s.Cgroup.Bytes < 64*mib) {
		t.Errorf("cgroup usage %+v (has %v) for a tree holding 64 MiB", s.Cgroup, s.HasCgroup)
	}
	if s.Host == 0 {
		t.Error("no host figure")
	}
}

func TestDetachedSamplerMeasuresNothing(t *testing.T) {
	measured := make(chan int, 10)
	h := start(t, sampler.Options{Tree: func(root int) ([]int, error) {
		measured <- root
		return []int{root}, nil
	}})
	h.s.Attach(os.Getpid(), nil, ledger.Tree)
	h.s.Kick()
	h.next(idle)
	h.s.Detach()
	h.s.Kick()
	h.s.Close() // the kick, if served before Close, finds no kernel
	if len(measured) != 1 {
		t.Errorf("%d scans, want only the one while attached", len(measured))
	}
}

// TestTheFigureDecidedOnIsReadAtEverySample: the figure the guard decides
// on, and the tree, are read at every sample; the others are reused for a
// while (their files are the dearest of a sample). A 64 MiB growth between
// two samples shows in the cgroup's usage only when the guard decides on
// it. (The host's used memory cannot show that a read happened: the
// kernel's free page count can miss an allocation for a while, so two
// reads around one may agree.)
func TestTheFigureDecidedOnIsReadAtEverySample(t *testing.T) {
	const reused = 250 * time.Millisecond // sampler.otherMaxAge
	for _, on := range []ledger.Figure{ledger.Cgroup, ledger.Host} {
		t.Run(string(on), func(t *testing.T) {
			g := cgrouptest.New(t, 1<<30)
			p := growtest.Start(t, g.Wrap)
			h := start(t, sampler.Options{})
			h.s.Attach(p.Pid, g.Cgroup(), on)
			h.s.Kick()
			first := h.next(idle)
			p.Send(t, "grow 64 0 64")
			p.Expect(t, "done")
			h.s.Kick()
			second := h.next(idle)
			if !first.HasCgroup || !second.HasCgroup || first.Host == 0 || second.Host == 0 {
				t.Fatalf("a figure is missing: cgroup %v %v, host %d %d", first.HasCgroup, second.HasCgroup, first.Host, second.Host)
			}
			if second.Tree < first.Tree+60*mib {
				t.Errorf("tree %d then %d MiB: the growth of 64 MiB was not read", first.Tree/mib, second.Tree/mib)
			}
			if on == ledger.Cgroup && second.Cgroup.Bytes < first.Cgroup.Bytes+60*mib {
				t.Errorf("deciding on the cgroup, its usage %d then %d MiB: not read again", first.Cgroup.Bytes/mib, second.Cgroup.Bytes/mib)
			}
			if apart := second.Time.Sub(first.Time); apart >= reused {
				t.Logf("samples %v apart: the reuse was not seen", apart)
			} else if on == ledger.Host && second.Cgroup != first.Cgroup || on == ledger.Cgroup && second.Host != first.Host {
				t.Errorf("deciding on %s, the other figure was read again %v after the first sample", on, apart)
			}
		})
	}
}

// TestPushedThresholdWakesTheSampler needs the kernel's wake-up: the
// handler asks for an hour's wait, so only a pushed event can bring the
// last sample.
func TestPushedThresholdWakesTheSampler(t *testing.T) {
	g := cgrouptest.New(t, 1<<30)
	p := growtest.Start(t, g.Wrap)
	h := start(t, sampler.Options{})
	h.s.Attach(p.Pid, g.Cgroup(), ledger.Cgroup)
	h.s.Kick()
	var rung uint64
	first := h.next(func(s *sampler.Sampler) time.Duration { return time.Hour })
	if !first.HasCgroup || first.NextRung != 0 {
		t.Fatalf("first sample: cgroup %v, next rung %d before any was armed", first.HasCgroup, first.NextRung)
	}
	rung = first.Cgroup.Bytes + 64*mib
	// Arming runs in the background: kick until the rung shows.
	for armed := false; !armed; {
		h.s.Kick()
		s := h.next(func(s *sampler.Sampler) time.Duration {
			s.Arm([]uint64{rung, rung + 512*mib})
			return time.Hour
		})
		armed = s.NextRung == rung
	}
	p.Send(t, "grow 16 0 128")
	s := h.next(idle)
	if s.Woken != sampler.Pushed {
		t.Errorf("woken %v, want pushed", s.Woken)
	}
	if s.Cgroup.Bytes < rung || s.NextRung != rung+512*mib {
		t.Errorf("woken at %d MiB with the next rung at %d MiB, armed at %d MiB", s.Cgroup.Bytes/mib, s.NextRung/mib, rung/mib)
	}
	p.Expect(t, "done")
}

// TestWithinAsksForALaterSample: a cell's first sample waits as long as
// asked, a kick still samples at once, and a later ask never postpones one
// already due.
func TestWithinAsksForALaterSample(t *testing.T) {
	h := start(t, sampler.Options{})
	h.s.Attach(os.Getpid(), nil, ledger.Tree)

	h.s.Within(time.Hour)
	select {
	case s := <-h.samples:
		t.Fatalf("sampled (%v) at once when asked for one within the hour", s.Woken)
	case <-time.After(100 * time.Millisecond):
	}
	h.s.Kick()
	if s := h.next(idle); s.Woken != sampler.Kicked {
		t.Errorf("woken %v, want kicked", s.Woken)
	}

	h.s.Within(10 * time.Millisecond)
	h.s.Within(time.Hour)
	if s := h.next(idle); s.Woken != sampler.Timed {
		t.Errorf("woken %v, want timed", s.Woken)
	}

	// A wait the handler asked for holds against a later ask.
	h.s.Kick()
	h.next(func(*sampler.Sampler) time.Duration { return 10 * time.Millisecond })
	h.s.Within(time.Hour)
	if s := h.next(idle); s.Woken != sampler.Timed {
		t.Errorf("woken %v, want timed", s.Woken)
	}
}

// TestSyncWaitsForTheHandler: Sync returns once the handler has had a
// sample taken after the call.
func TestSyncWaitsForTheHandler(t *testing.T) {
	h := start(t, sampler.Options{})
	h.s.Attach(os.Getpid(), nil, ledger.Tree)
	synced := make(chan bool)
	go func() { synced <- h.s.Sync(time.Minute) }()
	select {
	case <-synced:
		t.Fatal("Sync returned before the handler had the sample")
	case <-time.After(50 * time.Millisecond):
	}
	if s := h.next(idle); s.Woken != sampler.Kicked {
		t.Errorf("woken %v, want kicked", s.Woken)
	}
	if !<-synced {
		t.Error("Sync timed out")
	}
}

// TestWithinWhileTheLoopLingers: after a sample that leaves nothing to
// watch, the loop looks again by itself a while later, so that the next
// cell's Within need not wake it. A Within that wants a sample sooner than
// that still gets one in time, and the loop's own looks take no samples:
// an idle kernel costs nothing.
func TestWithinWhileTheLoopLingers(t *testing.T) {
	h := start(t, sampler.Options{})
	h.s.Attach(os.Getpid(), nil, ledger.Tree)
	h.s.Kick()
	h.next(idle)

	asked := time.Now()
	h.s.Within(20 * time.Millisecond)
	select {
	case s := <-h.samples:
		h.answers <- idle
		<-h.answered
		if s.Woken != sampler.Timed {
			t.Errorf("woken %v, want timed", s.Woken)
		}
	case <-time.After(sampler.MaxWait * 9 / 10):
		t.Fatalf("no sample %v after a Within(20ms): the lingering loop was not woken", time.Since(asked))
	}

	select {
	case s := <-h.samples:
		t.Errorf("sampled (%v) with nothing asked", s.Woken)
		h.answers <- idle
		<-h.answered
	case <-time.After(3 * sampler.MaxWait):
	}
}

// TestReadyShortensTheLinger: after a sample, the lingering loop looks by
// itself within the time a starting cell's first sample may be due
// (Ready), so that cell's Within need not wake it; a second when the
// handler says nothing.
func TestReadyShortensTheLinger(t *testing.T) {
	for _, ready := range []time.Duration{0, 50 * time.Millisecond} {
		h := start(t, sampler.Options{})
		h.s.Attach(os.Getpid(), nil, ledger.Tree)
		h.s.Kick()
		smp := h.next(func(s *sampler.Sampler) time.Duration { s.Ready(ready); return 0 })
		var next time.Time
		for deadline := time.Now().Add(5 * time.Second); !next.After(smp.Time); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the loop did not say when it looks next")
			}
			next = h.s.NextLook()
		}
		want := ready
		if ready == 0 {
			want = sampler.MaxWait
		}
		// From the sample's time: the linger starts after the handler.
		if got := next.Sub(smp.Time); got < want || got > want+500*time.Millisecond {
			t.Errorf("Ready(%v): the loop looks again %v after the sample, want %v", ready, got, want)
		}
	}
}
