package sampler_test

import (
	"fmt"
	"log"
	"regexp"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/jupyter-guard/jupyter-guard/guard/cgroup/cgrouptest"
	"github.com/jupyter-guard/jupyter-guard/guard/proctree"
	"github.com/jupyter-guard/jupyter-guard/guard/sampler/growtest"
	"github.com/jupyter-guard/jupyter-guard/internal/lockedbuf"
)

// These benchmarks run the whole guard on a real growing python, one fresh
// kernel per iteration; run them with -benchtime=20x or so. ns/op is the
// setup-dominated time of an iteration: read the custom metrics.

// rate16 grows 1 MiB every 0.625 ms: 1600 MiB/s, the 1.6 GB/s.
const rate16 = "grow 1 0.625 3000"

// BenchmarkPause measures how well a pause lands:
//
//	overshoot-MiB  the budget's figure once the tree is stopped, minus the
//	               pause line (negative: stopped before it, as the guard
//	               acts a reaction margin ahead of a fast cell)
//	late-ms        overshoot / growth rate, when positive: the time from
//	               crossing the pause line to the tree being stopped
//	react-ms       from the sample that decided to all SIGSTOPs sent and a
//	               rescan finding nothing new, as the guard logs it
//	headroom-MiB   what was left below the limit (a real cgroup limit: the
//	               OOM killer's line)
func BenchmarkPause(b *testing.B) {
	for _, bc := range []struct {
		name, grow string
		cgroup     bool
		rate       float64 // MiB/s, 0 if not paced
	}{
		{"cgroup-1.5GiB/1.6GBps", rate16, true, 1600},
		{"cgroup-1.5GiB/64MiB-blocks-fast", "grow 64 0 3000", true, 0},
		{"tree-1GiB/1.6GBps", rate16, false, 1600},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var over, late, react, room []float64
			for range b.N {
				o, r, h := pauseOnce(b, bc.grow, bc.cgroup)
				over, react, room = append(over, o), append(react, r), append(room, h)
				if bc.rate > 0 {
					late = append(late, max(0, o)/bc.rate*1000)
				}
			}
			report(b, "overshoot-MiB", over)
			report(b, "react-ms", react)
			report(b, "headroom-MiB", room)
			if late != nil {
				report(b, "late-ms", late)
			}
		})
	}
}

// pauseOnce runs one growing cell to its pause and returns the overshoot
// past the pause line and the room left below the limit, in MiB, and the
// guard's reaction in ms.
func pauseOnce(b *testing.B, grow string, inCgroup bool) (over, react, room float64) {
	var grp *cgrouptest.Group
	var wrap func(...string) []string
	env := map[string]string{"JUPYTER_GUARD_LIMIT": "1GiB"}
	if inCgroup {
		grp = cgrouptest.New(b, 1536*mib)
		wrap, env = grp.Wrap, nil
	}
	logs := &lockedbuf.Buffer{}
	b.Cleanup(func() {
		if b.Failed() {
			b.Logf("the guard's log:\n%s", logs)
		}
	})
	f := growtest.Guarded(b, env, wrap, log.New(logs, "", log.Lmicroseconds))
	f.Cell(b, "warm", "ping") // the kernel's first measurement
	f.Finish(b, "warm", "pong")
	f.Cell(b, "big", grow)
	f.Next(b, "big", "memory warning")
	f.Next(b, "big", "paused the kernel")
	tree := f.Frozen(b)
	budget := f.G.Budget()
	var used uint64
	if inCgroup {
		u, err := grp.Cgroup().Usage()
		if err != nil {
			b.Fatal(err)
		}
		used = u.WorkingSet
		if grp.OOMKills() != 0 {
			b.Fatal("the OOM killer struck before the pause")
		}
	} else {
		r := proctree.NewRSSReader()
		u, err := r.Sum(tree)
		used = u.RSS
		r.Close()
		if err != nil {
			b.Fatal(err)
		}
	}
	f.Button()
	f.Finish(b, "big", "interrupted")
	f.Stop() // b.N kernels of 1.4 GiB each must not wait for the end
	m := reacted.FindStringSubmatch(logs.String())
	if m == nil {
		b.Fatalf("no pause in the guard's log:\n%s", logs)
	}
	d, err := time.ParseDuration(m[1])
	if err != nil {
		b.Fatal(err)
	}
	return (float64(used) - float64(budget.Pause)) / mib, float64(d) / 1e6, (float64(budget.Limit) - float64(used)) / mib
}

var reacted = regexp.MustCompile(`paused kernel pid \d+: .*, (\S+) after the sample`)

// BenchmarkSamplerCPU measures the guard's CPU (this process: the sampler,
// the decisions, the Go runtime) as a share of one core:
//
//	cell-%  while a cell grows at 200 MiB/s far below the budget
//	idle-%  while the kernel is idle between cells
func BenchmarkSamplerCPU(b *testing.B) {
	for _, bc := range []struct {
		name string
		env  map[string]string
	}{
		{"cgroup-1.5GiB", nil}, // pushed thresholds: relaxed pace
		{"tree-4GiB", map[string]string{"JUPYTER_GUARD_LIMIT": "4GiB"}}, // timer only
	} {
		b.Run(bc.name, func(b *testing.B) {
			var cell, idle []float64
			for range b.N {
				grp := cgrouptest.New(b, 1536*mib)
				f := growtest.Guarded(b, bc.env, grp.Wrap, log.New(&lockedbuf.Buffer{}, "", 0))
				f.Cell(b, "warm", "ping")
				f.Finish(b, "warm", "pong")

				start, t0 := cpuTime(b), time.Now()
				f.Cell(b, "grow", "grow 4 20 400") // 2 s at 200 MiB/s, to 400 MiB
				f.Finish(b, "grow", "done")
				cell = append(cell, 100*float64(cpuTime(b)-start)/float64(time.Since(t0)))

				start, t0 = cpuTime(b), time.Now()
				time.Sleep(time.Second)
				idle = append(idle, 100*float64(cpuTime(b)-start)/float64(time.Since(t0)))
				f.Stop()
			}
			report(b, "cell-%", cell)
			report(b, "idle-%", idle)
		})
	}
}

// cpuTime is the CPU this process has used, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// report adds the median and the extremes of vs: with 100 runs or fewer
// the max is at least the p99.
func report(b *testing.B, unit string, vs []float64) {
	slices.Sort(vs)
	b.ReportMetric(vs[0], unit+"-min")
	b.ReportMetric(vs[len(vs)/2], unit+"-p50")
	b.ReportMetric(vs[len(vs)-1], unit+"-max")
	b.Logf("%s over %d runs: %s", unit, len(vs), fmt.Sprintf("%.2f", vs))
}
